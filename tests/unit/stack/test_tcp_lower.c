/* TCP over IPv4 through one engine, RFC 9293 3.9.2 (the TCP/lower-level
 * interface): a segment carrying IP options TCP does not know still
 * reaches TCP and is answered (MUST-50); a segment to a broadcast address,
 * the subnet's included, is silently discarded (MUST-57), and one from a
 * broadcast or multicast source too (MUST-63); TCP's negative advice at R1
 * retransmissions makes IP resolve the next hop again (MUST-20); segments
 * queued in one receive burst are all processed before an ACK leaves
 * (MUST-59).  Each
 * rejection sits next to the accepted baseline, so it cannot pass by
 * accident. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_tcp.h>

#include "stack/engine/engine_priv.h"
#include "tcp/tcp.h"
#include "tests/unit/stack/harness.h"

#define PORT 81
#define H_BCAST H_IP(10, 0, 0, 255) /* the harness's /24 */

static const struct rte_ether_addr zero_mac;

static void on_closed(void *ctx, struct tcp_conn *c, int err)
{
	(void)ctx;
	(void)c;
	(void)err;
}

static const struct tcp_callbacks cbs = { .on_closed = on_closed };

/* An engine that knows the peer's MAC, with a listener on 0.0.0.0:81. */
static int setup(void **state)
{
	static struct harness h;
	struct us_in6 any = us_in6_of_v4(0);

	h_prepare(&h);
	h_start(&h);
	us_engine_input(h.e, h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac,
				   H_OUR_IP, &h_bcast_mac));
	us_engine_flush(h.e);
	h_clear_tx(&h);
	assert_int_equal(tcp_listen(us_engine_tcp(h.e), &any, PORT, 0, &cbs, NULL), 0);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	h_teardown(*state);
	return 0;
}

static int64_t ctr(struct harness *h, const char *name)
{
	return us_engine_counter(h->e, name);
}

/* A SYN from src to dst (with the MAC of ours), in one flush; frames sent. */
static unsigned syn(struct harness *h, uint32_t src, uint32_t dst, uint16_t sport)
{
	us_engine_input(h->e, h_tcp(src, sport, dst, PORT, RTE_TCP_SYN_FLAG, 1000, 0, 0, 0));
	us_engine_flush(h->e);
	return h->port.ntx;
}

/* The flags of our frame i (a TCP segment over IPv4). */
static uint8_t tx_flags(struct harness *h, unsigned i)
{
	const struct rte_ipv4_hdr *ip = h_iph(h->port.tx[i]);

	assert_int_equal(ip->next_proto_id, IPPROTO_TCP);
	return ((const struct rte_tcp_hdr *)((const uint8_t *)ip + rte_ipv4_hdr_len(ip)))
		->tcp_flags;
}

/* MUST-50: a SYN behind IP options (Router Alert, RFC 2113, and a NOP
 * before an EOL) opens as one without them would. */
static void test_ip_options_ignored(void **state)
{
	struct harness *h = *state;
	static const uint8_t opts[8] = { 0x94, 4, 0, 0, 1, 0, 0, 0 };
	struct rte_mbuf *t = h_tcp(H_PEER_IP, 40000, H_OUR_IP, PORT, RTE_TCP_SYN_FLAG, 1000, 0,
				   0, 0);
	uint8_t frame[256], pkt[128];
	size_t n = h_bytes(t, frame, sizeof(frame)), l4 = n - RTE_ETHER_HDR_LEN - 20;
	struct rte_mbuf *m;

	rte_pktmbuf_free(t);
	memcpy(pkt, opts, sizeof(opts));
	memcpy(pkt + sizeof(opts), frame + RTE_ETHER_HDR_LEN + 20, l4);
	m = h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_TCP, 1, 0, pkt, sizeof(opts) + l4);
	h_iph(m)->version_ihl = 0x47; /* 28 bytes: the options are IP's */
	h_fix_ip_csum(m);
	us_engine_input(h->e, m);
	us_engine_flush(h->e);
	assert_int_equal(ctr(h, "ip_rx_options"), 1);
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(tx_flags(h, 0), RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(ctr(h, "tcp_drop_bad_csum"), 0);
}

/* MUST-57: a SYN to the subnet's broadcast address or the limited one
 * opens nothing and is answered by nothing, even by a listener on every
 * address; to our address it opens. */
