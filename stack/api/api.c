/* stack/api/api.c: the public API (stack/include/userstack.h) over N engines.
 *
 * us_init wires the rooms together: config/ -> nic/ (EAL, pool, port) ->
 * stack/ engine (which owns tcp/).  us_run is the engine loop of DESIGN.md:
 * one clock read per iteration, RX burst processed to completion, timers,
 * TX flush, with application handlers running inline.
 *
 * struct us_conn is tcp/'s struct tcp_conn seen from outside; handlers are
 * forwarded through a small per-listener trampoline so that applications
 * only ever see us_* types.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "config/config.h"
#include "nic/nic.h"
#include "stack/engine/engine.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"
#include "stack/engine/publish.h"
#include "stack/engine/migrate.h"
#include "nic/steer.h"
#include "stack/engine/idle.h"
#include "stack/sock/socket_priv.h"
#include "userstack.h"
#include "tcp/fastopen.h"
#include "tcp/tcp.h"

/* Types */

#define API_MAX_LISTENERS 64
#define API_MAX_RULES 65536u /* flow rules remembered per engine */

struct api_listener {
	struct us_tcp_handlers h;
	void *ctx;
};

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
	struct api_listener listeners[API_MAX_LISTENERS];
	unsigned nlisteners;
	bool eal_up;
};

/* Clock */

static uint64_t api_now_ns(const struct us_stack *st)
{
	uint64_t c = rte_get_tsc_cycles();
	/* Split to avoid 64-bit overflow of c * 1e9 after ~6 s at 3 GHz. */
	return (c / st->tsc_hz) * 1000000000ull + (c % st->tsc_hz) * 1000000000ull / st->tsc_hz;
}

/* The socket layer drives the engine from us_epoll_wait: one loop
 * iteration on the real clock per poll. */
static uint64_t api_drv_now(void *ctx)
{
	const struct api_engine *ae = ctx;

	return api_now_ns(ae->st);
}

/* One loop iteration; an idle engine backs off (stack/engine/idle.h). */
static void api_poll(struct api_engine *ae)
{
	unsigned frames = us_engine_poll(ae->engine, api_now_ns(ae->st));
	uint64_t ns = us_idle_next(&ae->idle, frames);

	if (ns > 0) {
		struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
				       .tv_nsec = (long)(ns % 1000000000u) };
		nanosleep(&ts, NULL);
	}
}

static void api_drv_poll(void *ctx)
{
	api_poll(ctx);
}

/* Port glue: the engine sees its queue of nic/ through us_port_ops */

static uint16_t api_port_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct api_engine *ae = ctx;

	return nic_rx(&ae->st->port, (uint16_t)ae->k, pkts, n);
}

static uint16_t api_port_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct api_engine *ae = ctx;

	return nic_tx(&ae->st->port, (uint16_t)ae->k, pkts, n);
}

/* Life cycle */

/* Engine k runs on the k-th enabled lcore, the main one first (so one
 * engine needs no thread of its own). */
static int api_lcores(struct us_stack *st)
{
	unsigned k = 0, lc;

	if (rte_lcore_count() < st->n) {
		fprintf(stderr, "userstack: %s: [engine] count = %u needs as many lcores, "
			"[eal] lcores = '%s' gives %u\n", st->cfg.path, st->n, st->cfg.nic.lcores,
			rte_lcore_count());
		return -EINVAL;
	}
	st->eng[k++].lcore = rte_get_main_lcore();
	RTE_LCORE_FOREACH_WORKER(lc) {
		if (k == st->n)
			break;
		st->eng[k++].lcore = lc;
	}
	return 0;
}

/* Where the probe created a real 5-tuple rule, every connection gets one
 * steering it to its engine (stack/engine/flowrule.h); elsewhere RSS + hand-off
 * do it all.  A failure here only costs hand-offs. */
static int api_flowrules(struct us_stack *st)
{
	struct us_flowrule_ops ops = us_flowrule_rte_ops;
	char name[32];
	static unsigned seq;

	if (!st->steer.flow_queue)
		return 0;
	ops.ctx = &st->port.port_id;
	for (unsigned k = 0; k < st->n; k++) {
		struct us_flowrules *fr;

		snprintf(name, sizeof(name), "usfr%u_%u", __atomic_fetch_add(&seq, 1,
									 __ATOMIC_RELAXED), k);
		fr = us_flowrule_create(&ops, (uint16_t)k, RTE_MIN(st->cfg.tcp.max_conns,
								   API_MAX_RULES), name);
		if (fr == NULL) {
			fprintf(stderr, "userstack: engine %u: no flow rules (%s), RSS and "
				"hand-off only\n", k, strerror(errno));
			continue;
		}
		us_engine_set_flowrules(st->eng[k].engine, fr);
	}
	return 0;
}

