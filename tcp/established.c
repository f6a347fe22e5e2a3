/* tcp/established.c: segment arrival in the synchronized states
 * (SYN-RECEIVED .. TIME-WAIT), RFC 9293 3.10.7.4, one function per check in
 * the RFC's order: sequence number, RST, SYN, ACK, segment text, FIN. */
#include <errno.h>

#include "stack/base/rand.h"
#include "tcp/tcb.h"

static uint32_t rcv_wnd(const struct tcp_conn *c)
{
	return SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
}

/* RFC 9293 3.10.7.4, first check: the four acceptability cases, with one
 * allowance for an ACK of no length (Linux's tcp_sequence): SEG.SEQ =
 * RCV.NXT + RCV.WND, just past the window.  A sender numbers its ACKs there
 * when it has filled our window exactly (RFC 9293's SND.NXT, some of it
 * lost) or when it caps them at our window's end (Linux's
 * tcp_acceptable_seq, ours in output.c).  Refused, such an ACK is dropped
 * unread and answered; two ends that each refuse the other's answer
 * exchange ACKs at line rate (an ACK storm the simulator found).  With a
 * zero window the allowance is RCV.NXT itself, case 1's only value.  An RST
 * there stays outside the window (RFC 5961 3.2: dropped, no reply). */
static bool seq_acceptable(const struct tcp_conn *c, const struct tcp_seg *seg, uint32_t seglen)
{
	uint32_t wnd = rcv_wnd(c), nxt = c->rcv_nxt;
	bool start_in = SEQ_LEQ(nxt, seg->seq) && SEQ_LT(seg->seq, nxt + wnd);

	if (seglen == 0 && !(seg->flags & TH_RST))
		return SEQ_LEQ(nxt, seg->seq) && SEQ_LEQ(seg->seq, nxt + wnd);
	if (seglen == 0)
		return wnd == 0 ? seg->seq == nxt : start_in;
	if (wnd == 0)
		return false;
	/* Case 4: the beginning or the end in the window, or (what the RFC's
	 * two tests miss) neither because the segment spans the whole window:
	 * a resend that starts before RCV.NXT and whose FIN lies past the
	 * right edge.  Its new text fits; trim() keeps it and drops the FIN,
	 * as the RFC's "only the new parts are processed" intends (Linux's
	 * tcp_sequence takes any overlap).  Refused whole, it waits a round
	 * trip for a resend of its part alone. */
	return start_in ||
	       (SEQ_LEQ(nxt, seg->seq + seglen - 1) && SEQ_LT(seg->seq + seglen - 1, nxt + wnd)) ||
	       (SEQ_LT(seg->seq, nxt) && SEQ_GEQ(seg->seq + seglen - 1, nxt + wnd));
}

/* Cuts what lies before RCV.NXT (noted for D-SACK, RFC 2883) or beyond
 * the window's right edge; data after RCV.NXT stays for the reassembly
 * queue (tcp_input_text). */
static void trim(struct tcp_conn *c, struct tcp_seg *seg)
{
	struct tcp_stats *st = &c->ts->stats;
	uint32_t wnd = rcv_wnd(c), right = c->rcv_nxt + wnd;

	if (SEQ_LT(seg->seq, c->rcv_nxt)) {
		uint32_t dup = c->rcv_nxt - seg->seq;

		if (seg->flags & TH_SYN) {
			seg->flags &= (uint8_t)~TH_SYN;
			seg->seq++;
			dup--;
		}
		dup = RTE_MIN(dup, seg->len);
		if (dup > 0) {
			st->drop_dup_data++;
			tcp_dsack_note(c, seg->seq, seg->seq + dup);
			c->ack_now = true; /* RFC 5681 4.2 */
		}
		seg->skip += dup;
		seg->len -= dup;
		seg->seq = c->rcv_nxt;
	}
	/* The FIN occupies the sequence number after the text: it is outside
	 * the window when the text ends exactly at the right edge (RFC 9293
	 * 3.10.7.4: trim "including SYN and FIN"). */
	if (SEQ_GT(seg->seq + seg->len + !!(seg->flags & TH_FIN), right)) {
		if (wnd == 0)
			st->drop_rcvbuf_full++;
		else
			st->drop_window_trimmed++;
		seg->len = SEQ_GT(right, seg->seq) ? right - seg->seq : 0;
		seg->flags &= (uint8_t)~TH_FIN;
		c->ack_now = true;
	}
}

