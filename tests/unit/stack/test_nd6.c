/* Neighbor Discovery (stack/net/nd6.c) and Duplicate Address Detection
 * (stack/net/ip6_addr.c): every state of the neighbour cache and its
 * timers, the bounded queue and table, the validity checks of RFC 4861
 * 7.1.1/7.1.2 each refusing a crafted packet, and DAD's success and
 * conflicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness6.h"

static const struct rte_ether_addr other_mac = {{0x02, 0, 0, 0, 0, 0x99}};

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h.cfg.arp_pending_max = 4;
	h6_start(&h, false);
	*state = &h;
	return 0;
}

static int setup_dad(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h6_start(&h, true);
	*state = &h;
	return 0;
}

/* An IPv6 packet as IPv6 output hands it to ND; its flow label is tag. */
static struct rte_mbuf *ip6_pkt(uint32_t tag)
{
	struct rte_ipv6_hdr ip = {
		.vtc_flow = rte_cpu_to_be_32(6u << 28 | tag),
		.proto = IPPROTO_NONE,
		.hop_limits = 64,
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	void *p;

	memcpy(ip.src_addr, h6_our.b, 16);
	memcpy(ip.dst_addr, h6_peer.b, 16);
	assert_non_null(m);
	p = rte_pktmbuf_append(m, sizeof(ip));
	assert_non_null(p);
	memcpy(p, &ip, sizeof(ip));
	return m;
}

static uint32_t tag_of(struct rte_mbuf *m)
{
	return rte_be_to_cpu_32(h6_iph(m)->vtc_flow) & 0xfffff;
}

static void send_to_peer(struct harness *h, uint32_t tag)
{
	us_nd6_output(h6_net(h), ip6_pkt(tag), &h6_peer);
	us_engine_flush(h->e);
}

/* m is a Neighbor Solicitation for target from src to dst at eth_dst,
 * carrying our MAC in its option exactly when src is not ::. */
static void assert_ns(struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
		      const struct rte_ether_addr *eth_dst, const struct us_in6 *target)
{
	struct rte_ipv6_hdr *ip = h6_iph(m);
	struct us_in6 a;
	uint8_t *p = h6_l4(m);
	bool opt = !us_in6_is_unspec(src);

	h6_assert_icmp(m, 135);
	assert_true(rte_is_same_ether_addr(&h_eth(m)->dst_addr, eth_dst));
	assert_true(rte_is_same_ether_addr(&h_eth(m)->src_addr, &h_our_mac));
	assert_int_equal(ip->hop_limits, 255);
	a = h6_addr_at(ip->src_addr);
	assert_true(us_in6_eq(&a, src));
	a = h6_addr_at(ip->dst_addr);
	assert_true(us_in6_eq(&a, dst));
	assert_int_equal(p[1], 0);
	a = h6_addr_at(p + 8);
	assert_true(us_in6_eq(&a, target));
	assert_int_equal(rte_be_to_cpu_16(ip->payload_len), opt ? 32 : 24);
	if (opt) {
		assert_int_equal(p[24], 1);
		assert_int_equal(p[25], 1);
		assert_memory_equal(p + 26, h_our_mac.addr_bytes, 6);
	}
}

/* m is a Neighbor Advertisement for target (from it) to dst at eth_dst with
 * flags and our MAC as target link-layer address. */
static void assert_na(struct rte_mbuf *m, const struct us_in6 *target, const struct us_in6 *dst,
		      const struct rte_ether_addr *eth_dst, uint8_t flags)
{
	struct rte_ipv6_hdr *ip = h6_iph(m);
	uint8_t *p = h6_l4(m);
	struct us_in6 a;

	h6_assert_icmp(m, 136);
	assert_true(rte_is_same_ether_addr(&h_eth(m)->dst_addr, eth_dst));
	assert_int_equal(ip->hop_limits, 255);
	a = h6_addr_at(ip->src_addr);
	assert_true(us_in6_eq(&a, target));
	a = h6_addr_at(ip->dst_addr);
	assert_true(us_in6_eq(&a, dst));
	assert_int_equal(p[4], flags);
	a = h6_addr_at(p + 8);
	assert_true(us_in6_eq(&a, target));
	assert_int_equal(rte_be_to_cpu_16(ip->payload_len), 32);
	assert_int_equal(p[24], 2);
	assert_int_equal(p[25], 1);
	assert_memory_equal(p + 26, h_our_mac.addr_bytes, 6);
}

/* An NA from the peer's address for target, to us (unicast) or dst. */
static struct rte_mbuf *na_from(const struct us_in6 *target, uint8_t flags,
				const struct rte_ether_addr *ll, const struct us_in6 *dst)
{
	uint8_t msg[32];
	size_t n = h6_na(msg, flags, target, ll);
	struct rte_ether_addr mac = us_in6_is_mcast(dst) ? h6_mcast_mac(dst) : h_our_mac;

	return h6_icmp(&mac, target, dst, 255, msg, n);
}

static void peer_answers(struct harness *h, uint8_t flags, const struct rte_ether_addr *ll)
{
	h6_inject(h, na_from(&h6_peer, flags, ll, &h6_our));
}

/* The peer resolved: REACHABLE, its first packet sent. */
static void resolve_peer(struct harness *h)
{
	send_to_peer(h, 1);
	peer_answers(h, H6_NA_SOLICITED | H6_NA_OVERRIDE, &h_peer_mac);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_REACHABLE);
	h_clear_tx(h);
}

