/* server.c: us-httpecho's connections (see server.h).
 *
 * Handlers run inline on the engine's core, so nothing here locks.  A
 * connection's life: read and frame requests; queue each response; after a
 * response with Connection: close (or an error) stop taking requests, and
 * once the output is all with the stack send FIN (us_conn_shutdown_write) and
 * keep reading, discarding, until the peer's FIN: then us_conn_close.  Reading
 * on until the peer closes (RFC 9112 9.6) avoids the reset that unread data
 * would cause and lets the client see the whole response.
 *
 * Buffer ownership: ec->in and ec->out belong to the connection and are
 * freed with it in echo_free, on every path (close, abort, on_closed, stop);
 * up to ECHO_SPARE_MAX freed connections (with an input buffer of the first
 * size) wait on srv->spare for the next accept instead, and go at stop.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "server.h"

/* Types */

#define ECHO_IN_MIN 4096u          /* first request buffer */
#define ECHO_READ_MIN 2048u        /* read no less than this at a time */
#define ECHO_OUT_HIGH (256u << 10) /* stop framing pipelined requests above this */
#define ECHO_KEEP_MAX (64u << 10)  /* shrink idle buffers bigger than this */
/* Connections kept for reuse: malloc/realloc/free of the connection and its
 * input buffer were ~1,000 of ~18,000 instructions of a connection per
 * request (bench/PERF.md). */
#define ECHO_SPARE_MAX 128u

struct echo_conn {
	LIST_ENTRY(echo_conn) link;
	struct echo_server *srv;
	struct us_conn *c;
	uint8_t *in;         /* current request's raw bytes, then bytes read ahead */
	size_t in_len, in_cap;
	size_t in_parsed;    /* bytes of in already fed to the parser */
	uint8_t *out;        /* output us_conn_send has not taken, from out_off */
	size_t out_off, out_len, out_cap;
	bool continue_sent;
	bool closing;        /* last response queued: no more requests */
	bool write_shut;     /* FIN queued */
	bool peer_eof;
	unsigned served;     /* requests answered here (--migrate-every) */
	struct http_parser parser; /* last: it holds the line buffer */
};

/* Life of a connection's state */

static void echo_free(struct echo_conn *ec)
{
	struct echo_server *srv = ec->srv;

	LIST_REMOVE(ec, link);
	srv->live--;
	free(ec->out);
	if (srv->nspare < ECHO_SPARE_MAX && ec->in_cap <= ECHO_IN_MIN) {
		LIST_INSERT_HEAD(&srv->spare, ec, link);
		srv->nspare++;
		return;
	}
	free(ec->in);
	free(ec);
}

/* A spare connection (its input buffer kept) or a new one; the fields
 * before the parser zeroed either way. */
static struct echo_conn *echo_conn_get(struct echo_server *srv)
{
	struct echo_conn *ec = LIST_FIRST(&srv->spare);
	uint8_t *in = NULL;
	size_t in_cap = 0;

	if (ec != NULL) {
		LIST_REMOVE(ec, link);
		srv->nspare--;
		in = ec->in;
		in_cap = ec->in_cap;
	} else {
		/* Not calloc: the parser's line buffer (8 KiB) needs no zeroing,
		 * line_len says what it holds, and zeroing it was 28 % of the
		 * instructions of a connection per request (bench/PERF.md). */
		ec = malloc(sizeof(*ec));
		if (ec == NULL)
			return NULL;
	}
	memset(ec, 0, offsetof(struct echo_conn, parser));
	ec->in = in;
	ec->in_cap = in_cap;
	return ec;
}

/* The application ends it: us_conn_close is graceful, us_conn_abort sends RST. */
static void echo_end(struct echo_conn *ec, bool abort)
{
	if (abort)
		us_conn_abort(ec->c);
	else
		us_conn_close(ec->c);
	echo_free(ec);
}

