/* nic/rss: Toeplitz hash against the published verification vectors, the
 * symmetric key, the RETA and ephemeral port selection.  Pure: no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>

#include <rte_ip.h>

#include "nic/rss.h"

/* Microsoft "Verifying the RSS Hash Calculation" / 82599 datasheet 7.1.2.8.3,
 * IPv4: source, destination, the IPv4-only hash and the IPv4+TCP hash. */
static const struct {
	uint32_t src, dst;
	uint16_t sport, dport;
	uint32_t h_ip, h_tcp;
} rss_vectors[] = {
	{ US_IPV4(66, 9, 149, 187), US_IPV4(161, 142, 100, 80), 2794, 1766, 0x323e8fc2,
	  0x51ccc178 },
	{ US_IPV4(199, 92, 111, 2), US_IPV4(65, 69, 140, 83), 14230, 4739, 0xd718262a,
	  0xc626b0ea },
	{ US_IPV4(24, 19, 198, 95), US_IPV4(12, 22, 207, 184), 12898, 38024, 0xd2d0a5de,
	  0x5c2b394a },
	{ US_IPV4(38, 27, 205, 30), US_IPV4(209, 142, 163, 6), 48228, 2217, 0x82989176,
	  0xafc7327f },
	{ US_IPV4(153, 39, 163, 191), US_IPV4(202, 188, 127, 2), 44251, 1303, 0x5d1809c5,
	  0x10e828a2 },
};

/* The same page's IPv6 with TCP vectors: source, destination, hash. */
static const struct {
	const char *src, *dst;
	uint16_t sport, dport;
	uint32_t h_tcp;
} rss_vectors6[] = {
	{ "3ffe:2501:200:1fff::7", "3ffe:2501:200:3::1", 2794, 1766, 0x40207d3d },
	{ "3ffe:501:8::260:97ff:fe40:efab", "ff02::1", 14230, 4739, 0xdde51bbf },
	{ "3ffe:1900:4545:3:200:f8ff:fe21:67cf", "fe80::200:f8ff:fe21:67cf", 44251, 38024,
	  0x02d1feef },
};

static void test_ms_vectors_ipv6(void **state)
{
	(void)state;
	for (size_t i = 0; i < RTE_DIM(rss_vectors6); i++) {
		uint8_t src[16], dst[16];

		assert_int_equal(inet_pton(AF_INET6, rss_vectors6[i].src, src), 1);
		assert_int_equal(inet_pton(AF_INET6, rss_vectors6[i].dst, dst), 1);
		assert_int_equal(us_rss_hash_ipv6_tcp(us_rss_key_default, src, dst,
						      rss_vectors6[i].sport, rss_vectors6[i].dport),
				 rss_vectors6[i].h_tcp);
	}
}

/* xorshift32: seeded, so a failure reproduces. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void test_ms_vectors(void **state)
{
	(void)state;
	for (size_t i = 0; i < RTE_DIM(rss_vectors); i++) {
		uint32_t h = us_rss_hash_ipv4_tcp(us_rss_key_default, rss_vectors[i].src,
						  rss_vectors[i].dst, rss_vectors[i].sport,
						  rss_vectors[i].dport);

		assert_int_equal(h, rss_vectors[i].h_tcp);
		assert_int_equal(us_rss_hash_ipv4(us_rss_key_default, rss_vectors[i].src,
						  rss_vectors[i].dst),
				 rss_vectors[i].h_ip);
	}
}

/* The default key is NOT symmetric: the reversed first vector differs.  (If
 * it were equal, the symmetry test below would prove nothing.) */
static void test_default_key_asymmetric(void **state)
{
	(void)state;
	assert_int_not_equal(us_rss_hash_ipv4_tcp(us_rss_key_default, rss_vectors[0].dst,
						  rss_vectors[0].src, rss_vectors[0].dport,
						  rss_vectors[0].sport),
			     rss_vectors[0].h_tcp);
}

static void test_symmetric_key(void **state)
{
	uint32_t s = 0x9e3779b9;
	uint32_t distinct = 0, prev = 0;

	(void)state;
	for (int i = 0; i < 10000; i++) {
		uint32_t a = rnd(&s), b = rnd(&s), p = rnd(&s);
		uint16_t pa = (uint16_t)p, pb = (uint16_t)(p >> 16);
		uint32_t fwd = us_rss_hash_ipv4_tcp(us_rss_key_symmetric, a, b, pa, pb);
		uint32_t rev = us_rss_hash_ipv4_tcp(us_rss_key_symmetric, b, a, pb, pa);

		assert_int_equal(fwd, rev);
		distinct += fwd != prev;
		prev = fwd;
	}
	/* Not a constant function. */
	assert_true(distinct > 9000);
}

