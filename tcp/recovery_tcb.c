/* tcp/recovery_tcb.c: fast recovery on the TCB, around the pure decision
 * module tcp/recovery.h (PRR of RFC 9937 by default, or an alternative).
 *
 * On every ACK (input_ack, after the scoreboard took its SACK blocks):
 *  - entry: the DupThresh-th duplicate ACK (RFC 5681 3.2), or with SACK
 *    RFC 6675 5's loss detection IsLost(SND.UNA), unless the ACK does not
 *    cover more than recover (RFC 6582 3.2 step 2; recover is also set by an
 *    RTO).  ssthresh comes from the congestion controller (CongCtrlAlg in
 *    RFC 9937 6.1), recover = SND.MAX.
 *  - per ACK: DeliveredData = change in SND.UNA + change in SACKed bytes
 *    (RFC 9937 6.2), without SACK tcp_rec_nonsack_delivered(); pipe from
 *    the scoreboard (tcp_recovery_pipe); the module returns sndcnt, which
 *    becomes rec_budget, and the cwnd (pipe + sndcnt for PRR).
 *  - exit: SND.UNA >= recover, cwnd = tcp_rec_exit() (ssthresh for PRR).
 * output.c (tcp_recovery_send) spends rec_budget segment by segment in
 * RFC 6675 NextSeg order and reports each with tcp_rec_on_send().
 * An RTO abandons the episode (tcb_timers.c clears in_recovery; recover = SND.MAX
 * keeps the go-back-N dup ACKs from starting another one).
 */
#include <errno.h>

#include "tcp/tcb.h"

static enum tcp_rec_alg rec_alg(const struct tcp_conn *c)
{
	return c->rec_alg_set ? c->rec_alg : c->ts->cfg.recovery;
}

int tcp_set_recovery(struct tcp_conn *c, enum tcp_rec_alg alg)
{
	if ((unsigned)alg >= TCP_REC_ALG_COUNT)
		return -EINVAL;
	if (c->app_closed)
		return -EBADF;
	c->rec_alg_set = true;
	c->rec_alg = alg;
	return 0;
}

/* Without SACK there is no scoreboard: the bytes duplicate ACKs counted
 * (the module's nonsack_credit, one SMSS each) stand for what left the
 * network, as Linux's "reno sack" estimate does, and SND.UNA's segment is
 * presumed lost until it is retransmitted (RFC 6582: at entry and after
 * each partial ACK), as RFC 6675 SetPipe leaves a lost segment out until
 * its retransmission counts it again. */
uint32_t tcp_recovery_pipe(const struct tcp_conn *c)
{
	uint32_t out = c->snd_max - c->snd_una, rxt;

	if (!c->sack_ok) {
		uint32_t gone = 0;

		if (c->in_recovery) {
			gone = c->rec.nonsack_credit;
			if (!SEQ_GT(c->rxt_high, c->snd_una))
				gone += c->mss;
		}
		return out > gone ? out - gone : 0;
	}
	rxt = c->in_recovery && SEQ_GT(c->rxt_high, c->snd_una) ? c->rxt_high : c->snd_una;
	return tcp_sb_pipe(&c->sb, c->snd_una, c->snd_max, rxt, c->mss);
}

/* RFC 5681 3.2 (DupThresh duplicate ACKs) or RFC 6675 5 (IsLost(SND.UNA)
 * from SACKed bytes), with RFC 6582 3.2 step 2. */
static bool rec_should_enter(struct tcp_conn *c, bool dup)
{
	bool by_dup = dup && c->dupacks == TCP_SB_DUPTHRESH;
	bool by_sack = c->sack_ok && c->sb.n > 0 && tcp_sb_is_lost(&c->sb, c->snd_una, c->mss);

	if (c->snd_una == c->snd_max || (!by_dup && !by_sack))
		return false;
	/* RFC 6582 3.2 step 2 without SACK: only an ACK covering more than
	 * recover.  With SACK the scoreboard says which data is missing, so
	 * SND.UNA == recover is enough (RFC 6675 5 has no such guard; it
	 * still keeps go-back-N after an RTO from starting an episode). */
	if (c->recover_valid && (c->sack_ok ? SEQ_LT(c->snd_una, c->recover) :
					      !SEQ_GT(c->snd_una, c->recover))) {
		if (by_dup)
			c->ts->stats.fast_retransmit_suppressed++;
		return false;
	}
	if (!by_dup)
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
	uint32_t pre = c->sack_ok ? sacked0 : (c->dupacks > 1 ? (c->dupacks - 1) * c->mss : 0);
	struct tcp_rec_start start = {
		.flight = flight, .sacked_before = RTE_MIN(pre, flight),
		.newly_acked = c->snd_una - una0,
	};

	/* RFC 5681 3.2 step 2: FlightSize less what limited transmit sent. */
	cc_flight -= RTE_MIN(cc_flight, c->lt_bytes);
	tcp_cc_on_congestion(tcp_cc_load(c), cc_flight);
	tcp_cc_store(c);
	c->in_recovery = true;
	c->recover = c->snd_max;
	c->recover_valid = true;
	c->rxt_high = c->snd_una;
	c->rec_first_rxt = true;
	c->rescue_valid = false;
	c->rescue_lo = c->rescue_hi = c->snd_una;
	c->undo_lo = c->snd_una;
	c->undo_hi = c->snd_una; /* grows with HighRxt (output.c) */
	c->undo_left = 0;
	st->recovery_episodes++;
	c->recovery_episodes++;
	tcp_rec_enter(&c->rec, rec_alg(c), c->mss, c->ssthresh, c->cwnd, &start);
	if (!c->sack_ok)
		c->rec.nonsack_credit = start.sacked_before;
}

