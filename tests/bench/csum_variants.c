/* tests/bench/csum_variants.c: the checksum candidates (csum_variants.h). */
#include <string.h>

#include <rte_ip.h>
#include <rte_memcpy.h>

#include "stack/base/csum.h"
#include "tests/bench/csum_variants.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

uint16_t csum_ref(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint32_t sum = 0;

	/* 16-bit words in memory order: load them as the CPU does. */
	for (size_t i = 0; i + 1 < len; i += 2) {
		uint16_t w;

		memcpy(&w, p + i, 2);
		sum += w;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	if (len & 1) {
		uint16_t w = 0;

		memcpy(&w, p + len - 1, 1);
		sum += w;
		sum = (sum & 0xffff) + (sum >> 16);
	}
	return (uint16_t)sum;
}

static uint16_t add16(uint16_t a, uint16_t b)
{
	return us_csum_fold((uint32_t)a + b);
}

static uint16_t v_dpdk(const void *buf, size_t len)
{
	return rte_raw_cksum(buf, len);
}

/* Portable C: 32-bit words into four 64-bit accumulators, no carries to
 * chain (the compiler may vectorize it). */
static uint16_t v_add32(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;

	for (; len >= 16; len -= 16, p += 16) {
		uint32_t w[4];

		memcpy(w, p, 16);
		a0 += w[0];
		a1 += w[1];
		a2 += w[2];
		a3 += w[3];
	}
	return add16(us_csum_fold64(a0 + a1 + a2 + a3), rte_raw_cksum(p, len));
}

#if defined(__x86_64__)
static bool have_avx2(void)
{
	return __builtin_cpu_supports("avx2");
}

static bool have_avx512(void)
{
	return __builtin_cpu_supports("avx512f");
}

static bool have_adx(void)
{
	return __builtin_cpu_supports("adx");
}

/* The add-with-carry chain, 64 bytes a step instead of 32. */
static uint16_t v_adc64(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t sum = 0;

	for (; len >= 64; len -= 64, p += 64)
		__asm__("addq 0(%[p]), %[s]\n\t"
			"adcq 8(%[p]), %[s]\n\t"
			"adcq 16(%[p]), %[s]\n\t"
			"adcq 24(%[p]), %[s]\n\t"
			"adcq 32(%[p]), %[s]\n\t"
			"adcq 40(%[p]), %[s]\n\t"
			"adcq 48(%[p]), %[s]\n\t"
			"adcq 56(%[p]), %[s]\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(sum)
			: [p] "r"(p), "m"(*(const uint8_t(*)[64])p)
			: "cc");
	return add16(us_csum_fold64(sum), us_csum_raw_adc(p, len));
}

/* Two independent carry chains: ADX's adcx carries in CF only, adox in OF
 * only, so the two interleave without waiting on each other.  Loop control
 * by lea and jrcxz, which leave both flags alone. */
static uint16_t v_adx(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t a = 0, b = 0, z;
	size_t blocks = len / 64;

	if (blocks > 0)
		__asm__("xorl %k[z], %k[z]\n\t" /* z = 0, CF = OF = 0 */
			"1:\n\t"
			"adcxq 0(%[p]), %[a]\n\t"
			"adoxq 8(%[p]), %[b]\n\t"
			"adcxq 16(%[p]), %[a]\n\t"
			"adoxq 24(%[p]), %[b]\n\t"
			"adcxq 32(%[p]), %[a]\n\t"
			"adoxq 40(%[p]), %[b]\n\t"
			"adcxq 48(%[p]), %[a]\n\t"
			"adoxq 56(%[p]), %[b]\n\t"
			"leaq 64(%[p]), %[p]\n\t"
			"leaq -1(%[n]), %[n]\n\t"
			"jrcxz 2f\n\t"
			"jmp 1b\n"
			"2:\n\t"
			"adcxq %[z], %[a]\n\t"
			"adoxq %[z], %[b]"
			: [a] "+r"(a), [b] "+r"(b), [p] "+r"(p), [n] "+c"(blocks), [z] "=&r"(z)
			:
			: "cc", "memory");
	len %= 64;
	b += a;
	b += b < a; /* end-around carry */
	return add16(us_csum_fold64(b), us_csum_raw_adc(p, len));
}

/* 512-bit lanes, the us_csum_raw_avx2 scheme (stack/base/csum.c) twice as wide. */
__attribute__((target("avx512f"))) static uint16_t v_avx512(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	__m512i all = _mm512_setzero_si512(), hi = _mm512_setzero_si512();
	uint64_t lanes[8], sum = 0;

	for (; len >= 64; len -= 64, p += 64) {
		__m512i v = _mm512_loadu_si512((const void *)p);

		all = _mm512_add_epi64(all, v);
		hi = _mm512_add_epi64(hi, _mm512_srli_epi64(v, 32));
	}
	/* all - (hi << 32) is the sum of the low halves (see csum.c). */
	all = _mm512_add_epi64(_mm512_sub_epi64(all, _mm512_slli_epi64(hi, 32)), hi);
	_mm512_storeu_si512((void *)lanes, all);
	for (int i = 0; i < 8; i++) {
		sum += lanes[i];
		sum += sum < lanes[i];
	}
	return add16(us_csum_fold64(sum), us_csum_raw_adc(p, len));
}

/* The copy-and-checksum loops that lost to memcpy then us_csum_raw of the
 * source (us_csum_copy, bench/PERF.md).  The AVX2 one uses the lane scheme
 * of stack/base/csum.c, repeated here. */
#define LOAD256(p) _mm256_lddqu_si256((const __m256i *)(const void *)(p))
#define AVX2_ADD(all, hi, v)                                                   \
	do {                                                                   \
		(all) = _mm256_add_epi64((all), (v));                          \
		(hi) = _mm256_add_epi64((hi), _mm256_srli_epi64((v), 32));     \
	} while (0)

__attribute__((target("avx2"))) static inline uint64_t avx2_total(__m256i all_a, __m256i hi_a,
								   __m256i all_b, __m256i hi_b)
{
	__m256i all = _mm256_add_epi64(all_a, all_b), hi = _mm256_add_epi64(hi_a, hi_b);
	__m256i v = _mm256_add_epi64(_mm256_sub_epi64(all, _mm256_slli_epi64(hi, 32)), hi);
	__m128i h = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));

	return (uint64_t)_mm_cvtsi128_si64(h) + (uint64_t)_mm_extract_epi64(h, 1);
}

