/* bench/kserver.c: the kernel baseline of the benchmark suite (bench/run.sh).
 *
 * The same HTTP/1.1 echo as us-httpecho (apps/httpecho), on kernel sockets:
 * one thread, one epoll set, non-blocking sockets, level-triggered.  A
 * request's body (Content-Length, no chunked encoding) comes back as the
 * response body with the same head us-httpecho writes, so the load generators
 * see byte-identical answers from both servers.  "Connection: close" in a
 * request closes the connection after its answer.
 *
 * Only what the benchmark needs: no pipelining limits, no 4xx answers (a
 * malformed request closes the connection), no timeouts.
 *
 *   kserver [--port N] [--addr A]        (default 0.0.0.0:8080)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define KS_EVENTS 256
#define KS_MAX_HEAD 8192

struct ks_conn {
	int fd;
	char *in, *out;
	size_t in_len, in_cap, out_len, out_off, out_cap;
	bool close_after;
};

static volatile sig_atomic_t ks_stop;

static void ks_on_signal(int sig)
{
	(void)sig;
	ks_stop = 1;
}

static int ks_reserve(char **buf, size_t *cap, size_t need)
{
	size_t n = *cap ? *cap : 4096;
	char *p;

	while (n < need)
		n *= 2;
	if (n == *cap)
		return 0;
	p = realloc(*buf, n);
	if (p == NULL)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static void ks_free(struct ks_conn *c)
{
	close(c->fd);
	free(c->in);
	free(c->out);
	free(c);
}

/* The value of header `name` in head[0..len), or NULL. */
static const char *ks_header(const char *head, size_t len, const char *name, size_t *vlen)
{
	size_t nl = strlen(name);
	const char *p = memchr(head, '\n', len), *end = head + len;

	while (p != NULL && p + 1 < end) {
		const char *line = p + 1, *eol = memchr(line, '\n', (size_t)(end - line));

		if (eol == NULL)
			break;
		if ((size_t)(eol - line) > nl && line[nl] == ':' && strncasecmp(line, name, nl) == 0) {
			const char *v = line + nl + 1;

			while (v < eol && (*v == ' ' || *v == '\t'))
				v++;
			*vlen = (size_t)(eol - v);
			while (*vlen > 0 && (v[*vlen - 1] == '\r' || v[*vlen - 1] == ' '))
				(*vlen)--;
			return v;
		}
		p = eol;
	}
	return NULL;
}

/* Answers every whole request in c->in; 0, or -1 to close. */
static int ks_process(struct ks_conn *c)
{
	size_t off = 0;

	while (off < c->in_len && !c->close_after) {
		const char *h = c->in + off, *v;
		size_t avail = c->in_len - off, vlen, body = 0, hlen;
		char *e = memmem(h, avail, "\r\n\r\n", 4);
		char head[256];
		int n;

		if (e == NULL)
			return avail > KS_MAX_HEAD ? -1 : 0;
		hlen = (size_t)(e - h) + 4;
		v = ks_header(h, hlen, "Content-Length", &vlen);
		if (v != NULL)
			body = strtoull(v, NULL, 10);
		if (avail < hlen + body)
			break;
		v = ks_header(h, hlen, "Connection", &vlen);
		if (v != NULL && vlen == 5 && strncasecmp(v, "close", 5) == 0)
			c->close_after = true;
		n = snprintf(head, sizeof(head),
			     "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
			     "Content-Length: %zu\r\n%s\r\n", body,
			     c->close_after ? "Connection: close\r\n" : "");
		if (ks_reserve(&c->out, &c->out_cap, c->out_len + (size_t)n + body) < 0)
			return -1;
		memcpy(c->out + c->out_len, head, (size_t)n);
		memcpy(c->out + c->out_len + n, h + hlen, body);
		c->out_len += (size_t)n + body;
		off += hlen + body;
	}
	memmove(c->in, c->in + off, c->in_len - off);
	c->in_len -= off;
	return 0;
}

/* Writes what c->out holds; 1 when all is out, 0 when the socket is full, -1 on error. */
static int ks_flush(struct ks_conn *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		c->out_off += (size_t)n;
	}
	c->out_off = c->out_len = 0;
	return 1;
}

/* One readiness event on a connection; -1 when it is to be closed. */
static int ks_event(int ep, struct ks_conn *c, uint32_t ev)
{
	struct epoll_event e = { .data.ptr = c };
	int rc;

	if (ev & EPOLLIN) {
		for (;;) {
			ssize_t n;

			if (ks_reserve(&c->in, &c->in_cap, c->in_len + 16384) < 0)
				return -1;
			n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
			if (n == 0)
				return -1;
			if (n < 0) {
				if (errno == EAGAIN)
					break;
				return -1;
			}
			c->in_len += (size_t)n;
			if (c->in_len < c->in_cap)
				break;  /* short read: the socket is drained */
		}
		if (ks_process(c) < 0)
			return -1;
	} else if (ev & (EPOLLERR | EPOLLHUP)) {
		return -1;
	}
	rc = ks_flush(c);
	if (rc < 0 || (rc == 1 && c->close_after))
		return -1;
	e.events = rc == 0 ? EPOLLIN | EPOLLOUT : EPOLLIN;
	if ((ev & EPOLLOUT) || rc == 0)
		epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &e);
	return 0;
}

static void ks_accept(int ep, int lfd)
{
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK), one = 1;
		struct ks_conn *c;
		struct epoll_event e;

		if (fd < 0)
			return;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c = calloc(1, sizeof(*c));
		if (c == NULL) {
			close(fd);
			continue;
		}
		c->fd = fd;
		e.events = EPOLLIN;
		e.data.ptr = c;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) < 0)
			ks_free(c);
	}
}

static int ks_listen(const char *addr, int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0), one = 1;

	if (fd < 0 || inet_pton(AF_INET, addr, &sin.sin_addr) != 1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 4096) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *addr = "0.0.0.0";
	int port = 8080, lfd, ep;
	struct epoll_event evs[KS_EVENTS], e = { .events = EPOLLIN };

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--port") == 0)
			port = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "--addr") == 0)
			addr = argv[i + 1];
	}
	signal(SIGTERM, ks_on_signal);
	signal(SIGINT, ks_on_signal);
	lfd = ks_listen(addr, port);
	ep = epoll_create1(0);
	if (lfd < 0 || ep < 0) {
		perror("kserver");
		return 1;
	}
	e.data.ptr = NULL;
	epoll_ctl(ep, EPOLL_CTL_ADD, lfd, &e);
	printf("kserver: listening on %s:%d\n", addr, port);
	fflush(stdout);
	while (!ks_stop) {
		int n = epoll_wait(ep, evs, KS_EVENTS, 200);

		for (int i = 0; i < n; i++) {
			struct ks_conn *c = evs[i].data.ptr;

			if (c == NULL)
				ks_accept(ep, lfd);
			else if (ks_event(ep, c, evs[i].events) < 0)
				ks_free(c);
		}
	}
	close(lfd);
	close(ep);
	return 0;
}
