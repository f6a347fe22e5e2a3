/* tcp/rack.h: RACK, RFC 8985's time-based loss detection, its state inside
 * struct tcp_loss (tcp/loss.h).
 *
 * With SACK and loss_detection = rack, a segment is lost once a segment
 * sent after it has been delivered (cumulatively ACKed or SACKed) and more
 * than RACK.rtt + the reordering window has passed since it was sent
 * (RFC 8985 6.2).  Those marks start fast recovery (loss.c), are what
 * recovery's NextSeg rule 1 resends (output.c) and what pipe leaves out;
 * PRR still decides how much goes.  rack.c alone writes this struct.
 */
#ifndef US_TCP_RACK_H
#define US_TCP_RACK_H

#include <stdbool.h>
#include <stdint.h>

#include "tcp/sent_log.h"
#include "tcp/tcp_config.h"

struct tcp_rack {
	struct tcp_slog log;        /* what is in flight, per range (sent_log.h) */
	bool det_set;               /* tcp_set_loss_detection, else cfg */
	enum tcp_loss_det det;
	/* RFC 8985 6.1, the most recently sent segment delivered. */
	bool xmit_valid;
	uint64_t xmit_ns;           /* RACK.xmit_ts */
	uint32_t end_seq;           /* RACK.end_seq */
	uint64_t rtt_ns;            /* RACK.rtt */
	/* The last send's time: sends of one instant (one engine poll reads
	 * the clock once) are recorded a nanosecond apart, in the order they
	 * went, as Linux's per-segment nanosecond stamps order them; the RFC's
	 * sequence-number tie-break would put a retransmission sent after new
	 * data before it. */
	uint64_t last_xmit_ns;
	bool min_rtt_valid;
	uint64_t min_rtt_ns, min_rtt_at; /* RACK.min_RTT, windowed as Linux's */
	bool fack_valid;
	uint32_t fack;              /* RACK.fack */
	bool reordering_seen;       /* RACK.reordering_seen */
	/* The reordering window's growth after D-SACK rounds (6.2 step 4). */
	bool dsack_round_valid;
	uint32_t dsack_round;       /* RACK.dsack_round */
	uint32_t reo_wnd_mult;      /* RACK.reo_wnd_mult; 0 reads as 1 */
	int32_t reo_wnd_persist;    /* RACK.reo_wnd_persist */
	/* Bytes of the log marked lost, and sent twice while not lost (pipe). */
	uint32_t lost_bytes, extra_bytes;
	/* Per connection, for tcp_conn_info. */
	uint64_t marked_lost, timer_fired, reo_wnd_grown, rec_entries;
};

#endif
