/* stack/net/ip.c: IPv4 (RFC 791, host requirements of RFC 1122 3.2.1).
 *
 * Input validates the header, reassembles fragments (DPDK's rte_ip_frag)
 * and hands the payload to TCP, UDP or ICMP with m's data at the L4 header.
 * Output builds the header, routes, fragments what exceeds the MTU
 * (rte_ipv4_fragment_packet) and resolves the next hop through ARP.
 */
#include <errno.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "stack/base/csum.h"
#include "stack/base/rand.h"
#include "stack/net/net.h"
#include "tcp/tcp.h"

static void ip_frag_drain(struct us_net *n, uint64_t now_ns, uint64_t *counter)
{
	uint32_t expired;

	/* del_expired stops when the death row is full: repeat until idle. */
	do {
		rte_ip_frag_table_del_expired_entries(n->ip.frag_tbl, &n->ip.dr, now_ns);
		expired = n->ip.dr.cnt;
		if (counter != NULL)
			*counter += expired;
		rte_ip_frag_free_death_row(&n->ip.dr, 0);
	} while (expired > 0);
}

/* RFC 791 3.2: the reassembly timer.  The table keeps no count we can read,
 * so run until every datagram started so far must have expired. */
static void ip_frag_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct us_net *n = container_of(t, struct us_net, ip.frag_timer);

	ip_frag_drain(n, now_ns, &n->stats.ip_frag_timeout);
	if (n->ip.last_frag_ns + US_IP_FRAG_TIMEOUT_NS >= now_ns)
		us_timer_arm(n->wheel, t, n->ip.last_frag_ns + US_IP_FRAG_TIMEOUT_NS + US_MS(1));
}

int us_ip_init(struct us_net *n, const struct us_config *cfg)
{
	int socket = n->pool->socket_id;
	int rc;

	n->ip.ttl = cfg->ttl ? cfg->ttl : 64;
	us_timer_init(&n->ip.frag_timer, ip_frag_timer_fn);
	memset(&n->ip.frag_dup, 0, sizeof(n->ip.frag_dup));
	rc = us_rand_init();
	if (rc < 0)
		return rc;
	/* A random start, then one per datagram. */
	n->ip.next_id = (uint16_t)us_rand_u32();
	/* Timestamps are the wheel's nanoseconds, so max_cycles is in ns too. */
	n->ip.frag_tbl = rte_ip_frag_table_create(US_IP_FRAG_BUCKETS, US_IP_FRAG_BUCKET_ENTRIES,
						  US_IP_FRAG_BUCKETS * US_IP_FRAG_BUCKET_ENTRIES,
						  US_IP_FRAG_TIMEOUT_NS,
						  socket < 0 ? (int)SOCKET_ID_ANY : socket);
	return n->ip.frag_tbl != NULL ? 0 : -ENOMEM;
}

void us_ip_fini(struct us_net *n)
{
	us_timer_cancel(n->wheel, &n->ip.frag_timer);
	if (n->ip.frag_tbl == NULL)
		return;
	ip_frag_drain(n, UINT64_MAX - US_IP_FRAG_TIMEOUT_NS, NULL);
	rte_ip_frag_table_destroy(n->ip.frag_tbl);
	n->ip.frag_tbl = NULL;
}

bool us_ip_is_bcast(const struct us_net *n, uint32_t dst)
{
	return dst == UINT32_MAX || (n->bcast != 0 && dst == n->bcast);
}

bool us_ip_is_local(const struct us_net *n, uint32_t dst)
{
	return dst == n->addr && dst != 0;
}

static bool ip_csum_ok(const struct us_net *n, const struct rte_mbuf *m,
		       const struct rte_ipv4_hdr *ip)
{
	/* Flags set by the NIC, or by gro.c after its own check. */
	if (n->port.rx_csum || n->gro) {
		uint64_t f = m->ol_flags & RTE_MBUF_F_RX_IP_CKSUM_MASK;

		if (f == RTE_MBUF_F_RX_IP_CKSUM_GOOD)
			return true;
		if (f == RTE_MBUF_F_RX_IP_CKSUM_BAD)
			return false;
	}
	return us_csum_ipv4_hdr_ok(ip);
}

/* RFC 1122 3.2.1.1-3.2.1.3: what a host checks before accepting a datagram.
 * Returns 0 or -EINVAL after counting the reason. */
