/* IPv6 fragments (stack/net/frag6.c) on one engine's network state, in
 * virtual time: reassembly in and out of order, overlaps (RFC 5722),
 * duplicates, atomic fragments (RFC 6946), the timeout and its Time
 * Exceeded, the bounds, the per-fragment errors of RFC 8200 4.5 and RFC
 * 7112, and our own output reassembled back byte for byte. */
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
#include "tests/unit/stack/harness6.h"

/* h6_peer and h6_our (harness6.c). */
static const struct us_in6 peer6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 7 } };
static const struct us_in6 our6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 } };


/* The ICMPv6 errors frag6.c has had sent (by the real icmp6.c, to the
 * peer the set-up made known): calls in all, the last one on the wire of
 * this type, code and pointer.  The TX capture is cleared. */
static void assert_icmp(struct harness *h, unsigned calls, uint8_t type, uint8_t code, uint32_t param)
{
	const struct us_stack_stats *st = &h->e->net.stats;
	const uint8_t *l4;
	uint32_t ptr;

	us_engine_flush(h->e);
	assert_int_equal(st->icmp6_time_exceeded_out + st->icmp6_param_problem_out, calls);
	if (calls > 0) {
		assert_true(h->port.ntx > 0);
		h6_assert_icmp(h->port.tx[h->port.ntx - 1], type);
		l4 = h6_l4(h->port.tx[h->port.ntx - 1]);
		memcpy(&ptr, l4 + 4, sizeof(ptr));
		assert_int_equal(l4[1], code);
		assert_int_equal(rte_be_to_cpu_32(ptr), param);
	}
	h_clear_tx(h);
}

struct fx {
	struct harness h;
	struct us_net *n;
};

static int setup(void **state)
{
	static struct fx fx;

	/* A real IPv6 engine with the peer known: errors reach the wire. */
	h_prepare(&fx.h);
	h6_start(&fx.h, false);
	h6_learn_peer(&fx.h);
	fx.n = &fx.h.e->net;
	assert_non_null(fx.n->ip6.frag.d);
	*state = &fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	unsigned armed = fx->h.e->wheel.armed, dgrams = fx->n->ip6.frag.n;

	/* Whatever a test left in progress goes with its timer (one each). */
	us_frag6_fini(fx->n);
	assert_int_equal(fx->n->ip6.frag.n, 0);
	assert_int_equal(fx->n->ip6.frag.held, 0);
	assert_int_equal(armed - fx->h.e->wheel.armed, dgrams);
	h_teardown(&fx->h);
	return 0;
}

/* The datagram the tests cut: its fragmentable part (a UDP header and
 * data, unless a test writes other headers at its start). */
static uint8_t dgram[UINT16_MAX + 64];
static uint8_t seen[UINT16_MAX + 256];

static void fill_dgram(void)
{
	for (size_t i = 0; i < sizeof(dgram); i++)
		dgram[i] = (uint8_t)(i * 13 + (i >> 8));
}

/* One fragment, data at its IPv6 header (no Ethernet): peer6 to our6,
 * hbh bytes of hop-by-hop options (0 or a multiple of 8) in front of the
 * fragment header (id, nh), then bytes [off, off + len) of dgram. */
static struct rte_mbuf *frag_nh(uint32_t id, uint8_t nh, uint32_t off, uint32_t len, bool more,
				size_t hbh)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	size_t total = sizeof(struct rte_ipv6_hdr) + hbh + RTE_IPV6_FRAG_HDR_SIZE + len;
	struct rte_ipv6_fragment_ext *fh;
	struct rte_ipv6_hdr *ip6;
	uint8_t *p;

	assert_non_null(m);
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)total);
	assert_non_null(p);
	ip6 = (struct rte_ipv6_hdr *)p;
	*ip6 = (struct rte_ipv6_hdr){
		.vtc_flow = rte_cpu_to_be_32(6u << 28),
		.payload_len = rte_cpu_to_be_16((uint16_t)(total - sizeof(*ip6))),
		.proto = hbh ? IPPROTO_HOPOPTS : IPPROTO_FRAGMENT,
		.hop_limits = 64,
	};
	memcpy(ip6->src_addr, peer6.b, 16);
	memcpy(ip6->dst_addr, our6.b, 16);
	p += sizeof(*ip6);
	if (hbh) {
		memset(p, 0, hbh);
		p[0] = IPPROTO_FRAGMENT;
		p[1] = (uint8_t)(hbh / 8 - 1);
		p[2] = 1; /* PadN over the rest */
		p[3] = (uint8_t)(hbh - 4);
		p += hbh;
	}
	fh = (struct rte_ipv6_fragment_ext *)p;
	*fh = (struct rte_ipv6_fragment_ext){
		.next_header = nh,
		.frag_data = rte_cpu_to_be_16((uint16_t)(off | (more ? 1 : 0))),
		.id = rte_cpu_to_be_32(id),
	};
	memcpy(fh + 1, dgram + off, len);
	return m;
}

