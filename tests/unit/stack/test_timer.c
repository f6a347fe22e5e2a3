/* Unit tests of the hashed timing wheel (stack/base/timer.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "stack/base/timer.h"

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

/* A deadline inside the tick being run must not wait a revolution: the
 * wheel revisits the current, partly elapsed tick (found by the adversarial
 * suite: a 40.5 ms delayed ACK fired at 1064 ms when polled every 0.1 ms). */
static void test_deadline_later_in_current_tick(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe p = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	us_timer_init(&p.t, probe_fn);
	us_timer_arm(&w, &p.t, US_US(40500));
	for (uint64_t us = 100; us <= 2000000 && p.fired == 0; us += 100)
		us_timer_run(&w, US_US(us));
	assert_int_equal(p.fired, 1);
	assert_true(p.at >= US_US(40500) && p.at < US_US(40600));
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

static struct us_timer_wheel *cancel_wheel;
static struct probe *cancel_victim;

static void cancel_other_fn(struct us_timer *t, uint64_t now)
{
	probe_fn(t, now);
	us_timer_cancel(cancel_wheel, &cancel_victim->t);
}

/* Two timers due in the same run: the first one's callback cancels the
 * second, which already sits on the run's due list (an application aborting
 * another connection from a callback).  The second must not fire and the
 * wheel must stay consistent. */
static void test_callback_cancels_other_due_timer(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe a = {0}, b = {0}, c = {0};
	us_timer_wheel_init(&w, US_MS(1), 0);
	cancel_wheel = &w;
	cancel_victim = &b;
	us_timer_init(&a.t, cancel_other_fn);
	us_timer_init(&b.t, probe_fn);
	us_timer_init(&c.t, probe_fn);
	us_timer_arm(&w, &a.t, US_MS(5));
	us_timer_arm(&w, &b.t, US_MS(5));
	us_timer_arm(&w, &c.t, US_MS(5 + US_WHEEL_SLOTS)); /* same slot, not due */
	assert_int_equal(us_timer_run(&w, US_MS(5)), 1);
	assert_int_equal(a.fired, 1);
	assert_int_equal(b.fired, 0);
	assert_int_equal(w.armed, 1);
	us_timer_run(&w, US_MS(5 + US_WHEEL_SLOTS));
	assert_int_equal(c.fired, 1);
	assert_int_equal(w.armed, 0);
}

/* A clock that jumps to us_timer_next misses no timer and fires each at its
 * deadline, including one many revolutions away and after a cancel. */
static void test_next_jumps_to_each_deadline(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe a = {0}, b = {0}, c = {0};
	uint64_t now = 0;
	unsigned runs = 0;

	us_timer_wheel_init(&w, US_MS(1), 0);
	assert_true(us_timer_next(&w) == UINT64_MAX);
	us_timer_init(&a.t, probe_fn);
	us_timer_init(&b.t, probe_fn);
	us_timer_init(&c.t, probe_fn);
	us_timer_arm(&w, &a.t, US_US(40500));
	us_timer_arm(&w, &b.t, US_SEC(60));
	us_timer_arm(&w, &c.t, US_MS(7));
	us_timer_cancel(&w, &c.t);
	assert_true(us_timer_next(&w) == US_MS(7)); /* a lower bound after the cancel */
	while ((now = us_timer_next(&w)) != UINT64_MAX) {
		assert_true(++runs < 10);
		us_timer_run(&w, now);
	}
	assert_int_equal(a.fired, 1);
	assert_true(a.at == US_US(40500));
	assert_int_equal(b.fired, 1);
	assert_true(b.at == US_SEC(60));
	assert_int_equal(c.fired, 0);
	assert_int_equal(runs, 3);
}

/* A cancel that empties the wheel, then time passing while it is empty (a
 * run visits no slot), must not leave the cancelled deadline as the next
 * one once another timer is armed. */
static void test_next_forgets_bounds_of_an_empty_wheel(void **state)
{
	(void)state;
	struct us_timer_wheel w;
	struct probe a = {0}, b = {0};

	us_timer_wheel_init(&w, US_MS(1), 0);
	us_timer_init(&a.t, probe_fn);
	us_timer_init(&b.t, probe_fn);
	us_timer_arm(&w, &a.t, US_MS(300));
	us_timer_cancel(&w, &a.t);
	us_timer_run(&w, US_SEC(5));
	us_timer_arm(&w, &b.t, US_SEC(6));
	assert_true(us_timer_next(&w) == US_SEC(6));
	us_timer_run(&w, US_SEC(6));
	assert_int_equal(b.fired, 1);
	assert_true(us_timer_next(&w) == UINT64_MAX);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fires_at_deadline_not_before),
		cmocka_unit_test(test_beyond_one_revolution),
		cmocka_unit_test(test_deadline_later_in_current_tick),
		cmocka_unit_test(test_cancel_and_rearm),
		cmocka_unit_test(test_past_deadline_fires_next_run),
		cmocka_unit_test(test_large_jump_fires_everything_due),
		cmocka_unit_test(test_callback_cancels_other_due_timer),
		cmocka_unit_test(test_next_jumps_to_each_deadline),
		cmocka_unit_test(test_next_forgets_bounds_of_an_empty_wheel),
	};
	return cmocka_run_group_tests_name("timer", tests, NULL, NULL);
}
