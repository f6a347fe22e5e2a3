/* tcp/: the TCP engine's interface to the rest of userstack.
 *
 * tcp/ never touches a NIC and never reads a clock.  It takes segments
 * (tcp_input) and gives segments (env->output); time is the engine's timer
 * wheel's "now" (us_timer_now(env->wheel)), which the engine advances once per
 * loop iteration and tests advance in virtual time.  Timers (RTO, delayed ACK,
 * TIME_WAIT, ...) are armed on that same wheel.
 *
 * Buffer ownership: tcp_input consumes m (queues its payload or frees it).
 * env->output consumes the segment it is given.  Received payload stays in
 * mbufs on the connection's receive queue until the application reads it.
 *
 * The application side is callback-shaped and runs inline on the engine's
 * core; the socket room (stack/sock/) wraps it into the public userstack.h API.
 *
 * Addresses: both families travel as struct us_in6 (stack/base/in6.h), an
 * IPv4 address as ::ffff:a.b.c.d (us_in6_of_v4), so a 4-tuple is compared,
 * hashed and stored one way.  A connection's family is its remote
 * address's: v4-mapped means IPv4 on the wire.
 */
#ifndef US_TCP_H
#define US_TCP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stack/base/in6.h"
#include "stack/base/timer.h"
#include "tcp/recovery.h"
#include "tcp/tcp_config.h"

struct rte_mbuf;
struct rte_mempool;

/* Types */

struct tcp_stack;
struct tcp_conn;
struct tfo_keys;

/* Room the engine needs in front of a TCP header for IPv6 (or IPv4) and
 * Ethernet. */
#define TCP_HEADROOM_NEEDED 64

/* What a segment leaving tcp/ is addressed with (env.output). */
struct tcp_out_addr {
	struct us_in6 src, dst;
	uint32_t flow_label; /* IPv6 only (RFC 6437): the connection's, 20 bits */
	/* IPv4 only: DF clear, for a path reported below [tcp] min_pmtu (the
	 * routers may then fragment what is above its real MTU). */
	bool df_off;
	uint8_t tos, ttl;    /* IPv4 only: TOS byte; TTL, 0 for the stack's */
};

struct tcp_env {
	struct rte_mempool *pool;     /* mbufs for headers and copied-in send data */
	struct us_timer_wheel *wheel; /* the engine's wheel: timers and "now" */
	struct us_in6 local_ip;       /* IPv4 address, v4-mapped (::ffff:0.0.0.0: none) */
	struct us_in6 local_ip6;      /* IPv6 source of active opens (::: none) */
	/* IP MTU of the interface: MSS = mtu - 40 over IPv4, mtu - 60 over
	 * IPv6 (RFC 8200's fixed header is 20 bytes longer). */
	uint16_t mtu;
	/* Checksum offload: when true, output() fills the TCP checksum (or lets
	 * the NIC do it) and tcp/ leaves it zero; when false tcp/ computes it. */
	bool l4_csum_by_ip;
	/* Segmentation offload: the most payload one segment handed to output
	 * may carry; above the MSS such a segment is marked RTE_MBUF_F_TX_TCP_SEG
	 * with tso_segsz = MSS, its checksum left to whoever cuts it.  0 (or
	 * anything <= MSS): every segment is at most one MSS. */
	uint32_t gso_max;
	/* Hands one segment to IP (the family of a->dst).  m's data starts at
	 * the TCP header and has at least TCP_HEADROOM_NEEDED bytes of
	 * headroom.  Consumes m. */
	void (*output)(void *ctx, struct rte_mbuf *m, const struct tcp_out_addr *a);
	void *ctx;
	/* Optional (NULL = any port): may an active open from lip to rip:rport
	 * use the local port lport?  With several engines, only ports whose
	 * RSS hash brings the replies to this engine's queue
	 * (stack/engine/handoff.h). */
	bool (*port_ok)(void *ctx, const struct us_in6 *lip, const struct us_in6 *rip,
			uint16_t rport, uint16_t lport);
	/* Optional: a connection TCB entered (open true) or left the 4-tuple
	 * table; flow steering installs and removes its rule
	 * (stack/engine/flowrule.h).  Must not call back into tcp/. */
	void (*conn_event)(void *ctx, const struct us_in6 *lip, uint16_t lport,
			   const struct us_in6 *rip, uint16_t rport, bool open);
	/* Optional (NULL: the interface MTU): the path MTU to dst as the
	 * network layer knows it now (IPv6's Packet Too Big cache, RFC 8201),
	 * which caps a new connection's MSS. */
	uint32_t (*path_mtu)(void *ctx, const struct us_in6 *dst);
	/* Optional: RFC 9293 3.8.3 (MUST-20) negative advice, R1 reached: a
	 * connection to dst retransmitted R1 times without an answer, so the
	 * network layer should doubt its way there (re-resolve the next
	 * hop's link address).  Must not call back into tcp/. */
	void (*negative_advice)(void *ctx, const struct us_in6 *dst);
	/* Optional: the Fast Open server secret rotated on this stack (the
	 * writer, see tcp_tfo_follow); the engine publishes it to the others.
	 * Must not call back into tcp/. */
	void (*tfo_keys_rotated)(void *ctx, const struct tfo_keys *k);
};

/* Callbacks from the engine to the application.  ctx is the listener's ctx
 * until on_accept sets a per-connection one with tcp_conn_set_ctx(). */
