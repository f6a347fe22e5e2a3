/* Packet scripts: TCP Fast Open, client side (RFC 7413 4.1).
 *
 * tcp_connect_data() is our sendto(MSG_FASTOPEN): without a cached cookie
 * the SYN asks for one and the data follows the handshake; with one the
 * SYN carries it and the data.  The peer plays the server. */
#include "tests/pkt/harness.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "tcp/fastopen.h"

/* Helpers */

static const uint8_t COOKIE[8] = { 0xc0, 0x0c, 0x1e, 0x5e, 0x12, 0x34, 0x56, 0x78 };

static const struct tfo_counters *ctr(struct pkt_t *t)
{
	return tcp_stack_tfo_stats(t->ts);
}

/* A fresh flow for the harness: the next SYN teaches port and ISN. */
static void new_flow(struct pkt_t *t)
{
	t->local_port = 0;
	t->isn_known = false;
	t->our_max = 0;
	t->peer_isn_known = false;
	t->app_sent = 0;
}

/* tcp_connect_data with len bytes of our pattern. */
static struct tcp_conn *connect_data(struct pkt_t *t, size_t len, unsigned flags)
{
	uint8_t *buf = malloc(len + 1);
	struct tcp_conn *c = NULL;

	assert_non_null(buf);
	new_flow(t);
	for (size_t i = 0; i < len; i++)
		buf[i] = pkt_pattern((uint32_t)i);
	assert_int_equal(tcp_connect_data(t->ts, PKT_PEER_IP, PKT_PEER_PORT, buf, len, flags,
					  NULL, &t->cb, t, &c), (ssize_t)len);
	t->app_sent = len;
	free(buf);
	assert_non_null(c);
	return c;
}

/* The server's SYN-ACK (ISN 5000, MSS mss) acking ack, with a cookie of
 * cookie_len bytes of COOKIE (0: no option). */
static void synack(struct pkt_t *t, uint32_t ack, uint16_t mss, uint8_t cookie_len)
{
	uint8_t o[40], n = 0;

	o[n++] = 2, o[n++] = 4, o[n++] = (uint8_t)(mss >> 8), o[n++] = (uint8_t)mss;
	if (cookie_len > 0) {
		o[n++] = TFO_OPT_KIND;
		o[n++] = (uint8_t)(2 + cookie_len);
		memcpy(o + n, COOKIE, cookie_len);
		n = (uint8_t)(n + cookie_len);
	}
	INJECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 5000, .ack = ack, .opts = o, .optlen = n));
}

static void cache_cookie(struct pkt_t *t, uint16_t mss)
{
	assert_int_equal(tfo_cache_store(t->ts->tfo.cache, PKT_PEER_IP, COOKIE,
					 sizeof(COOKIE), mss), 0);
}

/* Cookie request, grant, then data in the SYN */

/* RFC 7413 4.1.1/4.1.3: no cookie yet: the SYN asks for one and carries
 * no data; the data goes after the handshake; the SYN-ACK's cookie is
 * cached, and the next connect's SYN carries it with the data, which the
 * SYN-ACK acknowledges (tcp_info says so). */
static void test_rfc7413_4_1_cookie_request_then_syn_data(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_info info;
	struct tfo_opt o;
	struct tcp_conn *c;

	c = connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 0, .mss = 1460));
	assert_int_equal(o.type, TFO_OPT_REQUEST);
	assert_int_equal(ctr(t)->cli_cookie_requests, 1);
	synack(t, 1, 1460, sizeof(COOKIE));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 5001, .len = 100));
	assert_int_equal(t->n_connected, 1);
	assert_int_equal(ctr(t)->cli_cookies_stored, 1);
	tcp_conn_get_info(c, &info);
	assert_false(info.syn_data_acked);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 101));
	assert_int_equal(tcp_abort(c), 0);
	EXPECT(t, SEG(.flags = TH_RST));

	c = connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 100));
	assert_int_equal(o.type, TFO_OPT_COOKIE);
	assert_int_equal(o.cookie_len, sizeof(COOKIE));
	assert_memory_equal(o.cookie, COOKIE, sizeof(COOKIE));
	assert_int_equal(ctr(t)->cli_syn_data_sent, 1);
	synack(t, 101, 1460, 0);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 101, .ack = 5001, .len = 0));
	EXPECT_NOTHING(t);
	tcp_conn_get_info(c, &info);
	assert_true(info.syn_data_acked);
	assert_int_equal(info.snd_una, info.snd_nxt);
	assert_int_equal(info.bytes_acked, 100);
	assert_int_equal(tcp_send_space(c), t->cfg.sndbuf);
	assert_int_equal(ctr(t)->cli_syn_data_acked, 1);
	assert_int_equal(ctr(t)->cli_syn_data_resent, 0);
	FINISH(t, 1);
}

/* RFC 7413 4.1.3: without a cached MSS the SYN's data is held to 536
 * bytes with its options (MSS 4 + NOP NOP cookie 10 here: 520 bytes of
 * data); the rest follows the handshake. */
static void test_rfc7413_4_1_3_536_bytes_without_cached_mss(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	cache_cookie(t, 0);
	connect_data(t, 1000, TCP_CONNECT_FASTOPEN);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .len = 520));
	synack(t, 521, 1460, 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 521, .ack = 5001, .len = 480));
	FINISH(t, 1);
}

/* With the server's MSS cached, the SYN carries up to that (less options). */
static void test_rfc7413_4_1_3_cached_mss_bounds_syn_data(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	cache_cookie(t, 1200);
	connect_data(t, 3000, TCP_CONNECT_FASTOPEN);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .len = 1184));
	synack(t, 1185, 1200, 0);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1185, .ack = 5001, .len = 1200));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 2385, .len = 616));
	FINISH(t, 1);
}

