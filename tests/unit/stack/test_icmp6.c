/* ICMPv6 (stack/net/icmp6.c): echo byte-exact, to a group, the input
 * checks; the errors we send (fields, the 1280-byte quote, RFC 4443 2.4 e
 * with its exceptions, the rate limit); Packet Too Big and the path MTU
 * table it feeds (RFC 8201). */
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

static const struct us_in6 router = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 0x99 } };

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h6_start(&h, false);
	h6_learn_peer(&h);
	*state = &h;
	return 0;
}

static struct rte_mbuf *ping(const struct rte_ether_addr *eth_dst, const struct us_in6 *src,
			     const struct us_in6 *dst, size_t data_len)
{
	uint8_t msg[1600];
	size_t n = h6_echo(msg, 0x1234, 7, data_len);

	return h6_icmp(eth_dst, src, dst, 64, msg, n);
}

/* Echo */

static void test_echo_reply_byte_exact(void **state)
{
	struct harness *h = *state;
	uint8_t msg[128], got[256], want[256];
	size_t n = h6_echo(msg, 0x1234, 7, 56), glen, wlen;
	struct rte_mbuf *exp;

	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, n));
	assert_int_equal(h->port.ntx, 1);
	/* The request with the type changed, from our address to the peer's
	 * MAC, our hop limit. */
	msg[0] = 129;
	exp = h6_icmp(&h_peer_mac, &h6_our, &h6_peer, 64, msg, n);
	rte_pktmbuf_mtod(exp, struct rte_ether_hdr *)->src_addr = h_our_mac;
	glen = h_bytes(h->port.tx[0], got, sizeof(got));
	wlen = h_bytes(exp, want, sizeof(want));
	rte_pktmbuf_free(exp);
	assert_int_equal(glen, wlen);
	assert_memory_equal(got, want, wlen);
	assert_int_equal(h6_ctr(h, "icmp6_echo_in"), 1);
	assert_int_equal(h6_ctr(h, "icmp6_echo_out"), 1);
	assert_int_equal(h6_ctr(h, "ip6_tx_packets"), 1);
}

static void test_echo_to_all_nodes(void **state)
{
	struct harness *h = *state;
	struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);
	struct us_in6 a;

	/* Linux answers a ping to ff02::1; so do we, from a unicast address
	 * of ours (RFC 4443 2.2 b). */
	h6_inject(h, ping(&all, &h6_peer, &h6_all_nodes, 16));
	assert_int_equal(h->port.ntx, 1);
	h6_assert_icmp(h->port.tx[0], 129);
	a = h6_addr_at(h6_iph(h->port.tx[0])->src_addr);
	assert_true(us_in6_eq(&a, &h6_our));
	a = h6_addr_at(h6_iph(h->port.tx[0])->dst_addr);
	assert_true(us_in6_eq(&a, &h6_peer));
	h_clear_tx(h);
	/* From a link-local source: from ours, once its MAC is known. */
	h6_inject(h, ping(&all, &h6_peer_ll, &h6_all_nodes, 16));
	assert_int_equal(h->port.ntx, 1);
	h6_assert_icmp(h->port.tx[0], 135);
	a = h6_addr_at(h6_iph(h->port.tx[0])->src_addr);
	assert_true(us_in6_eq(&a, &h6_our_ll));
	assert_int_equal(us_nd6_pending(h6_net(h), &h6_peer_ll), 1);
}

static void test_echo_to_our_group(void **state)
{
	struct harness *h = *state;
	struct us_in6 g = h6_snode(&h6_our);
	struct rte_ether_addr gm = h6_mcast_mac(&g);

	h6_inject(h, ping(&gm, &h6_peer, &g, 16));
	assert_int_equal(h6_ctr(h, "icmp6_echo_out"), 1);
}

static void test_echo_bad_checksum(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping(&h_our_mac, &h6_peer, &h6_our, 16);

	h6_l4(m)[10] ^= 0x40;
	h6_inject(h, m);
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(h6_ctr(h, "icmp6_drop_bad_csum"), 1);
}

static void test_short_message(void **state)
{
	struct harness *h = *state;
	uint8_t msg[8] = { 128 };

	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, 6));
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(h6_ctr(h, "icmp6_drop_short"), 1);
}