static bool check_sequence(struct tcp_conn *c, struct tcp_seg *seg)
{
	uint32_t seglen = seg->len + !!(seg->flags & TH_SYN) + !!(seg->flags & TH_FIN);

	if (seq_acceptable(c, seg, seglen))
		return true;
	/* RFC 9293 3.10.7.4: zero window, yet ACK (and RST) must get through. */
	if (rcv_wnd(c) == 0 && seg->seq == c->rcv_nxt && !(seg->flags & TH_SYN))
		return true;
	c->ts->stats.drop_unacceptable++;
	if (seg->flags & TH_RST)
		return false; /* out-of-window RST: silently ignored */
	/* RFC 2883 4.1.1: a duplicate below RCV.NXT is reported by D-SACK. */
	if (seg->len > 0 && SEQ_LEQ(seg->seq + seg->len, c->rcv_nxt)) {
		c->ts->stats.drop_dup_data++;
		tcp_dsack_note(c, seg->seq, seg->seq + seg->len);
		/* Like Linux (tcp_sequence accepts a segment ending at the last
		 * ACK it sent), a resend of the segment our last ACK covered
		 * gives TS.Recent its timestamp: our ACK of it then echoes the
		 * resend's TSval.  Echoing the original's instead, after the
		 * peer's RTOs found every ACK lost, hands the peer an RTT sample
		 * as long as its whole backoff (a 536 s sample, a 32 s RTO). */
		if (SEQ_GEQ(seg->seq + seg->len, c->last_ack_sent))
			tcp_ts_update_recent(c, seg);
	}
	/* RFC 9293 3.6.1: a retransmitted FIN restarts the 2 MSL wait. */
	if (c->state == TCP_TIME_WAIT && (seg->flags & TH_FIN))
		tcp_timer_set(c, TCP_T_2MSL, tcp_now(c) + US_MS(c->ts->cfg.time_wait_ms));
	c->ack_now = true;
	tcp_output(c);
	return false;
}

/* RFC 5961 7 and 10: this second's challenge-ACK budget.  An exact,
 * engine-wide budget is a side channel: an off-path attacker who spends it
 * with its own connection and counts the challenge ACKs it gets back learns
 * whether a spoofed segment hit a live connection (CVE-2016-5696).  Like
 * Linux since then, each second draws the budget from [limit/2, limit*3/2),
 * the same mean; challenge_ack_jitter = false keeps it exact (tests). */
static uint32_t challenge_budget(const struct tcp_config *cfg)
{
	uint32_t limit = cfg->challenge_ack_limit;

	if (!cfg->challenge_ack_jitter || limit < 2)
		return limit;
	return limit / 2 + us_rand_uniform(limit);
}

/* RFC 5961 7: at most about challenge_ack_limit challenge ACKs per second
 * per engine (like Linux's tcp_challenge_ack_limit), so that a blind
 * attacker cannot make us flood the peer; the second is the wheel's.
 * True: send. */
static bool challenge_ack_allowed(struct tcp_conn *c)
{
	struct tcp_stack *ts = c->ts;
	uint64_t sec = tcp_now(c) / US_SEC(1);

	if (sec != ts->challenge_sec || ts->challenge_budget == 0) {
		ts->challenge_sec = sec;
		ts->challenge_count = 0;
		ts->challenge_budget = challenge_budget(&ts->cfg);
	}
	if (ts->challenge_count >= ts->challenge_budget) {
		ts->stats.challenge_acks_suppressed++;
		return false;
	}
	ts->challenge_count++;
	ts->stats.challenge_acks++;
	return true;
}

