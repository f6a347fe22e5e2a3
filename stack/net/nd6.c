/* stack/net/nd6.c: Neighbor Discovery (RFC 4861) for a host on Ethernet:
 * the neighbour cache, Neighbor Solicitations and Advertisements.
 *
 * The cache (7.3.2) maps a neighbour's address to its MAC through five
 * states:
 *   INCOMPLETE  multicast NS every RetransTimer, MAX_MULTICAST_SOLICIT of
 *               them; packets wait (arp_pending_max, the oldest replaced
 *               when full); no answer: the entry and its packets go.
 *   REACHABLE   confirmed (a solicited NA, us_nd6_confirm) less than
 *               REACHABLE_TIME ago.
 *   STALE       not confirmed lately; packets still go to the MAC.  The
 *               first one starts DELAY.
 *   DELAY       DELAY_FIRST_PROBE_TIME for an upper layer to confirm, then
 *   PROBE       unicast NS every RetransTimer, MAX_UNICAST_SOLICIT of them;
 *               no answer: the entry goes.
 * Entries are bounded: a new neighbour takes the least recently used STALE
 * entry (else the least recently used one) when the table is full, and the
 * packets an evicted entry held are counted.
 *
 * With several engines each has its own cache, and every NS and NA right
 * after the IPv6 header reaches all of them (stack/engine/stage_handoff.c
 * copies it, as it copies ARP): the engine whose queue received an NS
 * answers it, the others only learn the sender; an NA updates every cache
 * that has an entry for its target.
 *
 * Router Solicitations/Advertisements and redirects are counted and
 * dropped: routes are configured ([ip6] routes, gateway), not discovered.
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>
#include <rte_mbuf.h>

#include "stack/net/net.h"

#define ND_LL_OPT_LEN 8 /* a link-layer address option for Ethernet (RFC 4861 4.6.1) */

#define ND_HDR_LEN 24 /* type, code, checksum, flags/reserved, target */
#define ND_HOP_LIMIT 255

/* NA flags (RFC 4861 4.4), in the first byte after the checksum. */
#define ND_NA_ROUTER 0x80
#define ND_NA_SOLICITED 0x40
#define ND_NA_OVERRIDE 0x20

static const struct us_in6 nd_all_nodes = { .b = { 0xff, 0x02, [15] = 1 } };

/* What an NS or NA says, once validated. */
struct nd6_msg {
	uint8_t type;
	uint8_t flags;
	struct us_in6 target;
	bool has_ll; /* the source (NS) or target (NA) link-layer address option */
	struct rte_ether_addr ll;
};

/* Cache */

static unsigned nd6_hash(const struct us_in6 *ip)
{
	uint32_t w;

	/* The interface identifier's low bits differ most between neighbours. */
	memcpy(&w, ip->b + 12, sizeof(w));
	return (uint32_t)(w * 2654435761u) >> 24 & (US_ND6_BUCKETS - 1);
}

static struct us_nd6_entry *nd6_find(const struct us_nd6_table *t, const struct us_in6 *ip)
{
	struct us_nd6_entry *ent;

	LIST_FOREACH(ent, &t->buckets[nd6_hash(ip)], link)
		if (us_in6_eq(&ent->ip, ip))
			return ent;
	return NULL;
}

static void nd6_remove(struct us_net *n, struct us_nd6_entry *ent)
{
	us_timer_cancel(n->wheel, &ent->timer);
	for (uint16_t i = 0; i < ent->npending; i++)
		rte_pktmbuf_free(ent->pending[i]);
	ent->npending = 0;
	LIST_REMOVE(ent, link);
	TAILQ_REMOVE(&n->nd6.lru, ent, lru);
	ent->state = 0;
	LIST_INSERT_HEAD(&n->nd6.free, ent, link);
	n->nd6.n--;
	n->stats.nd6_entries--;
}

/* Room for one more: the least recently used STALE entry (nothing waits on
 * it and its neighbour has not been heard from lately), else the least
 * recently used of all. */
