/* tcp/tcb.h: the transmission control block and the engine's internals.
 *
 * Design notes (the walking skeleton of the RFC 9293 engine):
 *
 * - Files, one concern each: tcb.c (alloc/free, state names, deferred reaping,
 *   event delivery, ISN), table.c (4-tuple hash, listeners, ephemeral ports),
 *   options.c (option parsing/writing), output.c (segment building, the send
 *   loop), tcb_timers.c (the TCB's timers: RTO and RTT estimate (RFC 6298),
 *   delayed ACK, TIME-WAIT, persist, keepalive, SWS override), input.c
 *   (header validation, LISTEN/SYN-SENT/closed-port handling), established.c
 *   (the synchronized states: one function per check of RFC 9293 3.10.7.4),
 *   reass.c (out-of-order queue, our SACK blocks), scoreboard.c (the peer's
 *   SACK blocks: RFC 6675 scoreboard, delivery rate; it tells established.c
 *   which ACKs are RFC 6675 duplicates), recovery.c / loss.c (loss
 *   recovery: the pure per-ACK decision, and the module that owns the
 *   recovery state (loss.h) and every entry into and exit from it),
 *   tlp.c (Tail Loss Probe, RFC 8985 7: its state inside loss.h's),
 *   rack.c / sent_log.c (RFC 8985 RACK loss detection and its record of
 *   the flight),
 *   cc_newreno.c / cc_cubic.c (congestion control, tcp/cc.h), syncookie.c
 *   (SYN cookies), fastopen_cookie.c / fastopen_cache.c / fastopen_tcb.c
 *   (Fast Open: option codec, server keys and cookies; the client's cookie
 *   cache; the TCB side), tcp_stack.c (the stack's life cycle and the OPEN
 *   and STATUS calls of tcp.h), user.c (SEND, RECEIVE, CLOSE, ABORT),
 *   socket_calls.c (what only the socket layer asks: poll status, zero-copy
 *   hand-overs), tcb_opts.c (the application's per-connection settings,
 *   struct tcp_conn_opts, and the rules that consult them), tcb_migrate.c (moving a TCB between engines), walk.c
 *   (read-only walks for tooling), urgent.c (urgent data, RFC 9293 3.8.5).
 *
 * - One us_timer per TCB, multiplexed: each timer kind (RTO, delayed ACK,
 *   2MSL, persist, keepalive, SWS override, TLP's probe timeout, RACK) has
 *   its own deadline and the embedded
 *   wheel timer is armed at the earliest.  A callback therefore never cancels
 *   a sibling timer that may sit in the wheel's "due" list, and adding a kind
 *   is one enum entry plus one handler.
 *
 * - Re-entrancy: callbacks run inline and may call back into tcp/ (tcp_close
 *   from on_readable, ...).  Input and timer handling therefore only record
 *   events (tcb->ev) and deliver them once the TCB is consistent
 *   (tcb_notify).  A TCB that reaches CLOSED is unlinked at once but freed
 *   only when the outermost entry point returns (ts->depth == 0), so no caller
 *   up the stack holds a dangling pointer.
 *
 * - Buffers: the receive queue is a list of single-segment mbufs holding only
 *   payload (headers cut off, no copy).  The send queue is a list of direct
 *   mbufs holding bytes [snd_una-ish .. end); a segment is a fresh header mbuf
 *   followed by indirect mbufs attached to send-queue mbufs, so the queue
 *   holds its own reference and a retransmission never copies.
 *
 * - Sequence space: SYN at iss, data from iss + 1 (sndq_seq is the sequence
 *   number of the first queued byte), FIN at fin_seq.  snd_max is the highest
 *   sequence sent; after an RTO snd_nxt goes back to snd_una (go-back-N) and
 *   ACKs up to snd_max stay acceptable.
 *
 * - Congestion control (cc_newreno.c, cc_cubic.c behind tcp/cc.h): cwnd
 *   starts at 10 segments (RFC 6928); NewReno (RFC 5681, RFC 3465 byte
 *   counting) or CUBIC (RFC 9438, default) grow it; the 3rd duplicate ACK
 *   (or, with SACK, RFC 6675 IsLost(SND.UNA), or RFC 8985 RACK's marks
 *   with loss_detection = rack, rack.c) enters fast recovery, whose
 *   per-ACK window is tcp/recovery.h's (PRR by default; loss.c feeds
 *   it DeliveredData and pipe, output.c tcp_recovery_send spends its budget
 *   in RFC 6675 NextSeg order); dup ACKs 1 and 2 allow limited transmit (RFC 3042,
 *   output.c cwnd_for_send); an RTO sets cwnd to one segment.  c->cwnd and
 *   c->ssthresh are the truth the send loop reads; the module's copy is
 *   loaded and stored around each call (tcp_cc_load / tcp_cc_store).
 *
 * - Send policy (output.c send_len): one decision per segment, RFC 9293
 *   3.8.6.2.1 sender SWS avoidance with Nagle (3.7.4, Minshall's form of
 *   Appendix A.3) folded into its "all queued data fits" case.  Data held
 *   with nothing in flight gets a timer, since no ACK will wake us: persist
 *   for a closed window, the SWS override for a silly one.
 */
#ifndef US_TCP_TCB_H
#define US_TCP_TCB_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "stack/base/timer.h"
#include "tcp/cc.h"
#include "tcp/loss.h"
#include "tcp/scoreboard.h"
#include "tcp/tcp.h"
#include "tcp/fastopen_tcb.h"

/* Types */

/* RFC 9293 3.3.2: all eleven states. */
enum tcp_state {
	TCP_CLOSED,
	TCP_LISTEN,
	TCP_SYN_SENT,
	TCP_SYN_RECEIVED,
	TCP_ESTABLISHED,
	TCP_FIN_WAIT_1,
	TCP_FIN_WAIT_2,
	TCP_CLOSE_WAIT,
	TCP_CLOSING,
	TCP_LAST_ACK,
	TCP_TIME_WAIT,
	TCP_STATE_COUNT
};

/* Linux's chronographs (tcp_chrono_*): what a sending connection is
 * limited by; one runs at a time (tcp/tcb_chrono.c). */
