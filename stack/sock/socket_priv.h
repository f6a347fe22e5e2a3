/* stack/sock/socket_priv.h: the socket layer's state (stack/sock/socket.c,
 * stack/sock/epoll.c).  Private to stack/ and its tests.
 *
 * One descriptor table per engine.  A descriptor is (table slot << 20 |
 * index), so a call finds its engine from the descriptor alone and two
 * engines never hand out the same number.  The table registered in slot k
 * belongs to the thread driving that engine; nothing here is shared.
 *
 * Readiness (epoll.c) follows Linux's ep_poll: every registration (an
 * epitem) sits on its socket's watcher list; tcp/'s callbacks "wake" a
 * socket, which puts its epitems on their epoll's ready list; us_epoll_wait
 * computes each ready item's mask from the socket's state, reports it, and
 * keeps it on the list only when level-triggered.
 */
#ifndef US_SOCKET_PRIV_H
#define US_SOCKET_PRIV_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/queue.h>

#include "stack/base/in6.h"
#include "stack/engine/engine.h"
#include "stack/sock/sock_table.h"
#include "us_socket.h"
#include "tcp/tcp.h"

struct rte_mbuf;

/* Types */

/* X(name, description): the socket layer's counters. */
#define SOCK_COUNTERS(X) \
	X(sock_opened, "sockets created (us_socket, us_accept)") \
	X(sock_accepted, "connections accepted by the application") \
	X(sock_drop_accept_full, "dropped: accept queue at its backlog (RST sent)") \
	X(sock_drop_no_mem, "dropped: no memory for an accepted socket (RST sent)") \
	X(sock_drop_listener_closed, "unaccepted connections reset when their listener closed") \
	X(sock_emfile, "refused: descriptor table full") \
	X(sock_drop_rest_overflow, "dropped: data after both FINs beyond 65535 mbufs") \
	X(udp_rx, "UDP datagrams queued to a socket") \
	X(udp_tx, "UDP datagrams sent") \
	X(udp_tx_no_mbuf, "UDP sends refused: mbuf pool empty (ENOBUFS)") \
	X(udp_drop_rcvbuf, "dropped: UDP socket queue full (rcvbuf or 512 datagrams)") \
	X(udp_drop_not_peer, "dropped: UDP datagram not from a connected socket's peer") \
	X(udp_drop_padding, "dropped: UDP datagram whose link padding spans segments") \
	X(udp_tx6, "UDP datagrams sent over IPv6 (also in udp_tx)") \
	X(epoll_waits, "us_epoll_wait calls") \
	X(epoll_events, "events reported by us_epoll_wait")

struct us_sock_stats {
#define US_SOCK_X_FIELD(name, desc) uint64_t name;
	SOCK_COUNTERS(US_SOCK_X_FIELD)
#undef US_SOCK_X_FIELD
};

enum us_sock_kind { US_SK_TCP = 1, US_SK_EPOLL, US_SK_UDP };

#define US_UDP_QUEUE 512u /* datagrams queued per UDP socket */

enum us_sock_state {
	US_SS_NEW,        /* fresh, maybe bound */
	US_SS_LISTEN,
	US_SS_CONNECTING, /* SYN sent */
	US_SS_CONNECTED,  /* accepted or connected */
	US_SS_ENDED,      /* tcp/ let go of the connection (on_closed) */
};

struct us_sock;
struct us_sock_table;

struct us_epitem {
	LIST_ENTRY(us_epitem) sock_link;   /* on the socket's watchers */
	LIST_ENTRY(us_epitem) ep_link;     /* on the epoll's items */
	TAILQ_ENTRY(us_epitem) ready_link; /* on the epoll's ready list */
	struct us_sock *ep, *s;
	uint32_t events;                   /* interest, with ET/ONESHOT */
	us_epoll_data_t data;
	bool ready, disabled;
};

LIST_HEAD(us_epitem_list, us_epitem);
TAILQ_HEAD(us_epitem_queue, us_epitem);

struct us_sock {
	struct us_sock_table *tab;
	int fd;                         /* -1 until accepted */
	enum us_sock_kind kind;
	enum us_sock_state state;
	struct us_epitem_list watchers; /* epoll registrations of this socket */
	/* AF_INET or AF_INET6 (us_socket): the family of every address the
	 * socket's calls take and give (sockaddr.c).  An AF_INET6 socket
	 * reaches IPv4 peers through v4-mapped addresses unless v6only
	 * (IPV6_V6ONLY, RFC 3493 5.3; off by default, as Linux's
	 * net.ipv6.bindv6only = 0). */
	uint8_t family;
	bool v6only;

