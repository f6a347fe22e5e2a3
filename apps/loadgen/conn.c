/* apps/loadgen/conn.c: one load-generating connection's state machine
 * (loadgen.h), on non-blocking us_* sockets and level-triggered epoll. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "loadgen.h"
#include "resp.h"

#define LG_RETRY_NS 10000000ull /* 10 ms between a failed connect and the next */

uint64_t lg_errors_total(const struct lg_errors *e)
{
	uint64_t t = 0;
#define LG_X_SUM(name, desc) t += e->name;
	LG_ERRORS(LG_X_SUM)
#undef LG_X_SUM
	return t;
}

int lg_build_request(struct lg_run *r)
{
	const struct lg_opts *o = &r->o;
	char head[512];
	int n;

	if (o->mode == LG_RAW) {
		r->req_len = o->req_size;
		r->req = malloc(r->req_len ? r->req_len : 1);
		if (r->req == NULL)
			return -1;
		for (size_t i = 0; i < r->req_len; i++)
			r->req[i] = (char)('a' + i % 26);
		return 0;
	}
	if (o->req_size == 0)
		n = snprintf(head, sizeof(head), "GET %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", o->path,
			     o->host, o->keepalive ? "" : "Connection: close\r\n");
	else
		n = snprintf(head, sizeof(head),
			     "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %llu\r\n%s\r\n",
			     o->path, o->host, (unsigned long long)o->req_size,
			     o->keepalive ? "" : "Connection: close\r\n");
	if (n < 0 || (size_t)n >= sizeof(head))
		return -1;
	r->req_len = (size_t)n + o->req_size;
	r->req = malloc(r->req_len);
	if (r->req == NULL)
		return -1;
	memcpy(r->req, head, (size_t)n);
	/* --check-echo compares every byte: a pattern, so that a shifted or
	 * misplaced piece of body shows up, which a run of 'x' would hide. */
	for (size_t i = 0; i < o->req_size; i++)
		r->req[(size_t)n + i] = o->check_echo ? (char)('a' + i % 26) : 'x';
	return 0;
}

/* Keep-alive asks for EPOLLIN after every request: no us_epoll_ctl call
 * when the interest is already that (one per request saved). */
static void lg_interest(struct lg_run *r, struct lg_conn *c, uint32_t events)
{
	struct us_epoll_event ev = { .events = events, .data.ptr = c };

	if (c->interest == events)
		return;
	if (us_epoll_ctl(r->ep, US_EPOLL_CTL_MOD, c->fd, &ev) == 0)
		c->interest = events;
}

void lg_conn_close(struct lg_run *r, struct lg_conn *c)
{
	if (c->fd >= 0) {
		us_epoll_ctl(r->ep, US_EPOLL_CTL_DEL, c->fd, NULL);
		us_close(c->fd);
	}
	c->fd = -1;
	c->state = LG_IDLE;
}

/* Closes and connects again now (pause: after a pause). */
static void lg_restart(struct lg_run *r, struct lg_conn *c, uint64_t now, bool pause)
{
	lg_conn_close(r, c);
	c->t_retry = pause ? now + LG_RETRY_NS : now;
}

static void lg_count_io_error(struct lg_run *r, int err)
{
	if (err == ECONNRESET || err == EPIPE)
		r->err.reset++;
	else if (err == ETIMEDOUT)
		r->err.timeout++;
	else
		r->err.io_other++;
}

static void lg_count_connect_error(struct lg_run *r, int err)
{
	if (err == ECONNREFUSED || err == ECONNRESET)
		r->err.connect_refused++;
	else if (err == ETIMEDOUT)
		r->err.connect_timeout++;
	else
		r->err.connect_other++;
}

static void lg_send(struct lg_run *r, struct lg_conn *c, uint64_t now);