enum tcp_chrono {
	TCP_CHRONO_NONE,
	TCP_CHRONO_BUSY,      /* data in flight or queued, nothing else limits */
	TCP_CHRONO_RWND,      /* the peer's window holds queued data back */
	TCP_CHRONO_SNDBUF,    /* the application waits for send-buffer room */
	TCP_CHRONO_COUNT
};

/* Timer kinds multiplexed on the TCB's single wheel timer. */
enum tcp_timer_kind {
	TCP_T_RTO,     /* retransmission (also SYN / SYN-ACK) */
	TCP_T_DELACK,  /* delayed ACK */
	TCP_T_2MSL,    /* TIME-WAIT */
	TCP_T_PERSIST, /* zero-window probes (RFC 9293 3.8.6.1) */
	TCP_T_KEEPALIVE, /* RFC 9293 3.8.4 */
	TCP_T_SWS,     /* sender SWS override (RFC 9293 3.8.6.2.1) */
	TCP_T_TLP,     /* Tail Loss Probe's PTO (RFC 8985 7.2; tlp.c) */
	TCP_T_RACK,    /* RACK reordering timer (RFC 8985 6.2 step 6, rack.c) */
	TCP_T_COUNT
};

/* Events recorded during processing and delivered by tcb_notify(). */
#define TCP_EV_ACCEPT    0x01u
#define TCP_EV_CONNECTED 0x02u
#define TCP_EV_READABLE  0x04u
#define TCP_EV_WRITABLE  0x08u
#define TCP_EV_CLOSED    0x10u

/* Flag bits as in the TCP header (rte_tcp.h names them RTE_TCP_*_FLAG). */
#define TH_FIN 0x01u
#define TH_SYN 0x02u
#define TH_RST 0x04u
#define TH_PSH 0x08u
#define TH_ACK 0x10u
#define TH_URG 0x20u

/* Wrap-safe sequence comparisons (RFC 9293 3.4: arithmetic modulo 2^32). */
#define SEQ_LT(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((uint32_t)(a) - (uint32_t)(b)) <= 0)
#define SEQ_GT(a, b) SEQ_LT(b, a)
#define SEQ_GEQ(a, b) SEQ_LEQ(b, a)

#define TCP_DEFAULT_MSS 536u    /* RFC 9293 3.7.1: when an IPv4 peer sends no MSS */
/* RFC 9293 3.7.1 (MUST-15) for IPv6: RFC 8200's 1280-byte minimum link MTU
 * less 60 (Linux's IPV6_MIN_MTU - headers, its mss_clamp for IPv6). */
#define TCP_DEFAULT_MSS6 1220u
/* Floor of a peer's MSS option (Linux's tcp_min_snd_mss, CVE-2019-11479):
 * a peer announcing MSS 1 would otherwise make us cut every byte into its
 * own segment (and with timestamps the 12 option bytes wrapped the MSS). */
#define TCP_MIN_SND_MSS 48u
#define TCP_IW_SEGS 10u         /* RFC 6928 initial window */
#define TCP_MAX_WIN 65535u      /* unscaled window field maximum */
#define TCP_MAX_WSCALE 14u      /* RFC 7323 2.3 */
#define TCP_SACK_MAX_BLOCKS 4u  /* RFC 2018 3: 4 blocks fit in 40 bytes */
#define TCP_TS_OPT_SPACE 12u    /* NOP NOP TS: on every segment once negotiated */
#define TCP_REASS_MAX_SEGS 256u /* out-of-order mbufs per connection */
#define TCP_EPHEMERAL_LO 32768u /* like Linux ip_local_port_range */
#define TCP_EPHEMERAL_HI 60999u
#define TCP_SYN_FALLBACK_RTO_MS 3000u /* RFC 6298 5.7 */
/* RFC 9293 3.8.3 R1: retransmissions of one segment after which IP gets
 * negative advice (at least 3, MUST-20; Linux's tcp_retries1). */
#define TCP_R1_RETRIES 3u

/* A queue of single-segment mbufs linked through m->next.  cur/cur_off:
 * the mbuf the last seek ended in and the queue offset of its first byte
 * (the send queue's; output.c): segments go out in sequence order, so the
 * next seek starts there instead of walking the whole flight from the
 * head, once per segment.  Pulling bytes off the head moves cur_off down;
 * tcp_mq_free forgets it with the mbufs. */
struct tcp_mq {
	struct rte_mbuf *head, *tail;
	uint32_t bytes;
	uint32_t cur_off;
	struct rte_mbuf *cur;
};

/* A parsed incoming segment (host byte order). */
struct tcp_seg {
	uint32_t seq, ack;
	uint32_t skip;     /* bytes of m before the payload (header, trimmed) */
	uint32_t len;      /* payload bytes */
	uint16_t wnd;
	uint8_t flags;
	uint16_t mss;      /* 0 when absent */
	/* Options (options.c); the has_* flags say which were present. */
	bool has_ws, has_sack_perm, has_ts;
	uint8_t ws;        /* window scale shift as sent (clamped to 14) */
	uint32_t ts_val, ts_ecr;
	/* RFC 2018 3: the peer's SACK blocks [start, end), in the order sent
	 * (RFC 2883: the first may be a D-SACK); nsack 0 when absent. */
	uint8_t nsack;
	uint32_t sack[TCP_SACK_MAX_BLOCKS][2];
	struct us_in6 src_ip, dst_ip; /* IPv4 v4-mapped */
	uint16_t sport, dport;
	struct tfo_opt tfo;  /* RFC 7413 Fast Open option (SYNs only) */
	uint16_t urp;        /* the urgent pointer field (meaningful with URG) */
};

/* Urgent data (RFC 9293 3.8.5; tcp/urgent.c). */
enum tcp_urg_rcv {
	TCP_URG_NONE,   /* no urgent byte pending */
	TCP_URG_NOTYET, /* the pointer came, its byte not yet */
	TCP_URG_VALID,  /* the byte is here, for recv(MSG_OOB) */
	TCP_URG_READ,   /* ... and was read */
};

