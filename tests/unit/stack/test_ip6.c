/* IPv6 (stack/net/ip6.c, route6.c): input validation, one test per
 * rejection next to an accepted baseline; the dispatch by next header; the
 * extension-header walk's refusals answered; output's routes, sources,
 * path MTU and fragments; reassembly on the way in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <string.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness6.h"

static const struct us_in6 far = { .b = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 } };
static const struct us_in6 lab = { .b = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x05, [15] = 9 } };
static const struct us_in6 lab_gw = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 0x55 } };

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h6_start(&h, false);
	h6_learn_peer(&h);
	*state = &h;
	return 0;
}

/* With a default router and one route of its own. */
static int setup_routes(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h.cfg.gateway6 = h6_gw;
	h.cfg.has_gateway6 = true;
	h.cfg.routes6[0] = (struct us_route6){
		.net = { .b = { 0x20, 0x01, 0x0d, 0xb8, 0x00, 0x05 } },
		.prefixlen = 48, .gateway = lab_gw, .has_gateway = true,
	};
	h.cfg.nroutes6 = 1;
	h6_start(&h, false);
	*state = &h;
	return 0;
}

static int setup_off(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h_start(&h);
	*state = &h;
	return 0;
}

static struct rte_mbuf *ping_to(const struct us_in6 *dst)
{
	uint8_t msg[64];
	size_t n = h6_echo(msg, 1, 1, 32);

	return h6_icmp(&h_our_mac, &h6_peer, dst, 64, msg, n);
}

/* Inject m: did it reach ICMPv6's echo? */
static bool delivered(struct harness *h, struct rte_mbuf *m)
{
	int64_t before = h6_ctr(h, "icmp6_echo_in");

	h6_inject(h, m);
	return h6_ctr(h, "icmp6_echo_in") == before + 1;
}

/* Input */

static void test_valid_accepted(void **state)
{
	struct harness *h = *state;

	int64_t before = h6_ctr(h, "ip6_rx_packets");

	assert_true(delivered(h, ping_to(&h6_our)));
	assert_true(delivered(h, ping_to(&h6_our_ll)));
	assert_int_equal(h6_ctr(h, "ip6_rx_packets"), before + 2);
}

static void test_ipv6_off_is_an_unknown_type(void **state)
{
	struct harness *h = *state;

	h6_inject(h, ping_to(&h6_our));
	assert_int_equal(h6_ctr(h, "eth_drop_unknown_type"), 1);
	assert_int_equal(h6_ctr(h, "ip6_rx_packets"), 0);
	assert_int_equal(h->port.ntx, 0);
}

static void test_short(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(&h6_our);

	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - 14 - 39);
	assert_false(delivered(h, m));
	assert_int_equal(h6_ctr(h, "ip6_drop_short"), 1);
}

static void test_bad_version(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(&h6_our);

	h6_iph(m)->vtc_flow = rte_cpu_to_be_32(4u << 28);
	assert_false(delivered(h, m));
	assert_int_equal(h6_ctr(h, "ip6_drop_bad_version"), 1);
}

static void test_payload_beyond_frame(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(&h6_our);

	h6_iph(m)->payload_len = rte_cpu_to_be_16(41);
	assert_false(delivered(h, m));
	assert_int_equal(h6_ctr(h, "ip6_drop_bad_len"), 1);
}

/* Ethernet padding after the payload is cut before the checksum sees it. */
static void test_padding_trimmed(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(&h6_our);
	uint8_t *pad = (uint8_t *)rte_pktmbuf_append(m, 10);

	memset(pad, 0xee, 10);
	assert_true(delivered(h, m));
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_16(h6_iph(h->port.tx[0])->payload_len), 40);
	h6_assert_icmp(h->port.tx[0], 129);
}

static void test_not_for_us(void **state)
{
	struct harness *h = *state;
	/* Its MAC is our solicited-node group's, the group is not. */
	struct us_in6 g5 = { .b = { 0xff, 0x05, [11] = 1, [12] = 0xff, [15] = 2 } };
	struct rte_ether_addr gm = h6_mcast_mac(&g5);
	uint8_t msg[64];
	size_t n = h6_echo(msg, 1, 1, 8);

	assert_false(delivered(h, ping_to(&h6_peer2)));
	assert_false(delivered(h, h6_icmp(&gm, &h6_peer, &g5, 64, msg, n)));
	assert_int_equal(h6_ctr(h, "ip6_drop_not_for_us"), 2);
	assert_int_equal(h6_ctr(h, "eth_drop_not_for_us"), 0);
}