static void nd6_evict(struct us_net *n)
{
	struct us_nd6_entry *ent, *victim = TAILQ_FIRST(&n->nd6.lru);

	TAILQ_FOREACH(ent, &n->nd6.lru, lru) {
		if (ent->state == US_ND6_STALE) {
			victim = ent;
			break;
		}
	}
	if (victim == NULL)
		return;
	US_NET_STAT_INC(n, nd6_evicted);
	US_NET_STAT_ADD(n, nd6_drop_evicted, victim->npending);
	nd6_remove(n, victim);
}

static struct us_nd6_entry *nd6_new(struct us_net *n, const struct us_in6 *ip, uint8_t state)
{
	struct us_nd6_entry *ent;

	if (LIST_EMPTY(&n->nd6.free))
		nd6_evict(n);
	ent = LIST_FIRST(&n->nd6.free);
	if (ent == NULL)
		return NULL;
	LIST_REMOVE(ent, link);
	ent->ip = *ip;
	ent->state = state;
	ent->probes = 0;
	ent->router = false;
	ent->npending = 0;
	LIST_INSERT_HEAD(&n->nd6.buckets[nd6_hash(ip)], ent, link);
	TAILQ_INSERT_TAIL(&n->nd6.lru, ent, lru);
	n->nd6.n++;
	n->stats.nd6_entries++;
	return ent;
}

static void nd6_touch(struct us_net *n, struct us_nd6_entry *ent)
{
	if (TAILQ_NEXT(ent, lru) == NULL)
		return;
	TAILQ_REMOVE(&n->nd6.lru, ent, lru);
	TAILQ_INSERT_TAIL(&n->nd6.lru, ent, lru);
}

/* RFC 4861 7.3.3: the timers of the states that have one. */
static void nd6_enter(struct us_net *n, struct us_nd6_entry *ent, uint8_t state)
{
	uint64_t now = us_timer_now(n->wheel);

	ent->state = state;
	switch (state) {
	case US_ND6_REACHABLE:
		us_timer_arm(n->wheel, &ent->timer, now + US_ND6_REACHABLE_TIME_NS);
		break;
	case US_ND6_DELAY:
		us_timer_arm(n->wheel, &ent->timer, now + US_ND6_DELAY_FIRST_PROBE_NS);
		break;
	case US_ND6_STALE:
		us_timer_cancel(n->wheel, &ent->timer);
		break;
	default: /* INCOMPLETE and PROBE: armed with each solicitation */
		break;
	}
}

/* The MAC is known: what waited goes, in order.  Sending to a STALE
 * neighbour starts DELAY (7.3.3), as for any packet. */
static void nd6_flush(struct us_net *n, struct us_nd6_entry *ent)
{
	uint16_t k = ent->npending;

	ent->npending = 0;
	for (uint16_t i = 0; i < k; i++)
		us_eth_output(n, ent->pending[i], &ent->mac, RTE_ETHER_TYPE_IPV6);
	if (k > 0 && ent->state == US_ND6_STALE)
		nd6_enter(n, ent, US_ND6_DELAY);
}

/* RFC 4861 7.2.2: if the queue overflows, the new arrival replaces the
 * oldest packet. */
static void nd6_enqueue(struct us_net *n, struct us_nd6_entry *ent, struct rte_mbuf *m)
{
	if (n->nd6.pending_max == 0) {
		US_NET_STAT_INC(n, nd6_drop_pending_full);
		rte_pktmbuf_free(m);
		return;
	}
	if (ent->npending >= n->nd6.pending_max) {
		US_NET_STAT_INC(n, nd6_drop_pending_full);
		rte_pktmbuf_free(ent->pending[0]);
		memmove(ent->pending, ent->pending + 1, (ent->npending - 1) * sizeof(*ent->pending));
		ent->npending--;
	}
	ent->pending[ent->npending++] = m;
}

/* Messages */

/* An NS or NA about target, with our MAC in an option of type opt (0:
 * none). */
