/* tcp/recovery.h: how much a sender may send on each ACK of fast recovery.
 *
 * A pure decision module: no TCB, no mbuf, no clock.  The engine owns the
 * scoreboard (tcp/scoreboard.h) and computes, per ACK, the bytes newly
 * delivered and the pipe (RFC 6675 SetPipe, "inflight" in RFC 9937); this
 * module turns them into a sending budget and a cwnd.
 *
 * Calling sequence for one recovery episode:
 *   tcp_rec_enter()      once, on the ACK that starts recovery, BEFORE
 *                        tcp_rec_on_ack() is called for that same ACK
 *                        (RFC 9937 6.2: the per-ACK steps run "on every ACK
 *                        starting or during fast recovery");
 *   tcp_rec_on_ack()     on every ACK of the episode except the one that
 *                        ends it; the result says how many bytes may be sent
 *                        now (sndcnt) and the cwnd to use;
 *   tcp_rec_on_send()    for every (re)transmission made during recovery,
 *                        with the bytes sent (prr_out += bytes);
 *   tcp_rec_exit()       on the ACK that ends recovery: returns the cwnd to
 *                        continue with.
 *
 * All quantities are bytes.  sndcnt may be smaller than one SMSS (PRR is
 * byte-exact); whether a partial budget may release a full segment is the
 * engine's choice (RFC 9937 leaves it to the implementation).
 *
 * Algorithms (config names in brackets):
 *   TCP_REC_PRR        [prr]        RFC 9937 6 (obsoletes RFC 6937)
 *   TCP_REC_PRR_CRB    [prr-crb]    RFC 6937 3, Conservative Reduction Bound
 *   TCP_REC_PRR_SSRB   [prr-ssrb]   RFC 6937 3, Slow Start Reduction Bound
 *   TCP_REC_RFC6675    [rfc6675]    RFC 6675 5: cwnd = ssthresh, send while
 *                                   cwnd - pipe >= 1 SMSS
 *   TCP_REC_RATEHALVING [ratehalving] Linux 2.6 rate-halving, see recovery.c
 */
#ifndef US_TCP_RECOVERY_H
#define US_TCP_RECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/tcp_config.h"

/* Types */

/* What the engine knows at the ACK that starts recovery; RecoverFS is
 * derived from it (RFC 9937 6.1, RFC 6937 3). */
struct tcp_rec_start {
	uint32_t flight;        /* SND.NXT - SND.UNA after this ACK */
	uint32_t sacked_before; /* bytes SACKed by ACKs before this one */
	uint32_t newly_acked;   /* bytes this ACK cumulatively acknowledged */
};

/* One ACK during recovery. */
struct tcp_rec_ack {
	uint32_t delivered; /* DeliveredData: change_in(SND.UNA) + change_in(SACKd);
	                     * without SACK see tcp_rec_nonsack_delivered() */
	uint32_t pipe;      /* RFC 6675 pipe after this ACK, before sending */
	bool safe;          /* RFC 9937 SafeACK: SND.UNA advanced and the ACK
	                     * indicated no further loss (only TCP_REC_PRR) */
};

struct tcp_rec_out {
	uint32_t sndcnt; /* bytes that may be sent now */
	uint32_t cwnd;   /* congestion window to use */
};

/* Which branch decided, per episode (reset by tcp_rec_enter). */
#define TCP_REC_COUNTERS(X)                                                   \
	X(acks)       /* ACKs given to tcp_rec_on_ack */                       \
	X(no_data)    /* RFC 9937: DeliveredData == 0, nothing sent */         \
	X(prop)       /* pipe > ssthresh: proportional part */                 \
	X(crb)        /* reduction bound, conservative */                      \
	X(ssrb)       /* reduction bound, slow start (+1 SMSS) */              \
	X(forced)     /* one SMSS forced (prr_out == 0 / fast retransmit) */   \
	X(rh_decr)    /* rate-halving: cwnd lowered by one SMSS */             \
	X(rh_bound)   /* rate-halving: cwnd held to pipe + 1 SMSS */

struct tcp_rec_counters {
#define TCP_REC_CNT_FIELD(n) uint32_t n;
	TCP_REC_COUNTERS(TCP_REC_CNT_FIELD)
#undef TCP_REC_CNT_FIELD
};

struct tcp_rec {
	enum tcp_rec_alg alg;
	uint32_t smss;
	uint32_t ssthresh;
	uint32_t recover_fs;    /* RecoverFS, constant for the episode */
	uint64_t prr_delivered; /* bytes delivered during recovery */
	uint64_t prr_out;       /* bytes sent during recovery */
	uint32_t cwnd;          /* last cwnd returned (or the one at entry) */
	uint32_t nonsack_credit; /* bytes counted for non-SACK dupacks, not yet
	                          * covered by a cumulative ACK */
	struct tcp_rec_counters cnt;
};

/* Prototypes */

/* Start an episode.  ssthresh is what congestion control chose (CongCtrlAlg
 * in RFC 9937 6.1); cwnd is the window before recovery. */
void tcp_rec_enter(struct tcp_rec *r, enum tcp_rec_alg alg, uint32_t smss,
		   uint32_t ssthresh, uint32_t cwnd,
		   const struct tcp_rec_start *start);

struct tcp_rec_out tcp_rec_on_ack(struct tcp_rec *r,
				  const struct tcp_rec_ack *ack);

void tcp_rec_on_send(struct tcp_rec *r, uint32_t bytes);

/* End of recovery: the cwnd to continue with. */
uint32_t tcp_rec_exit(struct tcp_rec *r);

/* DeliveredData without SACK (RFC 6937 3, RFC 9937 6): a duplicate ACK counts
 * one SMSS, capped so prr_delivered never exceeds RecoverFS; a cumulative ACK
 * of `acked` bytes counts what the dupacks did not already count. */
uint32_t tcp_rec_nonsack_delivered(struct tcp_rec *r, bool dupack,
				   uint32_t acked);

#endif /* US_TCP_RECOVERY_H */