struct tcp_callbacks {
	/* A passive connection reached ESTABLISHED. */
	void (*on_accept)(void *listen_ctx, struct tcp_conn *c);
	/* In-order data or the peer's FIN is readable. */
	void (*on_readable)(void *ctx, struct tcp_conn *c);
	/* Send-buffer space became available after tcp_send returned -EAGAIN. */
	void (*on_writable)(void *ctx, struct tcp_conn *c);
	/* The connection is gone for the application (closed by both sides,
	 * reset or timed out; err is 0 or a positive errno).  c is invalid after
	 * this returns (the TCB may live on in TIME_WAIT, unreachable). */
	void (*on_closed)(void *ctx, struct tcp_conn *c, int err);
	/* Optional (may be NULL): an active open (tcp_connect) reached
	 * ESTABLISHED.  A failed open reports on_closed(ECONNREFUSED/ETIMEDOUT). */
	void (*on_connected)(void *ctx, struct tcp_conn *c);
};

/* Counters: every drop has its own name.  X(name, description) */
#define TCP_COUNTERS(X) \
	X(rx_segs, "segments received") \
	X(tx_segs, "segments sent") \
	X(rx_bytes, "payload bytes received in order") \
	X(tx_bytes, "payload bytes sent (incl. retransmits)") \
	X(retrans_segs, "segments retransmitted") \
	X(rto_fired, "retransmission timeouts") \
	X(active_opens, "connections opened actively") \
	X(passive_opens, "connections accepted") \
	X(resets_sent, "RST segments sent") \
	X(resets_rcvd, "RST segments accepted") \
	X(drop_bad_csum, "dropped: bad TCP checksum") \
	X(drop_short, "dropped: truncated TCP header") \
	X(drop_bad_offset, "dropped: data offset out of range") \
	X(drop_no_conn, "dropped: no connection or listener (RST sent)") \
	X(drop_unacceptable, "dropped: failed the acceptability test") \
	X(drop_backlog_full, "dropped: listener backlog full") \
	X(drop_no_tcb, "dropped: TCB limit reached") \
	X(drop_no_mbuf, "dropped: mbuf pool empty") \
	X(drop_rcvbuf_full, "dropped: receive buffer full") \
	X(rcvbuf_grown, "receive buffers grown by autotuning ([tcp] rcvbuf_max)") \
	X(drop_bad_flags, "dropped: invalid flag combination") \
	X(drop_group_addr, "dropped: to or from a broadcast or multicast address (RFC 9293 3.9.2.3)") \
	X(connect_group_refused, "connects refused: to a broadcast or multicast address (ENETUNREACH)") \
	X(urg_sent, "urgent sends (MSG_OOB): SND.UP set, RFC 9293 3.8.5") \
	X(urg_rcvd, "urgent pointers taken from the peer (RCV.UP moved)") \
	X(urg_ignored_old, "urgent pointers ignored: not beyond RCV.NXT or the current one") \
	X(urg_pulled, "urgent bytes taken out of the stream for recv(MSG_OOB)") \
	X(urg_inline_no_mbuf, "urgent bytes left in the stream: no mbuf to split the queue") \
	X(drop_out_of_order, "dropped: out-of-order segment (no queue yet)") \
	X(conns_timed_out, "connections aborted by retransmission timeout") \
	X(drop_split_header, "dropped: TCP header not within the first mbuf segment") \
	X(drop_rst_no_conn, "dropped: RST for no connection (no reply, RFC 9293 3.10.7.1)") \
	X(drop_listen_bad, "dropped: segment to a listener that is no SYN (RST sent if ACK)") \
	X(drop_syn_sent_bad, "dropped: unacceptable segment in SYN-SENT") \
	X(drop_no_ack, "dropped: no ACK bit in a synchronized state") \
	X(drop_bad_ack, "dropped: ACK for data never sent") \
	X(drop_after_close, "dropped: data after the application closed (RST sent)") \
	X(drop_syn_in_window, "dropped: SYN in a synchronized state (challenge ACK)") \
	X(drop_rst_challenged, "dropped: in-window RST not at RCV.NXT (challenge ACK, RFC 5961)") \
	X(challenge_acks, "challenge ACKs sent (RFC 5961)") \
	X(delayed_acks, "ACKs sent by the delayed-ACK timer") \
	X(dup_syn_rcvd, "duplicate SYN in SYN-RECEIVED (SYN-ACK sent again)") \
	X(drop_window_trimmed, "segments with payload cut beyond the receive window") \
	X(embryos_timed_out, "SYN-RECEIVED connections dropped after synack_retries") \
	X(wscale_clamped, "peer window scale shifts above 14 clamped (RFC 7323 2.3)") \
	X(opt_malformed, "segments whose option parsing stopped at a bad length") \
	X(drop_paws, "dropped: PAWS, timestamp older than TS.Recent (dup ACK sent)") \
	X(drop_no_ts, "dropped: no timestamp option after negotiation (RFC 7323 3.2)") \
	X(ooo_queued, "out-of-order segments queued") \
	X(drop_ooo_mem, "dropped: out-of-order queue over its memory bound") \
	X(drop_ooo_dup, "dropped: out-of-order data already queued (D-SACK)") \
	X(drop_dup_data, "duplicate data below RCV.NXT (D-SACK)") \
	X(ts_rtt_samples, "RTT samples taken from TSecr (RFC 7323 4.1)") \
	X(persist_probes, "zero-window probes sent (RFC 9293 3.8.6.1)") \
	X(persist_timeouts, "connections aborted: zero-window probes never answered") \
	X(keepalive_probes, "keepalive probes sent (RFC 9293 3.8.4)") \
	X(keepalive_timeouts, "connections aborted: keepalive probes unanswered") \
	X(sws_overrides, "segments sent by the SWS override timer") \
	X(dsack_rcvd, "D-SACK blocks received (RFC 2883), counted, not merged") \
	X(sack_invalid, "SACK blocks ignored: outside [SND.UNA, SND.MAX]") \
	X(sack_overflow, "SACK scoreboard ranges forgotten: array full") \
	X(sack_reneged, "scoreboards cleared: SND.UNA reached SACKed data (RFC 2018 8)") \
	X(sack_rto_cleared, "scoreboards cleared after an RTO (RFC 2018 5)") \
	X(dup_acks, "duplicate ACKs (RFC 5681 2, and RFC 6675 2 with SACK)") \
	X(dup_acks_sack, "of which only by RFC 6675 2 (new SACK info, window moved)") \
	X(limited_transmits, "new segments sent on dup ACKs 1 and 2 (RFC 3042)") \
	X(fast_retransmits, "retransmissions on the 3rd dup ACK (RFC 5681 3.2)") \
	X(fast_retransmit_suppressed, "3rd dup ACKs not above recover (RFC 6582 3.2 step 2)") \
	X(recovery_episodes, "fast recovery episodes entered") \
	X(partial_acks, "partial ACKs in recovery (SND.UNA moved, still below recover)") \
	X(recovery_exits, "ACKs ending recovery (SND.UNA >= recover), cwnd = tcp_rec_exit()") \
	X(recovery_rto, "recovery episodes ended by an RTO") \
	X(recovery_dropped, "recovery episodes ended by the connection's end (reset, abort, give-up)") \
	X(cc_rto_reductions, "ssthresh lowered by an RTO (RFC 5681 3.1, RFC 9438 4.8)") \
	X(cc_ss_exits, "slow start ended (cwnd reached ssthresh)") \
	X(cc_cubic_epochs, "CUBIC congestion-avoidance epochs started (RFC 9438 4.2)") \
	X(cc_cubic_friendly_acks, "CUBIC ACKs in the Reno-friendly region (RFC 9438 4.3)") \
	X(cc_cubic_fast_convergence, "CUBIC W_max reduced by fast convergence (RFC 9438 4.7)") \
	X(syncookies_sent, "SYN-ACKs with a SYN cookie (listener backlog full)") \
	X(syncookies_ok, "connections made from a valid SYN cookie") \
	X(syncookies_failed, "ACKs to a listener with a bad or expired SYN cookie (RST sent)") \
	X(timewait_reused, "TIME-WAIT ended by a new SYN (RFC 6191)") \
	X(timewait_syn_refused, "SYNs in TIME-WAIT not allowed to reopen (ACK/ignore)") \
	X(challenge_acks_suppressed, "challenge ACKs not sent: rate limit (RFC 5961 7)") \
	X(drop_ack_too_old, "dropped: ACK below SND.UNA - MAX.SND.WND (RFC 5961 5.2)") \
	X(icmp_ignored_no_conn, "ICMP errors quoting a segment of no connection") \
	X(icmp_ignored_out_of_window, "ICMP errors ignored: quoted sequence not in flight (RFC 5927)") \
	X(icmp_frag_needed_applied, "ICMP fragmentation-needed errors that lowered the MSS") \
	X(pmtu_resends, "flights resent at once after frag-needed lowered the MSS (RFC 1191)") \
	X(pmtu_df_cleared, "IPv4 connections sending without DF: frag-needed reported an MTU below [tcp] min_pmtu") \
	X(pmtu_followed, "MSS lowered to a path MTU the network layer learned since (a too big about another flow to the peer)") \
	X(icmp_soft_errors, "ICMP soft errors: kept for the application, never abort (RFC 1122 4.2.3.9)") \
	X(negative_advice, "RTOs at or past R1 (3 retransmissions): the network layer told (RFC 9293 3.8.3)") \
	X(soft_err_reported, "timeouts reported with the last soft ICMP error, not ETIMEDOUT") \
	X(icmp_hard_errors, "ICMP protocol/port unreachable aborting a SYN-SENT connection") \
	X(rec_enter_lost, "recoveries entered by RFC 6675 IsLost(SND.UNA) before 3 dup ACKs") \
	X(rec_rxt_lost, "recovery retransmissions of lost holes (RFC 6675 NextSeg rule 1)") \
	X(rec_new_data, "new segments sent during recovery (NextSeg rule 2)") \
	X(rec_rxt_unsacked, "recovery retransmissions of unSACKed holes (NextSeg rule 3)") \
	X(rec_rescue, "rescue retransmissions (NextSeg rule 4)") \
	X(rec_budget_unused, "recovery send passes with budget left and nothing to send") \
	X(spurious_recoveries, "recoveries whose every retransmission was D-SACKed (RFC 2883)") \
	X(tlp_probes, "Tail Loss Probes sent when the PTO fired (RFC 8985 7.3)") \
	X(tlp_probes_new_data, "of which new data (the others resent the last segment)") \
	X(tlp_skipped, "PTOs fired without a probe: one outstanding or no RTT sample since (RFC 8985 7.3)") \
	X(tlp_rto_nearer, "PTOs at the RTO's time: the probe goes instead of the RTO (RFC 8985 7.2, as Linux)") \
	X(tlp_repairs, "losses a probe repaired: cwnd reduced as by fast recovery (RFC 8985 7.4)") \
	X(tlp_no_loss, "probes found needless: D-SACKed or duplicate-ACKed (RFC 8985 7.4)") \
	X(undo_dsack_recovery, "fast recoveries undone: every retransmission D-SACKed (RFC 3708)") \
	X(undo_ts_recovery, "fast recoveries undone: TSecr older than the fast retransmit (RFC 3522)") \
	X(undo_ts_rto, "RTOs undone: TSecr older than the retransmission (RFC 3522, RFC 4015)") \
	X(undo_dsack_rto, "RTOs undone: every retransmission after it D-SACKed (RFC 3708)") \
	X(undo_ts_inconclusive, "fast recoveries whose first retransmission was needless by TSecr, others not known") \
	X(recovery_undone, "recovery episodes ended by an undo (the reduction was spurious)") \
	X(rec_enter_rack, "recoveries entered by RACK's loss marks (RFC 8985), whatever the dup ACKs") \
	X(rack_marked_lost, "segments RACK marked lost (RFC 8985 6.2 step 5), in SMSS rounded up") \
	X(rack_timer_fired, "RACK reordering timer expirations (RFC 8985 6.2 step 6)") \
	X(rack_reo_wnd_grown, "RACK reordering windows grown by a D-SACK round (RFC 8985 6.2 step 4)") \
	X(rack_reordering_seen, "connections on which RACK first saw reordering (RFC 8985 6.2 step 3)") \
	X(rack_log_full, "sends or splits the RACK sent-segment log could not record: full") \
	X(mss_clamped_min, "peer MSS options below 48 raised to 48 (like Linux tcp_min_snd_mss)") \
	X(rst_closed_ratelimited, "RSTs for closed ports not sent: rate limit (rst_closed_limit)") \
	X(exit_resets, "connections reset at shutdown: their close had not finished (us_fini)") \
	X(closed_in_syn_sent, "connections closed by the application in SYN-SENT (TCB deleted)") \
	X(acks_held, "ACKs held for the application's next segment (quick ACK off)") \
	X(acks_quick, "data ACKed at once in quick-ACK mode (profile linux)") \
	X(tx_gso_segs, "segments of several MSS handed to the port to cut (segmentation offload)") \
	X(rx_coalesced_segs, "segments received coalesced by the port (several MSS in one)") \
	X(acks_in_coalesced, "ACKs sent inside coalesced segments (one per 2 full-sized ones)") \
	X(defer_accept_dropped, "handshake ACKs without data dropped: listener defers (TCP_DEFER_ACCEPT)") \
	X(fin_wait2_dropped, "closed connections dropped in FIN-WAIT-2: TCP_LINGER2 < 0") \
	X(user_timeouts, "connections aborted by their TCP_USER_TIMEOUT")

