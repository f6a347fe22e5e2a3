/* stack/engine/engine.c: the per-lcore engine: create/destroy, the loop iteration,
 * buffered TX, counters. */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "stack/engine/engine_priv.h"
#include "stack/engine/handoff.h"
#include "stack/engine/publish.h"
#include "stack/engine/stage_capture.h"
#include "stack/engine/stage_impair.h"
#include "stack/engine/telemetry.h"

/* tcp/ hands a segment at its TCP header: wrap it in IPv4 (DF set: RFC 1191
 * path MTU discovery, TCP never needs us to fragment) or IPv6 (never
 * fragmented either: RFC 8201, Packet Too Big lowers the MSS), with the
 * connection's flow label. */
static void engine_tcp_output(void *ctx, struct rte_mbuf *m, const struct tcp_out_addr *a)
{
	struct us_engine *e = ctx;

	if (us_in6_is_v4mapped(&a->dst))
		us_ip_output_tos(&e->net, m, us_in6_v4(&a->src), us_in6_v4(&a->dst), IPPROTO_TCP,
				 (a->df_off ? 0 : US_IP_DF) | US_IP_TCP_CSUM, a->tos,
				 a->ttl);
	else
		us_ip6_output_flow(&e->net, m, &a->src, &a->dst, IPPROTO_TCP, 0,
				   US_IP6_TCP_CSUM | US_IP6_NO_FRAG, a->flow_label);
}

/* The network layers' TX buffer holds US_TX_FLUSH frames or more: to the
 * port now.  [impair] tx takes its frames at the end of the poll only,
 * unless the buffer is full. */
static void engine_tx_drain(void *ctx, bool full)
{
	struct us_engine *e = ctx;

	if (full || e->stages.tx_flush_at <= US_TX_FLUSH)
		us_engine_flush(e);
}

/* Active opens: only source ports whose replies hash to this engine's queue
 * (any port with one engine). */
static bool engine_port_ok(void *ctx, const struct us_in6 *lip, const struct us_in6 *rip,
			   uint16_t rport, uint16_t lport)
{
	return us_handoff_engine_port_ok(ctx, lip, rip, rport, lport);
}

/* Connections entering or leaving the table: the stages that follow them
 * (a flow rule per connection, the end of a migration). */
static void engine_conn_event(void *ctx, const struct us_in6 *lip, uint16_t lport,
			      const struct us_in6 *rip, uint16_t rport, bool open)
{
	struct us_engine *e = ctx;
	struct us_stages *ss = &e->stages;

	for (unsigned i = 0; i < ss->nhook[US_HOOK_CONN]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_CONN, i);

		s->ops->conn(e, s->ctx, lip, lport, rip, rport, open);
	}
}

/* IPv6 keeps the path MTUs Packet Too Big taught it (stack/net/route6.c);
 * IPv4 has no such cache (frag-needed lowers the one connection's MSS). */
static uint32_t engine_path_mtu(void *ctx, const struct us_in6 *dst)
{
	struct us_engine *e = ctx;

	return us_in6_is_v4mapped(dst) || !e->net.ip6_on ? 0 : us_ip6_path_mtu(&e->net, dst);
}

static void engine_negative_advice(void *ctx, const struct us_in6 *dst)
{
	struct us_engine *e = ctx;

	us_net_negative_advice(&e->net, dst);
}

static void engine_tfo_rotated(void *ctx, const struct tfo_keys *k)
{
	us_publish_tfo_rotated(ctx, k);
}

static int engine_tcp_create(struct us_engine *e)
{
	struct tcp_env env = {
		.pool = e->pool,
		.wheel = &e->wheel,
		.local_ip = us_in6_of_v4(e->net.addr),
		.mtu = e->net.port.mtu,
		.l4_csum_by_ip = e->net.port.tx_l4_csum,
		.gso_max = e->net.gso ? US_GSO_MAX_PAYLOAD : 0,
		.output = engine_tcp_output,
		.ctx = e,
		.port_ok = engine_port_ok,
		.conn_event = engine_conn_event,
		.path_mtu = engine_path_mtu,
		.negative_advice = engine_negative_advice,
		.tfo_keys_rotated = engine_tfo_rotated,
	};

	/* Active opens over IPv6 leave from the configured address (slot 1;
	 * tentative until DAD ends, which us_init waits for). */
	if (e->net.ip6_on && us_ip6_addr_at(&e->net, 1, &env.local_ip6) == US_IP6_ADDR_NONE)
		env.local_ip6 = (struct us_in6){ 0 };
	e->tcp = tcp_stack_create(&env, &e->cfg.tcp);
	if (e->tcp == NULL)
		return -(errno ? errno : ENOMEM);
	us_net_set_tcp(&e->net, e->tcp);
	return 0;
}

