/* us_socket.h: POSIX-shaped, non-blocking sockets and epoll-shaped readiness
 * (part of libuserstack; include userstack.h).
 *
 * Porting an epoll service is renaming: socket -> us_socket, epoll_wait ->
 * us_epoll_wait, struct epoll_event -> struct us_epoll_event, SO_* ->
 * US_SO_*, ...  Addresses are the system's: struct sockaddr_in on an
 * AF_INET socket, struct sockaddr_in6 on an AF_INET6 one.  An AF_INET6
 * socket is dual-stack (RFC 3493 3.7): it reaches IPv4 peers through
 * v4-mapped addresses (::ffff:a.b.c.d), in what it is given and what it
 * reports, unless US_IPV6_V6ONLY is set.
 *
 * Threads and engines: every socket belongs to one engine (one lcore, one
 * queue per port) and may be used only by the thread driving that engine.
 * us_init() binds the calling thread to engine 0; us_socket() and
 * us_epoll_create() create on the calling thread's engine.  File descriptors
 * are not kernel fds: they are small integers private to libuserstack and
 * never collide across engines.
 *
 * Everything is non-blocking: a call that would block fails with EAGAIN
 * (us_connect with EINPROGRESS); us_epoll_wait() is where the engine runs
 * (it polls the NIC, processes what arrived, runs timers, sends) and, with a
 * timeout, the only call that waits.
 *
 * Errors: -1 with errno, with the POSIX meanings: EBADF (not a descriptor),
 * ENOTSOCK (an epoll descriptor given to a socket call), EINVAL (bad
 * argument or state, e.g. us_accept on a non-listener), ENOTCONN, EISCONN,
 * EALREADY, EINPROGRESS, EAGAIN, EPIPE (sending after shutdown or after the
 * connection ended), ECONNRESET, ECONNREFUSED, ETIMEDOUT (reported once,
 * then EPIPE on send and 0 on recv, as Linux does), EADDRINUSE,
 * EADDRNOTAVAIL, EAFNOSUPPORT, EPROTONOSUPPORT, ENOPROTOOPT, EOPNOTSUPP,
 * EMFILE (descriptor table full), ENOMEM.  No call raises SIGPIPE.
 */
#ifndef US_SOCKET_H
#define US_SOCKET_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Constants: the values are Linux's, so a port that forgets a rename still
 * means the same thing. */

/* setsockopt/getsockopt levels and names.  Values, ranges, units and
 * errnos are Linux's (socket(7), ip(7), tcp(7)); where they differ,
 * docs/API.md's option table says how.  Options set on a listener are
 * its accepted sockets'. */
#define US_SOL_SOCKET 1
#define US_IPPROTO_IP 0
#define US_IPPROTO_TCP 6
#define US_IPPROTO_IPV6 41
#define US_SO_REUSEADDR 2  /* int; accepted and reported (listeners never
			    * conflict with TIME-WAIT connections here) */
