/* Packet scripts: [tcp] profile (tcp_config.h, docs/linux-differences.md).
 * Each choice the RFCs leave open, as a trace in both profiles: linux makes
 * Linux's, rfc the one pkt_config_defaults pins for the other scripts.
 * Plain keys and fixes that do not depend on the profile run in both. */
#include "tests/pkt/harness.h"

#include <string.h>

#include "tcp/cc.h"
#include "tcp/fastopen.h"

/* Helpers */

static const enum tcp_profile both[] = { TCP_PROFILE_LINUX, TCP_PROFILE_RFC };

static struct pkt_t *start(enum tcp_profile p)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.profile = p;
	return pkt_start(&cfg);
}

/* The flags of an abort's RST (Linux's active reset acknowledges). */
static int abort_flags(enum tcp_profile p)
{
	return p == TCP_PROFILE_LINUX ? TH_RST | TH_ACK : TH_RST;
}

/* ESTABLISHED by a passive open without options (ESTABLISH). */
static struct pkt_t *start_established(enum tcp_profile p)
{
	struct pkt_t *t = start(p);

	ESTABLISH(t);
	return t;
}

/* ESTABLISHED with timestamps (ESTABLISH_TS: TS.Recent 101). */
static struct pkt_t *start_ts(enum tcp_profile p)
{
	struct pkt_t *t = start(p);

	ESTABLISH_TS(t);
	return t;
}

/* 100 bytes from the peer at seq, ACKed at once (quick: at the engine's
 * next iteration, after the application had its turn) or by the
 * delayed-ACK timer (40 ms). */
static void data_acked(struct pkt_t *t, uint32_t seq, bool quick)
{
	INJECT(t, SEG(.seq = seq, .len = 100));
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	if (!quick) {
		EXPECT_NOTHING(t);
		ADVANCE(t, 39);
	}
	EXPECT(t, SEG(.flags = TH_ACK, .ack = seq + 100, .len = 0));
}

/* Quick ACKs (Linux's quick-ACK mode) */

/* Linux: the first data of a connection starts rcv_wnd / (2 * rcv_mss)
 * quick ACKs, at most 16 (65535 / (2 * 536) here): 16 segments ACKed at
 * once, the 17th by the delayed-ACK timer. */
static void test_linux_quickacks_at_start(void **state)
{
	(void)state;
	struct pkt_t *t = start_established(TCP_PROFILE_LINUX);
	uint32_t seq = 1001;

	for (int i = 0; i < 16; i++, seq += 100)
		data_acked(t, seq, true);
	data_acked(t, seq, false);
	assert_int_equal(STAT(t, acks_quick), 16);
	FINISH(t, 1);
}

/* Linux: data after more than an RTO without any starts quick ACKs again
 * (the sender restarts from a small window, RFC 5681 4.1); a shorter
 * pause does not. */
static void test_linux_quickacks_after_idle(void **state)
{
	(void)state;
	struct pkt_t *t = start_established(TCP_PROFILE_LINUX);
	uint32_t seq = 1001, rto = t->conn->rto_ms;

	for (int i = 0; i < 16; i++, seq += 100)
		data_acked(t, seq, true);
	data_acked(t, seq, false);
	seq += 100;
	ADVANCE(t, rto - 40 - 1); /* rto since the last data */
	data_acked(t, seq, false);
	seq += 100;
	ADVANCE(t, rto - 40 + 1);
	data_acked(t, seq, true);
	seq += 100;
	data_acked(t, seq, true);
	assert_int_equal(STAT(t, acks_quick), 18);
	FINISH(t, 1);
}

/* Linux: a quick ACK waits for the application's turn in the same
 * iteration, so an answer written at once carries it (Linux itself sends
 * the ACK first, one segment more). */
static void test_linux_quickack_rides_on_answer(void **state)
{
	(void)state;
	struct pkt_t *t = start_established(TCP_PROFILE_LINUX);

	INJECT(t, SEG(.seq = 1001, .len = 100));
	assert_int_equal(pkt_app_send(t, 50), 50);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 1101, .len = 50));
	ADVANCE(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, acks_quick), 1);
	INJECT(t, SEG(.seq = 1101, .ack = 51));
	FINISH(t, 1);
}

/* rfc: every ACK of in-order data waits for the timer (or a second
 * full-sized segment), from the first segment on and after idle. */
