/* US_TCP_INFO as Linux's struct tcp_info: each filled field against what
 * the connection did between two engines in virtual time (sock_pair.c):
 * states and TCP_CA_* states as Linux numbers them, options, MSSes,
 * windows, cwnd in segments, byte and segment counts, ages, the
 * chronographs, retransmissions, out-of-order segments, a listener. */
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

static char big[256 * 1024];

static struct us_tcp_info info(struct sp_side *side, int fd)
{
	struct us_tcp_info ti;
	socklen_t len = sizeof(ti);

	sp_on(side);
	memset(&ti, 0xa5, sizeof(ti));
	assert_int_equal(us_getsockopt(fd, US_IPPROTO_TCP, US_TCP_INFO, &ti, &len), 0);
	assert_int_equal(len, sizeof(ti));
	sp_on(&sp.a);
	return ti;
}

static int b_listen(int rcvbuf)
{
	struct sockaddr_in any = sp_addr(0, PORT);
	int fd;

	sp_on(&sp.b);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_bind(fd, SA(any), sizeof(any)), 0);
	if (rcvbuf > 0)
		assert_int_equal(us_setsockopt(fd, US_SOL_SOCKET, US_SO_RCVBUF, &rcvbuf,
					       sizeof(rcvbuf)), 0);
	assert_int_equal(us_listen(fd, 8), 0);
	sp_on(&sp.a);
	return fd;
}

static void pair(int l, int *c, int *s)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);

	sp_on(&sp.a);
	*c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_connect(*c, SA(to), sizeof(to)), EINPROGRESS);
	assert_int_equal(sp_wait_events(&sp.a, *c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(sp_wait_events(&sp.b, l, US_EPOLLIN, 100), US_EPOLLIN);
	sp_on(&sp.b);
	*s = us_accept(l, NULL, NULL);
	assert_true(*s > 0);
	sp_on(&sp.a);
}

static size_t b_drain(int s)
{
	ssize_t n;
	size_t got = 0;

	sp_on(&sp.b);
	while ((n = us_recv(s, big, sizeof(big), 0)) > 0)
		got += (size_t)n;
	sp_on(&sp.a);
	return got;
}

/* A fresh socket, a listener with a connection waiting, a connection. */
static void test_states_and_basics(void **state)
{
	struct us_tcp_info ti;
	int f, l, c, s;

	(void)state;
	f = us_socket(AF_INET, SOCK_STREAM, 0);
	ti = info(&sp.a, f);
	assert_int_equal(ti.tcpi_state, US_TCP_CLOSE);
	assert_int_equal(ti.tcpi_rtt, 0);
	us_close(f);
	l = b_listen(0);
	pair(l, &c, &s);
	sp_on(&sp.b);
	us_close(s);
	sp_on(&sp.a);
	us_close(c);
	/* One connection waits to be accepted. */
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS);
	sp_run(10);
	ti = info(&sp.b, l);
	assert_int_equal(ti.tcpi_state, US_TCP_LISTEN);
	assert_int_equal(ti.tcpi_unacked, 1); /* accept queue, as Linux */
	assert_int_equal(ti.tcpi_sacked, 8);  /* backlog */
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	sp_on(&sp.a);
	assert_int_equal(us_send(c, big, 5000, 0), 5000);
	sp_run(100);
	assert_int_equal(b_drain(s), 5000);
	sp_run(100);
	ti = info(&sp.a, c);
	assert_int_equal(ti.tcpi_state, US_TCP_ESTABLISHED);
	assert_int_equal(ti.tcpi_ca_state, US_TCP_CA_OPEN);
	assert_int_equal(ti.tcpi_options, US_TCPI_OPT_TIMESTAMPS | US_TCPI_OPT_SACK |
					  US_TCPI_OPT_WSCALE);
	assert_true(ti.tcpi_snd_wscale > 0 && ti.tcpi_rcv_wscale > 0);
	assert_int_equal(ti.tcpi_snd_mss, 1448);
	assert_int_equal(ti.tcpi_advmss, 1448);
	assert_int_equal(ti.tcpi_pmtu, 1500);
	assert_int_equal(ti.tcpi_ato, 40000);
	assert_true(ti.tcpi_rto >= 200000);
	assert_int_equal(ti.tcpi_unacked, 0);
	assert_true(ti.tcpi_snd_cwnd >= 10); /* segments: IW 10, grown since */
	assert_int_equal(ti.tcpi_snd_ssthresh, 0x7fffffff);
	assert_int_equal(ti.tcpi_reordering, 3);
	assert_int_equal(ti.tcpi_bytes_sent, 5000);
	assert_int_equal(ti.tcpi_bytes_acked, 5000);
	assert_int_equal(ti.tcpi_bytes_retrans, 0);
	assert_int_equal(ti.tcpi_delivered, 4);
	assert_true(ti.tcpi_min_rtt > 0 && ti.tcpi_min_rtt <= ti.tcpi_rtt + 1000);
	/* Ages: the data left ~200 ms ago, the last ACK came ~100+ ms ago. */
	assert_true(ti.tcpi_last_data_sent >= 199 && ti.tcpi_last_data_sent <= 202);
	assert_true(ti.tcpi_last_ack_recv >= 100 && ti.tcpi_last_ack_recv <= 200);
	assert_int_equal(ti.tcpi_last_data_recv, 0); /* never */
	assert_int_equal(ti.tcpi_notsent_bytes, 0);
	/* Busy from the first send until the last ACK: a few ms. */
	assert_true(ti.tcpi_busy_time > 0 && ti.tcpi_busy_time < 100000);
	ti = info(&sp.b, s);
	assert_int_equal(ti.tcpi_bytes_received, 5000);
	assert_int_equal(ti.tcpi_rcv_mss, 1448);
	assert_true(ti.tcpi_last_data_recv >= 199 && ti.tcpi_last_data_recv <= 202);
	assert_true(ti.tcpi_rcv_wnd > 0 && ti.tcpi_snd_wnd > 0);
	us_close(c);
	sp_on(&sp.b);
	us_close(s);
	us_close(l);
	sp_on(&sp.a);
}

