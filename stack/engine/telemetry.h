/* stack/engine/telemetry.h: the engine's counters, port statistics and connection
 * listing through DPDK's rte_telemetry (readable with dpdk-telemetry.py and
 * tools/us-stat).
 *
 * Commands (every one takes an optional engine id, default 0):
 *   /userstack/stats,E       every stack and TCP counter, grouped (and the
 *                            capture file's when [capture] pcap is on),
 *                            RFC 4022 TCP-MIB scalars under "mib", and the
 *                            TCBs in each state now under "tcbs"
 *   /userstack/drops,E       only the counters of dropped packets (non-zero)
 *   /userstack/port,E        rte_eth_stats of the engine's port, nic/ counters
 *   /userstack/conns,E[,S]   listeners and connections like `ss -ti`, 16 rows
 *                            from row S on, with "total" and "next"
 *
 * Threads: DPDK runs these callbacks on its telemetry threads (one per
 * client), never on the engine's core, and engine state is touched only by
 * that core (DESIGN.md "Ownership").  So the callback never reads engine
 * state: it posts a request and the engine, at the end of a loop iteration,
 * copies what was asked into the slot's snapshot and publishes it with a
 * release store of the request number; the callback sees that number with
 * an acquire load and only then reads the snapshot.  Readers serialize on a
 * mutex the engine never takes, so the engine writes a snapshot only while
 * no reader reads it: no torn reads, no retry, and no cost on the engine
 * but one relaxed load per iteration while nobody asks.
 */
#ifndef US_STACK_TELEMETRY_H
#define US_STACK_TELEMETRY_H

#include <stdint.h>

#include "stack/base/limits.h"
struct us_engine;
struct nic_port;

/* Types */

/* A request bit per engine in one 32-bit word (us_telemetry_pending). */
_Static_assert(US_ENGINES_MAX <= 32, "one bit per engine in us_telemetry_pending");
#define US_TELEM_CONNS_PAGE 16    /* rows per /userstack/conns reply (16 KiB JSON) */
#define US_TELEM_WAIT_MS 1000     /* how long a callback waits for the engine */

/* Bit id is set while engine id has a request to serve. */
extern uint32_t us_telemetry_pending;

/* Prototypes */

/* Registers the commands (once per process) and gives engine e the slot of
 * its id; port is the port whose statistics /userstack/port shows (may be
 * NULL).  0 or -EINVAL (id too large) / -EBUSY (slot taken). */
int us_telemetry_attach(struct us_engine *e, const struct nic_port *port);
/* Frees e's slot (waits for a reader in progress).  No-op if e has none. */
void us_telemetry_detach(struct us_engine *e);
/* Engine core: publish what a reader asked for. */
void us_telemetry_serve(struct us_engine *e, unsigned id);

/* Engine core, once per loop iteration. */
static inline void us_telemetry_poll(struct us_engine *e, unsigned id)
{
	if (id < US_ENGINES_MAX &&
	    (__atomic_load_n(&us_telemetry_pending, __ATOMIC_RELAXED) & (1u << id)) != 0)
		us_telemetry_serve(e, id);
}

#endif
