/* Packet scripts: opening connections (RFC 9293 3.5, 3.10.7.1-3). */
#include "tests/pkt/harness.h"

#include <errno.h>

/* RFC 9293 3.5 + 3.7.1: LISTEN -> SYN-RECEIVED; the SYN-ACK carries our
 * MSS (MTU 1500 - 40) and acknowledges the peer's ISN + 1. */
static void test_rfc9293_3_5_passive_open_synack_carries_mss(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460,
		      .win = 65535, .len = 0));
	assert_int_equal(t->n_accept, 0);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_accept, 1);
	assert_non_null(t->conn);
	assert_int_equal(STAT(t, passive_opens), 1);
	FINISH(t, 1);
}

/* RFC 9293 3.7.1: no MSS option means 536 (1220 over IPv6); our segments
 * obey it. */
static void test_rfc9293_3_7_1_no_mss_option_means_536(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint32_t mss = pkt_default_mss();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_int_equal(pkt_app_send(t, 2 * mss + 100), (ssize_t)(2 * mss + 100));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .len = (int32_t)mss));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1 + mss, .len = (int32_t)mss));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1 + 2 * mss, .len = 100));
	FINISH(t, 1);
}

/* RFC 6298 5.5 on the SYN-ACK: 1 s, then 2 s (doubling). */
static void test_synack_retransmits_with_backoff(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	ADVANCE(t, 999);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460));
	ADVANCE(t, 1999);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	assert_int_equal(STAT(t, retrans_segs), 2);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	ADVANCE(t, 10000);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* After synack_retries SYN-ACK retransmissions the embryo goes quietly
 * (the application never saw it); syn_retries counts active opens only. */
static void test_synack_retries_exhausted_drops_embryo(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.synack_retries = 2;
	cfg.syn_retries = 9;
	struct pkt_t *t = pkt_start(&cfg);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
	ADVANCE(t, 1000);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
	ADVANCE(t, 2000);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
	ADVANCE(t, 3999);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	ADVANCE(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_int_equal(STAT(t, embryos_timed_out), 1);
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 0);
}

/* The listener's backlog bounds half-open connections (with SYN cookies
 * off; test_syncookie.c has them on). */
static void test_backlog_full_drops_syn(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.backlog = 1;
	cfg.syncookies = TCP_SYNCOOKIES_OFF;
	struct pkt_t *t = pkt_start(&cfg);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .sport = 40001, .mss = 1460));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_backlog_full), 1);
	/* Once the first is established, there is room again. */
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .sport = 40001, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 7001, .dport = 40001, .seq = PKT_ANY));
	FINISH(t, 2);
}

/* Our SYN-ACK was lost and the peer sends its SYN again: SYN-ACK again. */
static void test_duplicate_syn_in_syn_received_resends_synack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460));
	assert_int_equal(STAT(t, dup_syn_rcvd), 1);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.1: no connection, ACK set: <SEQ=SEG.ACK><CTL=RST>. */
static void test_rst_for_closed_port_with_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	INJECT(t, SEG(.flags = TH_ACK, .seq = 5000, .ack = 777777, .abs = true, .len = 20));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 777777, .abs = true, .len = 0));
	assert_int_equal(STAT(t, drop_no_conn), 1);
	assert_int_equal(STAT(t, resets_sent), 1);
	FINISH(t, 0);
}

/* RFC 9293 3.10.7.1: ACK off: <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>,
 * the SYN counting in SEG.LEN. */
static void test_rst_for_closed_port_without_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .len = 10));
	EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .abs = true, .ack = 5011));
	FINISH(t, 0);
}

/* RFC 9293 3.10.7.1: an RST is never answered. */
static void test_rst_to_closed_port_not_answered(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	INJECT(t, SEG(.flags = TH_RST, .seq = 5000));
	INJECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 5000, .ack = 1, .abs = true));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_rst_no_conn), 2);
	FINISH(t, 0);
}

/* A flood of ACKs to closed ports: only rst_closed_limit RSTs a second
 * (output.c), the rest counted; the next second has a fresh budget; an
 * ACK to a listener is no closed port and still gets its RST. */
