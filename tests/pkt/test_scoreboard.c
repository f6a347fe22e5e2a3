/* Packet scripts: the sender's SACK scoreboard (tcp/scoreboard.c, RFC 6675
 * 2-4), reneging (RFC 2018 8), D-SACK recognition (RFC 2883 4) and the
 * tcp_conn_info fields sacked, lost and delivery_rate.
 *
 * Our segments are 1460 bytes; S(k) is the relative sequence number of the
 * k-th one (data starts at 1).  The peer's SACK blocks are injected with
 * .nsack/.sack (relative to our ISN).  Since fast recovery acts on the
 * scoreboard (loss.c, default PRR), every script also checks the
 * retransmissions RFC 6675 NextSeg makes from it; the per-ACK amounts are
 * test_prr.c's subject. */
#include "tests/pkt/harness.h"

#define MSS 1460u
#define S(k) (1u + (uint32_t)(k) * MSS)

/* Passive open with SACK-permitted, no timestamps or window scaling; the
 * final ACK comes rtt_ms after our SYN-ACK (an RTT sample, RFC 6298). */
static struct pkt_t *start_sack(uint32_t rtt_ms, bool sack)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.wscale = false;
	t = pkt_start(&cfg);
	ESTABLISH_RTT(t, rtt_ms, sack);
	return t;
}

/* The application sends n full segments; all n go out (n <= 10, RFC 6928). */
static void send_segs(struct pkt_t *t, unsigned n)
{
	assert_int_equal(pkt_app_send(t, n * MSS), n * MSS);
	for (unsigned k = 0; k < n; k++)
		EXPECT(t, SEG(.seq = S(k), .len = MSS));
}

static struct tcp_conn_info info_of(struct pkt_t *t)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(t->conn, &info);
	return info;
}

/* Relative [start, end) of range k. */
static void assert_range(struct pkt_t *t, unsigned k, uint32_t start, uint32_t end)
{
	assert_true(k < t->conn->sb.n);
	assert_int_equal(t->conn->sb.r[k].start - t->our_isn, start);
	assert_int_equal(t->conn->sb.r[k].end - t->our_isn, end);
}

/* RFC 6675 3: blocks from successive ACKs accumulate; one that bridges two
 * ranges merges them; the cumulative ACK empties the scoreboard. */
static void test_sb_blocks_merged_across_acks(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 8);
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(2), S(3) } }));
	assert_int_equal(info_of(t).sacked, MSS);
	INJECT(t, SEG(.ack = S(0), .nsack = 2, .sack = { { S(4), S(5) }, { S(2), S(3) } }));
	assert_int_equal(t->conn->sb.n, 2);
	assert_int_equal(info_of(t).sacked, 2 * MSS);
	/* A block in the hole between them: one range [S2, S5). */
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(3), S(4) } }));
	assert_int_equal(t->conn->sb.n, 1);
	assert_range(t, 0, S(2), S(5));
	assert_int_equal(info_of(t).sacked, 3 * MSS);
	/* Overlapping and adjacent blocks extend it without double counting. */
	INJECT(t, SEG(.ack = S(0), .nsack = 2, .sack = { { S(4), S(6) }, { S(1) + 100, S(3) } }));
	assert_range(t, 0, S(1) + 100, S(6));
	assert_int_equal(info_of(t).sacked, 5 * MSS - 100);
	/* The 3rd ACK (3 SMSS SACKed: IsLost(S0)) started recovery with S0;
	 * the 4th SACKs 2820 new bytes: PRR (pipe 4380 < ssthresh 8176)
	 * releases 2820, spent on the lost hole [S1, S1+100) (NextSeg rule 1)
	 * and, with nothing new to send and no hole below the highest SACK,
	 * the rescue retransmission of the tail S7 (rule 4). */
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT(t, SEG(.seq = S(1), .len = 100));
	EXPECT(t, SEG(.seq = S(7), .len = MSS));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.ack = S(8)));
	assert_int_equal(t->conn->sb.n, 0);
	assert_int_equal(info_of(t).sacked, 0);
	assert_int_equal(t->conn->sb.invalid, 0);
	assert_int_equal(STAT(t, rec_rescue), 1);
	FINISH(t, 1);
}

/* RFC 6675 4 IsLost by count: three discontiguous SACKed ranges above a
 * hole (300 bytes, under 2 SMSS) make it lost; the holes with two or one
 * range above are not. */