/* Start-up */

static void test_announced_at_start(void **state)
{
	struct harness h;
	struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);

	(void)state;
	h_prepare(&h);
	h6_config(&h, false);
	h_start(&h);
	us_engine_announce(h.e);
	assert_int_equal(h.port.ntx, 3); /* the gratuitous ARP first */
	assert_na(h.port.tx[1], &h6_our_ll, &h6_all_nodes, &all, H6_NA_OVERRIDE);
	assert_na(h.port.tx[2], &h6_our, &h6_all_nodes, &all, H6_NA_OVERRIDE);
	assert_int_equal(us_engine_dad_status(h.e, NULL, 0), 0);
	h_teardown(&h);
}

/* Neighbour cache */

static void test_ns_answered_and_sender_learned(void **state)
{
	struct harness *h = *state;
	struct rte_ether_addr mac;
	struct us_in6 g = h6_snode(&h6_our);
	struct rte_ether_addr gmac = h6_mcast_mac(&g);
	uint8_t msg[32];
	size_t n = h6_ns(msg, &h6_our, &h_peer_mac);

	h6_inject(h, h6_icmp(&gmac, &h6_peer, &g, 255, msg, n));
	assert_int_equal(h->port.ntx, 1);
	/* RFC 4861 7.2.4: solicited, override, not a router, to the sender. */
	assert_na(h->port.tx[0], &h6_our, &h6_peer, &h_peer_mac,
		  H6_NA_SOLICITED | H6_NA_OVERRIDE);
	/* 7.2.3: learned STALE, and our NA to it started DELAY. */
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_DELAY);
	assert_int_equal(us_nd6_lookup(h6_net(h), &h6_peer, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &h_peer_mac));
	assert_int_equal(h6_ctr(h, "nd6_rx_ns"), 1);
	assert_int_equal(h6_ctr(h, "nd6_tx_na"), 1);
	assert_int_equal(h6_ctr(h, "nd6_entries"), 1);
}

static void test_ns_for_link_local_answered(void **state)
{
	struct harness *h = *state;
	struct us_in6 g = h6_snode(&h6_our_ll);
	struct rte_ether_addr gmac = h6_mcast_mac(&g);
	uint8_t msg[32];
	size_t n = h6_ns(msg, &h6_our_ll, &h_peer_mac);

	h6_inject(h, h6_icmp(&gmac, &h6_peer_ll, &g, 255, msg, n));
	assert_int_equal(h->port.ntx, 1);
	assert_na(h->port.tx[0], &h6_our_ll, &h6_peer_ll, &h_peer_mac,
		  H6_NA_SOLICITED | H6_NA_OVERRIDE);
}

static void test_incomplete_to_reachable_on_na(void **state)
{
	struct harness *h = *state;
	struct us_in6 g = h6_snode(&h6_peer);
	struct rte_ether_addr gmac = h6_mcast_mac(&g);

	send_to_peer(h, 1);
	send_to_peer(h, 2);
	/* One multicast solicitation to the peer's group, from our address. */
	assert_int_equal(h->port.ntx, 1);
	assert_ns(h->port.tx[0], &h6_our, &g, &gmac, &h6_peer);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_INCOMPLETE);
	assert_int_equal(us_nd6_lookup(h6_net(h), &h6_peer, NULL), -EAGAIN);
	assert_int_equal(us_nd6_pending(h6_net(h), &h6_peer), 2);
	h_clear_tx(h);

	peer_answers(h, H6_NA_SOLICITED | H6_NA_OVERRIDE, &h_peer_mac);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_REACHABLE);
	assert_int_equal(h->port.ntx, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(rte_is_same_ether_addr(&h_eth(h->port.tx[i])->dst_addr, &h_peer_mac));
		assert_int_equal(tag_of(h->port.tx[i]), i + 1);
	}
	/* Resolved: straight out. */
	send_to_peer(h, 3);
	assert_int_equal(h->port.ntx, 3);
	assert_int_equal(us_nd6_pending(h6_net(h), &h6_peer), 0);
}