static struct rte_mbuf *frag(uint32_t id, uint32_t off, uint32_t len, bool more)
{
	return frag_nh(id, IPPROTO_UDP, off, len, more, 0);
}

/* Fragment m through the walk into us_frag6_input. */
static struct rte_mbuf *feed(struct fx *fx, struct rte_mbuf *m)
{
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	assert_int_equal(us_ip6_walk(fx->n, m, &c, &r), 0);
	assert_int_not_equal(c.frag_off, 0);
	return us_frag6_input(fx->n, m, &c);
}

static void feed_held(struct fx *fx, struct rte_mbuf *m)
{
	assert_null(feed(fx, m));
}

/* m is the first len bytes of dgram behind an IPv6 header (and hbh bytes
 * of hop-by-hop options), the fragment header gone, every header through
 * UDP's in the first segment; freed. */
static void assert_whole(struct fx *fx, struct rte_mbuf *m, size_t len, size_t hbh)
{
	const struct rte_ipv6_hdr *ip6;
	struct us_ip6_chain c;
	struct us_ip6_refusal r;

	assert_non_null(m);
	assert_int_equal(rte_pktmbuf_pkt_len(m), 40 + hbh + len);
	assert_true(rte_pktmbuf_data_len(m) >= 40 + hbh + 8);
	assert_int_equal(h_bytes(m, seen, sizeof(seen)), 40 + hbh + len);
	ip6 = (const struct rte_ipv6_hdr *)seen;
	assert_int_equal(rte_be_to_cpu_16(ip6->payload_len), hbh + len);
	assert_int_equal(ip6->proto, hbh ? IPPROTO_HOPOPTS : IPPROTO_UDP);
	assert_memory_equal(ip6->src_addr, peer6.b, 16);
	if (hbh)
		assert_int_equal(seen[40], IPPROTO_UDP);
	assert_memory_equal(seen + 40 + hbh, dgram, len);
	assert_int_equal(us_ip6_walk(fx->n, m, &c, &r), 0);
	assert_int_equal(c.proto, IPPROTO_UDP);
	assert_int_equal(c.frag_off, 0);
	assert_int_equal(c.l4_off, 40 + hbh);
	rte_pktmbuf_free(m);
}

static void assert_table(struct fx *fx, unsigned dgrams, unsigned held)
{
	assert_int_equal(fx->n->ip6.frag.n, dgrams);
	assert_int_equal(fx->n->ip6.frag.held, held);
}

static void test_in_order(void **state)
{
	struct fx *fx = *state;
	unsigned armed0 = fx->h.e->wheel.armed;

	feed_held(fx, frag(1, 0, 24, true));
	assert_table(fx, 1, 1);
	feed_held(fx, frag(1, 24, 24, true));
	assert_table(fx, 1, 2);
	assert_whole(fx, feed(fx, frag(1, 48, 24, false)), 72, 0);
	assert_table(fx, 0, 0);
	assert_int_equal(fx->n->stats.ip6_frag_in, 3);
	assert_int_equal(fx->n->stats.ip6_frag_reassembled, 1);
	assert_int_equal(fx->h.e->wheel.armed, armed0); /* its timer gone */
}

/* Out of order, with a hop-by-hop header in front of the fragment header:
 * it stays, its Next Header now naming UDP. */