static int ip_validate(struct us_net *n, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	unsigned hlen = (ip->version_ihl & RTE_IPV4_HDR_IHL_MASK) * RTE_IPV4_IHL_MULTIPLIER;
	unsigned tot = rte_be_to_cpu_16(ip->total_length);
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);
	uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);

	if ((ip->version_ihl >> 4) != IPVERSION)
		return US_NET_STAT_INC(n, ip_drop_bad_version), -EINVAL;
	if (hlen < sizeof(*ip) || hlen > rte_pktmbuf_data_len(m))
		return US_NET_STAT_INC(n, ip_drop_bad_ihl), -EINVAL;
	if (tot < hlen || tot > rte_pktmbuf_pkt_len(m))
		return US_NET_STAT_INC(n, ip_drop_bad_len), -EINVAL;
	if (!ip_csum_ok(n, m, ip))
		return US_NET_STAT_INC(n, ip_drop_bad_csum), -EINVAL;
	/* A host does not forward: anything not addressed to us goes. */
	if (!us_ip_is_local(n, dst) && !us_ip_is_bcast(n, dst))
		return US_NET_STAT_INC(n, ip_drop_not_for_us), -EINVAL;
	if (us_ip_is_mcast(src) || us_ip_is_bcast(n, src))
		return US_NET_STAT_INC(n, ip_drop_bad_src), -EINVAL;
	/* Ethernet pads short frames: the IP length is the truth. */
	if (tot < rte_pktmbuf_pkt_len(m) && rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - tot) < 0)
		return US_NET_STAT_INC(n, ip_drop_bad_len), -EINVAL;
	/* RFC 1122 3.2.1.7: a host must not discard a datagram for a low TTL. */
	if (ip->time_to_live == 0)
		US_NET_STAT_INC(n, ip_rx_ttl_zero);
	/* RFC 1122 3.2.1.8: options we do not implement are ignored. */
	if (hlen > sizeof(*ip))
		US_NET_STAT_INC(n, ip_rx_options);
	return 0;
}

/* Feeds one fragment to the reassembly table; the whole datagram (data at
 * its IPv4 header) once complete, else NULL (held or dropped and counted). */
static struct rte_mbuf *ip_reassemble(struct us_net *n, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	uint64_t now = us_timer_now(n->wheel);
	struct rte_mbuf *whole;

	US_NET_STAT_INC(n, ip_frag_in);
	if (us_frag_dup_seen(&n->ip.frag_dup, ip, now)) {
		US_NET_STAT_INC(n, ip_frag_dup);
		rte_pktmbuf_free(m);
		return NULL;
	}
	m->l2_len = 0;
	m->l3_len = rte_ipv4_hdr_len(ip);
	whole = rte_ipv4_frag_reassemble_packet(n->ip.frag_tbl, &n->ip.dr, m, now, ip);
	US_NET_STAT_ADD(n, ip_frag_drop, n->ip.dr.cnt);
	rte_ip_frag_free_death_row(&n->ip.dr, 0);
	n->ip.last_frag_ns = now;
	if (whole == NULL) {
		if (!us_timer_armed(&n->ip.frag_timer))
			us_timer_arm(n->wheel, &n->ip.frag_timer,
				     now + US_IP_FRAG_TIMEOUT_NS + US_MS(1));
		return NULL;
	}
	US_NET_STAT_INC(n, ip_frag_reassembled);
	return whole;
}

/* tcp/ takes both families' addresses v4-mapped. */
static void ip_tcp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	struct us_in6 src = us_in6_of_v4(rte_be_to_cpu_32(ip->src_addr));
	struct us_in6 dst = us_in6_of_v4(rte_be_to_cpu_32(ip->dst_addr));

	/* RFC 9293 3.9.2.3 (MUST-57): a segment to a broadcast address (the
	 * subnet's, which only this layer knows) is silently discarded. */
	if (us_ip_is_bcast(n, us_in6_v4(&dst))) {
		US_NET_STAT_INC(n, ip_drop_tcp_bcast);
		rte_pktmbuf_free(m);
		return;
	}
	tcp_input(n->tcp, m, &src, &dst);
}

void us_ip_input(struct us_net *n, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip;
	unsigned hlen;

	US_NET_STAT_INC(n, ip_rx_packets);
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ipv4_hdr)) {
		US_NET_STAT_INC(n, ip_drop_short);
		goto drop;
	}
	if (ip_validate(n, m) < 0)
		goto drop;
	ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	if (rte_ipv4_frag_pkt_is_fragmented(ip)) {
		m = ip_reassemble(n, m);
		if (m == NULL)
			return;
		ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	}
	hlen = rte_ipv4_hdr_len(ip);
	rte_pktmbuf_adj(m, hlen);
	switch (ip->next_proto_id) {
	case IPPROTO_TCP:
		ip_tcp_input(n, m, ip);
		return;
	case IPPROTO_UDP:
		us_udp_input(n, m, ip);
		return;
	case IPPROTO_ICMP:
		us_icmp_input(n, m, ip);
		return;
	default:
		/* RFC 1122 3.2.2.1: protocol unreachable. */
		US_NET_STAT_INC(n, ip_drop_unknown_proto);
		us_icmp_unreach(n, 2, ip, m);
		goto drop;
	}