struct tcp_stats {
#define TCP_X_FIELD(name, desc) uint64_t name;
	TCP_COUNTERS(TCP_X_FIELD)
#undef TCP_X_FIELD
};

/* Gauges: the TCBs in each RFC 9293 3.3.2 state now.  tcp/ moves them
 * where a TCB enters or leaves its stack's tables (tcp/table.c: creation,
 * migration, every end) and where it changes state (tcb_set_state), so a
 * read is a copy, not a walk; tcp_state_gauges_check recounts.  Listeners
 * are counted under LISTEN only (tcp_conn_count leaves them out).  A
 * SYN-cookie handshake has no TCB until its ACK; a Fast Open child accepted
 * at its SYN stays under SYN-RECEIVED until the handshake's ACK.  CLOSED
 * has no gauge: a TCB leaves the tables as it closes.
 * X(name, STATE, description), STATE naming enum tcp_state (tcp/tcb.h);
 * printed and looked up as "tcbs_<name>". */
#define TCP_STATE_GAUGES(X) \
	X(listen, LISTEN, "listeners now (gauge)") \
	X(syn_sent, SYN_SENT, "TCBs in SYN-SENT now: awaiting the SYN-ACK (gauge)") \
	X(syn_received, SYN_RECEIVED, "TCBs in SYN-RECEIVED now: embryos, Fast Open children (gauge)") \
	X(established, ESTABLISHED, "TCBs in ESTABLISHED now (gauge)") \
	X(fin_wait_1, FIN_WAIT_1, "TCBs in FIN-WAIT-1 now: our FIN not yet ACKed (gauge)") \
	X(fin_wait_2, FIN_WAIT_2, "TCBs in FIN-WAIT-2 now: awaiting the peer's FIN (gauge)") \
	X(close_wait, CLOSE_WAIT, "TCBs in CLOSE-WAIT now: the application not closed (gauge)") \
	X(closing, CLOSING, "TCBs in CLOSING now: FINs crossed, ours not yet ACKed (gauge)") \
	X(last_ack, LAST_ACK, "TCBs in LAST-ACK now: our FIN not yet ACKed (gauge)") \
	X(time_wait, TIME_WAIT, "TCBs in TIME-WAIT now (gauge)")

