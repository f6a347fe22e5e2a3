/* tests/sim/world.h: a world of 2-6 stacks in one process, in virtual time.
 *
 * Each stack has 1-2 engines over fake ports (stack/engine/engine.h), its own
 * descriptor tables, and (with 2 engines) the hand-off rings and a software
 * NIC that sorts frames into queues; with [ip6] (most worlds) it has
 * 10.0.0.(i + 1) and fd00:5e::(i + 1) and resolves its neighbours with ARP
 * and Neighbor Discovery itself.  The stacks share one Ethernet segment: a
 * switch forwards each frame by destination MAC (broadcasts and multicasts
 * to all) into the link from its stack to the destination, a seeded
 * emulator (nic/impair.h) per direction, plus the faults of the plan (a
 * partition, a burst of loss, a path MTU with ICMP "fragmentation needed"
 * or ICMPv6 "packet too big" from a router, a stack that restarts with all
 * state gone).
 *
 * Time: the clock jumps to the next event (a link's next departure, an
 * engine's next timer, an application's next action, a fault), so a world of
 * keepalive idles and 60 s TIME-WAITs runs in milliseconds.  At one instant
 * the world polls every engine and runs every application until nothing
 * moves; each such round is an event, numbered for failure reports.
 *
 * Determinism: the plan comes from the seed; the stacks' random source
 * (stack/base/rand.h) is seeded from it too; nothing reads a real clock.  A
 * digest of every frame sent (time, stack, engine, bytes) proves a replay is
 * bit for bit.
 */
#ifndef US_SIM_WORLD_H
#define US_SIM_WORLD_H

#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#include <rte_ether.h>

#include "config/config.h"
#include "nic/rss.h"
#include "nic/steer_model.h"
#include "stack/engine/engine.h"
#include "tests/sim/plan.h"
#include "tests/sim/rng.h"

struct rte_mbuf;
struct rte_mempool;
struct us_handoff;
struct us_sock_table;
struct nic_impair;
struct pcap_dumper;

/* Types */

#define SIM_RXQ 8192u     /* a NIC queue's frames at most (its ring) */
#define SIM_FDS 1024u     /* descriptors per engine, unless a scenario says */

struct sim_rxq {
	struct rte_mbuf *m[SIM_RXQ];
	unsigned head, n;
};

struct sim_stack;

struct sim_eng {
	struct sim_stack *st;
	unsigned k;                /* engine index in its stack */
	unsigned slot;             /* descriptor table slot */
	struct us_port_ops ops;
	struct us_engine *e;
	struct us_sock_table *tab;
	struct sim_rxq rx;
	/* The TCP listeners and (engine 0 only) UDP sockets: [0] AF_INET, or
	 * AF_INET6 dual-stack on a stack with sim_stack_plan dual; [1] the
	 * AF_INET6 V6ONLY one beside an AF_INET [0]; -1 none. */
	int lfd[2];
	int ufd[2];
	unsigned timers0;          /* armed timers after start: the baseline */
	unsigned socks0;           /* descriptors open after start (listener, UDP) */
	uint64_t busy_until;       /* with rx_frame_ns: still on its last burst */
};

struct sim_stack {
	struct sim_world *w;
	unsigned i;
	bool up;
	unsigned epoch;            /* restarts so far */
	bool touched;              /* poll it again in this instant (world.c stack_due) */
	uint32_t ip;
	struct rte_ether_addr mac;
	/* [ip6] dad: engine 0 runs DAD, the other engines take its verdict
	 * when it is done (as us_init); its clients start after. */
	bool dad_pending;
	struct us_config cfg;
	struct us_rss sym;         /* the engines' owner rule */
	struct us_rss nic_rss;     /* the NIC's (may disagree: hand-off) */
	struct us_steer_model nic;
	struct us_handoff *ho;
	struct sim_eng eng[SIM_ENGINES_MAX];
	uint64_t drop_rxq;         /* frames its full NIC queues dropped */
};

