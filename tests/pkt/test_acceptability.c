/* Packet scripts: the checks a segment meets in a synchronized state
 * (RFC 9293 3.10.7.4): the four sequence-acceptability cases, RST and SYN
 * (RFC 5961 3.2 and 4), the ACK field (unsent data, old duplicates, the
 * SND.WL1/SND.WL2 window-update rule), the ACK bit, and trimming to the
 * receive window.  Every script asserts exactly what we send back.
 *
 * Windows used: after ESTABLISH, RCV.NXT = 1001 and RCV.WND = 65535, so the
 * last acceptable sequence number is 66535 (66536 for a segment of no
 * length).  With rcvbuf = 1000 the window is 1000, and 1000 unread bytes
 * close it (RCV.NXT = 2001, RCV.WND = 0). */
#include "tests/pkt/harness.h"

#include <errno.h>

#include "tcp/tcb.h"

#define WND_LAST (1001u + 65535u - 1u) /* last sequence number in the window */

static struct tcp_conn_info info_of(const struct tcp_conn *c)
{
	struct tcp_conn_info info;

	tcp_conn_get_info(c, &info);
	return info;
}

/* ESTABLISHED with a receive buffer (and so window) of 1000 bytes. */
static struct pkt_t *start_small_window(void)
{
	struct tcp_config cfg;
	struct pkt_t *t;

	pkt_config_defaults(&cfg);
	cfg.rcvbuf = 1000;
	cfg.delack_ms = 40;
	t = pkt_start(&cfg);
	ESTABLISH(t);
	return t;
}

/* Fills the 1000-byte window with unread data: RCV.WND becomes 0.  snd is
 * our (relative) SND.NXT, for the ACK. */
static void close_window(struct pkt_t *t, uint32_t snd)
{
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 1000));
	ADVANCE(t, 100); /* the (possibly delayed) ACK */
	EXPECT(t, SEG(.flags = TH_ACK, .seq = snd, .ack = 2001, .win = 0));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t->conn).rcv_wnd, 0);
}

/* Case 1: SEG.LEN = 0, RCV.WND = 0: acceptable iff SEG.SEQ = RCV.NXT; it is
 * processed (here: its window update). */
static void test_zero_window_empty_at_rcv_nxt_acceptable(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	close_window(t, 1);
	INJECT(t, SEG(.seq = 2001, .ack = 1, .win = 1234));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t->conn).snd_wnd, 1234);
	assert_int_equal(STAT(t, drop_unacceptable), 0);
	FINISH(t, 1);
}

/* Case 1, other branch: SEG.SEQ != RCV.NXT: unacceptable, so an ACK is
 * sent and the segment (with its window) dropped. */
static void test_zero_window_empty_off_rcv_nxt_unacceptable(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	close_window(t, 1);
	INJECT(t, SEG(.seq = 2002, .ack = 1, .win = 1234));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 0, .len = 0));
	INJECT(t, SEG(.seq = 2000, .ack = 1, .win = 1234));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 0, .len = 0));
	assert_int_equal(info_of(t->conn).snd_wnd, 65535);
	assert_int_equal(STAT(t, drop_unacceptable), 2);
	FINISH(t, 1);
}

/* Case 3: SEG.LEN > 0, RCV.WND = 0: the text is not acceptable and is not
 * queued, an ACK goes back, yet the ACK field is still processed (RFC 9293
 * 3.10.7.4: "special allowance ... to accept valid ACKs"). */
static void test_zero_window_data_dropped_ack_processed(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 100));
	close_window(t, 101);
	INJECT(t, SEG(.seq = 2001, .ack = 101, .len = 10));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 101, .ack = 2001, .win = 0, .len = 0));
	assert_int_equal(info_of(t->conn).snd_una, t->our_isn + 101);
	/* Beyond RCV.NXT it is plainly unacceptable. */
	INJECT(t, SEG(.seq = 2005, .ack = 101, .len = 10));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 101, .ack = 2001, .win = 0, .len = 0));
	assert_int_equal(STAT(t, drop_unacceptable), 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 1000); /* none of the 20 bytes */
	/* Reading reopens the window: a window update. */
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 101, .ack = 2001, .win = 1000));
	FINISH(t, 1);
}

