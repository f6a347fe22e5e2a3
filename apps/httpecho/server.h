/* server.h: the echo server's connections over the public userstack API.
 *
 * Each connection keeps the raw bytes of its current request (growing up to
 * max_header + max_body plus one read) and the output the stack has not
 * taken yet.  Responses are written straight from the request buffer when
 * the send buffer has room; only what us_conn_send leaves over is copied.
 * Bigger echoes with a Content-Length body are streamed instead: the
 * body's received mbufs go back out as they arrive (zero copy), so such a
 * request holds no more than the socket buffers, whatever its size.
 */
#ifndef ECHO_SERVER_H
#define ECHO_SERVER_H

#include <stdint.h>
#include <stdio.h>
#include <sys/queue.h>

#include "http.h"
#include "userstack.h"

/* Types */

/* Connection-level problems, X(name, description); with the refused
 * requests (HTTP_ERRORS, counted per reason) they make up "errors". */
#define ECHO_COUNTERS(X) \
	X(truncated, "peer closed in the middle of a request") \
	X(io_failed, "us_conn_send or us_conn_recv failed other than EAGAIN (aborted)") \
	X(reset, "connection ended by reset or timeout (on_closed with an error)") \
	X(no_memory, "buffer allocation failed (connection aborted)")

struct echo_counters {
	uint64_t requests;    /* echo responses queued */
	uint64_t streamed;    /* of them (or begun): body sent back as it arrived */
	uint64_t stream_copied; /* streamed parts the stack would not take as
				 * mbufs (indirect or shared): sent by copy */
	uint64_t connections; /* accepted (migrated-in ones included) */
	uint64_t migrated;    /* handed to another engine (--migrate-every) */
	uint64_t migrate_refused; /* us_conn_migrate said no: served on here */
	uint64_t refused[HTTP_ERR_COUNT]; /* error responses, per parser reason */
#define ECHO_CTR_FIELD(name, desc) uint64_t name;
	ECHO_COUNTERS(ECHO_CTR_FIELD)
#undef ECHO_CTR_FIELD
};

struct echo_conn;
LIST_HEAD(echo_conn_list, echo_conn);

struct echo_server {
	struct us_stack *st;
	struct http_limits lim;
	struct echo_counters ctr;
	struct echo_conn_list conns; /* live connections, closed at stop */
	unsigned live;
	/* --migrate-every: after that many requests an idle connection goes
	 * to engine (engine + 1) % nengines; 0: never. */
	unsigned migrate_every, engine, nengines;
	struct echo_conn_list spare; /* freed connections kept for reuse */
	unsigned nspare;
};

/* Prototypes */

/* Whether a request or response buffer of cap bytes, of which the last
 * request (response) used `used` and `len` are still held, goes back to
 * its minimum size: big (> 64 KiB), nearly empty, and the last use small
 * (< cap / 4).  Pure, for the unit test. */
bool echo_should_shrink(size_t cap, size_t used, size_t len);

/* Listens on port; lim may be NULL for the parser defaults. */
/* Listens on port on one engine (the server's connections all live on it). */
int echo_server_start(struct echo_server *srv, struct us_stack *st, unsigned engine,
		      uint16_t port, const struct http_limits *lim);
/* One more listening port for a started server (us-httpecho --ports: more
 * than one port's ~28 K ephemeral ports of connections from one client). */
int echo_server_listen(struct echo_server *srv, unsigned engine, uint16_t port);
/* Adds from's counters to into's (the summary over engines). */
void echo_server_add(struct echo_server *into, const struct echo_server *from);
/* Gracefully closes every live connection and frees its state. */
void echo_server_stop(struct echo_server *srv);
/* Requests refused plus connection-level problems. */
uint64_t echo_server_errors(const struct echo_server *srv);
/* The summary line, then every counter, one per line. */
void echo_server_print_stats(const struct echo_server *srv, FILE *out);

#endif
