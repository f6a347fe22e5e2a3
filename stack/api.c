/* stack/api.c: the public API (stack/userstack.h) over one engine.
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
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "config/config.h"
#include "nic/nic.h"
#include "stack/engine.h"
#include "stack/idle.h"
#include "stack/socket_priv.h"
#include "stack/userstack.h"
#include "tcp/fastopen.h"
#include "tcp/tcp.h"

/* Types */

#define API_MAX_LISTENERS 64

struct api_listener {
	struct us_tcp_handlers h;
	void *ctx;
};

struct us_stack {
	struct us_config cfg;
	struct rte_mempool *pool;
	struct nic_port port;
	struct us_engine *engine;
	struct us_sock_table *socks; /* the engine's descriptors (us_socket.h) */
	struct us_idle idle;          /* [engine] idle back-off */
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
	return api_now_ns(ctx);
}

/* One loop iteration; an idle engine backs off (stack/idle.h). */
static void api_poll(struct us_stack *st)
{
	unsigned frames = us_engine_poll(st->engine, api_now_ns(st));
	uint64_t ns = us_idle_next(&st->idle, frames);

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

/* Port glue: the engine sees nic/ through us_port_ops */

static uint16_t api_port_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	return nic_rx(ctx, 0, pkts, n);
}

static uint16_t api_port_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	return nic_tx(ctx, 0, pkts, n);
}

/* Life cycle */

