/* Packet scripts (and, for CUBIC's window function, the pure module of
 * tcp/cc.h in virtual time): slow start and congestion avoidance with
 * byte counting (RFC 5681 3.1, RFC 3465), fast retransmit and NewReno fast
 * recovery (RFC 5681 3.2, RFC 6582 entry and exit; the window in recovery
 * is PRR's, RFC 9937, test_prr.c), limited transmit (RFC 3042), the RTO
 * (RFC 5681 3.1) and CUBIC (RFC 9438).
 *
 * Our segments are 1460 bytes; S(k) is the relative sequence number of the
 * k-th one (data starts at 1).  No window scaling: the peer's window is
 * 65535 throughout unless a script says otherwise. */
#include <math.h>

#include "tests/pkt/harness.h"

#define MSS 1460u
#define S(k) (1u + (uint32_t)(k) * MSS)
#define CC_NS_PER_S 1000000000ull

/* Passive open with the given algorithm; the final ACK comes rtt_ms after
 * our SYN-ACK (SRTT = rtt_ms, RFC 6298 2.2). */
static struct pkt_t *start_cc_sack(enum tcp_cc_alg alg, uint32_t rtt_ms, bool sack)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.wscale = false;
	cfg.sack = sack;
	cfg.cc = alg;
	t = pkt_start(&cfg);
	ESTABLISH_RTT(t, rtt_ms, sack);
	return t;
}

static struct pkt_t *start_cc(enum tcp_cc_alg alg, uint32_t rtt_ms)
{
	return start_cc_sack(alg, rtt_ms, false);
}

static struct tcp_conn_info info_of(struct pkt_t *t)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(t->conn, &info);
	return info;
}

/* n full segments from S(*next) on, then nothing more. */
static void expect_segs(struct pkt_t *t, uint32_t *next, unsigned n)
{
	for (unsigned i = 0; i < n; i++, (*next)++)
		EXPECT(t, SEG(.seq = S(*next), .len = MSS));
	EXPECT_NOTHING(t);
}

/* Every segment sent so far, in order from S(*next). */
static void drain(struct pkt_t *t, uint32_t *next)
{
	while (t->ncap > 0)
		EXPECT(t, SEG(.seq = S((*next)++), .len = MSS));
}

/* The peer acknowledges S(k) with window 65535 (a duplicate when S(k) is
 * SND.UNA). */
static void ack(struct pkt_t *t, uint32_t k)
{
	INJECT(t, SEG(.seq = 1001, .ack = S(k)));
}

/* RFC 5681 3.1 with RFC 3465 2.2 (L = 2): a delayed ACK covering two
 * segments grows cwnd by 2 SMSS, so cwnd doubles per RTT: 10 -> 20 -> 40
 * segments, each ACK releasing four. */
static void test_rfc3465_slow_start_doubles_per_rtt(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0, acked = 0;

	assert_int_equal(pkt_app_send(t, 70 * MSS), 70 * MSS);
	expect_segs(t, &next, 10);
	for (unsigned round = 0, n = 10; round < 2; round++, n *= 2) {
		for (unsigned i = 0; i < n / 2; i++) {
			acked += 2;
			ack(t, acked);
			expect_segs(t, &next, 4); /* 2 slots freed + 2 SMSS growth */
		}
		assert_int_equal(info_of(t).cwnd, 2 * n * MSS);
		assert_int_equal(next - acked, 2 * n); /* in flight: the new cwnd */
	}
	assert_int_equal(info_of(t).ssthresh, UINT32_MAX);
	ack(t, 70);
	FINISH(t, 1);
}

/* RFC 5681 3.1 eq. 3 with RFC 3465 2.1: in congestion avoidance cwnd grows
 * by exactly one SMSS once a full cwnd of bytes is acknowledged: one ACK
 * per segment releases one segment, except the one completing the window,
 * which releases two. */
