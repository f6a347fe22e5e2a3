/* tcp/tlp.c: Tail Loss Probe (RFC 8985 section 7; state in tcp/tlp.h).
 *
 * The probe timeout is one more kind of the TCB's multiplexed timer
 * (TCP_T_TLP).  It runs ahead of the RTO, which stays armed behind it (the
 * PTO is only armed when it falls before the RTO), and once a probe has
 * gone the RTO restarts from it: RFC 8985 7.3 keeps the RTO as the last
 * resort, as Linux's ICSK_TIME_LOSS_PROBE hands its slot back to the RTO.
 *
 * Calls in: output.c after new data left outside recovery (tcp_tlp_on_send),
 * established.c after loss.c took an ACK (tcp_tlp_ack), tcb_timers.c when
 * the PTO fires (tcp_tlp_expired) and on an RTT sample (tcp_tlp_on_rtt),
 * loss.c on an RTO (tcp_tlp_on_rto).
 */
#include <errno.h>

#include "tcp/tcb.h"

static bool tlp_on(const struct tcp_conn *c)
{
	return c->loss.tlp.on_set ? c->loss.tlp.on : c->ts->cfg.tlp;
}

int tcp_set_tlp(struct tcp_conn *c, bool on)
{
	if (c->app_closed)
		return -EBADF;
	c->loss.tlp.on_set = true;
	c->loss.tlp.on = on;
	if (!on) {
		c->loss.tlp.out = false;
		tcp_timer_stop(c, TCP_T_TLP);
	}
	return 0;
}

/* RFC 8985 7.2: the PTO is armed with data outstanding outside fast
 * recovery and RTO recovery (SND.UNA below the recover an RTO set), and
 * not while SACKed segments are outstanding (the RFC's RACK.segs_sacked:
 * the peer is already telling us about the holes).  Like Linux, only with
 * SACK: RFC 8985 requires it, and without it the probe's duplicate could
 * not be told from a repair. */
static bool tlp_may_arm(const struct tcp_conn *c)
{
	const struct tcp_loss *l = &c->loss;

	return tlp_on(c) && c->sack_ok && tcb_state_sends_data(c) && c->snd_una != c->snd_max &&
	       !l->in_recovery && !(l->recover_valid && SEQ_LT(c->snd_una, l->recover)) &&
	       c->sb.sacked == 0;
}

/* The FIN is sent and not yet acknowledged. */
static bool fin_out(const struct tcp_conn *c)
{
	return c->fin_queued && SEQ_LT(c->fin_seq, c->snd_max) && SEQ_GEQ(c->fin_seq, c->snd_una);
}

/* RFC 8985 7.2 TLP_calc_PTO: 2 SRTT, plus the peer's delayed ACK when one
 * segment is in flight (its ACK may wait for a second one that never
 * comes); 1 s without an RTT sample.  The allowance is Linux's: rto_min
 * (200 ms, the RFC's WCDelAckT) for one segment, two wheel ticks otherwise
 * (Linux's TCP_TIMEOUT_MIN).  An allowance of our own delack_ms (40 ms)
 * raced a peer's 40 ms delayed ACK and probed needlessly on short paths;
 * a PTO that falls past the RTO is the RTO's time (tlp_arm). */
static uint64_t tlp_pto_ns(const struct tcp_conn *c)
{
	uint32_t flight = c->snd_max - c->snd_una - (fin_out(c) ? 1u : 0u);
	uint64_t pto;

	if (!c->rtt_valid)
		return US_SEC(1);
	pto = 2 * (uint64_t)c->srtt_us * 1000u;
	if (flight <= c->mss)
		pto += US_MS(c->ts->cfg.rto_min_ms);
	else
		pto += 2 * c->ts->env.wheel->tick_ns;
	return pto;
}

/* RFC 8985 7.2: never later than the RTO.  As Linux (tcp_schedule_loss_probe
 * with its single timer slot), a PTO at or past the RTO's time becomes the
 * RTO's time, and the probe goes instead of the RTO: here one wheel tick
 * before it (the probe restarts the RTO).  The probe repairs a lost tail
 * without the RTO's cwnd of one segment and its go-back-N; on a path whose
 * RTO is close to 2 SRTT (here max(rto_min, SRTT + 4 RTTVAR)) most PTOs
 * land there.  Only an RTO within a tick is left to fire alone. */
static void tlp_arm(struct tcp_conn *c)
{
	uint64_t tick = c->ts->env.wheel->tick_ns, now = tcp_now(c);
	uint64_t at = now + tlp_pto_ns(c), rto = c->deadline[TCP_T_RTO];

	if (rto == 0 || rto <= now + tick) {
		tcp_timer_stop(c, TCP_T_TLP);
		return;
	}
	if (at + tick > rto) {
		c->ts->stats.tlp_rto_nearer++;
		at = rto - tick;
	}
	tcp_timer_set(c, TCP_T_TLP, at);
}

/* RFC 8985 7.2: (re)started after new data that was not a probe. */
void tcp_tlp_on_send(struct tcp_conn *c)
{
	if (tlp_may_arm(c))
		tlp_arm(c);
}

void tcp_tlp_on_rtt(struct tcp_conn *c)
{
	c->loss.tlp.rtt_seen = true;
}

/* RFC 8985 7.4.2: an RTO ends the episode (a fast recovery too, tcp_tlp_ack). */
void tcp_tlp_on_rto(struct tcp_conn *c)
{
	c->loss.tlp.out = false;
	tcp_timer_stop(c, TCP_T_TLP);
}