/* One end of a conversation, as its application sees it. */
struct sim_end {
	int fd;                    /* -1: none (not yet, closed, moving) */
	unsigned eng;
	unsigned epoch;            /* its stack's epoch when it was opened */
	bool open, done;
	bool connected;
	uint64_t sent, rcvd;
	bool eof, shut;
	int err;                   /* errno of the failure reported, 0 none */
	bool lost;                 /* its stack restarted under it */
	uint64_t born_ns;
	uint64_t next_send_ns, next_read_ns;
	uint64_t last_move_ns;     /* when a byte last moved either way */
	uint64_t drops_at_move;    /* frames its path had lost then (sim_path_drops) */
	uint64_t closed_ns, err_ns; /* when its application closed, when it failed */
	bool moving;               /* us_migrate done, not yet accepted again */
	bool moved;
};

struct sim_conv {
	struct sim_end end[2];     /* [0] client, [1] server */
	uint16_t cport;            /* the client's port, once known */
	bool started, done, aborted;
	uint64_t done_ns;
};

struct sim_udp {
	unsigned sent, rcvd, bad;
	uint64_t next_ns;
};

/* Coverage and counts of one world (summed over many by the driver). */
#define SIM_COUNTS(X) \
	X(events, "rounds of the world (polls of every engine at one instant)") \
	X(frames, "frames sent by the stacks") \
	X(sim_ns, "simulated time") \
	X(drop_partition, "frames lost to a partition") \
	X(drop_loss_fault, "frames lost to a loss burst") \
	X(drop_mtu, "frames over a path MTU (ICMP frag-needed back when DF, ICMPv6 Packet Too Big)") \
	X(drop_down, "frames to or from a stack that was down") \
	X(drop_rxq, "frames dropped by a full NIC queue") \
	X(drop_no_mbuf, "frames not copied onto the wire: mbuf pool empty") \
	X(restarts, "stacks restarted") \
	X(convs, "conversations") \
	X(convs_ip6, "conversations over IPv6") \
	X(convs_mapped, "conversations over IPv4 from an AF_INET6 socket (v4-mapped)") \
	X(ends_cork, "conversation ends sending corked (TCP_CORK)") \
	X(ends_more, "conversation ends sending with MSG_MORE") \
	X(ends_peek, "conversation ends peeking (MSG_PEEK, FIONREAD) before each read") \
	X(convs_user_timeout, "conversations with TCP_USER_TIMEOUT on both ends") \
	X(convs_ok, "conversations complete, every byte checked") \
	X(convs_err, "conversations ended by an error the world explains") \
	X(convs_aborted, "conversations reset by an application on purpose") \
	X(convs_gave_up, "ends whose application gave up on a peer a fault cut off") \
	X(tfo, "conversations opened with Fast Open") \
	X(migrations, "server ends moved to the other engine") \
	X(bytes, "bytes delivered and checked") \
	X(udp_sent, "UDP datagrams sent") \
	X(udp_sent_ip6, "UDP datagrams sent over IPv6") \
	X(udp_rcvd, "UDP datagrams received and checked")

/* Engine counters summed over a world's stacks (us_engine_counter names):
 * the coverage report's timers fired and paths taken. */
#define SIM_STACK_COUNTERS(X) \
	X(tcp_rto_fired) X(tcp_fast_retransmits) X(tcp_recovery_episodes) \
	X(tcp_partial_acks) X(tcp_rec_rescue) X(tcp_spurious_recoveries) X(tcp_dsack_rcvd) \
	X(tcp_limited_transmits) X(tcp_delayed_acks) X(tcp_persist_probes) \
	X(tcp_persist_timeouts) X(tcp_keepalive_probes) X(tcp_keepalive_timeouts) \
	X(tcp_conns_timed_out) X(tcp_embryos_timed_out) X(tcp_sws_overrides) \
	X(tcp_ooo_queued) X(tcp_drop_paws) X(tcp_challenge_acks) X(tcp_resets_sent) \
	X(tcp_resets_rcvd) X(tcp_syncookies_sent) X(tcp_timewait_reused) \
	X(tcp_icmp_frag_needed_applied) X(tcp_pmtu_resends) X(tcp_rcvbuf_grown) \
	X(tcp_tx_gso_segs) X(tcp_rx_coalesced_segs) X(tcp_drop_rcvbuf_full) \
	X(tcp_drop_no_mbuf) X(tcp_exit_resets) X(ip_frag_reassembled) X(ip_frag_timeout) \
	X(tcp_pmtu_followed) X(ip6_rx_tcp) X(ip6_frag_reassembled) X(ip6_frag_timeout) \
	X(icmp6_ptb_lowered) X(ip6_drop_too_big) \
	X(nd6_tx_ns) X(nd6_drop_unresolved) X(nd6_probe_failed) X(dad_ok) X(steer_nd6_copies) \
	X(tcp_user_timeouts)

