/* Packet scripts: fast recovery on the TCB (tcp/loss.c and
 * output.c's NextSeg over tcp/recovery.h), per algorithm.
 *
 * RFC 6937 3.1's two worked examples (20 segments in flight, ssthresh 11
 * after limited transmit grew FlightSize to 22, see tests/unit/recovery for
 * why 11): what each algorithm sends on each ACK, against the RFC's tables
 * (prr-crb, prr-ssrb, rfc6675, ratehalving) and, for prr (RFC 9937), the
 * values worked out by hand in tests/unit/recovery/test_recovery.c, whose
 * arithmetic is repeated here.  Then Linux's packetdrill PRR scenarios,
 * re-expressed (not copied): 10 in flight with the first lost, 30 in flight
 * with the first four lost; a loss during recovery; an ACK below SND.UNA;
 * a peer without SACK; an RTO inside recovery; the per-connection setter.
 *
 * Our segments are 1460 bytes; S(k) is the relative sequence number of the
 * k-th (data starts at 1).  Window scaling is on so that 47 segments fit in
 * the peer's window.  To have exactly the examples' segments in flight
 * without limited transmit (RFC 3042) the application writes the data sent
 * during recovery only after the ACK that starts it, whose budget is spent
 * by then (every script checks that writing sends nothing). */
#include "tests/pkt/harness.h"

#define MSS 1460u
#define S(k) (1u + (uint32_t)(k) * MSS)
#define WS 7

struct rec_t {
	struct pkt_t *t;
	uint32_t next_new, next_rxt; /* segment numbers expected next */
};

/* Passive open (SACK as asked, window scale 7, no timestamps); cwnd is set
 * to `flight` segments so that the application's first write puts exactly
 * that many in flight. */
static struct rec_t start(enum tcp_cc_alg cc, enum tcp_rec_alg alg, bool sack,
			  unsigned flight)
{
	struct tcp_config cfg;
	struct rec_t r = { 0 };
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.sack = sack;
	cfg.cc = cc;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = WS,
		      .sack_perm = sack ? 1 : PKT_ANY));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_non_null(t->conn);
	assert_int_equal(tcp_set_recovery(t->conn, alg), 0);
	t->conn->cwnd = flight * MSS;
	assert_int_equal(pkt_app_send(t, flight * MSS), flight * MSS);
	for (unsigned k = 0; k < flight; k++)
		EXPECT(t, SEG(.seq = S(k), .len = MSS));
	EXPECT_NOTHING(t);
	r.t = t;
	r.next_new = flight;
	return r;
}

/* What went out must be exactly `want`: 'R' the next retransmission (in
 * sequence order), 'N' the next new segment. */
static void expect_sent(struct rec_t *r, const char *want, unsigned ackno)
{
	struct pkt_t *t = r->t;

	for (const char *p = want; *p != '\0'; p++) {
		if (*p == 'R')
			EXPECT(t, SEG(.seq = S(r->next_rxt++), .len = MSS));
		else
			EXPECT(t, SEG(.seq = S(r->next_new++), .len = MSS));
	}
	if (t->ncap > 0)
		print_message("after the ACK of segment %u\n", ackno);
	EXPECT_NOTHING(t);
}

/* The peer's ACK at S(una) SACKing [S(lo), S(hi)). */
static void sack(struct rec_t *r, unsigned una, unsigned lo, unsigned hi)
{
	INJECT(r->t, SEG(.seq = 1001, .ack = S(una), .nsack = 1, .sack = { { S(lo), S(hi) } }));
}

/* The application writes n more segments: recovery has no budget left at
 * that point, so nothing goes. */
static void app_more(struct rec_t *r, unsigned n)
{
	assert_int_equal(pkt_app_send(r->t, n * MSS), n * MSS);
	EXPECT_NOTHING(r->t);
}

/* Everything acknowledged, ACK after ACK, until nothing is in flight and
 * nothing is left to send; the first one ends recovery. */
