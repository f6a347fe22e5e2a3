/* stack/engine/engine.c: the per-lcore engine: create/destroy, the loop iteration,
 * buffered TX, counters. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "stack/base/log.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"
#include "stack/engine/publish.h"
#include "stack/engine/migrate.h"
#include "stack/engine/telemetry.h"

/* tcp/ hands a segment at its TCP header: wrap it in IPv4 (DF set: RFC 1191
 * path MTU discovery, TCP never needs us to fragment). */
static void engine_tcp_output(void *ctx, struct rte_mbuf *m, uint32_t src_ip, uint32_t dst_ip)
{
	us_ip_output(ctx, m, src_ip, dst_ip, IPPROTO_TCP, US_IP_DF | US_IP_TCP_CSUM);
}

/* Fragmentation output attaches the payload through indirect mbufs, which
 * carry no data room of their own. */
static struct rte_mempool *engine_indirect_pool(const struct us_engine *e)
{
	static unsigned seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	int socket = e->pool->socket_id;

	snprintf(name, sizeof(name), "us_ind%u_%u", e->id, __atomic_fetch_add(&seq, 1,
									     __ATOMIC_RELAXED));
	return rte_pktmbuf_pool_create(name, 2047, 32, 0, 0,
				       socket < 0 ? (int)SOCKET_ID_ANY : socket);
}

/* Active opens: only source ports whose replies hash to this engine's queue
 * (any port with one engine). */
static bool engine_port_ok(void *ctx, uint32_t rip, uint16_t rport, uint16_t lport)
{
	struct us_engine *e = ctx;

	return us_handoff_port_ok(e->ho, e->id, e->addr, rip, rport, lport);
}

/* Connections entering or leaving the table: their rule follows (queued,
 * applied at the end of the iteration). */
static void engine_conn_event(void *ctx, uint32_t lip, uint16_t lport, uint32_t rip,
			      uint16_t rport, bool open)
{
	struct us_engine *e = ctx;

	if (e->rules != NULL)
		us_flowrule_note(e->rules, lip, lport, rip, rport, open);
	if (!open && e->mig != NULL && e->mig->n > 0) {
		struct us_mig_tuple tu = { .lip = lip, .rip = rip, .lport = lport, .rport = rport };

		us_migrate_conn_gone(e, &tu);
	}
}

/* RFC 7413 4.1.2, one secret per stack: the writer engine's new secret goes
 * to every other engine by message. */
static void engine_tfo_rotated(void *ctx, const struct tfo_keys *k)
{
	struct us_engine *e = ctx;
	unsigned sent;

	if (e->pub == NULL || e->pub->writer != e->id)
		return;
	sent = us_publish_tfo_keys(e->pub, k);
	US_STAT_ADD(e, pub_tfo_keys_sent, sent);
	US_STAT_ADD(e, pub_drop_inbox_full, e->pub->n - 1 - sent);
}

static int engine_tcp_create(struct us_engine *e)
{
	struct tcp_env env = {
		.pool = e->pool,
		.wheel = &e->wheel,
		.local_ip = e->addr,
		.mtu = e->port.mtu,
		.l4_csum_by_ip = e->port.tx_l4_csum,
		.output = engine_tcp_output,
		.ctx = e,
		.port_ok = engine_port_ok,
		.conn_event = engine_conn_event,
		.tfo_keys_rotated = engine_tfo_rotated,
	};

	e->tcp = tcp_stack_create(&env, &e->cfg.tcp);
	return e->tcp ? 0 : -(errno ? errno : ENOMEM);
}

/* [capture] pcap = FILE: a start-up error names the key and the reason. */
static int engine_capture_open(struct us_engine *e)
{
	char err[256];
	int rc;

	if (e->cfg.capture_pcap[0] == '\0')
		return 0;
	e->capture = nic_capture_open(e->cfg.capture_pcap, e->cfg.capture_snaplen, err,
				      sizeof(err));
	if (e->capture != NULL)
		return 0;
	rc = errno ? -errno : -EIO;
	US_LOG(stack, ERR, "%s: [capture] pcap = '%s': %s\n", e->cfg.path, e->cfg.capture_pcap,
	       err);
	return rc;
}

