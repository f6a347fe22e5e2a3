/* stack/base/limits.h: limits that several rooms size their tables by.
 *
 * One name per limit, here in the leaf so that nic/, the engine, config/ and
 * the tools agree without including each other.  Where a room has a second
 * bound that must hold with one of these, it says so with a _Static_assert
 * next to its own table.
 */
#ifndef US_BASE_LIMITS_H
#define US_BASE_LIMITS_H

/* Engines per process.  Engine k owns RX/TX queue k of the port, so this is
 * also the most queue pairs nic/ sets up on a port (and us-netem forwards),
 * the size of the hand-off ring matrix and of the telemetry slots, and the
 * upper bound of [engine] count. */
#define US_ENGINES_MAX 16

#endif
