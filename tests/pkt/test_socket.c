/* The POSIX-shaped socket API (us_socket.h) between two engines in virtual
 * time: every call's error paths, connection set-up and tear-down as the
 * application sees them (EINPROGRESS, SO_ERROR, ECONNREFUSED, ECONNRESET
 * then EPIPE, ETIMEDOUT), data both ways, and data left after both FINs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 80

/* A listener on side B. */
static int b_listen(uint16_t port, int backlog)
{
	struct sockaddr_in any = sp_addr(0, port);
	int fd;

	sp_on(&sp.b);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd > 0);
	assert_int_equal(us_bind(fd, SA(any), sizeof(any)), 0);
	assert_int_equal(us_listen(fd, backlog), 0);
	sp_on(&sp.a);
	return fd;
}

static int a_connect(uint16_t port)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, port);
	int fd;

	sp_on(&sp.a);
	fd = us_socket(AF_INET, SOCK_STREAM | US_SOCK_NONBLOCK, IPPROTO_TCP);
	assert_true(fd > 0);
	assert_fails(us_connect(fd, SA(to), sizeof(to)), EINPROGRESS);
	return fd;
}

/* A connected pair: *c on A, *s accepted on B. */
static void pair(int lfd, int *c, int *s)
{
	*c = a_connect(PORT);
	assert_int_equal(sp_wait_events(&sp.a, *c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(sp_wait_events(&sp.b, lfd, US_EPOLLIN, 100), US_EPOLLIN);
	*s = us_accept(lfd, NULL, NULL);
	assert_true(*s > 0);
}

static int sock_error(int fd)
{
	int err = -1;
	socklen_t len = sizeof(err);

	assert_int_equal(us_getsockopt(fd, US_SOL_SOCKET, US_SO_ERROR, &err, &len), 0);
	assert_int_equal(len, sizeof(int));
	return err;
}

static void test_bad_descriptors(void **state)
{
	char buf[8] = { 0 };
	struct us_epoll_event ev = { .events = US_EPOLLIN };
	int ep;

	(void)state;
	assert_fails(us_send(-1, buf, 1, 0), EBADF);
	assert_fails(us_recv(0, buf, 1, 0), EBADF);
	assert_fails(us_close(12345), EBADF);
	assert_fails(us_close(63 << US_FD_SHIFT | 1), EBADF); /* no such table */
	assert_fails(us_listen(77, 1), EBADF);
	assert_fails(us_accept(77, NULL, NULL), EBADF);
	assert_fails(us_shutdown(77, US_SHUT_WR), EBADF);
	assert_fails(us_epoll_wait(77, &ev, 1, 0), EBADF);
	assert_fails(us_socket(AF_UNIX, SOCK_STREAM, 0), EAFNOSUPPORT);
	assert_fails(us_socket(AF_INET, SOCK_RAW, 0), EPROTONOSUPPORT);
	assert_fails(us_socket(AF_INET, SOCK_STREAM, IPPROTO_UDP), EPROTONOSUPPORT);
	/* An epoll descriptor is no socket, a socket no epoll. */
	ep = us_epoll_create(1);
	assert_true(ep > 0);
	assert_fails(us_send(ep, buf, 1, 0), ENOTSOCK);
	assert_fails(us_connect(ep, NULL, 0), ENOTSOCK);
	int fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_epoll_wait(fd, &ev, 1, 0), EINVAL);
	assert_fails(us_epoll_wait(ep, &ev, 0, 0), EINVAL);
	assert_fails(us_epoll_create(0), EINVAL);
	/* Closed descriptors are gone. */
	assert_int_equal(us_close(fd), 0);
	assert_fails(us_close(fd), EBADF);
	assert_int_equal(us_close(ep), 0);
	/* A thread bound to no engine has nowhere to create sockets. */
	us_sock_table_bind_thread(NULL);
	assert_fails(us_socket(AF_INET, SOCK_STREAM, 0), ENETDOWN);
	assert_fails(us_epoll_create1(0), ENETDOWN);
}

static void test_wrong_state(void **state)
{
	struct sockaddr_in any = sp_addr(0, PORT), other = sp_addr(SP_B_IP, PORT);
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6 };
	char buf[8] = "x";
	int fd, fd2, l;

	(void)state;
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_accept(fd, NULL, NULL), EINVAL);     /* not a listener */
	assert_fails(us_listen(fd, 5), EDESTADDRREQ);        /* not bound */
	assert_fails(us_send(fd, buf, 1, 0), ENOTCONN);
	assert_fails(us_recv(fd, buf, 1, 0), ENOTCONN);
	assert_fails(us_shutdown(fd, US_SHUT_WR), ENOTCONN);
	assert_fails(us_shutdown(fd, 7), EINVAL);
	assert_fails(us_getpeername(fd, SA(any), &(socklen_t){ sizeof(any) }), ENOTCONN);
	assert_fails(us_bind(fd, SA(other), sizeof(other)), EADDRNOTAVAIL); /* B's address */
	assert_fails(us_bind(fd, SA(v6), sizeof(v6)), EAFNOSUPPORT);
	assert_fails(us_bind(fd, SA(any), 4), EINVAL);
	assert_int_equal(us_bind(fd, SA(any), sizeof(any)), 0);
	assert_fails(us_bind(fd, SA(any), sizeof(any)), EINVAL); /* bound already */
	fd2 = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_bind(fd2, SA(any), sizeof(any)), EADDRINUSE);
	/* A bound client port cannot be honoured yet. */
	struct sockaddr_in p81 = sp_addr(0, 81), to = sp_addr(SP_B_IP, PORT);
	assert_int_equal(us_bind(fd2, SA(p81), sizeof(p81)), 0);
	assert_fails(us_connect(fd2, SA(to), sizeof(to)), EOPNOTSUPP);
	l = fd;
	assert_int_equal(us_listen(l, 5), 0);
	assert_int_equal(us_listen(l, 9), 0); /* again: adjusts the backlog */
	assert_fails(us_connect(l, SA(to), sizeof(to)), EINVAL);
	assert_fails(us_accept(l, NULL, NULL), EAGAIN);      /* nothing yet */
	assert_fails(us_send(l, buf, 1, 0), ENOTCONN);
	assert_fails(us_recv(l, buf, 1, 0), ENOTCONN);
	/* Bad destinations. */
	int c = us_socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in zero_port = sp_addr(SP_B_IP, 0), zero_ip = sp_addr(0, PORT);
	assert_fails(us_connect(c, SA(zero_port), sizeof(zero_port)), EADDRNOTAVAIL);
	assert_fails(us_connect(c, SA(zero_ip), sizeof(zero_ip)), EADDRNOTAVAIL);
	assert_fails(us_connect(c, NULL, 0), EINVAL);
	assert_fails(us_connect(c, SA(v6), sizeof(v6)), EAFNOSUPPORT);
	/* Connecting: EALREADY, and data calls would block. */
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EALREADY);
	assert_fails(us_send(c, buf, 1, 0), EAGAIN);
	assert_fails(us_recv(c, buf, 1, 0), EAGAIN);
	assert_fails(us_listen(c, 1), EINVAL);
	assert_fails(us_bind(c, SA(any), sizeof(any)), EINVAL);
	assert_int_equal(us_close(c), 0);
	assert_int_equal(us_close(fd2), 0);
	assert_int_equal(us_close(l), 0);
}

