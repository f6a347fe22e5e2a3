/* examples/echo: a minimal TCP echo service on libuserstack's POSIX-shaped
 * sockets and epoll-shaped readiness.  Built out of tree against the
 * installed library:
 *
 *	cc -o us-echo echo.c $(pkg-config --cflags --libs libuserstack)
 *	./us-echo --config /etc/userstack/tap.ini --port 7
 *
 * It is the kernel's epoll echo server with us_ in front of the calls: one
 * thread, non-blocking sockets, level-triggered readiness.  Bytes a client
 * sends come back; when the client half-closes, the server finishes sending
 * and closes too.  SIGINT/SIGTERM stop it (exit 0).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <userstack.h>

#define MAX_EVENTS 64
#define BUF_SIZE 16384

/* Per connection: bytes received and not yet sent back. */
struct conn {
	char buf[BUF_SIZE];
	size_t len;
	int eof; /* the client has half-closed */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static struct conn *conns[1 << 16];

/* Returns 0 to keep the connection, -1 to close it. */
static int serve(int fd, struct conn *c)
{
	while (c->len > 0) {
		ssize_t n = us_send(fd, c->buf, c->len, 0);
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		memmove(c->buf, c->buf + n, c->len - (size_t)n);
		c->len -= (size_t)n;
	}
	while (!c->eof) {
		ssize_t n = us_recv(fd, c->buf, sizeof(c->buf), 0);
		if (n == 0) {
			c->eof = 1;
			break;
		}
		if (n < 0)
			return errno == EAGAIN ? 0 : -1;
		c->len = (size_t)n;
		return serve(fd, c); /* send it back, then read on */
	}
	return c->eof && c->len == 0 ? -1 : 0;
}

static void drop(int ep, int fd)
{
	unsigned k = (unsigned)fd & 0xffff;

	us_epoll_ctl(ep, US_EPOLL_CTL_DEL, fd, NULL);
	us_close(fd);
	free(conns[k]);
	conns[k] = NULL;
}

static void accept_all(int ep, int lfd)
{
	int fd;

	while ((fd = us_accept(lfd, NULL, NULL)) >= 0) {
		struct us_epoll_event ev = { .events = US_EPOLLIN | US_EPOLLOUT, .data.fd = fd };
		unsigned k = (unsigned)fd & 0xffff;

		conns[k] = calloc(1, sizeof(struct conn));
		if (conns[k] == NULL || us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev) < 0) {
			free(conns[k]);
			conns[k] = NULL;
			us_close(fd);
		}
	}
}

static int listen_on(unsigned port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int one = 1, fd = us_socket(AF_INET, SOCK_STREAM | US_SOCK_NONBLOCK, 0);

	if (fd < 0 || us_setsockopt(fd, US_SOL_SOCKET, US_SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    us_bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || us_listen(fd, 128) < 0) {
		perror("us-echo: listen");
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	const char *config = "tap.ini";
	unsigned port = 7;
	struct us_epoll_event evs[MAX_EVENTS];

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--config") == 0)
			config = argv[i + 1];
		else if (strcmp(argv[i], "--port") == 0)
			port = (unsigned)atoi(argv[i + 1]);
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	struct us_stack *st = us_init(config, argv[0]);
	if (st == NULL)
		return 1;
	int lfd = listen_on(port), ep = us_epoll_create1(0);
	struct us_epoll_event lev = { .events = US_EPOLLIN, .data.fd = lfd };
	if (lfd < 0 || ep < 0 || us_epoll_ctl(ep, US_EPOLL_CTL_ADD, lfd, &lev) < 0) {
		us_fini(st);
		return 1;
	}
	/* The interop harness waits for this line. */
	printf("us-echo: listening on http://%s:%u/ (raw TCP echo)\n", us_local_addr(st), port);
	fflush(stdout);
	unsigned long served = 0;
	while (!stop) {
		int n = us_epoll_wait(ep, evs, MAX_EVENTS, 100);
		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd;
			if (fd == lfd) {
				accept_all(ep, lfd);
				continue;
			}
			struct conn *c = conns[(unsigned)fd & 0xffff];
			if ((evs[i].events & US_EPOLLERR) || serve(fd, c) < 0) {
				drop(ep, fd);
				served++;
			}
		}
	}
	printf("us-echo: %lu connections served\n", served);
	us_fini(st); /* closes every socket left */
	return 0;
}
