/* tcp/undo.c: undo of spurious window reductions (state and overview in
 * tcp/undo.h).
 *
 * A reduction is "armed" for undo when it starts: at recovery entry and at
 * an RTO (not again for an RTO inside recovery or a repeated one, as
 * Linux's tcp_enter_loss keeps prior_ssthresh then), with the congestion
 * state before it saved.  Every retransmission since counts.  An ACK
 * proves it spurious by:
 *  - D-SACK (RFC 3708 2): every retransmission since reported a duplicate,
 *    in or after the episode (Linux's undo_retrans reaching 0);
 *  - timestamps (RFC 3522 2): the first ACK acknowledging the first
 *    retransmission carries a TSecr older than that retransmission's TSval:
 *    the original, sent earlier, made it.  For an RTO that is the whole
 *    answer (the timer fired early; what followed the first segment is in
 *    flight too).  A fast recovery is undone that way only when that
 *    retransmission is its only one: the ACK says nothing about the other
 *    holes (Linux, tcp_try_undo_partial, likewise waits for no other
 *    retransmission to be out).  The decision is made once, on that ACK,
 *    as RFC 3522 says: a later ACK's echo may come from another segment.
 * The response: cwnd and ssthresh as before (Linux's
 * tcp_undo_cwnd_reduction, cwnd = max(cwnd, prior), not RFC 4015 5's
 * FlightSize + min(bytes_acked, IW) restart), recovery ended and its
 * recover point forgotten (loss.c tcp_loss_undone: the same ACK may start
 * an episode for a real loss), and after an RTO RFC 4015 4's SND.NXT =
 * SND.MAX.
 */
#include <errno.h>

#include "tcp/tcb.h"

enum undo_kind { UNDO_DSACK_RECOVERY, UNDO_TS_RECOVERY, UNDO_TS_RTO, UNDO_DSACK_RTO };

bool tcp_undo_enabled(const struct tcp_conn *c)
{
	return c->loss.undo.on_set ? c->loss.undo.on : c->ts->cfg.undo;
}

int tcp_set_undo(struct tcp_conn *c, bool on)
{
	if (c->app_closed)
		return -EBADF;
	c->loss.undo.on_set = true;
	c->loss.undo.on = on;
	return 0;
}

void tcp_undo_info(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	const struct tcp_undo *u = &c->loss.undo;

	info->undo = tcp_undo_enabled(c);
	info->undo_dsack_recovery = u->dsack_recovery;
	info->undo_ts_recovery = u->ts_recovery;
	info->undo_ts_rto = u->ts_rto;
	info->undo_dsack_rto = u->dsack_rto;
}

/* A new reduction: the window before it, and no retransmission yet. */
static void arm(struct tcp_conn *c, bool rto)
{
	struct tcp_undo *u = &c->loss.undo;

	u->armed = true;
	u->rto = rto;
	tcp_cc_save(tcp_cc_load(c), &u->prior);
	u->lo = u->hi = c->snd_una;
	u->left = 0;
	u->rxt_sent = false;
	u->ts_pending = false;
	u->rxts = 0;
}

/* Armed with undo off too: the D-SACK detection counts spurious episodes. */
void tcp_undo_on_recovery(struct tcp_conn *c)
{
	arm(c, false);
}

/* An RTO inside recovery, or again before the last RTO's flight was
 * acknowledged (SND.UNA below recover), belongs to the reduction under way:
 * its undo goes back to the window before the first. */
void tcp_undo_on_rto(struct tcp_conn *c)
{
	struct tcp_undo *u = &c->loss.undo;
	const struct tcp_loss *l = &c->loss;

	if (!tcp_undo_enabled(c))
		return;
	if (u->armed && (l->in_recovery ||
			 (u->rto && l->recover_valid && SEQ_LT(c->snd_una, l->recover)))) {
		u->rto = true;
		return;
	}
	arm(c, true);
}

/* With undo off only recovery's retransmissions are followed (for
 * spurious_recoveries), as before undo existed. */
void tcp_undo_on_rxt(struct tcp_conn *c, uint32_t seq, uint32_t end)
{
	struct tcp_undo *u = &c->loss.undo;

	if (!u->armed || (!c->loss.in_recovery && !tcp_undo_enabled(c)))
		return;
	if (SEQ_GT(end, u->hi))
		u->hi = end;
	u->left += (end - seq + c->mss - 1) / c->mss;
	u->rxts++;
	if (!u->rxt_sent) {
		u->rxt_sent = true;
		u->rxt_seq = seq;
		u->rxt_tsval = tcp_ts_val(c);
		u->ts_pending = c->ts_ok;
	}
}