static void ack_all(struct rec_t *r)
{
	struct pkt_t *t = r->t;

	do {
		INJECT(t, SEG(.seq = 1001, .ack = t->our_max));
		while (t->ncap > 0)
			EXPECT(t, SEG(.seq = S(r->next_new++), .len = MSS));
	} while (t->conn->snd_una != t->conn->snd_max);
	assert_false(t->conn->loss.in_recovery);
}

static struct tcp_conn_info info_of(struct rec_t *r)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(r->t->conn, &info);
	return info;
}

/* ---- RFC 6937 3.1, first example: segment 0 lost --------------------------
 * 22 segments out (20 + the two limited-transmit ones), NewReno: ssthresh =
 * 22 / 2 = 11.  ACK k SACKs segments 1..k; ack 3 starts recovery (third
 * duplicate, and IsLost(0)).  want[i] is what ack 3 + i releases. */
static void one_loss(enum tcp_rec_alg alg, const char *const want[17])
{
	struct rec_t r = start(TCP_CC_NEWRENO, alg, true, 22);

	sack(&r, 0, 1, 2);
	sack(&r, 0, 1, 3);
	expect_sent(&r, "", 2);
	sack(&r, 0, 1, 4);
	assert_true(r.t->conn->loss.in_recovery);
	assert_int_equal(info_of(&r).ssthresh, 11 * MSS);
	expect_sent(&r, want[0], 3);
	app_more(&r, 12);
	for (unsigned k = 4; k <= 19; k++) {
		sack(&r, 0, 1, k + 1);
		expect_sent(&r, want[k - 3], k);
	}
	assert_int_equal(STAT(r.t, recovery_episodes), 1);
	assert_int_equal(STAT(r.t, fast_retransmits), 1);
	ack_all(&r);
	FINISH(r.t, 1);
}

/* RFC 6675: silent until pipe < cwnd = 11 (ack 12), then one per ACK. */
static void test_rfc6937_one_loss_rfc6675(void **state)
{
	static const char *const want[17] = { "R", "", "", "", "", "", "", "", "",
					      "N", "N", "N", "N", "N", "N", "N", "N" };
	(void)state;
	one_loss(TCP_REC_RFC6675, want);
}

/* Rate-halving: one segment every second ACK. */
static void test_rfc6937_one_loss_ratehalving(void **state)
{
	static const char *const want[17] = { "R", "", "N", "", "N", "", "N", "", "N",
					      "", "N", "", "N", "", "N", "", "N" };
	(void)state;
	one_loss(TCP_REC_RATEHALVING, want);
}

/* RFC 6937 3: RecoverFS = 22; CEIL(pd * 11 / 22) - prr_out releases one
 * segment every second ACK while pipe > 11; at ack 17 pipe = 11 and the
 * reduction bound takes over (ssthresh - pipe: 0, then 1, 1). */
static const char *const one_loss_6937[17] = { "R", "", "N", "", "N", "", "N", "", "N",
					       "", "N", "", "N", "", "", "N", "N" };

static void test_rfc6937_one_loss_prr_crb(void **state)
{
	(void)state;
	one_loss(TCP_REC_PRR_CRB, one_loss_6937);
}

static void test_rfc6937_one_loss_prr_ssrb(void **state)
{
	(void)state;
	one_loss(TCP_REC_PRR_SSRB, one_loss_6937);
}

/* RFC 9937 6.1: RecoverFS = 22 - 2 (segments 1, 2 SACKed before) + 0 = 20,
 * ssthresh 11, no SafeACK (SND.UNA stays at 0):
 *   ack 3: pd 1, pipe 18: CEIL(11/20) = 1 - 0 = 1 R;  ack 4: CEIL(22/20) =
 *   2 - 1 = 1 N;  ack 5: CEIL(33/20) = 2 - 2 = 0;  ack 6: CEIL(44/20) = 3 -
 *   2 = 1 N; ... ack 12: CEIL(110/20) = 6 - 5 = 1 N;  ack 13: CEIL(121/20)
 *   = 7 - 6 = 1 N;  ack 14: 0;  ack 15: CEIL(143/20) = 8 - 7 = 1 N;  ack 16:
 *   0;  ack 17: CEIL(165/20) = 9 - 8 = 1 N;  ack 18: 0;  ack 19: pipe 11 <=
 *   11: MIN(11 - 11, ...) = 0.  (In bytes CEIL(pd * 16060 / 29200) gives
 *   the same whole segments.) */
