/* The IPv6 extension-header walk (stack/net/ip6_ext.c): good chains, the
 * bounds, unrecognised options by their action bits, routing headers, a
 * misplaced hop-by-hop header and headers running past the payload.  Each
 * refusal checks its counter and the error the walk asks for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <string.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness.h"

static const struct us_in6 peer6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 1 } };
static const struct us_in6 our6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 } };
static const struct us_in6 all_nodes = { .b = { 0xff, 0x02, [15] = 1 } };

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

/* A chain under construction: headers appended one after the other. */
struct chain {
	uint8_t b[1600];
	size_t len;
	size_t last_nh; /* offset of the Next Header byte to fill next (in b) */
	uint8_t first_nh;
	bool any;
};

/* Appends a header of type nh and hlen bytes (a multiple of 8): its Next
 * Header is left for the next one; returns it for the caller to fill. */
static uint8_t *add(struct chain *c, uint8_t nh, size_t hlen)
{
	uint8_t *h = c->b + c->len;

	assert_true(c->len + hlen <= sizeof(c->b));
	if (c->any)
		c->b[c->last_nh] = nh;
	else
		c->first_nh = nh;
	c->any = true;
	memset(h, 0, hlen);
	if (nh != IPPROTO_FRAGMENT)
		h[1] = (uint8_t)(hlen / 8 - 1);
	c->last_nh = c->len;
	c->len += hlen;
	return h;
}

/* Fills an options header's body (after its two bytes) with PadN options. */
static void pad(uint8_t *h, size_t hlen)
{
	size_t i = 2;

	while (i < hlen) {
		size_t n;

		if (hlen - i == 1) {
			h[i++] = 0; /* Pad1 */
			continue;
		}
		n = hlen - i - 2 > 255 ? 255 : hlen - i - 2;
		h[i] = 1;
		h[i + 1] = (uint8_t)n;
		i += 2 + n;
	}
}

/* An options header of hlen bytes holding one option of type t (4 bytes
 * of data) at offset 2, padded. */
static void opts_with(struct chain *c, uint8_t nh, size_t hlen, uint8_t t)
{
	uint8_t *h = add(c, nh, hlen);

	pad(h, hlen);
	h[2] = t;
	h[3] = 4;
	pad(h + 6, hlen - 6); /* from h[8] on */
}

static void routing(struct chain *c, uint8_t type, uint8_t segments_left)
{
	uint8_t *h = add(c, IPPROTO_ROUTING, 24);

	h[2] = type;
	h[3] = segments_left;
}

/* The IPv6 packet (no Ethernet): fixed header to dst, the chain, the upper
 * layer proto with len bytes. */
static struct rte_mbuf *packet(const struct us_in6 *dst, struct chain *c, uint8_t proto,
			       size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	struct rte_ipv6_hdr *ip6;
	uint8_t *p;

	assert_non_null(m);
	if (c->any)
		c->b[c->last_nh] = proto;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*ip6) + c->len + len));
	assert_non_null(p);
	ip6 = (struct rte_ipv6_hdr *)p;
	*ip6 = (struct rte_ipv6_hdr){
		.vtc_flow = rte_cpu_to_be_32(6u << 28),
		.payload_len = rte_cpu_to_be_16((uint16_t)(c->len + len)),
		.proto = c->any ? c->first_nh : proto,
		.hop_limits = 64,
	};
	memcpy(ip6->src_addr, peer6.b, 16);
	memcpy(ip6->dst_addr, dst->b, 16);
	memcpy(p + sizeof(*ip6), c->b, c->len);
	memset(p + sizeof(*ip6) + c->len, 0xab, len);
	return m;
}

static struct us_net *net_of(void **state)
{
	return &((struct harness *)*state)->e->net;
}

/* Walks m and frees it. */
static int walk(void **state, struct rte_mbuf *m, struct us_ip6_chain *c, struct us_ip6_refusal *r)
{
	int rc = us_ip6_walk(net_of(state), m, c, r);

	rte_pktmbuf_free(m);
	return rc;
}