static struct rte_mbuf *nd6_build(struct us_net *n, uint8_t type, uint8_t flags,
				  const struct us_in6 *target, uint8_t opt)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(n->pool);
	uint16_t len = ND_HDR_LEN + (opt ? ND_LL_OPT_LEN : 0);
	uint8_t *p;

	if (m == NULL || (p = (uint8_t *)rte_pktmbuf_append(m, len)) == NULL) {
		US_NET_STAT_INC(n, nd6_drop_no_mbuf);
		rte_pktmbuf_free(m);
		return NULL;
	}
	memset(p, 0, len);
	p[0] = type;
	p[4] = flags;
	memcpy(p + 8, target->b, sizeof(target->b));
	if (opt) {
		p[ND_HDR_LEN] = opt;
		p[ND_HDR_LEN + 1] = 1; /* in units of 8 bytes */
		memcpy(p + ND_HDR_LEN + 2, n->port.mac.addr_bytes, RTE_ETHER_ADDR_LEN);
	}
	return m;
}

/* Checksum, IPv6 header with hop limit 255 (RFC 4861 7.1: proof that it
 * never crossed a router), then to mac, or through the cache when NULL.
 * ND talks only to the link: no route is looked up. */
static void nd6_send(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *src,
		     const struct us_in6 *dst, const struct rte_ether_addr *mac)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t ck;

	p[2] = p[3] = 0;
	ck = (uint16_t)~us_icmp6_cksum(m, src, dst);
	memcpy(p + 2, &ck, sizeof(ck));
	if (us_ip6_prepend(m, src, dst, IPPROTO_ICMPV6, ND_HOP_LIMIT) < 0) {
		US_NET_STAT_INC(n, nd6_drop_no_mbuf);
		rte_pktmbuf_free(m);
		return;
	}
	if (mac != NULL)
		us_eth_output(n, m, mac, RTE_ETHER_TYPE_IPV6);
	else
		us_nd6_output(n, m, dst);
}

void us_nd6_solicit(struct us_net *n, const struct us_in6 *target, bool dad)
{
	static const struct us_in6 unspec;
	struct us_in6 src = unspec, dst;
	struct rte_mbuf *m;

	/* RFC 4861 7.2.2: from an address of ours; RFC 4862 5.4.2: a DAD probe
	 * from ::, without our MAC (nobody may learn it from a tentative
	 * address). */
	if (!dad && us_ip6_src_for(n, target, &src) < 0) {
		US_NET_STAT_INC(n, ip6_drop_no_src);
		return;
	}
	m = nd6_build(n, ND_NEIGHBOR_SOLICIT, 0, target, dad ? 0 : ND_OPT_SOURCE_LINKADDR);
	if (m == NULL)
		return;
	us_in6_solicited_node(target, &dst);
	US_NET_STAT_INC(n, nd6_tx_ns);
	nd6_send(n, m, &src, &dst, NULL);
}

/* INCOMPLETE: one more multicast solicitation, and the wait for it. */
static void nd6_resolve(struct us_net *n, struct us_nd6_entry *ent)
{
	ent->probes++;
	us_nd6_solicit(n, &ent->ip, false);
	us_timer_arm(n->wheel, &ent->timer, us_timer_now(n->wheel) + US_ND6_RETRANS_TIMER_NS);
}

/* PROBE: a unicast solicitation to the MAC we have (RFC 4861 7.3.3). */
static void nd6_probe(struct us_net *n, struct us_nd6_entry *ent)
{
	struct us_in6 src;
	struct rte_mbuf *m;

	ent->probes++;
	us_timer_arm(n->wheel, &ent->timer, us_timer_now(n->wheel) + US_ND6_RETRANS_TIMER_NS);
	if (us_ip6_src_for(n, &ent->ip, &src) < 0) {
		US_NET_STAT_INC(n, ip6_drop_no_src);
		return;
	}
	m = nd6_build(n, ND_NEIGHBOR_SOLICIT, 0, &ent->ip, ND_OPT_SOURCE_LINKADDR);
	if (m == NULL)
		return;
	US_NET_STAT_INC(n, nd6_tx_ns);
	nd6_send(n, m, &src, &ent->ip, &ent->mac);
}

/* An NA for target (ours) to dst, from target itself. */
static void nd6_advertise(struct us_net *n, const struct us_in6 *target, const struct us_in6 *dst,
			  uint8_t flags)
{
	struct rte_mbuf *m = nd6_build(n, ND_NEIGHBOR_ADVERT, flags, target, ND_OPT_TARGET_LINKADDR);

	if (m != NULL)
		nd6_send(n, m, target, dst, NULL);
}