/* 1 when the buffer grew, 0 when it had room, -ENOMEM. */
static int echo_reserve(uint8_t **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : ECHO_IN_MIN;
	while (n < need)
		n *= 2;
	uint8_t *b = realloc(*buf, n);
	if (b == NULL)
		return -ENOMEM;
	*buf = b;
	*cap = n;
	return 1;
}

bool echo_should_shrink(size_t cap, size_t used, size_t len)
{
	return cap > ECHO_KEEP_MAX && len <= ECHO_IN_MIN && used < cap / 4;
}

/* A 16 MiB request should not pin 16 MiB for the rest of a keep-alive
 * connection: give big buffers back when they hold little and the last
 * request (or response) used little of them.  Back-to-back big ones keep
 * theirs: regrowing from 4 KiB each time cost realloc copies and fresh
 * pages (bench/PERF.md, bulk). */
static void echo_shrink(uint8_t **buf, size_t *cap, size_t used, size_t len)
{
	if (!echo_should_shrink(*cap, used, len))
		return;
	uint8_t *b = realloc(*buf, ECHO_IN_MIN);
	if (b != NULL) {
		*buf = b;
		*cap = ECHO_IN_MIN;
	}
}

/* Output */

static size_t echo_pending(const struct echo_conn *ec)
{
	return ec->out_len - ec->out_off;
}

/* Sends what is pending; 0 when all of it is with the stack or the stack is
 * full (on_writable resumes), -errno when the connection failed.  The
 * buffer may shrink only when this drained it, judged by how much of it
 * that response used.  echo_pump flushes on every event: with nothing
 * pending there is no use to judge by, and taking it as "used 0" would give
 * a bulk connection's output buffer back between responses, to be grown
 * (its pages faulted in) again by the next one. */
static int echo_flush(struct echo_conn *ec)
{
	if (echo_pending(ec) == 0)
		return 0;
	while (ec->out_off < ec->out_len) {
		ssize_t n = us_conn_send(ec->c, ec->out + ec->out_off, ec->out_len - ec->out_off);
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n == 0)
			return 0; /* never expected; do not spin */
		ec->out_off += (size_t)n;
	}
	size_t used = ec->out_len;
	ec->out_off = ec->out_len = 0;
	echo_shrink(&ec->out, &ec->out_cap, used, 0);
	return 0;
}

/* Queue len bytes: straight to the stack when nothing is pending, the rest
 * copied behind what is.  0 or -errno (connection failed or no memory). */
static int echo_queue(struct echo_conn *ec, const void *data, size_t len)
{
	const uint8_t *d = data;
	while (echo_pending(ec) == 0 && len > 0) {
		ssize_t n = us_conn_send(ec->c, d, len);
		if (n < 0 && errno != EAGAIN)
			return -errno;
		if (n <= 0)
			break;
		d += n;
		len -= (size_t)n;
	}
	if (len == 0)
		return 0;
	if (ec->out_off > 0 && ec->out_off == ec->out_len)
		ec->out_off = ec->out_len = 0;
	int grew = echo_reserve(&ec->out, &ec->out_cap, ec->out_len + len);
	if (grew < 0) {
		ec->srv->ctr.no_memory++;
		return -ENOMEM;
	}
	ec->srv->ctr.buffer_grows += (uint64_t)grew;
	memcpy(ec->out + ec->out_len, d, len);
	ec->out_len += len;
	return 0;
}

/* Responses */

/* Head and echo in one us_conn_send when both fit here: as two sends they
 * left as two segments (the server sets NODELAY), each paying the whole
 * TCP/IP/NIC path, ~1,500 instructions of ~7,900 per keep-alive request
 * (bench/PERF.md).  Bigger echoes are sent from ec->in, not copied. */
#define ECHO_ONE_SEND 4096u
#define ECHO_HEAD_MAX 160u

