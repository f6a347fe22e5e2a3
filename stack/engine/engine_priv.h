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

#include "nic/capture.h"
#include "stack/engine/engine.h"
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
	struct nic_capture *capture; /* [capture] pcap: frames both ways, or NULL */
	struct nic_impair *impair_rx; /* [impair] rx: stage between port.rx and us, or NULL */
	struct nic_impair *impair_tx; /* [impair] tx: stage between us and port.tx, or NULL */
	/* Several engines (stack/engine/handoff.h): frames owned by another engine go
	 * there; NULL with one engine. */
	struct us_handoff *ho;
	/* Per-connection flow rules (stack/engine/flowrule.h), owned; NULL without. */
	struct us_flowrules *rules;
	/* Isolated port: the stack's control rules (ARP, ICMP, listeners),
	 * shared by the engines; NULL when the port is not isolated. */
	struct us_flowctl *ctl;
	/* Several engines: read-mostly state by message (stack/engine/publish.h);
	 * NULL with one engine. */
	struct us_publish *pub;
	/* Migration (stack/engine/migrate.h): the table of migrated tuples (NULL with
	 * one engine). */
	struct us_migrate *mig;
	bool polling;                /* inside us_engine_poll */
};

/* The engine's counters (steer_*, pub_*, migrate_*) sit with the network
 * layers' in STACK_COUNTERS. */
#define US_STAT_INC(e, name) US_NET_STAT_INC(&(e)->net, name)
#define US_STAT_ADD(e, name, k) US_NET_STAT_ADD(&(e)->net, name, k)

/* Prototypes: port_impair.c ([impair] rx/tx, the link emulator in place) */

struct nic_impair;
/* The stages the config asks for (none when its specs are empty); 0 or
 * -EINVAL (bad spec, logged with the key) / -ENOMEM. */
int us_port_impair_init(struct us_engine *e);
/* Frees the stages and the frames still in them. */
void us_port_impair_fini(struct us_engine *e);
/* The n frames port.rx gave enter the RX stage at now_ns; the frames due by
 * now_ns (up to max) come back in pkts.  Only when e->impair_rx is set. */
uint16_t us_port_impair_rx(struct us_engine *e, struct rte_mbuf **pkts, uint16_t n,
			   uint16_t max, uint64_t now_ns);
/* e->net.tx enters the TX stage at the engine's clock, what is due goes to
 * port.tx.  Only when e->impair_tx is set. */
void us_port_impair_tx(struct us_engine *e);
/* "impair_rx_<counter> value  # desc" lines, nothing for a stage that is off. */
void us_port_impair_print_stats(const struct us_engine *e, FILE *out);
/* impair_rx_* / impair_tx_* counters (and _pending); -1 if unknown or off. */
int64_t us_port_impair_counter(const struct us_engine *e, const char *name);

#endif
