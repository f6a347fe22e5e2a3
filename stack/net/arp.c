/* stack/net/arp.c: ARP (RFC 826) for IPv4 over Ethernet.
 *
 * A small chained hash of entries.  An unresolved next hop gets an
 * INCOMPLETE entry holding up to arp_pending_max packets (the rest are freed
 * and counted), a request every arp_retry_ms and is given up after
 * US_ARP_MAX_TRIES requests.  A resolved entry lives arp_timeout_s and is then
 * forgotten; the next packet to it resolves it again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_mbuf.h>

#include "stack/net/net.h"

static const struct rte_ether_addr arp_bcast = {
	.addr_bytes = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

static unsigned arp_hash(uint32_t ip)
{
	/* Fibonacci hashing: the top bits of the product mix every input bit. */
	return (uint32_t)(ip * 2654435761u) >> 24 & (US_ARP_BUCKETS - 1);
}

static struct us_arp_entry *arp_find(const struct us_arp_table *t, uint32_t ip)
{
	struct us_arp_entry *ent;

	LIST_FOREACH(ent, &t->buckets[arp_hash(ip)], link)
		if (ent->ip == ip)
			return ent;
	return NULL;
}

static void arp_free_pending(struct us_arp_entry *ent)
{
	for (uint16_t i = 0; i < ent->npending; i++)
		rte_pktmbuf_free(ent->pending[i]);
	ent->npending = 0;
}

static void arp_remove(struct us_net *n, struct us_arp_entry *ent)
{
	us_timer_cancel(n->wheel, &ent->timer);
	arp_free_pending(ent);
	LIST_REMOVE(ent, link);
	ent->state = 0;
	LIST_INSERT_HEAD(&n->arp.free, ent, link);
	n->stats.arp_entries--;
}

static struct us_arp_entry *arp_new(struct us_net *n, uint32_t ip)
{
	struct us_arp_entry *ent = LIST_FIRST(&n->arp.free);

	if (ent == NULL)
		return NULL;
	LIST_REMOVE(ent, link);
	ent->ip = ip;
	ent->tries = 0;
	ent->polling = false;
	ent->npending = 0;
	LIST_INSERT_HEAD(&n->arp.buckets[arp_hash(ip)], ent, link);
	n->stats.arp_entries++;
	return ent;
}

/* Builds and queues one ARP packet from us (sender = our MAC and address). */
static int arp_send(struct us_net *n, uint16_t op, const struct rte_ether_addr *tha,
		    uint32_t tip, uint32_t sip, const struct rte_ether_addr *eth_dst)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(n->pool);
	struct rte_arp_hdr *a;

	if (m == NULL) {
		US_NET_STAT_INC(n, arp_drop_no_mbuf);
		return -ENOMEM;
	}
	a = (struct rte_arp_hdr *)rte_pktmbuf_append(m, sizeof(*a));
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	rte_ether_addr_copy(&n->port.mac, &a->arp_data.arp_sha);
	a->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	rte_ether_addr_copy(tha, &a->arp_data.arp_tha);
	a->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	us_eth_output(n, m, eth_dst, RTE_ETHER_TYPE_ARP);
	return 0;
}

static void arp_request(struct us_net *n, struct us_arp_entry *ent)
{
	static const struct rte_ether_addr zero;

	ent->tries++;
	if (arp_send(n, RTE_ARP_OP_REQUEST, &zero, ent->ip, n->addr, &arp_bcast) == 0)
		US_NET_STAT_INC(n, arp_tx_requests);
	us_timer_arm(n->wheel, &ent->timer,
		     us_timer_now(n->wheel) + US_MS(n->arp.retry_ms));
}

static void arp_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct us_arp_entry *ent = container_of(t, struct us_arp_entry, timer);
	struct us_net *n = ent->n;

	(void)now_ns;
	if (ent->state == US_ARP_REACHABLE) {
		US_NET_STAT_INC(n, arp_expired);
		arp_remove(n, ent);
	} else if (ent->tries >= US_ARP_MAX_TRIES) {
		/* RFC 1122 2.3.2.1: give up on a host that does not answer. */
		US_NET_STAT_INC(n, arp_timeouts);
		US_NET_STAT_ADD(n, arp_drop_unresolved, ent->npending);
		arp_remove(n, ent);
	} else {
		arp_request(n, ent);
	}
}