static int echo_respond(struct echo_conn *ec)
{
	const struct http_request *r = &ec->parser.req;
	char buf[ECHO_ONE_SEND];
	/* RFC 9110 9.3.2: HEAD gets the same header fields and no content. */
	size_t body = r->head ? 0 : (size_t)r->raw_len;
	int n = http_echo_head(buf, ECHO_HEAD_MAX, r->raw_len, !r->keep_alive);
	int rc;
	if (n < 0)
		return n;
	if ((size_t)n + body <= sizeof(buf)) {
		memcpy(buf + n, ec->in + r->lead_len, body);
		rc = echo_queue(ec, buf, (size_t)n + body);
	} else {
		rc = echo_queue(ec, buf, (size_t)n);
		if (rc == 0 && body > 0)
			rc = echo_queue(ec, ec->in + r->lead_len, body);
	}
	ec->srv->ctr.requests++;
	ec->served++;
	if (!r->keep_alive)
		ec->closing = true;
	/* All of it went to the stack: this response used none of a big
	 * output buffer a bigger one left, so it goes back. */
	if (rc == 0 && echo_pending(ec) == 0)
		echo_shrink(&ec->out, &ec->out_cap, 0, 0);
	return rc;
}

static int echo_refuse(struct echo_conn *ec)
{
	char buf[256];
	enum http_error e = ec->parser.error;
	int n = http_error_response(buf, sizeof(buf), http_error_status(e));
	ec->srv->ctr.refused[e]++;
	ec->closing = true;
	return n < 0 ? n : echo_queue(ec, buf, (size_t)n);
}

/* Drop the finished request (and its leading empty lines) from ec->in. */
static void echo_next_request(struct echo_conn *ec)
{
	size_t rest = ec->in_len - ec->in_parsed, used = ec->in_parsed;
	memmove(ec->in, ec->in + ec->in_parsed, rest);
	ec->in_len = rest;
	ec->in_parsed = 0;
	echo_shrink(&ec->in, &ec->in_cap, used, rest);
	http_parser_reset(&ec->parser);
	ec->continue_sent = false;
}

/* Frame what has been read, answering each complete request.  Stops when
 * the output backs up (pipelining without reading our answers). */
static int echo_process(struct echo_conn *ec)
{
	while (ec->in_parsed < ec->in_len && !ec->closing && echo_pending(ec) < ECHO_OUT_HIGH) {
		size_t used;
		enum http_event ev = http_parser_feed(&ec->parser, ec->in + ec->in_parsed,
						      ec->in_len - ec->in_parsed, &used);
		ec->in_parsed += used;
		if (ev == HTTP_ERROR)
			return echo_refuse(ec);
		if (ev == HTTP_NEED_MORE)
			break;
		int rc = echo_respond(ec);
		if (rc < 0)
			return rc;
		echo_next_request(ec);
	}
	/* RFC 9110 10.1.1: the client waits for 100 before sending content. */
	if (!ec->closing && !ec->continue_sent && http_parser_wants_continue(&ec->parser)) {
		ec->continue_sent = true;
		return echo_queue(ec, HTTP_CONTINUE, sizeof(HTTP_CONTINUE) - 1);
	}
	return 0;
}

/* After the output: FIN once the last response is with the stack, close
 * once both sides are done.  false when ec is gone. */
static bool echo_settle(struct echo_conn *ec)
{
	if (echo_pending(ec) > 0)
		return true;
	if (ec->peer_eof && (ec->closing || ec->in_len == 0)) {
		echo_end(ec, false);
		return false;
	}
	if (ec->peer_eof) { /* FIN in the middle of a request */
		ec->srv->ctr.truncated++;
		echo_end(ec, false);
		return false;
	}
	if (ec->closing && !ec->write_shut) {
		ec->write_shut = true;
		if (us_conn_shutdown_write(ec->c) < 0) {
			echo_end(ec, true);
			return false;
		}
	}
	return true;
}

/* Input */

/* Room to read into; the parser refuses a request before it outgrows
 * max_header + max_body, so this stays bounded. */