static void test_rfc9937_one_loss(void **state)
{
	static const char *const want[17] = { "R", "N", "", "N", "", "N", "", "N", "",
					      "N", "N", "", "N", "", "N", "", "" };
	(void)state;
	one_loss(TCP_REC_PRR, want);
}

/* ---- RFC 6937 3.1, second example: segments 0-14 lost --------------------
 * ACKs of 15 and 16 are duplicates; ack 17 (three SACKed, IsLost(0))
 * starts recovery with pipe = 22 - 3 - 15 = 4.  want[i]: acks 17, 18, 19. */
static void burst(enum tcp_rec_alg alg, const char *const want[3])
{
	struct rec_t r = start(TCP_CC_NEWRENO, alg, true, 22);

	sack(&r, 0, 15, 16);
	sack(&r, 0, 15, 17);
	expect_sent(&r, "", 16);
	sack(&r, 0, 15, 18);
	expect_sent(&r, want[0], 17);
	assert_int_equal(info_of(&r).ssthresh, 11 * MSS);
	app_more(&r, 4);
	sack(&r, 0, 15, 19);
	expect_sent(&r, want[1], 18);
	sack(&r, 0, 15, 20);
	expect_sent(&r, want[2], 19);
	assert_int_equal(STAT(r.t, rec_new_data), 0);
	ack_all(&r);
	FINISH(r.t, 1);
}

/* RFC 6675: cwnd 11, pipe 4: the forced retransmission and 6 more, then
 * one per ACK. */
static void test_rfc6937_burst_rfc6675(void **state)
{
	static const char *const want[3] = { "RRRRRRR", "R", "R" };
	(void)state;
	burst(TCP_REC_RFC6675, want);
}

/* Rate-halving: cwnd is held to pipe + 1 = 5: one per ACK. */
static void test_rfc6937_burst_ratehalving(void **state)
{
	static const char *const want[3] = { "R", "R", "R" };
	(void)state;
	burst(TCP_REC_RATEHALVING, want);
	(void)want;
}

/* PRR-CRB: prr_delivered - prr_out = 1 per ACK. */
static void test_rfc6937_burst_prr_crb(void **state)
{
	static const char *const want[3] = { "R", "R", "R" };
	(void)state;
	burst(TCP_REC_PRR_CRB, want);
}

/* PRR-SSRB: MAX(pd - out, DeliveredData) + 1 = 2 per ACK. */
static void test_rfc6937_burst_prr_ssrb(void **state)
{
	static const char *const want[3] = { "RR", "RR", "RR" };
	(void)state;
	burst(TCP_REC_PRR_SSRB, want);
}

/* RFC 9937: RecoverFS = 22 - 2 = 20; pipe 4 <= 11 and no SafeACK:
 * MIN(11 - 4, MAX(pd - out, 1)) = 1 per ACK (PRR-CRB's behaviour). */
static void test_rfc9937_burst(void **state)
{
	static const char *const want[3] = { "R", "R", "R" };
	(void)state;
	burst(TCP_REC_PRR, want);
}

/* ---- Linux's scenarios, re-expressed ------------------------------------
 * tcp_fast_recovery_prr-ss-10pkt-lost-1: 10 in flight (IW), segment 0
 * lost, CUBIC: ssthresh = 0.7 * 14600 = 10220 (7 segments).  Ack 3:
 * RecoverFS = 10 - 2 = 8 segments; pipe = 10 - 3 - 1 = 6 <= 7: MIN(7 - 6,
 * MAX(1, 1)) = 1: R.  Each further SACK: pipe stays 6 (one SACKed, one
 * new): one new segment, cwnd = pipe + 1 = 7.  The retransmission's ACK
 * ends recovery with cwnd = ssthresh. */
