/* stack/engine/idle.h: adaptive polling for an engine with nothing to do.
 *
 * Busy polling (the default, max_ns 0) gives the lowest latency and burns a
 * core.  With a bound, an engine that saw `spin` empty polls in a row starts
 * sleeping: 1 us, then doubling up to max_ns per empty poll; the first poll
 * that finds a frame resets it to busy polling.  Timers are late by at most
 * max_ns, so the bound stays well under the wheel's 1 ms tick by default.
 * Pure (no clock, no sleep): the caller sleeps what us_idle_next says.
 */
#ifndef US_IDLE_H
#define US_IDLE_H

#include <stdint.h>

/* Types */

struct us_idle {
	uint64_t max_ns;   /* 0: never sleep */
	uint32_t spin;     /* empty polls before the first sleep */
	uint32_t empty;    /* empty polls in a row */
	uint64_t sleep_ns; /* the last sleep */
	uint64_t sleeps;   /* counters for stats */
	uint64_t slept_ns;
};

#define US_IDLE_FIRST_NS 1000u

/* Prototypes */

/* After a poll that received frames: nanoseconds to sleep now (0: none). */
static inline uint64_t us_idle_next(struct us_idle *s, unsigned frames)
{
	if (s->max_ns == 0)
		return 0;
	if (frames > 0) {
		s->empty = 0;
		s->sleep_ns = 0;
		return 0;
	}
	if (s->empty < s->spin) {
		s->empty++;
		return 0;
	}
	s->sleep_ns = s->sleep_ns == 0 ? US_IDLE_FIRST_NS : s->sleep_ns * 2;
	if (s->sleep_ns > s->max_ns)
		s->sleep_ns = s->max_ns;
	s->sleeps++;
	s->slept_ns += s->sleep_ns;
	return s->sleep_ns;
}

#endif
