/* The socket- and IP-level options, the send/recv flags and the queue
 * ioctls through the socket API between two engines in virtual time
 * (sock_pair.c), with their effect on the segments and their errors,
 * Linux's (socket(7), ip(7)): SO_LINGER, SO_RCVBUF/SO_SNDBUF, SO_RCVLOWAT,
 * SO_KEEPALIVE, SO_ERROR, SO_TYPE/DOMAIN/PROTOCOL/ACCEPTCONN, SO_REUSEADDR,
 * IP_TOS, IP_TTL; MSG_PEEK, MSG_WAITALL, MSG_DONTWAIT, MSG_NOSIGNAL,
 * MSG_TRUNC, MSG_OOB without urgent data; FIONREAD/SIOCINQ, SIOCOUTQ, SIOCOUTQNSD. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 80
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

static char big[256 * 1024];

/* SO_LINGER {1, 0}: close sends an RST; {1, 5}: a graceful close (FIN). */
static void test_linger(void **state)
{
	struct linger lg = { 1, 0 }, got;
	socklen_t len = sizeof(got);
	int l, c, s;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_fails(us_setsockopt(c, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg) - 1), EINVAL);
	assert_int_equal(us_getsockopt(c, US_SOL_SOCKET, US_SO_LINGER, &got, &len), 0);
	assert_int_equal(len, sizeof(got));
	assert_int_equal(got.l_onoff, 0);
	assert_int_equal(us_setsockopt(c, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg)), 0);
	assert_int_equal(us_send(c, "abc", 3, 0), 3);
	sp_log_clear(&sp.a);
	assert_int_equal(us_close(c), 0);
	sp_run(5);
	assert_int_equal(sp_log_count(&sp.a, TH_RST, 0), 1);
	assert_int_equal(sp_log_count(&sp.a, TH_FIN, 0), 0);
	sp_on(&sp.b);
	us_close(s);
	sp_on(&sp.a);

	lg = (struct linger){ 1, 5 };
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(us_setsockopt(c, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg)), 0);
	len = sizeof(got);
	assert_int_equal(us_getsockopt(c, US_SOL_SOCKET, US_SO_LINGER, &got, &len), 0);
	assert_int_equal(got.l_onoff, 1);
	assert_int_equal(got.l_linger, 5);
	sp_log_clear(&sp.a);
	assert_int_equal(us_close(c), 0);
	sp_run(5);
	assert_int_equal(sp_log_count(&sp.a, TH_RST, 0), 0);
	assert_int_equal(sp_log_count(&sp.a, TH_FIN, 0), 1);
	sp_close3(-1, s, l);
}

static void rcvbuf_8k(int fd)
{
	sp_set_int(fd, US_SOL_SOCKET, US_SO_RCVBUF, 8192);
}

/* SO_RCVBUF: the window follows this socket's buffer from the SYN on,
 * no autotuning, reported doubled; SO_SNDBUF bounds what send queues. */