static void test_rfc5681_congestion_avoidance_one_smss_per_rtt(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0, acked = 0;

	t->conn->ssthresh = 10 * MSS; /* cwnd (IW) = ssthresh: avoidance */
	assert_int_equal(pkt_app_send(t, 40 * MSS), 40 * MSS);
	expect_segs(t, &next, 10);
	for (unsigned w = 10; w < 12; w++) {
		for (unsigned i = 1; i <= w; i++) {
			ack(t, ++acked);
			expect_segs(t, &next, i < w ? 1 : 2);
		}
		assert_int_equal(info_of(t).cwnd, (w + 1) * MSS);
	}
	ack(t, next);
	drain(t, &next);
	ack(t, 40);
	FINISH(t, 1);
}

/* RFC 5681 3.2: the 3rd duplicate ACK retransmits SND.UNA's segment once,
 * ssthresh = max(FlightSize / 2, 2 SMSS) = 7300.  The window in recovery
 * is PRR's (RFC 9937, the default; no SACK here): each dup ACK delivers
 * one SMSS; the two before recovery count as already delivered, so
 * RecoverFS = 14600 - 2920 = 11680, and SND.UNA's segment is presumed lost
 * until resent (loss.c tcp_loss_pipe):
 *   3rd: prr_delivered 1460, pipe = 14600 - 4380 - 1460 = 8760 > 7300:
 *        sndcnt = CEIL(1460 * 7300 / 11680) - 0 = 913, cwnd = 9673 (S0 goes)
 *   4th: 2920, pipe = 14600 - 5840 = 8760: CEIL(1825) - 1460 = 365,
 *        cwnd = 9125 (nothing new to send)
 *   5th: 4380, pipe 7300 = ssthresh: min(7300 - 7300, ...) = 0, cwnd 7300. */
static void test_rfc5681_3_2_third_dup_ack_one_fast_retransmit(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0;
	struct tcp_conn_info info;

	assert_int_equal(pkt_app_send(t, 10 * MSS), 10 * MSS);
	expect_segs(t, &next, 10);
	ack(t, 0);
	ack(t, 0);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, fast_retransmits), 0);
	ack(t, 0);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	info = info_of(t);
	assert_int_equal(info.ssthresh, 10 * MSS / 2);
	assert_int_equal(info.cwnd, 8760 + 913);
	assert_true(info.in_recovery);
	assert_int_equal(info.recovery, TCP_REC_PRR);
	ack(t, 0);
	assert_int_equal(info_of(t).cwnd, 8760 + 365);
	ack(t, 0);
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t).cwnd, 10 * MSS / 2);
	assert_int_equal(STAT(t, fast_retransmits), 1);
	assert_int_equal(STAT(t, recovery_episodes), 1);
	assert_int_equal(STAT(t, dup_acks), 5);
	assert_int_equal(STAT(t, retrans_segs), 1);
	assert_int_equal(info_of(t).fast_retransmits, 1);
	ack(t, 10);
	assert_int_equal(info_of(t).cwnd, 10 * MSS / 2); /* RFC 9937 6.4 */
	FINISH(t, 1);
}

/* RFC 5681 2: only an ACK without data, at SND.UNA, with the window
 * unchanged, is a duplicate: a window update or a data segment is not. */
static void test_rfc5681_2_dup_ack_definition(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0;

	assert_int_equal(pkt_app_send(t, 10 * MSS), 10 * MSS);
	expect_segs(t, &next, 10);
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 60000)); /* window update */
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 60000));
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 60000));
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 60000, .len = 100)); /* data */
	assert_int_equal(STAT(t, dup_acks), 2);
	EXPECT_NOTHING(t);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = S(10), .ack = 1101, .len = 0)); /* delayed */
	INJECT(t, SEG(.seq = 1101, .ack = S(0), .win = 60000));
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	assert_int_equal(STAT(t, fast_retransmits), 1);
	INJECT(t, SEG(.seq = 1101, .ack = S(10), .win = 60000));
	FINISH(t, 1);
}

/* RFC 6675 2: with SACK an ACK at SND.UNA that SACKs new octets counts
 * as a duplicate even when the window moves with it (RFC 5681's
 * definition alone would not count it); one that SACKs nothing new and
 * moves the window does not. */
