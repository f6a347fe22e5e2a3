/* TCP Fast Open (RFC 7413) through the POSIX-shaped socket API between two
 * engines in virtual time: US_TCP_FASTOPEN on the listener, us_sendto with
 * US_MSG_FASTOPEN and US_TCP_FASTOPEN_CONNECT on the client, the
 * US_TCPI_OPT_SYN_DATA flag, the fallbacks, and every error path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tcp/fastopen.h"
#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 80
#define REQ "GET / HTTP/1.1\r\nHost: b\r\n\r\n"
#define RESP "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

static const struct tfo_counters *ctr(struct sp_side *side)
{
	return tcp_stack_tfo_stats(side->tab->ts);
}

/* A listener on B; qlen < 0: Fast Open left off. */
static int b_listen(int qlen)
{
	struct sockaddr_in any = sp_addr(0, PORT);
	int fd, v = -1;
	socklen_t vlen = sizeof(v);

	sp_on(&sp.b);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd > 0);
	assert_int_equal(us_bind(fd, SA(any), sizeof(any)), 0);
	/* Set on the bound socket, applied by listen (as Linux allows). */
	if (qlen >= 0)
		assert_int_equal(us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_FASTOPEN, &qlen,
					       sizeof(qlen)), 0);
	assert_int_equal(us_listen(fd, 16), 0);
	assert_int_equal(us_getsockopt(fd, US_IPPROTO_TCP, US_TCP_FASTOPEN, &v, &vlen), 0);
	assert_int_equal(v, qlen < 0 ? 0 : qlen);
	sp_on(&sp.a);
	return fd;
}

static struct us_tcp_info info_of(struct sp_side *side, int fd)
{
	struct us_tcp_info ti;
	socklen_t len = sizeof(ti);

	sp_on(side);
	assert_int_equal(us_getsockopt(fd, US_IPPROTO_TCP, US_TCP_INFO, &ti, &len), 0);
	sp_on(&sp.a);
	return ti;
}

/* Reads exactly want from fd on side (running both engines as needed). */
static void expect_read(struct sp_side *side, int fd, const char *want)
{
	char buf[256];
	size_t n = strlen(want);

	assert_true(sp_wait_events(side, fd, US_EPOLLIN, 3000) & US_EPOLLIN);
	sp_on(side);
	assert_int_equal(us_recv(fd, buf, sizeof(buf), 0), (long)n);
	assert_memory_equal(buf, want, n);
	sp_on(&sp.a);
}

/* One ordinary request/response on a connected pair, then both closed. */
static void exchange_and_close(int c, int l)
{
	int s;

	assert_true(sp_wait_events(&sp.b, l, US_EPOLLIN, 100) & US_EPOLLIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	expect_read(&sp.b, s, REQ);
	sp_on(&sp.b);
	assert_int_equal(us_send(s, RESP, strlen(RESP), 0), (long)strlen(RESP));
	expect_read(&sp.a, c, RESP);
	assert_int_equal(us_close(c), 0);
	sp_on(&sp.b);
	assert_int_equal(us_close(s), 0);
	sp_on(&sp.a);
	sp_run(10);
}

/* The first connection to a server: a cookie request, nothing taken by
 * sendto (EINPROGRESS, as Linux), the request sent once connected. */
static void first_connection(int l)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	int c = us_socket(AF_INET, SOCK_STREAM, 0);
	uint64_t asked = ctr(&sp.a)->cli_cookie_requests;

	assert_true(c > 0);
	assert_fails(us_sendto(c, REQ, strlen(REQ), US_MSG_FASTOPEN, SA(to), sizeof(to)),
		     EINPROGRESS);
	assert_int_equal(ctr(&sp.a)->cli_cookie_requests, asked + 1);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(info_of(&sp.a, c).tcpi_options & US_TCPI_OPT_SYN_DATA, 0);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (long)strlen(REQ));
	exchange_and_close(c, l);
}

