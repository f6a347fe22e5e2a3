/* Checksums (stack/base/csum.h) against vectors computed independently (scapy). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <rte_mempool.h>

#include "stack/base/csum.h"
#include "tests/unit/stack/harness.h"

/* RFC 791-style example header; checksum 0xb861. */
static const uint8_t ip_vec[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
				   0xb8, 0x61, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};

/* IP(10.0.0.1 > 10.0.0.2, id 1)/UDP(1234 > 5678)/"hello world!!": ip 0x66c1, udp 0x1dd2 */
static const char udp_vec[] = "4500002900010000401166c10a0000010a00000204d2162e00151dd2"
			      "68656c6c6f20776f726c642121";
/* IP(192.168.1.10 > 172.16.5.99, DF)/TCP(80 > 40000, PA)/"GET / HTTP/1.1\r\n\r\n!":
 * ip 0xc790, tcp 0x9c77 */
static const char tcp_vec[] = "4500003b000740004006c790c0a8010aac10056300509c40000000010000"
			      "0002501803e89c770000474554202f20485454502f312e310d0a0d0a21";

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = strlen(s) / 2;

	for (size_t i = 0; i < n; i++)
		sscanf(s + 2 * i, "%2hhx", &out[i]);
	return n;
}

/* The packet split into a chain at `split` bytes (0 = one segment). */
static struct rte_mbuf *vec_mbuf(const char *hex, size_t split)
{
	uint8_t b[256];
	size_t n = unhex(hex, b);
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	size_t first = split ? split : n;

	assert_non_null(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)first), b, first);
	if (split) {
		struct rte_mbuf *m2 = rte_pktmbuf_alloc(h_pool);

		assert_non_null(m2);
		memcpy(rte_pktmbuf_append(m2, (uint16_t)(n - first)), b + first, n - first);
		assert_int_equal(rte_pktmbuf_chain(m, m2), 0);
	}
	return m;
}

static void test_ipv4_header_vector(void **state)
{
	(void)state;
	uint8_t h[20];

	memcpy(h, ip_vec, sizeof(h));
	assert_true(us_csum_ipv4_hdr_ok((struct rte_ipv4_hdr *)h));
	us_csum_ipv4_hdr_set((struct rte_ipv4_hdr *)h);
	assert_int_equal(rte_be_to_cpu_16(((struct rte_ipv4_hdr *)h)->hdr_checksum), 0xb861);
	h[8] = 0x3f; /* TTL changed, checksum not */
	assert_false(us_csum_ipv4_hdr_ok((struct rte_ipv4_hdr *)h));
}