/* RFC 8985 7.3: the most recently sent segment again, at most one SMSS
 * ending at SND.MAX (the end of a segment of several MSS, as Linux cuts
 * its last skb), with the FIN if it carried one. */
static int probe_rxt(struct tcp_conn *c)
{
	struct tcp_tlp *p = &c->loss.tlp;
	bool fin = fin_out(c);
	uint32_t end = fin ? c->fin_seq : c->snd_max;
	uint32_t seq = SEQ_GEQ(p->last_seq, c->snd_una) && SEQ_LEQ(p->last_seq, end) ? p->last_seq
										   : c->snd_una;
	int rc;

	if (end - seq > c->mss)
		seq = end - c->mss;
	c->rtt_active = false; /* Karn: the timed segment may be this one */
	rc = tcp_send_segment(c, TH_ACK | (fin ? TH_FIN : 0), seq, end - seq);
	if (rc == 0) {
		p->rxt_lo = seq;
		tcp_rack_sent(c, seq, end + (fin ? 1u : 0u), true); /* rack.c: its send time */
	}
	return rc;
}

/* RFC 8985 7.3 TLP_send_probe, when the PTO fires. */
void tcp_tlp_expired(struct tcp_conn *c)
{
	struct tcp_tlp *p = &c->loss.tlp;
	struct tcp_stats *st = &c->ts->stats;

	if (!tlp_may_arm(c))
		return; /* no longer a tail: the RTO stays */
	/* Conditions 1 and 2: no probe outstanding, an RTT sample since the
	 * last one; otherwise the RTO, still armed, takes over. */
	if (p->out || !p->rtt_seen) {
		st->tlp_skipped++;
		return;
	}
	if (tcp_output_probe_new(c)) {
		p->rxt = false;
		st->tlp_probes_new_data++;
	} else if (probe_rxt(c) == 0) {
		p->rxt = true;
	} else {
		return; /* no mbuf (counted): the RTO stays */
	}
	tcp_user_timeout_mark(c);
	p->out = true;
	p->high = c->snd_max;
	p->flight = c->snd_max - c->snd_una;
	p->rtt_seen = false;
	st->tlp_probes++;
	p->probes++;
	tcp_rto_start(c, true);
}

/* RFC 2883: the ACK's D-SACK reports the probe's retransmission received
 * twice (the original arrived as well). */
static bool dsack_of_probe(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	const struct tcp_tlp *p = &c->loss.tlp;
	uint32_t s = seg->sack[0][0], e = seg->sack[0][1];

	return seg->nsack > 0 &&
	       tcp_sb_is_dsack((const uint32_t (*)[2])seg->sack, seg->nsack, seg->ack) &&
	       SEQ_LT(s, e) && SEQ_LT(s, p->high) && SEQ_GT(e, p->rxt_lo) && SEQ_LEQ(e, p->high);
}

/* RFC 8985 7.4: the probe repaired a loss.  The congestion response of a
 * fast recovery, done at once (as Linux's CWR for TLP): ssthresh from the
 * congestion controller for the flight the probe was sent into, cwnd =
 * ssthresh. */
static void tlp_repaired(struct tcp_conn *c)
{
	struct tcp_tlp *p = &c->loss.tlp;

	tcp_cc_on_congestion(tcp_cc_load(c), p->flight);
	tcp_cc_on_recovery_exit(&c->cc);
	tcp_cc_store(c);
	c->ts->stats.tlp_repairs++;
	p->repairs++;
	p->out = false;
}

/* RFC 8985 7.4.4 (Linux's tcp_process_tlp_ack): the episode ends when an
 * ACK reaches the probe's end.  A probe of new data only ends it.  A
 * retransmission D-SACKed, or answered by a duplicate ACK at its end (a
 * peer that does not D-SACK), arrived twice: no loss.  An ACK beyond it
 * without either says only the probe arrived: a loss was repaired (an ACK
 * just at its end may still be followed by the duplicate's D-SACK). */
static void tlp_episode(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t sacked0,
			bool dup)
{
	struct tcp_tlp *p = &c->loss.tlp;

	if (c->loss.in_recovery) {
		p->out = false; /* RFC 8985 7.4.2: the episode's response covers it */
		return;
	}
	if (SEQ_LT(seg->ack, p->high))
		return;
	if (!p->rxt) {
		p->out = false;
	} else if (dsack_of_probe(c, seg) ||
		   (dup && seg->ack == p->high && c->sb.sacked <= sacked0)) {
		c->ts->stats.tlp_no_loss++;
		p->out = false;
	} else if (SEQ_GT(seg->ack, p->high)) {
		tlp_repaired(c);
	}
}

void tcp_tlp_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t una0, uint32_t sacked0,
		 bool dup)
{
	if (c->loss.tlp.out)
		tlp_episode(c, seg, sacked0, dup);
	if (!tlp_may_arm(c))
		tcp_timer_stop(c, TCP_T_TLP);
	else if (SEQ_GT(c->snd_una, una0))
		tlp_arm(c); /* RFC 8985 7.2: an ACK of new data restarts it */
}

void tcp_tlp_info(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	info->tlp = tlp_on(c);
	info->tlp_probes = c->loss.tlp.probes;
	info->tlp_repairs = c->loss.tlp.repairs;
}
