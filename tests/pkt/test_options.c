/* Packet scripts: TCP options (RFC 7323 window scale, RFC 2018
 * SACK-permitted, RFC 9293 3.7.1 MSS and option parsing) and simultaneous
 * open (RFC 9293 3.5 figure 7). */
#include "tests/pkt/harness.h"

static struct pkt_t *start_opts(void)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg); /* wscale, SACK, timestamps on */
	return pkt_start(&cfg);
}

/* RFC 7323 2.2/2.3: both SYNs carry the option; the SYN windows are
 * unscaled, every later window is shifted: ours by 7 (a 256 KiB buffer
 * that may grow to rcvbuf_max, 4 MiB), the peer's by the 2 it announced. */
static void test_wscale_negotiated_both_ways_windows_scaled(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = 2, .win = 5000));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .ws = 7, .win = 65535,
		      .sack_perm = 0, .ts_val = PKT_ABSENT));
	assert_int_equal(t->conn == NULL, 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1460));
	assert_non_null(t->conn);
	assert_int_equal(t->conn->snd_wnd, 1460u << 2);
	assert_int_equal(pkt_app_send(t, 4 * 1460), 4 * 1460);
	for (unsigned i = 0; i < 4; i++)
		EXPECT(t, SEG(.seq = 1 + i * 1460, .len = 1460, .win = (256 * 1024) >> 7));
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* RFC 7323 2.2: no option from the peer, no scaling in either direction. */
static void test_wscale_absent_on_peer_side_no_scaling(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ws = PKT_ABSENT, .win = 65535));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 2920));
	assert_int_equal(t->conn->snd_wnd, 2920);
	assert_int_equal(t->conn->rcv_wscale, 0);
	INJECT(t, SEG(.seq = 1001, .len = 10));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1011, .win = 65535));
	FINISH(t, 1);
}

/* RFC 7323 2.2: scaling off on our side: the peer's offer is not answered
 * and its windows are taken as they are. */
static void test_wscale_disabled_locally_no_scaling(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = false;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = 7));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ws = PKT_ABSENT));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 100));
	assert_int_equal(t->conn->snd_wnd, 100);
	FINISH(t, 1);
}

/* RFC 7323 2.3: a shift above 14 is logged (counted) and 14 is used. */
static void test_wscale_shift_15_clamped_to_14(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = 15));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ws = 7));
	assert_int_equal(STAT(t, wscale_clamped), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1));
	assert_int_equal(t->conn->snd_wscale, 14);
	assert_int_equal(t->conn->snd_wnd, 1u << 14);
	FINISH(t, 1);
}

/* RFC 7323 2.2, RFC 2018 2, RFC 7323 3.2: an active open offers all three;
 * the SYN-ACK's window is not scaled, the next one is. */
static void test_active_open_offers_options_syn_ack_window_unscaled(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();
	struct tcp_conn *c = NULL;

	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .mss = 1460, .ws = 7, .sack_perm = 1,
		      .ts_val = pkt_ts_now(t), .ts_ecr = 0));
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 7000, .ack = 1, .mss = 1460, .ws = 5,
		      .win = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 7001, .ts_val = PKT_ABSENT,
		      .win = (256 * 1024) >> 7));
	assert_int_equal(t->n_connected, 1);
	assert_int_equal(c->snd_wnd, 1000);
	assert_false(c->sack_ok);
	INJECT(t, SEG(.seq = 7001, .ack = 1, .win = 1000));
	assert_int_equal(c->snd_wnd, 1000u << 5);
	FINISH(t, 1);
}

/* RFC 2018 2: SACK-permitted is answered only when the peer offered it. */
static void test_sack_permitted_negotiated(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .sack_perm = 1));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .sack_perm = 1, .ws = PKT_ABSENT));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_true(t->conn->sack_ok);
	FINISH(t, 1);
}

static void test_sack_permitted_not_offered_not_answered(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.sack = false;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .sack_perm = 1));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .sack_perm = 0));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_false(t->conn->sack_ok);
	FINISH(t, 1);
}

/* Sends 2 * n pattern bytes and expects segments of n bytes. */
static void expect_two_segments_of(struct pkt_t *t, uint32_t n)
{
	assert_int_equal(pkt_app_send(t, 2 * n), (ssize_t)(2 * n));
	EXPECT(t, SEG(.seq = 1, .len = (int32_t)n));
	EXPECT(t, SEG(.seq = 1 + n, .len = (int32_t)n));
	EXPECT_NOTHING(t);
}

/* RFC 9293 3.7.1: the send MSS is the peer's, never above the route's. */
static void test_mss_clamped_to_route_mtu(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 8960));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .mss = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 1460);
	FINISH(t, 1);
}

static void test_mss_clamped_to_peer_mss(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 500));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .mss = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 500);
	FINISH(t, 1);
}

/* RFC 9293 3.7.1: a smaller route MTU lowers the MSS we announce and use. */
static void test_mss_follows_small_route_mtu(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	/* IPv6's fixed header is 20 bytes longer: the same MSS from 1020. */
	t->ts->env.mtu = pkt_family() == 6 ? 1020 : 1000;
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .mss = 960));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 960);
	FINISH(t, 1);
}

/* RFC 9293 3.7.1: Eff.snd.MSS leaves room for the timestamps every
 * segment carries (1460 - 12). */
