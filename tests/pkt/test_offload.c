/* Packet scripts: segmentation offload on TX (tcp_env.gso_max: full-sized
 * new data leaves as one segment of several MSS for the port to cut) and
 * the ACKs a segment coalesced on RX draws (one per 2 full-sized segments
 * inside it, as if its frames had come one by one).  The harness checks
 * every payload byte, and that a large segment is whole MSS pieces. */
#include "tests/pkt/harness.h"

/* The port cuts TCP over IPv4 only (stack/net/gso.c): over IPv6 the GSO
 * scripts are skipped, and test_no_gso_over_ipv6 holds tcp/ to it. */
static struct pkt_t *start_gso(void)
{
	struct pkt_t *t;

	if (pkt_family() == 6)
		skip();
	t = pkt_start(NULL);

	t->ts->env.gso_max = 65000;
	return t;
}

/* 10,000 bytes with NODELAY and the initial window of 10 MSS: six full
 * segments as one of 6 x 1460 marked for cutting, the 1,240-byte tail on
 * its own (as per-MSS output sends it). */
static void test_gso_full_segments_in_one(void **state)
{
	(void)state;
	struct pkt_t *t = start_gso();
	struct rte_mbuf *big;

	ESTABLISH(t);
	t->conn->nodelay_set = t->conn->nodelay = true;
	assert_int_equal(pkt_app_send(t, 10000), 10000);
	big = EXPECT_KEEP(t, SEG(.flags = TH_ACK, .seq = 1, .len = 6 * 1460));
	assert_true(big->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	assert_int_equal(big->tso_segsz, 1460);
	rte_pktmbuf_free(big);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 8761, .len = 1240));
	assert_int_equal(STAT(t, tx_gso_segs), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 10001));
	FINISH(t, 1);
}

/* Retransmissions stay one MSS: the RTO resends the first segment alone,
 * and after a duplicate ACK new data goes per MSS again. */
static void test_gso_retransmission_is_one_mss(void **state)
{
	(void)state;
	struct pkt_t *t = start_gso();

	ESTABLISH(t);
	t->conn->nodelay_set = t->conn->nodelay = true;
	assert_int_equal(pkt_app_send(t, 4 * 1460), 4 * 1460);
	EXPECT(t, SEG(.seq = 1, .len = 4 * 1460));
	ADVANCE(t, 300);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 4 * 1460 + 1));
	FINISH(t, 1);
}

/* Without gso_max every segment is at most one MSS, as before. */
static void test_no_gso_per_mss(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	t->conn->nodelay_set = t->conn->nodelay = true;
	assert_int_equal(pkt_app_send(t, 2 * 1460), 2 * 1460);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 2921));
	FINISH(t, 1);
}

/* A coalesced segment of 5 MSS: ACKs at 2 and 4 MSS inside it, then the
 * one at its end. */
/* Over IPv6, segmentation offload on the port changes nothing: every
 * segment is one MSS (a segment of several would be too big for the path,
 * never cut). */
static void test_no_gso_over_ipv6(void **state)
{
	(void)state;
	struct pkt_t *t;

	if (pkt_family() != 6)
		skip();
	t = pkt_start(NULL);
	t->ts->env.gso_max = 65000;
	ESTABLISH(t);
	t->conn->nodelay_set = t->conn->nodelay = true;
	assert_int_equal(pkt_app_send(t, 3000), 3000);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1461, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 2921, .len = 80));
	assert_int_equal(STAT(t, tx_gso_segs), 0);
	INJECT(t, SEG(.seq = 1001, .ack = 3001));
	FINISH(t, 1);
}

static void test_coalesced_segment_acked_every_two(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	t->auto_read = true;
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 5 * 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + 2 * 1460, .len = 0));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + 4 * 1460, .len = 0));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + 5 * 1460, .len = 0));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rx_coalesced_segs), 1);
	assert_int_equal(STAT(t, acks_in_coalesced), 2);
	FINISH(t, 1);
}

/* One full segment already unacknowledged: the first ACK comes one MSS
 * into the coalesced segment. */
static void test_coalesced_counts_what_came_before(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	t->auto_read = true;
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 1460));
	EXPECT_NOTHING(t); /* delayed: one segment */
	INJECT(t, SEG(.seq = 2461, .ack = 1, .len = 3 * 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 2461 + 1460, .len = 0));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 2461 + 3 * 1460, .len = 0));
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_gso_full_segments_in_one),
		PKT_TEST(test_gso_retransmission_is_one_mss),
		PKT_TEST(test_no_gso_per_mss),
		PKT_TEST(test_no_gso_over_ipv6),
		PKT_TEST(test_coalesced_segment_acked_every_two),
		PKT_TEST(test_coalesced_counts_what_came_before),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
