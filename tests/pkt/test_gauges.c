/* Packet scripts: the per-state TCB gauges (tcp.h TCP_STATE_GAUGES).  Each
 * script walks connections through RFC 9293's states and, after every step,
 * compares all the gauges with what that step must leave, and recounts the
 * table (tcp_state_gauges_check), so a gauge that stays behind, moves twice
 * or forgets a TCB that went fails here by its name. */
#include "tests/pkt/harness.h"

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>

#include "tcp/fastopen.h"

/* Helpers */

/* Every gauge of ts equals want (fields left out: 0), and its table
 * agrees with them. */
static void gauges_are(const struct tcp_stack *ts, struct tcp_state_gauges want,
		       const char *file, int line)
{
	struct tcp_state_gauges got;
	char why[96];

	tcp_stack_state_gauges(ts, &got);
#define GAUGE_X_CMP(name, state, desc) \
	if (got.name != want.name) { \
		print_error("%s:%d: tcbs_%s is %u, want %u\n", file, line, #name, \
			    (unsigned)got.name, (unsigned)want.name); \
		_fail(file, line); \
	}
	TCP_STATE_GAUGES(GAUGE_X_CMP)
#undef GAUGE_X_CMP
	if (tcp_state_gauges_check(ts, why, sizeof(why)) != 0) {
		print_error("%s:%d: %s\n", file, line, why);
		_fail(file, line);
	}
}

#define GAUGES_OF(ts, ...) gauges_are((ts), (struct tcp_state_gauges){ __VA_ARGS__ }, \
				      __FILE__, __LINE__)
#define GAUGES(t, ...) GAUGES_OF((t)->ts, __VA_ARGS__)

static struct pkt_t *start_with(uint32_t time_wait_ms)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.time_wait_ms = time_wait_ms;
	return pkt_start(&cfg);
}

/* Our sequence numbers and the peer's are counted afresh from the next
 * SYN and SYN-ACK (the harness learns ISNs from the first it sees). */
static void renumber(struct pkt_t *t)
{
	t->isn_known = false;
	t->our_max = 0;
	t->peer_isn_known = false;
}

/* CLOSED -> SYN-SENT: an active open to the peer. */
static struct tcp_conn *open_active(struct pkt_t *t)
{
	struct tcp_conn *c = NULL;

	t->local_port = 0; /* learnt from our SYN */
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	return c;
}

/* The states, one step at a time */

/* Passive open, the peer closes first: LISTEN, SYN-RECEIVED, ESTABLISHED,
 * CLOSE-WAIT, LAST-ACK, gone (the listener stays). */
static void test_gauges_passive_open_peer_closes(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	GAUGES(t, 0);
	assert_int_equal(pkt_listen(t), 0);
	GAUGES(t, .listen = 1);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	GAUGES(t, .listen = 1, .syn_received = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	GAUGES(t, .listen = 1, .established = 1);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1002));
	GAUGES(t, .listen = 1, .close_wait = 1);
	assert_int_equal(tcp_close(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1002));
	GAUGES(t, .listen = 1, .last_ack = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 2));
	GAUGES(t, .listen = 1);
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	GAUGES(t, 0);
	FINISH(t, 0);
}

/* We close first: FIN-WAIT-1, FIN-WAIT-2, TIME-WAIT for 2 MSL, gone. */
static void test_gauges_active_close_through_time_wait(void **state)
{
	(void)state;
	struct pkt_t *t = start_with(2000);

	ESTABLISH(t);
	GAUGES(t, .listen = 1, .established = 1);
	assert_int_equal(tcp_close(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	GAUGES(t, .listen = 1, .fin_wait_1 = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 2));
	GAUGES(t, .listen = 1, .fin_wait_2 = 1);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	GAUGES(t, .listen = 1, .time_wait = 1);
	ADVANCE(t, 1999);
	GAUGES(t, .listen = 1, .time_wait = 1);
	ADVANCE(t, 1);
	GAUGES(t, .listen = 1);
	FINISH(t, 0);
}

/* FINs crossing: FIN-WAIT-1, CLOSING, TIME-WAIT. */
static void test_gauges_simultaneous_close_through_closing(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	GAUGES(t, .listen = 1, .closing = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 2));
	GAUGES(t, .listen = 1, .time_wait = 1);
	FINISH(t, 1);
}

/* Active opens: SYN-SENT to ESTABLISHED, SYN-SENT to SYN-RECEIVED
 * (simultaneous open), SYN-SENT deleted by the application. */
static void test_gauges_active_opens(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = open_active(t);

	GAUGES(t, .syn_sent = 1);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001));
	GAUGES(t, .established = 1);
	assert_int_equal(tcp_abort(c), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	GAUGES(t, 0);

	renumber(t);
	c = open_active(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 7001));
	GAUGES(t, .syn_received = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 7001, .ack = 1));
	GAUGES(t, .established = 1);
	/* The peer resets it: the TCB goes from ESTABLISHED. */
	INJECT(t, SEG(.flags = TH_RST, .seq = 7001));
	assert_int_equal(t->n_closed, 1);
	GAUGES(t, 0);

	renumber(t);
	c = open_active(t);
	GAUGES(t, .syn_sent = 1);
	assert_int_equal(tcp_close(c), 0);
	GAUGES(t, 0);
	FINISH(t, 0);
}

/* Ends that are no transition of the diagram: an embryo reset by the peer,
 * an embryo given up after synack_retries, embryos of a listener that goes,
 * connections reset at shutdown. */