static void test_linux_10pkt_lost_1(void **state)
{
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_PRR, true, 10);

	sack(&r, 0, 1, 2);
	sack(&r, 0, 1, 3);
	sack(&r, 0, 1, 4);
	expect_sent(&r, "R", 3);
	assert_int_equal(r.t->conn->loss.rec.recover_fs, 8 * MSS);
	assert_int_equal(info_of(&r).ssthresh, 10220);
	app_more(&r, 20);
	for (unsigned k = 4; k <= 9; k++) {
		sack(&r, 0, 1, k + 1);
		expect_sent(&r, "N", k);
		assert_int_equal(tcp_loss_pipe(r.t->conn), 6 * MSS + MSS);
		assert_int_equal(info_of(&r).cwnd, 10220);
	}
	/* The retransmission arrives: SND.UNA = S10 = recover. */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(10)));
	assert_false(r.t->conn->loss.in_recovery);
	assert_int_equal(info_of(&r).cwnd, 10220);
	/* 6 new in flight, cwnd 7 (10220 bytes, 7 segments need 10220). */
	expect_sent(&r, "N", 10);
	assert_int_equal(STAT(r.t, recovery_exits), 1);
	ack_all(&r);
	FINISH(r.t, 1);
}

/* tcp_fast_recovery_prr-ss-30pkt-lost-1_4: 30 in flight, 0-3 lost, CUBIC
 * ssthresh = 21 segments (0.7 * 43800, 30659 bytes in doubles).  Ack 6 starts recovery, RecoverFS =
 * 30 - 2 = 28, pipe 23 > 21: the proportional part CEIL(pd * 21 / 28) -
 * out retransmits 0, 1, 2 on acks 6-8, nothing on 9, 3 on 10, new data on
 * 11 and 12; pipe reaches 21 at ack 14; from ack 15 every SACK releases one
 * new segment (pipe 20 + 1 = ssthresh).  The ACKs of the retransmissions
 * of 0, 1, 2 move SND.UNA with no new loss (SafeACK): one each; the one of
 * 3 jumps SND.UNA to S30 = recover: cwnd = ssthresh. */
static void test_linux_30pkt_lost_1_4(void **state)
{
	static const char *const want[24] = {
		"R", "R", "R", "", "R", "N", "N", "", "", "N", "N", "N", "N", "N", "N", "N",
		"N", "N", "N", "N", "N", "N", "N", "N" };
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_PRR, true, 30);

	sack(&r, 0, 4, 5);
	sack(&r, 0, 4, 6);
	expect_sent(&r, "", 5);
	sack(&r, 0, 4, 7);
	expect_sent(&r, want[0], 6);
	assert_int_equal(info_of(&r).ssthresh, (uint32_t)(30 * MSS * 0.7)); /* 30659 */
	assert_int_equal(r.t->conn->loss.rec.recover_fs, 28 * MSS);
	/* Linux counts ssthresh in packets (21); CUBIC's 0.7 * 43800 in doubles
	 * is 30659 bytes, one short, which would let ack 14's pipe of exactly
	 * 21 segments take the proportional branch.  The scenario is Linux's:
	 * use 21 segments. */
	r.t->conn->loss.rec.ssthresh = 21 * MSS;
	app_more(&r, 40);
	for (unsigned k = 7; k <= 29; k++) {
		sack(&r, 0, 4, k + 1);
		expect_sent(&r, want[k - 6], k);
	}
	for (unsigned k = 0; k < 3; k++) {
		sack(&r, k + 1, 4, 30);
		expect_sent(&r, "N", k);
	}
	assert_int_equal(r.t->conn->loss.rec.cnt.ssrb, 3);
	INJECT(r.t, SEG(.seq = 1001, .ack = S(30)));
	assert_false(r.t->conn->loss.in_recovery);
	assert_int_equal(info_of(&r).cwnd, 21 * MSS);
	assert_int_equal(STAT(r.t, partial_acks), 3);
	while (r.t->ncap > 0)
		EXPECT(r.t, SEG(.seq = S(r.next_new++), .len = MSS));
	ack_all(&r);
	FINISH(r.t, 1);
}

