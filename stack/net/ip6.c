/* stack/net/ip6.c: IPv6 (RFC 8200) for a host.
 *
 * Input validates the fixed header (version, payload length against the
 * frame, a destination of ours, a source that may send), has the
 * extension-header chain walked (ip6_ext.c), reassembles fragments
 * (frag6.c) and hands ICMPv6 to icmp6.c and UDP to udp.c with m's data
 * at their header.  We never forward, so the hop limit is not checked on
 * receipt.
 *
 * Output builds the header, picks the source (ip6_addr.c) and the next hop
 * (route6.c), fragments what exceeds the path MTU unless told not to, and
 * resolves the next hop through Neighbor Discovery (nd6.c).
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "stack/net/net.h"
#include "tcp/tcp.h"

/* RFC 8200 4.5: the most fragments a 65535-byte payload needs at the
 * minimum MTU (each carries a multiple of 8 bytes after the IPv6 and
 * fragment headers). */
_Static_assert(US_IP_FRAG_MAX_OUT * ((US_IP6_MIN_MTU - sizeof(struct rte_ipv6_hdr) - 8) & ~7u) >=
		       UINT16_MAX,
	       "room for every fragment of the largest datagram at the minimum MTU");

int us_ip6_init(struct us_net *n, const struct us_config *cfg)
{
	n->ip6.hop_limit = cfg->hop_limit ? cfg->hop_limit : 64;
	memset(n->ip6.pmtu, 0, sizeof(n->ip6.pmtu));
	n->ip6.npmtu = 0;
	return us_route6_init(n, cfg);
}

int us_ip6_prepend(struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
		   uint8_t proto, uint8_t hop_limit)
{
	return us_ip6_prepend_flow(m, src, dst, proto, hop_limit, 0);
}

int us_ip6_prepend_flow(struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
			uint8_t proto, uint8_t hop_limit, uint32_t flow_label)
{
	uint32_t plen = rte_pktmbuf_pkt_len(m);
	struct rte_ipv6_hdr *ip;

	if (plen > UINT16_MAX)
		return -EMSGSIZE; /* a jumbogram (RFC 2675): not sent */
	ip = (struct rte_ipv6_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));
	if (ip == NULL)
		return -ENOBUFS;
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (flow_label & 0xfffffu));
	ip->payload_len = rte_cpu_to_be_16((uint16_t)plen);
	ip->proto = proto;
	ip->hop_limits = hop_limit;
	memcpy(ip->src_addr, src->b, sizeof(ip->src_addr));
	memcpy(ip->dst_addr, dst->b, sizeof(ip->dst_addr));
	m->l3_len = sizeof(*ip);
	return 0;
}

static bool ip6_is_ext(uint8_t proto)
{
	return proto == IPPROTO_HOPOPTS || proto == IPPROTO_ROUTING ||
	       proto == IPPROTO_FRAGMENT || proto == IPPROTO_DSTOPTS || proto == IPPROTO_AH;
}

int us_ip6_skip_ext(const struct rte_mbuf *m, uint32_t ip_off, uint8_t *proto, uint32_t *l4_off,
		    uint32_t *nh_off)
{
	uint32_t nh = ip_off + offsetof(struct rte_ipv6_hdr, proto);
	uint32_t off = ip_off + sizeof(struct rte_ipv6_hdr);
	uint8_t buf[4], next;
	const uint8_t *p = rte_pktmbuf_read(m, nh, 1, buf);

	if (p == NULL)
		return -EINVAL;
	next = *p;
	for (unsigned k = 0; ip6_is_ext(next); k++) {
		size_t len = 0;

		p = rte_pktmbuf_read(m, off, sizeof(buf), buf);
		if (p == NULL || k == US_IP6_EXT_MAX)
			return -EINVAL;
		/* A later fragment: what follows is not a header. */
		if (next == IPPROTO_FRAGMENT && (((p[2] << 8) | p[3]) & RTE_IPV6_EHDR_FO_MASK))
			break;
		nh = off;
		next = (uint8_t)rte_ipv6_get_next_ext(p, next, &len);
		off += (uint32_t)len;
	}
	*proto = next;
	*l4_off = off;
	*nh_off = nh;
	return 0;
}

/* Input */

/* RFC 8200 3, RFC 4291: what a host checks before taking a packet. 0, or
 * -EINVAL after counting the reason. */