static void test_echo_from_unspecified(void **state)
{
	struct harness *h = *state;

	h6_inject(h, ping(&h_our_mac, &h6_unspec, &h6_our, 16));
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(h6_ctr(h, "icmp6_drop_echo_unspec"), 1);
}

static void test_other_types_dropped(void **state)
{
	struct harness *h = *state;
	uint8_t msg[48] = { 129 };

	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, 8));
	msg[0] = 200;
	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, 8));
	msg[0] = 1;
	h6_inject(h, h6_icmp(&h_our_mac, &h6_peer, &h6_our, 64, msg, 48));
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(h6_ctr(h, "icmp6_drop_unhandled"), 2);
	assert_int_equal(h6_ctr(h, "icmp6_rx_errors"), 1);
}

/* Errors out */

/* The packet an error is about: IPv6 header (m's data start) + payload. */
static struct rte_mbuf *offending(const struct us_in6 *src, const struct us_in6 *dst,
				  uint8_t proto, const void *payload, size_t len)
{
	struct rte_mbuf *m = h6_frame(&h_our_mac, src, dst, proto, 64, payload, len);

	rte_pktmbuf_adj(m, sizeof(struct rte_ether_hdr));
	return m;
}

/* us_icmp6_error about m, which is then freed: did an error go out? */
static bool error_sent(struct harness *h, uint8_t type, uint8_t code, uint32_t param,
		       struct rte_mbuf *m)
{
	unsigned before = h->port.ntx;

	us_icmp6_error(h6_net(h), type, code, param, rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *), m);
	us_engine_flush(h->e);
	rte_pktmbuf_free(m);
	return h->port.ntx > before;
}

static void test_error_fields_and_quote(void **state)
{
	struct harness *h = *state;
	uint8_t udp[100], quote[140];
	struct rte_mbuf *m, *e;
	struct us_in6 a;
	uint8_t *p;

	for (unsigned i = 0; i < sizeof(udp); i++)
		udp[i] = (uint8_t)i;
	m = offending(&h6_peer, &h6_our, IPPROTO_UDP, udp, sizeof(udp));
	memcpy(quote, rte_pktmbuf_mtod(m, void *), sizeof(quote));
	assert_true(error_sent(h, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, 0, m));
	e = h->port.tx[0];
	h6_assert_icmp(e, ICMP6_DST_UNREACH);
	assert_true(rte_is_same_ether_addr(&h_eth(e)->dst_addr, &h_peer_mac));
	a = h6_addr_at(h6_iph(e)->src_addr);
	assert_true(us_in6_eq(&a, &h6_our)); /* the address it was sent to */
	a = h6_addr_at(h6_iph(e)->dst_addr);
	assert_true(us_in6_eq(&a, &h6_peer));
	assert_int_equal(h6_iph(e)->hop_limits, 64);
	assert_int_equal(rte_be_to_cpu_16(h6_iph(e)->payload_len), 8 + sizeof(quote));
	p = h6_l4(e);
	assert_int_equal(p[1], ICMP6_DST_UNREACH_NOPORT);
	assert_memory_equal(p + 4, "\0\0\0\0", 4);
	assert_memory_equal(p + 8, quote, sizeof(quote));
	assert_int_equal(h6_ctr(h, "icmp6_unreach_out"), 1);
}

static void test_parameter_problem_pointer(void **state)
{
	struct harness *h = *state;
	uint8_t body[16] = { 0 };
	struct rte_mbuf *m = offending(&h6_peer, &h6_our, 253, body, sizeof(body));
	uint8_t *p;

	assert_true(error_sent(h, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_NEXTHEADER, 6, m));
	p = h6_l4(h->port.tx[0]);
	assert_int_equal(p[0], ICMP6_PARAM_PROB);
	assert_int_equal(p[1], ICMP6_PARAMPROB_NEXTHEADER);
	assert_memory_equal(p + 4, "\0\0\0\6", 4);
	assert_int_equal(h6_ctr(h, "icmp6_param_problem_out"), 1);
}