static void test_rfc_no_quickacks(void **state)
{
	(void)state;
	struct pkt_t *t = start_established(TCP_PROFILE_RFC);

	data_acked(t, 1001, false);
	ADVANCE(t, 5000);
	data_acked(t, 1101, false);
	assert_int_equal(STAT(t, acks_quick), 0);
	FINISH(t, 1);
}

/* TCP_QUICKACK 0 (Linux's pingpong mode) keeps the first data's ACK
 * delayed in profile linux too. */
static void test_linux_quickack_off_delays(void **state)
{
	(void)state;
	struct pkt_t *t = start_established(TCP_PROFILE_LINUX);

	assert_int_equal(tcp_set_quickack(t->conn, false), 0);
	data_acked(t, 1001, false);
	assert_int_equal(STAT(t, acks_quick), 0);
	FINISH(t, 1);
}

/* PSH */

/* 40 MSS queued, the peer's window 65535: linux pushes where the data sent
 * since the last PSH passes half of it (the 23rd segment: 23 * 1460 >
 * 32767, Linux's forced_push), rfc only where the queue empties (none of
 * these).  Neither marks the end of a cwnd-limited burst. */
static void psh_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_established(p);
	bool linux = p == TCP_PROFILE_LINUX;
	/* The second burst is cwnd's: 20 MSS (linux) or 12 (rfc), below. */
	uint32_t end = linux ? 30 : 22, pushed = linux ? 22 : UINT32_MAX;

	assert_int_equal(pkt_app_send(t, 40 * 1460), 40 * 1460);
	for (uint32_t i = 0; i < end; i++) {
		if (i == 10) { /* the ACK of the initial window */
			EXPECT_NOTHING(t);
			INJECT(t, SEG(.seq = 1001, .ack = 1 + 10 * 1460));
		}
		EXPECT(t, SEG(.flags = i == pushed ? TH_ACK | TH_PSH : TH_ACK, .seq = 1 + i * 1460,
			      .len = 1460));
	}
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_abort(t->conn), 0);
	EXPECT(t, SEG(.flags = abort_flags(p)));
	FINISH(t, 0);
}

static void test_linux_psh_every_half_window(void **state)
{
	(void)state;
	psh_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_psh_at_queue_end(void **state)
{
	(void)state;
	psh_trace(TCP_PROFILE_RFC);
}

/* Slow start */

/* One ACK for the whole initial window (a stretch ACK, as after GRO):
 * linux grows cwnd by all 10 MSS acknowledged (Linux's tcp_slow_start),
 * rfc by L = 2 MSS (RFC 3465 2.2).  The next burst shows it. */
static void slow_start_trace(enum tcp_profile p, uint32_t burst)
{
	struct pkt_t *t = start_established(p);

	assert_int_equal(pkt_app_send(t, 40 * 1460), 40 * 1460);
	for (uint32_t i = 0; i < 10; i++)
		EXPECT(t, SEG(.seq = 1 + i * 1460, .len = 1460));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1 + 10 * 1460));
	for (uint32_t i = 10; i < 10 + burst; i++)
		EXPECT(t, SEG(.seq = 1 + i * 1460, .len = 1460));
	EXPECT_NOTHING(t);
	assert_int_equal(t->conn->cwnd, burst * 1460);
	assert_int_equal(tcp_abort(t->conn), 0);
	EXPECT(t, SEG(.flags = abort_flags(p)));
	FINISH(t, 0);
}

static void test_linux_slow_start_counts_every_smss(void **state)
{
	(void)state;
	slow_start_trace(TCP_PROFILE_LINUX, 20);
}

static void test_rfc_slow_start_abc_l2(void **state)
{
	(void)state;
	slow_start_trace(TCP_PROFILE_RFC, 12);
}

/* The unit view: crossing ssthresh, Linux's slow start stops at it and
 * gives the rest of the ACK to congestion avoidance (NewReno: one SMSS
 * per cwnd of bytes, so 5 SMSS past it does not add one yet). */
static void test_linux_slow_start_stops_at_ssthresh(void **state)
{
	(void)state;
	struct tcp_cc cc;

	tcp_cc_init(&cc, TCP_CC_NEWRENO, 1000, 10000, 12000, NULL);
	cc.ss_all_acked = true;
	tcp_cc_on_ack(&cc, 7000, 0, 0);
	assert_int_equal(cc.cwnd, 12000);
	assert_int_equal(cc.abc_bytes, 5000);
	tcp_cc_init(&cc, TCP_CC_NEWRENO, 1000, 10000, 12000, NULL);
	tcp_cc_on_ack(&cc, 7000, 0, 0);
	assert_int_equal(cc.cwnd, 12000); /* min(7000, 2 SMSS) */
	assert_int_equal(cc.abc_bytes, 0);
}

