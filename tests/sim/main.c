/* tests/sim/main.c: us-sim, the driver of the deterministic simulation.
 *
 *   us-sim --seed S [--count N]       worlds S, S+1, ... S+N-1
 *   us-sim --seeds FILE               the seeds listed (CI: tests/sim/seeds.txt)
 *   us-sim --replay ...               each world twice: the digests must match
 *   us-sim --secs T --jobs J          random seeds for T seconds on J processes
 *   us-sim --shrink --seed S          cut a failing world down, print its command
 *   us-sim --storm N [--seed S] [--close-rate R] [--open-rate R] [--rxq Q]
 *          [--rx-ns NS] [--bytes B] [--link SPEC | --impair] [--mbufs M]
 *          [--check-every E]         a close storm (storm.c): N connections closed at once
 *   cuts: --cut-stacks M --cut-convs M --cut-udp M --cut-faults M (bit masks),
 *         --max-events E, --no-impair, --ip4-only (the world as its seed drew
 *         it before IPv6: how the seeds recorded then replay);
 *   --plan prints the world, -v its errors, --pcap FILE writes every frame
 *   sent, stamped with simulated time.  A seeds file has a seed a line,
 *   "SEED" or "SEED ip4-only".
 *
 * Exit 0 when every world passed, 1 on a failure (its line says the seed
 * and the event; the command that replays it follows), 2 on usage errors.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <pcap/pcap.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tcp/tcb.h"
#include "tcp/tcp.h"
#include "tests/common/test_eal.h"
#include "tests/sim/sim_main.h"

struct opts {
	uint64_t seed;
	uint64_t count;
	const char *seeds_file;
	bool replay, shrink, plan, verbose, quiet;
	const char *pcap;
	double secs;
	unsigned jobs;
	struct sim_cut cut;
	struct sim_storm_params storm; /* n > 0: a storm */
};

static struct rte_mempool *pool;
static struct sim_world world; /* large: static */

double sim_wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct rte_mempool *pool_create(const char *name, unsigned n)
{
	struct rte_mempool *p = rte_pktmbuf_pool_create(name, n, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
							SOCKET_ID_ANY);

	if (p == NULL) {
		fprintf(stderr, "us-sim: mbuf pool %s of %u: %s\n", name, n, rte_strerror(rte_errno));
		exit(2);
	}
	return p;
}

struct rte_mempool *sim_eal_start(unsigned mem_mb, unsigned mbufs)
{
	static char prefix_arg[96], mem_arg[16];
	char prefix[64];

	test_eal_prefix(prefix, sizeof(prefix), "sim");
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	snprintf(mem_arg, sizeof(mem_arg), "%u", mem_mb);
	char *argv[] = { "us-sim", "--no-huge", "--no-pci", "--no-shconf", "-m", mem_arg,
			 "--log-level=error", prefix_arg };
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, "us-sim: rte_eal_init failed\n");
		exit(2);
	}
	atexit(test_eal_remove_runtime_dir);
	pool = pool_create("sim", mbufs);
	return pool;
}

/* The command line that replays a world with its cut. */
void sim_print_command(FILE *f, uint64_t seed, const struct sim_cut *c)
{
	fprintf(f, "us-sim --seed %" PRIu64, seed);
	if (c->stacks)
		fprintf(f, " --cut-stacks %#x", c->stacks);
	if (c->convs)
		fprintf(f, " --cut-convs %#x", c->convs);
	if (c->udp)
		fprintf(f, " --cut-udp %#x", c->udp);
	if (c->faults)
		fprintf(f, " --cut-faults %#x", c->faults);
	if (c->no_impair)
		fprintf(f, " --no-impair");
	if (c->ip4_only)
		fprintf(f, " --ip4-only");
	if (c->max_events)
		fprintf(f, " --max-events %" PRIu64, c->max_events);
	fprintf(f, "\n");
}

void sim_print_shrink(FILE *f, uint64_t seed, const struct sim_cut *c)
{
	fprintf(f, "us-sim --shrink --seed %" PRIu64 "%s\n", seed, c->ip4_only ? " --ip4-only" : "");
}

/* Coverage over many worlds */

