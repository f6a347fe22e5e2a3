/* tcp/tuple_hash.h: the keyed hash of a connection's 4-tuple (tcp/table.c).
 *
 * SipHash (Aumasson and Bernstein, "SipHash: a fast short-input PRF", 2012)
 * with c compression and d finalization rounds over the tuple's bytes: 12
 * for IPv4 (one 8-byte block and the last), 36 for IPv6.
 *
 * Why SipHash-1-3 for the connection table and not something cheaper: a peer
 * chooses its addresses and ports (and spoofed SYNs create embryonic TCBs),
 * so an unkeyed or linear hash (CRC32 with a seed, Toeplitz) lets it aim
 * every connection at one bucket: collisions in a linear hash do not depend
 * on the key, or are learnt from a few.  A keyed PRF with a per-boot random
 * key leaves only blind guessing.  SipHash-1-3 keeps the PRF structure at
 * less than half the rounds of SipHash-2-4 (8 rounds for 12 bytes against
 * 5); it is what Rust's standard HashMap uses against hash flooding, with no
 * known attack.  Secrets (ISNs, SYN and TFO cookies) keep libsodium's
 * SipHash-2-4.  The 2-4 instance here is only for the test against
 * libsodium.
 */
#ifndef TCP_TUPLE_HASH_H
#define TCP_TUPLE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>

#include "stack/base/in6.h"

/* Types */

struct tcp_sip {
	uint64_t v0, v1, v2, v3;
};

/* Prototypes */

static inline uint64_t tcp_sip_rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline void tcp_sip_round(struct tcp_sip *s)
{
	s->v0 += s->v1;
	s->v1 = tcp_sip_rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = tcp_sip_rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = tcp_sip_rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = tcp_sip_rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = tcp_sip_rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = tcp_sip_rotl(s->v2, 32);
}

static inline void tcp_sip_block(struct tcp_sip *s, uint64_t m, unsigned c)
{
	s->v3 ^= m;
	for (unsigned i = 0; i < c; i++)
		tcp_sip_round(s);
	s->v0 ^= m;
}

/* SipHash-c-d of len bytes, read as little-endian words like the reference. */
static inline uint64_t tcp_sip(const uint8_t key[16], const uint8_t *in, size_t len, unsigned c,
			       unsigned d)
{
	uint64_t k0, k1, m, last = (uint64_t)len << 56;
	size_t whole = len & ~(size_t)7;
	struct tcp_sip s;

	memcpy(&k0, key, 8);
	memcpy(&k1, key + 8, 8);
	k0 = rte_le_to_cpu_64(k0);
	k1 = rte_le_to_cpu_64(k1);
	s.v0 = k0 ^ 0x736f6d6570736575ull;
	s.v1 = k1 ^ 0x646f72616e646f6dull;
	s.v2 = k0 ^ 0x6c7967656e657261ull;
	s.v3 = k1 ^ 0x7465646279746573ull;
	for (size_t i = 0; i < whole; i += 8) {
		memcpy(&m, in + i, 8);
		tcp_sip_block(&s, rte_le_to_cpu_64(m), c);
	}
	/* The last block: the bytes left, the message length in the top byte. */
	for (size_t i = whole; i < len; i++)
		last |= (uint64_t)in[i] << (8 * (i - whole));
	tcp_sip_block(&s, last, c);
	s.v2 ^= 0xff;
	for (unsigned i = 0; i < d; i++)
		tcp_sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* SipHash-c-d of the 12 bytes lip, rip, lport, rport (as stored, network or
 * host order alike). */
static inline uint64_t tcp_sip_tuple(const uint8_t key[16], uint32_t lip, uint32_t rip,
				     uint16_t lport, uint16_t rport, unsigned c, unsigned d)
{
	uint8_t in[12];

	memcpy(in, &lip, 4);
	memcpy(in + 4, &rip, 4);
	memcpy(in + 8, &lport, 2);
	memcpy(in + 10, &rport, 2);
	return tcp_sip(key, in, sizeof(in), c, d);
}

/* The table's hash of an IPv4 tuple (host order): SipHash-1-3, low 32 bits. */
static inline uint32_t tcp_tuple_hash4(const uint8_t key[16], uint32_t lip, uint16_t lport,
				       uint32_t rip, uint16_t rport)
{
	return (uint32_t)tcp_sip_tuple(key, lip, rip, lport, rport, 1, 3);
}

/* The table's hash of either family: an IPv4 tuple (both addresses
 * v4-mapped) hashes its 12 bytes, not 36, so IPv4 pays nothing for IPv6. */
static inline uint32_t tcp_tuple_hash(const uint8_t key[16], const struct us_in6 *lip,
				      uint16_t lport, const struct us_in6 *rip, uint16_t rport)
{
	uint8_t in[36];

	if (us_in6_is_v4mapped(lip) && us_in6_is_v4mapped(rip))
		return tcp_tuple_hash4(key, us_in6_v4(lip), lport, us_in6_v4(rip), rport);
	memcpy(in, lip->b, 16);
	memcpy(in + 16, rip->b, 16);
	memcpy(in + 32, &lport, 2);
	memcpy(in + 34, &rport, 2);
	return (uint32_t)tcp_sip(key, in, sizeof(in), 1, 3);
}

#endif
