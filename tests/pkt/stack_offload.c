/* Packet scripts for segmentation and coalescing below TCP (stack/net/gso.c,
 * gro.c): one engine over the fake port.  Frames are built by the harness
 * with their checksums; what comes out is checked field by field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <rte_tcp.h>

#include "stack/base/csum.h"
#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness.h"

#define SPORT 40000
#define DPORT 80

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h.cfg.nic.gso = h.cfg.nic.gro = true;
	h_start(&h);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	h_teardown(*state);
	return 0;
}

static struct rte_tcp_hdr *tcp_of(struct rte_mbuf *m)
{
	return (struct rte_tcp_hdr *)((uint8_t *)h_iph(m) + rte_ipv4_hdr_len(h_iph(m)));
}

/* A data segment from the peer with DF set (IP IDs then do not matter to
 * rte_gro, as for Linux and us), valid checksums. */
static struct rte_mbuf *seg(uint8_t flags, uint32_t seq, size_t len, uint16_t wnd)
{
	struct rte_mbuf *m = h_tcp(H_PEER_IP, SPORT, H_OUR_IP, DPORT, flags, seq, 1, 0x5a, len);
	struct rte_tcp_hdr *th = tcp_of(m);

	h_iph(m)->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	h_fix_ip_csum(m);
	th->rx_win = rte_cpu_to_be_16(wnd);
	th->cksum = 0;
	th->cksum = us_csum_l4(m, h_iph(m), sizeof(struct rte_ether_hdr) + rte_ipv4_hdr_len(h_iph(m)));
	return m;
}

static uint32_t seq_of(struct rte_mbuf *m)
{
	return rte_be_to_cpu_32(tcp_of(m)->sent_seq);
}

static uint32_t payload_of(struct rte_mbuf *m)
{
	return m->pkt_len - sizeof(struct rte_ether_hdr) - rte_ipv4_hdr_len(h_iph(m)) -
	       (uint32_t)(tcp_of(m)->data_off >> 4) * 4;
}

static void free_all(struct rte_mbuf **p, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		rte_pktmbuf_free(p[i]);
}

/* Four in-order segments become one of 4,000 bytes: IP length fixed,
 * checksums flagged verified. */
static void test_gro_merges_in_order(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *p[4];
	uint16_t n;

	for (int i = 0; i < 4; i++)
		p[i] = seg(RTE_TCP_ACK_FLAG, 1000 + 1000u * (uint32_t)i, 1000, 100);
	n = us_gro(&h->e->net, p, 4);
	assert_int_equal(n, 1);
	assert_int_equal(seq_of(p[0]), 1000);
	assert_int_equal(payload_of(p[0]), 4000);
	assert_int_equal(rte_be_to_cpu_16(h_iph(p[0])->total_length), 20 + 20 + 4000);
	assert_int_equal(p[0]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, RTE_MBUF_F_RX_L4_CKSUM_GOOD);
	assert_int_equal(h->e->net.stats.gro_merged, 3);
	free_all(p, n);
}

/* A PSH segment is not merged and keeps its place: A, B(PSH), C, D gives
 * A, B, C+D (rte_gro alone would move B behind C+D). */
static void test_gro_keeps_order_around_psh(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *p[4];
	uint16_t n;

	p[0] = seg(RTE_TCP_ACK_FLAG, 1000, 1000, 100);
	p[1] = seg(RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, 2000, 1000, 100);
	p[2] = seg(RTE_TCP_ACK_FLAG, 3000, 1000, 100);
	p[3] = seg(RTE_TCP_ACK_FLAG, 4000, 1000, 100);
	n = us_gro(&h->e->net, p, 4);
	assert_int_equal(n, 3);
	assert_int_equal(seq_of(p[0]), 1000);
	assert_int_equal(payload_of(p[0]), 1000);
	assert_int_equal(seq_of(p[1]), 2000);
	assert_int_equal(tcp_of(p[1])->tcp_flags, RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG);
	assert_int_equal(seq_of(p[2]), 3000);
	assert_int_equal(payload_of(p[2]), 2000);
	free_all(p, n);
}

/* A bad TCP checksum: that frame stays as it was, unflagged, for TCP to
 * drop and count; its neighbours are not merged across it. */