static void test_rst_for_closed_port_rate_limited(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.rst_closed_limit = 3;
	t = pkt_start(&cfg);
	for (uint32_t i = 0; i < 5; i++)
		INJECT(t, SEG(.flags = TH_ACK, .seq = 5000, .ack = 1000 + i, .abs = true));
	for (uint32_t i = 0; i < 3; i++)
		EXPECT(t, SEG(.flags = TH_RST, .seq = 1000 + i, .abs = true, .len = 0));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_no_conn), 5);
	assert_int_equal(STAT(t, resets_sent), 3);
	assert_int_equal(STAT(t, rst_closed_ratelimited), 2);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5000, .ack = 4242, .abs = true));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 4242, .abs = true, .len = 0));
	assert_int_equal(STAT(t, drop_listen_bad), 1);
	ADVANCE(t, 1000);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 6000, .dport = 81));
	EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .abs = true, .ack = 6001, .sport = 81));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, resets_sent), 5);
	assert_int_equal(STAT(t, rst_closed_ratelimited), 2);
	FINISH(t, 0);
}

/* rst_closed_limit = 0: every segment to a closed port is answered. */
static void test_rst_for_closed_port_unlimited(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.rst_closed_limit = 0;
	t = pkt_start(&cfg);
	for (uint32_t i = 0; i < 1200; i++) { /* above the default 1000 */
		INJECT(t, SEG(.flags = TH_ACK, .seq = 5000, .ack = 1000 + i, .abs = true));
		EXPECT(t, SEG(.flags = TH_RST, .seq = 1000 + i, .abs = true, .len = 0));
	}
	assert_int_equal(STAT(t, resets_sent), 1200);
	assert_int_equal(STAT(t, rst_closed_ratelimited), 0);
	FINISH(t, 0);
}

/* RFC 9293 3.10.7.2: an ACK to a listener gets <SEQ=SEG.ACK><CTL=RST>. */
static void test_listen_ack_gets_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1000, .ack = 4242, .abs = true));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 4242, .abs = true));
	INJECT(t, SEG(.flags = TH_RST, .seq = 1000));
	INJECT(t, SEG(.flags = TH_FIN, .seq = 1000));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_listen_bad), 3);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

static struct tcp_conn *connect_peer(struct pkt_t *t)
{
	struct tcp_conn *c = NULL;

	t->local_port = 0; /* learnt from our SYN */
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	assert_non_null(c);
	return c;
}

/* RFC 9293 3.5 (figure 6): SYN, SYN-ACK, ACK; the send MSS is the
 * peer's. */
static void test_active_open_completes(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = connect_peer(t);

	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .mss = 1460, .win = 65535));
	assert_true(t->local_port >= TCP_EPHEMERAL_LO && t->local_port <= TCP_EPHEMERAL_HI);
	assert_int_equal(t->n_connected, 0);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1400));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001));
	assert_int_equal(t->n_connected, 1);
	assert_ptr_equal(t->conn, c);
	assert_int_equal(pkt_app_send(t, 3000), 3000);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001, .len = 1400));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1401, .len = 1400));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 2801, .len = 200));
	assert_int_equal(STAT(t, active_opens), 1);
	FINISH(t, 1);
}

/* RFC 6298 5.5 on the SYN: 1, 2, 4 s; after syn_retries, ETIMEDOUT. */
static void test_active_open_syn_retransmit_backoff(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.syn_retries = 2;
	struct pkt_t *t = pkt_start(&cfg);

	connect_peer(t);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	ADVANCE(t, 999);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .mss = 1460));
	ADVANCE(t, 1999);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	ADVANCE(t, 3999);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 0);
	ADVANCE(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ETIMEDOUT);
	assert_int_equal(STAT(t, conns_timed_out), 1);
	FINISH(t, 0);
}

/* RFC 9293 3.8.3 (MUST-23): with the default configuration a SYN is
 * retransmitted for at least 3 minutes before the open fails. */
