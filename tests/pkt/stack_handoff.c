/* Packet scripts for several engines (stack/engine/handoff.h): engines over fake
 * ports in virtual time, fed by the software NIC model (nic/steer_model.h),
 * which sorts frames into queues by its own RSS key or by flow rules that
 * deliberately disagree with the engines' owner rule.  Every frame must end
 * at the engine owning its connection: none lost, none reordered per flow.
 * IPv6 Neighbor Solicitations and Advertisements reach every engine (each
 * has its own neighbour cache); only the receiving engine answers.  Each
 * script ends with the leak check (every engine destroyed, the pool back
 * to empty). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nic/rss.h"
#include "nic/steer_model.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"
#include "tests/unit/stack/harness.h"
#include "tests/unit/stack/harness6.h"
#include "tcp/tcp.h"

#define NFLOWS 32
#define NDATA 4       /* data segments per flow after the handshake */
#define DLEN 100
#define OUR_PORT 80
#define PEER_PORT0 40000

/* Each flow's next sequence numbers, the peer's and ours. */
static uint32_t peer_seq[NFLOWS], our_seq[NFLOWS];

static const struct tcp_callbacks quiet_cb; /* no application: data waits */

/* n engines that know the peer's MAC (as ARP copies would teach). */
static void multi_start(struct h_multi *t, unsigned n)
{
	memset(peer_seq, 0, sizeof(peer_seq));
	memset(our_seq, 0, sizeof(our_seq));
	h_multi_prepare(t, n);
	h_multi_start(t);
	h_multi_arp_all(t, RTE_ARP_OP_REQUEST);
}

static unsigned owner_of(const struct h_multi *t, unsigned f)
{
	return us_rss_queue_ipv4_tcp(&t->sym, H_PEER_IP, H_OUR_IP, (uint16_t)(PEER_PORT0 + f),
				     OUR_PORT);
}

/* A segment of flow f from the peer, checksums valid. */
static struct rte_mbuf *seg(unsigned f, uint8_t flags, uint32_t seq, uint32_t ack, size_t len)
{
	return h_tcp(H_PEER_IP, (uint16_t)(PEER_PORT0 + f), H_OUR_IP, OUR_PORT, flags, seq, ack,
		     (uint8_t)('a' + seq % 26), len);
}

/* Flow f's incoming direction, as the NIC model matches it. */
static struct us_flow_tuple flow_tuple(unsigned f)
{
	return (struct us_flow_tuple){
		.src_ip = rte_cpu_to_be_32(H_PEER_IP), .dst_ip = rte_cpu_to_be_32(H_OUR_IP),
		.sport = rte_cpu_to_be_16((uint16_t)(PEER_PORT0 + f)),
		.dport = rte_cpu_to_be_16(OUR_PORT),
	};
}

/* The NIC: the model picks the queue, the frame waits there. */
static void deliver(struct h_multi *t, unsigned f, struct rte_mbuf *m)
{
	struct us_flow_tuple tu = flow_tuple(f);

	h_multi_queue_owned(t, us_steer_model_classify(&t->nic, &tu), owner_of(t, f), m);
}