static void test_cookie_then_data_in_syn(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	struct sp_syn syn;
	int l, c, s;

	(void)state;
	l = b_listen(8);
	first_connection(l);
	assert_int_equal(ctr(&sp.b)->srv_cookies_sent, 1);
	assert_int_equal(ctr(&sp.a)->cli_cookies_stored, 1);

	/* Second connection: the request rides in the SYN with the cookie. */
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_sendto(c, REQ, strlen(REQ), US_MSG_FASTOPEN, SA(to), sizeof(to)),
			 (long)strlen(REQ));
	us_engine_poll(sp.a.e, sp.now); /* A's SYN out, B not run yet */
	syn = sp_syn_waiting(&sp.b);
	assert_true(syn.found);
	assert_int_equal(syn.family, AF_INET);
	assert_int_equal(syn.payload, (int)strlen(REQ));
	assert_int_equal(syn.cookie_len, 8);
	/* B sees only the SYN: the child is accepted at once with the data
	 * readable, before the handshake's ACK (RFC 7413 4.2.2). */
	us_engine_poll(sp.b.e, sp.now);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	assert_int_equal(info_of(&sp.b, s).tcpi_state, 3); /* SYN-RECEIVED */
	assert_int_equal(info_of(&sp.b, s).tcpi_options & US_TCPI_OPT_SYN_DATA,
			 US_TCPI_OPT_SYN_DATA);
	sp_on(&sp.b);
	char buf[128];
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), (long)strlen(REQ));
	assert_memory_equal(buf, REQ, strlen(REQ));
	/* RFC 7413 4.2.2: the server may answer before the handshake ends. */
	assert_int_equal(us_send(s, RESP, strlen(RESP), 0), (long)strlen(RESP));
	expect_read(&sp.a, c, RESP);
	assert_int_equal(info_of(&sp.a, c).tcpi_options & US_TCPI_OPT_SYN_DATA,
			 US_TCPI_OPT_SYN_DATA);
	assert_int_equal(ctr(&sp.a)->cli_syn_data_acked, 1);
	assert_int_equal(ctr(&sp.b)->srv_accepted, 1);
	assert_int_equal(us_close(c), 0);
	sp_on(&sp.b);
	assert_int_equal(us_close(s), 0);
	assert_int_equal(us_close(l), 0);
}

static void test_fastopen_connect(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	struct sp_syn syn;
	int l, c, on = 1, v = 0;
	socklen_t vlen = sizeof(v);

	(void)state;
	l = b_listen(8);
	/* No cookie yet: an ordinary non-blocking connect asking for one. */
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &on,
				       sizeof(on)), 0);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (long)strlen(REQ));
	exchange_and_close(c, l);
	assert_int_equal(ctr(&sp.a)->cli_cookies_stored, 1);

	/* With the cookie: connect returns 0, writable at once, the first
	 * send goes in the SYN. */
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &on,
				       sizeof(on)), 0);
	assert_int_equal(us_getsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &v, &vlen), 0);
	assert_int_equal(v, 1);
	assert_int_equal(us_connect(c, SA(to), sizeof(to)), 0);
	assert_int_equal(sp.b.n, 0); /* nothing sent yet */
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 0), US_EPOLLOUT);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EALREADY);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (long)strlen(REQ));
	us_engine_poll(sp.a.e, sp.now);
	syn = sp_syn_waiting(&sp.b);
	assert_true(syn.found);
	assert_int_equal(syn.family, AF_INET);
	assert_int_equal(syn.payload, (int)strlen(REQ));
	assert_int_equal(syn.cookie_len, 8);
	exchange_and_close(c, l);
	assert_int_equal(ctr(&sp.a)->cli_syn_data_acked, 1);
	sp_on(&sp.b);
	assert_int_equal(us_close(l), 0);
}

/* A deferred connect that is shut down before any send still opens (SYN
 * with the cookie, no data) and the server sees end of stream. */
static void test_fastopen_connect_shutdown(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	int l, c, s, on = 1;
	char buf[8];

	(void)state;
	l = b_listen(8);
	first_connection(l);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &on,
				       sizeof(on)), 0);
	assert_int_equal(us_connect(c, SA(to), sizeof(to)), 0);
	assert_int_equal(us_shutdown(c, US_SHUT_WR), 0);
	assert_true(sp_wait_events(&sp.b, l, US_EPOLLIN, 100) & US_EPOLLIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	assert_true(sp_wait_events(&sp.b, s, US_EPOLLIN | US_EPOLLRDHUP, 100) & US_EPOLLRDHUP);
	sp_on(&sp.b);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 0);
	assert_int_equal(us_close(s), 0);
	assert_int_equal(us_close(l), 0);
	sp_on(&sp.a);
	assert_int_equal(us_close(c), 0);
}

/* Server without Fast Open: every sendto(MSG_FASTOPEN) is a cookie request
 * that gets none; the data goes after the handshake. */
