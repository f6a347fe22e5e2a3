/* US_TCP_QUICKACK through the socket API between two engines in virtual
 * time: with 0, a client of one request per connection (connect, send on
 * EPOLLOUT, read the response to its end, close) sends 3 segments (SYN,
 * ACK + request, FIN + ACK) instead of 5 (profile linux's quick ACK of
 * the response, which 0 turns off, rides on the FIN too); the held ACKs
 * leave with the application's next call (RFC 9293 3.8.6.3, 3.10.7.3;
 * tcp/tcb_timers.c tcp_ack_hold). */
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
#define REQ "GET / HTTP/1.1\r\nHost: b\r\n\r\n"
#define RESP "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

/* One request per connection; quickack: the value set before connect
 * (-1: left alone).  Returns the client's segments sent. */
static uint64_t one_request(int quickack)
{
	struct sockaddr_in any = sp_addr(0, PORT), to = sp_addr(SP_B_IP, PORT);
	char buf[128];
	int l, c, s, v = -1;
	socklen_t vlen = sizeof(v);
	ssize_t n;

	sp_on(&sp.b);
	l = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_bind(l, SA(any), sizeof(any)), 0);
	assert_int_equal(us_listen(l, 8), 0);
	sp_on(&sp.a);
	c = us_socket(AF_INET, SOCK_STREAM | US_SOCK_NONBLOCK, 0);
	assert_true(c > 0);
	if (quickack >= 0)
		assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_QUICKACK, &quickack,
					       sizeof(quickack)), 0);
	assert_int_equal(us_getsockopt(c, US_IPPROTO_TCP, US_TCP_QUICKACK, &v, &vlen), 0);
	assert_int_equal(v, quickack != 0);
	errno = 0;
	assert_int_equal(us_connect(c, SA(to), sizeof(to)), -1);
	assert_int_equal(errno, EINPROGRESS);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (ssize_t)strlen(REQ));
	/* The server: accept, read, answer, close. */
	assert_int_equal(sp_wait_events(&sp.b, l, US_EPOLLIN, 100), US_EPOLLIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	sp_on(&sp.a);
	assert_int_equal(sp_wait_events(&sp.b, s, US_EPOLLIN, 100), US_EPOLLIN);
	sp_on(&sp.b);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), (ssize_t)strlen(REQ));
	assert_int_equal(us_send(s, RESP, strlen(RESP), 0), (ssize_t)strlen(RESP));
	assert_int_equal(us_close(s), 0);
	assert_int_equal(us_close(l), 0);
	sp_on(&sp.a);
	/* The client reads to the end of the stream, then closes. */
	size_t got = 0;
	for (int i = 0; i < 100; i++) {
		sp_wait_events(&sp.a, c, US_EPOLLIN | US_EPOLLRDHUP, 100);
		while ((n = us_recv(c, buf + got, sizeof(buf) - got, 0)) > 0)
			got += (size_t)n;
		if (n == 0)
			break;
	}
	assert_int_equal(n, 0);
	assert_int_equal(got, strlen(RESP));
	assert_memory_equal(buf, RESP, strlen(RESP));
	assert_int_equal(us_close(c), 0);
	sp_run(100); /* the server's last ACK, TIME-WAIT on B */
	return tcp_stack_stats(sp.a.tab->ts)->tx_segs;
}

static void profile_rfc(struct us_config *cfg)
{
	cfg->tcp.profile = TCP_PROFILE_RFC;
}

/* Profile rfc: SYN, ACK, request, the delayed ACK of the response (with
 * the client's FIN), the ACK of the server's FIN. */
static void test_quickack_default_five_segments(void **state)
{
	(void)state;
	sp_teardown();
	sp_setup(profile_rfc);
	assert_int_equal(one_request(-1), 5);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->acks_held, 0);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->acks_quick, 0);
}

/* Profile linux (the default): the response is the connection's first
 * data, ACKed quickly (quick-ACK mode) but after the application's turn:
 * the client's close reads the response and its FIN carries the ACK,
 * still 5 (a Linux client sends the ACK alone first, 6). */
static void test_quickack_default_linux_five_segments(void **state)
{
	(void)state;
	assert_int_equal(one_request(-1), 5);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->acks_held, 0);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->acks_quick, 1);
}

static void test_quickack_off_three_segments(void **state)
{
	(void)state;
	assert_int_equal(one_request(0), 3);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->acks_held, 2);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->delayed_acks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_quickack_default_five_segments),
		sp_unit_test(test_quickack_default_linux_five_segments),
		sp_unit_test(test_quickack_off_three_segments),
	};

	h_eal_init("pkt_socket_quickack");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
