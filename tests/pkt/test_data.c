/* Packet scripts: data transfer, ACKs, windows, retransmission
 * (RFC 9293 3.8, RFC 6298, RFC 6928). */
#include "tests/pkt/harness.h"

#include <errno.h>

/* In-order data is queued (no copy), readable, and acknowledged. */
static void test_data_in_order_is_acked_and_readable(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1001, .ack = 1, .len = 100));
	assert_int_equal(t->n_readable, 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 100);
	assert_int_equal(STAT(t, rx_bytes), 100);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1101, .win = 65535));
	FINISH(t, 1);
}

/* Received mbufs stay queued as they came, chains included, until read. */
static void test_received_payload_is_queued_without_copy(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 1000, .split = 300));
	assert_int_equal(rte_mempool_in_use_count(t->pool), 2);
	APP_READ(t);
	assert_int_equal(t->rx_len, 1000);
	assert_int_equal(rte_mempool_in_use_count(t->pool), 0);
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 2001));
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.3: an ACK for at least every second full-sized segment. */
static void test_delayed_ack_every_second_full_segment(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	t->auto_read = true;
	INJECT(t, SEG(.seq = 1001, .len = 1460));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 2461, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 3921));
	INJECT(t, SEG(.seq = 3921, .len = 1460));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 5381, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 6841));
	assert_int_equal(t->rx_len, 4 * 1460);
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.3: a lone segment is acknowledged after delack_ms. */
static void test_delayed_ack_timer_fires(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 10));
	ADVANCE(t, 39);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1011));
	assert_int_equal(STAT(t, delayed_acks), 1);
	ADVANCE(t, 1000);
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* Data we send carries the pending ACK: no separate delayed ACK. */
static void test_data_piggybacks_pending_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 10));
	assert_int_equal(pkt_app_send(t, 5), 5);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .ack = 1011, .len = 5));
	ADVANCE(t, 100);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1011, .ack = 6));
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4 / RFC 5681 4.2: out-of-order data gets an immediate
 * duplicate ACK and is held (tcp/reass.c); data filling part of the gap is
 * acknowledged at once too. */
static void test_out_of_order_gets_dup_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 2001, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001));
	assert_int_equal(STAT(t, ooo_queued), 1);
	assert_int_equal(t->n_readable, 0);
	INJECT(t, SEG(.seq = 1001, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1101));
	APP_READ(t);
	assert_int_equal(t->rx_len, 100);
	FINISH(t, 1);
}

/* RFC 9293 3.10.7.4: a retransmission overlapping RCV.NXT is trimmed, only
 * the new bytes are queued. */
static void test_overlapping_retransmission_is_trimmed(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 100));
	INJECT(t, SEG(.seq = 1051, .len = 100));
	APP_READ(t);
	assert_int_equal(t->rx_len, 150); /* the pattern check proves the offsets */
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1151));
	/* Entirely old data: unacceptable, answered by an ACK. */
	INJECT(t, SEG(.seq = 1001, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 1151));
	assert_int_equal(STAT(t, drop_unacceptable), 1);
	FINISH(t, 1);
}

/* The receive window is the free receive-buffer space; reading reopens
 * it with a window update (RFC 9293 3.8.6.2.2). */
static void test_window_follows_receive_buffer(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.rcvbuf = 4000;
	struct pkt_t *t = pkt_start(&cfg);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .win = 4000));
	INJECT(t, SEG(.seq = 1001, .ack = 1));
	INJECT(t, SEG(.seq = 1001, .len = 1460));
	INJECT(t, SEG(.seq = 2461, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 3921, .win = 1080));
	/* Beyond the window: cut at its edge, ACKed at once. */
	INJECT(t, SEG(.seq = 3921, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = 0));
	assert_int_equal(STAT(t, drop_window_trimmed), 1);
	/* Zero window: data dropped, ACK (with the window) still answered. */
	INJECT(t, SEG(.seq = 5001, .len = 100));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = 0));
	assert_int_equal(STAT(t, drop_rcvbuf_full), 1);
	APP_READ(t);
	assert_int_equal(t->rx_len, 4000);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = 4000));
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.2.2 (MUST-39), receiver-side SWS avoidance: after a
 * zero window, reads that free less than min(rcvbuf / 2, MSS) (1460 here)
 * announce nothing, and an ACK sent meanwhile (to a window probe) keeps
 * the right edge where it was; once 1460 bytes are free, the update goes. */