enum sim_ctr {
#define SIM_X_ENUM(name) SIM_C_##name,
	SIM_STACK_COUNTERS(SIM_X_ENUM)
#undef SIM_X_ENUM
	SIM_CTRS
};

struct sim_counts {
#define SIM_X_FIELD(name, desc) uint64_t name;
	SIM_COUNTS(SIM_X_FIELD)
#undef SIM_X_FIELD
	uint64_t ctr[SIM_CTRS];
	uint64_t rec_episodes[TCP_REC_ALG_COUNT]; /* recovery episodes by variant */
	uint64_t states_seen;      /* bit per TCP state seen at some event */
	uint64_t trans_seen[2]; /* bit per (from, to) transition */
};

/* The applications a world runs: app.c's conversations (sim_apps_conv),
 * or a scenario's own (storm.c). */
struct sim_app_ops {
	void (*start)(struct sim_world *w);
	/* Stack i (re)started: its listeners; went down: its ends are lost. */
	void (*stack_up)(struct sim_world *w, unsigned i);
	void (*stack_down)(struct sim_world *w, unsigned i);
	/* One pass over every application; sets w->progress when one moved. */
	void (*step)(struct sim_world *w);
	/* Earliest time an application wants to act (UINT64_MAX: none). */
	uint64_t (*next)(const struct sim_world *w);
	bool (*done)(const struct sim_world *w);
	/* The end-of-world checks of the applications. */
	void (*finish)(struct sim_world *w);
	/* The applications call us_epoll_wait with timeout 0: its engine
	 * poll is a no-op (the world polls every engine each round). */
	bool epoll;
};

/* What a scenario changes about a world; all zero: the random worlds'. */
struct sim_world_opts {
	const struct sim_app_ops *app; /* NULL: sim_apps_conv */
	unsigned rxq_len;              /* each engine's NIC queue (<= SIM_RXQ; 0: SIM_RXQ) */
	unsigned fds;                  /* descriptors per engine (0: SIM_FDS) */
	/* Engine time per frame taken from its NIC queue (0: none, the whole
	 * queue drains at one instant): a poll takes a burst, then the
	 * engine is busy that long per frame before it polls the queue again. */
	uint64_t rx_frame_ns;
	/* Frames on the wire in a pool of their own, copied into the world's
	 * pool as a NIC receives them (none there: drop_no_mbuf): a burst in
	 * flight then holds no stack memory.  NULL: the world's pool. */
	struct rte_mempool *wire_pool;
	unsigned check_every;          /* the event invariants every that many events (0: 1) */
	unsigned check_slots;          /* connections tracked by the invariants (0: 1024) */
	unsigned print_tcbs_max;       /* TCBs listed in a failure report (0: all) */
};

struct sim_world {
	struct sim_plan plan;
	struct sim_world_opts opts;
	const struct sim_app_ops *app;
	struct sim_cut cut;
	struct rte_mempool *pool;
	uint64_t now, t0;
	uint64_t digest;
	struct sim_counts n;
	struct sim_stack st[SIM_STACKS_MAX];
	struct nic_impair *link[SIM_STACKS_MAX][SIM_STACKS_MAX];
	bool partitioned[SIM_STACKS_MAX][SIM_STACKS_MAX];
	unsigned loss_pct[SIM_STACKS_MAX][SIM_STACKS_MAX];
	uint16_t path_mtu[SIM_STACKS_MAX][SIM_STACKS_MAX]; /* 0: none */
	uint16_t path_mtu6[SIM_STACKS_MAX][SIM_STACKS_MAX]; /* IPv6's; 0: none */
	bool fault_on[SIM_FAULTS_MAX], fault_over[SIM_FAULTS_MAX];
	struct sim_rng rng;        /* the world's own draws while it runs */
	struct sim_conv conv[SIM_CONVS_MAX];
	struct sim_udp udp[SIM_UDP_MAX];
	bool progress;             /* something moved in this round */
	uint64_t frame_budget;     /* more frames than this is a storm */
	struct sim_check *check;   /* invariants' state (check.c) */
	struct sim_rx_check *rxcheck; /* segments owed to RCV.NXT (check_rx.c) */
	jmp_buf fail_jmp;
	char fail[1024];
	bool verbose;
	struct pcap_dumper *pcap;  /* every frame sent, in simulated time (--pcap) */
};

