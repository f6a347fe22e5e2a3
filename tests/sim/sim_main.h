/* tests/sim/sim_main.h: the driver's pieces (main.c, long.c). */
#ifndef US_SIM_MAIN_H
#define US_SIM_MAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/sim/world.h"

struct rte_mempool;

/* Types */

#define SIM_MBUFS 65535u /* the whole world's memory, shared by its stacks */
#define SIM_EAL_MB 512u

/* A close storm (storm.c): us-sim --storm N. */
struct sim_storm_params {
	uint64_t seed;             /* the stacks' randomness, the link's draws */
	unsigned n;                /* connections */
	double open_rate;          /* connects a second (at most 512 handshakes at once) */
	double close_rate;         /* client closes a second; 0: all at one instant */
	unsigned rxq;              /* each NIC queue, frames (<= SIM_RXQ) */
	uint64_t rx_frame_ns;      /* engine time per frame received (0: none) */
	uint32_t bytes;            /* sent each way on every connection */
	const char *link;          /* impairment each way (nic_impair_parse) */
	bool impair;               /* the seed's link 0<->1 instead */
	unsigned mbufs;            /* the stacks' pool */
	unsigned check_every;      /* the event invariants every that many events (0: N/16) */
	bool verbose;
};

/* Prototypes */

/* main.c */
/* Starts EAL with mem_mb of memory and the world's pool of mbufs; the pool. */
struct rte_mempool *sim_eal_start(unsigned mem_mb, unsigned mbufs);
double sim_wall(void);
/* Draws, cuts and runs one world (the process's EAL and pool): 0 pass. */
int sim_run_one(uint64_t seed, const struct sim_cut *cut, bool verbose, bool print_plan);
struct sim_world *sim_last_world(void);
void sim_counts_add(struct sim_counts *t, const struct sim_counts *n);
void sim_print_command(FILE *f, uint64_t seed, const struct sim_cut *c);
/* The shrink command of a failing world (its ip4-only cut kept). */
void sim_print_shrink(FILE *f, uint64_t seed, const struct sim_cut *c);
void sim_print_summary(FILE *f, uint64_t worlds, const struct sim_counts *t, double secs);

/* long.c: worlds in child processes (each its own EAL), so a crash is a
 * failure with its seed, not the end of the run. */
/* Random worlds from seed (UINT64_MAX: from the clock) for secs on jobs
 * processes; 0 when none failed. */
int sim_long_run(const char *argv0, uint64_t seed, double secs, unsigned jobs);
/* Cuts a failing world down while it fails the same way; prints the
 * command.  0 when it shrank a failure, 1 when the seed passes. */
int sim_shrink(const char *argv0, uint64_t seed, const struct sim_cut *from);

/* storm.c: runs the storm in this process's world and prints its report;
 * 0 when the world's checks held.  wire: the pool of frames in flight. */
int sim_storm_run(const struct sim_storm_params *p, struct rte_mempool *pool,
		  struct rte_mempool *wire);

#endif
