/* IPv4 input validation (stack/net/ip.c): one test per rejection, each next to
 * an accepted baseline so a rejection cannot pass by accident. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness.h"

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h_start(&h);
	*state = &h;
	return 0;
}

static int setup_rx_csum(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h.ops.rx_csum = true;
	h_start(&h);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	h_teardown(*state);
	return 0;
}

static struct rte_mbuf *ping_to(uint32_t dst)
{
	uint8_t msg[64];
	size_t n = h_icmp_echo(msg, 7, 1, 32);

	return h_ipv4(H_PEER_IP, dst, IPPROTO_ICMP, 42, 0, msg, n);
}

/* Inject m; was it delivered to ICMP (echo answered)? */
static bool delivered(struct harness *h, struct rte_mbuf *m)
{
	int64_t before = us_engine_counter(h->e, "icmp_echo_in");

	us_engine_input(h->e, m);
	us_engine_flush(h->e);
	return us_engine_counter(h->e, "icmp_echo_in") == before + 1;
}

static void test_valid_accepted(void **state)
{
	struct harness *h = *state;

	assert_true(delivered(h, ping_to(H_OUR_IP)));
	assert_int_equal(us_engine_counter(h->e, "ip_rx_packets"), 1);
}

static void test_bad_version(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->version_ihl = 0x65;
	h_fix_ip_csum(m);
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_version"), 1);
}

static void test_ihl_below_5(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->version_ihl = 0x44;
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_ihl"), 1);
}

static void test_total_length_beyond_frame(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->total_length = rte_cpu_to_be_16(rte_pktmbuf_pkt_len(m) - 14 + 1);
	h_fix_ip_csum(m);
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_len"), 1);
}

static void test_total_length_inside_header(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->total_length = rte_cpu_to_be_16(19);
	h_fix_ip_csum(m);
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_len"), 1);
}

static void test_bad_checksum(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->hdr_checksum ^= 0x0100;
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_csum"), 1);
}

/* With RX checksum offload the NIC's verdict is trusted both ways. */
static void test_rx_csum_flags_trusted(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->hdr_checksum ^= 0x0100;
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD;
	assert_true(delivered(h, m));
	m = ping_to(H_OUR_IP);
	m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD;
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_csum"), 1);
	m = ping_to(H_OUR_IP); /* no verdict: checked in software */
	h_iph(m)->hdr_checksum ^= 0x0100;
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_bad_csum"), 2);
}

/* RFC 1122 3.2.1.7: TTL 0 to us is accepted; a host forwards nothing. */
static void test_ttl_zero_ours_only(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	h_iph(m)->time_to_live = 0;
	h_fix_ip_csum(m);
	assert_true(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_rx_ttl_zero"), 1);
	m = ping_to(H_IP(10, 0, 0, 50));
	h_iph(m)->time_to_live = 0;
	h_fix_ip_csum(m);
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_not_for_us"), 1);
	assert_int_equal(us_engine_counter(h->e, "ip_tx_packets"), 1); /* the one reply */
}

static void test_not_our_address(void **state)
{
	struct harness *h = *state;

	assert_false(delivered(h, ping_to(H_IP(192, 0, 2, 1))));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_not_for_us"), 1);
	assert_int_equal(h->port.ntx, 0);
}

static void test_short_packet(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = ping_to(H_OUR_IP);

	rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - 14 - 19);
	assert_false(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_drop_short"), 1);
}

/* Ethernet padding after the datagram is trimmed, options are skipped. */
static void test_padding_trimmed_and_options_skipped(void **state)
{
	struct harness *h = *state;
	uint8_t msg[32];
	size_t n = h_icmp_echo(msg + 4, 7, 1, 4);
	struct rte_mbuf *m;

	memset(msg, 1, 4); /* four NOP options */
	m = h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 1, 0, msg, n + 4);
	h_iph(m)->version_ihl = 0x46;
	h_fix_ip_csum(m);
	memset(rte_pktmbuf_append(m, 20), 0, 20); /* padding */
	/* Seed ARP so the reply leaves at once. */
	us_engine_input(h->e, h_arp(1, &h_peer_mac, H_PEER_IP, &h_bcast_mac, H_OUR_IP,
				    &h_bcast_mac));
	us_engine_flush(h->e);
	h_clear_tx(h);
	assert_true(delivered(h, m));
	assert_int_equal(us_engine_counter(h->e, "ip_rx_options"), 1);
	assert_int_equal(h->port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_16(h_iph(h->port.tx[0])->total_length), 20 + n);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_valid_accepted),
		T(test_bad_version),
		T(test_ihl_below_5),
		T(test_total_length_beyond_frame),
		T(test_total_length_inside_header),
		T(test_bad_checksum),
		cmocka_unit_test_setup_teardown(test_rx_csum_flags_trusted, setup_rx_csum, teardown),
		T(test_ttl_zero_ours_only),
		T(test_not_our_address),
		T(test_short_packet),
		T(test_padding_trimmed_and_options_skipped),
	};

	h_eal_init("us_test_ipv4");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
