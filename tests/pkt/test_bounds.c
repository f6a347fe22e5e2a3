/* Packet scripts: bounded memory per connection (receive queue and
 * out-of-order queue within the receive buffer) and per engine (max_conns),
 * every refusal counted. */
#include "tests/pkt/harness.h"

#include <errno.h>

#define RCVBUF 4096u

static struct pkt_t *start_small(uint32_t max_conns)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.rcvbuf = RCVBUF;
	cfg.max_conns = max_conns;
	return pkt_start(&cfg);
}

static uint32_t held(const struct pkt_t *t)
{
	return t->conn->rcvq.bytes + t->conn->ooo.bytes;
}

/* Unread in-order data fills the buffer; what goes past the window's right
 * edge is cut (counted), then refused whole once the window is closed
 * (counted as a full buffer at RCV.NXT, as unacceptable beyond it). */
static void test_receive_queue_bounded_by_rcvbuf(void **state)
{
	(void)state;
	struct pkt_t *t = start_small(16);

	ESTABLISH(t);
	for (uint32_t i = 0; i < 4; i++)
		INJECT(t, SEG(.seq = 1001 + 1000 * i, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 3001));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = RCVBUF - 4000));
	INJECT(t, SEG(.seq = 5001, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + RCVBUF, .win = 0));
	assert_int_equal(STAT(t, drop_window_trimmed), 1);
	assert_int_equal(held(t), RCVBUF);
	INJECT(t, SEG(.seq = 1001 + RCVBUF, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + RCVBUF, .win = 0));
	assert_int_equal(STAT(t, drop_rcvbuf_full), 1); /* at RCV.NXT, zero window */
	INJECT(t, SEG(.seq = 1101 + RCVBUF, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + RCVBUF, .win = 0));
	assert_int_equal(STAT(t, drop_unacceptable), 1); /* beyond it */
	assert_int_equal(held(t), RCVBUF);
	APP_READ(t);
	assert_int_equal(t->rx_len, RCVBUF);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1001 + RCVBUF, .win = RCVBUF));
	FINISH(t, 1);
}

/* Out-of-order data counts against the same buffer: in-order unread plus
 * queued out-of-order bytes never exceed it; beyond, cut and refused. */
static void test_ooo_queue_bounded_by_rcvbuf(void **state)
{
	(void)state;
	struct pkt_t *t = start_small(16);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 1000));
	INJECT(t, SEG(.seq = 2001, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 3001));
	INJECT(t, SEG(.seq = 4001, .len = 1400));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 3001));
	assert_int_equal(STAT(t, drop_window_trimmed), 1);
	assert_int_equal(t->conn->ooo.bytes, 1001 + RCVBUF - 4001);
	assert_true(held(t) <= RCVBUF);
	INJECT(t, SEG(.seq = 1001 + RCVBUF, .len = 500));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 3001));
	assert_int_equal(STAT(t, drop_unacceptable), 1);
	assert_true(held(t) <= RCVBUF);
	assert_int_equal(STAT(t, ooo_queued), 1);
	FINISH(t, 1);
}

/* max_conns bounds the engine: a further SYN is dropped without a reply
 * (counted) and an active open fails with ENOBUFS. */
static void test_max_conns_refuses_with_counter(void **state)
{
	(void)state;
	struct pkt_t *t = start_small(1);
	struct tcp_conn *c = NULL;

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .sport = 40001, .mss = 1460));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_no_tcb), 1);
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, 8080, &t->cb, t, &c), -ENOBUFS);
	assert_null(c);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_receive_queue_bounded_by_rcvbuf),
		PKT_TEST(test_ooo_queue_bounded_by_rcvbuf),
		PKT_TEST(test_max_conns_refuses_with_counter),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
