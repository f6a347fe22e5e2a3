/* stack/base/csum.h: Internet checksums (RFC 1071) over headers and mbuf chains.
 *
 * Thin, named wrappers over DPDK's rte_ip.h so that every layer (and tcp/)
 * verifies and fills checksums the same way, chained mbufs included
 * (reassembled datagrams are chains).
 */
#ifndef US_CSUM_H
#define US_CSUM_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stack/base/in6.h"

/* Prototypes */

static inline uint16_t us_csum_fold(uint32_t sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* A 64-bit partial sum folded to the 16-bit one: 2^16 = 1 mod 0xffff
 * (RFC 1071 2(B)). */
static inline uint16_t us_csum_fold64(uint64_t sum)
{
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	return us_csum_fold((uint32_t)sum);
}

#if defined(__x86_64__)
/* Partial sum (below 2^34, not folded) of len bytes: the bytes go 8 at a
 * time through an add-with-carry chain (32 per step), the way Linux's
 * csum_partial does: ~0.25 instructions per byte against ~0.56 for
 * rte_raw_cksum's vectorized 16-bit loop, and less fixed cost
 * (bench/PERF.md). */
static inline uint64_t us_csum_partial_adc(const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t sum = 0, tail = 0;

	for (; len >= 32; len -= 32, p += 32)
		__asm__("addq 0(%[p]), %[s]\n\t"
			"adcq 8(%[p]), %[s]\n\t"
			"adcq 16(%[p]), %[s]\n\t"
			"adcq 24(%[p]), %[s]\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(sum)
			: [p] "r"(p), "m"(*(const uint8_t(*)[32])p)
			: "cc");
	for (; len >= 8; len -= 8, p += 8)
		__asm__("addq %[m], %[s]\n\t"
			"adcq $0, %[s]"
			: [s] "+r"(sum)
			: [m] "m"(*(const uint64_t *)(const void *)p)
			: "cc");
	if (len >= 4) {
		uint32_t w;

		memcpy(&w, p, 4);
		tail += w;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t h;

		memcpy(&h, p, 2);
		tail += h;
		p += 2;
		len -= 2;
	}
	if (len > 0) {
		uint16_t left = 0;

		memcpy(&left, p, 1); /* the odd byte in memory order, as DPDK */
		tail += left;
	}
	return (sum & 0xffffffff) + (sum >> 32) + tail;
}

/* Non-complemented sum (RFC 1071) of len bytes, as rte_raw_cksum, by the
 * add-with-carry chain. */
static inline uint16_t us_csum_raw_adc(const void *buf, size_t len)
{
	return us_csum_fold64(us_csum_partial_adc(buf, len));
}

/* The same sum with 256-bit adds (csum.c), for CPUs with AVX2. */
uint16_t us_csum_raw_avx2(const void *buf, size_t len);

/* From this length on, the AVX2 sum beats the add-with-carry chain in time
 * and in instructions; below, it saves a tick or two at most and executes
 * as many instructions or more (bench/PERF.md, tests/bench/csum_bench.c). */
#define US_CSUM_AVX2_MIN 256
#endif

/* Non-complemented sum (RFC 1071) of len bytes, as rte_raw_cksum: the
 * fastest variant measured for the length (bench/PERF.md). */
static inline uint16_t us_csum_raw(const void *buf, size_t len)
{
#if defined(__x86_64__)
	if (len >= US_CSUM_AVX2_MIN && __builtin_cpu_supports("avx2"))
		return us_csum_raw_avx2(buf, len);
	return us_csum_raw_adc(buf, len);
#else
	return rte_raw_cksum(buf, len);
#endif
}

/* Copies len bytes from src to dst (not overlapping) and returns their
 * non-complemented sum, for a copy whose source is not in cache (summed as
 * it is read).  memcpy then the sum of src: faster than one loop that loads,
 * stores and adds, at every length measured, and reading src, not dst,
 * spares the loads a stall on the narrower, overlapping stores of a short
 * memcpy (bench/PERF.md).  tcp/output.c does not use it: its copies are
 * small and in cache, where a second sum costs more than it saves. */
static inline uint16_t us_csum_copy(void *dst, const void *src, size_t len)
{
	memcpy(dst, src, len);
	return us_csum_raw(src, len);
}

/* Non-complemented sum (RFC 1071) of an IPv4 header.  The usual 20 bytes
 * as five 32-bit words, unrolled: rte_raw_cksum's vectorized loop costs
 * ~70 instructions on 20 bytes, this ~20, and every packet pays it twice
 * (bench/PERF.md).  32-bit words summed into 64 bits then folded give the
 * 16-bit ones' complement sum (2^16 = 1 mod 0xffff, RFC 1071 2(B)). */
static inline uint16_t us_csum_ipv4_hdr_raw(const struct rte_ipv4_hdr *ip)
{
	const uint8_t *p = (const uint8_t *)ip;
	uint64_t sum = 0;

	if (rte_ipv4_hdr_len(ip) != sizeof(*ip))
		return us_csum_raw(ip, rte_ipv4_hdr_len(ip)); /* options */
	for (unsigned i = 0; i < sizeof(*ip); i += 4) {
		uint32_t w;

		memcpy(&w, p + i, 4);
		sum += w;
	}
	sum = (sum & 0xffffffff) + (sum >> 32);
	sum = (sum & 0xffffffff) + (sum >> 32);
	return us_csum_fold((uint32_t)sum);
}

/* Header checksum over ihl*4 bytes, including the checksum field: a correct
 * header sums to 0xffff (RFC 1071 2). */
static inline bool us_csum_ipv4_hdr_ok(const struct rte_ipv4_hdr *ip)
{
	return us_csum_ipv4_hdr_raw(ip) == 0xffff;
}

/* The complement of the sum with the field zero, as rte_ipv4_cksum. */
static inline void us_csum_ipv4_hdr_set(struct rte_ipv4_hdr *ip)
{
	ip->hdr_checksum = 0;
	ip->hdr_checksum = (uint16_t)~us_csum_ipv4_hdr_raw(ip);
}

/* Non-complemented sum of len bytes at offset off of a chain.  DPDK 22.11's
 * rte_raw_cksum_mbuf truncates the carries of a segment that starts at an
 * odd offset before swapping its bytes (wrong sums for chains split at odd
 * offsets), so we fold each piece fully, then swap (RFC 1071 2(B)). */
static inline int us_csum_raw_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len,
				   uint16_t *out)
{
	uint32_t sum = 0, done = 0;

	if (off + len > rte_pktmbuf_pkt_len(m))
		return -1;
	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	for (; m != NULL && done < len; m = m->next, off = 0) {
		uint32_t n = RTE_MIN((uint32_t)m->data_len - off, len - done);
		uint16_t part = us_csum_raw(rte_pktmbuf_mtod_offset(m, const char *, off), n);

		sum += (done & 1) ? rte_bswap16(part) : part;
		done += n;
	}
	*out = us_csum_fold(sum);
	return 0;
}