static void test_unsolicited_na_resolves_stale(void **state)
{
	struct harness *h = *state;

	send_to_peer(h, 1);
	h_clear_tx(h);
	peer_answers(h, H6_NA_OVERRIDE, &h_peer_mac);
	/* 7.2.5: not solicited: STALE; the packet it released starts DELAY. */
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_DELAY);
}

static void test_incomplete_gives_up_and_frees_queue(void **state)
{
	struct harness *h = *state;

	send_to_peer(h, 1);
	send_to_peer(h, 2);
	assert_int_equal(h->port.ntx, 1);
	h_advance(h, US_MS(999));
	assert_int_equal(h->port.ntx, 1);
	h_advance(h, US_MS(2));
	assert_int_equal(h->port.ntx, 2);
	h_advance(h, US_SEC(1));
	assert_int_equal(h->port.ntx, 3); /* MAX_MULTICAST_SOLICIT */
	assert_int_equal(us_nd6_pending(h6_net(h), &h6_peer), 2);
	h_advance(h, US_SEC(1));
	assert_int_equal(h->port.ntx, 3);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), -ENOENT);
	assert_int_equal(h6_ctr(h, "nd6_tx_ns"), 3);
	assert_int_equal(h6_ctr(h, "nd6_timeouts"), 1);
	assert_int_equal(h6_ctr(h, "nd6_drop_unresolved"), 2);
	assert_int_equal(h6_ctr(h, "nd6_entries"), 0);
}

static void test_queue_bounded_oldest_replaced(void **state)
{
	struct harness *h = *state;

	for (uint32_t i = 0; i < 6; i++)
		send_to_peer(h, 100 + i);
	assert_int_equal(us_nd6_pending(h6_net(h), &h6_peer), 4);
	assert_int_equal(h6_ctr(h, "nd6_drop_pending_full"), 2);
	h_clear_tx(h);
	peer_answers(h, H6_NA_SOLICITED, &h_peer_mac);
	/* RFC 4861 7.2.2: the newest four, in order. */
	assert_int_equal(h->port.ntx, 4);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(tag_of(h->port.tx[i]), 102 + i);
}

static void test_reachable_to_stale_after_reachable_time(void **state)
{
	struct harness *h = *state;

	resolve_peer(h);
	h_advance(h, US_SEC(30) - US_MS(10));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_REACHABLE);
	h_advance(h, US_MS(20));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_STALE);
	assert_int_equal(h->port.ntx, 0); /* no probe: nothing was sent */
	assert_int_equal(us_nd6_lookup(h6_net(h), &h6_peer, NULL), 0);
}

/* The peer's entry STALE, nothing sent since. */
static void make_stale(struct harness *h)
{
	resolve_peer(h);
	h_advance(h, US_SEC(31));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_STALE);
}

static void test_stale_to_delay_on_send(void **state)
{
	struct harness *h = *state;

	make_stale(h);
	send_to_peer(h, 7);
	assert_int_equal(h->port.ntx, 1); /* sent at once to the MAC we have */
	assert_true(rte_is_same_ether_addr(&h_eth(h->port.tx[0])->dst_addr, &h_peer_mac));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_DELAY);
}

/* The peer's entry in PROBE, its first unicast solicitation checked and
 * cleared. */
static void make_probe(struct harness *h)
{
	make_stale(h);
	send_to_peer(h, 7);
	h_clear_tx(h);
	h_advance(h, US_SEC(5) - US_MS(10));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_DELAY);
	assert_int_equal(h->port.ntx, 0);
	h_advance(h, US_MS(20));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_PROBE);
	assert_int_equal(h->port.ntx, 1);
	/* 7.3.3: unicast, to the MAC we have. */
	assert_ns(h->port.tx[0], &h6_our, &h6_peer, &h_peer_mac, &h6_peer);
	h_clear_tx(h);
}

static void test_delay_to_probe(void **state)
{
	struct harness *h = *state;

	make_probe(h);
	/* Packets still go while probing. */
	send_to_peer(h, 8);
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_PROBE);
}

