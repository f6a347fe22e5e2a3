/* tests/unit/stack/harness6.h: IPv6 frames for the engine harness
 * (harness.h): the peer's and our addresses on fd00:77::/64, frames to
 * inject (IPv6, ICMPv6 with a valid checksum, NS, NA, echo) and readers of
 * what the engine sent.
 */
#ifndef US_TEST_HARNESS6_H
#define US_TEST_HARNESS6_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stack/base/in6.h"
#include "tests/unit/stack/harness.h"

/* Types */

#define H6_NA_ROUTER 0x80
#define H6_NA_SOLICITED 0x40
#define H6_NA_OVERRIDE 0x20

#define H6_ETH_IP6 (sizeof(struct rte_ether_hdr) + sizeof(struct rte_ipv6_hdr))

extern const struct us_in6 h6_our, h6_peer, h6_peer2, h6_gw, h6_all_nodes, h6_unspec;
extern struct us_in6 h6_our_ll;         /* fe80:: EUI-64 of h_our_mac */
extern const struct us_in6 h6_peer_ll;  /* fe80::7 */

/* Prototypes */

/* [ip6] on in h->cfg: fd00:77::2/64, hop limit 64, dad as asked. */
void h6_config(struct harness *h, bool dad);
/* h6_config + h_start + us_engine_announce; with dad off the unsolicited
 * NAs it sends are checked and cleared. */
void h6_start(struct harness *h, bool dad);

/* cmocka teardown of a test whose state is its struct harness. */
int h6_teardown(void **state);
struct us_net *h6_net(struct harness *h);
/* The engine counter called name. */
int64_t h6_ctr(struct harness *h, const char *name);
/* The address at p (in a header). */
struct us_in6 h6_addr_at(const uint8_t *p);

/* Ethernet (from h_peer_mac to eth_dst) + IPv6 + payload. */
struct rte_mbuf *h6_frame(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			  const struct us_in6 *dst, uint8_t proto, uint8_t hop_limit,
			  const void *payload, size_t len);
/* The same with an ICMPv6 message (its checksum filled in). */
struct rte_mbuf *h6_icmp(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			 const struct us_in6 *dst, uint8_t hop_limit, const void *msg, size_t len);
/* The 33:33 MAC of a group. */
struct rte_ether_addr h6_mcast_mac(const struct us_in6 *group);
/* The solicited-node group of a. */
struct us_in6 h6_snode(const struct us_in6 *a);

/* The 16-bit ones' complement sum of len bytes at p with the IPv6
 * pseudo-header of src, dst and proto (RFC 8200 8.1), computed here
 * independently of the stack: 0xffff over a correct message. */
uint16_t h6_l4_sum(const struct us_in6 *src, const struct us_in6 *dst, uint8_t proto,
		   const uint8_t *p, uint32_t len);
/* A UDP datagram (header and data) from src to dst, checksum filled in. */
size_t h6_udp_msg(uint8_t *buf, const struct us_in6 *src, const struct us_in6 *dst,
		  uint16_t sport, uint16_t dport, const void *data, size_t len);
/* The same as a frame (hop limit 64). */
struct rte_mbuf *h6_udp(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			const struct us_in6 *dst, uint16_t sport, uint16_t dport, const void *data,
			size_t len);

/* Messages into buf; each returns its length. */
size_t h6_echo(uint8_t *buf, uint16_t ident, uint16_t seq, size_t data_len);
/* ll NULL: no link-layer address option. */
size_t h6_ns(uint8_t *buf, const struct us_in6 *target, const struct rte_ether_addr *ll);
size_t h6_na(uint8_t *buf, uint8_t flags, const struct us_in6 *target,
	     const struct rte_ether_addr *ll);

/* Frames on the harness's TX side. */
struct rte_ipv6_hdr *h6_iph(struct rte_mbuf *m);
uint8_t *h6_l4(struct rte_mbuf *m);
/* Recompute the ICMPv6 checksum of a frame (after an edit). */
void h6_fix_icmp(struct rte_mbuf *m);
/* A frame of ours: IPv6, ICMPv6 of type, a valid checksum. */
void h6_assert_icmp(struct rte_mbuf *m, uint8_t type);
/* Inject one frame and flush. */
void h6_inject(struct harness *h, struct rte_mbuf *m);
/* The peer (h6_peer at h_peer_mac) made known: an NS from it with its MAC,
 * our NA cleared.  Leaves its entry in DELAY (our NA was sent to it). */
void h6_learn_peer(struct harness *h);

#endif