struct tcp_urg {
	uint32_t snd_up;       /* SND.UP: the octet after our urgent byte */
	bool snd_on;           /* SND.UP ahead of SND.UNA: segments carry URG */
	uint8_t rcv;           /* enum tcp_urg_rcv */
	uint8_t byte;          /* the urgent byte (VALID, READ) */
	bool marked;           /* the byte is in order: mark is known */
	uint32_t rcv_up;       /* RCV.UP: the peer's urgent byte's sequence number */
	uint32_t mark;         /* the read position of the urgent byte */
	uint32_t pulled_bytes; /* urgent bytes ever taken out of the stream */
};

/* A segment's text as it arrived, before trimming: where an urgent byte
 * is looked for (a zero window cuts the text, not the pointer). */
struct tcp_urg_seg {
	uint32_t seq, skip, len;
	uint16_t urp;
	uint8_t flags;
};

struct tcp_conn {
	LIST_ENTRY(tcp_conn) hash_link; /* connection table bucket or listener list */
	LIST_ENTRY(tcp_conn) link;      /* listener's embryo list, or dead list */
	struct tcp_stack *ts;
	struct tcp_conn *listener;      /* SYN-RECEIVED from a passive open */
	enum tcp_state state;
	uint32_t hash;                  /* precomputed 4-tuple hash */
	struct us_in6 local_ip, remote_ip; /* IPv4 v4-mapped (tcp.h) */
	uint16_t local_port, remote_port;
	uint32_t flow_label;            /* IPv6 (RFC 6437): from the 4-tuple, fixed */
	bool listen_v6only;             /* listener on :: taking IPv6 only */

	struct tcp_callbacks cb;
	void *ctx;
	unsigned ev;                    /* TCP_EV_* pending */
	int ev_err;                     /* errno for TCP_EV_CLOSED */
	bool app_closed;                /* tcp_close/tcp_abort called */
	bool closed_notified;
	bool want_writable;             /* tcp_send returned -EAGAIN */
	bool dead;                      /* on ts->dead, awaiting free */

	/* Listener only. */
	unsigned backlog, embryos;
	LIST_HEAD(, tcp_conn) embryo_list;

	/* Send side (RFC 9293 3.3.1). */
	uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2;
	uint32_t sndq_seq;              /* sequence of sndq's first byte */
	struct tcp_mq sndq;
	bool fin_queued;                /* app shut down writing */
	uint32_t fin_seq;               /* valid when fin_queued */
	uint32_t mss;                   /* send MSS: min(peer's option, ours) */
	bool df_off;                    /* IPv4 path below cfg.min_pmtu (tcp_stack.c) */
	uint32_t cwnd, ssthresh;
	/* Congestion control (cc.h) and loss recovery (loss.h, loss.c). */
	struct tcp_cc cc;
	struct tcp_loss loss;

	/* Receive side. */
	uint32_t irs, rcv_nxt, rcv_adv; /* rcv_adv: right edge advertised */
	/* The receive buffer: starts at cfg.rcvbuf and grows toward twice
	 * what the application reads per RTT, up to cfg.rcvbuf_max (user.c
	 * rcvbuf_autotune).  A bound on queued bytes, nothing set aside. */
	uint32_t rcvbuf;
	struct tcp_mq rcvq;
	/* The autotuning measurement: the read position (RCV.NXT minus what
	 * is queued) and the time, in us, when it started; 0 = not started. */
	uint32_t rcv_space_seq, rcv_space_us;
	bool fin_rcvd;
	uint32_t rcv_mss;               /* estimate of the peer's full segment */
	uint32_t unacked_bytes;         /* received since our last ACK */
	bool ack_now;                   /* an ACK is owed without delay */

	/* RTT / RTO (RFC 6298), microseconds. */
	uint32_t srtt_us, rttvar_us, rto_ms;
	bool rtt_active, rtt_valid;
	uint32_t rtt_seq;
	uint64_t rtt_start_ns;
	unsigned backoff, retries, total_retrans;
	bool syn_retransmitted;

	uint64_t bytes_acked, bytes_received;

	/* Send policy and idle probing (output.c, tcb_timers.c). */
	bool nodelay_set, nodelay;      /* per connection, else cfg.nodelay_default */
	uint32_t snd_sml;               /* end of the last small segment (RFC 9293 A.3) */
	uint32_t unpushed;              /* new data sent since the last PSH (output.c push_due) */
	uint32_t max_snd_wnd;           /* largest window the peer offered */
	unsigned persist_backoff, persist_unanswered;
	bool keepalive;
	unsigned ka_unanswered;
	uint64_t persist_probes, ka_probes;

	/* Options negotiated on the SYNs (RFC 7323, RFC 2018; options.c). */
	bool ws_ok, sack_ok, ts_ok;
	uint8_t snd_wscale, rcv_wscale; /* 0 unless ws_ok */
	uint32_t ts_recent;             /* RFC 7323 4.3: TS.Recent */
	uint64_t ts_recent_ns;          /* when TS.Recent was set (PAWS 5.5) */
	uint32_t last_ack_sent;         /* RFC 7323 4.3: Last.ACK.sent */

	/* Out-of-order queue (reass.c): single-segment mbufs sorted by
	 * sequence, linked through m->next, each one's sequence number in
	 * m->hash.usr; ooo.bytes counts payload. */
	struct tcp_mq ooo;
	uint32_t ooo_segs;
	bool ooo_fin;                   /* a FIN at ooo_fin_seq is queued */
	uint32_t ooo_fin_seq;
	/* RFC 2018 4: one sequence number inside each recently reported
	 * block, most recent first; RFC 2883: a pending D-SACK block. */
	uint32_t sack_recent[TCP_SACK_MAX_BLOCKS];
	unsigned sack_nrecent;
	bool dsack_pending;
	uint32_t dsack_start, dsack_end;
	/* Sender side: the peer's SACK information (scoreboard.c). */
	struct tcp_sb sb;

	/* Added to our timestamp clock in the TSval we send (RFC 7323 5.4
	 * allows a per-connection offset); syncookie.c sets it on the
	 * stateless SYN-ACK whose TSval carries the options. */
	uint32_t ts_off;
	/* Listener only: when it last answered a SYN with a cookie (0: never). */
	uint64_t syncookie_sent_ns;

	struct us_timer timer;
	uint64_t deadline[TCP_T_COUNT]; /* 0 = off */