static void engine_free(struct us_engine *e)
{
	us_telemetry_detach(e);
	if (e->tcp)
		tcp_stack_destroy(e->tcp);
	/* After TCP: its last connection events have reached them (every flow
	 * rule goes). */
	us_stages_destroy(&e->stages, e);
	/* Last: the stages above held fragments of its indirect pool. */
	us_net_fini(&e->net);
	free(e);
}

/* What the network layers need from the engine, handed over once. */
static int engine_net_init(struct us_engine *e)
{
	struct us_net_env env = {
		.id = e->id,
		.pool = e->pool,
		.wheel = &e->wheel,
		.port = {
			.mac = e->port.mac,
			.mtu = e->port.mtu,
			.tx_ip_csum = e->port.tx_ip_csum,
			.tx_l4_csum = e->port.tx_l4_csum,
			.rx_csum = e->port.rx_csum,
			.tso = e->port.tso,
			.lro = e->port.lro,
		},
		.tx_drain = engine_tx_drain,
		.tx_ctx = e,
	};

	return us_net_init(&e->net, &env, &e->cfg);
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
	e->pool = pool;
	e->port = *port;
	us_timer_wheel_init(&e->wheel, US_WHEEL_TICK_NS, now_ns);
	us_stages_init(&e->stages, US_TX_FLUSH);

	rc = engine_net_init(e);
	if (rc == 0)
		rc = engine_tcp_create(e);
	if (rc == 0)
		rc = us_capture_attach(e);
	if (rc == 0)
		rc = us_impair_attach(e);
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

void us_engine_flush(struct us_engine *e)
{
	/* The wire stages run even with nothing new: one may release what is
	 * due. */
	uint16_t n = us_stages_tx(&e->stages, e, e->net.tx, e->net.ntx);

	e->net.ntx = 0;
	if (n == 0)
		return;
	/* port.tx consumes all of them, sent or not. */
	e->port.tx(e->port.ctx, e->net.tx, n);
}

void us_engine_input(struct us_engine *e, struct rte_mbuf *m)
{
	us_eth_input(&e->net, m, US_NET_RX_QUEUE);
}

void us_engine_input_handed(struct us_engine *e, struct rte_mbuf *m)
{
	/* An ARP frame handed over is another engine's copy: learn only. */
	us_eth_input(&e->net, m, US_NET_RX_HANDED);
}

unsigned us_engine_poll(struct us_engine *e, uint64_t now_ns)
{
	struct rte_mbuf *pkts[US_RX_BURST];
	uint16_t n = 0, local;
	unsigned handed;

	/* One clock read per iteration: what tcp/ sees as "now" while it
	 * processes this burst. */
	if (now_ns > e->wheel.now_ns)
		e->wheel.now_ns = now_ns;
	e->polling = true;
	/* Published state, then what other engines handed over, before our
	 * own queue (stage.h). */
	handed = us_stages_input(&e->stages, e);
	if (e->port.rx != NULL)
		n = e->port.rx(e->port.ctx, pkts, US_RX_BURST);
	n = us_stages_rx(&e->stages, e, pkts, n, US_RX_BURST, now_ns);
	local = us_stages_steer(&e->stages, e, pkts, n);
	/* After the stages: captures and the emulated wire see the frames as
	 * they were on the wire, and only this engine's are coalesced. */
	_Static_assert(US_RX_BURST <= US_GRO_BURST, "rte_gro's table holds a whole burst");
	if (e->net.gro)
		local = us_gro(&e->net, pkts, local);
	for (uint16_t i = 0; i < local; i++)
		us_engine_input(e, pkts[i]);
	us_timer_run(&e->wheel, now_ns);
	us_telemetry_poll(e, e->id);
	us_engine_flush(e);
	e->polling = false;
	us_stages_after(&e->stages, e);
	return n + handed;
}

uint64_t us_engine_next_timer(struct us_engine *e)
{
	return us_timer_next(&e->wheel);
}

int us_engine_listen_rule(struct us_engine *e, uint16_t port)
{
	struct us_stages *ss = &e->stages;
	unsigned i;
	int rc = 0;

	for (i = 0; rc == 0 && i < ss->nhook[US_HOOK_LISTEN]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_LISTEN, i);

		rc = s->ops->listen(e, s->ctx, port);
	}
	/* All or nothing: the stages that took it let go again. */
	for (i = rc == 0 ? 0 : i - 1; i > 0; i--) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_LISTEN, i - 1);

		s->ops->unlisten(e, s->ctx, port);
	}
	return rc;
}

