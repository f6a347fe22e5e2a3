/* Packet scripts: undo of spurious window reductions (tcp/undo.c).
 *
 * Each script runs with undo on and off ([tcp] undo): on, the reduction is
 * undone (cwnd and ssthresh as before it) and what follows is exactly what
 * the restored window sends; off, today's behaviour (the reduced window,
 * go-back-N after an RTO).
 *  - D-SACK (RFC 3708): every retransmission of a fast recovery reported
 *    duplicate, after the episode and during it; every retransmission after
 *    an RTO reported duplicate, also for an RTO inside recovery (both
 *    copies: back to the window from before recovery).
 *  - Timestamps (RFC 3522): the first ACK acknowledging the fast
 *    retransmission, or the RTO's retransmission, echoes the original's
 *    TSval; sending resumes with new data after the RTO (RFC 4015).
 *  - No undo when the retransmission was needed (TSecr = its TSval), nor
 *    from a later ACK's older echo (the decision is the first ACK's), nor
 *    when another hole was resent too.
 *  - A real loss shown by the ACK that undid starts its own episode.
 *  - CUBIC's own state comes back; the per-connection setter.
 *
 * The peer: SACK as asked, window scale 7, timestamps as asked (then our
 * segments carry 1448 bytes).  S(k) is the relative sequence number of our
 * k-th segment.  The application writes what is sent after the reduction
 * only once its budget is spent (every script checks nothing goes then).
 */
#include "tests/pkt/harness.h"

#define WS 7

struct u_t {
	struct pkt_t *t;
	uint32_t mss;
	bool ts;
	uint32_t peer_ts;  /* the peer's TSval, one more per segment */
	uint32_t ts0;      /* our TSval on the first flight */
	unsigned next_new; /* the next new segment expected */
};

static uint32_t S(const struct u_t *u, unsigned k)
{
	return 1u + (uint32_t)k * u->mss;
}

static struct tcp_conn_info info_of(const struct u_t *u)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(u->t->conn, &info);
	return info;
}

/* The peer's ACK at una echoing ecr (with timestamps), with the SACK block
 * [lo, hi) when hi != 0. */
static void ack(struct u_t *u, uint32_t una, uint32_t ecr, uint32_t lo, uint32_t hi)
{
	INJECT(u->t, SEG(.seq = 1001, .ack = una, .ts_val = u->ts ? (int64_t)++u->peer_ts : PKT_ANY,
			 .ts_ecr = u->ts ? (int64_t)ecr : PKT_ANY, .nsack = hi ? 1 : PKT_ANY,
			 .sack = { { lo, hi } }));
}

/* Passive open, then `flight` segments in flight (cwnd set to that). */
static struct u_t start(enum tcp_cc_alg cc, bool sack, bool ts, bool undo, unsigned flight)
{
	struct tcp_config cfg;
	struct u_t u = { .ts = ts, .peer_ts = 100 };
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = ts;
	cfg.sack = sack;
	cfg.cc = cc;
	cfg.undo = undo;
	t = pkt_start(&cfg);
	u.t = t;
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = WS,
		      .sack_perm = sack ? 1 : PKT_ANY, .ts_val = ts ? (int64_t)u.peer_ts : PKT_ANY));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	ack(&u, 1, pkt_ts_now(t), 0, 0);
	assert_non_null(t->conn);
	u.mss = t->conn->mss;
	assert_int_equal(u.mss, ts ? 1448 : 1460);
	assert_int_equal(info_of(&u).undo, undo);
	t->conn->cwnd = flight * u.mss;
	u.ts0 = pkt_ts_now(t);
	assert_int_equal(pkt_app_send(t, flight * u.mss), flight * u.mss);
	for (unsigned k = 0; k < flight; k++)
		EXPECT(t, SEG(.seq = S(&u, k), .len = u.mss));
	EXPECT_NOTHING(t);
	u.next_new = flight;
	return u;
}

/* Exactly n new segments go out, then nothing. */
static void expect_new(struct u_t *u, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		EXPECT(u->t, SEG(.seq = S(u, u->next_new++), .len = u->mss));
	EXPECT_NOTHING(u->t);
}

/* The application writes n more segments: nothing may go now. */
static void app_more(struct u_t *u, unsigned n)
{
	assert_int_equal(pkt_app_send(u->t, n * u->mss), n * u->mss);
	EXPECT_NOTHING(u->t);
}

