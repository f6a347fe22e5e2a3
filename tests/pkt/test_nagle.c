/* Packet scripts: Nagle (RFC 9293 3.7.4, Appendix A.3; RFC 1122 4.2.3.4),
 * TCP_NODELAY, and sender silly-window avoidance (RFC 9293 3.8.6.2.1). */
#include "tests/pkt/harness.h"

/* RFC 9293 3.7.4: a small segment waits while a small one is unacked and
 * goes, coalesced, when the ACK arrives. */
static void test_rfc9293_3_7_4_nagle_holds_small_segment_until_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 100));
	assert_int_equal(pkt_app_send(t, 50), 50);
	assert_int_equal(pkt_app_send(t, 30), 30);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 101, .len = 80));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 181));
	FINISH(t, 1);
}

/* RFC 9293 3.7.4 / 3.8.6.2.1 (1): a full-sized segment is never held; the
 * small tail waits for the small segment before it (Appendix A.3). */
static void test_rfc9293_3_7_4_full_segment_sent_despite_unacked_data(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(pkt_app_send(t, 2000), 2000);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 101, .len = 1460));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1561, .len = 540));
	INJECT(t, SEG(.seq = 1001, .ack = 2101));
	FINISH(t, 1);
}

/* RFC 9293 Appendix A.3: the tail of a large write is not held behind
 * full-sized segments in flight (Minshall's modification). */
static void test_rfc9293_a_3_tail_after_full_segments_goes_at_once(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 3000), 3000);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 2921, .len = 80));
	/* Now a small segment is unacked: the next one waits. */
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 3001));
	EXPECT(t, SEG(.seq = 3001, .len = 10));
	INJECT(t, SEG(.seq = 1001, .ack = 3011));
	FINISH(t, 1);
}

/* RFC 9293 3.7.4 (MUST-17): with TCP_NODELAY small segments go at once. */
static void test_rfc9293_3_7_4_nodelay_sends_at_once(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_info info;

	ESTABLISH(t);
	tcp_conn_get_info(t->conn, &info);
	assert_false(info.nodelay); /* Nagle on by default, as POSIX */
	assert_int_equal(tcp_set_nodelay(t->conn, true), 0);
	tcp_conn_get_info(t->conn, &info);
	assert_true(info.nodelay);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(pkt_app_send(t, 50), 50);
	EXPECT(t, SEG(.seq = 101, .len = 50));
	assert_int_equal(pkt_app_send(t, 30), 30);
	EXPECT(t, SEG(.seq = 151, .len = 30));
	/* And back on: Nagle holds again. */
	assert_int_equal(tcp_set_nodelay(t->conn, false), 0);
	assert_int_equal(pkt_app_send(t, 20), 20);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 181));
	EXPECT(t, SEG(.seq = 181, .len = 20));
	INJECT(t, SEG(.seq = 1001, .ack = 201));
	FINISH(t, 1);
}

/* tcp_config.nodelay_default: every new connection starts without Nagle. */
static void test_nodelay_default_config(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	assert_false(cfg.nodelay_default);
	cfg.nodelay_default = true;
	struct pkt_t *t = pkt_start(&cfg);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(pkt_app_send(t, 50), 50);
	EXPECT(t, SEG(.seq = 101, .len = 50));
	INJECT(t, SEG(.seq = 1001, .ack = 151));
	FINISH(t, 1);
}

/* Turning Nagle off releases what it held back. */
static void test_set_nodelay_flushes_held_data(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(pkt_app_send(t, 50), 50);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_set_nodelay(t->conn, true), 0);
	EXPECT(t, SEG(.seq = 101, .len = 50));
	INJECT(t, SEG(.seq = 1001, .ack = 151));
	FINISH(t, 1);
}

/* The last segment before our FIN is not held by Nagle (nothing more can
 * follow to fill it), like Linux. */
static void test_nagle_releases_tail_with_fin(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(pkt_app_send(t, 50), 50);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_shutdown_write(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH | TH_FIN, .seq = 101, .len = 50));
	INJECT(t, SEG(.seq = 1001, .ack = 152));
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.2.1 (4): a window too small for SWS avoidance and nothing
 * in flight: the override timer sends what fits. */
static void test_rfc9293_3_8_6_2_1_sws_override_timer(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .win = 4000));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 4000));
	assert_int_equal(pkt_app_send(t, 4000), 4000);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	EXPECT(t, SEG(.seq = 2921, .len = 1080));
	/* The peer's application reads slowly: only 500 bytes open. */
	INJECT(t, SEG(.seq = 1001, .ack = 4001, .win = 500));
	assert_int_equal(pkt_app_send(t, 2000), 2000);
	EXPECT_NOTHING(t); /* 500 < MSS and < max(SND.WND) / 2 */
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 4001, .len = 500));
	assert_int_equal(STAT(t, sws_overrides), 1);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 4501, .win = 4000));
	EXPECT(t, SEG(.seq = 4501, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 5961, .len = 40));
	INJECT(t, SEG(.seq = 1001, .ack = 6001, .win = 4000));
	ADVANCE(t, 1000);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, sws_overrides), 1);
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.2.1 (3): at least half the largest window ever offered
 * is worth sending even below the MSS. */
static void test_rfc9293_3_8_6_2_1_half_max_window_is_sent(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .win = 1200));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1200));
	assert_int_equal(pkt_app_send(t, 5000), 5000);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .len = 1200));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 601, .win = 1200));
	EXPECT(t, SEG(.seq = 1201, .len = 600)); /* 600 >= 1200 / 2 */
	INJECT(t, SEG(.seq = 1001, .ack = 1801, .win = 1200));
	EXPECT(t, SEG(.seq = 1801, .len = 1200));
	INJECT(t, SEG(.seq = 1001, .ack = 2001, .win = 1200));
	EXPECT_NOTHING(t); /* 200 < 600: silly, and data is in flight */
	assert_int_equal(STAT(t, sws_overrides), 0);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc9293_3_7_4_nagle_holds_small_segment_until_ack),
		PKT_TEST(test_rfc9293_3_7_4_full_segment_sent_despite_unacked_data),
		PKT_TEST(test_rfc9293_a_3_tail_after_full_segments_goes_at_once),
		PKT_TEST(test_rfc9293_3_7_4_nodelay_sends_at_once),
		PKT_TEST(test_nodelay_default_config),
		PKT_TEST(test_set_nodelay_flushes_held_data),
		PKT_TEST(test_nagle_releases_tail_with_fin),
		PKT_TEST(test_rfc9293_3_8_6_2_1_sws_override_timer),
		PKT_TEST(test_rfc9293_3_8_6_2_1_half_max_window_is_sent),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
