/* Packet scripts: RFC 5961 5.2 ACK range checks and the section 7
 * challenge-ACK rate limit ([tcp] challenge_ack_limit, per engine). */
#include "tests/pkt/harness.h"

#define SECOND_PORT 40001u

static struct pkt_t *start_limit(uint32_t limit)
{
	struct tcp_config cfg;

	pkt_config_defaults(&cfg);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.challenge_ack_limit = limit;
	cfg.challenge_ack_jitter = false; /* exact budgets in these scripts */
	return pkt_start(&cfg);
}

/* A second connection from SECOND_PORT (peer ISN 9000); returns our ISN
 * for it. */
static uint32_t second_conn(struct pkt_t *t)
{
	struct rte_mbuf *m;
	uint32_t isn;

	INJECT(t, SEG(.flags = TH_SYN, .seq = 9000, .sport = SECOND_PORT, .mss = 1460));
	m = EXPECT_KEEP(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 9001, .dport = SECOND_PORT));
	isn = rte_be_to_cpu_32(rte_pktmbuf_mtod(m, struct rte_tcp_hdr *)->sent_seq);
	rte_pktmbuf_free(m);
	INJECT(t, SEG(.seq = 9001, .ack = isn + 1, .abs = true, .sport = SECOND_PORT));
	assert_int_equal(t->n_accept, 2);
	return isn;
}

/* RFC 5961 7: once challenge_ack_limit challenge ACKs went out in a
 * second, RSTs and SYNs that would draw one (on any connection of the
 * engine) are dropped without a reply and counted, until the next second
 * of the (virtual) clock. */
static void test_challenge_ack_limit_per_second(void **state)
{
	(void)state;
	struct pkt_t *t = start_limit(3);
	uint32_t isn2;

	ESTABLISH(t);
	isn2 = second_conn(t);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	INJECT(t, SEG(.flags = TH_RST, .seq = 9500, .sport = SECOND_PORT));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = isn2 + 1, .abs = true, .ack = 9001,
		      .dport = SECOND_PORT));
	assert_int_equal(STAT(t, challenge_acks), 3);
	/* The limit is reached: nothing more this second, on either. */
	INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1500));
	INJECT(t, SEG(.flags = TH_RST, .seq = 9500, .sport = SECOND_PORT));
	ADVANCE(t, 999);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, challenge_acks), 3);
	assert_int_equal(STAT(t, challenge_acks_suppressed), 4);
	assert_int_equal(STAT(t, drop_rst_challenged), 5);
	assert_int_equal(STAT(t, drop_syn_in_window), 2);
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
	/* The next second: challenge ACKs again. */
	ADVANCE(t, 1);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	assert_int_equal(STAT(t, challenge_acks), 4);
	/* An exact RST is not challenged: it still resets. */
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	assert_int_equal(t->n_closed, 1);
	FINISH(t, 1);
}

/* Challenge ACKs one second of the virtual clock lets out for 20 in-window
 * RSTs (each answered one is checked segment by segment). */
static unsigned challenge_acks_in_a_second(struct pkt_t *t)
{
	uint64_t before = STAT(t, challenge_acks);

	for (int i = 0; i < 20; i++) {
		uint64_t sent = STAT(t, challenge_acks);

		INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
		if (STAT(t, challenge_acks) != sent)
			EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
		else
			EXPECT_NOTHING(t);
	}
	ADVANCE(t, 1000);
	return (unsigned)(STAT(t, challenge_acks) - before);
}

/* RFC 5961 10 (CVE-2016-5696): with challenge_ack_jitter (the default) each
 * second's budget is drawn from [limit/2, limit*3/2), so an attacker cannot
 * count it out; over 16 seconds the budgets stay in range and are not all
 * the same (chance of that by luck: 8^-15). */
static void test_challenge_ack_budget_jittered(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;
	unsigned first, got, differs = 0;

	pkt_config_defaults(&cfg);
	assert_true(cfg.challenge_ack_jitter);
	cfg.wscale = cfg.sack = cfg.timestamps = false;
	cfg.challenge_ack_limit = 8;
	t = pkt_start(&cfg);
	ESTABLISH(t);
	first = challenge_acks_in_a_second(t);
	for (int sec = 0; sec < 16; sec++) {
		got = sec == 0 ? first : challenge_acks_in_a_second(t);
		assert_in_range(got, 4, 11);
		differs += got != first;
	}
	assert_true(differs > 0);
	assert_int_equal(t->conn->state, TCP_ESTABLISHED);
	FINISH(t, 1);
}

/* RFC 5961 5.2 / RFC 9293 3.10.7.4: SEG.ACK > SND.NXT (data never sent):
 * dropped with a challenge ACK, which the limit covers too. */
static void test_ack_of_unsent_data_is_challenge_limited(void **state)
{
	(void)state;
	struct pkt_t *t = start_limit(1);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 50, .len = 10));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	INJECT(t, SEG(.seq = 1001, .ack = 50, .len = 10));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_bad_ack), 2);
	assert_int_equal(STAT(t, challenge_acks), 1);
	assert_int_equal(STAT(t, challenge_acks_suppressed), 1);
	assert_int_equal(t->n_readable, 0); /* the text went with the segment */
	FINISH(t, 1);
}

/* Passive open with the peer offering a 1000-byte window throughout, so
 * MAX.SND.WND is 1000; 2500 bytes sent and acknowledged. */
static void small_window_transfer(struct pkt_t *t)
{
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .win = 1000));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 1000));
	assert_int_equal(pkt_app_send(t, 2500), 2500);
	EXPECT(t, SEG(.seq = 1, .len = 1000));
	INJECT(t, SEG(.seq = 1001, .ack = 1001, .win = 1000));
	EXPECT(t, SEG(.seq = 1001, .len = 1000));
	INJECT(t, SEG(.seq = 1001, .ack = 2001, .win = 1000));
	EXPECT(t, SEG(.seq = 2001, .len = 500));
	INJECT(t, SEG(.seq = 1001, .ack = 2501, .win = 1000));
	assert_int_equal(t->conn->snd_una, t->our_isn + 2501);
}

/* RFC 5961 5.2: SEG.ACK below SND.UNA - MAX.SND.WND is dropped (its text
 * too) with a challenge ACK; at the bound it is an old duplicate ACK and
 * the text is taken (RFC 9293 3.10.7.4). */
static void test_ack_older_than_max_window_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = start_limit(1000);

	small_window_transfer(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1500, .len = 10, .win = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2501, .ack = 1001, .len = 0));
	assert_int_equal(STAT(t, drop_ack_too_old), 1);
	assert_int_equal(STAT(t, challenge_acks), 1);
	assert_int_equal(t->n_readable, 0);
	INJECT(t, SEG(.seq = 1001, .ack = 1501, .len = 10, .win = 1000));
	assert_int_equal(t->n_readable, 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 10);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2501, .ack = 1011, .len = 0));
	assert_int_equal(STAT(t, drop_ack_too_old), 1);
	assert_int_equal(t->conn->snd_una, t->our_isn + 2501);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_challenge_ack_limit_per_second),
		PKT_TEST(test_challenge_ack_budget_jittered),
		PKT_TEST(test_ack_of_unsent_data_is_challenge_limited),
		PKT_TEST(test_ack_older_than_max_window_dropped),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
