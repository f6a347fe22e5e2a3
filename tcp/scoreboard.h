/* tcp/scoreboard.h: the sender's SACK scoreboard (RFC 6675 2-4) and the
 * delivery-rate estimate shown in tcp_conn_info.
 *
 * What the peer told us with SACK blocks (RFC 2018) is kept as a small
 * sorted array of sequence ranges above SND.UNA, merged across ACKs: no mbuf
 * is touched.  SACKed data is never treated as delivered (RFC 2018 8: the
 * receiver may renege); it stays in the send queue until it is cumulatively
 * acknowledged, and the scoreboard only informs.
 *
 * From it come RFC 6675's IsLost(), the lost bytes over the holes and the
 * SetPipe() estimate.  Fast recovery acts on them (loss.c: entry and
 * pipe; output.c: NextSeg); after an RTO the engine still goes back N.
 *
 * The range array is bounded (TCP_SB_MAX_RANGES).  On overflow the lowest
 * range is forgotten: IsLost() looks at what lies above a hole, so the high
 * ranges carry the information, and forgetting a SACK only makes us more
 * conservative (the bytes count as outstanding again).
 */
#ifndef US_TCP_SCOREBOARD_H
#define US_TCP_SCOREBOARD_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

#define TCP_SB_MAX_RANGES 32u
#define TCP_SB_DUPTHRESH 3u /* RFC 6675 2: DupThresh */

struct tcp_conn;
struct tcp_seg;

struct tcp_sb_range {
	uint32_t start, end; /* [start, end) */
};

struct tcp_sb {
	/* Ascending, disjoint and not touching (adjacent ranges are merged),
	 * all within (SND.UNA, SND.MAX]. */
	struct tcp_sb_range r[TCP_SB_MAX_RANGES];
	unsigned n;
	uint32_t sacked;        /* bytes covered by r[] */
	/* Per-connection counts (the stack-wide ones are in tcp_stats). */
	uint64_t dsack_rcvd;    /* RFC 2883 D-SACK blocks recognised */
	uint64_t invalid;       /* blocks outside [SND.UNA, SND.MAX] ignored */
	uint64_t overflows;     /* ranges forgotten because r[] was full */
	uint64_t reneged;       /* SND.UNA landed inside a SACKed range */
	uint64_t rto_cleared;   /* scoreboards cleared after an RTO */
	/* Set at tcp_sb_ack_begin, read at tcp_sb_ack_end. */
	uint32_t una0;
	uint64_t acked0;
	/* Delivery rate: bytes delivered (cumulatively ACKed or newly SACKed)
	 * since the ACK at dr_start_ns, closed after >= max(SRTT, 1 ms). */
	bool dr_open;
	uint64_t dr_start_ns, dr_bytes;
	uint64_t delivery_rate;  /* bytes per second, 0 until one interval ends */
};

/* Prototypes */

/* Pure scoreboard operations (no connection, unit-testable). */
void tcp_sb_init(struct tcp_sb *sb);
/* Forgets every range (counters and the rate estimate stay). */
void tcp_sb_clear(struct tcp_sb *sb);
/* A retransmission timeout fired (tcb_timers.c): forget what was SACKed. */
struct tcp_conn;
void tcp_sb_on_rto(struct tcp_conn *c);
/* Drops what lies below una; returns the SACKed bytes that went. */
uint32_t tcp_sb_prune(struct tcp_sb *sb, uint32_t una);
/* Adds [start, end) (caller checked it is within bounds); returns the bytes
 * that were not SACKed before. */
uint32_t tcp_sb_add(struct tcp_sb *sb, uint32_t start, uint32_t end);
/* One ACK's SACK blocks, in the order sent; ack is SEG.ACK (the new SND.UNA)
 * and max SND.MAX.  D-SACK and out-of-bounds blocks are counted and
 * skipped; returns the bytes newly SACKed. */
uint32_t tcp_sb_update(struct tcp_sb *sb, uint32_t ack, uint32_t max,
		       const uint32_t (*blk)[2], unsigned nblk);
/* RFC 2883 4: is the first of nblk blocks a D-SACK (ack: SEG.ACK)? */
bool tcp_sb_is_dsack(const uint32_t (*blk)[2], unsigned nblk, uint32_t ack);
/* RFC 6675 4 IsLost(seq), DupThresh 3 and SMSS smss. */
bool tcp_sb_is_lost(const struct tcp_sb *sb, uint32_t seq, uint32_t smss);
/* Bytes in the holes between una and the highest SACKed byte that
 * IsLost() calls lost. */
uint32_t tcp_sb_lost_bytes(const struct tcp_sb *sb, uint32_t una, uint32_t smss);
/* RFC 6675 4 SetPipe() in bytes over [una, max): neither SACKed nor lost,
 * plus what was retransmitted below rxt_high (HighRxt; una: none). */
uint32_t tcp_sb_pipe(const struct tcp_sb *sb, uint32_t una, uint32_t max, uint32_t rxt_high,
		     uint32_t smss);

/* Engine glue (established.c, tcp_stack.c). */
/* Before SND.UNA moves for this ACK: notes it; clears after an RTO. */
void tcp_sb_ack_begin(struct tcp_conn *c);
/* After: prunes at SND.UNA, detects reneging, feeds the SACK blocks and
 * the delivery-rate estimate. */
void tcp_sb_ack_end(struct tcp_conn *c, const struct tcp_seg *seg);
/* What tcp_conn_info shows (an RTO since the last ACK empties them). */
uint32_t tcp_sb_conn_sacked(const struct tcp_conn *c);
uint32_t tcp_sb_conn_lost(const struct tcp_conn *c);
uint32_t tcp_sb_conn_pipe(const struct tcp_conn *c);

#endif
