/* stack/base/csum.c: the AVX2 Internet checksum.
 *
 * The project builds for the baseline DPDK sets (-march=corei7), so the
 * AVX2 function carries its own target attribute and us_csum_raw (csum.h)
 * calls it only for long buffers and only when the CPU has AVX2
 * (__builtin_cpu_supports: one load and a test).
 */
#include "stack/base/csum.h"

#if defined(__x86_64__)
#include <immintrin.h>

/* Loads by vlddqu (_mm256_lddqu_si256): GCC's generic tuning splits every
 * unaligned vmovdqu of 256 bits in two 128-bit halves, and a function
 * tuned otherwise would not inline the add-with-carry tail (csum.h). */
#define AVX2_FN __attribute__((target("avx2")))
#define LOAD256(p) _mm256_lddqu_si256((const __m256i *)(const void *)(p))

/* Each 64-bit lane takes two 32-bit words (hi * 2^32 + lo) and keeps two
 * sums: of the whole lanes, modulo 2^64 (the carries out of the low words
 * land in the high half, those out of the top are lost), and of the high
 * words alone (shifted down: no carry lost below 2^32 additions).
 * all - (hi << 32) is then exactly the sum of the low words, and
 * lo + hi the lane's share of the sum: three instructions per 32 bytes
 * and no carry chain between them.  Exact while len < 2^34.  Two pairs of
 * accumulators (a, b) so consecutive 32-byte blocks do not wait on each
 * other. */
AVX2_FN static inline uint64_t avx2_total(__m256i all_a, __m256i hi_a, __m256i all_b, __m256i hi_b)
{
	__m256i all = _mm256_add_epi64(all_a, all_b), hi = _mm256_add_epi64(hi_a, hi_b);
	__m256i v = _mm256_add_epi64(_mm256_sub_epi64(all, _mm256_slli_epi64(hi, 32)), hi);
	__m128i h = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	return (uint64_t)_mm_cvtsi128_si64(h) + (uint64_t)_mm_extract_epi64(h, 1);
}

#define AVX2_ADD(all, hi, v)                                                   \
	do {                                                                   \
		(all) = _mm256_add_epi64((all), (v));                          \
		(hi) = _mm256_add_epi64((hi), _mm256_srli_epi64((v), 32));     \
	} while (0)

AVX2_FN uint16_t us_csum_raw_avx2(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	__m256i all_a = _mm256_setzero_si256(), hi_a = all_a, all_b = all_a, hi_b = all_a;

	/* An odd 32-byte block first: GCC keeps the accumulators in place
	 * through the loop only when nothing after it adds to them. */
	if (len & 32) {
		all_a = LOAD256(p);
		hi_a = _mm256_srli_epi64(all_a, 32);
		p += 32;
	}
	for (size_t n = len / 64; n > 0; n--, p += 64) {
		__m256i x = LOAD256(p);
		__m256i y = LOAD256(p + 32);

		AVX2_ADD(all_a, hi_a, x);
		AVX2_ADD(all_b, hi_b, y);
	}
	len %= 32;
	/* The rest starts at an even offset: its sum adds without a swap.
	 * Both partial sums are far below 2^63: one fold for the two. */
	return us_csum_fold64(avx2_total(all_a, hi_a, all_b, hi_b) + us_csum_partial_adc(p, len));
}
#endif