static void nd6_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct us_nd6_entry *ent = container_of(t, struct us_nd6_entry, timer);
	struct us_net *n = ent->n;

	(void)now_ns;
	switch (ent->state) {
	case US_ND6_INCOMPLETE:
		if (ent->probes < US_ND6_MAX_MULTICAST_SOLICIT) {
			nd6_resolve(n, ent);
			return;
		}
		/* RFC 4861 7.2.2: resolution failed.  The waiting packets are our
		 * own; an Address Unreachable would go to their transport, and
		 * none is attached to IPv6 yet: they are counted. */
		US_NET_STAT_INC(n, nd6_timeouts);
		US_NET_STAT_ADD(n, nd6_drop_unresolved, ent->npending);
		nd6_remove(n, ent);
		return;
	case US_ND6_REACHABLE:
		nd6_enter(n, ent, US_ND6_STALE);
		return;
	case US_ND6_DELAY:
		ent->probes = 0;
		ent->state = US_ND6_PROBE;
		nd6_probe(n, ent);
		return;
	case US_ND6_PROBE:
		if (ent->probes < US_ND6_MAX_UNICAST_SOLICIT) {
			nd6_probe(n, ent);
			return;
		}
		US_NET_STAT_INC(n, nd6_probe_failed);
		nd6_remove(n, ent);
		return;
	default:
		return;
	}
}

/* Input validation (RFC 4861 7.1.1, 7.1.2) */

/* Options: every length non-zero and inside the message; the link-layer
 * address option of the message's kind, if there, exactly one Ethernet
 * address long and unicast.  Other options are skipped (4.6). */
static int nd6_parse_opts(struct us_net *n, const struct rte_mbuf *m, uint32_t len,
			  struct nd6_msg *msg)
{
	uint8_t want = msg->type == ND_NEIGHBOR_SOLICIT ? ND_OPT_SOURCE_LINKADDR : ND_OPT_TARGET_LINKADDR;
	uint8_t buf[ND_LL_OPT_LEN];
	const uint8_t *o;
	uint32_t olen;

	for (uint32_t off = ND_HDR_LEN; off < len; off += olen) {
		o = len - off >= 2 ? rte_pktmbuf_read(m, off, 2, buf) : NULL;
		olen = o != NULL ? o[1] * 8u : 0;
		if (olen == 0 || olen > len - off)
			return US_NET_STAT_INC(n, nd6_drop_bad_opt), -EINVAL;
		if (o[0] != want)
			continue;
		o = rte_pktmbuf_read(m, off, ND_LL_OPT_LEN, buf);
		if (olen != ND_LL_OPT_LEN || o == NULL)
			return US_NET_STAT_INC(n, nd6_drop_bad_opt), -EINVAL;
		memcpy(msg->ll.addr_bytes, o + 2, RTE_ETHER_ADDR_LEN);
		if (!rte_is_unicast_ether_addr(&msg->ll) || rte_is_zero_ether_addr(&msg->ll))
			return US_NET_STAT_INC(n, nd6_drop_bad_opt), -EINVAL;
		msg->has_ll = true;
	}
	return 0;
}

/* What NS and NA share: hop limit 255, code 0, at least 24 bytes, a
 * target that is no group.  The checksum was checked by icmp6.c. */
static int nd6_parse(struct us_net *n, const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip,
		     struct nd6_msg *msg)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint8_t buf[ND_HDR_LEN];
	const uint8_t *p;

	if (ip->hop_limits != ND_HOP_LIMIT)
		return US_NET_STAT_INC(n, nd6_drop_hop_limit), -EINVAL;
	if (len < ND_HDR_LEN || (p = rte_pktmbuf_read(m, 0, ND_HDR_LEN, buf)) == NULL)
		return US_NET_STAT_INC(n, nd6_drop_short), -EINVAL;
	if (p[1] != 0)
		return US_NET_STAT_INC(n, nd6_drop_code), -EINVAL;
	*msg = (struct nd6_msg){ .type = p[0], .flags = p[4] };
	memcpy(msg->target.b, p + 8, sizeof(msg->target.b));
	if (us_in6_is_mcast(&msg->target))
		return US_NET_STAT_INC(n, nd6_drop_mcast_target), -EINVAL;
	return nd6_parse_opts(n, m, len, msg);
}

