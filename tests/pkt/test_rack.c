/* Packet scripts: RACK, RFC 8985's time-based loss detection (tcp/rack.c),
 * starting fast recovery with loss_detection = rack and SACK.
 *
 * The handshake takes 100 ms, so SRTT is 100 ms; every flight is
 * answered 100 ms after it left, so RACK.rtt and RACK.min_RTT are 100 ms
 * and the reordering window min_RTT / 4 = 25 ms (RFC 8985 6.2 step 4),
 * twice that after one D-SACK round.  Each script checks what the rule it
 * names sends and when: a segment sent before one SACKed is not resent
 * while the window lasts, is resent once it has passed (by an ACK or by
 * the RACK timer), and recovery starts on the first duplicate ACK, not the
 * third.  Without SACK, and with loss_detection = dupack, the same traces
 * send what they sent before RACK existed.
 *
 * Our segments are 1460 bytes; S(k) is the relative sequence number of the
 * k-th (data starts at 1). */
#include <errno.h>

#include "tests/pkt/harness.h"

#define MSS 1460u
#define S(k) (1u + (uint32_t)(k) * MSS)
#define WS 7
#define RTT 100u

/* Passive open (SACK as asked, window scale 7, no timestamps), the
 * handshake's ACK RTT ms after our SYN-ACK; det for this connection. */
static struct pkt_t *start(enum tcp_loss_det det, bool sack)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.sack = sack;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = WS,
		      .sack_perm = sack ? 1 : PKT_ANY));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	ADVANCE(t, RTT);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_non_null(t->conn);
	assert_int_equal(tcp_set_loss_detection(t->conn, det), 0);
	return t;
}

/* The application writes segments first .. first + n - 1; all go now. */
static void send_segs(struct pkt_t *t, unsigned first, unsigned n)
{
	assert_int_equal(pkt_app_send(t, n * MSS), n * MSS);
	for (unsigned k = first; k < first + n; k++)
		EXPECT(t, SEG(.seq = S(k), .len = MSS));
	EXPECT_NOTHING(t);
}

/* The peer's ACK at S(una) SACKing [S(lo), S(hi)). */
static void sack(struct pkt_t *t, unsigned una, unsigned lo, unsigned hi)
{
	INJECT(t, SEG(.seq = 1001, .ack = S(una), .nsack = 1, .sack = { { S(lo), S(hi) } }));
}

static void ack(struct pkt_t *t, unsigned una)
{
	INJECT(t, SEG(.seq = 1001, .ack = S(una)));
}

/* Five segments from `first`, all sent now; a round trip later the
 * peer SACKs the second: the first is missing. */
static void flight_then_sack(struct pkt_t *t, unsigned first)
{
	send_segs(t, first, 5);
	ADVANCE(t, RTT);
	sack(t, first, first + 1, first + 2);
	EXPECT_NOTHING(t);
}

static struct tcp_conn_info info_of(struct pkt_t *t)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(t->conn, &info);
	return info;
}

/* Reordering within the window: segment 0 arrives 10 ms after segment 1
 * was SACKed.  RACK waits (its timer armed for the window's end), the
 * late cumulative ACK shows the reordering (step 3), nothing is resent. */
static void test_reordered_within_window_not_marked(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, true);

	flight_then_sack(t, 0);
	assert_int_not_equal(t->conn->deadline[TCP_T_RACK], 0);
	assert_int_equal(info_of(t).rack_min_rtt_us, RTT * 1000);
	ADVANCE(t, 10);
	ack(t, 2);
	EXPECT_NOTHING(t);
	assert_int_equal(t->conn->deadline[TCP_T_RACK], 0);
	assert_true(info_of(t).rack_reordering_seen);
	assert_int_equal(STAT(t, rack_reordering_seen), 1);
	ADVANCE(t, 50);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_marked_lost), 0);
	assert_int_equal(STAT(t, rack_timer_fired), 0);
	assert_int_equal(STAT(t, recovery_episodes), 0);
	ack(t, 5);
	EXPECT_NOTHING(t);
	/* Everything acknowledged: the record is empty. */
	assert_true(tcp_slog_empty(&t->conn->loss.rack.log));
	FINISH(t, 1);
}

/* Segment 0, 50 ms later segment 1, whose SACK arrives a round trip
 * after it (segment 0 missing). */
static struct pkt_t *sent_apart_then_sack(enum tcp_loss_det det)
{
	struct pkt_t *t = start(det, true);

	send_segs(t, 0, 1);
	ADVANCE(t, 50);
	send_segs(t, 1, 1);
	ADVANCE(t, RTT);
	sack(t, 0, 1, 2);
	return t;
}

/* Past the window: segment 0 left 50 ms before segment 1, whose SACK
 * arrives a round trip after it.  Segment 0 was sent 150 ms ago, more
 * than RACK.rtt + reo_wnd = 125 ms: lost at this very ACK, the first
 * duplicate, and recovery resends it (RFC 8985 6.2 step 5). */
