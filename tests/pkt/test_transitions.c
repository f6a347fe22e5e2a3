/* Packet scripts: the transitions of RFC 9293's state diagram (section 3.3.2,
 * figure 5), one test each, named <from>_<event>_to_<to>.  Each script
 * asserts the segment the transition sends and the state it reaches
 * (tcp_conn_get_info, or the TCB count once the TCB is gone).
 *
 * Not here: LISTEN --SEND--> SYN-SENT (tcp.h has no SEND on a listener;
 * a listener is not a connection in this engine). */
#include "tests/pkt/harness.h"

#include <errno.h>

#include "tcp/tcb.h"

static enum tcp_state state_of(const struct tcp_conn *c)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(c, &info);
	return (enum tcp_state)info.state;
}

/* The TCB for the script's 4-tuple, including an embryo the application
 * has not seen yet; NULL when there is none. */
static struct tcp_conn *lookup(struct pkt_t *t)
{
	return tcp_table_lookup(t->ts, PKT_LOCAL_IP, (uint16_t)t->local_port, PKT_PEER_IP,
				(uint16_t)t->peer_port);
}

/* CLOSED --active OPEN, snd SYN--> SYN-SENT. */
static struct tcp_conn *open_active(struct pkt_t *t)
{
	struct tcp_conn *c = NULL;

	t->local_port = 0; /* learnt from our SYN */
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	assert_non_null(c);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .mss = 1460));
	assert_int_equal(state_of(c), TCP_SYN_SENT);
	return c;
}

/* CLOSED --passive OPEN--> LISTEN: a SYN that drew <RST,ACK> before the
 * listen draws a SYN-ACK after it. */
static void test_closed_passive_open_to_listen(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .abs = true, .ack = 1001));
	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_conn_count(t->ts), 0); /* a listener is no connection */
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	FINISH(t, 1);
}

/* CLOSED --active OPEN, snd SYN--> SYN-SENT. */
static void test_closed_active_open_to_syn_sent(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	open_active(t);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	assert_int_equal(t->n_connected, 0);
	FINISH(t, 1);
}

/* LISTEN --rcv SYN, snd SYN,ACK--> SYN-RECEIVED (RFC 9293 3.10.7.2).  The
 * SYN's MSS option starts off a word boundary (MUST-64): NOP, MSS 1200. */
static void test_listen_syn_to_syn_received(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	const uint8_t opts[] = { 1, 2, 4, 0x04, 0xb0, 1, 1, 0 };
	struct tcp_conn_info info;
	struct tcp_conn *c;

	assert_int_equal(pkt_listen(t), 0);
	assert_null(lookup(t));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts, .optlen = sizeof(opts)));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460));
	c = lookup(t);
	assert_non_null(c);
	assert_int_equal(state_of(c), TCP_SYN_RECEIVED);
	tcp_conn_get_info(c, &info);
	assert_int_equal(info.mss, 1200);
	assert_int_equal(t->n_accept, 0);
	FINISH(t, 1);
}

/* LISTEN --CLOSE--> CLOSED: after tcp_unlisten a SYN is answered as on a
 * closed port (RFC 9293 3.10.7.1). */
static void test_listen_close_to_closed(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), -ENOENT);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 0, .abs = true, .ack = 1001));
	assert_int_equal(STAT(t, drop_no_conn), 1);
	FINISH(t, 0);
}

/* SYN-RECEIVED --rcv ACK of SYN--> ESTABLISHED (passive open). */
static void test_syn_received_ack_to_established(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	assert_int_equal(state_of(lookup(t)), TCP_SYN_RECEIVED);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_accept, 1);
	assert_ptr_equal(t->conn, lookup(t));
	assert_int_equal(state_of(t->conn), TCP_ESTABLISHED);
	FINISH(t, 1);
}

/* SYN-RECEIVED (from LISTEN) --rcv RST--> LISTEN (RFC 9293 3.10.7.4,
 * second check): the embryo goes, the listener stays. */