/* A request starts now: nothing sent, no response seen. */
static void lg_request_reset(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	c->state = LG_SENDING;
	c->t_start = now;
	c->sent = 0;
	c->head_len = 0;
	c->head_done = r->o.mode == LG_RAW;
	c->close_after = false;
	c->body_left = r->o.mode == LG_RAW ? r->o.resp_size : 0;
	c->body_off = 0;
	c->echo_bad = false;
	if (r->o.download) {
		crypto_hash_sha256_init(&r->body_sha);
		r->body_bytes = 0;
	}
}

/* --fastopen: connect and send the request in one call (RFC 7413).  Linux
 * semantics: bytes taken when a cookie is cached (the SYN carries them),
 * -1/EINPROGRESS when the SYN asks for a cookie (the request then goes
 * after the handshake, as without --fastopen).  False: connect normally. */
static bool lg_fastopen_start(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	ssize_t n;

	if (r->o.rate > 0 && r->tokens < 1.0)
		return false; /* the request must wait: a plain connect */
	n = us_sendto(c->fd, r->req, r->req_len, US_MSG_FASTOPEN,
		      &r->o.target.sa, r->o.target_len);
	if (n < 0 && errno == EINPROGRESS) {
		r->tfo_cookie_requests++;
		c->state = LG_CONNECTING; /* lg_begin_request once connected */
		return true;
	}
	if (n < 0) {
		lg_count_connect_error(r, errno);
		lg_restart(r, c, now, true);
		return true;
	}
	if (r->o.rate > 0)
		r->tokens -= 1.0;
	r->tfo_syn_requests++;
	r->connects++;
	c->requests = 0;
	lg_request_reset(r, c, now);
	c->sent = (uint64_t)n;
	r->bytes_sent += (uint64_t)n;
	lg_send(r, c, now); /* the rest, if any, once connected */
	return true;
}

void lg_conn_start(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	struct us_epoll_event ev = { .events = US_EPOLLOUT, .data.ptr = c };
	int one = 1, zero = 0;

	c->fd = us_socket(r->o.target.sa.sa_family, SOCK_STREAM | US_SOCK_NONBLOCK, 0);
	if (c->fd < 0) {
		r->err.no_socket++;
		c->state = LG_IDLE;
		c->t_retry = now + LG_RETRY_NS;
		return;
	}
	/* Request/response: a small request must not wait for Nagle. */
	us_setsockopt(c->fd, US_IPPROTO_TCP, US_TCP_NODELAY, &one, sizeof(one));
	/* The request carries the handshake's ACK, and the close the ACK of
	 * the server's FIN: 3 segments per connection instead of 5. */
	us_setsockopt(c->fd, US_IPPROTO_TCP, US_TCP_QUICKACK, &zero, sizeof(zero));
	us_epoll_ctl(r->ep, US_EPOLL_CTL_ADD, c->fd, &ev);
	c->interest = ev.events;
	c->state = LG_CONNECTING;
	c->t_start = now;
	c->t_conn = now;
	c->requests = 0;
	if (r->o.fastopen && lg_fastopen_start(r, c, now))
		return;
	if (us_connect(c->fd, &r->o.target.sa, r->o.target_len) == 0 ||
	    errno == EINPROGRESS)
		return;
	lg_count_connect_error(r, errno);
	lg_restart(r, c, now, true);
}


/* The next request, when the rate allows. */
static void lg_begin_request(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	if (r->o.rate > 0) {
		if (r->tokens < 1.0) {
			c->state = LG_WAIT_TOKEN;
			lg_interest(r, c, 0); /* errors and hang-ups still come */
			return;
		}
		r->tokens -= 1.0;
	}
	lg_request_reset(r, c, now);
	if (r->o.from_connect && c->requests == 0)
		c->t_start = c->t_conn; /* the handshake counts too */
	lg_send(r, c, now);
}

/* While a request is being sent its response is read too: a server that
 * echoes as it reads (us-httpecho streams big bodies) fills our receive
 * window before the request is all out, and then stops reading itself:
 * reading only after sending deadlocks once a request outgrows the buffers
 * between the two. */