	struct tcp_tfo_conn tfo;        /* RFC 7413 Fast Open (tcp/fastopen_tcb.c) */
	struct tcp_urg urg;             /* urgent data (tcp/urgent.c) */
	/* RFC 9293 3.9.1.8: the last soft ICMP error (Linux's sk_err_soft),
	 * forgotten when new data is acknowledged; a timeout reports it
	 * instead of ETIMEDOUT.  soft_errors counts them (tcp_conn_info). */
	int soft_err;
	uint32_t soft_errors;

	/* Quick ACK off (tcp_set_quickack): the ACK of the SYN-ACK and of a
	 * FIN in ESTABLISHED waits for the application's next call (tcb_timers.c
	 * tcp_ack_hold) instead of leaving alone. */
	bool ack_hold;
	/* Profile linux: data segments still to be ACKed at once (Linux's
	 * icsk_ack.quick, tcb_timers.c quickack_take). */
	uint8_t quickacks;

	/* The application's settings (tcp_conn_opts, tcp/tcb_opts.c); more:
	 * MSG_MORE on the send being pushed (output.c holds its tail). */
	struct tcp_conn_opts o;
	bool more;
	/* TCP_USER_TIMEOUT: since when data has waited for an ACK, set at
	 * the first retransmission of a series, a Tail Loss Probe's or an
	 * RTO's; 0 while no series is on (tcb_opts.c). */
	uint64_t ut_start_ns;
	/* When the peer was last heard from (tcp_peer_heard): keepalive's
	 * user timeout. */
	uint64_t last_heard_ns;
	/* For tcp_info (tcp/tcb_chrono.c, tcp_conn_get_info): when data last
	 * left and arrived, the smallest RTT sample, bytes sent and resent,
	 * out-of-order segments received, and Linux's chronographs: time
	 * busy, limited by the peer's window, limited by the send buffer. */
	uint64_t last_data_sent_ns, last_data_rcvd_ns;
	uint32_t min_rtt_us;
	uint64_t bytes_sent, bytes_retrans;
	uint32_t rcv_ooopack;
	uint8_t chrono_type;            /* enum tcp_chrono, 0: none running */
	uint64_t chrono_start_ns;
	uint64_t chrono_ns[TCP_CHRONO_COUNT];

	/* Output asked for by an application call made from a callback,
	 * run when the outermost entry point returns (tcp_output_soon). */
	bool out_deferred;
	struct tcp_conn *defer_next;
};

LIST_HEAD(tcp_conn_list, tcp_conn);

struct tcp_stack {
	struct tcp_env env;
	struct tcp_config cfg;
	struct tcp_stats stats;
	struct tcp_conn_list *buckets;  /* connection table */
	uint32_t nbuckets;              /* power of two */
	struct tcp_conn_list listeners[64];
	struct tcp_conn_list dead;      /* closed, freed when depth returns to 0 */
	unsigned nconns;                /* connection TCBs (listeners excluded) */
	/* TCBs in the tables by state, listeners included (tcp.h
	 * TCP_STATE_GAUGES): moved by table.c and tcb_set_state only. */
	uint32_t nstate[TCP_STATE_COUNT];
	unsigned depth;                 /* nesting of entry points */
	uint16_t next_ephemeral;
	uint8_t syncookie_key[16];      /* crypto_shorthash key (syncookie.c) */
	/* RFC 5961 7: challenge ACKs sent in the current second. */
	uint64_t challenge_sec;
	uint32_t challenge_count;
	uint32_t challenge_budget;      /* this second's, jittered or exact */
	uint8_t isn_key[16];            /* crypto_shorthash key (RFC 6528) */
	uint8_t flow_key[16];           /* IPv6 flow labels (RFC 6437) */
	uint8_t hash_key[16];           /* table hash key */
	struct tcp_tfo_stack tfo;       /* RFC 7413 Fast Open (tcp/fastopen_tcb.c) */
	/* TCBs with deferred output, in the order they asked (output.c). */
	struct tcp_conn *defer_head, *defer_tail;
	/* RSTs for closed ports sent in the current second (output.c). */
	uint64_t rst_closed_sec;
	uint32_t rst_closed_count;
	/* When the application last closed a connection in SYN-SENT whose
	 * SYN had gone out (user.c; the shutdown drain waits for its SYN-ACK). */
	uint64_t syn_sent_closed_ns;
	/* Freed TCBs kept for the next tcb_alloc (tcb.c), linked through
	 * defer_next: 1320 bytes is above glibc's tcache sizes, so malloc and
	 * free cost ~450 instructions a connection; a pop and a memset less. */
	struct tcp_conn *tcb_cache;
	unsigned tcb_cached;
};

/* Prototypes */

/* tcb.c */
struct tcp_conn *tcb_alloc(struct tcp_stack *ts);
/* Frees every TCB kept for reuse (tcp_stack_destroy). */
void tcb_cache_fini(struct tcp_stack *ts);
/* Unlink c from every table, cancel its timer, mark CLOSED; freed on reap. */
void tcb_drop(struct tcp_conn *c);
/* RFC 9293 3.10.5 ABORT: <SEQ=SND.NXT><CTL=RST> when synchronized (not in
 * TIME-WAIT), then tcb_drop (user.c). */
void tcb_abort(struct tcp_conn *c);
/* Deliver recorded events to the application (may drop nothing itself). */
void tcb_notify(struct tcp_conn *c);
/* Record that the connection is gone for the application. */
void tcb_set_closed(struct tcp_conn *c, int err);
void tcp_enter(struct tcp_stack *ts);
void tcp_leave(struct tcp_stack *ts);
bool tcb_synchronized(const struct tcp_conn *c);
void tcp_mq_push(struct tcp_mq *q, struct rte_mbuf *m);
/* Receive queues hold single-segment mbufs of payload only: takes the next
 * segment of *chain that carries bytes of [skip, skip + len), trimmed to
 * them, and frees the segments around it (no copy).  NULL when *chain is
 * used up; *skip and *len count down as it goes. */