/* Everything acknowledged, ACK after ACK (echoing now), until nothing is in
 * flight or left to send. */
static void ack_all(struct u_t *u)
{
	struct pkt_t *t = u->t;

	do {
		ack(u, t->our_max, pkt_ts_now(t), 0, 0);
		while (t->ncap > 0)
			EXPECT(t, SEG(.seq = S(u, u->next_new++), .len = u->mss));
	} while (t->conn->snd_una != t->conn->snd_max);
	FINISH(t, 1);
}

/* Segments 1..3 SACKed (the third starts recovery): the fast retransmit of
 * 0, after `ms` (so that its TSval is later than the flight's). */
static void fast_retransmit(struct u_t *u, uint32_t ms)
{
	struct pkt_t *t = u->t;

	ADVANCE(t, ms);
	ack(u, S(u, 0), u->ts0, S(u, 1), S(u, 2));
	ack(u, S(u, 0), u->ts0, S(u, 1), S(u, 3));
	EXPECT_NOTHING(t);
	ack(u, S(u, 0), u->ts0, S(u, 1), S(u, 4));
	EXPECT(t, SEG(.seq = S(u, 0), .len = u->mss,
		      .ts_val = u->ts ? (int64_t)pkt_ts_now(t) : PKT_ANY));
	EXPECT_NOTHING(t);
	assert_true(info_of(u).in_recovery);
}

static void assert_no_undo(const struct u_t *u)
{
	struct tcp_conn_info i = info_of(u);

	assert_int_equal(i.undo_dsack_recovery + i.undo_ts_recovery + i.undo_ts_rto +
				 i.undo_dsack_rto, 0);
	assert_int_equal(STAT(u->t, recovery_undone), 0);
}

/* ---- D-SACK, after the episode --------------------------------------------
 * NewReno, 10 in flight: ssthresh 5.  Segment 0 was only late: the full ACK
 * ends recovery (cwnd = ssthresh), then the D-SACK of the retransmitted 0
 * shows the episode's only retransmission needless.  On: cwnd 10 and
 * ssthresh as before (the initial one), so 10 new segments go; off: 5. */
static void dsack_after_episode(bool on)
{
	struct u_t u = start(TCP_CC_NEWRENO, true, false, on, 10);
	uint32_t ss0 = info_of(&u).ssthresh, m = u.mss;

	fast_retransmit(&u, 0);
	assert_int_equal(info_of(&u).ssthresh, 5 * m);
	ack(&u, S(&u, 10), 0, 0, 0);
	assert_false(info_of(&u).in_recovery);
	assert_int_equal(info_of(&u).cwnd, 5 * m);
	ack(&u, S(&u, 10), 0, S(&u, 0), S(&u, 1));
	assert_int_equal(STAT(u.t, spurious_recoveries), 1);
	assert_int_equal(info_of(&u).cwnd, (on ? 10 : 5) * m);
	assert_int_equal(info_of(&u).ssthresh, on ? ss0 : 5 * m);
	assert_int_equal(STAT(u.t, undo_dsack_recovery), on);
	assert_int_equal(info_of(&u).undo_dsack_recovery, on);
	assert_int_equal(pkt_app_send(u.t, 12 * m), 12 * m);
	expect_new(&u, on ? 10 : 5);
	/* A second D-SACK of the same segment undoes nothing more; as a
	 * duplicate ACK it lets limited transmit (RFC 3042) send one. */
	ack(&u, S(&u, 10), 0, S(&u, 0), S(&u, 1));
	expect_new(&u, 1);
	assert_int_equal(STAT(u.t, undo_dsack_recovery), on);
	assert_int_equal(info_of(&u).cwnd, (on ? 10 : 5) * u.mss);
	ack_all(&u);
}

static void test_dsack_after_episode_on(void **state)
{
	(void)state;
	dsack_after_episode(true);
}

static void test_dsack_after_episode_off(void **state)
{
	(void)state;
	dsack_after_episode(false);
}

/* ---- D-SACK, during the episode -------------------------------------------
 * The original 0 arrives (partial ACK of 0..3: PRR, RecoverFS 8, ssthresh
 * 5, prr_delivered 2, sends CEIL(2 * 5 / 8) - 1 = 1 new segment), then the
 * retransmission as a duplicate.  On: recovery ends with cwnd 10; with 7
 * in flight (4..10) three more go, and a fourth by limited transmit (RFC
 * 3042: the D-SACK's ACK is a duplicate ACK).  Off: a duplicate ACK
 * delivering nothing, recovery goes on, nothing is sent. */
