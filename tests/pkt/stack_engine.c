/* Packet scripts for the layers below TCP: one engine, a fake port, virtual
 * time.  Each script ends with the leak check of h_teardown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "stack/base/rand.h"
#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness.h"

static const struct rte_ether_addr zero_mac;

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h_start(&h);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	h_teardown(*state);
	return 0;
}

static void inject(struct harness *h, struct rte_mbuf *m)
{
	us_engine_input(h->e, m);
	us_engine_flush(h->e);
}

static void learn(struct harness *h, const struct rte_ether_addr *mac, uint32_t ip)
{
	inject(h, h_arp(RTE_ARP_OP_REQUEST, mac, ip, &zero_mac, H_OUR_IP, &h_bcast_mac));
	h_clear_tx(h);
}

static struct rte_arp_hdr *arp_of(struct rte_mbuf *m)
{
	assert_int_equal(rte_be_to_cpu_16(h_eth(m)->ether_type), RTE_ETHER_TYPE_ARP);
	return rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, sizeof(struct rte_ether_hdr));
}

static void *l4_of(struct rte_mbuf *m)
{
	return (uint8_t *)h_iph(m) + rte_ipv4_hdr_len(h_iph(m));
}

/* A well-formed IPv4 frame from us: header checksum, version, TTL. */
static void check_ip_out(struct rte_mbuf *m, const struct rte_ether_addr *dst_mac,
			 uint32_t dst, uint8_t proto)
{
	struct rte_ipv4_hdr *ip = h_iph(m);

	assert_true(rte_is_same_ether_addr(&h_eth(m)->dst_addr, dst_mac));
	assert_true(rte_is_same_ether_addr(&h_eth(m)->src_addr, &h_our_mac));
	assert_int_equal(ip->version_ihl, 0x45);
	assert_int_equal(rte_raw_cksum(ip, 20), 0xffff);
	assert_int_equal(ip->time_to_live, 64);
	assert_int_equal(ip->next_proto_id, proto);
	assert_int_equal(rte_be_to_cpu_32(ip->src_addr), H_OUR_IP);
	assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), dst);
	assert_true(rte_pktmbuf_pkt_len(m) <= 1514);
}

/* Payload from us at the L4 header, as an L4 module would hand it to IP. */
static struct rte_mbuf *l4_pkt(size_t len, uint8_t fill)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	assert_non_null(p);
	memset(p, fill, len);
	return m;
}

static void test_arp_request_reply_through_poll(void **state)
{
	struct harness *h = *state;

	h->port.rx[h->port.nrx++] = h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac,
					  H_OUR_IP, &h_bcast_mac);
	h->port.rx[h->port.nrx++] = h_arp(RTE_ARP_OP_REQUEST, &h_gw_mac, H_GW_IP, &zero_mac,
					  H_OUR_IP, &h_bcast_mac);
	h->now += US_MS(1);
	assert_int_equal(us_engine_poll(h->e, h->now), 2);
	assert_int_equal(h->port.ntx, 2);
	assert_int_equal(rte_be_to_cpu_16(arp_of(h->port.tx[0])->arp_opcode), RTE_ARP_OP_REPLY);
	assert_int_equal(rte_be_to_cpu_32(arp_of(h->port.tx[1])->arp_data.arp_tip), H_GW_IP);
	assert_true(rte_is_same_ether_addr(&h_eth(h->port.tx[1])->dst_addr, &h_gw_mac));
	assert_int_equal(us_engine_poll(h->e, h->now + US_MS(1)), 0);
}

/* Off-subnet: the route says "via 10.0.0.1", so ARP asks for the gateway,
 * queues, and the gateway's reply releases the queue in order. */
