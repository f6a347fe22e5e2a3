/* stack/base/in6.h: IPv6 addresses (RFC 4291) as every room passes them:
 * 16 bytes in network order, exactly as on the wire, so a header's
 * address is copied, never converted.  The tests that name an address
 * (multicast, link-local, unspecified) and the addresses derived from
 * another (solicited-node group, its Ethernet group, the EUI-64
 * link-local address of a MAC) live here, once. */
#ifndef US_IN6_H
#define US_IN6_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Types */

struct us_in6 {
	uint8_t b[16];
};

#define US_IN6_STRLEN 46 /* INET6_ADDRSTRLEN */

/* Prototypes */

static inline bool us_in6_eq(const struct us_in6 *a, const struct us_in6 *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}

/* :: (RFC 4291 2.5.2) */
static inline bool us_in6_is_unspec(const struct us_in6 *a)
{
	static const struct us_in6 zero;

	return us_in6_eq(a, &zero);
}

/* ::1 (RFC 4291 2.5.3) */
static inline bool us_in6_is_loopback(const struct us_in6 *a)
{
	static const struct us_in6 one = { .b = { [15] = 1 } };

	return us_in6_eq(a, &one);
}

/* ff00::/8 (RFC 4291 2.7) */
static inline bool us_in6_is_mcast(const struct us_in6 *a)
{
	return a->b[0] == 0xff;
}

/* fe80::/10 (RFC 4291 2.5.6) */
static inline bool us_in6_is_linklocal(const struct us_in6 *a)
{
	return a->b[0] == 0xfe && (a->b[1] & 0xc0) == 0x80;
}

/* ::ffff:0:0/96 (RFC 4291 2.5.5.2): an IPv4 address in an IPv6 socket. */
static inline bool us_in6_is_v4mapped(const struct us_in6 *a)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a->b, pfx, sizeof(pfx)) == 0;
}

/* ::ffff:a.b.c.d of an IPv4 address in host byte order: how every room
 * that carries both families holds an IPv4 address (a TCP 4-tuple, a
 * socket's name), so one comparison and one hash serve both. */
static inline struct us_in6 us_in6_of_v4(uint32_t ip)
{
	return (struct us_in6){ .b = { [10] = 0xff, [11] = 0xff, (uint8_t)(ip >> 24),
				       (uint8_t)(ip >> 16), (uint8_t)(ip >> 8), (uint8_t)ip } };
}

/* The IPv4 address (host byte order) of a v4-mapped a. */
static inline uint32_t us_in6_v4(const struct us_in6 *a)
{
	return (uint32_t)a->b[12] << 24 | (uint32_t)a->b[13] << 16 | (uint32_t)a->b[14] << 8 |
	       a->b[15];
}

/* The first plen bits of a and b agree. */
static inline bool us_in6_prefix_eq(const struct us_in6 *a, const struct us_in6 *b, unsigned plen)
{
	unsigned whole = plen / 8, rest = plen % 8;

	if (plen > 128 || memcmp(a->b, b->b, whole) != 0)
		return false;
	return rest == 0 || ((a->b[whole] ^ b->b[whole]) & (uint8_t)(0xff00 >> rest)) == 0;
}

/* ff02::1:ffXX:XXXX, the solicited-node group of a (RFC 4291 2.7.1). */
static inline void us_in6_solicited_node(const struct us_in6 *a, struct us_in6 *out)
{
	*out = (struct us_in6){ .b = { 0xff, 0x02, [11] = 0x01, [12] = 0xff,
				       [13] = a->b[13], [14] = a->b[14], [15] = a->b[15] } };
}

/* 33:33 and the group's last 32 bits (RFC 2464 7). */
static inline void us_in6_mcast_mac(const struct us_in6 *group, uint8_t mac[6])
{
	mac[0] = 0x33;
	mac[1] = 0x33;
	memcpy(mac + 2, group->b + 12, 4);
}

/* fe80::/64 with the modified EUI-64 interface identifier of mac (RFC 4291
 * appendix A, RFC 2464 4): ff:fe in the middle, the universal/local bit
 * inverted. */
static inline void us_in6_linklocal_of(const uint8_t mac[6], struct us_in6 *out)
{
	*out = (struct us_in6){ .b = { 0xfe, 0x80, [8] = (uint8_t)(mac[0] ^ 0x02), mac[1], mac[2],
				       0xff, 0xfe, mac[3], mac[4], mac[5] } };
}

#endif