/* Each flow's SYN-ACK comes from its owner and nobody else. */
static void check_synacks(struct h_multi *t)
{
	unsigned seen[NFLOWS] = { 0 };

	for (unsigned k = 0; k < t->n; k++) {
		for (unsigned i = 0; i < t->h[k].port.ntx; i++) {
			struct rte_ipv4_hdr *ip = h_iph(t->h[k].port.tx[i]);
			struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
			unsigned f = rte_be_to_cpu_16(th->dst_port) - PEER_PORT0;

			assert_int_equal(ip->next_proto_id, IPPROTO_TCP);
			assert_true(f < NFLOWS);
			assert_int_equal(th->tcp_flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
			assert_int_equal(k, owner_of(t, f));
			our_seq[f] = rte_be_to_cpu_32(th->sent_seq) + 1;
			seen[f]++;
		}
		h_clear_tx(&t->h[k]);
	}
	for (unsigned f = 0; f < NFLOWS; f++)
		assert_int_equal(seen[f], 1);
}

/* Handshake, then NDATA segments per flow, flows interleaved, each frame
 * through the model; then every engine's account of what it got. */
static void handoff_script(struct h_multi *t)
{
	unsigned owned[H_ENG_MAX] = { 0 };

	for (unsigned k = 0; k < t->n; k++)
		assert_int_equal(tcp_listen(us_engine_tcp(t->h[k].e), NULL, OUR_PORT, 0,
					    &quiet_cb, NULL), 0);
	for (unsigned f = 0; f < NFLOWS; f++) {
		peer_seq[f] = 1000u * f + 7;
		deliver(t, f, seg(f, RTE_TCP_SYN_FLAG, peer_seq[f]++, 0, 0));
		owned[owner_of(t, f)]++;
	}
	h_multi_run(t);
	check_synacks(t);
	for (unsigned f = 0; f < NFLOWS; f++)
		deliver(t, f, seg(f, RTE_TCP_ACK_FLAG, peer_seq[f], our_seq[f], 0));
	for (unsigned d = 0; d < NDATA; d++) {
		for (unsigned f = 0; f < NFLOWS; f++) {
			deliver(t, f, seg(f, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, peer_seq[f],
					  our_seq[f], DLEN));
			peer_seq[f] += DLEN;
		}
		h_multi_run(t); /* a burst per round: frames overtake nothing */
	}
	h_multi_run(t);
	unsigned out = 0, in = 0;
	for (unsigned k = 0; k < t->n; k++) {
		const struct tcp_stats *s = tcp_stack_stats(us_engine_tcp(t->h[k].e));
		struct us_engine *e = t->h[k].e;

		assert_int_equal(s->passive_opens, owned[k]);
		assert_int_equal(s->rx_bytes, (uint64_t)owned[k] * NDATA * DLEN); /* none lost */
		assert_int_equal(s->ooo_queued, 0);                              /* in order */
		assert_int_equal(s->drop_no_conn, 0);
		assert_int_equal(s->drop_unacceptable, 0);
		assert_int_equal(us_engine_counter(e, "steer_handoff_out"), t->wrong[k]);
		assert_int_equal(us_engine_counter(e, "steer_rx_own"), t->to_queue[k] - t->wrong[k]);
		/* every frame here is TCP: all of those kept were on their owner's queue */
		assert_int_equal(us_engine_counter(e, "steer_rx_own_tcp"),
				 t->to_queue[k] - t->wrong[k]);
		assert_int_equal(us_engine_counter(e, "steer_drop_ring_full"), 0);
		out += t->wrong[k];
		in += (unsigned)us_engine_counter(e, "steer_handoff_in");
	}
	assert_int_equal(in, out);
}

/* The NIC hashes with another key (Microsoft's default, not symmetric):
 * about half the flows land on the wrong engine. */
static void test_handoff_rss_disagrees(void **state)
{
	static struct h_multi t;
	struct us_rss other;
	(void)state;

	multi_start(&t, 2);
	assert_int_equal(us_rss_init(&other, us_rss_key_default, US_RSS_KEY_LEN, 128, 2), 0);
	h_multi_nic(&t, &other, 0);
	handoff_script(&t);
	assert_true(t.wrong[0] + t.wrong[1] > 0);             /* hand-offs happened */
	assert_true(t.to_queue[0] - t.wrong[0] + t.to_queue[1] - t.wrong[1] > 0);
	h_multi_finish(&t);
}

/* Flow rules put every flow on queue 0 (say, rules installed for the wrong
 * engine): engine 0 forwards what the others own, over 4 engines. */
static void test_handoff_rules_all_to_queue0(void **state)
{
	static struct h_multi t;
	(void)state;

	multi_start(&t, 4);
	h_multi_nic(&t, &t.sym, NFLOWS);
	for (unsigned f = 0; f < NFLOWS; f++) {
		struct us_flow_tuple tu = flow_tuple(f);

		assert_int_equal(us_steer_model_insert(&t.nic, &tu, 0), 0);
	}
	handoff_script(&t);
	assert_int_equal(t.to_queue[1] + t.to_queue[2] + t.to_queue[3], 0);
	for (unsigned k = 1; k < 4; k++)
		assert_true(us_engine_counter(t.h[k].e, "steer_handoff_in") > 0);
	for (uint32_t i = 0; i < t.nic.capacity; i++) /* the test's own rules */
		assert_int_equal(us_steer_model_remove(&t.nic, &t.nic.rules[i].tuple), 0);
	h_multi_finish(&t);
}

/* Rules where the NIC has room (4 of 32 flows): those flows' frames reach
 * their owner directly from then on, the rest stay on hand-off (counted as
 * refused); a reset connection's rule is removed. */
static void test_flow_rules_then_handoff(void **state)
{
	static struct h_multi t;
	struct us_rss other;
	uint64_t installed = 0, full = 0, removed = 0, ruled_frames;
	(void)state;

	multi_start(&t, 2);
	assert_int_equal(us_rss_init(&other, us_rss_key_default, US_RSS_KEY_LEN, 128, 2), 0);
	h_multi_nic(&t, &other, 4);
	for (unsigned k = 0; k < 2; k++)
		h_model_flowrules(t.h[k].e, (uint16_t)k, &t.nic);
	handoff_script(&t); /* every frame still ends at its owner */
	for (unsigned k = 0; k < 2; k++) {
		installed += (uint64_t)us_engine_counter(t.h[k].e, "flow_rules_installed");
		full += (uint64_t)us_engine_counter(t.h[k].e, "flow_rules_full");
	}
	assert_int_equal(installed, 4);
	assert_int_equal(full, NFLOWS - 4);
	ruled_frames = t.nic.stats.classify_rule;
	assert_true(ruled_frames > 0);
	for (uint32_t i = 0; i < t.nic.capacity; i++) {
		unsigned f = rte_be_to_cpu_16(t.nic.rules[i].tuple.sport) - PEER_PORT0;

		assert_true(t.nic.rules[i].used);
		assert_int_equal(t.nic.rules[i].queue, owner_of(&t, f));
	}
	/* The peer resets every flow: the rules go with the TCBs. */
	for (unsigned f = 0; f < NFLOWS; f++)
		deliver(&t, f, seg(f, RTE_TCP_RST_FLAG, peer_seq[f], 0, 0));
	h_multi_run(&t);
	for (unsigned k = 0; k < 2; k++)
		removed += (uint64_t)us_engine_counter(t.h[k].e, "flow_rules_removed");
	assert_int_equal(removed, 4);
	assert_int_equal(t.nic.nb_rules, 0);
	assert_int_equal(t.nic.stats.remove_ok, 4);
	h_multi_finish(&t);
}

static void walk_cb_ignore(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	(void)c;
}

/* Active opens: engine k's source ports are ones whose replies hash to
 * queue k, for every k. */
static void test_connect_picks_port_on_own_queue(void **state)
{
	static struct h_multi t;
	const struct tcp_callbacks cb = { .on_accept = walk_cb_ignore };
	const struct us_in6 peer = us_in6_of_v4(H_PEER_IP);
	(void)state;

	multi_start(&t, 4);
	for (unsigned k = 0; k < t.n; k++) {
		for (unsigned i = 0; i < 8; i++) {
			struct tcp_conn *c;
			struct tcp_conn_addrs a;

			assert_int_equal(tcp_connect(us_engine_tcp(t.h[k].e), &peer, 8080, &cb,
						     NULL, &c), 0);
			tcp_conn_addrs(c, &a);
			assert_int_equal(us_rss_queue_ipv4_tcp(&t.sym, H_PEER_IP, H_OUR_IP, 8080,
							       a.local_port), k);
		}
		us_engine_flush(t.h[k].e);
		assert_int_equal(t.h[k].port.ntx, 8); /* the SYNs */
	}
	h_multi_finish(&t);
}

/* An ICMP "fragmentation needed" quoting a segment of flow f reaches f's
 * owner whichever queue it came in on; an echo request stays where it is. */
static void test_icmp_error_goes_to_owner(void **state)
{
	static struct h_multi t;
	uint8_t msg[8 + 20 + 8] = { 3, 4, 0, 0, 0, 0, 0x05, 0x00 };
	struct rte_ipv4_hdr *q = (struct rte_ipv4_hdr *)(msg + 8);
	uint16_t ports[2];
	unsigned f = 0, o, other;
	(void)state;

	multi_start(&t, 2);
	o = owner_of(&t, f);
	other = 1 - o;
	q->version_ihl = 0x45;
	q->total_length = rte_cpu_to_be_16(1500);
	q->next_proto_id = IPPROTO_TCP;
	q->src_addr = rte_cpu_to_be_32(H_OUR_IP);
	q->dst_addr = rte_cpu_to_be_32(H_PEER_IP);
	/* The quoted TCP header's first 8 bytes: ports, then sequence. */
	ports[0] = rte_cpu_to_be_16(OUR_PORT);
	ports[1] = rte_cpu_to_be_16((uint16_t)(PEER_PORT0 + f));
	memcpy(msg + 8 + 20, ports, sizeof(ports));
	*(uint16_t *)(msg + 2) = (uint16_t)~rte_raw_cksum(msg, sizeof(msg));
	h_multi_queue(&t, other, h_ipv4(H_GW_IP, H_OUR_IP, IPPROTO_ICMP, 3, 0, msg, sizeof(msg)));
	h_multi_run(&t);
	assert_int_equal(us_engine_counter(t.h[other].e, "steer_handoff_out"), 1);
	assert_int_equal(us_engine_counter(t.h[other].e, "icmp_rx"), 0);
	assert_int_equal(us_engine_counter(t.h[o].e, "icmp_errors_to_tcp"), 1);
	h_multi_finish(&t);
}

/* The owner rule is symmetric: a segment and its reply have one owner, in
 * either family; and it spreads IPv6 tuples over both engines. */
static void test_owner_symmetric(void **state)
{
	const struct us_in6 our4 = us_in6_of_v4(H_OUR_IP), peer4 = us_in6_of_v4(H_PEER_IP);
	const struct us_in6 our6 = { .b = { 0xfd, 0, 0, 0x77, [15] = 2 } };
	const struct us_in6 peer6 = { .b = { 0xfd, 0, 0, 0x77, [15] = 1 } };
	unsigned on[2] = { 0, 0 };
	struct us_rss rss;
	struct us_handoff *ho;
	(void)state;

	assert_int_equal(us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 2), 0);
	ho = us_handoff_create(2, &rss, "sym");
	assert_non_null(ho);
	for (uint16_t p = 1000; p < 1100; p++) {
		unsigned o6 = us_handoff_owner(ho, &peer6, &our6, p, 80);

		assert_int_equal(us_handoff_owner(ho, &peer4, &our4, p, 80),
				 us_handoff_owner(ho, &our4, &peer4, 80, p));
		assert_int_equal(o6, us_handoff_owner(ho, &our6, &peer6, 80, p));
		on[o6]++;
	}
	assert_true(on[0] > 20 && on[1] > 20);
	us_handoff_destroy(ho);
}