void sim_counts_add(struct sim_counts *t, const struct sim_counts *n)
{
#define SIM_X_ADD(name, desc) t->name += n->name;
	SIM_COUNTS(SIM_X_ADD)
#undef SIM_X_ADD
	for (unsigned c = 0; c < SIM_CTRS; c++)
		t->ctr[c] += n->ctr[c];
	for (unsigned a = 0; a < TCP_REC_ALG_COUNT; a++)
		t->rec_episodes[a] += n->rec_episodes[a];
	t->states_seen |= n->states_seen;
	t->trans_seen[0] |= n->trans_seen[0];
	t->trans_seen[1] |= n->trans_seen[1];
}

void sim_print_summary(FILE *f, uint64_t worlds, const struct sim_counts *t, double secs)
{
	unsigned nstates = 0, ntrans = 0;

	fprintf(f, "worlds %" PRIu64 ", simulated %.2f h, wall %.1f s, %.0f simulated s per wall s\n",
		worlds, t->sim_ns / 3.6e12, secs, secs > 0 ? t->sim_ns / 1e9 / secs : 0);
#define SIM_X_PRINT(name, desc) fprintf(f, "  %-24s %14" PRIu64 "  # %s\n", #name, t->name, desc);
	SIM_COUNTS(SIM_X_PRINT)
#undef SIM_X_PRINT
	fprintf(f, "  TCP states reached:");
	for (unsigned s = 0; s < TCP_STATE_COUNT; s++)
		if (t->states_seen >> s & 1) {
			fprintf(f, " %s", tcp_state_str((uint8_t)s));
			nstates++;
		}
	fprintf(f, " (%u)\n  transitions seen (%%s -> %%s):", nstates);
	for (unsigned a = 0; a < TCP_STATE_COUNT; a++)
		for (unsigned b = 0; b < TCP_STATE_COUNT; b++) {
			unsigned bit = a * TCP_STATE_COUNT + b;

			if (t->trans_seen[bit / 64] >> (bit % 64) & 1) {
				fprintf(f, "%s%s>%s", ntrans % 6 ? " " : "\n    ", tcp_state_str((uint8_t)a),
					tcp_state_str((uint8_t)b));
				ntrans++;
			}
		}
	fprintf(f, "\n  (%u transitions)\n  recovery episodes by variant:", ntrans);
	for (unsigned a = 0; a < TCP_REC_ALG_COUNT; a++)
		fprintf(f, " %s %" PRIu64, tcp_rec_alg_name((enum tcp_rec_alg)a), t->rec_episodes[a]);
	fprintf(f, "\n  stack counters summed:\n");
	for (unsigned c = 0; c < SIM_CTRS; c++)
		fprintf(f, "    %-30s %" PRIu64 "\n", sim_ctr_names[c], t->ctr[c]);
}

/* One world; its result in world. */
int sim_run_one(uint64_t seed, const struct sim_cut *cut, bool verbose, bool print_plan)
{
	struct sim_plan plan;
	int rc;

	sim_plan_draw(&plan, seed);
	if (print_plan) {
		struct sim_plan shown = plan;

		sim_plan_cut(&shown, cut);
		printf("seed %" PRIu64 ":\n", seed);
		sim_plan_print(&shown, stdout);
	}
	world.verbose = verbose;
	rc = sim_world_run(&world, &plan, cut, pool);
	return rc;
}

struct sim_world *sim_last_world(void)
{
	return &world;
}

/* A line of a seeds file: "SEED" or "SEED ip4-only" (the world as drawn
 * before IPv6: a seed recorded then). */
struct seed_line {
	uint64_t seed;
	bool ip4_only;
};