static void test_connect_accept_data(void **state)
{
	struct sockaddr_in a, peer;
	socklen_t alen = sizeof(a), plen = sizeof(peer);
	char buf[64];
	int l, c, s;

	(void)state;
	l = b_listen(PORT, 8);
	c = a_connect(PORT);
	sp_on(&sp.b);
	assert_fails(us_accept(l, NULL, NULL), EAGAIN); /* SYN not even received */
	sp_on(&sp.a);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT | US_EPOLLIN, 100), US_EPOLLOUT);
	assert_int_equal(sock_error(c), 0);
	assert_fails(us_connect(c, SA(a), sizeof(a)), EISCONN);
	s = us_accept(l, SA(peer), &plen);
	assert_true(s > 0);
	assert_int_equal(plen, sizeof(peer));
	/* Both ends agree on the 4-tuple. */
	assert_int_equal(us_getsockname(c, SA(a), &alen), 0);
	assert_int_equal(ntohl(a.sin_addr.s_addr), SP_A_IP);
	assert_int_equal(peer.sin_port, a.sin_port);
	assert_int_equal(ntohl(peer.sin_addr.s_addr), SP_A_IP);
	assert_int_equal(us_getpeername(s, SA(peer), &plen), 0);
	assert_int_equal(peer.sin_port, a.sin_port);
	assert_int_equal(us_getpeername(c, SA(peer), &plen), 0);
	assert_int_equal(ntohs(peer.sin_port), PORT);
	assert_int_equal(ntohl(peer.sin_addr.s_addr), SP_B_IP);
	assert_int_equal(us_getsockname(s, SA(a), &alen), 0);
	assert_int_equal(ntohs(a.sin_port), PORT);
	assert_int_equal(ntohl(a.sin_addr.s_addr), SP_B_IP);
	/* Request and response. */
	assert_fails(us_recv(s, buf, sizeof(buf), 0), EAGAIN);
	assert_int_equal(us_send(c, "ping", 4, US_MSG_NOSIGNAL), 4);
	assert_int_equal(sp_wait_events(&sp.b, s, US_EPOLLIN, 100), US_EPOLLIN);
	assert_int_equal(us_recv(s, buf, 2, US_MSG_PEEK), 2); /* looks, leaves it */
	assert_memory_equal(buf, "pi", 2);
	assert_int_equal(us_recv(s, buf, sizeof(buf), US_MSG_PEEK), 4);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "ping", 4);
	assert_fails(us_recv(s, buf, sizeof(buf), US_MSG_PEEK), EAGAIN);
	assert_int_equal(us_sendto(s, "pong!", 5, 0, NULL, 0), 5);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN, 100), US_EPOLLIN);
	plen = sizeof(peer);
	assert_int_equal(us_recvfrom(c, buf, 2, 0, SA(peer), &plen), 2);
	assert_int_equal(ntohs(peer.sin_port), PORT);
	assert_int_equal(us_recv(c, buf + 2, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "pong!", 5);
	/* Graceful close both ways: end of stream is 0, then EPIPE on send. */
	assert_int_equal(us_close(c), 0);
	assert_int_equal(sp_wait_events(&sp.b, s, US_EPOLLRDHUP, 100), US_EPOLLRDHUP);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 0);
	assert_int_equal(us_close(s), 0);
	assert_int_equal(us_close(l), 0);
	assert_int_equal(sp.a.tab->stats.sock_opened, 1);
	assert_int_equal(sp.b.tab->stats.sock_accepted, 1);
}

