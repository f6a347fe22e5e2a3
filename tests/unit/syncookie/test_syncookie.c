/* tests/unit/syncookie: the pure pieces of tcp/syncookie.c over a
 * hand-made tcp_stack (a fixed key, a config, a wheel for "now"): the
 * cookie's MAC covers every input of either family, its age window is one
 * period, each family's MSS table, and the options in TSval round-trip.
 * The rounding of a peer's MSS to the table is seen where it happens, in
 * the SYN-ACK tcp_syncookie_send hands to a real stack's output (EAL for
 * its mbufs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <rte_byteorder.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>
#include <sodium.h>

#include "tcp/syncookie.h"
#include "tcp/tcb.h"
#include "tests/common/test_eal.h"

struct fixture {
	struct us_timer_wheel wheel;
	struct tcp_stack ts;
};

static struct fixture fx;
static struct rte_mempool *pool;

/* fd00::2 (the peer) and fd00::1 (us) */
static const struct us_in6 peer6 = { .b = { 0xfd, [15] = 2 } };
static const struct us_in6 our6 = { .b = { 0xfd, [15] = 1 } };

static int setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	memset(&fx, 0, sizeof(fx));
	us_timer_wheel_init(&fx.wheel, US_MS(1), US_SEC(1000));
	fx.ts.env.wheel = &fx.wheel;
	tcp_config_defaults(&fx.ts.cfg);
	for (unsigned i = 0; i < sizeof(fx.ts.syncookie_key); i++)
		fx.ts.syncookie_key[i] = (uint8_t)(i * 37 + 11); /* fixed: no flaky MAC hits */
	return 0;
}

static struct tcp_seg syn_seg(void)
{
	return (struct tcp_seg){
		.flags = TH_SYN, .seq = 0x12345678, .src_ip = us_in6_of_v4(0x0a000002),
		.dst_ip = us_in6_of_v4(0x0a000001), .sport = 40000, .dport = 80,
	};
}

static struct tcp_seg syn_seg6(void)
{
	struct tcp_seg s = syn_seg();

	s.src_ip = peer6;
	s.dst_ip = our6;
	return s;
}

/* The ACK that returns cookie for syn. */
static struct tcp_seg ack_for(const struct tcp_seg *syn, uint32_t cookie)
{
	struct tcp_seg a = *syn;

	a.flags = TH_ACK;
	a.seq = syn->seq + 1;
	a.ack = cookie + 1;
	return a;
}

/* Each index of syn's family's table comes back as want[index]. */
static void check_round_trip(const struct tcp_seg *syn, const uint16_t want[4])
{
	for (unsigned idx = 0; idx < 4; idx++) {
		struct tcp_seg ack = ack_for(syn, tcp_syncookie_make(&fx.ts, syn, 500, idx));

		assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 500), want[idx]);
	}
}

static void test_round_trip_each_mss(void **state)
{
	static const uint16_t want[] = { 536, 1300, 1440, 1460 };
	struct tcp_seg syn = syn_seg();

	(void)state;
	check_round_trip(&syn, want);
}

/* Valid in its own period and the next; not two later, not before. */
static void test_age_window(void **state)
{
	struct tcp_seg syn = syn_seg();
	struct tcp_seg ack = ack_for(&syn, tcp_syncookie_make(&fx.ts, &syn, 255, 3));

	(void)state;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 255), 1460);
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 256), 1460); /* low byte wraps */
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 257), 0);
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 254), 0);
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 255 + 256), 0);
}

/* Every input is covered: a different tuple or peer ISN, or any one bit
 * of the cookie flipped, fails. */
static void test_mac_covers_inputs(void **state)
{
	struct tcp_seg syn = syn_seg();
	uint32_t cookie = tcp_syncookie_make(&fx.ts, &syn, 77, 2);
	struct tcp_seg ack = ack_for(&syn, cookie), bad;

	(void)state;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 77), 1440);
	bad = ack, bad.src_ip.b[15] ^= 1;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	bad = ack, bad.dst_ip.b[14] ^= 1;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	bad = ack, bad.sport++;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	bad = ack, bad.dport++;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	bad = ack, bad.seq++;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	for (unsigned b = 0; b < 32; b++) {
		bad = ack_for(&syn, cookie ^ (1u << b));
		assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	}
	/* Another key: nothing of the old cookies holds. */
	fx.ts.syncookie_key[0] ^= 1;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 77), 0);
	fx.ts.syncookie_key[0] ^= 1;
}