static void test_syn_received_rst_returns_to_listen(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint32_t isn;

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	assert_int_equal(state_of(lookup(t)), TCP_SYN_RECEIVED);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	EXPECT_NOTHING(t);
	assert_null(lookup(t));
	assert_int_equal(t->n_accept + t->n_closed, 0);
	/* Still LISTEN: the same 4-tuple opens again, one second later.  Its
	 * ISN has moved on with the 4 us clock (RFC 9293 3.4.1, MUST-8). */
	isn = t->our_isn;
	ADVANCE(t, 1000);
	t->isn_known = false;
	t->peer_isn_known = false;
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 7001));
	assert_int_equal(state_of(lookup(t)), TCP_SYN_RECEIVED);
	assert_int_equal(t->our_isn - isn, 1000000000u / 4000u);
	FINISH(t, 1);
}

/* SYN-RECEIVED (from SYN-SENT) --rcv RST--> CLOSED: the active open was
 * refused (RFC 9293 3.10.7.4, second check; MUST-11). */
static void test_syn_received_active_rst_to_closed(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = open_active(t);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 5001));
	assert_int_equal(state_of(c), TCP_SYN_RECEIVED);
	INJECT(t, SEG(.flags = TH_RST, .seq = 5001));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNREFUSED);
	FINISH(t, 0);
}

/* SYN-SENT --rcv SYN, snd SYN,ACK--> SYN-RECEIVED (simultaneous open,
 * RFC 9293 3.10.7.3: <SEQ=ISS><ACK=RCV.NXT><CTL=SYN,ACK>), then the ACK of
 * our SYN --> ESTABLISHED. */
static void test_syn_sent_syn_to_syn_received(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = open_active(t);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 5001, .mss = 1460));
	assert_int_equal(state_of(c), TCP_SYN_RECEIVED);
	assert_int_equal(t->n_connected, 0);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(state_of(c), TCP_ESTABLISHED);
	assert_int_equal(t->n_connected, 1);
	FINISH(t, 1);
}

/* SYN-SENT --rcv SYN,ACK, snd ACK--> ESTABLISHED. */
static void test_syn_sent_synack_to_established(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = open_active(t);

	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 5001, .mss = 0)); /* MUST-65 */
	assert_int_equal(state_of(c), TCP_ESTABLISHED);
	assert_int_equal(t->n_connected, 1);
	FINISH(t, 1);
}

/* SYN-SENT --CLOSE--> CLOSED: the TCB is deleted without a segment
 * (RFC 9293 3.10.4); the peer's late SYN-ACK then finds no connection. */
static void test_syn_sent_close_to_closed(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = open_active(t);

	assert_int_equal(tcp_close(c), 0);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	ADVANCE(t, 3000); /* no SYN retransmission either */
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1));
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 0);
}

/* SYN-RECEIVED --CLOSE--> FIN-WAIT-1.  RFC 9293 3.10.4 allows the FIN to be
 * queued until ESTABLISHED; this engine always queues it, so the FIN goes
 * out with the transition on the ACK of our SYN. */
static void test_syn_received_close_to_fin_wait_1(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = open_active(t);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 5001));
	assert_int_equal(tcp_close(c), 0);
	assert_int_equal(state_of(c), TCP_SYN_RECEIVED);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 5001));
	assert_int_equal(state_of(c), TCP_FIN_WAIT_1);
	assert_int_equal(t->n_connected, 0); /* closed before it connected */
	FINISH(t, 1);
}

/* ESTABLISHED --CLOSE, snd FIN--> FIN-WAIT-1. */
static void test_established_close_to_fin_wait_1(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(state_of(c), TCP_ESTABLISHED);
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1001, .len = 0, .mss = 0));
	assert_int_equal(state_of(c), TCP_FIN_WAIT_1);
	FINISH(t, 1);
}

/* ESTABLISHED --rcv FIN, snd ACK--> CLOSE-WAIT. */
static void test_established_fin_to_close_wait(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1002));
	assert_int_equal(state_of(c), TCP_CLOSE_WAIT);
	FINISH(t, 1);
}