drop:
	rte_pktmbuf_free(m);
}

static int ip_next_hop(const struct us_net *n, uint32_t dst, uint32_t *next_hop)
{
	if (us_ip_is_bcast(n, dst)) {
		*next_hop = dst;
		return 0;
	}
	return us_route_lookup(&n->routes, dst, next_hop);
}

/* Header checksum last, when nothing in the header changes any more. */
static void ip_finish(struct us_net *n, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);

	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = rte_ipv4_hdr_len(ip);
	if (n->port.tx_ip_csum) {
		ip->hdr_checksum = 0;
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	} else {
		us_csum_ipv4_hdr_set(ip);
	}
	US_NET_STAT_INC(n, ip_tx_packets);
}

/* RFC 791 2.3: fragments carry multiples of 8 payload bytes; the library
 * copies the header (options included) into each and leaves m to us. */
static void ip_fragment(struct us_net *n, struct rte_mbuf *m, uint32_t next_hop)
{
	struct rte_mbuf *frags[US_IP_FRAG_MAX_OUT];
	int nfrags;

	nfrags = rte_ipv4_fragment_packet(m, frags, US_IP_FRAG_MAX_OUT, n->port.mtu, n->pool,
				     n->indirect_pool);
	/* The fragments hold their own references to m's data. */
	rte_pktmbuf_free(m);
	if (nfrags < 0) {
		US_NET_STAT_INC(n, ip_drop_frag_fail);
		return;
	}
	for (int i = 0; i < nfrags; i++) {
		ip_finish(n, frags[i]);
		US_NET_STAT_INC(n, ip_frag_out);
		us_arp_output(n, frags[i], next_hop);
	}
}

/* With checksum offload the NIC wants the pseudo-header sum in the field
 * (DPDK's TX offload contract). */
static void ip_tcp_csum_offload(struct rte_mbuf *m, struct rte_ipv4_hdr *ip)
{
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)((uint8_t *)ip + rte_ipv4_hdr_len(ip));

	m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_TCP_CKSUM;
	th->cksum = rte_ipv4_phdr_cksum(ip, m->ol_flags);
}

void us_ip_output(struct us_net *n, struct rte_mbuf *m, uint32_t src, uint32_t dst,
		  uint8_t proto, unsigned flags)
{
	us_ip_output_tos(n, m, src, dst, proto, flags, 0, 0);
}

void us_ip_output_tos(struct us_net *n, struct rte_mbuf *m, uint32_t src, uint32_t dst,
		      uint8_t proto, unsigned flags, uint8_t tos, uint8_t ttl)
{
	struct rte_ipv4_hdr *ip;
	uint32_t next_hop;

	if (ip_next_hop(n, dst, &next_hop) < 0) {
		US_NET_STAT_INC(n, ip_drop_no_route);
		goto drop;
	}
	if (rte_pktmbuf_pkt_len(m) > UINT16_MAX - sizeof(*ip)) {
		US_NET_STAT_INC(n, ip_drop_frag_fail);
		goto drop;
	}
	ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));
	if (ip == NULL) {
		US_NET_STAT_INC(n, ip_drop_no_headroom);
		goto drop;
	}
	*ip = (struct rte_ipv4_hdr){
		.version_ihl = RTE_IPV4_VHL_DEF,
		.total_length = rte_cpu_to_be_16((uint16_t)rte_pktmbuf_pkt_len(m)),
		.packet_id = rte_cpu_to_be_16(n->ip.next_id++),
		.fragment_offset = (flags & US_IP_DF) ? rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG) : 0,
		.type_of_service = tos,
		.time_to_live = ttl ? ttl : n->ip.ttl,
		.next_proto_id = proto,
		.src_addr = rte_cpu_to_be_32(src),
		.dst_addr = rte_cpu_to_be_32(dst),
	};
	/* A TCP segment of several MSS is cut into frames at the port (gso.c). */
	if (rte_pktmbuf_pkt_len(m) <= n->port.mtu || (m->ol_flags & RTE_MBUF_F_TX_TCP_SEG)) {
		if ((flags & US_IP_TCP_CSUM) && n->port.tx_l4_csum &&
		    !(m->ol_flags & RTE_MBUF_F_TX_TCP_SEG))
			ip_tcp_csum_offload(m, ip);
		ip_finish(n, m);
		us_arp_output(n, m, next_hop);
		return;
	}
	if (flags & US_IP_DF) {
		/* tcp/ sizes segments to the MSS: reaching here is its bug. */
		US_NET_STAT_INC(n, ip_drop_df_too_big);
		goto drop;
	}
	ip_fragment(n, m, next_hop);
	return;
drop:
	rte_pktmbuf_free(m);
}
