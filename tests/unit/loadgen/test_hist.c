/* apps/loadgen/hist.c: bucket boundaries, the 1/32 error bound and
 * percentiles over known distributions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "apps/loadgen/hist.h"

static void test_small_values_exact(void **state)
{
	(void)state;
	for (uint64_t v = 0; v < 64; v++) {
		assert_int_equal(lg_hist_index(v), v);
		assert_int_equal(lg_hist_upper((unsigned)v), v);
	}
	assert_int_equal(lg_hist_index(64), 64);
	assert_int_equal(lg_hist_upper(64), 65); /* [64, 66) */
}

/* Every value lies in its bucket, buckets are monotonic, and the bucket is
 * at most 1/32 of its values wide. */
static void test_bucket_bounds(void **state)
{
	uint64_t v = 1;

	(void)state;
	for (unsigned step = 0; step < 4000; step++) {
		unsigned i = lg_hist_index(v);
		uint64_t hi = lg_hist_upper(i), lo = i ? lg_hist_upper(i - 1) + 1 : 0;

		assert_true(i < LG_HIST_BUCKETS);
		assert_true(lo <= v && v <= hi);
		if (v >= 64)
			assert_true((hi - lo + 1) * 32 <= lo);
		v += v / 97 + 1;
	}
	assert_true(lg_hist_index(UINT64_MAX) < LG_HIST_BUCKETS);
	assert_int_equal(lg_hist_upper(lg_hist_index(UINT64_MAX)), UINT64_MAX);
}

static void test_percentiles_uniform(void **state)
{
	static struct lg_hist h;

	(void)state;
	lg_hist_init(&h);
	assert_int_equal(lg_hist_percentile(&h, 50), 0);
	for (uint64_t v = 1; v <= 100000; v++)
		lg_hist_record(&h, v * 1000); /* 1 us .. 100 ms */
	assert_int_equal(h.n, 100000);
	assert_int_equal(h.min, 1000);
	assert_int_equal(h.max, 100000000);
	const double p[] = { 50, 90, 99, 99.9 };
	for (unsigned i = 0; i < 4; i++) {
		double want = p[i] / 100 * 1e8, got = (double)lg_hist_percentile(&h, p[i]);
		assert_true(got >= want && got <= want * (1 + 1.0 / 32));
	}
	assert_int_equal(lg_hist_percentile(&h, 100), 100000000);
	assert_int_equal(lg_hist_percentile(&h, 0), 1000);
	assert_true(lg_hist_mean(&h) > 50000499 && lg_hist_mean(&h) < 50000501);
}

static void test_merge_and_outlier(void **state)
{
	static struct lg_hist a, b;

	(void)state;
	lg_hist_init(&a);
	lg_hist_init(&b);
	for (int i = 0; i < 999; i++)
		lg_hist_record(&a, 500000);
	lg_hist_record(&b, 90000000);
	lg_hist_merge(&a, &b);
	assert_int_equal(a.n, 1000);
	assert_int_equal(a.max, 90000000);
	/* 999 of 1000 at 0.5 ms: p99.9 is still there, the max is the outlier. */
	assert_true(lg_hist_percentile(&a, 99.9) < 520000);
	assert_int_equal(lg_hist_percentile(&a, 100), 90000000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_small_values_exact),
		cmocka_unit_test(test_bucket_bounds),
		cmocka_unit_test(test_percentiles_uniform),
		cmocka_unit_test(test_merge_and_outlier),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