/* RFC 2883 / RFC 3708: a D-SACK of a segment resent since the reduction
 * says the original arrived too; true when that leaves none unreported.
 * What was resent is approximated by [lo, hi): NextSeg resends holes only
 * and go-back-N everything, so a D-SACK of data between them that was not
 * resent would need the network to duplicate it. */
static bool dsack_all(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_undo *u = &c->loss.undo;
	uint32_t s = seg->sack[0][0], e = seg->sack[0][1], segs;

	if (!c->sack_ok || seg->nsack == 0 || u->left == 0 ||
	    !tcp_sb_is_dsack((const uint32_t (*)[2])seg->sack, seg->nsack, seg->ack) ||
	    !SEQ_LT(s, e) || SEQ_LT(s, u->lo) || SEQ_GT(e, u->hi))
		return false;
	/* The rescue retransmission (RFC 6675 rule 4) resends what was
	 * probably not lost and is not counted: its D-SACK says nothing. */
	if (c->loss.rescue_valid && SEQ_LEQ(c->loss.rescue_lo, s) && SEQ_LEQ(e, c->loss.rescue_hi))
		return false;
	segs = (e - s + c->mss - 1) / c->mss;
	u->left -= RTE_MIN(segs, u->left);
	return u->left == 0;
}

/* RFC 3522 2: the first ACK above the first retransmission's start decides
 * (once); true when its echo predates that retransmission. */
static bool ts_older(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_undo *u = &c->loss.undo;

	if (!u->ts_pending || !SEQ_GT(seg->ack, u->rxt_seq))
		return false;
	u->ts_pending = false;
	return seg->has_ts && seg->ts_ecr != 0 && (int32_t)(seg->ts_ecr - u->rxt_tsval) < 0;
}

static void count(struct tcp_conn *c, enum undo_kind k)
{
	struct tcp_stats *st = &c->ts->stats;
	struct tcp_undo *u = &c->loss.undo;

	switch (k) {
	case UNDO_DSACK_RECOVERY:
		st->undo_dsack_recovery++;
		u->dsack_recovery++;
		break;
	case UNDO_TS_RECOVERY:
		st->undo_ts_recovery++;
		u->ts_recovery++;
		break;
	case UNDO_TS_RTO:
		st->undo_ts_rto++;
		u->ts_rto++;
		break;
	default:
		st->undo_dsack_rto++;
		u->dsack_rto++;
		break;
	}
}

/* The reduction was spurious: the window from before it, out of recovery.
 * After an RTO the segments above SND.NXT were sent once and, the
 * retransmissions having been needless, are presumed in flight: go-back-N
 * would only resend them again (RFC 4015 4: SND.NXT = SND.MAX; Linux's
 * undo clears their lost marks), so sending resumes with new data.  RFC
 * 4015 5's RTO adaptation is not done (Linux does not either). */
static void undo(struct tcp_conn *c, enum undo_kind k)
{
	struct tcp_undo *u = &c->loss.undo;

	tcp_loss_undone(c); /* loss.c */
	tcp_cc_undo(tcp_cc_load(c), &u->prior);
	tcp_cc_store(c);
	if (u->rto && SEQ_LT(c->snd_nxt, c->snd_max))
		c->snd_nxt = c->snd_max;
	u->armed = false;
	u->left = 0;
	u->ts_pending = false;
	count(c, k);
}

void tcp_undo_ack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_undo *u = &c->loss.undo;

	if (!u->armed)
		return;
	if (dsack_all(c, seg)) {
		if (!u->rto) {
			c->ts->stats.spurious_recoveries++;
			c->loss.spurious_recoveries++;
		}
		if (tcp_undo_enabled(c)) {
			undo(c, u->rto ? UNDO_DSACK_RTO : UNDO_DSACK_RECOVERY);
			return;
		}
	}
	if (!tcp_undo_enabled(c) || !ts_older(c, seg))
		return;
	if (u->rto)
		undo(c, UNDO_TS_RTO);
	else if (u->rxts == 1)
		undo(c, UNDO_TS_RECOVERY);
	else
		c->ts->stats.undo_ts_inconclusive++;
}