static void test_unresolved_next_hop_queues_until_reply(void **state)
{
	struct harness *h = *state;
	const uint32_t far = H_IP(192, 0, 2, 5);
	struct rte_arp_hdr *a;

	us_ip_output(&h->e->net, l4_pkt(100, 0xaa), H_OUR_IP, far, IPPROTO_UDP, 0);
	us_ip_output(&h->e->net, l4_pkt(200, 0xbb), H_OUR_IP, far, IPPROTO_UDP, 0);
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 1);
	a = arp_of(h->port.tx[0]);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REQUEST);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), H_GW_IP);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), H_OUR_IP);
	assert_int_equal(us_arp_pending(&h->e->net, H_GW_IP), 2);
	h_clear_tx(h);

	inject(h, h_arp(RTE_ARP_OP_REPLY, &h_gw_mac, H_GW_IP, &h_our_mac, H_OUR_IP, &h_our_mac));
	assert_int_equal(h->port.ntx, 2);
	check_ip_out(h->port.tx[0], &h_gw_mac, far, IPPROTO_UDP);
	check_ip_out(h->port.tx[1], &h_gw_mac, far, IPPROTO_UDP);
	assert_int_equal(rte_pktmbuf_pkt_len(h->port.tx[0]), 14 + 20 + 100);
	assert_int_equal(rte_pktmbuf_pkt_len(h->port.tx[1]), 14 + 20 + 200);
	assert_int_equal(us_arp_pending(&h->e->net, H_GW_IP), 0);
}

static void test_ping_gets_echo_reply(void **state)
{
	struct harness *h = *state;
	uint8_t msg[128], out[256];
	size_t n = h_icmp_echo(msg, 0x1234, 9, 56);
	struct rte_icmp_hdr *ih;

	/* Unknown sender: the reply waits for ARP. */
	inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 5, 0, msg, n));
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_32(arp_of(h->port.tx[0])->arp_data.arp_tip), H_PEER_IP);
	h_clear_tx(h);
	inject(h, h_arp(RTE_ARP_OP_REPLY, &h_peer_mac, H_PEER_IP, &h_our_mac, H_OUR_IP,
			&h_our_mac));
	assert_int_equal(h->port.ntx, 1);
	check_ip_out(h->port.tx[0], &h_peer_mac, H_PEER_IP, IPPROTO_ICMP);
	assert_int_equal(h_bytes(h->port.tx[0], out, sizeof(out)), 14 + 20 + n);
	ih = (struct rte_icmp_hdr *)(out + 34);
	assert_int_equal(ih->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(ih->icmp_code, 0);
	assert_int_equal(rte_raw_cksum(ih, n), 0xffff);
	assert_memory_equal(out + 34 + 4, msg + 4, n - 4); /* ident, seq, data */
	assert_int_equal(us_engine_counter(h->e, "icmp_echo_out"), 1);
}

/* The IPv4 ID of the echo reply from an engine started under seed
 * (stack/base/rand.h): the ID starts at a random draw of us_ip_init. */
static uint16_t seeded_reply_id(uint64_t seed)
{
	static struct harness h;
	uint8_t msg[128];
	size_t n = h_icmp_echo(msg, 0x1234, 9, 56);
	uint16_t id;

	us_rand_seed(seed);
	h_prepare(&h);
	h_start(&h);
	us_rand_unseed();
	learn(&h, &h_peer_mac, H_PEER_IP);
	inject(&h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 5, 0, msg, n));
	assert_int_equal(h.port.ntx, 1);
	check_ip_out(h.port.tx[0], &h_peer_mac, H_PEER_IP, IPPROTO_ICMP);
	id = rte_be_to_cpu_16(h_iph(h.port.tx[0])->packet_id);
	h_teardown(&h);
	return id;
}

/* A seeded engine replays its IP IDs (what a simulation's replay needs);
 * another seed starts elsewhere. */
static void test_seeded_engines_repeat_ip_id(void **state)
{
	(void)state;
	uint16_t a = seeded_reply_id(1), b = seeded_reply_id(1), c = seeded_reply_id(2);

	assert_int_equal(a, b);
	assert_int_not_equal(a, c);
}