/* MUST-66: an RST at RCV.NXT is processed even with a zero window. */
static void test_zero_window_rst_at_rcv_nxt_resets(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	close_window(t, 1);
	INJECT(t, SEG(.flags = TH_RST, .seq = 2001));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNRESET);
	FINISH(t, 0);
}

/* Case 2: SEG.LEN = 0, RCV.WND > 0: RCV.NXT =< SEG.SEQ < RCV.NXT+RCV.WND.
 * At RCV.NXT: processed, nothing sent. */
static void test_empty_at_rcv_nxt_acceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 4000));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t->conn).snd_wnd, 4000);
	FINISH(t, 1);
}

/* Case 2 at the window's last sequence number: acceptable, so its window
 * is taken; with no text or FIN nothing is owed in return. */
static void test_empty_at_window_end_acceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = WND_LAST, .ack = 1, .win = 4000));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t->conn).snd_wnd, 4000);
	assert_int_equal(STAT(t, drop_unacceptable), 0);
	FINISH(t, 1);
}

/* Just past the window (SEG.SEQ = RCV.NXT + RCV.WND): accepted, as Linux
 * does, though RFC 9293's case 2 ends one short.  A peer that filled our
 * window exactly numbers its ACKs there (SND.NXT), as does one capping its
 * ACKs at our window's end (Linux's tcp_acceptable_seq); refused, they are
 * answered, and two ends refusing each other's answers exchange ACKs
 * forever. */
static void test_empty_at_right_edge_acceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = WND_LAST + 1, .ack = 1, .win = 4000));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t->conn).snd_wnd, 4000);
	assert_int_equal(STAT(t, drop_unacceptable), 0);
	FINISH(t, 1);
}

/* Case 2 outside the window (past RCV.NXT+RCV.WND, and before RCV.NXT):
 * unacceptable: ACK sent, segment dropped (its window ignored). */
static void test_empty_outside_window_unacceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = WND_LAST + 2, .ack = 1, .win = 4000));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .win = 65535, .len = 0));
	INJECT(t, SEG(.seq = 1000, .ack = 1, .win = 4000));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .win = 65535, .len = 0));
	assert_int_equal(info_of(t->conn).snd_wnd, 65535);
	assert_int_equal(STAT(t, drop_unacceptable), 2);
	FINISH(t, 1);
}

/* Case 4: SEG.LEN > 0, RCV.WND > 0, starting at RCV.NXT: queued and
 * acknowledged (delayed). */
static void test_data_at_rcv_nxt_acceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 100));
	APP_READ(t);
	assert_int_equal(t->rx_len, 100);
	ADVANCE(t, 100);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1101));
	FINISH(t, 1);
}

/* RFC 9293 3.1 (MUST-5, MUST-6, MUST-64): options on a data segment do not
 * change its handling; an MSS option outside a SYN is ignored (3.7.1). */
static void test_data_with_options_acceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	const uint8_t opts[] = { 1, 30, 3, 0, 2, 4, 0x01, 0x00 }; /* NOP, ?, MSS 256 */

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 100, .opts = opts, .optlen = sizeof(opts)));
	APP_READ(t);
	assert_int_equal(t->rx_len, 100);
	ADVANCE(t, 100);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1101, .mss = 0));
	assert_int_equal(info_of(t->conn).mss, 1460);
	FINISH(t, 1);
}

/* Case 4, the end in the window: a segment straddling RCV.NXT is
 * acceptable and only its new part is processed. */
static void test_data_straddling_rcv_nxt_keeps_new_part(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 951, .ack = 1, .len = 100));
	APP_READ(t); /* the pattern check proves the first 50 bytes were cut */
	assert_int_equal(t->rx_len, 50);
	ADVANCE(t, 100);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1051));
	assert_int_equal(STAT(t, drop_unacceptable), 0);
	FINISH(t, 1);
}

