/* tests/sim/sim_main.h: the driver's pieces (main.c, long.c). */
#ifndef US_SIM_MAIN_H
#define US_SIM_MAIN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "tests/sim/world.h"

/* Prototypes */

/* main.c */
void sim_eal_start(void);
/* Draws, cuts and runs one world (the process's EAL and pool): 0 pass. */
int sim_run_one(uint64_t seed, const struct sim_cut *cut, bool verbose, bool print_plan);
struct sim_world *sim_last_world(void);
void sim_counts_add(struct sim_counts *t, const struct sim_counts *n);
void sim_print_command(FILE *f, uint64_t seed, const struct sim_cut *c);
void sim_print_summary(FILE *f, uint64_t worlds, const struct sim_counts *t, double secs);

/* long.c: worlds in child processes (each its own EAL), so a crash is a
 * failure with its seed, not the end of the run. */
/* Random worlds from seed (UINT64_MAX: from the clock) for secs on jobs
 * processes; 0 when none failed. */
int sim_long_run(const char *argv0, uint64_t seed, double secs, unsigned jobs);
/* Cuts a failing world down while it fails the same way; prints the
 * command.  0 when it shrank a failure, 1 when the seed passes. */
int sim_shrink(const char *argv0, uint64_t seed, const struct sim_cut *from);

#endif
