/* tcp/sent_log.h: the sender's record of what is in flight, for RACK
 * (RFC 8985 6.1: per segment, its sequence range, its last transmission
 * time, whether it was retransmitted, SACKed, marked lost).
 *
 * Neither the send queue (mbufs) nor the scoreboard (SACKed ranges) keeps
 * transmit times, so this is a record of its own: an array of sequence
 * ranges [start, end), ascending and disjoint, each with its last
 * (re)transmission time and flags.  Ranges, not segments: bytes sent one
 * after the other at the same time with the same flags are one entry (one
 * output pass's burst, a segment of several MSS handed to segmentation
 * offload).  RACK compares transmission times and breaks ties by the end
 * sequence (RFC 8985 6.2 RACK_sent_after), so a burst sent at one instant
 * behaves as its segments would.  An entry is split where a cumulative ACK,
 * a SACK block or a retransmission starts or ends inside it: the MSS at
 * send time does not matter (a retransmission cut at a lowered MSS covers
 * part of an entry, one at a larger MSS several).
 *
 * Memory: the entries live in [lo, n) of an array that doubles from
 * TCP_SLOG_MIN up to TCP_SLOG_MAX entries; acknowledged entries leave from
 * the front, and once everything is acknowledged an array grown beyond
 * TCP_SLOG_MIN goes back to the allocator.  Full, a send is not recorded
 * (counted by the caller): RACK never marks lost what it does not know,
 * the retransmission timer still covers it.
 *
 * Pure storage: what the flags mean is rack.c's.
 */
#ifndef US_TCP_SENT_LOG_H
#define US_TCP_SENT_LOG_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

#define TCP_SLOG_MIN 16u      /* first allocation: 384 bytes, kept while in use */
#define TCP_SLOG_MAX 16384u   /* 384 KiB at most, for ~24 MB in flight at MSS 1460 */

#define TCP_SLOG_RETRANS 0x1u /* sent more than once (its RTT samples ambiguous) */
#define TCP_SLOG_SACKED 0x2u  /* covered by the scoreboard */
#define TCP_SLOG_LOST 0x4u    /* marked lost and not sent again since */
#define TCP_SLOG_EXTRA 0x8u   /* sent again while not marked lost: two copies out */

struct tcp_slog_ent {
	uint32_t start, end;
	uint64_t xmit_ns;     /* last (re)transmission, the wheel's time */
	uint8_t flags;
};

struct tcp_slog {
	struct tcp_slog_ent *e;
	uint32_t lo, n, cap;  /* entries e[lo .. n) */
};

/* Prototypes */

/* Index of the first entry that ends after seq (n when none). */
uint32_t tcp_slog_find(const struct tcp_slog *l, uint32_t seq);
/* An entry boundary at seq (an entry holding seq inside is cut in two);
 * false when the log is full. */
bool tcp_slog_split(struct tcp_slog *l, uint32_t seq);
/* [start, end) sent at xmit_ns with flags, at or above the last entry's
 * end: joins the last entry when it touches it with the same time and
 * flags; false when the log is full. */
bool tcp_slog_append(struct tcp_slog *l, uint32_t start, uint32_t end, uint64_t xmit_ns,
		     uint8_t flags);
/* Joins touching neighbours with the same time and flags among entries
 * a .. b (clamped to the log). */
void tcp_slog_coalesce(struct tcp_slog *l, uint32_t a, uint32_t b);
/* Forgets what lies below una (an entry holding una keeps its part above);
 * an emptied log gives back memory beyond TCP_SLOG_MIN entries. */
void tcp_slog_trim(struct tcp_slog *l, uint32_t una);
void tcp_slog_free(struct tcp_slog *l);

static inline bool tcp_slog_empty(const struct tcp_slog *l)
{
	return l->lo == l->n;
}

#endif