static void test_sb_holes_lost_by_count(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);
	const struct tcp_sb *sb;

	send_segs(t, 4);
	INJECT(t, SEG(.ack = S(0), .nsack = 3,
		      .sack = { { S(3), S(3) + 100 }, { S(2), S(2) + 100 }, { S(1), S(1) + 100 } }));
	sb = &t->conn->sb;
	assert_int_equal(sb->n, 3);
	assert_true(tcp_sb_is_lost(sb, t->our_isn + S(0), MSS));
	assert_true(tcp_sb_is_lost(sb, t->our_isn + S(1) - 1, MSS));
	assert_false(tcp_sb_is_lost(sb, t->our_isn + S(1), MSS)); /* SACKed itself */
	assert_false(tcp_sb_is_lost(sb, t->our_isn + S(1) + 100, MSS));
	assert_false(tcp_sb_is_lost(sb, t->our_isn + S(2) + 100, MSS));
	assert_false(tcp_sb_is_lost(sb, t->our_isn + S(3) + 100, MSS)); /* above all */
	assert_int_equal(info_of(t).sacked, 300);
	assert_int_equal(info_of(t).lost, MSS); /* only the hole [S0, S1) */
	/* IsLost(SND.UNA) starts recovery at once (RFC 6675 5): S0 again. */
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rec_enter_lost), 1);
	INJECT(t, SEG(.ack = S(4)));
	assert_int_equal(info_of(t).lost, 0);
	FINISH(t, 1);
}

/* RFC 6675 4 IsLost by bytes: one range of exactly 2 SMSS above a hole is
 * not enough ("more than"), one byte more is. */
static void test_sb_lost_by_bytes(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 5);
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(1), S(3) } }));
	assert_int_equal(info_of(t).sacked, 2 * MSS);
	assert_false(tcp_sb_is_lost(&t->conn->sb, t->our_isn + S(0), MSS));
	assert_int_equal(info_of(t).lost, 0);
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(1), S(3) + 1 } }));
	assert_int_equal(t->conn->sb.n, 1);
	assert_true(tcp_sb_is_lost(&t->conn->sb, t->our_isn + S(0), MSS));
	assert_int_equal(info_of(t).lost, MSS);
	EXPECT(t, SEG(.seq = S(0), .len = MSS)); /* IsLost(S0): recovery */
	/* A second hole above: [S3+1, S4) has 1460 bytes above it, not lost;
	 * with nothing new to send NextSeg rule 3 resends it. */
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(4), S(5) } }));
	assert_int_equal(info_of(t).sacked, 3 * MSS + 1);
	assert_int_equal(info_of(t).lost, MSS);
	EXPECT(t, SEG(.seq = S(3) + 1, .len = MSS - 1));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rec_rxt_unsacked), 1);
	INJECT(t, SEG(.ack = S(5)));
	FINISH(t, 1);
}

/* Pruning at SND.UNA: a range the cumulative ACK passes goes, the ones
 * above stay; an ACK to a range's end removes it. */
static void test_sb_pruned_at_snd_una(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 7);
	INJECT(t, SEG(.ack = S(0), .nsack = 2, .sack = { { S(4), S(6) }, { S(2), S(3) } }));
	assert_int_equal(info_of(t).sacked, 3 * MSS);
	/* IsLost(S0) (4380 bytes SACKed above): recovery.  PRR: pipe 2920 <
	 * ssthresh 7154, sndcnt = min(7154 - 2920, 4380) = 4234: the lost
	 * hole S0, S1 (rule 1), then the unSACKed S3 (rule 3). */
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT(t, SEG(.seq = S(1), .len = MSS));
	EXPECT(t, SEG(.seq = S(3), .len = MSS));
	INJECT(t, SEG(.ack = S(3), .nsack = 1, .sack = { { S(4), S(6) } }));
	/* Partial ACK, nothing below the highest SACK left: the rescue
	 * retransmission of the tail (rule 4). */
	EXPECT(t, SEG(.seq = S(6), .len = MSS));
	assert_int_equal(t->conn->sb.n, 1);
	assert_range(t, 0, S(4), S(6));
	assert_int_equal(info_of(t).sacked, 2 * MSS);
	assert_int_equal(t->conn->sb.reneged, 0);
	INJECT(t, SEG(.ack = S(6)));
	assert_int_equal(t->conn->sb.n, 0);
	assert_int_equal(info_of(t).sacked, 0);
	assert_int_equal(t->conn->sb.reneged, 0);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.ack = S(7)));
	FINISH(t, 1);
}

/* RFC 2018 8: the cumulative ACK stops at the start of SACKed data, so the
 * receiver dropped it.  The scoreboard is rebuilt from this ACK, and the
 * data, never released, is retransmitted by the RTO from SND.UNA. */
