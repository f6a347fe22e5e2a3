/* Two stacks in one process (tests/pkt/tcp_pair.h) over the seeded link
 * emulator, in virtual time: a bulk transfer from the server (B) to the
 * client (A) must arrive byte-exact and close cleanly, for every recovery
 * algorithm, with 1% and 3% random loss and with Gilbert-Elliott bursts,
 * each with 1% reordering, in both directions (ACKs are lost too); PRR
 * also with Tail Loss Probe on, and with the undo of spurious reductions on.
 *
 * Suite pkt: 4 MB per transfer.  With an argument (MB), e.g. 100 in the
 * long suite, every transfer has that size. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tests/common/test_eal.h"
#include "tests/pkt/tcp_pair.h"

#define XF_PORT 8080
#define XF_CHUNK 16384

static struct rte_mempool *g_pool;
static uint64_t g_size = 4u << 20;

struct xfer {
	uint64_t size, sent, rcvd;
	bool eof, bad;
	int cli_err;
	uint64_t bad_off;
	struct tcp_conn *srv, *cli;
	struct tp_pair *p;
};

static void srv_push(struct xfer *x)
{
	uint8_t buf[XF_CHUNK];

	while (x->srv != NULL && x->sent < x->size) {
		size_t n = (size_t)RTE_MIN((uint64_t)sizeof(buf), x->size - x->sent);
		ssize_t k;

		for (size_t i = 0; i < n; i++)
			buf[i] = tp_pattern(x->sent + i);
		k = tcp_send(x->srv, buf, n);
		if (k <= 0)
			return;
		x->sent += (uint64_t)k;
	}
	if (x->srv != NULL && x->sent == x->size) {
		tcp_close(x->srv);
		x->srv = NULL;
	}
}

static void srv_accept(void *ctx, struct tcp_conn *c)
{
	struct xfer *x = ctx;

	x->srv = c;
	tcp_conn_set_ctx(c, x);
	srv_push(x);
}

static void srv_writable(void *ctx, struct tcp_conn *c)
{
	(void)c;
	srv_push(ctx);
}

static void srv_readable(void *ctx, struct tcp_conn *c)
{
	uint8_t buf[256];

	(void)ctx;
	while (tcp_recv(c, buf, sizeof(buf)) > 0)
		;
}

static void srv_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct xfer *x = ctx;

	(void)c;
	(void)err;
	x->srv = NULL;
}

static void cli_readable(void *ctx, struct tcp_conn *c)
{
	struct xfer *x = ctx;
	uint8_t buf[XF_CHUNK];
	ssize_t n;

	while ((n = tcp_recv(c, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && !x->bad; i++) {
			if (buf[i] != tp_pattern(x->rcvd + (uint64_t)i)) {
				x->bad = true;
				x->bad_off = x->rcvd + (uint64_t)i;
			}
		}
		x->rcvd += (uint64_t)n;
	}
	if (n == 0 && !x->eof) {
		x->eof = true;
		tcp_close(c);
		x->cli = NULL;
	}
}

static void cli_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct xfer *x = ctx;

	(void)c;
	x->cli_err = err;
	x->cli = NULL;
}

static bool xf_done(void *ctx)
{
	struct xfer *x = ctx;

	return (x->eof || x->cli_err != 0) && tcp_conn_count(x->p->a) == 0 &&
	       tcp_conn_count(x->p->b) == 0;
}

/* What runs besides the recovery algorithm, on both stacks: Tail Loss
 * Probe (RFC 8985 7), the undo of spurious reductions (tcp/undo.h). */
struct xf_mode {
	bool tlp, undo;
};