/* The server acknowledges only the SYN (invalid cookie, or no Fast Open):
 * the data goes again at once after the handshake, not after an RTO. */
static void test_rfc7413_synack_acks_only_syn_data_resent_at_once(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_info info;
	struct tcp_conn *c;

	cache_cookie(t, 1460);
	c = connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .len = 100));
	synack(t, 1, 1460, sizeof(COOKIE));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 5001, .len = 100));
	EXPECT_NOTHING(t);
	tcp_conn_get_info(c, &info);
	assert_false(info.syn_data_acked);
	assert_int_equal(ctr(t)->cli_syn_data_resent, 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 101));
	ADVANCE(t, 5000);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* Part of the SYN data acknowledged: the rest goes at once. */
static void test_rfc7413_synack_acks_part_rest_resent(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	cache_cookie(t, 1460);
	connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .len = 100));
	synack(t, 41, 1460, 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 41, .ack = 5001, .len = 60));
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_send_space(t->conn), t->cfg.sndbuf - 60);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 101));
	assert_int_equal(tcp_send_space(t->conn), t->cfg.sndbuf);
	FINISH(t, 1);
}

/* Fallback and negative cache */

/* RFC 7413 4.1.3: the SYN with data times out: a plain SYN follows (no
 * option, no data), the server is remembered as Fast Open-unfriendly and
 * the next connect sends a plain SYN too. */
static void test_rfc7413_4_1_3_syn_timeout_plain_syn_and_negative_cache(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tfo_opt o;
	struct tcp_conn *c;

	cache_cookie(t, 1460);
	c = connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .len = 100));
	ADVANCE(t, 1000);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 0, .mss = 1460));
	assert_int_equal(o.type, TFO_OPT_NONE);
	assert_int_equal(ctr(t)->cli_syn_timeouts, 1);
	assert_int_equal(ctr(t)->cli_marked_unfriendly, 1);
	synack(t, 1, 1460, 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 5001, .len = 100));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 5001, .ack = 101));
	assert_int_equal(tcp_abort(c), 0);
	EXPECT(t, SEG(.flags = TH_RST));

	connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 0));
	assert_int_equal(o.type, TFO_OPT_NONE);
	assert_int_equal(ctr(t)->cli_cache_negative, 1);
	FINISH(t, 1);
}

/* RFC 7413 4.1.3: an ICMP error about the Fast Open SYN marks the server. */
static void test_rfc7413_4_1_3_icmp_error_negative_cache(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint8_t l4[8];
	struct tcp_conn *c;
	struct tfo_opt o;

	cache_cookie(t, 1460);
	c = connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0, .len = 100));
	l4[0] = (uint8_t)(c->local_port >> 8), l4[1] = (uint8_t)c->local_port;
	l4[2] = (uint8_t)(PKT_PEER_PORT >> 8), l4[3] = (uint8_t)PKT_PEER_PORT;
	l4[4] = (uint8_t)(t->our_isn >> 24), l4[5] = (uint8_t)(t->our_isn >> 16);
	l4[6] = (uint8_t)(t->our_isn >> 8), l4[7] = (uint8_t)t->our_isn;
	tcp_icmp_error(t->ts, TCP_ICMP_SOFT, EHOSTUNREACH, 0, PKT_LOCAL_IP, PKT_PEER_IP, l4,
		       sizeof(l4)); /* host unreachable */
	assert_int_equal(ctr(t)->cli_marked_unfriendly, 1);
	assert_int_equal(tcp_abort(c), 0);
	connect_data(t, 100, TCP_CONNECT_FASTOPEN);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 0));
	assert_int_equal(o.type, TFO_OPT_NONE);
	FINISH(t, 1);
}

/* Off by default: tcp_connect_data without the flag (and without the
 * config's client bit) is a plain connect with the data queued; with the
 * client bit it asks for a cookie. */
static void test_rfc7413_client_off_by_default(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t = pkt_start(NULL);
	struct tfo_opt o;
	struct tcp_conn *c;

	cache_cookie(t, 1460);
	c = connect_data(t, 100, 0);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 0));
	assert_int_equal(o.type, TFO_OPT_NONE);
	synack(t, 1, 1460, 0);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 100));
	assert_int_equal(ctr(t)->cli_syn_data_resent, 0);
	assert_int_equal(tcp_abort(c), 0);
	EXPECT(t, SEG(.flags = TH_RST));
	FINISH(t, 0);

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.fastopen = TCP_FASTOPEN_CLIENT;
	t = pkt_start(&cfg);
	connect_data(t, 100, 0);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN, .seq = 0, .len = 0));
	assert_int_equal(o.type, TFO_OPT_REQUEST);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc7413_4_1_cookie_request_then_syn_data),
		PKT_TEST(test_rfc7413_4_1_3_536_bytes_without_cached_mss),
		PKT_TEST(test_rfc7413_4_1_3_cached_mss_bounds_syn_data),
		PKT_TEST(test_rfc7413_synack_acks_only_syn_data_resent_at_once),
		PKT_TEST(test_rfc7413_synack_acks_part_rest_resent),
		PKT_TEST(test_rfc7413_4_1_3_syn_timeout_plain_syn_and_negative_cache),
		PKT_TEST(test_rfc7413_4_1_3_icmp_error_negative_cache),
		PKT_TEST(test_rfc7413_client_off_by_default),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