static void test_sb_reneging_detected_data_retransmitted(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 4);
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(2), S(4) } }));
	assert_int_equal(info_of(t).sacked, 2 * MSS);
	INJECT(t, SEG(.ack = S(2), .nsack = 1, .sack = { { S(3), S(4) } }));
	assert_int_equal(t->conn->sb.reneged, 1);
	assert_int_equal(STAT(t, sack_reneged), 1);
	assert_int_equal(info_of(t).sacked, MSS); /* only what this ACK says */
	assert_int_equal(t->conn->sndq.bytes, 2 * MSS); /* SACKed data still held */
	EXPECT_NOTHING(t);
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = S(2), .len = MSS)); /* go-back-N from SND.UNA */
	INJECT(t, SEG(.ack = S(4)));
	assert_int_equal(info_of(t).sacked, 0);
	assert_int_equal(t->conn->sndq.bytes, 0);
	FINISH(t, 1);
}

/* A later ACK that omits a block is no renege (RFC 2018 4: receivers
 * repeat only recent blocks): the range stays.  After the RTO the
 * scoreboard is cleared (RFC 2018 5) and rebuilt from later ACKs only. */
static void test_sb_omitted_block_kept_until_rto(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 4);
	INJECT(t, SEG(.ack = S(0), .nsack = 2, .sack = { { S(3), S(4) }, { S(1), S(2) } }));
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(3), S(4) } }));
	assert_int_equal(info_of(t).sacked, 2 * MSS);
	EXPECT_NOTHING(t);
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = S(0), .len = MSS)); /* SACKed data is not skipped */
	assert_int_equal(info_of(t).sacked, 0);
	assert_int_equal(info_of(t).lost, 0);
	INJECT(t, SEG(.ack = S(1), .nsack = 1, .sack = { { S(3), S(4) } }));
	assert_int_equal(t->conn->sb.rto_cleared, 1);
	assert_int_equal(STAT(t, sack_rto_cleared), 1);
	assert_int_equal(info_of(t).sacked, MSS);
	assert_int_equal(t->conn->sb.reneged, 0);
	/* Go-back-N goes on from S1 (cwnd 2 segments now), SACKed S3 too. */
	EXPECT(t, SEG(.seq = S(1), .len = MSS));
	EXPECT(t, SEG(.seq = S(2), .len = MSS));
	INJECT(t, SEG(.ack = S(4)));
	assert_int_equal(info_of(t).sacked, 0);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* RFC 2883 4: a first block below the cumulative ACK, or inside the second
 * block, is a D-SACK: counted, not merged.  A later block beyond SND.MAX is
 * ignored and counted. */
static void test_sb_dsack_recognised_and_counted(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 5);
	INJECT(t, SEG(.ack = S(2)));
	INJECT(t, SEG(.ack = S(2), .nsack = 1, .sack = { { S(0), S(1) } }));
	assert_int_equal(t->conn->sb.dsack_rcvd, 1);
	assert_int_equal(info_of(t).sacked, 0);
	INJECT(t, SEG(.ack = S(2), .nsack = 2, .sack = { { S(3), S(3) + 100 }, { S(3), S(4) } }));
	assert_int_equal(t->conn->sb.dsack_rcvd, 2);
	assert_int_equal(info_of(t).sacked, MSS);
	/* Not first: no D-SACK, just out of bounds. */
	INJECT(t, SEG(.ack = S(2), .nsack = 2, .sack = { { S(3), S(4) }, { S(4), S(5) + 5000 } }));
	assert_int_equal(t->conn->sb.dsack_rcvd, 2);
	assert_int_equal(t->conn->sb.invalid, 1);
	assert_int_equal(STAT(t, dsack_rcvd), 2);
	assert_int_equal(STAT(t, sack_invalid), 1);
	assert_int_equal(info_of(t).sacked, MSS);
	EXPECT(t, SEG(.seq = S(2), .len = MSS)); /* 3rd dup ACK: fast retransmit */
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.ack = S(5)));
	FINISH(t, 1);
}

/* RFC 6675 4 SetPipe: outstanding bytes less SACKed and lost ones; after
 * the RTO the retransmitted octets below HighRxt count again. */
