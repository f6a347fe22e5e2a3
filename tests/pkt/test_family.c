/* Packet scripts: the two address families side by side on one stack.
 * Listeners by family (RFC 3493 5.3's IPV6_V6ONLY, Linux's lookup order),
 * the IPv6 flow label (RFC 6437), the MSS over IPv6 (RFC 8200's 40-byte
 * header), Packet Too Big below IPv6's minimum MTU, and active opens that
 * need an address of the destination's family.  Each script runs in both
 * family passes; where it mixes families it names its addresses. */
#include "tests/pkt/harness.h"

#include <errno.h>

#define V6_LOCAL ((const struct us_in6 *)&(struct us_in6){ .b = { 0xfd, [15] = 1 } })
#define V6_PEER ((const struct us_in6 *)&(struct us_in6){ .b = { 0xfd, [15] = 2 } })

static const struct us_in6 *v4_local(void)
{
	static struct us_in6 a;

	a = us_in6_of_v4(PKT_LOCAL_IP4);
	return &a;
}

static const struct us_in6 *v4_peer(void)
{
	static struct us_in6 a;

	a = us_in6_of_v4(PKT_PEER_IP4);
	return &a;
}

/* A listener on :: with V6ONLY takes IPv6 only: an IPv4 SYN finds no
 * listener and is reset; an IPv6 one is answered. */
static void test_v6only_listener_refuses_ipv4(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(tcp_listen(t->ts, NULL, PKT_LOCAL_PORT, TCP_LISTEN_V6ONLY, &t->cb, t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .peer_ip = v4_peer(), .local_ip = v4_local()));
	EXPECT(t, SEG(.flags = TH_RST | TH_ACK, .abs = true, .seq = 0, .ack = 1001,
		      .peer_ip = v4_peer(), .local_ip = v4_local()));
	assert_int_equal(STAT(t, drop_no_conn), 1);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .sport = PKT_PEER_PORT + 1, .mss = 1440,
		      .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 5001, .dport = PKT_PEER_PORT + 1,
		      .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	assert_int_equal(tcp_conn_count(t->ts), 1);
	FINISH(t, 1);
}

/* A listener on :: without V6ONLY takes both families; the two
 * connections are two 4-tuples. */