void us_engine_unlisten_rule(struct us_engine *e, uint16_t port)
{
	struct us_stages *ss = &e->stages;

	for (unsigned i = 0; i < ss->nhook[US_HOOK_LISTEN]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_LISTEN, i);

		s->ops->unlisten(e, s->ctx, port);
	}
}

void us_engine_advance(struct us_engine *e, uint64_t now_ns)
{
	us_timer_run(&e->wheel, now_ns);
	us_engine_flush(e);
}

void us_engine_announce(struct us_engine *e)
{
	us_arp_announce(&e->net);
	/* IPv6 addresses are announced once DAD has passed them (at once
	 * with [ip6] dad = off). */
	if (e->net.ip6_on)
		us_ip6_addr_start(&e->net);
	us_engine_flush(e);
}

int us_engine_dad_status(const struct us_engine *e, char *dup, size_t len)
{
	struct us_in6 a;
	bool done;

	if (!e->net.ip6_on)
		return 0;
	if (us_ip6_addr_dad_result(&e->net, &done))
		return done ? 0 : -EAGAIN;
	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		if (us_ip6_addr_at(&e->net, i, &a) != US_IP6_ADDR_DUPLICATE)
			continue;
		if (dup != NULL && inet_ntop(AF_INET6, a.b, dup, (socklen_t)len) == NULL)
			snprintf(dup, len, "?");
		break;
	}
	return -EADDRINUSE;
}

void us_engine_adopt_addrs(struct us_engine *e, const struct us_engine *from)
{
	if (e->net.ip6_on)
		us_ip6_addr_adopt(&e->net, &from->net);
}

struct tcp_stack *us_engine_tcp(struct us_engine *e)
{
	return e->tcp;
}

struct us_timer_wheel *us_engine_wheel(struct us_engine *e)
{
	return &e->wheel;
}

struct us_net *us_engine_net(struct us_engine *e)
{
	return &e->net;
}

struct rte_mempool *us_engine_pool(const struct us_engine *e)
{
	return e->pool;
}

const struct tcp_config *us_engine_tcp_config(const struct us_engine *e)
{
	return &e->cfg.tcp;
}

uint32_t us_engine_addr(const struct us_engine *e)
{
	return e->net.addr;
}

void us_engine_print_stats(const struct us_engine *e, FILE *out)
{
	const struct tcp_stats *ts = e->tcp ? tcp_stack_stats(e->tcp) : NULL;
	struct tcp_state_gauges g;

#define US_X_PRINT(name, desc) \
	fprintf(out, "%s %" PRIu64 "  # %s\n", #name, e->net.stats.name, desc);
	STACK_COUNTERS(US_X_PRINT)
#undef US_X_PRINT
	us_stages_print(&e->stages, true, out);
	if (ts == NULL)
		return;
#define US_X_PRINT_TCP(name, desc) \
	fprintf(out, "tcp_%s %" PRIu64 "  # %s\n", #name, ts->name, desc);
	TCP_COUNTERS(US_X_PRINT_TCP)
#undef US_X_PRINT_TCP
	tcp_stack_state_gauges(e->tcp, &g);
#define US_X_PRINT_GAUGE(name, state, desc) \
	fprintf(out, "tcbs_%s %" PRIu32 "  # %s\n", #name, g.name, desc);
	TCP_STATE_GAUGES(US_X_PRINT_GAUGE)
#undef US_X_PRINT_GAUGE
	us_stages_print(&e->stages, false, out);
}

/* The state gauges, named "tcbs_<state>" as printed; -1 if unknown. */
static int64_t engine_gauge(const struct us_engine *e, const char *name)
{
	struct tcp_state_gauges g;

	if (strncmp(name, "tcbs_", 5) != 0 || e->tcp == NULL)
		return -1;
	tcp_stack_state_gauges(e->tcp, &g);
	name += 5;
#define US_X_FIND_GAUGE(n, state, desc) \
	if (strcmp(name, #n) == 0) \
		return (int64_t)g.n;
	TCP_STATE_GAUGES(US_X_FIND_GAUGE)
#undef US_X_FIND_GAUGE
	return -1;
}

int64_t us_engine_counter(const struct us_engine *e, const char *name)
{
	const struct tcp_stats *ts;
	int64_t v;

#define US_X_FIND(n, desc) \
	if (strcmp(name, #n) == 0) \
		return (int64_t)e->net.stats.n;
	STACK_COUNTERS(US_X_FIND)
#undef US_X_FIND
	if ((v = us_stages_counter(&e->stages, name)) >= 0)
		return v;
	if ((v = engine_gauge(e, name)) >= 0)
		return v;
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
