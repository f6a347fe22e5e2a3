/* stack/engine/flowrule.h: per-connection flow rules (the hardware path of
 * steering: a NIC rule brings a connection to its engine's queue).
 *
 * When the port can create exact-match rules (the start-up probe created and
 * destroyed one), each connection gets a rule steering its packets to the
 * owning engine's queue for its life: installed when its TCB enters the
 * 4-tuple table (accept or connect), removed when it leaves it (close,
 * reset, end of TIME-WAIT).  Rule operations are queued by the data path
 * and applied in small batches at the end of a loop iteration, so a segment
 * never waits for the NIC's rule engine.  A rule the table refuses (full)
 * leaves the connection on RSS + hand-off, counted.
 *
 * The backend is rte_flow (us_flowrule_rte_ops) in production and the
 * software NIC model in tests.
 */
#ifndef US_FLOWRULE_H
#define US_FLOWRULE_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/base/in6.h"

#include <rte_spinlock.h>

#include "nic/steer.h"

struct rte_hash;
struct us_engine;

/* Types */

#define US_FLOWRULE_PENDING 1024  /* queued operations per engine (power of two) */
#define US_FLOWRULE_BATCH 16      /* operations applied per loop iteration */

#define US_FLOWRULE_COUNTERS(X) \
	X(rules_installed, "flow rules installed") \
	X(rules_removed, "flow rules removed") \
	X(rules_full, "flow rules refused by the NIC (table full): connection left on RSS") \
	X(rules_failed, "flow rules refused otherwise: connection left on RSS") \
	X(rules_dropped_pending, "rule operations dropped: pending queue full") \
	X(rules_ip6_skipped, "IPv6 connections left on RSS: no IPv6 flow rules yet")

struct us_flowrule_stats {
#define US_FLOWRULE_X_FIELD(name, desc) uint64_t name;
	US_FLOWRULE_COUNTERS(US_FLOWRULE_X_FIELD)
#undef US_FLOWRULE_X_FIELD
};

/* A backend: 0 or -errno (-ENOSPC: table full). */
struct us_flowrule_ops {
	int (*install)(void *ctx, const struct us_flow_tuple *t, uint16_t queue, void **handle);
	int (*remove)(void *ctx, const struct us_flow_tuple *t, void *handle);
	void *ctx;
};

struct us_flowrule_op {
	struct us_flow_tuple t;   /* incoming direction, network order */
	bool install;
};

struct us_flowrules {
	struct us_flowrule_ops ops;
	uint16_t queue;                     /* the engine's queue */
	struct rte_hash *rules;             /* tuple -> backend handle */
	struct us_flowrule_op pending[US_FLOWRULE_PENDING];
	uint32_t head, tail;                /* FIFO: tail - head queued */
	struct us_flowrule_stats stats;
};

/* Prototypes */

/* Rules for queue, up to capacity connections; name unique per process.
 * NULL + errno. */
struct us_flowrules *us_flowrule_create(const struct us_flowrule_ops *ops, uint16_t queue,
					uint32_t capacity, const char *name);
/* Applies what is pending, removes every installed rule, frees. */
void us_flowrule_destroy(struct us_flowrules *fr);
/* Data path: queue an install (open) or removal of the connection's rule
 * (addresses as tcp/ has them, IPv4 v4-mapped; an IPv6 connection has no
 * rule yet and is counted, rules_ip6_skipped). */
void us_flowrule_note(struct us_flowrules *fr, const struct us_in6 *lip, uint16_t lport,
		      const struct us_in6 *rip, uint16_t rport, bool open);
/* Applies up to max queued operations; returns how many. */
unsigned us_flowrule_apply(struct us_flowrules *fr, unsigned max);
/* e takes fr over as its flow-rule stage (stage.h): each connection's
 * rule queued as it enters and leaves tcp/'s table, US_FLOWRULE_BATCH
 * applied after each iteration's TX, the "flow_" counters printed after
 * TCP's; destroyed (rules removed) with e.  Call before any traffic.  0,
 * or -ENOSPC (fr destroyed). */