struct rte_mbuf *tcp_mbuf_take_piece(struct rte_mbuf **chain, uint32_t *skip, uint32_t *len);
void tcp_mq_free(struct tcp_mq *q);
/* A 4-tuple as the keyed hashes (ISN, flow label, SYN cookies) take it:
 * the addresses as they lie in their headers (IPv4's 4 bytes, IPv6's 16,
 * so IPv4's values are what they were before IPv6), then the ports as
 * stored; the length written. */
#define TCP_TUPLE_BYTES_MAX 36
unsigned tcp_tuple_bytes(const struct us_in6 *lip, uint16_t lport, const struct us_in6 *rip,
			 uint16_t rport, uint8_t out[TCP_TUPLE_BYTES_MAX]);
uint32_t tcp_isn(struct tcp_stack *ts, const struct us_in6 *lip, uint16_t lport,
		 const struct us_in6 *rip, uint16_t rport);
/* The flow-label key, derived from the ISN key (tcb.c says why). */
void tcp_flow_key_init(struct tcp_stack *ts);
/* RFC 6437 3: a flow label from a keyed hash of the 4-tuple, never 0. */
uint32_t tcp_flow_label(const struct tcp_stack *ts, const struct us_in6 *lip, uint16_t lport,
			const struct us_in6 *rip, uint16_t rport);
/* The connection's family is IPv6 (its peer not v4-mapped). */
static inline bool tcb_is_v6(const struct tcp_conn *c)
{
	return !us_in6_is_v4mapped(&c->remote_ip);
}

/* RFC 9293 3.9.2.3 (MUST-57, 63) and 3.9.1.1 (MUST-46): an address that
 * names a group, never one host: IPv4's limited broadcast and 224/4,
 * IPv6's ff00::/8.  The subnet's directed broadcast is the network layer's
 * to know (stack/net/ip.c). */
static inline bool tcp_addr_is_group(const struct us_in6 *a)
{
	uint32_t v4;

	if (!us_in6_is_v4mapped(a))
		return us_in6_is_mcast(a);
	v4 = us_in6_v4(a);
	return v4 == UINT32_MAX || (v4 >> 28) == 0xe;
}

/* The MSS to assume of a peer whose SYN carries none. */
static inline uint32_t tcp_default_mss(bool v6)
{
	return v6 ? TCP_DEFAULT_MSS6 : TCP_DEFAULT_MSS;
}

/* table.c.  A TCB is counted (nconns, nstate) from its insert to its
 * remove: its state is set directly before the one, and after the other
 * (tcb_drop's CLOSED); in between only through tcb_set_state. */
int tcp_table_init(struct tcp_stack *ts);
void tcp_table_fini(struct tcp_stack *ts);
struct tcp_conn *tcp_table_lookup(struct tcp_stack *ts, const struct us_in6 *lip,
				  uint16_t lport, const struct us_in6 *rip, uint16_t rport);
void tcp_table_insert(struct tcp_stack *ts, struct tcp_conn *c);
void tcp_table_remove(struct tcp_conn *c);
/* The listener a segment to lip:port goes to: the one on lip, else a
 * wildcard of lip's family (tcp_listen). */
struct tcp_conn *tcp_listener_lookup(struct tcp_stack *ts, const struct us_in6 *lip,
				     uint16_t port);
/* The listener on exactly lip:port (flags as tcp_listen's), or NULL. */
struct tcp_conn *tcp_listener_exact(struct tcp_stack *ts, const struct us_in6 *lip,
				    uint16_t port);
void tcp_listener_insert(struct tcp_stack *ts, struct tcp_conn *l);
void tcp_listener_remove(struct tcp_conn *l);
int tcp_ephemeral_port(struct tcp_stack *ts, const struct us_in6 *lip,
		       const struct us_in6 *rip, uint16_t rport, uint16_t *port);

/* options.c */
/* Parses the options of a header of hlen bytes; fills seg->mss, ws, ts, sack. */
void tcp_options_parse(struct tcp_stack *ts, const struct rte_tcp_hdr *th, unsigned hlen,
		       struct tcp_seg *seg);
/* Writes the options for a segment with these flags carrying len payload
 * bytes (records Last.ACK.sent); returns bytes (x4). */
unsigned tcp_options_write(struct tcp_conn *c, uint8_t flags, uint32_t len, uint8_t *opt);
/* n option bytes padded with zeros (EOL) to a 32-bit boundary: the
 * header length used. */
unsigned tcp_options_pad(uint8_t *opt, unsigned n);
/* RFC 7323 2.2: the largest window we may offer (65535 << Rcv.Wind.Shift
 * once synchronized, 65535 before). */
uint32_t tcp_max_rcv_wnd(const struct tcp_conn *c);
/* The window field for a segment with these flags (scaled unless SYN). */
uint16_t tcp_wnd_field(struct tcp_conn *c, uint8_t flags);
/* Negotiation on the peer's SYN (both opens), RFC 7323 2.2/3.2, RFC 2018 2. */
void tcp_options_negotiate(struct tcp_conn *c, const struct tcp_seg *seg);
/* Our shift for a receive buffer of rcvbuf bytes. */
uint8_t tcp_rcv_wscale_for(uint32_t rcvbuf);
/* max(rcvbuf, rcvbuf_max): the largest a connection's buffer may grow to. */
uint32_t tcp_rcvbuf_limit(const struct tcp_config *cfg);
/* RFC 7323 5.3 PAWS and 4.3 TS.Recent; false: drop the segment. */
bool tcp_paws_ok(struct tcp_conn *c, const struct tcp_seg *seg);
void tcp_ts_update_recent(struct tcp_conn *c, const struct tcp_seg *seg);
/* The two halves of tcp_ts_update_recent: whether seg may set TS.Recent,
 * and setting it (established.c decides on arrival, sets after the ACK
 * check). */
bool tcp_ts_recent_due(const struct tcp_conn *c, const struct tcp_seg *seg);
void tcp_ts_take_recent(struct tcp_conn *c, const struct tcp_seg *seg);
/* The TSval a segment sent now carries (RFC 7323 3.2). */
uint32_t tcp_ts_val(const struct tcp_conn *c);
/* RFC 7323 4.1: an RTT sample from SEG.TSecr on an ACK of new data. */
bool tcp_ts_rtt_sample(struct tcp_conn *c, const struct tcp_seg *seg);