static void test_refused(void **state)
{
	char buf[4];
	int c;

	(void)state;
	c = a_connect(PORT); /* nobody listens on B */
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100),
			 US_EPOLLOUT | US_EPOLLERR | US_EPOLLHUP);
	assert_int_equal(sock_error(c), ECONNREFUSED);
	assert_int_equal(sock_error(c), 0); /* reported once */
	assert_fails(us_send(c, buf, 1, 0), EPIPE);
	assert_int_equal(us_recv(c, buf, 1, 0), 0);
	assert_int_equal(us_close(c), 0);
	/* The error also comes back from a second connect, once. */
	c = a_connect(PORT);
	sp_run(5);
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	assert_fails(us_connect(c, SA(to), sizeof(to)), ECONNREFUSED);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EISCONN);
	assert_int_equal(us_close(c), 0);
}

static void few_syn_retries(struct us_config *cfg)
{
	cfg->tcp.syn_retries = 2;
	cfg->arp_retry_ms = 100;
}

static void test_connect_timeout(void **state)
{
	char buf[4];
	int c;

	(void)state;
	sp_teardown();
	sp_setup(few_syn_retries);
	sp.a.wire_down = true; /* every SYN is lost */
	c = a_connect(PORT);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 1000), 0);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 60000) & US_EPOLLERR, US_EPOLLERR);
	assert_fails(us_recv(c, buf, 1, 0), ETIMEDOUT);
	assert_int_equal(us_recv(c, buf, 1, 0), 0);
	assert_int_equal(us_close(c), 0);
}

static void test_reset_then_epipe(void **state)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 }, got;
	socklen_t len = sizeof(got);
	char buf[4];
	int l, c, s;

	(void)state;
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	assert_int_equal(us_setsockopt(s, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg)), 0);
	assert_int_equal(us_getsockopt(s, US_SOL_SOCKET, US_SO_LINGER, &got, &len), 0);
	assert_int_equal(got.l_onoff, 1);
	assert_int_equal(us_close(s), 0); /* RST */
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN | US_EPOLLRDHUP, 100),
			 US_EPOLLIN | US_EPOLLRDHUP | US_EPOLLERR | US_EPOLLHUP);
	assert_fails(us_send(c, "x", 1, 0), ECONNRESET);
	assert_fails(us_send(c, "x", 1, 0), EPIPE);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 0);
	assert_int_equal(us_close(c), 0);
	assert_int_equal(us_close(l), 0);
}