static void test_fallback_server_off(void **state)
{
	(void)state;
	int l = b_listen(-1);

	first_connection(l);
	first_connection(l);
	assert_int_equal(ctr(&sp.a)->cli_cookie_requests, 2);
	assert_int_equal(ctr(&sp.a)->cli_cookies_stored, 0);
	assert_int_equal(ctr(&sp.b)->srv_cookies_sent, 0);
	sp_on(&sp.b);
	assert_int_equal(us_close(l), 0);
}

/* The server turned Fast Open off after granting a cookie: the SYN's data
 * is refused (only the SYN acked), sent again after the handshake, and
 * the flag stays clear. */
static void test_fallback_server_turned_off(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	int l, c, zero = 0;

	(void)state;
	l = b_listen(8);
	first_connection(l);
	sp_on(&sp.b);
	assert_int_equal(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN, &zero,
				       sizeof(zero)), 0);
	sp_on(&sp.a);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_sendto(c, REQ, strlen(REQ), US_MSG_FASTOPEN, SA(to), sizeof(to)),
			 (long)strlen(REQ));
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(info_of(&sp.a, c).tcpi_options & US_TCPI_OPT_SYN_DATA, 0);
	exchange_and_close(c, l);
	assert_int_equal(ctr(&sp.b)->srv_refused_disabled, 1);
	assert_int_equal(ctr(&sp.a)->cli_syn_data_sent, 1);
	assert_int_equal(ctr(&sp.a)->cli_syn_data_resent, 1);
	assert_int_equal(ctr(&sp.a)->cli_syn_data_acked, 0);
	sp_on(&sp.b);
	assert_int_equal(us_close(l), 0);
}

/* UDP, a listener, fresh sockets: arguments and states refused. */
static void test_error_paths(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT), port0 = sp_addr(SP_B_IP, 0);
	struct sockaddr_in mine = sp_addr(0, 4000), v6 = to;
	int l, u, f, qlen = 4, bad = -1, two = 2;

	(void)state;
	l = b_listen(-1);
	/* UDP: the flag means nothing there (Linux ignores it; we refuse). */
	u = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_fails(us_sendto(u, "x", 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EOPNOTSUPP);
	assert_fails(us_send(u, "x", 1, US_MSG_FASTOPEN), EOPNOTSUPP);
	assert_fails(us_setsockopt(u, US_IPPROTO_TCP, US_TCP_FASTOPEN, &qlen, sizeof(qlen)),
		     ENOPROTOOPT);
	assert_int_equal(us_close(u), 0);
	/* A listener is "connected" for Linux's connect-in-sendmsg. */
	sp_on(&sp.b);
	assert_fails(us_sendto(l, "x", 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EISCONN);
	assert_fails(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN, &bad, sizeof(bad)),
		     EINVAL);
	assert_fails(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN, &qlen, 2), EINVAL);
	assert_fails(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &qlen,
				   sizeof(qlen)), EINVAL);
	sp_on(&sp.a);
	/* A fresh socket: the address and buffer are checked. */
	f = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_sendto(f, "x", 1, US_MSG_FASTOPEN, NULL, 0), EINVAL);
	assert_fails(us_send(f, "x", 1, US_MSG_FASTOPEN), EINVAL);
	assert_fails(us_sendto(f, "x", 1, US_MSG_FASTOPEN, SA(port0), sizeof(port0)),
		     EADDRNOTAVAIL);
	v6.sin_family = AF_INET6;
	assert_fails(us_sendto(f, "x", 1, US_MSG_FASTOPEN, SA(v6), sizeof(v6)), EAFNOSUPPORT);
	assert_fails(us_sendto(f, NULL, 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EFAULT);
	assert_fails(us_sendto(f, "x", 1, US_MSG_FASTOPEN | US_MSG_PEEK, SA(to), sizeof(to)),
		     EOPNOTSUPP);
	assert_fails(us_setsockopt(f, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &two,
				   sizeof(two)), EINVAL);
	assert_int_equal(us_close(f), 0);
	/* A client with a chosen source port (not supported, as us_connect). */
	f = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_bind(f, SA(mine), sizeof(mine)), 0);
	assert_fails(us_sendto(f, "x", 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EOPNOTSUPP);
	assert_int_equal(us_close(f), 0);
	sp_on(&sp.b);
	assert_int_equal(us_close(l), 0);
	/* Nothing Fast Open happened on the way. */
	assert_int_equal(ctr(&sp.a)->cli_cookie_requests, 0);
}

