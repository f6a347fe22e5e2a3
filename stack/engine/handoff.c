/* stack/engine/handoff.c: per-pair rings between engines and the owner rule (see
 * handoff.h). */
#include "stack/engine/handoff.h"

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_tcp.h>

#include "stack/engine/migrate.h"

static void handoff_free_rings(struct us_handoff *h)
{
	struct rte_mbuf *m;

	for (unsigned i = 0; i < US_ENGINES_MAX; i++) {
		for (unsigned j = 0; j < US_ENGINES_MAX; j++) {
			if (h->ring[i][j] == NULL)
				continue;
			/* Frames in flight when the engines stopped belong to nobody
			 * else now. */
			while (rte_ring_sc_dequeue(h->ring[i][j], (void **)&m) == 0) {
				if (us_handoff_is_msg(m))
					us_migrate_msg_free(us_handoff_msg_ptr(m));
				else
					rte_pktmbuf_free(m);
			}
			rte_ring_free(h->ring[i][j]);
			h->ring[i][j] = NULL;
		}
	}
}

struct us_handoff *us_handoff_create(unsigned n, const struct us_rss *rss, const char *name)
{
	struct us_handoff *h;
	char rname[RTE_RING_NAMESIZE];

	if (n < 2 || n > US_ENGINES_MAX || rss == NULL || rss->nb_queues != n) {
		errno = EINVAL;
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return NULL;
	h->n = n;
	h->rss = *rss;
	for (unsigned i = 0; i < n; i++) {
		for (unsigned j = 0; j < n; j++) {
			if (i == j)
				continue;
			snprintf(rname, sizeof(rname), "ho_%s_%u_%u", name, i, j);
			h->ring[i][j] = rte_ring_create(rname, US_HANDOFF_RING, SOCKET_ID_ANY,
							RING_F_SP_ENQ | RING_F_SC_DEQ);
			if (h->ring[i][j] == NULL) {
				int err = rte_errno ? rte_errno : ENOMEM;

				us_handoff_destroy(h);
				errno = err;
				return NULL;
			}
		}
	}
	return h;
}

void us_handoff_destroy(struct us_handoff *h)
{
	if (h == NULL)
		return;
	handoff_free_rings(h);
	free(h);
}

unsigned us_handoff_owner(const struct us_handoff *h, const struct us_in6 *rip,
			  const struct us_in6 *lip, uint16_t rport, uint16_t lport)
{
	/* The NIC classifies incoming packets: remote -> local. */
	if (us_in6_is_v4mapped(rip))
		return us_rss_queue_ipv4_tcp(&h->rss, us_in6_v4(rip), us_in6_v4(lip), rport,
					     lport);
	return us_rss_queue(&h->rss,
			    us_rss_hash_ipv6_tcp(h->rss.key, rip->b, lip->b, rport, lport));
}

bool us_handoff_port_ok(const struct us_handoff *h, unsigned self, const struct us_in6 *lip,
			const struct us_in6 *rip, uint16_t rport, uint16_t lport)
{
	return h == NULL || us_handoff_owner(h, rip, lip, rport, lport) == self;
}

/* RFC 792 / RFC 1122 3.2.2: an ICMP error (unreachable, time exceeded,
 * parameter problem; source quench is obsolete) quotes the IP header and
 * first 8 bytes of a segment WE sent.  Its TCP header (ports only are
 * sure to be there), with the quoted IPv4 header in *q; NULL when m is
 * no such error. */
static const struct rte_tcp_hdr *icmp_quote(const struct rte_mbuf *m, const struct rte_ipv4_hdr *ip,
					    unsigned ihl, const struct rte_ipv4_hdr **q)
{
	const uint8_t *icmp = (const uint8_t *)ip + ihl;
	size_t off = sizeof(struct rte_ether_hdr) + ihl + 8;
	unsigned qihl;

	*q = (const struct rte_ipv4_hdr *)(icmp + 8);
	if (rte_pktmbuf_data_len(m) < off + sizeof(**q) ||
	    (icmp[0] != 3 && icmp[0] != 11 && icmp[0] != 12))
		return NULL;
	qihl = ((*q)->version_ihl & 0x0f) * 4u;
	if ((*q)->next_proto_id != IPPROTO_TCP || qihl < sizeof(**q) ||
	    rte_pktmbuf_data_len(m) < off + qihl + 4u)
		return NULL;
	return (const struct rte_tcp_hdr *)((const uint8_t *)*q + qihl);
}

/* An unfragmented IPv4 frame's header (and its length), else NULL: a
 * fragment carries no ports (its datagram is reassembled where it arrived). */
static const struct rte_ipv4_hdr *handoff_ipv4(const struct rte_mbuf *m, unsigned *ihl)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv4_hdr *ip;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) ||
	    eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
		return NULL;
	ip = (const struct rte_ipv4_hdr *)(eth + 1);
	*ihl = (ip->version_ihl & 0x0f) * 4u;
	if (*ihl < sizeof(*ip) || rte_ipv4_frag_pkt_is_fragmented(ip))
		return NULL;
	return ip;
}

