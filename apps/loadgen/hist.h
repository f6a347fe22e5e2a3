/* apps/loadgen/hist.h: a log-bucket latency histogram (HdrHistogram-style).
 *
 * Values (nanoseconds) below 64 have a bucket each; above, every power of
 * two is split into 32 equal buckets, so a reported percentile is within
 * 1/32 (3.1 %) of the true value at any magnitude, in fixed memory and O(1)
 * per record.  Pure: no stack, unit-tested in tests/unit/loadgen.
 */
#ifndef LG_HIST_H
#define LG_HIST_H

#include <stdint.h>

/* Types */

#define LG_HIST_SUB 32u
#define LG_HIST_BUCKETS (64u + 58u * LG_HIST_SUB)

struct lg_hist {
	uint64_t count[LG_HIST_BUCKETS];
	uint64_t n, min, max;
	long double sum;
};

/* Prototypes */

void lg_hist_init(struct lg_hist *h);
void lg_hist_record(struct lg_hist *h, uint64_t v);
void lg_hist_merge(struct lg_hist *into, const struct lg_hist *from);
/* The value at percentile p (0..100): the upper edge of the bucket where the
 * cumulative count reaches p % of n, clamped to [min, max]; 0 when empty. */
uint64_t lg_hist_percentile(const struct lg_hist *h, double p);
double lg_hist_mean(const struct lg_hist *h);
/* Bucket index of v, and the largest value in bucket i (tests). */
unsigned lg_hist_index(uint64_t v);
uint64_t lg_hist_upper(unsigned i);

#endif