static void test_buffers(void **state)
{
	int l, c, s, n = 0, v;
	uint32_t max_wnd = 0;

	(void)state;
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVBUF), (int)sp.a.cfg.tcp.rcvbuf);
	sp_set_int(c, US_SOL_SOCKET, US_SO_RCVBUF, 1);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVBUF), 2304); /* Linux's floor */
	sp_set_int(c, US_SOL_SOCKET, US_SO_RCVBUF, -1); /* huge: capped, as Linux */
	v = sp_get_int(c, US_SOL_SOCKET, US_SO_RCVBUF);
	assert_true(v > 0 && (uint32_t)v <= 2 * (sp.a.cfg.tcp.rcvbuf_max > sp.a.cfg.tcp.sndbuf ?
						 sp.a.cfg.tcp.rcvbuf_max : sp.a.cfg.tcp.sndbuf));
	sp_set_int(c, US_SOL_SOCKET, US_SO_SNDBUF, 10000);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_SNDBUF), 20000);
	us_close(c);

	l = sp_listen_b(PORT, NULL);
	sp_log_clear(&sp.a);
	sp_pair(l, PORT, rcvbuf_8k, &c, &s);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVBUF), 16384);
	assert_int_equal(sp.a.log[0].wnd, 8192); /* the SYN's (unscaled) window */
	/* B sends more than the window; A does not read: at most 8192 come. */
	sp_on(&sp.b);
	assert_int_equal(us_send(s, big, 100000, 0), 100000);
	sp_on(&sp.a);
	sp_run(100);
	assert_int_equal(us_ioctl(c, US_FIONREAD, &n), 0);
	assert_true(n > 0 && n <= 8192);
	for (unsigned i = 0; i < sp.a.nlog; i++)
		if (!(sp.a.log[i].flags & TH_SYN) && sp.a.log[i].wnd > max_wnd)
			max_wnd = sp.a.log[i].wnd;
	assert_true(max_wnd > 0);
	/* Reading it all does not grow the buffer (no autotuning). */
	size_t got = 0;
	for (int i = 0; i < 400 && got < 100000; i++) {
		ssize_t r;
		while ((r = us_recv(c, big, sizeof(big), 0)) > 0)
			got += (size_t)r;
		sp_run(1);
	}
	assert_int_equal(got, 100000);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVBUF), 16384);
	/* SO_SNDBUF on a connection: what one send queues. */
	sp_set_int(c, US_SOL_SOCKET, US_SO_SNDBUF, 10000);
	assert_int_equal(us_send(c, big, 50000, 0), 10000);
	sp_close3(c, s, l);
}

/* SO_RCVLOWAT: EPOLLIN once that many bytes are queued. */
static void test_rcvlowat(void **state)
{
	int l, c, s;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVLOWAT), 1);
	sp_set_int(c, US_SOL_SOCKET, US_SO_RCVLOWAT, 0);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVLOWAT), 1);
	sp_set_int(c, US_SOL_SOCKET, US_SO_RCVLOWAT, 100);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_RCVLOWAT), 100);
	sp_on(&sp.b);
	assert_int_equal(us_send(s, big, 60, 0), 60);
	sp_on(&sp.a);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN, 20), 0);
	sp_on(&sp.b);
	assert_int_equal(us_send(s, big, 50, 0), 50);
	sp_on(&sp.a);
	/* (Nagle holds B's second small segment until the first is ACKed.) */
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLIN, 100), US_EPOLLIN);
	sp_close3(c, s, l);
}

/* The get-only options, SO_KEEPALIVE, SO_REUSEADDR, SO_ERROR. */
static void test_socket_level(void **state)
{
	int t = us_socket(AF_INET6, SOCK_STREAM, 0), u = us_socket(AF_INET, SOCK_DGRAM, 0);
	int l, v = 1, c;

	(void)state;
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_TYPE), SOCK_STREAM);
	assert_int_equal(sp_get_int(u, US_SOL_SOCKET, US_SO_TYPE), SOCK_DGRAM);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_DOMAIN), AF_INET6);
	assert_int_equal(sp_get_int(u, US_SOL_SOCKET, US_SO_DOMAIN), AF_INET);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_PROTOCOL), IPPROTO_TCP);
	assert_int_equal(sp_get_int(u, US_SOL_SOCKET, US_SO_PROTOCOL), IPPROTO_UDP);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_ACCEPTCONN), 0);
	assert_fails(us_setsockopt(t, US_SOL_SOCKET, US_SO_TYPE, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_setsockopt(t, US_SOL_SOCKET, US_SO_ACCEPTCONN, &v, sizeof(v)),
		     ENOPROTOOPT);
	assert_fails(us_setsockopt(t, US_SOL_SOCKET, US_SO_ERROR, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_setsockopt(t, US_SOL_SOCKET, US_SO_REUSEADDR, NULL, sizeof(v)), EFAULT);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_KEEPALIVE), 0);
	sp_set_int(t, US_SOL_SOCKET, US_SO_KEEPALIVE, 5);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_KEEPALIVE), 1);
	sp_set_int(t, US_SOL_SOCKET, US_SO_REUSEADDR, 1);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_REUSEADDR), 1);
	sp_set_int(t, US_SOL_SOCKET, US_SO_REUSEPORT, 1);
	assert_int_equal(sp_get_int(t, US_SOL_SOCKET, US_SO_REUSEPORT), 1);
	sp_set_int(u, US_SOL_SOCKET, US_SO_KEEPALIVE, 1);
	assert_int_equal(sp_get_int(u, US_SOL_SOCKET, US_SO_KEEPALIVE), 1);
	/* Options we do not have: Linux's answer for an unknown one. */
	assert_fails(us_setsockopt(t, US_SOL_SOCKET, 20 /* SO_RCVTIMEO */, &v, sizeof(v)),
		     ENOPROTOOPT);
	assert_fails(us_setsockopt(u, US_IPPROTO_IP, US_IP_TOS, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_setsockopt(u, IPPROTO_UDP, 1 /* UDP_CORK */, &v, sizeof(v)), ENOPROTOOPT);
	us_close(t);
	us_close(u);
	l = sp_listen_b(PORT, NULL);
	sp_on(&sp.b);
	assert_int_equal(sp_get_int(l, US_SOL_SOCKET, US_SO_ACCEPTCONN), 1);
	us_close(l);
	sp_on(&sp.a);
	/* SO_ERROR: a refused connect's error, once. */
	c = sp_connect_a(PORT, NULL);
	assert_true(sp_wait_events(&sp.a, c, US_EPOLLERR, 100) & US_EPOLLERR);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_ERROR), ECONNREFUSED);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_ERROR), 0);
	us_close(c);
}

