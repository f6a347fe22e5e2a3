/* Packet scripts: keepalive (RFC 9293 3.8.4, RFC 1122 4.2.3.6). */
#include "tests/pkt/harness.h"

#include <errno.h>

#define KA_IDLE 10000u
#define KA_INTVL 1000u

static struct pkt_t *ka_start(unsigned probes)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.keepalive_idle_ms = KA_IDLE;
	cfg.keepalive_intvl_ms = KA_INTVL;
	cfg.keepalive_probes = probes;
	return pkt_start(&cfg);
}

/* The probe: <SEQ=SND.UNA-1><CTL=ACK>, no data. */
#define KA_PROBE(una) SEG(.flags = TH_ACK, .seq = (una) - 1, .ack = 1001, .len = 0)

/* RFC 1122 4.2.3.6: off unless the application asks; the defaults are
 * 2 hours idle, 75 s apart, 9 probes (like Linux). */
static void test_rfc1122_4_2_3_6_keepalive_off_by_default(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	assert_int_equal(cfg.keepalive_idle_ms, 7200000);
	assert_int_equal(cfg.keepalive_intvl_ms, 75000);
	assert_int_equal(cfg.keepalive_probes, 9);
	struct pkt_t *t = pkt_start(&cfg);
	struct tcp_conn_info info;

	ESTABLISH(t);
	tcp_conn_get_info(t->conn, &info);
	assert_false(info.keepalive);
	ADVANCE(t, 7200000 + 75000);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, keepalive_probes), 0);
	FINISH(t, 1);
}

/* Default timing: first probe after exactly 2 hours of silence. */
static void test_rfc1122_4_2_3_6_default_idle_is_two_hours(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_set_keepalive(t->conn, true), 0);
	ADVANCE(t, 7200000 - 1);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, KA_PROBE(1));
	ADVANCE(t, 75000 - 1);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, KA_PROBE(1));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	FINISH(t, 1);
}

/* RFC 9293 3.8.4: idle, then probes every interval; after `probes`
 * unanswered ones the connection is gone with ETIMEDOUT (and an RST). */
static void test_rfc9293_3_8_4_unanswered_probes_etimedout(void **state)
{
	(void)state;
	struct pkt_t *t = ka_start(3);
	struct tcp_conn_info info;

	ESTABLISH(t);
	assert_int_equal(tcp_set_keepalive(t->conn, true), 0);
	ADVANCE(t, KA_IDLE - 1);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, KA_PROBE(1));
	for (unsigned i = 1; i < 3; i++) {
		ADVANCE(t, KA_INTVL - 1);
		EXPECT_NOTHING(t);
		ADVANCE(t, 1);
		EXPECT(t, KA_PROBE(1));
	}
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.keepalive_probes, 3);
	assert_int_equal(info.probes, 3);
	ADVANCE(t, KA_INTVL - 1);
	assert_int_equal(t->n_closed, 0);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ETIMEDOUT);
	assert_int_equal(STAT(t, keepalive_probes), 3);
	assert_int_equal(STAT(t, keepalive_timeouts), 1);
	FINISH(t, 0);
}

/* An answered probe keeps the connection and restarts the idle time. */
static void test_rfc9293_3_8_4_answered_probe_keeps_connection(void **state)
{
	(void)state;
	struct pkt_t *t = ka_start(2);

	ESTABLISH(t);
	assert_int_equal(tcp_set_keepalive(t->conn, true), 0);
	for (unsigned i = 0; i < 5; i++) {
		ADVANCE(t, KA_IDLE);
		EXPECT(t, KA_PROBE(1));
		ADVANCE(t, KA_INTVL);
		EXPECT(t, KA_PROBE(1)); /* one lost answer is survivable */
		INJECT(t, SEG(.seq = 1001, .ack = 1));
		ADVANCE(t, KA_IDLE - 1);
		EXPECT_NOTHING(t);
		ADVANCE(t, 1);
		EXPECT(t, KA_PROBE(1));
		INJECT(t, SEG(.seq = 1001, .ack = 1));
	}
	assert_int_equal(t->n_closed, 0);
	assert_int_equal(STAT(t, keepalive_timeouts), 0);
	FINISH(t, 1);
}

/* RFC 1122 4.2.3.6: probes only after an interval with no segment from
 * the peer: any segment restarts the idle time. */
static void test_rfc1122_4_2_3_6_peer_segment_restarts_idle(void **state)
{
	(void)state;
	struct pkt_t *t = ka_start(9);

	ESTABLISH(t);
	t->auto_read = true;
	assert_int_equal(tcp_set_keepalive(t->conn, true), 0);
	ADVANCE(t, KA_IDLE / 2);
	INJECT(t, SEG(.seq = 1001, .len = 10));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1011));
	ADVANCE(t, KA_IDLE - 41);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 0, .ack = 1011, .len = 0));
	INJECT(t, SEG(.seq = 1011, .ack = 1));
	FINISH(t, 1);
}

/* Turning keepalive off stops the probes; data in flight is the RTO's
 * business, not keepalive's. */
static void test_keepalive_off_and_data_in_flight(void **state)
{
	(void)state;
	struct pkt_t *t = ka_start(1);
	struct tcp_conn_info info;

	ESTABLISH(t);
	assert_int_equal(tcp_set_keepalive(t->conn, true), 0);
	tcp_conn_get_info(t->conn, &info);
	assert_true(info.keepalive);
	assert_int_equal(tcp_set_keepalive(t->conn, false), 0);
	ADVANCE(t, 3 * KA_IDLE);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_set_keepalive(t->conn, true), 0);
	ADVANCE(t, KA_IDLE - 300);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	/* RTO retransmits at 200, 600 ms; keepalive stays quiet meanwhile. */
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 400);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	INJECT(t, SEG(.seq = 1001, .ack = 11));
	assert_int_equal(STAT(t, keepalive_probes), 0);
	ADVANCE(t, KA_IDLE);
	EXPECT(t, KA_PROBE(11));
	INJECT(t, SEG(.seq = 1001, .ack = 11));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc1122_4_2_3_6_keepalive_off_by_default),
		PKT_TEST(test_rfc1122_4_2_3_6_default_idle_is_two_hours),
		PKT_TEST(test_rfc9293_3_8_4_unanswered_probes_etimedout),
		PKT_TEST(test_rfc9293_3_8_4_answered_probe_keeps_connection),
		PKT_TEST(test_rfc1122_4_2_3_6_peer_segment_restarts_idle),
		PKT_TEST(test_keepalive_off_and_data_in_flight),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