static void test_syn_to_broadcast_discarded(void **state)
{
	struct harness *h = *state;

	assert_int_equal(syn(h, H_PEER_IP, H_BCAST, 40001), 0);
	assert_int_equal(syn(h, H_PEER_IP, 0xffffffffu, 40002), 0);
	assert_int_equal(ctr(h, "ip_drop_tcp_bcast"), 2);
	assert_int_equal(ctr(h, "tcp_rx_segs"), 0);
	assert_int_equal(syn(h, H_PEER_IP, H_OUR_IP, 40003), 1);
	assert_int_equal(tx_flags(h, 0), RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
}

/* MUST-63: a SYN from a multicast or broadcast source is discarded before
 * TCP (no SYN-ACK, no RST). */
static void test_syn_from_group_discarded(void **state)
{
	struct harness *h = *state;

	assert_int_equal(syn(h, H_IP(224, 0, 0, 9), H_OUR_IP, 40001), 0);
	assert_int_equal(syn(h, H_BCAST, H_OUR_IP, 40002), 0);
	assert_int_equal(ctr(h, "ip_drop_bad_src"), 2);
	assert_int_equal(ctr(h, "tcp_rx_segs"), 0);
	assert_int_equal(syn(h, H_PEER_IP, H_OUR_IP, 40003), 1);
}

/* Frames of ours that are ARP requests, among those sent since the last
 * h_clear_tx; clears them. */
static unsigned arp_requests_sent(struct harness *h)
{
	unsigned n = 0;

	for (unsigned i = 0; i < h->port.ntx; i++)
		n += rte_be_to_cpu_16(h_eth(h->port.tx[i])->ether_type) == RTE_ETHER_TYPE_ARP;
	h_clear_tx(h);
	return n;
}

/* RFC 9293 3.8.3 (MUST-20): from the R1-th (3rd) retransmission on, TCP
 * gives IP negative advice: the next hop's ARP entry is polled (RFC 1122
 * 2.3.2.1: a request to the MAC it holds) and stays in use, so the resend
 * and every other connection through it still go; unanswered, the entry
 * expires after the resolution's retries and the next frame resolves
 * afresh.  The 1st and 2nd retransmissions leave it; a 4th while the
 * poll is out sends no second request. */
static void test_r1_negative_advice_polls_next_hop(void **state)
{
	struct harness *h = *state;
	struct tcp_stack *ts = us_engine_tcp(h->e);
	struct us_net *n = us_engine_net(h->e);
	struct us_in6 peer = us_in6_of_v4(H_PEER_IP);
	struct tcp_conn *c = NULL;
	struct rte_ether_addr mac;
	const struct rte_tcp_hdr *th;
	uint32_t iss;

	assert_int_equal(us_arp_lookup(n, H_PEER_IP, &mac), 0);
	assert_int_equal(tcp_connect(ts, &peer, 80, &cbs, NULL, &c), 0);
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 1);
	th = (const struct rte_tcp_hdr *)(h_iph(h->port.tx[0]) + 1);
	iss = rte_be_to_cpu_32(th->sent_seq);
	h_clear_tx(h);
	us_engine_input(h->e, h_tcp(H_PEER_IP, 80, H_OUR_IP, rte_be_to_cpu_16(th->src_port),
				    RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG, 7000, iss + 1, 0, 0));
	us_engine_flush(h->e);
	h_clear_tx(h);
	assert_int_equal(tcp_send(c, "data", 4), 4);
	us_engine_flush(h->e);
	h_clear_tx(h);
	/* Nothing answers: RTOs 1 and 2 resend to the known MAC. */
	while (ctr(h, "tcp_rto_fired") < 2)
		h_advance(h, US_MS(10));
	assert_int_equal(ctr(h, "tcp_negative_advice"), 0);
	assert_int_equal(us_arp_lookup(n, H_PEER_IP, &mac), 0);
	assert_int_equal(arp_requests_sent(h), 0);
	while (ctr(h, "tcp_rto_fired") < 3)
		h_advance(h, US_MS(10));
	assert_int_equal(ctr(h, "tcp_negative_advice"), 1);
	assert_int_equal(ctr(h, "net_negative_advice"), 1);
	/* The 3rd resend went to the known MAC, and one request with it, to
	 * that MAC (a unicast poll, not a broadcast). */
	assert_int_equal(us_arp_lookup(n, H_PEER_IP, &mac), 0);
	assert_int_equal(h->port.ntx, 2);
	for (unsigned i = 0; i < 2; i++)
		assert_memory_equal(&h_eth(h->port.tx[i])->dst_addr, &h_peer_mac, sizeof(mac));
	assert_int_equal(arp_requests_sent(h), 1);
	/* The 4th timeout, the poll still out: no second request. */
	while (ctr(h, "tcp_rto_fired") < 4)
		h_advance(h, US_MS(10));
	assert_int_equal(ctr(h, "tcp_negative_advice"), 2);
	assert_int_equal(arp_requests_sent(h), 0);
	/* The answer renews the entry; the next advice polls again. */
	us_engine_input(h->e, h_arp(RTE_ARP_OP_REPLY, &h_peer_mac, H_PEER_IP, &h_our_mac,
				    H_OUR_IP, &h_our_mac));
	us_engine_flush(h->e);
	h_clear_tx(h);
	while (ctr(h, "tcp_rto_fired") < 5)
		h_advance(h, US_MS(10));
	assert_int_equal(arp_requests_sent(h), 1);
	assert_int_equal(tcp_abort(c), 0);
}

