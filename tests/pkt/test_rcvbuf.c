/* Packet scripts: receive-buffer autotuning (tcp/user.c tcp_rcvbuf_measure,
 * [tcp] rcvbuf_max).  The peer fills our advertised window once per RTT
 * (10 ms); the window we advertise grows while the application reads all of
 * it, stays when the application reads slowly, stops at rcvbuf_max, and
 * with rcvbuf_max == rcvbuf is what it always was.  Our window scale on the
 * SYN-ACK and the SYN is chosen for rcvbuf_max. */
#include "tests/pkt/harness.h"

#define RB_RTT_MS 10u
#define RB_START 16384u
#define RB_MAX 131072u /* a shift of 2 */

static struct pkt_t *start_rb(uint32_t rcvbuf, uint32_t rcvbuf_max)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.sack = cfg.timestamps = false; /* window scale only */
	cfg.rcvbuf = rcvbuf;
	cfg.rcvbuf_max = rcvbuf_max;
	return pkt_start(&cfg);
}

/* Passive open with window scale, an RTT of RB_RTT_MS; our shift. */
static uint8_t establish_ws(struct pkt_t *t, uint8_t want_ws)
{
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = 0));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ws = want_ws,
		      .win = (int64_t)RTE_MIN(t->cfg.rcvbuf, 65535u)));
	ADVANCE(t, RB_RTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_non_null(t->conn);
	assert_true(t->conn->rtt_valid);
	return t->conn->rcv_wscale;
}

/* The window field of a segment we sent, unscaled. */
static uint32_t win_of(struct rte_mbuf *m, uint8_t shift)
{
	uint8_t buf[20];
	const uint8_t *p = rte_pktmbuf_read(m, 0, 20, buf);
	uint32_t w = ((uint32_t)p[14] << 8 | p[15]) << shift;

	rte_pktmbuf_free(m);
	return w;
}

/* One RTT: the peer sends what our window allows (full segments), the
 * application reads up to `read` bytes of it, then the RTT passes.  *wnd
 * becomes the window of our last segment (ACK or window update), if any. */
static void round_trip(struct pkt_t *t, uint8_t shift, uint32_t *wnd, size_t read)
{
	uint8_t *buf = malloc(read + 1);

	assert_non_null(buf);
	for (uint32_t n = *wnd / 1460; n > 0; n--)
		INJECT(t, SEG(.len = 1460));
	for (size_t got = 0; got < read;) {
		ssize_t k = tcp_recv(t->conn, buf, read - got);

		if (k <= 0)
			break;
		got += (size_t)k;
	}
	free(buf);
	while (t->ncap > 0)
		*wnd = win_of(EXPECT_KEEP(t, SEG()), shift);
	ADVANCE(t, RB_RTT_MS);
	while (t->ncap > 0) /* the delayed ACK of an odd segment */
		*wnd = win_of(EXPECT_KEEP(t, SEG()), shift);
}

/* The application reads everything: the window grows round after round,
 * never past rcvbuf_max, and stays there. */
static void test_window_grows_while_app_reads_fast(void **state)
{
	(void)state;
	struct pkt_t *t = start_rb(RB_START, RB_MAX);
	uint8_t shift = establish_ws(t, 2);
	uint32_t wnd = RB_START, prev = wnd, grew = 0;

	for (unsigned r = 0; r < 12; r++) {
		round_trip(t, shift, &wnd, RB_MAX);
		assert_true(wnd >= prev);
		assert_true(wnd <= RB_MAX);
		grew += wnd > prev;
		prev = wnd;
	}
	assert_true(grew >= 2); /* more than one step: it follows what was read */
	assert_int_equal(t->conn->rcvbuf, RB_MAX);
	assert_true(wnd > RB_MAX - 1460);
	assert_int_equal(STAT(t, rcvbuf_grown), grew);
	assert_int_equal(STAT(t, drop_rcvbuf_full), 0);
	FINISH(t, 1);
}

/* The application reads one segment per RTT: what it drains per RTT is far
 * below the buffer, so the buffer and the window do not grow. */
static void test_window_stays_while_app_reads_slowly(void **state)
{
	(void)state;
	struct pkt_t *t = start_rb(RB_START, RB_MAX);
	uint8_t shift = establish_ws(t, 2);
	uint32_t wnd = RB_START;

	for (unsigned r = 0; r < 12; r++) {
		round_trip(t, shift, &wnd, 1460);
		assert_true(wnd <= RB_START);
	}
	assert_int_equal(t->conn->rcvbuf, RB_START);
	assert_int_equal(STAT(t, rcvbuf_grown), 0);
	FINISH(t, 1);
}

/* The application reads nothing: the window closes, the buffer stays. */
static void test_window_stays_while_app_does_not_read(void **state)
{
	(void)state;
	struct pkt_t *t = start_rb(RB_START, RB_MAX);
	uint8_t shift = establish_ws(t, 2);
	uint32_t wnd = RB_START;

	for (unsigned r = 0; r < 3; r++)
		round_trip(t, shift, &wnd, 0);
	assert_int_equal(wnd, 0);
	assert_int_equal(t->conn->rcvq.bytes, RB_START);
	assert_int_equal(t->conn->rcvbuf, RB_START);
	assert_int_equal(STAT(t, rcvbuf_grown), 0);
	FINISH(t, 1);
}

/* rcvbuf_max == rcvbuf: autotuning off.  The shift is the one rcvbuf needs
 * and every window is rcvbuf less what is queued, as without autotuning. */
static void test_no_autotuning_when_max_is_rcvbuf(void **state)
{
	(void)state;
	struct pkt_t *t = start_rb(RB_START, RB_START);
	uint8_t shift = establish_ws(t, 0);
	uint32_t wnd = RB_START;

	for (unsigned r = 0; r < 8; r++) {
		round_trip(t, shift, &wnd, RB_MAX);
		assert_int_equal(wnd, RB_START);
	}
	assert_int_equal(t->conn->rcvbuf, RB_START);
	assert_int_equal(STAT(t, rcvbuf_grown), 0);
	FINISH(t, 1);
}

/* RFC 7323 2.3: the shift offered on the SYN-ACK and on our SYN is the
 * smallest that lets rcvbuf_max be advertised. */
static void test_wscale_follows_rcvbuf_max(void **state)
{
	static const struct { uint32_t max; uint8_t ws; } cases[] = {
		{ 65535, 0 }, { 65536, 1 }, { RB_MAX, 2 }, { 4u << 20, 7 }, { 64u << 20, 11 },
	};

	(void)state;
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pkt_t *t = start_rb(4096, cases[i].max);

		assert_int_equal(establish_ws(t, cases[i].ws), cases[i].ws);
		FINISH(t, 1);
	}
}

static void test_syn_wscale_follows_rcvbuf_max(void **state)
{
	(void)state;
	struct pkt_t *t = start_rb(4096, 4u << 20);
	struct tcp_conn *c = NULL;

	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .ws = 7, .win = 4096));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_window_grows_while_app_reads_fast),
		PKT_TEST(test_window_stays_while_app_reads_slowly),
		PKT_TEST(test_window_stays_while_app_does_not_read),
		PKT_TEST(test_no_autotuning_when_max_is_rcvbuf),
		PKT_TEST(test_wscale_follows_rcvbuf_max),
		PKT_TEST(test_syn_wscale_follows_rcvbuf_max),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
