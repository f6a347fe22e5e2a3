/* Packet scripts: the read-only TCB walk behind the telemetry listing
 * (tcp/walk.c): listeners then connections, their 4-tuples, states and
 * queue occupancy after known exchanges. */
#include <string.h>

#include "tests/pkt/harness.h"

struct walk_rec {
	unsigned n, stop_after;
	struct tcp_conn_addrs a[4];
};

static int walk_collect(void *arg, const struct tcp_conn *c)
{
	struct walk_rec *r = arg;

	if (r->n < 4)
		tcp_conn_addrs(c, &r->a[r->n]);
	r->n++;
	return r->stop_after != 0 && r->n >= r->stop_after;
}

/* Listener first, then the connection with its queues as they are. */
static void test_walk_listener_and_connection(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct walk_rec r = { 0 };

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 1000), 1000);
	EXPECT(t, SEG(.seq = 1, .len = 1000));
	assert_int_equal(tcp_conn_walk(t->ts, walk_collect, &r), 2);
	assert_int_equal(r.n, 2);
	assert_true(r.a[0].listener);
	assert_string_equal(tcp_state_str(r.a[0].state), "LISTEN");
	assert_int_equal(r.a[0].local_port, PKT_LOCAL_PORT);
	assert_false(tcp_state_is_current_estab(r.a[0].state));
	assert_false(r.a[1].listener);
	assert_string_equal(tcp_state_str(r.a[1].state), "ESTABLISHED");
	assert_true(tcp_state_is_current_estab(r.a[1].state));
	assert_true(us_in6_eq(&r.a[1].local_ip, PKT_LOCAL_IP));
	assert_int_equal(r.a[1].local_port, PKT_LOCAL_PORT);
	assert_true(us_in6_eq(&r.a[1].remote_ip, PKT_PEER_IP));
	assert_int_equal(r.a[1].remote_port, PKT_PEER_PORT);
	assert_int_equal(r.a[1].sndq_bytes, 1000); /* sent, not yet ACKed */
	assert_int_equal(r.a[1].rcvq_bytes, 0);

	INJECT(t, SEG(.seq = 1001, .ack = 1001, .flags = TH_ACK));
	memset(&r, 0, sizeof(r));
	tcp_conn_walk(t->ts, walk_collect, &r);
	assert_int_equal(r.a[1].sndq_bytes, 0);
	FINISH(t, 1);
}

/* RFC 4022 tcpCurrEstab counts CLOSE-WAIT too: the peer's FIN leaves the
 * connection current until our side closes. */
static void test_walk_close_wait_is_current(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct walk_rec r = { 0 };

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .flags = TH_FIN | TH_ACK));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1002));
	tcp_conn_walk(t->ts, walk_collect, &r);
	assert_string_equal(tcp_state_str(r.a[1].state), "CLOSE-WAIT");
	assert_true(tcp_state_is_current_estab(r.a[1].state));
	FINISH(t, 1);
}

/* A callback returning non-zero ends the walk there. */
static void test_walk_stops_when_asked(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct walk_rec r = { .stop_after = 1 };

	ESTABLISH(t);
	assert_int_equal(tcp_conn_walk(t->ts, walk_collect, &r), 1);
	assert_int_equal(r.n, 1);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_walk_listener_and_connection),
		PKT_TEST(test_walk_close_wait_is_current),
		PKT_TEST(test_walk_stops_when_asked),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