static void test_sent_before_past_window_marked_on_ack(void **state)
{
	(void)state;
	struct pkt_t *t = sent_apart_then_sack(TCP_LOSS_RACK);

	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_true(t->conn->loss.in_recovery);
	assert_int_equal(STAT(t, dup_acks), 1);
	assert_int_equal(STAT(t, rack_marked_lost), 1);
	assert_int_equal(STAT(t, rec_enter_rack), 1);
	assert_int_equal(STAT(t, fast_retransmits), 1);
	assert_int_equal(info_of(t).rack_marked_lost, 1);
	assert_int_equal(info_of(t).rack_rec_entries, 1);
	assert_int_equal(info_of(t).loss_detection, TCP_LOSS_RACK);
	ADVANCE(t, RTT);
	ack(t, 2);
	EXPECT_NOTHING(t);
	assert_false(t->conn->loss.in_recovery);
	FINISH(t, 1);
}

/* The same trace with loss_detection = dupack: one duplicate ACK is no
 * loss (RFC 6675 IsLost needs three SACKed segments): nothing goes until
 * the RTO. */
static void test_dupack_same_trace_waits(void **state)
{
	(void)state;
	struct pkt_t *t = sent_apart_then_sack(TCP_LOSS_DUPACK);

	EXPECT_NOTHING(t);
	assert_false(t->conn->loss.in_recovery);
	assert_int_equal(t->conn->deadline[TCP_T_RACK], 0);
	ADVANCE(t, 10);
	ack(t, 2);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_marked_lost), 0);
	assert_int_equal(info_of(t).loss_detection, TCP_LOSS_DUPACK);
	FINISH(t, 1);
}

/* The RACK timer (step 6): the SACK of segment 1 leaves segment 0 (sent
 * at the same instant, before it) 25 ms to arrive.  Nothing comes: at
 * 25 ms the timer marks it lost, recovery starts with a single duplicate
 * ACK seen, and PRR's first retransmission resends it. */
static void test_timer_marks_and_starts_recovery(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, true);

	flight_then_sack(t, 0);
	ADVANCE(t, 24);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_timer_fired), 0);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_timer_fired), 1);
	assert_int_equal(info_of(t).rack_timer_fired, 1);
	assert_int_equal(STAT(t, rack_marked_lost), 1);
	assert_int_equal(STAT(t, rec_enter_rack), 1);
	assert_int_equal(STAT(t, dup_acks), 1);
	assert_true(t->conn->loss.in_recovery);
	ack(t, 5);
	EXPECT_NOTHING(t);
	assert_false(t->conn->loss.in_recovery);
	FINISH(t, 1);
}

/* Step 4: a D-SACK (the retransmission of segment 0 was needless: the
 * original had been reordered) doubles the reordering window.  In the
 * next flight the same SACK leaves segment 5 50 ms, not 25: the timer
 * fires only then. */
static void test_dsack_grows_window(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, true);

	flight_then_sack(t, 0);
	ADVANCE(t, 25);
	EXPECT(t, SEG(.seq = S(0), .len = MSS)); /* the timer: as above */
	EXPECT_NOTHING(t);
	ADVANCE(t, 5);
	ack(t, 5); /* the original segment 0 arrived */
	assert_false(t->conn->loss.in_recovery);
	assert_int_equal(info_of(t).rack_reo_wnd_mult, 1);
	INJECT(t, SEG(.seq = 1001, .ack = S(5), .nsack = 1, .sack = { { S(0), S(1) } }));
	assert_int_equal(STAT(t, dsack_rcvd), 1);
	assert_int_equal(STAT(t, rack_reo_wnd_grown), 1);
	assert_int_equal(info_of(t).rack_reo_wnd_mult, 2);
	EXPECT_NOTHING(t);
	/* The next flight (cwnd set back to the initial window that recovery
	 * halved): segment 6 SACKed, 5 missing. */
	t->conn->cwnd = 10 * MSS;
	flight_then_sack(t, 5);
	ADVANCE(t, 49);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_timer_fired), 1);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = S(5), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_timer_fired), 2);
	ack(t, 10);
	EXPECT_NOTHING(t);
	/* The grown window outlives this recovery (16 of them, step 4). */
	assert_int_equal(info_of(t).rack_reo_wnd_mult, 2);
	assert_int_equal(STAT(t, rack_reo_wnd_grown), 1);
	FINISH(t, 1);
}

/* Without SACK, RACK has nothing to go by: duplicate ACKs as ever (the
 * third starts recovery), no record, no timer. */
static void test_no_sack_dupacks_unchanged(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, false);

	send_segs(t, 0, 5);
	ADVANCE(t, RTT);
	ack(t, 0);
	ack(t, 0);
	EXPECT_NOTHING(t);
	ADVANCE(t, 60);
	EXPECT_NOTHING(t);
	assert_int_equal(t->conn->deadline[TCP_T_RACK], 0);
	ack(t, 0);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_true(t->conn->loss.in_recovery);
	assert_int_equal(STAT(t, fast_retransmits), 1);
	assert_int_equal(STAT(t, rec_enter_rack), 0);
	assert_int_equal(STAT(t, rack_marked_lost), 0);
	assert_true(tcp_slog_empty(&t->conn->loss.rack.log));
	ack(t, 5);
	assert_false(t->conn->loss.in_recovery);
	FINISH(t, 1);
}