static int read_seeds(const char *path, struct seed_line **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t cap = 0;

	if (f == NULL) {
		fprintf(stderr, "us-sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	*n = 0;
	*out = NULL;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *end, word[32] = "";
		unsigned long long v = strtoull(line, &end, 0);

		if (end == line || line[0] == '#')
			continue;
		if (sscanf(end, "%31s", word) == 1 && strcmp(word, "ip4-only") != 0) {
			fprintf(stderr, "us-sim: %s: seed %llu: '%s' is not ip4-only\n", path, v, word);
			fclose(f);
			return -1;
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			*out = realloc(*out, cap * sizeof(**out));
			if (*out == NULL)
				abort();
		}
		(*out)[(*n)++] = (struct seed_line){ .seed = v, .ip4_only = word[0] != 0 };
	}
	fclose(f);
	return 0;
}

/* The worlds of a list: each once (twice with --replay). */
static int run_list(const struct opts *o, const struct seed_line *seeds, size_t n)
{
	struct sim_counts total = {0};
	double t0 = sim_wall();

	for (size_t i = 0; i < n; i++) {
		struct sim_cut cut = o->cut;
		uint64_t digest, seed = seeds[i].seed;

		cut.ip4_only |= seeds[i].ip4_only;
		if (sim_run_one(seed, &cut, o->verbose, o->plan) != 0) {
			printf("FAIL %s\n  replay: ", world.fail);
			sim_print_command(stdout, seed, &cut);
			printf("  shrink: ");
			sim_print_shrink(stdout, seed, &cut);
			return 1;
		}
		sim_counts_add(&total, &world.n);
		digest = world.digest;
		if (o->verbose || o->plan)
			printf("seed %" PRIu64 "%s: pass, %" PRIu64 " events, %" PRIu64 " frames, %.1f s simulated, digest %016" PRIx64 "\n",
			       seed, cut.ip4_only ? " (ip4-only)" : "", world.n.events, world.n.frames,
			       world.n.sim_ns / 1e9, digest);
		if (o->replay) {
			if (sim_run_one(seed, &cut, false, false) != 0) {
				printf("FAIL replay of seed %" PRIu64 " failed where the first run passed: %s\n",
				       seed, world.fail);
				return 1;
			}
			if (world.digest != digest) {
				printf("FAIL seed %" PRIu64 ": replay digest %016" PRIx64 " differs from %016" PRIx64 "\n",
				       seed, world.digest, digest);
				return 1;
			}
		}
	}
	if (!o->quiet)
		sim_print_summary(stdout, n, &total, sim_wall() - t0);
	return 0;
}

/* Every frame the stacks send, at its simulated time (the receiver's copy
 * may be lost or late: the link decides). */
static int open_pcap(const char *path)
{
	pcap_t *dead = pcap_open_dead(DLT_EN10MB, 65535);

	world.pcap = pcap_dump_open(dead, path);
	if (world.pcap == NULL) {
		fprintf(stderr, "us-sim: %s: %s\n", path, pcap_geterr(dead));
		return -1;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: us-sim (--seed S [--count N] | --seeds FILE | --secs T [--jobs J] [--seed S]) "
			"[--replay] [--shrink] [--plan] [-v] [-q]\n"
			"       [--cut-stacks M] [--cut-convs M] [--cut-udp M] [--cut-faults M] [--max-events E] [--no-impair] [--ip4-only]\n"
			"       us-sim --storm N [--seed S] [--close-rate R] [--open-rate R] [--rxq Q] [--rx-ns NS]\n"
			"              [--bytes B] [--link SPEC | --impair] [--mbufs M] [--check-every E] [--pcap F] [-v]\n");
	exit(2);
}

/* The storm's options; false when c is not one of them. */
static bool parse_storm(int c, struct sim_storm_params *p)
{
	switch (c) {
	case 'N': p->n = (unsigned)strtoul(optarg, NULL, 0); break;
	case 'R': p->close_rate = atof(optarg); break;
	case 'O': p->open_rate = atof(optarg); break;
	case 'Q': p->rxq = (unsigned)strtoul(optarg, NULL, 0); break;
	case 'X': p->rx_frame_ns = strtoull(optarg, NULL, 0); break;
	case 'B': p->bytes = (uint32_t)strtoul(optarg, NULL, 0); break;
	case 'L': p->link = optarg; break;
	case 'i': p->impair = true; break;
	case 'M': p->mbufs = (unsigned)strtoul(optarg, NULL, 0); break;
	case 'e': p->check_every = (unsigned)strtoul(optarg, NULL, 0); break;
	default: return false;
	}
	return true;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "seed", 1, NULL, 's' }, { "count", 1, NULL, 'n' }, { "seeds", 1, NULL, 'f' },
		{ "replay", 0, NULL, 'r' }, { "shrink", 0, NULL, 'k' }, { "plan", 0, NULL, 'p' },
		{ "secs", 1, NULL, 't' }, { "jobs", 1, NULL, 'j' }, { "cut-stacks", 1, NULL, 'S' },
		{ "cut-convs", 1, NULL, 'C' }, { "cut-udp", 1, NULL, 'U' },
		{ "cut-faults", 1, NULL, 'F' }, { "max-events", 1, NULL, 'E' },
		{ "no-impair", 0, NULL, 'I' }, { "pcap", 1, NULL, 'P' }, { "verbose", 0, NULL, 'v' }, { "quiet", 0, NULL, 'q' },
		{ "storm", 1, NULL, 'N' }, { "close-rate", 1, NULL, 'R' }, { "open-rate", 1, NULL, 'O' },
		{ "rxq", 1, NULL, 'Q' }, { "rx-ns", 1, NULL, 'X' }, { "bytes", 1, NULL, 'B' },
		{ "link", 1, NULL, 'L' }, { "impair", 0, NULL, 'i' }, { "mbufs", 1, NULL, 'M' },
		{ "check-every", 1, NULL, 'e' }, { "ip4-only", 0, NULL, '4' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct opts){ .count = 1, .jobs = 1, .seed = UINT64_MAX,
			    .storm = { .open_rate = 20000, .rxq = SIM_RXQ, .bytes = 100,
				       .link = "delay=100us", .mbufs = SIM_MBUFS } };
	while ((c = getopt_long(argc, argv, "vq", lo, NULL)) != -1) {
		if (parse_storm(c, &o->storm))
			continue;
		switch (c) {
		case 's': o->seed = strtoull(optarg, NULL, 0); break;
		case 'n': o->count = strtoull(optarg, NULL, 0); break;
		case 'f': o->seeds_file = optarg; break;
		case 'r': o->replay = true; break;
		case 'k': o->shrink = true; break;
		case 'p': o->plan = true; break;
		case 't': o->secs = atof(optarg); break;
		case 'j': o->jobs = (unsigned)atoi(optarg); break;
		case 'S': o->cut.stacks = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'C': o->cut.convs = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'U': o->cut.udp = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'F': o->cut.faults = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'E': o->cut.max_events = strtoull(optarg, NULL, 0); break;
		case 'I': o->cut.no_impair = true; break;
		case '4': o->cut.ip4_only = true; break;
		case 'P': o->pcap = optarg; break;
		case 'v': o->verbose = true; break;
		case 'q': o->quiet = true; break;
		default: usage();
		}
	}
	if (o->storm.n > 0) {
		o->storm.seed = o->seed == UINT64_MAX ? 1 : o->seed;
		o->storm.verbose = o->verbose;
		if (optind != argc || o->storm.rxq == 0 || o->storm.rxq > SIM_RXQ ||
		    o->storm.open_rate <= 0 || o->storm.close_rate < 0)
			usage();
		return;
	}
	if (optind != argc || (o->seed == UINT64_MAX && o->seeds_file == NULL && o->secs <= 0) ||
	    o->jobs == 0 || (o->shrink && o->seed == UINT64_MAX))
		usage();
}