/* RFC 791: reassemble fragment payloads by offset; returns the length. */
static size_t reassemble(struct harness *h, uint8_t *buf, size_t cap, uint16_t *id)
{
	size_t total = 0;
	bool last_seen = false;

	for (unsigned i = 0; i < h->port.ntx; i++) {
		uint8_t f[2048];
		size_t len = h_bytes(h->port.tx[i], f, sizeof(f));
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(f + 14);
		uint16_t fo = rte_be_to_cpu_16(ip->fragment_offset);
		size_t off = (size_t)(fo & RTE_IPV4_HDR_OFFSET_MASK) * 8;
		size_t plen = rte_be_to_cpu_16(ip->total_length) - 20;

		check_ip_out(h->port.tx[i], &h_peer_mac, H_PEER_IP, IPPROTO_ICMP);
		assert_int_equal(len, 14 + 20 + plen);
		if (i == 0)
			*id = ip->packet_id;
		assert_int_equal(ip->packet_id, *id);
		assert_true(off + plen <= cap);
		memcpy(buf + off, f + 34, plen);
		if (!(fo & RTE_IPV4_HDR_MF_FLAG)) {
			last_seen = true;
			total = off + plen;
		} else {
			assert_int_equal(plen % 8, 0);
		}
	}
	assert_true(last_seen);
	return total;
}

static void test_fragmented_ping_reassembled_and_reply_fragmented(void **state)
{
	struct harness *h = *state;
	static uint8_t msg[3100], got[3100];
	size_t n = h_icmp_echo(msg, 77, 1, 3000);
	const size_t cut[] = {0, 1480, 2960, n};
	const unsigned order[] = {2, 0, 1}; /* out of order on purpose */
	uint16_t id;

	learn(h, &h_peer_mac, H_PEER_IP);
	for (unsigned k = 0; k < 3; k++) {
		unsigned i = order[k];
		uint16_t fo = (uint16_t)(cut[i] / 8) | (i < 2 ? RTE_IPV4_HDR_MF_FLAG : 0);

		inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 0x4242, fo, msg + cut[i],
				 cut[i + 1] - cut[i]));
		assert_int_equal(h->port.ntx, k < 2 ? 0 : 3);
	}
	assert_int_equal(us_engine_counter(h->e, "ip_frag_in"), 3);
	assert_int_equal(us_engine_counter(h->e, "ip_frag_reassembled"), 1);
	assert_int_equal(us_engine_counter(h->e, "ip_frag_out"), 3);
	assert_int_equal(reassemble(h, got, sizeof(got), &id), n);
	assert_int_equal(got[0], RTE_IP_ICMP_ECHO_REPLY);
	assert_int_equal(rte_raw_cksum(got, n), 0xffff);
	assert_memory_equal(got + 4, msg + 4, n - 4);
}

/* A network may duplicate a packet: every fragment of a ping twice (the
 * first, a middle and the last, each right after itself, and the first
 * again once the datagram is complete) still gives one datagram and one
 * reply; the copies are counted (DPDK's reassembly alone threw the
 * datagram away at the second first fragment). */
static void test_duplicated_fragments_reassembled_once(void **state)
{
	struct harness *h = *state;
	static uint8_t msg[3100], got[3100];
	size_t n = h_icmp_echo(msg, 78, 1, 3000);
	const size_t cut[] = {0, 1480, 2960, n};
	const unsigned order[] = {0, 0, 1, 1, 2, 2, 0};
	uint16_t id;

	learn(h, &h_peer_mac, H_PEER_IP);
	for (unsigned k = 0; k < RTE_DIM(order); k++) {
		unsigned i = order[k];
		uint16_t fo = (uint16_t)(cut[i] / 8) | (i < 2 ? RTE_IPV4_HDR_MF_FLAG : 0);

		inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 0x4343, fo, msg + cut[i],
				 cut[i + 1] - cut[i]));
	}
	assert_int_equal(us_engine_counter(h->e, "ip_frag_in"), 7);
	assert_int_equal(us_engine_counter(h->e, "ip_frag_dup"), 4);
	assert_int_equal(us_engine_counter(h->e, "ip_frag_reassembled"), 1);
	assert_int_equal(us_engine_counter(h->e, "ip_frag_drop"), 0);
	assert_int_equal(h->port.ntx, 3);
	assert_int_equal(reassemble(h, got, sizeof(got), &id), n);
	assert_int_equal(got[0], RTE_IP_ICMP_ECHO_REPLY);
	assert_memory_equal(got + 4, msg + 4, n - 4);
}