static void test_probe_to_reachable_on_solicited_na(void **state)
{
	struct harness *h = *state;

	make_probe(h);
	peer_answers(h, H6_NA_SOLICITED, NULL); /* no option needed once known */
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_REACHABLE);
	h_advance(h, US_SEC(5));
	assert_int_equal(h->port.ntx, 0);
}

static void test_probe_gives_up(void **state)
{
	struct harness *h = *state;

	make_probe(h);
	h_advance(h, US_SEC(1) + US_MS(1));
	h_advance(h, US_SEC(1));
	assert_int_equal(h->port.ntx, 2); /* MAX_UNICAST_SOLICIT in all */
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_PROBE);
	h_advance(h, US_SEC(1));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), -ENOENT);
	assert_int_equal(h6_ctr(h, "nd6_probe_failed"), 1);
	assert_int_equal(h6_ctr(h, "nd6_entries"), 0);
}

static void test_delay_confirmed_by_upper_layer(void **state)
{
	struct harness *h = *state;

	make_stale(h);
	send_to_peer(h, 7);
	h_clear_tx(h);
	us_nd6_confirm(h6_net(h), &h6_peer);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_REACHABLE);
	h_advance(h, US_SEC(6));
	assert_int_equal(h->port.ntx, 0); /* no probe */
}

/* 7.2.5: another MAC without Override is not believed, but REACHABLE goes
 * STALE; with Override it replaces the MAC. */
static void test_na_override_rules(void **state)
{
	struct harness *h = *state;
	struct rte_ether_addr mac;

	resolve_peer(h);
	peer_answers(h, 0, &other_mac);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_STALE);
	assert_int_equal(us_nd6_lookup(h6_net(h), &h6_peer, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &h_peer_mac));
	assert_int_equal(h6_ctr(h, "nd6_rx_na_no_override"), 1);
	peer_answers(h, H6_NA_OVERRIDE, &other_mac);
	assert_int_equal(us_nd6_lookup(h6_net(h), &h6_peer, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &other_mac));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_STALE);
	peer_answers(h, H6_NA_SOLICITED | H6_NA_OVERRIDE, &h_peer_mac);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_REACHABLE);
	assert_int_equal(us_nd6_lookup(h6_net(h), &h6_peer, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &h_peer_mac));
}

static struct us_in6 nth_addr(unsigned i)
{
	struct us_in6 a = h6_peer;

	a.b[13] = (uint8_t)(i >> 8);
	a.b[14] = (uint8_t)i;
	return a;
}

/* Fills the table: one INCOMPLETE entry per address, a packet waiting on
 * each. */
static void fill_table(struct harness *h)
{
	for (unsigned i = 0; i < US_ND6_MAX_ENTRIES; i++) {
		struct us_in6 a = nth_addr(i);

		us_nd6_output(h6_net(h), ip6_pkt(i), &a);
		us_engine_flush(h->e);
		h_clear_tx(h);
	}
	assert_int_equal(h6_ctr(h, "nd6_entries"), US_ND6_MAX_ENTRIES);
}

/* Full table: a STALE entry makes room first; without one the least
 * recently used goes, and the packet waiting on it is counted. */
static void test_eviction_prefers_stale_then_lru(void **state)
{
	struct harness *h = *state;
	struct us_in6 a, stale = nth_addr(5);

	fill_table(h);
	/* Entry 5 resolved, confirmed, then told of another MAC without
	 * Override: STALE (7.2.5). */
	h6_inject(h, na_from(&stale, H6_NA_SOLICITED | H6_NA_OVERRIDE, &h_peer_mac, &h6_our));
	assert_int_equal(us_nd6_state(h6_net(h), &stale), US_ND6_REACHABLE);
	h6_inject(h, na_from(&stale, 0, &other_mac, &h6_our));
	assert_int_equal(us_nd6_state(h6_net(h), &stale), US_ND6_STALE);
	h_clear_tx(h);

	a = nth_addr(1000);
	us_nd6_output(h6_net(h), ip6_pkt(1000), &a);
	us_engine_flush(h->e);
	assert_int_equal(h6_ctr(h, "nd6_evicted"), 1);
	assert_int_equal(h6_ctr(h, "nd6_drop_evicted"), 0);
	assert_int_equal(us_nd6_state(h6_net(h), &stale), -ENOENT);
	assert_int_equal(us_nd6_state(h6_net(h), &a), US_ND6_INCOMPLETE);

	a = nth_addr(1001);
	us_nd6_output(h6_net(h), ip6_pkt(1001), &a);
	us_engine_flush(h->e);
	assert_int_equal(h6_ctr(h, "nd6_evicted"), 2);
	assert_int_equal(h6_ctr(h, "nd6_drop_evicted"), 1);
	a = nth_addr(0);
	assert_int_equal(us_nd6_state(h6_net(h), &a), -ENOENT);
	a = nth_addr(1);
	assert_int_equal(us_nd6_state(h6_net(h), &a), US_ND6_INCOMPLETE);
	assert_int_equal(h6_ctr(h, "nd6_entries"), US_ND6_MAX_ENTRIES);
}