#define US_SO_TYPE 3       /* int, get only: SOCK_STREAM or SOCK_DGRAM */
#define US_SO_ERROR 4      /* int, get only: the pending error, cleared */
#define US_SO_SNDBUF 7     /* int: this socket's send buffer; reported doubled */
#define US_SO_RCVBUF 8     /* int: this socket's receive buffer, not autotuned
			    * once set; reported doubled (the window is about
			    * the value set, as Linux's); unset, get reports
			    * the connection's (autotuned) buffer */
#define US_SO_KEEPALIVE 9  /* int: RFC 9293 3.8.4 probes (TCP_KEEP* or [tcp]) */
#define US_SO_OOBINLINE 10 /* int: TCP urgent data stays in the stream
			     * (us_recv reads it; MSG_OOB is EINVAL) */
#define US_SO_LINGER 13    /* struct linger: {1, 0} makes us_close send RST;
			    * a non-zero time is a graceful close (never blocks) */
#define US_SO_REUSEPORT 15 /* int, before bind: TCP listeners that all set it
			    * share a port, each peer's connections going to
			    * one of them (UDP: accepted, no sharing) */
#define US_SO_RCVLOWAT 18  /* int: EPOLLIN once this many bytes are queued */
#define US_SO_ACCEPTCONN 30 /* int, get only: listening */
#define US_SO_PROTOCOL 38  /* int, get only: IPPROTO_TCP or IPPROTO_UDP */
#define US_SO_DOMAIN 39    /* int, get only: AF_INET or AF_INET6 */
#define US_IP_TOS 1        /* int (or a byte): TOS of our IPv4 segments, TCP
			    * only; the ECN bits stay TCP's */
#define US_IP_TTL 2        /* int 1..255, -1 the default (64): TCP only */
#define US_TCP_NODELAY 1   /* int: Nagle off */
#define US_TCP_MAXSEG 2    /* int 88..65535 (0: none): caps the MSS we
			    * announce and send with, set before connect or
			    * listen; get: the connection's send MSS, or
			    * the value set (536 if none) before one */
#define US_TCP_CORK 3      /* int: partial segments wait until full, the
			    * cork is removed, or 200 ms; wins over
			    * TCP_NODELAY, whose setting pushes what waits */
#define US_TCP_KEEPIDLE 4  /* int s 1..32767 */
#define US_TCP_KEEPINTVL 5 /* int s 1..32767 */
#define US_TCP_KEEPCNT 6   /* int 1..127 */
#define US_TCP_SYNCNT 7    /* int 1..127: SYN (SYN-ACK) retransmissions;
			    * default [tcp] syn_retries (listeners'
			    * embryos: synack_retries) */
#define US_TCP_LINGER2 8   /* int s: FIN-WAIT-2 of a closed connection
			    * (max 120, 0 default, -1: RST at close) */
#define US_TCP_DEFER_ACCEPT 9 /* int s, listener: accept once data came
			    * (a bare handshake ACK dropped) or the time passed */
#define US_TCP_INFO 11     /* struct us_tcp_info, get only */
#define US_TCP_CONGESTION 13 /* char[16]: "cubic", "reno" (also "newreno");
			    * ENOENT for another */
#define US_TCP_USER_TIMEOUT 18 /* int ms >= 0: data unacknowledged this long
			    * aborts the connection (ETIMEDOUT); 0 off */
#define US_TCP_NOTSENT_LOWAT 25 /* int: writable (EPOLLOUT, us_send) only
			    * while fewer bytes wait unsent; -1 no bound */
#define US_TCP_FASTOPEN_KEY 33 /* 16 or 32 bytes: the engine's Fast Open
			    * key (and backup), never rotated after */
#define US_TCP_INQ 36      /* int 0/1: kept and reported (no recvmsg; use
			    * us_ioctl(US_FIONREAD)) */
