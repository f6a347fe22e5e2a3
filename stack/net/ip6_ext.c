/* stack/net/ip6_ext.c: the extension-header chain of a received IPv6
 * packet (RFC 8200 4), walked once before anything else reads the packet.
 *
 * A host processes hop-by-hop and destination options, refuses to route
 * (a routing header with segments left is an error, type 0 included, RFC
 * 5095), and stops at a fragment header: what follows is fragment payload,
 * walked again once reassembled.  Any other Next Header ends the chain and
 * names the upper layer.  The walk is bounded in headers and bytes, so a
 * crafted chain costs us a fixed amount of work; beyond the bounds the
 * packet is dropped without an error message (nothing in RFC 8200 asks for
 * one, and answering would make us an amplifier).
 *
 * Headers are read with rte_pktmbuf_read: a chain split across segments is
 * walked like a contiguous one.
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stddef.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stack/net/net.h"

/* RFC 8200 4.2: the two options every node knows. */
#define EXT_OPT_PAD1 0
#define EXT_OPT_PADN 1

static int ext_refuse(struct us_ip6_refusal *r, uint8_t code, uint32_t pointer)
{
	r->icmp = true;
	r->type = ICMP6_PARAM_PROB;
	r->code = code;
	r->pointer = pointer;
	return -EINVAL;
}

/* RFC 8200 4.2: an option we do not recognise, by the two high-order bits
 * of its type.  at: the offset of its type byte from the IPv6 header. */
static int ext_unknown_option(struct us_net *n, uint8_t type, uint32_t at, bool dst_mcast,
			      struct us_ip6_refusal *r)
{
	switch (type >> 6) {
	case 0: /* skip over it */
		US_NET_STAT_INC(n, ip6_ext_opt_skipped);
		return 0;
	case 1: /* discard silently */
		US_NET_STAT_INC(n, ip6_ext_drop_opt_discard);
		return -EINVAL;
	case 2: /* discard, and tell the source even if we were a multicast group */
		US_NET_STAT_INC(n, ip6_ext_drop_opt_icmp);
		r->even_mcast = true;
		return ext_refuse(r, ICMP6_PARAMPROB_OPTION, at);
	default: /* discard, and tell the source unless the destination was multicast */
		US_NET_STAT_INC(n, ip6_ext_drop_opt_icmp_unicast);
		if (dst_mcast)
			return -EINVAL;
		return ext_refuse(r, ICMP6_PARAMPROB_OPTION, at);
	}
}

/* Hop-by-hop or destination options: h is the whole header (hlen bytes),
 * off its offset from the IPv6 header.  Every option must end inside it. */
static int ext_options(struct us_net *n, const uint8_t *h, unsigned hlen, uint32_t off,
		       bool dst_mcast, struct us_ip6_refusal *r)
{
	unsigned i = 2; /* after Next Header and Hdr Ext Len */

	while (i < hlen) {
		uint8_t type = h[i];
		int rc;

		if (type == EXT_OPT_PAD1) {
			i++;
			continue;
		}
		if (i + 2 > hlen || i + 2u + h[i + 1] > hlen) {
			US_NET_STAT_INC(n, ip6_ext_drop_opt_overrun);
			return -EINVAL;
		}
		if (type != EXT_OPT_PADN) {
			rc = ext_unknown_option(n, type, off + i, dst_mcast, r);
			if (rc < 0)
				return rc;
		}
		i += 2u + h[i + 1];
	}
	return 0;
}

/* RFC 8200 4.4 and RFC 5095 3: a host routes nothing, so every routing
 * type is one it does not recognise.  Segments Left 0: the header is
 * ignored; else an error pointing at the Routing Type. */
static int ext_routing(struct us_net *n, const uint8_t *h, uint32_t off, struct us_ip6_refusal *r)
{
	uint8_t type = h[2], segments_left = h[3];

	if (segments_left == 0) {
		US_NET_STAT_INC(n, ip6_ext_rh_ignored);
		return 0;
	}
	if (type == 0)
		US_NET_STAT_INC(n, ip6_ext_drop_rh0);
	else
		US_NET_STAT_INC(n, ip6_ext_drop_rh_segleft);
	return ext_refuse(r, ICMP6_PARAMPROB_HEADER, off + 2);
}

static bool ext_is_ext(uint8_t nh)
{
	return nh == IPPROTO_HOPOPTS || nh == IPPROTO_ROUTING || nh == IPPROTO_FRAGMENT ||
	       nh == IPPROTO_DSTOPTS;
}

