/* tcp/loss.c: loss recovery on the TCB (state in tcp/loss.h), around the
 * pure decision module tcp/recovery.h (PRR of RFC 9937 by default, or an
 * alternative).  Every entry into recovery and every exit (the full ACK,
 * an RTO, the connection's end) passes here.
 *
 * On every ACK (input_ack, after the scoreboard took its SACK blocks):
 *  - duplicate ACKs are counted (RFC 5681; 1 and 2 let limited transmit
 *    send, output.c), and forgotten on an ACK of new data;
 *  - entry: the DupThresh-th duplicate ACK (RFC 5681 3.2), or with SACK
 *    RFC 6675 5's loss detection IsLost(SND.UNA) (with loss_detection =
 *    rack instead of both: a segment RFC 8985 RACK marked lost, rack.c,
 *    also when its timer marks one between ACKs), unless the ACK does not
 *    cover more than recover (RFC 6582 3.2 step 2; recover is also set by an
 *    RTO).  ssthresh comes from the congestion controller (CongCtrlAlg in
 *    RFC 9937 6.1), recover = SND.MAX.
 *  - per ACK: DeliveredData = change in SND.UNA + change in SACKed bytes
 *    (RFC 9937 6.2), without SACK tcp_rec_nonsack_delivered(); pipe from
 *    the scoreboard (tcp_loss_pipe); the module returns sndcnt, which
 *    becomes rec_budget, and the cwnd (pipe + sndcnt for PRR).
 *  - exit: SND.UNA >= recover, cwnd = tcp_rec_exit() (ssthresh for PRR).
 * output.c (tcp_recovery_send) spends rec_budget segment by segment in
 * RFC 6675 NextSeg order and reports each (tcp_loss_on_rxt,
 * tcp_loss_spent).  An RTO abandons the episode (tcp_loss_on_rto; recover =
 * SND.MAX keeps the go-back-N dup ACKs from starting another one).  A
 * reduction that proves spurious is undone by undo.c (tcp/undo.h), which
 * also ends the episode (tcp_loss_undone).
 */
#include <errno.h>

#include "tcp/tcb.h"

static enum tcp_rec_alg rec_alg(const struct tcp_conn *c)
{
	return c->loss.rec_alg_set ? c->loss.rec_alg : c->ts->cfg.recovery;
}

int tcp_set_recovery(struct tcp_conn *c, enum tcp_rec_alg alg)
{
	if ((unsigned)alg >= TCP_REC_ALG_COUNT)
		return -EINVAL;
	if (c->app_closed)
		return -EBADF;
	c->loss.rec_alg_set = true;
	c->loss.rec_alg = alg;
	return 0;
}

/* Without SACK there is no scoreboard: the bytes duplicate ACKs counted
 * (the module's nonsack_credit, one SMSS each) stand for what left the
 * network, as Linux's "reno sack" estimate does, and SND.UNA's segment is
 * presumed lost until it is retransmitted (RFC 6582: at entry and after
 * each partial ACK), as RFC 6675 SetPipe leaves a lost segment out until
 * its retransmission counts it again. */
uint32_t tcp_loss_pipe(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una, rxt;

	if (!c->sack_ok) {
		uint32_t gone = 0;

		if (c->loss.in_recovery) {
			gone = c->loss.rec.nonsack_credit;
			if (!SEQ_GT(c->loss.rxt_high, c->snd_una))
				gone += c->mss;
		}
		return out > gone ? out - gone : 0;
	}
	if (tcp_rack_on(c))
		return tcp_rack_pipe(c); /* rack.c: RACK's marks are IsLost */
	rxt = c->loss.in_recovery && SEQ_GT(c->loss.rxt_high, c->snd_una) ? c->loss.rxt_high : c->snd_una;
	return tcp_sb_pipe(&c->sb, c->snd_una, c->snd_max, rxt, c->mss);
}

/* RFC 5681 3.2 (DupThresh duplicate ACKs) or RFC 6675 5 (IsLost(SND.UNA)
 * from SACKed bytes), with RFC 6582 3.2 step 2. */