static uint16_t copy_adc(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	uint64_t sum = 0;
	uint16_t tail;

	/* In one asm block: through C, GCC bounces the words via the stack. */
	for (; len >= 32; len -= 32, s += 32, d += 32) {
		uint64_t w0, w1, w2, w3;

		__asm__("movq 0(%[s]), %[w0]\n\t"
			"movq 8(%[s]), %[w1]\n\t"
			"movq 16(%[s]), %[w2]\n\t"
			"movq 24(%[s]), %[w3]\n\t"
			"movq %[w0], 0(%[d])\n\t"
			"movq %[w1], 8(%[d])\n\t"
			"movq %[w2], 16(%[d])\n\t"
			"movq %[w3], 24(%[d])\n\t"
			"addq %[w0], %[sum]\n\t"
			"adcq %[w1], %[sum]\n\t"
			"adcq %[w2], %[sum]\n\t"
			"adcq %[w3], %[sum]\n\t"
			"adcq $0, %[sum]"
			: [sum] "+r"(sum), [w0] "=&r"(w0), [w1] "=&r"(w1), [w2] "=&r"(w2),
			  [w3] "=&r"(w3), "=m"(*(uint8_t(*)[32])d)
			: [s] "r"(s), [d] "r"(d), "m"(*(const uint8_t(*)[32])s)
			: "cc");
	}
	for (; len >= 8; len -= 8, s += 8, d += 8) {
		uint64_t w;

		memcpy(&w, s, 8);
		memcpy(d, &w, 8);
		__asm__("addq %[w], %[s]\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(sum)
			: [w] "r"(w)
			: "cc");
	}
	/* Summed from src: reading back the few bytes just stored would
	 * stall on store-to-load forwarding (wider loads over narrower stores).
	 * Fixed-size copies: memcpy of a variable length is a call. */
	tail = us_csum_raw_adc(s, len);
	if (len & 4)
		memcpy(d, s, 4), d += 4, s += 4;
	if (len & 2)
		memcpy(d, s, 2), d += 2, s += 2;
	if (len & 1)
		*d = *s;
	return add16(us_csum_fold64(sum), tail);
}