static void assert_param_problem(const struct us_ip6_refusal *r, uint8_t code, uint32_t pointer)
{
	assert_true(r->icmp);
	assert_int_equal(r->type, ICMP6_PARAM_PROB);
	assert_int_equal(r->code, code);
	assert_int_equal(r->pointer, pointer);
}

static void test_no_extension_headers(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 16), &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_UDP);
	assert_int_equal(c.l4_off, 40);
	assert_int_equal(c.nhdrs, 0);
	assert_int_equal(c.frag_off, 0);
	assert_false(r.icmp);
}

/* Hop-by-hop, destination options, a routing header with nothing left to
 * do, destination options again: all walked, TCP found behind them. */
static void test_good_chain(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;
	uint8_t *h;

	h = add(&ch, IPPROTO_HOPOPTS, 8);
	h[2] = 0; /* Pad1 */
	h[3] = 1; /* PadN of 2 */
	h[4] = 2;
	opts_with(&ch, IPPROTO_DSTOPTS, 16, 0x05); /* router alert: bits 00, skipped */
	routing(&ch, 2, 0);
	add(&ch, IPPROTO_DSTOPTS, 8)[2] = 1;
	ch.b[ch.len - 5] = 4; /* PadN of 6 */
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_TCP, 20), &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_TCP);
	assert_int_equal(c.l4_off, 40 + 8 + 16 + 24 + 8);
	assert_int_equal(c.nhdrs, 4);
	assert_int_equal(c.frag_off, 0);
	assert_false(r.icmp);
	assert_int_equal(net_of(state)->stats.ip6_ext_opt_skipped, 1);
	assert_int_equal(net_of(state)->stats.ip6_ext_rh_ignored, 1);
}

/* No Next Header (59) ends the chain: nothing follows. */
static void test_no_next_header(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_NONE, 0), &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_NONE);
	assert_int_equal(c.l4_off, 48);
}

/* A fragment header stops the walk: its offset and the byte naming it. */
static void test_fragment_header_stops(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	pad(add(&ch, IPPROTO_HOPOPTS, 8), 8);
	add(&ch, IPPROTO_FRAGMENT, 8)[3] = 1; /* offset 0, M */
	/* Not walked beyond: the fragment payload as hop-by-hop options
	 * (0xab...) would be refused if it were. */
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_HOPOPTS, 16), &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_FRAGMENT);
	assert_int_equal(c.frag_off, 48);
	assert_int_equal(c.frag_nh_off, 40);
	assert_int_equal(c.l4_off, 56);
	assert_int_equal(c.nhdrs, 2);
	/* Right after the fixed header: named by the IPv6 header's Next Header. */
	ch = (struct chain){ 0 };
	add(&ch, IPPROTO_FRAGMENT, 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 16), &c, &r), 0);
	assert_int_equal(c.frag_off, 40);
	assert_int_equal(c.frag_nh_off, offsetof(struct rte_ipv6_hdr, proto));
}

static void test_too_many_headers(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	for (unsigned i = 0; i < US_IP6_EXT_MAX; i++)
		pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), 0);
	assert_int_equal(c.nhdrs, US_IP6_EXT_MAX);
	pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_false(r.icmp);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_too_many, 1);
}

static void test_too_many_bytes(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	pad(add(&ch, IPPROTO_DSTOPTS, US_IP6_EXT_BYTES / 2), US_IP6_EXT_BYTES / 2);
	pad(add(&ch, IPPROTO_DSTOPTS, US_IP6_EXT_BYTES / 2), US_IP6_EXT_BYTES / 2);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), 0);
	assert_int_equal(c.l4_off, 40 + US_IP6_EXT_BYTES);
	pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_false(r.icmp);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_too_long, 1);
	/* One header claiming more than the bound (255 units: 2 KiB). */
	ch = (struct chain){ 0 };
	pad(add(&ch, IPPROTO_HOPOPTS, 8), 8);
	ch.b[1] = 255;
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_too_long, 2);
}

