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

static void rcvbuf_4k(int fd)
{
	sp_set_int(fd, US_SOL_SOCKET, US_SO_RCVBUF, 4096);
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
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
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
	/* Four full segments: B acknowledges every second one at once, so
	 * no ACK waits for B's delayed-ACK timer and no Tail Loss Probe
	 * (2 SRTT + 2 ticks here) goes before it: a transfer with nothing
	 * retransmitted. */
	assert_int_equal(us_send(c, big, 4 * 1448, 0), 4 * 1448);
	sp_run(100);
	assert_int_equal(sp_drain_b(s), 4 * 1448);
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
	assert_int_equal(ti.tcpi_bytes_sent, 4 * 1448);
	assert_int_equal(ti.tcpi_bytes_acked, 4 * 1448);
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
	assert_int_equal(ti.tcpi_bytes_received, 4 * 1448);
	assert_int_equal(ti.tcpi_rcv_mss, 1448);
	assert_true(ti.tcpi_last_data_recv >= 199 && ti.tcpi_last_data_recv <= 202);
	assert_true(ti.tcpi_rcv_wnd > 0 && ti.tcpi_snd_wnd > 0);
	sp_close3(c, s, l);
}

/* A peer whose window holds data back: notsent bytes and rwnd-limited
 * time; a full send buffer: sndbuf-limited time. */
static void test_limits(void **state)
{
	struct us_tcp_info ti;
	int l, c, s, v = 20000;
	ssize_t n;

	(void)state;
	l = sp_listen_b(PORT, rcvbuf_4k);
	sp_pair(l, PORT, NULL, &c, &s);
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
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(us_send(c, big, 20000, 0), 20000);
	sp_run(100);
	ti = info(&sp.a, c);
	assert_true(ti.tcpi_rwnd_limited >= 90000);
	assert_int_equal(ti.tcpi_sndbuf_limited, 0);
	sp_close3(c, s, l);
}

/* Losses: retransmissions counted, Loss after an RTO, out-of-order
 * segments at the receiver. */
static void test_losses(void **state)
{
	struct us_tcp_info ti;
	int l, c, s;
	size_t got = 0;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	sp.a.drop_every = 7;
	assert_int_equal(us_send(c, big, 200000, 0), 200000);
	for (int i = 0; i < 3000 && got < 200000; i++) {
		sp_run(1);
		got += sp_drain_b(s);
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
	sp_close3(c, s, l);
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
