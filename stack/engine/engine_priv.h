/* stack/engine/engine_priv.h: the engine's state.  Private to stack/ and its
 * tests.
 *
 * The network layers' state (struct us_net, stack/net/net.h) is embedded:
 * their frames wait for TX in e->net.tx until us_engine_flush hands them to
 * port.tx, which consumes them.
 */
#ifndef US_ENGINE_PRIV_H
#define US_ENGINE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/engine/engine.h"
#include "stack/engine/stage.h"
#include "stack/net/net.h"
#include "stack/base/timer.h"
#include "tcp/tcp.h"

/* Types */

#define US_RX_BURST 32
#define US_WHEEL_TICK_NS US_MS(1)

struct us_engine {
	unsigned id;
	struct us_config cfg;
	struct rte_mempool *pool;   /* lent to net and tcp */
	struct us_port_ops port;
	struct us_timer_wheel wheel;
	/* Ethernet to UDP: addresses, tables, the TX buffer, the counters. */
	struct us_net net;
	struct tcp_stack *tcp;
	/* Optional stages (stage.h): the wire, hand-off, migration, published
	 * state, flow rules; none with one engine and no [impair]/[capture]. */
	struct us_stages stages;
	bool polling;                /* inside us_engine_poll */
};

/* The engine's counters (steer_*, pub_*, migrate_*) sit with the network
 * layers' in STACK_COUNTERS. */
#define US_STAT_INC(e, name) US_NET_STAT_INC(&(e)->net, name)
#define US_STAT_ADD(e, name, k) US_NET_STAT_ADD(&(e)->net, name, k)

/* Prototypes: engine.c */

/* us_engine_input for a frame another engine handed over (stage_handoff.c). */
void us_engine_input_handed(struct us_engine *e, struct rte_mbuf *m);

#endif