static void test_init_and_reta(void **state)
{
	struct us_rss rss;

	(void)state;
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, 40, 128, 0), -EINVAL);
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, 40, 100, 4), -EINVAL);
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, 40, 1024, 4), -EINVAL);
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, 16, 128, 4), -EINVAL);
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, 40, 512, 3), 0);
	assert_int_equal(rss.reta_size, 512);
	for (uint16_t i = 0; i < 512; i++)
		assert_int_equal(rss.reta[i], i % 3);
	/* The low bits index the RETA: 0x51ccc178 % 512 = 0x178 = 376 -> queue 1. */
	assert_int_equal(us_rss_queue(&rss, 0x51ccc178), 376 % 3);
	assert_int_equal(us_rss_queue_ipv4_tcp(&rss, rss_vectors[0].src, rss_vectors[0].dst,
					       rss_vectors[0].sport, rss_vectors[0].dport),
			 376 % 3);
}

static void pick_ports_for(uint16_t nb_queues, const uint8_t *key)
{
	const uint32_t local = US_IPV4(10, 0, 0, 1), remote = US_IPV4(10, 0, 0, 2);
	const uint16_t rport = 80;
	struct us_rss rss;

	assert_int_equal(us_rss_init(&rss, key, US_RSS_KEY_LEN, 128, nb_queues), 0);
	for (uint16_t q = 0; q < nb_queues; q++) {
		uint16_t start = US_RSS_EPHEMERAL_MIN, port = 0;

		/* Several ports per queue, each mapping back to it. */
		for (int n = 0; n < 8; n++) {
			assert_int_equal(us_rss_pick_port(&rss, local, remote, rport, q, start,
							  &port), 0);
			assert_true(port >= US_RSS_EPHEMERAL_MIN);
			assert_true(n == 0 || port >= start);
			assert_int_equal(us_rss_queue_ipv4_tcp(&rss, remote, local, rport, port), q);
			start = (uint16_t)(port + 1);
		}
	}
	assert_int_equal(us_rss_pick_port(&rss, local, remote, rport, nb_queues, 50000, &(uint16_t){ 0 }),
			 -EINVAL);
}

static void test_pick_port(void **state)
{
	static const uint16_t n[] = { 1, 2, 4, 8 };

	(void)state;
	for (size_t i = 0; i < RTE_DIM(n); i++) {
		pick_ports_for(n[i], us_rss_key_default);
		pick_ports_for(n[i], us_rss_key_symmetric);
	}
}

/* The scan wraps: starting at the top of the range still finds a port, and
 * a start below the range begins at its bottom. */
static void test_pick_port_wrap(void **state)
{
	const uint32_t local = US_IPV4(10, 0, 0, 1), remote = US_IPV4(10, 0, 0, 2);
	struct us_rss rss;
	uint16_t port = 0, first = 0;

	(void)state;
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, US_RSS_KEY_LEN, 128, 8), 0);
	for (uint16_t q = 0; q < 8; q++) {
		assert_int_equal(us_rss_pick_port(&rss, local, remote, 443, q, 65535, &port), 0);
		assert_int_equal(us_rss_queue_ipv4_tcp(&rss, remote, local, 443, port), q);
	}
	assert_int_equal(us_rss_pick_port(&rss, local, remote, 443, 3, 1024, &port), 0);
	assert_int_equal(us_rss_pick_port(&rss, local, remote, 443, 3, US_RSS_EPHEMERAL_MIN, &first),
			 0);
	assert_int_equal(port, first);
}

/* A queue the RETA never names cannot be reached: -ENOENT, not a wrong port. */
static void test_pick_port_unreachable(void **state)
{
	struct us_rss rss;
	uint16_t port = 0;

	(void)state;
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, US_RSS_KEY_LEN, 128, 4), 0);
	for (uint16_t i = 0; i < 128; i++)
		if (rss.reta[i] == 2)
			rss.reta[i] = 0;
	assert_int_equal(us_rss_pick_port(&rss, US_IPV4(10, 0, 0, 1), US_IPV4(10, 0, 0, 2), 80,
					  2, US_RSS_EPHEMERAL_MIN, &port),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ms_vectors),
		cmocka_unit_test(test_ms_vectors_ipv6),
		cmocka_unit_test(test_default_key_asymmetric),
		cmocka_unit_test(test_symmetric_key),
		cmocka_unit_test(test_init_and_reta),
		cmocka_unit_test(test_pick_port),
		cmocka_unit_test(test_pick_port_wrap),
		cmocka_unit_test(test_pick_port_unreachable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
