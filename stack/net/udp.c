/* stack/net/udp.c: UDP (RFC 768) input.  A valid datagram goes to the UDP
 * socket bound to its port (stack/sock/socket_udp.c, through the deliver
 * hook it sets); for a closed port RFC 1122 4.1.3.1 says answer with ICMP
 * port unreachable. */
#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_udp.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"

static bool udp_csum_ok(const struct us_net *n, const struct rte_mbuf *m,
			const struct rte_ipv4_hdr *ip, uint16_t ulen)
{
	uint16_t raw;

	if (n->port.rx_csum) {
		uint64_t f = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;

		if (f == RTE_MBUF_F_RX_L4_CKSUM_GOOD)
			return true;
		if (f == RTE_MBUF_F_RX_L4_CKSUM_BAD)
			return false;
	}
	/* Pseudo-header with the UDP length (not the IP one: RFC 768). */
	if (us_csum_raw_mbuf(m, 0, ulen, &raw) < 0)
		return false;
	return us_csum_fold((uint32_t)raw + us_csum_phdr(ip, ulen)) == 0xffff;
}

void us_udp_set_deliver(struct us_net *n, us_net_udp_deliver_fn deliver, void *ctx)
{
	n->udp_deliver = deliver;
	n->udp_ctx = ctx;
}

void us_udp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	const struct rte_udp_hdr *uh;
	uint16_t ulen;

	US_NET_STAT_INC(n, udp_rx);
	if (rte_pktmbuf_data_len(m) < sizeof(*uh)) {
		US_NET_STAT_INC(n, udp_drop_short);
		goto drop;
	}
	uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	ulen = rte_be_to_cpu_16(uh->dgram_len);
	if (ulen < sizeof(*uh) || ulen > rte_pktmbuf_pkt_len(m)) {
		US_NET_STAT_INC(n, udp_drop_bad_len);
		goto drop;
	}
	/* A zero checksum means the sender did not compute one (RFC 768). */
	if (uh->dgram_cksum != 0 && !udp_csum_ok(n, m, ip, ulen)) {
		US_NET_STAT_INC(n, udp_drop_bad_csum);
		goto drop;
	}
	if (n->udp_deliver != NULL && n->udp_deliver(n->udp_ctx, m, ip) == 0)
		return; /* a socket took it (stack/sock/socket_udp.c) */
	US_NET_STAT_INC(n, udp_drop_no_port);
	us_icmp_unreach(n, 3, ip, m);
drop:
	rte_pktmbuf_free(m);
}