struct tcp_state_gauges {
#define TCP_X_GAUGE_FIELD(name, state, desc) uint32_t name;
	TCP_STATE_GAUGES(TCP_X_GAUGE_FIELD)
#undef TCP_X_GAUGE_FIELD
};

/* A tcp_info-like snapshot of one connection. */
struct tcp_conn_info {
	uint8_t state;           /* enum tcp_state in tcp/tcb.h */
	uint32_t snd_una, snd_nxt, rcv_nxt;
	uint32_t snd_wnd, rcv_wnd;
	uint32_t rcvbuf;         /* receive buffer now (autotuned, [tcp] rcvbuf_max) */
	uint32_t mss;
	uint32_t cwnd, ssthresh; /* bytes */
	uint32_t srtt_us, rttvar_us, rto_ms;
	uint32_t retransmits;
	uint64_t bytes_acked, bytes_received;
	uint32_t backoff;        /* consecutive RTO expirations (RFC 6298 5.5) */
	uint32_t probes;         /* unanswered persist or keepalive probes */
	uint64_t persist_probes, keepalive_probes;
	bool nodelay, keepalive;
	/* Sender-side SACK scoreboard (RFC 6675; tcp/scoreboard.c), bytes.
	 * sacked: above SND.UNA, SACKed by the peer and not yet cumulatively
	 * ACKed (still held for retransmission: the peer may renege).
	 * lost: in the holes below the highest SACKed byte that RFC 6675
	 * IsLost() declares lost (DupThresh 3).  Both 0 without SACK and right
	 * after an RTO (the scoreboard is cleared, RFC 2018 5). */
	uint32_t sacked, lost;
	/* Bytes per second newly delivered (cumulatively ACKed plus newly
	 * SACKed) between two ACKs at least max(SRTT, 1 ms) apart; the last
	 * completed interval; 0 until one completes. */
	uint64_t delivery_rate;
	/* Congestion control (tcp/cc.h): the algorithm (enum tcp_cc_alg),
	 * whether fast recovery is on (cwnd is then the recovery algorithm's
	 * window), and this connection's loss-recovery events. */
	uint8_t cc;
	bool in_recovery;
	uint64_t fast_retransmits, recovery_episodes, partial_acks;
	/* RFC 7413 (like Linux TCPI_OPT_SYN_DATA): data in the SYN was
	 * acknowledged by the SYN-ACK (client) or accepted (server). */
	bool syn_data_acked;
	/* Loss recovery (tcp/recovery.h): the algorithm (enum tcp_rec_alg),
	 * retransmission timeouts, and episodes found spurious by D-SACK.
	 * During recovery cwnd is the algorithm's (PRR: pipe + sndcnt). */
	uint8_t recovery;
	uint64_t rtos, spurious_recoveries;
	/* Tail Loss Probe (RFC 8985 7; tcp/tlp.c): on for this connection,
	 * probes sent, losses they repaired. */
	bool tlp;
	uint64_t tlp_probes, tlp_repairs;
	/* Undo of spurious reductions (tcp/undo.h): whether it is on, and
	 * the reductions undone, by kind. */
	bool undo;
	uint64_t undo_dsack_recovery, undo_ts_recovery, undo_ts_rto, undo_dsack_rto;
	/* What starts recovery (enum tcp_loss_det; rack only with SACK) and
	 * RFC 8985 RACK's view: segments it marked lost (in SMSS), reordering
	 * timer expirations, recoveries it started, whether it saw reordering,
	 * the reordering window's multiplier (grown by D-SACK rounds) and
	 * RACK.min_RTT. */
	uint8_t loss_detection;
	uint64_t rack_marked_lost, rack_timer_fired, rack_rec_entries;
	bool rack_reordering_seen;
	uint32_t rack_reo_wnd_mult, rack_min_rtt_us;
	/* For Linux's struct tcp_info (stack/sock/socket_tcpinfo.c). */
	uint8_t ca_state;        /* Linux's TCP_CA_*: 0 Open, 1 Disorder, 3 Recovery, 4 Loss */
	uint32_t retries;        /* RTOs in a row (Linux's icsk_retransmits) */
	bool ts_ok, sack_ok, ws_ok;
	uint8_t snd_wscale, rcv_wscale;
	uint32_t rcv_mss;        /* estimate of the peer's full segment */
	uint32_t adv_mss;        /* our MSS option less the timestamps' room */
	uint32_t pmtu, ato_us;   /* path MTU; delayed-ACK time */
	uint32_t in_flight;      /* SND.MAX - SND.UNA, bytes */
	uint32_t unsent;         /* queued, never sent */
	uint32_t retrans_out;    /* being resent after an RTO (go-back-N), bytes */
	uint64_t now_ns, last_data_sent_ns, last_data_rcvd_ns, last_heard_ns; /* 0: never */
	uint32_t min_rtt_us;     /* smallest RTT sample (0: none) */
	uint64_t bytes_sent, bytes_retrans; /* payload sent, and resent, bytes */
	uint32_t rcv_ooopack;    /* segments received out of order */
	uint64_t busy_ns, rwnd_limited_ns, sndbuf_limited_ns; /* Linux's chronographs */
	/* RFC 9293 3.9.1.8: soft ICMP errors about this connection, and the
	 * last one's errno while it stands (0: none, or data got through). */
	uint32_t soft_errors;
	int soft_err;
};

