/* tcp/rack.c: RACK, the time-based loss detection of RFC 8985 6 (state in
 * tcp/rack.h, the in-flight record in tcp/sent_log.h).
 *
 * Fed by output.c at every send of data (new, resent in recovery, resent
 * after an RTO or a lowered MSS: tcp_rack_sent) and by every ACK after the
 * scoreboard took it (established.c: tcp_rack_ack), it keeps RFC 8985
 * 6.2's steps:
 *  1-2. each newly delivered range (below SND.UNA now, or covered by the
 *     scoreboard) gives RACK.rtt and moves RACK.xmit_ts / end_seq to the
 *     most recently sent one delivered; RACK.min_RTT from ranges sent once
 *     (Karn), a retransmitted one only when its RTT is not below min_RTT
 *     (else the ACK was for the original);
 *  3. a never-resent range delivered below RACK.fack shows reordering;
 *  4. the reordering window: 0 before any reordering was seen while in
 *     recovery (fast or after an RTO) or with DupThresh segments SACKed,
 *     else min(reo_wnd_mult * min_RTT / 4, SRTT); the multiplier grows once
 *     per round trip that brings a D-SACK and falls back to 1 after 16
 *     recoveries without one;
 *  5. every range neither SACKed nor lost sent before RACK.xmit_ts (ties:
 *     by end sequence) is lost once RACK.rtt + reo_wnd has passed since
 *     its transmission;
 *  6. the nearest of those not yet due arms the RACK timer (tcb_timers.c
 *     TCP_T_RACK), whose expiry runs step 5 again and hands new marks to
 *     loss.c as an ACK without news would.
 * RFC 8985 6.3: an RTO marks SND.UNA's range and every one older than
 * RACK.rtt + reo_wnd lost (go-back-N resends them all anyway).
 *
 * Active only with SACK negotiated and loss_detection = rack; otherwise
 * nothing is recorded and every hook returns at once.
 */
#include <errno.h>

#include "tcp/tcb.h"

/* Linux's tcp_min_rtt_wlen: min_RTT is the smallest sample of the last
 * 300 s (RFC 8985 leaves the filter open). */
#define RACK_MIN_RTT_WIN_NS US_SEC(300)
/* RFC 8985 6.2 step 4: recoveries a grown window survives without D-SACK. */
#define RACK_REO_PERSIST 16
/* Linux caps its reo_wnd_steps at 255; the SRTT bound applies anyway. */
#define RACK_REO_MULT_MAX 255u

static enum tcp_loss_det det_of(const struct tcp_conn *c)
{
	return c->loss.rack.det_set ? c->loss.rack.det : c->ts->cfg.loss_detection;
}

bool tcp_rack_on(const struct tcp_conn *c)
{
	return c->sack_ok && det_of(c) == TCP_LOSS_RACK;
}

/* Everything RACK knows about the flight goes: the marks with it. */
static void rack_forget(struct tcp_conn *c)
{
	struct tcp_rack *r = &c->loss.rack;

	tcp_slog_free(&r->log);
	r->lost_bytes = r->extra_bytes = 0;
	r->xmit_valid = false;
	if (c->ts != NULL)
		tcp_timer_stop(c, TCP_T_RACK);
}

int tcp_set_loss_detection(struct tcp_conn *c, enum tcp_loss_det det)
{
	if ((unsigned)det >= TCP_LOSS_DET_COUNT)
		return -EINVAL;
	if (c->app_closed)
		return -EBADF;
	c->loss.rack.det_set = true;
	c->loss.rack.det = det;
	if (det != TCP_LOSS_RACK)
		rack_forget(c);
	return 0;
}

void tcp_rack_free(struct tcp_conn *c)
{
	rack_forget(c);
}