static void test_shutdown_write(void **state)
{
	char buf[16];
	int l, c, s;

	(void)state;
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	assert_int_equal(us_shutdown(c, US_SHUT_WR), 0);
	assert_fails(us_send(c, "x", 1, 0), EPIPE);
	/* B sees RDHUP (end of stream) but may still write. */
	assert_int_equal(sp_wait_events(&sp.b, s, US_EPOLLIN | US_EPOLLRDHUP | US_EPOLLOUT, 100),
			 US_EPOLLIN | US_EPOLLRDHUP | US_EPOLLOUT);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 0);
	assert_int_equal(us_send(s, "late", 4, 0), 4);
	/* A writes no more but reads on. */
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN | US_EPOLLRDHUP, 100), US_EPOLLIN);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 4);
	/* B sends more and closes; A has not read when both FINs are done
	 * (A is in TIME-WAIT): the data is still there, then end of stream. */
	assert_int_equal(us_send(s, "tail", 4, 0), 4);
	assert_int_equal(us_close(s), 0);
	sp_run(50);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN | US_EPOLLRDHUP, 0),
			 US_EPOLLIN | US_EPOLLRDHUP | US_EPOLLHUP);
	assert_int_equal(us_recv(c, buf, 2, 0), 2);
	assert_int_equal(us_recv(c, buf + 2, sizeof(buf), US_MSG_PEEK), 2); /* kept data */
	assert_int_equal(us_recv(c, buf + 2, sizeof(buf), 0), 2);
	assert_memory_equal(buf, "tail", 4);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 0);
	assert_int_equal(us_close(c), 0);
	assert_int_equal(us_close(l), 0);
}

static void test_shutdown_read(void **state)
{
	char buf[4];
	int l, c, s;

	(void)state;
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN | US_EPOLLRDHUP, 0), 0);
	assert_int_equal(us_shutdown(c, US_SHUT_RD), 0);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN | US_EPOLLRDHUP, 0),
			 US_EPOLLIN | US_EPOLLRDHUP);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 0);
	assert_int_equal(us_send(c, "ok", 2, 0), 2); /* writing goes on */
	assert_int_equal(sp_wait_events(&sp.b, s, US_EPOLLIN, 100), US_EPOLLIN);
	assert_int_equal(us_shutdown(c, US_SHUT_RDWR), 0);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 0), US_EPOLLOUT | US_EPOLLHUP);
	us_close(c);
	us_close(s);
	us_close(l);
}

static void small_buffers(struct us_config *cfg)
{
	cfg->tcp.sndbuf = 16 * 1024;
	cfg->tcp.rcvbuf = 16 * 1024;
}

/* Send until EAGAIN; the peer's reads bring an edge-triggered EPOLLOUT. */
static void test_send_eagain(void **state)
{
	static char big[64 * 1024], sink[64 * 1024];
	int l, c, s, sndbuf = 0;
	socklen_t len = sizeof(sndbuf);
	size_t queued = 0;
	ssize_t n;

	(void)state;
	sp_teardown();
	sp_setup(small_buffers);
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	assert_int_equal(us_getsockopt(c, US_SOL_SOCKET, US_SO_SNDBUF, &sndbuf, &len), 0);
	assert_int_equal(sndbuf, 16 * 1024);
	while ((n = us_send(c, big, sizeof(big), 0)) > 0) {
		queued += (size_t)n;
		sp_run(2);
	}
	assert_int_equal(n, -1);
	assert_int_equal(errno, EAGAIN);
	/* Our send buffer full and B's receive buffer (its window, in whole
	 * segments) too: nothing moves until B reads. */
	assert_true(queued > 16 * 1024 + 8 * 1448 && queued <= 32 * 1024);
	sp_on(&sp.a);
	int ep = us_epoll_create1(0);
	struct us_epoll_event ev = { .events = US_EPOLLOUT | US_EPOLLET, .data.u64 = 7 }, out[2];
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, c, &ev), 0);
	assert_int_equal(us_epoll_wait(ep, out, 2, 50), 0);
	size_t got = 0;
	while (got < queued) {
		n = us_recv(s, sink, 2048, 0); /* a slow reader */
		if (n > 0)
			got += (size_t)n;
		sp_run(1);
		if (got < queued && us_epoll_wait(ep, out, 2, 0) == 1) {
			assert_int_equal(out[0].events, US_EPOLLOUT);
			assert_int_equal(out[0].data.u64, 7);
			break;
		}
	}
	assert_true(got < queued); /* room opened before everything was read */
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 0); /* edge: once */
	us_close(ep);
	us_close(c);
	us_close(s);
	us_close(l);
}

