/* stack/engine/engine.h: one per-lcore, run-to-completion engine.
 *
 * An engine owns a port queue (through us_port_ops, so tests can use a fake
 * port), a timer wheel, an ARP table, IPv4 state (route table, reassembly
 * table), a TCP stack and its counters.  Only the engine's own core touches any
 * of it.  One loop iteration (us_engine_poll): read the clock once, RX burst,
 * process every frame to completion, run due timers, flush TX in one burst.
 *
 * Ownership: us_engine_input consumes the frame.  Frames queued for TX belong
 * to the engine until port->tx consumes them.
 */
#ifndef US_ENGINE_H
#define US_ENGINE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_ether.h>

#include "config/config.h"
#include "stack/base/timer.h"

struct rte_mbuf;
struct rte_mempool;
struct tcp_stack;

/* Types */

/* The engine's view of its port queue: nic/ for a real port, a capture
 * buffer for packet-script tests. */
struct us_port_ops {
	uint16_t (*rx)(void *ctx, struct rte_mbuf **pkts, uint16_t n);
	/* Consumes all n mbufs (frees what it could not send). */
	uint16_t (*tx)(void *ctx, struct rte_mbuf **pkts, uint16_t n);
	void *ctx;
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool tx_ip_csum; /* set RTE_MBUF_F_TX_IP_CKSUM instead of computing */
	bool tx_l4_csum; /* set RTE_MBUF_F_TX_TCP/UDP_CKSUM + pseudo-header sum */
	bool rx_csum;    /* trust RTE_MBUF_F_RX_*_CKSUM_GOOD/BAD flags */
};

struct us_engine; /* defined in stack/engine/engine_priv.h */

/* Prototypes */

/* NULL + errno on failure. now_ns starts the engine's clock and wheel. */
struct us_engine *us_engine_create(unsigned id, const struct us_config *cfg,
				   struct rte_mempool *pool, const struct us_port_ops *port,
				   uint64_t now_ns);
/* Frees every connection, queued frame, timer and table. */
void us_engine_destroy(struct us_engine *e);
/* One loop iteration at time now_ns; returns frames received. */
unsigned us_engine_poll(struct us_engine *e, uint64_t now_ns);
/* Process one received Ethernet frame now (consumes m). */
void us_engine_input(struct us_engine *e, struct rte_mbuf *m);
/* Advance time to now_ns, run due timers, flush TX (virtual-time tests). */
void us_engine_advance(struct us_engine *e, uint64_t now_ns);
/* Send queued frames now. */
void us_engine_flush(struct us_engine *e);
/* Send a gratuitous ARP for our address. */
void us_engine_announce(struct us_engine *e);

/* Several engines: e (its id = its queue) hands frames it does not own to
 * their owner through ho and takes those handed to it; active opens pick
 * ports that e owns.  Call before any traffic; ho outlives e.  0, or
 * -ENOMEM (the migration table, stack/engine/migrate.h). */
struct us_handoff;
int us_engine_set_handoff(struct us_engine *e, struct us_handoff *ho);

/* Several engines: read-mostly state by message (stack/engine/publish.h).  An
 * engine other than p's writer stops drawing its own TFO secret and takes
 * the writer's; us_engine_publish_tfo_keys (the writer, at start) sends the
 * current one, rotations send theirs.  Call before any traffic; p outlives
 * e.  0 or -EINVAL (not the writer). */
struct us_publish;
void us_engine_set_publish(struct us_engine *e, struct us_publish *p);
int us_engine_publish_tfo_keys(struct us_engine *e);

/* Flow rules for e's connections (stack/engine/flowrule.h): e takes fr over and
 * destroys it (rules removed) with itself.  Call before any traffic. */
struct us_flowrules;
void us_engine_set_flowrules(struct us_engine *e, struct us_flowrules *fr);

/* Isolated port (stack/engine/flowrule.h): the stack's control rules, so that a
 * listener made through e's sockets gets its RSS rule (without it no SYN
 * arrives).  Listen/unlisten: 0 or -errno; nothing to do without ctl. */
struct us_flowctl;
void us_engine_set_flowctl(struct us_engine *e, struct us_flowctl *ctl);
int us_engine_listen_rule(struct us_engine *e, uint16_t port);
void us_engine_unlisten_rule(struct us_engine *e, uint16_t port);

struct tcp_stack *us_engine_tcp(struct us_engine *e);
struct us_timer_wheel *us_engine_wheel(struct us_engine *e);
uint32_t us_engine_addr(const struct us_engine *e);
/* Every counter of the engine (stack, ARP, IP, ICMP, UDP, TCP), one per line
 * "name value", followed by its description. */
void us_engine_print_stats(const struct us_engine *e, FILE *out);
/* Look up one counter by name (tests); -1 if unknown. */
int64_t us_engine_counter(const struct us_engine *e, const char *name);

/* Operations (stack/engine/telemetry.c): publish this engine's counters, its port's
 * statistics (port may be NULL) and its connections through rte_telemetry
 * (/userstack/stats, /drops, /port, /conns).  0 or -errno; the engine
 * detaches itself when destroyed. */
struct nic_port;
int us_engine_telemetry(struct us_engine *e, const struct nic_port *port);

#endif