/* A peer whose window holds data back: notsent bytes and rwnd-limited
 * time; a full send buffer: sndbuf-limited time. */
static void test_limits(void **state)
{
	struct us_tcp_info ti;
	int l, c, s, v = 20000;
	ssize_t n;

	(void)state;
	l = b_listen(4096);
	pair(l, &c, &s);
	assert_int_equal(us_setsockopt(c, US_SOL_SOCKET, US_SO_SNDBUF, &v, sizeof(v)), 0);
	n = us_send(c, big, 100000, 0);
	assert_int_equal(n, 20000);
	assert_fails(us_send(c, big, 1, 0), EAGAIN);
	sp_run(200);
	ti = info(&sp.a, c);
	assert_true(ti.tcpi_notsent_bytes > 10000);
	assert_true(ti.tcpi_sndbuf_limited >= 150000);
	assert_true(ti.tcpi_busy_time >= ti.tcpi_sndbuf_limited + ti.tcpi_rwnd_limited);
	us_close(c);
	sp_on(&sp.b);
	us_close(s);
	sp_on(&sp.a);
	/* Room in the send buffer, B not reading: the window is the limit. */
	pair(l, &c, &s);
	assert_int_equal(us_send(c, big, 20000, 0), 20000);
	sp_run(100);
	ti = info(&sp.a, c);
	assert_true(ti.tcpi_rwnd_limited >= 90000);
	assert_int_equal(ti.tcpi_sndbuf_limited, 0);
	us_close(c);
	sp_on(&sp.b);
	us_close(s);
	us_close(l);
	sp_on(&sp.a);
}

/* Losses: retransmissions counted, Loss after an RTO, out-of-order
 * segments at the receiver. */
static void test_losses(void **state)
{
	struct us_tcp_info ti;
	int l, c, s;
	size_t got = 0;

	(void)state;
	l = b_listen(0);
	pair(l, &c, &s);
	sp.a.drop_every = 7;
	assert_int_equal(us_send(c, big, 200000, 0), 200000);
	for (int i = 0; i < 3000 && got < 200000; i++) {
		sp_run(1);
		got += b_drain(s);
	}
	sp.a.drop_every = 0;
	assert_int_equal(got, 200000);
	sp_run(500);
	ti = info(&sp.a, c);
	assert_true(ti.tcpi_total_retrans > 0);
	assert_true(ti.tcpi_bytes_retrans > 0);
	assert_true(ti.tcpi_bytes_sent >= 200000 + ti.tcpi_bytes_retrans);
	assert_int_equal(ti.tcpi_bytes_acked, 200000);
	ti = info(&sp.b, s);
	assert_true(ti.tcpi_rcv_ooopack > 0);
	/* B silent: RTOs, the Loss state, consecutive retransmits. */
	sp.b.wire_down = true;
	assert_int_equal(us_send(c, big, 1000, 0), 1000);
	sp_run(700);
	ti = info(&sp.a, c);
	assert_int_equal(ti.tcpi_ca_state, US_TCP_CA_LOSS);
	assert_true(ti.tcpi_retransmits >= 1);
	assert_true(ti.tcpi_backoff >= 1);
	assert_int_equal(ti.tcpi_unacked, 1);
	assert_true(ti.tcpi_total_rto >= 1);
	sp.b.wire_down = false;
	sp_run(3000);
	ti = info(&sp.a, c);
	assert_int_equal(ti.tcpi_ca_state, US_TCP_CA_OPEN);
	assert_int_equal(ti.tcpi_retransmits, 0);
	us_close(c);
	sp_on(&sp.b);
	us_close(s);
	us_close(l);
	sp_on(&sp.a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_states_and_basics),
		sp_unit_test(test_limits),
		sp_unit_test(test_losses),
	};

	h_eal_init("pkt_sockopt_info");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
