/* tcp/tcp_config.h: what tcp/ can be configured with ([tcp] in the INI
 * file), its defaults, and the names its choices are spelled with.
 *
 * Types only and no other header of ours, so that config/ parses [tcp] into
 * struct tcp_config without compiling against the rest of tcp/.  The name
 * tables are the one spelling of each choice: config/ parses with them
 * (and lists them in its error messages), the stack prints with them.
 */
#ifndef US_TCP_CONFIG_H
#define US_TCP_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

/* Congestion control algorithm (tcp/cc.h). */
enum tcp_cc_alg {
	TCP_CC_CUBIC = 0, /* RFC 9438, the default */
	TCP_CC_NEWRENO,   /* RFC 5681 + RFC 3465 + RFC 6582 */
	TCP_CC_ALG_COUNT
};

/* SYN cookies (tcp/syncookie.c) for a listener whose SYN backlog is full. */
enum tcp_syncookies_mode {
	TCP_SYNCOOKIES_AUTO = 0, /* only while the backlog is full, the default */
	TCP_SYNCOOKIES_ALWAYS,   /* every SYN to a listener (no embryo TCBs) */
	TCP_SYNCOOKIES_OFF,      /* a full backlog drops SYNs */
	TCP_SYNCOOKIES_MODE_COUNT
};

/* Fast recovery algorithm (tcp/recovery.h). */
enum tcp_rec_alg {
	TCP_REC_PRR = 0,
	TCP_REC_PRR_CRB,
	TCP_REC_PRR_SSRB,
	TCP_REC_RFC6675,
	TCP_REC_RATEHALVING,
	TCP_REC_ALG_COUNT
};

/* What starts fast recovery (tcp/loss.c): duplicate ACKs and RFC 6675
 * IsLost, or with SACK RFC 8985 RACK's time-based marks (tcp/rack.c). */
enum tcp_loss_det {
	TCP_LOSS_DUPACK = 0,
	TCP_LOSS_RACK,
	TCP_LOSS_DET_COUNT
};

/* Where the RFCs leave a choice (docs/linux-differences.md): linux makes
 * Linux's, rfc the one userstack made before it followed Linux.  Each
 * choice is one named check (tcp_profile_linux in tcp/tcb.h) at the place
 * it is made:
 *   quick ACKs at the start and after an idle spell (tcb_timers.c),
 *   PSH every half window of a long write (output.c),
 *   slow start by every SMSS acknowledged, not ABC's L = 2 (cc_newreno.c),
 *   Fast Open options and sendto as Linux writes them (fastopen_tcb.c),
 *   timestamps on RSTs once negotiated (options.c). */
enum tcp_profile {
	TCP_PROFILE_LINUX = 0, /* the default */
	TCP_PROFILE_RFC,
	TCP_PROFILE_COUNT
};

#define TCP_FASTOPEN_CLIENT 0x1u
#define TCP_FASTOPEN_SERVER 0x2u