/* An entry's flags change; the lost and doubly-sent byte counts follow. */
static void set_flags(struct tcp_rack *r, struct tcp_slog_ent *x, uint8_t f)
{
	uint32_t len = x->end - x->start;

	if (x->flags & TCP_SLOG_LOST)
		r->lost_bytes -= len;
	if (x->flags & TCP_SLOG_EXTRA)
		r->extra_bytes -= len;
	if (f & TCP_SLOG_LOST)
		r->lost_bytes += len;
	if (f & TCP_SLOG_EXTRA)
		r->extra_bytes += len;
	x->flags = f;
}

/* [seq, end), already recorded, went again now: a lost range is no longer
 * lost (its new copy is in flight), one that was not is out twice. */
static void resent(struct tcp_conn *c, uint32_t seq, uint32_t end, uint64_t now)
{
	struct tcp_rack *r = &c->loss.rack;
	struct tcp_slog *l = &r->log;
	uint32_t i, j;

	if (!tcp_slog_split(l, seq) || !tcp_slog_split(l, end))
		c->ts->stats.rack_log_full++; /* an entry straddling an end takes the new time whole */
	i = tcp_slog_find(l, seq);
	for (j = i; j < l->n && SEQ_LT(l->e[j].start, end); j++) {
		struct tcp_slog_ent *x = &l->e[j];
		uint8_t f = x->flags | TCP_SLOG_RETRANS;

		if (f & TCP_SLOG_LOST)
			f &= (uint8_t)~TCP_SLOG_LOST;
		else if (!(f & TCP_SLOG_SACKED))
			f |= TCP_SLOG_EXTRA;
		set_flags(r, x, f);
		x->xmit_ns = now;
	}
	tcp_slog_coalesce(l, i > l->lo ? i - 1 : i, j);
}

void tcp_rack_sent(struct tcp_conn *c, uint32_t seq, uint32_t end, bool again)
{
	struct tcp_slog *l = &c->loss.rack.log;
	uint64_t now;
	uint32_t top;

	if (!SEQ_LT(seq, end) || !tcp_rack_on(c))
		return;
	now = tcp_now(c);
	if (now <= c->loss.rack.last_xmit_ns)
		now = c->loss.rack.last_xmit_ns + 1;
	c->loss.rack.last_xmit_ns = now;
	top = tcp_slog_empty(l) ? seq : l->e[l->n - 1].end;
	if (SEQ_LT(seq, top)) {
		resent(c, seq, SEQ_LT(end, top) ? end : top, now);
		seq = top;
	}
	if (SEQ_LT(seq, end) &&
	    !tcp_slog_append(l, seq, end, now, again ? TCP_SLOG_RETRANS : 0))
		c->ts->stats.rack_log_full++;
}

/* RACK_sent_after(t1, seq1, t2, seq2) of RFC 8985 6.2. */
static bool sent_after(uint64_t t1, uint32_t seq1, uint64_t t2, uint32_t seq2)
{
	return t1 > t2 || (t1 == t2 && SEQ_GT(seq1, seq2));
}

static void min_rtt_update(struct tcp_rack *r, uint64_t rtt, uint64_t now)
{
	if (!r->min_rtt_valid || rtt <= r->min_rtt_ns || now - r->min_rtt_at > RACK_MIN_RTT_WIN_NS) {
		r->min_rtt_valid = true;
		r->min_rtt_ns = rtt;
		r->min_rtt_at = now;
	}
}

/* Steps 1-3 for one newly delivered range; fack0 is RACK.fack before
 * this ACK, so that a hole filled by the ACK that also SACKs above it
 * counts as reordered (its data arrived after what lies above). */
