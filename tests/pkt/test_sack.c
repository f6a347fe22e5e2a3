/* Packet scripts: the out-of-order queue (tcp/reass.c), immediate ACKs
 * (RFC 5681 4.2), SACK blocks (RFC 2018 4) and D-SACK (RFC 2883). */
#include "tests/pkt/harness.h"

/* Passive open with SACK-permitted (and timestamps when ts). */
static struct pkt_t *start_sack(bool ts)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = ts;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	if (ts)
		INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .sack_perm = 1,
			      .ts_val = 10));
	else
		INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .sack_perm = 1));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .sack_perm = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = ts ? 11 : PKT_ANY));
	assert_non_null(t->conn);
	return t;
}

/* RFC 9293 3.10.7.4: segments beyond RCV.NXT are held and delivered in
 * order once the hole fills; RFC 5681 4.2: ACKs at once both times. */
static void test_ooo_queue_fills_and_delivers_in_order(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 3001, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001, .nsack = 0));
	INJECT(t, SEG(.seq = 2001, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001));
	assert_int_equal(t->n_readable, 0);
	assert_int_equal(STAT(t, ooo_queued), 2);
	INJECT(t, SEG(.seq = 1001, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 4001));
	APP_READ(t);
	assert_int_equal(t->rx_len, 3000); /* the harness checks every byte */
	assert_int_equal(STAT(t, rx_bytes), 3000);
	FINISH(t, 1);
}

/* Overlapping out-of-order pieces are trimmed, not stored twice, and the
 * bytes come out exactly once. */
static void test_ooo_overlaps_trimmed_and_merged(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(false);

	INJECT(t, SEG(.seq = 2001, .len = 200));
	EXPECT(t, SEG(.ack = 1001, .nsack = 1, .sack = { { 2001, 2201 } }));
	INJECT(t, SEG(.seq = 2101, .len = 200));
	/* RFC 2883 4.1.3: D-SACK for the overlap, then the merged block. */
	EXPECT(t, SEG(.ack = 1001, .nsack = 2, .sack = { { 2101, 2201 }, { 2001, 2301 } }));
	INJECT(t, SEG(.seq = 1901, .len = 500)); /* covers both */
	EXPECT(t, SEG(.ack = 1001, .nsack = 2, .sack = { { 2001, 2301 }, { 1901, 2401 } }));
	assert_int_equal(t->conn->ooo.bytes, 500);
	INJECT(t, SEG(.seq = 1001, .len = 1000));
	EXPECT(t, SEG(.ack = 2401, .nsack = 0));
	APP_READ(t);
	assert_int_equal(t->rx_len, 1400);
	FINISH(t, 1);
}

/* RFC 2018 4: the first block holds the most recently received segment,
 * the others follow in the order they were last reported. */
static void test_sack_blocks_several_holes_most_recent_first(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(false);

	INJECT(t, SEG(.seq = 3001, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 1, .sack = { { 3001, 3101 } }));
	INJECT(t, SEG(.seq = 5001, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 2, .sack = { { 5001, 5101 }, { 3001, 3101 } }));
	INJECT(t, SEG(.seq = 7001, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 3,
		      .sack = { { 7001, 7101 }, { 5001, 5101 }, { 3001, 3101 } }));
	/* Extending the oldest block makes it the newest. */
	INJECT(t, SEG(.seq = 3101, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 3,
		      .sack = { { 3001, 3201 }, { 7001, 7101 }, { 5001, 5101 } }));
	/* Filling the first hole delivers 1001..3201 and drops that block. */
	INJECT(t, SEG(.seq = 1001, .len = 2000));
	EXPECT(t, SEG(.ack = 3201, .nsack = 2, .sack = { { 7001, 7101 }, { 5001, 5101 } }));
	FINISH(t, 1);
}

/* RFC 2018 3: four blocks fit without timestamps, three with them. */
static void test_sack_at_most_four_blocks_without_timestamps(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(false);

	for (unsigned i = 0; i < 5; i++) {
		INJECT(t, SEG(.seq = 2001 + i * 200, .len = 100));
		EXPECT(t, SEG(.ack = 1001, .nsack = (int32_t)(i < 4 ? i + 1 : 4)));
	}
	FINISH(t, 1);
}