/* Every entry given up in time: the table empties, each packet counted. */
static void test_full_table_drains(void **state)
{
	struct harness *h = *state;

	fill_table(h);
	for (unsigned i = 0; i < US_ND6_MAX_MULTICAST_SOLICIT; i++) {
		h_advance(h, US_SEC(1) + US_MS(5));
		h_clear_tx(h);
	}
	assert_int_equal(h6_ctr(h, "nd6_timeouts"), US_ND6_MAX_ENTRIES);
	assert_int_equal(h6_ctr(h, "nd6_drop_unresolved"), US_ND6_MAX_ENTRIES);
	assert_int_equal(h6_ctr(h, "nd6_entries"), 0);
}

/* Validity checks (RFC 4861 7.1.1, 7.1.2) */

/* An NS for our address from the peer, for a test to spoil. */
struct ns_frame {
	uint8_t msg[64];
	size_t len;
	struct us_in6 src, dst;
	uint8_t hop;
};

static void ns_default(struct ns_frame *f)
{
	f->len = h6_ns(f->msg, &h6_our, &h_peer_mac);
	f->src = h6_peer;
	f->dst = h6_snode(&h6_our);
	f->hop = 255;
}

/* Injects the NS: did it earn an NA? */
static bool ns_answered(struct harness *h, const struct ns_frame *f)
{
	struct rte_ether_addr mac = us_in6_is_mcast(&f->dst) ? h6_mcast_mac(&f->dst) : h_our_mac;
	unsigned before = h->port.ntx;

	h6_inject(h, h6_icmp(&mac, &f->src, &f->dst, f->hop, f->msg, f->len));
	return h->port.ntx > before;
}

static void test_ns_baseline_answered(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	assert_true(ns_answered(h, &f));
}

static void test_ns_hop_limit_254(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	f.hop = 254;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_hop_limit"), 1);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), -ENOENT);
}

static void test_ns_code_not_zero(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	f.msg[1] = 1;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_code"), 1);
}

static void test_ns_too_short(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	f.len = 20;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_short"), 1);
}

static void test_ns_multicast_target(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	memcpy(f.msg + 8, h6_all_nodes.b, 16);
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_mcast_target"), 1);
}

static void test_ns_option_length_zero(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	f.msg[25] = 0;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_bad_opt"), 1);
	/* An option running past the message, and an odd tail. */
	ns_default(&f);
	f.msg[25] = 2;
	assert_false(ns_answered(h, &f));
	ns_default(&f);
	f.msg[32] = 0;
	f.len = 33;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_bad_opt"), 3);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), -ENOENT);
}

static void test_ns_unspec_source_with_sllao(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	f.src = h6_unspec;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_unspec_sllao"), 1);
}

static void test_ns_unspec_source_not_to_solicited_node(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	f.len = h6_ns(f.msg, &h6_our, NULL);
	f.src = h6_unspec;
	f.dst = h6_our;
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_drop_unspec_dst"), 1);
	/* The same to the solicited-node group is another node's DAD for our
	 * address: answered to all nodes, not solicited (7.2.4). */
	f.dst = h6_snode(&h6_our);
	assert_true(ns_answered(h, &f));
	{
		struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);

		assert_na(h->port.tx[h->port.ntx - 1], &h6_our, &h6_all_nodes, &all,
			  H6_NA_OVERRIDE);
	}
}

static void test_ns_other_target_not_learned(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;

	ns_default(&f);
	memcpy(f.msg + 8, h6_peer2.b, 16);
	f.dst = h6_snode(&h6_our); /* our group, not the target's */
	assert_false(ns_answered(h, &f));
	assert_int_equal(h6_ctr(h, "nd6_rx_ns_other_target"), 1);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), -ENOENT);
}

static void test_ns_bad_checksum(void **state)
{
	struct harness *h = *state;
	struct ns_frame f;
	struct rte_mbuf *m;
	struct rte_ether_addr mac;

	ns_default(&f);
	mac = h6_mcast_mac(&f.dst);
	m = h6_icmp(&mac, &f.src, &f.dst, 255, f.msg, f.len);
	h6_l4(m)[3] ^= 1;
	h6_inject(h, m);
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(h6_ctr(h, "icmp6_drop_bad_csum"), 1);
}

