/* tcp/fastopen_tcb.h: TCP Fast Open (RFC 7413) in the state machine.
 *
 * tcp/fastopen_cookie.c and tcp/fastopen_cache.c hold the pure pieces
 * (option codec, cookies, keys, admission, client cache; tcp/fastopen.h);
 * tcp/fastopen_tcb.c joins them to the TCBs.  The rest of tcp/ calls in at a few marked places only:
 *   - input.c: the listener's SYN (tcp_tfo_server_syn, then the SYN-ACK,
 *     then tcp_tfo_server_notify), the SYN-ACK in SYN-SENT
 *     (tcp_tfo_client_synack), the end of the handshake (tcp_tfo_established);
 *   - options.c: the option on SYNs and SYN-ACKs (tcp_tfo_write_option);
 *   - output.c: data on the client's SYN (tcp_tfo_syn_data_len/_sent) and
 *     a server child's data before the handshake ends (tcp_tfo_may_send);
 *   - established.c / tcb_timers.c / tcb.c: a child accepted at its SYN is the
 *     application's, so its end is reported, and its pending slot returned.
 *
 * Server children: a SYN with a valid cookie and data makes a child that is
 * accepted at once (RFC 7413 4.2.2) but stays on the listener's embryo list
 * (counted in the backlog and in PendingFastOpenRequests, RFC 7413 5.1)
 * until the handshake's ACK; tcp_unlisten detaches such children instead of
 * resetting them.
 */
#ifndef US_TCP_FASTOPEN_TCB_H
#define US_TCP_FASTOPEN_TCB_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/base/timer.h"
#include "tcp/fastopen.h"

/* Types */

struct rte_mbuf;
struct tcp_conn;
struct tcp_seg;
struct tcp_stack;

#define TCP_TFO_CACHE_ENTRIES 1024u
#define TCP_TFO_NEG_TTL_S 3600u /* RFC 7413 4.1.3: like Linux's blackhole timeout */

/* Per TCB (listener, server child or client). */
struct tcp_tfo_conn {
	struct tfo_listener lst;   /* listener only: enabled, qlen, pending */
	struct tfo_opt syn_opt;    /* option for our next SYN / SYN-ACK (NONE: none) */
	bool child;                /* server: accepted at its SYN, handshake pending */
	bool syn_data_acked;       /* tcp_info: SYN data acked (client) or taken (server) */
	/* Client. */
	bool active;               /* this connect tried Fast Open */
	bool syn_data_sent;        /* the first SYN carried data */
	uint32_t syn_data_max;     /* data bytes the SYN may carry */
};

/* Per engine. */
struct tcp_tfo_stack {
	struct tfo_keys keys;      /* server secret: the writer's copy (tcp_tfo_follow) */
	bool follower;             /* keys come from the writer engine, no own rotation */
	struct tfo_counters ctr;
	struct tfo_cache *cache;   /* client cookies by server address */
	struct us_timer rotate;    /* key rotation on the engine's wheel */
};

/* Prototypes */

/* Stack life (tcp_stack.c): keys, cache, rotation timer.  0 or -errno. */
int tcp_tfo_init(struct tcp_stack *ts);
void tcp_tfo_fini(struct tcp_stack *ts);

/* Listeners (tcp_stack.c). */
void tcp_tfo_listener_init(struct tcp_conn *l);
void tcp_tfo_listener_set(struct tcp_conn *l, uint32_t qlen);

/* Server (input.c).  Decides on the SYN's option and data for the embryo c
 * of listener l; returns m if the data was not taken (the caller frees it),
 * NULL if it was (queued on c, m consumed). */
struct rte_mbuf *tcp_tfo_server_syn(struct tcp_conn *l, struct tcp_conn *c, struct rte_mbuf *m,
				    const struct tcp_seg *seg);
/* After the SYN-ACK went out: an accepted child is announced. */
void tcp_tfo_server_notify(struct tcp_conn *c);
/* ack_syn_received: true if c was a child already accepted (its pending
 * slot is returned and it leaves the listener; no second accept). */
bool tcp_tfo_server_established(struct tcp_conn *c);
/* Output in SYN-RECEIVED (RFC 7413 4.2.2: the server may send data before
 * the handshake completes). */
bool tcp_tfo_may_send(const struct tcp_conn *c);
/* tcb_drop: return a child's pending slot. */
void tcp_tfo_on_drop(struct tcp_conn *c);
/* tcp_unlisten: true if c is an accepted child, now detached from its
 * listener (it lives on); false: an ordinary embryo, to be reset. */
bool tcp_tfo_unlisten_detach(struct tcp_conn *c);

/* Options (options.c): the option for a SYN or SYN-ACK, NOP-padded so that
 * room stays 4-aligned; bytes written (0 when none or no room). */
unsigned tcp_tfo_write_option(struct tcp_conn *c, uint8_t *o, unsigned room);

/* Client (tcp_stack.c, output.c, input.c). */
void tcp_tfo_client_connect(struct tcp_conn *c, bool asked);
/* After tcp_tfo_client_connect: the most data the SYN may carry (0: no
 * cookie to send it with). */
uint32_t tcp_tfo_syn_data_room(const struct tcp_conn *c);
uint32_t tcp_tfo_syn_data_len(struct tcp_conn *c);
void tcp_tfo_syn_data_sent(struct tcp_conn *c, uint32_t len);
/* The SYN-ACK in SYN-SENT, before the handshake completes. */
void tcp_tfo_client_synack(struct tcp_conn *c, const struct tcp_seg *seg);
/* tcp_handshake_done: SYN data not acknowledged goes again at once, and the
 * RTO watches data a server child sent during the handshake. */
void tcp_tfo_established(struct tcp_conn *c);
/* An ICMP error about our SYN (RFC 7413 4.1.3). */
void tcp_tfo_client_icmp(struct tcp_conn *c);

#endif
