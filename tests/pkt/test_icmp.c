/* Packet scripts: ICMP errors against live connections (RFC 5927, RFC 1191,
 * RFC 8201, RFC 1122 4.2.3.9, RFC 9293 3.9.2.2), through tcp_icmp_error as
 * stack/net/icmp.c and icmp6.c call it: what the error means to TCP (the
 * network layer sorts the types), the quoted addresses and the first 8
 * bytes of our segment. */
#include "tests/pkt/harness.h"

#include <errno.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

/* A path MTU each family allows (IPv6's floor is 1280), and the headers
 * the MSS leaves out of it. */
static uint32_t small_mtu(void)
{
	return pkt_family() == 6 ? 1300 : 1000;
}

static uint32_t hdrs(void)
{
	return pkt_family() == 6 ? 60 : 40;
}

/* The MSS small_mtu() leaves with timestamps on (their 12 bytes). */
static uint32_t lowered_mss(void)
{
	return small_mtu() - hdrs() - 12;
}

/* An ICMP error quoting our segment from local_port with sequence seq. */
static void icmp(struct pkt_t *t, enum tcp_icmp_kind kind, uint32_t mtu, uint16_t local_port,
		 uint32_t seq)
{
	uint8_t l4[8] = { (uint8_t)(local_port >> 8), (uint8_t)local_port,
			  PKT_PEER_PORT >> 8, PKT_PEER_PORT & 0xff,
			  (uint8_t)(seq >> 24), (uint8_t)(seq >> 16), (uint8_t)(seq >> 8),
			  (uint8_t)seq };

	tcp_icmp_error(t->ts, kind, EHOSTUNREACH, mtu, PKT_LOCAL_IP, PKT_PEER_IP, l4, sizeof(l4));
}

/* RFC 5927 4.1: only SND.UNA =< seq < SND.MAX is in flight; anything else
 * (the acknowledged SYN, SND.MAX itself, far ahead) is ignored and
 * counted, whatever it says. */
static void test_rfc5927_out_of_window_ignored(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 1460), 1460);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	icmp(t, TCP_ICMP_TOO_BIG, small_mtu(), PKT_LOCAL_PORT, t->our_isn);
	icmp(t, TCP_ICMP_TOO_BIG, small_mtu(), PKT_LOCAL_PORT, t->our_isn + 1461);
	icmp(t, TCP_ICMP_HARD, 0, PKT_LOCAL_PORT, t->our_isn + 50000);
	assert_int_equal(STAT(t, icmp_ignored_out_of_window), 3);
	assert_int_equal(STAT(t, icmp_frag_needed_applied), 0);
	assert_int_equal(t->conn->mss, 1460);
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
	/* No connection at all for the quoted ports. */
	icmp(t, TCP_ICMP_HARD, 0, PKT_LOCAL_PORT + 1, t->our_isn + 1);
	assert_int_equal(STAT(t, icmp_ignored_no_conn), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1461));
	FINISH(t, 1);
}

/* RFC 1191: an in-flight frag-needed lowers the MSS (with timestamps, the
 * option's 12 bytes come off too); a larger MTU later does not raise it. */
static void test_frag_needed_in_flight_lowers_mss(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = false;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ts_val = 100));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 101));
	assert_int_equal(t->conn->mss, 1448);
	assert_int_equal(pkt_app_send(t, 1448), 1448);
	EXPECT(t, SEG(.seq = 1, .len = 1448));
	icmp(t, TCP_ICMP_TOO_BIG, small_mtu(), PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->conn->mss, lowered_mss());
	assert_int_equal(STAT(t, icmp_frag_needed_applied), 1);
	/* Resent at the new size at once, not at the RTO, and without
	 * shrinking cwnd (RFC 1191 6.4: not congestion) (the rest follows in the same flight). */
	EXPECT(t, SEG(.seq = 1, .len = (int32_t)lowered_mss()));
	EXPECT(t, SEG(.seq = 1 + lowered_mss(), .len = (int32_t)(1448 - lowered_mss())));
	assert_int_equal(STAT(t, pmtu_resends), 1);
	assert_int_equal(STAT(t, rto_fired), 0);
	icmp(t, TCP_ICMP_TOO_BIG, 1400, PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->conn->mss, lowered_mss());
	assert_int_equal(STAT(t, icmp_frag_needed_applied), 1);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1 + lowered_mss(), .ts_val = 102));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1449, .ts_val = 103));
	FINISH(t, 1);
}

/* After a frag-needed, a full segment must not carry a SACK block that
 * would push it past the path's MTU (RFC 6691: options come out of the
 * MSS): the bound is the connection's MSS, not the interface's MTU, or
 * the router drops every such segment and the connection black-holes. */
