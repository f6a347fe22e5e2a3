/* tests/unit/nic_impair: the seeded link emulator stage and its spec parser.
 *
 * Virtual time only: each test feeds packets at chosen arrival times and
 * drains them one at a time at nic_impair_next_ns(), so the recorded
 * departure times are the stage's own.  EAL is started for mbufs only.
 * Statistical bounds are wide (about 10 sigma): a failure means a wrong model,
 * not bad luck, and the seeds are fixed anyway.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_errno.h>
#include <rte_mempool.h>

#include "nic/impair.h"
#include "tests/common/test_eal.h"

#define MS 1000000ull
#define US 1000ull

static struct rte_mempool *pool;

/* One delivered packet: its tag and when it left. */
struct fate {
	uint32_t id;
	uint64_t dep_ns;
};

struct run {
	struct fate *out;
	size_t n, cap;
};

static struct rte_mbuf *pkt_make(uint32_t id, uint16_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *d;

	assert_non_null(m);
	d = rte_pktmbuf_append(m, len);
	assert_non_null(d);
	memset(d, 0xab, len);
	memcpy(d, &id, sizeof(id));
	return m;
}

static uint32_t pkt_id(const struct rte_mbuf *m)
{
	uint32_t id;

	memcpy(&id, rte_pktmbuf_mtod(m, const char *), sizeof(id));
	return id;
}

/* Delivers, one by one, every packet due by t, recording its fate. */
static void drain_until(struct nic_impair *imp, struct run *r, uint64_t t)
{
	struct rte_mbuf *m;
	uint64_t next;

	while ((next = nic_impair_next_ns(imp)) <= t) {
		assert_int_equal(nic_impair_dequeue(imp, &m, 1, next), 1);
		assert_true(r->n < r->cap);
		r->out[r->n++] = (struct fate){ .id = pkt_id(m), .dep_ns = next };
		rte_pktmbuf_free(m);
	}
}

/* Packet i of n (len bytes) arrives at i * gap_ns; everything is drained. */
static void run_feed(struct nic_impair *imp, struct run *r, uint32_t n, uint64_t gap_ns,
		     uint16_t len)
{
	for (uint32_t i = 0; i < n; i++) {
		struct rte_mbuf *m;

		drain_until(imp, r, i * gap_ns);
		m = pkt_make(i, len);
		nic_impair_enqueue(imp, &m, 1, i * gap_ns);
	}
	drain_until(imp, r, UINT64_MAX - 1);
	assert_int_equal(nic_impair_pending(imp), 0);
}

static struct nic_impair *stage_from(const char *spec)
{
	struct nic_impair_params p;
	char err[256];
	struct nic_impair *imp;

	if (nic_impair_parse(spec, &p, err, sizeof(err)) != 0)
		fail_msg("%s: %s", spec, err);
	imp = nic_impair_create(&p);
	assert_non_null(imp);
	return imp;
}

static void run_init(struct run *r, size_t cap)
{
	r->out = calloc(cap, sizeof(*r->out));
	assert_non_null(r->out);
	r->n = 0;
	r->cap = cap;
}

static void run_done(struct run *r, struct nic_impair *imp)
{
	free(r->out);
	nic_impair_destroy(imp);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static const char *busy_spec(const char *seed)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "delay=2ms,jitter=500us,loss=3%%,ge=0.02:0.3:1:0,"
		 "reorder=5%%,reorder_gap=1ms,dup=4%%,rate=40mbit,queue=8kb,seed=%s", seed);
	return buf;
}

static void test_determinism(void **state)
{
	struct nic_impair *a = stage_from(busy_spec("42")), *b = stage_from(busy_spec("42"));
	struct nic_impair *c = stage_from(busy_spec("43"));
	struct run ra, rb, rc;
	(void)state;

	run_init(&ra, 8000);
	run_init(&rb, 8000);
	run_init(&rc, 8000);
	run_feed(a, &ra, 4000, 50 * US, 300);
	run_feed(b, &rb, 4000, 50 * US, 300);
	run_feed(c, &rc, 4000, 50 * US, 300);
	assert_int_equal(ra.n, rb.n);
	assert_memory_equal(ra.out, rb.out, ra.n * sizeof(*ra.out));
	assert_memory_equal(nic_impair_stats(a), nic_impair_stats(b),
			    sizeof(struct nic_impair_stats));
	/* Every impairment fired, so the comparison covered all of them. */
	assert_true(nic_impair_stats(a)->dropped_random > 0);
	assert_true(nic_impair_stats(a)->dropped_burst > 0);
	assert_true(nic_impair_stats(a)->dropped_queue_full > 0);
	assert_true(nic_impair_stats(a)->duplicated > 0);
	assert_true(nic_impair_stats(a)->reordered > 0);
	assert_true(ra.n != rc.n || memcmp(ra.out, rc.out, ra.n * sizeof(*ra.out)) != 0);
	run_done(&ra, a);
	run_done(&rb, b);
	run_done(&rc, c);
}