/* A segment sent during recovery is lost too: SACKs above it make it
 * IsLost and NextSeg rule 1 resends it in the same episode, before new
 * data; ssthresh is reduced once.  (The 10-segment scenario: new segments
 * 10..15 go on acks 4..9; 10 is lost, 11..13 arrive.) */
static void test_loss_during_recovery(void **state)
{
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_PRR, true, 10);

	sack(&r, 0, 1, 2);
	sack(&r, 0, 1, 3);
	sack(&r, 0, 1, 4);
	expect_sent(&r, "R", 3);
	app_more(&r, 20);
	for (unsigned k = 4; k <= 9; k++) {
		sack(&r, 0, 1, k + 1);
		expect_sent(&r, "N", k);
	}
	/* Segment 10 lost; 11 and 12 SACKed: not yet lost (2 SMSS above). */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(0), .nsack = 2,
			.sack = { { S(11), S(12) }, { S(1), S(10) } }));
	expect_sent(&r, "N", 11);
	INJECT(r.t, SEG(.seq = 1001, .ack = S(0), .nsack = 2,
			.sack = { { S(11), S(13) }, { S(1), S(10) } }));
	expect_sent(&r, "N", 12);
	INJECT(r.t, SEG(.seq = 1001, .ack = S(0), .nsack = 2,
			.sack = { { S(11), S(14) }, { S(1), S(10) } }));
	EXPECT(r.t, SEG(.seq = S(10), .len = MSS)); /* rule 1 before new data */
	EXPECT_NOTHING(r.t);
	assert_true(r.t->conn->loss.in_recovery);
	assert_int_equal(STAT(r.t, recovery_episodes), 1);
	assert_int_equal(STAT(r.t, rec_rxt_lost), 2);
	assert_int_equal(info_of(&r).ssthresh, 10220);
	ack_all(&r);
	assert_int_equal(STAT(r.t, recovery_episodes), 1);
	FINISH(r.t, 1);
}

/* RFC 9293 3.10.7.4: an ACK below SND.UNA is an old duplicate: ignored.
 * During recovery it neither delivers nor releases anything. */
static void test_ack_below_snd_una_ignored(void **state)
{
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_PRR, true, 30);
	uint64_t pd, out;

	sack(&r, 0, 4, 5);
	sack(&r, 0, 4, 6);
	sack(&r, 0, 4, 7);
	expect_sent(&r, "R", 6);
	app_more(&r, 10);
	sack(&r, 0, 4, 8);
	expect_sent(&r, "R", 7);
	sack(&r, 1, 4, 8); /* partial ACK: SND.UNA = S1 */
	while (r.t->ncap > 0)
		rte_pktmbuf_free(EXPECT_KEEP(r.t, SEG(.flags = TH_ACK)));
	pd = r.t->conn->loss.rec.prr_delivered;
	out = r.t->conn->loss.rec.prr_out;
	INJECT(r.t, SEG(.seq = 1001, .ack = S(0), .nsack = 1, .sack = { { S(4), S(9) } }));
	EXPECT_NOTHING(r.t);
	assert_int_equal(r.t->conn->loss.rec.prr_delivered, pd);
	assert_int_equal(r.t->conn->loss.rec.prr_out, out);
	assert_int_equal(r.t->conn->snd_una - r.t->our_isn, S(1));
	assert_int_equal(r.t->conn->sb.sacked, 4 * MSS); /* [S4, S8) only */
	ack_all(&r);
	FINISH(r.t, 1);
}

/* Without SACK (RFC 9937 6.2: a duplicate ACK counts one SMSS, at most
 * RecoverFS in all), NewReno ssthresh = 5 segments, 10 in flight.  The two
 * dup ACKs before recovery count as delivered: RecoverFS = 10 - 2 = 8
 * segments (11680 bytes); SND.UNA's segment is presumed lost until resent:
 *   dup 3: pd 1460, pipe = 14600 - 4380 - 1460 = 8760 > 7300:
 *          CEIL(1460 * 7300 / 11680) = 913 - 0: R
 *   dup 4: pd 2920, pipe 14600 - 5840 = 8760: 1825 - 1460 = 365: N
 *   dup 5: pd 4380, pipe 16060 - 7300 = 8760: 2738 - 2920 < 0: nothing
 *   dup 6: pd 5840, pipe 7300 <= 7300: MIN(0, ...) = 0
 *   dup 7: pd 7300, pipe 5840: MIN(1460, MAX(7300 - 2920, 1460)) = 1460: N
 *   dup 8: pd 8760, pipe 17520 - 11680 = 5840: N;  dup 9: pd 10220: N
 *   dup 10: pd 11680 = RecoverFS, pipe 20440 - 14600 = 5840: N
 *   dup 11: one more SMSS would pass RecoverFS: 0 delivered, RFC 9937
 *          returns (the ACK-splitting bound of RFC 9937 9).
 * The cumulative ACK then ends recovery with cwnd = ssthresh. */
