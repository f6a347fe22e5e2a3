/* Per-engine hashed timing wheel.
 *
 * Every engine owns one wheel; nothing else touches it, so there are no locks.
 * Time is whatever the owner passes to us_timer_run(): the engine passes its
 * TSC-derived clock once per loop iteration, tests pass a virtual clock.  The
 * wheel's notion of "now" (us_timer_now) is the only clock that tcp/ and the
 * protocol code ever read.
 *
 * A timer is an intrusive struct embedded in its owner (TCB, ARP entry, ...);
 * the callback recovers the owner with container_of.  Slots hold timers whose
 * expiry hashes to them; a timer more than one revolution away simply stays in
 * its slot until the wheel reaches its expiry (checked on every visit), so the
 * wheel needs no cascading and arming/cancelling is O(1).
 */
#ifndef US_TIMER_H
#define US_TIMER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

/* Types */

#define US_WHEEL_SLOTS 1024u /* power of two */

struct us_timer;
TAILQ_HEAD(us_timer_list, us_timer);
typedef void (*us_timer_fn)(struct us_timer *t, uint64_t now_ns);

struct us_timer {
	TAILQ_ENTRY(us_timer) link;
	struct us_timer_list *list; /* the list it is on: its slot, or a run's due list */
	uint64_t expire_ns;
	us_timer_fn fn;
	bool armed;
};

struct us_timer_wheel {
	uint64_t tick_ns;   /* slot width */
	uint64_t now_ns;    /* last time passed to us_timer_run / init */
	uint64_t next_tick; /* first tick not yet processed */
	unsigned armed;     /* number of armed timers (leak checks) */
	struct us_timer_list slots[US_WHEEL_SLOTS];
	/* No timer of slot i expires before slot_min[i] (UINT64_MAX: none):
	 * lowered on arm, recomputed by a scan, left low by a cancel.  The
	 * current tick is revisited on every run, and its slot also holds the
	 * timers whole revolutions away (TIME-WAIT's 60 s is ~59 of them): the
	 * run scans it only when one may be due. */
	uint64_t slot_min[US_WHEEL_SLOTS];
	/* No armed timer expires before next_hint: lowered on arm, recomputed
	 * by us_timer_next once the wheel's time has passed it. */
	uint64_t next_hint;
};

/* Prototypes */

void us_timer_wheel_init(struct us_timer_wheel *w, uint64_t tick_ns, uint64_t now_ns);
void us_timer_init(struct us_timer *t, us_timer_fn fn);
/* (Re)arm t to fire at expire_ns (absolute); a time in the past fires on the next run. */
void us_timer_arm(struct us_timer_wheel *w, struct us_timer *t, uint64_t expire_ns);
void us_timer_cancel(struct us_timer_wheel *w, struct us_timer *t);
/* Advance the wheel to now_ns and fire every timer due; returns how many fired.
 * Callbacks may arm or cancel any timer, including the one firing. */
unsigned us_timer_run(struct us_timer_wheel *w, uint64_t now_ns);
/* No armed timer expires before the time returned (UINT64_MAX: none armed).
 * A lower bound, not always a deadline: a cancel leaves the bound low until
 * the wheel's time passes it.  A virtual clock jumps to it instead of
 * stepping tick by tick.  Scans every slot when the cached bound has
 * passed, so once per wheel run at most. */
uint64_t us_timer_next(struct us_timer_wheel *w);

static inline uint64_t us_timer_now(const struct us_timer_wheel *w) { return w->now_ns; }
static inline bool us_timer_armed(const struct us_timer *t) { return t->armed; }

#define US_US(x) ((uint64_t)(x) * 1000ull)
#define US_MS(x) ((uint64_t)(x) * 1000000ull)
#define US_SEC(x) ((uint64_t)(x) * 1000000000ull)

#endif