static void test_frag_needed_sack_blocks_fit_path_mtu(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = false;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .sack_perm = 1, .ts_val = 100));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 101));
	assert_int_equal(pkt_app_send(t, 1448), 1448);
	EXPECT(t, SEG(.seq = 1, .len = 1448));
	icmp(t, TCP_ICMP_TOO_BIG, small_mtu(), PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->conn->mss, lowered_mss());
	EXPECT(t, SEG(.seq = 1, .len = (int32_t)lowered_mss()));
	EXPECT(t, SEG(.seq = 1 + lowered_mss(), .len = (int32_t)(1448 - lowered_mss())));
	INJECT(t, SEG(.seq = 1001, .ack = 1449, .ts_val = 102));
	/* The peer's data after a hole: a block to report from now on. */
	INJECT(t, SEG(.seq = 1101, .ack = 1449, .len = 100, .ts_val = 103));
	EXPECT(t, SEG(.flags = TH_ACK, .len = 0, .ack = 1001, .nsack = 1));
	assert_int_equal(pkt_app_send(t, lowered_mss()), (ssize_t)lowered_mss());
	EXPECT(t, SEG(.seq = 1449, .len = (int32_t)lowered_mss(), .nsack = 0));
	INJECT(t, SEG(.seq = 1001, .ack = 2397, .len = 100, .ts_val = 104));
	EXPECT(t, SEG(.flags = TH_ACK, .len = 0, .ack = 1201));
	APP_READ(t);
	FINISH(t, 1);
}

/* The DF flag of the next segment we sent (before EXPECT takes it). */
static bool next_df_off(const struct pkt_t *t)
{
	assert_true(t->ncap > 0);
	return t->cap[t->cap_head].a.df_off;
}

/* IPv4, as Linux (route/min_pmtu): a next-hop MTU below [tcp] min_pmtu
 * (552) is taken as 552 and the connection sends without DF from then on,
 * so a path that is really narrower fragments our segments instead of
 * dropping each one (an MSS of 88 in a 128-byte packet over a path of 109
 * black-holed).  A report of 0 (an RFC 792 router) does the same; a later
 * one at or above the floor keeps DF off. */
static void test_frag_needed_below_floor_clears_df(void **state)
{
	(void)state;
	struct pkt_t *t;

	if (pkt_family() == 6)
		skip(); /* IPv6 ignores a Packet Too Big below 1280 (test_family.c) */
	t = pkt_start(NULL);
	ESTABLISH(t);
	assert_int_equal(t->conn->mss, 1460);
	assert_int_equal(pkt_app_send(t, 1460), 1460);
	assert_false(next_df_off(t));
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	icmp(t, TCP_ICMP_TOO_BIG, 109, PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->conn->mss, 552 - 40);
	assert_int_equal(STAT(t, pmtu_df_cleared), 1);
	assert_int_equal(STAT(t, icmp_frag_needed_applied), 1);
	assert_true(next_df_off(t));
	EXPECT(t, SEG(.seq = 1, .len = 512));
	assert_true(next_df_off(t));
	EXPECT(t, SEG(.seq = 513, .len = 512));
	EXPECT(t, SEG(.seq = 1025, .len = 436));
	icmp(t, TCP_ICMP_TOO_BIG, 0, PKT_LOCAL_PORT, t->our_isn + 1);
	icmp(t, TCP_ICMP_TOO_BIG, 576, PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->conn->mss, 512);
	assert_int_equal(STAT(t, pmtu_df_cleared), 1);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1461));
	assert_int_equal(pkt_app_send(t, 100), 100);
	assert_true(next_df_off(t));
	EXPECT(t, SEG(.seq = 1461, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 1561));
	FINISH(t, 1);
}

/* A report at the floor or above lowers the MSS and keeps DF (RFC 1191). */
static void test_frag_needed_at_floor_keeps_df(void **state)
{
	(void)state;
	struct pkt_t *t;

	if (pkt_family() == 6)
		skip();
	t = pkt_start(NULL);
	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 1460), 1460);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	icmp(t, TCP_ICMP_TOO_BIG, 552, PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->conn->mss, 512);
	assert_int_equal(STAT(t, pmtu_df_cleared), 0);
	assert_false(next_df_off(t));
	EXPECT(t, SEG(.seq = 1, .len = 512));
	EXPECT(t, SEG(.seq = 513, .len = 512));
	EXPECT(t, SEG(.seq = 1025, .len = 436));
	INJECT(t, SEG(.seq = 1001, .ack = 1461));
	FINISH(t, 1);
}

/* RFC 1122 4.2.3.9 / RFC 5927 4.2 and RFC 9293 3.9.2.2 (MUST-55, MUST-56):
 * unreachables, source quench, time exceeded and parameter problem in
 * flight never abort an established connection; it carries on. */