int us_flowrules_attach(struct us_engine *e, struct us_flowrules *fr);
/* Applies every operation e's rules have queued (nothing without rules). */
void us_flowrules_apply_all(struct us_engine *e);
/* rte_flow on a port (nic/steer.h): ctx is a pointer to the port id. */
extern const struct us_flowrule_ops us_flowrule_rte_ops;

/* Isolated mode ([port] isolate = on): the port delivers only what a rule
 * matches, so the stack keeps, besides the per-connection rules above, one
 * set of control rules per port: ARP and ICMP to the control queue (engine
 * 0), and per listening TCP port a rule whose RSS action spreads SYNs over
 * every engine's queue exactly as the owner rule does (priority 1, below the
 * per-connection rules' 0, so an accepted connection's own rule wins).
 * Installed at start and at listen, on the control path, never per packet. */

#define US_FLOWCTL_LISTENERS 64   /* listening ports with a rule */

#define US_FLOWCTL_COUNTERS(X) \
	X(ctl_installed, "isolate: control rules installed (ARP, ICMP, listeners)") \
	X(ctl_removed, "isolate: control rules removed") \
	X(ctl_failed, "isolate: control rules refused by the NIC")

struct us_flowctl_stats {
#define US_FLOWCTL_X_FIELD(name, desc) uint64_t name;
	US_FLOWCTL_COUNTERS(US_FLOWCTL_X_FIELD)
#undef US_FLOWCTL_X_FIELD
};

/* A backend for control rules: install a built rule (0 or -errno), remove
 * what install returned. */
struct us_flowctl_ops {
	int (*install)(void *ctx, struct us_steer_ctl_rule *r, void **handle);
	int (*remove)(void *ctx, void *handle);
	void *ctx;
};

struct us_flowctl_listener {
	uint16_t lport;    /* host order */
	unsigned refs;     /* engines listening on it */
	void *handle;
};

struct us_flowctl {
	struct us_flowctl_ops ops;
	bool started;
	uint32_t lip;                       /* our address, host order */
	uint16_t ctl_queue;
	uint16_t nb_queues;                 /* one per engine */
	uint8_t key[US_STEER_CTL_KEY_MAX];  /* the port's RSS key */
	uint8_t key_len;
	void *arp, *icmp;
	struct us_flowctl_listener lst[US_FLOWCTL_LISTENERS];
	struct us_flowctl_stats stats;
	/* Listener rules come from the main thread (us_tcp_listen) and from
	 * every engine's application (us_listen on its sockets): a control-path
	 * lock, never taken on the data path. */
	rte_spinlock_t lock;
};

/* Installs the ARP and ICMP rules to ctl_queue; 0 or -errno (nothing left
 * installed).  lip host order; key/key_len as the port's RSS uses. */
int us_flowctl_start(struct us_flowctl *c, const struct us_flowctl_ops *ops, uint32_t lip,
		     uint16_t ctl_queue, uint16_t nb_queues, const uint8_t *key, uint8_t key_len);
/* One more engine listens on lport: the first installs the port's rule.
 * 0, -ENOSPC (US_FLOWCTL_LISTENERS ports) or the backend's -errno. */
int us_flowctl_listen(struct us_flowctl *c, uint16_t lport);
/* One engine fewer: the last removes the rule. */
void us_flowctl_unlisten(struct us_flowctl *c, uint16_t lport);
/* Removes every control rule. */
void us_flowctl_stop(struct us_flowctl *c);
/* e's listeners (us_engine_listen_rule) take their rules from c, which
 * outlives e.  Call after us_flowctl_start.  0 or -ENOSPC. */
int us_flowctl_attach(struct us_engine *e, struct us_flowctl *c);

/* rte_flow backend: ctx is a pointer to the port id. */
extern const struct us_flowctl_ops us_flowctl_rte_ops;

#endif