/* Per-connection settings of the application (the socket options of
 * us_socket.h; tcp/tcb_opts.c).  0 in a field means the stack's [tcp]
 * value.  A listener's are its connections' from their SYN on. */
struct tcp_conn_opts {
	uint32_t user_mss;        /* TCP_MAXSEG: caps our MSS option and the send MSS */
	uint32_t syn_retries;     /* TCP_SYNCNT: SYN (SYN-ACK) retransmissions */
	uint32_t user_timeout_ms; /* TCP_USER_TIMEOUT: data unacknowledged this long aborts */
	uint32_t keepidle_ms, keepintvl_ms, keepcnt; /* TCP_KEEPIDLE/KEEPINTVL/KEEPCNT */
	/* TCP_LINGER2: how long a closed connection waits in FIN-WAIT-2 for
	 * the peer's FIN; -1: not at all (an RST at close, as Linux). */
	int32_t fin_wait2_ms;
	/* SO_RCVBUF / SO_SNDBUF: this connection's buffers; a receive buffer
	 * set here is not autotuned. */
	uint32_t rcvbuf, sndbuf;
	/* TCP_NOTSENT_LOWAT: writable only while fewer bytes than this wait
	 * unsent (0: no such bound). */
	uint32_t notsent_lowat;
	uint8_t tos, ttl;         /* IP_TOS, IP_TTL of IPv4 segments (ttl 0: the stack's) */
	bool oobinline;           /* SO_OOBINLINE: the urgent byte stays in the stream */
	bool cork;                /* TCP_CORK: partial segments wait (200 ms at most) */
	bool cc_set;              /* TCP_CONGESTION: cc below, else cfg.cc */
	enum tcp_cc_alg cc;
	/* TCP_DEFER_ACCEPT (listener): a handshake's ACK without data is
	 * dropped until the SYN-ACK was sent this many times again. */
	uint32_t defer_accept_rtx;
};

/* Prototypes: engine side */

/* NULL on failure (errno set). */
struct tcp_stack *tcp_stack_create(const struct tcp_env *env, const struct tcp_config *cfg);
/* Frees every connection, listener, queued mbuf and timer. */
void tcp_stack_destroy(struct tcp_stack *ts);
/* m's data starts at the TCP header; src and dst are its IP header's
 * addresses (IPv4 ones v4-mapped).  Consumes m. */