static void test_bad_source(void **state)
{
	struct harness *h = *state;
	struct us_in6 lo = { .b = { [15] = 1 } };
	uint8_t msg[64];
	size_t n = h6_echo(msg, 1, 1, 8);

	assert_false(delivered(h, h6_icmp(&h_our_mac, &h6_all_nodes, &h6_our, 64, msg, n)));
	assert_false(delivered(h, h6_icmp(&h_our_mac, &lo, &h6_our, 64, msg, n)));
	assert_int_equal(h6_ctr(h, "ip6_drop_bad_src"), 2);
}

/* A host does not forward: hop limit 0 is nobody's business here. */
static void test_hop_limit_zero_accepted(void **state)
{
	struct harness *h = *state;
	uint8_t msg[64];
	size_t n = h6_echo(msg, 1, 1, 8);

	assert_true(delivered(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 0, msg, n)));
	assert_int_equal(h6_ctr(h, "ip6_rx_hop_limit_zero"), 1);
}

/* TCP over IPv6 reaches tcp/ (which checks the checksum over the IPv6
 * pseudo-header: a header of zeros fails it); UDP has its own tests
 * (test_udp6.c), TCP's scripts run over both families (tests/pkt). */
static void test_tcp_handed_to_tcp(void **state)
{
	struct harness *h = *state;
	uint8_t l4[20] = { [12] = 5 << 4 }; /* data offset 5 words */

	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_TCP, 64, l4, 20));
	assert_int_equal(h6_ctr(h, "ip6_rx_tcp"), 1);
	assert_int_equal(h6_ctr(h, "tcp_drop_bad_csum"), 1);
	assert_int_equal(h->port.ntx, 0);
}

static void test_no_next_header(void **state)
{
	struct harness *h = *state;

	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_NONE, 64, NULL, 0));
	assert_int_equal(h6_ctr(h, "ip6_rx_no_next_header"), 1);
	assert_int_equal(h->port.ntx, 0);
}

/* The parameter problem sent back: code, pointer, and the quoted packet's
 * first bytes. */
static void assert_param_problem(struct harness *h, uint8_t code, uint32_t pointer)
{
	struct rte_mbuf *e;
	uint8_t *p;
	struct us_in6 a;

	assert_int_equal(h->port.ntx, 1);
	e = h->port.tx[0];
	h6_assert_icmp(e, ICMP6_PARAM_PROB);
	p = h6_l4(e);
	assert_int_equal(p[1], code);
	assert_int_equal(p[4] << 24 | p[5] << 16 | p[6] << 8 | p[7], pointer);
	a = h6_addr_at(h6_iph(e)->dst_addr);
	assert_true(us_in6_eq(&a, &h6_peer));
	a = h6_addr_at(p + 8 + 8); /* the quoted source */
	assert_true(us_in6_eq(&a, &h6_peer));
}

/* RFC 8200 4: an unrecognized Next Header, pointed at. */
static void test_unknown_next_header(void **state)
{
	struct harness *h = *state;
	uint8_t body[16] = { 0 }, chain[24] = { 253, 0, 1, 4 };

	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, 253, 64, body, sizeof(body)));
	assert_int_equal(h6_ctr(h, "ip6_drop_unknown_proto"), 1);
	assert_param_problem(h, ICMP6_PARAMPROB_NEXTHEADER, 6);
	h_clear_tx(h);
	/* Behind a destination options header: its first byte. */
	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_DSTOPTS, 64, chain,
			      sizeof(chain)));
	assert_param_problem(h, ICMP6_PARAMPROB_NEXTHEADER, 40);
}

/* What the walk refuses is answered as it asks: a routing header of type
 * 0 with segments left (RFC 5095), pointed at its type. */
static void test_walk_refusal_answered(void **state)
{
	struct harness *h = *state;
	uint8_t chain[24 + 8] = { IPPROTO_ICMPV6, 2, 0, 1, [24] = 128 };

	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_ROUTING, 64, chain,
			      sizeof(chain)));
	assert_int_equal(h6_ctr(h, "ip6_ext_drop_rh0"), 1);
	assert_param_problem(h, ICMP6_PARAMPROB_HEADER, 42);
	assert_int_equal(h6_ctr(h, "icmp6_echo_in"), 0);
}

/* Output */

/* An mbuf chain of 1024-byte segments holding buf. */
static struct rte_mbuf *chain_of(const uint8_t *buf, size_t len)
{
	struct rte_mbuf *head = NULL;

	for (size_t off = 0; off < len; off += 1024) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
		size_t k = len - off < 1024 ? len - off : 1024;
		void *p;

		assert_non_null(m);
		p = rte_pktmbuf_append(m, (uint16_t)k);
		assert_non_null(p);
		memcpy(p, buf + off, k);
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	return head;
}