/* synack_retries (a plain key, both profiles) */

/* Default 5 SYN-ACK retransmissions, 1 + 2 + 4 + 8 + 16 s apart, and the
 * embryo goes 32 s after the last: 63 s, whatever syn_retries says. */
static void test_synack_retries_default_five(void **state)
{
	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		struct pkt_t *t = start(both[k]);
		uint32_t gap = 1000;

		assert_int_equal(t->cfg.synack_retries, 5);
		assert_int_equal(t->cfg.syn_retries, 7);
		assert_int_equal(pkt_listen(t), 0);
		INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
		EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
		for (int i = 0; i < 5; i++, gap *= 2) {
			ADVANCE(t, gap);
			EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
		}
		ADVANCE(t, gap - 1);
		assert_int_equal(tcp_conn_count(t->ts), 1);
		ADVANCE(t, 1);
		EXPECT_NOTHING(t);
		assert_int_equal(tcp_conn_count(t->ts), 0);
		assert_int_equal(STAT(t, embryos_timed_out), 1);
		FINISH(t, 0);
	}
}

/* A listener's TCP_SYNCNT (tcp_conn_opts.syn_retries) counts its
 * SYN-ACKs instead, as Linux's icsk_syn_retries. */
static void test_synack_retries_listener_syncnt_overrides(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_PROFILE_LINUX);
	struct tcp_conn_opts o = { .syn_retries = 1 };

	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_listener_set_opts(t->ts, PKT_LOCAL_IP, PKT_LOCAL_PORT, &o), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
	ADVANCE(t, 1000);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
	ADVANCE(t, 2000);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(STAT(t, embryos_timed_out), 1);
	FINISH(t, 0);
}

/* Fast Open, server side */

static struct pkt_t *start_tfo(enum tcp_profile p)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.profile = p;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_set_fastopen(t->ts, PKT_LOCAL_PORT, 4), 0);
	return t;
}

/* A SYN asking for a cookie (cookie_len 0) or carrying one with 10 bytes. */
static void tfo_syn(struct pkt_t *t, const uint8_t *cookie, uint8_t cookie_len)
{
	uint8_t o[40] = { 2, 4, 0x05, 0xb4, TFO_OPT_KIND, (uint8_t)(2 + cookie_len) };

	if (cookie_len > 0)
		memcpy(o + 6, cookie, cookie_len);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = o, .optlen = (uint8_t)(6 + cookie_len),
		      .len = cookie_len > 0 ? 10 : 0));
}

/* The SYN-ACK's options after MSS: linux writes the Fast Open option kind
 * first and pads after it (34, 10, cookie, NOP, NOP) as Linux's
 * tcp_options_write; rfc pads first (NOP, NOP, 34, 10, cookie). */
static void tfo_order_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_tfo(p);
	uint8_t want[16] = { 2, 4, 0x05, 0xb4 }, buf[60];
	const uint8_t *h;
	struct rte_mbuf *m;
	unsigned at = p == TCP_PROFILE_LINUX ? 4 : 6;

	want[p == TCP_PROFILE_LINUX ? 14 : 4] = 1;
	want[p == TCP_PROFILE_LINUX ? 15 : 5] = 1;
	want[at] = TFO_OPT_KIND;
	want[at + 1] = 2 + TFO_SERVER_COOKIE_LEN;
	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, want + at + 2);
	tfo_syn(t, NULL, 0);
	m = EXPECT_KEEP(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	h = rte_pktmbuf_read(m, 0, 36, buf);
	assert_int_equal(h[12] >> 4, 9); /* 20 + 16 bytes of options */
	assert_memory_equal(h + 20, want, sizeof(want));
	rte_pktmbuf_free(m);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	FINISH(t, 1);
}