static void test_sb_pipe(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);

	send_segs(t, 8);
	assert_int_equal(tcp_sb_conn_pipe(t->conn), 8 * MSS);
	/* Holes: [S0,S2) three ranges above: lost; [S3,S4) exactly 2 SMSS
	 * above: not lost; [S5,S6) and [S7,S8): in flight. */
	INJECT(t, SEG(.ack = S(0), .nsack = 3,
		      .sack = { { S(6), S(7) }, { S(4), S(5) }, { S(2), S(3) } }));
	assert_int_equal(info_of(t).sacked, 3 * MSS);
	assert_int_equal(info_of(t).lost, 2 * MSS);
	/* IsLost(S0): recovery with pipe 3 SMSS; PRR sends min(ssthresh 8176 -
	 * 4380, 4380) = 3796 bytes: S0, S1 (lost) and S3 (rule 3).  SetPipe
	 * then counts the two lost ones once (retransmitted) and S3 twice (not
	 * lost, and below HighRxt): 3 + 3 SMSS. */
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT(t, SEG(.seq = S(1), .len = MSS));
	EXPECT(t, SEG(.seq = S(3), .len = MSS));
	assert_int_equal(tcp_sb_conn_pipe(t->conn), 6 * MSS);
	EXPECT_NOTHING(t);
	ADVANCE(t, 200); /* the RTO abandons the episode */
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	assert_int_equal(STAT(t, recovery_rto), 1);
	/* Cleared by the RTO; [S0, S1) was sent twice. */
	assert_int_equal(tcp_sb_conn_pipe(t->conn), 9 * MSS);
	INJECT(t, SEG(.ack = S(0), .nsack = 3,
		      .sack = { { S(6), S(7) }, { S(4), S(5) }, { S(2), S(3) } }));
	assert_int_equal(tcp_sb_conn_pipe(t->conn), 3 * MSS + MSS);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.ack = S(8)));
	assert_int_equal(tcp_sb_conn_pipe(t->conn), 0);
	FINISH(t, 1);
}

/* The range array is bounded: past TCP_SB_MAX_RANGES the lowest range is
 * forgotten (counted), and a block below all of them is not kept. */
static void test_sb_overflow_keeps_highest(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);
	const unsigned nblk = TCP_SB_MAX_RANGES + 2;

	send_segs(t, 10);
	for (unsigned i = 1; i <= nblk; i++)
		INJECT(t, SEG(.ack = S(0), .nsack = 1,
			      .sack = { { S(0) + 200 * i, S(0) + 200 * i + 10 } }));
	assert_int_equal(t->conn->sb.n, TCP_SB_MAX_RANGES);
	assert_int_equal(t->conn->sb.overflows, 2);
	assert_int_equal(STAT(t, sack_overflow), 2);
	assert_range(t, 0, S(0) + 600, S(0) + 610);
	assert_range(t, TCP_SB_MAX_RANGES - 1, S(0) + 200 * nblk, S(0) + 200 * nblk + 10);
	assert_int_equal(info_of(t).sacked, TCP_SB_MAX_RANGES * 10);
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(0) + 100, S(0) + 110 } }));
	assert_int_equal(t->conn->sb.overflows, 3);
	assert_range(t, 0, S(0) + 600, S(0) + 610);
	assert_int_equal(info_of(t).sacked, TCP_SB_MAX_RANGES * 10);
	/* Merging frees slots: a block over the lowest eight ranges. */
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(0) + 600, S(0) + 2010 } }));
	assert_int_equal(t->conn->sb.n, TCP_SB_MAX_RANGES - 7);
	assert_int_equal(info_of(t).sacked, 1410 + (TCP_SB_MAX_RANGES - 8) * 10);
	/* The 3rd ACK's three ranges made S0 lost (RFC 6675 IsLost by count):
	 * recovery began with the hole [S0, S0+200), cut at the first SACKed
	 * range; the later ACKs' budgets went to further holes, every one a
	 * retransmission counted by a NextSeg rule (which holes is test_prr.c's
	 * subject). */
	EXPECT(t, SEG(.seq = S(0), .len = 200));
	while (t->ncap > 0) {
		struct rte_mbuf *m = EXPECT_KEEP(t, SEG(.flags = TH_ACK));

		rte_pktmbuf_free(m);
	}
	assert_int_equal(STAT(t, retrans_segs), STAT(t, rec_rxt_lost) + STAT(t, rec_rxt_unsacked) +
						     STAT(t, rec_rescue));
	assert_int_equal(STAT(t, rec_new_data), 0);
	INJECT(t, SEG(.ack = S(10)));
	assert_int_equal(t->conn->sb.n, 0);
	FINISH(t, 1);
}

