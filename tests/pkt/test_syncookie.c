/* Packet scripts: SYN cookies (tcp/syncookie.c) for a listener whose SYN
 * backlog is full, or for every SYN with [tcp] syncookies = always. */
#include "tests/pkt/harness.h"

#include "tcp/syncookie.h"

#define FILLER_PORT 40001u
#define OUR_WSCALE 7 /* the default rcvbuf_max (4 MiB) needs a shift of 7 */

static struct pkt_t *start_cookies(unsigned backlog, enum tcp_syncookies_mode mode,
				    bool timestamps)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg); /* window scale and SACK on */
	cfg.timestamps = timestamps;
	cfg.backlog = backlog;
	cfg.syncookies = mode;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	return t;
}

/* Our sequence numbers and the peer's are counted afresh from the next
 * SYN and SYN-ACK (the harness learns ISNs from the first it sees). */
static void renumber(struct pkt_t *t)
{
	t->isn_known = false;
	t->our_max = 0;
	t->peer_isn_known = false;
}

/* One half-open connection from FILLER_PORT fills a backlog of 1. */
static void fill_backlog(struct pkt_t *t)
{
	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .sport = FILLER_PORT, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 7001, .dport = FILLER_PORT));
	assert_int_equal(tcp_conn_count(t->ts), 1);
	renumber(t);
}

/* The TSval a cookie SYN-ACK must carry: our millisecond clock with its
 * low 6 bits replaced by the options, moved back 64 ms when that would be
 * ahead of the clock (written here independently of syncookie.c). */
static uint32_t cookie_tsval(const struct pkt_t *t, uint32_t bits)
{
	uint32_t now = pkt_ts_now(t), v = (now & ~63u) | bits;

	if ((int32_t)(v - now) > 0)
		v -= 64;
	return v;
}

static struct tcp_conn *listener(struct pkt_t *t)
{
	return tcp_listener_lookup(t->ts, PKT_LOCAL_IP, PKT_LOCAL_PORT);
}

/* Backlog full: the SYN-ACK comes from no TCB, carries the peer's window
 * shift (7) and SACK-permitted in the low bits of TSval, and the ACK that
 * returns the cookie makes an ESTABLISHED connection with all of them. */
static void test_backlog_full_cookie_handshake_with_options(void **state)
{
	(void)state;
	struct pkt_t *t = start_cookies(1, TCP_SYNCOOKIES_AUTO, true);
	/* The peer's 1460 as the family's cookie table has it, less the
	 * timestamps' 12 bytes. */
	uint32_t mss = (pkt_family() == 6 ? 1440 : 1460) - 12;
	uint32_t tsv;

	fill_backlog(t);
	assert_false(tcp_listener_syncookies_active(listener(t)));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ws = 7, .sack_perm = 1,
		      .ts_val = 5000));
	tsv = cookie_tsval(t, 7 | 0x10);
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460,
		      .ws = OUR_WSCALE, .sack_perm = 1, .ts_val = tsv, .ts_ecr = 5000));
	assert_int_equal(tcp_conn_count(t->ts), 1); /* no TCB for the cookie */
	assert_int_equal(STAT(t, syncookies_sent), 1);
	assert_int_equal(STAT(t, drop_backlog_full), 0);
	assert_true(tcp_listener_syncookies_active(listener(t)));

	ADVANCE(t, 10);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1000, .ts_val = 5010, .ts_ecr = tsv));
	assert_int_equal(t->n_accept, 1);
	assert_non_null(t->conn);
	assert_int_equal(tcp_conn_count(t->ts), 2);
	assert_int_equal(STAT(t, syncookies_ok), 1);
	assert_int_equal(STAT(t, passive_opens), 1);
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
	assert_true(t->conn->ws_ok && t->conn->sack_ok && t->conn->ts_ok);
	assert_int_equal(t->conn->snd_wscale, 7);
	assert_int_equal(t->conn->rcv_wscale, OUR_WSCALE);
	assert_int_equal(t->conn->snd_wnd, 1000u << 7);
	assert_int_equal(t->conn->mss, mss);

	/* Data both ways with the negotiated options. */
	INJECT(t, SEG(.seq = 1001, .len = 100, .win = 1000, .ts_val = 5020));
	APP_READ(t);
	assert_int_equal(t->rx_len, 100);
	/* Reading opens the window to the scaled receive buffer: an update. */
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1101, .len = 0, .win = 262144 >> OUR_WSCALE));
	assert_int_equal(pkt_app_send(t, mss + 10), mss + 10);
	EXPECT(t, SEG(.seq = 1, .ack = 1101, .len = (int32_t)mss, .ts_val = pkt_ts_now(t),
		      .ts_ecr = 5020));
	EXPECT(t, SEG(.seq = mss + 1, .len = 10, .ts_ecr = 5020));
	INJECT(t, SEG(.seq = 1101, .ack = mss + 11, .win = 1000, .ts_val = 5030));
	assert_int_equal(t->conn->snd_una, t->our_isn + mss + 11);
	ADVANCE(t, TCP_SYNCOOKIE_ACTIVE_S * 1000);
	assert_false(tcp_listener_syncookies_active(listener(t)));
	/* The half-open filler retransmitted its SYN-ACK meanwhile (1 s, 3 s). */
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 7001, .dport = FILLER_PORT));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 7001, .dport = FILLER_PORT));
	FINISH(t, 2);
}

/* Data on the cookie's ACK: accepted, then readable, then acknowledged. */
static void test_cookie_ack_carrying_data(void **state)
{
	(void)state;
	struct pkt_t *t = start_cookies(1, TCP_SYNCOOKIES_AUTO, false);

	fill_backlog(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .ts_val = PKT_ABSENT));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 200));
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(t->n_readable, 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 200);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1201));
	FINISH(t, 2);
}