static void tos_ttl(int fd)
{
	sp_set_int(fd, US_IPPROTO_IP, US_IP_TOS, 0x28 | 0x3); /* ECN bits stay TCP's */
	sp_set_int(fd, US_IPPROTO_IP, US_IP_TTL, 17);
}

/* IP_TOS and IP_TTL: every segment of the connection carries them, the
 * SYN and (set on the listener) the SYN-ACK included. */
static void test_tos_ttl(void **state)
{
	int l, c, s, v = 0;
	unsigned char b = 0;
	socklen_t len = 1;

	(void)state;
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sp_get_int(c, US_IPPROTO_IP, US_IP_TTL), 64);
	assert_fails(us_setsockopt(c, US_IPPROTO_IP, US_IP_TTL, &v, sizeof(v)), EINVAL);
	v = 256;
	assert_fails(us_setsockopt(c, US_IPPROTO_IP, US_IP_TTL, &v, sizeof(v)), EINVAL);
	assert_fails(us_setsockopt(c, US_IPPROTO_IP, 999, &v, sizeof(v)), ENOPROTOOPT);
	sp_set_int(c, US_IPPROTO_IP, US_IP_TTL, 5);
	sp_set_int(c, US_IPPROTO_IP, US_IP_TTL, -1);
	assert_int_equal(sp_get_int(c, US_IPPROTO_IP, US_IP_TTL), 64);
	b = 0x10; /* a one-byte value, as Linux takes it */
	assert_int_equal(us_setsockopt(c, US_IPPROTO_IP, US_IP_TOS, &b, 1), 0);
	b = 0;
	assert_int_equal(us_getsockopt(c, US_IPPROTO_IP, US_IP_TOS, &b, &len), 0);
	assert_int_equal(len, 1);
	assert_int_equal(b, 0x10);
	us_close(c);

	l = sp_listen_b(PORT, tos_ttl);
	sp_log_clear(&sp.a);
	sp_log_clear(&sp.b);
	sp_pair(l, PORT, tos_ttl, &c, &s);
	assert_int_equal(sp_get_int(c, US_IPPROTO_IP, US_IP_TOS), 0x28);
	assert_int_equal(us_send(c, "x", 1, 0), 1);
	sp_run(50);
	assert_true(sp.a.nlog >= 3 && sp.b.nlog >= 2);
	for (unsigned i = 0; i < sp.a.nlog; i++) {
		assert_int_equal(sp.a.log[i].tos, 0x28);
		assert_int_equal(sp.a.log[i].ttl, 17);
	}
	for (unsigned i = 0; i < sp.b.nlog; i++) {
		assert_int_equal(sp.b.log[i].tos, 0x28);
		assert_int_equal(sp.b.log[i].ttl, 17);
	}
	sp_close3(c, s, l);
}

