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
#include <rte_random.h>
#include <rte_tcp.h>

#include "stack/base/csum.h"
#include "stack/engine/engine_priv.h"

static void ip_frag_drain(struct us_engine *e, uint64_t now_ns, uint64_t *counter)
{
	uint32_t n;

	/* del_expired stops when the death row is full: repeat until idle. */
	do {
		rte_ip_frag_table_del_expired_entries(e->ip.frag_tbl, &e->ip.dr, now_ns);
		n = e->ip.dr.cnt;
		if (counter != NULL)
			*counter += n;
		rte_ip_frag_free_death_row(&e->ip.dr, 0);
	} while (n > 0);
}

/* RFC 791 3.2: the reassembly timer.  The table keeps no count we can read,
 * so run until every datagram started so far must have expired. */
static void ip_frag_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct us_engine *e = container_of(t, struct us_engine, ip.frag_timer);

	ip_frag_drain(e, now_ns, &e->stats.ip_frag_timeout);
	if (e->ip.last_frag_ns + US_IP_FRAG_TIMEOUT_NS >= now_ns)
		us_timer_arm(&e->wheel, t, e->ip.last_frag_ns + US_IP_FRAG_TIMEOUT_NS + US_MS(1));
}

int us_ip_init(struct us_engine *e)
{
	int socket = e->pool->socket_id;

	e->ip.next_id = (uint16_t)rte_rand();
	us_timer_init(&e->ip.frag_timer, ip_frag_timer_fn);
	/* Timestamps are the wheel's nanoseconds, so max_cycles is in ns too. */
	e->ip.frag_tbl = rte_ip_frag_table_create(US_IP_FRAG_BUCKETS, US_IP_FRAG_BUCKET_ENTRIES,
						  US_IP_FRAG_BUCKETS * US_IP_FRAG_BUCKET_ENTRIES,
						  US_IP_FRAG_TIMEOUT_NS,
						  socket < 0 ? (int)SOCKET_ID_ANY : socket);
	return e->ip.frag_tbl != NULL ? 0 : -ENOMEM;
}

void us_ip_fini(struct us_engine *e)
{
	us_timer_cancel(&e->wheel, &e->ip.frag_timer);
	if (e->ip.frag_tbl == NULL)
		return;
	ip_frag_drain(e, UINT64_MAX - US_IP_FRAG_TIMEOUT_NS, NULL);
	rte_ip_frag_table_destroy(e->ip.frag_tbl);
	e->ip.frag_tbl = NULL;
}

bool us_ip_is_bcast(const struct us_engine *e, uint32_t dst)
{
	return dst == UINT32_MAX || (e->bcast != 0 && dst == e->bcast);
}

bool us_ip_is_local(const struct us_engine *e, uint32_t dst)
{
	return dst == e->addr && dst != 0;
}

static bool ip_csum_ok(const struct us_engine *e, const struct rte_mbuf *m,
		       const struct rte_ipv4_hdr *ip)
{
	if (e->port.rx_csum) {
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
static int ip_validate(struct us_engine *e, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	unsigned hlen = (ip->version_ihl & RTE_IPV4_HDR_IHL_MASK) * RTE_IPV4_IHL_MULTIPLIER;
	unsigned tot = rte_be_to_cpu_16(ip->total_length);
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);
	uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);

	if ((ip->version_ihl >> 4) != IPVERSION)
		return US_STAT_INC(e, ip_drop_bad_version), -EINVAL;
	if (hlen < sizeof(*ip) || hlen > rte_pktmbuf_data_len(m))
		return US_STAT_INC(e, ip_drop_bad_ihl), -EINVAL;
	if (tot < hlen || tot > rte_pktmbuf_pkt_len(m))
		return US_STAT_INC(e, ip_drop_bad_len), -EINVAL;
	if (!ip_csum_ok(e, m, ip))
		return US_STAT_INC(e, ip_drop_bad_csum), -EINVAL;
	/* A host does not forward: anything not addressed to us goes. */
	if (!us_ip_is_local(e, dst) && !us_ip_is_bcast(e, dst))
		return US_STAT_INC(e, ip_drop_not_for_us), -EINVAL;
	if (us_ip_is_mcast(src) || us_ip_is_bcast(e, src))
		return US_STAT_INC(e, ip_drop_bad_src), -EINVAL;
	/* Ethernet pads short frames: the IP length is the truth. */
	if (tot < rte_pktmbuf_pkt_len(m) && rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - tot) < 0)
		return US_STAT_INC(e, ip_drop_bad_len), -EINVAL;
	/* RFC 1122 3.2.1.7: a host must not discard a datagram for a low TTL. */
	if (ip->time_to_live == 0)
		US_STAT_INC(e, ip_rx_ttl_zero);
	/* RFC 1122 3.2.1.8: options we do not implement are ignored. */
	if (hlen > sizeof(*ip))
		US_STAT_INC(e, ip_rx_options);
	return 0;
}

/* Feeds one fragment to the reassembly table; the whole datagram (data at
 * its IPv4 header) once complete, else NULL (held or dropped and counted). */