#define US_TCP_QUICKACK 12 /* int, default 1; 0: the ACK completing connect
			    * and the ACK of the peer's FIN wait one engine
			    * iteration for our request or close to carry
			    * them (Linux's pingpong mode; sticky here) */
/* TCP Fast Open (RFC 7413), off unless asked for (or [tcp] fastopen):
 * US_TCP_FASTOPEN, int qlen >= 0, on a fresh (bound or not) socket or a
 * listener: Fast Open on the listener with at most qlen connections
 * accepted at their SYN and not yet through the handshake
 * (PendingFastOpenRequests, RFC 7413 5.1); 0 turns it off; EINVAL on a
 * connecting or connected socket, as Linux.  get reports the qlen set.
 * US_TCP_FASTOPEN_CONNECT, int 0/1, on a fresh socket (EINVAL otherwise):
 * with a cookie cached for the server us_connect returns 0 at once, the
 * socket is writable and the first us_send (or us_sendto with
 * US_MSG_FASTOPEN) goes out in the SYN, its bytes counted as queued
 * (until then us_getsockname gives the source address that SYN will
 * carry, of the peer's family, with port 0: Linux has chosen the port
 * already); without one us_connect is an ordinary -1/EINPROGRESS whose
 * SYN asks for a cookie (Linux's tcp_fastopen_defer_connect). */
#define US_TCP_FASTOPEN 23
#define US_TCP_FASTOPEN_CONNECT 30
/* US_IPPROTO_IPV6 level, AF_INET6 sockets only (ENOPROTOOPT on AF_INET):
 * US_IPV6_V6ONLY, int 0/1, default 0 (Linux's net.ipv6.bindv6only = 0):
 * 1 makes the socket IPv6 only (RFC 3493 5.3): no IPv4 peers, a bind to
 * :: leaves the port's IPv4 side to another socket.  Set before bind or
 * connect (EINVAL after).  Binding an IPv6 address of ours (not :: nor
 * v4-mapped) turns it on, as Linux does. */
#define US_IPV6_V6ONLY 26

/* send/recv flags */
#define US_MSG_OOB 0x01           /* TCP: us_send's last byte is urgent data
				   * (RFC 9293 3.8.5); us_recv reads the one
				   * urgent byte (EINVAL: none or read,
				   * EAGAIN: its pointer came, not the byte) */
#define US_MSG_PEEK 0x02          /* us_recv/us_recvfrom: leave the data queued */
#define US_MSG_TRUNC 0x20         /* UDP: return the datagram's whole length;
				   * TCP: drop len bytes, not copied */
#define US_MSG_WAITALL 0x100      /* accepted: returns what is there (never blocks) */
#define US_MSG_MORE 0x8000        /* us_send: more follows, hold a partial
				   * segment (like TCP_CORK for this send) */
#define US_MSG_DONTWAIT 0x40      /* accepted, always implied */
#define US_MSG_NOSIGNAL 0x4000    /* accepted, always implied */
#define US_MSG_FASTOPEN 0x20000000 /* us_sendto: connect + data in the SYN */

/* us_ioctl requests (int *arg), Linux's values */
#define US_FIONREAD 0x541B        /* bytes readable (UDP: the next datagram's) */
#define US_SIOCINQ US_FIONREAD
#define US_SIOCOUTQ 0x5411        /* TCP: bytes queued, not yet acknowledged */
#define US_SIOCOUTQNSD 0x894B     /* TCP: bytes queued, not yet sent */
#define US_SIOCATMARK 0x8905      /* TCP: 1 when the next read starts at the
				   * urgent mark */

/* us_shutdown */
#define US_SHUT_RD 0
#define US_SHUT_WR 1
#define US_SHUT_RDWR 2

/* us_socket type flags, accepted and implied */
#define US_SOCK_NONBLOCK 04000
#define US_SOCK_CLOEXEC 02000000

/* epoll */
#define US_EPOLLIN 0x001u
#define US_EPOLLPRI 0x002u   /* TCP: an urgent byte waits (us_recv MSG_OOB) */
#define US_EPOLLOUT 0x004u
#define US_EPOLLERR 0x008u   /* always reported */
#define US_EPOLLHUP 0x010u   /* always reported */
#define US_EPOLLRDHUP 0x2000u
#define US_EPOLLONESHOT (1u << 30)
#define US_EPOLLET (1u << 31)
#define US_EPOLL_CTL_ADD 1
#define US_EPOLL_CTL_DEL 2
#define US_EPOLL_CTL_MOD 3

/* Types */

typedef union us_epoll_data {
	void *ptr;
	int fd;
	uint32_t u32;
	uint64_t u64;
} us_epoll_data_t;

struct us_epoll_event {
	uint32_t events;
	us_epoll_data_t data;
};

/* US_TCP_INFO: Linux's struct tcp_info field for field (through Linux
 * 6.7's tcpi_total_rto_time), same units: times in microseconds except
 * the tcpi_last_* ones (milliseconds), windows and byte counts in bytes,
 * cwnd, ssthresh and the packet counts in segments.  tcpi_state takes
 * Linux's values (US_TCP_ESTABLISHED ...), tcpi_ca_state Linux's TCP_CA_*.
 * A field we cannot fill is 0; docs/API.md lists them. */
struct us_tcp_info {
	uint8_t tcpi_state;
	uint8_t tcpi_ca_state;
	uint8_t tcpi_retransmits;  /* RTOs in a row */
	uint8_t tcpi_probes;       /* unanswered zero-window or keepalive probes */
	uint8_t tcpi_backoff;
	uint8_t tcpi_options;      /* US_TCPI_OPT_* */
	uint8_t tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4;
	uint8_t tcpi_delivery_rate_app_limited : 1, tcpi_fastopen_client_fail : 2;

	uint32_t tcpi_rto;
	uint32_t tcpi_ato;
	uint32_t tcpi_snd_mss;
	uint32_t tcpi_rcv_mss;

	uint32_t tcpi_unacked;     /* segments in flight; listener: accept queue */
	uint32_t tcpi_sacked;      /* segments SACKed; listener: its backlog */
	uint32_t tcpi_lost;
	uint32_t tcpi_retrans;
	uint32_t tcpi_fackets;

	uint32_t tcpi_last_data_sent;
	uint32_t tcpi_last_ack_sent; /* 0, as Linux */
	uint32_t tcpi_last_data_recv;
	uint32_t tcpi_last_ack_recv;

	uint32_t tcpi_pmtu;
	uint32_t tcpi_rcv_ssthresh;
	uint32_t tcpi_rtt;
	uint32_t tcpi_rttvar;
	uint32_t tcpi_snd_ssthresh;
	uint32_t tcpi_snd_cwnd;
	uint32_t tcpi_advmss;
	uint32_t tcpi_reordering;

	uint32_t tcpi_rcv_rtt;
	uint32_t tcpi_rcv_space;

	uint32_t tcpi_total_retrans;

	uint64_t tcpi_pacing_rate;
	uint64_t tcpi_max_pacing_rate;
	uint64_t tcpi_bytes_acked;
	uint64_t tcpi_bytes_received;
	uint32_t tcpi_segs_out;
	uint32_t tcpi_segs_in;

	uint32_t tcpi_notsent_bytes;
	uint32_t tcpi_min_rtt;     /* UINT32_MAX before a sample, as Linux */
	uint32_t tcpi_data_segs_in;
	uint32_t tcpi_data_segs_out;

	uint64_t tcpi_delivery_rate; /* bytes per second */

	uint64_t tcpi_busy_time;
	uint64_t tcpi_rwnd_limited;
	uint64_t tcpi_sndbuf_limited;

	uint32_t tcpi_delivered;
	uint32_t tcpi_delivered_ce;

	uint64_t tcpi_bytes_sent;
	uint64_t tcpi_bytes_retrans;
	uint32_t tcpi_dsack_dups;
	uint32_t tcpi_reord_seen;

	uint32_t tcpi_rcv_ooopack;

	uint32_t tcpi_snd_wnd;
	uint32_t tcpi_rcv_wnd;

	uint32_t tcpi_rehash;

	uint16_t tcpi_total_rto;
	uint16_t tcpi_total_rto_recoveries;
	uint32_t tcpi_total_rto_time;
};
/* tcpi_options, Linux's TCPI_OPT_*; SYN_DATA: RFC 7413, the SYN's data
 * was acknowledged by the SYN-ACK (client) or accepted with the SYN
 * (server). */
#define US_TCPI_OPT_TIMESTAMPS 1
#define US_TCPI_OPT_SACK 2
#define US_TCPI_OPT_WSCALE 4
#define US_TCPI_OPT_SYN_DATA 32
/* tcpi_ca_state, Linux's TCP_CA_* (CWR never: no ECN). */
#define US_TCP_CA_OPEN 0
#define US_TCP_CA_DISORDER 1
#define US_TCP_CA_RECOVERY 3
#define US_TCP_CA_LOSS 4
/* tcpi_state, Linux's TCP_* states. */
#define US_TCP_ESTABLISHED 1
#define US_TCP_SYN_SENT 2
#define US_TCP_SYN_RECV 3
#define US_TCP_FIN_WAIT1 4
#define US_TCP_FIN_WAIT2 5
#define US_TCP_TIME_WAIT 6
#define US_TCP_CLOSE 7
#define US_TCP_CLOSE_WAIT 8
#define US_TCP_LAST_ACK 9
#define US_TCP_LISTEN 10
#define US_TCP_CLOSING 11

/* Prototypes: sockets */

/* AF_INET or AF_INET6 with SOCK_STREAM (TCP) or SOCK_DGRAM (UDP); type may
 * carry US_SOCK_NONBLOCK and US_SOCK_CLOEXEC.  Other domains: EAFNOSUPPORT;
 * other types or protocols: EPROTONOSUPPORT.  A descriptor or -1.
 * Address arguments follow Linux: one shorter than the socket family's
 * sockaddr is EINVAL, another family EAFNOSUPPORT (an AF_INET6 UDP socket
 * also takes a sockaddr_in as destination); a v4-mapped address on a
 * US_IPV6_V6ONLY socket is EINVAL to bind and ENETUNREACH as destination.
 * UDP: us_bind (or the first send: an ephemeral port), us_connect sets the
 * default destination and accepts datagrams only from it, us_sendto /
 * us_send send one datagram (EMSGSIZE above 65507 bytes over IPv4, 65527
 * over IPv6; ENOBUFS when the pool is empty; over IPv6 ENETUNREACH without
 * a route or [ip6], EADDRNOTAVAIL without a usable address), us_recvfrom /
 * us_recv return one datagram (truncated to len, the rest discarded; the
 * sender's address in the socket's family), EAGAIN when none waits;
 * EPOLLIN while one waits, EPOLLOUT always.  An AF_INET6 socket bound to
 * :: receives both families; one per port and address (EADDRINUSE when
 * two would receive the same datagram).  Listen, accept, shutdown and the zero-copy
 * calls are TCP only (EOPNOTSUPP). */
int us_socket(int domain, int type, int protocol);
/* INADDR_ANY / :: or the engine's address (an AF_INET6 UDP socket: one of
 * its IPv6 addresses or a v4-mapped one too); port 0 only for a socket that
 * will connect (a client cannot choose its port yet: EOPNOTSUPP at
 * us_connect). */
int us_bind(int fd, const struct sockaddr *addr, socklen_t len);
/* Bound socket only (EDESTADDRREQ otherwise).  backlog bounds the queue of
 * established connections not yet accepted; beyond it they are reset. */
int us_listen(int fd, int backlog);
/* An established connection, or -1/EAGAIN.  addr may be NULL. */
int us_accept(int fd, struct sockaddr *addr, socklen_t *len);
/* Starts the handshake: -1/EINPROGRESS; the socket turns writable
 * (US_EPOLLOUT) when it completes, or reports US_EPOLLERR with the reason
 * in US_SO_ERROR (ECONNREFUSED, ETIMEDOUT). */
int us_connect(int fd, const struct sockaddr *addr, socklen_t len);
/* Bytes queued (maybe fewer than len); -1/EAGAIN when the send buffer is
 * full or the handshake is not done yet. */
ssize_t us_send(int fd, const void *buf, size_t len, int flags);
/* Bytes read; 0 at end of stream (or after US_SHUT_RD); -1/EAGAIN. */
ssize_t us_recv(int fd, void *buf, size_t len, int flags);
/* UDP: to addr (or the connected peer when addr is NULL: EDESTADDRREQ if
 * none).  TCP: addr is ignored; an unconnected socket gives ENOTCONN.
 *
 * TCP with US_MSG_FASTOPEN (RFC 7413; us_send with the flag is us_sendto
 * without an address): on a fresh socket, connect to addr and send buf in
 * the SYN, as Linux's sendto(MSG_FASTOPEN) on a non-blocking socket does:
 *   - a cookie cached for the server: the SYN carries as many bytes as
 *     the server's cached MSS allows; with [tcp] profile = linux (the
 *     default) only those are taken and returned, as Linux; with rfc the
 *     call returns all the send buffer took, the rest following the
 *     handshake at once (both are short writes to an application that
 *     loops);
 *   - no cookie, or the server marked TFO-unfriendly (RFC 7413 4.1.3):
 *     the SYN asks for a cookie (or is plain), nothing is queued, and the
 *     call fails with EINPROGRESS: send once US_EPOLLOUT says connected;
 *   - EISCONN on a connected socket or a listener, EALREADY while a
 *     connect is under way, EINVAL without addr, the us_connect errors
 *     for addr; on a deferred US_TCP_FASTOPEN_CONNECT socket it is its
 *     first send (addr ignored).  UDP: EOPNOTSUPP (Linux ignores the
 *     flag there). */
ssize_t us_sendto(int fd, const void *buf, size_t len, int flags,
		  const struct sockaddr *addr, socklen_t alen);
/* us_recv plus the sender's address (TCP: the peer's). */
ssize_t us_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr,
		    socklen_t *alen);