/* IPv6 neighbour discovery over several engines */

/* n engines with [ip6] on (fd00:77::2), DAD as asked. */
static void multi6_start(struct h_multi *t, unsigned n, bool dad)
{
	h_multi_prepare(t, n);
	for (unsigned k = 0; k < n; k++)
		h6_config(&t->h[k], dad);
	h_multi_start(t);
}

static int64_t ctr_of(struct h_multi *t, unsigned k, const char *name)
{
	return us_engine_counter(t->h[k].e, name);
}

/* An NA from h6_peer with its MAC, to us. */
static struct rte_mbuf *peer_na(uint8_t flags)
{
	uint8_t msg[32];
	size_t len = h6_na(msg, flags, &h6_peer, &h_peer_mac);

	return h6_icmp(&h_our_mac, &h6_peer, &h6_our, 255, msg, len);
}

/* An NS for our address from src at mac, to our solicited-node group. */
static struct rte_mbuf *ns_for_us(const struct us_in6 *src, const struct rte_ether_addr *mac,
				  uint8_t hop_limit)
{
	struct us_in6 g = h6_snode(&h6_our);
	struct rte_ether_addr gmac = h6_mcast_mac(&g);
	uint8_t msg[32];
	size_t len = h6_ns(msg, &h6_our, mac);

	return h6_icmp(&gmac, src, &g, hop_limit, msg, len);
}