static void test_rfc6675_2_sack_dup_ack_despite_window_change(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc_sack(TCP_CC_NEWRENO, 0, true);
	uint32_t next = 0;

	assert_int_equal(pkt_app_send(t, 10 * MSS), 10 * MSS);
	expect_segs(t, &next, 10);
	for (unsigned k = 1; k <= 2; k++)
		INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 65535 - k * 1000, .nsack = 1,
			      .sack = { { S(1), S(k + 1) } }));
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 60000, .nsack = 1,
		      .sack = { { S(1), S(3) } })); /* nothing new: no dup */
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, dup_acks), 2);
	assert_int_equal(STAT(t, dup_acks_sack), 2);
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .win = 59000, .nsack = 1,
		      .sack = { { S(1), S(4) } }));
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, fast_retransmits), 1);
	INJECT(t, SEG(.seq = 1001, .ack = S(10), .win = 59000));
	FINISH(t, 1);
}

/* RFC 3042: dup ACKs 1 and 2 each let one new segment go (up to cwnd +
 * 2 SMSS outstanding); the 3rd retransmits.  RFC 5681 3.2 step 2: what
 * limited transmit sent is not in FlightSize: ssthresh = 10 SMSS / 2. */
static void test_rfc3042_limited_transmit_on_dup_acks_1_and_2(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0;

	assert_int_equal(pkt_app_send(t, 14 * MSS), 14 * MSS);
	expect_segs(t, &next, 10);
	ack(t, 0);
	expect_segs(t, &next, 1);
	ack(t, 0);
	expect_segs(t, &next, 1);
	assert_int_equal(STAT(t, limited_transmits), 2);
	assert_int_equal(info_of(t).cwnd, 10 * MSS); /* RFC 3042: unchanged */
	ack(t, 0);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t).ssthresh, 5 * MSS);
	assert_int_equal(STAT(t, limited_transmits), 2);
	ack(t, 12);
	expect_segs(t, &next, 2);
	ack(t, 14);
	FINISH(t, 1);
}

/* RFC 6582 3.2 step 5 without SACK: an ACK below recover presumes the
 * next unacknowledged segment lost; PRR (RFC 9937) releases it: the ACK
 * of S0..S4 delivers 7300 less the 4380 the dup ACKs counted = 2920,
 * prr_delivered = 4380, pipe = 7300 - 1460 (S5 presumed lost) = 5840 <
 * ssthresh 7300: sndcnt = min(7300 - 5840, max(4380 - 1460, 2920)) = 1460,
 * cwnd = 7300.  Recovery goes on (no second ssthresh reduction). */
static void test_rfc6582_partial_ack_retransmits_next_hole(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0;

	assert_int_equal(pkt_app_send(t, 10 * MSS), 10 * MSS);
	expect_segs(t, &next, 10);
	for (unsigned i = 0; i < 3; i++)
		ack(t, 0);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	ack(t, 5); /* S(5) was lost too */
	EXPECT(t, SEG(.seq = S(5), .len = MSS));
	EXPECT_NOTHING(t);
	assert_true(info_of(t).in_recovery);
	assert_int_equal(info_of(t).cwnd, 5840 + 1460);
	assert_int_equal(info_of(t).ssthresh, 5 * MSS);
	assert_int_equal(STAT(t, partial_acks), 1);
	assert_int_equal(STAT(t, fast_retransmits), 1);
	assert_int_equal(STAT(t, recovery_episodes), 1);
	/* Dup ACKs at the partial ACK deliver; nothing new to send and no
	 * new fast retransmit. */
	for (unsigned i = 0; i < 3; i++)
		ack(t, 5);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, fast_retransmits), 1);
	assert_int_equal(STAT(t, retrans_segs), 2);
	ack(t, 10);
	assert_false(info_of(t).in_recovery);
	FINISH(t, 1);
}

/* RFC 6582 3.2 step 3: the ACK of everything up to recover ends recovery
 * with cwnd = ssthresh (RFC 9937 6.4), and sending resumes from it. */
