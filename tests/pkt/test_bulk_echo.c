/* Two stacks over tcp_pair (tests/pkt/tcp_pair.h) in virtual time, in the
 * shape of bench's bulk workload: the client (A) sends a 1 MiB request on a
 * keep-alive connection and reads nothing until all of it is with the
 * stack; the server (B) reads the whole request, then echoes 1 MiB back; the
 * client reads it and sends the next.  On a link without loss nothing may
 * wait for a timer: every request takes far less than a delayed ACK. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tests/common/test_eal.h"
#include "tests/pkt/tcp_pair.h"

#define BE_PORT 8080
#define BE_REQ (1u << 20)
#define BE_CHUNK 65536u
#define BE_REQUESTS 12u

static struct rte_mempool *g_pool;

struct echo {
	struct tp_pair *p;
	struct tcp_conn *cli, *srv;
	/* client */
	bool receiving;
	uint64_t sent, rcvd, t_start, worst_ns;
	unsigned done;
	/* server */
	uint64_t srv_rcvd, srv_left;
};

static uint8_t g_buf[BE_CHUNK];

static void cli_read(struct echo *x);

static void cli_send(struct echo *x)
{
	while (x->sent < BE_REQ) {
		ssize_t n = tcp_send(x->cli, g_buf, RTE_MIN((uint64_t)BE_CHUNK, BE_REQ - x->sent));

		if (n <= 0)
			return;
		x->sent += (uint64_t)n;
	}
	x->receiving = true; /* as us-loadgen: reads only once all is sent */
	cli_read(x);
}

static void cli_start(struct echo *x)
{
	x->t_start = x->p->now;
	x->sent = x->rcvd = 0;
	x->receiving = false;
	cli_send(x);
}

static void cli_read(struct echo *x)
{
	ssize_t n;

	while (x->receiving && (n = tcp_recv(x->cli, g_buf, sizeof(g_buf))) > 0) {
		x->rcvd += (uint64_t)n;
		if (x->rcvd < BE_REQ)
			continue;
		x->worst_ns = RTE_MAX(x->worst_ns, x->p->now - x->t_start);
		if (++x->done < BE_REQUESTS)
			cli_start(x);
		return;
	}
}

static void cli_connected(void *ctx, struct tcp_conn *c)
{
	(void)c;
	cli_start(ctx);
}

static void cli_readable(void *ctx, struct tcp_conn *c)
{
	(void)c;
	cli_read(ctx);
}

static void cli_writable(void *ctx, struct tcp_conn *c)
{
	struct echo *x = ctx;

	(void)c;
	if (!x->receiving)
		cli_send(x);
}

static void cli_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct echo *x = ctx;

	(void)c;
	(void)err;
	x->cli = NULL;
}

static void srv_push(struct echo *x)
{
	while (x->srv_left > 0) {
		ssize_t n = tcp_send(x->srv, g_buf, RTE_MIN((uint64_t)BE_CHUNK, x->srv_left));

		if (n <= 0)
			return;
		x->srv_left -= (uint64_t)n;
	}
}

static void srv_readable(void *ctx, struct tcp_conn *c)
{
	struct echo *x = ctx;
	ssize_t n;

	while ((n = tcp_recv(c, g_buf, sizeof(g_buf))) > 0) {
		x->srv_rcvd += (uint64_t)n;
		if (x->srv_rcvd == BE_REQ) { /* the whole request: echo it */
			x->srv_rcvd = 0;
			x->srv_left = BE_REQ;
			srv_push(x);
		}
	}
}

static void srv_writable(void *ctx, struct tcp_conn *c)
{
	(void)c;
	srv_push(ctx);
}

static void srv_accept(void *ctx, struct tcp_conn *c)
{
	struct echo *x = ctx;

	x->srv = c;
	tcp_conn_set_ctx(c, x);
	tcp_set_nodelay(c, true);
}

static void srv_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct echo *x = ctx;

	(void)c;
	(void)err;
	x->srv = NULL;
}

static bool be_done(void *ctx)
{
	const struct echo *x = ctx;

	return x->done == BE_REQUESTS || x->cli == NULL;
}

static void run_echo(const char *spec, const struct tcp_config *cfg, struct echo *x)
{
	static const struct tcp_callbacks srv_cb = {
		.on_accept = srv_accept, .on_readable = srv_readable,
		.on_writable = srv_writable, .on_closed = srv_closed,
	};
	static const struct tcp_callbacks cli_cb = {
		.on_connected = cli_connected, .on_readable = cli_readable,
		.on_writable = cli_writable, .on_closed = cli_closed,
	};
	struct nic_impair_params ab, ba;
	struct tp_pair p;
	char err[128];

	assert_int_equal(nic_impair_parse(spec, &ab, err, sizeof(err)), 0);
	ba = ab;
	*x = (struct echo){ .p = &p };
	assert_int_equal(tp_create(&p, g_pool, cfg, &ab, &ba), 0);
	assert_int_equal(tcp_listen(p.b, TP_IP_B, BE_PORT, 0, &srv_cb, x), 0);
	assert_int_equal(tcp_connect(p.a, TP_IP_B, BE_PORT, &cli_cb, x, &x->cli), 0);
	tcp_set_nodelay(x->cli, true);
	tp_run(&p, p.now + 60ull * 1000000000ull, be_done, x);
	print_message("%s: %u requests, worst %.3f ms, delayed ACKs %llu/%llu, "
		      "persist %llu/%llu, sws %llu/%llu\n", spec, x->done,
		      (double)x->worst_ns / 1e6,
		      (unsigned long long)tcp_stack_stats(p.a)->delayed_acks,
		      (unsigned long long)tcp_stack_stats(p.b)->delayed_acks,
		      (unsigned long long)tcp_stack_stats(p.a)->persist_probes,
		      (unsigned long long)tcp_stack_stats(p.b)->persist_probes,
		      (unsigned long long)tcp_stack_stats(p.a)->sws_overrides,
		      (unsigned long long)tcp_stack_stats(p.b)->sws_overrides);
	tp_destroy(&p);
	assert_int_equal(rte_mempool_in_use_count(g_pool), 0);
}

static void test_echo_no_timer_wait(void **state)
{
	struct tcp_config cfg;
	struct echo x;

	(void)state;
	tcp_config_defaults(&cfg);
	run_echo("rate=10gbit,delay=20us", &cfg, &x);
	assert_int_equal(x.done, BE_REQUESTS);
	assert_true(x.worst_ns < 20000000ull);
}

static int group_setup(void **state)
{
	(void)state;
	if (test_eal_start("bulk_echo") < 0)
		return -1;
	g_pool = rte_pktmbuf_pool_create("bulk_echo_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 (int)rte_socket_id());
	return g_pool != NULL ? 0 : -1;
}

static int group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(g_pool);
	rte_eal_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_echo_no_timer_wait),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
