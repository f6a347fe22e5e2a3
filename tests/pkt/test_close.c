/* Packet scripts: closing and resetting (RFC 9293 3.6, 3.10.4-5, 3.10.7.4). */
#include "tests/pkt/harness.h"

#include <errno.h>

#include "tcp/tcb.h"

static enum tcp_state state_of(struct tcp_conn *c)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(c, &info);
	return (enum tcp_state)info.state;
}

/* RFC 9293 3.6 case 2: the peer closes first: CLOSE-WAIT, our close sends
 * FIN (LAST-ACK), its ACK deletes the TCB. */
static void test_fin_from_peer_close_wait_last_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1002));
	assert_int_equal(state_of(c), TCP_CLOSE_WAIT);
	assert_int_equal(t->n_readable, 1);
	APP_READ(t);
	assert_true(t->eof);
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1002));
	assert_int_equal(tcp_conn_count(t->ts), 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 2));
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(t->n_closed, 0); /* the application closed it */
	FINISH(t, 0);
}

/* RFC 9293 3.6 case 1: we close first: FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT,
 * and the TCB goes after 2 MSL (time_wait_ms). */
static void test_active_close_fin_wait_time_wait_expiry(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.time_wait_ms = 5000;
	struct pkt_t *t = pkt_start(&cfg);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1001));
	assert_int_equal(state_of(c), TCP_FIN_WAIT_1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 2));
	assert_int_equal(state_of(c), TCP_FIN_WAIT_2);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	ADVANCE(t, 4999);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	ADVANCE(t, 1);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	EXPECT_NOTHING(t);
	FINISH(t, 0);
}

/* RFC 9293 3.6.1: a retransmitted FIN in TIME-WAIT is acknowledged again
 * and restarts the 2 MSL wait. */
static void test_time_wait_reacks_fin_and_restarts(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.time_wait_ms = 5000;
	struct pkt_t *t = pkt_start(&cfg);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	ADVANCE(t, 3000);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	ADVANCE(t, 4999);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	ADVANCE(t, 1);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

/* RFC 9293 3.6 case 3: both close at once: FIN-WAIT-1, CLOSING,
 * TIME-WAIT. */
static void test_simultaneous_close_closing(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1001));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_CLOSING);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 2));
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	FINISH(t, 1); /* TIME-WAIT still holds its TCB */
}

/* Half-close: after tcp_shutdown_write the peer may keep sending; when
 * its FIN comes, on_closed(0) tells the (not closed) application. */
static void test_half_close_peer_keeps_sending(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	t->auto_read = true;
	assert_int_equal(pkt_app_send(t, 10), 10);
	assert_int_equal(tcp_shutdown_write(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 10));
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 11));
	assert_int_equal(pkt_app_send(t, 10), -EPIPE);
	INJECT(t, SEG(.seq = 1001, .ack = 12));
	INJECT(t, SEG(.seq = 1001, .ack = 12, .len = 500));
	assert_int_equal(t->rx_len, 500);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1501, .ack = 12));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 12, .ack = 1502));
	assert_true(t->eof);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, 0);
	FINISH(t, 1); /* TIME-WAIT */
}

/* A FIN is retransmitted on timeout like data. */
static void test_fin_retransmitted_on_rto(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	ADVANCE(t, 200);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .len = 0));
	INJECT(t, SEG(.seq = 1001, .ack = 2));
	ADVANCE(t, 2000);
	EXPECT_NOTHING(t);
	FINISH(t, 1); /* FIN-WAIT-2, waiting (at most 2 MSL) for the peer */
}

/* RFC 9293 3.10.7.4 + RFC 5961 3.2: an RST exactly at RCV.NXT resets. */
static void test_rst_in_window_resets(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNRESET);
	assert_null(t->conn);
	assert_int_equal(STAT(t, resets_rcvd), 1);
	FINISH(t, 0);
}

/* RFC 5961 3.2: an in-window RST not at RCV.NXT only draws a challenge
 * ACK. */
static void test_rst_in_window_not_exact_gets_challenge_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001));
	assert_int_equal(t->n_closed, 0);
	assert_int_equal(STAT(t, challenge_acks), 1);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4: an RST outside the window is silently dropped. */
static void test_rst_out_of_window_ignored(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001 + 70000));
	INJECT(t, SEG(.flags = TH_RST, .seq = 999));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 0);
	assert_int_equal(STAT(t, drop_unacceptable), 2);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4 (fourth) / RFC 5961 4.2: SYN in ESTABLISHED. */
static void test_syn_in_established_gets_challenge_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1001, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001));
	assert_int_equal(STAT(t, drop_syn_in_window), 1);
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4: RST in SYN-RECEIVED from a passive open: the embryo
 * goes back to LISTEN (deleted), the application hears nothing. */
