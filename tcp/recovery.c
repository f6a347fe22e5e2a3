/* tcp/recovery.c: the per-ACK sending decision during fast recovery.
 * See recovery.h for the calling sequence.  Signed 64-bit arithmetic is used
 * wherever the RFC pseudocode can go negative (prr_delivered - prr_out after
 * a slow-start burst, ssthresh - pipe, CEIL(...) - prr_out); a negative
 * budget means "send nothing".
 */
#include "tcp/recovery.h"

#include <string.h>

static int64_t tcp_rec_min64(int64_t a, int64_t b) { return a < b ? a : b; }
static int64_t tcp_rec_max64(int64_t a, int64_t b) { return a > b ? a : b; }

static uint32_t tcp_rec_clamp(int64_t v)
{
	if (v <= 0)
		return 0;
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

void tcp_rec_enter(struct tcp_rec *r, enum tcp_rec_alg alg, uint32_t smss,
		   uint32_t ssthresh, uint32_t cwnd,
		   const struct tcp_rec_start *s)
{
	int64_t fs;

	memset(r, 0, sizeof(*r));
	r->alg = alg;
	r->smss = smss ? smss : 1;
	r->ssthresh = ssthresh;
	r->cwnd = cwnd;
	if (alg == TCP_REC_PRR) {
		/* RFC 9937 6.1: RecoverFS = SND.NXT - SND.UNA, minus the bytes
		 * SACKed before recovery (they will never be "delivered" during
		 * it), plus the bytes this ACK cumulatively acknowledged.  Equal
		 * to inflight + newly ACKed + newly SACKed + marked lost. */
		fs = (int64_t)s->flight - s->sacked_before + s->newly_acked;
	} else {
		/* RFC 6937 3: RecoverFS = snd.nxt - snd.una, the FlightSize at
		 * the start of recovery. */
		fs = s->flight;
	}
	/* A zero RecoverFS would divide by zero; one byte keeps the
	 * proportional part at "everything delivered". */
	r->recover_fs = fs > 0 ? tcp_rec_clamp(fs) : 1;
	if (alg == TCP_REC_RFC6675)
		r->cwnd = ssthresh; /* RFC 6675 5 (4.2): cwnd = ssthresh */
}

/* CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out: the proportional
 * part shared by RFC 6937 3 and RFC 9937 6.2. */
static int64_t tcp_rec_prop(const struct tcp_rec *r)
{
	uint64_t num = r->prr_delivered * r->ssthresh;
	uint64_t out = (num + r->recover_fs - 1) / r->recover_fs;

	return (int64_t)out - (int64_t)r->prr_out;
}

/* RFC 9937 6.2, on every ACK starting or during fast recovery:
 *   if (DeliveredData is 0) Return
 *   prr_delivered += DeliveredData
 *   if (inflight > ssthresh)
 *      SndCnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
 *   else
 *      SndCnt = MAX(prr_delivered - prr_out, DeliveredData)   // PRR-CRB
 *      if (SafeACK) SndCnt += SMSS                            // PRR-SSRB
 *      SndCnt = MIN(ssthresh - inflight, SndCnt)
 *   if (prr_out is 0 AND SndCnt is 0) SndCnt = SMSS  // force fast rexmit
 *   cwnd = inflight + SndCnt
 */
static struct tcp_rec_out tcp_rec_prr9937(struct tcp_rec *r,
					  const struct tcp_rec_ack *a)
{
	int64_t snd;

	if (a->delivered == 0) {
		r->cnt.no_data++;
		return (struct tcp_rec_out){ .sndcnt = 0, .cwnd = r->cwnd };
	}
	r->prr_delivered += a->delivered;
	if (a->pipe > r->ssthresh) {
		r->cnt.prop++;
		snd = tcp_rec_prop(r);
	} else {
		snd = tcp_rec_max64((int64_t)r->prr_delivered - (int64_t)r->prr_out,
				    a->delivered);
		if (a->safe) {
			r->cnt.ssrb++;
			snd += r->smss;
		} else {
			r->cnt.crb++;
		}
		snd = tcp_rec_min64((int64_t)r->ssthresh - a->pipe, snd);
	}
	if (r->prr_out == 0 && snd <= 0) {
		r->cnt.forced++;
		snd = r->smss;
	}
	r->cwnd = tcp_rec_clamp((int64_t)a->pipe + tcp_rec_max64(snd, 0));
	return (struct tcp_rec_out){ .sndcnt = tcp_rec_clamp(snd), .cwnd = r->cwnd };
}

/* RFC 6937 3, on every ACK during recovery:
 *   prr_delivered += DeliveredData
 *   if (pipe > ssthresh)
 *      sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out
 *   else
 *      PRR-CRB:  limit = prr_delivered - prr_out
 *      PRR-SSRB: limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS
 *      sndcnt = MIN(ssthresh - pipe, limit)
 * cwnd = pipe + sndcnt (RFC 6937 3: "cwnd = pipe + sndcnt").
 */
static struct tcp_rec_out tcp_rec_prr6937(struct tcp_rec *r,
					  const struct tcp_rec_ack *a)
{
	int64_t snd, limit, banked;

	r->prr_delivered += a->delivered;
	if (a->pipe > r->ssthresh) {
		r->cnt.prop++;
		snd = tcp_rec_prop(r);
	} else {
		banked = (int64_t)r->prr_delivered - (int64_t)r->prr_out;
		if (r->alg == TCP_REC_PRR_CRB) {
			r->cnt.crb++;
			limit = banked;
		} else {
			r->cnt.ssrb++;
			limit = tcp_rec_max64(banked, a->delivered) + r->smss;
		}
		snd = tcp_rec_min64((int64_t)r->ssthresh - a->pipe, limit);
	}
	r->cwnd = tcp_rec_clamp((int64_t)a->pipe + tcp_rec_max64(snd, 0));
	return (struct tcp_rec_out){ .sndcnt = tcp_rec_clamp(snd), .cwnd = r->cwnd };
}

/* RFC 6675 5: cwnd = ssthresh for the whole episode; (C) "while cwnd - pipe
 * >= 1 SMSS" send one segment and add it to pipe, so the budget is whole
 * segments.  On the first ACK (4.3) the first lost segment is retransmitted
 * regardless of cwnd, then (4.5) step (C) runs with pipe grown by it.  Until
 * pipe falls below cwnd nothing is sent: the "half window of silence". */
static struct tcp_rec_out tcp_rec_6675(struct tcp_rec *r,
				       const struct tcp_rec_ack *a)
{
	int64_t room, pipe = a->pipe, forced = 0;

	r->prr_delivered += a->delivered;
	if (r->cnt.acks == 1) {
		r->cnt.forced++;
		forced = r->smss;
		pipe += r->smss;
	}
	room = (int64_t)r->cwnd - pipe;
	room = room >= r->smss ? room / r->smss * r->smss : 0;
	return (struct tcp_rec_out){ .sndcnt = tcp_rec_clamp(forced + room),
				     .cwnd = r->cwnd };
}

/* Rate-halving, as in Linux 2.6 (tcp_cwnd_down) and draft-mathis-tcp-
 * ratehalving.  Our reading of the draft:
 *  - During recovery the window is reduced gradually instead of halved at
 *    once: on every second ACK (the 2nd, 4th, ... of the episode) cwnd is
 *    lowered by one SMSS, as long as it stays above ssthresh.  One segment
 *    then leaves for every two delivered, which halves the rate over one
 *    RTT.
 *  - cwnd is never more than pipe + 1 SMSS ("bounding parameters": the
 *    sender cannot burst when the ACK stream reports many segments at once,
 *    and after heavy loss the window collapses to what is really in
 *    flight).  This bound is why, after a burst loss, rate-halving ends
 *    recovery far below ssthresh (RFC 6937 3.1, second example).
 *  - A segment may be sent while pipe < cwnd; with cwnd <= pipe + 1 SMSS
 *    that is at most one segment per ACK.
 * At exit cwnd = min(cwnd, ssthresh) (Linux tcp_complete_cwr): the window
 * is not raised at the end, slow start takes it back to ssthresh.
 */
static struct tcp_rec_out tcp_rec_rh(struct tcp_rec *r,
				     const struct tcp_rec_ack *a)
{
	uint32_t snd = 0;

	r->prr_delivered += a->delivered;
	if (r->cnt.acks % 2 == 0 && r->cwnd > r->ssthresh) {
		r->cnt.rh_decr++;
		r->cwnd -= r->smss;
		if (r->cwnd < r->ssthresh)
			r->cwnd = r->ssthresh;
	}
	if ((uint64_t)a->pipe + r->smss < r->cwnd) {
		r->cnt.rh_bound++;
		r->cwnd = a->pipe + r->smss;
	}
	if (a->pipe < r->cwnd)
		snd = r->smss;
	return (struct tcp_rec_out){ .sndcnt = snd, .cwnd = r->cwnd };
}

struct tcp_rec_out tcp_rec_on_ack(struct tcp_rec *r, const struct tcp_rec_ack *a)
{
	r->cnt.acks++;
	switch (r->alg) {
	case TCP_REC_PRR:
		return tcp_rec_prr9937(r, a);
	case TCP_REC_PRR_CRB:
	case TCP_REC_PRR_SSRB:
		return tcp_rec_prr6937(r, a);
	case TCP_REC_RFC6675:
		return tcp_rec_6675(r, a);
	case TCP_REC_RATEHALVING:
		return tcp_rec_rh(r, a);
	default:
		break;
	}
	return (struct tcp_rec_out){ .sndcnt = 0, .cwnd = r->cwnd };
}

void tcp_rec_on_send(struct tcp_rec *r, uint32_t bytes)
{
	r->prr_out += bytes; /* RFC 6937 3 / RFC 9937 6.3: prr_out += (data sent) */
}

uint32_t tcp_rec_exit(struct tcp_rec *r)
{
	/* RFC 9937 6.4: at the end of recovery cwnd = ssthresh (PRR has
	 * driven inflight towards it; this also covers an application-limited
	 * episode).  RFC 6675 deflates to ssthresh as RFC 5681 3.2 does.
	 * Rate-halving keeps a smaller window (see tcp_rec_rh). */
	if (r->alg == TCP_REC_RATEHALVING && r->cwnd < r->ssthresh)
		return r->cwnd;
	r->cwnd = r->ssthresh;
	return r->cwnd;
}

/* Without SACK every duplicate ACK is taken to mean one SMSS reached the
 * receiver (RFC 6937 3, RFC 9937 6.2).  The total counted may never exceed
 * RecoverFS, so a receiver splitting or inventing dupacks cannot clock out
 * more than one window (the ACK-splitting concern of RFC 9937 9).  When a
 * cumulative ACK arrives, the bytes the dupacks already counted are not
 * counted again. */
uint32_t tcp_rec_nonsack_delivered(struct tcp_rec *r, bool dupack,
				   uint32_t acked)
{
	uint32_t d;

	if (dupack) {
		if (r->prr_delivered >= r->recover_fs)
			return 0;
		d = r->recover_fs - (uint32_t)r->prr_delivered;
		if (d > r->smss)
			d = r->smss;
		r->nonsack_credit += d;
		return d;
	}
	if (acked <= r->nonsack_credit) {
		r->nonsack_credit -= acked;
		return 0;
	}
	d = acked - r->nonsack_credit;
	r->nonsack_credit = 0;
	return d;
}
