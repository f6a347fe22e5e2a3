/* userstack.h: the public API of libuserstack.
 *
 * Two ways to drive the engine, on the same stack:
 * - POSIX-shaped, non-blocking sockets with epoll-shaped readiness
 *   (us_socket.h, included below): us_epoll_wait() polls the NIC.
 * - The callback-shaped run loop (below): the application registers handlers
 *   and calls us_run(), which polls the NIC and runs the handlers inline on
 *   the engine's core (run-to-completion, no locks).  Its calls on a
 *   connection carry a us_conn_ prefix so they never clash with the POSIX
 *   names.
 *
 * Conventions: functions return 0 (or a count) on success and -1 with errno
 * set on failure; constructors return NULL with errno set.  No DPDK type
 * appears here but struct rte_mbuf, declared only, for the zero-copy calls.
 */
#ifndef USERSTACK_H
#define USERSTACK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "us_socket.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Types */

struct us_stack; /* EAL, port, engine(s) */
struct us_conn;  /* one TCP connection */

struct us_tcp_handlers {
	/* A connection was accepted on a listener; set its ctx here. */
	void (*on_accept)(void *listen_ctx, struct us_conn *c);
	/* Data (or end of stream: us_conn_recv returns 0) is readable. */
	void (*on_readable)(void *ctx, struct us_conn *c);
	/* Room in the send buffer again (half of it free) after us_conn_send
	 * or us_conn_send_mbuf failed with EAGAIN. */
	void (*on_writable)(void *ctx, struct us_conn *c);
	/* The connection ended without the application closing it (reset,
	 * timeout, or both directions closed); err is 0 or an errno.  c is
	 * invalid once this returns. */
	void (*on_closed)(void *ctx, struct us_conn *c, int err);
};

/* Prototypes: life cycle */

/* Load the INI config, start EAL, bring up the port, create the engine.
 * Problems are printed to stderr with what to fix; NULL + errno. */
struct us_stack *us_init(const char *config_path, const char *argv0);
/* Run the engine loop until *stop becomes non-zero (signal handlers set it).
 * With several engines, every engine runs its loop on its own lcore (as
 * us_launch with us_run_engine) and us_run returns when all have stopped. */
int us_run(struct us_stack *st, volatile int *stop);

/* Prototypes: several engines (docs/API.md "Engines and threads")
 *
 * [engine] count = N (or us_init_with) makes N engines, engine k on the k-th
 * lcore of [eal] lcores (the main lcore is engine 0) and on the port's RX/TX
 * queue k.  Each engine owns its connections, timers and descriptors; only
 * the thread running engine k may call the API on its descriptors and
 * connections.  Frames reaching the wrong queue are handed to the owner. */

/* Start-up options overriding the config file (NULL fields: keep it). */
struct us_init_opts {
	const char *lcores;   /* [eal] lcores, e.g. "0-1" */
	unsigned engines;     /* [engine] count; 0 = keep */
};
/* us_init with overrides; NULL o is us_init. */
struct us_stack *us_init_with(const char *config_path, const char *argv0,
			      const struct us_init_opts *o);
/* Number of engines (1 unless configured otherwise). */
unsigned us_engine_count(const struct us_stack *st);
/* Runs fn(st, k, arg) on engine k's lcore for every k, the calling thread
 * taking engine 0, with that thread's descriptors bound to engine k (its
 * us_socket/us_epoll_wait use and drive engine k).  Returns when every fn
 * has returned: 0, or -1 if one returned < 0 or could not be launched.
 * Call from the thread that called us_init. */
int us_launch(struct us_stack *st, int (*fn)(struct us_stack *st, unsigned engine, void *arg),
	      void *arg);
/* The loop of engine k until *stop: call on engine k's thread (in fn). */
int us_run_engine(struct us_stack *st, unsigned engine, volatile int *stop);
/* Close every connection, stop the port, free everything, clean up EAL. */
void us_fini(struct us_stack *st);
/* "10.77.0.2" etc.: the stack's IPv4 address as text. */
const char *us_local_addr(const struct us_stack *st);
/* "fd00:77::2" etc.: the configured IPv6 address ([ip6] addr) as text, or
 * NULL when IPv6 is off or has only its link-local address. */
