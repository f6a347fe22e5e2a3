/* Packet scripts: output asked for by application calls made from a
 * callback waits for the end of the segment's processing (tcp_output_soon,
 * tcp/output.c), so a request answered from on_readable goes out as one
 * segment: the ACK, every write and the FIN together (RFC 9293 3.7.4 and
 * 3.8.6.3 let a sender hold data and ACKs this briefly). */
#include <string.h>

#include "tests/pkt/harness.h"

/* What the handler below does with a readable connection. */
enum co_action { CO_RESPOND_CLOSE, CO_RESPOND_ABORT, CO_READ_ONLY };
static enum co_action co_action;

/* An HTTP-like server: reads the request, writes a header and a body
 * (two calls, TCP_NODELAY on), then FIN or RST. */
static void co_on_readable(void *ctx, struct tcp_conn *c)
{
	struct pkt_t *t = ctx;
	uint8_t buf[512];

	t->n_readable++;
	while (tcp_recv(c, buf, sizeof(buf)) > 0)
		;
	if (co_action == CO_READ_ONLY || t->n_readable > 1)
		return; /* one response; later calls: the peer's FIN */
	tcp_set_nodelay(c, true);
	assert_int_equal(pkt_app_send(t, 20), 20);
	assert_int_equal(pkt_app_send(t, 30), 30);
	if (co_action == CO_RESPOND_CLOSE) {
		assert_int_equal(tcp_shutdown_write(c), 0);
	} else {
		assert_int_equal(tcp_abort(c), 0);
		t->conn = NULL;
	}
}

static struct pkt_t *co_start(enum co_action a)
{
	struct pkt_t *t = pkt_start(NULL);

	co_action = a;
	t->cb.on_readable = co_on_readable;
	ESTABLISH(t);
	return t;
}

/* Request in, one segment out: ACK + 50 bytes (two writes) + FIN. */
static void test_response_from_callback_is_one_segment(void **state)
{
	(void)state;
	struct pkt_t *t = co_start(CO_RESPOND_CLOSE);

	INJECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1001, .ack = 1, .len = 59));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH | TH_FIN, .seq = 1, .ack = 1060, .len = 50));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_readable, 1);
	/* The peer acknowledges everything and closes: our last ACK. */
	INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 1060, .ack = 52));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 52, .ack = 1061, .len = 0));
	EXPECT_NOTHING(t);
	FINISH(t, 1); /* TIME-WAIT */
}

/* The same writes from outside any callback go at once, one segment each
 * (TCP_NODELAY): deferral applies only inside another entry point. */
static void test_writes_outside_callbacks_go_at_once(void **state)
{
	(void)state;
	struct pkt_t *t = co_start(CO_READ_ONLY);

	tcp_set_nodelay(t->conn, true);
	assert_int_equal(pkt_app_send(t, 20), 20);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 20));
	assert_int_equal(pkt_app_send(t, 30), 30);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 21, .len = 30));
	assert_int_equal(tcp_shutdown_write(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 51, .len = 0));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.flags = TH_ACK | TH_FIN, .seq = 1001, .ack = 52));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 52, .ack = 1002, .len = 0));
	FINISH(t, 1); /* TIME-WAIT */
}

/* Writes deferred, then the handler aborts: only the RST leaves (the
 * deferred output of a dropped TCB is skipped), and nothing leaks. */
static void test_deferred_output_of_aborted_conn_is_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = co_start(CO_RESPOND_ABORT);

	INJECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1001, .ack = 1, .len = 59));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	EXPECT_NOTHING(t);
	FINISH(t, 0);
}

/* Reading alone from the callback: the window update it owes (the SYN
 * offered 65535 unscaled, the scaled window is 256 KiB) still goes, once,
 * when the segment is done. */
static void test_window_update_from_callback_sent_once(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.sack = cfg.timestamps = false; /* window scaling on */
	t = pkt_start(&cfg);
	co_action = CO_READ_ONLY;
	t->cb.on_readable = co_on_readable;
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = 7));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .win = 65535));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_non_null(t->conn);
	INJECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1001, .ack = 1, .len = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .len = 0));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_readable, 1);
	assert_int_equal(tcp_abort(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_response_from_callback_is_one_segment),
		PKT_TEST(test_writes_outside_callbacks_go_at_once),
		PKT_TEST(test_deferred_output_of_aborted_conn_is_dropped),
		PKT_TEST(test_window_update_from_callback_sent_once),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
