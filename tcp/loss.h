/* tcp/loss.h: the loss-recovery module's state inside the TCB.
 *
 * What starts fast recovery (duplicate ACKs, RFC 6675 IsLost), the episode
 * itself (recover, HighRxt, the rescue retransmission), the per-ACK sending
 * decision's state (tcp/recovery.h, a pure module) and the detection of a
 * spurious episode live here, and only loss.c (and undo.c for its part,
 * struct tcp_undo) changes them: input hands it
 * every ACK (tcp_loss_ack), the timer every RTO (tcp_loss_on_rto), output
 * every retransmission it makes in recovery (tcp_loss_on_rxt).  Others read
 * (in_recovery, the budget, HighRxt).  cwnd and ssthresh stay in the TCB:
 * the send loop and congestion control read them everywhere.
 */
#ifndef US_TCP_LOSS_H
#define US_TCP_LOSS_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/rack.h"
#include "tcp/recovery.h"
#include "tcp/tcp_config.h"
#include "tcp/tlp.h"
#include "tcp/undo.h"

struct tcp_loss {
	/* What starts recovery. */
	unsigned dupacks;               /* RFC 5681 duplicate ACKs in a row */
	uint32_t lt_bytes;              /* sent by limited transmit (RFC 3042) */
	/* The episode. */
	bool in_recovery;               /* fast recovery */
	bool recover_valid;             /* recover set (a recovery or an RTO) */
	uint32_t recover;               /* RFC 6582: SND.MAX at entry / RTO */
	/* The per-ACK sending decision (tcp/recovery.h); output.c's
	 * tcp_recovery_send spends rec_budget. */
	struct tcp_rec rec;
	bool rec_alg_set;               /* tcp_set_recovery, else cfg.recovery */
	enum tcp_rec_alg rec_alg;
	uint32_t rec_budget;            /* bytes this ACK may still release */
	uint32_t rxt_high;              /* RFC 6675 HighRxt, as an exclusive end */
	bool rec_first_rxt;             /* SND.UNA's segment not yet resent (4.3) */
	bool rescue_valid;              /* RFC 6675 RescueRxt set this episode */
	uint32_t rescue_rxt;
	uint32_t rescue_lo, rescue_hi;  /* what the rescue resent (D-SACKs expected) */
	/* Spurious episodes and RTOs, and their undo (tcp/undo.h, undo.c). */
	struct tcp_undo undo;
	/* RFC 8985 RACK (tcp/rack.c). */
	struct tcp_rack rack;
	/* Per connection, for tcp_conn_info. */
	uint64_t fast_retransmits, recovery_episodes, partial_acks;
	uint64_t rtos, spurious_recoveries;
	struct tcp_tlp tlp;             /* Tail Loss Probe (tcp/tlp.h, tlp.c) */
};

#endif