static void test_dual_listener_takes_both(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_addrs a;

	assert_int_equal(tcp_listen(t->ts, NULL, PKT_LOCAL_PORT, 0, &t->cb, t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .peer_ip = v4_peer(), .local_ip = v4_local()));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .peer_ip = v4_peer(),
		      .local_ip = v4_local()));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .peer_ip = v4_peer(), .local_ip = v4_local()));
	assert_int_equal(t->n_accept, 1);
	tcp_conn_addrs(t->conn, &a);
	assert_true(us_in6_eq(&a.remote_ip, v4_peer()));
	assert_true(us_in6_eq(&a.local_ip, v4_local()));
	/* The same ports from the IPv6 peer: another connection. */
	t->isn_known = false;
	t->peer_isn_known = false;
	INJECT(t, SEG(.flags = TH_SYN, .seq = 9000, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 9001, .peer_ip = V6_PEER,
		      .local_ip = V6_LOCAL));
	INJECT(t, SEG(.seq = 9001, .ack = 1, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	assert_int_equal(t->n_accept, 2);
	tcp_conn_addrs(t->conn, &a);
	assert_true(us_in6_eq(&a.remote_ip, V6_PEER));
	assert_int_equal(tcp_conn_count(t->ts), 2);
	FINISH(t, 2);
}

static unsigned accepts_v4any, accepts_dual, accepts_exact;

static void on_accept_v4any(void *ctx, struct tcp_conn *c)
{
	(void)ctx, (void)c;
	accepts_v4any++;
}

static void on_accept_dual(void *ctx, struct tcp_conn *c)
{
	(void)ctx, (void)c;
	accepts_dual++;
}

static void on_accept_exact(void *ctx, struct tcp_conn *c)
{
	(void)ctx, (void)c;
	accepts_exact++;
}

/* Like Linux: a listener on the exact address before any wildcard; an
 * IPv4 wildcard (0.0.0.0) before the dual-stack ::. */
static void test_listener_lookup_order(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_callbacks v4any = t->cb, dual = t->cb, exact = t->cb;
	const struct us_in6 any4 = us_in6_of_v4(0);

	accepts_v4any = accepts_dual = accepts_exact = 0;
	v4any.on_accept = on_accept_v4any;
	dual.on_accept = on_accept_dual;
	exact.on_accept = on_accept_exact;
	assert_int_equal(tcp_listen(t->ts, NULL, PKT_LOCAL_PORT, 0, &dual, t), 0);
	assert_int_equal(tcp_listen(t->ts, &any4, PKT_LOCAL_PORT, 0, &v4any, t), 0);
	assert_int_equal(tcp_listen(t->ts, V6_LOCAL, PKT_LOCAL_PORT, 0, &exact, t), 0);
	/* The same address twice is in use. */
	assert_int_equal(tcp_listen(t->ts, &any4, PKT_LOCAL_PORT, 0, &v4any, t), -EADDRINUSE);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .peer_ip = v4_peer(), .local_ip = v4_local()));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .peer_ip = v4_peer(), .local_ip = v4_local()));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .peer_ip = v4_peer(), .local_ip = v4_local()));
	assert_int_equal(accepts_v4any, 1);
	t->isn_known = t->peer_isn_known = false;
	INJECT(t, SEG(.flags = TH_SYN, .seq = 2000, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	INJECT(t, SEG(.seq = 2001, .ack = 1, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	assert_int_equal(accepts_exact, 1);
	/* Another IPv6 address of ours: only the dual-stack wildcard. */
	t->isn_known = t->peer_isn_known = false;
	INJECT(t, SEG(.flags = TH_SYN, .seq = 3000, .peer_ip = V6_PEER,
		      .local_ip = &(struct us_in6){ .b = { 0xfd, [15] = 9 } }));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .peer_ip = V6_PEER,
		      .local_ip = &(struct us_in6){ .b = { 0xfd, [15] = 9 } }));
	INJECT(t, SEG(.seq = 3001, .ack = 1, .peer_ip = V6_PEER,
		      .local_ip = &(struct us_in6){ .b = { 0xfd, [15] = 9 } }));
	assert_int_equal(accepts_dual, 1);
	/* Dropping the exact one leaves the others. */
	assert_int_equal(tcp_unlisten_addr(t->ts, V6_LOCAL, PKT_LOCAL_PORT), 0);
	assert_int_equal(tcp_unlisten_addr(t->ts, V6_LOCAL, PKT_LOCAL_PORT), -ENOENT);
	assert_non_null(tcp_listener_lookup(t->ts, V6_LOCAL, PKT_LOCAL_PORT));
	FINISH(t, 3);
}

/* RFC 6437: every segment of an IPv6 connection carries one non-zero flow
 * label; another connection gets another (20 bits from a keyed hash: a
 * collision has odds 2^-20, and the keys are drawn per stack, so a
 * failure here would not repeat). */
static void test_flow_label_per_connection(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint32_t label[2];

	assert_int_equal(tcp_listen(t->ts, NULL, PKT_LOCAL_PORT, 0, &t->cb, t), 0);
	for (unsigned k = 0; k < 2; k++) {
		uint16_t sport = (uint16_t)(PKT_PEER_PORT + k);

		t->isn_known = t->peer_isn_known = false;
		INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .sport = sport, .peer_ip = V6_PEER,
			      .local_ip = V6_LOCAL));
		assert_int_equal(t->ncap, 1);
		label[k] = t->cap[t->cap_head].a.flow_label;
		EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .dport = sport, .peer_ip = V6_PEER,
			      .local_ip = V6_LOCAL));
		INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 10, .sport = sport,
			      .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
		ADVANCE(t, 200);
		assert_int_equal(t->ncap, 1);
		assert_int_equal(t->cap[t->cap_head].a.flow_label, label[k]);
		EXPECT(t, SEG(.flags = TH_ACK, .ack = 1011, .dport = sport, .peer_ip = V6_PEER,
			      .local_ip = V6_LOCAL));
	}
	assert_int_not_equal(label[0], 0);
	assert_int_not_equal(label[0], label[1]);
	FINISH(t, 2);
}

/* RFC 9293 3.7.1 over IPv6: the MSS we announce is the MTU less 60 (40 of
 * IPv6 header, 20 of TCP); over IPv4 less 40, from the same MTU. */