static void dsack_in_episode(bool on)
{
	struct u_t u = start(TCP_CC_NEWRENO, true, false, on, 10);

	fast_retransmit(&u, 0);
	app_more(&u, 20);
	ack(&u, S(&u, 4), 0, 0, 0);
	expect_new(&u, 1);
	assert_true(info_of(&u).in_recovery);
	ack(&u, S(&u, 4), 0, S(&u, 0), S(&u, 1));
	assert_int_equal(info_of(&u).in_recovery, !on);
	assert_int_equal(STAT(u.t, recovery_undone), on);
	expect_new(&u, on ? 3 + 1 : 0);
	if (on)
		assert_int_equal(info_of(&u).cwnd, 10 * u.mss);
	ack_all(&u);
}

static void test_dsack_in_episode_on(void **state)
{
	(void)state;
	dsack_in_episode(true);
}

static void test_dsack_in_episode_off(void **state)
{
	(void)state;
	dsack_in_episode(false);
}

/* ---- Timestamps, fast retransmit ------------------------------------------
 * The fast retransmit leaves 10 ms after the flight.  The original 0
 * arrives late and the peer's ACK of 0..3 echoes its TSval (RFC 7323 4.3:
 * it filled the hole): the retransmission was needless (RFC 3522).  On:
 * out of recovery, cwnd 10 and ssthresh back: 6 in flight, 4 new go.  Off:
 * PRR's one segment, as in dsack_in_episode. */
static void ts_fast_retransmit(bool on)
{
	struct u_t u = start(TCP_CC_NEWRENO, true, true, on, 10);
	uint32_t ss0 = info_of(&u).ssthresh;

	fast_retransmit(&u, 10);
	app_more(&u, 20);
	ack(&u, S(&u, 4), u.ts0, 0, 0);
	assert_int_equal(info_of(&u).in_recovery, !on);
	assert_int_equal(STAT(u.t, undo_ts_recovery), on);
	assert_int_equal(info_of(&u).undo_ts_recovery, on);
	expect_new(&u, on ? 4 : 1);
	if (on) {
		assert_int_equal(info_of(&u).cwnd, 10 * u.mss);
		assert_int_equal(info_of(&u).ssthresh, ss0);
	}
	ack_all(&u);
}

static void test_ts_fast_retransmit_on(void **state)
{
	(void)state;
	ts_fast_retransmit(true);
}

static void test_ts_fast_retransmit_off(void **state)
{
	(void)state;
	ts_fast_retransmit(false);
}

/* The retransmission was needed: the ACK of 0..3 echoes its TSval.  No undo;
 * recovery goes on as PRR says, and a later ACK echoing an older TSval
 * (another segment's) changes nothing: RFC 3522 decides on the first ACK
 * that acknowledges the retransmission.  The full ACK ends recovery with
 * cwnd = ssthresh (5). */
static void test_ts_retransmit_needed(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_NEWRENO, true, true, true, 10);
	uint32_t rxt_ts;

	fast_retransmit(&u, 10);
	rxt_ts = pkt_ts_now(u.t);
	app_more(&u, 20);
	ack(&u, S(&u, 4), rxt_ts, 0, 0);
	assert_true(info_of(&u).in_recovery);
	expect_new(&u, 1);
	ack(&u, S(&u, 11), u.ts0, 0, 0);
	assert_false(info_of(&u).in_recovery);
	assert_int_equal(info_of(&u).cwnd, 5 * u.mss);
	assert_int_equal(info_of(&u).ssthresh, 5 * u.mss);
	assert_no_undo(&u);
	expect_new(&u, 5);
	ack_all(&u);
}

/* Segment 0 was late but 5 is lost: the ACK of 0..4 echoes segment 0's
 * TSval (undo) and SACKs 6..9, which makes 5 lost (RFC 6675 IsLost).  The
 * withdrawn reduction leaves no recover point behind: the same ACK starts
 * an episode of its own and 5 is resent at once, not after an RTO. */