/* Several engines: the software owner rule mirrors the port's RSS (our
 * symmetric key, round-robin RETA); without NIC RSS it is the convention
 * every engine (and a userstack peer over memif) shares. */
static int api_handoff(struct us_stack *st)
{
	struct us_rss rss;
	uint16_t reta = st->port.reta_size ? st->port.reta_size : 128;
	char name[16];
	static unsigned seq;

	if (st->n == 1)
		return 0;
	if (us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, reta, (uint16_t)st->n) < 0 &&
	    us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, (uint16_t)st->n) < 0)
		return -EINVAL;
	snprintf(name, sizeof(name), "%u", __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	st->ho = us_handoff_create(st->n, &rss, name);
	if (st->ho == NULL) {
		fprintf(stderr, "userstack: cannot create the hand-off rings: %s\n",
			strerror(errno));
		return -errno;
	}
	for (unsigned k = 0; k < st->n; k++)
		if (us_engine_set_handoff(st->eng[k].engine, st->ho) < 0)
			return -ENOMEM;
	/* One TFO secret per stack: engine 0's, published to the others now
	 * and at each rotation (DESIGN.md: one writer, by message). */
	st->pub = us_publish_create(st->n, 0, name);
	if (st->pub == NULL) {
		fprintf(stderr, "userstack: cannot create the publish rings: %s\n",
			strerror(errno));
		return -errno;
	}
	for (unsigned k = 0; k < st->n; k++)
		us_engine_set_publish(st->eng[k].engine, st->pub);
	(void)us_engine_publish_tfo_keys(st->eng[0].engine);
	return api_flowrules(st);
}

/* An isolated port delivers only what rules match: ARP and ICMP to engine
 * 0's queue and, per listening port, SYNs spread by RSS (api_listen_one);
 * connections need their 5-tuple rules even with one engine. */
static int api_isolate(struct us_stack *st)
{
	uint16_t qn = (uint16_t)st->n;
	uint8_t key[US_RSS_KEY_MAX];
	uint8_t key_len = st->steer.hash_key_size == US_RSS_KEY_MAX ? US_RSS_KEY_MAX
								    : US_RSS_KEY_LEN;
	struct us_flowctl_ops ops = us_flowctl_rte_ops;
	int rc;

	if (!st->port.iso.isolated)
		return 0;
	us_steer_symmetric_key(key, key_len);
	ops.ctx = &st->port.port_id;
	rc = us_flowctl_start(&st->ctl, &ops, st->cfg.addr, 0, qn, key, key_len);
	if (rc < 0) {
		fprintf(stderr, "userstack: %s: [port] isolate: port %u is isolated but refuses "
			"the ARP/ICMP rules: %s; set isolate = off\n", st->cfg.path,
			(unsigned)st->port.port_id, strerror(-rc));
		return rc;
	}
	for (unsigned k = 0; k < st->n; k++)
		us_engine_set_flowctl(st->eng[k].engine, &st->ctl);
	if (!st->steer.flow_queue)
		fprintf(stderr, "userstack: port %u is isolated but takes no 5-tuple rules: "
			"passive opens work (listener rules), replies to active opens will not "
			"arrive\n", (unsigned)st->port.port_id);
	return st->n == 1 ? api_flowrules(st) : 0;
}

