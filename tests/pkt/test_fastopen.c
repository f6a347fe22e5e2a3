/* Packet scripts: TCP Fast Open, server side (RFC 7413 4.2, 5.1).
 *
 * The peer is a Fast Open client: its SYN asks for a cookie (empty option)
 * or carries one with data.  Cookies are checked against what the stack's
 * keys make for the peer's address (tfo_cookie_make), and every SYN-ACK's
 * option is read back from the wire. */
#include "tests/pkt/harness.h"

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>

#include "tcp/fastopen.h"

/* Helpers */

#define QLEN 4

static struct pkt_t *start_tfo(uint32_t qlen, uint32_t rotate_s)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.fastopen_rotate_s = rotate_s;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	if (qlen > 0)
		assert_int_equal(tcp_set_fastopen(t->ts, PKT_LOCAL_PORT, qlen), 0);
	return t;
}

/* MSS 1460, then the Fast Open option (kind 34, or 254 + 0xF989 when exp)
 * with cookie_len bytes of cookie (0: a request). */
static uint8_t build_tfo_opts(uint8_t *o, bool exp, const uint8_t *cookie, uint8_t cookie_len)
{
	uint8_t n = 0;

	o[n++] = 2, o[n++] = 4, o[n++] = 0x05, o[n++] = 0xb4;
	o[n++] = exp ? TFO_OPT_KIND_EXP : TFO_OPT_KIND;
	o[n++] = (uint8_t)((exp ? 4 : 2) + cookie_len);
	if (exp)
		o[n++] = 0xF9, o[n++] = 0x89;
	if (cookie_len > 0) /* a request has no cookie (NULL): UBSan */
		memcpy(o + n, cookie, cookie_len);
	return (uint8_t)(n + cookie_len);
}

static void cookie_for_peer(struct pkt_t *t, uint8_t out[TFO_SERVER_COOKIE_LEN])
{
	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, out);
}

static void assert_cookie(const struct tfo_opt *o, const uint8_t *want, bool exp)
{
	assert_int_equal(o->type, TFO_OPT_COOKIE);
	assert_int_equal(o->exp, exp);
	assert_int_equal(o->cookie_len, TFO_SERVER_COOKIE_LEN);
	assert_memory_equal(o->cookie, want, TFO_SERVER_COOKIE_LEN);
}

static const struct tfo_counters *ctr(struct pkt_t *t)
{
	return tcp_stack_tfo_stats(t->ts);
}

static uint32_t pending(struct pkt_t *t)
{
	return tcp_listener_lookup(t->ts, PKT_LOCAL_IP, PKT_LOCAL_PORT)->tfo.lst.pending;
}

/* SYN from sport with the cookie and len bytes of data (seq 1000). */
static void syn_with_cookie(struct pkt_t *t, uint32_t sport, const uint8_t *cookie,
			    uint8_t cookie_len, bool exp, int32_t len)
{
	uint8_t opts[40];
	uint8_t n = build_tfo_opts(opts, exp, cookie, cookie_len);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .sport = sport, .opts = opts, .optlen = n,
		      .len = len));
}

/* Cookie request and grant */

/* RFC 7413 4.2.1: an empty option asks for a cookie; the SYN-ACK carries
 * the MAC of the client's address (8 bytes, kind 34) and nothing else
 * changes in the handshake. */
static void test_rfc7413_4_2_1_cookie_request_gets_cookie(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t want[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	cookie_for_peer(t, want);
	syn_with_cookie(t, PKT_PEER_PORT, NULL, 0, false, 0);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460,
			      .len = 0));
	assert_cookie(&o, want, false);
	assert_int_equal(ctr(t)->srv_cookies_sent, 1);
	assert_int_equal(t->n_accept, 0);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* Off by default (RFC 7413 3): a listener without Fast Open ignores the
 * request and the data; a SYN without the option gets no option. */