/* RFC 4861 7.2.5: engine 1 resolves the peer (its echo reply waits); the
 * peer's solicited NA lands on engine 0's queue.  Engine 1 learns it from
 * its copy and the reply goes out; engine 0, which asked nothing, creates
 * no entry.  The echo request itself stayed on engine 1. */
static void test_nd6_na_reaches_the_asker(void **state)
{
	static struct h_multi t;
	struct rte_ether_addr mac;
	uint8_t msg[64];
	size_t len = h6_echo(msg, 7, 1, 16);
	(void)state;

	multi6_start(&t, 2, false);
	h_multi_queue(&t, 1, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, len));
	h_multi_run(&t);
	assert_int_equal(t.h[1].port.ntx, 1);
	h6_assert_icmp(t.h[1].port.tx[0], 135);
	assert_int_equal(us_nd6_pending(&t.h[1].e->net, &h6_peer), 1);
	assert_int_equal(ctr_of(&t, 1, "steer_handoff_out") + ctr_of(&t, 1, "steer_nd6_copies"), 0);
	h_clear_tx(&t.h[1]);

	h_multi_queue(&t, 0, peer_na(H6_NA_SOLICITED | H6_NA_OVERRIDE));
	h_multi_run(&t);
	assert_int_equal(ctr_of(&t, 0, "steer_nd6_copies"), 1);
	assert_int_equal(ctr_of(&t, 1, "steer_handoff_in"), 1);
	assert_int_equal(us_nd6_state(&t.h[1].e->net, &h6_peer), US_ND6_REACHABLE);
	assert_int_equal(us_nd6_lookup(&t.h[1].e->net, &h6_peer, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &h_peer_mac));
	assert_int_equal(t.h[1].port.ntx, 1);
	h6_assert_icmp(t.h[1].port.tx[0], 129);
	assert_true(rte_is_same_ether_addr(&h_eth(t.h[1].port.tx[0])->dst_addr, &h_peer_mac));
	assert_int_equal(us_nd6_state(&t.h[0].e->net, &h6_peer), -ENOENT);
	assert_int_equal(ctr_of(&t, 0, "nd6_rx_na_unknown"), 1);
	assert_int_equal(t.h[0].port.ntx, 0);
	h_multi_finish(&t);
}

