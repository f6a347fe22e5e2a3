/* Packet scripts: small payloads are copied into the header mbuf
 * (tcp/output.c TCP_TX_COPY_MAX = 512), bigger ones reference the send
 * queue (indirect mbufs).  The harness checks every segment's checksum and
 * payload bytes; these check the mbuf shape and that the queue's buffers are
 * not referenced by a copied segment, retransmission included. */
#include "tests/pkt/harness.h"

static void nodelay(struct pkt_t *t)
{
	t->conn->nodelay_set = true;
	t->conn->nodelay = true;
}

/* 512 bytes: one contiguous mbuf; the queue's mbuf keeps refcount 1 and the
 * RTO's retransmission is a copy too. */
static void test_small_segment_is_one_mbuf(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct rte_mbuf *first, *again;

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 512), 512);
	first = EXPECT_KEEP(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 512));
	assert_int_equal(first->nb_segs, 1);
	assert_false(RTE_MBUF_CLONED(first));
	assert_int_equal(rte_mbuf_refcnt_read(t->conn->sndq.head), 1);
	ADVANCE(t, 200);
	again = EXPECT_KEEP(t, SEG(.seq = 1, .len = 512));
	assert_int_equal(again->nb_segs, 1);
	rte_pktmbuf_free(first);
	rte_pktmbuf_free(again);
	assert_int_equal(rte_mempool_in_use_count(t->pool), 1); /* the queue's */
	INJECT(t, SEG(.seq = 1001, .ack = 513));
	assert_int_equal(rte_mempool_in_use_count(t->pool), 0);
	FINISH(t, 1);
}

/* 513 bytes: header mbuf plus an indirect mbuf on the queue's buffer. */
static void test_larger_segment_references_queue(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct rte_mbuf *seg;

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 513), 513);
	seg = EXPECT_KEEP(t, SEG(.seq = 1, .len = 513));
	assert_int_equal(seg->nb_segs, 2);
	assert_true(RTE_MBUF_CLONED(seg->next));
	assert_ptr_equal(rte_mbuf_from_indirect(seg->next), t->conn->sndq.head);
	rte_pktmbuf_free(seg);
	INJECT(t, SEG(.seq = 1001, .ack = 514));
	FINISH(t, 1);
}

/* A small segment whose bytes span two queue mbufs is copied from both:
 * 2,000 bytes (1460 + 540 on the wire), then 300 with NODELAY land in the
 * tail's remaining room and a fresh mbuf. */
static void test_copy_spans_queue_mbufs(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct rte_mbuf *seg;
	uint32_t room;

	ESTABLISH(t);
	nodelay(t);
	assert_int_equal(pkt_app_send(t, 2000), 2000);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 540));
	room = rte_pktmbuf_tailroom(t->conn->sndq.tail);
	assert_true(room > 0 && room < 300); /* else this test does not span */
	assert_int_equal(pkt_app_send(t, 300), 300);
	assert_ptr_not_equal(t->conn->sndq.head, t->conn->sndq.tail);
	seg = EXPECT_KEEP(t, SEG(.seq = 2001, .len = 300));
	assert_int_equal(seg->nb_segs, 1);
	rte_pktmbuf_free(seg);
	INJECT(t, SEG(.seq = 1001, .ack = 2301));
	FINISH(t, 1);
}

/* The send queue is searched from where the last segment ended (its
 * cursor): ACKs that trim the queue's first mbuf, then free it, move the
 * cursor's offset down, new data comes from the cursor and the RTO's
 * retransmission from the head; the harness checks every payload byte. */
static void test_seek_after_partial_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	nodelay(t);
	assert_int_equal(pkt_app_send(t, 4000), 4000);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	EXPECT(t, SEG(.seq = 2921, .len = 1080));
	assert_ptr_not_equal(t->conn->sndq.head, t->conn->sndq.tail);
	INJECT(t, SEG(.seq = 1001, .ack = 1001));
	assert_int_equal(pkt_app_send(t, 3000), 3000);
	EXPECT(t, SEG(.seq = 4001, .len = 1460));
	EXPECT(t, SEG(.seq = 5461, .len = 1460));
	EXPECT(t, SEG(.seq = 6921, .len = 80));
	INJECT(t, SEG(.seq = 1001, .ack = 3001));
	assert_int_equal(pkt_app_send(t, 3000), 3000);
	EXPECT(t, SEG(.seq = 7001, .len = 1460));
	EXPECT(t, SEG(.seq = 8461, .len = 1460));
	EXPECT(t, SEG(.seq = 9921, .len = 80));
	ADVANCE(t, 300);
	EXPECT(t, SEG(.seq = 3001, .len = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 10001));
	FINISH(t, 1);
}

/* A copied segment is summed flat (tcp_sum, one mbuf), whatever the queue
 * mbufs it was copied from: 2,001 bytes leave an odd room in the queue's
 * tail, so the next 300-byte segment is copied as an odd piece then the
 * rest; the harness checks the checksum of the segment and of its RTO
 * retransmission. */
static void test_copy_sum_spans_odd_split(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint32_t room;

	ESTABLISH(t);
	nodelay(t);
	assert_int_equal(pkt_app_send(t, 2001), 2001);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 541));
	room = rte_pktmbuf_tailroom(t->conn->sndq.tail);
	assert_true(room % 2 == 1 && room < 300); /* else this test does not split oddly */
	assert_int_equal(pkt_app_send(t, 300), 300);
	assert_ptr_not_equal(t->conn->sndq.head, t->conn->sndq.tail);
	EXPECT(t, SEG(.seq = 2002, .len = 300));
	INJECT(t, SEG(.seq = 1001, .ack = 2002));
	ADVANCE(t, 300);
	EXPECT(t, SEG(.seq = 2002, .len = 300));
	INJECT(t, SEG(.seq = 1001, .ack = 2302));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_small_segment_is_one_mbuf),
		PKT_TEST(test_larger_segment_references_queue),
		PKT_TEST(test_copy_spans_queue_mbufs),
		PKT_TEST(test_seek_after_partial_ack),
		PKT_TEST(test_copy_sum_spans_odd_split),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