/* <SEQ=SND.NXT><ACK=RCV.NXT><CTL=ACK>, within the rate limit. */
static void challenge_ack(struct tcp_conn *c)
{
	if (challenge_ack_allowed(c))
		tcp_send_ack(c);
}

/* RFC 9293 3.10.7.4, second check, with RFC 5961 3.2. */
static void input_rst(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_stats *st = &c->ts->stats;

	if (seg->seq != c->rcv_nxt) {
		st->drop_rst_challenged++;
		challenge_ack(c);
		return;
	}
	st->resets_rcvd++;
	switch (c->state) {
	case TCP_SYN_RECEIVED:
		/* From LISTEN: back to LISTEN, i.e. the embryo just goes;
		 * a Fast Open child is the application's already. */
		if (c->listener == NULL || c->tfo.child)
			tcb_set_closed(c, c->tfo.child ? ECONNRESET : ECONNREFUSED);
		break;
	case TCP_TIME_WAIT:
		break;
	default:
		tcb_set_closed(c, ECONNRESET);
		break;
	}
	tcb_drop(c);
}

/* RFC 9293 3.10.7.4, fourth check: a SYN in a synchronized state gets a
 * challenge ACK (RFC 5961 4.2). */
static void input_syn(struct tcp_conn *c)
{
	c->ts->stats.drop_syn_in_window++;
	challenge_ack(c);
}

/* Frees n acknowledged bytes from the front of the send queue. */
static void sndq_release(struct tcp_conn *c, uint32_t n)
{
	struct tcp_mq *q = &c->sndq;

	c->sndq_seq += n;
	c->bytes_acked += n;
	q->bytes -= n;
	/* The cursor's mbuf survives only if it starts past what is freed
	 * (a head trimmed in place starts at 0 again: seek from the head). */
	if (q->cur != NULL && q->cur_off >= n)
		q->cur_off -= n;
	else
		q->cur = NULL;
	while (n > 0 && q->head != NULL) {
		struct rte_mbuf *m = q->head;

		if (n < m->data_len) {
			/* In-flight segments hold their own offsets (indirect). */
			m->data_off += n;
			m->data_len -= n;
			m->pkt_len = m->data_len;
			return;
		}
		n -= m->data_len;
		q->head = m->next;
		if (q->head == NULL)
			q->tail = NULL;
		m->next = NULL;
		rte_pktmbuf_free_seg(m);
	}
}

/* RFC 5681 2: a duplicate ACK has data outstanding, carries no data and
 * no SYN or FIN, acknowledges SND.UNA exactly and leaves the advertised
 * window unchanged (checked before the window update).  Outstanding means
 * sent below SND.NXT: a zero-window probe's byte (output.c) is not, and
 * the answers to probes of a closed window signal no loss. */
static bool is_dup_ack(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	return SEQ_GT(c->snd_nxt, c->snd_una) && c->snd_wnd != 0 && seg->len == 0 &&
	       !(seg->flags & (TH_SYN | TH_FIN)) && seg->ack == c->snd_una &&
	       ((uint32_t)seg->wnd << c->snd_wscale) == c->snd_wnd;
}

/* An ACK of new data outside fast recovery: the CC module grows cwnd.  In
 * recovery the window is the recovery algorithm's (loss.c), and the
 * ACK that ends recovery does not grow it either (RFC 6582 3.2 step 3). */
static void cc_new_ack(struct tcp_conn *c, uint32_t acked)
{
	if (c->loss.in_recovery)
		return;
	tcp_cc_on_ack(tcp_cc_load(c), acked, c->srtt_us, tcp_now(c));
	tcp_cc_store(c);
}