	/* Addresses, both families as struct us_in6 (IPv4 ones v4-mapped).
	 * lip: an AF_INET socket's is the engine's address once bound (an
	 * engine has one); an AF_INET6 socket's is what it was bound to (::
	 * for every address), the source chosen at connect when that was a
	 * wildcard, as Linux does. */
	struct us_in6 lip, rip;
	uint16_t lport, rport;

	/* TCP */
	struct tcp_conn *tc;            /* NULL when NEW, LISTEN or ENDED */
	bool bound, shut_rd, shut_wr, eof;
	int so_error;                   /* pending, reported once */
	bool reuseaddr, reuseport, keepalive, nodelay;
	bool quickack_off;              /* US_TCP_QUICKACK 0 */
	/* Options (socket_opt.c, socket_opt_tcp.c).  o: what tcp/ applies
	 * (tcp_conn_opts), kept here before the connection exists and handed
	 * to it at connect and listen; an accepted socket has its listener's. */
	struct tcp_conn_opts o;
	bool linger_on;                 /* SO_LINGER; linger_s 0: RST at close */
	int linger_s;
	bool rcvbuf_set, sndbuf_set;    /* SO_RCVBUF/SO_SNDBUF given (o has the size) */
	uint32_t rcvlowat;              /* SO_RCVLOWAT, at least 1 */
	bool inq;                       /* TCP_INQ */
	/* SO_REUSEPORT group (socket_reuseport.c): every member's rp_owner
	 * is the socket owning tcp/'s listener, NULL when alone; members
	 * listed from the owner through rp_next. */
	struct us_sock *rp_owner, *rp_next;
	struct rte_mbuf *rest;          /* data kept after both FINs (tcp_recv_take) */
	uint32_t rest_off;              /* bytes of rest's first segment already read */
	/* Listener: established connections not accepted yet, FIFO. */
	STAILQ_HEAD(, us_sock) acceptq;
	STAILQ_ENTRY(us_sock) accept_link;
	struct us_sock *listener;       /* set while on a listener's acceptq */
	unsigned nacceptq, backlog;
	/* TCP Fast Open (stack/sock/socket_tfo.c): US_TCP_FASTOPEN's qlen, kept
	 * until listen; US_TCP_FASTOPEN_CONNECT; a connect deferred to the
	 * first send (CONNECTING with tc NULL, peer in rip/rport). */
	uint32_t tfo_qlen;
	bool tfo_qlen_set, tfo_connect, tfo_defer;

	/* UDP: received datagrams (data at the UDP header), a ring of
	 * US_UDP_QUEUE, their source addresses in the parallel ring dq_src;
	 * the next socket bound to the same port (us_sock_table.udp_ports). */
	struct rte_mbuf **dq;
	struct us_in6 *dq_src;
	unsigned dq_head, dq_n;
	uint32_t dq_bytes;
	struct us_sock *udp_port_next;

	/* Epoll */
	struct us_epitem_list items;
	struct us_epitem_queue readyq;
};

struct us_sock_table {
	struct us_engine *e;
	struct tcp_stack *ts;
	struct us_sock_driver drv;
	unsigned slot;
	uint32_t sndbuf, rcvbuf;        /* the engine's [tcp] sizes (SO_SNDBUF/RCVBUF) */
	struct us_sock **socks;         /* indexed by fd & (US_FD_MAX_PER_TABLE - 1) */
	struct us_sock **udp_ports;     /* UDP sockets by port, a list each (65536, on first use) */
	unsigned udp_next;              /* next ephemeral UDP port to try */
	unsigned cap, nfree;
	unsigned *free_idx;             /* stack of free indices */
	struct us_sock_stats stats;
};

/* Prototypes */

/* The calling thread's table (NULL before us_init / bind_thread). */
struct us_sock_table *us_sock_table_current(void);

