/* tests/sim/long.c: long runs and shrinking, one child process per batch
 * of worlds (long runs) or per candidate (shrinking).  The parent never
 * starts EAL; each child starts its own, reports through a shared page, and
 * a child that dies by a signal is a failure of the seed it was running. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/sim/sim_main.h"

#define FAILS_MAX 64

/* What a child tells its parent. */
struct slot {
	uint64_t seed;             /* the world it is running (or ran last) */
	uint64_t worlds;           /* passed */
	struct sim_counts n;
	int failed;
	char fail[1024];
};

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *shared(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("us-sim: mmap");
		exit(2);
	}
	memset(p, 0, len);
	return p;
}

/* Child: worlds seed, seed + stride, ... until the deadline or a failure. */
static void child_batch(struct slot *s, uint64_t seed, uint64_t stride, double deadline)
{
	static const struct sim_cut none;

	sim_eal_start(SIM_EAL_MB, SIM_MBUFS);
	for (; wall() < deadline; seed += stride) {
		s->seed = seed;
		if (sim_run_one(seed, &none, false, false) != 0) {
			snprintf(s->fail, sizeof(s->fail), "%s", sim_last_world()->fail);
			s->failed = 1;
			exit(1);
		}
		s->worlds++;
		sim_counts_add(&s->n, &sim_last_world()->n);
	}
	exit(0);
}

static void report_death(struct slot *s, int status)
{
	if (WIFSIGNALED(status) && !s->failed) {
		snprintf(s->fail, sizeof(s->fail), "seed %" PRIu64 ": killed by signal %d (%s)",
			 s->seed, WTERMSIG(status), strsignal(WTERMSIG(status)));
		s->failed = 1;
	}
}

int sim_long_run(const char *argv0, uint64_t seed, double secs, unsigned jobs)
{
	struct slot *slots = shared(sizeof(*slots) * jobs);
	pid_t *pid = calloc(jobs, sizeof(*pid));
	uint64_t *next = calloc(jobs, sizeof(*next));
	struct sim_counts total = {0};
	uint64_t worlds = 0, fails[FAILS_MAX];
	unsigned nfails = 0, running = 0;
	double t0 = wall(), deadline = t0 + secs;

	(void)argv0;
	if (pid == NULL || next == NULL)
		return 2;
	if (seed == UINT64_MAX)
		seed = (uint64_t)time(NULL) * 1000003u;
	printf("long run: %u jobs, %.0f s, seeds from %" PRIu64 " (stride %u)\n", jobs, secs, seed, jobs);
	fflush(stdout);
	for (unsigned j = 0; j < jobs; j++)
		next[j] = seed + j;
	for (;;) {
		for (unsigned j = 0; j < jobs; j++) {
			if (pid[j] != 0 || next[j] == UINT64_MAX || wall() >= deadline)
				continue;
			slots[j].failed = 0;
			pid[j] = fork();
			if (pid[j] == 0)
				child_batch(&slots[j], next[j], jobs, deadline);
			running++;
		}
		if (running == 0)
			break;
		int status;
		pid_t done = wait(&status);

		for (unsigned j = 0; j < jobs; j++) {
			struct slot *s = &slots[j];

			if (pid[j] != done)
				continue;
			pid[j] = 0;
			running--;
			report_death(s, status);
			worlds += s->worlds;
			sim_counts_add(&total, &s->n);
			s->worlds = 0;
			memset(&s->n, 0, sizeof(s->n));
			if (s->failed) {
				printf("FAIL %s\n  shrink: us-sim --shrink --seed %" PRIu64 "\n", s->fail, s->seed);
				fflush(stdout);
				if (nfails < FAILS_MAX)
					fails[nfails++] = s->seed;
				next[j] = s->seed + jobs;
			} else {
				next[j] = UINT64_MAX;
			}
		}
	}
	sim_print_summary(stdout, worlds, &total, wall() - t0);
	printf("failed worlds: %u", nfails);
	for (unsigned i = 0; i < nfails; i++)
		printf(" %" PRIu64, fails[i]);
	printf("\n");
	free(pid);
	free(next);
	return nfails ? 1 : 0;
}

