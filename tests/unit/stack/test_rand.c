/* Unit tests of the random source (stack/base/rand.c): the seeded stream is
 * a function of the seed alone, uniform draws stay below their bound, and
 * unseeding gives real randomness back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "stack/base/rand.h"

#define MIX_U64 12

/* One of every kind of draw, in a fixed order, as the stack mixes them. */
struct mix {
	uint8_t key[16], odd[13];
	uint32_t u32, uni[8];
	uint64_t u64[MIX_U64];
};

static void draw_mix(struct mix *m)
{
	memset(m, 0, sizeof(*m));
	us_rand_buf(m->key, sizeof(m->key));
	m->u32 = us_rand_u32();
	us_rand_buf(m->odd, sizeof(m->odd));
	for (unsigned i = 0; i < 8; i++)
		m->uni[i] = us_rand_uniform(28232);
	for (unsigned i = 0; i < MIX_U64; i++)
		m->u64[i] = us_rand_u64();
}

static int unseed(void **state)
{
	(void)state;
	us_rand_unseed();
	return 0;
}

static void test_same_seed_same_stream(void **state)
{
	(void)state;
	struct mix a, b;

	us_rand_seed(42);
	draw_mix(&a);
	us_rand_seed(42); /* a reseed restarts the stream */
	draw_mix(&b);
	assert_memory_equal(&a, &b, sizeof(a));
}

static void test_different_seeds_differ(void **state)
{
	(void)state;
	struct mix a, b;

	us_rand_seed(1);
	draw_mix(&a);
	us_rand_seed(2);
	draw_mix(&b);
	assert_memory_not_equal(a.key, b.key, sizeof(a.key));
	for (unsigned i = 0; i < MIX_U64; i++)
		assert_true(a.u64[i] != b.u64[i]);
}

/* The stream is splitmix64 with its published first outputs, bytes in
 * little-endian order on any host: a seed recorded today replays the same
 * world after a rebuild. */
static void test_seeded_stream_is_splitmix64(void **state)
{
	(void)state;
	static const uint8_t first_le[10] = { 0xaf, 0xcd, 0x1d, 0x7b, 0x39, 0xa8, 0x20, 0xe2,
					      0xf4, 0x65 };
	uint8_t b[10];

	us_rand_seed(0);
	assert_true(us_rand_u64() == 0xe220a8397b1dcdafull);
	assert_true(us_rand_u64() == 0x6e789e6aa1b965f4ull);
	us_rand_seed(0);
	assert_int_equal(us_rand_u32(), 0xe220a839u);
	us_rand_seed(0);
	us_rand_buf(b, sizeof(b));
	assert_memory_equal(b, first_le, sizeof(b));
	us_rand_seed(42);
	assert_true(us_rand_u64() == 0xbdd732262feb6e95ull);
}

static void check_uniform(uint32_t upper, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t r = us_rand_uniform(upper);

		if (upper < 2)
			assert_int_equal(r, 0);
		else
			assert_true(r < upper);
	}
}

static void test_uniform_below_bound(void **state)
{
	(void)state;
	static const uint32_t bounds[] = { 0, 1, 2, 3, 7, 1000, 28232, 0x80000001u, UINT32_MAX };

	for (int seeded = 0; seeded <= 1; seeded++) {
		if (seeded)
			us_rand_seed(7);
		for (unsigned i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++)
			check_uniform(bounds[i], 2000);
	}
}

/* Every value of a small range comes up, and both halves of one just above
 * 2^31 (where the rejection drops almost half of the 32-bit draws). */
static void test_uniform_covers_range(void **state)
{
	(void)state;
	unsigned seen[7] = { 0 }, low = 0, high = 0;

	us_rand_seed(99);
	for (unsigned i = 0; i < 1000; i++)
		seen[us_rand_uniform(7)]++;
	for (unsigned v = 0; v < 7; v++)
		assert_true(seen[v] > 50);
	for (unsigned i = 0; i < 1000; i++) {
		if (us_rand_uniform(0x80000001u) < 0x40000000u)
			low++;
		else
			high++;
	}
	assert_true(low > 400 && high > 400);
}

static void test_unseed_returns_to_real_randomness(void **state)
{
	(void)state;
	uint8_t seeded[32], a[32], b[32], again[32];

	us_rand_seed(7);
	us_rand_buf(seeded, sizeof(seeded));
	us_rand_unseed();
	us_rand_buf(a, sizeof(a));
	us_rand_buf(b, sizeof(b));
	assert_memory_not_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, seeded, sizeof(a));
	assert_true(us_rand_u64() != us_rand_u64());
	/* Unseeding leaves nothing behind: the seed's stream starts over. */
	us_rand_seed(7);
	us_rand_buf(again, sizeof(again));
	assert_memory_equal(again, seeded, sizeof(again));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_same_seed_same_stream, unseed),
		cmocka_unit_test_teardown(test_different_seeds_differ, unseed),
		cmocka_unit_test_teardown(test_seeded_stream_is_splitmix64, unseed),
		cmocka_unit_test_teardown(test_uniform_below_bound, unseed),
		cmocka_unit_test_teardown(test_uniform_covers_range, unseed),
		cmocka_unit_test_teardown(test_unseed_returns_to_real_randomness, unseed),
	};

	if (us_rand_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