static void test_sack_at_most_three_blocks_with_timestamps(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(true);

	for (unsigned i = 0; i < 5; i++) {
		INJECT(t, SEG(.seq = 2001 + i * 200, .len = 100, .ts_val = 20));
		EXPECT(t, SEG(.ack = 1001, .ts_ecr = 11, .nsack = (int32_t)(i < 3 ? i + 1 : 3),
			      .sack = { { 2001 + i * 200, 2101 + i * 200 } }));
	}
	FINISH(t, 1);
}

/* RFC 2883 4.1.1: a duplicate below RCV.NXT is ACKed at once with a D-SACK
 * block naming it. */
static void test_dsack_for_duplicate_below_rcv_nxt(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(false);

	INJECT(t, SEG(.seq = 1001, .len = 100));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1101, .nsack = 0));
	INJECT(t, SEG(.seq = 1001, .len = 100));
	EXPECT(t, SEG(.ack = 1101, .nsack = 1, .sack = { { 1001, 1101 } }));
	assert_int_equal(STAT(t, drop_dup_data), 1);
	/* Reported once only. */
	INJECT(t, SEG(.seq = 1101, .len = 100));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1201, .nsack = 0));
	FINISH(t, 1);
}

/* RFC 2883 4.1.2: a duplicate of queued out-of-order data: the D-SACK
 * block, then the SACK block holding it. */
static void test_dsack_for_duplicate_ooo_data(void **state)
{
	(void)state;
	struct pkt_t *t = start_sack(false);

	INJECT(t, SEG(.seq = 2001, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 1, .sack = { { 2001, 2101 } }));
	INJECT(t, SEG(.seq = 2001, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 2, .sack = { { 2001, 2101 }, { 2001, 2101 } }));
	assert_int_equal(STAT(t, drop_ooo_dup), 1);
	FINISH(t, 1);
}

/* Without SACK-permitted no SACK option is ever sent. */
static void test_sack_not_sent_without_permission(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 2001, .len = 100));
	EXPECT(t, SEG(.ack = 1001, .nsack = 0));
	INJECT(t, SEG(.seq = 1001, .len = 100)); /* below RCV.NXT later: no D-SACK */
	EXPECT(t, SEG(.ack = 1101, .nsack = 0));
	INJECT(t, SEG(.seq = 1001, .len = 100));
	EXPECT(t, SEG(.ack = 1101, .nsack = 0));
	FINISH(t, 1);
}

/* The queue is bounded: past TCP_REASS_MAX_SEGS pieces a segment is
 * dropped and counted; everything queued is freed with the connection. */
static void test_ooo_memory_bound(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	for (unsigned i = 0; i <= TCP_REASS_MAX_SEGS; i++) {
		INJECT(t, SEG(.seq = 1003 + 2 * i, .len = 1));
		EXPECT(t, SEG(.ack = 1001));
	}
	assert_int_equal(t->conn->ooo_segs, TCP_REASS_MAX_SEGS);
	assert_int_equal(STAT(t, drop_ooo_mem), 1);
	assert_int_equal(STAT(t, ooo_queued), TCP_REASS_MAX_SEGS + 1);
	FINISH(t, 1);
}

/* A FIN held out of order takes effect when the data before it arrives. */
static void test_ooo_fin_processed_when_hole_fills(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 2001, .len = 100));
	EXPECT(t, SEG(.ack = 1001));
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
	INJECT(t, SEG(.seq = 1001, .len = 1000));
	EXPECT(t, SEG(.ack = 2102));
	assert_int_equal(t->conn->state, TCP_CLOSE_WAIT);
	APP_READ(t);
	assert_int_equal(t->rx_len, 1100);
	assert_true(t->eof);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_ooo_queue_fills_and_delivers_in_order),
		PKT_TEST(test_ooo_overlaps_trimmed_and_merged),
		PKT_TEST(test_sack_blocks_several_holes_most_recent_first),
		PKT_TEST(test_sack_at_most_four_blocks_without_timestamps),
		PKT_TEST(test_sack_at_most_three_blocks_with_timestamps),
		PKT_TEST(test_dsack_for_duplicate_below_rcv_nxt),
		PKT_TEST(test_dsack_for_duplicate_ooo_data),
		PKT_TEST(test_sack_not_sent_without_permission),
		PKT_TEST(test_ooo_memory_bound),
		PKT_TEST(test_ooo_fin_processed_when_hole_fills),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