/* Shrinking */

/* One candidate in a child: 1 and its failure line when it fails. */
static int candidate(struct slot *s, uint64_t seed, const struct sim_cut *cut)
{
	pid_t p;
	int status;

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	fflush(stdout);
	p = fork();
	if (p == 0) {
		int rc;

		sim_eal_start(SIM_EAL_MB, SIM_MBUFS);
		rc = sim_run_one(seed, cut, false, false);
		if (rc != 0) {
			snprintf(s->fail, sizeof(s->fail), "%s", sim_last_world()->fail);
			s->failed = 1;
		}
		s->n = sim_last_world()->n;
		exit(rc);
	}
	if (p < 0 || waitpid(p, &status, 0) != p)
		return 0;
	report_death(s, status);
	return s->failed;
}

/* The kind of a failure: its text after the "(t=...): " prefix with
 * every number a '#' (numbers change as the world shrinks). */
static void kind_of(const char *fail, char *out, size_t len)
{
	const char *p = strstr(fail, "): ");
	size_t n = 0;

	for (p = p ? p + 3 : fail; *p && n + 1 < len; p++) {
		bool digit = *p >= '0' && *p <= '9';

		if (!digit)
			out[n++] = *p;
		else if (n == 0 || out[n - 1] != '#')
			out[n++] = '#';
	}
	out[n] = 0;
}

static bool same_kind(struct slot *s, const char *want)
{
	char k[256];

	kind_of(s->fail, k, sizeof(k));
	return strcmp(k, want) == 0;
}

/* Tries to turn on each bit of *mask below n; keeps those that still fail. */
static void shrink_mask(struct slot *s, uint64_t seed, struct sim_cut *cut, uint32_t *mask,
			unsigned n, const char *kind, unsigned *tries)
{
	for (unsigned i = 0; i < n; i++) {
		if (*mask >> i & 1)
			continue;
		*mask |= 1u << i;
		(*tries)++;
		if (!candidate(s, seed, cut) || !same_kind(s, kind))
			*mask &= ~(1u << i);
	}
}

int sim_shrink(const char *argv0, uint64_t seed, const struct sim_cut *from)
{
	struct slot *s = shared(sizeof(*s));
	struct sim_cut cut = *from;
	struct sim_plan plan;
	char kind[256];
	unsigned tries = 1;

	(void)argv0;
	cut.max_events = 0;
	if (!candidate(s, seed, &cut)) {
		printf("seed %" PRIu64 " passes: nothing to shrink\n", seed);
		return 1;
	}
	kind_of(s->fail, kind, sizeof(kind));
	printf("failure: %s\nshrinking (kind \"%s\")...\n", s->fail, kind);
	fflush(stdout);
	sim_plan_draw(&plan, seed);
	shrink_mask(s, seed, &cut, &cut.faults, plan.nfaults, kind, &tries);
	shrink_mask(s, seed, &cut, &cut.udp, plan.nudp, kind, &tries);
	shrink_mask(s, seed, &cut, &cut.convs, plan.nconvs, kind, &tries);
	shrink_mask(s, seed, &cut, &cut.stacks, plan.nstacks, kind, &tries);
	if (!cut.no_impair) {
		cut.no_impair = true;
		tries++;
		if (!candidate(s, seed, &cut) || !same_kind(s, kind))
			cut.no_impair = false;
	}
	/* A failure that stays without IPv6 is not about IPv6. */
	if (plan.ip6 && !cut.ip4_only) {
		cut.ip4_only = true;
		tries++;
		if (!candidate(s, seed, &cut) || !same_kind(s, kind))
			cut.ip4_only = false;
	}
	candidate(s, seed, &cut); /* the final failure: its event number */
	cut.max_events = s->n.events;
	sim_plan_cut(&plan, &cut);
	printf("shrunk in %u runs: %s\nworld left:\n", tries, s->fail);
	sim_plan_print(&plan, stdout);
	printf("replay: ");
	sim_print_command(stdout, seed, &cut);
	return 0;
}
