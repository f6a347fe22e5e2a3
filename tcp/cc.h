/* tcp/cc.h: congestion control (how big cwnd and ssthresh are).
 *
 * A pure module: no TCB, no mbuf, no clock of its own.  The engine
 * (established.c, tcb_timers.c) tells it what happened and reads cwnd and
 * ssthresh back:
 *   tcp_cc_init()             once, when the connection is synchronized;
 *   tcp_cc_on_ack()           an ACK of new data outside fast recovery:
 *                             slow start or congestion avoidance;
 *   tcp_cc_on_congestion()    entering fast recovery (3rd duplicate ACK):
 *                             sets and returns ssthresh;
 *   tcp_cc_on_recovery_exit() the full ACK that ends recovery: cwnd;
 *   tcp_cc_on_rto()           a retransmission timeout;
 *   tcp_cc_save()             before either reduction: what an undo needs;
 *   tcp_cc_undo()             the reduction proved spurious (tcp/undo.h).
 * Inside recovery cwnd is the recovery algorithm's (tcp/recovery.h, PRR by
 * default, driven by loss.c); the module is not asked.
 *
 * Algorithms (config key tcp.cc):
 *   TCP_CC_NEWRENO [newreno] RFC 5681 with RFC 3465 byte counting (slow
 *                            start L = 2, or unbounded as Linux with
 *                            profile linux: ss_all_acked)
 *   TCP_CC_CUBIC   [cubic]   RFC 9438 (the default, as in Linux)
 *
 * Units: cwnd and ssthresh are bytes.  CUBIC's window function works in
 * segments and seconds, in double precision: W_cubic(t) needs a cube and
 * a cube root, and doubles keep the code next to the RFC's formulas (the
 * per-ACK increment (target - cwnd) / cwnd is a fraction of a segment that
 * integer segments would lose).  The precise window is kept as w (segments)
 * and cwnd = floor(w * SMSS) bytes.
 */
#ifndef US_TCP_CC_H
#define US_TCP_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/tcp.h"

/* Types */

#define TCP_CUBIC_C 0.4      /* RFC 9438 5.1: C, segments / s^3 */
#define TCP_CUBIC_BETA 0.7   /* RFC 9438 4.6: beta_cubic */
#define TCP_ABC_L 2u         /* RFC 3465 2.2: L, in SMSS */

struct tcp_cc {
	enum tcp_cc_alg alg;
	bool ready;              /* tcp_cc_init done */
	uint32_t smss;
	uint32_t cwnd, ssthresh; /* bytes */
	uint32_t abc_bytes;      /* RFC 3465 2.1: bytes ACKed in avoidance */
	/* Slow start grows by every byte acknowledged, up to ssthresh, the
	 * rest going to avoidance (Linux's tcp_slow_start, profile linux);
	 * false: RFC 3465 2.2's min(N, L * SMSS). */
	bool ss_all_acked;
	/* CUBIC (RFC 9438), segments and seconds. */
	double w;                /* precise cwnd during congestion avoidance */
	double w_max;            /* window before the last reduction; 0: none */
	double k;                /* time to reach w_max again */
	double w_est;            /* Reno-friendly estimate (4.3) */
	double cwnd_epoch;       /* cwnd when the epoch started */
	double cwnd_prior;       /* cwnd when ssthresh was last set; 0: never */
	uint64_t epoch_ns;       /* start of this avoidance stage; 0: none */
	bool after_rto;          /* 4.8: next epoch has K = 0, W_max = cwnd */
	struct tcp_stats *st;    /* counters (stack-wide) */
};

/* The state before a reduction, for its undo (tcp_cc_save). */
struct tcp_cc_prior {
	uint32_t cwnd, ssthresh;
	double w_max, k, w_est, cwnd_epoch, cwnd_prior; /* CUBIC */
	uint64_t epoch_ns;
	bool after_rto;
};

/* Prototypes */

void tcp_cc_init(struct tcp_cc *cc, enum tcp_cc_alg alg, uint32_t smss, uint32_t cwnd,
		 uint32_t ssthresh, struct tcp_stats *st);
/* acked: bytes newly acknowledged; srtt_us: 0 without a sample; now_ns:
 * the wheel's time. */
void tcp_cc_on_ack(struct tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_ns);
/* RFC 5681 3.2 step 2 / RFC 9438 4.6: flight is FlightSize in bytes;
 * returns the new ssthresh (cwnd is left to the recovery algorithm). */
uint32_t tcp_cc_on_congestion(struct tcp_cc *cc, uint32_t flight);
void tcp_cc_on_recovery_exit(struct tcp_cc *cc);
/* first: the first expiry for this segment (RFC 5681 3.1: ssthresh is not
 * lowered again when the same segment times out again). */
void tcp_cc_on_rto(struct tcp_cc *cc, uint32_t flight, bool first);
void tcp_cc_save(const struct tcp_cc *cc, struct tcp_cc_prior *p);
/* cwnd = max(cwnd, prior), ssthresh = max(ssthresh, prior) (Linux's
 * tcp_undo_cwnd_reduction); CUBIC's state back too (RFC 9438 4.9). */
void tcp_cc_undo(struct tcp_cc *cc, const struct tcp_cc_prior *p);
/* RFC 9438 eq. 1: W_cubic(t) in segments. */
double tcp_cubic_w(const struct tcp_cc *cc, double t_s);

/* cc_cubic.c, called by the dispatch in cc_newreno.c. */
void tcp_cubic_avoid(struct tcp_cc *cc, uint32_t acked, uint32_t srtt_us, uint64_t now_ns);
uint32_t tcp_cubic_congestion(struct tcp_cc *cc, uint32_t flight);
void tcp_cubic_rto(struct tcp_cc *cc, uint32_t flight, bool first);
void tcp_cubic_undo(struct tcp_cc *cc, const struct tcp_cc_prior *p);

#endif