/* A poll nobody answers: the entry expires after the resolution's
 * retries, and the next frame to that address resolves it by broadcast. */
static void test_r1_unanswered_poll_expires_entry(void **state)
{
	struct harness *h = *state;
	struct us_net *n = us_engine_net(h->e);
	struct rte_ether_addr mac;

	assert_int_equal(us_arp_lookup(n, H_PEER_IP, &mac), 0);
	assert_true(us_arp_poll(n, H_PEER_IP));
	us_engine_flush(h->e);
	assert_int_equal(arp_requests_sent(h), 1);
	h_advance(h, US_MS(1000) * US_ARP_MAX_TRIES - US_MS(10));
	assert_int_equal(us_arp_lookup(n, H_PEER_IP, &mac), 0);
	h_advance(h, US_MS(20));
	assert_int_equal(us_arp_lookup(n, H_PEER_IP, &mac), -ENOENT);
	assert_false(us_arp_poll(n, H_PEER_IP));
	h_clear_tx(h);
}

/* The port's transmit, spied on: how many segments TCP had taken in when
 * each TX burst left. */
static struct harness *spy_h;
static uint16_t (*spy_orig)(void *ctx, struct rte_mbuf **pkts, uint16_t n);
static int64_t spy_rx_at[8];
static unsigned spy_calls;

static uint16_t spy_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	if (spy_calls < RTE_DIM(spy_rx_at))
		spy_rx_at[spy_calls] = ctr(spy_h, "tcp_rx_segs");
	spy_calls++;
	return spy_orig(ctx, pkts, n);
}

/* RFC 9293 3.10.7.4 (MUST-58, MUST-59): eight full-sized segments queued
 * on the port and taken in one poll are all processed before any ACK
 * leaves (the engine runs the burst to completion, then sends), and the
 * ACKs are aggregated: one per two full-sized segments (RFC 5681 4.2, the
 * rate our sender's byte counting is built on), never one per segment,
 * the last acknowledging all eight. */
static void test_queued_segments_processed_before_ack(void **state)
{
	struct harness *h = *state;
	const struct rte_tcp_hdr *th;
	uint32_t iss, rx0;

	assert_int_equal(syn(h, H_PEER_IP, H_OUR_IP, 40000), 1);
	th = (const struct rte_tcp_hdr *)(h_iph(h->port.tx[0]) + 1);
	iss = rte_be_to_cpu_32(th->sent_seq);
	h_clear_tx(h);
	us_engine_input(h->e, h_tcp(H_PEER_IP, 40000, H_OUR_IP, PORT, RTE_TCP_ACK_FLAG, 1001,
				    iss + 1, 0, 0));
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 0);
	rx0 = (uint32_t)ctr(h, "tcp_rx_segs");
	for (uint32_t i = 0; i < 8; i++)
		h->port.rx[h->port.nrx++] = h_tcp(H_PEER_IP, 40000, H_OUR_IP, PORT,
						  RTE_TCP_ACK_FLAG, 1001 + i * 1460, iss + 1,
						  (uint8_t)i, 1460);
	spy_h = h;
	spy_orig = h->e->port.tx;
	spy_calls = 0;
	h->e->port.tx = spy_tx;
	us_engine_poll(h->e, h->now);
	h->e->port.tx = spy_orig;
	assert_int_equal(spy_calls, 1);
	assert_int_equal(spy_rx_at[0], rx0 + 8);
	assert_int_equal(h->port.ntx, 4);
	for (unsigned i = 0; i < 4; i++) {
		th = (const struct rte_tcp_hdr *)(h_iph(h->port.tx[i]) + 1);
		assert_int_equal(th->tcp_flags, RTE_TCP_ACK_FLAG);
		assert_int_equal(rte_be_to_cpu_32(th->recv_ack), 1001 + (i + 1) * 2 * 1460);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_ip_options_ignored),
		T(test_syn_to_broadcast_discarded),
		T(test_syn_from_group_discarded),
		T(test_r1_negative_advice_polls_next_hop),
		T(test_r1_unanswered_poll_expires_entry),
		T(test_queued_segments_processed_before_ack),
	};

	h_eal_init("us_test_tcp_lower");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