static int api_start(struct us_stack *st, const char *config_path, const char *argv0)
{
	char err[512];

	if (us_config_load(config_path, &st->cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "userstack: %s\n", err);
		return -EINVAL;
	}
	int rc = nic_eal_init(&st->cfg, argv0);
	if (rc < 0)
		return rc;
	st->eal_up = true;
	st->tsc_hz = rte_get_tsc_hz();
	st->idle = (struct us_idle){ .max_ns = (uint64_t)st->cfg.idle_sleep_max_us * 1000u,
				     .spin = st->cfg.idle_spin };
	st->pool = nic_pool_create(&st->cfg, "us_pool0");
	if (st->pool == NULL) {
		fprintf(stderr, "userstack: cannot create mbuf pool of %u mbufs: %s "
			"(lower [port] mbufs or give EAL more memory)\n",
			st->cfg.mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	rc = nic_port_open(&st->cfg, st->pool, 1, &st->port, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "userstack: %s: [port] device = '%s': %s\n", st->cfg.path,
			st->cfg.device, err);
		return rc;
	}
	struct us_port_ops ops = {
		.rx = api_port_rx, .tx = api_port_tx, .ctx = &st->port,
		.mac = st->port.mac, .mtu = st->port.mtu,
		.tx_ip_csum = st->port.tx_ip_csum, .tx_l4_csum = st->port.tx_l4_csum,
		.rx_csum = st->port.rx_csum,
	};
	st->engine = us_engine_create(0, &st->cfg, st->pool, &ops, api_now_ns(st));
	if (st->engine == NULL) {
		rc = -errno;
		fprintf(stderr, "userstack: cannot create engine: %s\n", strerror(errno));
		return rc;
	}
	(void)us_engine_telemetry(st->engine, &st->port); /* optional: works without */
	struct us_sock_driver drv = { .now_ns = api_drv_now, .poll = api_drv_poll, .ctx = st };
	/* A descriptor per connection the engine allows, plus listeners and
	 * epoll instances. */
	unsigned cap = st->cfg.tcp.max_conns + 1024u;
	st->socks = us_sock_table_create(st->engine, 0,
					 cap < US_FD_MAX_PER_TABLE ? cap : US_FD_MAX_PER_TABLE, &drv);
	if (st->socks == NULL) {
		rc = -errno;
		fprintf(stderr, "userstack: cannot create the descriptor table: %s\n",
			strerror(errno));
		return rc;
	}
	us_sock_table_bind_thread(st->socks);
	struct in_addr a = { .s_addr = htonl(st->cfg.addr) };
	inet_ntop(AF_INET, &a, st->addr_text, sizeof(st->addr_text));
	us_engine_announce(st->engine);
	us_engine_flush(st->engine);
	return 0;
}

struct us_stack *us_init(const char *config_path, const char *argv0)
{
	struct us_stack *st = calloc(1, sizeof(*st));
	if (st == NULL)
		return NULL;
	int rc = api_start(st, config_path, argv0 ? argv0 : "userstack");
	if (rc < 0) {
		us_fini(st);
		errno = -rc;
		return NULL;
	}
	return st;
}

int us_run(struct us_stack *st, volatile int *stop)
{
	if (st == NULL || st->engine == NULL) {
		errno = EINVAL;
		return -1;
	}
	while (!*stop)
		api_poll(st);
	return 0;
}

/* Let closes the application started (FINs, RSTs) reach the wire before the
 * port stops: poll until no connection is left short of TIME_WAIT's end, for
 * at most a fraction of a second. */
static void api_drain(struct us_stack *st)
{
	uint64_t until = api_now_ns(st) + US_MS(200);
	while (tcp_conn_count(us_engine_tcp(st->engine)) > 0 && api_now_ns(st) < until)
		us_engine_poll(st->engine, api_now_ns(st));
	us_engine_flush(st->engine);
}

void us_fini(struct us_stack *st)
{
	if (st == NULL)
		return;
	/* Sockets first: their closes queue FINs that the drain sends. */
	us_sock_table_destroy(st->socks);
	st->socks = NULL;
	if (st->engine != NULL) {
		api_drain(st);
		us_engine_destroy(st->engine);
	}
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

void us_print_stats(const struct us_stack *st, FILE *out)
{
	fprintf(out, "nic.rx_pkts %lu\nnic.tx_pkts %lu\nnic.tx_dropped_full %lu\n",
		(unsigned long)st->port.stats.rx_pkts, (unsigned long)st->port.stats.tx_pkts,
		(unsigned long)st->port.stats.tx_dropped_full);
	if (st->engine != NULL) {
		const struct tfo_counters *tfo = tcp_stack_tfo_stats(us_engine_tcp(st->engine));

		us_engine_print_stats(st->engine, out);
#define API_X_PRINT_TFO(name, desc) \
	fprintf(out, "tfo_%s %" PRIu64 "  # %s\n", #name, tfo->name, desc);
		TFO_COUNTERS(API_X_PRINT_TFO)
#undef API_X_PRINT_TFO
		/* Gauges at the time of printing, for leak checks after a run (floods:
		 * the pool back near its RX-ring baseline, no TCB left behind). */
		fprintf(out, "mbufs_in_use %u  # mbufs taken from the pool now (RX ring included)\n",
			st->pool != NULL ? rte_mempool_in_use_count(st->pool) : 0u);
		fprintf(out, "tcp_conns_now %u  # connection TCBs now (listeners excluded)\n",
			tcp_conn_count(us_engine_tcp(st->engine)));
	}
	if (st->socks != NULL)
		us_sock_print_stats(st->socks, out);
	fprintf(out, "idle_sleeps %lu # polls that found nothing and slept ([engine])\n"
		"idle_slept_us %lu # time slept by the idle back-off\n",
		(unsigned long)st->idle.sleeps, (unsigned long)(st->idle.slept_ns / 1000u));
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

int us_tcp_listen(struct us_stack *st, uint16_t port, const struct us_tcp_handlers *h,
		  void *ctx)
{
	if (st == NULL || st->engine == NULL || h == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (st->nlisteners == API_MAX_LISTENERS) {
		errno = ENOBUFS;
		return -1;
	}
	struct api_listener *l = &st->listeners[st->nlisteners];
	l->h = *h;
	l->ctx = ctx;
	int rc = tcp_listen(us_engine_tcp(st->engine), st->cfg.addr, port, &api_tcp_callbacks, l);
	if (rc == 0)
		st->nlisteners++;
	return api_errno(rc);
}

int us_listen_set_fastopen(struct us_stack *st, uint16_t port, unsigned qlen)
{
	if (st == NULL || st->engine == NULL) {
		errno = EINVAL;
		return -1;
	}
	return api_errno(tcp_set_fastopen(us_engine_tcp(st->engine), port, qlen));
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
	return st->engine ? tcp_conn_count(us_engine_tcp(st->engine)) : 0;
}