static void test_out_of_order_with_hop_by_hop(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag_nh(2, IPPROTO_UDP, 48, 24, false, 8));
	feed_held(fx, frag_nh(2, IPPROTO_UDP, 0, 24, true, 8));
	assert_whole(fx, feed(fx, frag_nh(2, IPPROTO_UDP, 24, 24, true, 8)), 72, 8);
	assert_table(fx, 0, 0);
}

/* Datagrams apart by identification, and by source. */
static void test_interleaved_datagrams(void **state)
{
	struct fx *fx = *state;
	struct rte_mbuf *other = frag(3, 0, 24, true);

	rte_pktmbuf_mtod(other, struct rte_ipv6_hdr *)->src_addr[15] = 9;
	feed_held(fx, other);
	feed_held(fx, frag(3, 24, 48, false));
	feed_held(fx, frag(4, 24, 48, false));
	assert_table(fx, 3, 3);
	assert_whole(fx, feed(fx, frag(4, 0, 24, true)), 72, 0);
	assert_whole(fx, feed(fx, frag(3, 0, 24, true)), 72, 0);
	assert_table(fx, 1, 1); /* the other source's, until its timeout */
}

/* RFC 5722: an overlap drops the datagram whole, and every later fragment
 * of it until the timeout, which is silent. */
static void test_overlap_drops_datagram(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(5, 0, 24, true));
	feed_held(fx, frag(5, 16, 24, true));
	assert_int_equal(fx->n->stats.ip6_frag_drop_overlap, 1);
	assert_table(fx, 1, 0);
	feed_held(fx, frag(5, 0, 24, true));
	feed_held(fx, frag(5, 24, 24, true));
	feed_held(fx, frag(5, 48, 24, false));
	assert_int_equal(fx->n->stats.ip6_frag_drop_after_overlap, 3);
	assert_int_equal(fx->n->stats.ip6_frag_reassembled, 0);
	h_advance(&fx->h, US_FRAG6_TIMEOUT_NS);
	assert_int_equal(fx->n->stats.ip6_frag_timeout, 1);
	assert_int_equal(fx->n->stats.ip6_frag_timeout_icmp, 0);
	assert_icmp(&fx->h, 0, 0, 0, 0);
	assert_table(fx, 0, 0);
	/* The identification is free again. */
	feed_held(fx, frag(5, 0, 24, true));
	assert_whole(fx, feed(fx, frag(5, 24, 48, false)), 72, 0);
}

/* An overlap from either side: the fragment before, and the one after. */
static void test_overlap_with_next_fragment(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(6, 24, 24, true));
	feed_held(fx, frag(6, 0, 32, true));
	assert_int_equal(fx->n->stats.ip6_frag_drop_overlap, 1);
	feed_held(fx, frag(7, 0, 24, true));
	feed_held(fx, frag(7, 48, 24, false));
	feed_held(fx, frag(7, 16, 48, true)); /* covers both ends */
	assert_int_equal(fx->n->stats.ip6_frag_drop_overlap, 2);
	assert_table(fx, 2, 0);
}

/* RFC 8200 4.5: an exact duplicate may go alone (the network duplicates
 * packets); the datagram completes. */
static void test_exact_duplicate_dropped_alone(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(8, 0, 24, true));
	feed_held(fx, frag(8, 0, 24, true));
	feed_held(fx, frag(8, 48, 24, false));
	feed_held(fx, frag(8, 48, 24, false));
	assert_int_equal(fx->n->stats.ip6_frag_dup, 2);
	assert_table(fx, 1, 2);
	assert_whole(fx, feed(fx, frag(8, 24, 24, true)), 72, 0);
	assert_int_equal(fx->n->stats.ip6_frag_drop_overlap, 0);
}

/* The same range with other bytes is no duplicate: an overlap. */
static void test_same_range_other_bytes_overlaps(void **state)
{
	struct fx *fx = *state;
	struct rte_mbuf *m = frag(9, 24, 24, true);

	rte_pktmbuf_mtod_offset(m, uint8_t *, 48 + 23)[0] ^= 1;
	feed_held(fx, frag(9, 24, 24, true));
	feed_held(fx, m);
	assert_int_equal(fx->n->stats.ip6_frag_drop_overlap, 1);
	assert_int_equal(fx->n->stats.ip6_frag_dup, 0);
	feed_held(fx, frag(9, 0, 24, true));
	feed_held(fx, frag(9, 48, 24, false));
	assert_int_equal(fx->n->stats.ip6_frag_reassembled, 0);
}