static bool rec_should_enter(struct tcp_conn *c, bool dup)
{
	bool rack = tcp_rack_on(c); /* rack.c: with SACK its marks replace both */
	bool by_dup = !rack && dup && c->loss.dupacks == TCP_SB_DUPTHRESH;
	bool by_sack = rack ? tcp_rack_lost_any(c) :
		       c->sack_ok && c->sb.n > 0 && tcp_sb_is_lost(&c->sb, c->snd_una, c->mss);

	if (c->snd_una == c->snd_max || (!by_dup && !by_sack))
		return false;
	/* RFC 6582 3.2 step 2 without SACK: only an ACK covering more than
	 * recover.  With SACK the scoreboard says which data is missing, so
	 * SND.UNA == recover is enough (RFC 6675 5 has no such guard; it
	 * still keeps go-back-N after an RTO from starting an episode). */
	if (c->loss.recover_valid && (c->sack_ok ? SEQ_LT(c->snd_una, c->loss.recover) :
					      !SEQ_GT(c->snd_una, c->loss.recover))) {
		if (by_dup)
			c->ts->stats.fast_retransmit_suppressed++;
		return false;
	}
	if (rack)
		tcp_rack_on_rec_entry(c);
	else if (!by_dup)
		c->ts->stats.rec_enter_lost++;
	return true;
}

/* RFC 9937 6.1 on the ACK that starts recovery.  RecoverFS is what was
 * outstanding and not SACKed after this ACK plus what this ACK delivered;
 * with sacked_before = the SACKed bytes before the ACK the module's
 * flight - sacked_before + newly_acked is exactly that.  Without SACK the
 * dup ACKs before this one stand for SACKed bytes (one SMSS each). */
static void rec_enter(struct tcp_conn *c, uint32_t una0, uint32_t sacked0)
{
	struct tcp_stats *st = &c->ts->stats;
	uint32_t flight = c->snd_max - c->snd_una, cc_flight = flight;
	uint32_t pre = c->sack_ok ? sacked0 : (c->loss.dupacks > 1 ? (c->loss.dupacks - 1) * c->mss : 0);
	struct tcp_rec_start start = {
		.flight = flight, .sacked_before = RTE_MIN(pre, flight),
		.newly_acked = c->snd_una - una0,
	};

	tcp_undo_on_recovery(c); /* undo.c: before the reduction */
	/* RFC 5681 3.2 step 2: FlightSize less what limited transmit sent. */
	cc_flight -= RTE_MIN(cc_flight, c->loss.lt_bytes);
	tcp_cc_on_congestion(tcp_cc_load(c), cc_flight);
	tcp_cc_store(c);
	c->loss.in_recovery = true;
	c->loss.recover = c->snd_max;
	c->loss.recover_valid = true;
	c->loss.rxt_high = c->snd_una;
	c->loss.rec_first_rxt = true;
	c->loss.rescue_valid = false;
	c->loss.rescue_lo = c->loss.rescue_hi = c->snd_una;
	st->recovery_episodes++;
	c->loss.recovery_episodes++;
	tcp_rec_enter(&c->loss.rec, rec_alg(c), c->mss, c->ssthresh, c->cwnd, &start);
	if (!c->sack_ok)
		c->loss.rec.nonsack_credit = start.sacked_before;
}

static void rec_exit(struct tcp_conn *c)
{
	uint32_t cwnd = tcp_rec_exit(&c->loss.rec);

	c->loss.in_recovery = false;
	c->loss.rec_budget = 0;
	c->ts->stats.recovery_exits++;
	tcp_rack_on_recovery_exit(c); /* rack.c: the reordering window's decay */
	tcp_cc_on_recovery_exit(tcp_cc_load(c));
	tcp_cc_store(c);
	c->cwnd = cwnd; /* ssthresh, or rate-halving's smaller window */
}