/* SND.UNA < SEG.ACK =< SND.MAX: new data (or our SYN/FIN) acknowledged. */
static void ack_new_data(struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint32_t ack = seg->ack;
	uint32_t acked = ack - c->snd_una;
	uint32_t end = tcp_sndq_end(c);

	if (SEQ_GT(ack, c->sndq_seq))
		sndq_release(c, (SEQ_LT(ack, end) ? ack : end) - c->sndq_seq);
	c->snd_una = ack;
	if (SEQ_LT(c->snd_nxt, ack))
		c->snd_nxt = ack;
	c->retries = 0;
	c->ut_start_ns = 0;
	c->soft_err = 0; /* something got through: the error is stale */
	/* RFC 7323 4.1: with timestamps every ACK of new data is a sample. */
	if (tcp_ts_rtt_sample(c, seg)) {
		c->rtt_active = false;
	} else if (c->rtt_active && SEQ_GT(ack, c->rtt_seq)) {
		tcp_rtt_sample(c, tcp_now(c) - c->rtt_start_ns);
		c->rtt_active = false;
	}
	cc_new_ack(c, acked);
	/* RFC 6298 5.2 / 5.3. */
	if (c->snd_una == c->snd_max)
		tcp_timer_stop(c, TCP_T_RTO);
	else
		tcp_rto_start(c, true);
	if (c->want_writable && c->sndq.bytes <= tcp_sndbuf(c) / 2 && !c->fin_queued &&
	    (c->o.notsent_lowat == 0 || tcp_sndq_unsent(c) < c->o.notsent_lowat))
		c->ev |= TCP_EV_WRITABLE;
}

static bool fin_acked(const struct tcp_conn *c)
{
	return c->fin_queued && SEQ_GT(c->snd_una, c->fin_seq);
}

/* SYN-RECEIVED: the handshake's final ACK (RFC 9293 3.10.7.4, fifth). */
static int ack_syn_received(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (!SEQ_LT(c->snd_una, seg->ack) || SEQ_GT(seg->ack, c->snd_max)) {
		c->ts->stats.drop_bad_ack++;
		tcp_send_rst_for(c->ts, seg); /* <SEQ=SEG.ACK><CTL=RST> */
		return -EINVAL;
	}
	if (tcp_defer_accept_drop(c, seg))
		return -EAGAIN; /* TCP_DEFER_ACCEPT: the embryo waits for data */
	if (tcp_tfo_server_established(c)) {
		/* RFC 7413 4.2.2: a Fast Open child, accepted at its SYN. */
	} else if (c->listener != NULL) {
		LIST_REMOVE(c, link);
		c->listener->embryos--;
		c->listener = NULL;
		c->ts->stats.passive_opens++;
		c->ev |= TCP_EV_ACCEPT;
	} else {
		c->ev |= TCP_EV_CONNECTED;
	}
	tcp_handshake_done(c, c->iss + 1);
	return 0;
}

/* Window update only from a newer segment (SND.WL1/SND.WL2). */
static void update_window(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (SEQ_LT(c->snd_wl1, seg->seq) ||
	    (c->snd_wl1 == seg->seq && SEQ_LEQ(c->snd_wl2, seg->ack))) {
		/* RFC 7323 2.3: SND.WND = SEG.WND << Snd.Wind.Shift. */
		c->snd_wnd = (uint32_t)seg->wnd << c->snd_wscale;
		c->snd_wl1 = seg->seq;
		c->snd_wl2 = seg->ack;
	}
}

/* RFC 5961 5.2: an ACK is acceptable only in (SND.UNA - MAX.SND.WND) =<
 * SEG.ACK =< SND.NXT (here SND.MAX, so that ACKs of data sent before an
 * RTO's go-back-N stay good).  Beyond: RFC 9293 3.10.7.4, an ACK for
 * something not yet sent; below: too old to be from this connection's
 * recent past (blind data injection).  Either way the segment is dropped
 * and a challenge ACK (rate limited, RFC 5961 7) is sent. */
static bool ack_out_of_range(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_stats *st = &c->ts->stats;
	uint32_t max_wnd = RTE_MAX(c->max_snd_wnd, c->snd_wnd);

	if (SEQ_GT(seg->ack, c->snd_max))
		st->drop_bad_ack++;
	else if (SEQ_LT(seg->ack, c->snd_una - max_wnd))
		st->drop_ack_too_old++;
	else
		return false;
	if (challenge_ack_allowed(c)) {
		c->ack_now = true;
		tcp_output(c);
	}
	return true;
}