struct tcp_config {
	uint32_t rto_min_ms;      /* default 200 (like Linux) */
	uint32_t rto_initial_ms;  /* default 1000 (RFC 6298) */
	uint32_t rto_max_ms;      /* default 120000 */
	uint32_t time_wait_ms;    /* 2 x MSL, default 60000 */
	uint32_t delack_ms;       /* default 40 */
	uint32_t syn_retries;     /* default 7: SYNs for 255 s (RFC 9293 MUST-23: >= 3 min) */
	/* SYN-ACK retransmissions of a passive open before the embryo goes:
	 * default 5 (about 63 s), like Linux's tcp_synack_retries, so the
	 * half-open connections of a SYN flood clear sooner than a SYN gives
	 * up.  A listener's TCP_SYNCNT overrides it, as in Linux. */
	uint32_t synack_retries;
	uint32_t data_retries;    /* default 15 */
	uint32_t rcvbuf;          /* bytes, default 256 KiB: each connection's first */
	/* Receive-buffer autotuning (tcp/user.c rcvbuf_autotune): a connection's
	 * buffer grows from rcvbuf toward twice what its application reads per
	 * RTT, up to this; rcvbuf_max == rcvbuf turns it off.  Our window scale
	 * is chosen for it.  Default 4 MiB (TCP_RCVBUF_MAX_DEFAULT). */
	uint32_t rcvbuf_max;
	uint32_t sndbuf;          /* bytes, default 256 KiB */
	uint32_t max_conns;       /* TCBs per engine, default 65536 */
	uint32_t backlog;         /* per listener, default 1024 */
	bool wscale;              /* RFC 7323 window scale, default true */
	bool sack;                /* RFC 2018 SACK (and RFC 2883 D-SACK), default true */
	bool timestamps;          /* RFC 7323 timestamps and PAWS, default true */
	bool nodelay_default;     /* false: Nagle on (RFC 9293 3.7.4), as POSIX */
	uint32_t sws_override_ms; /* RFC 9293 3.8.6.2.1 override, default 200 */
	uint32_t keepalive_idle_ms;  /* RFC 1122 4.2.3.6, default 7200000 */
	uint32_t keepalive_intvl_ms; /* default 75000 */
	uint32_t keepalive_probes;   /* unanswered probes before ETIMEDOUT, default 9 */
	enum tcp_syncookies_mode syncookies; /* default TCP_SYNCOOKIES_AUTO */
	uint32_t challenge_ack_limit; /* RFC 5961 7: per engine per second, default 1000 */
	/* RFC 5961 10: each second's budget drawn from [limit/2, limit*3/2)
	 * (like Linux since CVE-2016-5696), default true; false = exact. */
	bool challenge_ack_jitter;
	/* RSTs answering segments to closed ports (RFC 9293 3.10.7.1), per
	 * engine per second; 0 = no limit.  Default 1000, like our ICMP
	 * errors (RFC 1812 4.3.2.8) and FreeBSD's icmplim for closed ports. */
	uint32_t rst_closed_limit;
	/* IPv4: a fragmentation-needed error reporting a next-hop MTU below
	 * this is taken as this MTU, and the connection's segments then go
	 * without DF (Linux's net.ipv4.route.min_pmtu, default 552 like it;
	 * 68..1500).  RFC 1191 4 lets the estimate fall to 68; trusting an
	 * ICMP error that far would let a forged one cut segments to a few
	 * bytes, and clearing DF keeps a path that really is that narrow. */
	uint32_t min_pmtu;
	enum tcp_cc_alg cc;          /* congestion control, default TCP_CC_CUBIC */
	/* RFC 7413 TCP Fast Open (tcp/fastopen_tcb.c), off by default (RFC 7413 3).
	 * fastopen: TCP_FASTOPEN_* bits turning it on for every connect with
	 * data (client) and every listener (server, with fastopen_qlen);
	 * tcp_connect_data(TCP_CONNECT_FASTOPEN) and tcp_set_fastopen() turn
	 * it on for one connection or listener whatever the bits say. */
	uint8_t fastopen;
	uint32_t fastopen_qlen;      /* PendingFastOpenRequests bound, default 16 */
	uint32_t fastopen_rotate_s;  /* generated server key rotation, 0 = never; 3600 */
	/* Server key set in config (like Linux tcp_fastopen_key): never rotated,
	 * so several servers or restarts share cookies. */
	bool fastopen_key_set, fastopen_key_backup;
	uint8_t fastopen_key[2][16];
	enum tcp_rec_alg recovery;   /* fast recovery (tcp/recovery.h), default TCP_REC_PRR */
	bool tlp;                    /* Tail Loss Probe (RFC 8985 7, tcp/tlp.c), default true (Linux) */
	bool undo;                   /* undo spurious reductions (tcp/undo.h), default true (Linux) */
	enum tcp_loss_det loss_detection; /* what starts it, default TCP_LOSS_RACK (Linux) */
	enum tcp_profile profile;    /* default TCP_PROFILE_LINUX */
};

/* 4 MiB: 10 Gbit/s over 3.3 ms of RTT, more than a LAN or memif needs.
 * Below Linux's tcp_rmem[2] (6 MiB) because nothing here takes memory back
 * under pressure (Linux's tcp_mem): a full 4 MiB window at MTU 1500 is ~2,900
 * mbufs, 18 % of the default 16383-mbuf pool, so a few connections at their
 * largest window do not empty it. */
#define TCP_RCVBUF_MAX_DEFAULT (4u << 20)

/* Globals: config names, indexed by the enums above */

extern const char *const tcp_cc_names[TCP_CC_ALG_COUNT];
extern const char *const tcp_syncookies_names[TCP_SYNCOOKIES_MODE_COUNT];
extern const char *const tcp_rec_alg_names[TCP_REC_ALG_COUNT];
extern const char *const tcp_loss_det_names[TCP_LOSS_DET_COUNT];
extern const char *const tcp_profile_names[TCP_PROFILE_COUNT];

/* Prototypes */

void tcp_config_defaults(struct tcp_config *cfg);
/* Name of a value, "?" when out of range. */
const char *tcp_cc_name(enum tcp_cc_alg alg);
const char *tcp_rec_alg_name(enum tcp_rec_alg alg);

#endif