static void test_na_hop_limit_254_not_learned(void **state)
{
	struct harness *h = *state;
	uint8_t msg[32];
	size_t n = h6_na(msg, H6_NA_SOLICITED | H6_NA_OVERRIDE, &h6_peer, &h_peer_mac);

	send_to_peer(h, 1);
	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 254, msg, n));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_INCOMPLETE);
	assert_int_equal(h6_ctr(h, "nd6_drop_hop_limit"), 1);
}

static void test_na_never_asked_not_learned(void **state)
{
	struct harness *h = *state;

	peer_answers(h, H6_NA_SOLICITED | H6_NA_OVERRIDE, &h_peer_mac);
	h6_inject(h, na_from(&h6_peer2, H6_NA_OVERRIDE, &h_peer_mac, &h6_all_nodes));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), -ENOENT);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer2), -ENOENT);
	assert_int_equal(h6_ctr(h, "nd6_rx_na_unknown"), 2);
	assert_int_equal(h6_ctr(h, "nd6_entries"), 0);
}

static void test_na_solicited_to_multicast(void **state)
{
	struct harness *h = *state;

	send_to_peer(h, 1);
	h6_inject(h, na_from(&h6_peer, H6_NA_SOLICITED, &h_peer_mac, &h6_all_nodes));
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_INCOMPLETE);
	assert_int_equal(h6_ctr(h, "nd6_drop_solicited_mcast"), 1);
}

static void test_na_incomplete_without_tlla(void **state)
{
	struct harness *h = *state;

	send_to_peer(h, 1);
	peer_answers(h, H6_NA_SOLICITED, NULL);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_INCOMPLETE);
	assert_int_equal(h6_ctr(h, "nd6_drop_na_no_tlla"), 1);
}

static void test_na_multicast_tlla_refused(void **state)
{
	struct harness *h = *state;

	send_to_peer(h, 1);
	peer_answers(h, H6_NA_SOLICITED, &h_bcast_mac);
	assert_int_equal(us_nd6_state(h6_net(h), &h6_peer), US_ND6_INCOMPLETE);
	assert_int_equal(h6_ctr(h, "nd6_drop_bad_opt"), 1);
}

static void test_na_for_our_address_ignored(void **state)
{
	struct harness *h = *state;

	h6_inject(h, na_from(&h6_our, H6_NA_OVERRIDE, &other_mac, &h6_all_nodes));
	assert_int_equal(h6_ctr(h, "nd6_rx_na_our_addr"), 1);
	assert_true(us_ip6_is_local(h6_net(h), &h6_our));
}

static void test_router_messages_dropped(void **state)
{
	struct harness *h = *state;
	uint8_t msg[16] = { 134 };
	struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);

	h6_inject(h, h6_icmp(&all, &h6_peer_ll, &h6_all_nodes, 255, msg, sizeof(msg)));
	msg[0] = 137;
	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer_ll, &h6_our_ll, 255, msg, sizeof(msg)));
	assert_int_equal(h6_ctr(h, "nd6_drop_router"), 2);
	assert_int_equal(h->port.ntx, 0);
}

static void test_groups_not_joined_dropped_by_mac(void **state)
{
	struct harness *h = *state;
	struct us_in6 g = h6_snode(&h6_peer2); /* not one of ours */
	struct rte_ether_addr gmac = h6_mcast_mac(&g);
	uint8_t msg[32];
	size_t n = h6_ns(msg, &h6_peer2, &h_peer_mac);

	h6_inject(h, h6_icmp(&gmac, &h6_peer, &g, 255, msg, n));
	assert_int_equal(h6_ctr(h, "eth_drop_not_for_us"), 1);
	assert_int_equal(h6_ctr(h, "ip6_rx_packets"), 0);
}

/* Duplicate Address Detection (RFC 4862 5.4) */