/* RFC 4861 7.2.3/7.2.4: an NS for our address gets ONE NA, from the engine
 * whose queue received it; every other engine learns the sender (STALE)
 * from its copy.  For each receiving engine in turn. */
static void test_nd6_ns_one_answer(void **state)
{
	static struct h_multi t;
	(void)state;

	multi6_start(&t, 2, false);
	for (unsigned rx = 0; rx < t.n; rx++) {
		struct us_in6 src = h6_peer;
		struct rte_ether_addr smac = h_peer_mac, mac;

		src.b[15] = (uint8_t)(0x40 + rx);
		smac.addr_bytes[5] = (uint8_t)(0x40 + rx);
		h_multi_queue(&t, rx, ns_for_us(&src, &smac, 255));
		h_multi_run(&t);
		for (unsigned k = 0; k < t.n; k++) {
			assert_int_equal(t.h[k].port.ntx, k == rx ? 1 : 0);
			assert_int_equal(us_nd6_lookup(&t.h[k].e->net, &src, &mac), 0);
			assert_true(rte_is_same_ether_addr(&mac, &smac));
			/* The answer went to it: DELAY there, STALE elsewhere. */
			assert_int_equal(us_nd6_state(&t.h[k].e->net, &src),
					 k == rx ? US_ND6_DELAY : US_ND6_STALE);
		}
		h6_assert_icmp(t.h[rx].port.tx[0], 136);
		assert_int_equal(h6_l4(t.h[rx].port.tx[0])[4], H6_NA_SOLICITED | H6_NA_OVERRIDE);
		assert_true(rte_is_same_ether_addr(&h_eth(t.h[rx].port.tx[0])->dst_addr, &smac));
		h_clear_tx(&t.h[rx]);
	}
	for (unsigned k = 0; k < t.n; k++) {
		assert_int_equal(ctr_of(&t, k, "nd6_rx_ns"), 2);
		assert_int_equal(ctr_of(&t, k, "nd6_tx_na"), 1);
		assert_int_equal(ctr_of(&t, k, "nd6_copy_not_answered"), 1);
		assert_int_equal(ctr_of(&t, k, "steer_nd6_copies"), 1);
		assert_int_equal(ctr_of(&t, k, "steer_handoff_in"), 1);
		assert_int_equal(ctr_of(&t, k, "steer_arp_copies"), 0);
	}
	h_multi_finish(&t);
}