static void engine_free(struct us_engine *e)
{
	us_telemetry_detach(e);
	if (e->tcp)
		tcp_stack_destroy(e->tcp);
	/* After TCP: its last removals are queued; every rule goes. */
	us_flowrule_destroy(e->rules);
	us_migrate_fini(e);
	us_arp_fini(e);
	us_ip_fini(e);
	/* Queued frames are dropped, not sent: the port may be gone already. */
	for (uint16_t i = 0; i < e->ntx; i++)
		rte_pktmbuf_free(e->tx[i]);
	e->ntx = 0;
	us_port_impair_fini(e);
	nic_capture_close(e->capture);
	/* Last: fragments queued above held indirect mbufs from it. */
	if (e->indirect_pool)
		rte_mempool_free(e->indirect_pool);
	free(e);
}

struct us_engine *us_engine_create(unsigned id, const struct us_config *cfg,
				   struct rte_mempool *pool, const struct us_port_ops *port,
				   uint64_t now_ns)
{
	struct us_engine *e;
	int rc;

	if (cfg == NULL || pool == NULL || port == NULL || port->tx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL)
		return NULL;
	e->id = id;
	e->cfg = *cfg;
	e->addr = cfg->addr;
	e->bcast = cfg->prefixlen < 31 ? cfg->addr | ~(~0u << (32 - cfg->prefixlen)) : 0;
	e->pool = pool;
	e->port = *port;
	if (e->port.mtu == 0)
		e->port.mtu = cfg->nic.mtu ? cfg->nic.mtu : RTE_ETHER_MTU;
	us_timer_wheel_init(&e->wheel, US_WHEEL_TICK_NS, now_ns);
	e->icmp.tokens = US_ICMP_BURST;
	e->icmp.refill_ns = now_ns;

	rc = us_route_init(&e->routes, cfg);
	if (rc == 0 && (e->indirect_pool = engine_indirect_pool(e)) == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = us_arp_init(e);
	if (rc == 0)
		rc = us_ip_init(e);
	if (rc == 0)
		rc = engine_tcp_create(e);
	if (rc == 0)
		rc = engine_capture_open(e);
	if (rc == 0)
		rc = us_port_impair_init(e);
	if (rc < 0) {
		engine_free(e);
		errno = -rc;
		return NULL;
	}
	return e;
}

void us_engine_destroy(struct us_engine *e)
{
	if (e != NULL)
		engine_free(e);
}

void us_engine_tx(struct us_engine *e, struct rte_mbuf *m)
{
	if (e->ntx == US_TX_BUF)
		us_engine_flush(e);
	e->tx[e->ntx++] = m;
	US_STAT_INC(e, eth_tx_frames);
	if (e->ntx >= US_TX_FLUSH && e->impair_tx == NULL)
		us_engine_flush(e);
}

void us_engine_flush(struct us_engine *e)
{
	if (e->ntx > 0 && e->capture != NULL)
		nic_capture_burst(e->capture, e->tx, e->ntx);
	/* [impair] tx: runs even with nothing new, to release what is due. */
	if (unlikely(e->impair_tx != NULL)) {
		us_port_impair_tx(e);
		return;
	}
	if (e->ntx == 0)
		return;
	/* port.tx consumes all of them, sent or not. */
	e->port.tx(e->port.ctx, e->tx, e->ntx);
	e->ntx = 0;
}

void us_engine_input(struct us_engine *e, struct rte_mbuf *m)
{
	us_eth_input(e, m);
}

/* ARP reaches every engine: each keeps its own table (DESIGN.md: one
 * writer per copy, no shared mutable state), and a reply may come back on
 * another engine's queue than the request went out of. */
static void engine_copy_arp(struct us_engine *e, const struct rte_mbuf *m)
{
	for (unsigned k = 0; k < e->ho->n; k++) {
		struct rte_mbuf *c;

		if (k == e->id)
			continue;
		c = rte_pktmbuf_copy(m, e->pool, 0, UINT32_MAX);
		if (c == NULL) {
			US_STAT_INC(e, steer_drop_no_mbuf);
			continue;
		}
		if (us_handoff_send(e->ho, e->id, k, &c, 1) == 1) {
			US_STAT_INC(e, steer_arp_copies);
		} else {
			rte_pktmbuf_free(c);
			US_STAT_INC(e, steer_drop_ring_full);
		}
	}
}

/* Sends each owner its frames in one burst; what a full ring refuses is
 * freed and counted. */
static void engine_handoff_flush(struct us_engine *e, struct rte_mbuf *out[][US_RX_BURST],
				 const unsigned *nout)
{
	for (unsigned k = 0; k < e->ho->n; k++) {
		unsigned sent;

		if (nout[k] == 0)
			continue;
		sent = us_handoff_send(e->ho, e->id, k, out[k], nout[k]);
		US_STAT_ADD(e, steer_handoff_out, sent);
		if (sent < nout[k]) {
			rte_pktmbuf_free_bulk(out[k] + sent, nout[k] - sent);
			US_STAT_ADD(e, steer_drop_ring_full, nout[k] - sent);
		}
	}
}

/* Keeps the frames this engine owns in pkts (returns how many) and hands
 * the others to their owners. */
static uint16_t engine_steer(struct us_engine *e, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *out[US_ENGINES_MAX][US_RX_BURST];
	unsigned nout[US_ENGINES_MAX] = { 0 };
	uint16_t keep = 0;

	for (uint16_t i = 0; i < n; i++) {
		unsigned owner = e->id;
		enum us_handoff_dest d = US_HO_OWNER;
		enum us_mig_verdict v = e->mig->n > 0 ?
			us_migrate_steer(e, pkts[i], false, &owner) : US_MIG_PASS;

		if (v == US_MIG_TAKEN)
			continue;
		if (v == US_MIG_PASS)
			d = us_handoff_classify(e->ho, pkts[i], &owner);
		if (d == US_HO_ALL)
			engine_copy_arp(e, pkts[i]);
		if (owner != e->id) {
			out[owner][nout[owner]++] = pkts[i];
			continue;
		}
		US_STAT_INC(e, steer_rx_own);
		/* Steering agreed with us: no hand-off needed for this connection. */
		if (d == US_HO_OWNER)
			US_STAT_INC(e, steer_rx_own_tcp);
		pkts[keep++] = pkts[i];
	}
	engine_handoff_flush(e, out, nout);
	return keep;
}

/* One pointer from engine k's ring: a message (stack/engine/migrate.h), or a
 * frame for here or, for a migrated connection, for where it went. */
static void engine_handoff_one(struct us_engine *e, unsigned k, void *p,
			       struct rte_mbuf *out[][US_RX_BURST], unsigned *nout)
{
	struct rte_mbuf *m = p;
	unsigned to = e->id;

	if (us_handoff_is_msg(p)) {
		/* Frames forwarded before it stay ahead of whatever it sends. */
		engine_handoff_flush(e, out, nout);
		memset(nout, 0, sizeof(*nout) * US_ENGINES_MAX);
		us_migrate_msg_input(e, k, us_handoff_msg_ptr(p));
		return;
	}
	US_STAT_INC(e, steer_handoff_in);
	if (e->mig->n > 0) {
		switch (us_migrate_steer(e, m, true, &to)) {
		case US_MIG_TAKEN:
			return;
		case US_MIG_FORWARD:
			if (to != e->id) {
				out[to][nout[to]++] = m;
				return;
			}
			break;
		default:
			break;
		}
	}
	/* An ARP frame handed over is another engine's copy: learn only. */
	e->rx_handed = true;
	us_engine_input(e, m);
	e->rx_handed = false;
}

/* Frames the other engines handed to this one, processed like received
 * ones (the owner frees them). */
static unsigned engine_handoff_input(struct us_engine *e)
{
	void *pkts[US_HANDOFF_BURST];
	struct rte_mbuf *out[US_ENGINES_MAX][US_RX_BURST];
	unsigned nout[US_ENGINES_MAX] = { 0 };
	unsigned total = 0;

	us_migrate_flush_pending(e);
	for (unsigned k = 0; k < e->ho->n; k++) {
		unsigned got;

		if (k == e->id)
			continue;
		/* At most US_RX_BURST forwarded per destination per burst. */
		got = us_handoff_recv(e->ho, k, e->id, (struct rte_mbuf **)pkts,
				      RTE_MIN(US_HANDOFF_BURST, US_RX_BURST));
		for (unsigned i = 0; i < got; i++)
			engine_handoff_one(e, k, pkts[i], out, nout);
		engine_handoff_flush(e, out, nout);
		memset(nout, 0, sizeof(nout));
		total += got;
	}
	return total;
}

/* What the writer engine published, applied before this iteration's
 * segments are looked at. */
static void engine_publish_input(struct us_engine *e)
{
	struct us_publish_msg *m;

	while ((m = us_publish_recv(e->pub, e->id)) != NULL) {
		if (m->type == US_PUB_TFO_KEYS && e->tcp != NULL) {
			tcp_tfo_keys_set(e->tcp, &m->keys);
			US_STAT_INC(e, pub_tfo_keys_applied);
		}
		us_publish_msg_free(m);
	}
}

unsigned us_engine_poll(struct us_engine *e, uint64_t now_ns)
{
	struct rte_mbuf *pkts[US_RX_BURST];
	uint16_t n = 0, local;
	unsigned handed = 0;

	/* One clock read per iteration: what tcp/ sees as "now" while it
	 * processes this burst. */
	if (now_ns > e->wheel.now_ns)
		e->wheel.now_ns = now_ns;
	if (unlikely(e->pub != NULL))
		engine_publish_input(e);
	e->polling = true;
	/* Frames other engines handed over first: they left their queues
	 * before what ours holds now (a migrated connection whose flow rule
	 * just moved here sees its forwarded frames before its direct ones). */
	if (e->ho != NULL)
		handed = engine_handoff_input(e);
	if (e->port.rx != NULL)
		n = e->port.rx(e->port.ctx, pkts, US_RX_BURST);
	if (unlikely(e->impair_rx != NULL))
		n = us_port_impair_rx(e, pkts, n, US_RX_BURST, now_ns);
	if (e->capture != NULL && n > 0)
		nic_capture_burst(e->capture, pkts, n);
	local = e->ho != NULL ? engine_steer(e, pkts, n) : n;
	for (uint16_t i = 0; i < local; i++)
		us_engine_input(e, pkts[i]);
	us_timer_run(&e->wheel, now_ns);
	us_telemetry_poll(e, e->id);
	us_engine_flush(e);
	e->polling = false;
	if (e->mig != NULL && e->mig->ndefer > 0)
		us_migrate_run_deferred(e);
	/* Rule changes after the burst went out: the NIC's rule engine never
	 * delays a segment. */
	if (e->rules != NULL)
		us_flowrule_apply(e->rules, US_FLOWRULE_BATCH);
	return n + handed;
}

void us_engine_set_flowrules(struct us_engine *e, struct us_flowrules *fr)
{
	e->rules = fr;
}

void us_engine_set_flowctl(struct us_engine *e, struct us_flowctl *ctl)
{
	e->ctl = ctl;
}

int us_engine_listen_rule(struct us_engine *e, uint16_t port)
{
	return e->ctl != NULL && e->ctl->started ? us_flowctl_listen(e->ctl, port) : 0;
}

void us_engine_unlisten_rule(struct us_engine *e, uint16_t port)
{
	if (e->ctl != NULL && e->ctl->started)
		us_flowctl_unlisten(e->ctl, port);
}

int us_engine_set_handoff(struct us_engine *e, struct us_handoff *ho)
{
	e->ho = ho;
	return e->mig == NULL ? us_migrate_init(e) : 0;
}

void us_engine_set_publish(struct us_engine *e, struct us_publish *p)
{
	e->pub = p;
	/* Only the writer draws and rotates the TFO secret. */
	if (p != NULL && p->writer != e->id && e->tcp != NULL)
		tcp_tfo_follow(e->tcp);
}

int us_engine_publish_tfo_keys(struct us_engine *e)
{
	struct tfo_keys k;

	if (e->pub == NULL || e->pub->writer != e->id || e->tcp == NULL)
		return -EINVAL;
	tcp_tfo_keys_get(e->tcp, &k);
	engine_tfo_rotated(e, &k);
	tfo_keys_wipe(&k);
	return 0;
}

void us_engine_advance(struct us_engine *e, uint64_t now_ns)
{
	us_timer_run(&e->wheel, now_ns);
	us_engine_flush(e);
}

void us_engine_announce(struct us_engine *e)
{
	us_arp_announce(e);
	us_engine_flush(e);
}

struct tcp_stack *us_engine_tcp(struct us_engine *e)
{
	return e->tcp;
}

struct us_timer_wheel *us_engine_wheel(struct us_engine *e)
{
	return &e->wheel;
}

uint32_t us_engine_addr(const struct us_engine *e)
{
	return e->addr;
}

void us_engine_print_stats(const struct us_engine *e, FILE *out)
{
	const struct tcp_stats *ts = e->tcp ? tcp_stack_stats(e->tcp) : NULL;

#define US_X_PRINT(name, desc) \
	fprintf(out, "%s %" PRIu64 "  # %s\n", #name, e->stats.name, desc);
	STACK_COUNTERS(US_X_PRINT)
#undef US_X_PRINT
	us_port_impair_print_stats(e, out);
	if (ts == NULL)
		return;
#define US_X_PRINT_TCP(name, desc) \
	fprintf(out, "tcp_%s %" PRIu64 "  # %s\n", #name, ts->name, desc);
	TCP_COUNTERS(US_X_PRINT_TCP)
#undef US_X_PRINT_TCP
	if (e->rules == NULL)
		return;
#define US_X_PRINT_FR(name, desc) \
	fprintf(out, "flow_%s %" PRIu64 "  # %s\n", #name, e->rules->stats.name, desc);
	US_FLOWRULE_COUNTERS(US_X_PRINT_FR)
#undef US_X_PRINT_FR
}

int64_t us_engine_counter(const struct us_engine *e, const char *name)
{
	const struct tcp_stats *ts;

#define US_X_FIND(n, desc) \
	if (strcmp(name, #n) == 0) \
		return (int64_t)e->stats.n;
	STACK_COUNTERS(US_X_FIND)
#undef US_X_FIND
	if (strncmp(name, "impair_", 7) == 0)
		return us_port_impair_counter(e, name);
	if (e->rules != NULL && strncmp(name, "flow_", 5) == 0) {
#define US_X_FIND_FR(n, desc) \
		if (strcmp(name + 5, #n) == 0) \
			return (int64_t)e->rules->stats.n;
		US_FLOWRULE_COUNTERS(US_X_FIND_FR)
#undef US_X_FIND_FR
	}
	/* TCP counters are named with a "tcp_" prefix, as printed. */
	if (strncmp(name, "tcp_", 4) != 0 || e->tcp == NULL)
		return -1;
	ts = tcp_stack_stats(e->tcp);
	name += 4;
#define US_X_FIND_TCP(n, desc) \
	if (strcmp(name, #n) == 0) \
		return (int64_t)ts->n;
	TCP_COUNTERS(US_X_FIND_TCP)
#undef US_X_FIND_TCP
	return -1;
}