static void test_mss_leaves_room_for_timestamps(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ts_val = 5));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ts_ecr = 5));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 6));
	expect_two_segments_of(t, 1448);
	FINISH(t, 1);
}

/* A peer MSS of 1 is raised to TCP_MIN_SND_MSS (48, Linux's
 * tcp_min_snd_mss): not one segment per byte, and with timestamps the 12
 * option bytes come off 48 instead of wrapping 1 - 12 (adversarial suite). */
static void test_tiny_peer_mss_floored(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .mss = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 48);
	assert_int_equal(tcp_stack_stats(t->ts)->mss_clamped_min, 1);
	FINISH(t, 1);
}

static void test_tiny_peer_mss_with_timestamps(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 12, .ts_val = 5));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ts_ecr = 5));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 6));
	expect_two_segments_of(t, 36);
	FINISH(t, 1);
}

/* RFC 9293 3.1: an option length of 0 ends parsing; what came before
 * (the MSS) stays valid, nothing after it is read. */
static void test_malformed_option_length_zero_stops_parsing(void **state)
{
	(void)state;
	static const uint8_t opts[] = { 2, 4, 0x01, 0xf4, 8, 0, 1, 1, 3, 3, 7, 0 };
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts, .optlen = sizeof(opts)));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ts_val = PKT_ABSENT, .ws = PKT_ABSENT));
	assert_int_equal(STAT(t, opt_malformed), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 500);
	FINISH(t, 1);
}

/* An option length of 1 cannot even cover kind and length. */
static void test_malformed_option_length_one_stops_parsing(void **state)
{
	(void)state;
	static const uint8_t opts[] = { 3, 1, 2, 4, 0x01, 0xf4, 0, 0 };
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts, .optlen = sizeof(opts)));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ws = PKT_ABSENT));
	assert_int_equal(STAT(t, opt_malformed), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, pkt_default_mss()); /* the MSS was never read */
	FINISH(t, 1);
}

/* A length running past the header: parsing stops inside the header. */
static void test_malformed_option_length_past_header_stops_parsing(void **state)
{
	(void)state;
	static const uint8_t opts[] = { 2, 4, 0x01, 0xf4, 1, 1, 8, 10 };
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts, .optlen = sizeof(opts)));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ts_val = PKT_ABSENT));
	assert_int_equal(STAT(t, opt_malformed), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 500);
	FINISH(t, 1);
}

/* RFC 9293 3.2: unknown kinds are skipped by their length. */
static void test_unknown_option_skipped(void **state)
{
	(void)state;
	static const uint8_t opts[] = { 254, 6, 0xde, 0xad, 0xbe, 0xef, 2, 4, 0x02, 0x00 };
	struct pkt_t *t = start_opts();

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts, .optlen = sizeof(opts)));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	assert_int_equal(STAT(t, opt_malformed), 0);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	expect_two_segments_of(t, 512);
	FINISH(t, 1);
}

/* RFC 9293 3.5 figure 7: both SYNs cross; each side answers with a SYN-ACK
 * at its ISS and the other's SYN-ACK completes the handshake. */
static void test_simultaneous_open_via_syn_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = NULL;

	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 300, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 301));
	assert_int_equal(c->state, TCP_SYN_RECEIVED);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 300, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 301));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(t->n_connected, 1);
	FINISH(t, 1);
}

/* Simultaneous open where the peer's ACK (not its SYN-ACK) arrives. */
static void test_simultaneous_open_via_ack_with_options(void **state)
{
	(void)state;
	struct pkt_t *t = start_opts();
	struct tcp_conn *c = NULL;

	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .ws = 7, .sack_perm = 1));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 300, .mss = 1460, .ws = 1));
	/* The SYN-ACK answers only what the peer offered. */
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 301, .ws = 7, .sack_perm = 0,
		      .ts_val = PKT_ABSENT));
	INJECT(t, SEG(.seq = 301, .ack = 1, .win = 1000));
	assert_int_equal(c->state, TCP_ESTABLISHED);
	assert_int_equal(t->n_connected, 1);
	assert_int_equal(c->snd_wnd, 2000);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_wscale_negotiated_both_ways_windows_scaled),
		PKT_TEST(test_wscale_absent_on_peer_side_no_scaling),
		PKT_TEST(test_wscale_disabled_locally_no_scaling),
		PKT_TEST(test_wscale_shift_15_clamped_to_14),
		PKT_TEST(test_active_open_offers_options_syn_ack_window_unscaled),
		PKT_TEST(test_sack_permitted_negotiated),
		PKT_TEST(test_sack_permitted_not_offered_not_answered),
		PKT_TEST(test_mss_clamped_to_route_mtu),
		PKT_TEST(test_mss_clamped_to_peer_mss),
		PKT_TEST(test_mss_follows_small_route_mtu),
		PKT_TEST(test_mss_leaves_room_for_timestamps),
		PKT_TEST(test_tiny_peer_mss_floored),
		PKT_TEST(test_tiny_peer_mss_with_timestamps),
		PKT_TEST(test_malformed_option_length_zero_stops_parsing),
		PKT_TEST(test_malformed_option_length_one_stops_parsing),
		PKT_TEST(test_malformed_option_length_past_header_stops_parsing),
		PKT_TEST(test_unknown_option_skipped),
		PKT_TEST(test_simultaneous_open_via_syn_ack),
		PKT_TEST(test_simultaneous_open_via_ack_with_options),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