/* RFC 8200 4.2: an unrecognised option in hop-by-hop (nh) or destination
 * options, type t, to dst: the walk's answer. */
static int unknown_option(void **state, uint8_t nh, uint8_t t, const struct us_in6 *dst,
			  struct us_ip6_refusal *r)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;

	opts_with(&ch, nh, 16, t);
	return walk(state, packet(dst, &ch, IPPROTO_UDP, 8), &c, r);
}

static void test_unknown_option_00_skipped(void **state)
{
	struct us_ip6_refusal r;

	assert_int_equal(unknown_option(state, IPPROTO_DSTOPTS, 0x1e, &our6, &r), 0);
	assert_int_equal(unknown_option(state, IPPROTO_HOPOPTS, 0x3f, &all_nodes, &r), 0);
	assert_int_equal(net_of(state)->stats.ip6_ext_opt_skipped, 2);
}

static void test_unknown_option_01_silent(void **state)
{
	struct us_ip6_refusal r;

	assert_int_equal(unknown_option(state, IPPROTO_DSTOPTS, 0x5e, &our6, &r), -EINVAL);
	assert_false(r.icmp);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_opt_discard, 1);
}

static void test_unknown_option_10_even_multicast(void **state)
{
	struct us_ip6_refusal r;

	assert_int_equal(unknown_option(state, IPPROTO_DSTOPTS, 0x9e, &our6, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_OPTION, 40 + 2);
	assert_true(r.even_mcast);
	assert_int_equal(unknown_option(state, IPPROTO_HOPOPTS, 0x9e, &all_nodes, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_OPTION, 40 + 2);
	assert_true(r.even_mcast);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_opt_icmp, 2);
}

static void test_unknown_option_11_unicast_only(void **state)
{
	struct us_ip6_refusal r;

	assert_int_equal(unknown_option(state, IPPROTO_DSTOPTS, 0xde, &our6, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_OPTION, 40 + 2);
	assert_false(r.even_mcast);
	assert_int_equal(unknown_option(state, IPPROTO_DSTOPTS, 0xde, &all_nodes, &r), -EINVAL);
	assert_false(r.icmp);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_opt_icmp_unicast, 2);
}

/* The pointer names the option's type byte, wherever it sits. */
static void test_unknown_option_pointer_in_second_header(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;
	uint8_t *h;

	pad(add(&ch, IPPROTO_HOPOPTS, 8), 8);
	h = add(&ch, IPPROTO_DSTOPTS, 16);
	h[2] = 1; /* PadN of 6 */
	h[3] = 4;
	h[8] = 0xc2; /* Jumbo Payload: not supported, bits 11 */
	h[9] = 4;
	/* h[14], h[15]: Pad1 */
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_OPTION, 40 + 8 + 8);
}

/* An option longer than what is left of its header. */
static void test_option_overruns_header(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;
	uint8_t *h = add(&ch, IPPROTO_DSTOPTS, 8);

	h[2] = 1; /* PadN of 5: one byte too many */
	h[3] = 5;
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_false(r.icmp);
	/* An option type in the last byte: no room for its length. */
	ch = (struct chain){ 0 };
	h = add(&ch, IPPROTO_DSTOPTS, 8);
	h[2] = 1;
	h[3] = 3;
	h[7] = 0x1e;
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_opt_overrun, 2);
}

/* RFC 5095 3: type 0 is processed as an unrecognised type. */
static void test_rh0(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	routing(&ch, 0, 0);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_TCP, 20), &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_TCP);
	assert_int_equal(c.l4_off, 64);
	assert_int_equal(net_of(state)->stats.ip6_ext_rh_ignored, 1);
	ch = (struct chain){ 0 };
	pad(add(&ch, IPPROTO_HOPOPTS, 8), 8);
	routing(&ch, 0, 2);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_TCP, 20), &c, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_HEADER, 40 + 8 + 2);
	assert_false(r.even_mcast);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_rh0, 1);
}