static void lg_send(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	while (c->sent < r->req_len) {
		ssize_t n = us_send(c->fd, r->req + c->sent, r->req_len - c->sent, 0);

		if (n < 0) {
			if (errno == EAGAIN) {
				lg_interest(r, c, US_EPOLLOUT | US_EPOLLIN);
				return;
			}
			lg_count_io_error(r, errno);
			lg_restart(r, c, now, false);
			return;
		}
		c->sent += (uint64_t)n;
		r->bytes_sent += (uint64_t)n;
	}
	c->state = LG_RECEIVING;
	lg_interest(r, c, US_EPOLLIN | US_EPOLLRDHUP);
}

/* --download: the body bytes into the hash (the check is byte-exact).
 * --check-echo: the body compared with the request at the same offset (the
 * echo server answers with the request's raw bytes). */
/* --check-echo: the first few mismatches of a run on stderr, so that a
 * wrong answer says which bytes are wrong (shifted, duplicated, another
 * request's): where in the body, how long the received piece was, and
 * 24 bytes expected and received from the first differing one. */
#define LG_DIAG_MAX 3
#define LG_DIAG_SHOW 24
#define LG_MIN(a, b) ((a) < (b) ? (a) : (b))

static void lg_diag_bytes(const char *what, const uint8_t *b, size_t n)
{
	fprintf(stderr, " %s '", what);
	for (size_t i = 0; i < n; i++)
		fputc(b[i] >= 0x20 && b[i] < 0x7f ? b[i] : '.', stderr);
	fputc('\'', stderr);
}

static void lg_diag_mismatch(struct lg_run *r, struct lg_conn *c, const uint8_t *d, size_t n)
{
	size_t i = 0, lim = c->body_off < r->req_len ? r->req_len - c->body_off : 0;

	if (r->diag_printed >= LG_DIAG_MAX)
		return;
	r->diag_printed++;
	while (i < n && i < lim && (uint8_t)r->req[c->body_off + i] == d[i])
		i++;
	fprintf(stderr, "us-loadgen: echo mismatch: request %u of its connection, piece of %zu "
		"bytes at body offset %llu (of %zu), first difference at +%zu:", c->requests, n,
		(unsigned long long)c->body_off, r->req_len, i);
	lg_diag_bytes("want", (const uint8_t *)r->req + c->body_off + i,
		      LG_MIN(lim > i ? lim - i : 0, (size_t)LG_DIAG_SHOW));
	lg_diag_bytes("got", d + i, LG_MIN(n - i, (size_t)LG_DIAG_SHOW));
	fputc('\n', stderr);
}

static void lg_body(struct lg_run *r, struct lg_conn *c, const void *d, size_t n)
{
	if (n == 0)
		return;
	if (r->o.check_echo) {
		if (c->body_off + n > r->req_len ||
		    memcmp(r->req + c->body_off, d, n) != 0) {
			lg_diag_mismatch(r, c, d, n);
			c->echo_bad = true;
		}
		c->body_off += n;
	}
	if (!r->o.download)
		return;
	crypto_hash_sha256_update(&r->body_sha, d, n);
	r->body_bytes += n;
}

/* Takes n response bytes; 1 complete, 0 more to come, -1 malformed, -2 not
 * the echo of the request (--check-echo). */
