/* tests/unit/stack/harness6.c: IPv6 frames for the engine harness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/in.h>
#include <string.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness6.h"

const struct us_in6 h6_our = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 } };
const struct us_in6 h6_peer = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 7 } };
const struct us_in6 h6_peer2 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 8 } };
const struct us_in6 h6_gw = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 1 } };
const struct us_in6 h6_all_nodes = { .b = { 0xff, 0x02, [15] = 1 } };
const struct us_in6 h6_unspec;
struct us_in6 h6_our_ll;
const struct us_in6 h6_peer_ll = { .b = { 0xfe, 0x80, [15] = 7 } };

void h6_config(struct harness *h, bool dad)
{
	h->cfg.ip6_enable = true;
	h->cfg.addr6 = h6_our;
	h->cfg.prefixlen6 = 64;
	h->cfg.has_addr6 = true;
	h->cfg.hop_limit = 64;
	h->cfg.dad = dad;
	us_in6_linklocal_of(h_our_mac.addr_bytes, &h6_our_ll);
}

void h6_start(struct harness *h, bool dad)
{
	h6_config(h, dad);
	h_start(h);
	us_engine_announce(h->e);
	if (dad)
		return;
	/* One unsolicited NA per address, the gratuitous ARP before them. */
	assert_int_equal(h->port.ntx, 3);
	assert_int_equal(us_engine_counter(h->e, "nd6_tx_unsolicited_na"), 2);
	h_clear_tx(h);
}

struct rte_ether_addr h6_mcast_mac(const struct us_in6 *group)
{
	struct rte_ether_addr mac;

	us_in6_mcast_mac(group, mac.addr_bytes);
	return mac;
}

struct us_in6 h6_snode(const struct us_in6 *a)
{
	struct us_in6 g;

	us_in6_solicited_node(a, &g);
	return g;
}

struct rte_mbuf *h6_frame(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			  const struct us_in6 *dst, uint8_t proto, uint8_t hop_limit,
			  const void *payload, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	struct rte_ether_hdr *eh;
	struct rte_ipv6_hdr *ip;

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(H6_ETH_IP6 + len));
	assert_non_null(eh);
	eh->dst_addr = *eth_dst;
	eh->src_addr = h_peer_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip = (struct rte_ipv6_hdr *)(eh + 1);
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)len);
	ip->proto = proto;
	ip->hop_limits = hop_limit;
	memcpy(ip->src_addr, src->b, 16);
	memcpy(ip->dst_addr, dst->b, 16);
	if (len > 0)
		memcpy(ip + 1, payload, len);
	return m;
}

struct rte_ipv6_hdr *h6_iph(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv6_hdr *, sizeof(struct rte_ether_hdr));
}

uint8_t *h6_l4(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, uint8_t *, H6_ETH_IP6);
}