static void test_rfc7413_off_by_default(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(0, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, NULL, 0, false, 0);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	assert_int_equal(o.type, TFO_OPT_NONE);
	syn_with_cookie(t, PKT_PEER_PORT + 1, cookie, sizeof(cookie), false, 100);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .dport = PKT_PEER_PORT + 1,
			      .seq = PKT_ANY));
	assert_int_equal(o.type, TFO_OPT_NONE);
	assert_int_equal(ctr(t)->srv_refused_disabled, 1);
	assert_int_equal(t->n_accept, 0);
	/* With Fast Open on, a SYN without the option is a plain SYN. */
	assert_int_equal(tcp_set_fastopen(t->ts, PKT_LOCAL_PORT, QLEN), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .sport = PKT_PEER_PORT + 2, .mss = 1460,
		      .len = 10));
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 5001, .dport = PKT_PEER_PORT + 2,
			      .seq = PKT_ANY));
	assert_int_equal(o.type, TFO_OPT_NONE);
	assert_int_equal(ctr(t)->srv_cookies_sent, 0);
	assert_int_equal(tcp_set_fastopen(t->ts, 81, QLEN), -ENOENT);
	FINISH(t, 3);
}

/* Valid cookie */

/* RFC 7413 4.2.2: valid cookie and data: the data is readable and the
 * connection accepted before the handshake completes, the SYN-ACK
 * acknowledges SYN and data, and the server's response follows the
 * SYN-ACK at once.  The final ACK brings no second accept. */
static void test_rfc7413_4_2_2_valid_cookie_data_accepted_at_once(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];
	struct tcp_conn_info info;
	struct tfo_opt o;

	t->auto_read = true;
	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 100);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1101, .len = 0));
	assert_cookie(&o, cookie, false);
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(t->n_readable, 1);
	assert_int_equal(t->rx_len, 100);
	assert_non_null(t->conn);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.state, TCP_SYN_RECEIVED);
	assert_true(info.syn_data_acked);
	assert_int_equal(ctr(t)->srv_accepted, 1);
	assert_int_equal(ctr(t)->srv_data_bytes, 100);
	assert_int_equal(pending(t), 1);
	assert_int_equal(STAT(t, passive_opens), 1);
	/* The response, before the client's ACK. */
	assert_int_equal(pkt_app_send(t, 50), 50);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 1101, .len = 50));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1101, .ack = 51));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(t->n_connected, 0);
	assert_int_equal(pending(t), 0);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.state, TCP_ESTABLISHED);
	assert_int_equal(info.snd_una - info.snd_nxt, 0);
	assert_int_equal(STAT(t, passive_opens), 1);
	FINISH(t, 1);
}

/* The client's ACK acknowledges only our SYN: the response sent during the
 * handshake is retransmitted by the RTO (it is not lost track of). */
static void test_rfc7413_handshake_ack_only_syn_response_retransmitted(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];

	t->auto_read = true;
	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 20);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1021));
	assert_int_equal(pkt_app_send(t, 30), 30);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 30));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1021, .ack = 1));
	EXPECT_NOTHING(t);
	/* RTO from the handshake's RTT sample (0 here): rto_min. */
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 30));
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1021, .ack = 31));
	ADVANCE(t, 5000);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* RFC 7413 4.2.2: the SYN-ACK timer retransmits a SYN-ACK with neither
 * data nor cookie; it still acknowledges the data taken. */
static void test_rfc7413_4_2_2_synack_retransmitted_without_cookie(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	t->auto_read = true;
	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 100);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1101));
	assert_int_equal(o.type, TFO_OPT_COOKIE);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 10));
	ADVANCE(t, 1000);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1101, .len = 0));
	assert_int_equal(o.type, TFO_OPT_NONE);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1101, .ack = 11));
	ADVANCE(t, 5000);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_accept, 1);
	FINISH(t, 1);
}

/* The SYN-ACK was lost and the client sends its SYN with data again: the
 * SYN-ACK goes again, the data is not queued twice, no second accept. */