/* Only what RACK marked goes again.  A first flight shows reordering
 * (RACK then keeps its window in recovery too, RFC 8985 6.2 step 4).
 * Then segment 5 leaves 50 ms before 6-9, and a round trip after them the
 * peer SACKs 6 and 8-9.  Segment 5 is past the window and resent at once;
 * segment 7, a hole below the highest SACK that RFC 6675's rule 3 would
 * resend too, left with 8 and has its window first: the RACK timer resends
 * it 25 ms later.  No rescue (rule 4) either, as in Linux. */
static void test_only_marked_segments_resent(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, true);

	flight_then_sack(t, 0);
	ADVANCE(t, 10);
	ack(t, 5);
	assert_true(info_of(t).rack_reordering_seen);
	send_segs(t, 5, 1);
	ADVANCE(t, 50);
	send_segs(t, 6, 4);
	ADVANCE(t, RTT);
	INJECT(t, SEG(.seq = 1001, .ack = S(5), .nsack = 2,
		      .sack = { { S(8), S(10) }, { S(6), S(7) } }));
	EXPECT(t, SEG(.seq = S(5), .len = MSS));
	EXPECT_NOTHING(t);
	assert_true(t->conn->loss.in_recovery);
	ADVANCE(t, 24);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = S(7), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_marked_lost), 2);
	assert_int_equal(STAT(t, rec_rxt_unsacked), 0);
	assert_int_equal(STAT(t, rec_rescue), 0);
	ack(t, 10);
	EXPECT_NOTHING(t);
	assert_false(t->conn->loss.in_recovery);
	FINISH(t, 1);
}

/* Sends of one instant keep their order.  Three duplicate ACKs come at
 * once: the first two send new segments 10 and 11 (limited transmit), the
 * third has RACK mark segment 0 lost and recovery resend it, after them.
 * A round trip later the peer SACKs 10 and 11, which it got first: the
 * resend, sent after them, is not lost (RFC 8985 6.2 RACK_sent_after;
 * with one clock reading for the instant, the sequence-number tie-break
 * said the resend went before segment 11 and resent it again). */
static void test_same_instant_sends_keep_order(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, true);

	assert_int_equal(pkt_app_send(t, 12 * MSS), 12 * MSS);
	for (unsigned k = 0; k < 10; k++)
		EXPECT(t, SEG(.seq = S(k), .len = MSS));
	EXPECT_NOTHING(t);
	ADVANCE(t, RTT);
	sack(t, 0, 1, 2);
	EXPECT(t, SEG(.seq = S(10), .len = MSS));
	sack(t, 0, 1, 3);
	EXPECT(t, SEG(.seq = S(11), .len = MSS));
	sack(t, 0, 1, 4);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	EXPECT_NOTHING(t);
	assert_true(t->conn->loss.in_recovery);
	ADVANCE(t, RTT);
	INJECT(t, SEG(.seq = 1001, .ack = S(0), .nsack = 2,
		      .sack = { { S(10), S(12) }, { S(1), S(10) } }));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rack_marked_lost), 1);
	ack(t, 12);
	EXPECT_NOTHING(t);
	assert_false(t->conn->loss.in_recovery);
	FINISH(t, 1);
}

/* The setter refuses an unknown kind; without it the configuration
 * decides (these scripts pin dupack; the stack's default is RACK). */
static void test_setter_and_default(void **state)
{
	(void)state;
	struct pkt_t *t = start(TCP_LOSS_RACK, true);
	struct tcp_config defaults;

	tcp_config_defaults(&defaults);
	assert_int_equal(defaults.loss_detection, TCP_LOSS_RACK);
	assert_true(defaults.tlp && defaults.undo);

	assert_int_equal(tcp_set_loss_detection(t->conn, TCP_LOSS_DET_COUNT), -EINVAL);
	assert_int_equal(info_of(t).loss_detection, TCP_LOSS_RACK);
	t->conn->loss.rack.det_set = false;
	assert_int_equal(info_of(t).loss_detection, TCP_LOSS_DUPACK);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_reordered_within_window_not_marked),
		PKT_TEST(test_sent_before_past_window_marked_on_ack),
		PKT_TEST(test_dupack_same_trace_waits),
		PKT_TEST(test_timer_marks_and_starts_recovery),
		PKT_TEST(test_dsack_grows_window),
		PKT_TEST(test_no_sack_dupacks_unchanged),
		PKT_TEST(test_only_marked_segments_resent),
		PKT_TEST(test_same_instant_sends_keep_order),
		PKT_TEST(test_setter_and_default),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