static int api_engine_start(struct us_stack *st, unsigned k)
{
	struct api_engine *ae = &st->eng[k];

	ae->st = st;
	ae->k = k;
	ae->idle = (struct us_idle){ .max_ns = (uint64_t)st->cfg.idle_sleep_max_us * 1000u,
				     .spin = st->cfg.idle_spin };
	struct us_port_ops ops = {
		.rx = api_port_rx, .tx = api_port_tx, .ctx = ae,
		.mac = st->port.mac, .mtu = st->port.mtu,
		.tx_ip_csum = st->port.tx_ip_csum, .tx_l4_csum = st->port.tx_l4_csum,
		.rx_csum = st->port.rx_csum,
	};
	ae->engine = us_engine_create(k, &st->cfg, st->pool, &ops, api_now_ns(st));
	if (ae->engine == NULL) {
		int rc = -errno;
		fprintf(stderr, "userstack: cannot create engine %u: %s\n", k, strerror(errno));
		return rc;
	}
	(void)us_engine_telemetry(ae->engine, &st->port); /* optional: works without */
	struct us_sock_driver drv = { .now_ns = api_drv_now, .poll = api_drv_poll, .ctx = ae };
	/* A descriptor per connection the engine allows, plus listeners and
	 * epoll instances. */
	unsigned cap = st->cfg.tcp.max_conns + 1024u;
	ae->socks = us_sock_table_create(ae->engine, k,
					 cap < US_FD_MAX_PER_TABLE ? cap : US_FD_MAX_PER_TABLE, &drv);
	if (ae->socks == NULL) {
		int rc = -errno;
		fprintf(stderr, "userstack: cannot create the descriptor table: %s\n",
			strerror(errno));
		return rc;
	}
	return 0;
}

static int api_port_up(struct us_stack *st)
{
	char err[512];

	st->pool = nic_pool_create(&st->cfg.nic, "us_pool0");
	if (st->pool == NULL) {
		fprintf(stderr, "userstack: cannot create mbuf pool of %u mbufs: %s "
			"(lower [port] mbufs or give EAL more memory)\n",
			st->cfg.nic.mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	int rc = nic_port_open(&st->cfg.nic, st->pool, (uint16_t)st->n, &st->port, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "userstack: %s: [port] device = '%s': %s\n", st->cfg.path,
			st->cfg.nic.device, err);
		return rc;
	}
	/* Issue 8: what the port can steer (a real rule created and destroyed),
	 * in the start-up log and the counters; isolate as nic_port_open found. */
	st->steer = st->port.iso;
	if (us_steer_probe(st->port.port_id, &st->steer) == 0) {
		us_steer_caps_format(&st->steer, err, sizeof(err));
		printf("userstack: %s; %u engine(s), %s\n", err, st->n,
		       st->n == 1 ? "no hand-off" :
		       st->port.rss ? "RSS on the port, hand-off for the rest" :
		       "software owner rule + hand-off");
		fflush(stdout);
	}
	return 0;
}

static int api_start(struct us_stack *st, const char *config_path, const char *argv0,
		     const struct us_init_opts *o)
{
	char err[512];

	if (us_config_load(config_path, &st->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "userstack: %s\n", err);
		return -EINVAL;
	}
	if (o != NULL && o->lcores != NULL)
		snprintf(st->cfg.nic.lcores, sizeof(st->cfg.nic.lcores), "%s", o->lcores);
	if (o != NULL && o->engines > 0)
		st->cfg.engine_count = o->engines;
	st->n = st->cfg.engine_count ? st->cfg.engine_count : 1;
	if (st->n > US_ENGINES_MAX) {
		fprintf(stderr, "userstack: %u engines asked, at most %u\n", st->n,
			US_ENGINES_MAX);
		return -EINVAL;
	}
	int rc = nic_eal_init(&st->cfg.nic, &st->cfg.log, st->cfg.path, argv0);
	if (rc < 0)
		return rc;
	st->eal_up = true;
	st->tsc_hz = rte_get_tsc_hz();
	rc = api_lcores(st);
	if (rc == 0)
		rc = api_port_up(st);
	for (unsigned k = 0; rc == 0 && k < st->n; k++)
		rc = api_engine_start(st, k);
	if (rc == 0)
		rc = api_handoff(st);
	if (rc == 0)
		rc = api_isolate(st);
	if (rc < 0)
		return rc;
	/* The calling thread drives engine 0 until us_launch says otherwise. */
	us_sock_table_bind_thread(st->eng[0].socks);
	struct in_addr a = { .s_addr = htonl(st->cfg.addr) };
	inet_ntop(AF_INET, &a, st->addr_text, sizeof(st->addr_text));
	us_engine_announce(st->eng[0].engine);
	us_engine_flush(st->eng[0].engine);
	return 0;
}

struct us_stack *us_init_with(const char *config_path, const char *argv0,
			      const struct us_init_opts *o)
{
	struct us_stack *st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NULL;
	int rc = api_start(st, config_path, argv0 ? argv0 : "userstack", o);
	if (rc < 0) {
		us_fini(st);
		errno = -rc;
		return NULL;
	}
	return st;
}

struct us_stack *us_init(const char *config_path, const char *argv0)
{
	return us_init_with(config_path, argv0, NULL);
}

unsigned us_engine_count(const struct us_stack *st)
{
	return st != NULL ? st->n : 0;
}

int us_run_engine(struct us_stack *st, unsigned engine, volatile int *stop)
{
	if (st == NULL || engine >= st->n || st->eng[engine].engine == NULL || stop == NULL) {
		errno = EINVAL;
		return -1;
	}
	while (!*stop)
		api_poll(&st->eng[engine]);
	return 0;
}

/* Runs on engine k's lcore: bind the thread's descriptors, then the
 * application's function. */
static int api_engine_main(void *arg)
{
	struct api_engine *ae = arg;

	us_sock_table_bind_thread(ae->socks);
	ae->rc = ae->fn(ae->st, ae->k, ae->arg);
	return ae->rc;
}

int us_launch(struct us_stack *st, int (*fn)(struct us_stack *st, unsigned engine, void *arg),
	      void *arg)
{
	int rc = 0;

	if (st == NULL || fn == NULL || st->n == 0) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned k = 0; k < st->n; k++) {
		st->eng[k].fn = fn;
		st->eng[k].arg = arg;
		st->eng[k].rc = 0;
	}
	for (unsigned k = 1; k < st->n; k++) {
		if (rte_eal_remote_launch(api_engine_main, &st->eng[k], st->eng[k].lcore) != 0) {
			fprintf(stderr, "userstack: cannot launch engine %u on lcore %u\n", k,
				st->eng[k].lcore);
			st->eng[k].rc = -1;
		}
	}
	/* Engine 0 on the calling (main) lcore; then wait for the others. */
	(void)api_engine_main(&st->eng[0]);
	for (unsigned k = 1; k < st->n; k++)
		if (st->eng[k].rc == 0)
			(void)rte_eal_wait_lcore(st->eng[k].lcore);
	us_sock_table_bind_thread(st->eng[0].socks);
	for (unsigned k = 0; k < st->n; k++)
		if (st->eng[k].rc < 0 && rc == 0)
			rc = -1;
	return rc;
}