/* FIN-WAIT-1 --rcv ACK of FIN--> FIN-WAIT-2 (no segment sent). */
static void test_fin_wait_1_ack_to_fin_wait_2(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 2));
	EXPECT_NOTHING(t);
	assert_int_equal(state_of(c), TCP_FIN_WAIT_2);
	FINISH(t, 1);
}

/* FIN-WAIT-1 --rcv FIN (ours not yet acknowledged), snd ACK--> CLOSING. */
static void test_fin_wait_1_fin_to_closing(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_CLOSING);
	FINISH(t, 1);
}

/* FIN-WAIT-1 --rcv FIN that also acknowledges ours, snd ACK--> TIME-WAIT
 * (RFC 9293 3.10.7.4, eighth check). */
static void test_fin_wait_1_finack_to_time_wait(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	FINISH(t, 1);
}

/* FIN-WAIT-2 --rcv FIN, snd ACK--> TIME-WAIT. */
static void test_fin_wait_2_fin_to_time_wait(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 2));
	assert_int_equal(state_of(c), TCP_FIN_WAIT_2);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	FINISH(t, 1);
}

/* CLOSING --rcv ACK of FIN--> TIME-WAIT (no segment sent). */
static void test_closing_ack_to_time_wait(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_CLOSING);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 2));
	EXPECT_NOTHING(t);
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	FINISH(t, 1);
}

/* TIME-WAIT --timeout 2 MSL, delete TCB--> CLOSED (MUST-13): the TCB lives
 * exactly time_wait_ms after the last ACK, then goes without a segment. */
static void test_time_wait_timeout_to_closed(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.time_wait_ms = 2000;
	struct pkt_t *t = pkt_start(&cfg);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	ADVANCE(t, 1999);
	assert_int_equal(state_of(c), TCP_TIME_WAIT);
	ADVANCE(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_null(lookup(t));
	FINISH(t, 0);
}

/* CLOSE-WAIT --CLOSE, snd FIN--> LAST-ACK. */
static void test_close_wait_close_to_last_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1002));
	assert_int_equal(state_of(c), TCP_CLOSE_WAIT);
	APP_READ(t);
	assert_true(t->eof);
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1002));
	assert_int_equal(state_of(c), TCP_LAST_ACK);
	FINISH(t, 1);
}

/* LAST-ACK --rcv ACK of FIN--> CLOSED (the TCB is deleted at once). */
static void test_last_ack_ack_to_closed(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;

	ESTABLISH(t);
	c = t->conn;
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1002));
	APP_READ(t);
	assert_int_equal(tcp_close(c), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1, .ack = 1002));
	assert_int_equal(state_of(c), TCP_LAST_ACK);
	/* An ACK that does not cover the FIN leaves it in LAST-ACK. */
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(state_of(c), TCP_LAST_ACK);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1002, .ack = 2));
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	assert_null(lookup(t));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_closed_passive_open_to_listen),
		PKT_TEST(test_closed_active_open_to_syn_sent),
		PKT_TEST(test_listen_syn_to_syn_received),
		PKT_TEST(test_listen_close_to_closed),
		PKT_TEST(test_syn_received_ack_to_established),
		PKT_TEST(test_syn_received_rst_returns_to_listen),
		PKT_TEST(test_syn_received_active_rst_to_closed),
		PKT_TEST(test_syn_sent_syn_to_syn_received),
		PKT_TEST(test_syn_sent_synack_to_established),
		PKT_TEST(test_syn_sent_close_to_closed),
		PKT_TEST(test_syn_received_close_to_fin_wait_1),
		PKT_TEST(test_established_close_to_fin_wait_1),
		PKT_TEST(test_established_fin_to_close_wait),
		PKT_TEST(test_fin_wait_1_ack_to_fin_wait_2),
		PKT_TEST(test_fin_wait_1_fin_to_closing),
		PKT_TEST(test_fin_wait_1_finack_to_time_wait),
		PKT_TEST(test_fin_wait_2_fin_to_time_wait),
		PKT_TEST(test_closing_ack_to_time_wait),
		PKT_TEST(test_time_wait_timeout_to_closed),
		PKT_TEST(test_close_wait_close_to_last_ack),
		PKT_TEST(test_last_ack_ack_to_closed),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