static void test_rfc7413_duplicate_syn_with_data(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];

	t->auto_read = true;
	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 100);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1101));
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 100);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1101));
	assert_int_equal(STAT(t, dup_syn_rcvd), 1);
	assert_int_equal(t->rx_len, 100);
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(ctr(t)->srv_accepted, 1);
	assert_int_equal(pending(t), 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1101, .ack = 1));
	assert_int_equal(pending(t), 0);
	FINISH(t, 1);
}

/* Invalid cookie */

/* RFC 7413 4.2.2: an invalid cookie: only the SYN is acknowledged, the
 * data dropped, a valid cookie sent; the client sends the data again after
 * the handshake. */
static void test_rfc7413_4_2_2_invalid_cookie_acks_only_syn(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t want[TFO_SERVER_COOKIE_LEN], bad[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	t->auto_read = true;
	cookie_for_peer(t, want);
	memcpy(bad, want, sizeof(bad));
	bad[3] ^= 0x40;
	syn_with_cookie(t, PKT_PEER_PORT, bad, sizeof(bad), false, 100);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .len = 0));
	assert_cookie(&o, want, false);
	assert_int_equal(t->n_accept, 0);
	assert_int_equal(ctr(t)->srv_refused_bad_cookie, 1);
	assert_int_equal(ctr(t)->srv_accepted, 0);
	assert_int_equal(pending(t), 0);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	INJECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1001, .ack = 1, .len = 100));
	assert_int_equal(t->rx_len, 100);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1101));
	FINISH(t, 1);
}

/* Option forms */

/* RFC 6994: the experimental kind 254 with ExID 0xF989 (pre-RFC Linux)
 * is understood and answered in kind, for requests and cookies. */
static void test_rfc7413_experimental_option_answered_in_kind(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t want[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	t->auto_read = true;
	cookie_for_peer(t, want);
	syn_with_cookie(t, PKT_PEER_PORT, NULL, 0, true, 0);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	assert_cookie(&o, want, true);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	syn_with_cookie(t, PKT_PEER_PORT + 1, o.cookie, o.cookie_len, true, 64);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1065, .dport = PKT_PEER_PORT + 1,
			      .seq = PKT_ANY));
	assert_cookie(&o, want, true);
	assert_int_equal(t->rx_len, 64);
	assert_int_equal(ctr(t)->srv_accepted, 1);
	FINISH(t, 1);
}

/* RFC 7413 4.1.1: cookie lengths other than 4..16 even are ignored: the
 * SYN is a plain SYN (no cookie back, data not acknowledged).  A well-formed
 * cookie of another length than ours is simply invalid. */
static void test_rfc7413_4_1_1_odd_cookie_lengths_ignored(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	static const uint8_t junk[18] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
	static const uint8_t bad_len[] = { 2, 5, 18 };
	uint8_t want[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	cookie_for_peer(t, want);
	for (unsigned i = 0; i < RTE_DIM(bad_len); i++) {
		syn_with_cookie(t, PKT_PEER_PORT + i, junk, bad_len[i], false, 50);
		o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .seq = PKT_ANY,
				      .dport = PKT_PEER_PORT + i));
		assert_int_equal(o.type, TFO_OPT_NONE);
	}
	assert_int_equal(ctr(t)->srv_refused_bad_cookie, 0);
	assert_int_equal(ctr(t)->srv_cookies_sent, 0);
	/* 16 bytes: legal length, wrong MAC: a fresh cookie comes back. */
	syn_with_cookie(t, PKT_PEER_PORT + 3, junk, 16, false, 50);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .seq = PKT_ANY,
			      .dport = PKT_PEER_PORT + 3));
	assert_cookie(&o, want, false);
	assert_int_equal(ctr(t)->srv_refused_bad_cookie, 1);
	assert_int_equal(t->n_accept, 0);
	FINISH(t, 4);
}

/* Admission */

/* RFC 7413 5.1: at most qlen pending Fast Open children; past that, SYN
 * data falls back to the 3WHS (no cookie, data not acknowledged).  A
 * completed handshake frees a slot. */