static void test_rfc6582_full_ack_exits_with_cwnd_ssthresh(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0;

	assert_int_equal(pkt_app_send(t, 15 * MSS), 15 * MSS);
	expect_segs(t, &next, 10);
	ack(t, 0);
	expect_segs(t, &next, 1); /* limited transmit: S10 */
	ack(t, 0);
	expect_segs(t, &next, 1); /* S11 */
	ack(t, 0);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	/* PRR: RecoverFS = 17520 - 2920 (the limited-transmit dup ACKs) =
	 * 14600; 4th dup ACK: prr_delivered 2920, pipe = 17520 - 5840 =
	 * 11680 > 7300: CEIL(2920 * 7300 / 14600) - 1460 = 0. */
	ack(t, 0);
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t).cwnd, 11680);
	ack(t, 12); /* recover = S(12): full ACK */
	assert_false(info_of(t).in_recovery);
	assert_int_equal(info_of(t).cwnd, 5 * MSS); /* = ssthresh, no growth */
	assert_int_equal(info_of(t).ssthresh, 5 * MSS);
	assert_int_equal(STAT(t, recovery_exits), 1);
	assert_int_equal(STAT(t, partial_acks), 0);
	expect_segs(t, &next, 3); /* the rest: S12..S14 */
	ack(t, 15);
	FINISH(t, 1);
}

/* RFC 5681 3.1: on an RTO ssthresh = max(FlightSize / 2, 2 SMSS), cwnd =
 * 1 SMSS; a second expiry of the same segment keeps ssthresh. */
static void test_rfc5681_rto_ssthresh_and_cwnd(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_NEWRENO, 0);
	uint32_t next = 0;

	assert_int_equal(pkt_app_send(t, 10 * MSS), 10 * MSS);
	expect_segs(t, &next, 10);
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	assert_int_equal(info_of(t).ssthresh, 5 * MSS);
	assert_int_equal(info_of(t).cwnd, MSS);
	assert_int_equal(STAT(t, cc_rto_reductions), 1);
	ADVANCE(t, 400);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	assert_int_equal(info_of(t).ssthresh, 5 * MSS);
	assert_int_equal(STAT(t, cc_rto_reductions), 1);
	/* RFC 6582 3.2 step 2 (recover = SND.MAX at the RTO): dup ACKs of
	 * the go-back-N phase start no fast retransmit. */
	ack(t, 1); /* slow start: cwnd 2 SMSS, S1 and S2 go again */
	EXPECT(t, SEG(.seq = S(1), .len = MSS));
	EXPECT(t, SEG(.seq = S(2), .len = MSS));
	for (unsigned i = 0; i < 3; i++)
		ack(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, fast_retransmit_suppressed), 1);
	assert_int_equal(STAT(t, fast_retransmits), 0);
	ack(t, 10);
	FINISH(t, 1);
}

/* RFC 9438 4.6 / 4.7 / 4.2 through the engine: at the 3rd dup ACK W_max =
 * cwnd = 10 segments, ssthresh = 0.7 * FlightSize = 10220; the full ACK
 * sets cwnd = 10220 (7 segments); the first avoidance ACK starts an epoch
 * with cwnd_epoch = 7 and K = cbrt((W_max - cwnd_epoch) / C) =
 * cbrt(3 / 0.4) = cbrt(7.5) = 1.957 s (= cbrt(W_max * (1 - beta) / C)). */
