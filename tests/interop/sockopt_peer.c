/* us-sockopt-peer: the server side of sockopt_interop.py, which runs the
 * same protocol against a kernel server (in Python) to compare what a
 * Linux client sees of the socket options of each.
 *
 *   us-sockopt-peer --config F --port P
 *
 * Listeners, each with its options set before listen as a Linux server
 * would: P plain, P+1 TCP_MAXSEG 1000, P+2 plain (the request asks for
 * SO_LINGER {1, 0}), P+3 plain (the request asks for TCP_CORK).  A client
 * sends one line "MODE N\n"; the server sets MODE's option on the accepted
 * socket (data: none, linger0: SO_LINGER {1, 0}, cork: TCP_CORK 1), sends
 * N pattern bytes and closes, except cork, which holds the socket open
 * one second first.  At start it prints "probe NAME RESULT" for each
 * option misuse of sockopt_interop.py's list (the errno name, or the value
 * a get returned), then "listening on http://0.0.0.0:P/".  SIGTERM or
 * SIGINT ends it (exit 0). */
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <userstack.h>

#define NLISTEN 4
#define MAXC 64
#define PEER_MAXSEG 1000
#define CORK_HOLD_NS 1000000000ull

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *errname(int e)
{
	switch (e) {
	case 0: return "OK";
	case EINVAL: return "EINVAL";
	case ENOPROTOOPT: return "ENOPROTOOPT";
	case ENOENT: return "ENOENT";
	case EFAULT: return "EFAULT";
	default: return "OTHER";
	}
}

/* setsockopt of an int (len bytes of it) on a fresh socket: the errno. */
static void probe_set(const char *name, int level, int opt, int v, socklen_t len)
{
	int fd = us_socket(AF_INET, SOCK_STREAM, 0);
	int rc = us_setsockopt(fd, level, opt, &v, len);

	printf("probe %s %s\n", name, errname(rc == 0 ? 0 : errno));
	us_close(fd);
}

/* set v, then get: the value read back (or the set's errno). */
static void probe_get(const char *name, int level, int opt, int v)
{
	int fd = us_socket(AF_INET, SOCK_STREAM, 0), got = 0;
	socklen_t len = sizeof(got);

	if (us_setsockopt(fd, level, opt, &v, sizeof(v)) != 0 ||
	    us_getsockopt(fd, level, opt, &got, &len) != 0)
		printf("probe %s %s\n", name, errname(errno));
	else
		printf("probe %s %d\n", name, got);
	us_close(fd);
}

static void probes(void)
{
	int fd = us_socket(AF_INET, SOCK_STREAM, 0);
	uint8_t key[15] = { 0 };
	int rc;

	probe_set("maxseg-87", US_IPPROTO_TCP, US_TCP_MAXSEG, 87, sizeof(int));
	probe_set("maxseg-65536", US_IPPROTO_TCP, US_TCP_MAXSEG, 65536, sizeof(int));
	probe_set("keepidle-0", US_IPPROTO_TCP, US_TCP_KEEPIDLE, 0, sizeof(int));
	probe_set("keepintvl-32768", US_IPPROTO_TCP, US_TCP_KEEPINTVL, 32768, sizeof(int));
	probe_set("keepcnt-128", US_IPPROTO_TCP, US_TCP_KEEPCNT, 128, sizeof(int));
	probe_set("syncnt-0", US_IPPROTO_TCP, US_TCP_SYNCNT, 0, sizeof(int));
	probe_set("user-timeout--1", US_IPPROTO_TCP, US_TCP_USER_TIMEOUT, -1, sizeof(int));
	probe_set("inq-2", US_IPPROTO_TCP, US_TCP_INQ, 2, sizeof(int));
	probe_set("nodelay-len2", US_IPPROTO_TCP, US_TCP_NODELAY, 1, 2);
	probe_set("tcp-99", US_IPPROTO_TCP, 99, 1, sizeof(int));
	probe_set("ttl-0", US_IPPROTO_IP, US_IP_TTL, 0, sizeof(int));
	probe_set("ttl-256", US_IPPROTO_IP, US_IP_TTL, 256, sizeof(int));
	probe_set("so-type-set", US_SOL_SOCKET, US_SO_TYPE, 1, sizeof(int));
	probe_set("so-error-set", US_SOL_SOCKET, US_SO_ERROR, 1, sizeof(int));
	probe_set("level-999", 999, 1, 1, sizeof(int));
	probe_get("linger2-500", US_IPPROTO_TCP, US_TCP_LINGER2, 500);
	probe_get("linger2--5", US_IPPROTO_TCP, US_TCP_LINGER2, -5);
	probe_get("defer-accept-5", US_IPPROTO_TCP, US_TCP_DEFER_ACCEPT, 5);
	probe_get("rcvbuf-8192", US_SOL_SOCKET, US_SO_RCVBUF, 8192);
	probe_get("sndbuf-10000", US_SOL_SOCKET, US_SO_SNDBUF, 10000);
	probe_get("rcvlowat-0", US_SOL_SOCKET, US_SO_RCVLOWAT, 0);
	probe_get("maxseg-1000", US_IPPROTO_TCP, US_TCP_MAXSEG, 1000);
	probe_get("tos-0x2b", US_IPPROTO_IP, US_IP_TOS, 0x2b);
	probe_get("notsent-lowat--1", US_IPPROTO_TCP, US_TCP_NOTSENT_LOWAT, -1);
	rc = us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_CONGESTION, "nosuch", 6);
	printf("probe congestion-nosuch %s\n", errname(rc == 0 ? 0 : errno));
	rc = us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_FASTOPEN_KEY, key, sizeof(key));
	printf("probe fastopen-key-15 %s\n", errname(rc == 0 ? 0 : errno));
	us_close(fd);
}