static void test_soft_errors_do_not_kill_established(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	/* IPv4's net, host, protocol, port unreachable and source route
	 * failed as stack/net/icmp.c sorts them. */
	const enum tcp_icmp_kind unreach[] = { TCP_ICMP_SOFT, TCP_ICMP_SOFT, TCP_ICMP_HARD,
					       TCP_ICMP_HARD, TCP_ICMP_SOFT };

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	for (unsigned i = 0; i < RTE_DIM(unreach); i++)
		icmp(t, unreach[i], 0, PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(STAT(t, icmp_soft_errors), 5);
	assert_int_equal(STAT(t, icmp_hard_errors), 0);
	assert_int_equal(t->n_closed, 0);
	assert_non_null(t->conn);
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
	INJECT(t, SEG(.seq = 1001, .ack = 101, .len = 10));
	APP_READ(t);
	assert_int_equal(t->rx_len, 10);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 101, .ack = 1011, .len = 10));
	INJECT(t, SEG(.seq = 1011, .ack = 111));
	FINISH(t, 1);
}

/* ESTABLISHED with data_retries 3, 10 bytes sent and a soft error about
 * them; the connection carries on and counts it (tcp_conn_info). */
static struct pkt_t *soft_error_in_flight(void)
{
	struct tcp_config cfg;
	struct pkt_t *t;
	struct tcp_conn_info info;

	pkt_config_defaults(&cfg);
	cfg.data_retries = 3;
	t = pkt_start(&cfg);
	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	icmp(t, TCP_ICMP_SOFT, 0, PKT_LOCAL_PORT, t->our_isn + 1);
	assert_int_equal(t->n_closed, 0);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.soft_errors, 1);
	assert_int_equal(info.soft_err, EHOSTUNREACH);
	return t;
}

/* RFC 9293 3.9.1.8 (MUST-47), as Linux's tcp_write_err: a connection
 * that times out after a soft error reports that error (here host
 * unreachable), not ETIMEDOUT. */
static void test_soft_error_reported_at_timeout(void **state)
{
	(void)state;
	struct pkt_t *t = soft_error_in_flight();

	for (uint32_t rto = 200; rto <= 800; rto *= 2) {
		ADVANCE(t, rto);
		EXPECT(t, SEG(.seq = 1, .len = 10));
	}
	ADVANCE(t, 1600);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, EHOSTUNREACH);
	assert_int_equal(STAT(t, soft_err_reported), 1);
	FINISH(t, 0);
}

/* Linux forgets the soft error once data is acknowledged: a later
 * timeout is ETIMEDOUT again. */
static void test_soft_error_forgotten_after_ack(void **state)
{
	(void)state;
	struct pkt_t *t = soft_error_in_flight();
	struct tcp_conn_info info;

	INJECT(t, SEG(.seq = 1001, .ack = 11));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.soft_err, 0);
	assert_int_equal(info.soft_errors, 1);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 11, .len = 10));
	ADVANCE(t, 200 + 400 + 800 + 1600);
	while (t->ncap > 0)
		EXPECT(t, SEG(.seq = 11, .len = 10));
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ETIMEDOUT);
	assert_int_equal(STAT(t, soft_err_reported), 0);
	FINISH(t, 0);
}

static struct tcp_conn *connect_peer(struct pkt_t *t)
{
	struct tcp_conn *c = NULL;

	t->local_port = 0; /* learnt from our SYN */
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	return c;
}

/* Port (or protocol) unreachable for our SYN: ECONNREFUSED at once. */
static void test_syn_sent_port_unreachable_refused(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = connect_peer(t);

	icmp(t, TCP_ICMP_HARD, 0, c->local_port, t->our_isn);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNREFUSED);
	assert_int_equal(STAT(t, icmp_hard_errors), 1);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	ADVANCE(t, 1000);
	EXPECT_NOTHING(t); /* no SYN retransmission */
	FINISH(t, 0);
}

/* Host unreachable for our SYN is soft (RFC 1122 4.2.3.9): the SYN is
 * retransmitted and the handshake may still complete. */
static void test_syn_sent_host_unreachable_is_soft(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = connect_peer(t);

	icmp(t, TCP_ICMP_SOFT, 0, c->local_port, t->our_isn);
	assert_int_equal(t->n_closed, 0);
	assert_int_equal(STAT(t, icmp_soft_errors), 1);
	ADVANCE(t, 1000);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001));
	assert_int_equal(t->n_connected, 1);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc5927_out_of_window_ignored),
		PKT_TEST(test_frag_needed_in_flight_lowers_mss),
		PKT_TEST(test_frag_needed_sack_blocks_fit_path_mtu),
		PKT_TEST(test_frag_needed_below_floor_clears_df),
		PKT_TEST(test_frag_needed_at_floor_keeps_df),
		PKT_TEST(test_soft_errors_do_not_kill_established),
		PKT_TEST(test_soft_error_reported_at_timeout),
		PKT_TEST(test_soft_error_forgotten_after_ack),
		PKT_TEST(test_syn_sent_port_unreachable_refused),
		PKT_TEST(test_syn_sent_host_unreachable_is_soft),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