static void test_rfc9438_wmax_ssthresh_and_k_after_fast_retransmit(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_CUBIC, 100);
	uint32_t next = 0;
	const struct tcp_cc *cc;

	assert_int_equal(pkt_app_send(t, 30 * MSS), 30 * MSS);
	expect_segs(t, &next, 10);
	ack(t, 0);
	expect_segs(t, &next, 1); /* limited transmit */
	ack(t, 0);
	expect_segs(t, &next, 1);
	ack(t, 0);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	cc = &t->conn->cc;
	assert_true(fabs(cc->w_max - 10.0) < 1e-12);
	assert_int_equal(info_of(t).ssthresh, (uint32_t)(10 * MSS * 0.7)); /* 10220 */
	assert_int_equal(info_of(t).cc, TCP_CC_CUBIC);
	ack(t, 12); /* full ACK: cwnd = ssthresh, 7 segments go */
	assert_int_equal(info_of(t).cwnd, 10220);
	expect_segs(t, &next, 7);
	assert_int_equal(cc->epoch_ns, 0);
	ADVANCE(t, 100);
	ack(t, 13);
	assert_true(fabs(cc->cwnd_epoch - 7.0) < 1e-12);
	assert_true(fabs(cc->k - cbrt(7.5)) < 1e-12);
	assert_true(fabs(cc->k - cbrt(10.0 * (1 - 0.7) / 0.4)) < 1e-9);
	assert_int_equal(STAT(t, cc_cubic_epochs), 1);
	drain(t, &next);
	while (next < 30) {
		ack(t, next);
		drain(t, &next);
	}
	ack(t, 30);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* RFC 9438 4.8: an RTO sets ssthresh = 0.7 * FlightSize, cwnd = 1 SMSS;
 * the next avoidance stage starts its curve at its own first cwnd: K = 0,
 * W_max = cwnd_epoch, W_est = cwnd_epoch. */
static void test_rfc9438_4_8_rto(void **state)
{
	(void)state;
	struct pkt_t *t = start_cc(TCP_CC_CUBIC, 0);
	uint32_t next = 0;
	struct tcp_cc cc;

	assert_int_equal(pkt_app_send(t, 10 * MSS), 10 * MSS);
	expect_segs(t, &next, 10);
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	assert_int_equal(info_of(t).ssthresh, 10220);
	assert_int_equal(info_of(t).cwnd, MSS);
	assert_true(t->conn->cc.after_rto);
	/* The stage after slow start, on a copy of the module's state. */
	cc = t->conn->cc;
	cc.cwnd = cc.ssthresh;
	tcp_cc_on_ack(&cc, MSS, 100000, 5 * CC_NS_PER_S);
	assert_true(cc.k == 0.0);
	assert_true(fabs(cc.w_max - 7.0) < 1e-12);
	assert_false(cc.after_rto);
	ack(t, 10);
	FINISH(t, 1);
}

/* A CUBIC module after one reduction from 10 segments: W_max = 10,
 * cwnd = 7 segments (10220 bytes), smss 1460. */
static void cubic_after_loss(struct tcp_cc *cc, struct tcp_stats *st)
{
	tcp_cc_init(cc, TCP_CC_CUBIC, MSS, 10 * MSS, UINT32_MAX, st);
	assert_int_equal(tcp_cc_on_congestion(cc, 10 * MSS), 10220);
	tcp_cc_on_recovery_exit(cc);
	assert_int_equal(cc->cwnd, 10220);
}

/* RFC 9438 4.2 / 4.4 / 4.5 in virtual time (RTT 100 ms, one ACK of one
 * segment at each instant): W_cubic(t) = 0.4 (t - K)^3 + 10 with
 * K = cbrt(7.5) = 1.9574 s.  Outside the Reno-friendly region each ACK
 * moves cwnd by (target - cwnd) / cwnd with target = W_cubic(t + 0.1)
 * bounded to [cwnd, 1.5 cwnd]:
 *   t = 0.5: W_cubic = 0.4 * (-1.4574)^3 + 10 = 8.762 (concave region)
 *   t = 1.0: W_cubic = 0.4 * (-0.9574)^3 + 10 = 9.649
 *   t = 3.0: W_cubic = 0.4 * ( 1.0426)^3 + 10 = 10.453 (convex region)
 * and further ACKs at t = 3.0 bring cwnd to W_cubic(3.1) = 10.597. */
