/* stack/api/init.c: the composition root.  us_init wires the rooms
 * together: config/ -> nic/ (EAL, pool, port) -> the engines (each owning
 * its tcp/ stack) with the stages several engines or the port need
 * (hand-off, publish, flow rules, control rules) -> a descriptor table per
 * engine (stack/sock).  us_fini takes it apart in the reverse order, the
 * shutdown drain (drain.c) in between.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "stack/api/api_priv.h"
#include "stack/net/net6.h"
#include "userstack.h"

/* Start-up waits this long at most for Duplicate Address Detection: its
 * solicitations, a RetransTimer after the last, and a margin. */
#define API_DAD_WAIT_NS (US_IP6_DAD_TRANSMITS * US_IP6_DAD_WAIT_NS + US_SEC(1))

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
		if (us_flowrules_attach(st->eng[k].engine, fr) < 0)
			fprintf(stderr, "userstack: engine %u: no flow rules (no stage left), "
				"RSS and hand-off only\n", k);
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
		if (us_handoff_attach(st->eng[k].engine, st->ho) < 0)
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
		if (us_publish_attach(st->eng[k].engine, st->pub) < 0)
			return -ENOMEM;
	(void)us_publish_send_tfo_keys(st->eng[0].engine);
	return api_flowrules(st);
}

/* An isolated port delivers only what rules match: ARP and ICMP to engine
 * 0's queue and, per listening port, SYNs spread by RSS (a listener rule,
 * us_engine_listen_rule);
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
		if ((rc = us_flowctl_attach(st->eng[k].engine, &st->ctl)) < 0)
			return rc;
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
		.rx_csum = st->port.rx_csum, .tso = st->port.tso, .lro = st->port.lro,
	};
	ae->engine = us_engine_create(k, &st->cfg, st->pool, &ops, api_now_ns(st));
	if (ae->engine == NULL) {
		int rc = -errno;
		fprintf(stderr, "userstack: cannot create engine %u: %s\n", k, strerror(errno));
		return rc;
	}
	(void)us_engine_telemetry(ae->engine, &st->port); /* optional: works without */
	struct us_sock_driver drv = api_sock_driver(ae);
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
	/* What the port can steer (a real rule created and destroyed),
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

/* [ip6]: no address is used before DAD passes it (RFC 4862 5.4), and one
 * taken by another node is a start-up error.  Engine 0 runs DAD; the others
 * take its verdict.  This thread drives every engine until us_launch, so
 * that an answer landing on another engine's queue reaches engine 0 as a
 * copy (stack/engine/stage_handoff.c copies NS and NA to every engine). */
static int api_dad(struct us_stack *st)
{
	const struct timespec step = { 0, 1000000L };
	struct us_engine *e = st->eng[0].engine;
	uint64_t end = api_now_ns(st) + API_DAD_WAIT_NS;
	char dup[INET6_ADDRSTRLEN] = "";
	int rc;

	while ((rc = us_engine_dad_status(e, dup, sizeof(dup))) == -EAGAIN &&
	       api_now_ns(st) < end) {
		for (unsigned k = 0; k < st->n; k++)
			us_engine_poll(st->eng[k].engine, api_now_ns(st));
		nanosleep(&step, NULL);
	}
	if (rc == -EADDRINUSE) {
		fprintf(stderr, "userstack: %s: [ip6]: address %s is already in use on the link "
			"(Duplicate Address Detection, RFC 4862): configure another, or set "
			"[ip6] dad = off if the link loops our own solicitations back\n",
			st->cfg.path, dup);
		return rc;
	}
	if (rc < 0) {
		fprintf(stderr, "userstack: [ip6]: Duplicate Address Detection did not finish "
			"within %u ms\n", (unsigned)(API_DAD_WAIT_NS / US_MS(1)));
		return -ETIMEDOUT;
	}
	for (unsigned k = 1; k < st->n; k++)
		us_engine_adopt_addrs(st->eng[k].engine, e);
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
	if (st->cfg.ip6_enable && st->cfg.has_addr6)
		inet_ntop(AF_INET6, st->cfg.addr6.b, st->addr6_text, sizeof(st->addr6_text));
	us_engine_announce(st->eng[0].engine);
	us_engine_flush(st->eng[0].engine);
	return st->cfg.ip6_enable ? api_dad(st) : 0;
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

const char *us_local_addr6(const struct us_stack *st)
{
	return st->addr6_text[0] != '\0' ? st->addr6_text : NULL;
}

/* The callback API's view of the stack (stack/sock/conn.h) */

struct us_engine *us_stack_engine(const struct us_stack *st, unsigned k)
{
	return k < st->n ? st->eng[k].engine : NULL;
}

struct us_conn_listeners *us_stack_listeners(struct us_stack *st)
{
	return &st->listeners;
}