static void test_linux_tfo_option_kind_first(void **state)
{
	(void)state;
	tfo_order_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_tfo_option_nops_first(void **state)
{
	(void)state;
	tfo_order_trace(TCP_PROFILE_RFC);
}

/* A SYN with a valid cookie and data: both accept it; linux's SYN-ACK
 * carries no cookie (the client's is current, as Linux), rfc's a fresh
 * one. */
static void tfo_accept_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_tfo(p);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, cookie);
	tfo_syn(t, cookie, sizeof(cookie));
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011, .len = 0));
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(tcp_stack_tfo_stats(t->ts)->srv_accepted, 1);
	if (p == TCP_PROFILE_LINUX) {
		assert_int_equal(o.type, TFO_OPT_NONE);
		assert_int_equal(tcp_stack_tfo_stats(t->ts)->srv_cookies_sent, 0);
	} else {
		assert_int_equal(o.type, TFO_OPT_COOKIE);
		assert_memory_equal(o.cookie, cookie, sizeof(cookie));
		assert_int_equal(tcp_stack_tfo_stats(t->ts)->srv_cookies_sent, 1);
	}
	INJECT(t, SEG(.seq = 1011, .ack = 1));
	FINISH(t, 1);
}

/* Linux: a cookie of the previous (backup) key is accepted and replaced
 * by the current key's, as Linux's tcp_try_fastopen does. */
static void test_linux_tfo_backup_key_gets_fresh_cookie(void **state)
{
	(void)state;
	struct tcp_config cfg;
	uint8_t old[TFO_SERVER_COOKIE_LEN], fresh[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.profile = TCP_PROFILE_LINUX;
	cfg.fastopen_rotate_s = 10;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_set_fastopen(t->ts, PKT_LOCAL_PORT, 4), 0);
	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, old);
	ADVANCE(t, 10000);
	assert_int_equal(tcp_stack_tfo_stats(t->ts)->key_rotations, 1);
	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, fresh);
	tfo_syn(t, old, sizeof(old));
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011, .len = 0));
	assert_int_equal(tcp_stack_tfo_stats(t->ts)->srv_accepted, 1);
	assert_int_equal(o.type, TFO_OPT_COOKIE);
	assert_memory_equal(o.cookie, fresh, sizeof(fresh));
	INJECT(t, SEG(.seq = 1011, .ack = 1));
	FINISH(t, 1);
}

static void test_linux_tfo_accept_sends_no_cookie(void **state)
{
	(void)state;
	tfo_accept_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_tfo_accept_sends_fresh_cookie(void **state)
{
	(void)state;
	tfo_accept_trace(TCP_PROFILE_RFC);
}

/* RSTs */

/* An abort with timestamps negotiated: linux's RST is Linux's active reset
 * (RST and ACK of RCV.NXT, TSopt echoing TS.Recent, a window), rfc's
 * RFC 9293's <SEQ=SND.NXT><CTL=RST> without options. */
static void rst_ts_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_ts(p);

	assert_int_equal(tcp_abort(t->conn), 0);
	if (p == TCP_PROFILE_LINUX)
		EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 1, .ack = 1001,
			      .ts_val = pkt_ts_now(t), .ts_ecr = 101, .win = 65535));
	else
		EXPECT(t, SEG(.flags = TH_RST, .seq = 1, .ts_val = PKT_ABSENT, .win = 0));
	FINISH(t, 0);
}

static void test_linux_rst_carries_timestamps(void **state)
{
	(void)state;
	rst_ts_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_rst_without_timestamps(void **state)
{
	(void)state;
	rst_ts_trace(TCP_PROFILE_RFC);
}

/* Data after close, from a peer that has not yet acknowledged our FIN:
 * linux answers the segment as Linux's tcp_v4_send_reset (<SEQ=SEG.ACK>
 * <CTL=RST>, no options), which lands exactly on the peer's RCV.NXT; rfc
 * resets at SND.NXT, past the FIN the peer has not seen. */
static void after_close_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_ts(p);

	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 10, .ts_val = 150));
	EXPECT(t, SEG(.flags = TH_RST, .seq = p == TCP_PROFILE_LINUX ? 1 : 2,
		      .ts_val = PKT_ABSENT));
	assert_int_equal(STAT(t, drop_after_close), 1);
	FINISH(t, 0);
}

static void test_linux_data_after_close_answered(void **state)
{
	(void)state;
	after_close_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_data_after_close_reset_at_snd_nxt(void **state)
{
	(void)state;
	after_close_trace(TCP_PROFILE_RFC);
}

/* TS.Recent (a fix, both profiles) */

/* An in-window FIN acknowledging what we never sent is dropped with a
 * challenge ACK (RFC 9293 3.10.7.4, RFC 5961 5.2); its TSval 5000 must not
 * become TS.Recent, or the peer's next good segment (TSval 200) fails
 * PAWS.  The challenge ACK echoes the old TS.Recent. */
static void test_ts_recent_ignores_unacceptable_ack(void **state)
{
	(void)state;
	for (unsigned k = 0; k < 2; k++) {
		struct pkt_t *t = start_ts(both[k]);

		INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 1001, .ack = 100, .ts_val = 5000));
		EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001, .ts_ecr = 101));
		assert_int_equal(t->conn->ts_recent, 101);
		INJECT(t, SEG(.seq = 1001, .len = 100, .ts_val = 200));
		ADVANCE(t, 40);
		EXPECT(t, SEG(.flags = TH_ACK, .ack = 1101, .ts_ecr = 200));
		assert_int_equal(STAT(t, drop_paws), 0);
		assert_int_equal(STAT(t, drop_bad_ack), 1);
		FINISH(t, 1);
	}
}

