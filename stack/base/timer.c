#include <stddef.h>

#include "stack/base/timer.h"

static unsigned slot_index(const struct us_timer_wheel *w, uint64_t expire_ns)
{
	return (unsigned)((expire_ns / w->tick_ns) & (US_WHEEL_SLOTS - 1));
}

void us_timer_wheel_init(struct us_timer_wheel *w, uint64_t tick_ns, uint64_t now_ns)
{
	w->tick_ns = tick_ns ? tick_ns : US_MS(1);
	w->now_ns = now_ns;
	w->next_tick = now_ns / w->tick_ns;
	w->armed = 0;
	w->next_hint = UINT64_MAX;
	for (unsigned i = 0; i < US_WHEEL_SLOTS; i++) {
		TAILQ_INIT(&w->slots[i]);
		w->slot_min[i] = UINT64_MAX;
	}
}

void us_timer_init(struct us_timer *t, us_timer_fn fn)
{
	t->fn = fn;
	t->armed = false;
	t->expire_ns = 0;
}

void us_timer_cancel(struct us_timer_wheel *w, struct us_timer *t)
{
	if (!t->armed)
		return;
	/* t->list, not its slot: a due timer sits on us_timer_run's list while
	 * an earlier callback may cancel it. */
	TAILQ_REMOVE(t->list, t, link);
	t->armed = false;
	w->armed--;
}

/* An empty wheel's slots are empty, but their bounds may be stale-low
 * (cancels leave them so, and runs skip an empty wheel's slots): forget
 * them before the first timer goes in, or us_timer_next would name a
 * past time forever. */
static void forget_bounds(struct us_timer_wheel *w)
{
	for (unsigned i = 0; i < US_WHEEL_SLOTS; i++)
		w->slot_min[i] = UINT64_MAX;
	w->next_hint = UINT64_MAX;
}

void us_timer_arm(struct us_timer_wheel *w, struct us_timer *t, uint64_t expire_ns)
{
	us_timer_cancel(w, t);
	if (w->armed == 0)
		forget_bounds(w);
	/* A deadline in an already-processed tick goes to the next tick to visit,
	 * so it fires on the next run instead of one revolution later. */
	uint64_t first = w->next_tick * w->tick_ns;
	t->expire_ns = expire_ns < first ? first : expire_ns;
	unsigned i = slot_index(w, t->expire_ns);
	t->list = &w->slots[i];
	if (t->expire_ns < w->slot_min[i])
		w->slot_min[i] = t->expire_ns;
	if (t->expire_ns < w->next_hint)
		w->next_hint = t->expire_ns;
	TAILQ_INSERT_TAIL(t->list, t, link);
	t->armed = true;
	w->armed++;
}

/* Fire the timers of slot i that are due by now_ns; later ones stay. */
static unsigned run_slot(struct us_timer_wheel *w, unsigned i, uint64_t now_ns)
{
	struct us_timer_list due, *slot = &w->slots[i];
	struct us_timer *t, *next;
	uint64_t min = UINT64_MAX;
	unsigned fired = 0;

	if (w->slot_min[i] > now_ns)
		return 0;
	TAILQ_INIT(&due);
	for (t = TAILQ_FIRST(slot); t != NULL; t = next) {
		next = TAILQ_NEXT(t, link);
		if (t->expire_ns <= now_ns) {
			TAILQ_REMOVE(slot, t, link);
			TAILQ_INSERT_TAIL(&due, t, link);
			t->list = &due;
		} else if (t->expire_ns < min) {
			min = t->expire_ns;
		}
	}
	/* Before the callbacks: those arming into this slot lower it again. */
	w->slot_min[i] = min;
	/* Callbacks may re-arm or cancel other due timers: take one at a time. */
	while ((t = TAILQ_FIRST(&due)) != NULL) {
		TAILQ_REMOVE(&due, t, link);
		t->armed = false;
		w->armed--;
		t->fn(t, now_ns);
		fired++;
	}
	return fired;
}

unsigned us_timer_run(struct us_timer_wheel *w, uint64_t now_ns)
{
	uint64_t last = now_ns / w->tick_ns;
	unsigned fired = 0;

	if (now_ns > w->now_ns)
		w->now_ns = now_ns;
	if (w->armed == 0) {
		w->next_tick = last;
		return 0;
	}
	/* Visit each elapsed slot once, but never more than one revolution. */
	uint64_t first = w->next_tick;
	if (last >= first + US_WHEEL_SLOTS)
		first = last - US_WHEEL_SLOTS + 1;
	for (uint64_t tick = first; tick <= last; tick++) {
		/* Advance first: a callback arming a past deadline lands in a slot
		 * this loop (or the next run) still visits. */
		w->next_tick = tick + 1;
		fired += run_slot(w, (unsigned)(tick & (US_WHEEL_SLOTS - 1)), w->now_ns);
	}
	/* The current tick is only partly elapsed: a timer due later in it is
	 * still in its slot, so the next run visits this tick again (with
	 * last + 1 it waited a whole revolution, 1024 ticks). */
	w->next_tick = last;
	return fired;
}

uint64_t us_timer_next(struct us_timer_wheel *w)
{
	uint64_t min = UINT64_MAX;

	if (w->armed == 0)
		return min;
	if (w->next_hint > w->now_ns)
		return w->next_hint;
	for (unsigned i = 0; i < US_WHEEL_SLOTS; i++)
		if (w->slot_min[i] < min)
			min = w->slot_min[i];
	w->next_hint = min;
	return min;
}