static int echo_in_room(struct echo_conn *ec, size_t *room)
{
	if (ec->in_cap - ec->in_len < ECHO_READ_MIN) {
		int grew = echo_reserve(&ec->in, &ec->in_cap, ec->in_len + ECHO_READ_MIN);
		if (grew < 0) {
			ec->srv->ctr.no_memory++;
			return -ENOMEM;
		}
		ec->srv->ctr.buffer_grows += (uint64_t)grew;
	}
	*room = ec->in_cap - ec->in_len;
	return 0;
}

/* Reads until the stack is empty; 1 at end of stream, 0 otherwise, -errno. */
static int echo_read(struct echo_conn *ec)
{
	for (;;) {
		uint8_t scrap[2048];
		uint8_t *dst = scrap;
		size_t room = sizeof(scrap);
		if (ec->closing) {
			/* Lingering close: read and discard until the peer's FIN. */
		} else if (echo_pending(ec) >= ECHO_OUT_HIGH) {
			return 0; /* leave it in the window: back-pressure */
		} else {
			int rc = echo_in_room(ec, &room);
			if (rc < 0)
				return rc;
			dst = ec->in + ec->in_len;
		}
		ssize_t n = us_conn_recv(ec->c, dst, room);
		if (n == 0)
			return 1;
		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (dst == scrap)
			continue;
		ec->in_len += (size_t)n;
		int rc = echo_process(ec);
		if (rc < 0)
			return rc;
	}
}

/* --migrate-every: a connection that answered its share and holds nothing
 * (no output pending, no bytes of a next request) goes to the next engine,
 * whose listener accepts it afresh.  true when it went (ec is gone). */
static bool echo_maybe_migrate(struct echo_conn *ec)
{
	struct echo_server *srv = ec->srv;

	if (srv->migrate_every == 0 || srv->nengines < 2 || ec->served < srv->migrate_every ||
	    echo_pending(ec) > 0 || ec->in_len > 0 || ec->closing || ec->peer_eof)
		return false;
	if (us_conn_migrate(ec->c, (srv->engine + 1) % srv->nengines) < 0) {
		srv->ctr.migrate_refused++;
		ec->served = 0; /* try again after another share */
		return false;
	}
	srv->ctr.migrated++;
	echo_free(ec);
	return true;
}

/* Everything there is to do now: frame, read, send, settle.  Framing
 * paused by back-pressure resumes here once the output drained.  false
 * when ec is gone. */
static bool echo_pump(struct echo_conn *ec)
{
	int rc;
	do {
		rc = echo_process(ec);
		if (rc == 0 && !ec->peer_eof) {
			rc = echo_read(ec);
			if (rc == 1) {
				ec->peer_eof = true;
				rc = 0;
			}
		}
		if (rc == 0)
			rc = echo_flush(ec);
	} while (rc == 0 && echo_pending(ec) == 0 && !ec->closing &&
		 ec->in_parsed < ec->in_len);
	if (rc < 0) {
		if (rc != -ENOMEM)
			ec->srv->ctr.io_failed++;
		echo_end(ec, true);
		return false;
	}
	return echo_settle(ec) && !echo_maybe_migrate(ec);
}

/* Handlers */

static void echo_on_readable(void *ctx, struct us_conn *c)
{
	(void)c;
	echo_pump(ctx);
}

static void echo_on_writable(void *ctx, struct us_conn *c)
{
	(void)c;
	echo_pump(ctx);
}

static void echo_on_closed(void *ctx, struct us_conn *c, int err)
{
	struct echo_conn *ec = ctx;
	(void)c;
	if (err != 0)
		ec->srv->ctr.reset++;
	echo_free(ec);
}

static void echo_on_accept(void *listen_ctx, struct us_conn *c)
{
	struct echo_server *srv = listen_ctx;
	struct echo_conn *ec = echo_conn_get(srv);
	if (ec == NULL) {
		srv->ctr.no_memory++;
		us_conn_abort(c);
		return;
	}
	ec->srv = srv;
	ec->c = c;
	http_parser_init(&ec->parser, &srv->lim);
	LIST_INSERT_HEAD(&srv->conns, ec, link);
	srv->live++;
	srv->ctr.connections++;
	us_conn_set_ctx(c, ec);
	/* A big response goes out as a header write and a body write: with
	 * Nagle the body would wait for the peer's delayed ACK (~40 ms). */
	us_conn_set_nodelay(c, 1);
}