static void test_nonsack_peer(void **state)
{
	static const char *const want[9] = { "R", "N", "", "", "N", "N", "N", "N", "" };
	(void)state;
	struct rec_t r = start(TCP_CC_NEWRENO, TCP_REC_PRR, false, 10);

	INJECT(r.t, SEG(.seq = 1001, .ack = S(0)));
	INJECT(r.t, SEG(.seq = 1001, .ack = S(0)));
	expect_sent(&r, "", 2);
	INJECT(r.t, SEG(.seq = 1001, .ack = S(0)));
	expect_sent(&r, want[0], 3);
	assert_int_equal(r.t->conn->loss.rec.recover_fs, 8 * MSS);
	app_more(&r, 10);
	for (unsigned k = 1; k < 9; k++) {
		INJECT(r.t, SEG(.seq = 1001, .ack = S(0)));
		expect_sent(&r, want[k], k + 3);
	}
	assert_int_equal(r.t->conn->loss.rec.cnt.no_data, 1);
	/* Partial ACK (0..4 in, 5 lost too, RFC 6582): S5 presumed lost and
	 * resent at once. */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(5)));
	EXPECT(r.t, SEG(.seq = S(5), .len = MSS));
	while (r.t->ncap > 0)
		EXPECT(r.t, SEG(.seq = S(r.next_new++), .len = MSS));
	assert_true(r.t->conn->loss.in_recovery);
	assert_int_equal(STAT(r.t, partial_acks), 1);
	INJECT(r.t, SEG(.seq = 1001, .ack = S(10)));
	assert_false(r.t->conn->loss.in_recovery);
	assert_int_equal(info_of(&r).cwnd, 5 * MSS);
	while (r.t->ncap > 0)
		EXPECT(r.t, SEG(.seq = S(r.next_new++), .len = MSS));
	ack_all(&r);
	FINISH(r.t, 1);
}

/* The retransmission is lost as well: the RTO abandons the episode
 * (RFC 6298 5.4-5.6, go-back-N with cwnd 1 SMSS), tcp_conn_info counts it,
 * and recover = SND.MAX keeps the go-back-N phase's duplicate ACKs from
 * starting another episode (RFC 6582 3.2 step 2). */
static void test_rto_inside_recovery(void **state)
{
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_PRR, true, 10);
	struct tcp_conn_info info;

	sack(&r, 0, 1, 2);
	sack(&r, 0, 1, 3);
	sack(&r, 0, 1, 4);
	expect_sent(&r, "R", 3);
	/* Nothing new to send and no hole below the highest SACK: the rescue
	 * retransmission of the tail (RFC 6675 NextSeg rule 4), once. */
	sack(&r, 0, 1, 5);
	EXPECT(r.t, SEG(.seq = S(9), .len = MSS));
	for (unsigned k = 5; k <= 9; k++) {
		sack(&r, 0, 1, k + 1);
		expect_sent(&r, "", k);
	}
	assert_int_equal(STAT(r.t, rec_rescue), 1);
	ADVANCE(r.t, 200); /* RTO: rto_min, no backoff yet */
	EXPECT(r.t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(r.t);
	info = info_of(&r);
	assert_false(info.in_recovery);
	assert_int_equal(info.rtos, 1);
	assert_int_equal(info.cwnd, MSS);
	assert_int_equal(info.recovery_episodes, 1);
	assert_int_equal(STAT(r.t, recovery_rto), 1);
	/* Dup ACKs with SACKs after the RTO (the scoreboard was cleared). */
	for (unsigned i = 0; i < 3; i++)
		INJECT(r.t, SEG(.seq = 1001, .ack = S(0), .nsack = 1,
				.sack = { { S(1), S(10) } }));
	EXPECT_NOTHING(r.t);
	assert_false(r.t->conn->loss.in_recovery);
	assert_int_equal(STAT(r.t, recovery_episodes), 1);
	INJECT(r.t, SEG(.seq = 1001, .ack = S(10)));
	EXPECT_NOTHING(r.t);
	FINISH(r.t, 1);
}