static void test_gauges_aborted_embryos_and_shutdown(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.synack_retries = 1;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	GAUGES(t, .listen = 1, .syn_received = 1);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	GAUGES(t, .listen = 1);

	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 2000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 2001));
	ADVANCE(t, 1000);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 2001));
	GAUGES(t, .listen = 1, .syn_received = 1);
	ADVANCE(t, 2000);
	assert_int_equal(STAT(t, embryos_timed_out), 1);
	GAUGES(t, .listen = 1);

	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 3000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 3001));
	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 4000, .sport = PKT_PEER_PORT + 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 4001, .dport = PKT_PEER_PORT + 1));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 4001, .ack = 1, .sport = PKT_PEER_PORT + 1));
	GAUGES(t, .listen = 1, .syn_received = 1, .established = 1);
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	EXPECT(t, SEG(.flags = TH_RST, .dport = PKT_PEER_PORT));
	GAUGES(t, .established = 1);
	assert_int_equal(tcp_reset_unfinished(t->ts), 1);
	EXPECT(t, SEG(.flags = TH_RST, .dport = PKT_PEER_PORT + 1));
	GAUGES(t, 0);
	FINISH(t, 0);
}

/* SYN cookies hold no TCB until the ACK, which makes an ESTABLISHED one. */
static void test_gauges_syncookie_has_no_embryo(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.syncookies = TCP_SYNCOOKIES_ALWAYS;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	assert_int_equal(STAT(t, syncookies_sent), 1);
	GAUGES(t, .listen = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_int_equal(STAT(t, syncookies_ok), 1);
	GAUGES(t, .listen = 1, .established = 1);
	FINISH(t, 1);
}

/* A Fast Open child is accepted at its SYN and counted in SYN-RECEIVED
 * until the handshake's ACK; it outlives its listener. */
static void test_gauges_fastopen_child(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint8_t opts[16] = { 2, 4, 0x05, 0xb4, TFO_OPT_KIND, 2 + TFO_SERVER_COOKIE_LEN };

	t->auto_read = true;
	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_set_fastopen(t->ts, PKT_LOCAL_PORT, 4), 0);
	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, opts + 6);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts,
		      .optlen = 6 + TFO_SERVER_COOKIE_LEN, .len = 100));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1101));
	assert_int_equal(t->n_accept, 1);
	GAUGES(t, .listen = 1, .syn_received = 1);
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	GAUGES(t, .syn_received = 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1101, .ack = 1));
	GAUGES(t, .established = 1);
	FINISH(t, 1);
}

/* A SYN that may reopen a TIME-WAIT connection ends it: TIME-WAIT to a
 * new embryo of the same 4-tuple. */
static void test_gauges_time_wait_reused(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	GAUGES(t, .listen = 1, .time_wait = 1);
	renumber(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 5001));
	assert_int_equal(STAT(t, timewait_reused), 1);
	GAUGES(t, .listen = 1, .syn_received = 1);
	FINISH(t, 1);
}

/* A connection moved to another stack (engine) takes its gauge along, and
 * back. */
static void test_gauges_follow_migration(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_stack *other = tcp_stack_create(&t->env, &t->cfg);
	struct tcp_parcel *p = NULL;
	struct tcp_conn *c = NULL;

	assert_non_null(other);
	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1002));
	GAUGES(t, .listen = 1, .close_wait = 1);
	assert_int_equal(tcp_migrate_detach(t->conn, &p), 0);
	GAUGES(t, .listen = 1);
	GAUGES_OF(other, 0);
	assert_int_equal(tcp_migrate_attach(other, p, &t->cb, t, &c), 0);
	GAUGES(t, .listen = 1);
	GAUGES_OF(other, .close_wait = 1);
	assert_int_equal(tcp_migrate_detach(c, &p), 0);
	GAUGES_OF(other, 0);
	assert_int_equal(tcp_migrate_attach(t->ts, p, &t->cb, t, &c), 0);
	GAUGES(t, .listen = 1, .close_wait = 1);
	tcp_stack_destroy(other);
	assert_int_equal(tcp_close(c), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1002));
	GAUGES(t, .listen = 1, .last_ack = 1);
	FINISH(t, 1);
}

/* The check itself: a gauge off by one, or a connection count that
 * disagrees with the table, is reported by name. */
static void test_gauges_check_reports_difference(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	char why[96] = "";

	ESTABLISH(t);
	assert_int_equal(tcp_state_gauges_check(t->ts, why, sizeof(why)), 0);
	t->ts->nstate[TCP_FIN_WAIT_2]++;
	assert_int_equal(tcp_state_gauges_check(t->ts, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "tcbs_fin_wait_2: gauge 1, table 0");
	assert_int_equal(tcp_state_gauges_check(t->ts, NULL, 0), -EINVAL);
	t->ts->nstate[TCP_FIN_WAIT_2]--;
	t->ts->nstate[TCP_CLOSED]++;
	assert_int_equal(tcp_state_gauges_check(t->ts, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "tcbs_closed: gauge 1, table 0");
	t->ts->nstate[TCP_CLOSED]--;
	t->ts->nconns++;
	assert_int_equal(tcp_state_gauges_check(t->ts, why, sizeof(why)), -EINVAL);
	assert_string_equal(why, "tcp_conn_count: 2, table 1");
	t->ts->nconns--;
	GAUGES(t, .listen = 1, .established = 1);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_gauges_passive_open_peer_closes),
		PKT_TEST(test_gauges_active_close_through_time_wait),
		PKT_TEST(test_gauges_simultaneous_close_through_closing),
		PKT_TEST(test_gauges_active_opens),
		PKT_TEST(test_gauges_aborted_embryos_and_shutdown),
		PKT_TEST(test_gauges_syncookie_has_no_embryo),
		PKT_TEST(test_gauges_fastopen_child),
		PKT_TEST(test_gauges_time_wait_reused),
		PKT_TEST(test_gauges_follow_migration),
		PKT_TEST(test_gauges_check_reports_difference),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