static int ip6_validate(struct us_net *n, struct rte_mbuf *m)
{
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);
	uint32_t tot = sizeof(*ip) + rte_be_to_cpu_16(ip->payload_len);
	struct us_in6 src, dst;
	bool ours;

	if (rte_be_to_cpu_32(ip->vtc_flow) >> 28 != 6)
		return US_NET_STAT_INC(n, ip6_drop_bad_version), -EINVAL;
	if (tot > rte_pktmbuf_pkt_len(m))
		return US_NET_STAT_INC(n, ip6_drop_bad_len), -EINVAL;
	memcpy(src.b, ip->src_addr, sizeof(src.b));
	memcpy(dst.b, ip->dst_addr, sizeof(dst.b));
	/* A host does not forward: a usable address of ours or a group we
	 * joined.  A tentative address receives nothing but ND (RFC 4862
	 * 5.4), which comes to its solicited-node group. */
	ours = us_in6_is_mcast(&dst) ? us_ip6_is_joined(n, &dst) : us_ip6_is_local(n, &dst);
	if (!ours && us_ip6_is_tentative(n, &dst))
		return US_NET_STAT_INC(n, ip6_drop_tentative), -EINVAL;
	if (!ours)
		return US_NET_STAT_INC(n, ip6_drop_not_for_us), -EINVAL;
	/* RFC 4291 2.7 and 2.5.3: no group sends, and ::1 never arrives from
	 * the wire. */
	if (us_in6_is_mcast(&src) || us_in6_is_loopback(&src))
		return US_NET_STAT_INC(n, ip6_drop_bad_src), -EINVAL;
	/* Ethernet pads short frames: the payload length is the truth. */
	if (tot < rte_pktmbuf_pkt_len(m) && rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - tot) < 0)
		return US_NET_STAT_INC(n, ip6_drop_bad_len), -EINVAL;
	if (ip->hop_limits == 0)
		US_NET_STAT_INC(n, ip6_rx_hop_limit_zero);
	return 0;
}

/* The extension headers: a refusal answered as the walk asks, fragments
 * reassembled and the whole datagram's chain walked again (what followed
 * the fragment header is visible only now).  0 and *mp the packet to
 * deliver, or -EINVAL (*mp consumed: held, dropped, counted). */
static int ip6_chain(struct us_net *n, struct rte_mbuf **mp, struct us_ip6_chain *c)
{
	struct us_ip6_refusal r = { 0 };
	struct rte_mbuf *m = *mp;

	if (us_ip6_walk(n, m, c, &r) < 0)
		goto refused;
	if (c->frag_off == 0)
		return 0;
	m = us_frag6_input(n, m, c);
	*mp = m;
	if (m == NULL)
		return -EINVAL;
	r = (struct us_ip6_refusal){ 0 };
	if (us_ip6_walk(n, m, c, &r) < 0)
		goto refused;
	if (c->frag_off != 0) {
		US_NET_STAT_INC(n, ip6_drop_frag_nested);
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	return 0;
refused:
	if (r.icmp)
		us_icmp6_error(n, r.type, r.code, r.pointer,
			       rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *), m);
	rte_pktmbuf_free(m);
	return -EINVAL;
}

/* RFC 8200 4: a Next Header we do not know earns a parameter problem
 * pointing at the byte that names it. */
static void ip6_unknown_proto(struct us_net *n, struct rte_mbuf *m)
{
	uint32_t l4, nh;
	uint8_t proto;

	US_NET_STAT_INC(n, ip6_drop_unknown_proto);
	if (us_ip6_skip_ext(m, 0, &proto, &l4, &nh) == 0)
		us_icmp6_error(n, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_NEXTHEADER, nh,
			       rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *), m);
	rte_pktmbuf_free(m);
}

/* tcp/ takes the segment (m at its TCP header) with the header's addresses. */
static void ip6_tcp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip)
{
	struct us_in6 src, dst;

	memcpy(src.b, ip->src_addr, sizeof(src.b));
	memcpy(dst.b, ip->dst_addr, sizeof(dst.b));
	US_NET_STAT_INC(n, ip6_rx_tcp);
	tcp_input(n->tcp, m, &src, &dst);
}