/* An ICMPv6 echo request of ours (len bytes of message) to dst. */
static void send_echo(struct harness *h, const struct us_in6 *dst, size_t len, unsigned flags)
{
	static uint8_t buf[4096];

	assert_true(len <= sizeof(buf));
	h6_echo(buf, 9, 9, len - 8);
	us_ip6_output(h6_net(h), chain_of(buf, len), NULL, dst, IPPROTO_ICMPV6, 0, flags);
	us_engine_flush(h->e);
}

static void test_routes(void **state)
{
	struct harness *h = *state;
	struct us_in6 nh;

	assert_int_equal(us_route6_lookup(h6_net(h), &h6_peer, &nh), 0);
	assert_true(us_in6_eq(&nh, &h6_peer)); /* on-link prefix */
	assert_int_equal(us_route6_lookup(h6_net(h), &h6_peer_ll, &nh), 0);
	assert_true(us_in6_eq(&nh, &h6_peer_ll)); /* fe80::/10 */
	assert_int_equal(us_route6_lookup(h6_net(h), &h6_all_nodes, &nh), 0);
	assert_true(us_in6_eq(&nh, &h6_all_nodes));
	assert_int_equal(us_route6_lookup(h6_net(h), &lab, &nh), 0);
	assert_true(us_in6_eq(&nh, &lab_gw)); /* the longer prefix */
	assert_int_equal(us_route6_lookup(h6_net(h), &far, &nh), 0);
	assert_true(us_in6_eq(&nh, &h6_gw)); /* the default route */
}

static void test_no_route(void **state)
{
	struct harness *h = *state;
	struct us_in6 nh;

	assert_int_equal(us_route6_lookup(h6_net(h), &far, &nh), -ENETUNREACH);
	send_echo(h, &far, 64, 0);
	assert_int_equal(h6_ctr(h, "ip6_drop_no_route"), 1);
	assert_int_equal(h->port.ntx, 0);
}

static void test_output_via_gateway(void **state)
{
	struct harness *h = *state;
	struct us_in6 g = h6_snode(&h6_gw), a;
	struct rte_mbuf *m;

	send_echo(h, &far, 64, 0);
	/* The router is resolved, the packet waits for it. */
	assert_int_equal(h->port.ntx, 1);
	m = h->port.tx[0];
	h6_assert_icmp(m, 135);
	a = h6_addr_at(h6_iph(m)->dst_addr);
	assert_true(us_in6_eq(&a, &g));
	assert_int_equal(us_nd6_pending(h6_net(h), &h6_gw), 1);
	h_clear_tx(h);
	{
		uint8_t msg[32];
		size_t n = h6_na(msg, H6_NA_SOLICITED | H6_NA_ROUTER, &h6_gw, &h_gw_mac);

		h6_inject(h, h6_icmp(&h_our_mac, &h6_gw, &h6_our, 255, msg, n));
	}
	assert_int_equal(h->port.ntx, 1);
	m = h->port.tx[0];
	assert_int_equal(h6_iph(m)->proto, IPPROTO_ICMPV6);
	assert_int_equal(h6_l4(m)[0], 128);
	assert_true(rte_is_same_ether_addr(&h_eth(m)->dst_addr, &h_gw_mac));
	a = h6_addr_at(h6_iph(m)->dst_addr);
	assert_true(us_in6_eq(&a, &far));
	a = h6_addr_at(h6_iph(m)->src_addr);
	assert_true(us_in6_eq(&a, &h6_our));
	assert_int_equal(h6_iph(m)->hop_limits, 64);
	assert_int_equal(rte_be_to_cpu_32(h6_iph(m)->vtc_flow), 6u << 28);
}

static void test_output_no_source_while_tentative(void **state)
{
	struct harness h;

	(void)state;
	h_prepare(&h);
	h6_start(&h, true);
	h_clear_tx(&h);
	send_echo(&h, &h6_peer, 64, 0);
	assert_int_equal(us_engine_counter(h.e, "ip6_drop_no_src"), 1);
	assert_int_equal(h.port.ntx, 0);
	h_teardown(&h);
}

static void test_too_big_not_fragmented(void **state)
{
	struct harness *h = *state;

	send_echo(h, &h6_peer, 1500 - 40 + 1, US_IP6_NO_FRAG);
	assert_int_equal(h6_ctr(h, "ip6_drop_too_big"), 1);
	assert_int_equal(h->port.ntx, 0);
	send_echo(h, &h6_peer, 1500 - 40, US_IP6_NO_FRAG);
	assert_int_equal(h->port.ntx, 1);
}

/* Fragments */

/* The fragments of one datagram: each within mtu, offsets contiguous, the
 * payload whole again (RFC 8200 4.5). */