static void test_dad_success(void **state)
{
	struct harness *h = *state;
	struct us_in6 g0 = h6_snode(&h6_our_ll), g1 = h6_snode(&h6_our);
	struct rte_ether_addr m0 = h6_mcast_mac(&g0), m1 = h6_mcast_mac(&g1);
	struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);

	/* The gratuitous ARP, then one probe per address: from ::, no option. */
	assert_int_equal(h->port.ntx, 3);
	assert_ns(h->port.tx[1], &h6_unspec, &g0, &m0, &h6_our_ll);
	assert_ns(h->port.tx[2], &h6_unspec, &g1, &m1, &h6_our);
	assert_int_equal(h6_ctr(h, "dad_tx_ns"), 2);
	assert_true(us_ip6_is_tentative(h6_net(h), &h6_our));
	assert_false(us_ip6_is_local(h6_net(h), &h6_our));
	assert_true(us_ip6_is_joined(h6_net(h), &g1)); /* joined before the probe */
	assert_int_equal(us_engine_dad_status(h->e, NULL, 0), -EAGAIN);
	h_clear_tx(h);

	h_advance(h, US_SEC(1) - US_MS(10));
	assert_true(us_ip6_is_tentative(h6_net(h), &h6_our));
	h_advance(h, US_MS(20));
	assert_true(us_ip6_is_local(h6_net(h), &h6_our));
	assert_true(us_ip6_is_local(h6_net(h), &h6_our_ll));
	assert_int_equal(h6_ctr(h, "dad_ok"), 2);
	assert_int_equal(us_engine_dad_status(h->e, NULL, 0), 0);
	/* Then announced (RFC 4861 7.2.6). */
	assert_int_equal(h->port.ntx, 2);
	assert_na(h->port.tx[0], &h6_our_ll, &h6_all_nodes, &all, H6_NA_OVERRIDE);
	assert_na(h->port.tx[1], &h6_our, &h6_all_nodes, &all, H6_NA_OVERRIDE);
}

static void test_dad_tentative_receives_nothing(void **state)
{
	struct harness *h = *state;
	uint8_t msg[64];
	size_t n = h6_echo(msg, 1, 1, 8);

	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, n));
	assert_int_equal(h6_ctr(h, "ip6_drop_tentative"), 1);
	assert_int_equal(h6_ctr(h, "icmp6_echo_in"), 0);
	/* ND for it is no exception: a unicast source resolving it gets no
	 * answer yet (RFC 4862 5.4.3). */
	{
		struct us_in6 g = h6_snode(&h6_our);
		struct rte_ether_addr gm = h6_mcast_mac(&g);

		h_clear_tx(h);
		n = h6_ns(msg, &h6_our, &h_peer_mac);
		h6_inject(h, h6_icmp(&gm, &h6_peer, &g, 255, msg, n));
		assert_int_equal(h->port.ntx, 0);
		assert_int_equal(h6_ctr(h, "nd6_rx_ns_tentative"), 1);
		assert_true(us_ip6_is_tentative(h6_net(h), &h6_our));
	}
}

static void test_dad_conflict_by_na(void **state)
{
	struct harness *h = *state;
	char dup[US_IN6_STRLEN];
	struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);

	h_clear_tx(h);
	/* The owner defends its address (RFC 4861 7.2.4: to all nodes). */
	h6_inject(h, na_from(&h6_our, H6_NA_OVERRIDE, &other_mac, &h6_all_nodes));
	assert_int_equal(h6_ctr(h, "dad_duplicate"), 1);
	assert_false(us_ip6_is_tentative(h6_net(h), &h6_our));
	assert_false(us_ip6_is_local(h6_net(h), &h6_our));
	assert_int_equal(us_engine_dad_status(h->e, dup, sizeof(dup)), -EADDRINUSE);
	assert_string_equal(dup, "fd00:77::2");
	/* The link-local address passes, and alone is announced. */
	h_advance(h, US_SEC(1) + US_MS(10));
	assert_true(us_ip6_is_local(h6_net(h), &h6_our_ll));
	assert_int_equal(h->port.ntx, 1);
	assert_na(h->port.tx[0], &h6_our_ll, &h6_all_nodes, &all, H6_NA_OVERRIDE);
	assert_int_equal(us_engine_dad_status(h->e, NULL, 0), -EADDRINUSE);
	/* Packets to it are not ours. */
	{
		uint8_t msg[64];
		size_t n = h6_echo(msg, 1, 1, 8);

		h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, n));
		assert_int_equal(h6_ctr(h, "ip6_drop_not_for_us"), 1);
		assert_int_equal(h6_ctr(h, "icmp6_echo_in"), 0);
	}
}