/* Case 4 with neither end in the window (all old, or all beyond it):
 * unacceptable: an immediate ACK, nothing queued. */
static void test_data_outside_window_unacceptable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 901, .ack = 1, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	INJECT(t, SEG(.seq = WND_LAST + 1, .ack = 1, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	assert_int_equal(STAT(t, drop_unacceptable), 2);
	assert_int_equal(t->n_readable, 0);
	FINISH(t, 1);
}

/* Text beyond the window is cut off, and a FIN after it goes with it:
 * 1000 of 1500 bytes are kept, the ACK says so at once (zero window), and
 * the connection stays ESTABLISHED. */
static void test_data_and_fin_trimmed_to_window(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	INJECT(t, SEG(.flags = TH_FIN | TH_PSH | TH_ACK, .seq = 1001, .ack = 1, .len = 1500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 0, .len = 0));
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	assert_int_equal(STAT(t, drop_window_trimmed), 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 1000);
	assert_false(t->eof);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 1000));
	/* The peer sends the rest again, FIN included. */
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 2001, .ack = 1, .len = 500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2502));
	assert_int_equal(info_of(t->conn).state, TCP_CLOSE_WAIT);
	APP_READ(t);
	assert_int_equal(t->rx_len, 1500);
	assert_true(t->eof);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2502, .win = 1000));
	FINISH(t, 1);
}

/* A resend spanning the whole window (starting before RCV.NXT, its FIN past
 * the right edge): neither end in the window, so the RFC's two tests would
 * refuse it, yet its new text fits.  Taken: the old part cut (D-SACK), the
 * FIN dropped, the window filled, an ACK at once. */
static void test_segment_spanning_window_takes_new_text(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	INJECT(t, SEG(.flags = TH_FIN | TH_PSH | TH_ACK, .seq = 901, .ack = 1, .len = 1100));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 0, .len = 0));
	assert_int_equal(STAT(t, drop_unacceptable), 0);
	assert_int_equal(STAT(t, drop_window_trimmed), 1);
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	APP_READ(t);
	assert_int_equal(t->rx_len, 1000);
	assert_false(t->eof);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 1000));
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4 ("trimming off any portions that lie outside the
 * window (including SYN and FIN)"): with RCV.WND = 1000, 1000 bytes + FIN at
 * RCV.NXT keep the text but not the FIN (sequence number RCV.NXT+1000 is
 * outside the window).  (Linux takes such a FIN; the RFC does not.) */
static void test_fin_just_beyond_full_window_trimmed(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1, .len = 1000));
	ADVANCE(t, 100);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 0));
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	FINISH(t, 1);
}

/* With RCV.WND = 0 a bare FIN at RCV.NXT (SEG.LEN 1) is not acceptable
 * (case 3): only its ACK is processed, the FIN is not taken. */
static void test_fin_on_zero_window_not_taken(void **state)
{
	(void)state;
	struct pkt_t *t = start_small_window();

	close_window(t, 1);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 2001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 2001, .win = 0));
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	FINISH(t, 1);
}

/* RFC 5961 3.2: an RST exactly at RCV.NXT resets (ACK bit or not). */
static void test_rst_exact_resets(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ECONNRESET);
	assert_int_equal(STAT(t, resets_rcvd), 1);
	FINISH(t, 0);
}

/* RFC 5961 3.2: an RST in the window but not at RCV.NXT (here its last
 * sequence number) draws a challenge ACK <SEQ=SND.NXT><ACK=RCV.NXT>. */
static void test_rst_in_window_challenge_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_RST, .seq = WND_LAST));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	INJECT(t, SEG(.flags = TH_RST, .seq = 1002));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	assert_int_equal(STAT(t, challenge_acks), 2);
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 1);
}

