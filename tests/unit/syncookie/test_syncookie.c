/* tests/unit/syncookie: the pure pieces of tcp/syncookie.c over a
 * hand-made tcp_stack (a fixed key, a config, a wheel for "now"): the
 * cookie's MAC covers every input, its age window is one period, the MSS
 * table rounds down, and the options in TSval round-trip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <sodium.h>

#include "tcp/syncookie.h"
#include "tcp/tcb.h"

struct fixture {
	struct us_timer_wheel wheel;
	struct tcp_stack ts;
};

static struct fixture fx;

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
		.flags = TH_SYN, .seq = 0x12345678, .src_ip = 0x0a000002, .dst_ip = 0x0a000001,
		.sport = 40000, .dport = 80,
	};
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

static void test_round_trip_each_mss(void **state)
{
	static const uint16_t want[] = { 536, 1300, 1440, 1460 };
	struct tcp_seg syn = syn_seg(), ack;

	(void)state;
	for (unsigned idx = 0; idx < 4; idx++) {
		ack = ack_for(&syn, tcp_syncookie_make(&fx.ts, &syn, 500, idx));
		assert_int_equal(tcp_syncookie_check(&fx.ts, &ack, 500), want[idx]);
	}
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
	bad = ack, bad.src_ip ^= 1;
	assert_int_equal(tcp_syncookie_check(&fx.ts, &bad, 77), 0);
	bad = ack, bad.dst_ip ^= 0x100;
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
		cmocka_unit_test(test_ts_encode),
		cmocka_unit_test(test_ts_decode),
		cmocka_unit_test(test_counter_period),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