static void test_bernoulli_rate(void **state)
{
	struct nic_impair *imp = stage_from("loss=1%,seed=7");
	const struct nic_impair_stats *st = nic_impair_stats(imp);
	struct run r;
	(void)state;

	run_init(&r, 100000);
	run_feed(imp, &r, 100000, 10 * US, 64);
	assert_in_range(st->dropped_random, 700, 1300);
	assert_int_equal(st->dropped_burst, 0);
	assert_int_equal(st->passed + st->dropped_random, 100000);
	assert_int_equal(r.n, st->passed);
	run_done(&r, imp);
}

/* Mean length of runs of consecutive missing ids among n; *lost gets the
 * number of missing ids.  r->out must be in id order (no reordering). */
static double mean_burst(const struct run *r, uint32_t n, uint32_t *lost)
{
	uint32_t expect = 0, bursts = 0;

	*lost = 0;
	for (size_t i = 0; i <= r->n; i++) {
		uint32_t id = i < r->n ? r->out[i].id : n;

		assert_true(id >= expect);
		if (id > expect) {
			bursts++;
			*lost += id - expect;
		}
		expect = id + 1;
	}
	return bursts ? (double)*lost / bursts : 0.0;
}

static void test_gilbert_elliott_bursts(void **state)
{
	/* p = 0.01, r = 0.25: bursts of mean 1/r = 4, loss rate p/(p+r) ~ 3.8%. */
	struct nic_impair *ge = stage_from("ge=0.01:0.25:1:0,seed=3");
	struct nic_impair *bern;
	struct run r1, r2;
	uint32_t lost_ge, lost_b;
	double burst_ge, burst_b;
	char spec[64];
	(void)state;

	run_init(&r1, 100000);
	run_feed(ge, &r1, 100000, 10 * US, 64);
	burst_ge = mean_burst(&r1, 100000, &lost_ge);
	assert_int_equal(lost_ge, nic_impair_stats(ge)->dropped_burst);
	assert_in_range(lost_ge, 2500, 5200);
	assert_true(burst_ge > 3.4 && burst_ge < 4.6);

	/* Bernoulli at the same average rate: bursts barely longer than 1. */
	snprintf(spec, sizeof(spec), "loss=%.4f%%,seed=3", lost_ge / 1000.0);
	bern = stage_from(spec);
	run_init(&r2, 100000);
	run_feed(bern, &r2, 100000, 10 * US, 64);
	burst_b = mean_burst(&r2, 100000, &lost_b);
	assert_in_range(lost_b, lost_ge * 8 / 10, lost_ge * 12 / 10);
	assert_true(burst_b < 1.2);
	assert_true(burst_ge > 2.0 * burst_b);
	run_done(&r1, ge);
	run_done(&r2, bern);
}

static void test_delay_exact(void **state)
{
	struct nic_impair *imp = stage_from("delay=50ms");
	struct run r;
	(void)state;

	run_init(&r, 1000);
	run_feed(imp, &r, 1000, 137 * US, 100);
	assert_int_equal(r.n, 1000);
	for (uint32_t i = 0; i < 1000; i++) {
		assert_int_equal(r.out[i].id, i);
		assert_int_equal(r.out[i].dep_ns, i * 137 * US + 50 * MS);
	}
	assert_int_equal(nic_impair_stats(imp)->delayed, 1000);
	run_done(&r, imp);
}

static void test_jitter_bounded(void **state)
{
	struct nic_impair *imp = stage_from("delay=10ms,jitter=3ms,seed=9");
	struct nic_impair *wide = stage_from("delay=1ms,jitter=5ms,seed=9");
	struct run r, w;
	uint32_t off_centre = 0;
	(void)state;

	run_init(&r, 5000);
	run_feed(imp, &r, 5000, 100 * US, 100);
	assert_int_equal(r.n, 5000);
	for (uint32_t i = 0; i < 5000; i++) {
		uint64_t arr = i * 100 * US, d = r.out[i].dep_ns - arr;

		assert_int_equal(r.out[i].id, i);   /* jitter alone keeps the order */
		assert_in_range(d, 7 * MS, 13 * MS);
		off_centre += d != 10 * MS;
	}
	assert_true(off_centre > 4000);
	/* Jitter larger than the delay: never before the arrival. */
	run_init(&w, 5000);
	run_feed(wide, &w, 5000, 100 * US, 100);
	for (uint32_t i = 0; i < 5000; i++)
		assert_in_range(w.out[i].dep_ns, i * 100 * US, i * 100 * US + 6 * MS);
	run_done(&r, imp);
	run_done(&w, wide);
}