static void test_gro_bad_checksum_left_alone(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *p[3];
	uint16_t n;

	p[0] = seg(RTE_TCP_ACK_FLAG, 1000, 1000, 100);
	p[1] = seg(RTE_TCP_ACK_FLAG, 2000, 1000, 100);
	p[2] = seg(RTE_TCP_ACK_FLAG, 3000, 1000, 100);
	tcp_of(p[1])->cksum ^= 0x1234;
	n = us_gro(&h->e->net, p, 3);
	assert_int_equal(n, 3);
	assert_int_equal(seq_of(p[1]), 2000);
	assert_int_equal(p[1]->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK, 0);
	assert_int_equal(payload_of(p[0]), 1000);
	assert_int_equal(payload_of(p[2]), 1000);
	free_all(p, n);
}

/* A new window ends a run: the merged segment would carry the old one. */
static void test_gro_window_change_ends_run(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *p[4];
	uint16_t n;

	p[0] = seg(RTE_TCP_ACK_FLAG, 1000, 1000, 100);
	p[1] = seg(RTE_TCP_ACK_FLAG, 2000, 1000, 100);
	p[2] = seg(RTE_TCP_ACK_FLAG, 3000, 1000, 200);
	p[3] = seg(RTE_TCP_ACK_FLAG, 4000, 1000, 200);
	n = us_gro(&h->e->net, p, 4);
	assert_int_equal(n, 2);
	assert_int_equal(payload_of(p[0]), 2000);
	assert_int_equal(rte_be_to_cpu_16(tcp_of(p[0])->rx_win), 100);
	assert_int_equal(seq_of(p[1]), 3000);
	assert_int_equal(payload_of(p[1]), 2000);
	assert_int_equal(rte_be_to_cpu_16(tcp_of(p[1])->rx_win), 200);
	free_all(p, n);
}

/* A segment of 4 x 1000 bytes (tso_segsz 1000) from our side: four frames,
 * each with its length, sequence number, IP ID, checksums; PSH and FIN only
 * on the last. */
static void test_gso_cuts_with_checksums(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = seg(RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, 5000, 1, 100);
	struct rte_mbuf *payload = rte_pktmbuf_alloc(h_pool), *out[8];
	uint16_t id;
	int k;

	/* The harness builds at most an MSS in one mbuf: the rest is chained
	 * like tcp/ chains the send queue. */
	assert_non_null(payload);
	memset(rte_pktmbuf_append(payload, 1999), 0x5a, 1999);
	assert_int_equal(rte_pktmbuf_chain(m, payload), 0);
	payload = rte_pktmbuf_alloc(h_pool);
	memset(rte_pktmbuf_append(payload, 2000), 0x5a, 2000);
	assert_int_equal(rte_pktmbuf_chain(m, payload), 0);
	h_iph(m)->total_length = rte_cpu_to_be_16((uint16_t)(m->pkt_len - 14));
	id = rte_be_to_cpu_16(h_iph(m)->packet_id);
	m->l2_len = 14;
	m->l3_len = 20;
	m->l4_len = 20;
	m->tso_segsz = 1000;
	m->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
	k = us_gso_cut(&h->e->net, m, out, 8);
	assert_int_equal(k, 4);
	for (int i = 0; i < k; i++) {
		struct rte_ipv4_hdr *ip = h_iph(out[i]);

		assert_int_equal(out[i]->pkt_len, 14 + 20 + 20 + 1000);
		assert_int_equal(rte_be_to_cpu_16(ip->total_length), 20 + 20 + 1000);
		assert_int_equal(rte_be_to_cpu_16(ip->packet_id), (uint16_t)(id + i));
		assert_true(us_csum_ipv4_hdr_ok(ip));
		assert_true(us_csum_l4_ok(out[i], ip, 14 + 20));
		assert_int_equal(seq_of(out[i]), 5000 + 1000u * (uint32_t)i);
		assert_int_equal(tcp_of(out[i])->tcp_flags,
				 i == k - 1 ? RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG : RTE_TCP_ACK_FLAG);
		assert_false(out[i]->ol_flags & RTE_MBUF_F_TX_TCP_SEG);
	}
	assert_int_equal(h->e->net.stats.gso_cut, 1);
	assert_int_equal(h->e->net.stats.gso_frames, 4);
	free_all(out, (uint16_t)k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gro_merges_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gro_keeps_order_around_psh, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gro_bad_checksum_left_alone, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gro_window_change_ends_run, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gso_cuts_with_checksums, setup, teardown),
	};

	h_eal_init("us_pkt_offload");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