/* ff02::1:ff00:0/104 (RFC 4291 2.7.1) */
static bool nd6_is_solicited_node(const struct us_in6 *a)
{
	static const uint8_t pfx[13] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };

	return memcmp(a->b, pfx, sizeof(pfx)) == 0;
}

/* Input */

/* RFC 4861 7.2.3: a solicitation's source link-layer address creates or
 * updates the sender's entry (STALE when new or changed). */
static void nd6_learn(struct us_net *n, const struct us_in6 *ip, const struct rte_ether_addr *mac)
{
	struct us_nd6_entry *ent = nd6_find(&n->nd6, ip);

	if (ent == NULL) {
		ent = nd6_new(n, ip, US_ND6_STALE);
		if (ent != NULL)
			ent->mac = *mac;
		return;
	}
	if (ent->state == US_ND6_INCOMPLETE) {
		ent->mac = *mac;
		nd6_enter(n, ent, US_ND6_STALE);
		nd6_flush(n, ent);
		return;
	}
	if (!rte_is_same_ether_addr(&ent->mac, mac)) {
		ent->mac = *mac;
		nd6_enter(n, ent, US_ND6_STALE);
	}
}

static void nd6_ns_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip,
			 enum us_net_rx from)
{
	struct us_in6 src, dst;
	struct nd6_msg msg;

	US_NET_STAT_INC(n, nd6_rx_ns);
	if (nd6_parse(n, m, ip, &msg) < 0)
		goto out;
	memcpy(src.b, ip->src_addr, sizeof(src.b));
	memcpy(dst.b, ip->dst_addr, sizeof(dst.b));
	/* 7.1.1: a DAD probe carries no MAC and goes to the target's group. */
	if (us_in6_is_unspec(&src) && msg.has_ll) {
		US_NET_STAT_INC(n, nd6_drop_unspec_sllao);
		goto out;
	}
	if (us_in6_is_unspec(&src) && !nd6_is_solicited_node(&dst)) {
		US_NET_STAT_INC(n, nd6_drop_unspec_dst);
		goto out;
	}
	/* RFC 4862 5.4.3: another node probes our tentative address: a
	 * duplicate.  Address resolution for it is not answered yet. */
	if (us_ip6_is_tentative(n, &msg.target)) {
		if (us_in6_is_unspec(&src))
			us_ip6_addr_duplicate(n, &msg.target);
		else
			US_NET_STAT_INC(n, nd6_rx_ns_tentative);
		goto out;
	}
	/* 7.2.3: solicitations for others' addresses are not learned from. */
	if (!us_ip6_is_local(n, &msg.target)) {
		US_NET_STAT_INC(n, nd6_rx_ns_other_target);
		goto out;
	}
	if (msg.has_ll)
		nd6_learn(n, &src, &msg.ll);
	/* One answer per solicitation, from the engine whose queue received
	 * it: with several engines each sees a copy (the hand-off stage makes
	 * them) so that all learn the sender. */
	if (from == US_NET_RX_HANDED) {
		US_NET_STAT_INC(n, nd6_copy_not_answered);
		goto out;
	}
	US_NET_STAT_INC(n, nd6_tx_na);
	/* 7.2.4: a DAD probe for an address we hold is answered to all nodes,
	 * not solicited; else to the sender, solicited, overriding. */
	if (us_in6_is_unspec(&src))
		nd6_advertise(n, &msg.target, &nd_all_nodes, ND_NA_OVERRIDE);
	else
		nd6_advertise(n, &msg.target, &src, ND_NA_SOLICITED | ND_NA_OVERRIDE);
out:
	rte_pktmbuf_free(m);
}