static void assert_fragments(struct harness *h, unsigned first, unsigned n, uint16_t mtu,
			     size_t total)
{
	size_t next = 0;
	uint32_t id = 0;

	for (unsigned i = first; i < first + n; i++) {
		struct rte_mbuf *m = h->port.tx[i];
		uint8_t *fh = h6_l4(m);
		uint16_t off_mf = (uint16_t)(fh[2] << 8 | fh[3]);
		uint32_t fid;

		assert_true(rte_pktmbuf_pkt_len(m) - 14 <= mtu);
		assert_int_equal(h6_iph(m)->proto, IPPROTO_FRAGMENT);
		assert_int_equal(fh[0], IPPROTO_ICMPV6);
		memcpy(&fid, fh + 4, 4);
		if (i == first)
			id = fid;
		assert_int_equal(fid, id);
		assert_int_equal((off_mf & 0xfff8), next);
		assert_int_equal(off_mf & 1, i + 1 < first + n);
		next += rte_be_to_cpu_16(h6_iph(m)->payload_len) - 8;
	}
	assert_int_equal(next, total);
}

static void test_output_fragmented_to_path_mtu(void **state)
{
	struct harness *h = *state;

	send_echo(h, &h6_peer, 3000, 0);
	assert_int_equal(h->port.ntx, 3);
	assert_fragments(h, 0, 3, 1500, 3000);
	h_clear_tx(h);
	/* A Packet Too Big lowered the path: smaller fragments. */
	assert_int_equal(us_ip6_pmtu_lower(h6_net(h), &h6_peer, 1280), 0);
	send_echo(h, &h6_peer, 3000, 0);
	assert_int_equal(h->port.ntx, 3);
	assert_fragments(h, 0, 3, 1280, 3000);
	h_clear_tx(h);
	send_echo(h, &h6_peer, 1400, 0);
	assert_int_equal(h->port.ntx, 2);
	assert_fragments(h, 0, 2, 1280, 1400);
}

/* A 3000-byte ping in fragments: reassembled, answered in fragments. */
static void test_fragmented_ping_answered(void **state)
{
	struct harness *h = *state;
	static uint8_t msg[3000];
	size_t n = h6_echo(msg, 5, 5, sizeof(msg) - 8);
	size_t cut[] = { 0, 1448, 2896, n };
	uint16_t sum;

	{
		/* The ICMPv6 checksum of the whole message, pseudo-header and all. */
		uint32_t s = 0;

		for (unsigned i = 0; i < 16; i += 2)
			s += (uint32_t)(h6_peer.b[i] << 8 | h6_peer.b[i + 1]) +
			     (uint32_t)(h6_our.b[i] << 8 | h6_our.b[i + 1]);
		s += (uint32_t)n + IPPROTO_ICMPV6;
		for (size_t i = 0; i < n; i += 2)
			s += (uint32_t)(msg[i] << 8 | (i + 1 < n ? msg[i + 1] : 0));
		while (s >> 16)
			s = (s & 0xffff) + (s >> 16);
		sum = (uint16_t)~s;
		msg[2] = (uint8_t)(sum >> 8);
		msg[3] = (uint8_t)sum;
	}
	for (unsigned i = 0; i < 3; i++) {
		uint8_t frag[8 + 1448];
		size_t len = cut[i + 1] - cut[i];
		uint16_t off_mf = (uint16_t)(cut[i] | (i < 2 ? 1 : 0));

		frag[0] = IPPROTO_ICMPV6;
		frag[1] = 0;
		frag[2] = (uint8_t)(off_mf >> 8);
		frag[3] = (uint8_t)off_mf;
		memcpy(frag + 4, "\x12\x34\x56\x78", 4);
		memcpy(frag + 8, msg + cut[i], len);
		h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_FRAGMENT, 64, frag,
				      8 + len));
	}
	assert_int_equal(h6_ctr(h, "icmp6_echo_in"), 1);
	assert_int_equal(h->port.ntx, 3);
	assert_fragments(h, 0, 3, 1500, n);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, h6_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_valid_accepted),
		cmocka_unit_test_setup_teardown(test_ipv6_off_is_an_unknown_type, setup_off,
						h6_teardown),
		T(test_short),
		T(test_bad_version),
		T(test_payload_beyond_frame),
		T(test_padding_trimmed),
		T(test_not_for_us),
		T(test_bad_source),
		T(test_hop_limit_zero_accepted),
		T(test_tcp_handed_to_tcp),
		T(test_no_next_header),
		T(test_unknown_next_header),
		T(test_walk_refusal_answered),
		cmocka_unit_test_setup_teardown(test_routes, setup_routes, h6_teardown),
		T(test_no_route),
		cmocka_unit_test_setup_teardown(test_output_via_gateway, setup_routes, h6_teardown),
		cmocka_unit_test(test_output_no_source_while_tentative),
		T(test_too_big_not_fragmented),
		T(test_output_fragmented_to_path_mtu),
		T(test_fragmented_ping_answered),
	};

	h_eal_init("us_test_ip6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
