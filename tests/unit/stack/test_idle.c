/* stack/engine/idle.h: the idle back-off policy, and its [engine] config keys. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "stack/engine/idle.h"

static void test_busy_poll_default(void **state)
{
	struct us_idle s = { .max_ns = 0, .spin = 0 };

	(void)state;
	for (int i = 0; i < 10000; i++)
		assert_int_equal(us_idle_next(&s, 0), 0);
	assert_int_equal(s.sleeps, 0);
}

static void test_spin_then_grow_to_bound(void **state)
{
	struct us_idle s = { .max_ns = 200000, .spin = 3 };
	const uint64_t want[] = { 0, 0, 0, 1000, 2000, 4000, 8000, 16000, 32000, 64000, 128000,
				  200000, 200000 };

	(void)state;
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(us_idle_next(&s, 0), want[i]);
	assert_int_equal(s.sleeps, 10);
	assert_int_equal(s.slept_ns, 1000 + 2000 + 4000 + 8000 + 16000 + 32000 + 64000 +
				     128000 + 200000 + 200000);
	/* Work: straight back to busy polling, and the spin starts over. */
	assert_int_equal(us_idle_next(&s, 5), 0);
	assert_int_equal(us_idle_next(&s, 0), 0);
	assert_int_equal(us_idle_next(&s, 0), 0);
	assert_int_equal(us_idle_next(&s, 0), 0);
	assert_int_equal(us_idle_next(&s, 0), 1000);
}

static void test_config_keys(void **state)
{
	struct us_config cfg;
	char err[256];

	(void)state;
	us_config_defaults(&cfg);
	assert_int_equal(cfg.idle_sleep_max_us, 0);
	assert_int_equal(cfg.idle_spin, 1000);
	assert_int_equal(us_config_parse_string("t.ini",
		"[port]\ndevice = net_null0\n[ip]\naddr = 10.0.0.1/24\n"
		"[engine]\nidle_sleep_max_us = 200\nidle_spin = 50\n", &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.idle_sleep_max_us, 200);
	assert_int_equal(cfg.idle_spin, 50);
	assert_int_equal(us_config_parse_string("t.ini",
		"[port]\ndevice = net_null0\n[ip]\naddr = 10.0.0.1/24\n"
		"[engine]\nidle_sleep_max_us = 100001\n", &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "idle_sleep_max_us"));
}

/* [engine] count: engines per process, 1 by default, 1..16. */
static void test_engine_count_key(void **state)
{
	struct us_config cfg;
	char err[256];
	const char *base = "[port]\ndevice = net_null0\n[ip]\naddr = 10.0.0.1/24\n[engine]\n";
	char text[256];

	(void)state;
	us_config_defaults(&cfg);
	assert_int_equal(cfg.engine_count, 1);
	snprintf(text, sizeof(text), "%scount = 2\n", base);
	assert_int_equal(us_config_parse_string("t.ini", text, &cfg, err, sizeof(err)), 0);
	assert_int_equal(cfg.engine_count, 2);
	snprintf(text, sizeof(text), "%scount = 0\n", base);
	assert_int_equal(us_config_parse_string("t.ini", text, &cfg, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "count"));
	snprintf(text, sizeof(text), "%scount = 17\n", base);
	assert_int_equal(us_config_parse_string("t.ini", text, &cfg, err, sizeof(err)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_busy_poll_default),
		cmocka_unit_test(test_spin_then_grow_to_bound),
		cmocka_unit_test(test_config_keys),
		cmocka_unit_test(test_engine_count_key),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
