/* stack/base/rand.h: the stack's one source of randomness.
 *
 * Every random draw of the stack comes from here: the ISN, connection-table,
 * SYN-cookie and Fast Open keys, the first ephemeral port, the challenge-ACK
 * budget jitter, the first IPv4 ID.  In production it is libsodium's
 * randombytes (the kernel's CSPRNG), so the keys are secret.
 *
 * A test or the simulator calls us_rand_seed() to make every draw a function
 * of one seed and the order of the draws, so that a world replays bit for
 * bit; us_rand_unseed() goes back to real randomness.  The seeded mode is
 * process-wide state with no locking: it is for single-threaded tests and
 * simulation only, and production never calls it (its keys would be as
 * public as the seed).
 */
#ifndef US_RAND_H
#define US_RAND_H

#include <stddef.h>
#include <stdint.h>

/* Prototypes */

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", 2014): one 64-bit state, any seed (zero included) a good
 * one, passes BigCrush.  The seeded stream, and the link emulator's
 * (nic/impair.c) streams. */
static inline uint64_t us_splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Initialises libsodium's generator (idempotent, thread-safe): 0, or -EIO. */
int us_rand_init(void);

/* n random bytes into buf. */
void us_rand_buf(void *buf, size_t n);
uint32_t us_rand_u32(void);
uint64_t us_rand_u64(void);
/* Uniform in [0, upper) without modulo bias (like randombytes_uniform);
 * 0 when upper < 2. */
uint32_t us_rand_uniform(uint32_t upper);

/* Test hooks: the deterministic stream from seed, and back to real
 * randomness.  Never called in production (see above). */
void us_rand_seed(uint64_t seed);
void us_rand_unseed(void);

#endif
