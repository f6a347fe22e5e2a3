/* Packet scripts: urgent data (RFC 9293 3.8.5, MUST-30..33, 62, 66;
 * tcp/urgent.c) with Linux's semantics for the application: MSG_OOB's last
 * byte is urgent and the pointer names the octet after it; a received
 * urgent byte leaves the stream for recv(MSG_OOB) unless SO_OOBINLINE, a
 * read stops at its mark, and the pointer is taken even through a zero
 * window. */
#include "tests/pkt/harness.h"

#include <errno.h>
#include <string.h>

/* The flags of the next segment we sent, which must match s (kept to read
 * the URG bit whatever else, PSH say, rides along). */
static uint8_t expect_flags(struct pkt_t *t, struct pkt_seg s, int line)
{
	struct rte_mbuf *m = pkt_expect_keep(t, s, __FILE__, line);
	uint8_t flags = rte_pktmbuf_mtod(m, const struct rte_tcp_hdr *)->tcp_flags;

	rte_pktmbuf_free(m);
	return flags;
}

#define EXPECT_FLAGS(t, s) expect_flags((t), (s), __LINE__)

/* Whatever ACKs our side owes by now (their number is the ACK policy's). */
static void drain_acks(struct pkt_t *t, uint32_t ack)
{
	ADVANCE(t, 500);
	assert_true(t->ncap > 0);
	while (t->ncap > 0)
		EXPECT(t, SEG(.flags = TH_ACK, .len = 0));
	(void)ack;
}

/* MUST-30, MUST-62: the last byte of an MSG_OOB send is urgent, and the
 * pointer names the octet after it (as Linux sends it, RFC 6093); once
 * that is acknowledged, segments carry no URG. */
static void test_send_oob_pointer_after_last_byte(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_send_oob(t->conn, "abc", 3), 3);
	assert_true(EXPECT_FLAGS(t, SEG(.seq = 1, .len = 3, .data = "abc", .urp = 3)) & TH_URG);
	assert_int_equal(STAT(t, urg_sent), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 4));
	assert_int_equal(tcp_send(t->conn, "d", 1), 1);
	assert_false(EXPECT_FLAGS(t, SEG(.seq = 4, .len = 1, .data = "d", .urp = 0)) & TH_URG);
	INJECT(t, SEG(.seq = 1001, .ack = 5));
	FINISH(t, 1);
}

/* MUST-31: urgent data of any length: the pointer covers everything queued
 * before the urgent byte, each segment numbered below SND.UP carrying it
 * relative to its own sequence number; a retransmission too. */
static void test_send_oob_pointer_spans_segments(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	static char buf[2001];

	for (unsigned i = 0; i < 2000; i++)
		buf[i] = (char)pkt_pattern(i);
	buf[2000] = '!';
	ESTABLISH(t);
	assert_int_equal(tcp_send_oob(t->conn, buf, sizeof(buf)), 2001);
	assert_true(EXPECT_FLAGS(t, SEG(.seq = 1, .len = 1460, .data = buf, .urp = 2001)) & TH_URG);
	assert_true(EXPECT_FLAGS(t, SEG(.seq = 1461, .len = 541, .data = buf + 1460, .urp = 541)) &
		    TH_URG);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1000); /* RTO: the first segment again, still urgent */
	assert_true(EXPECT_FLAGS(t, SEG(.seq = 1, .len = 1460, .data = buf, .urp = 2001)) & TH_URG);
	while (t->ncap > 0)
		EXPECT(t, SEG(.len = PKT_ANY)); /* whatever else the RTO resent */
	INJECT(t, SEG(.seq = 1001, .ack = 2002));
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* MUST-30, MUST-33: the peer's urgent byte (the octet before its pointer)
 * leaves the stream for recv(MSG_OOB), once; a read or a peek stops at
 * its mark, where SIOCATMARK is true. */
static void test_recv_urgent_byte_out_of_band(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	char buf[32];

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_ACK | TH_URG, .seq = 1001, .ack = 1, .len = 6,
		      .data = "hello!", .urp = 6));
	INJECT(t, SEG(.seq = 1007, .ack = 1, .len = 3, .data = "abc"));
	assert_int_equal(STAT(t, urg_rcvd), 1);
	assert_int_equal(STAT(t, urg_pulled), 1);
	assert_true(tcp_urg_waiting(t->conn));
	assert_false(tcp_urg_at_mark(t->conn));
	/* a peek stops at the mark too (Linux's tcp_recvmsg, MSG_PEEK or not) */
	assert_int_equal(tcp_recv_peek(t->conn, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), 5); /* stops at the mark */
	assert_memory_equal(buf, "hello", 5);
	assert_true(tcp_urg_at_mark(t->conn));
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, true), 1); /* peek */
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), 1);
	assert_int_equal(buf[0], '!');
	assert_false(tcp_urg_waiting(t->conn));
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), -EINVAL); /* read already */
	assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_false(tcp_urg_at_mark(t->conn));
	drain_acks(t, 1010);
	FINISH(t, 1);
}

/* The urgent byte is taken out wherever it lies in its segment: in the
 * middle (the segment split around it), first, or alone (its segment
 * gone); each time the stream reads on without it. */