static void test_rfc9438_cwnd_follows_w_cubic_in_virtual_time(void **state)
{
	(void)state;
	const double C = 0.4, beta = 0.7, rtt = 0.1, wmax = 10.0;
	const double K = cbrt(wmax * (1 - beta) / C);
	const double ts[] = { 0.5, 1.0, 1.5, K, 2.5, 3.0 };
	const uint64_t t0 = 10 * CC_NS_PER_S;
	struct tcp_stats st = { 0 };
	struct tcp_cc cc;

	cubic_after_loss(&cc, &st);
	tcp_cc_on_ack(&cc, MSS, 100000, t0); /* epoch starts at t0 */
	assert_true(fabs(cc.k - 1.9574338205844317) < 1e-9);
	for (unsigned i = 0; i < RTE_DIM(ts); i++) {
		double w = cc.w, west = cc.w_est + (cc.w_est >= 10.0 ? 1.0 : 3 * (1 - beta) / (1 + beta)) / w;
		double wc = C * pow(ts[i] - K, 3) + wmax;
		double target = C * pow(ts[i] + rtt - K, 3) + wmax, want;

		assert_true(wc >= west); /* not Reno-friendly at these times */
		target = fmin(fmax(target, w), 1.5 * w);
		want = w + (target - w) / w;
		tcp_cc_on_ack(&cc, MSS, 100000, t0 + (uint64_t)(ts[i] * CC_NS_PER_S));
		assert_true(fabs(cc.w - want) < 1e-9);
		assert_true(fabs(tcp_cubic_w(&cc, ts[i]) - wc) < 1e-9);
		assert_int_equal(cc.cwnd, (uint32_t)(want * MSS));
	}
	assert_true(fabs(tcp_cubic_w(&cc, 0.5) - 8.762) < 1e-3);
	assert_true(fabs(tcp_cubic_w(&cc, 3.0) - 10.453) < 1e-3);
	/* 25 ACKs of two segments each at t = 3.0 (cwnd 8.71 then): each
	 * closes 2 / cwnd (~20%) of the gap to W_cubic(3.1), approaching it
	 * from below, never past it, while W_est (+ 2 * 0.53 / cwnd per ACK,
	 * 7.48 -> 9.58) stays below W_cubic(3.0) = 10.453. */
	for (unsigned i = 0; i < 25; i++) {
		double w = cc.w;

		tcp_cc_on_ack(&cc, 2 * MSS, 100000, t0 + 3 * CC_NS_PER_S);
		assert_true(cc.w > w && cc.w < C * pow(3.1 - K, 3) + wmax);
	}
	assert_true(cc.w_est < C * pow(3.0 - K, 3) + wmax);
	assert_true(fabs(cc.w - (C * pow(3.1 - K, 3) + wmax)) < 0.03);
	assert_true(fabs(C * pow(3.1 - K, 3) + wmax - 10.597) < 1e-3);
	assert_int_equal(st.cc_cubic_epochs, 1);
}

/* RFC 9438 4.3: where W_cubic(t) < W_est, cwnd = W_est, which grows by
 * alpha_cubic * segments_acked / cwnd per ACK, alpha_cubic = 3 (1 - 0.7) /
 * (1 + 0.7) = 0.5294, and by 1 / cwnd once W_est >= cwnd_prior (10).  At
 * t = 0 after the reduction W_cubic(0) = W_max - C K^3 = 10 - 3 = 7 =
 * cwnd_epoch, below any W_est > 7: every ACK at t = 0 is Reno-friendly.
 * First ACK: W_est = 7 + 0.5294 / 7 = 7.0756, cwnd = 10330 bytes. */
static void test_rfc9438_4_3_reno_friendly_region(void **state)
{
	(void)state;
	const double alpha = 3 * (1 - 0.7) / (1 + 0.7);
	const uint64_t t0 = CC_NS_PER_S;
	struct tcp_stats st = { 0 };
	struct tcp_cc cc;
	double west = 7.0;
	unsigned n = 0;

	assert_true(fabs(alpha - 0.5294117647) < 1e-9);
	cubic_after_loss(&cc, &st);
	tcp_cc_on_ack(&cc, MSS, 100000, t0);
	n++;
	west += alpha / 7.0;
	assert_true(fabs(cc.w - west) < 1e-12);
	assert_int_equal(cc.cwnd, 10330);
	while (west < 10.0) {
		double w = cc.w;

		tcp_cc_on_ack(&cc, MSS, 100000, t0);
		n++;
		west += alpha / w;
		assert_true(fabs(cc.w - west) < 1e-9);
	}
	/* W_est reached cwnd_prior: Reno's 1 / cwnd from now on. */
	{
		double w = cc.w;

		tcp_cc_on_ack(&cc, MSS, 100000, t0);
		n++;
		assert_true(fabs(cc.w - (w + 1.0 / w)) < 1e-9);
	}
	assert_int_equal(st.cc_cubic_friendly_acks, n);
}