static void test_rst_in_syn_received_returns_to_listen(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(t->n_closed + t->n_accept, 0);
	/* The listener still works. */
	INJECT(t, SEG(.flags = TH_SYN, .seq = 3000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 3001));
	INJECT(t, SEG(.seq = 3001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	FINISH(t, 1);
}

/* RFC 9293 3.10.5: ABORT sends <SEQ=SND.NXT><CTL=RST> and frees at once;
 * queued data is dropped. */
static void test_abort_sends_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(tcp_abort(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_RST, .seq = 101));
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 0);
}

/* RFC 2525 2.17: closing with unread data resets instead of a FIN. */
static void test_close_with_unread_data_sends_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 10));
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

/* After tcp_close, new data can never be read: RST (like Linux). */
static void test_data_after_close_gets_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 2, .len = 10));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 2));
	assert_int_equal(STAT(t, drop_after_close), 1);
	FINISH(t, 0);
}

/* An orphan in FIN-WAIT-2 waits for the peer's FIN no longer than 2 MSL. */
static void test_orphan_fin_wait_2_times_out(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.time_wait_ms = 3000;
	struct pkt_t *t = pkt_start(&cfg);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 2));
	ADVANCE(t, 2999);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	ADVANCE(t, 1);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

/* Callbacks may close the connection from inside on_readable: the engine
 * finishes the segment first (deferred free), then sends the FIN. */
static void test_close_from_on_readable_callback(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	t->auto_read = true;
	t->close_on_eof = true;
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK | TH_PSH, .seq = 1001, .ack = 1, .len = 30));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1032));
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1032));
	assert_int_equal(t->rx_len, 30);
	INJECT(t, SEG(.seq = 1032, .ack = 2));
	FINISH(t, 0);
}

/* Shutdown (us_fini): a close still in progress when the drain ends is
 * cut short with <SEQ=SND.NXT><CTL=RST>, so the peer does not retransmit
 * its side for minutes; the TCB goes and exit_resets counts it. */
static void test_shutdown_resets_unfinished_close(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1001));
	assert_int_equal(tcp_reset_unfinished(t->ts), 1);
	EXPECT(t, SEG(.flags = TH_RST, .seq = 2));
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(STAT(t, exit_resets), 1);
	FINISH(t, 0);
}

/* TIME-WAIT has finished its close: shutdown sends nothing for it. */
static void test_shutdown_leaves_time_wait_alone(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1001));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(tcp_reset_unfinished(t->ts), 0);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	assert_int_equal(STAT(t, exit_resets), 0);
	FINISH(t, 1);
}

/* RFC 9293 3.10.4: a close in SYN-SENT deletes the TCB (no RST: nothing
 * is synchronized); the time is kept so that us_fini's drain waits for the
 * SYN-ACK, which the closed-port path answers with <SEQ=SEG.ACK><CTL=RST>
 * (RFC 9293 3.10.7.1), freeing the peer's half-open connection. */
static void test_close_in_syn_sent_then_synack_gets_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = NULL;

	t->local_port = 0; /* learnt from our SYN */
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	assert_int_equal(tcp_syn_sent_closed_ns(t->ts), 0);
	ADVANCE(t, 3);
	assert_int_equal(tcp_close(c), 0);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(STAT(t, closed_in_syn_sent), 1);
	assert_true(tcp_syn_sent_closed_ns(t->ts) > 0);
	assert_true(tcp_syn_sent_closed_ns(t->ts) == t->now);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_fin_from_peer_close_wait_last_ack),
		PKT_TEST(test_active_close_fin_wait_time_wait_expiry),
		PKT_TEST(test_time_wait_reacks_fin_and_restarts),
		PKT_TEST(test_simultaneous_close_closing),
		PKT_TEST(test_half_close_peer_keeps_sending),
		PKT_TEST(test_fin_retransmitted_on_rto),
		PKT_TEST(test_rst_in_window_resets),
		PKT_TEST(test_rst_in_window_not_exact_gets_challenge_ack),
		PKT_TEST(test_rst_out_of_window_ignored),
		PKT_TEST(test_syn_in_established_gets_challenge_ack),
		PKT_TEST(test_rst_in_syn_received_returns_to_listen),
		PKT_TEST(test_abort_sends_rst),
		PKT_TEST(test_close_with_unread_data_sends_rst),
		PKT_TEST(test_data_after_close_gets_rst),
		PKT_TEST(test_orphan_fin_wait_2_times_out),
		PKT_TEST(test_close_from_on_readable_callback),
		PKT_TEST(test_shutdown_resets_unfinished_close),
		PKT_TEST(test_shutdown_leaves_time_wait_alone),
		PKT_TEST(test_close_in_syn_sent_then_synack_gets_rst),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
