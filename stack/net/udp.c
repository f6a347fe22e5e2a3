/* stack/net/udp.c: UDP (RFC 768) input over IPv4 and IPv6.  A valid
 * datagram goes to the UDP socket bound to its port (stack/sock/socket_udp.c,
 * through the deliver hook it sets), with both families' addresses as
 * struct us_in6 (IPv4 ones v4-mapped); for a closed port RFC 1122 4.1.3.1
 * and RFC 4443 3.1 (code 4) say answer with a port unreachable. */
#include <errno.h>
#include <netinet/icmp6.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"

/* phdr: the pseudo-header's sum for the UDP length (not the IP one: RFC
 * 768, RFC 8200 8.1). */
static bool udp_csum_ok(const struct us_net *n, const struct rte_mbuf *m, uint16_t ulen,
			uint16_t phdr)
{
	uint16_t raw;

	if (n->port.rx_csum) {
		uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

		if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
			return true;
		if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
			return false;
	}
	if (us_csum_raw_mbuf(m, 0, ulen, &raw) < 0)
		return false;
	return us_csum_fold((uint32_t)raw + phdr) == 0xffff;
}

/* What both families check first: a header, a length within the payload.
 * The UDP length, or 0 (dropped: counted, the caller frees). */
static uint16_t udp_len_ok(struct us_net *n, const struct rte_mbuf *m)
{
	const struct rte_udp_hdr *uh;
	uint16_t ulen;

	if (rte_pktmbuf_data_len(m) < sizeof(*uh)) {
		US_NET_STAT_INC(n, udp_drop_short);
		return 0;
	}
	uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	ulen = rte_be_to_cpu_16(uh->dgram_len);
	if (ulen < sizeof(*uh) || ulen > rte_pktmbuf_pkt_len(m)) {
		US_NET_STAT_INC(n, udp_drop_bad_len);
		return 0;
	}
	return ulen;
}

/* 0 when a socket took m, -ENOENT when none has its port (m untouched). */
static int udp_deliver(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *src,
		       const struct us_in6 *dst)
{
	if (n->udp_deliver != NULL && n->udp_deliver(n->udp_ctx, m, src, dst) == 0)
		return 0; /* stack/sock/socket_udp.c */
	US_NET_STAT_INC(n, udp_drop_no_port);
	return -ENOENT;
}

void us_udp_set_deliver(struct us_net *n, us_net_udp_deliver_fn deliver, void *ctx)
{
	n->udp_deliver = deliver;
	n->udp_ctx = ctx;
}

void us_udp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	const struct rte_udp_hdr *uh;
	struct us_in6 src, dst;
	uint16_t ulen;

	US_NET_STAT_INC(n, udp_rx);
	ulen = udp_len_ok(n, m);
	if (ulen == 0)
		goto drop;
	uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	/* A zero checksum means the sender did not compute one (RFC 768). */
	if (uh->dgram_cksum != 0 && !udp_csum_ok(n, m, ulen, us_csum_phdr(ip, ulen))) {
		US_NET_STAT_INC(n, udp_drop_bad_csum);
		goto drop;
	}
	src = us_in6_of_v4(rte_be_to_cpu_32(ip->src_addr));
	dst = us_in6_of_v4(rte_be_to_cpu_32(ip->dst_addr));
	if (udp_deliver(n, m, &src, &dst) == 0)
		return;
	us_icmp_unreach(n, 3, ip, m);
drop:
	rte_pktmbuf_free(m);
}

void us_udp6_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6)
{
	const struct rte_udp_hdr *uh;
	struct us_in6 src, dst;
	uint16_t ulen;

	US_NET_STAT_INC(n, udp_rx);
	US_NET_STAT_INC(n, udp6_rx);
	ulen = udp_len_ok(n, m);
	if (ulen == 0)
		goto drop;
	uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	memcpy(src.b, ip6->src_addr, sizeof(src.b));
	memcpy(dst.b, ip6->dst_addr, sizeof(dst.b));
	/* RFC 8200 8.1: over IPv6 the checksum is mandatory; a zero one is
	 * discarded (the tunnel exceptions of RFC 6935 are not ours). */
	if (uh->dgram_cksum == 0) {
		US_NET_STAT_INC(n, udp6_drop_zero_csum);
		goto drop;
	}
	if (!udp_csum_ok(n, m, ulen, us_csum_phdr6(&src, &dst, ulen, IPPROTO_UDP))) {
		US_NET_STAT_INC(n, udp_drop_bad_csum);
		goto drop;
	}
	if (udp_deliver(n, m, &src, &dst) == 0)
		return;
	/* icmp6.c keeps RFC 4443 2.4 (e): nothing about a datagram sent to a
	 * group or from ::, and its own rate limit. */
	us_icmp6_error(n, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, 0, ip6, m);
drop:
	rte_pktmbuf_free(m);
}