/* reass.c */
/* Queues [skip, skip + len) of m at seq (beyond RCV.NXT); consumes m. */
void tcp_reass_insert(struct tcp_conn *c, struct rte_mbuf *m, uint32_t skip, uint32_t seq,
		      uint32_t len, bool fin);
/* Moves what RCV.NXT reached to the receive queue; bytes moved; *fin set
 * when a queued FIN became in order. */
uint32_t tcp_reass_deliver(struct tcp_conn *c, bool *fin);
void tcp_reass_free(struct tcp_conn *c);
/* RFC 2883: remember [start, end) as duplicate data for the next ACK. */
void tcp_dsack_note(struct tcp_conn *c, uint32_t start, uint32_t end);
/* SACK blocks for our next ACK, D-SACK first then RFC 2018 4 order; n. */
unsigned tcp_sack_blocks(struct tcp_conn *c, uint32_t (*blk)[2], unsigned max);

/* user.c */
/* The application took bytes off the receive queue: announce the opened
 * window if it grew enough (receiver-side SWS avoidance); inside
 * tcp_enter/tcp_leave. */
void tcp_rcv_window_update(struct tcp_conn *c);

/* Receive-buffer autotuning's measurement (see tcp_rcvbuf_autotune). */
void tcp_rcvbuf_measure(struct tcp_conn *c);

/* After the application read: only once it read more than half the buffer
 * since the measurement started can the buffer grow (user.c
 * tcp_rcvbuf_measure), so a small read costs this one test. */
static inline void tcp_rcvbuf_autotune(struct tcp_conn *c)
{
	if (c->rcv_nxt - c->rcvq.bytes - c->rcv_space_seq > c->rcvbuf / 2)
		tcp_rcvbuf_measure(c);
}

/* output.c */
/* Sends what the windows allow, then a pure ACK if one is owed. */
void tcp_output(struct tcp_conn *c);
/* tcp_output that sends partial segments too (cork, Nagle and SWS
 * avoidance set aside once): TCP_NODELAY set on a corked connection. */
void tcp_output_push(struct tcp_conn *c);
/* tcp_output for application calls: run now, or, inside another entry
 * point (a callback of input or a timer), once that one returns, so that
 * an ACK, several writes and a FIN leave as one segment. */
void tcp_output_soon(struct tcp_conn *c);
/* Runs the deferred outputs (tcp_leave, at the outermost level). */
void tcp_output_flush(struct tcp_stack *ts);
/* One segment: flags, seq, payload [seq, seq + len) from the send queue. */
int tcp_send_segment(struct tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len);
/* A pure ACK of the bytes below ack, sent before RCV.NXT reaches it: the
 * ACKs a coalesced segment's frames would have drawn one by one. */
int tcp_send_ack_at(struct tcp_conn *c, uint32_t ack);
int tcp_send_ack(struct tcp_conn *c);
/* SYN (SYN-SENT) or SYN-ACK (SYN-RECEIVED) at iss. */
int tcp_send_syn(struct tcp_conn *c);
/* Folded ones'-complement sum of pseudo header + len bytes of m (network
 * order in memory); 0xffff over a segment with a correct checksum. */
uint16_t tcp_sum(const struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
		 uint32_t len);
int tcp_send_rst(struct tcp_conn *c);
/* RFC 9293 3.10.7.1: reply to a segment that has no connection. */
void tcp_send_rst_for(struct tcp_stack *ts, const struct tcp_seg *seg);
/* The same for a segment to a closed port, within cfg.rst_closed_limit. */
void tcp_send_rst_closed(struct tcp_stack *ts, const struct tcp_seg *seg);
uint32_t tcp_rcv_window(struct tcp_conn *c);
uint16_t tcp_our_mss(const struct tcp_stack *ts, bool v6);
/* The most a segment of c may carry before the peer's MSS counts: our MSS,
 * lowered to what env.path_mtu says the path to the peer takes. */
uint32_t tcp_conn_mss_cap(const struct tcp_conn *c);
/* tcp_stack.c, before output: the MSS follows the path MTU env.path_mtu
 * knows now, as Linux's tcp_current_mss follows the route's.  The network
 * layer may have lowered it since the MSS was chosen, from a Packet Too Big
 * about another connection or flow to the same peer.  The network layer
 * drops a TCP segment above it (IPv6 never fragments TCP), every resend
 * too, and no router tells us again: a black hole.  Lowered, what is in
 * flight goes again from SND.UNA (RFC 1191's resend). */
void tcp_pmtu_follow(struct tcp_conn *c);
/* RFC 9293 3.8.6.1: a zero-window probe: one byte at SND.UNA beyond the
 * window, or in profile linux Linux's <SEQ=SND.UNA-1><CTL=ACK>. */
int tcp_send_window_probe(struct tcp_conn *c);
/* RFC 9293 3.8.4: <SEQ=SND.UNA-1><CTL=ACK>. */
int tcp_send_keepalive(struct tcp_conn *c);
/* RFC 9293 3.8.6.2.1: the SWS override timer fired. */
void tcp_sws_override(struct tcp_conn *c);

/* loss.c: loss recovery (state in tcp/loss.h), around tcp/recovery.h.
 * tcp_loss_ack: every ACK, called by input_ack after the scoreboard has
 * taken it: una0 and sacked0 are SND.UNA and the SACKed bytes before it,
 * dup whether it was a duplicate.  Recovery, undo (undo.c) and the Tail
 * Loss Probe (tlp.c) take it there. */
void tcp_loss_ack(struct tcp_conn *c, const struct tcp_seg *seg, uint32_t una0,
		  uint32_t sacked0, bool dup);