static void ip6_deliver(struct us_net *n, struct rte_mbuf *m, const struct us_ip6_chain *c,
			enum us_net_rx from)
{
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);

	switch (c->proto) {
	case IPPROTO_ICMPV6:
		/* The chain sits in the first segment (ip6_ext.c reads it so). */
		if (rte_pktmbuf_adj(m, c->l4_off) == NULL) {
			US_NET_STAT_INC(n, ip6_drop_bad_len);
			break;
		}
		us_icmp6_input(n, m, ip, from);
		return;
	case IPPROTO_TCP:
		if (rte_pktmbuf_adj(m, c->l4_off) == NULL) {
			US_NET_STAT_INC(n, ip6_drop_bad_len);
			break;
		}
		ip6_tcp_input(n, m, ip);
		return;
	case IPPROTO_UDP:
		if (rte_pktmbuf_adj(m, c->l4_off) == NULL) {
			US_NET_STAT_INC(n, ip6_drop_bad_len);
			break;
		}
		us_udp6_input(n, m, ip);
		return;
	case IPPROTO_NONE:
		/* RFC 8200 4.7: nothing follows. */
		US_NET_STAT_INC(n, ip6_rx_no_next_header);
		break;
	default:
		ip6_unknown_proto(n, m);
		return;
	}
	rte_pktmbuf_free(m);
}

void us_ip6_input(struct us_net *n, struct rte_mbuf *m, enum us_net_rx from)
{
	struct us_ip6_chain c;

	US_NET_STAT_INC(n, ip6_rx_packets);
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ipv6_hdr)) {
		US_NET_STAT_INC(n, ip6_drop_short);
		rte_pktmbuf_free(m);
		return;
	}
	if (ip6_validate(n, m) < 0) {
		rte_pktmbuf_free(m);
		return;
	}
	if (ip6_chain(n, &m, &c) < 0)
		return;
	ip6_deliver(n, m, &c, from);
}

/* Output */

/* With checksum offload the NIC wants the pseudo-header sum in the field
 * (DPDK's TX offload contract). */
static void ip6_tcp_csum_offload(struct rte_mbuf *m)
{
	struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

	m->ol_flags |= RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_TCP_CKSUM;
	m->l2_len = sizeof(struct rte_ether_hdr);
	th->cksum = rte_ipv6_phdr_cksum(ip, m->ol_flags);
}

/* RFC 8200 4.5: fragments of at most mtu bytes, each resolved like the
 * whole would have been. */
static void ip6_fragment(struct us_net *n, struct rte_mbuf *m, uint16_t mtu,
			 const struct us_in6 *next_hop)
{
	struct rte_mbuf *frags[US_IP_FRAG_MAX_OUT];
	int k = us_frag6_output(n, m, mtu, frags, US_IP_FRAG_MAX_OUT);

	if (k < 0)
		return; /* freed and counted (ip6_frag_drop_out_fail) */
	for (int i = 0; i < k; i++) {
		US_NET_STAT_INC(n, ip6_tx_packets);
		us_nd6_output(n, frags[i], next_hop);
	}
}

void us_ip6_output(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *src,
		   const struct us_in6 *dst, uint8_t proto, uint8_t hop_limit, unsigned flags)
{
	us_ip6_output_flow(n, m, src, dst, proto, hop_limit, flags, 0);
}

void us_ip6_output_flow(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *src,
			const struct us_in6 *dst, uint8_t proto, uint8_t hop_limit,
			unsigned flags, uint32_t flow_label)
{
	struct us_in6 next_hop, from;
	uint16_t mtu;
	int rc;

	if (us_route6_lookup(n, dst, &next_hop) < 0) {
		US_NET_STAT_INC(n, ip6_drop_no_route);
		goto drop;
	}
	if (src == NULL) {
		if (us_ip6_src_for(n, dst, &from) < 0) {
			US_NET_STAT_INC(n, ip6_drop_no_src);
			goto drop;
		}
		src = &from;
	}
	rc = us_ip6_prepend_flow(m, src, dst, proto, hop_limit ? hop_limit : n->ip6.hop_limit,
				 flow_label);
	if (rc < 0) {
		if (rc == -EMSGSIZE)
			US_NET_STAT_INC(n, ip6_drop_too_big);
		else
			US_NET_STAT_INC(n, ip6_drop_no_headroom);
		goto drop;
	}
	/* Segmentation offload (gso.c) cuts TCP/IPv4 only: an IPv6 packet is
	 * sized for the path before it gets here, or fragmented. */
	mtu = us_ip6_path_mtu(n, dst);
	if (rte_pktmbuf_pkt_len(m) <= mtu) {
		if ((flags & US_IP6_TCP_CSUM) && n->port.tx_l4_csum)
			ip6_tcp_csum_offload(m);
		US_NET_STAT_INC(n, ip6_tx_packets);
		us_nd6_output(n, m, &next_hop);
		return;
	}
	if (flags & US_IP6_NO_FRAG) {
		US_NET_STAT_INC(n, ip6_drop_too_big);
		goto drop;
	}
	ip6_fragment(n, m, mtu, &next_hop);
	return;
drop:
	rte_pktmbuf_free(m);
}
