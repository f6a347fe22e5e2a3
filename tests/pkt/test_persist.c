/* Packet scripts: the zero-window persist timer (RFC 9293 3.8.6.1,
 * RFC 1122 4.2.2.17). */
#include "tests/pkt/harness.h"

#include <errno.h>

/* ESTABLISHED, then the peer closes its window and we have 100 bytes. */
static struct pkt_t *closed_window(const struct tcp_config *cfg)
{
	struct pkt_t *t = pkt_start(cfg);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT_NOTHING(t);
	return t;
}

/* RFC 1122 4.2.2.17: the first probe one RTO after the window closed; a
 * probe is one byte beyond the window, counted as a probe, not as a
 * retransmission. */
static void test_rfc9293_3_8_6_1_zero_window_probe_after_rto(void **state)
{
	(void)state;
	struct pkt_t *t = closed_window(NULL);
	struct tcp_conn_info info;

	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .len = 1));
	assert_int_equal(STAT(t, persist_probes), 1);
	assert_int_equal(STAT(t, retrans_segs), 0);
	assert_int_equal(STAT(t, rto_fired), 0);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.persist_probes, 1);
	assert_int_equal(info.probes, 1);
	assert_int_equal(info.snd_nxt - t->our_isn, 1); /* the byte is not "sent" */
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.probes, 0); /* answered */
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1000));
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	FINISH(t, 1);
}

/* RFC 1122 4.2.2.17: probe intervals double, bounded by rto_max. */
static void test_rfc1122_4_2_2_17_probe_backoff_doubles_and_caps(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.rto_max_ms = 1600;
	struct pkt_t *t = closed_window(&cfg);
	const uint32_t gaps[] = { 200, 400, 800, 1600, 1600, 1600 };

	for (unsigned i = 0; i < RTE_DIM(gaps); i++) {
		ADVANCE(t, gaps[i] - 1);
		EXPECT_NOTHING(t);
		ADVANCE(t, 1);
		EXPECT(t, SEG(.seq = 1, .len = 1));
		INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	}
	assert_int_equal(STAT(t, persist_probes), RTE_DIM(gaps));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 65535));
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.1: when the window opens, sending resumes at once and
 * the persist timer stops (no more probes, backoff reset). */
static void test_rfc9293_3_8_6_1_window_reopening_resumes_sending(void **state)
{
	(void)state;
	struct pkt_t *t = closed_window(NULL);

	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	ADVANCE(t, 400);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	/* The second probe's byte was taken: SND.UNA moves, window still 0. */
	INJECT(t, SEG(.seq = 1001, .ack = 2, .win = 0));
	ADVANCE(t, 799);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 2, .len = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 2, .win = 4000));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 2, .len = 99));
	INJECT(t, SEG(.seq = 1001, .ack = 101, .win = 4000));
	ADVANCE(t, 10000);
	EXPECT_NOTHING(t);
	/* A new closed window starts over from one RTO. */
	INJECT(t, SEG(.seq = 1001, .ack = 101, .win = 0));
	assert_int_equal(pkt_app_send(t, 10), 10);
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 101, .len = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 101, .win = 4000));
	EXPECT(t, SEG(.seq = 101, .len = 10));
	INJECT(t, SEG(.seq = 1001, .ack = 111, .win = 4000));
	FINISH(t, 1);
}

/* RFC 1122 4.2.2.17 (MUST): the connection stays open as long as the peer
 * answers the probes, far beyond data_retries probes. */
static void test_rfc1122_4_2_2_17_answered_probes_never_time_out(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.data_retries = 3;
	cfg.rto_max_ms = 1000;
	struct pkt_t *t = closed_window(&cfg);

	for (unsigned i = 0; i < 30; i++) {
		ADVANCE(t, RTE_MIN(200u << RTE_MIN(i, 8u), 1000u)); /* 200, 400, 800, 1000.. */
		EXPECT(t, SEG(.seq = 1, .len = 1));
		INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	}
	assert_int_equal(t->n_closed, 0);
	assert_int_equal(STAT(t, persist_timeouts), 0);
	assert_int_equal(STAT(t, conns_timed_out), 0);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1000));
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	FINISH(t, 1);
}

/* Probes nobody answers: after data_retries of them, ETIMEDOUT. */
static void test_unanswered_probes_time_out(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.data_retries = 3;
	struct pkt_t *t = closed_window(&cfg);

	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	ADVANCE(t, 400);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	ADVANCE(t, 800);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	ADVANCE(t, 1599);
	assert_int_equal(t->n_closed, 0);
	ADVANCE(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ETIMEDOUT);
	assert_int_equal(STAT(t, persist_timeouts), 1);
	FINISH(t, 0);
}

/* A window that closes with data in flight: the RTO goes back to SND.UNA,
 * finds nothing it may send, and hands over to the persist timer. */
static void test_closed_window_after_rto_hands_over_to_persist(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0)); /* shrinks the window */
	ADVANCE(t, 200);
	EXPECT_NOTHING(t); /* RTO fired, but the window is closed */
	assert_int_equal(STAT(t, rto_fired), 1);
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	assert_int_equal(STAT(t, persist_probes), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 65535));
	EXPECT(t, SEG(.seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc9293_3_8_6_1_zero_window_probe_after_rto),
		PKT_TEST(test_rfc1122_4_2_2_17_probe_backoff_doubles_and_caps),
		PKT_TEST(test_rfc9293_3_8_6_1_window_reopening_resumes_sending),
		PKT_TEST(test_rfc1122_4_2_2_17_answered_probes_never_time_out),
		PKT_TEST(test_unanswered_probes_time_out),
		PKT_TEST(test_closed_window_after_rto_hands_over_to_persist),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