/* RFC 9293 3.10.7.4, fifth check: the ACK field; -errno ends processing.
 * ts_due: the segment, as it arrived, may set TS.Recent (RFC 7323 4.3);
 * it does so only once its ACK proved acceptable, as in Linux (tcp_ack's
 * tcp_replace_ts_recent): a segment dropped for its ACK (one beyond
 * SND.MAX, say an in-window FIN) must not raise TS.Recent, or the next
 * good segment fails PAWS.  Set before anything this ACK sends. */
static int input_ack(struct tcp_conn *c, const struct tcp_seg *seg, bool ts_due)
{
	bool dup, sack_dup;
	uint32_t sacked0, una0 = c->snd_una;

	if (c->state == TCP_SYN_RECEIVED && ack_syn_received(c, seg) < 0)
		return -EINVAL;
	if (ack_out_of_range(c, seg))
		return -EINVAL;
	/* Linux takes TS.Recent past its old-ACK exit (tcp_ack's old_ack):
	 * a segment acknowledging less than SND.UNA leaves it. */
	if (ts_due && !(tcp_profile_linux(c->ts) && SEQ_LT(seg->ack, c->snd_una)))
		tcp_ts_take_recent(c, seg);
	if (SEQ_LT(seg->ack, c->snd_una))
		return 0; /* old duplicate ACK: ignore it, keep the segment */
	dup = is_dup_ack(c, seg);
	sack_dup = c->sack_ok && seg->ack == c->snd_una && seg->len == 0 &&
		   SEQ_GT(c->snd_nxt, c->snd_una);
	tcp_sb_ack_begin(c); /* scoreboard.c: before SND.UNA moves */
	sacked0 = c->sb.sacked;
	if (SEQ_GT(seg->ack, c->snd_una))
		ack_new_data(c, seg);
	/* RFC 6675: SACK blocks and delivery. */
	tcp_sb_ack_end(c, seg);
	tcp_rack_ack(c, seg); /* rack.c: RFC 8985 loss marks */
	/* RFC 6675 2: with SACK, an ACK at SND.UNA that SACKs octets not
	 * SACKed before is a duplicate too, even if the window moved. */
	if (sack_dup && !dup && c->sb.sacked > sacked0) {
		dup = true;
		c->ts->stats.dup_acks_sack++;
	}
	update_window(c, seg);
	tcp_loss_ack(c, seg, una0, sacked0, dup); /* loss.c: recovery, undo, TLP */
	if (!fin_acked(c))
		return 0;
	switch (c->state) {
	case TCP_FIN_WAIT_1:
		tcb_set_state(c, TCP_FIN_WAIT_2);
		/* An orphan waits for the peer's FIN no longer than 2 MSL. */
		if (c->app_closed)
			tcp_fin_wait2_orphan(c, false); /* TCP_LINGER2 */
		break;
	case TCP_CLOSING:
		tcp_enter_time_wait(c);
		break;
	case TCP_LAST_ACK:
		tcb_set_closed(c, 0);
		tcb_drop(c);
		return -ENOENT;
	default:
		break;
	}
	return 0;
}

/* Appends [skip, skip + len) of m to the receive queue, one mbuf per
 * segment of m, without copying; the rest of m is freed. */
static void rcvq_append(struct tcp_conn *c, struct rte_mbuf *m, uint32_t skip, uint32_t len)
{
	struct rte_mbuf *s;

	while ((s = tcp_mbuf_take_piece(&m, &skip, &len)) != NULL)
		tcp_mq_push(&c->rcvq, s);
}

/* len new bytes at RCV.NXT arrived as one segment of several MSS: the port
 * coalesced the peer's frames (GRO, LRO).  The peer sent them MSS-sized and
 * clocks its sending on our ACKs, at least one per second full-sized
 * segment (RFC 9293 3.8.6.3, RFC 5681 4.2): the ACKs that fall inside the
 * segment go now, the one at its end by the usual rule. */
