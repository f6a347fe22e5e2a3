/* Packet scripts: Tail Loss Probe (RFC 8985 section 7, tcp/tlp.c).
 *
 * Every script opens with a 100 ms handshake RTT (SRTT 100 ms, RTTVAR
 * 50 ms, RTO 300 ms), SACK on, timestamps off (so the RTT samples are the
 * ones the script times) and our segments 1460 bytes; S(k) is the
 * relative sequence number of the k-th.  The PTO is 2 SRTT plus rto_min
 * (200 ms) for a single segment in flight, plus two ticks (2 ms) for more,
 * and at most a tick (1 ms) before the RTO (the probe then goes instead).
 *
 * When an ACK of the first segments comes 100 ms after they left, SRTT
 * stays 100 ms, RTTVAR falls to 37.5 ms and the RTO becomes 250 ms. */
#include "tests/pkt/harness.h"

#define MSS 1460u
#define S(k) (1u + (uint32_t)(k) * MSS)
#define SRTT_MS 100u
#define DELACK_MS 40u
#define TICKS2_MS 2u

/* cfg_tlp: [tcp] tlp; set: tcp_set_tlp(on) after the handshake. */
static struct pkt_t *start_ex(bool cfg_tlp, bool set, bool on)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.wscale = false;
	cfg.tlp = cfg_tlp;
	assert_int_equal(cfg.delack_ms, DELACK_MS);
	t = pkt_start(&cfg);
	ESTABLISH_RTT(t, SRTT_MS, true);
	assert_non_null(t->conn);
	if (set)
		assert_int_equal(tcp_set_tlp(t->conn, on), 0);
	assert_int_equal(t->conn->rto_ms, 300);
	return t;
}

static struct pkt_t *start(void)
{
	return start_ex(true, false, false);
}

static struct tcp_conn_info info_of(struct pkt_t *t)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(t->conn, &info);
	return info;
}

/* The application writes n segments; k of them leave now. */
static void send_segs(struct pkt_t *t, unsigned first, unsigned n, unsigned k)
{
	assert_int_equal(pkt_app_send(t, n * MSS), n * MSS);
	for (unsigned i = 0; i < k; i++)
		EXPECT(t, SEG(.seq = S(first + i), .len = MSS));
	EXPECT_NOTHING(t);
}

/* Nothing for ms - 1, then exactly what the caller expects next. */
static void wait_until(struct pkt_t *t, uint32_t ms)
{
	ADVANCE(t, ms - 1);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
}

/* The probe (segment k, counted as such) exactly ms from now, nothing before. */
static void probe_after(struct pkt_t *t, uint32_t ms, unsigned k)
{
	uint64_t probes = STAT(t, tlp_probes);

	wait_until(t, ms);
	EXPECT(t, SEG(.seq = S(k), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, tlp_probes), probes + 1);
}

/* A 3-segment response whose last segment is lost; the first two are
 * ACKed 100 ms later, leaving one segment in flight: PTO = 2 SRTT + 200 ms
 * from that ACK, past the RTO (250 ms away then): the probe resends it a
 * tick before the RTO's time, instead of the RTO. */
static void tail_probe(struct pkt_t *t)
{
	send_segs(t, 0, 3, 3);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(2)));
	EXPECT_NOTHING(t);
	assert_int_equal(t->conn->rto_ms, 250);
	probe_after(t, 249, 2);
	assert_int_equal(STAT(t, tlp_rto_nearer), 1);
	assert_int_equal(STAT(t, tlp_probes_new_data), 0);
	assert_int_equal(STAT(t, rto_fired), 0);
}

/* The next response, ACKed whole after 100 ms: an ACK beyond the probe. */
static void next_response(struct pkt_t *t, unsigned first)
{
	send_segs(t, first, 1, 1);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(first + 1)));
	EXPECT_NOTHING(t);
}