/* Shared by socket.c and epoll.c */
int us_sock_lookup(int fd, struct us_sock **out); /* 0 or -EBADF */
int us_sock_alloc(struct us_sock_table *tab, enum us_sock_kind kind, struct us_sock **out);
void us_sock_release(struct us_sock *s);          /* frees the fd slot and s */
/* Current readiness (US_EPOLL* bits) of a TCP socket. */
uint32_t us_sock_poll(struct us_sock *s);
/* Readiness may have changed: queue s's epoll registrations. */
void us_sock_wake(struct us_sock *s);
/* Drops every registration of s (closing s). */
void us_sock_unwatch(struct us_sock *s);
/* Frees an epoll descriptor's registrations (closing it). */
void us_epoll_close(struct us_sock *ep);
/* sockaddr.c: the address arguments of the socket calls, in s's family.
 * IPv4 addresses come out and go in v4-mapped (::ffff:a.b.c.d). */

/* A local name (us_bind): a sockaddr_in on an AF_INET socket, a
 * sockaddr_in6 on an AF_INET6 one, v4-mapped allowed unless s->v6only.
 * Linux's errors (inet_bind, inet6_bind): EINVAL when len is short for s's
 * family (or addr NULL) or a v4-mapped address on a v6only socket,
 * EAFNOSUPPORT for another family.  0 or -errno. */
int us_sock_addr_get(const struct us_sock *s, const struct sockaddr *addr, socklen_t len,
		     struct us_in6 *ip, uint16_t *port);
/* What a destination is for. */
enum us_sock_addr_use {
	US_SA_CONNECT, /* us_connect, and sendto(MSG_FASTOPEN) which connects */
	US_SA_SENDTO,  /* us_sendto on a UDP socket */
};
/* A peer's address (us_connect, us_sendto): us_sock_addr_get's rules, plus
 * Linux's for destinations: an AF_INET6 UDP socket also takes a
 * sockaddr_in (EAFNOSUPPORT to connect, ENETUNREACH to sendto when
 * v6only); a v4-mapped address on a v6only socket is ENETUNREACH; an
 * AF_INET6 UDP sendto of another family EINVAL (udpv6_sendmsg,
 * __ip6_datagram_connect, tcp_v6_connect).  0 or -errno. */
int us_sock_addr_peer(const struct us_sock *s, const struct sockaddr *addr, socklen_t len,
		      enum us_sock_addr_use use, struct us_in6 *ip, uint16_t *port);
/* Writes the name in s's family (a sockaddr_in6 with a v4-mapped address
 * for an IPv4 peer of an AF_INET6 socket), truncated to *len; *len set to
 * the full size.  NULLs ignored. */
void us_sock_addr_put(const struct us_sock *s, const struct us_in6 *ip, uint16_t port,
		      struct sockaddr *addr, socklen_t *len);
/* 0.0.0.0 (v4-mapped) or ::: a wildcard, never a peer. */
static inline bool us_sock_addr_is_any(const struct us_in6 *ip)
{
	return us_in6_is_unspec(ip) || (us_in6_is_v4mapped(ip) && us_in6_v4(ip) == 0);
}

/* Is ip (not a wildcard) an address of s's engine: its IPv4 address
 * (v4-mapped) or a usable IPv6 one?  What bind accepts (sockaddr.c). */
bool us_sock_addr_ours(const struct us_sock *s, const struct us_in6 *ip);
/* Would sockets bound to names a and b (each with its V6ONLY) on one port
 * take the same packet?  A name takes IPv4 when it is an IPv4 address
 * (v4-mapped; an engine has one) or :: without V6ONLY, IPv6 when it is ::
 * or an IPv6 address (Linux's bind conflicts with bindv6only 0: 0.0.0.0:80
 * and a V6ONLY [::]:80 live side by side).  sockaddr.c. */
bool us_sock_names_overlap(const struct us_in6 *a, bool a_v6only, const struct us_in6 *b,
			   bool b_v6only);
/* 0 for a TCP or UDP socket; -EBADF or -ENOTSOCK. */
int us_sock_any(int fd, struct us_sock **out);
/* s's names (lip, lport, rip, rport) from its connection s->tc. */
void us_sock_tcp_names(struct us_sock *s);
/* Moves unread data to s->rest once both FINs are out. */
void us_sock_keep_rest(struct us_sock *s);
extern const struct tcp_callbacks us_sock_callbacks;

/* socket_opt.c, socket_opt_tcp.c.  Option values as Linux takes them:
 * an int of at least optlen sizeof(int) (EINVAL shorter, EFAULT NULL). */