static struct rte_mbuf *udp_frame(uint32_t dst, bool bad_csum)
{
	uint8_t d[64];
	size_t n = h_udp(d, H_PEER_IP, dst, 5555, 9, "payload!", 8);

	if (bad_csum)
		d[8] ^= 0xff;
	return h_ipv4(H_PEER_IP, dst, IPPROTO_UDP, 99, 0, d, n);
}

static void test_udp_closed_port_gets_port_unreachable(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *req = udp_frame(H_OUR_IP, false);
	uint8_t orig[128], out[256];
	size_t olen = h_bytes(req, orig, sizeof(orig));
	struct rte_icmp_hdr *ih;

	learn(h, &h_peer_mac, H_PEER_IP);
	inject(h, req);
	assert_int_equal(h->port.ntx, 1);
	check_ip_out(h->port.tx[0], &h_peer_mac, H_PEER_IP, IPPROTO_ICMP);
	assert_int_equal(h_bytes(h->port.tx[0], out, sizeof(out)), 14 + 20 + 8 + 20 + 8);
	assert_true(olen >= 14 + 20 + 8);
	ih = (struct rte_icmp_hdr *)(out + 34);
	assert_int_equal(ih->icmp_type, 3);
	assert_int_equal(ih->icmp_code, 3);
	assert_int_equal(rte_raw_cksum(ih, 8 + 28), 0xffff);
	/* RFC 792: the datagram's IP header and its first 64 bits. */
	assert_memory_equal(out + 34 + 8, orig + 14, 20 + 8);
	assert_int_equal(us_engine_counter(h->e, "udp_drop_no_port"), 1);
	assert_int_equal(us_engine_counter(h->e, "icmp_unreach_out"), 1);
}

static void test_udp_bad_checksum_and_broadcast_get_no_icmp(void **state)
{
	struct harness *h = *state;

	learn(h, &h_peer_mac, H_PEER_IP);
	inject(h, udp_frame(H_OUR_IP, true));
	assert_int_equal(us_engine_counter(h->e, "udp_drop_bad_csum"), 1);
	inject(h, udp_frame(H_IP(10, 0, 0, 255), false));
	assert_int_equal(us_engine_counter(h->e, "udp_drop_no_port"), 1);
	assert_int_equal(us_engine_counter(h->e, "icmp_error_suppressed"), 1);
	assert_int_equal(h->port.ntx, 0);
}

static void test_icmp_errors_rate_limited(void **state)
{
	struct harness *h = *state;

	learn(h, &h_peer_mac, H_PEER_IP);
	for (unsigned i = 0; i < US_ICMP_BURST + 10; i++)
		inject(h, udp_frame(H_OUR_IP, false));
	assert_int_equal(h->port.ntx, US_ICMP_BURST);
	assert_int_equal(us_engine_counter(h->e, "icmp_ratelimited"), 10);
	h_clear_tx(h);
	h_advance(h, US_MS(10)); /* 10 tokens at 1000/s */
	for (unsigned i = 0; i < 12; i++)
		inject(h, udp_frame(H_OUR_IP, false));
	assert_int_equal(h->port.ntx, 10);
}

static void test_announce_sends_gratuitous_arp(void **state)
{
	struct harness *h = *state;
	struct rte_arp_hdr *a;

	us_engine_announce(h->e);
	assert_int_equal(h->port.ntx, 1);
	assert_true(rte_is_broadcast_ether_addr(&h_eth(h->port.tx[0])->dst_addr));
	a = arp_of(h->port.tx[0]);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REQUEST);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), H_OUR_IP);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), H_OUR_IP);
	assert_true(rte_is_same_ether_addr(&a->arp_data.arp_sha, &h_our_mac));
}