/* RFC 8985 7.2-7.4: the probe at 2 SRTT + the delayed-ACK allowance, its
 * ACK (no D-SACK, only the probe arrived), and once an ACK goes beyond it
 * the congestion response of a fast recovery: ssthresh from the flight the
 * probe went into (one segment: 2 SMSS), cwnd = ssthresh. */
static void test_tail_loss_repaired(void **state)
{
	struct pkt_t *t = start();
	struct tcp_conn_info info;

	(void)state;
	tail_probe(t);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	/* An ACK just at the probe's end may still be followed by the
	 * duplicate's D-SACK: no verdict yet. */
	assert_int_equal(STAT(t, tlp_repairs), 0);
	assert_true(t->conn->loss.tlp.out);
	assert_true(t->conn->cwnd > 10 * MSS);
	next_response(t, 3);
	assert_int_equal(STAT(t, tlp_repairs), 1);
	assert_int_equal(STAT(t, tlp_no_loss), 0);
	info = info_of(t);
	assert_true(info.tlp);
	assert_int_equal(info.tlp_probes, 1);
	assert_int_equal(info.tlp_repairs, 1);
	assert_int_equal(info.ssthresh, 2 * MSS);
	assert_int_equal(info.cwnd, 2 * MSS);
	assert_int_equal(STAT(t, rto_fired), 0);
	assert_int_equal(STAT(t, recovery_episodes), 0);
	FINISH(t, 1);
}

/* RFC 8985 7.2: with more than one segment in flight, exactly 2 SRTT and
 * two ticks after the last transmission; the last segment goes again.
 * Its ACK covers everything: the timers stop. */
static void test_probe_at_two_srtt(void **state)
{
	struct pkt_t *t = start();

	(void)state;
	send_segs(t, 0, 3, 3);
	probe_after(t, 2 * SRTT_MS + TICKS2_MS, 2);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	ADVANCE(t, 2000);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rto_fired), 0);
	FINISH(t, 1);
}

/* RFC 8985 7.3: new data as the probe when the peer's window takes it,
 * even beyond cwnd (here 2 segments, the third held back by it). */
static void test_probe_new_data(void **state)
{
	struct pkt_t *t = start();

	(void)state;
	t->conn->cwnd = 2 * MSS;
	send_segs(t, 0, 3, 2);
	probe_after(t, 2 * SRTT_MS + TICKS2_MS, 2);
	assert_int_equal(STAT(t, tlp_probes_new_data), 1);
	assert_int_equal(STAT(t, retrans_segs), 0);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	EXPECT_NOTHING(t);
	/* A probe of new data ends its episode when ACKed: no verdict. */
	assert_false(t->conn->loss.tlp.out);
	assert_int_equal(STAT(t, tlp_repairs) + STAT(t, tlp_no_loss), 0);
	FINISH(t, 1);
}

/* RFC 8985 7.4 / RFC 2883: the ACK of the probe D-SACKs it (the original
 * had arrived, its ACK was lost): no loss, no congestion response. */
static void test_dsack_no_loss(void **state)
{
	struct pkt_t *t = start();
	uint32_t cwnd;

	(void)state;
	tail_probe(t);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(3), .nsack = 1, .sack = { { S(2), S(3) } }));
	assert_int_equal(STAT(t, tlp_no_loss), 1);
	assert_false(t->conn->loss.tlp.out);
	cwnd = t->conn->cwnd;
	next_response(t, 3);
	assert_int_equal(STAT(t, tlp_repairs), 0);
	assert_true(t->conn->cwnd >= cwnd);
	assert_true(t->conn->cwnd > 10 * MSS);
	FINISH(t, 1);
}

/* RFC 8985 7.2: never later than the RTO.  One segment at 0: its PTO
 * (400 ms) is past the RTO at 300, so the probe is due a tick before it,
 * at 299; a second segment at 150 (PTO 352) leaves it there.  At 299 the
 * probe, the last segment, goes instead of the RTO's go-back-N, and the
 * RTO restarts from it. */