static void test_reorder(void **state)
{
	struct nic_impair *imp = stage_from("reorder=10%,reorder_gap=1ms,seed=5");
	const struct nic_impair_stats *st = nic_impair_stats(imp);
	struct run r;
	uint8_t *seen = calloc(20000, 1);
	uint32_t max = 0, overtaken = 0;
	(void)state;

	assert_non_null(seen);
	run_init(&r, 20000);
	run_feed(imp, &r, 20000, 100 * US, 100);
	assert_int_equal(r.n, 20000);           /* nothing lost */
	for (size_t i = 0; i < r.n; i++) {
		assert_int_equal(seen[r.out[i].id]++, 0);
		if (i > 0 && r.out[i].id < max)
			overtaken++;
		if (r.out[i].id > max)
			max = r.out[i].id;
	}
	/* Every held-back packet, and only those, is overtaken (the gap spans
	 * ten arrivals). */
	assert_int_equal(overtaken, st->reordered);
	assert_in_range(st->reordered, 1600, 2400);
	free(seen);
	run_done(&r, imp);
}

static void test_duplicate(void **state)
{
	struct nic_impair *imp = stage_from("dup=10%,delay=1ms,seed=11");
	const struct nic_impair_stats *st = nic_impair_stats(imp);
	uint8_t *count = calloc(10000, 1);
	uint32_t twice = 0;
	struct run r;
	(void)state;

	assert_non_null(count);
	run_init(&r, 20000);
	run_feed(imp, &r, 10000, 20 * US, 200);
	assert_in_range(st->duplicated, 800, 1200);
	assert_int_equal(st->dup_no_mbuf, 0);
	assert_int_equal(st->passed, 10000 + st->duplicated);
	for (size_t i = 0; i < r.n; i++)
		count[r.out[i].id]++;
	for (uint32_t i = 0; i < 10000; i++) {
		assert_in_range(count[i], 1, 2);
		twice += count[i] == 2;
	}
	assert_int_equal(twice, st->duplicated);
	free(count);
	run_done(&r, imp);
}

