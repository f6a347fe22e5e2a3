/* tests/bench/recovery_experiment.c: the seed's comparison of fast-recovery
 * algorithms (RFC 6937 / RFC 9937 PRR against RFC 6675 and rate-halving),
 * as a benchmark, not a test.
 *
 * Many short HTTP-like responses over an emulated path, in virtual time:
 * two stacks in one process (tests/pkt/tcp_pair.h), one-way delay rtt/2 and
 * Bernoulli loss in both directions from nic/impair with the same seed for
 * every algorithm.  A client keeps `parallel` connections busy; each sends an
 * 8-byte request (size, id), the server answers with `size` bytes (sizes
 * log-uniform in 1 KB .. 100 KB from a seeded generator, the same list for
 * every algorithm) and shuts down writing; the client times from request to
 * end of stream, then closes.  A response "saw loss" when the server's
 * connection retransmitted anything after the handshake
 * (tcp_conn_info.retransmits at close less its value at accept).
 *
 * Prints, per algorithm: responses, those that saw loss, mean / p50 / p90 /
 * p99 completion time of those (ms), mean of all, RTOs and retransmitted
 * segments (server side), recovery episodes; optionally every response as
 * CSV for tools/recovery-experiment.sh's plot.
 *
 * Same seed -> same output: nothing reads a real clock.  The packet fates
 * differ between algorithms all the same (the stage decides per packet in
 * arrival order and the algorithms send different packets). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tests/common/test_eal.h"
#include "tests/pkt/tcp_pair.h"

#define EX_PORT 80
#define EX_NS 1000000000ull
#define EX_MAX_PAR 64

struct ex_opts {
	unsigned conns, parallel;
	double loss_pct, rtt_ms, rate_mbit;
	const char *path;       /* more of the path, as nic_impair_parse takes it */
	uint64_t seed;
	const char *csv;
};

/* A row of the table: a recovery algorithm and what goes with it, each
 * set whatever the defaults are. */
struct ex_row {
	const char *name;
	enum tcp_rec_alg alg;
	bool tlp, undo;
	enum tcp_loss_det det;
};

static const struct ex_row ex_rows[] = {
	{ "prr", TCP_REC_PRR, .tlp = false, .det = TCP_LOSS_DUPACK },
	{ "prr-crb", TCP_REC_PRR_CRB, .tlp = false, .det = TCP_LOSS_DUPACK },
	{ "prr-ssrb", TCP_REC_PRR_SSRB, .tlp = false, .det = TCP_LOSS_DUPACK },
	{ "rfc6675", TCP_REC_RFC6675, .tlp = false, .det = TCP_LOSS_DUPACK },
	{ "ratehalving", TCP_REC_RATEHALVING, .tlp = false, .det = TCP_LOSS_DUPACK },
	{ "prr+rack-tlp", TCP_REC_PRR, .tlp = true, .det = TCP_LOSS_RACK },
	{ "prr+rack-tlp+undo", TCP_REC_PRR, .tlp = true, .undo = true, .det = TCP_LOSS_RACK },
};
#define EX_NROWS (sizeof(ex_rows) / sizeof(ex_rows[0]))

static void ex_row_apply(const struct ex_row *row, struct tcp_config *cfg)
{
	cfg->recovery = row->alg;
	cfg->tlp = row->tlp;
	cfg->undo = row->undo;
	cfg->loss_detection = row->det;
}

struct ex_result {
	uint32_t size;
	uint64_t t0, t1;        /* request sent, end of stream */
	bool done, lossy;
	uint32_t retrans, rtos;
};

struct ex_slot {            /* one client connection */
	struct ex_run *run;
	struct tcp_conn *c;
	int id;                 /* -1: idle */
	uint64_t rcvd;
	bool bad;
};

struct ex_srv {             /* one server connection */
	struct ex_run *run;
	uint8_t req[8];
	unsigned have;
	int id;
	uint32_t rx0, rto0;     /* handshake retransmissions, not counted */
};

struct ex_run {
	struct tp_pair p;
	const struct ex_opts *o;
	struct ex_result *res;
	struct ex_slot slot[EX_MAX_PAR];
	unsigned next, finished, bad;
};

static struct rte_mempool *g_pool;

static uint32_t ex_size(uint64_t *s)
{
	/* splitmix64, then log-uniform in [1 KB, 100 KB] */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	double u;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	u = (double)(z >> 11) / 9007199254740992.0;
	return (uint32_t)(1000.0 * pow(100.0, u));
}