int us_shutdown(int fd, int how);
/* Graceful (FIN after queued data) unless SO_LINGER {1, 0} (RST).  Unread
 * received data makes it an RST too (RFC 2525 2.17).  Unaccepted
 * connections of a listener are reset. */
int us_close(int fd);
int us_setsockopt(int fd, int level, int name, const void *val, socklen_t len);
/* US_FIONREAD/US_SIOCINQ, US_SIOCOUTQ, US_SIOCOUTQNSD, US_SIOCATMARK into *arg, as
 * Linux's tcp_ioctl/udp_ioctl: EINVAL on a listener, 0 before the
 * handshake is done, ENOTTY for another request (and SIOCOUTQNSD on UDP),
 * EFAULT for arg NULL. */
int us_ioctl(int fd, unsigned long request, int *arg);
int us_getsockopt(int fd, int level, int name, void *val, socklen_t *len);
int us_getsockname(int fd, struct sockaddr *addr, socklen_t *len);
int us_getpeername(int fd, struct sockaddr *addr, socklen_t *len);

/* Prototypes: zero copy
 *
 * Ownership: us_recv_mbuf hands the caller a chain it owns and must free
 * (us_mbuf_free or rte_pktmbuf_free); its bytes are the stream's next ones,
 * already removed from the socket.  us_send_mbuf takes a chain the caller
 * owns: on success (bytes returned) the stack owns it and frees each
 * segment once the peer acknowledged it, and the caller must not touch it
 * again; on failure (-1) it is still the caller's.  The segments must be
 * direct mbufs with a reference count of 1 (EINVAL otherwise), since
 * later us_send data may be copied into a segment's tail room.  A chain is
 * sent whole or not at all: EAGAIN when the send buffer has no room for
 * all of it, EMSGSIZE when it is larger than the send buffer.  Use
 * rte_mbuf.h to read or fill the data (rte_pktmbuf_mtod, _append). */