int us_sock_opt_int(const void *val, socklen_t len, int *out);
/* IPPROTO_TCP level (0 or -errno; ENOPROTOOPT: not an option of ours). */
int us_sock_tcp_setopt(struct us_sock *s, int name, const void *val, socklen_t len);
/* Get: an int in *v (ENOPROTOOPT: not an int option); TCP_INFO,
 * TCP_CONGESTION and TCP_FASTOPEN_KEY write val themselves (*done). */
int us_sock_tcp_getopt(struct us_sock *s, int name, void *val, socklen_t *len, int *v,
		       bool *done);
/* socket_reuseport.c: SO_REUSEPORT groups of listeners on one engine. */
/* May a and b bind the same name?  Both set SO_REUSEPORT. */
bool us_sock_reuseport_shares(const struct us_sock *a, const struct us_sock *b);
/* us_listen: s joins the group listening on its name (true), or is the
 * first and makes tcp/'s listener itself (false). */
bool us_sock_reuseport_join(struct us_sock *s);
/* The member whose accept queue takes connection tc (owner alone: it). */
struct us_sock *us_sock_reuseport_pick(struct us_sock *owner, struct tcp_conn *tc);
/* Closing listener s leaves its group: true when tcp/'s listener stays
 * (other members remain), false when s was alone. */
bool us_sock_reuseport_leave(struct us_sock *s);

/* socket_tcpinfo.c: US_TCP_INFO, Linux's struct tcp_info. */
void us_sock_tcp_info(const struct us_sock *s, struct us_tcp_info *ti);
/* Hands s->o to the connection or the listener, if there is one. */
int us_sock_opts_push(struct us_sock *s);
/* Readiness thresholds: SO_RCVLOWAT and TCP_NOTSENT_LOWAT. */
bool us_sock_readable_enough(const struct us_sock *s, uint32_t readable);
bool us_sock_unsent_low(const struct us_sock *s, uint32_t unsent);

/* socket_tfo.c: RFC 7413 on the socket calls (0/count or -errno). */
int us_sock_tfo_setopt(struct us_sock *s, int name, const void *val, socklen_t len);
int us_sock_tfo_getopt(struct us_sock *s, int name, int *v);
/* us_listen: applies a qlen set before listen. */
int us_sock_tfo_listen(struct us_sock *s);
/* us_sendto(MSG_FASTOPEN) on a TCP socket: bytes queued or -errno
 * (-EINPROGRESS when the SYN carries no data). */
ssize_t us_sock_tfo_sendto(struct us_sock *s, const void *buf, size_t len,
			   const struct sockaddr *addr, socklen_t alen);
/* us_connect with US_TCP_FASTOPEN_CONNECT: 0 (deferred to the first send)
 * or -EINPROGRESS (a cookie request is on its way) or -errno. */
int us_sock_tfo_connect(struct us_sock *s, const struct us_in6 *ip, uint16_t port);
/* The first send (or a shutdown) of a deferred connect: bytes queued. */
ssize_t us_sock_tfo_start(struct us_sock *s, const void *buf, size_t len);

/* socket_udp.c (addresses as sockaddr.c gives them; 0/count or -errno) */
void us_udp_table_init(struct us_sock_table *tab);
void us_udp_table_fini(struct us_sock_table *tab);
int us_udp_open(struct us_sock *s);
void us_udp_close(struct us_sock *s);
int us_udp_bind(struct us_sock *s, const struct us_in6 *ip, uint16_t port);
int us_udp_connect(struct us_sock *s, const struct us_in6 *ip, uint16_t port);
/* dst NULL: to the connected peer. */
ssize_t us_udp_sendto(struct us_sock *s, const void *buf, size_t len, const struct us_in6 *dst,
		      uint16_t dport);
/* The payload length of the next datagram queued, 0 when none. */
uint32_t us_udp_next_len(const struct us_sock *s);
/* peek: MSG_PEEK; trunc: MSG_TRUNC, the datagram's whole length returned. */
ssize_t us_udp_recvfrom(struct us_sock *s, void *buf, size_t len, struct us_in6 *src,
			uint16_t *sport, bool peek, bool trunc);

static inline int us_sock_fail(int rc)
{
	errno = -rc;
	return -1;
}

#endif