static void ack_inside_coalesced(struct tcp_conn *c, uint32_t len)
{
	uint32_t step = 2u * tcp_our_mss(c->ts, tcb_is_v6(c));
	uint32_t off = c->unacked_bytes < step ? step - c->unacked_bytes : step;

	c->ts->stats.rx_coalesced_segs++;
	for (; off < len; off += step)
		if (tcp_send_ack_at(c, c->rcv_nxt + off) == 0)
			c->ts->stats.acks_in_coalesced++;
}

/* RFC 9293 3.10.7.4, eighth check: the FIN. */
static void input_fin(struct tcp_conn *c)
{
	if (!c->fin_rcvd) {
		c->fin_rcvd = true;
		c->rcv_nxt++;
		c->ev |= TCP_EV_READABLE;
	}
	if (tcp_ack_may_hold(c))
		tcp_ack_hold(c); /* our close may carry it */
	else
		c->ack_now = true;
	switch (c->state) {
	case TCP_SYN_RECEIVED:
	case TCP_ESTABLISHED:
		tcb_set_state(c, TCP_CLOSE_WAIT);
		break;
	case TCP_FIN_WAIT_1:
		if (fin_acked(c))
			tcp_enter_time_wait(c);
		else
			tcb_set_state(c, TCP_CLOSING);
		break;
	case TCP_FIN_WAIT_2:
		tcp_enter_time_wait(c);
		break;
	case TCP_TIME_WAIT:
		tcp_timer_set(c, TCP_T_2MSL, tcp_now(c) + US_MS(c->ts->cfg.time_wait_ms));
		break;
	default:
		break; /* CLOSE-WAIT, CLOSING, LAST-ACK: remain */
	}
}

/* Data nobody will ever read: tell the peer (like Linux); consumes m.
 * Linux answers the segment itself (tcp_v4_send_reset: <SEQ=SEG.ACK>
 * <CTL=RST>, no options), not from the connection as an ABORT would. */
static void text_after_close(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg *seg)
{
	c->ts->stats.drop_after_close++;
	if (tcp_profile_linux(c->ts))
		tcp_send_rst_for(c->ts, seg);
	else
		tcp_send_rst(c);
	tcb_drop(c);
	rte_pktmbuf_free(m);
}

/* Text (or a FIN) beyond RCV.NXT: held in the reassembly queue and
 * acknowledged at once (RFC 9293 3.10.7.4, RFC 5681 4.2), with SACK. */
static void text_out_of_order(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg,
			      bool takes_data)
{
	bool fin = seg->flags & TH_FIN;

	if (seg->len == 0 && !fin) {
		rte_pktmbuf_free(m);
		return;
	}
	c->ack_now = true;
	if (!takes_data) {
		c->ts->stats.drop_unacceptable++; /* text after the peer's FIN */
		rte_pktmbuf_free(m);
		return;
	}
	if (seg->len > 0 && c->app_closed) {
		text_after_close(c, m, seg);
		return;
	}
	c->ts->stats.ooo_queued++;
	c->rcv_ooopack++;
	tcp_reass_insert(c, m, seg->skip, seg->seq, seg->len, fin);
}

/* RFC 9293 3.10.7.4, seventh and eighth checks; consumes m. */
void tcp_input_text(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg)
{
	bool takes_data = c->state == TCP_ESTABLISHED || c->state == TCP_FIN_WAIT_1 ||
			  c->state == TCP_FIN_WAIT_2;
	uint32_t len = takes_data ? seg->len : 0;
	bool gap = c->ooo_segs > 0 || c->ooo_fin, fin = seg->flags & TH_FIN;

	if (SEQ_GT(seg->seq, c->rcv_nxt)) {
		text_out_of_order(c, m, seg, takes_data);
		return;
	}
	if (!takes_data && seg->len > 0)
		c->ts->stats.drop_unacceptable++; /* text after the peer's FIN */
	if (len > 0 && c->app_closed) {
		text_after_close(c, m, seg);
		return;
	}
	if (len > 0) {
		if (unlikely(len > tcp_our_mss(c->ts, tcb_is_v6(c))))
			ack_inside_coalesced(c, len);
		rcvq_append(c, m, seg->skip, len);
		c->rcv_nxt += len;
		/* RFC 5681 4.2: filling (part of) a gap is acknowledged at once. */
		if (gap)
			len += tcp_reass_deliver(c, &fin);
		c->ts->stats.rx_bytes += len;
		c->bytes_received += len;
		c->ev |= TCP_EV_READABLE;
		/* Before last_data_rcvd_ns moves: quick ACKs after an idle spell. */
		tcp_ack_received(c, len, gap || (fin && !tcp_ack_may_hold(c)));
		c->last_data_rcvd_ns = tcp_now(c);
	} else {
		rte_pktmbuf_free(m);
	}
	if (fin && c->state != TCP_CLOSED)
		input_fin(c);
}