static struct rte_mbuf *ip_reassemble(struct us_engine *e, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);
	uint64_t now = us_timer_now(&e->wheel);
	struct rte_mbuf *whole;

	US_STAT_INC(e, ip_frag_in);
	m->l2_len = 0;
	m->l3_len = rte_ipv4_hdr_len(ip);
	whole = rte_ipv4_frag_reassemble_packet(e->ip.frag_tbl, &e->ip.dr, m, now, ip);
	US_STAT_ADD(e, ip_frag_drop, e->ip.dr.cnt);
	rte_ip_frag_free_death_row(&e->ip.dr, 0);
	e->ip.last_frag_ns = now;
	if (whole == NULL) {
		if (!us_timer_armed(&e->ip.frag_timer))
			us_timer_arm(&e->wheel, &e->ip.frag_timer,
				     now + US_IP_FRAG_TIMEOUT_NS + US_MS(1));
		return NULL;
	}
	US_STAT_INC(e, ip_frag_reassembled);
	return whole;
}

void us_ip_input(struct us_engine *e, struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip;
	unsigned hlen;

	US_STAT_INC(e, ip_rx_packets);
	if (rte_pktmbuf_data_len(m) < sizeof(struct rte_ipv4_hdr)) {
		US_STAT_INC(e, ip_drop_short);
		goto drop;
	}
	if (ip_validate(e, m) < 0)
		goto drop;
	ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	if (rte_ipv4_frag_pkt_is_fragmented(ip)) {
		m = ip_reassemble(e, m);
		if (m == NULL)
			return;
		ip = rte_pktmbuf_mtod(m, const struct rte_ipv4_hdr *);
	}
	hlen = rte_ipv4_hdr_len(ip);
	rte_pktmbuf_adj(m, hlen);
	switch (ip->next_proto_id) {
	case IPPROTO_TCP:
		tcp_input(e->tcp, m, ip);
		return;
	case IPPROTO_UDP:
		us_udp_input(e, m, ip);
		return;
	case IPPROTO_ICMP:
		us_icmp_input(e, m, ip);
		return;
	default:
		/* RFC 1122 3.2.2.1: protocol unreachable. */
		US_STAT_INC(e, ip_drop_unknown_proto);
		us_icmp_unreach(e, 2, ip, m);
		goto drop;
	}
drop:
	rte_pktmbuf_free(m);
}

static int ip_next_hop(const struct us_engine *e, uint32_t dst, uint32_t *next_hop)
{
	if (us_ip_is_bcast(e, dst)) {
		*next_hop = dst;
		return 0;
	}
	return us_route_lookup(&e->routes, dst, next_hop);
}

/* Header checksum last, when nothing in the header changes any more. */
static void ip_finish(struct us_engine *e, struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(m, struct rte_ipv4_hdr *);

	m->l2_len = sizeof(struct rte_ether_hdr);
	m->l3_len = rte_ipv4_hdr_len(ip);
	if (e->port.tx_ip_csum) {
		ip->hdr_checksum = 0;
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM;
	} else {
		us_csum_ipv4_hdr_set(ip);
	}
	US_STAT_INC(e, ip_tx_packets);
}

/* RFC 791 2.3: fragments carry multiples of 8 payload bytes; the library
 * copies the header (options included) into each and leaves m to us. */
static void ip_fragment(struct us_engine *e, struct rte_mbuf *m, uint32_t next_hop)
{
	struct rte_mbuf *frags[US_IP_FRAG_MAX_OUT];
	int n;

	n = rte_ipv4_fragment_packet(m, frags, US_IP_FRAG_MAX_OUT, e->port.mtu, e->pool,
				     e->indirect_pool);
	/* The fragments hold their own references to m's data. */
	rte_pktmbuf_free(m);
	if (n < 0) {
		US_STAT_INC(e, ip_drop_frag_fail);
		return;
	}
	for (int i = 0; i < n; i++) {
		ip_finish(e, frags[i]);
		US_STAT_INC(e, ip_frag_out);
		us_arp_output(e, frags[i], next_hop);
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

void us_ip_output(struct us_engine *e, struct rte_mbuf *m, uint32_t src, uint32_t dst,
		  uint8_t proto, unsigned flags)
{
	struct rte_ipv4_hdr *ip;
	uint32_t next_hop;

	if (ip_next_hop(e, dst, &next_hop) < 0) {
		US_STAT_INC(e, ip_drop_no_route);
		goto drop;
	}
	if (rte_pktmbuf_pkt_len(m) > UINT16_MAX - sizeof(*ip)) {
		US_STAT_INC(e, ip_drop_frag_fail);
		goto drop;
	}
	ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));
	if (ip == NULL) {
		US_STAT_INC(e, ip_drop_no_headroom);
		goto drop;
	}
	*ip = (struct rte_ipv4_hdr){
		.version_ihl = RTE_IPV4_VHL_DEF,
		.total_length = rte_cpu_to_be_16((uint16_t)rte_pktmbuf_pkt_len(m)),
		.packet_id = rte_cpu_to_be_16(e->ip.next_id++),
		.fragment_offset = (flags & US_IP_DF) ? rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG) : 0,
		.time_to_live = e->cfg.ttl ? e->cfg.ttl : 64,
		.next_proto_id = proto,
		.src_addr = rte_cpu_to_be_32(src),
		.dst_addr = rte_cpu_to_be_32(dst),
	};
	if (rte_pktmbuf_pkt_len(m) <= e->port.mtu) {
		if ((flags & US_IP_TCP_CSUM) && e->port.tx_l4_csum)
			ip_tcp_csum_offload(m, ip);
		ip_finish(e, m);
		us_arp_output(e, m, next_hop);
		return;
	}
	if (flags & US_IP_DF) {
		/* tcp/ sizes segments to the MSS: reaching here is its bug. */
		US_STAT_INC(e, ip_drop_df_too_big);
		goto drop;
	}
	ip_fragment(e, m, next_hop);
	return;
drop:
	rte_pktmbuf_free(m);
}