static void test_mss_by_family(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	t->ts->env.mtu = 1500;
	assert_int_equal(tcp_listen(t->ts, NULL, PKT_LOCAL_PORT, 0, &t->cb, t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 9000, .peer_ip = V6_PEER,
		      .local_ip = V6_LOCAL));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .mss = 1440, .peer_ip = V6_PEER,
		      .local_ip = V6_LOCAL));
	t->isn_known = t->peer_isn_known = false;
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 9000, .peer_ip = v4_peer(),
		      .local_ip = v4_local()));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .mss = 1460, .peer_ip = v4_peer(),
		      .local_ip = v4_local()));
	FINISH(t, 2);
}

/* RFC 8201 4: a Packet Too Big below 1280 does not lower an IPv6
 * connection's MSS (the network layer refuses it too); 1280 gives 1220. */
static void test_ptb_below_1280_ignored(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint8_t l4[8] = { PKT_LOCAL_PORT >> 8, PKT_LOCAL_PORT & 0xff, PKT_PEER_PORT >> 8,
			  PKT_PEER_PORT & 0xff };
	uint32_t seq;

	t->ts->env.mtu = 1520; /* MSS 1460 over IPv6 */
	assert_int_equal(tcp_listen(t->ts, NULL, PKT_LOCAL_PORT, 0, &t->cb, t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .peer_ip = V6_PEER,
		      .local_ip = V6_LOCAL));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	assert_int_equal(pkt_app_send(t, 1000), 1000);
	EXPECT(t, SEG(.seq = 1, .len = 1000, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	seq = t->our_isn + 1;
	l4[4] = (uint8_t)(seq >> 24), l4[5] = (uint8_t)(seq >> 16);
	l4[6] = (uint8_t)(seq >> 8), l4[7] = (uint8_t)seq;
	tcp_icmp_error(t->ts, TCP_ICMP_TOO_BIG, 0, 1200, V6_LOCAL, V6_PEER, l4, sizeof(l4));
	assert_int_equal(t->conn->mss, 1460);
	tcp_icmp_error(t->ts, TCP_ICMP_TOO_BIG, 0, 1280, V6_LOCAL, V6_PEER, l4, sizeof(l4));
	assert_int_equal(t->conn->mss, 1220);
	EXPECT(t, SEG(.seq = 1, .len = 1000, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	INJECT(t, SEG(.seq = 1001, .ack = 1001, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	FINISH(t, 1);
}

/* An active open leaves from the address of the destination's family, and
 * without one fails at once (EADDRNOTAVAIL, as Linux's connect without a
 * route/source). */
static void test_connect_needs_family_address(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c;
	struct tcp_conn_addrs a;

	t->ts->env.mtu = 1520;
	assert_int_equal(tcp_connect(t->ts, V6_PEER, PKT_PEER_PORT, &t->cb, t, &c), 0);
	tcp_conn_addrs(c, &a);
	assert_true(us_in6_eq(&a.local_ip, V6_LOCAL));
	t->local_port = 0;
	EXPECT(t, SEG(.flags = TH_SYN, .mss = 1460, .peer_ip = V6_PEER, .local_ip = V6_LOCAL));
	assert_int_equal(tcp_abort(c), 0);
	EXPECT_NOTHING(t); /* RFC 9293 3.10.5: SYN-SENT, no RST */
	t->ts->env.local_ip6 = (struct us_in6){ { 0 } };
	assert_int_equal(tcp_connect(t->ts, V6_PEER, PKT_PEER_PORT, &t->cb, t, &c),
			 -EADDRNOTAVAIL);
	t->ts->env.local_ip = us_in6_of_v4(0);
	assert_int_equal(tcp_connect(t->ts, v4_peer(), PKT_PEER_PORT, &t->cb, t, &c),
			 -EADDRNOTAVAIL);
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_v6only_listener_refuses_ipv4),
		PKT_TEST(test_dual_listener_takes_both),
		PKT_TEST(test_listener_lookup_order),
		PKT_TEST(test_flow_label_per_connection),
		PKT_TEST(test_mss_by_family),
		PKT_TEST(test_ptb_below_1280_ignored),
		PKT_TEST(test_connect_needs_family_address),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