/* DeliveredData of this ACK (RFC 9937 6.2). */
static uint32_t rec_delivered(struct tcp_conn *c, uint32_t una0, uint32_t sacked0, bool dup)
{
	uint32_t acked = c->snd_una - una0;
	int64_t d;

	if (!c->sack_ok)
		return tcp_rec_nonsack_delivered(&c->loss.rec, dup, acked);
	d = (int64_t)acked + (int64_t)c->sb.sacked - (int64_t)sacked0;
	return d > 0 ? (uint32_t)d : 0; /* a renege can shrink SACKed bytes */
}

/* RFC 5681 3.2: duplicate ACKs in a row; an ACK of new data ends the run
 * (and what limited transmit sent is part of the flight again). */
static void count_dupacks(struct tcp_conn *c, uint32_t acked, bool dup)
{
	if (acked > 0) {
		c->loss.dupacks = 0;
		c->loss.lt_bytes = 0;
	} else if (dup) {
		c->ts->stats.dup_acks++;
		c->loss.dupacks++;
	}
}

/* Recovery's part of an ACK (or of the RACK timer's marks): entry, exit,
 * or PRR's sending decision for this ACK. */
static void recovery_step(struct tcp_conn *c, uint32_t una0, uint32_t sacked0, bool dup)
{
	struct tcp_rec_ack a;
	struct tcp_rec_out out;
	uint32_t acked = c->snd_una - una0;

	if (!c->loss.in_recovery) {
		if (!rec_should_enter(c, dup))
			return;
		rec_enter(c, una0, sacked0);
	} else if (SEQ_GEQ(c->snd_una, c->loss.recover)) {
		rec_exit(c);
		return;
	} else if (acked > 0) {
		c->ts->stats.partial_acks++;
		c->loss.partial_acks++;
	}
	if (SEQ_LT(c->loss.rxt_high, c->snd_una))
		c->loss.rxt_high = c->snd_una;
	a.delivered = rec_delivered(c, una0, sacked0, dup);
	a.pipe = tcp_loss_pipe(c);
	/* RFC 9937 6.2 SafeACK: SND.UNA advanced and no further loss shown;
	 * we read "further loss" as newly SACKed data (a SACK above a hole is
	 * what reveals a loss).  Without SACK a partial ACK is itself the
	 * sign of the next loss (RFC 6582). */
	a.safe = acked > 0 && c->sack_ok && c->sb.sacked <= sacked0;
	out = tcp_rec_on_ack(&c->loss.rec, &a);
	c->cwnd = out.cwnd;
	c->loss.rec_budget = out.sndcnt;
	/* An ACK that delivered nothing leaves cwnd as it was (RFC 9937 6.2
	 * returns early), but pipe may have fallen (a partial ACK without SACK
	 * takes back what dup ACKs already counted and presumes the next
	 * segment lost): what cwnd now allows may go, as in a sender whose
	 * only gate is pipe < cwnd.  (Not before the episode's first
	 * delivery: cwnd is then still the one from before recovery.) */
	if (a.delivered == 0 && c->loss.rec.prr_delivered > 0 && out.cwnd > a.pipe)
		c->loss.rec_budget = RTE_MAX(c->loss.rec_budget, out.cwnd - a.pipe);
	/* RFC 5681 3.2 step 3 / RFC 6675 5 (4.3): the ACK that starts recovery
	 * always retransmits the first segment, even one that delivered
	 * nothing new (a duplicate ACK without new SACK information, for which
	 * RFC 9937 6.2 returns before its own forced retransmission). */
	if (c->loss.rec_first_rxt && c->loss.rec.prr_out == 0 && c->loss.rec_budget == 0)
		c->loss.rec_budget = c->mss;
}

/* RFC 6298 5.5-5.7 and RFC 5681 3.1: go-back-N from SND.UNA replaces the
 * episode (RFC 6582 3.2 step 1 / 4: recovery ends, recover = SND.MAX), and
 * the duplicate ACKs counted so far are forgotten. */
