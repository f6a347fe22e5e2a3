/* UDP input over IPv6 (stack/net/udp.c, from ip6.c): what the deliver
 * hook is given for each family, the mandatory checksum (RFC 8200 8.1:
 * zero refused, a wrong one dropped), the lengths, a datagram behind an
 * extension header, and the ICMPv6 port unreachable for a closed port
 * (RFC 4443 3.1) with the rules of 2.4 (e). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <string.h>

#include <rte_udp.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness6.h"

/* What the hook saw. */
static struct {
	unsigned calls;
	struct us_in6 src, dst;
	uint16_t dport;
	uint32_t len;  /* m's length at the hook: UDP header and data */
	uint8_t data[64];
	int answer;    /* 0: take m; -ENOENT: no socket */
} seen;

static int hook(void *ctx, struct rte_mbuf *m, const struct us_in6 *src,
		const struct us_in6 *dst)
{
	const struct rte_udp_hdr *uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);

	assert_ptr_equal(ctx, &seen);
	seen.calls++;
	seen.src = *src;
	seen.dst = *dst;
	seen.dport = rte_be_to_cpu_16(uh->dst_port);
	seen.len = rte_pktmbuf_pkt_len(m);
	h_bytes(m, seen.data, sizeof(seen.data));
	if (seen.answer == 0)
		rte_pktmbuf_free(m);
	return seen.answer;
}

static int setup(void **state)
{
	static struct harness h;

	memset(&seen, 0, sizeof(seen));
	h_prepare(&h);
	h6_start(&h, false);
	h6_learn_peer(&h);
	us_udp_set_deliver(h6_net(&h), hook, &seen);
	*state = &h;
	return 0;
}

/* Both families reach the hook, IPv4 v4-mapped, m at the UDP header. */
static void test_deliver_addresses(void **state)
{
	struct harness *h = *state;
	uint8_t msg[64];
	size_t n = h_udp(msg, H_PEER_IP, H_OUR_IP, 4000, 53, "v4", 2);
	struct us_in6 v4src = us_in6_of_v4(H_PEER_IP), v4dst = us_in6_of_v4(H_OUR_IP);

	h6_inject(h, h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 53, "hello", 5));
	assert_int_equal(seen.calls, 1);
	assert_true(us_in6_eq(&seen.src, &h6_peer));
	assert_true(us_in6_eq(&seen.dst, &h6_our));
	assert_int_equal(seen.dport, 53);
	assert_int_equal(seen.len, 8 + 5);
	assert_memory_equal(seen.data + 8, "hello", 5);
	h6_inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_UDP, 1, 0, msg, n));
	assert_int_equal(seen.calls, 2);
	assert_true(us_in6_eq(&seen.src, &v4src));
	assert_true(us_in6_eq(&seen.dst, &v4dst));
	assert_memory_equal(seen.data + 8, "v4", 2);
	assert_int_equal(h6_ctr(h, "udp_rx"), 2);
	assert_int_equal(h6_ctr(h, "udp6_rx"), 1);
	assert_int_equal(h->port.ntx, 0);
}

/* RFC 8200 8.1: no checksum is no datagram over IPv6, while IPv4 keeps
 * RFC 768's "not computed". */
static void test_zero_checksum(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 53, "abc", 3);
	uint8_t msg[64];
	size_t n = h_udp(msg, H_PEER_IP, H_OUR_IP, 4000, 53, "abc", 3);

	h6_l4(m)[6] = h6_l4(m)[7] = 0;
	h6_inject(h, m);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(h6_ctr(h, "udp6_drop_zero_csum"), 1);
	assert_int_equal(h6_ctr(h, "udp_drop_bad_csum"), 0);
	assert_int_equal(h->port.ntx, 0); /* no port unreachable either */
	msg[6] = msg[7] = 0;
	h6_inject(h, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_UDP, 1, 0, msg, n));
	assert_int_equal(seen.calls, 1);
	assert_int_equal(h6_ctr(h, "udp6_drop_zero_csum"), 1);
}

static void test_bad_checksum(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 53, "abcd", 4);

	h6_l4(m)[9] ^= 0x40; /* a data bit */
	h6_inject(h, m);
	/* A wrong pseudo-header too: the same datagram said to come from
	 * another source. */
	m = h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 53, "abcd", 4);
	h6_iph(m)->src_addr[15] ^= 1;
	h6_inject(h, m);
	assert_int_equal(seen.calls, 0);
	assert_int_equal(h6_ctr(h, "udp_drop_bad_csum"), 2);
	assert_int_equal(h->port.ntx, 0);
}