static void test_probe_at_rto_time(void **state)
{
	struct pkt_t *t = start();

	(void)state;
	send_segs(t, 0, 1, 1);
	ADVANCE(t, 150);
	send_segs(t, 1, 1, 1);
	assert_int_equal(STAT(t, tlp_rto_nearer), 2);
	probe_after(t, 149, 1);
	assert_int_equal(STAT(t, rto_fired), 0);
	INJECT(t, SEG(.seq = 1001, .ack = S(2)));
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* RFC 8985 7.3 condition 1: one probe at a time.  The probe's ACK only
 * reaches its end, so its episode is still open when the next response
 * is lost: the PTO fires without a probe and the RTO repairs it. */
static void test_one_probe_outstanding(void **state)
{
	struct pkt_t *t = start();

	(void)state;
	tail_probe(t);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	send_segs(t, 3, 1, 1);
	/* No sample since the probe either (its ACK was not timed, Karn): a
	 * tick before the RTO the PTO fires without a probe, then the RTO. */
	wait_until(t, 249);
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, tlp_skipped), 1);
	wait_until(t, 1);
	EXPECT(t, SEG(.seq = S(3), .len = MSS));
	assert_int_equal(STAT(t, rto_fired), 1);
	assert_int_equal(STAT(t, tlp_probes), 1);
	/* The RTO ended the episode: its ACK is no repair. */
	assert_false(t->conn->loss.tlp.out);
	INJECT(t, SEG(.seq = 1001, .ack = S(4)));
	assert_int_equal(STAT(t, tlp_repairs), 0);
	FINISH(t, 1);
}

/* TLP off ([tcp] tlp's default, or tcp_set_tlp(false)): today's
 * behaviour, the lost tail waits for the RTO (250 ms after the ACK). */
static void tail_without_tlp(struct pkt_t *t)
{
	send_segs(t, 0, 3, 3);
	ADVANCE(t, SRTT_MS);
	INJECT(t, SEG(.seq = 1001, .ack = S(2)));
	EXPECT_NOTHING(t);
	assert_int_equal(t->conn->deadline[TCP_T_TLP], 0);
	wait_until(t, 250);
	EXPECT(t, SEG(.seq = S(2), .len = MSS));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, rto_fired), 1);
	assert_int_equal(STAT(t, tlp_probes), 0);
	assert_false(info_of(t).tlp);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	FINISH(t, 1);
}

static void test_off_by_default(void **state)
{
	struct tcp_config cfg;

	(void)state;
	pkt_config_defaults(&cfg);
	assert_false(cfg.tlp);
	tail_without_tlp(start_ex(false, false, false));
}

static void test_off_per_connection(void **state)
{
	(void)state;
	tail_without_tlp(start_ex(true, true, false));
}

/* tcp_set_tlp(true) on a stack configured without it. */
static void test_on_per_connection(void **state)
{
	struct pkt_t *t = start_ex(false, true, true);

	(void)state;
	tail_probe(t);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	FINISH(t, 1);
}

/* Like Linux, no TLP without SACK (RFC 8985 requires it). */
static void test_no_sack_no_tlp(void **state)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	(void)state;
	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.wscale = false;
	cfg.tlp = true;
	t = pkt_start(&cfg);
	ESTABLISH_RTT(t, SRTT_MS, false);
	send_segs(t, 0, 3, 3);
	assert_int_equal(t->conn->deadline[TCP_T_TLP], 0);
	wait_until(t, 300);
	EXPECT(t, SEG(.seq = S(0), .len = MSS));
	assert_int_equal(STAT(t, tlp_probes), 0);
	INJECT(t, SEG(.seq = 1001, .ack = S(3)));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_tail_loss_repaired),
		PKT_TEST(test_probe_at_two_srtt),
		PKT_TEST(test_probe_new_data),
		PKT_TEST(test_dsack_no_loss),
		PKT_TEST(test_probe_at_rto_time),
		PKT_TEST(test_one_probe_outstanding),
		PKT_TEST(test_off_by_default),
		PKT_TEST(test_off_per_connection),
		PKT_TEST(test_on_per_connection),
		PKT_TEST(test_no_sack_no_tlp),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
