/* Packet scripts for several engines (stack/engine/handoff.h): engines over fake
 * ports in virtual time, fed by the software NIC model (nic/steer_model.h),
 * which sorts frames into queues by its own RSS key or by flow rules that
 * deliberately disagree with the engines' owner rule.  Every frame must end
 * at the engine owning its connection: none lost, none reordered per flow.
 * Each script ends with the leak check (every engine destroyed, the pool
 * back to empty). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
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
		assert_int_equal(tcp_listen(us_engine_tcp(t->h[k].e), H_OUR_IP, OUR_PORT,
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
	(void)state;

	multi_start(&t, 4);
	for (unsigned k = 0; k < t.n; k++) {
		for (unsigned i = 0; i < 8; i++) {
			struct tcp_conn *c;
			struct tcp_conn_addrs a;

			assert_int_equal(tcp_connect(us_engine_tcp(t.h[k].e), H_PEER_IP, 8080, &cb,
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

/* The owner rule is symmetric: a segment and its reply have one owner. */
static void test_owner_symmetric(void **state)
{
	struct us_rss rss;
	struct us_handoff *ho;
	(void)state;

	assert_int_equal(us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 2), 0);
	ho = us_handoff_create(2, &rss, "sym");
	assert_non_null(ho);
	for (uint16_t p = 1000; p < 1100; p++)
		assert_int_equal(us_handoff_owner(ho, H_PEER_IP, H_OUR_IP, p, 80),
				 us_handoff_owner(ho, H_OUR_IP, H_PEER_IP, 80, p));
	us_handoff_destroy(ho);
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
	};

	h_eal_init("us_pkt_handoff");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