static void test_default_syn_retransmission_lasts_three_minutes(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	unsigned syns = 0, ms = 0;

	connect_peer(t);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	while (t->n_closed == 0 && ms < 600000) {
		ADVANCE(t, 1000);
		ms += 1000;
		if (t->ncap > 0) {
			EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
			syns++;
		}
	}
	assert_int_equal(t->closed_err, ETIMEDOUT);
	assert_true(ms >= 180000);
	assert_int_equal(syns, 7);
	FINISH(t, 0);
}

/* RFC 9293 3.10.7.3: an acceptable RST in SYN-SENT: connection refused. */
static void test_active_open_rst_refused(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	connect_peer(t);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	/* An RST without an acceptable ACK is ignored first. */
	INJECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .ack = 7));
	INJECT(t, SEG(.flags = TH_RST, .seq = 0));
	assert_int_equal(t->n_closed, 0);
	INJECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNREFUSED);
	FINISH(t, 0);
}

/* RFC 9293 3.10.7.3: SYN-ACK acknowledging something we never sent gets
 * <SEQ=SEG.ACK><CTL=RST> and the connection attempt goes on. */
static void test_syn_sent_bad_ack_gets_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	connect_peer(t);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 9, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 9));
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001));
	assert_int_equal(t->n_connected, 1);
	FINISH(t, 1);
}

/* RFC 9293 3.5 (figure 7): simultaneous open through SYN-RECEIVED. */
static void test_simultaneous_open(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	connect_peer(t);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 5001, .mss = 1460));
	assert_int_equal(t->n_connected, 0);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	/* Its SYN lies before RCV.NXT: unacceptable, answered by a plain ACK. */
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 1));
	assert_int_equal(t->n_connected, 1);
	assert_int_equal(t->n_accept, 0);
	FINISH(t, 1);
}

/* Ephemeral ports: two connections to one peer get distinct ports. */
static void test_ephemeral_ports_are_distinct(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *a = connect_peer(t), *b = NULL;

	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &b), 0);
	assert_int_not_equal(a->local_port, b->local_port);
	EXPECT(t, SEG(.flags = TH_SYN, .sport = a->local_port));
	EXPECT(t, SEG(.flags = TH_SYN, .sport = b->local_port));
	/* Aborting in SYN-SENT sends nothing (RFC 9293 3.10.5). */
	assert_int_equal(tcp_abort(a), 0);
	assert_int_equal(tcp_close(b), 0);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 0);
}

/* tcp_unlisten resets half-open connections of that listener. */
static void test_unlisten_resets_embryos(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(pkt_listen(t), -EADDRINUSE);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0));
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), -ENOENT);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 3000));
	EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .abs = true, .ack = 3001));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc9293_3_5_passive_open_synack_carries_mss),
		PKT_TEST(test_rfc9293_3_7_1_no_mss_option_means_536),
		PKT_TEST(test_synack_retransmits_with_backoff),
		PKT_TEST(test_synack_retries_exhausted_drops_embryo),
		PKT_TEST(test_backlog_full_drops_syn),
		PKT_TEST(test_duplicate_syn_in_syn_received_resends_synack),
		PKT_TEST(test_rst_for_closed_port_with_ack),
		PKT_TEST(test_rst_for_closed_port_without_ack),
		PKT_TEST(test_rst_to_closed_port_not_answered),
		PKT_TEST(test_rst_for_closed_port_rate_limited),
		PKT_TEST(test_rst_for_closed_port_unlimited),
		PKT_TEST(test_listen_ack_gets_rst),
		PKT_TEST(test_active_open_completes),
		PKT_TEST(test_active_open_syn_retransmit_backoff),
		PKT_TEST(test_default_syn_retransmission_lasts_three_minutes),
		PKT_TEST(test_active_open_rst_refused),
		PKT_TEST(test_syn_sent_bad_ack_gets_rst),
		PKT_TEST(test_simultaneous_open),
		PKT_TEST(test_ephemeral_ports_are_distinct),
		PKT_TEST(test_unlisten_resets_embryos),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
