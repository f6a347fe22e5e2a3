/* stack/base/rand.c: the random source (design in stack/base/rand.h).
 *
 * Why splitmix64 for the seeded stream and not libsodium's
 * randombytes_buf_deterministic: that one restarts its ChaCha20 stream at
 * every call, so a stream of draws would have to rekey per call from a
 * counter; splitmix64 is one 64-bit add and two multiplies per draw, and it
 * is already the link emulator's generator, so a seeded world is one
 * published algorithm that a replay tool in any language can reproduce.
 * Cryptographic strength buys nothing there: the seed is in the test's log.
 */
#include <errno.h>
#include <stdbool.h>

#include <sodium.h>

#include "stack/base/rand.h"

static bool rand_seeded;
static uint64_t rand_state;

int us_rand_init(void)
{
	return sodium_init() < 0 ? -EIO : 0;
}

void us_rand_seed(uint64_t seed)
{
	rand_state = seed;
	rand_seeded = true;
}

void us_rand_unseed(void)
{
	rand_seeded = false;
	rand_state = 0;
}

void us_rand_buf(void *buf, size_t n)
{
	uint8_t *b = buf;

	if (!rand_seeded) {
		randombytes_buf(buf, n);
		return;
	}
	/* Little-endian bytes of successive draws, whatever the host's order,
	 * so that a seed means the same bytes everywhere. */
	for (size_t i = 0; i < n; i += 8) {
		uint64_t x = us_splitmix64(&rand_state);

		for (size_t j = 0; j < 8 && i + j < n; j++)
			b[i + j] = (uint8_t)(x >> (8 * j));
	}
}

uint32_t us_rand_u32(void)
{
	if (!rand_seeded)
		return randombytes_random();
	return (uint32_t)(us_splitmix64(&rand_state) >> 32);
}

uint64_t us_rand_u64(void)
{
	uint64_t x;

	if (!rand_seeded) {
		randombytes_buf(&x, sizeof(x));
		return x;
	}
	return us_splitmix64(&rand_state);
}

/* Rejection sampling: drop the 2^32 mod upper lowest values, so that what
 * is left is a whole number of copies of [0, upper). */
uint32_t us_rand_uniform(uint32_t upper)
{
	uint32_t min, r;

	if (!rand_seeded)
		return randombytes_uniform(upper);
	if (upper < 2)
		return 0;
	min = (uint32_t)(-upper) % upper;
	do
		r = us_rand_u32();
	while (r < min);
	return r % upper;
}
