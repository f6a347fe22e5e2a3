/* Packet scripts: header validation and options (RFC 9293 3.1, 3.7.1). */
#include "tests/pkt/harness.h"

#include <string.h>

#include <errno.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

/* RFC 9293 3.1: a bad checksum drops the segment (counted, no reply). */
static void test_bad_checksum_dropped_and_counted(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 10, .bad_csum = true));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_bad_csum), 1);
	assert_int_equal(t->n_readable, 0);
	/* Also to a closed port: no RST for a corrupt segment. */
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1, .dport = 81, .bad_csum = true));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_bad_csum), 2);
	FINISH(t, 1);
}

/* RTE_MBUF_F_RX_L4_CKSUM_GOOD means the NIC verified it: no recheck. */
static void test_checksum_good_flag_is_trusted(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 10, .bad_csum = true, .csum_good_flag = true));
	assert_int_equal(t->n_readable, 1);
	assert_int_equal(STAT(t, drop_bad_csum), 0);
	APP_READ(t);
	assert_int_equal(t->rx_len, 10);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1011));
	FINISH(t, 1);
}

/* Fewer than 20 bytes of TCP: dropped as short.  (A datagram shorter
 * than its IP length never gets here: the IP layers drop it.) */
static void test_truncated_header_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .cut = 8));
	INJECT(t, SEG(.seq = 1001, .cut = 20));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_short), 2);
	FINISH(t, 1);
}

/* RFC 9293 3.1: data offset below 5 or beyond the segment is invalid. */
static void test_data_offset_out_of_range_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 10, .doff = 4));
	INJECT(t, SEG(.seq = 1001, .doff = 15));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_bad_offset), 2);
	FINISH(t, 1);
}

/* SYN together with FIN or RST: dropped, counted, never answered. */
static void test_syn_with_fin_or_rst_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN | TH_FIN, .seq = 1000));
	INJECT(t, SEG(.flags = TH_SYN | TH_RST, .seq = 1000));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_bad_flags), 2);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

/* An MSS that gives our segments their size. */
static uint32_t first_segment_len(struct pkt_t *t, const uint8_t *opts, uint8_t optlen)
{
	struct tcp_conn_info info;

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .opts = opts, .optlen = optlen));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_non_null(t->conn);
	tcp_conn_get_info(t->conn, &info);
	return info.mss;
}

/* RFC 9293 3.1: unknown options are skipped by their length. */
static void test_unknown_option_skipped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	const uint8_t opts[] = { 30, 3, 0, 1, 2, 4, 0x04, 0xb0 }; /* MSS 1200 */

	assert_int_equal(first_segment_len(t, opts, sizeof(opts)), 1200);
	assert_int_equal(pkt_app_send(t, 1300), 1300);
	EXPECT(t, SEG(.seq = 1, .len = 1200));
	EXPECT(t, SEG(.seq = 1201, .len = 100));
	FINISH(t, 1);
}

/* RFC 9293 3.1: an option length of 0/1 stops parsing (no MSS: the
 * family's default). */
static void test_option_bad_length_stops_parsing(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	const uint8_t opts[] = { 30, 0, 2, 4, 0x04, 0xb0, 0, 0 };

	assert_int_equal(first_segment_len(t, opts, sizeof(opts)), pkt_default_mss());
	FINISH(t, 1);
}

/* An option running past the header end is not read. */
static void test_option_past_header_end_ignored(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	/* An unknown option claiming 8 bytes with 6 left: parsing stops, the
	 * MSS-looking bytes inside it are never read as an option. */
	const uint8_t opts[] = { 1, 1, 30, 8, 2, 4, 0x04, 0xb0 };

	assert_int_equal(first_segment_len(t, opts, sizeof(opts)), pkt_default_mss());
	FINISH(t, 1);
}

/* RFC 9293 3.1 and 3.2 (MUST-4): EOL ends the list; the bytes after it
 * are padding, even when they look like an MSS option (256 here), and are
 * never parsed: the peer's MSS stays the default. */
static void test_eol_ends_option_list(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	const uint8_t opts[] = { 1, 0, 2, 4, 0x01, 0x00, 3, 3 };

	assert_int_equal(first_segment_len(t, opts, sizeof(opts)), pkt_default_mss());
	assert_int_equal(STAT(t, opt_malformed), 0);
	FINISH(t, 1);
}