const struct rte_tcp_hdr *us_handoff_tcp(const struct rte_mbuf *m,
					 const struct rte_ipv4_hdr **ip)
{
	unsigned ihl;

	*ip = handoff_ipv4(m, &ihl);
	if (*ip == NULL || (*ip)->next_proto_id != IPPROTO_TCP ||
	    rte_pktmbuf_data_len(m) < sizeof(struct rte_ether_hdr) + ihl + 4u)
		return NULL;
	return (const struct rte_tcp_hdr *)((const uint8_t *)*ip + ihl);
}

/* Where the upper-layer header of the IPv6 packet at off in m's first
 * segment starts, its protocol in *proto, past hop-by-hop, routing and
 * destination options headers (at most US_HANDOFF_EXT_MAX of them, read
 * where the first segment holds them); 0 for a fragment (reassembled where
 * it arrived, as IPv4's are) or a chain cut off or too long. */
#define US_HANDOFF_EXT_MAX 8

static unsigned ip6_upper(const struct rte_mbuf *m, unsigned off, uint8_t *proto)
{
	const uint8_t *base = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(base + off);
	uint8_t next;

	if (rte_pktmbuf_data_len(m) < off + sizeof(*ip) ||
	    rte_be_to_cpu_32(ip->vtc_flow) >> 28 != 6)
		return 0;
	next = ip->proto;
	off += sizeof(*ip);
	for (unsigned k = 0; k <= US_HANDOFF_EXT_MAX; k++) {
		if (next != IPPROTO_HOPOPTS && next != IPPROTO_ROUTING && next != IPPROTO_DSTOPTS) {
			*proto = next;
			return next == IPPROTO_FRAGMENT ? 0 : off;
		}
		if (rte_pktmbuf_data_len(m) < off + 2u)
			return 0;
		next = base[off];
		off += (base[off + 1] + 1u) * 8u;
	}
	return 0;
}

/* The same for IPv4 frames: a TCP segment to us, or an ICMP error quoting
 * one of ours. */
static bool conn_of_ipv4(const struct rte_mbuf *m, struct us_in6 *lip, uint16_t *lport,
			 struct us_in6 *rip, uint16_t *rport)
{
	const struct rte_ipv4_hdr *ip, *q;
	const struct rte_tcp_hdr *th;
	unsigned ihl;

	ip = handoff_ipv4(m, &ihl);
	if (ip != NULL && ip->next_proto_id == IPPROTO_ICMP) {
		th = icmp_quote(m, ip, ihl, &q);
		if (th == NULL)
			return false;
		*lip = us_in6_of_v4(rte_be_to_cpu_32(q->src_addr));
		*rip = us_in6_of_v4(rte_be_to_cpu_32(q->dst_addr));
		*lport = rte_be_to_cpu_16(th->src_port);
		*rport = rte_be_to_cpu_16(th->dst_port);
		return true;
	}
	th = us_handoff_tcp(m, &ip);
	if (th == NULL)
		return false;
	*lip = us_in6_of_v4(rte_be_to_cpu_32(ip->dst_addr));
	*rip = us_in6_of_v4(rte_be_to_cpu_32(ip->src_addr));
	*lport = rte_be_to_cpu_16(th->dst_port);
	*rport = rte_be_to_cpu_16(th->src_port);
	return true;
}

/* IPv6: a TCP segment to us, or an ICMPv6 error (RFC 4443: destination
 * unreachable, packet too big, time exceeded, parameter problem) quoting
 * one of ours. */
static bool conn_of_ipv6(const struct rte_mbuf *m, struct us_in6 *lip, uint16_t *lport,
			 struct us_in6 *rip, uint16_t *rport)
{
	const unsigned eth = sizeof(struct rte_ether_hdr);
	const uint8_t *base = rte_pktmbuf_mtod(m, const uint8_t *);
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(base + eth);
	unsigned l4, ql4;
	uint8_t proto, qproto;