static void delivered(struct tcp_conn *c, const struct tcp_slog_ent *x, uint64_t now,
		      bool fack0_valid, uint32_t fack0)
{
	struct tcp_rack *r = &c->loss.rack;
	bool again = x->flags & TCP_SLOG_RETRANS;
	/* A send stamped a few ns past the clock (tcp_rack_sent) and
	 * acknowledged in the same instant took no time. */
	uint64_t rtt = now > x->xmit_ns ? now - x->xmit_ns : 0;

	if (!again && fack0_valid && SEQ_LT(x->end, fack0) && !r->reordering_seen) {
		r->reordering_seen = true;
		c->ts->stats.rack_reordering_seen++;
	}
	if (!r->fack_valid || SEQ_GT(x->end, r->fack)) {
		r->fack_valid = true;
		r->fack = x->end;
	}
	if (again && r->min_rtt_valid && rtt < r->min_rtt_ns)
		return; /* the original's ACK, most likely */
	if (!again)
		min_rtt_update(r, rtt, now);
	r->rtt_ns = rtt;
	if (!r->xmit_valid || sent_after(x->xmit_ns, x->end, r->xmit_ns, r->end_seq)) {
		r->xmit_valid = true;
		r->xmit_ns = x->xmit_ns;
		r->end_seq = x->end;
	}
}

/* Ranges below SND.UNA: delivered unless SACKed before, then forgotten. */
static void ack_cumulative(struct tcp_conn *c, uint64_t now, bool fv, uint32_t fack0)
{
	struct tcp_rack *r = &c->loss.rack;
	struct tcp_slog *l = &r->log;

	if (!tcp_slog_split(l, c->snd_una))
		c->ts->stats.rack_log_full++;
	for (uint32_t i = l->lo; i < l->n && SEQ_LT(l->e[i].start, c->snd_una); i++) {
		struct tcp_slog_ent *x = &l->e[i];

		if (!(x->flags & TCP_SLOG_SACKED) && SEQ_LEQ(x->end, c->snd_una))
			delivered(c, x, now, fv, fack0);
		set_flags(r, x, x->flags & (uint8_t)~(TCP_SLOG_LOST | TCP_SLOG_EXTRA));
	}
	tcp_slog_trim(l, c->snd_una);
}

/* The scoreboard is the truth about SACKed data: ranges it now covers are
 * delivered, ranges it no longer covers (a renege) are not SACKed. */
static void ack_selective(struct tcp_conn *c, uint64_t now, bool fv, uint32_t fack0)
{
	struct tcp_rack *r = &c->loss.rack;
	struct tcp_slog *l = &r->log;
	const struct tcp_sb *sb = &c->sb;
	unsigned k = 0;

	for (unsigned m = 0; m < sb->n; m++)
		if (!tcp_slog_split(l, sb->r[m].start) || !tcp_slog_split(l, sb->r[m].end))
			c->ts->stats.rack_log_full++;
	for (uint32_t i = l->lo; i < l->n; i++) {
		struct tcp_slog_ent *x = &l->e[i];
		bool covered;

		while (k < sb->n && SEQ_LEQ(sb->r[k].end, x->start))
			k++;
		covered = k < sb->n && SEQ_LEQ(sb->r[k].start, x->start) &&
			  SEQ_LEQ(x->end, sb->r[k].end);
		if (covered && !(x->flags & TCP_SLOG_SACKED)) {
			set_flags(r, x, (x->flags | TCP_SLOG_SACKED) &
					(uint8_t)~(TCP_SLOG_LOST | TCP_SLOG_EXTRA));
			delivered(c, x, now, fv, fack0);
		} else if (!covered && (x->flags & TCP_SLOG_SACKED)) {
			set_flags(r, x, x->flags & (uint8_t)~TCP_SLOG_SACKED);
		}
	}
}

static uint32_t reo_mult(const struct tcp_rack *r)
{
	return r->reo_wnd_mult != 0 ? r->reo_wnd_mult : 1;
}

/* Step 4, first half: one growth per round trip that brings a D-SACK. */
static void reo_wnd_dsack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_rack *r = &c->loss.rack;

	if (r->dsack_round_valid && SEQ_GEQ(c->snd_una, r->dsack_round))
		r->dsack_round_valid = false;
	if (r->dsack_round_valid || seg->nsack == 0 ||
	    !tcp_sb_is_dsack((const uint32_t (*)[2])seg->sack, seg->nsack, seg->ack))
		return;
	r->dsack_round_valid = true;
	r->dsack_round = c->snd_max; /* the RFC's SND.NXT: the next new byte */
	r->reo_wnd_mult = RTE_MIN(reo_mult(r) + 1, RACK_REO_MULT_MAX);
	r->reo_wnd_persist = RACK_REO_PERSIST;
	r->reo_wnd_grown++;
	c->ts->stats.rack_reo_wnd_grown++;
}

