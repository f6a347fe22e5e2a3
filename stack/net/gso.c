/* stack/net/gso.c: TCP segments of several MSS, cut into frames for the wire.
 *
 * With [port] gso = auto, tcp/ hands IPv4 segments of up to ~64 KiB of new
 * data (RTE_MBUF_F_TX_TCP_SEG, tso_segsz = MSS), so TCP, IPv4 and ARP run
 * once per large segment instead of once per MSS.  A NIC with TSO cuts
 * them itself; otherwise DPDK's rte_gso cuts them here, on the way into the
 * TX buffer, so the stages (capture, the emulated wire) see the frames as
 * they are on the wire.  rte_gso copies the headers into each frame and
 * fixes lengths, sequence numbers, IP IDs and the FIN/PSH flags, but no
 * checksum: each frame's are filled here (or by the NIC's offload).
 */
#include <errno.h>

#include <rte_ethdev.h>
#include <rte_gso.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"

void us_gso_init(struct us_net *n)
{
	n->gso_ctx = (struct rte_gso_ctx){
		.direct_pool = n->pool,
		.indirect_pool = n->indirect_pool,
		.gso_types = RTE_ETH_TX_OFFLOAD_TCP_TSO,
		.gso_size = (uint16_t)(n->port.mtu + RTE_ETHER_HDR_LEN), /* per segment below */
		.flag = 0, /* IP IDs count up from the large segment's */
	};
}

/* Checksums of one frame (m at its Ethernet header): the NIC's where it has
 * the offload (pseudo-header sum in the field, DPDK's contract), else ours. */
static void gso_frame_csum(const struct us_net *n, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((char *)ip + m->l3_len);

	m->ol_flags |= RTE_MBUF_F_TX_IPV4;
	if (n->port.tx_ip_csum) {
		ip->hdr_checksum = 0;
		m->ol_flags |= RTE_MBUF_F_TX_IP_CKSUM;
	} else {
		us_csum_ipv4_hdr_set(ip);
	}
	th->cksum = 0;
	if (n->port.tx_l4_csum) {
		m->ol_flags |= RTE_MBUF_F_TX_TCP_CKSUM;
		th->cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
	} else {
		th->cksum = us_csum_l4(m, ip, (uint16_t)(m->l2_len + m->l3_len));
	}
}

/* TSO: the NIC wants the pseudo-header sum without the length in the TCP
 * field (rte_ipv4_phdr_cksum does that for RTE_MBUF_F_TX_TCP_SEG). */
static void gso_nic_prepare(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, m->l2_len);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((char *)ip + m->l3_len);

	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM | RTE_MBUF_F_TX_TCP_CKSUM;
	ip->hdr_checksum = 0;
	th->cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
}

int us_gso_cut(struct us_net *n, struct rte_mbuf *m, struct rte_mbuf **out, uint16_t max)
{
	/* Frames of tso_segsz payload after the same headers: the MSS tcp/
	 * sized the segment with, which may be below what the MTU allows. */
	struct rte_gso_ctx ctx = n->gso_ctx;
	uint8_t l2 = (uint8_t)m->l2_len, l3 = (uint8_t)m->l3_len;
	int k;

	if (n->port.tso) {
		gso_nic_prepare(m);
		out[0] = m;
		US_NET_STAT_INC(n, gso_by_nic);
		return 1;
	}
	ctx.gso_size = (uint16_t)(l2 + l3 + m->l4_len + m->tso_segsz);
	m->ol_flags |= RTE_MBUF_F_TX_IPV4; /* rte_gso cuts only what says TCP/IPv4 */
	k = rte_gso_segment(m, &ctx, out, max);
	if (k < 0) {
		US_NET_STAT_INC(n, gso_drop_no_mbuf);
		rte_pktmbuf_free(m);
		return k;
	}
	if (k == 0 && m->pkt_len > ctx.gso_size) {
		/* Refused, not cut: never sent larger than the MTU. */
		US_NET_STAT_INC(n, gso_drop_not_cut);
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	if (k == 0) {
		/* Fits one frame after all: as it is. */
		m->ol_flags &= ~RTE_MBUF_F_TX_TCP_SEG;
		out[0] = m;
		k = 1;
	} else {
		/* The frames hold their own references to m's data. */
		rte_pktmbuf_free(m);
		US_NET_STAT_INC(n, gso_cut);
		US_NET_STAT_ADD(n, gso_frames, (uint64_t)k);
		/* rte_gso numbered the frames' IP IDs from the first one. */
		n->ip.next_id = (uint16_t)(n->ip.next_id + k - 1);
	}
	for (int i = 0; i < k; i++) {
		out[i]->l2_len = l2;
		out[i]->l3_len = l3;
		gso_frame_csum(n, out[i]);
	}
	return k;
}
