/* apps/loadgen/hist.c: see hist.h. */
#include <string.h>

#include "hist.h"

void lg_hist_init(struct lg_hist *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

unsigned lg_hist_index(uint64_t v)
{
	unsigned msb, shift;

	if (v < 64)
		return (unsigned)v;
	msb = 63u - (unsigned)__builtin_clzll(v);
	shift = msb - 5u; /* v >> shift is in [32, 63] */
	return 64u + (shift - 1u) * LG_HIST_SUB + (unsigned)(v >> shift) - LG_HIST_SUB;
}

uint64_t lg_hist_upper(unsigned i)
{
	unsigned shift, sub;

	if (i < 64)
		return i;
	shift = (i - 64u) / LG_HIST_SUB + 1u;
	sub = (i - 64u) % LG_HIST_SUB + LG_HIST_SUB;
	/* The bucket holds [sub << shift, (sub + 1) << shift). */
	return (((uint64_t)sub + 1u) << shift) - 1u;
}

void lg_hist_record(struct lg_hist *h, uint64_t v)
{
	h->count[lg_hist_index(v)]++;
	h->n++;
	h->sum += (long double)v;
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
}

void lg_hist_merge(struct lg_hist *into, const struct lg_hist *from)
{
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++)
		into->count[i] += from->count[i];
	into->n += from->n;
	into->sum += from->sum;
	if (from->min < into->min)
		into->min = from->min;
	if (from->max > into->max)
		into->max = from->max;
}

uint64_t lg_hist_percentile(const struct lg_hist *h, double p)
{
	uint64_t want, seen = 0;

	if (h->n == 0)
		return 0;
	if (p <= 0)
		return h->min;
	want = (uint64_t)((long double)p / 100.0L * (long double)h->n + 0.5L);
	if (want == 0)
		want = 1;
	if (want > h->n)
		want = h->n;
	for (unsigned i = 0; i < LG_HIST_BUCKETS; i++) {
		seen += h->count[i];
		if (seen >= want) {
			uint64_t v = lg_hist_upper(i);

			return v < h->min ? h->min : v > h->max ? h->max : v;
		}
	}
	return h->max;
}

double lg_hist_mean(const struct lg_hist *h)
{
	return h->n ? (double)(h->sum / (long double)h->n) : 0.0;
}