static void test_recv_urgent_byte_anywhere_in_segment(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	static const struct {
		const char *data;
		int urp;
		const char *before, *after;
	} cases[] = { { "ab!cd", 3, "ab", "cd" }, { "!ef", 1, "", "ef" }, { "?", 1, "", "" } };
	uint32_t seq = 1001;
	char buf[16];

	ESTABLISH(t);
	for (unsigned i = 0; i < RTE_DIM(cases); i++) {
		size_t len = strlen(cases[i].data), nb = strlen(cases[i].before);
		size_t na = strlen(cases[i].after);

		INJECT(t, SEG(.flags = TH_ACK | TH_URG, .seq = seq, .ack = 1, .len = (int)len,
			      .data = cases[i].data, .urp = cases[i].urp));
		seq += (uint32_t)len;
		if (nb > 0) {
			assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), nb);
			assert_memory_equal(buf, cases[i].before, nb);
		}
		assert_true(tcp_urg_at_mark(t->conn));
		assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), 1);
		assert_int_equal(buf[0], cases[i].data[cases[i].urp - 1]);
		if (na > 0) {
			assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), na);
			assert_memory_equal(buf, cases[i].after, na);
		} else {
			assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), -EAGAIN);
		}
	}
	assert_int_equal(STAT(t, urg_pulled), 3);
	assert_int_equal(STAT(t, urg_inline_no_mbuf), 0);
	drain_acks(t, seq);
	FINISH(t, 1);
}

/* Linux's tcp_recv_urg: -EINVAL with no urgent data, -EAGAIN when the
 * pointer came ahead of its byte (MUST-31: any distance), which a later
 * segment brings. */
static void test_recv_urg_pointer_ahead_of_byte(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	char buf[8];

	ESTABLISH(t);
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), -EINVAL);
	INJECT(t, SEG(.flags = TH_ACK | TH_URG, .seq = 1001, .ack = 1, .len = 4,
		      .data = "abcd", .urp = 6)); /* the urgent byte is at 1006 */
	assert_true(t->n_readable > 0);
	assert_false(tcp_urg_waiting(t->conn));
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), -EAGAIN);
	INJECT(t, SEG(.seq = 1005, .ack = 1, .len = 2, .data = "eU"));
	assert_true(tcp_urg_waiting(t->conn));
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), 1);
	assert_int_equal(buf[0], 'U');
	assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), 5);
	assert_memory_equal(buf, "abcde", 5);
	drain_acks(t, 1007);
	FINISH(t, 1);
}

/* SO_OOBINLINE: the urgent byte stays in the stream; recv(MSG_OOB) is
 * EINVAL; the read still stops at the mark. */
static void test_oobinline_keeps_byte_in_stream(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_opts o;
	char buf[32];

	ESTABLISH(t);
	tcp_conn_get_opts(t->conn, &o);
	o.oobinline = true;
	assert_int_equal(tcp_conn_set_opts(t->conn, &o), 0);
	INJECT(t, SEG(.flags = TH_ACK | TH_URG, .seq = 1001, .ack = 1, .len = 6,
		      .data = "hello!", .urp = 6));
	assert_int_equal(STAT(t, urg_pulled), 0);
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), -EINVAL);
	assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), 5);
	assert_true(tcp_urg_at_mark(t->conn));
	assert_int_equal(tcp_recv(t->conn, buf, sizeof(buf)), 1);
	assert_int_equal(buf[0], '!');
	drain_acks(t, 1007);
	FINISH(t, 1);
}

/* MUST-66 (and MUST-32): with our window closed the segment's text is cut,
 * yet its urgent pointer is taken and its byte kept; the application is
 * told at once (on_readable: EPOLLPRI on the socket API). */
static void test_zero_window_urgent_still_processed(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;
	char buf[8];
	unsigned readable;

	pkt_config_defaults(&cfg);
	cfg.rcvbuf = 1000;
	t = pkt_start(&cfg);
	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 1000));
	ADVANCE(t, 200);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 2001, .win = 0));
	readable = t->n_readable;
	INJECT(t, SEG(.flags = TH_ACK | TH_URG, .seq = 2001, .ack = 1, .len = 1, .data = "X",
		      .urp = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 2001, .win = 0)); /* the text is not taken */
	assert_int_equal(STAT(t, drop_rcvbuf_full), 1);
	assert_int_equal(STAT(t, urg_rcvd), 1);
	assert_true(t->n_readable > readable);
	assert_true(tcp_urg_waiting(t->conn));
	assert_int_equal(tcp_recv_urg(t->conn, buf, 1, false), 1);
	assert_int_equal(buf[0], 'X');
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_send_oob_pointer_after_last_byte),
		PKT_TEST(test_send_oob_pointer_spans_segments),
		PKT_TEST(test_recv_urgent_byte_out_of_band),
		PKT_TEST(test_recv_urg_pointer_ahead_of_byte),
		PKT_TEST(test_recv_urgent_byte_anywhere_in_segment),
		PKT_TEST(test_oobinline_keeps_byte_in_stream),
		PKT_TEST(test_zero_window_urgent_still_processed),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
