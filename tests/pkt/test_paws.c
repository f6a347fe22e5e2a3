/* Packet scripts: timestamps (RFC 7323 3, 4) and PAWS (RFC 7323 5). */
#include "tests/pkt/harness.h"

/* Passive open with timestamps: the peer's TSval 100 on the SYN, 101 on
 * the ACK. */
static struct pkt_t *start_ts(void)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	t = pkt_start(&cfg);
	ESTABLISH_TS(t);
	return t;
}

/* RFC 7323 3.2: every segment carries TSval (our clock) and TSecr
 * (TS.Recent, the peer's latest in-order TSval). */
static void test_timestamps_echoed(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();

	INJECT(t, SEG(.seq = 1001, .len = 100, .ts_val = 200));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1101, .ts_val = pkt_ts_now(t), .ts_ecr = 200));
	assert_int_equal(pkt_app_send(t, 1448), 1448);
	EXPECT(t, SEG(.seq = 1, .len = 1448, .ts_val = pkt_ts_now(t), .ts_ecr = 200));
	INJECT(t, SEG(.ack = 1449, .ts_val = 201));
	FINISH(t, 1);
}

/* RFC 7323 4.3 (2): a segment beyond Last.ACK.sent does not update
 * TS.Recent, so its dup ACK still echoes the older value. */
static void test_ts_recent_not_taken_from_out_of_order_segment(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();

	INJECT(t, SEG(.seq = 2001, .len = 100, .ts_val = 300));
	EXPECT(t, SEG(.ack = 1001, .ts_ecr = 101));
	INJECT(t, SEG(.seq = 1001, .len = 1000, .ts_val = 301));
	EXPECT(t, SEG(.ack = 2101, .ts_ecr = 301));
	FINISH(t, 1);
}

/* The peer resends the segment our lost ACK covered: the dup ACK echoes
 * the resend's TSval (as Linux does), not the original's, whose echo
 * would give the peer an RTT sample spanning its retransmission timeout.
 * An older duplicate, below Last.ACK.sent, leaves TS.Recent alone. */
static void test_ts_recent_taken_from_resend_of_last_acked_segment(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();

	INJECT(t, SEG(.seq = 1001, .len = 100, .ts_val = 200));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1101, .ts_ecr = 200));
	INJECT(t, SEG(.seq = 1101, .len = 100, .ts_val = 210));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1201, .ts_ecr = 210));
	INJECT(t, SEG(.seq = 1001, .len = 100, .ts_val = 900));
	EXPECT(t, SEG(.ack = 1201, .ts_ecr = 210));
	INJECT(t, SEG(.seq = 1101, .len = 100, .ts_val = 1000));
	EXPECT(t, SEG(.ack = 1201, .ts_ecr = 1000));
	assert_int_equal(STAT(t, drop_dup_data), 2);
	FINISH(t, 1);
}

/* RFC 7323 5.3 R1: a TSval older than TS.Recent: the segment is dropped
 * (not delivered) and answered with an ACK. */
static void test_paws_rejects_old_timestamp_with_dup_ack(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();

	INJECT(t, SEG(.seq = 1001, .len = 100, .ts_val = 200));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1101, .ts_ecr = 200));
	INJECT(t, SEG(.seq = 1101, .len = 100, .ts_val = 150));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1101, .ts_ecr = 200, .len = 0));
	assert_int_equal(STAT(t, drop_paws), 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 100);
	/* The same bytes with a fresh timestamp get through. */
	INJECT(t, SEG(.seq = 1101, .len = 100, .ts_val = 210));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1201, .ts_ecr = 210));
	FINISH(t, 1);
}

/* RFC 7323 5.3 R1 applies only to non-RST segments (and 5.2: an RST is
 * judged by its sequence number alone). */
static void test_paws_does_not_apply_to_rst(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();

	INJECT(t, SEG(.flags = TH_RST, .seq = 1001, .ts_val = 5));
	assert_int_equal(STAT(t, drop_paws), 0);
	assert_int_equal(t->n_closed, 1);
	FINISH(t, 0);
}

/* RFC 7323 3.2: once negotiated, a non-RST segment without TSopt SHOULD
 * be dropped silently. */
static void test_segment_without_timestamp_dropped_after_negotiation(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();

	INJECT(t, SEG(.seq = 1001, .len = 100));
	ADVANCE(t, 200);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_no_ts), 1);
	assert_int_equal(t->n_readable, 0);
	FINISH(t, 1);
}

/* RFC 7323 4.1: the RTT is measured from TSecr on an ACK of new data. */
static void test_timestamps_rtt_sample_from_tsecr(void **state)
{
	(void)state;
	struct pkt_t *t = start_ts();
	uint32_t sent;

	assert_int_equal(pkt_app_send(t, 1448), 1448);
	sent = pkt_ts_now(t);
	EXPECT(t, SEG(.seq = 1, .len = 1448, .ts_val = sent));
	ADVANCE(t, 50);
	INJECT(t, SEG(.ack = 1449, .ts_val = 150, .ts_ecr = sent));
	assert_int_equal(STAT(t, ts_rtt_samples), 1);
	/* RFC 6298 2.3 after the handshake's 0 ms sample: 7/8 0 + 1/8 50 ms. */
	assert_int_equal(t->conn->srtt_us, 50000 / 8);
	FINISH(t, 1);
}

/* RFC 7323 3.2: no TSopt on the peer's SYN, none from us ever. */
static void test_timestamps_not_sent_when_peer_lacks_them(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ts_val = PKT_ABSENT));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	INJECT(t, SEG(.seq = 1001, .len = 100));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.ack = 1101, .ts_val = PKT_ABSENT));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_timestamps_echoed),
		PKT_TEST(test_ts_recent_not_taken_from_out_of_order_segment),
		PKT_TEST(test_ts_recent_taken_from_resend_of_last_acked_segment),
		PKT_TEST(test_paws_rejects_old_timestamp_with_dup_ack),
		PKT_TEST(test_paws_does_not_apply_to_rst),
		PKT_TEST(test_segment_without_timestamp_dropped_after_negotiation),
		PKT_TEST(test_timestamps_rtt_sample_from_tsecr),
		PKT_TEST(test_timestamps_not_sent_when_peer_lacks_them),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