/* IPv6's table: the minimum link (1280), a tunnel (1480), Ethernet and
 * a jumbo frame, less 60 bytes of headers. */
static void test_v6_round_trip_each_mss(void **state)
{
	static const uint16_t want[] = { 1220, 1420, 1440, 8940 };
	struct tcp_seg syn = syn_seg6();

	(void)state;
	check_round_trip(&syn, want);
}

/* A cookie made for an IPv6 tuple validates for that tuple only: every
 * byte of both addresses counts (the first as much as the last), and the
 * IPv4 tuple of the same low 32 bits is another tuple, both ways. */
static void test_v6_mac_covers_tuple(void **state)
{
	struct tcp_seg syn = syn_seg6(), syn4 = syn_seg();
	struct tcp_seg ack = ack_for(&syn, tcp_syncookie_make(&fx.ts, &syn, 77, 2)), bad;
	struct tcp_seg ack4 = ack_for(&syn4, tcp_syncookie_make(&fx.ts, &syn4, 77, 2));

	(void)state;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 77), 1440);
	for (unsigned i = 0; i < 16; i++) {
		bad = ack, bad.src_ip.b[i] ^= 0x80;
		assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
		bad = ack, bad.dst_ip.b[i] ^= 0x01;
		assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	}
	bad = ack, bad.sport++;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	bad = ack, bad.src_ip = us_in6_of_v4(us_in6_v4(&peer6));
	bad.dst_ip = us_in6_of_v4(us_in6_v4(&our6));
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	/* The IPv4 tuple's own cookie: valid there, not over IPv6. */
	assert_int_equal(tcp_syncookie_check(&fx.ts, &ack4, 77), 1440);
	bad = ack4, bad.src_ip = peer6, bad.dst_ip = our6;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
}

/* The options sit in the low 6 bits; TSval never runs ahead of now. */
static void test_ts_encode(void **state)
{
	struct tcp_syncookie_opts o = { .ts_ok = true, .ws_ok = true, .ws = 7, .sack_ok = true };
	struct tcp_syncookie_opts none = { .ts_ok = true };

	(void)state;
	assert_int_equal(tcp_syncookie_ts_encode(64 * 1000 + 60, &o), 64 * 1000 + 0x17);
	assert_int_equal(tcp_syncookie_ts_encode(64 * 1000 + 5, &o), 64 * 999 + 0x17);
	assert_int_equal(tcp_syncookie_ts_encode(64 * 1000 + 0x17, &o), 64 * 1000 + 0x17);
	assert_int_equal(tcp_syncookie_ts_encode(64 * 1000 + 63, &none), 64 * 1000 + 0x0f);
}

static void test_ts_decode(void **state)
{
	uint32_t now = (uint32_t)(us_timer_now(&fx.wheel) / US_MS(1));
	uint32_t base = (now & ~63u) - 64; /* a period whose TSvals are all past */
	struct tcp_syncookie_opts o = { .ts_ok = true };

	(void)state;
	assert_true(tcp_syncookie_ts_decode(&fx.ts, base | 0x17, &o));
	assert_true(o.ws_ok && o.sack_ok);
	assert_int_equal(o.ws, 7);
	assert_true(tcp_syncookie_ts_decode(&fx.ts, base | 0x0f, &o));
	assert_false(o.ws_ok || o.sack_ok);
	assert_true(tcp_syncookie_ts_decode(&fx.ts, base | 14, &o));
	assert_int_equal(o.ws, 14);
	assert_false(tcp_syncookie_ts_decode(&fx.ts, base | 0x2f, &o)); /* ECN bit */
	assert_false(tcp_syncookie_ts_decode(&fx.ts, now + 1000, &o)); /* from the future */
	fx.ts.cfg.sack = false;
	assert_false(tcp_syncookie_ts_decode(&fx.ts, base | 0x1f, &o)); /* never offered */
	fx.ts.cfg.sack = true;
	fx.ts.cfg.wscale = false;
	assert_false(tcp_syncookie_ts_decode(&fx.ts, base | 0x03, &o));
	fx.ts.cfg.wscale = true;
}

/* A real stack answering through tcp_syncookie_send */

struct sent {
	struct rte_mbuf *m;
	struct tcp_out_addr a;
};

static void capture(void *ctx, struct rte_mbuf *m, const struct tcp_out_addr *a)
{
	struct sent *s = ctx;

	assert_null(s->m); /* one SYN-ACK per SYN */
	s->m = m;
	s->a = *a;
}

static void no_accept(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	(void)c;
	fail();
}