static void rec_exit(struct tcp_conn *c)
{
	uint32_t cwnd = tcp_rec_exit(&c->rec);

	c->in_recovery = false;
	c->rec_budget = 0;
	c->ts->stats.recovery_exits++;
	tcp_cc_on_recovery_exit(tcp_cc_load(c));
	tcp_cc_store(c);
	c->cwnd = cwnd; /* ssthresh, or rate-halving's smaller window */
}

/* RFC 2883 / RFC 3708: a D-SACK of a segment the last episode retransmitted
 * says the original arrived too; when every retransmission of the episode
 * is reported so, the episode was spurious (reordering, not loss).  What
 * was resent is approximated by [SND.UNA at entry, HighRxt): NextSeg resends
 * holes only, so a D-SACK of SACKed data between them would need the
 * network to duplicate it.  Only counted: undoing the window reduction is
 * left for later. */
static void rec_dsack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint32_t s = seg->sack[0][0], e = seg->sack[0][1], segs;

	if (!c->sack_ok || seg->nsack == 0 || c->undo_left == 0 ||
	    !tcp_sb_is_dsack((const uint32_t (*)[2])seg->sack, seg->nsack, seg->ack) ||
	    !SEQ_LT(s, e) ||
	    SEQ_LT(s, c->undo_lo) || SEQ_GT(e, c->undo_hi))
		return;
	/* The rescue retransmission (RFC 6675 rule 4) resends what was
	 * probably not lost: its D-SACK says nothing about the episode. */
	if (c->rescue_valid && SEQ_LEQ(c->rescue_lo, s) && SEQ_LEQ(e, c->rescue_hi))
		return;
	segs = (e - s + c->mss - 1) / c->mss;
	c->undo_left -= RTE_MIN(segs, c->undo_left);
	if (c->undo_left == 0) {
		c->ts->stats.spurious_recoveries++;
		c->spurious_recoveries++;
	}
}

/* DeliveredData of this ACK (RFC 9937 6.2). */
static uint32_t rec_delivered(struct tcp_conn *c, uint32_t una0, uint32_t sacked0, bool dup)
{
	uint32_t acked = c->snd_una - una0;
	int64_t d;

	if (!c->sack_ok)
		return tcp_rec_nonsack_delivered(&c->rec, dup, acked);
	d = (int64_t)acked + (int64_t)c->sb.sacked - (int64_t)sacked0;
	return d > 0 ? (uint32_t)d : 0; /* a renege can shrink SACKed bytes */
}

void tcp_recovery_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t una0,
		      uint32_t sacked0, bool dup)
{
	struct tcp_rec_ack a;
	struct tcp_rec_out out;
	uint32_t acked = c->snd_una - una0;

	rec_dsack(c, seg);
	if (!c->in_recovery) {
		if (!rec_should_enter(c, dup))
			return;
		rec_enter(c, una0, sacked0);
	} else if (SEQ_GEQ(c->snd_una, c->recover)) {
		rec_exit(c);
		return;
	} else if (acked > 0) {
		c->ts->stats.partial_acks++;
		c->partial_acks++;
	}
	if (SEQ_LT(c->rxt_high, c->snd_una))
		c->rxt_high = c->snd_una;
	a.delivered = rec_delivered(c, una0, sacked0, dup);
	a.pipe = tcp_recovery_pipe(c);
	/* RFC 9937 6.2 SafeACK: SND.UNA advanced and no further loss shown;
	 * we read "further loss" as newly SACKed data (a SACK above a hole is
	 * what reveals a loss).  Without SACK a partial ACK is itself the
	 * sign of the next loss (RFC 6582). */
	a.safe = acked > 0 && c->sack_ok && c->sb.sacked <= sacked0;
	out = tcp_rec_on_ack(&c->rec, &a);
	c->cwnd = out.cwnd;
	c->rec_budget = out.sndcnt;
	/* An ACK that delivered nothing leaves cwnd as it was (RFC 9937 6.2
	 * returns early), but pipe may have fallen (a partial ACK without SACK
	 * takes back what dup ACKs already counted and presumes the next
	 * segment lost): what cwnd now allows may go, as in a sender whose
	 * only gate is pipe < cwnd.  (Not before the episode's first
	 * delivery: cwnd is then still the one from before recovery.) */
	if (a.delivered == 0 && c->rec.prr_delivered > 0 && out.cwnd > a.pipe)
		c->rec_budget = RTE_MAX(c->rec_budget, out.cwnd - a.pipe);
	/* RFC 5681 3.2 step 3 / RFC 6675 5 (4.3): the ACK that starts recovery
	 * always retransmits the first segment, even one that delivered
	 * nothing new (a duplicate ACK without new SACK information, for which
	 * RFC 9937 6.2 returns before its own forced retransmission). */
	if (c->rec_first_rxt && c->rec.prr_out == 0 && c->rec_budget == 0)
		c->rec_budget = c->mss;
}

void tcp_recovery_info(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	info->recovery = (uint8_t)rec_alg(c);
	info->rtos = c->rtos;
	info->spurious_recoveries = c->spurious_recoveries;
}