void tcp_input(struct tcp_stack *ts, struct rte_mbuf *m, const struct us_in6 *src,
	       const struct us_in6 *dst);
/* What an ICMP or ICMPv6 error says to TCP, as the network layer sorted it. */
enum tcp_icmp_kind {
	TCP_ICMP_SOFT,     /* unreachable, time exceeded, parameter problem: never aborts */
	TCP_ICMP_HARD,     /* protocol/port unreachable: aborts a SYN-SENT */
	TCP_ICMP_TOO_BIG,  /* fragmentation needed / Packet Too Big: mtu is the path's */
};
/* An ICMP error quoting a segment we sent: qsrc and qdst are the quoted
 * header's addresses (ours and the peer's), l4 the quoted TCP bytes (at
 * least 8).  The quoted sequence number must be in flight (RFC 5927).
 * err: the errno it means (Linux's icmp_err_convert; 0: EHOSTUNREACH),
 * which a soft error leaves for the application (RFC 9293 3.9.1.8).
 * True if it was: the error is about a live connection of ours. */
bool tcp_icmp_error(struct tcp_stack *ts, enum tcp_icmp_kind kind, int err, uint32_t mtu,
		    const struct us_in6 *qsrc, const struct us_in6 *qdst, const void *quoted_l4,
		    size_t quoted_len);
const struct tcp_stats *tcp_stack_stats(const struct tcp_stack *ts);
/* The state gauges now (a copy of what tcp/ keeps: no walk). */
void tcp_stack_state_gauges(const struct tcp_stack *ts, struct tcp_state_gauges *out);
/* Recounts the TCBs of every state by walking the tables (engine core;
 * one pass over the table) and compares with the gauges and tcp_conn_count:
 * 0, or -EINVAL with the first difference written to why (when not NULL),
 * e.g. "tcbs_fin_wait_1: gauge 2, table 1".  For tests and simulators. */
int tcp_state_gauges_check(const struct tcp_stack *ts, char *why, size_t len);
/* Live TCBs (every state, TIME_WAIT included): leak checks and stats.
 * Listeners are not counted (they are not connections). */
unsigned tcp_conn_count(const struct tcp_stack *ts);
/* Shutdown: RST to every synchronized connection short of TIME_WAIT, then
 * its TCB goes; the count. */
unsigned tcp_reset_unfinished(struct tcp_stack *ts);
/* When the application last closed a connection in SYN-SENT after its SYN
 * went out (0: never): until its SYN-ACK is answered with an RST, the peer
 * may hold a half-open connection. */
uint64_t tcp_syn_sent_closed_ns(const struct tcp_stack *ts);

/* Prototypes: application side (all return 0/count or -errno) */

/* A listener on local_ip:port.  local_ip is one of ours, ::ffff:0.0.0.0
 * (every IPv4 address) or :: (every address of both families; IPv6 only
 * with TCP_LISTEN_V6ONLY, like IPV6_V6ONLY).  A segment goes to the
 * listener on its exact address before a wildcard one. */
#define TCP_LISTEN_V6ONLY 0x1u
int tcp_listen(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port,
	       unsigned flags, const struct tcp_callbacks *cb, void *ctx);
/* The ctx of the listener on exactly local_ip:port from now on, its
 * embryos' too: 0 or -ENOENT. */
int tcp_listener_set_ctx(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port,
			 void *ctx);
/* Drops every listener on port. */
int tcp_unlisten(struct tcp_stack *ts, uint16_t port);
/* Drops the listener on exactly local_ip:port (the one tcp_listen made). */
int tcp_unlisten_addr(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port);
/* Every listener (shutdown: nothing new is accepted while closes drain). */
void tcp_unlisten_all(struct tcp_stack *ts);
/* The source address an active open to dst_ip takes: env.local_ip or
 * env.local_ip6 by dst_ip's family; -EADDRNOTAVAIL when that family has no
 * address. */
int tcp_connect_src(const struct tcp_stack *ts, const struct us_in6 *dst_ip, struct us_in6 *src);
/* From tcp_connect_src's address and an ephemeral port. */
int tcp_connect(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
		const struct tcp_callbacks *cb, void *ctx, struct tcp_conn **out);
/* RFC 7413: tcp_connect with len bytes queued before the SYN goes out
 * (like sendto(MSG_FASTOPEN)).  With TCP_CONNECT_FASTOPEN (or the config's
 * client bit) the SYN carries a cached cookie and as much of the data as
 * the server takes, or asks for a cookie; the rest follows the handshake.
 * Returns bytes queued (<= len, the send buffer) or -errno. */
#define TCP_CONNECT_FASTOPEN 0x1u
/* Queue only what the SYN carries (0 without a cookie): Linux's answer to
 * a non-blocking sendto(MSG_FASTOPEN), the application sends the rest. */
#define TCP_CONNECT_SYN_ONLY 0x2u
ssize_t tcp_connect_data(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
			 const void *data, size_t len, unsigned flags,
			 const struct tcp_conn_opts *o, const struct tcp_callbacks *cb, void *ctx,
			 struct tcp_conn **out);
/* RFC 7413 5.1: Fast Open on every listener on port, at most qlen
 * pending Fast Open connections each; qlen 0 turns it off. */
int tcp_set_fastopen(struct tcp_stack *ts, uint16_t port, uint32_t qlen);
/* RFC 7413 4.1.3: true when a Fast Open connect to dst_ip would put data
 * in its SYN now (a cookie cached, the server not marked unfriendly). */