__attribute__((target("avx2"))) static uint16_t copy_avx2(void *dst, const void *src, size_t len)
{
	uint8_t *d = dst;
	const uint8_t *s = src;
	__m256i all_a = _mm256_setzero_si256(), hi_a = all_a, all_b = all_a, hi_b = all_a;

	if (len & 32) { /* first, as in us_csum_raw_avx2 (stack/base/csum.c) */
		all_a = LOAD256(s);
		hi_a = _mm256_srli_epi64(all_a, 32);
		_mm256_storeu_si256((__m256i *)(void *)d, all_a);
		s += 32;
		d += 32;
	}
	for (size_t n = len / 64; n > 0; n--, s += 64, d += 64) {
		__m256i x = LOAD256(s);
		__m256i y = LOAD256(s + 32);

		_mm256_storeu_si256((__m256i *)(void *)d, x);
		_mm256_storeu_si256((__m256i *)(void *)(d + 32), y);
		AVX2_ADD(all_a, hi_a, x);
		AVX2_ADD(all_b, hi_b, y);
	}
	len %= 32;
	return add16(us_csum_fold64(avx2_total(all_a, hi_a, all_b, hi_b)), copy_adc(d, s, len));
}
#endif

const struct csum_variant csum_variants[] = {
	{"ref (byte at a time)", csum_ref, NULL},
	{"rte_raw_cksum", v_dpdk, NULL},
	{"us_csum_raw", us_csum_raw, NULL},
	{"add32 (C, 4 acc)", v_add32, NULL},
#if defined(__x86_64__)
	{"adc (32 B/step)", us_csum_raw_adc, NULL},
	{"adc (64 B/step)", v_adc64, NULL},
	{"adx (2 chains)", v_adx, have_adx},
	{"avx2", us_csum_raw_avx2, have_avx2},
	{"avx512", v_avx512, have_avx512},
#endif
};
const unsigned csum_variants_n = sizeof(csum_variants) / sizeof(csum_variants[0]);

/* Copy, then sum the source: summing the destination just written costs
 * a store-forwarding stall on short lengths (tcp/output.c summed it so). */
static uint16_t c_memcpy_sum(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return us_csum_raw(src, len);
}

static uint16_t c_memcpy_sum_dst(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return us_csum_raw(dst, len);
}

static uint16_t c_rte_memcpy_sum(void *dst, const void *src, size_t len)
{
	rte_memcpy(dst, src, len);
	return us_csum_raw(src, len);
}

#if defined(__x86_64__)
static uint16_t c_memcpy_avx2(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return us_csum_raw_avx2(src, len);
}
#endif

const struct csum_copy_variant csum_copy_variants[] = {
	{"memcpy + us_csum_raw(dst)", c_memcpy_sum_dst, NULL},
	{"memcpy + us_csum_raw(src)", c_memcpy_sum, NULL},
	{"rte_memcpy + us_csum_raw(src)", c_rte_memcpy_sum, NULL},
	{"us_csum_copy", us_csum_copy, NULL},
#if defined(__x86_64__)
	{"memcpy + avx2(src)", c_memcpy_avx2, have_avx2},
	{"copy+adc (fused)", copy_adc, NULL},
	{"copy+avx2 (fused)", copy_avx2, have_avx2},
#endif
};
const unsigned csum_copy_variants_n = sizeof(csum_copy_variants) / sizeof(csum_copy_variants[0]);