/* RFC 6946: an atomic fragment is the whole datagram at once, even with
 * fragments of its identification held, which it leaves alone. */
static void test_atomic_fragment(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(10, 0, 24, true));
	assert_whole(fx, feed(fx, frag(10, 0, 72, false)), 72, 0);
	assert_whole(fx, feed(fx, frag_nh(10, IPPROTO_UDP, 0, 40, false, 16)), 40, 16);
	assert_int_equal(fx->n->stats.ip6_frag_atomic, 2);
	assert_table(fx, 1, 1);
	feed_held(fx, frag(10, 24, 24, true));
	assert_whole(fx, feed(fx, frag(10, 48, 24, false)), 72, 0);
	assert_int_equal(fx->n->stats.ip6_frag_reassembled, 1);
}

/* RFC 8200 4.5: abandoned 60 s after the first-arriving fragment (later
 * ones do not extend it); Time Exceeded since offset 0 had come. */
static void test_timeout_with_first_fragment(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(11, 48, 24, false));
	h_advance(&fx->h, US_SEC(30));
	feed_held(fx, frag(11, 0, 24, true));
	h_advance(&fx->h, US_SEC(30) - US_MS(2));
	assert_int_equal(fx->n->stats.ip6_frag_timeout, 0);
	h_advance(&fx->h, US_MS(2));
	assert_int_equal(fx->n->stats.ip6_frag_timeout, 1);
	assert_int_equal(fx->n->stats.ip6_frag_timeout_icmp, 1);
	assert_icmp(&fx->h, 1, ICMP6_TIME_EXCEEDED, ICMP6_TIME_EXCEED_REASSEMBLY, 0);
	assert_table(fx, 0, 0);
}

static void test_timeout_without_first_fragment(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(12, 24, 24, true));
	feed_held(fx, frag(12, 48, 24, false));
	h_advance(&fx->h, US_FRAG6_TIMEOUT_NS);
	assert_int_equal(fx->n->stats.ip6_frag_timeout, 1);
	assert_int_equal(fx->n->stats.ip6_frag_timeout_icmp, 0);
	assert_icmp(&fx->h, 0, 0, 0, 0);
	assert_table(fx, 0, 0);
}

/* Past DPDK's 8: 20 fragments of 8 bytes, shuffled. */
static void test_twenty_fragments(void **state)
{
	struct fx *fx = *state;
	struct rte_mbuf *whole = NULL;

	for (unsigned k = 0; k < 20; k++) {
		unsigned i = (k * 7) % 20;

		assert_null(whole);
		whole = feed(fx, frag(13, i * 8, 8, i < 19));
	}
	assert_whole(fx, whole, 160, 0);
}

/* US_FRAG6_FRAGS fragments make a datagram; one more drops it whole. */
static void test_fragment_bound(void **state)
{
	struct fx *fx = *state;
	struct rte_mbuf *whole = NULL;

	for (unsigned i = 0; i < US_FRAG6_FRAGS; i++)
		whole = feed(fx, frag(14, i * 8, 8, i + 1 < US_FRAG6_FRAGS));
	assert_whole(fx, whole, US_FRAG6_FRAGS * 8, 0);
	for (unsigned i = 0; i < US_FRAG6_FRAGS; i++)
		feed_held(fx, frag(15, i * 8, 8, true));
	assert_table(fx, 1, US_FRAG6_FRAGS);
	feed_held(fx, frag(15, US_FRAG6_FRAGS * 8, 8, false));
	assert_int_equal(fx->n->stats.ip6_frag_drop_too_many, 1);
	assert_table(fx, 0, 0);
}