/* Pseudo-header sum (RFC 793 3.1, RFC 768) for an L4 length. */
static inline uint16_t us_csum_phdr(const struct rte_ipv4_hdr *ip, uint16_t l4_len)
{
	uint32_t sum = rte_raw_cksum(&ip->src_addr, 8);

	sum += rte_cpu_to_be_16((uint16_t)ip->next_proto_id) + rte_cpu_to_be_16(l4_len);
	return us_csum_fold(sum);
}

/* IPv6 pseudo-header sum (RFC 8200 8.1): both addresses, then the
 * upper-layer length and the next header as 32-bit words. */
static inline uint16_t us_csum_phdr6(const struct us_in6 *src, const struct us_in6 *dst,
				     uint32_t l4_len, uint8_t proto)
{
	uint32_t sum = (uint32_t)us_csum_raw(src->b, sizeof(src->b)) +
		       us_csum_raw(dst->b, sizeof(dst->b)) +
		       rte_cpu_to_be_16((uint16_t)(l4_len >> 16)) +
		       rte_cpu_to_be_16((uint16_t)l4_len) + rte_cpu_to_be_16(proto);

	return us_csum_fold(sum);
}

/* Sum over the L4 bytes at l4_off (length from ip->total_length) plus the
 * pseudo-header; 0 if the range is outside m (never a valid sum). */
static inline uint16_t us_csum_l4_sum(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
				      uint16_t l4_off)
{
	uint16_t l4_len = rte_be_to_cpu_16(ip->total_length) - rte_ipv4_hdr_len(ip);
	uint16_t raw;

	if (us_csum_raw_mbuf(m, l4_off, l4_len, &raw) < 0)
		return 0;
	return us_csum_fold((uint32_t)raw + us_csum_phdr(ip, l4_len));
}

/* TCP/UDP checksum to store (the field must be zero).  UDP's zero result is
 * sent as 0xffff (RFC 768). */
static inline uint16_t us_csum_l4(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
				  uint16_t l4_off)
{
	uint16_t c = (uint16_t)~us_csum_l4_sum(m, ip, l4_off);

	return c == 0 && ip->next_proto_id == IPPROTO_UDP ? 0xffff : c;
}

/* Verify a received TCP/UDP checksum (field included). */
static inline bool us_csum_l4_ok(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
				 uint16_t l4_off)
{
	return us_csum_l4_sum(m, ip, l4_off) == 0xffff;
}

/* Plain checksum (no pseudo-header: ICMP) of len bytes at off; the value to
 * store when the field was zero (0 over a valid message).  -1 when the range
 * is outside m. */
static inline int us_csum_mbuf(const struct rte_mbuf *m, uint32_t off, uint32_t len)
{
	uint16_t sum;

	if (us_csum_raw_mbuf(m, off, len, &sum) < 0)
		return -1;
	return (uint16_t)~sum;
}

#endif