static void test_ts_undo_then_real_loss(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_NEWRENO, true, true, true, 10);
	struct pkt_t *t = u.t;

	fast_retransmit(&u, 10);
	app_more(&u, 20);
	ack(&u, S(&u, 5), u.ts0, S(&u, 6), S(&u, 10));
	assert_int_equal(STAT(t, undo_ts_recovery), 1);
	assert_int_equal(STAT(t, recovery_undone), 1);
	assert_int_equal(STAT(t, recovery_episodes), 2);
	assert_true(info_of(&u).in_recovery);
	EXPECT(t, SEG(.seq = S(&u, 5), .len = u.mss));
	while (t->ncap > 0)
		EXPECT(t, SEG(.len = u.mss));
	ack(&u, t->our_max, pkt_ts_now(t), 0, 0);
	while (t->ncap > 0)
		EXPECT(t, SEG(.len = u.mss));
	assert_false(info_of(&u).in_recovery);
	FINISH(t, 1);
}

/* Two holes (0 and 4): the first ACK acknowledging the retransmission of 0
 * echoes the original's TSval, but 4 was resent too and that ACK says
 * nothing about it: no undo (counted as inconclusive). */
static void test_ts_other_retransmission(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_NEWRENO, true, true, true, 10);
	struct pkt_t *t = u.t;

	ADVANCE(t, 10);
	ack(&u, S(&u, 0), u.ts0, S(&u, 1), S(&u, 2));
	ack(&u, S(&u, 0), u.ts0, S(&u, 1), S(&u, 3));
	ack(&u, S(&u, 0), u.ts0, S(&u, 1), S(&u, 4));
	EXPECT(t, SEG(.seq = S(&u, 0), .len = u.mss));
	EXPECT_NOTHING(t);
	/* 5..8 SACKed as well: 4 is lost by RFC 6675 IsLost and resent. */
	INJECT(t, SEG(.seq = 1001, .ack = S(&u, 0), .ts_val = ++u.peer_ts, .ts_ecr = u.ts0,
		      .nsack = 2, .sack = { { S(&u, 5), S(&u, 9) }, { S(&u, 1), S(&u, 4) } }));
	EXPECT(t, SEG(.seq = S(&u, 4), .len = u.mss));
	while (t->ncap > 0)
		EXPECT(t, SEG(.len = u.mss)); /* the rescue of 9, if PRR allows */
	ack(&u, S(&u, 4), u.ts0, S(&u, 5), S(&u, 9));
	assert_true(info_of(&u).in_recovery);
	assert_int_equal(STAT(t, undo_ts_inconclusive), 1);
	assert_no_undo(&u);
	while (t->ncap > 0)
		EXPECT(t, SEG(.len = u.mss));
	ack(&u, S(&u, 10), pkt_ts_now(t), 0, 0);
	while (t->ncap > 0)
		EXPECT(t, SEG(.len = u.mss));
	assert_false(info_of(&u).in_recovery);
	FINISH(t, 1);
}

/* ---- Timestamps, RTO ------------------------------------------------------
 * 4 in flight, the ACKs delayed past the RTO: segment 0 goes again with
 * cwnd 1 (NewReno: ssthresh 2).  Then the ACK of 0 and 1 arrives echoing
 * the flight's TSval: the timeout was spurious.  On: cwnd max(1 + 2, 4) =
 * 4, ssthresh as before, SND.NXT = SND.MAX (RFC 4015): 2 in flight, 2 new
 * segments, and segments 2 and 3 are not resent.  Off: go-back-N with cwnd
 * 3: 2, 3 again and 4. */
static void ts_rto(bool on)
{
	struct u_t u = start(TCP_CC_NEWRENO, false, true, on, 4);
	struct pkt_t *t = u.t;
	uint32_t ss0 = info_of(&u).ssthresh;

	ADVANCE(t, tcp_rto_current_ms(t->conn) - 1);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = S(&u, 0), .len = u.mss, .ts_val = pkt_ts_now(t)));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(&u).cwnd, u.mss);
	app_more(&u, 10);
	ack(&u, S(&u, 2), u.ts0, 0, 0);
	assert_int_equal(STAT(t, undo_ts_rto), on);
	assert_int_equal(info_of(&u).undo_ts_rto, on);
	if (on) {
		assert_int_equal(info_of(&u).cwnd, 4 * u.mss);
		assert_int_equal(info_of(&u).ssthresh, ss0);
		expect_new(&u, 2);
	} else {
		assert_int_equal(info_of(&u).cwnd, 3 * u.mss);
		assert_int_equal(info_of(&u).ssthresh, 2 * u.mss);
		EXPECT(t, SEG(.seq = S(&u, 2), .len = u.mss));
		EXPECT(t, SEG(.seq = S(&u, 3), .len = u.mss));
		expect_new(&u, 1);
	}
	ack_all(&u);
}