const char *us_local_addr6(const struct us_stack *st);
/* Every counter, one per line. */
void us_print_stats(const struct us_stack *st, FILE *out);

/* Prototypes: TCP */

/* Listens on port on every engine (like SO_REUSEPORT): each engine accepts
 * the connections it owns and calls h on its own thread, so with several
 * engines ctx is shared between threads. */
int us_tcp_listen(struct us_stack *st, uint16_t port, const struct us_tcp_handlers *h,
		  void *ctx);
/* Listens on engine k only, with a ctx of that engine's own (call once per
 * engine for per-engine state without sharing). */
int us_tcp_listen_engine(struct us_stack *st, unsigned engine, uint16_t port,
			 const struct us_tcp_handlers *h, void *ctx);
/* TCP Fast Open (RFC 7413) on the listener(s) on port: data in a SYN with
 * a valid cookie is accepted with the connection, before the handshake
 * completes; at most qlen such connections pending (qlen 0: off). */
int us_listen_set_fastopen(struct us_stack *st, uint16_t port, unsigned qlen);
void us_conn_set_ctx(struct us_conn *c, void *ctx);
/* Bytes read; 0 at end of stream; -1/EAGAIN when nothing is there yet. */
ssize_t us_conn_recv(struct us_conn *c, void *buf, size_t len);
/* Bytes queued (maybe fewer than len); -1/EAGAIN when full, EPIPE after close. */
ssize_t us_conn_send(struct us_conn *c, const void *buf, size_t len);
/* Free send-buffer space in bytes: what us_conn_send_mbuf can take now. */
size_t us_conn_send_space(const struct us_conn *c);
/* Zero copy, with the ownership rules and errors of us_recv_mbuf and
 * us_send_mbuf (us_socket.h, "zero copy"): the received payload mbufs
 * themselves, the caller's to free (us_mbuf_free); a chain of direct,
 * unshared mbufs queued whole or not at all (EAGAIN, then on_writable;
 * EMSGSIZE when larger than the send buffer; on failure it stays the
 * caller's).  A chain may be received on one connection and sent on
 * another (or back on the same: an echo without a copy). */
/* Bytes in *chain (> 0); 0 at end of stream (*chain NULL); -1/EAGAIN when
 * nothing is there yet, EFAULT when chain is NULL. */
ssize_t us_conn_recv_mbuf(struct us_conn *c, struct rte_mbuf **chain);
/* Bytes queued (the whole chain), or -1 with errno. */
ssize_t us_conn_send_mbuf(struct us_conn *c, struct rte_mbuf *chain);
/* Stop sending (FIN after queued data); reading goes on. */
int us_conn_shutdown_write(struct us_conn *c);
/* Graceful close; c must not be used afterwards and on_closed is not called. */
int us_conn_close(struct us_conn *c);
/* Abortive close (RST). Same rule as us_conn_close. */
int us_conn_abort(struct us_conn *c);
/* TCP_NODELAY: send small segments at once instead of waiting for the ACK
 * of earlier small data (Nagle, on by default).  Request/response servers
 * that write a reply in several calls want this on. */
int us_conn_set_nodelay(struct us_conn *c, int on);
/* SO_KEEPALIVE: probe an idle connection ([tcp] keepalive_* timings). */
int us_conn_set_keepalive(struct us_conn *c, int on);
/* Hands an ESTABLISHED or CLOSE-WAIT connection to engine `engine` (rules
 * and errors as us_migrate in us_socket.h; EBUSY here only when too many
 * moves wait).  Called from a handler, the move happens when the engine's
 * loop iteration ends.  On 0, c is gone for the caller (no more handlers,
 * like us_conn_close) and the target engine's listener on the same port
 * gets on_accept for it, then on_readable if data or a FIN waits. */
int us_conn_migrate(struct us_conn *c, unsigned engine);
/* Number of live connections on the stack (all states). */
unsigned us_conn_count(const struct us_stack *st);

#ifdef __cplusplus
}
#endif

#endif