/* RFC 8200 4.4: a host routes nothing: any type with segments left. */
static void test_other_routing_type(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	routing(&ch, 4, 0);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_UDP);
	ch = (struct chain){ 0 };
	routing(&ch, 4, 1);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_HEADER, 40 + 2);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_rh_segleft, 1);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_rh0, 0);
}

/* RFC 8200 4.1: hop-by-hop anywhere but first: unrecognised Next Header,
 * pointing at the byte that names it. */
static void test_hop_by_hop_not_first(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	pad(add(&ch, IPPROTO_DSTOPTS, 16), 16);
	pad(add(&ch, IPPROTO_HOPOPTS, 8), 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 8), &c, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_NEXTHEADER, 40 + 8);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_hbh_not_first, 1);
}

static void test_header_overruns_payload(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;
	struct rte_mbuf *m;

	/* Claims 16 bytes, the packet ends after 8. */
	pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	ch.b[1] = 1;
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_UDP, 0), &c, &r), -EINVAL);
	assert_false(r.icmp);
	/* Inside the frame but past the Payload Length. */
	ch = (struct chain){ 0 };
	pad(add(&ch, IPPROTO_DSTOPTS, 16), 16);
	m = packet(&our6, &ch, IPPROTO_UDP, 8);
	rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *)->payload_len = rte_cpu_to_be_16(12);
	assert_int_equal(walk(state, m, &c, &r), -EINVAL);
	/* Not even the first two bytes of the next header. */
	ch = (struct chain){ 0 };
	pad(add(&ch, IPPROTO_DSTOPTS, 8), 8);
	assert_int_equal(walk(state, packet(&our6, &ch, IPPROTO_ROUTING, 1), &c, &r), -EINVAL);
	/* A fragment header cut short. */
	ch = (struct chain){ 0 };
	add(&ch, IPPROTO_FRAGMENT, 8);
	m = packet(&our6, &ch, IPPROTO_UDP, 0);
	rte_pktmbuf_trim(m, 2);
	assert_int_equal(walk(state, m, &c, &r), -EINVAL);
	assert_int_equal(net_of(state)->stats.ip6_ext_drop_truncated, 4);
}

/* A chain split across two segments is walked as if it were whole. */
static void test_chain_across_segments(void **state)
{
	struct chain ch = { 0 };
	struct us_ip6_chain c;
	struct us_ip6_refusal r;
	struct rte_mbuf *m, *tail;
	uint16_t cut = 40 + 8 + 5; /* inside the second header */

	pad(add(&ch, IPPROTO_HOPOPTS, 8), 8);
	opts_with(&ch, IPPROTO_DSTOPTS, 16, 0x9e);
	m = packet(&our6, &ch, IPPROTO_UDP, 8);
	tail = rte_pktmbuf_alloc(h_pool);
	assert_non_null(tail);
	memcpy(rte_pktmbuf_append(tail, rte_pktmbuf_pkt_len(m) - cut),
	       rte_pktmbuf_mtod_offset(m, uint8_t *, cut), rte_pktmbuf_pkt_len(m) - cut);
	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - cut);
	assert_int_equal(rte_pktmbuf_chain(m, tail), 0);
	assert_int_equal(walk(state, m, &c, &r), -EINVAL);
	assert_param_problem(&r, ICMP6_PARAMPROB_OPTION, 40 + 8 + 2);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_no_extension_headers),
		T(test_good_chain),
		T(test_no_next_header),
		T(test_fragment_header_stops),
		T(test_too_many_headers),
		T(test_too_many_bytes),
		T(test_unknown_option_00_skipped),
		T(test_unknown_option_01_silent),
		T(test_unknown_option_10_even_multicast),
		T(test_unknown_option_11_unicast_only),
		T(test_unknown_option_pointer_in_second_header),
		T(test_option_overruns_header),
		T(test_rh0),
		T(test_other_routing_type),
		T(test_hop_by_hop_not_first),
		T(test_header_overruns_payload),
		T(test_chain_across_segments),
	};

	h_eal_init("us_test_ip6_ext");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