static void test_rfc7413_5_1_qlen_exhausted(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(1, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1011));
	assert_int_equal(pending(t), 1);
	syn_with_cookie(t, PKT_PEER_PORT + 1, cookie, sizeof(cookie), false, 10);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .seq = PKT_ANY,
			      .dport = PKT_PEER_PORT + 1));
	assert_int_equal(o.type, TFO_OPT_NONE);
	assert_int_equal(ctr(t)->srv_refused_qlen, 1);
	assert_int_equal(t->n_accept, 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1011, .ack = 1));
	assert_int_equal(pending(t), 0);
	syn_with_cookie(t, PKT_PEER_PORT + 2, cookie, sizeof(cookie), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011, .seq = PKT_ANY,
		      .dport = PKT_PEER_PORT + 2));
	assert_int_equal(ctr(t)->srv_accepted, 2);
	assert_int_equal(t->n_accept, 2);
	FINISH(t, 3);
}

/* A child reset during the handshake returns its slot and is reported to
 * the application, which already has it. */
static void test_rfc7413_5_1_reset_child_returns_slot(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(1, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];

	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011));
	assert_int_equal(pending(t), 1);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1011));
	assert_int_equal(pending(t), 0);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNRESET);
	FINISH(t, 0);
}

/* Under a SYN flood (the listener answered with SYN cookies in the last
 * few seconds, tcp_listener_syncookies_active) Fast Open is off: no data
 * taken, no cookie granted, even for a valid cookie.  The flood is real:
 * backlog 1, one embryo, one SYN answered with a cookie; the embryo is then
 * reset so the next SYN gets a TCB again while cookies are still recent. */
static void test_rfc7413_syn_flood_turns_tfo_off(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.fastopen_rotate_s = 0;
	cfg.backlog = 1;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	assert_int_equal(tcp_set_fastopen(t->ts, PKT_LOCAL_PORT, QLEN), 0);
	cookie_for_peer(t, cookie);
	/* The embryo that fills the backlog, then a SYN answered statelessly. */
	INJECT(t, SEG(.flags = TH_SYN, .seq = 5000, .sport = PKT_PEER_PORT + 1, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = PKT_ANY, .ack = 5001,
		      .dport = PKT_PEER_PORT + 1));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 6000, .sport = PKT_PEER_PORT + 2, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = PKT_ANY, .ack = 6001,
		      .dport = PKT_PEER_PORT + 2));
	assert_int_equal(tcp_stack_stats(t->ts)->syncookies_sent, 1);
	INJECT(t, SEG(.flags = TH_RST, .seq = 5001, .sport = PKT_PEER_PORT + 1));
	/* A valid cookie with data while cookies are recent: SYN only. */
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 10);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .seq = PKT_ANY));
	assert_int_equal(o.type, TFO_OPT_NONE);
	assert_int_equal(ctr(t)->srv_refused_syn_flood, 1);
	assert_int_equal(t->n_accept, 0);
	assert_int_equal(ctr(t)->srv_cookies_sent, 0);
	FINISH(t, 1);
}

/* Keys */

/* RFC 7413 4.1.2: the secret rotates on the engine's timer; a cookie of
 * the previous key is still accepted (and replaced by a fresh one), a
 * cookie two rotations old is not. */
static void test_rfc7413_4_1_2_key_rotation_old_key_valid(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 10);
	uint8_t old[TFO_SERVER_COOKIE_LEN], fresh[TFO_SERVER_COOKIE_LEN];
	struct tfo_opt o;

	cookie_for_peer(t, old);
	ADVANCE(t, 10000);
	assert_int_equal(ctr(t)->key_rotations, 1);
	cookie_for_peer(t, fresh);
	assert_memory_not_equal(old, fresh, sizeof(old));
	syn_with_cookie(t, PKT_PEER_PORT, old, sizeof(old), false, 10);
	o = EXPECT_TFO(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011));
	assert_cookie(&o, fresh, false);
	assert_int_equal(ctr(t)->srv_accepted, 1);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1011, .ack = 1));
	ADVANCE(t, 10000);
	assert_int_equal(ctr(t)->key_rotations, 2);
	syn_with_cookie(t, PKT_PEER_PORT + 1, old, sizeof(old), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001, .seq = PKT_ANY,
		      .dport = PKT_PEER_PORT + 1));
	assert_int_equal(ctr(t)->srv_refused_bad_cookie, 1);
	FINISH(t, 2);
}