/* RFC 9293 3.1 (MUST-69): an option list that does not end on a 32-bit
 * boundary is padded with zeros (EOL).  Every list we send happens to end
 * on one (the harness checks that whatever follows an EOL we send is
 * zero); the padding itself, for each odd length: */
static void test_option_padding_is_zeros(void **state)
{
	(void)state;
	uint8_t opt[8];

	for (unsigned n = 1; n <= 4; n++) {
		memset(opt, 0xa5, sizeof(opt));
		assert_int_equal(tcp_options_pad(opt, n), 4);
		for (unsigned i = n; i < 4; i++)
			assert_int_equal(opt[i], 0);
		assert_int_equal(opt[0], 0xa5); /* the options stay */
		assert_int_equal(opt[4], 0xa5); /* nothing past the word */
	}
	assert_int_equal(tcp_options_pad(opt, 0), 0);
}

/* RFC 9293 3.7.1: our MSS is bounded by the peer's larger offer. */
static void test_peer_mss_above_ours_is_capped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	const uint8_t opts[] = { 2, 4, 0x23, 0x28 }; /* 9000 */

	assert_int_equal(first_segment_len(t, opts, sizeof(opts)), 1460);
	FINISH(t, 1);
}

/* RFC 1191 / RFC 8201: "fragmentation needed" or Packet Too Big quoting a
 * segment in flight lowers the MSS to the path MTU less the family's
 * headers; RFC 5927: one quoting a sequence number not in flight is
 * ignored. */
static void test_icmp_frag_needed_lowers_mss(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	/* An MTU each family allows (IPv6's floor is 1280). */
	uint32_t mtu = pkt_family() == 6 ? 1300 : 1000;
	uint32_t mss = mtu - (pkt_family() == 6 ? 60 : 40);
	struct tcp_conn_info info;
	uint8_t l4[8] = { PKT_LOCAL_PORT >> 8, PKT_LOCAL_PORT & 0xff,
			  PKT_PEER_PORT >> 8, PKT_PEER_PORT & 0xff };
	uint32_t seq;

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 1460), 1460);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	seq = t->our_isn + 5000; /* never sent */
	l4[4] = (uint8_t)(seq >> 24), l4[5] = (uint8_t)(seq >> 16);
	l4[6] = (uint8_t)(seq >> 8), l4[7] = (uint8_t)seq;
	tcp_icmp_error(t->ts, TCP_ICMP_TOO_BIG, 0, mtu, PKT_LOCAL_IP, PKT_PEER_IP, l4, sizeof(l4));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.mss, 1460);
	seq = t->our_isn + 1;
	l4[4] = (uint8_t)(seq >> 24), l4[5] = (uint8_t)(seq >> 16);
	l4[6] = (uint8_t)(seq >> 8), l4[7] = (uint8_t)seq;
	tcp_icmp_error(t->ts, TCP_ICMP_TOO_BIG, 0, mtu, PKT_LOCAL_IP, PKT_PEER_IP, l4, sizeof(l4));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.mss, mss);
	/* Resent at the new MSS at once, not at the RTO (tcp/tcp_stack.c pmtu_resend). */
	EXPECT(t, SEG(.seq = 1, .len = (int32_t)mss));
	EXPECT(t, SEG(.seq = 1 + mss, .len = (int32_t)(1460 - mss)));
	INJECT(t, SEG(.seq = 1001, .ack = 1 + mss));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1461));
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_bad_checksum_dropped_and_counted),
		PKT_TEST(test_checksum_good_flag_is_trusted),
		PKT_TEST(test_truncated_header_dropped),
		PKT_TEST(test_data_offset_out_of_range_dropped),
		PKT_TEST(test_syn_with_fin_or_rst_dropped),
		PKT_TEST(test_unknown_option_skipped),
		PKT_TEST(test_option_bad_length_stops_parsing),
		PKT_TEST(test_option_past_header_end_ignored),
		PKT_TEST(test_eol_ends_option_list),
		cmocka_unit_test(test_option_padding_is_zeros),
		PKT_TEST(test_peer_mss_above_ours_is_capped),
		PKT_TEST(test_icmp_frag_needed_lowers_mss),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