/* The MAC is known: remember it and send what waited for it, in order. */
static void arp_resolved(struct us_net *n, struct us_arp_entry *ent,
			 const struct rte_ether_addr *mac)
{
	rte_ether_addr_copy(mac, &ent->mac);
	ent->state = US_ARP_REACHABLE;
	ent->tries = 0;
	ent->polling = false;
	us_timer_arm(n->wheel, &ent->timer,
		     us_timer_now(n->wheel) + US_SEC(n->arp.timeout_s));
	for (uint16_t i = 0; i < ent->npending; i++)
		us_eth_output(n, ent->pending[i], mac, RTE_ETHER_TYPE_IPV4);
	ent->npending = 0;
}

int us_arp_init(struct us_net *n, const struct us_config *cfg)
{
	struct us_arp_table *t = &n->arp;
	unsigned slots = cfg->arp_pending_max ? cfg->arp_pending_max : 1;

	t->pending_max = cfg->arp_pending_max;
	t->retry_ms = cfg->arp_retry_ms;
	t->timeout_s = cfg->arp_timeout_s;
	t->entries = calloc(US_ARP_MAX_ENTRIES, sizeof(*t->entries));
	t->pending_store = calloc((size_t)US_ARP_MAX_ENTRIES * slots, sizeof(struct rte_mbuf *));
	if (t->entries == NULL || t->pending_store == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < US_ARP_BUCKETS; i++)
		LIST_INIT(&t->buckets[i]);
	LIST_INIT(&t->free);
	for (unsigned i = 0; i < US_ARP_MAX_ENTRIES; i++) {
		struct us_arp_entry *ent = &t->entries[i];

		ent->n = n;
		ent->pending = &t->pending_store[(size_t)i * slots];
		us_timer_init(&ent->timer, arp_timer_fn);
		LIST_INSERT_HEAD(&t->free, ent, link);
	}
	return 0;
}

void us_arp_fini(struct us_net *n)
{
	struct us_arp_table *t = &n->arp;
	struct us_arp_entry *ent;

	if (t->entries == NULL)
		goto out;
	for (unsigned i = 0; i < US_ARP_BUCKETS; i++)
		while ((ent = LIST_FIRST(&t->buckets[i])) != NULL)
			arp_remove(n, ent);
out:
	free(t->entries);
	free(t->pending_store);
	t->entries = NULL;
	t->pending_store = NULL;
}

/* RFC 826 packet reception; sanity first. */
static int arp_validate(const struct rte_mbuf *m, const struct rte_arp_hdr **out)
{
	const struct rte_arp_hdr *a;
	uint16_t op;

	if (rte_pktmbuf_data_len(m) < sizeof(*a))
		return -EINVAL;
	a = rte_pktmbuf_mtod(m, const struct rte_arp_hdr *);
	op = rte_be_to_cpu_16(a->arp_opcode);
	if (a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != 4 ||
	    (op != RTE_ARP_OP_REQUEST && op != RTE_ARP_OP_REPLY) ||
	    !rte_is_unicast_ether_addr(&a->arp_data.arp_sha))
		return -EINVAL;
	*out = a;
	return 0;
}

