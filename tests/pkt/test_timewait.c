/* Packet scripts: a SYN for a connection in TIME-WAIT (RFC 6191; RFC 1122
 * 4.2.2.13 and RFC 9293 3.10.7.4 without timestamps). */
#include "tests/pkt/harness.h"

/* RFC 1122 4.2.2.13: the new ISS is above the old SND.NXT (2 after our
 * FIN), by the largest unscaled window plus 2, as Linux does. */
#define NEW_ISS(old_isn) ((old_isn) + 2 + 65535 + 2)

static struct tcp_conn *tw_tcb(struct pkt_t *t)
{
	return tcp_table_lookup(t->ts, PKT_LOCAL_IP, PKT_LOCAL_PORT, PKT_PEER_IP, PKT_PEER_PORT);
}

/* Passive open (timestamps when ts: the peer's TSval 100 on the SYN, 101
 * on the ACK), we close first, the peer's FIN (TSval 103): TIME-WAIT with
 * RCV.NXT 1002 and SND.NXT our ISN + 2.  Returns our ISN. */
static uint32_t to_time_wait(struct pkt_t *t, bool ts)
{
	if (ts)
		ESTABLISH_TS(t);
	else
		ESTABLISH(t);
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(tcp_close(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	if (ts)
		INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2, .ts_val = 103));
	else
		INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_non_null(tw_tcb(t));
	assert_int_equal(tw_tcb(t)->state, TCP_TIME_WAIT);
	return t->our_isn;
}

static struct pkt_t *start(bool ts)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = false;
	cfg.timestamps = ts;
	return pkt_start(&cfg);
}

/* Count our numbers from the new SYN-ACK on. */
static void renumber(struct pkt_t *t)
{
	t->isn_known = false;
	t->our_max = 0;
	t->peer_isn_known = false;
}

/* The new incarnation completes like any passive open. */
static void complete_new(struct pkt_t *t, uint32_t seq, int64_t ts_val)
{
	INJECT(t, SEG(.seq = seq + 1, .ack = 1, .ts_val = ts_val, .ts_ecr = pkt_ts_now(t)));
	assert_int_equal(t->n_accept, 2);
	assert_non_null(t->conn);
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
}

/* RFC 1122 4.2.2.13: without timestamps, a SYN above RCV.NXT ends
 * TIME-WAIT and opens a new connection through the listener, its ISS
 * above the old SND.NXT. */
static void test_syn_above_rcv_nxt_reopens(void **state)
{
	(void)state;
	struct pkt_t *t = start(false);
	uint32_t old = to_time_wait(t, false);

	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .abs = true, .seq = NEW_ISS(old), .ack = 5001));
	assert_int_equal(STAT(t, timewait_reused), 1);
	assert_int_equal(STAT(t, timewait_syn_refused), 0);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	assert_int_equal(tw_tcb(t)->state, TCP_SYN_RECEIVED);
	complete_new(t, 5000, PKT_ANY);
	FINISH(t, 1);
}

/* Not above RCV.NXT: the old rules.  In the window it is a SYN in a
 * synchronized state (RFC 5961 4.2 challenge ACK), below it an
 * unacceptable segment (ACK); TIME-WAIT stays. */
static void test_syn_not_above_rcv_nxt_refused(void **state)
{
	(void)state;
	struct pkt_t *t = start(false);

	to_time_wait(t, false);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1002, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .len = 0));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 500, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .len = 0));
	assert_int_equal(STAT(t, timewait_syn_refused), 2);
	assert_int_equal(STAT(t, timewait_reused), 0);
	assert_int_equal(STAT(t, challenge_acks), 1);
	assert_int_equal(tw_tcb(t)->state, TCP_TIME_WAIT);
	assert_int_equal(t->n_accept, 1);
	FINISH(t, 1);
}

/* No listener any more: nothing to hand the SYN to, TIME-WAIT stays. */
static void test_syn_without_listener_keeps_time_wait(void **state)
{
	(void)state;
	struct pkt_t *t = start(false);

	to_time_wait(t, false);
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .len = 0));
	assert_int_equal(STAT(t, timewait_syn_refused), 1);
	assert_int_equal(tw_tcb(t)->state, TCP_TIME_WAIT);
	FINISH(t, 1);
}

/* The listener answers SYNs with cookies (backlog full): a cookie could
 * not be an ISS above the old SND.NXT, so TIME-WAIT stays (old rules). */