struct conn {
	int fd;
	uint64_t close_at; /* 0: not waiting */
};

static int listen_on(uint16_t port, int maxseg)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = us_socket(AF_INET, SOCK_STREAM, 0), one = 1;

	us_setsockopt(fd, US_SOL_SOCKET, US_SO_REUSEADDR, &one, sizeof(one));
	if (maxseg > 0)
		us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_MAXSEG, &maxseg, sizeof(maxseg));
	if (us_bind(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 || us_listen(fd, 64) != 0) {
		fprintf(stderr, "us-sockopt-peer: listen on %u: %s\n", port, strerror(errno));
		exit(1);
	}
	return fd;
}

/* The request "MODE N": its option, N bytes, then close (cork: later). */
static void serve(struct conn *c)
{
	static char data[1 << 20];
	char req[64] = { 0 }, mode[16] = { 0 };
	struct linger lg = { 1, 0 };
	unsigned long n = 0;
	int one = 1;
	ssize_t r = us_recv(c->fd, req, sizeof(req) - 1, 0);

	if (r < 0 && errno == EAGAIN)
		return;
	if (r <= 0 || sscanf(req, "%15s %lu", mode, &n) != 2 || n > sizeof(data)) {
		us_close(c->fd);
		c->fd = -1;
		return;
	}
	if (strcmp(mode, "linger0") == 0)
		us_setsockopt(c->fd, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg));
	if (strcmp(mode, "cork") == 0)
		us_setsockopt(c->fd, US_IPPROTO_TCP, US_TCP_CORK, &one, sizeof(one));
	for (unsigned long i = 0; i < n; i++)
		data[i] = (char)('a' + i % 26);
	if (n > 0 && us_send(c->fd, data, n, 0) != (ssize_t)n)
		fprintf(stderr, "us-sockopt-peer: short send\n");
	if (strcmp(mode, "cork") == 0) {
		c->close_at = now_ns() + CORK_HOLD_NS;
		return;
	}
	us_close(c->fd);
	c->fd = -1;
}

int main(int argc, char **argv)
{
	const char *config = NULL;
	struct us_epoll_event ev, evs[64];
	struct conn conns[MAXC];
	int port = 0, lfd[NLISTEN], ep;
	struct us_stack *st;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--config") == 0)
			config = argv[i + 1];
		else if (strcmp(argv[i], "--port") == 0)
			port = atoi(argv[i + 1]);
	}
	if (config == NULL || port <= 0 || port > 65535 - NLISTEN) {
		fprintf(stderr, "usage: us-sockopt-peer --config FILE --port PORT\n");
		return 2;
	}
	st = us_init(config, argv[0]);
	if (st == NULL)
		return 1;
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	probes();
	ep = us_epoll_create1(0);
	for (int i = 0; i < NLISTEN; i++) {
		lfd[i] = listen_on((uint16_t)(port + i), i == 1 ? PEER_MAXSEG : 0);
		ev = (struct us_epoll_event){ .events = US_EPOLLIN, .data.fd = lfd[i] };
		us_epoll_ctl(ep, US_EPOLL_CTL_ADD, lfd[i], &ev);
	}
	for (int i = 0; i < MAXC; i++)
		conns[i] = (struct conn){ .fd = -1 };
	printf("listening on http://0.0.0.0:%d/\n", port);
	while (!stop) {
		int n = us_epoll_wait(ep, evs, 64, 10);

		for (int i = 0; i < n; i++) {
			int fd = evs[i].data.fd, c;

			for (int l = 0; l < NLISTEN; l++)
				if (fd == lfd[l])
					while ((c = us_accept(fd, NULL, NULL)) >= 0) {
						int slot = 0;

						while (slot < MAXC && conns[slot].fd >= 0)
							slot++;
						if (slot == MAXC) {
							us_close(c);
							continue;
						}
						conns[slot] = (struct conn){ .fd = c };
						ev = (struct us_epoll_event){ .events = US_EPOLLIN,
									      .data.fd = c };
						us_epoll_ctl(ep, US_EPOLL_CTL_ADD, c, &ev);
					}
		}
		for (int i = 0; i < MAXC; i++) {
			if (conns[i].fd < 0)
				continue;
			if (conns[i].close_at == 0)
				serve(&conns[i]);
			else if (now_ns() >= conns[i].close_at) {
				us_close(conns[i].fd);
				conns[i].fd = -1;
			}
		}
	}
	us_fini(st);
	return 0;
}