/* The header of type nh at off, within the bounds: its length in *hlen,
 * its bytes at *hp (in m, or copied to buf when m splits it).  *bytes
 * counts the chain so far. */
static int ext_fetch(struct us_net *n, const struct rte_mbuf *m, uint8_t nh, uint32_t off,
		     uint32_t end, unsigned *bytes, uint8_t *buf, const uint8_t **hp,
		     unsigned *hlen)
{
	const uint8_t *h;
	uint8_t first[2];

	if (off + 2 > end || (h = rte_pktmbuf_read(m, off, 2, first)) == NULL) {
		US_NET_STAT_INC(n, ip6_ext_drop_truncated);
		return -EINVAL;
	}
	/* RFC 8200 4.5: the fragment header has a fixed length (its second
	 * byte is reserved); the others count 8-octet units beyond the first. */
	*hlen = nh == IPPROTO_FRAGMENT ? RTE_IPV6_FRAG_HDR_SIZE : (h[1] + 1u) * 8u;
	*bytes += *hlen;
	if (*bytes > US_IP6_EXT_BYTES) {
		US_NET_STAT_INC(n, ip6_ext_drop_too_long);
		return -EINVAL;
	}
	if (off + *hlen > end) {
		US_NET_STAT_INC(n, ip6_ext_drop_truncated);
		return -EINVAL;
	}
	*hp = rte_pktmbuf_read(m, off, *hlen, buf);
	return 0;
}

/* One extension header of nh's type (h, hlen bytes at off). */
static int ext_process(struct us_net *n, uint8_t nh, const uint8_t *h, unsigned hlen,
		       uint32_t off, bool dst_mcast, struct us_ip6_refusal *r)
{
	switch (nh) {
	case IPPROTO_HOPOPTS:
	case IPPROTO_DSTOPTS:
		return ext_options(n, h, hlen, off, dst_mcast, r);
	case IPPROTO_ROUTING:
		return ext_routing(n, h, off, r);
	default:
		return 0;
	}
}

int us_ip6_walk(struct us_net *n, const struct rte_mbuf *m, struct us_ip6_chain *c,
		struct us_ip6_refusal *r)
{
	uint8_t buf[US_IP6_EXT_BYTES];
	const uint8_t *h = NULL;
	struct rte_ipv6_hdr hbuf;
	const struct rte_ipv6_hdr *ip6;
	uint32_t off = sizeof(*ip6), nh_off = offsetof(struct rte_ipv6_hdr, proto), end;
	unsigned bytes = 0, hlen;
	bool dst_mcast;
	uint8_t nh;

	*c = (struct us_ip6_chain){ 0 };
	*r = (struct us_ip6_refusal){ 0 };
	ip6 = rte_pktmbuf_read(m, 0, sizeof(*ip6), &hbuf);
	if (ip6 == NULL) {
		US_NET_STAT_INC(n, ip6_ext_drop_truncated);
		return -EINVAL;
	}
	end = RTE_MIN(sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len), rte_pktmbuf_pkt_len(m));
	dst_mcast = us_in6_is_mcast((const struct us_in6 *)ip6->dst_addr);
	for (nh = ip6->proto; ext_is_ext(nh); nh = h[0]) {
		if (c->nhdrs == US_IP6_EXT_MAX) {
			US_NET_STAT_INC(n, ip6_ext_drop_too_many);
			return -EINVAL;
		}
		/* RFC 8200 4.1: hop-by-hop options only right after the IPv6
		 * header; anywhere else its Next Header value is unrecognised. */
		if (nh == IPPROTO_HOPOPTS && off != sizeof(*ip6)) {
			US_NET_STAT_INC(n, ip6_ext_drop_hbh_not_first);
			return ext_refuse(r, ICMP6_PARAMPROB_NEXTHEADER, nh_off);
		}
		if (ext_fetch(n, m, nh, off, end, &bytes, buf, &h, &hlen) < 0)
			return -EINVAL;
		c->nhdrs++;
		if (nh == IPPROTO_FRAGMENT) {
			/* The rest is fragment payload (frag6.c). */
			c->proto = IPPROTO_FRAGMENT;
			c->frag_off = (uint16_t)off;
			c->frag_nh_off = (uint16_t)nh_off;
			c->l4_off = (uint16_t)(off + hlen);
			return 0;
		}
		if (ext_process(n, nh, h, hlen, off, dst_mcast, r) < 0)
			return -EINVAL;
		nh_off = off;
		off += hlen;
	}
	c->proto = nh;
	c->l4_off = (uint16_t)off;
	return 0;
}