static void run_transfer(enum tcp_rec_alg alg, struct xf_mode mo, const char *spec,
			 uint64_t seed)
{
	static const struct tcp_callbacks srv_cb = {
		.on_accept = srv_accept, .on_readable = srv_readable,
		.on_writable = srv_writable, .on_closed = srv_closed,
	};
	static const struct tcp_callbacks cli_cb = {
		.on_readable = cli_readable, .on_closed = cli_closed,
	};
	struct nic_impair_params ab, ba;
	struct tcp_config cfg;
	struct tp_pair p;
	struct xfer x = { .size = g_size, .p = &p };
	char err[128];
	const struct tcp_stats *st;

	assert_int_equal(nic_impair_parse(spec, &ab, err, sizeof(err)), 0);
	ba = ab;
	ab.seed = seed;
	ba.seed = seed * 7 + 1;
	tcp_config_defaults(&cfg);
	cfg.recovery = alg;
	cfg.tlp = mo.tlp;
	cfg.undo = mo.undo;
	cfg.time_wait_ms = 100;
	assert_int_equal(tp_create(&p, g_pool, &cfg, &ab, &ba), 0);
	assert_int_equal(tcp_listen(p.b, TP_IP_B, XF_PORT, 0, &srv_cb, &x), 0);
	assert_int_equal(tcp_connect(p.a, TP_IP_B, XF_PORT, &cli_cb, &x, &x.cli), 0);
	if (!tp_run(&p, p.now + 3600ull * 1000000000ull, xf_done, &x))
		fail_msg("%s %s: not done after an hour of virtual time (%llu of %llu bytes)",
			 tcp_rec_alg_name(alg), spec, (unsigned long long)x.rcvd,
			 (unsigned long long)x.size);
	st = tcp_stack_stats(p.b);
	print_message("%-11s %-4s %-4s %-40s %8.1f s  rexmit %6llu  episodes %5llu  rto %4llu  "
		      "tlp %4llu  undone %llu/%llu/%llu/%llu\n",
		      tcp_rec_alg_name(alg), mo.tlp ? "tlp" : "", mo.undo ? "undo" : "", spec,
		      (double)(p.now - 1000000000ull) / 1e9, (unsigned long long)st->retrans_segs,
		      (unsigned long long)st->recovery_episodes,
		      (unsigned long long)st->rto_fired, (unsigned long long)st->tlp_probes,
		      (unsigned long long)st->undo_dsack_recovery,
		      (unsigned long long)st->undo_ts_recovery,
		      (unsigned long long)st->undo_ts_rto,
		      (unsigned long long)st->undo_dsack_rto);
	if (x.bad)
		fail_msg("byte %llu differs", (unsigned long long)x.bad_off);
	assert_int_equal(x.cli_err, 0);
	assert_true(x.eof);
	assert_true(x.rcvd == x.size);
	assert_int_equal(st->conns_timed_out, 0);
	assert_true(st->recovery_episodes > 0); /* the loss was recovered from */
	assert_true(nic_impair_stats(p.ab.imp)->dropped_random +
		    nic_impair_stats(p.ab.imp)->dropped_burst +
		    nic_impair_stats(p.ba.imp)->dropped_random +
		    nic_impair_stats(p.ba.imp)->dropped_burst > 0);
	tp_destroy(&p);
	assert_int_equal(rte_mempool_in_use_count(g_pool), 0);
}

#define XF_RANDOM1 "delay=5ms,loss=1%,reorder=1%,reorder_gap=2ms"
#define XF_RANDOM3 "delay=5ms,loss=3%,reorder=1%,reorder_gap=2ms"
#define XF_BURSTY "delay=5ms,ge=0.005:0.3:0.8:0,reorder=1%,reorder_gap=2ms"

static void xf_all(enum tcp_rec_alg alg, struct xf_mode mo)
{
	run_transfer(alg, mo, XF_RANDOM1, 11);
	run_transfer(alg, mo, XF_RANDOM3, 12);
	run_transfer(alg, mo, XF_BURSTY, 13);
}

static void test_transfer_prr(void **state)
{
	(void)state;
	xf_all(TCP_REC_PRR, (struct xf_mode){ 0 });
}

static void test_transfer_prr_crb(void **state)
{
	(void)state;
	xf_all(TCP_REC_PRR_CRB, (struct xf_mode){ 0 });
}

static void test_transfer_prr_ssrb(void **state)
{
	(void)state;
	xf_all(TCP_REC_PRR_SSRB, (struct xf_mode){ 0 });
}

static void test_transfer_rfc6675(void **state)
{
	(void)state;
	xf_all(TCP_REC_RFC6675, (struct xf_mode){ 0 });
}

static void test_transfer_ratehalving(void **state)
{
	(void)state;
	xf_all(TCP_REC_RATEHALVING, (struct xf_mode){ 0 });
}

static void test_transfer_prr_tlp(void **state)
{
	(void)state;
	xf_all(TCP_REC_PRR, (struct xf_mode){ .tlp = true });
}

static void test_transfer_prr_undo(void **state)
{
	(void)state;
	xf_all(TCP_REC_PRR, (struct xf_mode){ .undo = true });
}

static int group_setup(void **state)
{
	(void)state;
	if (test_eal_start("xfer") < 0)
		return -1;
	g_pool = rte_pktmbuf_pool_create("xfer_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
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

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transfer_prr),
		cmocka_unit_test(test_transfer_prr_crb),
		cmocka_unit_test(test_transfer_prr_ssrb),
		cmocka_unit_test(test_transfer_rfc6675),
		cmocka_unit_test(test_transfer_ratehalving),
		cmocka_unit_test(test_transfer_prr_tlp),
		cmocka_unit_test(test_transfer_prr_undo),
	};

	if (argc > 1)
		g_size = strtoull(argv[1], NULL, 10) << 20;
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