struct rte_mbuf;

/* An mbuf from the socket's engine pool (headroom reserved, empty), or
 * NULL + errno (ENOBUFS). */
struct rte_mbuf *us_mbuf_alloc(int fd);
void us_mbuf_free(struct rte_mbuf *m);
/* Bytes in *chain (> 0), 0 at end of stream (*chain NULL), or -1/EAGAIN
 * and the other us_recv errors. */
ssize_t us_recv_mbuf(int fd, struct rte_mbuf **chain, int flags);
/* Bytes queued (the whole chain), or -1 with errno. */
ssize_t us_send_mbuf(int fd, struct rte_mbuf *chain, int flags);

/* Prototypes: readiness */

int us_epoll_create(int size);
int us_epoll_create1(int flags);
/* ADD/MOD/DEL as epoll_ctl(2): EEXIST, ENOENT, EINVAL (fd == epfd, epfd
 * not an epoll descriptor), EPERM (fd is an epoll descriptor). */
int us_epoll_ctl(int epfd, int op, int fd, struct us_epoll_event *ev);
/* Runs the engine until an event is ready or timeout_ms passed (0: one
 * poll; -1: until an event).  Level-triggered by default: a ready socket is
 * reported on every call until the condition goes; US_EPOLLET reports it
 * once per new event (data arriving, room opening, connection accepted,
 * FIN, error).  Returns the number of events. */