/* The retransmission timer fired (data, not the handshake). */
void tcp_loss_on_rto(struct tcp_conn *c);
/* The TCB leaves its table: an episode in progress ends with it. */
void tcp_loss_on_drop(struct tcp_conn *c);
/* len bytes of new data went only by RFC 3042's allowance. */
void tcp_loss_on_limited_transmit(struct tcp_conn *c, uint32_t len);
/* In recovery: [seq, end) retransmitted (rescue: by RFC 6675 rule 4). */
void tcp_loss_on_rxt(struct tcp_conn *c, uint32_t seq, uint32_t end, bool rescue);
/* An undo (undo.c): the episode, if any, ends; recover is forgotten. */
void tcp_loss_undone(struct tcp_conn *c);
/* In recovery: sent bytes (new or again) spend this ACK's budget. */
void tcp_loss_spent(struct tcp_conn *c, uint32_t sent);
/* RFC 6675 SetPipe (with SACK) or its estimate without. */
uint32_t tcp_loss_pipe(const struct tcp_conn *c);
void tcp_loss_info(const struct tcp_conn *c, struct tcp_conn_info *info);
/* The RACK timer marked segments lost between ACKs: handled as an ACK
 * that brought no news (recovery may start; its algorithm decides). */
void tcp_loss_on_rack_timer(struct tcp_conn *c);
/* output.c: in recovery, spend rec_budget in RFC 6675 NextSeg order. */
void tcp_recovery_send(struct tcp_conn *c);

/* rack.c: RFC 8985 RACK (state in tcp/rack.h).  Active only with SACK
 * and loss_detection = rack; every hook returns at once otherwise. */
bool tcp_rack_on(const struct tcp_conn *c);
/* Data [seq, end) (a FIN counted) went out; again: below SND.MAX. */
void tcp_rack_sent(struct tcp_conn *c, uint32_t seq, uint32_t end, bool again);
/* Every ACK, after the scoreboard took it and before loss.c does. */
void tcp_rack_ack(struct tcp_conn *c, const struct tcp_seg *seg);
/* The RACK timer (TCP_T_RACK) fired. */
void tcp_rack_timer(struct tcp_conn *c);
/* An RTO fired (after tcp_sb_on_rto cleared the scoreboard). */
void tcp_rack_on_rto(struct tcp_conn *c);
/* Fast recovery ended / was started by RACK's marks (loss.c). */
void tcp_rack_on_recovery_exit(struct tcp_conn *c);
void tcp_rack_on_rec_entry(struct tcp_conn *c);
/* Some bytes are marked lost; the first lost range [*from, *to). */
bool tcp_rack_lost_any(const struct tcp_conn *c);
bool tcp_rack_next_lost(const struct tcp_conn *c, uint32_t *from, uint32_t *to);
/* RFC 6675 SetPipe with RACK's marks as IsLost. */
uint32_t tcp_rack_pipe(const struct tcp_conn *c);
/* The record's memory goes back (the TCB's end). */
void tcp_rack_free(struct tcp_conn *c);
/* Absolute times moved by delta ns (a TCB moved to another wheel). */
void tcp_rack_retime(struct tcp_conn *c, int64_t delta);
void tcp_rack_info(const struct tcp_conn *c, struct tcp_conn_info *info);

/* tcb_timers.c */
void tcp_timer_init(struct tcp_conn *c);
void tcp_timer_set(struct tcp_conn *c, enum tcp_timer_kind k, uint64_t deadline_ns);
void tcp_timer_stop(struct tcp_conn *c, enum tcp_timer_kind k);
void tcp_timer_stop_all(struct tcp_conn *c);
/* RFC 6298 5.1: start the RTO timer (backed-off) if it is not running. */
void tcp_rto_start(struct tcp_conn *c, bool restart);
uint32_t tcp_rto_current_ms(const struct tcp_conn *c);
void tcp_rtt_sample(struct tcp_conn *c, uint64_t rtt_ns);
void tcp_enter_time_wait(struct tcp_conn *c);
/* RFC 6191 / RFC 1122 4.2.2.13: may this SYN end c's TIME-WAIT? */
bool tcp_time_wait_syn_ok(const struct tcp_conn *c, const struct tcp_seg *seg);
/* Ends c's TIME-WAIT for a new incarnation; returns the new ISS. */
uint32_t tcp_time_wait_reuse(struct tcp_conn *c);
/* Owe an ACK for received data: delay it or send it now (RFC 9293 3.8.6.3). */
void tcp_ack_received(struct tcp_conn *c, uint32_t seglen, bool now);
bool tcp_ack_may_hold(const struct tcp_conn *c);
void tcp_ack_hold(struct tcp_conn *c);
/* Any segment from the peer: restarts keepalive, answers probes. */
void tcp_peer_heard(struct tcp_conn *c);
/* Persist timer (RFC 9293 3.8.6.1): start if not running; stop and reset. */
void tcp_persist_start(struct tcp_conn *c);
void tcp_persist_stop(struct tcp_conn *c);

/* input.c / established.c */
void tcp_input_synchronized(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg);
void tcp_input_syn_sent(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg);
/* A TCB in state for a passive open of listener l by seg (addresses,
 * callbacks), not yet in any table; NULL with drop_no_tcb counted at
 * max_conns or without memory. */
struct tcp_conn *tcp_passive_tcb(struct tcp_conn *l, const struct tcp_seg *seg,
				 enum tcp_state state);
/* The handshake's SYN was acknowledged by ack: ESTABLISHED (RFC 6298 5.7). */
void tcp_handshake_done(struct tcp_conn *c, uint32_t ack);
/* Shared by SYN-SENT and the synchronized states: queue payload, FIN. */
void tcp_input_text(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg);
/* Frees queued send data below SND.UNA (RFC 7413: SYN data acknowledged). */
void tcp_sndq_release_to_una(struct tcp_conn *c);

/* tcb_opts.c: the application's settings (tcp_conn_opts) where tcp/ uses
 * them. */
/* Our MSS option: the interface's, capped by TCP_MAXSEG. */
uint32_t tcp_adv_mss(const struct tcp_conn *c);
/* RTO expired in a synchronized state: give up?  data_retries, or with a
 * user timeout the time data has waited since the series began. */
bool tcp_data_timed_out(struct tcp_conn *c);
void tcp_user_timeout_mark(struct tcp_conn *c);
/* The RTO deadline, no later than the user timeout's end. */
uint64_t tcp_user_timeout_bound(const struct tcp_conn *c, uint64_t deadline);
/* Keepalive gives up: keepcnt unanswered probes, or with a user timeout
 * a probe unanswered and the peer silent that long. */
bool tcp_keepalive_gave_up(const struct tcp_conn *c);
/* A closed connection's FIN-WAIT-2 (TCP_LINGER2): the timer, or with a
 * negative linger2 none at all: dropped (at_close: with an RST). */