void tcp_loss_on_rto(struct tcp_conn *c)
{
	struct tcp_loss *l = &c->loss;

	tcp_undo_on_rto(c); /* undo.c: before the reduction */
	l->rtos++;
	if (l->in_recovery) {
		c->ts->stats.recovery_rto++;
		l->in_recovery = false;
		l->rec_budget = 0;
	}
	l->dupacks = 0;
	l->lt_bytes = 0;
	l->recover = c->snd_max;
	l->recover_valid = true;
	tcp_tlp_on_rto(c); /* tlp.c */
}

/* An undo (undo.c) withdraws the reduction: an episode ends with the
 * window from before it, not the recovery algorithm's exit value, and
 * recover no longer stands for a reduction made for this window (nor is
 * go-back-N left to guard against), so a loss found now starts an episode
 * of its own, as after Linux's undo (back to the Open state). */
void tcp_loss_undone(struct tcp_conn *c)
{
	c->loss.recover_valid = false;
	if (!c->loss.in_recovery)
		return;
	c->ts->stats.recovery_undone++;
	c->loss.in_recovery = false;
	c->loss.rec_budget = 0;
}

void tcp_loss_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t una0,
		  uint32_t sacked0, bool dup)
{
	count_dupacks(c, c->snd_una - una0, dup);
	tcp_undo_ack(c, seg); /* undo.c: a spurious reduction undone */
	recovery_step(c, una0, sacked0, dup);
	tcp_tlp_ack(c, seg, una0, sacked0, dup); /* tlp.c: the probe's episode */
}

/* Marks made between ACKs: no ACK arrived, so nothing for the duplicate
 * ACK count, undo or the probe; recovery starts or sends what they allow. */
void tcp_loss_on_rack_timer(struct tcp_conn *c)
{
	recovery_step(c, c->snd_una, c->sb.sacked, false);
}

/* The TCB leaves its table (reset, abort, give-up, close) in an episode. */
void tcp_loss_on_drop(struct tcp_conn *c)
{
	if (!c->loss.in_recovery)
		return;
	c->ts->stats.recovery_dropped++;
	c->loss.in_recovery = false;
	c->loss.rec_budget = 0;
}

void tcp_loss_on_limited_transmit(struct tcp_conn *c, uint32_t len)
{
	c->ts->stats.limited_transmits++;
	c->loss.lt_bytes += len;
}

/* A retransmission of [seq, end) in recovery: the first one is the fast
 * retransmit; HighRxt and the D-SACK count follow it; RFC 6675 rule 4's
 * rescue leaves HighRxt and is remembered by itself. */
void tcp_loss_on_rxt(struct tcp_conn *c, uint32_t seq, uint32_t end, bool rescue)
{
	struct tcp_loss *l = &c->loss;

	if (l->rec_first_rxt && seq == c->snd_una) {
		l->rec_first_rxt = false;
		c->ts->stats.fast_retransmits++;
		l->fast_retransmits++;
	}
	if (rescue) {
		l->rescue_valid = true;
		l->rescue_rxt = l->recover;
		l->rescue_lo = seq;
		l->rescue_hi = end;
		return;
	}
	if (SEQ_GT(end, l->rxt_high))
		l->rxt_high = end;
	tcp_undo_on_rxt(c, seq, end); /* undo.c */
}

/* Bytes (and a FIN) sent in recovery, new or again: PRR's prr_out, and
 * what is left of this ACK's budget (the last segment may overdraw it by
 * less than one SMSS; prr_out records the bytes, so PRR pays it back). */
void tcp_loss_spent(struct tcp_conn *c, uint32_t sent)
{
	tcp_rec_on_send(&c->loss.rec, sent);
	c->loss.rec_budget -= RTE_MIN(c->loss.rec_budget, RTE_MAX(sent, 1u));
}

void tcp_loss_info(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	info->recovery = (uint8_t)rec_alg(c);
	info->rtos = c->loss.rtos;
	info->spurious_recoveries = c->loss.spurious_recoveries;
	tcp_tlp_info(c, info); /* tlp.c */
	tcp_undo_info(c, info); /* undo.c */
	tcp_rack_info(c, info);
}
