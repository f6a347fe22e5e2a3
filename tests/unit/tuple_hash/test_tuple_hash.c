/* tests/unit/tuple_hash: SipHash-c-d over the 4-tuple (tcp/tuple_hash.h).
 *
 * The 2-4 instance must equal libsodium's crypto_shorthash (SipHash-2-4) on
 * the same 12 bytes: same rounds, block packing, length byte and
 * finalization.  The 1-3 instance the table uses differs only in the round
 * counts.  Then what the table needs from it: every field and the key
 * matter, and a peer's sequential ports spread over the buckets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "tcp/tuple_hash.h"

static uint32_t rnd_state = 2463534242u;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void rnd_key(uint8_t key[16])
{
	for (int i = 0; i < 16; i++)
		key[i] = (uint8_t)rnd();
}

static uint64_t sodium_tuple(const uint8_t key[16], uint32_t lip, uint32_t rip, uint16_t lport,
			     uint16_t rport)
{
	uint8_t in[12], out[crypto_shorthash_BYTES];
	uint64_t h = 0;

	memcpy(in, &lip, 4);
	memcpy(in + 4, &rip, 4);
	memcpy(in + 8, &lport, 2);
	memcpy(in + 10, &rport, 2);
	crypto_shorthash_siphash24(out, in, sizeof(in), key);
	for (int i = 7; i >= 0; i--)
		h = h << 8 | out[i]; /* the reference stores the result little-endian */
	return h;
}

static void test_siphash24_matches_libsodium(void **state)
{
	(void)state;
	for (int i = 0; i < 10000; i++) {
		uint8_t key[16];
		uint32_t lip = rnd(), rip = rnd(), ports = rnd();
		uint16_t lport = (uint16_t)ports, rport = (uint16_t)(ports >> 16);

		rnd_key(key);
		assert_int_equal(tcp_sip_tuple(key, lip, rip, lport, rport, 2, 4),
				 sodium_tuple(key, lip, rip, lport, rport));
	}
}

/* The table's instance is 1-3, not 2-4, and every input bit reaches it. */
static void test_table_hash_depends_on_all(void **state)
{
	(void)state;
	uint8_t key[16], key2[16];
	unsigned same = 0;

	for (int i = 0; i < 1000; i++) {
		uint32_t lip = rnd(), rip = rnd(), ports = rnd();
		uint16_t lport = (uint16_t)ports, rport = (uint16_t)(ports >> 16);
		uint32_t h;

		rnd_key(key);
		memcpy(key2, key, sizeof(key));
		key2[rnd() % 16] ^= (uint8_t)(1u << (rnd() % 8));
		h = tcp_tuple_hash4(key, lip, lport, rip, rport);
		same += h == (uint32_t)tcp_sip_tuple(key, lip, rip, lport, rport, 2, 4);
		same += h == tcp_tuple_hash4(key2, lip, lport, rip, rport);
		same += h == tcp_tuple_hash4(key, lip ^ (1u << (rnd() % 32)), lport, rip, rport);
		same += h == tcp_tuple_hash4(key, lip, lport, rip ^ (1u << (rnd() % 32)), rport);
		same += h == tcp_tuple_hash4(key, lip, (uint16_t)(lport ^ (1u << (rnd() % 16))),
					    rip, rport);
		same += h == tcp_tuple_hash4(key, lip, lport, rip,
					    (uint16_t)(rport ^ (1u << (rnd() % 16))));
	}
	/* 6,000 comparisons of 32-bit values: a chance collision is ~1e-6. */
	assert_int_equal(same, 0);
}

/* One peer address, 28,232 ephemeral ports (the range one address pair
 * has), 4,096 buckets: no bucket far above the mean of ~6.9. */
static void test_peer_ports_spread(void **state)
{
	(void)state;
	static unsigned count[4096];
	uint8_t key[16];
	unsigned max = 0;

	rnd_key(key);
	for (uint32_t p = 32768; p < 61000; p++) {
		uint32_t h = tcp_tuple_hash4(key, 0x0a000002u, 8080, 0x0a000001u, (uint16_t)p);
		unsigned *c = &count[h & 4095];

		if (++*c > max)
			max = *c;
	}
	/* Poisson(6.9): P(bucket >= 25) ~ 1e-8 per bucket. */
	assert_true(max < 25);
}

/* Any length: the generic SipHash-2-4 equals libsodium's on 0..40 bytes
 * (every tail length, the 36 bytes of an IPv6 tuple among them). */
static void test_siphash24_any_length_matches_libsodium(void **state)
{
	(void)state;
	for (size_t len = 0; len <= 40; len++) {
		uint8_t key[16], in[40], out[crypto_shorthash_BYTES];
		uint64_t want = 0;

		rnd_key(key);
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)rnd();
		crypto_shorthash_siphash24(out, in, len, key);
		for (int i = 7; i >= 0; i--)
			want = want << 8 | out[i];
		assert_int_equal(tcp_sip(key, in, len, 2, 4), want);
	}
}

/* IPv4 in the dual-family hash is the 12-byte one (no cost for IPv4); an
 * IPv6 tuple depends on every address byte. */
static void test_family_hash(void **state)
{
	(void)state;
	uint8_t key[16];
	struct us_in6 a = us_in6_of_v4(0x0a000002u), b = us_in6_of_v4(0x0a000001u);
	struct us_in6 l6 = { .b = { 0xfd, 0, 0, 0x77, [15] = 2 } }, r6 = l6;
	uint32_t h;

	rnd_key(key);
	assert_int_equal(tcp_tuple_hash(key, &a, 80, &b, 40000),
			 tcp_tuple_hash4(key, 0x0a000002u, 80, 0x0a000001u, 40000));
	r6.b[15] = 1;
	h = tcp_tuple_hash(key, &l6, 80, &r6, 40000);
	for (int i = 0; i < 16; i++) {
		struct us_in6 x = r6;

		x.b[i] ^= 0x10;
		assert_int_not_equal(tcp_tuple_hash(key, &l6, 80, &x, 40000), h);
		x = l6;
		x.b[i] ^= 0x01;
		assert_int_not_equal(tcp_tuple_hash(key, &x, 80, &r6, 40000), h);
	}
	assert_int_not_equal(tcp_tuple_hash(key, &l6, 81, &r6, 40000), h);
	assert_int_not_equal(tcp_tuple_hash(key, &l6, 80, &r6, 40001), h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_siphash24_matches_libsodium),
		cmocka_unit_test(test_table_hash_depends_on_all),
		cmocka_unit_test(test_peer_ports_spread),
		cmocka_unit_test(test_siphash24_any_length_matches_libsodium),
		cmocka_unit_test(test_family_hash),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