/* RFC 4443 2.4 (c): as much of the packet as fits in 1280 bytes. */
static void test_error_quote_fits_minimum_mtu(void **state)
{
	struct harness *h = *state;
	static uint8_t body[1400];
	uint8_t quote[1232];
	struct rte_mbuf *m;

	for (unsigned i = 0; i < sizeof(body); i++)
		body[i] = (uint8_t)(i * 3);
	m = offending(&h6_peer, &h6_our, IPPROTO_UDP, body, sizeof(body));
	memcpy(quote, rte_pktmbuf_mtod(m, void *), sizeof(quote));
	assert_true(error_sent(h, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, 0, m));
	assert_int_equal(rte_pktmbuf_pkt_len(h->port.tx[0]), 14 + 1280);
	assert_memory_equal(h6_l4(h->port.tx[0]) + 8, quote, sizeof(quote));
	h6_assert_icmp(h->port.tx[0], ICMP6_DST_UNREACH);
}

/* The quote starts at the IPv6 header even when m's data is at the L4
 * header, as a transport would hand it. */
static void test_error_quote_from_l4(void **state)
{
	struct harness *h = *state;
	uint8_t udp[20] = { 1, 2, 3 }, quote[60];
	struct rte_mbuf *m = offending(&h6_peer, &h6_our, IPPROTO_UDP, udp, sizeof(udp));
	const struct rte_ipv6_hdr *ip = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);

	memcpy(quote, ip, sizeof(quote));
	rte_pktmbuf_adj(m, sizeof(*ip));
	us_icmp6_error(h6_net(h), ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, 0, ip, m);
	us_engine_flush(h->e);
	rte_pktmbuf_free(m);
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_16(h6_iph(h->port.tx[0])->payload_len), 8 + sizeof(quote));
	assert_memory_equal(h6_l4(h->port.tx[0]) + 8, quote, sizeof(quote));
}

/* RFC 4443 2.4 (e.1, e.2): never about an ICMPv6 error or a redirect,
 * however deep in the chain; an informational message is fair game. */
static void test_no_error_about_an_error(void **state)
{
	struct harness *h = *state;
	uint8_t msg[64] = { 1 }, chain[72] = { IPPROTO_ICMPV6, 0, 1, 4 };

	assert_false(error_sent(h, ICMP6_PARAM_PROB, 0, 0,
				offending(&h6_peer, &h6_our, IPPROTO_ICMPV6, msg, 48)));
	msg[0] = 137;
	assert_false(error_sent(h, ICMP6_PARAM_PROB, 0, 0,
				offending(&h6_peer, &h6_our, IPPROTO_ICMPV6, msg, 48)));
	/* Behind a destination options header (8 bytes of PadN). */
	chain[8] = 3; /* time exceeded */
	assert_false(error_sent(h, ICMP6_PARAM_PROB, 0, 0,
				offending(&h6_peer, &h6_our, IPPROTO_DSTOPTS, chain, 56)));
	assert_int_equal(h6_ctr(h, "icmp6_error_suppressed"), 3);
	msg[0] = 128;
	assert_true(error_sent(h, ICMP6_PARAM_PROB, 0, 0,
			       offending(&h6_peer, &h6_our, IPPROTO_ICMPV6, msg, 48)));
}

/* RFC 4443 2.4 (e.3, e.6) and its exceptions. */
static void test_no_error_to_multicast_or_unspecified(void **state)
{
	struct harness *h = *state;
	struct us_in6 ff02_2 = { .b = { 0xff, 0x02, [15] = 2 } };
	uint8_t udp[16] = { 0 };

	assert_false(error_sent(h, ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, 0,
				offending(&h6_peer, &h6_all_nodes, IPPROTO_UDP, udp, 16)));
	assert_false(error_sent(h, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_NEXTHEADER, 6,
				offending(&h6_peer, &h6_all_nodes, 253, udp, 16)));
	assert_false(error_sent(h, ICMP6_DST_UNREACH, 0, 0,
				offending(&h6_unspec, &h6_our, IPPROTO_UDP, udp, 16)));
	assert_false(error_sent(h, ICMP6_DST_UNREACH, 0, 0,
				offending(&ff02_2, &h6_our, IPPROTO_UDP, udp, 16)));
	assert_int_equal(h6_ctr(h, "icmp6_error_suppressed"), 4);
	/* Packet Too Big and an unrecognized option that asks for it. */
	assert_true(error_sent(h, ICMP6_PACKET_TOO_BIG, 0, 1280,
			       offending(&h6_peer, &h6_all_nodes, IPPROTO_UDP, udp, 16)));
	assert_true(error_sent(h, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_OPTION, 42,
			       offending(&h6_peer, &h6_all_nodes, IPPROTO_UDP, udp, 16)));
	assert_int_equal(h6_ctr(h, "icmp6_ptb_out"), 1);
	assert_memory_equal(h6_l4(h->port.tx[0]) + 4, "\0\0\5\0", 4);
}