static void check_l4(const char *hex, size_t split, size_t csum_off, uint16_t want_ip,
		     uint16_t want_l4)
{
	struct rte_mbuf *m = vec_mbuf(hex, split);
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	uint16_t *field = rte_pktmbuf_mtod_offset(m, uint16_t *, csum_off);

	assert_int_equal(rte_be_to_cpu_16(ip->hdr_checksum), want_ip);
	assert_true(us_csum_ipv4_hdr_ok(ip));
	assert_true(us_csum_l4_ok(m, ip, 20));
	*field = 0;
	assert_int_equal(rte_be_to_cpu_16(us_csum_l4(m, ip, 20)), want_l4);
	*field = rte_cpu_to_be_16(want_l4);
	/* One flipped payload bit must be caught, in whichever segment. */
	*rte_pktmbuf_mtod_offset(rte_pktmbuf_lastseg(m), uint8_t *,
				 rte_pktmbuf_lastseg(m)->data_len - 1) ^= 0x01;
	assert_false(us_csum_l4_ok(m, ip, 20));
	rte_pktmbuf_free(m);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

static void test_udp_vector(void **state)
{
	(void)state;
	check_l4(udp_vec, 0, 26, 0x66c1, 0x1dd2);
}

static void test_tcp_vector(void **state)
{
	(void)state;
	check_l4(tcp_vec, 0, 36, 0xc790, 0x9c77);
}

/* Split at an odd offset: the sum must swap bytes across the boundary. */
static void test_tcp_vector_chained_odd_split(void **state)
{
	(void)state;
	check_l4(tcp_vec, 47, 36, 0xc790, 0x9c77);
}

static void test_udp_vector_chained(void **state)
{
	(void)state;
	check_l4(udp_vec, 33, 26, 0x66c1, 0x1dd2);
}

/* ICMP-style plain checksum over a chain equals the flat one. */
static void test_plain_checksum_chain(void **state)
{
	(void)state;
	uint8_t msg[1000];
	size_t n = h_icmp_echo(msg, 1, 2, sizeof(msg) - 8);
	struct rte_mbuf *a = rte_pktmbuf_alloc(h_pool), *b = rte_pktmbuf_alloc(h_pool);

	memcpy(rte_pktmbuf_append(a, 333), msg, 333);
	memcpy(rte_pktmbuf_append(b, (uint16_t)(n - 333)), msg + 333, n - 333);
	rte_pktmbuf_chain(a, b);
	assert_int_equal(us_csum_mbuf(a, 0, (uint32_t)n), 0); /* valid message sums to 0 */
	msg[2] = msg[3] = 0;
	assert_int_equal(us_csum_mbuf(a, 4, (uint32_t)n - 4),
			 (uint16_t)~rte_raw_cksum(msg + 4, n - 4));
	assert_int_equal(us_csum_mbuf(a, 0, (uint32_t)n + 1), -1);
	rte_pktmbuf_free(a);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

/* The unrolled 20-byte sum agrees with DPDK's rte_ipv4_cksum (what the
 * stack used before) on random headers, on a sum of 0xffff (the field
 * stored as 0) and on headers with options (the generic path). */
static void test_ipv4_header_fast_path_agrees(void **state)
{
	(void)state;
	uint32_t x = 12345;
	uint8_t h[60];

	for (int i = 0; i < 20000; i++) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)h;
		unsigned ihl = i % 4 == 0 ? 5 + (unsigned)(i / 4) % 11 : 5;
		uint16_t want;

		for (size_t k = 0; k < sizeof(h); k++) {
			x = x * 1103515245u + 12345u;
			h[k] = (uint8_t)(x >> 16);
		}
		h[0] = (uint8_t)(0x40 | ihl);
		if (i == 1) { /* only two non-zero words, summing to 0xffff */
			memset(h, 0, 20);
			h[0] = 0x45;
			h[2] = 0xba; /* 0x4500 + 0xbaff = 0xffff */
			h[3] = 0xff;
		}
		ip->hdr_checksum = 0;
		want = rte_ipv4_cksum(ip);
		us_csum_ipv4_hdr_set(ip);
		assert_int_equal(ip->hdr_checksum, want);
		assert_true(us_csum_ipv4_hdr_ok(ip));
		h[12 + (unsigned)i % 8] ^= 0x10;
		assert_false(us_csum_ipv4_hdr_ok(ip));
	}
}

/* us_csum_raw (add-with-carry on x86-64) agrees with rte_raw_cksum at every
 * length up to past an MSS and at every alignment, on random bytes and on
 * all-ones bytes (every add carries). */
static void test_raw_sum_agrees_with_dpdk(void **state)
{
	(void)state;
	static uint8_t buf[2100 + 8];
	uint32_t x = 777;

	for (int fill = 0; fill < 2; fill++) {
		for (size_t k = 0; k < sizeof(buf); k++) {
			x = x * 1103515245u + 12345u;
			buf[k] = fill ? 0xff : (uint8_t)(x >> 16);
		}
		for (size_t len = 0; len <= 2100; len++)
			for (size_t off = 0; off < 8; off++)
				assert_int_equal(us_csum_raw(buf + off, len),
						 rte_raw_cksum(buf + off, len));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ipv4_header_vector),
		cmocka_unit_test(test_ipv4_header_fast_path_agrees),
		cmocka_unit_test(test_raw_sum_agrees_with_dpdk),
		cmocka_unit_test(test_udp_vector),
		cmocka_unit_test(test_tcp_vector),
		cmocka_unit_test(test_tcp_vector_chained_odd_split),
		cmocka_unit_test(test_udp_vector_chained),
		cmocka_unit_test(test_plain_checksum_chain),
	};

	h_eal_init("us_test_csum");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
