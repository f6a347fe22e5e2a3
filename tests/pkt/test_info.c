/* Packet scripts: tcp_conn_info after known exchanges, and the RFC 6298
 * rules not covered elsewhere (2.1 initial RTO, 5.5 bound, 5.7 fallback). */
#include "tests/pkt/harness.h"

/* Every field after a handshake (RTT 0), 1000 bytes sent and ACKed after
 * 50 ms, and 300 bytes received. */
static void test_info_after_known_exchange(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_info info;

	ESTABLISH(t);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.state, TCP_ESTABLISHED);
	assert_int_equal(info.mss, 1460);
	assert_int_equal(info.cwnd, 10 * 1460); /* RFC 6928 */
	assert_int_equal(info.ssthresh, UINT32_MAX);
	assert_int_equal(info.srtt_us, 0);
	assert_int_equal(info.rto_ms, 200);
	assert_int_equal(info.bytes_acked, 0);

	assert_int_equal(pkt_app_send(t, 1000), 1000);
	EXPECT(t, SEG(.seq = 1, .len = 1000));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.snd_una - t->our_isn, 1);
	assert_int_equal(info.snd_nxt - t->our_isn, 1001);
	ADVANCE(t, 50);
	INJECT(t, SEG(.seq = 1001, .ack = 1001, .len = 300, .win = 30000));
	APP_READ(t);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.state, TCP_ESTABLISHED);
	assert_int_equal(info.snd_una - t->our_isn, 1001);
	assert_int_equal(info.snd_nxt - t->our_isn, 1001);
	assert_int_equal(info.rcv_nxt, 1301);
	assert_int_equal(info.snd_wnd, 30000);
	assert_true(info.rcv_wnd > 0);
	assert_int_equal(info.cwnd, 10 * 1460 + 1000); /* RFC 5681 3.1 slow start */
	assert_int_equal(info.ssthresh, UINT32_MAX);
	/* RFC 6298 2.3 with R' = 50 ms after R = 0. */
	assert_int_equal(info.srtt_us, 6250);
	assert_int_equal(info.rttvar_us, 12500);
	assert_int_equal(info.rto_ms, 200);
	assert_int_equal(info.retransmits, 0);
	assert_int_equal(info.backoff, 0);
	assert_int_equal(info.bytes_acked, 1000);
	assert_int_equal(info.bytes_received, 300);
	assert_int_equal(info.probes, 0);
	assert_false(info.nodelay);
	assert_false(info.keepalive);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1301));
	FINISH(t, 1);
}

/* After two RTOs: retransmits, backoff, the doubled RTO, cwnd one segment
 * and ssthresh from FlightSize: RFC 9438 4.8 with the default CUBIC
 * (beta_cubic 0.7; RFC 5681 eq. 4 halves it for NewReno, test_cc.c). */
static void test_info_after_timeouts(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_info info;

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 3 * 1460), 3 * 1460);
	for (unsigned i = 0; i < 3; i++)
		EXPECT(t, SEG(.seq = 1 + i * 1460, .len = 1460));
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.retransmits, 1);
	assert_int_equal(info.backoff, 1);
	assert_int_equal(info.rto_ms, 400);
	assert_int_equal(info.cwnd, 1460);
	assert_int_equal(info.ssthresh, 3066); /* max(0.7 * 4380, 2 SMSS) */
	assert_int_equal(info.snd_nxt - t->our_isn, 1461); /* go-back-N */
	ADVANCE(t, 400);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.retransmits, 2);
	assert_int_equal(info.backoff, 2);
	assert_int_equal(info.rto_ms, 800);
	assert_int_equal(info.ssthresh, 3066); /* held (RFC 5681 3.1) */
	INJECT(t, SEG(.seq = 1001, .ack = 4381));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.bytes_acked, 3 * 1460);
	assert_int_equal(info.srtt_us, 0); /* Karn: no sample from a retransmission */
	FINISH(t, 1);
}

/* RFC 6298 2.1: before any RTT sample the RTO is 1 s (rto_initial_ms). */
static void test_rfc6298_2_1_initial_rto_is_one_second(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = NULL;
	struct tcp_conn_info info;

	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	tcp_conn_get_info(c, &info);
	assert_int_equal(info.state, TCP_SYN_SENT);
	assert_int_equal(info.rto_ms, 1000);
	ADVANCE(t, 999);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	tcp_conn_get_info(c, &info);
	assert_int_equal(info.rto_ms, 2000);
	assert_int_equal(info.backoff, 1);
	assert_int_equal(tcp_abort(c), 0);
	FINISH(t, 0);
}

/* RFC 6298 5.7: the SYN timed out and no sample was taken (Karn), so the
 * RTO for data is 3 s once ESTABLISHED. */
static void test_rfc6298_5_7_rto_three_seconds_after_syn_timeout(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = NULL;
	struct tcp_conn_info info;

	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	ADVANCE(t, 1000);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	ADVANCE(t, 100);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001));
	tcp_conn_get_info(c, &info);
	assert_int_equal(info.state, TCP_ESTABLISHED);
	assert_int_equal(info.rto_ms, 3000);
	assert_int_equal(info.srtt_us, 0);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 2999);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	INJECT(t, SEG(.seq = 5001, .ack = 11));
	FINISH(t, 1);
}

/* RFC 6298 5.5 and 2.5: the doubling stops at rto_max. */
static void test_rfc6298_5_5_backoff_bounded_by_rto_max(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.rto_max_ms = 1000;
	struct pkt_t *t = pkt_start(&cfg);
	const uint32_t gaps[] = { 200, 400, 800, 1000, 1000, 1000 };
	struct tcp_conn_info info;

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	for (unsigned i = 0; i < RTE_DIM(gaps); i++) {
		ADVANCE(t, gaps[i] - 1);
		EXPECT_NOTHING(t);
		ADVANCE(t, 1);
		EXPECT(t, SEG(.seq = 1, .len = 10));
	}
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.rto_ms, 1000);
	assert_int_equal(info.retransmits, RTE_DIM(gaps));
	INJECT(t, SEG(.seq = 1001, .ack = 11));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_info_after_known_exchange),
		PKT_TEST(test_info_after_timeouts),
		PKT_TEST(test_rfc6298_2_1_initial_rto_is_one_second),
		PKT_TEST(test_rfc6298_5_7_rto_three_seconds_after_syn_timeout),
		PKT_TEST(test_rfc6298_5_5_backoff_bounded_by_rto_max),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
