/* tests/bench/csum_variants.h: every Internet checksum (RFC 1071) and
 * copy-and-checksum variant we measure (tests/bench/csum_bench.c) and test
 * (tests/unit/stack/test_csum_variants.c): the stack's own (stack/base/csum.h)
 * and the candidates that lost, kept here so the numbers in bench/PERF.md
 * can be reproduced and a new machine re-measured.
 *
 * Every sum returns the folded, non-complemented 16-bit sum of the bytes in
 * memory order, as rte_raw_cksum; a copy variant copies len bytes from src
 * to dst and returns the sum of them.
 */
#ifndef US_CSUM_VARIANTS_H
#define US_CSUM_VARIANTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Types */

struct csum_variant {
	const char *name;
	uint16_t (*sum)(const void *buf, size_t len);
	bool (*usable)(void); /* NULL: always (the CPU has what it needs) */
};

struct csum_copy_variant {
	const char *name;
	uint16_t (*copy)(void *dst, const void *src, size_t len);
	bool (*usable)(void);
};

/* Prototypes */

/* Byte at a time, the definition itself (RFC 1071 2): the reference. */
uint16_t csum_ref(const void *buf, size_t len);

extern const struct csum_variant csum_variants[];
extern const unsigned csum_variants_n;
extern const struct csum_copy_variant csum_copy_variants[];
extern const unsigned csum_copy_variants_n;

static inline bool csum_variant_usable(bool (*usable)(void))
{
	return usable == NULL || usable();
}

#endif