void tcp_fin_wait2_orphan(struct tcp_conn *c, bool at_close);
/* TCP_DEFER_ACCEPT: drop this handshake ACK (no data) of a listener's
 * embryo?  Counted. */
bool tcp_defer_accept_drop(struct tcp_conn *c, const struct tcp_seg *seg);
/* A passive TCB takes its listener's settings. */
void tcp_conn_opts_inherit(struct tcp_conn *c, const struct tcp_conn *l);
/* An active open takes o (NULL: none) before its MSS is chosen. */
void tcp_conn_opts_connect(struct tcp_conn *c, const struct tcp_conn_opts *o);

/* A passive open in SYN-RECEIVED (an embryo, or a Fast Open child): its
 * SYN-ACK, not a SYN, is what gets retransmitted. */
static inline bool tcp_is_passive_open(const struct tcp_conn *c)
{
	return c->listener != NULL || c->tfo.child;
}

/* Retransmissions of the handshake's SYN or SYN-ACK before giving up:
 * TCP_SYNCNT, else syn_retries or (passive opens) synack_retries, as
 * Linux's icsk_syn_retries over its two sysctls. */
static inline uint32_t tcp_handshake_retries(const struct tcp_conn *c)
{
	if (c->o.syn_retries)
		return c->o.syn_retries;
	return tcp_is_passive_open(c) ? c->ts->cfg.synack_retries : c->ts->cfg.syn_retries;
}

/* [tcp] profile = linux: Linux's choice where the RFCs leave one
 * (tcp_config.h lists the places). */
static inline bool tcp_profile_linux(const struct tcp_stack *ts)
{
	return ts->cfg.profile == TCP_PROFILE_LINUX;
}

static inline uint32_t tcp_ka_idle_ms(const struct tcp_conn *c)
{
	return c->o.keepidle_ms ? c->o.keepidle_ms : c->ts->cfg.keepalive_idle_ms;
}

static inline uint32_t tcp_ka_intvl_ms(const struct tcp_conn *c)
{
	return c->o.keepintvl_ms ? c->o.keepintvl_ms : c->ts->cfg.keepalive_intvl_ms;
}

static inline uint32_t tcp_ka_cnt(const struct tcp_conn *c)
{
	return c->o.keepcnt ? c->o.keepcnt : c->ts->cfg.keepalive_probes;
}

static inline uint32_t tcp_sndbuf(const struct tcp_conn *c)
{
	return c->o.sndbuf ? c->o.sndbuf : c->ts->cfg.sndbuf;
}

static inline enum tcp_cc_alg tcp_cc_alg(const struct tcp_conn *c)
{
	return c->o.cc_set ? c->o.cc : c->ts->cfg.cc;
}

/* urgent.c */
/* The URG flag (and *urp) for a segment of ours at seq; 0 when none. */
uint8_t tcp_urg_out(struct tcp_conn *c, uint32_t seq, uint16_t *urp);
/* An acceptable segment in a synchronized state (RFC 9293 3.10.7.4, sixth
 * check): its pointer, and the urgent byte if its text holds it. */
void tcp_urg_input(struct tcp_conn *c, const struct rte_mbuf *m, const struct tcp_urg_seg *u);
/* After text was queued: an urgent byte now in order gets its mark and
 * leaves the stream (unless SO_OOBINLINE). */
void tcp_urg_deliver(struct tcp_conn *c);
/* tcp_recv's length cut at the urgent mark (a read stops there). */
size_t tcp_urg_read_limit(const struct tcp_conn *c, size_t len);

/* tcb_chrono.c: the chronograph that fits c's state now starts (the
 * running one stops); after every output. */
void tcp_chrono_update(struct tcp_conn *c);
/* The time each has run, the running one to now, in ns. */
void tcp_chrono_read(const struct tcp_conn *c, uint64_t out[TCP_CHRONO_COUNT]);

/* Every state change of a TCB in its stack's tables: the state gauges
 * move with it (tcp.h TCP_STATE_GAUGES). */
/* The synchronized states in which data (or our FIN) may still go: the
 * send loop, a Tail Loss Probe and a path-MTU resend all ask this. */
static inline bool tcb_state_sends_data(const struct tcp_conn *c)
{
	return c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT ||
	       c->state == TCP_FIN_WAIT_1 || c->state == TCP_CLOSING || c->state == TCP_LAST_ACK;
}

static inline void tcb_set_state(struct tcp_conn *c, enum tcp_state s)
{
	c->ts->nstate[c->state]--;
	c->ts->nstate[s]++;
	c->state = s;
}

static inline uint64_t tcp_now(const struct tcp_conn *c)
{
	return us_timer_now(c->ts->env.wheel);
}

/* The congestion-control module with the TCB's cwnd and ssthresh loaded;
 * initialised on first use (the send MSS and IW are known by then). */
static inline struct tcp_cc *tcp_cc_load(struct tcp_conn *c)
{
	if (!c->cc.ready)
		tcp_cc_init(&c->cc, tcp_cc_alg(c), c->mss, c->cwnd, c->ssthresh, &c->ts->stats);
	c->cc.ss_all_acked = tcp_profile_linux(c->ts);
	c->cc.smss = c->mss;
	c->cc.cwnd = c->cwnd;
	c->cc.ssthresh = c->ssthresh;
	return &c->cc;
}

static inline void tcp_cc_store(struct tcp_conn *c)
{
	c->cwnd = c->cc.cwnd;
	c->ssthresh = c->cc.ssthresh;
}

/* Data bytes queued but not yet sent. */
static inline uint32_t tcp_sndq_end(const struct tcp_conn *c)
{
	return c->sndq_seq + c->sndq.bytes;
}

/* Queued bytes never sent (a go-back-N resend below SND.MAX is not
 * counted): TCP_NOTSENT_LOWAT's and SIOCOUTQNSD's measure. */
static inline uint32_t tcp_sndq_unsent(const struct tcp_conn *c)
{
	uint32_t end = tcp_sndq_end(c);

	return SEQ_GT(end, c->snd_max) ? end - c->snd_max : 0;
}

#endif