/* A storm in this process: the stacks' pool as asked, the wire's own (a
 * whole burst in flight, each frame up to a full MTU), memory for both. */
static int run_storm(const struct opts *o)
{
	const struct sim_storm_params *p = &o->storm;
	unsigned wire_n = 2 * p->n + 65536;
	unsigned mem = SIM_EAL_MB + (unsigned)(((uint64_t)wire_n + p->mbufs) * 2560 >> 20);
	struct rte_mempool *main_pool = sim_eal_start(mem, p->mbufs);
	struct rte_mempool *wire = pool_create("simwire", wire_n);
	int rc;

	if (o->pcap != NULL && open_pcap(o->pcap) != 0)
		return 2;
	rc = sim_storm_run(p, main_pool, wire);
	if (world.pcap != NULL)
		pcap_dump_close(world.pcap);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct seed_line *seeds;
	size_t n;
	int rc;

	parse(argc, argv, &o);
	if (o.storm.n > 0)
		return run_storm(&o);
	if (o.secs > 0)
		return sim_long_run(argv[0], o.seed, o.secs, o.jobs);
	if (o.shrink)
		return sim_shrink(argv[0], o.seed, &o.cut);
	sim_eal_start(SIM_EAL_MB, SIM_MBUFS);
	if (o.pcap != NULL && open_pcap(o.pcap) != 0)
		return 2;
	if (o.seeds_file != NULL) {
		if (read_seeds(o.seeds_file, &seeds, &n) != 0)
			return 2;
	} else {
		n = o.count;
		seeds = calloc(n, sizeof(*seeds));
		if (seeds == NULL)
			return 2;
		for (size_t i = 0; i < n; i++)
			seeds[i] = (struct seed_line){ .seed = o.seed + i };
	}
	rc = run_list(&o, seeds, n);
	if (world.pcap != NULL)
		pcap_dump_close(world.pcap);
	free(seeds);
	return rc;
}
