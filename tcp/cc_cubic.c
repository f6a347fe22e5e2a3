/* tcp/cc_cubic.c: CUBIC congestion avoidance (RFC 9438), in segments and
 * seconds with doubles (see tcp/cc.h for why).  Slow start is shared with
 * NewReno (cc_newreno.c); only what differs lives here:
 *   4.2  W_cubic(t) = C * (t - K)^3 + W_max, K = cbrt((W_max - cwnd_epoch) / C)
 *   4.3  the Reno-friendly estimate W_est
 *   4.4/4.5 concave and convex growth toward target = W_cubic(t + RTT)
 *   4.6  multiplicative decrease by beta_cubic = 0.7
 *   4.7  fast convergence
 *   4.8  timeouts
 * t is the time since the congestion-avoidance stage began, from the
 * wheel's clock; RTT is the connection's SRTT. */
#include <math.h>

#include <rte_common.h>

#include "tcp/cc.h"

/* RFC 9438 4.3: alpha_cubic = 3 * (1 - beta) / (1 + beta), about 0.53:
 * the same average window as Reno's AIMD(1, 0.5) under the same loss rate. */
#define CUBIC_ALPHA (3.0 * (1.0 - TCP_CUBIC_BETA) / (1.0 + TCP_CUBIC_BETA))

double tcp_cubic_w(const struct tcp_cc *cc, double t_s)
{
	double d = t_s - cc->k;

	return TCP_CUBIC_C * d * d * d + cc->w_max; /* RFC 9438 eq. 1 */
}

/* RFC 9438 4.2: a new epoch at the first ACK of congestion avoidance.
 * K from eq. 2; when the window already reaches W_max (no reduction, or
 * after a timeout, 4.8) the curve starts at its plateau: K = 0 and
 * W_max = cwnd_epoch.  4.3 / 4.8: W_est starts at cwnd_epoch. */
static void epoch_start(struct tcp_cc *cc, uint64_t now_ns)
{
	cc->epoch_ns = now_ns ? now_ns : 1;
	cc->cwnd_epoch = (double)cc->cwnd / cc->smss;
	cc->w = cc->cwnd_epoch;
	cc->w_est = cc->cwnd_epoch;
	if (cc->after_rto || cc->w_max <= cc->cwnd_epoch) {
		cc->k = 0;
		cc->w_max = cc->cwnd_epoch;
	} else {
		cc->k = cbrt((cc->w_max - cc->cwnd_epoch) / TCP_CUBIC_C);
	}
	cc->after_rto = false;
	if (cc->st != NULL)
		cc->st->cc_cubic_epochs++;
}

static void set_cwnd(struct tcp_cc *cc)
{
	double b = cc->w * cc->smss;

	cc->cwnd = b >= (double)(UINT32_MAX / 2) ? UINT32_MAX / 2 : (uint32_t)b;
	if (cc->cwnd < cc->smss)
		cc->cwnd = cc->smss;
}

/* One ACK of `acked` bytes in congestion avoidance.  Growth is per ACK
 * scaled by the segments it acknowledges (RFC 3465 byte counting, the
 * segments_acked of 4.3 used for 4.4/4.5 too), so delayed ACKs do not
 * halve it. */
void tcp_cubic_avoid(struct tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_ns)
{
	double segs = (double)acked / cc->smss, t, wc, target, alpha;

	if (cc->epoch_ns == 0)
		epoch_start(cc, now_ns);
	else if ((uint32_t)(cc->w * cc->smss) != cc->cwnd)
		cc->w = (double)cc->cwnd / cc->smss; /* moved by the engine */
	t = (double)(now_ns - cc->epoch_ns) / 1e9;
	/* 4.3: alpha_cubic until W_est reaches cwnd_prior, then 1 (Reno's). */
	alpha = cc->w_est >= cc->cwnd_prior ? 1.0 : CUBIC_ALPHA;
	cc->w_est += alpha * segs / cc->w;
	wc = tcp_cubic_w(cc, t);
	if (wc < cc->w_est) {
		/* 4.3: the Reno-friendly region: cwnd = W_est. */
		cc->w = cc->w_est;
		if (cc->st != NULL)
			cc->st->cc_cubic_friendly_acks++;
	} else {
		/* 4.4 / 4.5: toward W_cubic(t + RTT), bounded to [cwnd, 1.5 cwnd]. */
		target = tcp_cubic_w(cc, t + (double)srtt_us / 1e6);
		if (target < cc->w)
			target = cc->w;
		if (target > 1.5 * cc->w)
			target = 1.5 * cc->w;
		cc->w += (target - cc->w) / cc->w * segs;
	}
	set_cwnd(cc);
}

/* RFC 9438 4.7: with fast convergence a flow whose window fell short of
 * the previous W_max releases bandwidth: W_max = cwnd * (1 + beta) / 2. */
static void update_w_max(struct tcp_cc *cc)
{
	double cw = (double)cc->cwnd / cc->smss;

	if (cc->w_max > 0 && cw < cc->w_max) {
		cc->w_max = cw * (1.0 + TCP_CUBIC_BETA) / 2.0;
		if (cc->st != NULL)
			cc->st->cc_cubic_fast_convergence++;
	} else {
		cc->w_max = cw;
	}
	cc->cwnd_prior = cw;
}

/* RFC 9438 4.6: ssthresh = flight_size * beta_cubic (at least 2 SMSS,
 * RFC 5681 eq. 4's floor); the epoch ends. */
static uint32_t cubic_ssthresh(const struct tcp_cc *cc, uint32_t flight)
{
	uint32_t s = (uint32_t)((double)flight * TCP_CUBIC_BETA);

	return RTE_MAX(s, 2 * cc->smss);
}

uint32_t tcp_cubic_congestion(struct tcp_cc *cc, uint32_t flight)
{
	update_w_max(cc);
	cc->ssthresh = cubic_ssthresh(cc, flight);
	cc->epoch_ns = 0;
	cc->after_rto = false;
	return cc->ssthresh;
}

/* RFC 9438 4.8: cwnd as Reno (1 SMSS), ssthresh with beta_cubic; the
 * first avoidance stage afterwards has K = 0 and W_max = its first cwnd. */
void tcp_cubic_rto(struct tcp_cc *cc, uint32_t flight, bool first)
{
	if (first) {
		cc->cwnd_prior = (double)cc->cwnd / cc->smss;
		cc->ssthresh = cubic_ssthresh(cc, flight);
	}
	cc->cwnd = cc->smss;
	cc->epoch_ns = 0;
	cc->after_rto = true;
}

/* RFC 9438 4.9: a congestion event found spurious gives back the state
 * saved before it: W_max, K, W_est, cwnd_prior and the epoch (which goes on
 * as if the reduction had not happened). */
void tcp_cubic_undo(struct tcp_cc *cc, const struct tcp_cc_prior *p)
{
	cc->w_max = p->w_max;
	cc->k = p->k;
	cc->w_est = p->w_est;
	cc->cwnd_epoch = p->cwnd_epoch;
	cc->cwnd_prior = p->cwnd_prior;
	cc->epoch_ns = p->epoch_ns;
	cc->after_rto = p->after_rto;
	cc->w = (double)p->cwnd / cc->smss;
}