static void test_accept_backlog(void **state)
{
	char buf[4];
	int l, c1, c2, s;

	(void)state;
	l = b_listen(PORT, 1);
	c1 = a_connect(PORT);
	c2 = a_connect(PORT);
	sp_run(20);
	/* The second connection found the accept queue full: reset. */
	assert_int_equal(sp.b.tab->stats.sock_drop_accept_full, 1);
	assert_fails(us_recv(c2, buf, 1, 0), ECONNRESET);
	assert_fails(us_recv(c1, buf, 1, 0), EAGAIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	assert_fails(us_accept(l, NULL, NULL), EAGAIN);
	/* A connection waiting for accept is reset when its listener closes. */
	int c3 = a_connect(PORT);
	sp_run(20);
	assert_int_equal(us_close(l), 0);
	assert_int_equal(sp.b.tab->stats.sock_drop_listener_closed, 1);
	sp_run(20);
	assert_fails(us_recv(c3, buf, 1, 0), ECONNRESET);
	us_close(c1);
	us_close(c2);
	us_close(c3);
	us_close(s);
}

/* What tcp/ applies to fd's connection (the engine of the side bound). */
static struct tcp_conn_info conn_info(int fd)
{
	struct tcp_conn_info ci;
	struct us_sock *us;

	assert_int_equal(us_sock_lookup(fd, &us), 0);
	assert_non_null(us->tc);
	tcp_conn_get_info(us->tc, &ci);
	return ci;
}

static void test_options(void **state)
{
	struct us_tcp_info ti;
	socklen_t len = sizeof(ti);
	int l, c, s, on = 1, v = 0;
	socklen_t vlen = sizeof(v);

	(void)state;
	l = b_listen(PORT, 8);
	sp_on(&sp.b);
	assert_int_equal(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_NODELAY, &on, sizeof(on)), 0);
	assert_int_equal(us_setsockopt(l, US_SOL_SOCKET, US_SO_REUSEADDR, &on, sizeof(on)), 0);
	/* RFC 7413 qlen on a listener (tests/pkt/test_socket_tfo.c). */
	assert_int_equal(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN, &on, sizeof(on)), 0);
	assert_fails(us_setsockopt(l, US_SOL_SOCKET, 999, &on, sizeof(on)), ENOPROTOOPT);
	assert_fails(us_setsockopt(l, 42, US_TCP_NODELAY, &on, sizeof(on)), ENOPROTOOPT);
	assert_fails(us_setsockopt(l, US_SOL_SOCKET, US_SO_KEEPALIVE, &on, 2), EINVAL);
	assert_fails(us_getsockopt(l, US_SOL_SOCKET, US_SO_ERROR, NULL, &vlen), EFAULT);
	sp_on(&sp.a);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(c, US_SOL_SOCKET, US_SO_KEEPALIVE, &on, sizeof(on)), 0);
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	/* Inherited from the listener, applied to the connection. */
	assert_int_equal(us_getsockopt(s, US_IPPROTO_TCP, US_TCP_NODELAY, &v, &vlen), 0);
	assert_int_equal(v, 1);
	assert_int_equal(us_getsockopt(s, US_IPPROTO_TCP, US_TCP_INFO, &ti, &len), 0);
	assert_int_equal(len, sizeof(ti));
	assert_int_equal(ti.tcpi_state, US_TCP_ESTABLISHED);
	assert_int_equal(ti.tcpi_snd_mss, 1460 - 12); /* less the timestamp option */
	assert_int_equal(conn_info(s).nodelay, 1);
	/* Set before connect, applied once there is a connection. */
	assert_int_equal(conn_info(c).keepalive, 1);
	assert_int_equal(conn_info(c).nodelay, 0);
	/* Connect-with-data on a connected socket: EISCONN, as Linux. */
	assert_fails(us_send(c, "x", 1, US_MSG_FASTOPEN), EISCONN);
	assert_fails(us_sendto(c, "x", 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EISCONN);
	assert_fails(us_send(c, "x", 1, 0x02 /* MSG_PEEK */), EOPNOTSUPP);
	us_close(c);
	us_close(s);
	us_close(l);
}