static void test_ts_rto_on(void **state)
{
	(void)state;
	ts_rto(true);
}

static void test_ts_rto_off(void **state)
{
	(void)state;
	ts_rto(false);
}

/* The RTO's retransmission was needed: the ACK of 0 echoes its TSval.  No
 * undo: go-back-N goes on (cwnd 2: segments 1 and 2). */
static void test_ts_rto_needed(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_NEWRENO, false, true, true, 4);
	struct pkt_t *t = u.t;
	uint32_t rxt_ts;

	ADVANCE(t, tcp_rto_current_ms(t->conn));
	EXPECT(t, SEG(.seq = S(&u, 0), .len = u.mss));
	rxt_ts = pkt_ts_now(t);
	EXPECT_NOTHING(t);
	ack(&u, S(&u, 1), rxt_ts, 0, 0);
	EXPECT(t, SEG(.seq = S(&u, 1), .len = u.mss));
	EXPECT(t, SEG(.seq = S(&u, 2), .len = u.mss));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(&u).cwnd, 2 * u.mss);
	assert_int_equal(info_of(&u).ssthresh, 2 * u.mss);
	assert_no_undo(&u);
	ack_all(&u);
}

/* ---- D-SACK, RTO ----------------------------------------------------------
 * No timestamps.  The RTO resends 0; the delayed ACK of the whole flight
 * arrives (slow start: cwnd 1 + 2 = 3, ssthresh 2), then the D-SACK of the
 * retransmitted 0: every retransmission after the RTO was a duplicate.
 * On: cwnd 4, ssthresh as before, 4 new segments go; off: 3. */
static void dsack_rto(bool on)
{
	struct u_t u = start(TCP_CC_NEWRENO, true, false, on, 4);
	struct pkt_t *t = u.t;
	uint32_t ss0 = info_of(&u).ssthresh;

	ADVANCE(t, tcp_rto_current_ms(t->conn));
	EXPECT(t, SEG(.seq = S(&u, 0), .len = u.mss));
	EXPECT_NOTHING(t);
	ack(&u, S(&u, 4), 0, 0, 0);
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(&u).cwnd, 3 * u.mss);
	ack(&u, S(&u, 4), 0, S(&u, 0), S(&u, 1));
	assert_int_equal(STAT(t, undo_dsack_rto), on);
	assert_int_equal(info_of(&u).undo_dsack_rto, on);
	assert_int_equal(STAT(t, spurious_recoveries), 0);
	assert_int_equal(info_of(&u).cwnd, (on ? 4 : 3) * u.mss);
	assert_int_equal(info_of(&u).ssthresh, on ? ss0 : 2 * u.mss);
	assert_int_equal(pkt_app_send(t, 6 * u.mss), 6 * u.mss);
	expect_new(&u, on ? 4 : 3);
	ack_all(&u);
}

static void test_dsack_rto_on(void **state)
{
	(void)state;
	dsack_rto(true);
}

static void test_dsack_rto_off(void **state)
{
	(void)state;
	dsack_rto(false);
}

/* An RTO inside recovery belongs to the same reduction: segment 0, resent
 * by the fast retransmit and again by the RTO, was only late.  One D-SACK
 * is not enough (two copies went); the second undoes both reductions, back
 * to the window from before recovery (10, not the RTO's 1 + 2). */
static void test_dsack_rto_inside_recovery(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_NEWRENO, true, false, true, 10);
	struct pkt_t *t = u.t;
	uint32_t ss0 = info_of(&u).ssthresh;

	fast_retransmit(&u, 0);
	ADVANCE(t, tcp_rto_current_ms(t->conn));
	EXPECT(t, SEG(.seq = S(&u, 0), .len = u.mss));
	EXPECT_NOTHING(t);
	assert_false(info_of(&u).in_recovery);
	ack(&u, S(&u, 10), 0, 0, 0);
	assert_int_equal(info_of(&u).cwnd, 3 * u.mss);
	ack(&u, S(&u, 10), 0, S(&u, 0), S(&u, 1));
	assert_int_equal(STAT(t, undo_dsack_rto), 0);
	assert_int_equal(info_of(&u).cwnd, 3 * u.mss);
	ack(&u, S(&u, 10), 0, S(&u, 0), S(&u, 1));
	assert_int_equal(STAT(t, undo_dsack_rto), 1);
	assert_int_equal(STAT(t, spurious_recoveries), 0);
	assert_int_equal(info_of(&u).cwnd, 10 * u.mss);
	assert_int_equal(info_of(&u).ssthresh, ss0);
	assert_int_equal(pkt_app_send(t, 12 * u.mss), 12 * u.mss);
	expect_new(&u, 10);
	ack_all(&u);
}