/* The peer MSS the cookie of the SYN-ACK answering syn (with MSS option
 * mss) stands for, as the handshake's ACK would bring it back. */
static uint16_t cookie_mss(struct tcp_stack *ts, struct tcp_seg syn, uint16_t mss,
			   struct sent *out)
{
	struct tcp_conn *l = tcp_listener_lookup(ts, &syn.dst_ip, syn.dport);
	const struct rte_tcp_hdr *th;
	struct tcp_seg ack;

	assert_non_null(l);
	syn.mss = mss;
	tcp_syncookie_send(l, &syn);
	assert_non_null(out->m);
	assert_true(us_in6_eq(&out->a.src, &syn.dst_ip));
	assert_true(us_in6_eq(&out->a.dst, &syn.src_ip));
	th = rte_pktmbuf_mtod(out->m, const struct rte_tcp_hdr *);
	assert_int_equal(th->tcp_flags, TH_SYN | TH_ACK);
	assert_int_equal(rte_be_to_cpu_32(th->recv_ack), syn.seq + 1);
	ack = ack_for(&syn, rte_be_to_cpu_32(th->sent_seq));
	rte_pktmbuf_free(out->m);
	out->m = NULL;
	return tcp_syncookie_check(ts, &ack, tcp_syncookie_counter(us_timer_now(ts->env.wheel)));
}

/* Each family rounds the peer's MSS down to its own table (the smallest
 * entry below it): 1460 is IPv4's Ethernet entry but over IPv6 the 1440
 * one; 9000 is IPv6's jumbo entry, less 60. */
static void test_mss_rounded_per_family(void **state)
{
	static const struct tcp_callbacks cb = { .on_accept = no_accept };
	struct us_timer_wheel wheel;
	struct sent out = { 0 };
	struct tcp_env env = {
		.pool = pool, .wheel = &wheel, .local_ip = us_in6_of_v4(0x0a000001),
		.local_ip6 = our6, .mtu = 9000, .output = capture, .ctx = &out,
	};
	struct tcp_stack *ts;

	(void)state;
	us_timer_wheel_init(&wheel, US_MS(1), US_SEC(1000));
	ts = tcp_stack_create(&env, NULL);
	assert_non_null(ts);
	assert_int_equal(tcp_listen(ts, NULL, 80, 0, &cb, NULL), 0);
	assert_int_equal(cookie_mss(ts, syn_seg6(), 1460, &out), 1440);
	assert_true(out.a.flow_label != 0); /* an IPv6 connection's (RFC 6437) */
	assert_int_equal(cookie_mss(ts, syn_seg6(), 9000, &out), 8940);
	assert_int_equal(cookie_mss(ts, syn_seg6(), 65535, &out), 8940);
	assert_int_equal(cookie_mss(ts, syn_seg6(), 1420, &out), 1420);
	assert_int_equal(cookie_mss(ts, syn_seg6(), 1419, &out), 1220);
	assert_int_equal(cookie_mss(ts, syn_seg6(), 536, &out), 1220);
	assert_int_equal(cookie_mss(ts, syn_seg(), 1460, &out), 1460);
	assert_int_equal(cookie_mss(ts, syn_seg(), 9000, &out), 1460);
	assert_int_equal(cookie_mss(ts, syn_seg(), 1439, &out), 1300);
	assert_int_equal(tcp_stack_stats(ts)->syncookies_sent, 9);
	assert_int_equal(tcp_conn_count(ts), 0);
	tcp_stack_destroy(ts);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void test_counter_period(void **state)
{
	(void)state;
	assert_int_equal(tcp_syncookie_counter(0), 0);
	assert_int_equal(tcp_syncookie_counter(US_SEC(TCP_SYNCOOKIE_PERIOD_S) - 1), 0);
	assert_int_equal(tcp_syncookie_counter(US_SEC(TCP_SYNCOOKIE_PERIOD_S)), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_each_mss),
		cmocka_unit_test(test_age_window),
		cmocka_unit_test(test_mac_covers_inputs),
		cmocka_unit_test(test_v6_round_trip_each_mss),
		cmocka_unit_test(test_v6_mac_covers_tuple),
		cmocka_unit_test(test_mss_rounded_per_family),
		cmocka_unit_test(test_ts_encode),
		cmocka_unit_test(test_ts_decode),
		cmocka_unit_test(test_counter_period),
	};

	if (test_eal_start("syncookie") < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("syncookie", 64, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	return cmocka_run_group_tests(tests, setup, NULL);
}