/* A wrong cookie (ACK number, the peer's ISN, or the TSecr bits) gets what
 * Linux gives: <SEQ=SEG.ACK><CTL=RST>, counted; the right one still works. */
static void test_wrong_cookie_gets_rst(void **state)
{
	(void)state;
	struct pkt_t *t = start_cookies(1, TCP_SYNCOOKIES_AUTO, true);
	uint32_t tsv;

	fill_backlog(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ts_val = 5000));
	tsv = cookie_tsval(t, 0xf); /* no window scale, no SACK */
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .ts_val = tsv,
		      .ws = PKT_ABSENT, .sack_perm = 0));
	INJECT(t, SEG(.seq = 1001, .ack = 2, .ts_val = 5001, .ts_ecr = tsv));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 2, .len = 0));
	INJECT(t, SEG(.seq = 1002, .ack = 1, .ts_val = 5001, .ts_ecr = tsv));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1, .len = 0));
	/* Bit 5 (ECN in Linux) is never set by us. */
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 5001, .ts_ecr = tsv | 0x20));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 1, .len = 0));
	assert_int_equal(STAT(t, syncookies_failed), 3);
	assert_int_equal(STAT(t, syncookies_ok), 0);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	assert_int_equal(t->n_accept, 0);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .ts_val = 5001, .ts_ecr = tsv));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_accept, 1);
	assert_false(t->conn->ws_ok || t->conn->sack_ok);
	assert_true(t->conn->ts_ok);
	FINISH(t, 2);
}

/* No cookie sent lately: an ACK to the listener is not hashed, just reset. */
static void test_ack_without_recent_cookies_plain_rst(void **state)
{
	(void)state;
	struct pkt_t *t = start_cookies(1, TCP_SYNCOOKIES_AUTO, true);

	INJECT(t, SEG(.seq = 1001, .ack = 12345, .abs = true));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 12345, .abs = true));
	assert_int_equal(STAT(t, drop_listen_bad), 1);
	assert_int_equal(STAT(t, syncookies_failed), 0);
	FINISH(t, 0);
}

/* A cookie is good in its own counter period and the next one (64 s
 * each); two periods later it is refused. */
static void test_cookie_valid_one_period_refused_after_two(void **state)
{
	(void)state;
	struct pkt_t *t = start_cookies(16, TCP_SYNCOOKIES_ALWAYS, false);
	struct rte_mbuf *m;
	uint32_t cookie2;

	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	assert_int_equal(tcp_conn_count(t->ts), 0); /* always: never an embryo */
	ADVANCE(t, TCP_SYNCOOKIE_PERIOD_S * 1000);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(STAT(t, syncookies_ok), 1);

	INJECT(t, SEG(.flags = TH_SYN, .seq = 7000, .sport = FILLER_PORT, .mss = 1460));
	m = EXPECT_KEEP(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 7001, .dport = FILLER_PORT));
	cookie2 = rte_be_to_cpu_32(rte_pktmbuf_mtod(m, struct rte_tcp_hdr *)->sent_seq);
	rte_pktmbuf_free(m);
	ADVANCE(t, 2 * TCP_SYNCOOKIE_PERIOD_S * 1000);
	INJECT(t, SEG(.seq = 7001, .ack = cookie2 + 1, .abs = true, .sport = FILLER_PORT));
	EXPECT(t, SEG(.flags = TH_RST, .seq = cookie2 + 1, .abs = true, .dport = FILLER_PORT));
	assert_int_equal(STAT(t, syncookies_failed), 1);
	assert_int_equal(t->n_accept, 1);
	FINISH(t, 1);
}

/* Without timestamps on the SYN, window scale and SACK are not offered
 * (nothing could remember them): the cookie carries the MSS only, rounded
 * down to its family's table (1400 -> 1300, 1220 over IPv6). */
static void test_no_timestamps_mss_only(void **state)
{
	(void)state;
	struct pkt_t *t = start_cookies(1, TCP_SYNCOOKIES_AUTO, true);
	uint32_t mss = pkt_family() == 6 ? 1220 : 1300;

	fill_backlog(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1400, .ws = 7, .sack_perm = 1));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460,
		      .ws = PKT_ABSENT, .sack_perm = 0, .ts_val = PKT_ABSENT));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	assert_int_equal(t->n_accept, 1);
	assert_false(t->conn->ws_ok || t->conn->sack_ok || t->conn->ts_ok);
	assert_int_equal(t->conn->mss, mss);
	assert_int_equal(pkt_app_send(t, 1400), 1400);
	EXPECT(t, SEG(.seq = 1, .len = (int32_t)mss, .ts_val = PKT_ABSENT));
	EXPECT(t, SEG(.seq = 1 + mss, .len = (int32_t)(1400 - mss)));
	INJECT(t, SEG(.seq = 1001, .ack = 1401));
	FINISH(t, 2);
}

/* A valid cookie when the engine is at max_conns: dropped and counted
 * (like a SYN then), no RST, no connection. */
static void test_cookie_ack_at_max_conns_dropped(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.timestamps = false;
	cfg.backlog = 1;
	cfg.max_conns = 1;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	fill_backlog(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_no_tcb), 1);
	assert_int_equal(STAT(t, syncookies_ok), 0);
	assert_int_equal(t->n_accept, 0);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_backlog_full_cookie_handshake_with_options),
		PKT_TEST(test_cookie_ack_carrying_data),
		PKT_TEST(test_wrong_cookie_gets_rst),
		PKT_TEST(test_ack_without_recent_cookies_plain_rst),
		PKT_TEST(test_cookie_valid_one_period_refused_after_two),
		PKT_TEST(test_no_timestamps_mss_only),
		PKT_TEST(test_cookie_ack_at_max_conns_dropped),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