/* Server side. */
static void srv_respond(struct ex_srv *s, struct tcp_conn *c)
{
	struct ex_result *r;
	uint8_t *buf;
	uint32_t id;

	memcpy(&id, s->req + 4, 4);
	s->id = (int)id;
	r = &s->run->res[id];
	buf = malloc(r->size);
	if (buf == NULL)
		abort();
	for (uint32_t i = 0; i < r->size; i++)
		buf[i] = tp_pattern(i);
	if (tcp_send(c, buf, r->size) != (ssize_t)r->size)
		s->run->bad++; /* sizes stay below sndbuf */
	free(buf);
	tcp_shutdown_write(c);
}

static void srv_accept(void *ctx, struct tcp_conn *c)
{
	struct ex_srv *s = calloc(1, sizeof(*s));
	struct tcp_conn_info info;

	if (s == NULL)
		abort();
	s->run = ctx;
	s->id = -1;
	tcp_conn_get_info(c, &info);
	s->rx0 = info.retransmits;
	s->rto0 = (uint32_t)info.rtos;
	tcp_conn_set_ctx(c, s);
}

static void srv_readable(void *ctx, struct tcp_conn *c)
{
	struct ex_srv *s = ctx;
	struct tcp_conn_info info;
	uint8_t junk[64];
	ssize_t n;

	while (s->have < sizeof(s->req) &&
	       (n = tcp_recv(c, s->req + s->have, sizeof(s->req) - s->have)) > 0)
		s->have += (unsigned)n;
	if (s->have == sizeof(s->req) && s->id < 0)
		srv_respond(s, c);
	while ((n = tcp_recv(c, junk, sizeof(junk))) > 0)
		;
	if (n == 0) { /* the client closed after reading everything */
		tcp_conn_get_info(c, &info);
		if (s->id >= 0) {
			struct ex_result *r = &s->run->res[s->id];

			r->retrans = info.retransmits - s->rx0;
			r->rtos = (uint32_t)info.rtos - s->rto0;
			r->lossy = r->retrans > 0;
		}
		tcp_close(c);
		free(s);
	}
}

static void srv_closed(void *ctx, struct tcp_conn *c, int err)
{
	(void)c;
	(void)err;
	free(ctx);
}

/* Client side. */
static void cli_connected(void *ctx, struct tcp_conn *c)
{
	struct ex_slot *sl = ctx;
	struct ex_result *r = &sl->run->res[sl->id];
	uint8_t req[8];
	uint32_t id = (uint32_t)sl->id;

	memcpy(req, &r->size, 4);
	memcpy(req + 4, &id, 4);
	r->t0 = sl->run->p.now;
	if (tcp_send(c, req, sizeof(req)) != (ssize_t)sizeof(req))
		sl->run->bad++;
}