/* Another node's DAD probe for our address (from ::) on engine 1's queue:
 * one NA to all nodes, from engine 1 (RFC 4861 7.2.4). */
static void test_nd6_dad_probe_one_answer(void **state)
{
	static struct h_multi t;
	(void)state;

	multi6_start(&t, 2, false);
	h_multi_queue(&t, 1, ns_for_us(&h6_unspec, NULL, 255));
	h_multi_run(&t);
	assert_int_equal(t.h[0].port.ntx, 0);
	assert_int_equal(t.h[1].port.ntx, 1);
	h6_assert_icmp(t.h[1].port.tx[0], 136);
	assert_int_equal(h6_l4(t.h[1].port.tx[0])[4], H6_NA_OVERRIDE);
	assert_int_equal(ctr_of(&t, 0, "nd6_copy_not_answered"), 1);
	h_multi_finish(&t);
}

/* DAD runs on engine 0 only; a defence of the address arriving on engine
 * 1's queue reaches it as a copy (RFC 4862 5.4.4). */
static void test_nd6_dad_defence_on_other_queue(void **state)
{
	static struct h_multi t;
	const struct rte_ether_addr all_nodes_mac = h6_mcast_mac(&h6_all_nodes);
	uint8_t msg[32];
	size_t len = h6_na(msg, H6_NA_OVERRIDE, &h6_our, &h_peer_mac);
	(void)state;

	multi6_start(&t, 2, true);
	us_engine_announce(t.h[0].e);
	assert_int_equal(us_engine_dad_status(t.h[0].e, NULL, 0), -EAGAIN);
	h_multi_queue(&t, 1, h6_icmp(&all_nodes_mac, &h6_peer, &h6_all_nodes, 255, msg, len));
	h_multi_run(&t);
	assert_int_equal(ctr_of(&t, 1, "steer_nd6_copies"), 1);
	assert_int_equal(us_engine_dad_status(t.h[0].e, NULL, 0), -EADDRINUSE);
	assert_int_equal(ctr_of(&t, 0, "dad_duplicate"), 1);
	h_multi_finish(&t);
}

/* An NS for our address behind a hop-by-hop header (a PadN option), its
 * checksum right. */
static struct rte_mbuf *ns_behind_hbh(void)
{
	uint8_t msg[8 + 32] = { IPPROTO_ICMPV6, 0, 1, 4, 0, 0, 0, 0 };
	size_t len = h6_ns(msg + 8, &h6_our, &h_peer_mac);
	struct rte_mbuf *plain = h6_icmp(&h_our_mac, &h6_peer, &h6_our, 255, msg + 8, len);

	/* Same pseudo-header (upper-layer length, next header 58): same sum. */
	memcpy(msg + 8 + 2, h6_l4(plain) + 2, 2);
	rte_pktmbuf_free(plain);
	return h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_HOPOPTS, 255, msg, 8 + len);
}

/* What is not copied: an NS with a hop limit below 255 (every engine would
 * drop it), an NS behind an extension header, an NS for another node's
 * group (the port runs all-multicast), an echo request; with [ip6] off, no
 * IPv6 frame.  Each is handled only where it arrived. */