/* RFC 5961 3.2: an RST outside the window is dropped without a reply. */
static void test_rst_outside_window_silently_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_RST, .seq = WND_LAST + 1));
	INJECT(t, SEG(.flags = TH_RST, .seq = 1000));
	INJECT(t, SEG(.flags = TH_RST | TH_ACK, .seq = 1000, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	assert_int_equal(STAT(t, drop_unacceptable), 3);
	assert_int_equal(STAT(t, challenge_acks), 0);
	FINISH(t, 1);
}

/* The RST rules hold in FIN-WAIT-2 too: in the window, a challenge ACK;
 * exact, the TCB goes (RFC 9293 3.10.7.4, second check). */
static void test_rst_rules_in_fin_wait_2(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 2));
	assert_int_equal(info_of(t->conn).state, TCP_FIN_WAIT_2);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1500));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1001));
	INJECT(t, SEG(.flags = TH_RST, .seq = 1001));
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

static void test_rst_exact_in_time_wait_deletes_tcb(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(tcp_close(t->conn), 0);
	EXPECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 2));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2, .ack = 1002));
	assert_int_equal(info_of(t->conn).state, TCP_TIME_WAIT);
	INJECT(t, SEG(.flags = TH_RST, .seq = 1002));
	EXPECT_NOTHING(t);
	assert_int_equal(tcp_conn_count(t->ts), 0);
	FINISH(t, 0);
}

/* RFC 5961 4.2: a SYN in a synchronized state, wherever its sequence
 * number lies, gets <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK> and is dropped. */
static void test_syn_in_window_challenge_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1500, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	assert_int_equal(STAT(t, drop_syn_in_window), 1);
	/* Old (before RCV.NXT): unacceptable, the same ACK. */
	INJECT(t, SEG(.flags = TH_SYN, .seq = 500, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	assert_int_equal(t->n_closed, 0);
	FINISH(t, 1);
}

/* Same in CLOSE-WAIT: the SYN does not reopen anything. */
static void test_syn_in_close_wait_challenge_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 1));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1002));
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1002, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1002, .len = 0));
	assert_int_equal(info_of(t->conn).state, TCP_CLOSE_WAIT);
	assert_int_equal(STAT(t, challenge_acks), 1);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4, fifth check: SEG.ACK > SND.NXT: send an ACK, drop
 * the segment: neither its window nor its FIN is taken. */
static void test_ack_of_unsent_data_acked_and_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 50, .win = 1000));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	INJECT(t, SEG(.flags = TH_FIN | TH_ACK, .seq = 1001, .ack = 50));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 0));
	assert_int_equal(info_of(t->conn).snd_wnd, 65535);
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	assert_int_equal(STAT(t, drop_bad_ack), 2);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4, fifth check: SEG.ACK < SND.UNA is an old duplicate:
 * the ACK is ignored but the segment's text is processed. */
static void test_old_duplicate_ack_ignored_text_kept(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 100));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	assert_int_equal(info_of(t->conn).snd_una, t->our_isn + 101);
	INJECT(t, SEG(.seq = 1001, .ack = 50, .len = 10));
	assert_int_equal(info_of(t->conn).snd_una, t->our_isn + 101);
	APP_READ(t);
	assert_int_equal(t->rx_len, 10);
	ADVANCE(t, 100);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 101, .ack = 1011, .len = 0));
	assert_int_equal(STAT(t, drop_bad_ack), 0);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4, fifth check: SND.WND is updated only if
 * SND.WL1 < SEG.SEQ, or SND.WL1 = SEG.SEQ and SND.WL2 =< SEG.ACK; a
 * reordered older ACK does not shrink it back. */