void us_arp_input(struct us_net *n, struct rte_mbuf *m, enum us_net_rx from)
{
	const struct rte_arp_hdr *a;
	struct us_arp_entry *ent;
	uint32_t sip, tip;
	bool for_us;

	if (arp_validate(m, &a) < 0) {
		US_NET_STAT_INC(n, arp_drop_bad);
		goto out;
	}
	sip = rte_be_to_cpu_32(a->arp_data.arp_sip);
	tip = rte_be_to_cpu_32(a->arp_data.arp_tip);
	if (a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
		US_NET_STAT_INC(n, arp_rx_requests);
	else
		US_NET_STAT_INC(n, arp_rx_replies);
	for_us = tip == n->addr && n->addr != 0;
	/* RFC 826 "merge": refresh an entry we have; add one only when the
	 * packet is for us (the sender is about to talk to us).  A sender of
	 * 0.0.0.0 is an RFC 5227 probe: nothing to learn. */
	ent = sip != 0 && sip != n->addr ? arp_find(&n->arp, sip) : NULL;
	if (ent == NULL && for_us && sip != 0 && sip != n->addr) {
		ent = arp_new(n, sip);
		if (ent == NULL)
			US_NET_STAT_INC(n, arp_drop_table_full);
	}
	if (ent != NULL)
		arp_resolved(n, ent, &a->arp_data.arp_sha);
	if (!for_us) {
		US_NET_STAT_INC(n, arp_rx_other_target);
		goto out;
	}
	if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
		goto out;
	/* RFC 826: one reply per request.  With several engines every engine
	 * sees the request (stack/engine/engine.c copies it so that all learn the
	 * sender); only the engine whose queue received it answers. */
	if (from == US_NET_RX_HANDED) {
		US_NET_STAT_INC(n, arp_copy_not_answered);
		goto out;
	}
	if (arp_send(n, RTE_ARP_OP_REPLY, &a->arp_data.arp_sha, sip, n->addr,
		     &a->arp_data.arp_sha) == 0)
		US_NET_STAT_INC(n, arp_tx_replies);
out:
	rte_pktmbuf_free(m);
}

static bool arp_is_bcast(const struct us_net *n, uint32_t ip)
{
	return ip == UINT32_MAX || (n->bcast != 0 && ip == n->bcast);
}

void us_arp_output(struct us_net *n, struct rte_mbuf *m, uint32_t next_hop)
{
	struct us_arp_entry *ent;

	if (arp_is_bcast(n, next_hop)) {
		us_eth_output(n, m, &arp_bcast, RTE_ETHER_TYPE_IPV4);
		return;
	}
	ent = arp_find(&n->arp, next_hop);
	if (ent != NULL && ent->state == US_ARP_REACHABLE) {
		us_eth_output(n, m, &ent->mac, RTE_ETHER_TYPE_IPV4);
		return;
	}
	if (ent == NULL) {
		ent = arp_new(n, next_hop);
		if (ent == NULL) {
			US_NET_STAT_INC(n, arp_drop_table_full);
			rte_pktmbuf_free(m);
			return;
		}
		ent->state = US_ARP_INCOMPLETE;
		arp_request(n, ent);
	}
	if (ent->npending >= n->arp.pending_max) {
		US_NET_STAT_INC(n, arp_drop_pending_full);
		rte_pktmbuf_free(m);
		return;
	}
	ent->pending[ent->npending++] = m;
}

/* RFC 5227 2.3 announcement: a request with sender and target both ours, so
 * neighbours with a stale entry for our address update it. */
void us_arp_announce(struct us_net *n)
{
	static const struct rte_ether_addr zero;

	if (arp_send(n, RTE_ARP_OP_REQUEST, &zero, n->addr, n->addr, &arp_bcast) == 0)
		US_NET_STAT_INC(n, arp_tx_gratuitous);
}

int us_arp_lookup(const struct us_net *n, uint32_t ip, struct rte_ether_addr *mac)
{
	const struct us_arp_entry *ent = arp_find(&n->arp, ip);

	if (ent == NULL)
		return -ENOENT;
	if (ent->state != US_ARP_REACHABLE)
		return -EAGAIN;
	if (mac != NULL)
		rte_ether_addr_copy(&ent->mac, mac);
	return 0;
}

/* RFC 1122 2.3.2.1 "unicast poll", as Linux's NUD_PROBE: the entry
 * stays in use (every connection through this next hop keeps sending), a
 * request goes to the MAC it holds, and its lifetime shrinks to the
 * resolution's retries: an answer renews it (arp_resolved), silence lets
 * it expire so that the next frame resolves afresh.  One poll at a time:
 * many connections' timeouts through one next hop send one request. */
bool us_arp_poll(struct us_net *n, uint32_t ip)
{
	struct us_arp_entry *ent = arp_find(&n->arp, ip);

	if (ent == NULL || ent->state != US_ARP_REACHABLE)
		return false;
	if (ent->polling)
		return true;
	ent->polling = true;
	if (arp_send(n, RTE_ARP_OP_REQUEST, &ent->mac, ent->ip, n->addr, &ent->mac) == 0)
		US_NET_STAT_INC(n, arp_tx_requests);
	us_timer_arm(n->wheel, &ent->timer,
		     us_timer_now(n->wheel) + US_MS(n->arp.retry_ms) * US_ARP_MAX_TRIES);
	return true;
}

int us_arp_pending(const struct us_net *n, uint32_t ip)
{
	const struct us_arp_entry *ent = arp_find(&n->arp, ip);

	return ent == NULL ? -ENOENT : ent->npending;
}
