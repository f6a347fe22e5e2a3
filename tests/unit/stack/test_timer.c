/* Unit tests of the hashed timing wheel (stack/timer.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stack/timer.h"

struct probe {
	struct us_timer t;
	int fired;
	uint64_t at;
};

static void probe_fn(struct us_timer *t, uint64_t now)
{
	struct probe *p = (struct probe *)t;
	p->fired++;
	p->at = now;
}

static void test_fires_at_deadline_not_before(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe p = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	us_timer_init(&p.t, probe_fn);
	us_timer_arm(&w, &p.t, US_MS(200));
	assert_int_equal(us_timer_run(&w, US_MS(199)), 0);
	assert_int_equal(p.fired, 0);
	assert_int_equal(us_timer_run(&w, US_MS(200)), 1);
	assert_int_equal(p.fired, 1);
	assert_int_equal(w.armed, 0);
}

static void test_beyond_one_revolution(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe p = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	us_timer_init(&p.t, probe_fn);
	us_timer_arm(&w, &p.t, US_SEC(60)); /* TIME_WAIT: many revolutions away */
	for (uint64_t ms = 1; ms < 60000; ms += 7)
		us_timer_run(&w, US_MS(ms));
	assert_int_equal(p.fired, 0);
	us_timer_run(&w, US_SEC(60));
	assert_int_equal(p.fired, 1);
}

static void test_cancel_and_rearm(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe p = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	us_timer_init(&p.t, probe_fn);
	us_timer_arm(&w, &p.t, US_MS(10));
	us_timer_cancel(&w, &p.t);
	assert_false(us_timer_armed(&p.t));
	us_timer_run(&w, US_MS(20));
	assert_int_equal(p.fired, 0);
	us_timer_arm(&w, &p.t, US_MS(30));
	us_timer_arm(&w, &p.t, US_MS(40)); /* re-arm moves it */
	us_timer_run(&w, US_MS(35));
	assert_int_equal(p.fired, 0);
	us_timer_run(&w, US_MS(40));
	assert_int_equal(p.fired, 1);
}

static void test_past_deadline_fires_next_run(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe p = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	us_timer_run(&w, US_MS(500));
	us_timer_init(&p.t, probe_fn);
	us_timer_arm(&w, &p.t, US_MS(100));
	us_timer_run(&w, US_MS(501));
	assert_int_equal(p.fired, 1);
}

static void test_large_jump_fires_everything_due(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe p[3] = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	for (int i = 0; i < 3; i++) {
		us_timer_init(&p[i].t, probe_fn);
		us_timer_arm(&w, &p[i].t, US_MS(100 + 1000 * i));
	}
	assert_int_equal(us_timer_run(&w, US_SEC(10)), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fires_at_deadline_not_before),
		cmocka_unit_test(test_beyond_one_revolution),
		cmocka_unit_test(test_cancel_and_rearm),
		cmocka_unit_test(test_past_deadline_fires_next_run),
		cmocka_unit_test(test_large_jump_fires_everything_due),
	};
	return cmocka_run_group_tests_name("timer", tests, NULL, NULL);
}