static const struct us_tcp_handlers echo_handlers = {
	.on_accept = echo_on_accept,
	.on_readable = echo_on_readable,
	.on_writable = echo_on_writable,
	.on_closed = echo_on_closed,
};

/* Server */

int echo_server_start(struct echo_server *srv, struct us_stack *st, unsigned engine,
		      uint16_t port, const struct http_limits *lim)
{
	memset(srv, 0, sizeof(*srv));
	srv->st = st;
	struct http_parser probe; /* resolves the defaults once */
	http_parser_init(&probe, lim);
	srv->lim = probe.lim;
	LIST_INIT(&srv->conns);
	LIST_INIT(&srv->spare);
	return us_tcp_listen_engine(st, engine, port, &echo_handlers, srv);
}

int echo_server_listen(struct echo_server *srv, unsigned engine, uint16_t port)
{
	return us_tcp_listen_engine(srv->st, engine, port, &echo_handlers, srv);
}

void echo_server_add(struct echo_server *into, const struct echo_server *from)
{
	into->ctr.requests += from->ctr.requests;
	into->ctr.connections += from->ctr.connections;
	into->ctr.migrated += from->ctr.migrated;
	into->ctr.migrate_refused += from->ctr.migrate_refused;
	into->ctr.buffer_grows += from->ctr.buffer_grows;
	for (unsigned e = 0; e < HTTP_ERR_COUNT; e++)
		into->ctr.refused[e] += from->ctr.refused[e];
#define ECHO_CTR_ADD(name, desc) into->ctr.name += from->ctr.name;
	ECHO_COUNTERS(ECHO_CTR_ADD)
#undef ECHO_CTR_ADD
}

void echo_server_stop(struct echo_server *srv)
{
	while (!LIST_EMPTY(&srv->conns))
		echo_end(LIST_FIRST(&srv->conns), false);
	while (!LIST_EMPTY(&srv->spare)) {
		struct echo_conn *ec = LIST_FIRST(&srv->spare);

		LIST_REMOVE(ec, link);
		free(ec->in);
		free(ec);
	}
	srv->nspare = 0;
}

uint64_t echo_server_errors(const struct echo_server *srv)
{
	uint64_t n = 0;
	for (unsigned e = 0; e < HTTP_ERR_COUNT; e++)
		n += srv->ctr.refused[e];
#define ECHO_CTR_SUM(name, desc) n += srv->ctr.name;
	ECHO_COUNTERS(ECHO_CTR_SUM)
#undef ECHO_CTR_SUM
	return n;
}

void echo_server_print_stats(const struct echo_server *srv, FILE *out)
{
	fprintf(out, "us-httpecho: served %llu requests on %llu connections, %llu errors\n",
		(unsigned long long)srv->ctr.requests, (unsigned long long)srv->ctr.connections,
		(unsigned long long)echo_server_errors(srv));
	fprintf(out, "httpecho.migrated %llu\nhttpecho.migrate_refused %llu\n"
		"httpecho.buffer_grows %llu\n",
		(unsigned long long)srv->ctr.migrated,
		(unsigned long long)srv->ctr.migrate_refused,
		(unsigned long long)srv->ctr.buffer_grows);
	for (unsigned e = 1; e < HTTP_ERR_COUNT; e++)
		fprintf(out, "httpecho.refused.%s %llu\n", http_error_name(e),
			(unsigned long long)srv->ctr.refused[e]);
#define ECHO_CTR_PRINT(name, desc) \
	fprintf(out, "httpecho." #name " %llu\n", (unsigned long long)srv->ctr.name);
	ECHO_COUNTERS(ECHO_CTR_PRINT)
#undef ECHO_CTR_PRINT
}