/* Step 4, second half: the window RACK waits beyond RACK.rtt.  "In
 * recovery" is fast recovery or the go-back-N after an RTO, both until
 * SND.UNA passes recover. */
static uint64_t reo_wnd(const struct tcp_conn *c)
{
	const struct tcp_rack *r = &c->loss.rack;
	bool recovering = c->loss.recover_valid && SEQ_LT(c->snd_una, c->loss.recover);

	if (!r->reordering_seen &&
	    (recovering || c->sb.sacked > (TCP_SB_DUPTHRESH - 1) * c->mss))
		return 0;
	if (!r->min_rtt_valid)
		return 0;
	return RTE_MIN(reo_mult(r) * r->min_rtt_ns / 4, (uint64_t)c->srtt_us * 1000);
}

/* Step 5; returns the nanoseconds until the next range becomes lost (0:
 * none waits) and adds the newly marked bytes to *marked. */
static uint64_t detect_loss(struct tcp_conn *c, uint64_t now, uint32_t *marked)
{
	struct tcp_rack *r = &c->loss.rack;
	struct tcp_slog *l = &r->log;
	uint64_t wnd = reo_wnd(c), timeout = 0;

	if (!r->xmit_valid)
		return 0;
	for (uint32_t i = l->lo; i < l->n; i++) {
		struct tcp_slog_ent *x = &l->e[i];
		uint64_t due = x->xmit_ns + r->rtt_ns + wnd;

		if ((x->flags & (TCP_SLOG_SACKED | TCP_SLOG_LOST)) ||
		    !sent_after(r->xmit_ns, r->end_seq, x->xmit_ns, x->end))
			continue;
		if (due <= now) {
			uint32_t len = x->end - x->start;

			set_flags(r, x, (x->flags | TCP_SLOG_LOST) & (uint8_t)~TCP_SLOG_EXTRA);
			*marked += len;
			r->marked_lost += (len + c->mss - 1) / c->mss;
			c->ts->stats.rack_marked_lost += (len + c->mss - 1) / c->mss;
		} else if (due - now > timeout) {
			timeout = due - now;
		}
	}
	return timeout;
}

/* Step 6: marks, and the timer for what is not due yet. */
static uint32_t detect_and_arm(struct tcp_conn *c, uint64_t now)
{
	uint32_t marked = 0;
	uint64_t timeout = detect_loss(c, now, &marked);

	if (timeout != 0)
		tcp_timer_set(c, TCP_T_RACK, now + timeout);
	else
		tcp_timer_stop(c, TCP_T_RACK);
	return marked;
}

void tcp_rack_ack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_rack *r = &c->loss.rack;
	bool fv = r->fack_valid;
	uint32_t fack0 = r->fack;
	uint64_t now;

	if (!tcp_rack_on(c))
		return;
	now = tcp_now(c);
	ack_cumulative(c, now, fv, fack0);
	ack_selective(c, now, fv, fack0);
	reo_wnd_dsack(c, seg);
	if (c->snd_una == c->snd_max) {
		tcp_timer_stop(c, TCP_T_RACK);
		return;
	}
	detect_and_arm(c, now);
}

void tcp_rack_timer(struct tcp_conn *c)
{
	if (!tcp_rack_on(c) || c->snd_una == c->snd_max)
		return;
	c->ts->stats.rack_timer_fired++;
	c->loss.rack.timer_fired++;
	if (detect_and_arm(c, tcp_now(c)) == 0)
		return;
	tcp_loss_on_rack_timer(c); /* loss.c: recovery starts or goes on */
	tcp_output(c);
}

/* RFC 8985 6.2 step 4 ("exiting Fast or RTO recovery"); go-back-N has
 * no exit of its own, so an RTO counts at its start (tcp_rack_on_rto). */