/* RFC 9438 4.7: a congestion event with cwnd below the last W_max sets
 * W_max = cwnd * (1 + beta) / 2; one at or above it sets W_max = cwnd.
 * 4.6: ssthresh = 0.7 * FlightSize each time. */
static void test_rfc9438_4_7_fast_convergence(void **state)
{
	(void)state;
	struct tcp_stats st = { 0 };
	struct tcp_cc cc;

	cubic_after_loss(&cc, &st); /* W_max 10 */
	assert_int_equal(st.cc_cubic_fast_convergence, 0);
	cc.cwnd = 8 * MSS;
	assert_int_equal(tcp_cc_on_congestion(&cc, 8 * MSS), (uint32_t)(8 * MSS * 0.7));
	assert_true(fabs(cc.w_max - 8 * 1.7 / 2) < 1e-12); /* 6.8 */
	assert_int_equal(st.cc_cubic_fast_convergence, 1);
	cc.cwnd = 12 * MSS;
	tcp_cc_on_congestion(&cc, 12 * MSS);
	assert_true(fabs(cc.w_max - 12.0) < 1e-12);
	assert_int_equal(st.cc_cubic_fast_convergence, 1);
	/* The next epoch's K uses the reduced W_max: cbrt((12 - 8.4) / 0.4). */
	tcp_cc_on_recovery_exit(&cc);
	tcp_cc_on_ack(&cc, MSS, 0, CC_NS_PER_S);
	assert_true(fabs(cc.k - cbrt((12.0 - (double)cc.ssthresh / MSS) / 0.4)) < 1e-9);
}

/* NewReno's congestion response, the module alone: RFC 5681 eq. 4 with
 * its 2 SMSS floor. */
static void test_rfc5681_eq4_ssthresh_floor(void **state)
{
	(void)state;
	struct tcp_cc cc;

	tcp_cc_init(&cc, TCP_CC_NEWRENO, MSS, 10 * MSS, UINT32_MAX, NULL);
	assert_int_equal(tcp_cc_on_congestion(&cc, 3 * MSS), 2 * MSS);
	assert_int_equal(tcp_cc_on_congestion(&cc, 9 * MSS), 9 * MSS / 2);
	tcp_cc_on_rto(&cc, MSS, true);
	assert_int_equal(cc.ssthresh, 2 * MSS);
	assert_int_equal(cc.cwnd, MSS);
	assert_string_equal(tcp_cc_name(TCP_CC_CUBIC), "cubic");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc3465_slow_start_doubles_per_rtt),
		PKT_TEST(test_rfc5681_congestion_avoidance_one_smss_per_rtt),
		PKT_TEST(test_rfc5681_3_2_third_dup_ack_one_fast_retransmit),
		PKT_TEST(test_rfc5681_2_dup_ack_definition),
		PKT_TEST(test_rfc6675_2_sack_dup_ack_despite_window_change),
		PKT_TEST(test_rfc3042_limited_transmit_on_dup_acks_1_and_2),
		PKT_TEST(test_rfc6582_partial_ack_retransmits_next_hole),
		PKT_TEST(test_rfc6582_full_ack_exits_with_cwnd_ssthresh),
		PKT_TEST(test_rfc5681_rto_ssthresh_and_cwnd),
		PKT_TEST(test_rfc9438_wmax_ssthresh_and_k_after_fast_retransmit),
		PKT_TEST(test_rfc9438_4_8_rto),
		PKT_TEST(test_rfc9438_cwnd_follows_w_cubic_in_virtual_time),
		PKT_TEST(test_rfc9438_4_3_reno_friendly_region),
		PKT_TEST(test_rfc9438_4_7_fast_convergence),
		PKT_TEST(test_rfc5681_eq4_ssthresh_floor),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