/* RFC 4861 7.2.5: what an advertisement does to an entry we have. */
static void nd6_na_update(struct us_net *n, struct us_nd6_entry *ent, const struct nd6_msg *msg)
{
	bool solicited = msg->flags & ND_NA_SOLICITED;
	bool differs = msg->has_ll && !rte_is_same_ether_addr(&msg->ll, &ent->mac);

	if (ent->state == US_ND6_INCOMPLETE) {
		if (!msg->has_ll) {
			US_NET_STAT_INC(n, nd6_drop_na_no_tlla);
			return;
		}
		ent->mac = msg->ll;
		ent->router = msg->flags & ND_NA_ROUTER;
		nd6_enter(n, ent, solicited ? US_ND6_REACHABLE : US_ND6_STALE);
		nd6_flush(n, ent);
		return;
	}
	/* Another MAC without Override: not believed, but the one we have is
	 * in doubt now. */
	if (!(msg->flags & ND_NA_OVERRIDE) && differs) {
		US_NET_STAT_INC(n, nd6_rx_na_no_override);
		if (ent->state == US_ND6_REACHABLE)
			nd6_enter(n, ent, US_ND6_STALE);
		return;
	}
	if (differs)
		ent->mac = msg->ll;
	if (solicited)
		nd6_enter(n, ent, US_ND6_REACHABLE);
	else if (differs)
		nd6_enter(n, ent, US_ND6_STALE);
	ent->router = msg->flags & ND_NA_ROUTER;
}

static void nd6_na_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip)
{
	struct us_nd6_entry *ent;
	struct nd6_msg msg;
	struct us_in6 dst;

	US_NET_STAT_INC(n, nd6_rx_na);
	if (nd6_parse(n, m, ip, &msg) < 0)
		goto out;
	memcpy(dst.b, ip->dst_addr, sizeof(dst.b));
	/* 7.1.2: an answer goes to the one who asked, never to a group. */
	if (us_in6_is_mcast(&dst) && (msg.flags & ND_NA_SOLICITED)) {
		US_NET_STAT_INC(n, nd6_drop_solicited_mcast);
		goto out;
	}
	/* RFC 4862 5.4.4: someone holds the address we are testing. */
	if (us_ip6_is_tentative(n, &msg.target)) {
		us_ip6_addr_duplicate(n, &msg.target);
		goto out;
	}
	if (us_ip6_is_local(n, &msg.target)) {
		US_NET_STAT_INC(n, nd6_rx_na_our_addr);
		goto out;
	}
	/* 7.2.5: no entry, nothing asked: not learned. */
	ent = nd6_find(&n->nd6, &msg.target);
	if (ent == NULL) {
		US_NET_STAT_INC(n, nd6_rx_na_unknown);
		goto out;
	}
	nd6_na_update(n, ent, &msg);
out:
	rte_pktmbuf_free(m);
}

void us_nd6_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip,
		  enum us_net_rx from)
{
	switch (*rte_pktmbuf_mtod(m, const uint8_t *)) {
	case ND_NEIGHBOR_SOLICIT:
		nd6_ns_input(n, m, ip, from);
		return;
	case ND_NEIGHBOR_ADVERT:
		/* A copy teaches like the original: the NA answers whichever
		 * engine asked, and tells DAD (on engine 0) of a duplicate. */
		nd6_na_input(n, m, ip);
		return;
	case ND_ROUTER_SOLICIT:
	case ND_ROUTER_ADVERT:
	case ND_REDIRECT:
	default:
		US_NET_STAT_INC(n, nd6_drop_router);
		rte_pktmbuf_free(m);
		return;
	}
}

/* Output */

void us_nd6_output(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *next_hop)
{
	struct us_nd6_entry *ent;
	struct rte_ether_addr mac;

	if (us_in6_is_mcast(next_hop)) {
		us_in6_mcast_mac(next_hop, mac.addr_bytes);
		us_eth_output(n, m, &mac, RTE_ETHER_TYPE_IPV6);
		return;
	}
	ent = nd6_find(&n->nd6, next_hop);
	if (ent == NULL) {
		ent = nd6_new(n, next_hop, US_ND6_INCOMPLETE);
		if (ent == NULL) {
			US_NET_STAT_INC(n, nd6_drop_table_full);
			rte_pktmbuf_free(m);
			return;
		}
		nd6_resolve(n, ent);
	}
	nd6_touch(n, ent);
	if (ent->state == US_ND6_INCOMPLETE) {
		nd6_enqueue(n, ent, m);
		return;
	}
	if (ent->state == US_ND6_STALE)
		nd6_enter(n, ent, US_ND6_DELAY);
	us_eth_output(n, m, &ent->mac, RTE_ETHER_TYPE_IPV6);
}