/* In SYN-RECEIVED, the peer's SYN again: our SYN-ACK was lost. */
static bool dup_syn(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (c->state != TCP_SYN_RECEIVED || (seg->flags & (TH_SYN | TH_ACK | TH_RST)) != TH_SYN ||
	    seg->seq != c->irs)
		return false;
	c->ts->stats.dup_syn_rcvd++;
	tcp_send_syn(c);
	return true;
}

/* RFC 9293 3.5 figure 7, line 4: after a simultaneous open the peer's
 * SYN-ACK repeats its SYN; its ACK completes our handshake, so it is
 * processed as the ACK that follows the SYN. */
static void simopen_synack(struct tcp_conn *c, struct tcp_seg *seg)
{
	if (c->state != TCP_SYN_RECEIVED || c->listener != NULL ||
	    (seg->flags & (TH_SYN | TH_ACK | TH_RST)) != (TH_SYN | TH_ACK) || seg->seq != c->irs)
		return;
	seg->flags &= (uint8_t)~TH_SYN;
	seg->seq++;
	c->ack_now = true;
}

void tcp_input_synchronized(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg)
{
	struct tcp_stats *st = &c->ts->stats;
	bool ts_due, urg_due;
	struct tcp_urg_seg urg;

	simopen_synack(c, seg);
	/* RFC 7323 5.3: PAWS before the sequence number check. */
	if (dup_syn(c, seg) || !tcp_paws_ok(c, seg) || !check_sequence(c, seg))
		goto drop;
	tcp_peer_heard(c); /* tcb_timers.c: keepalive restarts, probes answered */
	ts_due = tcp_ts_recent_due(c, seg); /* before trim moves SEG.SEQ */
	if (seg->flags & TH_RST) {
		input_rst(c, seg);
		goto drop;
	}
	if (seg->flags & TH_SYN) {
		input_syn(c);
		goto drop;
	}
	if (!(seg->flags & TH_ACK)) {
		st->drop_no_ack++;
		goto drop;
	}
	/* RFC 9293 3.10.7.4, sixth check (MUST-66: even with a zero window),
	 * on the segment as it came, before trim moves SEG.SEQ. */
	urg_due = unlikely((seg->flags & TH_URG) || c->urg.rcv == TCP_URG_NOTYET);
	if (urg_due)
		urg = (struct tcp_urg_seg){ .seq = seg->seq, .skip = seg->skip, .len = seg->len,
					    .urp = seg->urp, .flags = seg->flags };
	trim(c, seg);
	if (input_ack(c, seg, ts_due) < 0)
		goto drop;
	if (urg_due)
		tcp_urg_input(c, m, &urg);
	tcp_input_text(c, m, seg);
	if (!c->dead) {
		if (unlikely(c->urg.rcv != TCP_URG_NONE))
			tcp_urg_deliver(c);
		tcp_output(c);
	}
	return;
drop:
	rte_pktmbuf_free(m);
}

/* SND.UNA moved past queued data outside an ACK's processing (RFC 7413:
 * the SYN-ACK acknowledged the data our SYN carried): free what it covers. */
void tcp_sndq_release_to_una(struct tcp_conn *c)
{
	uint32_t end = tcp_sndq_end(c);

	if (SEQ_GT(c->snd_una, c->sndq_seq))
		sndq_release(c, (SEQ_LT(c->snd_una, end) ? c->snd_una : end) - c->sndq_seq);
}