/* US_FRAG6_DGRAMS datagrams at once; the next is refused, not evicting. */
static void test_datagram_bound(void **state)
{
	struct fx *fx = *state;

	for (unsigned i = 0; i < US_FRAG6_DGRAMS; i++)
		feed_held(fx, frag(100 + i, 0, 24, true));
	assert_table(fx, US_FRAG6_DGRAMS, US_FRAG6_DGRAMS);
	feed_held(fx, frag(99, 0, 24, true));
	assert_int_equal(fx->n->stats.ip6_frag_drop_table_full, 1);
	assert_whole(fx, feed(fx, frag(100, 24, 48, false)), 72, 0);
	assert_table(fx, US_FRAG6_DGRAMS - 1, US_FRAG6_DGRAMS - 1);
}

/* A fragment past the end the last one set, or a second end. */
static void test_inconsistent_end(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(16, 48, 24, false));
	feed_held(fx, frag(16, 72, 8, true));
	assert_int_equal(fx->n->stats.ip6_frag_drop_inconsistent, 1);
	assert_table(fx, 0, 0);
	feed_held(fx, frag(17, 48, 24, false));
	feed_held(fx, frag(17, 24, 16, false));
	feed_held(fx, frag(18, 48, 24, true));
	feed_held(fx, frag(18, 24, 16, false));
	assert_int_equal(fx->n->stats.ip6_frag_drop_inconsistent, 3);
	assert_table(fx, 0, 0);
}

static void test_empty_fragment(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(19, 24, 0, true));
	assert_int_equal(fx->n->stats.ip6_frag_drop_empty, 1);
	assert_table(fx, 0, 0);
}

/* RFC 8200 4.5: M set and a length not a multiple of 8: parameter problem
 * at the Payload Length.  The last fragment may have any length. */
static void test_length_not_multiple_of_8(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(20, 0, 20, true));
	assert_int_equal(fx->n->stats.ip6_frag_drop_bad_len, 1);
	assert_icmp(&fx->h, 1, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_HEADER, 4);
	assert_table(fx, 0, 0);
	feed_held(fx, frag(20, 0, 24, true));
	assert_whole(fx, feed(fx, frag(20, 24, 21, false)), 45, 0);
}

/* RFC 8200 4.5: a fragment ending past 65535 bytes of payload: parameter
 * problem at its Fragment Offset. */
static void test_too_large(void **state)
{
	struct fx *fx = *state;

	feed_held(fx, frag(21, 65528, 16, false));
	assert_int_equal(fx->n->stats.ip6_frag_drop_too_big, 1);
	assert_icmp(&fx->h, 1, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_HEADER, 40 + 2);
	/* The unfragmentable part counts: 8 bytes of hop-by-hop. */
	feed_held(fx, frag_nh(21, IPPROTO_UDP, 65520, 15, false, 8));
	assert_int_equal(fx->n->stats.ip6_frag_drop_too_big, 2);
	assert_icmp(&fx->h, 2, ICMP6_PARAM_PROB, ICMP6_PARAMPROB_HEADER, 40 + 8 + 2);
	/* Exactly 65535 is allowed. */
	feed_held(fx, frag(22, 65520, 15, false));
	assert_table(fx, 1, 1);
}

/* RFC 8200 4.5 (RFC 7112): the first fragment must hold every header
 * through the upper-layer one: parameter problem code 3, pointer 0. */
static void test_first_fragment_without_upper_header(void **state)
{
	struct fx *fx = *state;

	/* Destination options (8 bytes, then UDP) alone in the first fragment. */
	dgram[0] = IPPROTO_UDP;
	dgram[1] = 0;
	dgram[2] = 1;
	dgram[3] = 4;
	feed_held(fx, frag_nh(23, IPPROTO_DSTOPTS, 0, 8, true, 0));
	assert_int_equal(fx->n->stats.ip6_frag_drop_incomplete_chain, 1);
	assert_icmp(&fx->h, 1, ICMP6_PARAM_PROB, 3, 0);
	/* With the UDP header it is fine. */
	feed_held(fx, frag_nh(23, IPPROTO_DSTOPTS, 0, 16, true, 0));
	/* A TCP header needs 20 bytes. */
	feed_held(fx, frag_nh(24, IPPROTO_TCP, 0, 16, true, 0));
	assert_int_equal(fx->n->stats.ip6_frag_drop_incomplete_chain, 2);
	assert_table(fx, 1, 1);
	fill_dgram();
}

