/* tests/sim/plan.h: a world drawn from its seed, as plain data.
 *
 * The plan is everything random about a world, decided before it runs:
 * the stacks and their settings, the link between every two stacks, the
 * conversations the applications hold, the UDP flows, and the faults.  The
 * world (world.c) only follows it; all its other draws come from the
 * stack's injectable random source (stack/base/rand.h) seeded from the
 * same seed, so a seed is the whole world.
 *
 * A cut (what the shrinker removes) drops elements from the plan after it
 * is drawn: each element draws from its own stream, so what is left stays
 * as it was.
 *
 * Families: a world whose links carry 1280 bytes or more gives every stack
 * [ip6] too, and each conversation and UDP flow draws IPv4 or IPv6.  These
 * draws come from streams of their own, after the rest: a seed draws the
 * same stacks, links, streams and faults as it did before IPv6, and the
 * cut ip4_only gives back that world exactly.
 */
#ifndef US_SIM_PLAN_H
#define US_SIM_PLAN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "nic/impair.h"
#include "stack/base/in6.h"
#include "tcp/tcp_config.h"

/* Types */

#define SIM_STACKS_MAX 6
#define SIM_ENGINES_MAX 2
#define SIM_CONVS_MAX 24
#define SIM_UDP_MAX 4
#define SIM_FAULTS_MAX 6
#define SIM_TCP_PORT 5000
#define SIM_UDP_PORT 6000
#define SIM_IP6_MTU_MIN 1280 /* RFC 8200 5: every link IPv6 crosses carries this */

struct sim_stack_plan {
	bool off;                  /* cut away */
	unsigned engines;          /* 1 or 2 */
	struct tcp_config tcp;
	bool gso, gro;
	/* IPv6 worlds: one AF_INET6 listener (and UDP socket) on :: takes
	 * both families; else one per family, the IPv6 one V6ONLY. */
	bool dual;
};

enum sim_read { SIM_READ_FAST, SIM_READ_SLOW, SIM_READ_STALL };
enum sim_ending { SIM_END_HALF, SIM_END_FULL, SIM_END_ABORT };

/* One side of a conversation: what it sends and how it reads. */
struct sim_side_plan {
	uint64_t bytes;            /* its stream's length */
	uint32_t chunk;            /* bytes per send call at most */
	uint64_t gap_ns;           /* pause between send calls (0: none) */
	enum sim_read read;
	uint32_t read_max;         /* SLOW: bytes per read ... */
	uint64_t read_every_ns;    /* ... one read this often */
	uint64_t stall_at_ns, stall_ns; /* STALL: no read in [at, at + ns) of its life */
	bool nodelay;
	bool keepalive;
	/* Socket options (drawn after everything else, S_OPT_CONV): sends
	 * corked (TCP_CORK) or with MSG_MORE while more of the stream
	 * follows; each read preceded by a MSG_PEEK and FIONREAD checked
	 * against it. */
	bool cork, more, peek;
};

struct sim_conv_plan {
	bool off;
	unsigned cli, srv;         /* stack indexes */
	unsigned family;           /* 4 or 6 */
	bool mapped;               /* IPv4 from an AF_INET6 client socket (::ffff:a.b.c.d) */
	unsigned cli_eng;          /* the client's engine */
	uint64_t start_ns;
	struct sim_side_plan side[2]; /* [0] client, [1] server */
	bool tfo;                  /* connect with data in the SYN */
	enum sim_ending end;          /* how the client ends it */
	unsigned abort_side;       /* ABORT: who resets, after abort_after bytes read */
	uint64_t abort_after;
	uint64_t idle_at, idle_ns; /* the client pauses sending after idle_at bytes */
	uint32_t user_timeout_ms;  /* TCP_USER_TIMEOUT of both ends (0: none) */
	bool migrate;              /* the server end moves engine ... */
	uint64_t migrate_after_ns; /* ... this long after accepting */
};

struct sim_udp_plan {
	bool off;
	unsigned src, dst;
	unsigned family;           /* 4 or 6 */
	uint64_t start_ns, gap_ns;
	unsigned count;
	uint32_t size_max;         /* datagram bytes at most (above the MTU: fragments) */
};

enum sim_fault_kind { SIM_F_PARTITION, SIM_F_LOSS, SIM_F_MTU, SIM_F_RESTART, SIM_F_KINDS };

struct sim_fault_plan {
	bool off;
	enum sim_fault_kind kind;
	unsigned a, b;             /* the link a<->b (RESTART: stack a) */
	uint64_t at_ns, dur_ns;    /* RESTART: down for dur_ns */
	unsigned loss_pct;         /* LOSS */
	uint16_t mtu;              /* MTU: the path's MTU a->b and b->a */
	uint16_t mtu6;             /* ... for IPv6 (at least 1280, RFC 8200 5) */
};

struct sim_plan {
	uint64_t seed;
	unsigned nstacks;
	struct sim_stack_plan stack[SIM_STACKS_MAX];
	struct nic_impair_params link[SIM_STACKS_MAX][SIM_STACKS_MAX]; /* [from][to] */
	uint16_t mtu;
	bool ip6;                  /* every stack has [ip6] too (links of 1280 or more) */
	bool dad;                  /* ... with Duplicate Address Detection */
	unsigned nconvs, nudp, nfaults;
	struct sim_conv_plan conv[SIM_CONVS_MAX];
	struct sim_udp_plan udp[SIM_UDP_MAX];
	struct sim_fault_plan fault[SIM_FAULTS_MAX];
};

/* What the shrinker takes away (bit i: element i), and where it stops. */
struct sim_cut {
	uint32_t stacks, convs, udp, faults;
	uint64_t max_events;       /* 0: no limit */
	bool no_impair;            /* links without loss, delay, reordering... */
	/* IPv6 taken away: no [ip6], every conversation and flow over IPv4 on
	 * AF_INET sockets.  The world is then the one its seed drew before
	 * worlds had IPv6, frame for frame (the IPv6 draws have streams of
	 * their own): how seeds recorded then still replay. */
	bool ip4_only;
};

/* Prototypes */

void sim_plan_draw(struct sim_plan *p, uint64_t seed);
/* Stack i's address: 10.0.0.(i + 1) in host byte order; as tcp/ holds it
 * for family 4 (v4-mapped) or 6 (fd00:5e::(i + 1)). */
uint32_t sim_ip(unsigned stack);
struct us_in6 sim_stack_addr(unsigned stack, unsigned family);
/* Turns off what cut says (and what needed a stack turned off). */
void sim_plan_cut(struct sim_plan *p, const struct sim_cut *cut);
/* One line per element left, for a failure report. */
void sim_plan_print(const struct sim_plan *p, FILE *f);

#endif