/* RFC 4443 2.4 (f): a token bucket, US_ICMP_BURST deep, refilled at
 * US_ICMP_RATE_PER_SEC. */
static void test_errors_rate_limited(void **state)
{
	struct harness *h = *state;
	uint8_t udp[8] = { 0 };

	for (unsigned i = 0; i < US_ICMP_BURST + 10; i++)
		(void)error_sent(h, ICMP6_DST_UNREACH, 0, 0,
				 offending(&h6_peer, &h6_our, IPPROTO_UDP, udp, 8));
	assert_int_equal(h6_ctr(h, "icmp6_unreach_out"), US_ICMP_BURST);
	assert_int_equal(h6_ctr(h, "icmp6_ratelimited"), 10);
	h_clear_tx(h);
	h_advance(h, US_SEC(1) / US_ICMP_RATE_PER_SEC);
	assert_true(error_sent(h, ICMP6_DST_UNREACH, 0, 0,
			       offending(&h6_peer, &h6_our, IPPROTO_UDP, udp, 8)));
	assert_false(error_sent(h, ICMP6_DST_UNREACH, 0, 0,
				offending(&h6_peer, &h6_our, IPPROTO_UDP, udp, 8)));
	/* IPv4's bucket is its own. */
	assert_int_equal(h6_ctr(h, "icmp_ratelimited"), 0);
}

/* Packet Too Big (RFC 4443 3.2, RFC 8201) */

/* A PTB from a router reporting mtu, quoting a packet from qsrc to qdst:
 * an IPv6 header naming UDP, then zeros.  Not TCP: a PTB quoting TCP goes
 * to tcp/ first (tests/unit/stack/test_tcp_net.c), these only to the path
 * MTU table. */
static struct rte_mbuf *ptb(uint32_t mtu, const struct us_in6 *qsrc, const struct us_in6 *qdst,
			    size_t qlen)
{
	uint8_t msg[8 + 200] = { ICMP6_PACKET_TOO_BIG };
	struct rte_ipv6_hdr *q = (struct rte_ipv6_hdr *)(msg + 8);

	msg[4] = (uint8_t)(mtu >> 24);
	msg[5] = (uint8_t)(mtu >> 16);
	msg[6] = (uint8_t)(mtu >> 8);
	msg[7] = (uint8_t)mtu;
	q->vtc_flow = rte_cpu_to_be_32(6u << 28);
	q->payload_len = rte_cpu_to_be_16(1452);
	q->proto = IPPROTO_UDP;
	q->hop_limits = 64;
	memcpy(q->src_addr, qsrc->b, 16);
	memcpy(q->dst_addr, qdst->b, 16);
	return h6_icmp(&h_our_mac, &router, &h6_our, 64, msg, 8 + qlen);
}

static void test_ptb_lowers_path_mtu(void **state)
{
	struct harness *h = *state;

	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1500);
	h6_inject(h, ptb(1400, &h6_our, &h6_peer2, 80));
	assert_int_equal(h6_ctr(h, "icmp6_ptb_lowered"), 1);
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1400);
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer), 1500); /* per destination */
	/* Never raised by a PTB (RFC 8201 4); lowered further. */
	h6_inject(h, ptb(1450, &h6_our, &h6_peer2, 80));
	assert_int_equal(h6_ctr(h, "icmp6_ptb_not_lower"), 1);
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1400);
	h6_inject(h, ptb(1280, &h6_our, &h6_peer2, 40));
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1280);
	assert_int_equal(h->port.ntx, 0);
}