/* A chain of two segments carrying text. */
static struct rte_mbuf *chain_of(int fd, const char *a, const char *b)
{
	struct rte_mbuf *m = us_mbuf_alloc(fd), *m2 = us_mbuf_alloc(fd);

	assert_non_null(m);
	assert_non_null(m2);
	memcpy(rte_pktmbuf_append(m, (uint16_t)strlen(a)), a, strlen(a));
	memcpy(rte_pktmbuf_append(m2, (uint16_t)strlen(b)), b, strlen(b));
	assert_int_equal(rte_pktmbuf_chain(m, m2), 0);
	return m;
}

static void test_zero_copy(void **state)
{
	struct rte_mbuf *m, *got;
	char flat[32];
	int l, c, s;

	(void)state;
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	assert_null(us_mbuf_alloc(999));
	assert_int_equal(errno, EBADF);
	assert_fails(us_recv_mbuf(s, NULL, 0), EFAULT);
	assert_fails(us_recv_mbuf(s, &got, 0), EAGAIN);
	assert_null(got);
	/* Send a caller-built chain: the stack owns it from here. */
	m = chain_of(c, "zero-", "copy");
	assert_int_equal(us_send_mbuf(c, m, 0), 9);
	assert_int_equal(us_send(c, "!", 1, 0), 1); /* copied data after it */
	assert_int_equal(sp_wait_events(&sp.b, s, US_EPOLLIN, 100), US_EPOLLIN);
	sp_run(100); /* the "!" waits for an ACK (Nagle, delayed ACK) */
	/* Receive the payload mbufs themselves. */
	assert_int_equal(us_recv_mbuf(s, &got, 0), 10);
	assert_non_null(got);
	assert_int_equal(rte_pktmbuf_pkt_len(got), 10);
	assert_memory_equal(rte_pktmbuf_read(got, 0, 10, flat), "zero-copy!", 10);
	us_mbuf_free(got);
	assert_fails(us_recv_mbuf(s, &got, 0), EAGAIN);
	/* A shared segment is refused and stays the caller's. */
	m = chain_of(c, "ab", "cd");
	rte_mbuf_refcnt_update(m->next, 1);
	assert_fails(us_send_mbuf(c, m, 0), EINVAL);
	rte_mbuf_refcnt_update(m->next, -1);
	assert_fails(us_send_mbuf(c, m, 0x02), EOPNOTSUPP);
	/* After shutdown: EPIPE, still the caller's. */
	assert_int_equal(us_shutdown(c, US_SHUT_WR), 0);
	assert_fails(us_send_mbuf(c, m, 0), EPIPE);
	us_mbuf_free(m);
	/* End of stream: 0 and no chain. */
	sp_run(5);
	assert_int_equal(us_recv_mbuf(s, &got, 0), 0);
	assert_null(got);
	/* Data kept after both FINs comes out zero-copy too, the part
	 * us_recv already read excluded. */
	assert_int_equal(us_send(s, "tail-data", 9, 0), 9);
	assert_int_equal(us_shutdown(s, US_SHUT_WR), 0);
	sp_run(50);
	assert_int_equal(us_recv(c, flat, 5, 0), 5);
	assert_int_equal(us_recv_mbuf(c, &got, 0), 4);
	assert_memory_equal(rte_pktmbuf_read(got, 0, 4, flat), "data", 4);
	us_mbuf_free(got);
	assert_int_equal(us_recv_mbuf(c, &got, 0), 0);
	us_close(c);
	us_close(s);
	us_close(l);
}

static void small_sndbuf(struct us_config *cfg)
{
	cfg->tcp.sndbuf = 4096;
}

/* A chain larger than the room left: EAGAIN, all of it stays the
 * caller's; larger than the whole buffer: EMSGSIZE. */
