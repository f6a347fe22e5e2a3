/* tests/unit/config: the [impair] section (rx / tx link emulator specs on
 * the stack's own port, nic/impair.h's syntax).  Rejections check the whole
 * message: file, section, key, value and why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "config/config.h"
#include "tests/unit/config/config_check.h"

#define MIN "[port]\ndevice = net_tap0,iface=ustap0\n[ip]\naddr = 10.77.0.2/24\n"

/* Off unless asked for; both keys as given (quotes removed), "none" is off. */
static void test_impair_keys(void **state)
{
	struct us_config cfg;

	(void)state;
	us_config_defaults(&cfg);
	assert_string_equal(cfg.impair_rx, "");
	assert_string_equal(cfg.impair_tx, "");
	cfg_load_ok(MIN, &cfg);
	assert_string_equal(cfg.impair_rx, "");
	assert_string_equal(cfg.impair_tx, "");
	cfg_load_ok(MIN "[impair]\nrx = delay=20ms,loss=1%,seed=7\n"
		    "tx = \"loss=3%,delay=5ms,ge=0.01:0.3:1:0,reorder=2%,reorder_gap=1ms,dup=1%,"
		    "rate=20mbit,queue=64kb,jitter=1ms,limit=500,seed=9\"   # comment\n", &cfg);
	assert_string_equal(cfg.impair_rx, "delay=20ms,loss=1%,seed=7");
	assert_string_equal(cfg.impair_tx, "loss=3%,delay=5ms,ge=0.01:0.3:1:0,reorder=2%,"
			    "reorder_gap=1ms,dup=1%,rate=20mbit,queue=64kb,jitter=1ms,limit=500,"
			    "seed=9");
	cfg_load_ok(MIN "[impair]\nrx = none\ntx = \"\"\n", &cfg);
	assert_string_equal(cfg.impair_rx, "");
	assert_string_equal(cfg.impair_tx, "");
}

#define REJECT(fn, text, want) \
	static void fn(void **state) \
	{ \
		(void)state; \
		cfg_expect_reject(text, want); \
	}

REJECT(rej_impair_no_percent, MIN "[impair]\nrx = delay=20ms,loss=1\n",
       "t.ini: [impair] rx = 'delay=20ms,loss=1': impairment item 2 'loss=1': expected a "
       "percentage 0..100 with %, like 1%")
REJECT(rej_impair_unknown_item, MIN "[impair]\ntx = \"delay=5ms,bogus=1\"\n",
       "t.ini: [impair] tx = '\"delay=5ms,bogus=1\"': impairment item 2 'bogus=1': unknown key")
REJECT(rej_impair_loss_range, MIN "[impair]\ntx = loss=101%\n",
       "t.ini: [impair] tx = 'loss=101%': impairment item 1 'loss=101%': expected a "
       "percentage 0..100")
REJECT(rej_impair_delay_unit, MIN "[impair]\nrx = delay=20\n",
       "t.ini: [impair] rx = 'delay=20': impairment item 1 'delay=20': expected a time with "
       "a unit us, ms or s")
REJECT(rej_impair_queue_alone, MIN "[impair]\nrx = queue=64kb\n",
       "t.ini: [impair] rx = 'queue=64kb': impairment: 'queue' needs 'rate'")
REJECT(rej_impair_no_equals, MIN "[impair]\nrx = loss\n",
       "t.ini: [impair] rx = 'loss': impairment item 1 'loss': expected key=value")
REJECT(rej_impair_stray_quote, MIN "[impair]\nrx = \"loss=1%\n",
       "t.ini: [impair] rx = '\"loss=1%': a '\"' inside the spec")
REJECT(rej_impair_unknown_key, MIN "[impair]\nrate = 10mbit\n",
       "t.ini: [impair] rate: unknown key")
REJECT(rej_impair_twice, MIN "[impair]\nrx = loss=1%\nrx = loss=2%\n",
       "t.ini: [impair] rx = 'loss=2%': key given twice")
REJECT(rej_impair_empty, MIN "[impair]\ntx =\n",
       "t.ini: [impair] tx = '': empty value")

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_impair_keys),
		cmocka_unit_test(rej_impair_no_percent),
		cmocka_unit_test(rej_impair_unknown_item),
		cmocka_unit_test(rej_impair_loss_range),
		cmocka_unit_test(rej_impair_delay_unit),
		cmocka_unit_test(rej_impair_queue_alone),
		cmocka_unit_test(rej_impair_no_equals),
		cmocka_unit_test(rej_impair_stray_quote),
		cmocka_unit_test(rej_impair_unknown_key),
		cmocka_unit_test(rej_impair_twice),
		cmocka_unit_test(rej_impair_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