static __rte_always_inline int lg_take(struct lg_run *r, struct lg_conn *c, const uint8_t *d,
					  size_t n)
{
	if (!c->head_done) {
		size_t old = c->head_len, take = sizeof(c->head) - old, hdr_end, extra;
		struct lg_resp_head h;
		long got;

		take = take < n ? take : n;
		memcpy(c->head + old, d, take);
		c->head_len += take;
		got = lg_head_scan(c->head, c->head_len, &h);
		if (got < 0)
			return -1;
		if (got == 0)
			return c->head_len == sizeof(c->head) ? -1 : 0;
		hdr_end = (size_t)got;
		if (h.status < 200 || h.status > 299)
			r->err.http_status++;
		c->close_after = h.close;
		extra = c->head_len - hdr_end + (n - take);
		if (extra > h.clen)
			return -1; /* more than one response: we never pipeline */
		c->body_left = h.clen - extra;
		c->head_done = true;
		if (r->o.check_echo && h.clen != r->req_len)
			c->echo_bad = true;
		lg_body(r, c, c->head + hdr_end, c->head_len - hdr_end);
		lg_body(r, c, d + take, n - take);
		return c->echo_bad ? -2 : c->body_left == 0;
	}
	if (n > c->body_left)
		return -1;
	lg_body(r, c, d, n);
	c->body_left -= n;
	return c->echo_bad ? -2 : c->body_left == 0;
}

static void lg_response_done(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	lg_hist_record(&r->lat, now - c->t_start);
	lg_hist_record(&r->lat_sec, now - c->t_start);
	r->requests++;
	r->sec_requests++;
	c->requests++;
	r->echo_checked += r->o.check_echo;
	if (r->o.download) {
		r->finished = true; /* one response, then the loop ends */
		lg_conn_close(r, c);
		return;
	}
	if (r->o.keepalive && !c->close_after) {
		lg_begin_request(r, c, now);
		return;
	}
	/* Connection per request: the next connect right away, not at the
	 * next millisecond tick (lg_conn_tick).  Waiting for the tick capped
	 * 32 connections at 32,000 connects/s and made them move in lock-step
	 * batches, client and server taking turns (bench/PERF.md). */
	lg_conn_close(r, c);
	lg_conn_start(r, c, now);
}

/* One received chain, segment by segment, as lg_take's pieces; bytes past
 * the response's end are malformed (we never pipeline).  *last is the
 * piece looked at last (for the diagnostic). */
static int lg_take_chain(struct lg_run *r, struct lg_conn *c, const struct rte_mbuf *m,
			 const uint8_t **last, size_t *last_len)
{
	int done = 0;

	for (; m != NULL && done == 0; m = m->next) {
		*last = rte_pktmbuf_mtod(m, const uint8_t *);
		*last_len = m->data_len;
		done = lg_take(r, c, *last, *last_len);
	}
	return done == 1 && m != NULL ? -1 : done;
}

/* A response lg_take refused (done < 0): counted, the first few shown. */
static void lg_count_bad(struct lg_run *r, struct lg_conn *c, int done, const uint8_t *piece,
			 size_t piece_len)
{
	if (done == -1 && r->diag_printed < LG_DIAG_MAX) {
		r->diag_printed++;
		fprintf(stderr, "us-loadgen: bad response: request %u of its connection, piece "
			"of %zu bytes, head %zu bytes%s, body left %llu:", c->requests, piece_len,
			c->head_len, c->head_done ? " (done)" : "",
			(unsigned long long)c->body_left);
		lg_diag_bytes("head", (const uint8_t *)c->head, LG_MIN(c->head_len, (size_t)64));
		lg_diag_bytes("piece", piece, LG_MIN(piece_len, (size_t)LG_DIAG_SHOW));
		fputc('\n', stderr);
	}
	if (done == -2)
		r->err.echo_mismatch++;
	else
		r->err.bad_response++;
}

/* Per thread (each engine's loop runs on its own lcore): the first bytes
 * of a response.  One buffer for all threads let an engine's us_recv
 * overwrite what another was still checking (--check-echo; the corruption
 * interop's memif-migrate case looks for). */
static _Thread_local uint8_t lg_rx_buf[4096];

/* Takes what the socket holds: the start of a response by one us_recv into
 * lg_rx_buf (a small response is whole there: the keep-alive path), the
 * rest of a bigger one as the received mbufs themselves (us_recv_mbuf),
 * counted, compared or hashed where they lie instead of copied first.
 * Returns as us_recv; *done as lg_take, a refusal already counted. */
