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
struct us_net;

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
	bool tso;        /* the NIC cuts TCP segments of several MSS */
	bool lro;        /* the NIC coalesces received TCP segments */
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
/* No timer of the engine fires before this time (us_timer_next): where a
 * virtual clock may jump to when no frame is on its way. */
uint64_t us_engine_next_timer(struct us_engine *e);
/* Send queued frames now. */
void us_engine_flush(struct us_engine *e);
/* Send a gratuitous ARP for our address; with [ip6] on, start Duplicate
 * Address Detection (the addresses are announced once it passes, RFC 4861
 * 7.2.6; at once with [ip6] dad = off). */
void us_engine_announce(struct us_engine *e);
/* How DAD stands: 0 when every IPv6 address is usable (or [ip6] is off),
 * -EAGAIN while it runs, -EADDRINUSE when an address is taken (dup gets
 * it as text, len bytes at most). */
int us_engine_dad_status(const struct us_engine *e, char *dup, size_t len);
/* Engines of one stack share their addresses: those that did not run DAD
 * take the verdict of the one that did. */
void us_engine_adopt_addrs(struct us_engine *e, const struct us_engine *from);

/* Optional stages (hand-off, publish, migration, flow rules, the wire)
 * attach through stack/engine/stage.h, each with its module's own call. */

/* A listener opens on port: the stages that want it (an isolated port's
 * listener rule, without which no SYN arrives) take it, or none does.  0
 * or -errno; 0 with no such stage.  Unlisten undoes it. */
int us_engine_listen_rule(struct us_engine *e, uint16_t port);
void us_engine_unlisten_rule(struct us_engine *e, uint16_t port);

/* What the socket layer works with: the engine's TCP stack, its network
 * layers (UDP output and delivery), its mbuf pool, its [tcp] settings. */
struct tcp_stack *us_engine_tcp(struct us_engine *e);
struct us_net *us_engine_net(struct us_engine *e);
struct rte_mempool *us_engine_pool(const struct us_engine *e);
const struct tcp_config *us_engine_tcp_config(const struct us_engine *e);
struct us_timer_wheel *us_engine_wheel(struct us_engine *e);
uint32_t us_engine_addr(const struct us_engine *e);
/* Every counter of the engine (stack, ARP, IP, ICMP, UDP, TCP) and the TCP
 * state gauges ("tcbs_established", ...), one per line "name value",
 * followed by its description. */
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