static void test_dad_conflict_by_ns_from_unspec(void **state)
{
	struct harness *h = *state;
	struct us_in6 g = h6_snode(&h6_our_ll);
	struct rte_ether_addr gm = h6_mcast_mac(&g);
	uint8_t msg[32];
	size_t n = h6_ns(msg, &h6_our_ll, NULL);
	char dup[US_IN6_STRLEN];

	h_clear_tx(h);
	/* Another node runs DAD for our link-local address at the same time. */
	h6_inject(h, h6_icmp(&gm, &h6_unspec, &g, 255, msg, n));
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(h6_ctr(h, "dad_duplicate"), 1);
	assert_int_equal(us_engine_dad_status(h->e, dup, sizeof(dup)), -EADDRINUSE);
	assert_string_equal(dup, "fe80::ff:fe00:2");
	h_advance(h, US_SEC(2));
	assert_true(us_ip6_is_local(h6_net(h), &h6_our));
	assert_false(us_ip6_is_local(h6_net(h), &h6_our_ll));
	/* Sources now skip the duplicate: link-local destinations get the
	 * configured address. */
	{
		struct us_in6 src;

		assert_int_equal(us_ip6_src_for(h6_net(h), &h6_peer_ll, &src), 0);
		assert_true(us_in6_eq(&src, &h6_our));
	}
}

static void test_dad_adopted_by_another_engine(void **state)
{
	struct harness *h = *state;
	struct harness h2;

	h_advance(h, US_SEC(1) + US_MS(10));
	assert_int_equal(us_engine_dad_status(h->e, NULL, 0), 0);
	h_prepare(&h2);
	h6_config(&h2, true);
	h_start(&h2);
	assert_int_equal(us_engine_dad_status(h2.e, NULL, 0), -EAGAIN);
	us_engine_adopt_addrs(h2.e, h->e);
	assert_int_equal(us_engine_dad_status(h2.e, NULL, 0), 0);
	assert_true(us_ip6_is_local(&h2.e->net, &h6_our));
	assert_int_equal(h2.port.ntx, 0); /* no solicitation of its own */
	h_clear_tx(h);
	h_teardown(&h2);
}

static void test_source_selection(void **state)
{
	struct harness *h = *state;
	struct us_in6 src, ff05 = { .b = { 0xff, 0x05, [15] = 1 } };

	assert_int_equal(us_ip6_src_for(h6_net(h), &h6_peer_ll, &src), 0);
	assert_true(us_in6_eq(&src, &h6_our_ll));
	assert_int_equal(us_ip6_src_for(h6_net(h), &h6_all_nodes, &src), 0);
	assert_true(us_in6_eq(&src, &h6_our_ll));
	assert_int_equal(us_ip6_src_for(h6_net(h), &h6_peer, &src), 0);
	assert_true(us_in6_eq(&src, &h6_our));
	assert_int_equal(us_ip6_src_for(h6_net(h), &ff05, &src), 0);
	assert_true(us_in6_eq(&src, &h6_our));
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, h6_teardown)
#define TD(f) cmocka_unit_test_setup_teardown(f, setup_dad, h6_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_announced_at_start),
		T(test_ns_answered_and_sender_learned),
		T(test_ns_for_link_local_answered),
		T(test_incomplete_to_reachable_on_na),
		T(test_unsolicited_na_resolves_stale),
		T(test_incomplete_gives_up_and_frees_queue),
		T(test_queue_bounded_oldest_replaced),
		T(test_reachable_to_stale_after_reachable_time),
		T(test_stale_to_delay_on_send),
		T(test_delay_to_probe),
		T(test_probe_to_reachable_on_solicited_na),
		T(test_probe_gives_up),
		T(test_delay_confirmed_by_upper_layer),
		T(test_na_override_rules),
		T(test_full_table_drains),
		T(test_eviction_prefers_stale_then_lru),
		T(test_ns_baseline_answered),
		T(test_ns_hop_limit_254),
		T(test_ns_code_not_zero),
		T(test_ns_too_short),
		T(test_ns_multicast_target),
		T(test_ns_option_length_zero),
		T(test_ns_unspec_source_with_sllao),
		T(test_ns_unspec_source_not_to_solicited_node),
		T(test_ns_other_target_not_learned),
		T(test_ns_bad_checksum),
		T(test_na_hop_limit_254_not_learned),
		T(test_na_never_asked_not_learned),
		T(test_na_solicited_to_multicast),
		T(test_na_incomplete_without_tlla),
		T(test_na_multicast_tlla_refused),
		T(test_na_for_our_address_ignored),
		T(test_router_messages_dropped),
		T(test_groups_not_joined_dropped_by_mac),
		T(test_source_selection),
		TD(test_dad_success),
		TD(test_dad_tentative_receives_nothing),
		TD(test_dad_conflict_by_na),
		TD(test_dad_conflict_by_ns_from_unspec),
		TD(test_dad_adopted_by_another_engine),
	};

	h_eal_init("us_test_nd6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