/* Reordering, not loss: segment 0 arrives late, after three SACKs started
 * recovery and it was resent.  The peer reports the second copy with a
 * D-SACK (RFC 2883): every retransmission of the episode was needless, so
 * the episode counts as spurious (RFC 3708); a D-SACK of data that was not
 * resent in the episode does not. */
static void test_dsack_marks_spurious_recovery(void **state)
{
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_PRR, true, 10);

	sack(&r, 0, 1, 2);
	sack(&r, 0, 1, 3);
	sack(&r, 0, 1, 4);
	expect_sent(&r, "R", 3);
	/* The original 0 arrives, then 4..9: everything acknowledged, the
	 * episode ends (recover = S10). */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(10)));
	assert_false(r.t->conn->loss.in_recovery);
	/* A D-SACK of data not resent in the episode: nothing concluded. */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(10), .nsack = 1, .sack = { { S(5), S(6) } }));
	assert_int_equal(STAT(r.t, dsack_rcvd), 1);
	assert_int_equal(STAT(r.t, spurious_recoveries), 0);
	/* The retransmitted 0 arrives as a duplicate. */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(10), .nsack = 1, .sack = { { S(0), S(1) } }));
	assert_int_equal(STAT(r.t, dsack_rcvd), 2);
	assert_int_equal(STAT(r.t, spurious_recoveries), 1);
	assert_int_equal(info_of(&r).spurious_recoveries, 1);
	EXPECT_NOTHING(r.t);
	FINISH(r.t, 1);
}

/* The setter and the config default; an unknown algorithm is refused. */
static void test_set_recovery_and_info(void **state)
{
	(void)state;
	struct rec_t r = start(TCP_CC_CUBIC, TCP_REC_RATEHALVING, true, 2);

	assert_int_equal(info_of(&r).recovery, TCP_REC_RATEHALVING);
	assert_int_equal(tcp_set_recovery(r.t->conn, TCP_REC_ALG_COUNT), -EINVAL);
	assert_int_equal(info_of(&r).recovery, TCP_REC_RATEHALVING);
	r.t->conn->loss.rec_alg_set = false;
	assert_int_equal(info_of(&r).recovery, TCP_REC_PRR); /* cfg default */
	INJECT(r.t, SEG(.seq = 1001, .ack = S(2)));
	FINISH(r.t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc6937_one_loss_rfc6675),
		PKT_TEST(test_rfc6937_one_loss_ratehalving),
		PKT_TEST(test_rfc6937_one_loss_prr_crb),
		PKT_TEST(test_rfc6937_one_loss_prr_ssrb),
		PKT_TEST(test_rfc9937_one_loss),
		PKT_TEST(test_rfc6937_burst_rfc6675),
		PKT_TEST(test_rfc6937_burst_ratehalving),
		PKT_TEST(test_rfc6937_burst_prr_crb),
		PKT_TEST(test_rfc6937_burst_prr_ssrb),
		PKT_TEST(test_rfc9937_burst),
		PKT_TEST(test_linux_10pkt_lost_1),
		PKT_TEST(test_linux_30pkt_lost_1_4),
		PKT_TEST(test_loss_during_recovery),
		PKT_TEST(test_ack_below_snd_una_ignored),
		PKT_TEST(test_nonsack_peer),
		PKT_TEST(test_rto_inside_recovery),
		PKT_TEST(test_dsack_marks_spurious_recovery),
		PKT_TEST(test_set_recovery_and_info),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
