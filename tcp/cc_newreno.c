/* tcp/cc_newreno.c: the congestion-control entry points (tcp/cc.h), slow
 * start shared by both algorithms (RFC 3465's L = 2 SMSS per ACK, or with
 * profile linux every SMSS acknowledged, as Linux), and NewReno: RFC 5681
 * 3.1 with Appropriate Byte Counting (RFC 3465).  Fast recovery's
 * per-ACK window moves (RFC 6582) are the engine's (established.c). */
#include <rte_common.h>

#include "tcp/cc.h"

void tcp_cc_init(struct tcp_cc *cc, enum tcp_cc_alg alg, uint32_t smss, uint32_t cwnd,
		 uint32_t ssthresh, struct tcp_stats *st)
{
	*cc = (struct tcp_cc){
		.alg = alg < TCP_CC_ALG_COUNT ? alg : TCP_CC_CUBIC,
		.ready = true, .smss = smss ? smss : 1, .cwnd = cwnd, .ssthresh = ssthresh,
		.st = st,
	};
}

/* RFC 5681 eq. 4: ssthresh = max(FlightSize / 2, 2 * SMSS). */
static uint32_t reno_ssthresh(const struct tcp_cc *cc, uint32_t flight)
{
	return RTE_MAX(flight / 2, 2 * cc->smss);
}

/* RFC 3465 2.1: in congestion avoidance cwnd grows by one SMSS once a
 * whole cwnd of bytes has been acknowledged: +1 SMSS per RTT however the
 * receiver spaces its ACKs. */
static void reno_avoid(struct tcp_cc *cc, uint32_t acked)
{
	cc->abc_bytes += acked;
	if (cc->abc_bytes >= cc->cwnd) {
		cc->abc_bytes -= cc->cwnd;
		cc->cwnd += cc->smss;
	}
}

/* RFC 5681 3.1 slow start with RFC 3465 2.2: cwnd += min(N, L * SMSS),
 * so a delayed ACK of two segments still doubles cwnd per RTT.  Returns
 * the acknowledged bytes left for congestion avoidance: none. */
static uint32_t slow_start_abc(struct tcp_cc *cc, uint32_t acked)
{
	cc->cwnd += RTE_MIN(acked, TCP_ABC_L * cc->smss);
	return 0;
}

/* Linux's tcp_slow_start: one SMSS per SMSS acknowledged, however many one
 * ACK covers (a stretch ACK after GRO, an ACK after loss), up to
 * ssthresh; what is left past ssthresh grows cwnd in avoidance. */
static uint32_t slow_start_all_acked(struct tcp_cc *cc, uint32_t acked)
{
	uint32_t room = cc->ssthresh - cc->cwnd, add = RTE_MIN(acked, room);

	cc->cwnd += add;
	return acked - add;
}

void tcp_cc_on_ack(struct tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_ns)
{
	if (cc->cwnd < cc->ssthresh) {
		acked = cc->ss_all_acked ? slow_start_all_acked(cc, acked) : slow_start_abc(cc, acked);
		if (cc->cwnd > UINT32_MAX / 2)
			cc->cwnd = UINT32_MAX / 2;
		if (cc->cwnd >= cc->ssthresh && cc->st != NULL)
			cc->st->cc_ss_exits++;
		if (acked == 0)
			return;
	}
	if (cc->alg == TCP_CC_CUBIC)
		tcp_cubic_avoid(cc, acked, srtt_us, now_ns);
	else
		reno_avoid(cc, acked);
}

uint32_t tcp_cc_on_congestion(struct tcp_cc *cc, uint32_t flight)
{
	cc->abc_bytes = 0;
	if (cc->alg == TCP_CC_CUBIC)
		return tcp_cubic_congestion(cc, flight);
	cc->ssthresh = reno_ssthresh(cc, flight); /* RFC 5681 3.2 step 2 */
	return cc->ssthresh;
}

/* RFC 5681 3.2 step 6 / RFC 6582 3.2 step 3: deflate to ssthresh. */
void tcp_cc_on_recovery_exit(struct tcp_cc *cc)
{
	cc->cwnd = cc->ssthresh;
	cc->abc_bytes = 0;
}

/* RFC 5681 3.1: ssthresh per eq. 4 (not again for the same segment),
 * cwnd = LW = 1 SMSS. */
void tcp_cc_on_rto(struct tcp_cc *cc, uint32_t flight, bool first)
{
	cc->abc_bytes = 0;
	if (first && cc->st != NULL)
		cc->st->cc_rto_reductions++;
	if (cc->alg == TCP_CC_CUBIC) {
		tcp_cubic_rto(cc, flight, first);
		return;
	}
	if (first)
		cc->ssthresh = reno_ssthresh(cc, flight);
	cc->cwnd = cc->smss;
}

void tcp_cc_save(const struct tcp_cc *cc, struct tcp_cc_prior *p)
{
	*p = (struct tcp_cc_prior){
		.cwnd = cc->cwnd, .ssthresh = cc->ssthresh, .w_max = cc->w_max, .k = cc->k,
		.w_est = cc->w_est, .cwnd_epoch = cc->cwnd_epoch, .cwnd_prior = cc->cwnd_prior,
		.epoch_ns = cc->epoch_ns, .after_rto = cc->after_rto,
	};
}

/* Only forward: a window that has grown past the prior one since (slow
 * start after an RTO proved spurious late) is kept. */
void tcp_cc_undo(struct tcp_cc *cc, const struct tcp_cc_prior *p)
{
	if (cc->alg == TCP_CC_CUBIC && p->cwnd >= cc->cwnd)
		tcp_cubic_undo(cc, p);
	cc->abc_bytes = 0;
	cc->cwnd = RTE_MAX(cc->cwnd, p->cwnd);
	cc->ssthresh = RTE_MAX(cc->ssthresh, p->ssthresh);
}