/* ---- CUBIC ----------------------------------------------------------------
 * RFC 9438 4.9: CUBIC's own state comes back with the window (W_max, K,
 * the epoch), not only cwnd and ssthresh. */
static void test_cubic_state_restored(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_CUBIC, true, false, true, 10);
	struct pkt_t *t = u.t;
	struct tcp_cc before;

	/* A congestion-avoidance epoch under way (ssthresh below cwnd): the
	 * ACK of segment 0 starts it and lets one new segment go. */
	t->conn->ssthresh = 8 * u.mss;
	app_more(&u, 1);
	ack(&u, S(&u, 1), 0, 0, 0);
	expect_new(&u, 1);
	before = t->conn->cc;
	assert_true(before.epoch_ns != 0);
	/* Segment 1 late: recovery on the third SACK, its fast retransmit. */
	ack(&u, S(&u, 1), 0, S(&u, 2), S(&u, 3));
	ack(&u, S(&u, 1), 0, S(&u, 2), S(&u, 4));
	ack(&u, S(&u, 1), 0, S(&u, 2), S(&u, 5));
	EXPECT(t, SEG(.seq = S(&u, 1), .len = u.mss));
	EXPECT_NOTHING(t);
	assert_true(t->conn->cc.epoch_ns == 0); /* the reduction ended it */
	assert_true(t->conn->cc.w_max != before.w_max);
	ack(&u, S(&u, 11), 0, 0, 0);
	assert_true(t->conn->cwnd < before.cwnd);
	ack(&u, S(&u, 11), 0, S(&u, 1), S(&u, 2));
	assert_int_equal(STAT(t, undo_dsack_recovery), 1);
	assert_int_equal(t->conn->cwnd, before.cwnd);
	assert_int_equal(t->conn->ssthresh, before.ssthresh);
	assert_true(t->conn->cc.w_max == before.w_max);
	assert_true(t->conn->cc.k == before.k);
	assert_true(t->conn->cc.w_est == before.w_est);
	assert_true(t->conn->cc.epoch_ns == before.epoch_ns);
	assert_true(t->conn->cc.cwnd_prior == before.cwnd_prior);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* The per-connection setter wins over the config, both ways. */
static void test_set_undo(void **state)
{
	(void)state;
	struct u_t u = start(TCP_CC_NEWRENO, true, false, false, 10);

	assert_int_equal(tcp_set_undo(u.t->conn, true), 0);
	assert_true(info_of(&u).undo);
	fast_retransmit(&u, 0);
	ack(&u, S(&u, 10), 0, 0, 0);
	ack(&u, S(&u, 10), 0, S(&u, 0), S(&u, 1));
	assert_int_equal(info_of(&u).undo_dsack_recovery, 1);
	assert_int_equal(info_of(&u).cwnd, 10 * u.mss);
	assert_int_equal(tcp_set_undo(u.t->conn, false), 0);
	assert_false(info_of(&u).undo);
	ack_all(&u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_dsack_after_episode_on),
		PKT_TEST(test_dsack_after_episode_off),
		PKT_TEST(test_dsack_in_episode_on),
		PKT_TEST(test_dsack_in_episode_off),
		PKT_TEST(test_ts_fast_retransmit_on),
		PKT_TEST(test_ts_fast_retransmit_off),
		PKT_TEST(test_ts_retransmit_needed),
		PKT_TEST(test_ts_other_retransmission),
		PKT_TEST(test_ts_undo_then_real_loss),
		PKT_TEST(test_ts_rto_on),
		PKT_TEST(test_ts_rto_off),
		PKT_TEST(test_ts_rto_needed),
		PKT_TEST(test_dsack_rto_on),
		PKT_TEST(test_dsack_rto_off),
		PKT_TEST(test_dsack_rto_inside_recovery),
		PKT_TEST(test_cubic_state_restored),
		PKT_TEST(test_set_undo),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
