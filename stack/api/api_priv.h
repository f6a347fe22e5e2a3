/* stack/api/api_priv.h: the stack behind the public life-cycle calls
 * (struct us_stack) and what the files of stack/api share.
 *
 * init.c   the composition root: config -> nic (EAL, pool, port) -> the
 *          engines with their stages -> the sockets; us_init*, us_fini
 * run.c    the engine loop on the real clock, idle back-off, us_run*,
 *          us_launch
 * drain.c  the shutdown drain: closes reach the wire before the port stops
 * stats.c  us_print_stats, the text counters
 * The callback API (us_conn_*, us_tcp_listen*) lives with the sockets
 * (stack/sock/conn.c) and reaches the stack through stack/sock/conn.h.
 */
#ifndef US_API_PRIV_H
#define US_API_PRIV_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "config/config.h"
#include "nic/nic.h"
#include "nic/steer.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/engine.h"
#include "stack/engine/handoff.h"
#include "stack/engine/idle.h"
#include "stack/engine/publish.h"
#include "stack/sock/conn.h"
#include "stack/sock/sock_table.h"

/* Types */

#define API_MAX_RULES 65536u /* flow rules remembered per engine */

struct us_stack;

/* One engine with everything its thread touches: its queue, descriptor
 * table and idle state.  Nothing here is read by another engine. */
struct api_engine {
	struct us_stack *st;
	unsigned k;                   /* engine index = its RX/TX queue */
	unsigned lcore;               /* the EAL lcore running it */
	struct us_engine *engine;
	struct us_sock_table *socks;  /* the engine's descriptors (us_socket.h) */
	struct us_idle idle;          /* [engine] idle back-off */
	/* us_launch */
	int (*fn)(struct us_stack *st, unsigned engine, void *arg);
	void *arg;
	int rc;
} __rte_cache_aligned;

struct us_stack {
	struct us_config cfg;
	struct rte_mempool *pool;
	struct nic_port port;
	unsigned n;                   /* engines */
	struct api_engine eng[US_ENGINES_MAX];
	struct us_handoff *ho;        /* n > 1 */
	struct us_publish *pub;       /* n > 1: engine 0 writes the TFO secret */
	struct us_steer_caps steer;   /* the start-up probe's findings */
	struct us_flowctl ctl;        /* isolated port: ARP/ICMP/listener rules */
	uint64_t tsc_hz;
	char addr_text[INET_ADDRSTRLEN];
	char addr6_text[INET6_ADDRSTRLEN]; /* empty: no [ip6] addr */
	struct us_conn_listeners listeners; /* the callback API's (conn.h) */
	bool eal_up;
};

/* Clock */

/* The stack's only clock: the TSC in nanoseconds, read once per loop
 * iteration (inline: the loop reads it every poll). */
static inline uint64_t api_now_ns(const struct us_stack *st)
{
	uint64_t c = rte_get_tsc_cycles();
	/* Split to avoid 64-bit overflow of c * 1e9 after ~6 s at 3 GHz. */
	return (c / st->tsc_hz) * 1000000000ull + (c % st->tsc_hz) * 1000000000ull / st->tsc_hz;
}

/* Prototypes: run.c */

/* How the socket layer drives engine ae from us_epoll_wait: one loop
 * iteration on the real clock per poll. */
struct us_sock_driver api_sock_driver(struct api_engine *ae);

/* Prototypes: drain.c */

/* Lets the closes the application started reach the wire (engines
 * stopped, sockets closed), then resets what has not finished. */
void api_drain(struct us_stack *st);

#endif
