/* stack/net/eth.c: Ethernet II framing: validate, dispatch, build headers. */
#include <rte_branch_prediction.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "stack/net/net.h"

/* Queues one complete frame for TX.  Inline, with the engine called only
 * when the buffer is due (US_TX_FLUSH) or full: see struct us_net. */
static inline void eth_tx(struct us_net *n, struct rte_mbuf *m)
{
	if (unlikely(n->ntx == US_TX_BUF))
		n->tx_drain(n->tx_ctx, true);
	n->tx[n->ntx++] = m;
	US_NET_STAT_INC(n, eth_tx_frames);
	if (n->ntx >= US_TX_FLUSH)
		n->tx_drain(n->tx_ctx, false);
}

/* A TCP segment of several MSS: its frames, cut here or by the NIC. */
static void eth_tx_gso(struct us_net *n, struct rte_mbuf *m)
{
	struct rte_mbuf *frames[US_GSO_FRAMES_MAX];
	int k = us_gso_cut(n, m, frames, US_GSO_FRAMES_MAX);

	for (int i = 0; i < k; i++)
		eth_tx(n, frames[i]);
}

/* Our MAC, broadcast, and with IPv6 the 33:33 groups of ff02::1 and our
 * solicited-node groups (RFC 2464 7); no other group is joined. */
static bool eth_for_us(const struct us_net *n, const struct rte_ether_addr *dst)
{
	if (rte_is_same_ether_addr(dst, &n->port.mac) || rte_is_broadcast_ether_addr(dst))
		return true;
	return n->ip6_on && dst->addr_bytes[0] == 0x33 && dst->addr_bytes[1] == 0x33 &&
	       us_ip6_is_joined_mac(n, dst);
}

void us_eth_input(struct us_net *n, struct rte_mbuf *m, enum us_net_rx from)
{
	const struct rte_ether_hdr *eh;
	uint16_t type;

	US_NET_STAT_INC(n, eth_rx_frames);
	if (rte_pktmbuf_data_len(m) < sizeof(*eh)) {
		US_NET_STAT_INC(n, eth_drop_short);
		goto drop;
	}
	eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (!eth_for_us(n, &eh->dst_addr)) {
		US_NET_STAT_INC(n, eth_drop_not_for_us);
		goto drop;
	}
	type = rte_be_to_cpu_16(eh->ether_type);
	switch (type) {
	case RTE_ETHER_TYPE_IPV4:
		rte_pktmbuf_adj(m, sizeof(*eh));
		us_ip_input(n, m);
		return;
	case RTE_ETHER_TYPE_ARP:
		rte_pktmbuf_adj(m, sizeof(*eh));
		us_arp_input(n, m, from);
		return;
	case RTE_ETHER_TYPE_IPV6:
		if (n->ip6_on) {
			rte_pktmbuf_adj(m, sizeof(*eh));
			us_ip6_input(n, m, from);
			return;
		}
		/* [ip6] enable = off: a type we do not speak. */
		/* fall through */
	default:
		/* VLAN tags land here too until we speak them. */
		US_NET_STAT_INC(n, eth_drop_unknown_type);
		goto drop;
	}
drop:
	rte_pktmbuf_free(m);
}

void us_eth_output(struct us_net *n, struct rte_mbuf *m, const struct rte_ether_addr *dst,
		   uint16_t ethertype)
{
	struct rte_ether_hdr *eh;

	eh = (struct rte_ether_hdr *)rte_pktmbuf_prepend(m, sizeof(*eh));
	if (eh == NULL) {
		US_NET_STAT_INC(n, eth_drop_no_headroom);
		rte_pktmbuf_free(m);
		return;
	}
	rte_ether_addr_copy(dst, &eh->dst_addr);
	rte_ether_addr_copy(&n->port.mac, &eh->src_addr);
	eh->ether_type = rte_cpu_to_be_16(ethertype);
	m->l2_len = sizeof(*eh);
	if (unlikely(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
		eth_tx_gso(n, m);
		return;
	}
	eth_tx(n, m);
}