static void test_receiver_sws_small_opening_withheld(void **state)
{
	(void)state;
	struct tcp_config cfg;
	struct pkt_t *t;
	char buf[1500];

	pkt_config_defaults(&cfg);
	cfg.rcvbuf = 4000;
	cfg.rcvbuf_max = 4000; /* no autotuning */
	t = pkt_start(&cfg);
	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .len = 1460));
	INJECT(t, SEG(.seq = 2461, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 3921, .win = 1080));
	INJECT(t, SEG(.seq = 3921, .len = 1080));
	ADVANCE(t, 500);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = 0));
	assert_int_equal(tcp_recv(t->conn, buf, 100), 100);
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 5001, .len = 1)); /* a probe: answered, edge kept */
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = 0));
	assert_int_equal(tcp_recv(t->conn, buf, 1359), 1359);
	ADVANCE(t, 500);
	EXPECT_NOTHING(t); /* 1459 free: still silly */
	assert_int_equal(tcp_recv(t->conn, buf, 1), 1);
	EXPECT(t, SEG(.flags = TH_ACK, .ack = 5001, .win = 1460));
	FINISH(t, 1);
}

/* Send-side segmentation at the MSS; PSH on the last piece. */
static void test_send_segments_at_mss(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 4000), 4000);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1461, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 2921, .len = 1080));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 4001));
	assert_int_equal(STAT(t, tx_bytes), 4000);
	FINISH(t, 1);
}

/* A segment whose payload spans send-queue buffers joined at an odd offset
 * still carries a correct checksum (the harness verifies every emitted
 * segment's checksum itself).  DPDK 22.11's rte_raw_cksum_mbuf gets such
 * chains wrong; the kernel then dropped them and a 1 MB echo stalled. */
static void test_checksum_over_send_queue_split_at_odd_offset(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	/* Nagle (with Minshall's rule) would hold the 160-byte tail while the
	 * 77 bytes are unacked; this script is about checksums only. */
	assert_int_equal(tcp_set_nodelay(t->conn, true), 0);
	/* An odd first segment puts every later buffer join at an odd offset
	 * within the segments that cross it. */
	assert_int_equal(pkt_app_send(t, 77), 77);
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 1, .len = 77));
	assert_int_equal(pkt_app_send(t, 6000), 6000);
	for (unsigned i = 0; i < 4; i++)
		EXPECT(t, SEG(.flags = TH_ACK, .seq = 78 + i * 1460, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK | TH_PSH, .seq = 78 + 4 * 1460, .len = 160));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 6078));
	FINISH(t, 1);
}

/* RFC 6928: ten segments before the first ACK; then slow start
 * (RFC 5681 3.1) lets each ACK release more. */
static void test_initial_window_is_ten_segments(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 30000), 30000);
	for (unsigned i = 0; i < 10; i++)
		EXPECT(t, SEG(.seq = 1 + i * 1460, .len = 1460));
	EXPECT_NOTHING(t);
	/* Two segments acked: two slots free, plus two segments of growth
	 * (RFC 3465 2.2 byte counting, L = 2: cwnd += min(2920, 2 SMSS)). */
	INJECT(t, SEG(.seq = 1001, .ack = 1 + 2 * 1460));
	for (unsigned i = 10; i < 14; i++)
		EXPECT(t, SEG(.seq = 1 + i * 1460, .len = 1460));
	EXPECT_NOTHING(t);
	FINISH(t, 1);
}

/* RFC 9293 3.8.6: never more in flight than the peer's window. */
static void test_peer_window_limits_sending(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .win = 3000));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 3000));
	assert_int_equal(pkt_app_send(t, 10000), 10000);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	/* The 80 bytes left are a silly window (RFC 9293 3.8.6.2.1): held
	 * while data is in flight. */
	EXPECT_NOTHING(t);
	/* The window slides with the ACK (SND.WL1/WL2 update). */
	INJECT(t, SEG(.seq = 1001, .ack = 1461, .win = 3000));
	EXPECT(t, SEG(.seq = 2921, .len = 1460));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 4381, .win = 2000));
	EXPECT(t, SEG(.seq = 4381, .len = 1460));
	EXPECT_NOTHING(t); /* 540 < max(SND.WND) / 2 */
	FINISH(t, 1);
}

/* RFC 6298 5.4-5.6: retransmit the earliest unacked segment at the RTO,
 * doubling it each time.  The handshake measured an RTT of 0, so the RTO
 * is rto_min (2.4).  Karn: the ACK of a retransmission gives no sample. */