static void test_window_update_wl1_wl2_rule(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 200), 200);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 200));
	INJECT(t, SEG(.seq = 1001, .ack = 101, .win = 3000));
	assert_int_equal(info_of(t->conn).snd_wnd, 3000);
	INJECT(t, SEG(.seq = 1001, .ack = 201, .win = 5000)); /* WL2 < SEG.ACK */
	assert_int_equal(info_of(t->conn).snd_wnd, 5000);
	INJECT(t, SEG(.seq = 1001, .ack = 101, .win = 9000)); /* older ACK */
	assert_int_equal(info_of(t->conn).snd_wnd, 5000);
	INJECT(t, SEG(.seq = 1001, .ack = 201, .win = 7000)); /* same WL1, WL2 */
	assert_int_equal(info_of(t->conn).snd_wnd, 7000);
	INJECT(t, SEG(.seq = 1001, .ack = 201, .win = 6000, .len = 10));
	assert_int_equal(info_of(t->conn).snd_wnd, 6000);
	INJECT(t, SEG(.seq = 1011, .ack = 201, .win = 8000)); /* WL1 < SEG.SEQ */
	assert_int_equal(info_of(t->conn).snd_wnd, 8000);
	ADVANCE(t, 100);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 201, .ack = 1011, .len = 0));
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4, fifth check: no ACK bit in a synchronized state:
 * dropped without a reply, the text is not taken. */
static void test_segment_without_ack_bit_dropped(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_PSH, .seq = 1001, .len = 10));
	INJECT(t, SEG(.flags = TH_FIN, .seq = 1001));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_readable, 0);
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	assert_int_equal(STAT(t, drop_no_ack), 2);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4, fifth check in SYN-RECEIVED: an ACK outside
 * SND.UNA < SEG.ACK =< SND.NXT gets <SEQ=SEG.ACK><CTL=RST>; the embryo
 * stays and completes with a good ACK. */
static void test_syn_received_unacceptable_ack_gets_rst(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001));
	INJECT(t, SEG(.seq = 1001, .ack = 0));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 0, .len = 0));
	INJECT(t, SEG(.seq = 1001, .ack = 5));
	EXPECT(t, SEG(.flags = TH_RST, .seq = 5, .len = 0));
	assert_int_equal(t->n_accept, 0);
	assert_int_equal(tcp_conn_count(t->ts), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_accept, 1);
	assert_int_equal(info_of(t->conn).state, TCP_ESTABLISHED);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_zero_window_empty_at_rcv_nxt_acceptable),
		PKT_TEST(test_zero_window_empty_off_rcv_nxt_unacceptable),
		PKT_TEST(test_zero_window_data_dropped_ack_processed),
		PKT_TEST(test_zero_window_rst_at_rcv_nxt_resets),
		PKT_TEST(test_empty_at_rcv_nxt_acceptable),
		PKT_TEST(test_empty_at_window_end_acceptable),
		PKT_TEST(test_empty_at_right_edge_acceptable),
		PKT_TEST(test_empty_outside_window_unacceptable),
		PKT_TEST(test_data_at_rcv_nxt_acceptable),
		PKT_TEST(test_data_with_options_acceptable),
		PKT_TEST(test_data_straddling_rcv_nxt_keeps_new_part),
		PKT_TEST(test_data_outside_window_unacceptable),
		PKT_TEST(test_data_and_fin_trimmed_to_window),
		PKT_TEST(test_segment_spanning_window_takes_new_text),
		PKT_TEST(test_fin_just_beyond_full_window_trimmed),
		PKT_TEST(test_fin_on_zero_window_not_taken),
		PKT_TEST(test_rst_exact_resets),
		PKT_TEST(test_rst_in_window_challenge_ack),
		PKT_TEST(test_rst_outside_window_silently_dropped),
		PKT_TEST(test_rst_rules_in_fin_wait_2),
		PKT_TEST(test_rst_exact_in_time_wait_deletes_tcb),
		PKT_TEST(test_syn_in_window_challenge_ack),
		PKT_TEST(test_syn_in_close_wait_challenge_ack),
		PKT_TEST(test_ack_of_unsent_data_acked_and_dropped),
		PKT_TEST(test_old_duplicate_ack_ignored_text_kept),
		PKT_TEST(test_window_update_wl1_wl2_rule),
		PKT_TEST(test_segment_without_ack_bit_dropped),
		PKT_TEST(test_syn_received_unacceptable_ack_gets_rst),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