/* The entry lives arp_timeout_s of virtual time; afterwards the next reply
 * to the peer has to ask again. */
static void test_arp_entry_expires_in_virtual_time(void **state)
{
	struct harness *h = *state;
	uint8_t msg[64];
	size_t n = h_icmp_echo(msg, 1, 1, 8);

	learn(h, &h_peer_mac, H_PEER_IP);
	us_engine_poll(h->e, h->now + US_SEC(299));
	inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 1, 0, msg, n));
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_16(h_eth(h->port.tx[0])->ether_type), RTE_ETHER_TYPE_IPV4);
	h_clear_tx(h);
	us_engine_poll(h->e, h->now + US_SEC(301));
	assert_int_equal(us_engine_counter(h->e, "arp_expired"), 1);
	inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 2, 0, msg, n));
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_16(arp_of(h->port.tx[0])->arp_opcode), RTE_ARP_OP_REQUEST);
}

static void test_incomplete_datagram_times_out(void **state)
{
	struct harness *h = *state;
	uint8_t msg[1600];
	h_icmp_echo(msg, 1, 1, 1500);
	inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 7, RTE_IPV4_HDR_MF_FLAG, msg, 1480));
	h_advance(h, US_SEC(29));
	assert_int_equal(us_engine_counter(h->e, "ip_frag_timeout"), 0);
	h_advance(h, US_SEC(2));
	assert_int_equal(us_engine_counter(h->e, "ip_frag_timeout"), 1);
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

/* Destroying the engine frees fragments still waiting for reassembly. */
static void test_destroy_frees_held_fragments(void **state)
{
	struct harness *h = *state;
	uint8_t msg[1600];

	h_icmp_echo(msg, 1, 1, 1500);
	inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 8, RTE_IPV4_HDR_MF_FLAG, msg, 1480));
	inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 9, RTE_IPV4_HDR_MF_FLAG, msg, 1480));
	assert_int_equal(rte_mempool_in_use_count(h_pool), 2);
	/* teardown checks the pool is empty after us_engine_destroy */
}

static void test_frag_needed_for_tcp_goes_to_tcp(void **state)
{
	struct harness *h = *state;
	uint8_t msg[8 + 20 + 8] = {3, 4, 0, 0, 0, 0, 0x05, 0x00};
	struct rte_ipv4_hdr *q = (struct rte_ipv4_hdr *)(msg + 8);

	q->version_ihl = 0x45;
	q->total_length = rte_cpu_to_be_16(1500);
	q->next_proto_id = IPPROTO_TCP;
	q->src_addr = rte_cpu_to_be_32(H_OUR_IP);
	q->dst_addr = rte_cpu_to_be_32(H_PEER_IP);
	*(uint16_t *)(msg + 2) = (uint16_t)~rte_raw_cksum(msg, sizeof(msg));
	inject(h, h_ipv4(H_GW_IP, H_OUR_IP, IPPROTO_ICMP, 3, 0, msg, sizeof(msg)));
	assert_int_equal(us_engine_counter(h->e, "icmp_unreach_in"), 1);
	assert_int_equal(us_engine_counter(h->e, "icmp_errors_to_tcp"), 1);
	assert_int_equal(h->port.ntx, 0);
}