static void test_rto_retransmits_and_backs_off(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn_info info;

	ESTABLISH(t);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.rto_ms, 200);
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	ADVANCE(t, 399);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 1, .len = 100));
	assert_int_equal(STAT(t, rto_fired), 2);
	assert_int_equal(STAT(t, retrans_segs), 2);
	ADVANCE(t, 30);
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.srtt_us, 0); /* a 630 ms sample would show here */
	assert_int_equal(info.retransmits, 2);
	assert_int_equal(info.rto_ms, 800); /* still backed off until a sample */
	/* A clean 50 ms sample: SRTT 6.25 ms, RTTVAR 12.5 ms, RTO -> rto_min. */
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 101, .len = 10));
	ADVANCE(t, 50);
	INJECT(t, SEG(.seq = 1001, .ack = 111));
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.srtt_us, 6250);
	assert_int_equal(info.rttvar_us, 12500);
	assert_int_equal(info.rto_ms, 200);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 111, .len = 10));
	ADVANCE(t, 199);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 111, .len = 10));
	INJECT(t, SEG(.seq = 1001, .ack = 121));
	FINISH(t, 1);
}

/* RFC 6298 2.4: the lower bound (1 s in the RFC, 200 ms like Linux by
 * default) is configurable. */
static void test_rto_min_is_configurable(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.rto_min_ms = 50;
	struct pkt_t *t = pkt_start(&cfg);
	struct tcp_conn_info info;

	ESTABLISH(t);
	tcp_conn_get_info(t->conn, &info);
	assert_int_equal(info.rto_ms, 50);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 49);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	INJECT(t, SEG(.seq = 1001, .ack = 11));
	FINISH(t, 1);
}

/* Go-back-N: after an RTO we resend from SND.UNA, one segment first
 * (cwnd 1 segment), and an ACK releases the rest. */
static void test_rto_goes_back_to_snd_una(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 3 * 1460), 3 * 1460);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	EXPECT(t, SEG(.seq = 2921, .len = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 1461));
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.seq = 1001, .ack = 2921));
	EXPECT(t, SEG(.seq = 2921, .len = 1460));
	INJECT(t, SEG(.seq = 1001, .ack = 4381));
	FINISH(t, 1);
}

/* After an RTO snd_nxt is back at SND.UNA, but an ACK carries the next new
 * byte (RFC 9293's SND.NXT, our snd_max): the peer has received data beyond
 * SND.UNA (its ACKs were lost), and an ACK numbered below that would be
 * unacceptable to it, dropped unread and answered; two ends resending after
 * RTOs answered each other's ACKs forever (found by the simulator). */
static void test_ack_after_rto_carries_snd_max(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 2 * 1460), 2 * 1460);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 1460)); /* go-back-N from SND.UNA */
	EXPECT_NOTHING(t);
	/* The peer's data (its ACK of ours still lost): ours says 2921. */
	INJECT(t, SEG(.seq = 1001, .ack = 1, .len = 100, .flags = TH_ACK | TH_PSH));
	ADVANCE(t, 40);
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 2921, .ack = 1101, .len = 0));
	INJECT(t, SEG(.seq = 1101, .ack = 2921));
	APP_READ(t);
	FINISH(t, 1);
}

/* A retransmission references the send queue's mbuf (indirect mbufs,
 * refcount), never a copy. */
static void test_retransmission_references_payload(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct rte_mbuf *first, *again, *data;

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 1000), 1000);
	first = EXPECT_KEEP(t, SEG(.seq = 1, .len = 1000));
	assert_int_equal(first->nb_segs, 2);
	assert_true(RTE_MBUF_CLONED(first->next));
	data = rte_mbuf_from_indirect(first->next);
	assert_int_equal(rte_mbuf_refcnt_read(data), 2); /* queue + segment */
	ADVANCE(t, 200);
	again = EXPECT_KEEP(t, SEG(.seq = 1, .len = 1000));
	assert_true(RTE_MBUF_CLONED(again->next));
	assert_ptr_equal(rte_mbuf_from_indirect(again->next), data);
	assert_int_equal(rte_mbuf_refcnt_read(data), 3);
	rte_pktmbuf_free(first);
	rte_pktmbuf_free(again);
	assert_int_equal(rte_mbuf_refcnt_read(data), 1);
	assert_int_equal(rte_mempool_in_use_count(t->pool), 1);
	INJECT(t, SEG(.seq = 1001, .ack = 1001));
	assert_int_equal(rte_mempool_in_use_count(t->pool), 0); /* acked: freed */
	FINISH(t, 1);
}

/* After data_retries retransmissions: on_closed(ETIMEDOUT), no RST. */
static void test_data_retries_exhausted_etimedout(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.data_retries = 3;
	struct pkt_t *t = pkt_start(&cfg);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 10), 10);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 400);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 800);
	EXPECT(t, SEG(.seq = 1, .len = 10));
	ADVANCE(t, 1599);
	assert_int_equal(t->n_closed, 0);
	ADVANCE(t, 1);
	EXPECT_NOTHING(t);
	assert_int_equal(t->n_closed, 1);
	assert_int_equal(t->closed_err, ETIMEDOUT);
	assert_int_equal(STAT(t, conns_timed_out), 1);
	FINISH(t, 0);
}