bool tcp_fastopen_cookie_ready(struct tcp_stack *ts, const struct us_in6 *dst_ip);
/* Fast Open counters (tcp/fastopen.h TFO_COUNTERS). */
struct tfo_counters;
const struct tfo_counters *tcp_stack_tfo_stats(const struct tcp_stack *ts);
/* RFC 7413 4.1.2 with several engines: one server secret per stack (a
 * cookie made by one engine is valid on every other).  One engine is the
 * writer: it draws and rotates the secret, and tfo_keys_rotated reports
 * each new one; the others follow (no rotation timer of their own) and take
 * what the writer published with tcp_tfo_keys_set.  Read the current set
 * with tcp_tfo_keys_get. */
void tcp_tfo_follow(struct tcp_stack *ts);
void tcp_tfo_keys_get(const struct tcp_stack *ts, struct tfo_keys *out);
void tcp_tfo_keys_set(struct tcp_stack *ts, const struct tfo_keys *k);
void tcp_conn_set_ctx(struct tcp_conn *c, void *ctx);
/* Copies up to len bytes out; 0 at end of stream; -EAGAIN when nothing is there. */
ssize_t tcp_recv(struct tcp_conn *c, void *buf, size_t len);
/* Copies into the send queue; bytes taken, or -EAGAIN (full), -EPIPE, -ENOTCONN. */
ssize_t tcp_send(struct tcp_conn *c, const void *buf, size_t len);
/* MSG_OOB (tcp/urgent.c): tcp_send whose last byte is urgent data
 * (RFC 9293 3.8.5); pushed at once, Nagle aside. */
ssize_t tcp_send_oob(struct tcp_conn *c, const void *buf, size_t len);
/* recv(MSG_OOB) as Linux's: 1 and the urgent byte (0 with len 0), -EINVAL
 * when there is none, it was read or SO_OOBINLINE is on, -EAGAIN when the
 * pointer came but not its byte, 0 at the end of the stream; peek leaves
 * it unread. */
ssize_t tcp_recv_urg(struct tcp_conn *c, void *buf, size_t len, bool peek);
/* SIOCATMARK: the next read starts at the urgent byte's place. */
bool tcp_urg_at_mark(const struct tcp_conn *c);
/* EPOLLPRI: an urgent byte waits to be read. */
bool tcp_urg_waiting(const struct tcp_conn *c);
/* Free space in the send queue, in bytes. */
size_t tcp_send_space(const struct tcp_conn *c);
int tcp_shutdown_write(struct tcp_conn *c);
/* Graceful close (FIN after queued data); the app must not use c afterwards.
 * on_closed is NOT called for a connection the app closed itself. */
int tcp_close(struct tcp_conn *c);
/* Abortive close (RST, like SO_LINGER 0). Same rule as tcp_close for c. */
int tcp_abort(struct tcp_conn *c);
void tcp_conn_get_info(const struct tcp_conn *c, struct tcp_conn_info *info);
/* Peer address (v4-mapped for IPv4) and port. */
void tcp_conn_peer(const struct tcp_conn *c, struct us_in6 *ip, uint16_t *port);
/* RFC 9293 3.7.4 (MUST-17): Nagle off (true) or on for this connection. */
int tcp_set_nodelay(struct tcp_conn *c, bool on);
/* RFC 9293 3.8.4: keepalive probes on this connection (off by default). */
int tcp_set_keepalive(struct tcp_conn *c, bool on);
/* Quick ACK on (true, the default) or off: off, the ACK completing an
 * active open and the ACK of the peer's FIN wait until the next engine
 * iteration for the application's request or close to carry them, like
 * Linux's TCP_QUICKACK 0 (pingpong mode).  RFC 9293 3.8.6.3 allows it. */
int tcp_set_quickack(struct tcp_conn *c, bool on);
/* The application's settings for c (tcp_conn_opts): applied at once
 * (keepalive timing re-armed, an uncorked or roomier connection sent on,
 * a larger receive buffer announced).  -EINVAL for an unknown cc. */
int tcp_conn_set_opts(struct tcp_conn *c, const struct tcp_conn_opts *o);
/* c's settings now. */
void tcp_conn_get_opts(const struct tcp_conn *c, struct tcp_conn_opts *o);
/* The same for the listener on exactly local_ip:port (its connections
 * take them from their SYN on): 0 or -ENOENT. */
int tcp_listener_set_opts(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port,
			  const struct tcp_conn_opts *o);
/* tcp_connect with settings from the SYN on (o may be NULL). */
int tcp_connect_opts(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
		     const struct tcp_conn_opts *o, const struct tcp_callbacks *cb, void *ctx,
		     struct tcp_conn **out);
/* MSG_MORE: the data of the next tcp_send is held like TCP_CORK's until
 * a send without it (or 200 ms). */
void tcp_send_more(struct tcp_conn *c, bool more);
/* Fast recovery algorithm for this connection (tcp/recovery.h); takes effect
 * at the next episode.  -EINVAL for an unknown algorithm. */
int tcp_set_recovery(struct tcp_conn *c, enum tcp_rec_alg alg);
/* Tail Loss Probe (RFC 8985 7) on or off for this connection, whatever
 * [tcp] tlp says; off stops a pending probe timeout. */
int tcp_set_tlp(struct tcp_conn *c, bool on);
/* Undo of spurious window reductions for this connection (tcp/undo.h), on
 * or off whatever [tcp] undo says; takes effect at the next reduction. */
int tcp_set_undo(struct tcp_conn *c, bool on);
/* What starts fast recovery on this connection (tcp/rack.c): duplicate
 * ACKs, or RFC 8985 RACK when SACK was negotiated.  -EINVAL for an unknown
 * kind. */
int tcp_set_loss_detection(struct tcp_conn *c, enum tcp_loss_det det);

/* Prototypes: operations tooling (tcp/walk.c), engine core only */

