/* Packet scripts: quick ACK off (tcp_set_quickack, US_TCP_QUICKACK 0).
 * The ACK completing an active open and the ACK of the peer's FIN in
 * ESTABLISHED wait one engine iteration (1 ns of the wheel's time), so the
 * application's request and close carry them: a client of one request per
 * connection sends SYN, ACK + request, FIN + ACK (3 segments, not 5).
 * RFC 9293 3.8.6.3 (RFC 1122 4.2.3.2) allows delaying an ACK < 0.5 s;
 * RFC 9293 3.10.7.3 lets queued data ride on the handshake's ACK. */
#include <string.h>

#include "tests/pkt/harness.h"

static struct tcp_conn *qa_connect(struct pkt_t *t)
{
	struct tcp_conn *c = NULL;

	t->local_port = 0; /* learnt from our SYN */
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	assert_non_null(c);
	assert_int_equal(tcp_set_quickack(c, false), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .mss = 1460));
	return c;
}

/* The client of the close workload: request on the handshake's ACK, the
 * response and FIN acknowledged by our FIN. */
static void test_quickack_off_request_and_close_carry_acks(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = qa_connect(t);

	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT_NOTHING(t); /* the ACK is held */
	assert_int_equal(t->n_connected, 1);
	assert_int_equal(STAT(t, acks_held), 1);
	assert_int_equal(pkt_app_send(t, 60), 60);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 5001, .len = 60));
	ADVANCE(t, 1);
	EXPECT_NOTHING(t); /* the held ACK left with the request */
	/* Response and FIN in one segment: nothing until we close. */
	INJECT(t, SEG(.flags = TH_ACK | TH_PSH | TH_FIN, .seq = 5001, .ack = 61, .len = 40));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, acks_held), 2);
	APP_READ(t);
	assert_int_equal(t->rx_len, 40);
	assert_int_equal(tcp_close(c), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 61, .ack = 5042, .len = 0));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5042, .ack = 62));
	assert_int_equal(STAT(t, delayed_acks), 0);
	assert_int_equal(STAT(t, tx_segs), 3);
	FINISH(t, 0);
}

/* An application that does not answer: each held ACK leaves alone one
 * iteration later, as a delayed ACK. */
static void test_quickack_off_silent_app_acks_next_iteration(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = qa_connect(t);

	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001, .len = 0));
	assert_int_equal(STAT(t, delayed_acks), 1);
	INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 5001, .ack = 1));
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5002, .len = 0));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, delayed_acks), 2);
	assert_int_equal(STAT(t, acks_held), 2);
	assert_int_equal(tcp_close(c), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 1, .ack = 5002));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5002, .ack = 2));
	FINISH(t, 0);
}

/* Only ESTABLISHED holds: a FIN after our own (FIN-WAIT) is acknowledged
 * at once, since no call of ours will follow to carry the ACK. */
static void test_quickack_off_fin_after_our_close_acked_at_once(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = qa_connect(t);

	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	assert_int_equal(tcp_close(c), 0); /* ACK and FIN together */
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 1, .ack = 5001));
	INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 5001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 5002)); /* TIME-WAIT */
	assert_int_equal(STAT(t, acks_held), 1);
	ADVANCE(t, 60000);
	FINISH(t, 0);
}

/* Quick ACK on again: the next FIN is acknowledged at once.  It comes
 * while the handshake's ACK is still held: our SYN's window admits it
 * (before, the window counted from RCV.NXT only once an ACK had left,
 * and the FIN was trimmed as beyond a zero window). */
static void test_quickack_back_on(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = qa_connect(t);

	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_set_quickack(c, true), 0);
	INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 5001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5002, .len = 0));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_rcvbuf_full), 0);
	assert_int_equal(STAT(t, acks_held), 1);
	assert_int_equal(tcp_close(c), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 1, .ack = 5002));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5002, .ack = 2));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_quickack_off_request_and_close_carry_acks),
		PKT_TEST(test_quickack_off_silent_app_acks_next_iteration),
		PKT_TEST(test_quickack_off_fin_after_our_close_acked_at_once),
		PKT_TEST(test_quickack_back_on),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