void us_nd6_announce(struct us_net *n)
{
	struct us_in6 a;

	/* RFC 4861 7.2.6: unsolicited, Override set, to all nodes (once, not
	 * MAX_NEIGHBOR_ADVERTISEMENT times: a lost one costs a neighbour a
	 * probe, not reachability). */
	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		if (us_ip6_addr_at(n, i, &a) != US_IP6_ADDR_PREFERRED)
			continue;
		US_NET_STAT_INC(n, nd6_tx_unsolicited_na);
		nd6_advertise(n, &a, &nd_all_nodes, ND_NA_OVERRIDE);
	}
}

int us_nd6_lookup(const struct us_net *n, const struct us_in6 *ip, struct rte_ether_addr *mac)
{
	const struct us_nd6_entry *ent = nd6_find(&n->nd6, ip);

	if (ent == NULL)
		return -ENOENT;
	if (ent->state == US_ND6_INCOMPLETE)
		return -EAGAIN;
	if (mac != NULL)
		*mac = ent->mac;
	return 0;
}

void us_nd6_confirm(struct us_net *n, const struct us_in6 *ip)
{
	struct us_nd6_entry *ent = nd6_find(&n->nd6, ip);

	if (ent != NULL && ent->state != US_ND6_INCOMPLETE)
		nd6_enter(n, ent, US_ND6_REACHABLE);
}

bool us_nd6_unconfirm(struct us_net *n, const struct us_in6 *ip)
{
	struct us_nd6_entry *ent = nd6_find(&n->nd6, ip);

	if (ent == NULL || ent->state != US_ND6_REACHABLE)
		return false;
	nd6_enter(n, ent, US_ND6_STALE); /* the next packet probes (7.3.3) */
	return true;
}

int us_nd6_state(const struct us_net *n, const struct us_in6 *ip)
{
	const struct us_nd6_entry *ent = nd6_find(&n->nd6, ip);

	return ent == NULL ? -ENOENT : ent->state;
}

int us_nd6_pending(const struct us_net *n, const struct us_in6 *ip)
{
	const struct us_nd6_entry *ent = nd6_find(&n->nd6, ip);

	return ent == NULL ? -ENOENT : ent->npending;
}

/* Life cycle */

int us_nd6_init(struct us_net *n, const struct us_config *cfg)
{
	struct us_nd6_table *t = &n->nd6;
	unsigned slots = cfg->arp_pending_max ? cfg->arp_pending_max : 1;

	t->pending_max = cfg->arp_pending_max;
	t->entries = calloc(US_ND6_MAX_ENTRIES, sizeof(*t->entries));
	t->pending_store = calloc((size_t)US_ND6_MAX_ENTRIES * slots, sizeof(struct rte_mbuf *));
	for (unsigned i = 0; i < US_ND6_BUCKETS; i++)
		LIST_INIT(&t->buckets[i]);
	LIST_INIT(&t->free);
	TAILQ_INIT(&t->lru);
	if (t->entries == NULL || t->pending_store == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < US_ND6_MAX_ENTRIES; i++) {
		struct us_nd6_entry *ent = &t->entries[i];

		ent->n = n;
		ent->pending = &t->pending_store[(size_t)i * slots];
		us_timer_init(&ent->timer, nd6_timer_fn);
		LIST_INSERT_HEAD(&t->free, ent, link);
	}
	return 0;
}

void us_nd6_fini(struct us_net *n)
{
	struct us_nd6_table *t = &n->nd6;
	struct us_nd6_entry *ent;

	if (t->entries != NULL)
		while ((ent = TAILQ_FIRST(&t->lru)) != NULL)
			nd6_remove(n, ent);
	free(t->entries);
	free(t->pending_store);
	t->entries = NULL;
	t->pending_store = NULL;
}
