/* stack/net/gro.c: in-order TCP segments of one flow, coalesced before TCP.
 *
 * With [port] gro = auto and no LRO in the NIC, the frames of one RX burst
 * go through DPDK's rte_gro (TCP/IPv4, lightweight mode): consecutive
 * in-order data segments of a flow become one segment (a chain), so IPv4
 * and TCP input run once for them.  rte_gro merges only segments whose
 * flags are ACK alone (no PSH, FIN, SYN, RST, URG, ECE or CWR: those end a
 * run and are processed on their own) and whose options are byte for byte
 * the same, so the timestamps TCP takes from the first (TS.Recent, the RTT
 * sample) are those of every merged one.  It checks no checksum and leaves
 * the merged IPv4 header's stale, so every frame is verified here first and
 * flagged good; a frame that fails stays as it is, for IPv4 or TCP to drop
 * and count.  TCP acknowledges a coalesced segment as often as its frames
 * would have been (tcp/established.c ack_inside_coalesced).
 *
 * rte_gro puts what it merged before what it did not: handed a whole burst
 * it would move a PSH segment behind the data that followed it.  So it only
 * sees runs of frames it can merge, each run in place, and a run also ends
 * where the advertised window changes (merged segments carry the first
 * one's: a newer window must not be lost).
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_gro.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"

#define GRO_HDR_MIN (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_tcp_hdr))

static bool gro_csum_ok(const struct us_net *n, const struct rte_mbuf *m,
			const struct rte_ipv4_hdr *ip, uint16_t l4_off)
{
	uint64_t fip = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;
	uint64_t fl4 = m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK;
	bool ip_ok = n->port.rx_csum && fip == RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	bool l4_ok = n->port.rx_csum && fl4 == RTE_MBUF_F_RX_L4_CKSUM_GOOD;

	return (ip_ok || us_csum_ipv4_hdr_ok(ip)) && (l4_ok || us_csum_l4_ok(m, ip, l4_off));
}

/* Can m be merged: an IPv4 TCP data segment to us with only ACK set, whole
 * headers in its first buffer, checksums right?  Then its header lengths,
 * packet type and good-checksum flags are set as rte_gro and the layers
 * after it want them, and *wnd is its window field. */
static bool gro_candidate(const struct us_net *n, struct rte_mbuf *m, uint16_t *wnd)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);
	const struct rte_tcp_hdr *th;
	uint32_t l3, l4, tot;

	if (m->data_len < GRO_HDR_MIN || eh->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    (ip->version_ihl >> 4) != 4 || ip->next_proto_id != IPPROTO_TCP ||
	    ip->dst_addr != rte_cpu_to_be_32(n->addr) ||
	    (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)))
		return false;
	l3 = rte_ipv4_hdr_len(ip);
	tot = rte_be_to_cpu_16(ip->total_length);
	if (l3 < sizeof(*ip) || RTE_ETHER_HDR_LEN + l3 + sizeof(*th) > m->data_len ||
	    RTE_ETHER_HDR_LEN + tot > m->pkt_len)
		return false;
	th = (const struct rte_tcp_hdr *)((const char *)ip + l3);
	l4 = (uint32_t)(th->data_off >> 4) * 4;
	if (th->tcp_flags != RTE_TCP_ACK_FLAG || l4 < sizeof(*th) || l3 + l4 >= tot ||
	    RTE_ETHER_HDR_LEN + l3 + l4 > m->data_len)
		return false;
	if (!gro_csum_ok(n, m, ip, (uint16_t)(RTE_ETHER_HDR_LEN + l3)))
		return false;
	m->ol_flags = (m->ol_flags & ~(RTE_MBUF_F_RX_IP_CKSUM_MASK | RTE_MBUF_F_RX_L4_CKSUM_MASK)) |
		      RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	m->l2_len = RTE_ETHER_HDR_LEN;
	m->l3_len = l3;
	m->l4_len = l4;
	m->packet_type = RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_TCP;
	*wnd = th->rx_win;
	return true;
}

/* Coalesces the candidates pkts[0..nb) in place; the new count.  The
 * engine's table (rte_gro's heavyweight mode) is emptied at once: a
 * segment never waits for the next burst.  What rte_gro refused comes
 * first, then the merged segments, in order. */
static uint16_t gro_run(struct us_net *n, struct rte_mbuf **pkts, uint16_t nb)
{
	uint16_t left, k;

	if (nb < 2)
		return nb;
	left = rte_gro_reassemble(pkts, nb, n->gro_ctx);
	k = rte_gro_timeout_flush(n->gro_ctx, 0, RTE_GRO_TCP_IPV4, pkts + left,
				  (uint16_t)(nb - left));
	US_NET_STAT_ADD(n, gro_merged, (uint64_t)(nb - left - k));
	return (uint16_t)(left + k);
}

int us_gro_init(struct us_net *n, int socket)
{
	/* Table space for a whole burst of one flow, and a few flows; the
	 * table is searched flow by flow, so it stays small.  rte_gro's
	 * lightweight mode (rte_gro_reassemble_burst) zeroes ~20 KB of tables
	 * on the stack per call: 12% of the server's instructions in bulk. */
	const struct rte_gro_param param = {
		.gro_types = RTE_GRO_TCP_IPV4,
		.max_flow_num = US_GRO_FLOWS,
		.max_item_per_flow = US_GRO_BURST,
		.socket_id = (uint16_t)(socket < 0 ? 0 : socket),
	};

	n->gro_ctx = rte_gro_ctx_create(&param);
	return n->gro_ctx != NULL ? 0 : -ENOMEM;
}

void us_gro_fini(struct us_net *n)
{
	if (n->gro_ctx != NULL)
		rte_gro_ctx_destroy(n->gro_ctx);
	n->gro_ctx = NULL;
}

/* The run pkts[start..end) moved down to pkts[out..] and coalesced there;
 * returns the index after its survivors. */
static uint16_t gro_flush(struct us_net *n, struct rte_mbuf **pkts, uint16_t out, uint16_t start,
			  uint16_t end)
{
	memmove(pkts + out, pkts + start, (size_t)(end - start) * sizeof(*pkts));
	return (uint16_t)(out + gro_run(n, pkts + out, (uint16_t)(end - start)));
}

uint16_t us_gro(struct us_net *n, struct rte_mbuf **pkts, uint16_t nb)
{
	uint16_t out = 0, start = 0, wnd = 0, run_wnd = 0;

	for (uint16_t i = 0; i < nb; i++) {
		bool cand = gro_candidate(n, pkts[i], &wnd);

		/* A run ends at a frame that cannot join it or brings a new window. */
		if (i > start && (!cand || wnd != run_wnd)) {
			out = gro_flush(n, pkts, out, start, i);
			start = i;
		}
		if (!cand) {
			pkts[out++] = pkts[i];
			start = (uint16_t)(i + 1);
			continue;
		}
		if (i == start)
			run_wnd = wnd;
	}
	if (nb > start)
		out = gro_flush(n, pkts, out, start, nb);
	return out;
}
