/* Every checksum and copy-and-checksum variant (tests/bench/csum_variants.h:
 * the stack's us_csum_raw and us_csum_copy with their AVX2 and
 * add-with-carry paths, and the candidates) against the byte-at-a-time sum:
 * every length 0..300 at random alignments, long lengths at odd offsets,
 * random bytes and all-ones bytes (every add carries). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <rte_ip.h>

#include "tests/bench/csum_variants.h"

#define BIG 65536
#define PAD 64 /* room for the offsets, and guard bytes after a copy */

static uint8_t src[BIG + PAD], dst[BIG + PAD];
static uint32_t rng = 2463534242u;

static uint32_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static void fill(uint8_t *b, size_t n, bool ones)
{
	for (size_t i = 0; i < n; i++)
		b[i] = ones ? 0xff : (uint8_t)next_rand();
}

static void check_sum(const struct csum_variant *v, size_t off, size_t len)
{
	uint16_t want = csum_ref(src + off, len), got = v->sum(src + off, len);

	if (got != want)
		fail_msg("%s: len %zu offset %zu: 0x%04x, want 0x%04x", v->name, len, off, got,
			 want);
}

static void check_copy(const struct csum_copy_variant *v, size_t soff, size_t doff, size_t len)
{
	uint16_t want = csum_ref(src + soff, len), got;

	memset(dst, 0xa5, len + doff + PAD);
	got = v->copy(dst + doff, src + soff, len);
	if (got != want)
		fail_msg("%s: len %zu offsets %zu/%zu: 0x%04x, want 0x%04x", v->name, len, soff,
			 doff, got, want);
	if (memcmp(dst + doff, src + soff, len) != 0)
		fail_msg("%s: len %zu offsets %zu/%zu: copy differs", v->name, len, soff, doff);
	for (size_t i = 0; i < doff; i++)
		assert_int_equal(dst[i], 0xa5);
	for (size_t i = doff + len; i < doff + len + PAD; i++)
		if (dst[i] != 0xa5)
			fail_msg("%s: len %zu: byte %zu past the end written", v->name, len, i - doff);
}

/* The reference itself against DPDK's sum, so both sides are checked. */
static void test_reference_agrees_with_dpdk(void **state)
{
	(void)state;
	fill(src, sizeof(src), false);
	for (size_t len = 0; len <= 2000; len++)
		assert_int_equal(csum_ref(src + len % 8, len), rte_raw_cksum(src + len % 8, len));
	/* 0x0000 + 0xffff and the like: ones' complement keeps 0xffff. */
	memset(src, 0xff, 6);
	assert_int_equal(csum_ref(src, 6), 0xffff);
	memset(src, 0, 6);
	assert_int_equal(csum_ref(src, 6), 0);
}

static void test_sum_every_short_length(void **state)
{
	(void)state;
	for (int ones = 0; ones < 2; ones++) {
		fill(src, 300 + PAD, ones);
		for (unsigned i = 0; i < csum_variants_n; i++) {
			if (!csum_variant_usable(csum_variants[i].usable))
				continue;
			for (size_t len = 0; len <= 300; len++) {
				check_sum(&csum_variants[i], next_rand() % PAD, len);
				check_sum(&csum_variants[i], len % 8, len);
			}
		}
	}
}

static void test_sum_long_lengths_odd_offsets(void **state)
{
	static const size_t lens[] = {511, 512, 1459, 1460, 1461, 4095, 4096, 8999, 9000,
				      BIG - 1, BIG - PAD};
	(void)state;
	for (int ones = 0; ones < 2; ones++) {
		fill(src, sizeof(src), ones);
		for (unsigned i = 0; i < csum_variants_n; i++) {
			if (!csum_variant_usable(csum_variants[i].usable))
				continue;
			for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
				for (size_t off = 0; off < 8; off++)
					check_sum(&csum_variants[i], off * 7 % PAD, lens[k]);
			check_sum(&csum_variants[i], 0, BIG);
		}
	}
}

static void test_copy_every_short_length(void **state)
{
	(void)state;
	for (int ones = 0; ones < 2; ones++) {
		fill(src, 300 + PAD, ones);
		for (unsigned i = 0; i < csum_copy_variants_n; i++) {
			if (!csum_variant_usable(csum_copy_variants[i].usable))
				continue;
			for (size_t len = 0; len <= 300; len++)
				check_copy(&csum_copy_variants[i], next_rand() % PAD,
					   next_rand() % PAD, len);
		}
	}
}

static void test_copy_long_lengths_odd_offsets(void **state)
{
	static const size_t lens[] = {511, 512, 513, 1460, 1461, 4096, 9000, BIG - PAD};
	(void)state;
	for (int ones = 0; ones < 2; ones++) {
		fill(src, sizeof(src), ones);
		for (unsigned i = 0; i < csum_copy_variants_n; i++) {
			if (!csum_variant_usable(csum_copy_variants[i].usable))
				continue;
			for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
				check_copy(&csum_copy_variants[i], 1, 3, lens[k]);
				check_copy(&csum_copy_variants[i], 3, 0, lens[k]);
				check_copy(&csum_copy_variants[i], 0, 7, lens[k]);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reference_agrees_with_dpdk),
		cmocka_unit_test(test_sum_every_short_length),
		cmocka_unit_test(test_sum_long_lengths_odd_offsets),
		cmocka_unit_test(test_copy_every_short_length),
		cmocka_unit_test(test_copy_long_lengths_odd_offsets),
	};

	/* What ran: a variant the CPU cannot run is skipped, never failed. */
	for (unsigned i = 0; i < csum_variants_n; i++)
		printf("# sum %s: %s\n", csum_variants[i].name,
		       csum_variant_usable(csum_variants[i].usable) ? "tested" : "skipped (CPU)");
	for (unsigned i = 0; i < csum_copy_variants_n; i++)
		printf("# copy %s: %s\n", csum_copy_variants[i].name,
		       csum_variant_usable(csum_copy_variants[i].usable) ? "tested" : "skipped (CPU)");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