int us_epoll_wait(int epfd, struct us_epoll_event *events, int maxevents, int timeout_ms);

/* Prototypes: migration between engines (several engines, us_launch) */

/* Hands connection fd, ESTABLISHED or CLOSE-WAIT, to engine `engine`.  On
 * success fd is closed here (no segment sent, its epoll registrations
 * gone) and the connection appears on the target engine's accept queue of
 * the listener on the same local port, as if accepted there: the server
 * thread of that engine takes it with us_accept, with its unread data,
 * the peer's FIN if one came, and its nodelay/keepalive settings.  If that
 * engine has no such listener or its accept queue is full, the connection
 * is reset there (counted migrate_failed).  A connection may live on the
 * engine RSS gives its 4-tuple or on one other: from the RSS owner to any
 * engine, and from there back to the RSS owner only.
 * -1 and errno: EBADF; EINVAL (not a connected TCP socket, another state,
 * shut down for reading, no such engine or this one, neither this engine
 * nor the target the tuple's RSS owner, one engine only); EBUSY (called
 * from inside the engine loop or a callback, the ring to the target full,
 * or the connection came back here and the frames it had in flight are
 * still returning: try again after the next us_epoll_wait); ENOMEM. */
int us_migrate(int fd, unsigned engine);

#ifdef __cplusplus
}
#endif

#endif