static ssize_t lg_read_some(struct lg_run *r, struct lg_conn *c, int *done)
{
	struct rte_mbuf *chain = NULL;
	const uint8_t *piece = lg_rx_buf;
	size_t piece_len;
	ssize_t n;

	if (!c->head_done) {
		n = us_recv(c->fd, lg_rx_buf, sizeof(lg_rx_buf), 0);
		if (n <= 0)
			return n;
		piece_len = (size_t)n;
		*done = lg_take(r, c, lg_rx_buf, piece_len);
	} else {
		n = us_recv_mbuf(c->fd, &chain, 0);
		if (n <= 0)
			return n;
		*done = lg_take_chain(r, c, chain, &piece, &piece_len);
	}
	if (*done == 1 && c->sent < r->req_len)
		*done = -1; /* answered before the request was all sent */
	if (*done < 0)
		lg_count_bad(r, c, *done, piece, piece_len);
	if (chain != NULL)
		us_mbuf_free(chain);
	return n;
}

static void lg_recv(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	for (;;) {
		int done = 0;
		ssize_t n = lg_read_some(r, c, &done);

		if (n < 0) {
			if (errno == EAGAIN)
				return;
			lg_count_io_error(r, errno);
			lg_restart(r, c, now, false);
			return;
		}
		if (n == 0) {
			r->err.eof++;
			lg_restart(r, c, now, false);
			return;
		}
		r->bytes_rcvd += (uint64_t)n;
		if (done < 0) {
			lg_restart(r, c, now, false);
			return;
		}
		if (done) {
			lg_response_done(r, c, now);
			return;
		}
	}
}

static int lg_so_error(int fd)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (us_getsockopt(fd, US_SOL_SOCKET, US_SO_ERROR, &err, &len) < 0)
		return errno;
	return err;
}

void lg_conn_event(struct lg_run *r, struct lg_conn *c, uint32_t events, uint64_t now)
{
	int err;

	switch (c->state) {
	case LG_CONNECTING:
		err = lg_so_error(c->fd);
		if (err != 0 || (events & US_EPOLLERR)) {
			lg_count_connect_error(r, err ? err : ECONNREFUSED);
			lg_restart(r, c, now, true);
			return;
		}
		r->connects++;
		lg_begin_request(r, c, now);
		return;
	case LG_SENDING:
		if (events & US_EPOLLIN)
			lg_recv(r, c, now); /* the echo of what went out so far */
		if (c->state == LG_SENDING)
			lg_send(r, c, now);
		return;
	case LG_RECEIVING:
		lg_recv(r, c, now);
		return;
	case LG_WAIT_TOKEN:
		/* The server closed an idle keep-alive connection: not an error. */
		if (events & (US_EPOLLERR | US_EPOLLHUP | US_EPOLLRDHUP))
			lg_restart(r, c, now, false);
		return;
	case LG_IDLE:
		return;
	}
}

void lg_conn_tick(struct lg_run *r, struct lg_conn *c, uint64_t now)
{
	uint64_t limit = (uint64_t)r->o.timeout_ms * 1000000ull;

	switch (c->state) {
	case LG_IDLE:
		/* Held until the first connection connected or failed. */
		if (c->t_retry == UINT64_MAX && (r->connects > 0 || lg_errors_total(&r->err) > 0))
			c->t_retry = now;
		if (now >= c->t_retry)
			lg_conn_start(r, c, now);
		return;
	case LG_WAIT_TOKEN:
		if (r->tokens >= 1.0)
			lg_begin_request(r, c, now);
		return;
	case LG_CONNECTING:
		if (now - c->t_start > limit) {
			r->err.connect_timeout++;
			lg_restart(r, c, now, false);
		}
		return;
	case LG_SENDING:
	case LG_RECEIVING:
		if (now - c->t_start > limit) {
			r->err.timeout++;
			lg_restart(r, c, now, false);
		}
		return;
	}
}