static void cli_readable(void *ctx, struct tcp_conn *c)
{
	struct ex_slot *sl = ctx;
	uint8_t buf[16384];
	ssize_t n;

	while ((n = tcp_recv(c, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			sl->bad |= buf[i] != tp_pattern(sl->rcvd + (uint64_t)i);
		sl->rcvd += (uint64_t)n;
	}
	if (n == 0) {
		struct ex_result *r = &sl->run->res[sl->id];

		r->t1 = sl->run->p.now;
		r->done = true;
		if (sl->bad || sl->rcvd != r->size)
			sl->run->bad++;
		sl->run->finished++;
		tcp_close(c);
		sl->c = NULL;
		sl->id = -1;
	}
}

static void cli_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct ex_slot *sl = ctx;

	(void)c;
	(void)err;
	sl->run->bad++;
	sl->run->finished++;
	sl->c = NULL;
	sl->id = -1;
}

static const struct tcp_callbacks ex_srv_cb = {
	.on_accept = srv_accept, .on_readable = srv_readable, .on_closed = srv_closed,
};
static const struct tcp_callbacks ex_cli_cb = {
	.on_connected = cli_connected, .on_readable = cli_readable, .on_closed = cli_closed,
};

/* Called by tp_run between steps: refills idle slots; done when every
 * response finished and both stacks are empty. */
static bool ex_poll(void *ctx)
{
	struct ex_run *run = ctx;

	for (unsigned k = 0; k < run->o->parallel && run->next < run->o->conns; k++) {
		struct ex_slot *sl = &run->slot[k];

		if (sl->id >= 0)
			continue;
		*sl = (struct ex_slot){ .run = run, .id = (int)run->next++ };
		if (tcp_connect(run->p.a, TP_IP_B, EX_PORT, &ex_cli_cb, sl, &sl->c) < 0) {
			run->bad++;
			run->finished++;
			sl->id = -1;
		}
	}
	return run->finished == run->o->conns && tcp_conn_count(run->p.a) == 0 &&
	       tcp_conn_count(run->p.b) == 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, unsigned n, double q)
{
	unsigned i = (unsigned)ceil(q * n);

	return n == 0 ? 0 : (double)v[i > 0 ? i - 1 : 0] / 1e6;
}

static void ex_report(const struct ex_row *row, const struct ex_run *run, const struct tcp_stats *st,
		      FILE *csv)
{
	unsigned n = run->o->conns, nl = 0;
	uint64_t *v = calloc(n, sizeof(*v)), rto = 0, rx = 0;
	double sum_l = 0, sum_all = 0;

	for (unsigned i = 0; i < n; i++) {
		const struct ex_result *r = &run->res[i];
		uint64_t d = r->t1 - r->t0;

		sum_all += (double)d;
		rto += r->rtos;
		rx += r->retrans;
		if (r->lossy) {
			v[nl++] = d;
			sum_l += (double)d;
		}
		if (csv != NULL)
			fprintf(csv, "%s,%u,%.3f,%d,%u,%u\n", row->name, r->size,
				(double)d / 1e6, r->lossy, r->rtos, r->retrans);
	}
	qsort(v, nl, sizeof(*v), cmp_u64);
	printf("| %-17s | %5u | %5u | %8.1f | %8.1f | %8.1f | %8.1f | %8.1f | %5llu | %6llu | %8llu | %6llu |\n",
	       row->name, n, nl, nl ? sum_l / nl / 1e6 : 0.0, pct(v, nl, 0.5),
	       pct(v, nl, 0.9), pct(v, nl, 0.99), sum_all / n / 1e6, (unsigned long long)rto,
	       (unsigned long long)rx, (unsigned long long)st->dsack_rcvd,
	       (unsigned long long)st->recovery_episodes);
	if (csv != NULL)
		fprintf(csv, "#spurious,%s,%llu\n", row->name, (unsigned long long)st->dsack_rcvd);
	free(v);
	fprintf(stderr, "  %s server: rto %llu (in recovery %llu), rescue %llu, spurious %llu, "
		"entered by IsLost %llu, lost-hole rxt %llu, unsacked rxt %llu, undone "
		"(dsack/ts recovery, ts/dsack rto) %llu/%llu/%llu/%llu, tlp %llu (repaired %llu)\n",
		row->name, (unsigned long long)st->rto_fired,
		(unsigned long long)st->recovery_rto, (unsigned long long)st->rec_rescue,
		(unsigned long long)st->spurious_recoveries, (unsigned long long)st->rec_enter_lost,
		(unsigned long long)st->rec_rxt_lost, (unsigned long long)st->rec_rxt_unsacked,
		(unsigned long long)st->undo_dsack_recovery, (unsigned long long)st->undo_ts_recovery,
		(unsigned long long)st->undo_ts_rto, (unsigned long long)st->undo_dsack_rto,
		(unsigned long long)st->tlp_probes, (unsigned long long)st->tlp_repairs);
}

static int ex_one(const struct ex_row *row, const struct ex_opts *o, FILE *csv)
{
	struct nic_impair_params ab, ba;
	struct tcp_config cfg;
	struct ex_run *run = calloc(1, sizeof(*run));
	uint64_t s = o->seed;

	if (run == NULL)
		return -ENOMEM;
	run->o = o;
	run->res = calloc(o->conns, sizeof(*run->res));
	for (unsigned i = 0; i < o->conns; i++)
		run->res[i].size = ex_size(&s);
	for (unsigned k = 0; k < EX_MAX_PAR; k++)
		run->slot[k].id = -1;
	nic_impair_params_defaults(&ab);
	if (o->path != NULL && nic_impair_parse(o->path, &ab, NULL, 0) < 0)
		return -EINVAL;
	ab.delay_us = (uint64_t)(o->rtt_ms * 500.0);
	ab.loss_pct = o->loss_pct;
	ab.seed = o->seed;
	ba = ab;
	/* A bottleneck on the response direction only, when asked. */
	ba.rate_bps = (uint64_t)(o->rate_mbit * 1e6);
	ba.seed = o->seed * 7 + 1;
	tcp_config_defaults(&cfg);
	ex_row_apply(row, &cfg);
	cfg.time_wait_ms = 1000;
	if (tp_create(&run->p, g_pool, &cfg, &ab, &ba) < 0 ||
	    tcp_listen(run->p.b, TP_IP_B, EX_PORT, 0, &ex_srv_cb, run) < 0)
		return -ENOMEM;
	if (!tp_run(&run->p, run->p.now + 24ull * 3600 * EX_NS, ex_poll, run))
		fprintf(stderr, "%s: did not finish\n", row->name);
	if (run->bad > 0)
		fprintf(stderr, "%s: %u responses failed or were corrupted\n",
			row->name, run->bad);
	ex_report(row, run, tcp_stack_stats(run->p.b), csv);
	tp_destroy(&run->p);
	free(run->res);
	free(run);
	return 0;
}

static void ex_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--conns N] [--parallel K] [--loss PCT] [--rtt MS] [--seed S]\n"
		"          [--rate MBIT] [--path SPEC] [--row NAME]... [--csv FILE]\n"
		"defaults: 2000 responses, 10 in parallel, 1%% loss each way, 100 ms RTT,\n"
		"seed 1, no bottleneck (--rate: server-to-client link rate, 256 KB queue), every\n"
		"row.  --path adds to both directions what nic/impair takes (\"ge=0.005:0.3:0.5:0\",\n"
		"\"reorder=2%%,reorder_gap=10ms\"); its delay, loss and seed are --rtt's, --loss's\n"
		"and --seed's.  Rows:", prog);
	for (size_t i = 0; i < EX_NROWS; i++)
		fprintf(stderr, " %s", ex_rows[i].name);
	fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "conns", required_argument, NULL, 'n' }, { "parallel", required_argument, NULL, 'k' },
		{ "loss", required_argument, NULL, 'l' },  { "rtt", required_argument, NULL, 'r' },
		{ "seed", required_argument, NULL, 's' },  { "row", required_argument, NULL, 'a' },
		{ "path", required_argument, NULL, 'p' },
		{ "csv", required_argument, NULL, 'c' },   { "rate", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct ex_opts o = { .conns = 2000, .parallel = 10, .loss_pct = 1.0, .rtt_ms = 100, .seed = 1 };
	bool want[EX_NROWS] = { false }, any = false;
	FILE *csv = NULL;
	int opt;

	while ((opt = getopt_long(argc, argv, "", lopts, NULL)) != -1) {
		size_t a;

		switch (opt) {
		case 'n': o.conns = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': o.parallel = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'l': o.loss_pct = strtod(optarg, NULL); break;
		case 'r': o.rtt_ms = strtod(optarg, NULL); break;
		case 's': o.seed = strtoull(optarg, NULL, 10); break;
		case 'c': o.csv = optarg; break;
		case 'b': o.rate_mbit = strtod(optarg, NULL); break;
		case 'p': o.path = optarg; break;
		case 'a':
			for (a = 0; a < EX_NROWS; a++)
				if (strcmp(optarg, ex_rows[a].name) == 0)
					break;
			if (a == EX_NROWS) {
				ex_usage(argv[0]);
				return 2;
			}
			want[a] = any = true;
			break;
		default:
			ex_usage(argv[0]);
			return 2;
		}
	}
	if (o.path != NULL) {
		struct nic_impair_params t;
		char err[128];

		nic_impair_params_defaults(&t);
		if (nic_impair_parse(o.path, &t, err, sizeof(err)) < 0) {
			fprintf(stderr, "--path %s: %s\n", o.path, err);
			return 2;
		}
	}
	if (o.conns == 0 || o.parallel == 0 || o.parallel > EX_MAX_PAR) {
		ex_usage(argv[0]);
		return 2;
	}
	if (test_eal_start("recexp") < 0)
		return 1;
	g_pool = rte_pktmbuf_pool_create("recexp_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 (int)rte_socket_id());
	if (g_pool == NULL)
		return 1;
	if (o.csv != NULL && (csv = fopen(o.csv, "w")) == NULL) {
		perror(o.csv);
		return 1;
	}
	if (csv != NULL)
		fprintf(csv, "alg,size,ms,lossy,rtos,retrans\n");
	printf("%u responses of 1-100 KB (log-uniform), %u in parallel, RTT %.0f ms, "
	       "%.1f%% loss each way%s%s, bottleneck %.0f Mbit/s (0: none), seed %llu, virtual time\n\n",
	       o.conns, o.parallel, o.rtt_ms, o.loss_pct, o.path ? ", " : "", o.path ? o.path : "",
	       o.rate_mbit, (unsigned long long)o.seed);
	printf("| row               | resp  | lossy | mean ms  | p50 ms   | p90 ms   | p99 ms   | all ms   "
	       "| RTOs  | rexmit | spurious | episodes |\n");
	printf("|-------------------|------:|------:|---------:|---------:|---------:|---------:|---------:"
	       "|------:|-------:|---------:|-------:|\n");
	for (size_t a = 0; a < EX_NROWS; a++)
		if ((!any || want[a]) && ex_one(&ex_rows[a], &o, csv) < 0)
			return 1;
	printf("\nlossy: responses whose server connection retransmitted; times from the "
	       "request to the end of the response; spurious: D-SACK blocks the server received "
	       "(retransmissions the client already had)\n");
	if (csv != NULL)
		fclose(csv);
	rte_mempool_free(g_pool);
	rte_eal_cleanup();
	return 0;
}