/* A connection under way, then connected: Linux's connect answers, and the
 * options that only a fresh socket takes. */
static void test_error_paths_connected(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	int l, c, s, qlen = 4;

	(void)state;
	l = b_listen(-1);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS);
	assert_fails(us_sendto(c, "x", 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EALREADY);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_fails(us_sendto(c, "x", 1, US_MSG_FASTOPEN, SA(to), sizeof(to)), EISCONN);
	assert_fails(us_send(c, "x", 1, US_MSG_FASTOPEN), EISCONN);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN, &qlen, sizeof(qlen)),
		     EINVAL);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &qlen,
				   sizeof(qlen)), EINVAL);
	assert_true(sp_wait_events(&sp.b, l, US_EPOLLIN, 100) & US_EPOLLIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	assert_int_equal(info_of(&sp.b, s).tcpi_options & US_TCPI_OPT_SYN_DATA, 0);
	sp_on(&sp.b);
	assert_int_equal(us_close(s), 0);
	assert_int_equal(us_close(l), 0);
	sp_on(&sp.a);
	assert_int_equal(us_close(c), 0);
	/* Nothing Fast Open happened on the way. */
	assert_int_equal(ctr(&sp.a)->cli_cookie_requests, 0);
}

static void profile_rfc(struct us_config *cfg)
{
	cfg->tcp.profile = TCP_PROFILE_RFC;
}

/* A sendto(MSG_FASTOPEN) larger than the SYN takes, with a cookie cached:
 * the bytes sendto returns and those the SYN carries.  The server reads
 * what came, all of it in order. */
static long big_sendto(int *syn_payload)
{
	static char big[4000];
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	char buf[sizeof(big)];
	size_t got = 0;
	struct sp_syn syn;
	long n;
	int l, c, s;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	l = b_listen(8);
	first_connection(l);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	n = us_sendto(c, big, sizeof(big), US_MSG_FASTOPEN, SA(to), sizeof(to));
	us_engine_poll(sp.a.e, sp.now); /* A's SYN out, B not run yet */
	syn = sp_syn_waiting(&sp.b);
	assert_true(syn.found);
	assert_int_equal(syn.cookie_len, 8);
	*syn_payload = syn.payload;
	assert_true(sp_wait_events(&sp.b, l, US_EPOLLIN, 100) & US_EPOLLIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	while (got < (size_t)n) {
		ssize_t r;

		assert_true(sp_wait_events(&sp.b, s, US_EPOLLIN, 100) & US_EPOLLIN);
		sp_on(&sp.b);
		r = us_recv(s, buf + got, sizeof(buf) - got, 0);
		assert_true(r > 0);
		got += (size_t)r;
	}
	assert_int_equal(got, n);
	assert_memory_equal(buf, big, got);
	assert_int_equal(us_close(s), 0);
	assert_int_equal(us_close(l), 0);
	sp_on(&sp.a);
	assert_int_equal(us_close(c), 0);
	return n;
}

/* Profile linux (the default): sendto returns only what its SYN carried,
 * as Linux's non-blocking sendto(MSG_FASTOPEN); the application sends the
 * rest once connected. */
static void test_linux_sendto_returns_syn_bytes(void **state)
{
	int syn_payload;
	long n;

	(void)state;
	n = big_sendto(&syn_payload);
	assert_true(syn_payload > 0);
	assert_int_equal(n, syn_payload);
	assert_true(n < 4000);
}

/* Profile rfc: sendto queues all of it; what the SYN cannot carry follows
 * the handshake. */
static void test_rfc_sendto_queues_all(void **state)
{
	int syn_payload;
	long n;

	(void)state;
	sp_teardown();
	sp_setup(profile_rfc);
	n = big_sendto(&syn_payload);
	assert_int_equal(n, 4000);
	assert_true(syn_payload > 0 && syn_payload < 4000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_cookie_then_data_in_syn),
		sp_unit_test(test_fastopen_connect),
		sp_unit_test(test_fastopen_connect_shutdown),
		sp_unit_test(test_fallback_server_off),
		sp_unit_test(test_fallback_server_turned_off),
		sp_unit_test(test_error_paths),
		sp_unit_test(test_error_paths_connected),
		sp_unit_test(test_linux_sendto_returns_syn_bytes),
		sp_unit_test(test_rfc_sendto_queues_all),
	};

	h_eal_init("pkt_socket_tfo");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