static void test_zero_copy_full(void **state)
{
	struct rte_mbuf *m, *big;
	int l, c, s;

	(void)state;
	sp_teardown();
	sp_setup(small_sndbuf);
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	sp.a.wire_down = true; /* nothing gets acknowledged */
	static char fill[3000];
	assert_int_equal(us_send(c, fill, sizeof(fill), 0), 3000);
	m = us_mbuf_alloc(c);
	rte_pktmbuf_append(m, 1500);
	assert_fails(us_send_mbuf(c, m, 0), EAGAIN);
	big = us_mbuf_alloc(c);
	rte_pktmbuf_append(big, 2000);
	assert_int_equal(rte_pktmbuf_chain(big, m), 0);
	struct rte_mbuf *third = us_mbuf_alloc(c);
	rte_pktmbuf_append(third, 1000);
	assert_int_equal(rte_pktmbuf_chain(big, third), 0);
	assert_fails(us_send_mbuf(c, big, 0), EMSGSIZE); /* 4500 > 4096 */
	us_mbuf_free(big);
	sp.a.wire_down = false;
	us_close(c);
	us_close(s);
	us_close(l);
}

/* 1 MiB one way through the sockets, both sides driven by edge-triggered
 * epoll as a real service would be, every 37th frame from A lost: the
 * receiver sees the exact byte stream, then end of stream. */
static void test_bulk_edge_triggered(void **state)
{
	enum { TOTAL = 1 << 20 };
	static uint8_t out[TOTAL], in[TOTAL];
	struct us_epoll_event ev, evs[4];
	size_t sent = 0, got = 0;
	bool eof = false, shut = false;
	int l, c, s, ea, eb;

	(void)state;
	for (size_t i = 0; i < TOTAL; i++)
		out[i] = (uint8_t)(i * 7 + (i >> 11));
	l = b_listen(PORT, 8);
	pair(l, &c, &s);
	sp.a.drop_every = 37;
	ea = us_epoll_create1(0);
	ev = (struct us_epoll_event){ .events = US_EPOLLOUT | US_EPOLLET, .data.fd = c };
	assert_int_equal(us_epoll_ctl(ea, US_EPOLL_CTL_ADD, c, &ev), 0);
	sp_on(&sp.b);
	eb = us_epoll_create1(0);
	ev = (struct us_epoll_event){ .events = US_EPOLLIN | US_EPOLLRDHUP | US_EPOLLET, .data.fd = s };
	assert_int_equal(us_epoll_ctl(eb, US_EPOLL_CTL_ADD, s, &ev), 0);
	for (unsigned round = 0; round < 200000 && !eof; round++) {
		/* Edge-triggered: on each event, work until EAGAIN. */
		if (us_epoll_wait(ea, evs, 4, 0) > 0 || round == 0) {
			ssize_t n;

			while (sent < TOTAL && (n = us_send(c, out + sent, TOTAL - sent, 0)) > 0)
				sent += (size_t)n;
			if (sent == TOTAL && !shut)
				shut = us_shutdown(c, US_SHUT_WR) == 0;
		}
		if (us_epoll_wait(eb, evs, 4, 0) > 0) {
			ssize_t n;

			while ((n = us_recv(s, in + got, TOTAL - got + 1, 0)) > 0)
				got += (size_t)n;
			if (n == 0)
				eof = true;
			else
				assert_int_equal(errno, EAGAIN);
		}
	}
	assert_true(eof);
	assert_int_equal(got, TOTAL);
	assert_memory_equal(in, out, TOTAL);
	assert_true(us_engine_counter(sp.a.e, "tcp_retrans_segs") > 0); /* loss was real */
	sp.a.drop_every = 0;
	us_close(ea);
	us_close(eb);
	us_close(c);
	us_close(s);
	us_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_bad_descriptors),
		sp_unit_test(test_wrong_state),
		sp_unit_test(test_connect_accept_data),
		sp_unit_test(test_refused),
		sp_unit_test(test_connect_timeout),
		sp_unit_test(test_reset_then_epipe),
		sp_unit_test(test_shutdown_write),
		sp_unit_test(test_shutdown_read),
		sp_unit_test(test_send_eagain),
		sp_unit_test(test_accept_backlog),
		sp_unit_test(test_options),
		sp_unit_test(test_zero_copy),
		sp_unit_test(test_zero_copy_full),
		sp_unit_test(test_bulk_edge_triggered),
	};

	h_eal_init("pkt_socket");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
