/* apps/loadgen/loadgen.h: us-loadgen, a request/response load generator on
 * libuserstack's sockets and epoll (only stack/include/userstack.h).
 *
 * Each of N connections runs a small state machine (conn.c): connect, send
 * a request, read the whole response, record its latency, then send the
 * next on the same connection (keep-alive) or close and connect again
 * (connection per request).  With --rate, requests start only when the
 * token bucket has a token.  Errors are counted by kind; a connection that
 * fails connects again after a short pause, so a refused or dead target
 * shows up as errors, not as a spin.
 */
#ifndef LG_LOADGEN_H
#define LG_LOADGEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <sodium.h>

#include "hist.h"
#include "userstack.h"

/* Types */

enum lg_mode { LG_HTTP, LG_RAW };

/* The server's address, in either family (sa.sa_family says which). */
union lg_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in sin;
	struct sockaddr_in6 sin6;
};

struct lg_opts {
	const char *config, *json, *path, *host;
	enum lg_mode mode;
	union lg_sockaddr target;
	socklen_t target_len; /* of target's family's sockaddr; 0: none given */
	char target_text[64];
	unsigned conns;
	double duration_s;
	uint64_t max_requests; /* stop after this many answered requests; 0: none */
	uint64_t req_size;    /* HTTP: POST body bytes (0: GET); raw: request bytes */
	uint64_t resp_size;   /* raw: response bytes expected (default req_size) */
	bool keepalive;
	double rate;          /* requests per second over all connections; 0: none */
	double delay_s;       /* run the stack this long before starting (links, ARP) */
	uint32_t timeout_ms;  /* connect and response timeout */
	bool quiet;           /* no progress lines */
	bool stats;           /* print the stack's counters at the end */
	bool fastopen;        /* RFC 7413: a connection's first request in its SYN */
	bool from_connect;    /* a connection's first latency counts from its connect */
	unsigned engines;     /* --engines: connections split over N engines */
	char lcores[32];      /* --lcores, default 0-(N-1) */
	bool download;        /* --download: one GET, the body hashed, then stop */
	bool check_echo;      /* --check-echo: each response body == its request */
	unsigned idle;        /* --idle: connections opened first, then left idle */
	unsigned idle_ports;  /* --idle-ports: spread over the P ports after target's */
	double idle_wait_s;   /* --idle-wait: pause before and after opening them */
};

/* X(name, description): error kinds, each its own counter and JSON key. */
#define LG_ERRORS(X) \
	X(connect_refused, "connection refused (ECONNREFUSED)") \
	X(connect_timeout, "connect timed out (ETIMEDOUT or --timeout-ms)") \
	X(connect_other, "connect failed otherwise") \
	X(reset, "connection reset (ECONNRESET)") \
	X(eof, "connection closed before the response was complete") \
	X(timeout, "response not complete within --timeout-ms") \
	X(bad_response, "malformed response (status line, headers, length)") \
	X(http_status, "response status not 2xx") \
	X(io_other, "send/recv failed otherwise") \
	X(no_socket, "us_socket failed (descriptors or memory)") \
	X(echo_mismatch, "--check-echo: response body not the request's bytes")

struct lg_errors {
#define LG_X_FIELD(name, desc) uint64_t name;
	LG_ERRORS(LG_X_FIELD)
#undef LG_X_FIELD
};

enum lg_state { LG_IDLE, LG_CONNECTING, LG_WAIT_TOKEN, LG_SENDING, LG_RECEIVING };

struct lg_conn {
	int fd;                /* -1 when none */
	enum lg_state state;
	uint32_t interest;     /* epoll events asked for on fd (lg_interest) */
	uint64_t t_start;      /* connect or request start, ns */
	uint64_t t_retry;      /* LG_IDLE: connect again from then */
	uint64_t t_conn;       /* the connect (or us_sendto MSG_FASTOPEN) of this fd */
	uint64_t sent;         /* request bytes sent */
	/* Response framing */
	char head[8192];
	size_t head_len;
	bool head_done, close_after;
	uint64_t body_left;    /* HTTP body or raw response bytes still due */
	uint64_t body_off;     /* --check-echo: body bytes compared so far */
	bool echo_bad;         /* --check-echo: a byte differed */
	unsigned requests;     /* on this connection */
};

struct lg_run {
	struct lg_opts o;
	int ep;
	struct lg_conn *c;
	char *req;             /* the request bytes */
	size_t req_len;
	/* Totals */
	uint64_t requests, connects, bytes_sent, bytes_rcvd;
	/* --fastopen: us_sendto(MSG_FASTOPEN) took the request (a cookie was
	 * cached: data in the SYN), or failed with EINPROGRESS (cookie
	 * request: the request follows the handshake). */
	uint64_t tfo_syn_requests, tfo_cookie_requests;
	uint64_t echo_checked; /* --check-echo: responses equal to their request */
	unsigned diag_printed; /* --check-echo: mismatches described on stderr */
	struct lg_errors err;
	struct lg_hist lat;    /* response latency, ns */
	struct lg_hist lat_sec; /* this second (progress line) */
	uint64_t sec_requests;
	/* Rate limit */
	double tokens;
	uint64_t t_tokens;
	uint64_t t0, t_end;
	/* --download: the body's SHA-256 (libsodium), its length, and done. */
	crypto_hash_sha256_state body_sha;
	uint64_t body_bytes;
	bool finished;
	char body_hex[2 * crypto_hash_sha256_BYTES + 1];
	/* --idle (idle.c): descriptors, -1 when none; established and failed. */
	int *idle_fd;
	unsigned idle_open, idle_failed;
};

/* Prototypes */

uint64_t lg_now_ns(void);
/* conn.c */
int lg_build_request(struct lg_run *r);
void lg_conn_start(struct lg_run *r, struct lg_conn *c, uint64_t now);
void lg_conn_event(struct lg_run *r, struct lg_conn *c, uint32_t events, uint64_t now);
/* Timeouts, retries and rate tokens: once per loop iteration. */
void lg_conn_tick(struct lg_run *r, struct lg_conn *c, uint64_t now);
void lg_conn_close(struct lg_run *r, struct lg_conn *c);
uint64_t lg_errors_total(const struct lg_errors *e);
/* idle.c: opens the --idle connections (after --delay, before the load);
 * 0, or -1 without memory.  lg_idle_stop closes them. */
int lg_idle_start(struct lg_run *r);
void lg_idle_stop(struct lg_run *r);

/* The target with its port replaced (main.c). */
union lg_sockaddr lg_target_port(const struct lg_opts *o, uint16_t port);
/* The target's port, host order (main.c). */
uint16_t lg_target_port_of(const struct lg_opts *o);

#endif