static int api_run_one(struct us_stack *st, unsigned engine, void *arg)
{
	return us_run_engine(st, engine, arg);
}

int us_run(struct us_stack *st, volatile int *stop)
{
	if (st == NULL || st->n == 0 || st->eng[0].engine == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (st->n == 1)
		return us_run_engine(st, 0, stop);
	return us_launch(st, api_run_one, (void *)stop);
}

/* Let closes the application started (FINs, RSTs) reach the wire before the
 * port stops: poll until no connection is left short of TIME_WAIT's end, for
 * at most a fraction of a second.  The engine threads have returned, so
 * this thread polls them all (hand-offs included). */
static unsigned api_conns(const struct us_stack *st)
{
	unsigned n = 0;

	for (unsigned k = 0; k < st->n; k++)
		if (st->eng[k].engine != NULL)
			n += tcp_conn_count(us_engine_tcp(st->eng[k].engine));
	return n;
}

/* A connection closed in SYN-SENT within the drain's span: its SYN-ACK may
 * still come, and only a running stack answers it with the RST that frees
 * the peer's half-open connection (else it retransmits for minutes). */
static bool api_synack_awaited(const struct us_stack *st, uint64_t now)
{
	for (unsigned k = 0; k < st->n; k++) {
		if (st->eng[k].engine == NULL)
			continue;
		uint64_t t = tcp_syn_sent_closed_ns(us_engine_tcp(st->eng[k].engine));
		if (t != 0 && now - t < US_MS(200))
			return true;
	}
	return false;
}

static void api_drain(struct us_stack *st)
{
	/* A start that failed before EAL (bad config) has no clock and no
	 * engine: nothing to drain (and tsc_hz 0 would divide by zero). */
	if (!st->eal_up || st->tsc_hz == 0)
		return;
	uint64_t until = api_now_ns(st) + US_MS(200);

	/* Nothing new is accepted while the closes drain (an accept now
	 * would reach an application that has stopped). */
	for (unsigned k = 0; k < st->n; k++)
		if (st->eng[k].engine != NULL)
			tcp_unlisten_all(us_engine_tcp(st->eng[k].engine));
	while ((api_conns(st) > 0 || api_synack_awaited(st, api_now_ns(st))) &&
	       api_now_ns(st) < until)
		for (unsigned k = 0; k < st->n; k++)
			if (st->eng[k].engine != NULL)
				us_engine_poll(st->eng[k].engine, api_now_ns(st));
	/* What has not finished its close by now is reset, so that the
	 * peers do not keep their side for minutes (tcp_reset_unfinished). */
	unsigned reset = 0;
	for (unsigned k = 0; k < st->n; k++) {
		if (st->eng[k].engine == NULL)
			continue;
		reset += tcp_reset_unfinished(us_engine_tcp(st->eng[k].engine));
		us_engine_flush(st->eng[k].engine);
	}
	if (reset > 0)
		fprintf(stderr, "userstack: shutdown: %u connection(s) had not finished closing "
			"within 200 ms: reset (exit_resets)\n", reset);
}

void us_fini(struct us_stack *st)
{
	if (st == NULL)
		return;
	/* Sockets first: their closes queue FINs that the drain sends. */
	for (unsigned k = 0; k < st->n; k++) {
		us_sock_table_destroy(st->eng[k].socks);
		st->eng[k].socks = NULL;
	}
	api_drain(st);
	for (unsigned k = 0; k < st->n; k++) {
		us_engine_destroy(st->eng[k].engine);
		st->eng[k].engine = NULL;
	}
	/* After the engines: frames still in flight are freed with the rings. */
	us_handoff_destroy(st->ho);
	us_publish_destroy(st->pub);
	us_flowctl_stop(&st->ctl); /* before the port closes, like the engines' rules */
	if (st->port.started)
		nic_port_close(&st->port);
	if (st->pool != NULL)
		rte_mempool_free(st->pool);
	if (st->eal_up)
		nic_eal_cleanup();
	free(st);
}

const char *us_local_addr(const struct us_stack *st)
{
	return st->addr_text;
}

/* One engine's counters; prefix "" with one engine (the names tools and
 * tests know), "e<k>." with several. */
static void api_print_engine(const struct api_engine *ae, const char *prefix, FILE *out)
{
	const struct tfo_counters *tfo = tcp_stack_tfo_stats(us_engine_tcp(ae->engine));
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = prefix[0] ? open_memstream(&buf, &len) : out;

	if (mem == NULL)
		mem = out;
	us_engine_print_stats(ae->engine, mem);
#define API_X_PRINT_TFO(name, desc) \
	fprintf(mem, "tfo_%s %" PRIu64 "  # %s\n", #name, tfo->name, desc);
	TFO_COUNTERS(API_X_PRINT_TFO)
#undef API_X_PRINT_TFO
	if (ae->socks != NULL)
		us_sock_print_stats(ae->socks, mem);
	fprintf(mem, "idle_sleeps %lu # polls that found nothing and slept ([engine])\n"
		"idle_slept_us %lu # time slept by the idle back-off\n",
		(unsigned long)ae->idle.sleeps, (unsigned long)(ae->idle.slept_ns / 1000u));
	if (mem == out)
		return;
	fclose(mem);
	for (char *line = buf, *nl; line != NULL && *line != '\0'; line = nl) {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl++ = '\0';
		fprintf(out, "%s%s\n", prefix, line);
	}
	free(buf);
}

/* What the PMD lost before any engine saw it: an RX ring that overflowed
 * while the engine was busy (imissed; af_packet's framecnt too small under a
 * flood), bad frames, no mbuf for a descriptor. */
static void api_print_pmd_drops(const struct us_stack *st, FILE *out)
{
	struct nic_pmd_stats es;

	if (nic_port_pmd_stats(&st->port, &es) != 0)
		return;
	fprintf(out, "nic.imissed %" PRIu64 "  # dropped by the PMD: RX ring full\n"
		"nic.ierrors %" PRIu64 "  # dropped by the PMD: bad frames\n"
		"nic.rx_nombuf %" PRIu64 "  # dropped by the PMD: no mbuf\n",
		es.imissed, es.ierrors, es.rx_nombuf);
}

void us_print_stats(const struct us_stack *st, FILE *out)
{
	struct nic_stats ns;
	char prefix[16];

	nic_port_stats(&st->port, &ns);
	fprintf(out, "nic.rx_pkts %lu\nnic.tx_pkts %lu\nnic.tx_dropped_full %lu\n",
		(unsigned long)ns.rx_pkts, (unsigned long)ns.tx_pkts,
		(unsigned long)ns.tx_dropped_full);
	api_print_pmd_drops(st, out);
	fprintf(out, "steer.flow_queue %d\nsteer.rss_ipv4_tcp %d\nsteer.port_rss %d\n"
		"steer.reta_size %u\n", st->steer.flow_queue, st->steer.rss_ipv4_tcp,
		st->port.rss, (unsigned)st->port.reta_size);
	fprintf(out, "steer.isolated %d\nsteer.ctl_rules_installed %lu\n"
		"steer.ctl_rules_failed %lu\n", st->port.iso.isolated,
		(unsigned long)st->ctl.stats.ctl_installed, (unsigned long)st->ctl.stats.ctl_failed);
	if (st->n > 1)
		fprintf(out, "engines %u\n", st->n);
	for (unsigned k = 0; k < st->n; k++) {
		if (st->eng[k].engine == NULL)
			continue;
		if (st->n > 1) {
			snprintf(prefix, sizeof(prefix), "e%u.", k);
			fprintf(out, "%snic.rx_pkts %lu\n%snic.tx_pkts %lu\n", prefix,
				(unsigned long)st->port.qstats[k].rx_pkts, prefix,
				(unsigned long)st->port.qstats[k].tx_pkts);
		} else {
			prefix[0] = '\0';
		}
		api_print_engine(&st->eng[k], prefix, out);
	}
	/* Gauges at the time of printing, for leak checks after a run (floods:
	 * the pool back near its RX-ring baseline, no TCB left behind). */
	fprintf(out, "mbufs_in_use %u  # mbufs taken from the pool now (RX ring included)\n",
		st->pool != NULL ? rte_mempool_in_use_count(st->pool) : 0u);
	{
		unsigned conns = 0;

		for (unsigned k = 0; k < st->n; k++)
			if (st->eng[k].engine != NULL)
				conns += tcp_conn_count(us_engine_tcp(st->eng[k].engine));
		fprintf(out, "tcp_conns_now %u  # connection TCBs now, every engine (listeners excluded)\n",
			conns);
	}
}

/* TCP: struct us_conn wraps a tcp_conn with the application's handlers and
 * ctx; tcp/ calls back with the wrapper as its ctx. */

struct us_conn {
	struct tcp_conn *tc;
	const struct us_tcp_handlers *h;
	void *app_ctx;
};

static void api_on_readable(void *ctx, struct tcp_conn *tc)
{
	struct us_conn *c = ctx;
	(void)tc;
	if (c->h->on_readable)
		c->h->on_readable(c->app_ctx, c);
}

static void api_on_writable(void *ctx, struct tcp_conn *tc)
{
	struct us_conn *c = ctx;
	(void)tc;
	if (c->h->on_writable)
		c->h->on_writable(c->app_ctx, c);
}

/* tcp/ ends the connection: tell the application, then drop the wrapper. */
static void api_on_closed(void *ctx, struct tcp_conn *tc, int err)
{
	struct us_conn *c = ctx;
	(void)tc;
	if (c->h->on_closed)
		c->h->on_closed(c->app_ctx, c, err);
	free(c);
}

static void api_on_accept(void *listen_ctx, struct tcp_conn *tc)
{
	struct api_listener *l = listen_ctx;
	struct us_conn *c = malloc(sizeof(*c));
	if (c == NULL) {
		tcp_abort(tc); /* no memory for its state: refuse it visibly */
		return;
	}
	*c = (struct us_conn){ .tc = tc, .h = &l->h, .app_ctx = l->ctx };
	tcp_conn_set_ctx(tc, c);
	if (l->h.on_accept)
		l->h.on_accept(l->ctx, c);
}

static const struct tcp_callbacks api_tcp_callbacks = {
	.on_accept = api_on_accept,
	.on_readable = api_on_readable,
	.on_writable = api_on_writable,
	.on_closed = api_on_closed,
};

static int api_errno(long rc)
{
	if (rc >= 0)
		return 0;
	errno = (int)-rc;
	return -1;
}

/* Listens on engine k's TCP stack with the shared listener record l. */
static int api_listen_one(struct us_stack *st, unsigned k, uint16_t port, struct api_listener *l)
{
	int rc = tcp_listen(us_engine_tcp(st->eng[k].engine), st->cfg.addr, port,
			    &api_tcp_callbacks, l);

	/* Isolated port: without the listener's rule no SYN would arrive. */
	if (rc == 0 && st->ctl.started && (rc = us_flowctl_listen(&st->ctl, port)) < 0)
		(void)tcp_unlisten(us_engine_tcp(st->eng[k].engine), port);
	return rc;
}

static struct api_listener *api_listener_new(struct us_stack *st,
					     const struct us_tcp_handlers *h, void *ctx)
{
	struct api_listener *l;

	if (st->nlisteners == API_MAX_LISTENERS) {
		errno = ENOBUFS;
		return NULL;
	}
	l = &st->listeners[st->nlisteners++];
	l->h = *h;
	l->ctx = ctx;
	return l;
}

int us_tcp_listen_engine(struct us_stack *st, unsigned engine, uint16_t port,
			 const struct us_tcp_handlers *h, void *ctx)
{
	struct api_listener *l;

	if (st == NULL || engine >= st->n || st->eng[engine].engine == NULL || h == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((l = api_listener_new(st, h, ctx)) == NULL)
		return -1;
	int rc = api_listen_one(st, engine, port, l);
	if (rc < 0)
		st->nlisteners--;
	return api_errno(rc);
}

/* SO_REUSEPORT-like: a listener on every engine, so each accepts the
 * connections whose SYN it owns. */
int us_tcp_listen(struct us_stack *st, uint16_t port, const struct us_tcp_handlers *h,
		  void *ctx)
{
	struct api_listener *l;
	int rc = 0;

	if (st == NULL || st->n == 0 || st->eng[0].engine == NULL || h == NULL) {
		errno = EINVAL;
		return -1;
	}
	if ((l = api_listener_new(st, h, ctx)) == NULL)
		return -1;
	unsigned done = 0;

	while (rc == 0 && done < st->n)
		if ((rc = api_listen_one(st, done, port, l)) == 0)
			done++;
	if (rc < 0) {
		/* All or nothing: the engines that took it let go again. */
		while (done > 0) {
			(void)tcp_unlisten(us_engine_tcp(st->eng[--done].engine), port);
			if (st->ctl.started)
				us_flowctl_unlisten(&st->ctl, port);
		}
		st->nlisteners--;
	}
	return api_errno(rc);
}

int us_listen_set_fastopen(struct us_stack *st, uint16_t port, unsigned qlen)
{
	int rc = 0;

	if (st == NULL || st->n == 0 || st->eng[0].engine == NULL) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned k = 0; rc == 0 && k < st->n; k++)
		rc = tcp_set_fastopen(us_engine_tcp(st->eng[k].engine), port, qlen);
	return api_errno(rc);
}

void us_conn_set_ctx(struct us_conn *c, void *ctx)
{
	c->app_ctx = ctx;
}

ssize_t us_conn_recv(struct us_conn *c, void *buf, size_t len)
{
	ssize_t rc = tcp_recv(c->tc, buf, len);
	return rc < 0 ? api_errno(rc) : rc;
}

ssize_t us_conn_send(struct us_conn *c, const void *buf, size_t len)
{
	ssize_t rc = tcp_send(c->tc, buf, len);
	return rc < 0 ? api_errno(rc) : rc;
}

size_t us_conn_send_space(const struct us_conn *c)
{
	return tcp_send_space(c->tc);
}

int us_conn_shutdown_write(struct us_conn *c)
{
	return api_errno(tcp_shutdown_write(c->tc));
}

/* After an application close tcp/ never calls back, so the wrapper goes now. */
int us_conn_close(struct us_conn *c)
{
	int rc = tcp_close(c->tc);
	free(c);
	return api_errno(rc);
}

int us_conn_abort(struct us_conn *c)
{
	int rc = tcp_abort(c->tc);
	free(c);
	return api_errno(rc);
}

/* Inside a handler: the move is deferred to the end of the engine's loop
 * iteration (stack/engine/migrate.h); the wrapper goes now, like a close. */
int us_conn_migrate(struct us_conn *c, unsigned engine)
{
	int rc = us_migrate_conn(tcp_conn_env_ctx(c->tc), c->tc, engine);

	if (rc < 0)
		return api_errno(rc);
	free(c);
	return 0;
}

int us_conn_set_nodelay(struct us_conn *c, int on)
{
	return api_errno(tcp_set_nodelay(c->tc, on != 0));
}

int us_conn_set_keepalive(struct us_conn *c, int on)
{
	return api_errno(tcp_set_keepalive(c->tc, on != 0));
}

unsigned us_conn_count(const struct us_stack *st)
{
	return st != NULL ? api_conns(st) : 0;
}