/* Prototypes */

/* Runs one world; 0 when every invariant held, else 1 with w->fail set
 * ("seed S event E: what").  The counts and digest are in w either way.
 * pool: every stack's mbufs (must be empty before and is after a pass).
 * w->verbose, w->pcap and w->opts are kept; the rest is reset. */
int sim_world_run(struct sim_world *w, const struct sim_plan *plan, const struct sim_cut *cut,
		  struct rte_mempool *pool);
/* Stops the world: records the failure and jumps out of sim_world_run. */
__attribute__((noreturn, format(printf, 2, 3)))
void sim_fail(struct sim_world *w, const char *fmt, ...);

/* world.c, for the applications */
void sim_bind(struct sim_world *w, unsigned stack, unsigned eng);
struct sockaddr_in sim_addr(uint32_t ip, uint16_t port);
/* a:port as a socket of domain (AF_INET: a v4-mapped a) names it; its length. */
socklen_t sim_sockaddr(int domain, const struct us_in6 *a, uint16_t port,
		       struct sockaddr_storage *out);
/* The address (v4-mapped for IPv4, as tcp/ holds it) and port of sa. */
void sim_sockaddr_parse(const struct sockaddr_storage *sa, struct us_in6 *a, uint16_t *port);
/* Runs the world until until(w) or time reaches limit; false on the limit. */
bool sim_run_until(struct sim_world *w, bool (*until)(const struct sim_world *), uint64_t limit);
extern const char *const sim_ctr_names[SIM_CTRS];

/* app.c: the conversations of the plan (and its UDP flows, udp.c) */
extern const struct sim_app_ops sim_apps_conv;
/* "a -> b" of conversation k's ends, as [addr]:port (the client's port
 * once known), for failure reports. */
const char *sim_conv_str(const struct sim_world *w, unsigned k);

/* udp.c */
void sim_udp_step(struct sim_world *w);
uint64_t sim_udp_next(const struct sim_world *w);
bool sim_udp_done(const struct sim_world *w);

/* verdict.c */
/* Loss on the path a<->b that can beat the retry budget. */
bool sim_path_lossy(const struct sim_world *w, unsigned a, unsigned b);
/* Frames the links between stacks a and b have lost so far, both ways. */
uint64_t sim_path_drops(const struct sim_world *w, unsigned a, unsigned b);
/* Something in the world explains conversation k's failure. */
bool sim_explained(const struct sim_world *w, unsigned k);
/* The end-of-world verdict on every conversation. */
void sim_verdict(struct sim_world *w);

/* check.c */
void sim_check_init(struct sim_world *w);
void sim_check_free(struct sim_world *w);
/* The cheap invariants over every TCB of every engine. */
void sim_check_event(struct sim_world *w);
/* Non-listener TCBs left in all stacks. */
unsigned sim_check_tcbs(const struct sim_world *w);

/* check_rx.c: every in-window segment an engine takes is taken whole:
 * noted as the engine takes it, checked when the instant has settled. */
void sim_rx_check_init(struct sim_world *w);
void sim_rx_check_free(struct sim_world *w);
void sim_rx_check_frame(struct sim_world *w, unsigned stack, const struct rte_mbuf *m);
void sim_rx_check_settle(struct sim_world *w);
/* One line per TCB left (state, tuple, timers), for a stuck report; the
 * first max of them (0: all) after each engine's gauges. */
void sim_check_print_tcbs(const struct sim_world *w, FILE *f, unsigned max);

#endif
