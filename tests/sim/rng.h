/* tests/sim/rng.h: the world's own draws (splitmix64).
 *
 * Every element of a world (a stack, a link, a conversation, a fault) draws
 * its parameters from its own stream, derived from the seed and the
 * element's index: dropping one element while shrinking leaves every other
 * element exactly as it was.
 */
#ifndef US_SIM_RNG_H
#define US_SIM_RNG_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

struct sim_rng {
	uint64_t s;
};

/* Prototypes */

static inline uint64_t sim_u64(struct sim_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Stream `stream` of seed: independent of every other stream. */
static inline struct sim_rng sim_rng_of(uint64_t seed, uint64_t stream)
{
	struct sim_rng r = { seed ^ (stream * 0xd1b54a32d192ed03ull) };

	(void)sim_u64(&r);
	return r;
}

/* Uniform in [0, n) (n > 0); the modulo bias is irrelevant here. */
static inline uint64_t sim_below(struct sim_rng *r, uint64_t n)
{
	return sim_u64(r) % n;
}

/* Uniform in [lo, hi]. */
static inline uint64_t sim_range(struct sim_rng *r, uint64_t lo, uint64_t hi)
{
	return lo + sim_below(r, hi - lo + 1);
}

/* True with probability pct/100. */
static inline bool sim_pct(struct sim_rng *r, unsigned pct)
{
	return sim_below(r, 100) < pct;
}

/* Uniform in [0, 1). */
static inline double sim_unit(struct sim_rng *r)
{
	return (double)(sim_u64(r) >> 11) / (double)(1ull << 53);
}

/* Log-uniform in [lo, hi] (lo >= 1): as many draws near 10 as near 10^6. */
uint64_t sim_log(struct sim_rng *r, uint64_t lo, uint64_t hi);

#endif