/* A configured key (like Linux's tcp_fastopen_key) makes the cookies and
 * is never rotated away; its backup is accepted. */
static void test_rfc7413_configured_keys(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct tfo_keys k = { 0 };
	uint8_t c_primary[TFO_SERVER_COOKIE_LEN], c_backup[TFO_SERVER_COOKIE_LEN];
	char err[128];
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.fastopen = TCP_FASTOPEN_SERVER;
	cfg.fastopen_rotate_s = 1;
	assert_int_equal(tfo_keys_parse("00112233-44556677-8899aabb-ccddeeff,"
					"01010101-02020202-03030303-04040404", &k, err,
					sizeof(err)), 0);
	cfg.fastopen_key_set = cfg.fastopen_key_backup = true;
	memcpy(cfg.fastopen_key[0], k.primary, 16);
	memcpy(cfg.fastopen_key[1], k.backup, 16);
	tfo_cookie_make(&k, PKT_PEER_IP, PKT_LOCAL_IP, c_primary);
	memcpy(k.primary, k.backup, 16);
	tfo_cookie_make(&k, PKT_PEER_IP, PKT_LOCAL_IP, c_backup);
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0); /* [tcp] fastopen = server: on */
	ADVANCE(t, 3000);
	assert_int_equal(ctr(t)->key_rotations, 0);
	syn_with_cookie(t, PKT_PEER_PORT, c_backup, sizeof(c_backup), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011));
	syn_with_cookie(t, PKT_PEER_PORT + 1, c_primary, sizeof(c_primary), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011, .seq = PKT_ANY,
		      .dport = PKT_PEER_PORT + 1));
	assert_int_equal(ctr(t)->srv_accepted, 2);
	FINISH(t, 2);
}

/* tcp_unlisten resets embryos but leaves an accepted child alone. */
static void test_rfc7413_unlisten_keeps_accepted_child(void **state)
{
	(void)state;
	struct pkt_t *t = start_tfo(QLEN, 0);
	uint8_t cookie[TFO_SERVER_COOKIE_LEN];

	cookie_for_peer(t, cookie);
	syn_with_cookie(t, PKT_PEER_PORT, cookie, sizeof(cookie), false, 10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1011));
	assert_int_equal(tcp_unlisten(t->ts, PKT_LOCAL_PORT), 0);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1011, .ack = 1));
	EXPECT_NOTHING(t);
	assert_non_null(t->conn);
	assert_int_equal(tcp_close(t->conn), 0);
	t->conn = NULL;
	EXPECT(t, SEG(.flags = TH_RST));
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_rfc7413_4_2_1_cookie_request_gets_cookie),
		PKT_TEST(test_rfc7413_off_by_default),
		PKT_TEST(test_rfc7413_4_2_2_valid_cookie_data_accepted_at_once),
		PKT_TEST(test_rfc7413_handshake_ack_only_syn_response_retransmitted),
		PKT_TEST(test_rfc7413_4_2_2_synack_retransmitted_without_cookie),
		PKT_TEST(test_rfc7413_duplicate_syn_with_data),
		PKT_TEST(test_rfc7413_4_2_2_invalid_cookie_acks_only_syn),
		PKT_TEST(test_rfc7413_experimental_option_answered_in_kind),
		PKT_TEST(test_rfc7413_4_1_1_odd_cookie_lengths_ignored),
		PKT_TEST(test_rfc7413_5_1_qlen_exhausted),
		PKT_TEST(test_rfc7413_5_1_reset_child_returns_slot),
		PKT_TEST(test_rfc7413_syn_flood_turns_tfo_off),
		PKT_TEST(test_rfc7413_4_1_2_key_rotation_old_key_valid),
		PKT_TEST(test_rfc7413_configured_keys),
		PKT_TEST(test_rfc7413_unlisten_keeps_accepted_child),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
