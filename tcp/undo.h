/* tcp/undo.h: undo of spurious window reductions, inside struct tcp_loss.
 *
 * A fast recovery or an RTO lowers cwnd and ssthresh on the presumption
 * that a segment was lost.  When the retransmissions turn out needless
 * (the originals were only delayed or reordered), the reduction is undone:
 * cwnd and ssthresh come back to what they were before it (Linux's
 * prior_cwnd / prior_ssthresh, tcp_undo_cwnd_reduction), with CUBIC's own
 * state (RFC 9438 4.9).  Two detections (undo.c):
 *  - D-SACK (RFC 2883, RFC 3708): every retransmission of the episode was
 *    reported as a duplicate by the receiver;
 *  - timestamps (Eifel, RFC 3522): the first ACK that acknowledges the
 *    first retransmission echoes a TSval older than that retransmission's,
 *    so the original arrived.
 * After an RTO the go-back-N resending stops as well (RFC 4015).
 *
 * The D-SACK detection also counts spurious recoveries (spurious_recoveries)
 * when undo is off; everything else happens only with undo on ([tcp] undo,
 * tcp_set_undo).  loss.c calls in at recovery entry, on every ACK and at an
 * RTO; output.c and loss.c report every retransmission.
 */
#ifndef US_TCP_UNDO_H
#define US_TCP_UNDO_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/cc.h"

struct tcp_conn;
struct tcp_seg;

struct tcp_undo {
	bool on_set, on;           /* tcp_set_undo, else cfg.undo */
	/* The reduction that may still be undone (Linux's undo_marker). */
	bool armed;
	bool rto;                  /* an RTO is part of it (else a fast recovery) */
	struct tcp_cc_prior prior; /* cwnd, ssthresh and CUBIC before it */
	/* D-SACK: the retransmissions since the reduction lie in [lo, hi);
	 * left of them (segments) not yet reported duplicate. */
	uint32_t lo, hi, left;
	/* Eifel: the first retransmission since the reduction (seq and our
	 * TSval when it left, Linux's retrans_stamp); ts_pending until the
	 * first ACK above rxt_seq decides; rxts retransmissions so far. */
	bool rxt_sent, ts_pending;
	uint32_t rxt_seq, rxt_tsval;
	uint32_t rxts;
	/* Per connection, for tcp_conn_info. */
	uint64_t dsack_recovery, ts_recovery, ts_rto, dsack_rto;
};

/* The reductions start: recovery entry, an RTO (before cwnd and ssthresh
 * change; recover and in_recovery still the episode's before the RTO). */
void tcp_undo_on_recovery(struct tcp_conn *c);
void tcp_undo_on_rto(struct tcp_conn *c);
/* [seq, end) was sent again: in recovery (not the rescue) or go-back-N. */
void tcp_undo_on_rxt(struct tcp_conn *c, uint32_t seq, uint32_t end);
/* Every ACK (loss.c, before the recovery decision): when it proves the
 * reduction spurious, undoes it and ends recovery (the same ACK may then
 * start a new episode for a loss it shows). */
void tcp_undo_ack(struct tcp_conn *c, const struct tcp_seg *seg);
/* tcp_set_undo, else [tcp] undo. */
bool tcp_undo_enabled(const struct tcp_conn *c);
void tcp_undo_info(const struct tcp_conn *c, struct tcp_conn_info *info);

#endif