static void test_syn_refused_while_listener_uses_cookies(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.backlog = 1;
	t = pkt_start(&cfg);
	to_time_wait(t, false);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .sport = 40001, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 7001, .dport = 40001));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .len = 0));
	assert_int_equal(STAT(t, timewait_syn_refused), 1);
	assert_int_equal(STAT(t, syncookies_sent), 0);
	assert_int_equal(tw_tcb(t)->state, TCP_TIME_WAIT);
	FINISH(t, 2);
}

/* RFC 6191 2: with timestamps a newer TSval reopens, whatever the
 * sequence number (here below RCV.NXT). */
static void test_syn_newer_timestamp_reopens(void **state)
{
	(void)state;
	struct pkt_t *t = start(true);
	uint32_t old = to_time_wait(t, true);

	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 500, .mss = 1460, .ts_val = 200));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .abs = true, .seq = NEW_ISS(old), .ack = 501,
		      .ts_ecr = 200));
	assert_int_equal(STAT(t, timewait_reused), 1);
	INJECT(t, SEG(.seq = 501, .ack = 1, .ts_val = 201, .ts_ecr = pkt_ts_now(t)));
	assert_int_equal(t->n_accept, 2);
	assert_true(t->conn->ts_ok);
	FINISH(t, 1);
}

/* RFC 6191 2: an older TSval is refused; the old rules then apply, here
 * PAWS (RFC 7323 5.3): an ACK, the SYN dropped. */
static void test_syn_older_timestamp_refused(void **state)
{
	(void)state;
	struct pkt_t *t = start(true);

	to_time_wait(t, true);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460, .ts_val = 50));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .ts_ecr = 103));
	assert_int_equal(STAT(t, timewait_syn_refused), 1);
	assert_int_equal(STAT(t, drop_paws), 1);
	assert_int_equal(tw_tcb(t)->state, TCP_TIME_WAIT);
	FINISH(t, 1);
}

/* RFC 6191 2: an equal TSval reopens only when the sequence number is
 * above the last one seen. */
static void test_syn_equal_timestamp_needs_higher_seq(void **state)
{
	(void)state;
	struct pkt_t *t = start(true);
	uint32_t old = to_time_wait(t, true);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 1002, .mss = 1460, .ts_val = 103));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .len = 0));
	assert_int_equal(STAT(t, timewait_syn_refused), 1);
	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 3000, .mss = 1460, .ts_val = 103));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .abs = true, .seq = NEW_ISS(old), .ack = 3001));
	assert_int_equal(STAT(t, timewait_reused), 1);
	complete_new(t, 3000, 104);
	FINISH(t, 1);
}

/* RFC 6191 2: the old incarnation had timestamps, the new SYN has none
 * (they will not be enabled): it reopens. */
static void test_syn_without_timestamps_after_ts_incarnation_reopens(void **state)
{
	(void)state;
	struct pkt_t *t = start(true);
	uint32_t old = to_time_wait(t, true);

	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 900, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .abs = true, .seq = NEW_ISS(old), .ack = 901,
		      .ts_val = PKT_ABSENT));
	assert_int_equal(STAT(t, timewait_reused), 1);
	complete_new(t, 900, PKT_ANY);
	assert_false(t->conn->ts_ok);
	FINISH(t, 1);
}

/* An ACK-bearing segment (not a pure SYN) in TIME-WAIT keeps the old
 * rules and is not counted as a SYN; the 2 MSL timer still ends it. */
static void test_time_wait_still_expires(void **state)
{
	(void)state;
	struct pkt_t *t = start(false);

	to_time_wait(t, false);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002, .len = 0));
	assert_int_equal(STAT(t, timewait_syn_refused), 0);
	ADVANCE(t, 60000);
	assert_null(tw_tcb(t));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_syn_above_rcv_nxt_reopens),
		PKT_TEST(test_syn_not_above_rcv_nxt_refused),
		PKT_TEST(test_syn_without_listener_keeps_time_wait),
		PKT_TEST(test_syn_refused_while_listener_uses_cookies),
		PKT_TEST(test_syn_newer_timestamp_reopens),
		PKT_TEST(test_syn_older_timestamp_refused),
		PKT_TEST(test_syn_equal_timestamp_needs_higher_seq),
		PKT_TEST(test_syn_without_timestamps_after_ts_incarnation_reopens),
		PKT_TEST(test_time_wait_still_expires),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