static void test_lengths(void **state)
{
	struct harness *h = *state;
	uint8_t hdr[8] = { 0x0f, 0xa0, 0, 53, 0, 4, 0, 0 }, buf[32];
	struct rte_mbuf *m;
	size_t n;

	/* Shorter than a header. */
	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_UDP, 64, hdr, 6));
	assert_int_equal(h6_ctr(h, "udp_drop_short"), 1);
	/* A UDP length under 8, then one past the payload. */
	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_UDP, 64, hdr, 8));
	m = h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 53, "abcd", 4);
	h6_l4(m)[5] = 13;
	h6_inject(h, m);
	assert_int_equal(h6_ctr(h, "udp_drop_bad_len"), 2);
	/* Shorter than the payload: the checksum covers the UDP length only
	 * (the socket layer trims the rest). */
	n = h6_udp_msg(buf, &h6_peer, &h6_our, 4000, 53, "abcd", 4);
	memcpy(buf + n, "tail", 4);
	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_UDP, 64, buf, n + 4));
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.len, 16);
	assert_int_equal(h6_ctr(h, "udp_drop_bad_csum"), 0);
	assert_int_equal(h->port.ntx, 0);
}

/* Behind a destination options header: the hook sees the UDP header,
 * the checksum's length is the UDP length, not the payload length. */
static void test_behind_extension_header(void **state)
{
	struct harness *h = *state;
	uint8_t pkt[64] = { IPPROTO_UDP, 0, 1, 4 }; /* Next Header, Hdr Ext Len 0, PadN 4 */
	size_t n = h6_udp_msg(pkt + 8, &h6_peer, &h6_our, 4000, 53, "ext", 3);

	h6_inject(h, h6_frame(&h_our_mac, &h6_peer, &h6_our, IPPROTO_DSTOPTS, 64, pkt, 8 + n));
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.len, 11);
	assert_memory_equal(seen.data + 8, "ext", 3);
}

/* RFC 4443 3.1: code 4, from the address the datagram went to, quoting
 * it from its IPv6 header. */
static void test_port_unreachable(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *e;
	struct us_in6 a;
	uint8_t *p;

	seen.answer = -ENOENT;
	h6_inject(h, h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 9, "closed", 6));
	assert_int_equal(seen.calls, 1);
	assert_int_equal(h6_ctr(h, "udp_drop_no_port"), 1);
	assert_int_equal(h6_ctr(h, "icmp6_unreach_out"), 1);
	assert_int_equal(h->port.ntx, 1);
	e = h->port.tx[0];
	h6_assert_icmp(e, ICMP6_DST_UNREACH);
	p = h6_l4(e);
	assert_int_equal(p[1], ICMP6_DST_UNREACH_NOPORT);
	a = h6_addr_at(h6_iph(e)->src_addr);
	assert_true(us_in6_eq(&a, &h6_our));
	a = h6_addr_at(h6_iph(e)->dst_addr);
	assert_true(us_in6_eq(&a, &h6_peer));
	/* The quote: our IPv6 header's next header, the UDP ports, data. */
	assert_int_equal(rte_be_to_cpu_16(h6_iph(e)->payload_len), 8 + 40 + 8 + 6);
	assert_int_equal(p[8 + 6], IPPROTO_UDP);
	assert_int_equal(p[8 + 40 + 3], 9);
	assert_memory_equal(p + 8 + 48, "closed", 6);
	/* No socket layer at all: the same. */
	h_clear_tx(h);
	us_udp_set_deliver(h6_net(h), NULL, NULL);
	h6_inject(h, h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 9, "x", 1));
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(h6_ctr(h, "udp_drop_no_port"), 2);
}

/* RFC 4443 2.4 (e.3): nothing about a datagram sent to a group; the rate
 * limit is the one ICMPv6 bucket. */
static void test_no_unreachable_to_group_and_limited(void **state)
{
	struct harness *h = *state;
	struct rte_ether_addr all = h6_mcast_mac(&h6_all_nodes);

	seen.answer = -ENOENT;
	h6_inject(h, h6_udp(&all, &h6_peer, &h6_all_nodes, 4000, 9, "g", 1));
	assert_int_equal(seen.calls, 1);
	assert_true(us_in6_eq(&seen.dst, &h6_all_nodes));
	assert_int_equal(h6_ctr(h, "icmp6_error_suppressed"), 1);
	assert_int_equal(h->port.ntx, 0);
	for (unsigned i = 0; i < US_ICMP_BURST + 5; i++)
		h6_inject(h, h6_udp(&h_our_mac, &h6_peer, &h6_our, 4000, 9, "r", 1));
	assert_int_equal(h6_ctr(h, "icmp6_unreach_out"), US_ICMP_BURST);
	assert_int_equal(h6_ctr(h, "icmp6_ratelimited"), 5);
	h_clear_tx(h);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, h6_teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_deliver_addresses),
		T(test_zero_checksum),
		T(test_bad_checksum),
		T(test_lengths),
		T(test_behind_extension_header),
		T(test_port_unreachable),
		T(test_no_unreachable_to_group_and_limited),
	};

	h_eal_init("unit_udp6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
