/* tcp/tlp.h: Tail Loss Probe (RFC 8985 section 7), its state inside the
 * loss-recovery module (struct tcp_loss in tcp/loss.h).
 *
 * A tail loss (the last segments of a flight lost) leaves no segment
 * behind it to draw the duplicate ACKs or SACKs fast recovery starts on,
 * so only the RTO would repair it.  TLP sends one probe a probe timeout
 * (PTO, about 2 SRTT) after the last transmission or ACK: new data if
 * there is some the peer's window takes, else the last segment again.
 * Its ACK draws out the SACKs that start fast recovery, or repairs a
 * single lost segment by itself; an ACK beyond the probe without a D-SACK
 * of it says a loss was repaired, and cwnd is reduced as a fast recovery
 * would have.
 *
 * Only tcp/tlp.c writes this struct (output.c records where the last new
 * segment started through tcp_tlp_sent_new).  RFC 8985 keeps some of what
 * TLP reads in RACK's state; what TLP needs of it is kept here, so that
 * TLP works with any loss detection.
 */
#ifndef US_TCP_TLP_H
#define US_TCP_TLP_H

#include <stdbool.h>
#include <stdint.h>

struct tcp_tlp {
	bool on_set, on;          /* tcp_set_tlp, else cfg.tlp */
	/* The last new segment sent starts here (it ends at SND.MAX): what a
	 * probe retransmits, RFC 8985 7.3's "most recently sent segment". */
	uint32_t last_seq;
	/* RFC 8985 7.3 condition 2: an RTT sample since the last probe (or
	 * the connection's start). */
	bool rtt_seen;
	/* The outstanding probe (RFC 8985 7.4's TLP.end_seq and is_retrans;
	 * the draft's TLPHighRxt and TLPRxtOut): SND.MAX after it, whether it
	 * was a retransmission of [rxt_lo, high), and the flight it was sent
	 * into (the congestion response's FlightSize). */
	bool out;
	bool rxt;
	uint32_t high, rxt_lo;
	uint32_t flight;
	/* Per connection, for tcp_conn_info. */
	uint64_t probes, repairs;
};

struct tcp_conn;
struct tcp_seg;
struct tcp_conn_info;

/* Prototypes */

/* output.c: new data left outside fast recovery (not a probe). */
void tcp_tlp_on_send(struct tcp_conn *c);
/* loss.c: every ACK, after recovery took it (tcp_loss_ack's arguments). */
void tcp_tlp_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t una0, uint32_t sacked0,
		 bool dup);
/* tcb_timers.c: the PTO fired; an RTT sample was taken. */
void tcp_tlp_expired(struct tcp_conn *c);
void tcp_tlp_on_rtt(struct tcp_conn *c);
/* loss.c: the RTO fired; tcp_conn_info's TLP fields. */
void tcp_tlp_on_rto(struct tcp_conn *c);
void tcp_tlp_info(const struct tcp_conn *c, struct tcp_conn_info *info);
/* output.c: the probe of new data, one segment at SND.NXT within the
 * peer's window, beyond cwnd, Nagle and SWS avoidance; false when none. */
bool tcp_output_probe_new(struct tcp_conn *c);

/* output.c: a new segment starting at seq went out. */
static inline void tcp_tlp_sent_new(struct tcp_tlp *p, uint32_t seq)
{
	p->last_seq = seq;
}

#endif