/* Without SACK-permitted the peer's blocks are ignored. */
static void test_sb_ignored_without_sack_permitted(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, false);

	send_segs(t, 3);
	INJECT(t, SEG(.ack = S(0), .nsack = 1, .sack = { { S(1), S(3) } }));
	assert_int_equal(info_of(t).sacked, 0);
	assert_int_equal(t->conn->sb.n, 0);
	INJECT(t, SEG(.ack = S(3)));
	FINISH(t, 1);
}

/* tcp_conn_info after a known exchange: sacked and lost, and a delivery
 * rate that counts SACKed bytes once (not again when cumulatively ACKed).
 * SRTT is 1.25 ms after one 10 ms sample (RFC 6298 2.3 from 0), so every
 * 10 ms between ACKs closes an interval. */
static void test_info_sacked_lost_and_rate_with_sack(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(0, true);
	struct tcp_conn_info info;

	send_segs(t, 6);
	ADVANCE(t, 10);
	INJECT(t, SEG(.ack = S(1))); /* opens the first interval */
	assert_int_equal(info_of(t).srtt_us, 1250);
	assert_int_equal(info_of(t).delivery_rate, 0);
	ADVANCE(t, 10);
	INJECT(t, SEG(.ack = S(1), .nsack = 1, .sack = { { S(3), S(6) } }));
	info = info_of(t);
	assert_int_equal(info.sacked, 3 * MSS);
	assert_int_equal(info.lost, 2 * MSS); /* [S1, S3): 3 SMSS SACKed above */
	assert_int_equal(info.delivery_rate, 3 * MSS * 100); /* 4380 B in 10 ms */
	/* IsLost(S1): recovery resends the lost hole [S1, S3). */
	EXPECT(t, SEG(.seq = S(1), .len = MSS));
	EXPECT(t, SEG(.seq = S(2), .len = MSS));
	ADVANCE(t, 10);
	INJECT(t, SEG(.ack = S(6)));
	info = info_of(t);
	assert_int_equal(info.sacked, 0);
	assert_int_equal(info.lost, 0);
	assert_int_equal(info.delivery_rate, 2 * MSS * 100); /* only [S1, S3) is new */
	assert_int_equal(info.bytes_acked, 6 * MSS);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* 10 segments cumulatively ACKed, one every 10 ms, over 100 ms with SRTT
 * 100 ms: exactly 14600 B / 0.1 s.  The rate is 0 until the interval,
 * which starts at the first ACK, is one SRTT long. */
static void test_info_delivery_rate_exact(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(100, false);
	unsigned sent = 10;

	assert_int_equal(info_of(t).srtt_us, 100000); /* RFC 6298 2.2 */
	assert_int_equal(pkt_app_send(t, 20 * MSS), 20 * MSS);
	for (unsigned k = 0; k < 10; k++)
		EXPECT(t, SEG(.seq = S(k), .len = MSS));
	for (unsigned k = 1; k <= 11; k++) {
		ADVANCE(t, k == 1 ? 100 : 10);
		assert_int_equal(info_of(t).delivery_rate, 0);
		INJECT(t, SEG(.ack = S(k)));
		/* Slow start: each ACK of one segment lets two more go. */
		for (unsigned j = 0; j < 2 && sent < 20; j++, sent++)
			EXPECT(t, SEG(.seq = S(sent), .len = MSS));
	}
	assert_int_equal(info_of(t).srtt_us, 100000); /* both samples 100 ms */
	assert_int_equal(info_of(t).delivery_rate, 10 * MSS * 10);
	/* The last ACK ends the next interval early (nothing in flight): too
	 * short to count, the rate stays. */
	INJECT(t, SEG(.ack = S(20)));
	assert_int_equal(info_of(t).delivery_rate, 10 * MSS * 10);
	assert_int_equal(info_of(t).sacked, 0);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_sb_blocks_merged_across_acks),
		PKT_TEST(test_sb_holes_lost_by_count),
		PKT_TEST(test_sb_lost_by_bytes),
		PKT_TEST(test_sb_pruned_at_snd_una),
		PKT_TEST(test_sb_reneging_detected_data_retransmitted),
		PKT_TEST(test_sb_omitted_block_kept_until_rto),
		PKT_TEST(test_sb_dsack_recognised_and_counted),
		PKT_TEST(test_sb_pipe),
		PKT_TEST(test_sb_overflow_keeps_highest),
		PKT_TEST(test_sb_ignored_without_sack_permitted),
		PKT_TEST(test_info_sacked_lost_and_rate_with_sack),
		PKT_TEST(test_info_delivery_rate_exact),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