/* A copy that is still pending when the stage is destroyed is freed too. */
static void test_destroy_flushes(void **state)
{
	struct nic_impair *imp = stage_from("dup=100%,delay=1s");
	struct rte_mbuf *m[8];
	(void)state;

	for (uint32_t i = 0; i < 8; i++)
		m[i] = pkt_make(i, 1000);
	nic_impair_enqueue(imp, m, 8, 0);
	assert_int_equal(nic_impair_pending(imp), 16);
	assert_int_equal(nic_impair_dequeue(imp, m, 8, 999 * MS), 0);
	assert_int_equal(nic_impair_next_ns(imp), 1000 * MS);
	nic_impair_destroy(imp);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

static void test_rate_spacing_and_tail_drop(void **state)
{
	/* 1000-byte packets at 1 Mbit/s: 8 ms each. */
	struct nic_impair *imp = stage_from("rate=1mbit,queue=3000b");
	const struct nic_impair_stats *st = nic_impair_stats(imp);
	struct rte_mbuf *m[10];
	struct run r;
	(void)state;

	run_init(&r, 16);
	for (uint32_t i = 0; i < 10; i++)
		m[i] = pkt_make(i, 1000);
	nic_impair_enqueue(imp, m, 10, 0);
	/* The queue holds 3000 bytes, the packet on the wire included. */
	assert_int_equal(st->dropped_queue_full, 7);
	drain_until(imp, &r, 8 * MS);
	/* One packet has left: room for one more, behind the two queued. */
	m[0] = pkt_make(10, 1000);
	m[1] = pkt_make(11, 1000);
	nic_impair_enqueue(imp, m, 2, 8 * MS);
	assert_int_equal(st->dropped_queue_full, 8);
	drain_until(imp, &r, UINT64_MAX - 1);
	assert_int_equal(r.n, 4);
	for (uint32_t i = 0; i < 4; i++) {
		assert_int_equal(r.out[i].id, i < 3 ? i : 10);
		assert_int_equal(r.out[i].dep_ns, (i + 1) * 8 * MS);
	}
	run_done(&r, imp);
}

static void test_limit(void **state)
{
	struct nic_impair *imp = stage_from("delay=1ms,limit=5");
	struct rte_mbuf *m[10];
	struct run r;
	(void)state;

	run_init(&r, 10);
	for (uint32_t i = 0; i < 10; i++)
		m[i] = pkt_make(i, 64);
	nic_impair_enqueue(imp, m, 10, 0);
	assert_int_equal(nic_impair_stats(imp)->dropped_limit, 5);
	drain_until(imp, &r, UINT64_MAX - 1);
	assert_int_equal(r.n, 5);
	run_done(&r, imp);
}

static void test_parse_example(void **state)
{
	const char *ex = "delay=50ms,jitter=5ms,loss=1%,ge=0.01:0.3:1:0,reorder=2%,dup=1%,"
			 "rate=100mbit,queue=256kb,seed=42";
	struct nic_impair_params p, q;
	char err[256], buf[512];
	(void)state;

	assert_int_equal(nic_impair_parse(ex, &p, err, sizeof(err)), 0);
	assert_int_equal(p.delay_us, 50000);
	assert_int_equal(p.jitter_us, 5000);
	assert_true(p.loss_pct == 1.0 && p.reorder_pct == 2.0 && p.dup_pct == 1.0);
	assert_true(p.ge && p.ge_p == 0.01 && p.ge_r == 0.3);
	assert_true(p.ge_loss_bad == 1.0 && p.ge_loss_good == 0.0);
	assert_int_equal(p.rate_bps, 100000000);
	assert_int_equal(p.queue_bytes, 256 * 1024);
	assert_int_equal(p.seed, 42);
	assert_int_equal(p.reorder_gap_us, NIC_IMPAIR_DEFAULT_GAP_US);
	assert_int_equal(p.limit, NIC_IMPAIR_DEFAULT_LIMIT);
	/* The formatted form parses back to the same parameters. */
	nic_impair_format(&p, buf, sizeof(buf));
	assert_int_equal(nic_impair_parse(buf, &q, err, sizeof(err)), 0);
	assert_memory_equal(&p, &q, sizeof(p));
	/* ge with only p: netem's defaults r = 1-p, 1-h = 1, 1-k = 0. */
	assert_int_equal(nic_impair_parse("ge=20%", &p, err, sizeof(err)), 0);
	assert_true(p.ge_p == 0.2 && p.ge_r == 0.8 && p.ge_loss_bad == 1.0);
	assert_int_equal(nic_impair_parse("none", &p, err, sizeof(err)), 0);
	assert_true(p.loss_pct == 0.0 && !p.ge && p.rate_bps == 0 && p.delay_us == 0);
}

static void test_parse_rejects(void **state)
{
	static const struct {
		const char *spec, *expect;
	} bad[] = {
		{ "delay=50", "item 1 'delay=50': expected a time" },
		{ "delay=-5ms", "item 1 'delay=-5ms'" },
		{ "loss=1%,jitter=fast", "item 2 'jitter=fast': expected a time" },
		{ "loss=1", "item 1 'loss=1': expected a percentage" },
		{ "loss=101%", "item 1 'loss=101%'" },
		{ "dup=0x5%", "item 1 'dup=0x5%'" },
		{ "ge=0.01:0.3:2:0", "(field 3 is wrong)" },
		{ "ge=0.01:0.3:1:0:0", "(field 5 is wrong)" },
		{ "ge=0.01::1", "item 1 'ge=0.01::1'" },
		{ "reorder=2", "item 1 'reorder=2': expected a percentage" },
		{ "rate=100mbps", "item 1 'rate=100mbps': expected a rate" },
		{ "rate=0mbit", "item 1 'rate=0mbit'" },
		{ "rate=1mbit,queue=0kb", "item 2 'queue=0kb': expected a size" },
		{ "queue=256kb", "'queue' needs 'rate'" },
		{ "reorder_gap=1ms", "'reorder_gap' needs 'reorder'" },
		{ "seed=-1", "item 1 'seed=-1': expected a whole number" },
		{ "seed=18446744073709551616", "item 1 'seed=18446744073709551616'" },
		{ "limit=0", "item 1 'limit=0': the limit must be" },
		{ "delay", "item 1 'delay': expected key=value" },
		{ "dup=1%,,loss=1%", "item 2 '': expected key=value" },
		{ "loss=1%,", "item 2 '': expected key=value" },
		{ "lose=1%", "item 1 'lose=1%': unknown key" },
	};
	struct nic_impair_params p;
	char err[256];
	(void)state;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		if (nic_impair_parse(bad[i].spec, &p, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i].spec);
		if (strstr(err, bad[i].expect) == NULL)
			fail_msg("'%s': message '%s' lacks '%s'", bad[i].spec, err, bad[i].expect);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_bernoulli_rate),
		cmocka_unit_test(test_gilbert_elliott_bursts),
		cmocka_unit_test(test_delay_exact),
		cmocka_unit_test(test_jitter_bounded),
		cmocka_unit_test(test_reorder),
		cmocka_unit_test(test_duplicate),
		cmocka_unit_test(test_destroy_flushes),
		cmocka_unit_test(test_rate_spacing_and_tail_drop),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_parse_example),
		cmocka_unit_test(test_parse_rejects),
	};

	if (test_eal_start("impair") < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("impair", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL) {
		fprintf(stderr, "test_impair: mbuf pool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	return cmocka_run_group_tests(tests, NULL, NULL);
}