static void reo_wnd_decay(struct tcp_rack *r)
{
	if (--r->reo_wnd_persist <= 0) {
		r->reo_wnd_persist = 0;
		r->reo_wnd_mult = 1;
	}
}

void tcp_rack_on_recovery_exit(struct tcp_conn *c)
{
	if (tcp_rack_on(c))
		reo_wnd_decay(&c->loss.rack);
}

/* RFC 8985 6.3.  The scoreboard was just cleared (RFC 2018 5), so no range
 * counts as SACKed any more. */
void tcp_rack_on_rto(struct tcp_conn *c)
{
	struct tcp_rack *r = &c->loss.rack;
	struct tcp_slog *l = &r->log;
	uint64_t now, wnd;

	if (!tcp_rack_on(c))
		return;
	tcp_timer_stop(c, TCP_T_RACK);
	reo_wnd_decay(r);
	now = tcp_now(c);
	wnd = reo_wnd(c);
	for (uint32_t i = l->lo; i < l->n; i++) {
		struct tcp_slog_ent *x = &l->e[i];
		uint8_t f = x->flags & (uint8_t)~(TCP_SLOG_SACKED | TCP_SLOG_EXTRA);

		if (x->start == c->snd_una || x->xmit_ns + r->rtt_ns + wnd <= now)
			f |= TCP_SLOG_LOST;
		set_flags(r, x, f);
	}
}

/* The first range marked lost (NextSeg rule 1 with RACK). */
bool tcp_rack_next_lost(const struct tcp_conn *c, uint32_t *from, uint32_t *to)
{
	const struct tcp_rack *r = &c->loss.rack;
	const struct tcp_slog *l = &r->log;

	if (r->lost_bytes == 0)
		return false;
	for (uint32_t i = l->lo; i < l->n; i++) {
		if (l->e[i].flags & TCP_SLOG_LOST) {
			*from = l->e[i].start;
			*to = l->e[i].end;
			return true;
		}
	}
	return false;
}

bool tcp_rack_lost_any(const struct tcp_conn *c)
{
	return c->loss.rack.lost_bytes > 0;
}

/* RFC 6675 SetPipe with RACK's marks for IsLost (as Linux's
 * packets_in_flight: out - SACKed - lost + retransmitted): the
 * outstanding bytes, less the SACKed and the lost, plus second copies. */
uint32_t tcp_rack_pipe(const struct tcp_conn *c)
{
	const struct tcp_rack *r = &c->loss.rack;
	uint32_t out = c->snd_max - c->snd_una, gone = c->sb.sacked + r->lost_bytes;

	return (out > gone ? out - gone : 0) + r->extra_bytes;
}

/* Every absolute time onto another wheel's clock (tcb_migrate.c). */
void tcp_rack_retime(struct tcp_conn *c, int64_t delta)
{
	struct tcp_rack *r = &c->loss.rack;

	for (uint32_t i = r->log.lo; i < r->log.n; i++)
		r->log.e[i].xmit_ns += (uint64_t)delta;
	r->xmit_ns += (uint64_t)delta;
	r->last_xmit_ns += (uint64_t)delta;
	r->min_rtt_at += (uint64_t)delta;
}

void tcp_rack_info(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	const struct tcp_rack *r = &c->loss.rack;

	info->loss_detection = (uint8_t)det_of(c);
	info->rack_marked_lost = r->marked_lost;
	info->rack_timer_fired = r->timer_fired;
	info->rack_rec_entries = r->rec_entries;
	info->rack_reordering_seen = r->reordering_seen;
	info->rack_reo_wnd_mult = reo_mult(r);
	/* Rounded: sends of one instant are stamped a few ns apart. */
	info->rack_min_rtt_us = r->min_rtt_valid ? (uint32_t)((r->min_rtt_ns + 500) / 1000) : 0;
}

void tcp_rack_on_rec_entry(struct tcp_conn *c)
{
	c->loss.rack.rec_entries++;
	c->ts->stats.rec_enter_rack++;
}