static void test_nd6_not_copied(void **state)
{
	static struct h_multi t;
	const struct us_in6 g2 = h6_snode(&h6_peer2);
	const struct rte_ether_addr g2_mac = h6_mcast_mac(&g2);
	uint8_t echo[32];
	(void)state;

	multi6_start(&t, 2, false);
	h_multi_queue(&t, 1, ns_for_us(&h6_peer, &h_peer_mac, 64));
	h_multi_queue(&t, 1, ns_behind_hbh());
	h_multi_queue(&t, 1, h6_icmp(&g2_mac, &h6_peer, &g2, 255, echo,
				     h6_ns(echo, &h6_peer2, &h_peer_mac)));
	h_multi_queue(&t, 1, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, echo,
				     h6_echo(echo, 1, 1, 0)));
	h_multi_run(&t);
	assert_int_equal(ctr_of(&t, 1, "steer_nd6_copies"), 0);
	assert_int_equal(ctr_of(&t, 1, "nd6_drop_hop_limit"), 1);
	assert_int_equal(ctr_of(&t, 1, "eth_drop_not_for_us"), 1);
	/* The second NS answered, the echo too. */
	assert_int_equal(t.h[1].port.ntx, 2);
	h6_assert_icmp(t.h[1].port.tx[0], 136);
	h6_assert_icmp(t.h[1].port.tx[1], 129);
	assert_int_equal(ctr_of(&t, 0, "steer_handoff_in"), 0);
	assert_int_equal(ctr_of(&t, 0, "ip6_rx_packets"), 0);
	assert_int_equal(us_nd6_state(&t.h[0].e->net, &h6_peer), -ENOENT);
	h_multi_finish(&t);

	/* A unicast NS (a reachability probe, RFC 4861 7.3.1) to our MAC. */
	h_multi_prepare(&t, 2);
	h_multi_start(&t);
	h_multi_queue(&t, 1, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 255, echo,
				     h6_ns(echo, &h6_our, &h_peer_mac)));
	h_multi_run(&t);
	assert_int_equal(ctr_of(&t, 1, "steer_nd6_copies"), 0);
	assert_int_equal(ctr_of(&t, 1, "eth_drop_unknown_type"), 1);
	assert_int_equal(ctr_of(&t, 0, "eth_rx_frames"), 0);
	h_multi_finish(&t);
}

/* No mbuf for a copy: counted, and the receiving engine still handles the
 * original (its answer finds no mbuf either). */
static void test_nd6_copy_no_mbuf(void **state)
{
	static struct h_multi t;
	struct rte_mbuf **hoard;
	unsigned n = 0, cap;
	(void)state;

	multi6_start(&t, 2, false);
	h_multi_queue(&t, 1, ns_for_us(&h6_peer, &h_peer_mac, 255));
	cap = rte_mempool_avail_count(h_pool);
	hoard = calloc(cap + 1, sizeof(*hoard));
	assert_non_null(hoard);
	while (n <= cap && (hoard[n] = rte_pktmbuf_alloc(h_pool)) != NULL)
		n++;
	assert_int_equal(n, cap);
	h_multi_run(&t);
	assert_int_equal(ctr_of(&t, 1, "steer_drop_no_mbuf"), 1);
	assert_int_equal(ctr_of(&t, 1, "steer_nd6_copies"), 0);
	assert_int_equal(ctr_of(&t, 1, "nd6_rx_ns"), 1);
	assert_int_equal(ctr_of(&t, 1, "nd6_drop_no_mbuf"), 1);
	assert_int_equal(ctr_of(&t, 0, "nd6_rx_ns"), 0);
	rte_pktmbuf_free_bulk(hoard, n);
	free(hoard);
	h_multi_finish(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handoff_rss_disagrees),
		cmocka_unit_test(test_handoff_rules_all_to_queue0),
		cmocka_unit_test(test_connect_picks_port_on_own_queue),
		cmocka_unit_test(test_flow_rules_then_handoff),
		cmocka_unit_test(test_icmp_error_goes_to_owner),
		cmocka_unit_test(test_owner_symmetric),
		cmocka_unit_test(test_nd6_na_reaches_the_asker),
		cmocka_unit_test(test_nd6_ns_one_answer),
		cmocka_unit_test(test_nd6_dad_probe_one_answer),
		cmocka_unit_test(test_nd6_dad_defence_on_other_queue),
		cmocka_unit_test(test_nd6_not_copied),
		cmocka_unit_test(test_nd6_copy_no_mbuf),
	};

	h_eal_init("us_pkt_handoff");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