uint16_t h6_l4_sum(const struct us_in6 *src, const struct us_in6 *dst, uint8_t proto,
		   const uint8_t *p, uint32_t len)
{
	uint32_t sum = 0;

	for (unsigned i = 0; i < 16; i += 2)
		sum += (uint32_t)(src->b[i] << 8 | src->b[i + 1]) +
		       (uint32_t)(dst->b[i] << 8 | dst->b[i + 1]);
	sum += (len >> 16) + (len & 0xffff) + proto;
	for (uint32_t i = 0; i < len; i += 2)
		sum += (uint32_t)(p[i] << 8) | (i + 1 < len ? p[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* The ICMPv6 sum over a contiguous frame, pseudo-header included (RFC 8200
 * 8.1), computed here independently of the stack. */
static uint16_t h6_icmp_sum(struct rte_mbuf *m)
{
	struct rte_ipv6_hdr *ip = h6_iph(m);
	struct us_in6 src = h6_addr_at(ip->src_addr), dst = h6_addr_at(ip->dst_addr);

	assert_true(rte_pktmbuf_is_contiguous(m));
	return h6_l4_sum(&src, &dst, IPPROTO_ICMPV6, h6_l4(m), rte_be_to_cpu_16(ip->payload_len));
}

void h6_fix_icmp(struct rte_mbuf *m)
{
	uint8_t *p = h6_l4(m);
	uint16_t ck;

	p[2] = p[3] = 0;
	ck = (uint16_t)~h6_icmp_sum(m);
	p[2] = (uint8_t)(ck >> 8);
	p[3] = (uint8_t)ck;
}

struct rte_mbuf *h6_icmp(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			 const struct us_in6 *dst, uint8_t hop_limit, const void *msg, size_t len)
{
	struct rte_mbuf *m = h6_frame(eth_dst, src, dst, IPPROTO_ICMPV6, hop_limit, msg, len);

	h6_fix_icmp(m);
	return m;
}

void h6_assert_icmp(struct rte_mbuf *m, uint8_t type)
{
	assert_int_equal(rte_be_to_cpu_16(rte_pktmbuf_mtod(m, struct rte_ether_hdr *)->ether_type),
			 RTE_ETHER_TYPE_IPV6);
	assert_int_equal(h6_iph(m)->proto, IPPROTO_ICMPV6);
	assert_int_equal(h6_l4(m)[0], type);
	assert_int_equal(h6_icmp_sum(m), 0xffff);
}

size_t h6_udp_msg(uint8_t *buf, const struct us_in6 *src, const struct us_in6 *dst,
		  uint16_t sport, uint16_t dport, const void *data, size_t len)
{
	uint16_t ulen = (uint16_t)(8 + len), ck;

	buf[0] = (uint8_t)(sport >> 8);
	buf[1] = (uint8_t)sport;
	buf[2] = (uint8_t)(dport >> 8);
	buf[3] = (uint8_t)dport;
	buf[4] = (uint8_t)(ulen >> 8);
	buf[5] = (uint8_t)ulen;
	buf[6] = buf[7] = 0;
	if (len > 0)
		memcpy(buf + 8, data, len);
	ck = (uint16_t)~h6_l4_sum(src, dst, IPPROTO_UDP, buf, ulen);
	if (ck == 0)
		ck = 0xffff;
	buf[6] = (uint8_t)(ck >> 8);
	buf[7] = (uint8_t)ck;
	return ulen;
}

struct rte_mbuf *h6_udp(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			const struct us_in6 *dst, uint16_t sport, uint16_t dport, const void *data,
			size_t len)
{
	uint8_t msg[2048];

	assert_true(len + 8 <= sizeof(msg));
	return h6_frame(eth_dst, src, dst, IPPROTO_UDP, 64, msg,
			h6_udp_msg(msg, src, dst, sport, dport, data, len));
}

size_t h6_echo(uint8_t *buf, uint16_t ident, uint16_t seq, size_t data_len)
{
	memset(buf, 0, 8);
	buf[0] = 128;
	buf[4] = (uint8_t)(ident >> 8);
	buf[5] = (uint8_t)ident;
	buf[6] = (uint8_t)(seq >> 8);
	buf[7] = (uint8_t)seq;
	for (size_t i = 0; i < data_len; i++)
		buf[8 + i] = (uint8_t)(i * 7 + (i >> 8));
	return 8 + data_len;
}

static size_t h6_nd(uint8_t *buf, uint8_t type, uint8_t flags, const struct us_in6 *target,
		    uint8_t opt, const struct rte_ether_addr *ll)
{
	memset(buf, 0, 32);
	buf[0] = type;
	buf[4] = flags;
	memcpy(buf + 8, target->b, 16);
	if (ll == NULL)
		return 24;
	buf[24] = opt;
	buf[25] = 1;
	memcpy(buf + 26, ll->addr_bytes, 6);
	return 32;
}

size_t h6_ns(uint8_t *buf, const struct us_in6 *target, const struct rte_ether_addr *ll)
{
	return h6_nd(buf, 135, 0, target, 1, ll);
}

size_t h6_na(uint8_t *buf, uint8_t flags, const struct us_in6 *target,
	     const struct rte_ether_addr *ll)
{
	return h6_nd(buf, 136, flags, target, 2, ll);
}

void h6_inject(struct harness *h, struct rte_mbuf *m)
{
	us_engine_input(h->e, m);
	us_engine_flush(h->e);
}

void h6_learn_peer(struct harness *h)
{
	struct us_in6 g = h6_snode(&h6_our);
	struct rte_ether_addr mac = h6_mcast_mac(&g);
	uint8_t msg[32];
	size_t n = h6_ns(msg, &h6_our, &h_peer_mac);

	h6_inject(h, h6_icmp(&mac, &h6_peer, &g, 255, msg, n));
	assert_int_equal(h->port.ntx, 1);
	h6_assert_icmp(h->port.tx[0], 136);
	h_clear_tx(h);
}

int h6_teardown(void **state)
{
	h_teardown(*state);
	return 0;
}

struct us_net *h6_net(struct harness *h)
{
	return &h->e->net;
}

int64_t h6_ctr(struct harness *h, const char *name)
{
	return us_engine_counter(h->e, name);
}

struct us_in6 h6_addr_at(const uint8_t *p)
{
	struct us_in6 a;

	memcpy(a.b, p, 16);
	return a;
}