/* The path MTU is what output uses: a ping that fits the port is answered
 * in fragments once the path is narrower. */
static void test_ptb_fragments_the_next_reply(void **state)
{
	struct harness *h = *state;

	h6_inject(h, ptb(1280, &h6_our, &h6_peer, 80));
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer), 1280);
	h6_inject(h, ping(&h_our_mac, &h6_peer, &h6_our, 1400));
	assert_int_equal(h->port.ntx, 2);
	for (unsigned i = 0; i < 2; i++) {
		assert_true(rte_pktmbuf_pkt_len(h->port.tx[i]) <= 14 + 1280);
		assert_int_equal(h6_iph(h->port.tx[i])->proto, IPPROTO_FRAGMENT);
	}
	assert_int_equal(h6_ctr(h, "ip6_frag_out"), 2);
}

static void test_ptb_below_1280_refused(void **state)
{
	struct harness *h = *state;

	h6_inject(h, ptb(1279, &h6_our, &h6_peer2, 80));
	h6_inject(h, ptb(68, &h6_our, &h6_peer2, 80));
	assert_int_equal(h6_ctr(h, "icmp6_ptb_drop_small"), 2);
	assert_int_equal(h6_ctr(h, "icmp6_ptb_lowered"), 0);
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1500);
}

static void test_ptb_checked(void **state)
{
	struct harness *h = *state;

	/* Not about a packet of ours. */
	h6_inject(h, ptb(1300, &h6_peer, &h6_peer2, 80));
	assert_int_equal(h6_ctr(h, "icmp6_ptb_drop_not_ours"), 1);
	/* Too short to quote an IPv6 header. */
	h6_inject(h, ptb(1300, &h6_our, &h6_peer2, 20));
	assert_int_equal(h6_ctr(h, "icmp6_drop_bad"), 1);
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1500);
	assert_int_equal(h6_ctr(h, "icmp6_ptb_in"), 2);
}

/* RFC 8201 4: an estimate ages out, so a path that grew is used again. */
static void test_path_mtu_ages_out(void **state)
{
	struct harness *h = *state;

	h6_inject(h, ptb(1300, &h6_our, &h6_peer2, 80));
	h_advance(h, US_IP6_PMTU_AGE_NS - US_SEC(1));
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1300);
	h_clear_tx(h);
	h_advance(h, US_SEC(2));
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &h6_peer2), 1500);
}

/* A bounded table: the oldest destination makes room. */
static void test_path_mtu_table_bounded(void **state)
{
	struct harness *h = *state;
	struct us_in6 d = h6_peer2;

	for (unsigned i = 0; i <= US_IP6_PMTU_MAX; i++) {
		d.b[14] = (uint8_t)i;
		h6_inject(h, ptb(1300 + i, &h6_our, &d, 80));
		h_advance(h, US_MS(10));
	}
	assert_int_equal(h6_ctr(h, "icmp6_ptb_lowered"), US_IP6_PMTU_MAX + 1);
	d.b[14] = 0;
	assert_int_equal(us_ip6_path_mtu(h6_net(h), &d), 1500);
	for (unsigned i = 1; i <= US_IP6_PMTU_MAX; i++) {
		d.b[14] = (uint8_t)i;
		assert_int_equal(us_ip6_path_mtu(h6_net(h), &d), 1300 + i);
	}
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, h6_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_echo_reply_byte_exact),
		T(test_echo_to_all_nodes),
		T(test_echo_to_our_group),
		T(test_echo_bad_checksum),
		T(test_short_message),
		T(test_echo_from_unspecified),
		T(test_other_types_dropped),
		T(test_error_fields_and_quote),
		T(test_parameter_problem_pointer),
		T(test_error_quote_fits_minimum_mtu),
		T(test_error_quote_from_l4),
		T(test_no_error_about_an_error),
		T(test_no_error_to_multicast_or_unspecified),
		T(test_errors_rate_limited),
		T(test_ptb_lowers_path_mtu),
		T(test_ptb_fragments_the_next_reply),
		T(test_ptb_below_1280_refused),
		T(test_ptb_checked),
		T(test_path_mtu_ages_out),
		T(test_path_mtu_table_bounded),
	};

	h_eal_init("us_test_icmp6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
