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

unsigned us_handoff_owner(const struct us_handoff *h, uint32_t rip, uint32_t lip,
			  uint16_t rport, uint16_t lport)
{
	/* The NIC classifies incoming packets: remote -> local. */
	return us_rss_queue_ipv4_tcp(&h->rss, rip, lip, rport, lport);
}

bool us_handoff_port_ok(const struct us_handoff *h, unsigned self, uint32_t lip,
			uint32_t rip, uint16_t rport, uint16_t lport)
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

bool us_handoff_conn_of(const struct rte_mbuf *m, uint32_t *lip, uint16_t *lport, uint32_t *rip,
			uint16_t *rport)
{
	const struct rte_ipv4_hdr *ip, *q;
	const struct rte_tcp_hdr *th;
	unsigned ihl;

	ip = handoff_ipv4(m, &ihl);
	if (ip != NULL && ip->next_proto_id == IPPROTO_ICMP) {
		th = icmp_quote(m, ip, ihl, &q);
		if (th == NULL)
			return false;
		*lip = rte_be_to_cpu_32(q->src_addr);
		*rip = rte_be_to_cpu_32(q->dst_addr);
		*lport = rte_be_to_cpu_16(th->src_port);
		*rport = rte_be_to_cpu_16(th->dst_port);
		return true;
	}
	th = us_handoff_tcp(m, &ip);
	if (th == NULL)
		return false;
	*lip = rte_be_to_cpu_32(ip->dst_addr);
	*rip = rte_be_to_cpu_32(ip->src_addr);
	*lport = rte_be_to_cpu_16(th->dst_port);
	*rport = rte_be_to_cpu_16(th->src_port);
	return true;
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

/* Only unfragmented IPv4/TCP (and ICMP errors about it) has an owner;
 * ARP and neighbour discovery go everywhere; everything else is local. */
enum us_handoff_dest us_handoff_classify(const struct us_handoff *h, const struct rte_mbuf *m,
					 unsigned *owner)
{
	const struct rte_ether_hdr *eth;
	uint32_t lip, rip;
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
	*owner = us_handoff_owner(h, rip, lip, rport, lport);
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