	l4 = ip6_upper(m, eth, &proto);
	if (l4 != 0 && proto == IPPROTO_ICMPV6 && rte_pktmbuf_data_len(m) >= l4 + 1u &&
	    base[l4] >= ICMP6_DST_UNREACH && base[l4] <= ICMP6_PARAM_PROB) {
		const struct rte_ipv6_hdr *q = (const struct rte_ipv6_hdr *)(base + l4 + 8);

		ql4 = ip6_upper(m, l4 + 8, &qproto);
		if (ql4 == 0 || qproto != IPPROTO_TCP || rte_pktmbuf_data_len(m) < ql4 + 4u)
			return false;
		memcpy(lip->b, q->src_addr, 16);
		memcpy(rip->b, q->dst_addr, 16);
		*lport = (uint16_t)(base[ql4] << 8 | base[ql4 + 1]);
		*rport = (uint16_t)(base[ql4 + 2] << 8 | base[ql4 + 3]);
		return true;
	}
	if (l4 == 0 || proto != IPPROTO_TCP || rte_pktmbuf_data_len(m) < l4 + 4u)
		return false;
	memcpy(lip->b, ip->dst_addr, 16);
	memcpy(rip->b, ip->src_addr, 16);
	*lport = (uint16_t)(base[l4 + 2] << 8 | base[l4 + 3]);
	*rport = (uint16_t)(base[l4] << 8 | base[l4 + 1]);
	return true;
}

bool us_handoff_conn_of(const struct rte_mbuf *m, struct us_in6 *lip, uint16_t *lport,
			struct us_in6 *rip, uint16_t *rport)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	if (rte_pktmbuf_data_len(m) < sizeof(*eth))
		return false;
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6))
		return conn_of_ipv6(m, lip, lport, rip, rport);
	return conn_of_ipv4(m, lip, lport, rip, rport);
}

/* An IPv6 Neighbor Solicitation or Advertisement right after the fixed
 * header, hop limit 255 (RFC 4861 7.1.1, 7.1.2: every engine would drop
 * another).  One behind extension headers (or a fragment, which RFC 6980
 * forbids for ND) is left to the engine whose queue received it: the
 * checks here stay a few loads. */
static bool handoff_is_nd6(const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eth + 1);
	uint8_t type;

	if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) ||
	    rte_pktmbuf_data_len(m) < sizeof(*eth) + sizeof(*ip) + 1)
		return false;
	if (rte_be_to_cpu_32(ip->vtc_flow) >> 28 != 6 || ip->proto != IPPROTO_ICMPV6 ||
	    ip->hop_limits != 255)
		return false;
	type = *(const uint8_t *)(ip + 1);
	return type == ND_NEIGHBOR_SOLICIT || type == ND_NEIGHBOR_ADVERT;
}

/* Only unfragmented TCP (and ICMP errors about it) has an owner;
 * ARP and neighbour discovery go everywhere; everything else is local. */
enum us_handoff_dest us_handoff_classify(const struct us_handoff *h, const struct rte_mbuf *m,
					 unsigned *owner)
{
	const struct rte_ether_hdr *eth;
	struct us_in6 lip, rip;
	uint16_t lport, rport;

	if (rte_pktmbuf_data_len(m) < sizeof(*eth))
		return US_HO_LOCAL;
	eth = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
		return US_HO_ALL_ARP;
	if (handoff_is_nd6(m))
		return US_HO_ALL_ND6;
	/* A segment's owner, or for an ICMP error the owner of the
	 * connection it quotes, so path MTU news reaches the right TCB. */
	if (!us_handoff_conn_of(m, &lip, &lport, &rip, &rport))
		return US_HO_LOCAL;
	*owner = us_handoff_owner(h, &rip, &lip, rport, lport);
	return US_HO_OWNER;
}

unsigned us_handoff_send(struct us_handoff *h, unsigned from, unsigned to,
			 struct rte_mbuf **pkts, unsigned n)
{
	return rte_ring_sp_enqueue_burst(h->ring[from][to], (void **)pkts, n, NULL);
}

unsigned us_handoff_recv(struct us_handoff *h, unsigned from, unsigned to,
			 struct rte_mbuf **pkts, unsigned n)
{
	return rte_ring_sc_dequeue_burst(h->ring[from][to], (void **)pkts, n, NULL);
}

bool us_handoff_send_msg(struct us_handoff *h, unsigned from, unsigned to, void *msg)
{
	void *tagged = (void *)((uintptr_t)msg | 1u);

	return rte_ring_sp_enqueue(h->ring[from][to], tagged) == 0;
}

unsigned us_handoff_room(const struct us_handoff *h, unsigned from, unsigned to)
{
	return rte_ring_free_count(h->ring[from][to]);
}