static void test_counters_printed_and_looked_up(void **state)
{
	static const struct tcp_callbacks none;
	struct harness *h = *state;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	learn(h, &h_peer_mac, H_PEER_IP);
	assert_int_equal(tcp_listen(us_engine_tcp(h->e), NULL, 80, 0, &none, NULL), 0);
	us_engine_print_stats(h->e, f);
	fclose(f);
	assert_non_null(strstr(text, "arp_rx_requests 1  # ARP requests received\n"));
	assert_non_null(strstr(text, "tcp_rx_segs 0  # "));
	assert_non_null(strstr(text, "\ntcbs_listen 1  # listeners now (gauge)\n"));
	assert_non_null(strstr(text, "\ntcbs_time_wait 0  # "));
	free(text);
	assert_int_equal(us_engine_counter(h->e, "arp_tx_replies"), 1);
	assert_int_equal(us_engine_counter(h->e, "tcp_rx_segs"), 0);
	assert_int_equal(us_engine_counter(h->e, "tcbs_listen"), 1);
	assert_int_equal(us_engine_counter(h->e, "tcbs_established"), 0);
	assert_int_equal(us_engine_counter(h->e, "tcbs_no_such_state"), -1);
	assert_int_equal(us_engine_counter(h->e, "no_such_counter"), -1);
	assert_int_equal(tcp_unlisten(us_engine_tcp(h->e), 80), 0);
	assert_int_equal(us_engine_counter(h->e, "tcbs_listen"), 0);
}

static void test_no_route_dropped(void **state)
{
	struct harness h;

	(void)state;
	h_prepare(&h);
	h.cfg.gateway = 0;
	h_start(&h);
	us_ip_output(&h.e->net, l4_pkt(10, 1), H_OUR_IP, H_IP(192, 0, 2, 5), IPPROTO_UDP, 0);
	us_engine_flush(h.e);
	assert_int_equal(h.port.ntx, 0);
	assert_int_equal(us_engine_counter(h.e, "ip_drop_no_route"), 1);
	h_teardown(&h);
}

/* Offloads: the NIC fills the IP checksum; for TCP the field carries the
 * pseudo-header sum. */
static void test_tx_offload_flags(void **state)
{
	struct harness h;
	struct rte_mbuf *m;
	struct rte_tcp_hdr *th;

	(void)state;
	h_prepare(&h);
	h.ops.tx_ip_csum = true;
	h.ops.tx_l4_csum = true;
	h_start(&h);
	learn(&h, &h_peer_mac, H_PEER_IP);
	m = l4_pkt(40, 0);
	us_ip_output(&h.e->net, m, H_OUR_IP, H_PEER_IP, IPPROTO_TCP, US_IP_DF | US_IP_TCP_CSUM);
	us_engine_flush(h.e);
	assert_int_equal(h.port.ntx, 1);
	m = h.port.tx[0];
	assert_true(m->ol_flags & RTE_MBUF_F_TX_IP_CKSUM);
	assert_true(m->ol_flags & RTE_MBUF_F_TX_TCP_CKSUM);
	assert_int_equal(m->l2_len, 14);
	assert_int_equal(m->l3_len, 20);
	assert_int_equal(h_iph(m)->hdr_checksum, 0);
	assert_true(rte_be_to_cpu_16(h_iph(m)->fragment_offset) & RTE_IPV4_HDR_DF_FLAG);
	th = l4_of(m);
	assert_int_equal(th->cksum, rte_ipv4_phdr_cksum(h_iph(m), 0));
	h_teardown(&h);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_arp_request_reply_through_poll),
		T(test_unresolved_next_hop_queues_until_reply),
		T(test_ping_gets_echo_reply),
		T(test_fragmented_ping_reassembled_and_reply_fragmented),
		T(test_duplicated_fragments_reassembled_once),
		T(test_udp_closed_port_gets_port_unreachable),
		T(test_udp_bad_checksum_and_broadcast_get_no_icmp),
		T(test_icmp_errors_rate_limited),
		T(test_announce_sends_gratuitous_arp),
		T(test_arp_entry_expires_in_virtual_time),
		T(test_incomplete_datagram_times_out),
		T(test_destroy_frees_held_fragments),
		T(test_frag_needed_for_tcp_goes_to_tcp),
		T(test_counters_printed_and_looked_up),
		cmocka_unit_test(test_no_route_dropped),
		cmocka_unit_test(test_tx_offload_flags),
		cmocka_unit_test(test_seeded_engines_repeat_ip_id),
	};

	h_eal_init("us_pkt_stack");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