/* MSG_PEEK, MSG_WAITALL, MSG_DONTWAIT, MSG_TRUNC on TCP; MSG_NOSIGNAL. */
static void test_recv_flags(void **state)
{
	int l, c, s;
	char buf[64];

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	sp_on(&sp.b);
	assert_int_equal(us_send(s, "0123456789", 10, US_MSG_DONTWAIT | US_MSG_NOSIGNAL), 10);
	sp_on(&sp.a);
	sp_run(5);
	assert_int_equal(us_recv(c, buf, 4, US_MSG_PEEK), 4);
	assert_memory_equal(buf, "0123", 4);
	/* MSG_TRUNC: taken off the stream, not copied. */
	assert_int_equal(us_recv(c, NULL, 3, US_MSG_TRUNC), 3);
	/* MSG_WAITALL on a socket that never blocks: what is there. */
	assert_int_equal(us_recv(c, buf, sizeof(buf), US_MSG_WAITALL | US_MSG_DONTWAIT), 7);
	assert_memory_equal(buf, "3456789", 7);
	assert_fails(us_recv(c, buf, sizeof(buf), US_MSG_WAITALL), EAGAIN);
	/* MSG_OOB with no urgent data: EINVAL (Linux's tcp_recv_urg). */
	assert_fails(us_recv(c, buf, sizeof(buf), US_MSG_OOB), EINVAL);
	/* After a reset: EPIPE, never a signal. */
	sp_on(&sp.b);
	struct linger lg = { 1, 0 };
	assert_int_equal(us_setsockopt(s, US_SOL_SOCKET, US_SO_LINGER, &lg, sizeof(lg)), 0);
	us_close(s);
	us_close(l);
	sp_on(&sp.a);
	sp_run(5);
	assert_fails(us_send(c, "x", 1, US_MSG_NOSIGNAL), ECONNRESET);
	assert_fails(us_send(c, "x", 1, US_MSG_NOSIGNAL), EPIPE);
	us_close(c);
}

/* MSG_TRUNC on UDP: the datagram's whole length. */
static void test_udp_trunc(void **state)
{
	struct sockaddr_in any = sp_addr(0, 7000), to = sp_addr(SP_B_IP, 7000);
	char buf[16];
	int a, b, n = -1;

	(void)state;
	sp_on(&sp.b);
	b = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(us_bind(b, SA(any), sizeof(any)), 0);
	sp_on(&sp.a);
	a = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(us_sendto(a, big, 100, 0, SA(to), sizeof(to)), 100);
	assert_int_equal(us_sendto(a, big, 30, 0, SA(to), sizeof(to)), 30);
	assert_fails(us_sendto(a, big, 30, US_MSG_MORE, SA(to), sizeof(to)), EOPNOTSUPP);
	sp_run(5);
	sp_on(&sp.b);
	assert_int_equal(us_ioctl(b, US_FIONREAD, &n), 0);
	assert_int_equal(n, 100); /* the next datagram's length, as Linux */
	assert_fails(us_ioctl(b, US_SIOCOUTQNSD, &n), ENOTTY);
	assert_int_equal(us_recv(b, buf, sizeof(buf), US_MSG_TRUNC | US_MSG_PEEK), 100);
	assert_int_equal(us_recv(b, buf, sizeof(buf), US_MSG_TRUNC), 100);
	assert_int_equal(us_recv(b, buf, sizeof(buf), 0), 16);
	us_close(b);
	sp_on(&sp.a);
	us_close(a);
}