/* A 3000-byte packet at MTU 1500: fragments of 8-byte multiples behind a
 * fragment header, one identification, fed back in reverse: the same
 * bytes. */
static void test_output_reassembled_back(void **state)
{
	struct fx *fx = *state;
	struct rte_mbuf *m = frag(0, 0, 0, false), *tail, *out[8], *whole = NULL;
	struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod(m, struct rte_ipv6_hdr *);
	uint32_t id = fx->n->ip6.next_frag_id;
	int nf;

	/* The packet: IPv6 + 2960 bytes of dgram, in two segments. */
	rte_pktmbuf_trim(m, RTE_IPV6_FRAG_HDR_SIZE);
	ip6->proto = IPPROTO_UDP;
	ip6->payload_len = rte_cpu_to_be_16(2960);
	memcpy(rte_pktmbuf_append(m, 1460), dgram, 1460);
	tail = rte_pktmbuf_alloc(h_pool);
	assert_non_null(tail);
	memcpy(rte_pktmbuf_append(tail, 1500), dgram + 1460, 1500);
	assert_int_equal(rte_pktmbuf_chain(m, tail), 0);
	nf = us_frag6_output(fx->n, m, 1500, out, 8);
	assert_int_equal(nf, 3);
	assert_int_equal(fx->n->ip6.next_frag_id, id + 1);
	assert_int_equal(fx->n->stats.ip6_frag_out, 3);
	for (int i = 0; i < nf; i++) {
		const struct rte_ipv6_hdr *h = rte_pktmbuf_mtod(out[i], const struct rte_ipv6_hdr *);
		const struct rte_ipv6_fragment_ext *fh = (const void *)(h + 1);
		uint32_t len = i < 2 ? 1448 : 2960 - 2 * 1448;

		assert_true(rte_pktmbuf_pkt_len(out[i]) <= 1500);
		assert_int_equal(rte_pktmbuf_pkt_len(out[i]), 48 + len);
		assert_int_equal(h->proto, IPPROTO_FRAGMENT);
		assert_int_equal(rte_be_to_cpu_16(h->payload_len), 8 + len);
		assert_int_equal(fh->next_header, IPPROTO_UDP);
		assert_int_equal(rte_be_to_cpu_32(fh->id), id);
		assert_int_equal(rte_be_to_cpu_16(fh->frag_data), i * 1448 | (i < 2));
	}
	for (int i = nf - 1; i >= 0; i--) {
		assert_null(whole);
		whole = feed(fx, out[i]);
	}
	assert_whole(fx, whole, 2960, 0);
}

static void test_output_refused(void **state)
{
	struct fx *fx = *state;
	struct rte_mbuf *out[8];

	/* No room for 8 bytes of data behind the headers. */
	assert_true(us_frag6_output(fx->n, frag(0, 0, 64, false), 55, out, 8) < 0);
	/* More fragments than out[] holds. */
	assert_true(us_frag6_output(fx->n, frag(0, 0, 1400, false), 1280, out, 1) < 0);
	assert_int_equal(fx->n->stats.ip6_frag_drop_out_fail, 2);
	assert_int_equal(fx->n->stats.ip6_frag_out, 0);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_in_order),
		T(test_out_of_order_with_hop_by_hop),
		T(test_interleaved_datagrams),
		T(test_overlap_drops_datagram),
		T(test_overlap_with_next_fragment),
		T(test_exact_duplicate_dropped_alone),
		T(test_same_range_other_bytes_overlaps),
		T(test_atomic_fragment),
		T(test_timeout_with_first_fragment),
		T(test_timeout_without_first_fragment),
		T(test_twenty_fragments),
		T(test_fragment_bound),
		T(test_datagram_bound),
		T(test_inconsistent_end),
		T(test_empty_fragment),
		T(test_length_not_multiple_of_8),
		T(test_too_large),
		T(test_first_fragment_without_upper_header),
		T(test_output_reassembled_back),
		T(test_output_refused),
	};

	fill_dgram();
	h_eal_init("us_test_frag6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