/* A connection's 4-tuple (IPv4 v4-mapped), state and queue occupancy. */
struct tcp_conn_addrs {
	struct us_in6 local_ip, remote_ip;
	uint16_t local_port, remote_port;
	uint8_t state;           /* as tcp_conn_info.state */
	bool listener;           /* a listening socket, not a connection */
	uint32_t sndq_bytes;     /* queued, sent or not, not yet ACKed */
	uint32_t rcvq_bytes;     /* received in order, not yet read */
};
/* Return non-zero to stop the walk. */
typedef int (*tcp_walk_fn)(void *arg, const struct tcp_conn *c);
/* Calls fn for every listener, then every connection TCB (TIME_WAIT
 * included); returns how many were visited.  fn must not change the table. */
unsigned tcp_conn_walk(const struct tcp_stack *ts, tcp_walk_fn fn, void *arg);
void tcp_conn_addrs(const struct tcp_conn *c, struct tcp_conn_addrs *a);
/* "ESTABLISHED", "TIME-WAIT", ... for tcp_conn_info.state. */
const char *tcp_state_str(uint8_t state);
/* ESTABLISHED or CLOSE-WAIT (RFC 4022 tcpCurrEstab). */
bool tcp_state_is_current_estab(uint8_t state);

/* Prototypes: socket-layer views (tcp/socket_calls.c) */

/* What a poll() of the connection would look at. */
struct tcp_conn_status {
	uint32_t readable;   /* bytes in the receive queue */
	size_t send_space;   /* tcp_send_space() */
	/* Queued bytes not yet sent, and not yet acknowledged (Linux's
	 * SIOCOUTQNSD, SIOCOUTQ): the SYN and FIN not counted. */
	uint32_t unsent, unacked;
	bool fin_rcvd;       /* the peer's FIN is in order (end of stream) */
	bool fin_queued;     /* we shut down writing */
	bool established;    /* the handshake is done (any later state) */
	bool dead;           /* reset, timed out or closed: no more data */
};
/* Local address (v4-mapped for IPv4) and port. */
void tcp_conn_local(const struct tcp_conn *c, struct us_in6 *ip, uint16_t *port);
void tcp_conn_status(const struct tcp_conn *c, struct tcp_conn_status *st);
/* Ask for on_writable once the send buffer is half free again. */
void tcp_conn_want_writable(struct tcp_conn *c);
/* Zero copy receive: the receive queue as one mbuf chain (the caller owns
 * it; at most 65535 segments per call), NULL when empty; *bytes its length.
 * Once both FINs are out (fin_rcvd and fin_queued) the socket layer takes
 * what is left this way: tcp/ frees the receive queue when the connection
 * ends, before the application may have read it. */
struct rte_mbuf *tcp_recv_take(struct tcp_conn *c, uint32_t *bytes);
/* Zero copy send of a whole chain of direct, unshared mbufs: bytes queued
 * (consumes m), or -EAGAIN (no room for all of it), -EMSGSIZE (larger than
 * the send buffer), -EINVAL (an indirect or shared segment), -EPIPE,
 * -ENOTCONN, -EBADF; m stays the caller's on error. */
ssize_t tcp_send_chain(struct tcp_conn *c, struct rte_mbuf *m);
/* tcp_recv_take with tcp_recv's results: bytes in *chain (the caller owns
 * it), or with *chain NULL: 0 at end of stream, -EAGAIN (nothing yet),
 * -ENOTCONN (reset or timed out), -EBADF (closed by the application). */
ssize_t tcp_recv_chain(struct tcp_conn *c, struct rte_mbuf **chain);
/* MSG_PEEK: tcp_recv without taking the bytes off the queue. */
ssize_t tcp_recv_peek(const struct tcp_conn *c, void *buf, size_t len);

/* Prototypes: migration between engines (tcp/tcb_migrate.c) */

/* A connection taken out of its stack, in transit to another engine's. */
struct tcp_parcel;
/* Takes an ESTABLISHED or CLOSE-WAIT connection out of its stack (table,
 * flow rule via conn_event, wheel, count): 0 and *out, -EINVAL (another
 * state, closed by the app, an embryo), -EBUSY (inside a tcp/ callback or
 * events not yet delivered: someone up the stack holds c), -ENOMEM.  c's
 * callbacks are never called again; nothing is sent. */
int tcp_migrate_detach(struct tcp_conn *c, struct tcp_parcel **out);
/* Puts the parcel's connection into ts (every pending timer re-armed with
 * the time it had left, against ts's clock): 0 and *out (the parcel is
 * gone), or -EEXIST (ts has that 4-tuple), -ENOBUFS (max_conns) and the
 * parcel stays the caller's. */
int tcp_migrate_attach(struct tcp_stack *ts, struct tcp_parcel *p,
		       const struct tcp_callbacks *cb, void *ctx, struct tcp_conn **out);
/* A parcel never attached: its mbufs and TCB freed, nothing sent. */
void tcp_parcel_free(struct tcp_parcel *p);
/* Attaches the parcel on ts and hands it to the listener on its local
 * address and port as a new connection (on_accept, then on_readable if
 * data or a FIN is queued): 0 (the parcel is gone) or -ECONNREFUSED (no
 * listener), -EEXIST, -ENOBUFS (the parcel stays the caller's). */
int tcp_migrate_accept(struct tcp_stack *ts, struct tcp_parcel *p);
/* The connection TCB of a 4-tuple, or NULL. */
struct tcp_conn *tcp_conn_find(struct tcp_stack *ts, const struct us_in6 *lip, uint16_t lport,
			       const struct us_in6 *rip, uint16_t rport);
/* No more callbacks for c (the application let go of it, c lives on). */
void tcp_conn_forget(struct tcp_conn *c);
/* The env.ctx of c's stack (the engine). */
void *tcp_conn_env_ctx(const struct tcp_conn *c);

#endif