/* FIONREAD/SIOCINQ, SIOCOUTQ, SIOCOUTQNSD on TCP. */
static void test_ioctl(void **state)
{
	int l, c, s, n = -1, nsd = -1, inq = -1;

	(void)state;
	l = sp_listen_b(PORT, rcvbuf_8k);
	sp_on(&sp.b);
	assert_fails(us_ioctl(l, US_FIONREAD, &n), EINVAL);
	assert_fails(us_ioctl(l, 0x1234, &n), ENOTTY);
	sp_on(&sp.a);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_fails(us_ioctl(c, US_FIONREAD, NULL), EFAULT);
	assert_int_equal(us_ioctl(c, US_SIOCOUTQ, &n), 0);
	assert_int_equal(n, 0);
	/* B's window (8192) holds most of it back: queued, unsent. */
	assert_int_equal(us_send(c, big, 20000, 0), 20000);
	assert_int_equal(us_ioctl(c, US_SIOCOUTQ, &n), 0);
	assert_int_equal(n, 20000);
	sp_run(100);
	assert_int_equal(us_ioctl(c, US_SIOCOUTQNSD, &nsd), 0);
	assert_true(nsd >= 20000 - 8192 && nsd < 20000);
	assert_int_equal(us_ioctl(c, US_SIOCOUTQ, &n), 0);
	/* What B acknowledged waits in its receive queue (it does not read). */
	sp_on(&sp.b);
	assert_int_equal(us_ioctl(s, US_SIOCINQ, &inq), 0);
	assert_true(inq > 0 && inq <= 8192);
	assert_int_equal(n + inq, 20000);
	assert_int_equal(nsd, n); /* everything sent is acknowledged by now */
	sp_on(&sp.a);
	sp_close3(c, s, l);
}

static int b_reuseport_listener(bool on)
{
	struct sockaddr_in any = sp_addr(0, PORT);
	int fd, v = on;

	sp_on(&sp.b);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(fd, US_SOL_SOCKET, US_SO_REUSEPORT, &v, sizeof(v)), 0);
	if (us_bind(fd, SA(any), sizeof(any)) < 0) {
		us_close(fd);
		sp_on(&sp.a);
		return -1;
	}
	assert_int_equal(us_listen(fd, 64), 0);
	sp_on(&sp.a);
	return fd;
}

/* Connections accepted on B's listener l now. */
static int b_accept_all(int l, int *fds, int max)
{
	int n = 0, fd;

	sp_on(&sp.b);
	while (n < max && (fd = us_accept(l, NULL, NULL)) > 0)
		fds[n++] = fd;
	sp_on(&sp.a);
	return n;
}

/* SO_REUSEPORT: two listeners on one port share its connections; either
 * may close and the other goes on; a socket without it cannot bind. */
static void test_reuseport(void **state)
{
	int r1, r2, c[20], acc[20], n1, n2;

	(void)state;
	r1 = b_reuseport_listener(true);
	r2 = b_reuseport_listener(true);
	assert_true(r1 > 0 && r2 > 0);
	assert_int_equal(b_reuseport_listener(false), -1); /* EADDRINUSE */
	for (int i = 0; i < 16; i++)
		c[i] = sp_connect_a(PORT, NULL);
	sp_run(20);
	n1 = b_accept_all(r1, acc, 20);
	n2 = b_accept_all(r2, acc + n1, 20 - n1);
	assert_int_equal(n1 + n2, 16);
	assert_true(n1 > 0 && n2 > 0);
	/* The owner of tcp/'s listener closes: r2 takes every connection. */
	sp_on(&sp.b);
	us_close(r1);
	sp_on(&sp.a);
	for (int i = 16; i < 20; i++)
		c[i] = sp_connect_a(PORT, NULL);
	sp_run(20);
	assert_int_equal(b_accept_all(r2, acc + 16, 4), 4);
	for (int i = 0; i < 20; i++)
		assert_int_equal(sp_wait_events(&sp.a, c[i], US_EPOLLOUT, 0), US_EPOLLOUT);
	sp_on(&sp.b);
	us_close(r2);
	for (int i = 0; i < 20; i++)
		us_close(acc[i]);
	sp_on(&sp.a);
	for (int i = 0; i < 20; i++)
		us_close(c[i]);
	/* Nobody listens: refused. */
	c[0] = sp_connect_a(PORT, NULL);
	assert_true(sp_wait_events(&sp.a, c[0], US_EPOLLERR, 100) & US_EPOLLERR);
	us_close(c[0]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_linger),
		sp_unit_test(test_buffers),
		sp_unit_test(test_rcvlowat),
		sp_unit_test(test_socket_level),
		sp_unit_test(test_tos_ttl),
		sp_unit_test(test_recv_flags),
		sp_unit_test(test_udp_trunc),
		sp_unit_test(test_ioctl),
		sp_unit_test(test_reuseport),
	};

	h_eal_init("pkt_sockopt_so");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