/* A segment whose ACK is below SND.UNA (an old duplicate, reordered):
 * linux leaves TS.Recent as it was (tcp_ack's old_ack path), rfc takes its
 * TSval (RFC 7323 4.3: any segment at or left of Last.ACK.sent). */
static void old_ack_ts_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_ts(p);

	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101, .ts_val = 150));
	assert_int_equal(t->conn->ts_recent, 150);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 200));
	assert_int_equal(t->conn->ts_recent, p == TCP_PROFILE_LINUX ? 150 : 200);
	FINISH(t, 1);
}

static void test_linux_old_ack_keeps_ts_recent(void **state)
{
	(void)state;
	old_ack_ts_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_old_ack_takes_ts_recent(void **state)
{
	(void)state;
	old_ack_ts_trace(TCP_PROFILE_RFC);
}

/* Zero-window probes: linux's is Linux's (SND.UNA-1, no data, like a
 * keepalive), rfc's the next byte; both one RTO after the window closed,
 * both answered by an ACK that opens the window, and the data then goes. */
static void zero_window_trace(enum tcp_profile p)
{
	struct pkt_t *t = start_established(p);
	bool linux = p == TCP_PROFILE_LINUX;

	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT_NOTHING(t);
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = linux ? 0 : 1, .len = linux ? 0 : 1));
	assert_int_equal(STAT(t, persist_probes), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	ADVANCE(t, 399);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = linux ? 0 : 1, .len = linux ? 0 : 1));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1000));
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	/* rfc's data starts at the probed byte, below SND.MAX: a resend */
	assert_int_equal(STAT(t, retrans_segs), linux ? 0 : 1);
	FINISH(t, 1);
}

static void test_linux_zero_window_probe_below_una(void **state)
{
	(void)state;
	zero_window_trace(TCP_PROFILE_LINUX);
}

static void test_rfc_zero_window_probe_next_byte(void **state)
{
	(void)state;
	zero_window_trace(TCP_PROFILE_RFC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_linux_quickacks_at_start),
		PKT_TEST(test_linux_quickacks_after_idle),
		PKT_TEST(test_linux_quickack_rides_on_answer),
		PKT_TEST(test_rfc_no_quickacks),
		PKT_TEST(test_linux_quickack_off_delays),
		PKT_TEST(test_linux_psh_every_half_window),
		PKT_TEST(test_rfc_psh_at_queue_end),
		PKT_TEST(test_linux_slow_start_counts_every_smss),
		PKT_TEST(test_rfc_slow_start_abc_l2),
		PKT_TEST(test_linux_slow_start_stops_at_ssthresh),
		PKT_TEST(test_synack_retries_default_five),
		PKT_TEST(test_synack_retries_listener_syncnt_overrides),
		PKT_TEST(test_linux_tfo_option_kind_first),
		PKT_TEST(test_rfc_tfo_option_nops_first),
		PKT_TEST(test_linux_tfo_accept_sends_no_cookie),
		PKT_TEST(test_linux_tfo_backup_key_gets_fresh_cookie),
		PKT_TEST(test_rfc_tfo_accept_sends_fresh_cookie),
		PKT_TEST(test_linux_rst_carries_timestamps),
		PKT_TEST(test_rfc_rst_without_timestamps),
		PKT_TEST(test_linux_data_after_close_answered),
		PKT_TEST(test_rfc_data_after_close_reset_at_snd_nxt),
		PKT_TEST(test_ts_recent_ignores_unacceptable_ack),
		PKT_TEST(test_linux_old_ack_keeps_ts_recent),
		PKT_TEST(test_rfc_old_ack_takes_ts_recent),
		PKT_TEST(test_linux_zero_window_probe_below_una),
		PKT_TEST(test_rfc_zero_window_probe_next_byte),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