/* RFC 9293 3.10.7.4: an ACK for data never sent: send an ACK, drop it. */
static void test_ack_of_unsent_data_gets_ack(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 500, .len = 10));
	EXPECT(t, SEG(.flags = TH_ACK, .seq = 1, .ack = 1001));
	assert_int_equal(STAT(t, drop_bad_ack), 1);
	assert_int_equal(t->n_readable, 0);
	FINISH(t, 1);
}

/* A full send queue returns -EAGAIN; on_writable follows once ACKs free
 * half of it. */
static void test_send_eagain_then_writable(void **state)
{
	(void)state;
	struct tcp_config cfg;
	pkt_config_defaults(&cfg);
	cfg.sndbuf = 3000;
	struct pkt_t *t = pkt_start(&cfg);

	ESTABLISH(t);
	assert_int_equal(pkt_app_send(t, 5000), 3000);
	assert_int_equal(pkt_app_send(t, 10), -EAGAIN);
	assert_int_equal(tcp_send_space(t->conn), 0);
	EXPECT(t, SEG(.seq = 1, .len = 1460));
	EXPECT(t, SEG(.seq = 1461, .len = 1460));
	EXPECT(t, SEG(.seq = 2921, .len = 80));
	INJECT(t, SEG(.seq = 1001, .ack = 1001));
	assert_int_equal(t->n_writable, 0); /* 2000 queued: not yet half free */
	INJECT(t, SEG(.seq = 1001, .ack = 2921));
	assert_int_equal(t->n_writable, 1);
	assert_int_equal(tcp_send_space(t->conn), 2920);
	INJECT(t, SEG(.seq = 1001, .ack = 3001));
	assert_int_equal(t->n_writable, 1); /* once per -EAGAIN */
	FINISH(t, 1);
}

/* RFC 9293 3.8.6.1: a zero window is probed (one byte) when the RTO
 * fires, until the window opens. */
static void test_zero_window_is_probed(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	ESTABLISH(t);
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	assert_int_equal(pkt_app_send(t, 100), 100);
	EXPECT_NOTHING(t);
	ADVANCE(t, 200);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 1, .win = 0));
	ADVANCE(t, 399);
	EXPECT_NOTHING(t);
	ADVANCE(t, 1);
	EXPECT(t, SEG(.seq = 1, .len = 1));
	INJECT(t, SEG(.seq = 1001, .ack = 2, .win = 1000));
	EXPECT(t, SEG(.seq = 2, .len = 99));
	INJECT(t, SEG(.seq = 1001, .ack = 101));
	FINISH(t, 1);
}

/* Wrap-safe sequence numbers: the peer's stream crosses 2^32. */
static void test_sequence_numbers_wrap(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 0xfffffc00u, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 0xfffffc01u));
	INJECT(t, SEG(.seq = 0xfffffc01u, .ack = 1));
	t->auto_read = true;
	INJECT(t, SEG(.seq = 0xfffffc01u, .len = 1460));
	INJECT(t, SEG(.seq = 0xfffffc01u + 1460, .len = 1460));
	EXPECT(t, SEG(.flags = TH_ACK, .ack = (uint32_t)(0xfffffc01u + 2920)));
	assert_int_equal(t->rx_len, 2920);
	FINISH(t, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_data_in_order_is_acked_and_readable),
		PKT_TEST(test_received_payload_is_queued_without_copy),
		PKT_TEST(test_delayed_ack_every_second_full_segment),
		PKT_TEST(test_delayed_ack_timer_fires),
		PKT_TEST(test_data_piggybacks_pending_ack),
		PKT_TEST(test_out_of_order_gets_dup_ack),
		PKT_TEST(test_overlapping_retransmission_is_trimmed),
		PKT_TEST(test_window_follows_receive_buffer),
		PKT_TEST(test_receiver_sws_small_opening_withheld),
		PKT_TEST(test_send_segments_at_mss),
		PKT_TEST(test_checksum_over_send_queue_split_at_odd_offset),
		PKT_TEST(test_initial_window_is_ten_segments),
		PKT_TEST(test_peer_window_limits_sending),
		PKT_TEST(test_rto_retransmits_and_backs_off),
		PKT_TEST(test_rto_min_is_configurable),
		PKT_TEST(test_rto_goes_back_to_snd_una),
		PKT_TEST(test_ack_after_rto_carries_snd_max),
		PKT_TEST(test_retransmission_references_payload),
		PKT_TEST(test_data_retries_exhausted_etimedout),
		PKT_TEST(test_ack_of_unsent_data_gets_ack),
		PKT_TEST(test_send_eagain_then_writable),
		PKT_TEST(test_zero_window_is_probed),
		PKT_TEST(test_sequence_numbers_wrap),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
