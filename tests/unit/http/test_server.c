/* Unit tests of us-httpecho's connection handling (apps/httpecho/server.c).
 *
 * server.c sees the stack only through stack/include/userstack.h, so this file
 * supplies that API as a scripted peer: the test decides what us_conn_recv
 * returns, how much send space there is (us_conn_send may take part or fail with
 * EAGAIN, and on_writable follows only an EAGAIN, as the contract says), and
 * records what was sent, shut down and closed.  Zero copy: us_conn_recv_mbuf
 * hands out the unread input as a chain of seg-byte mbufs the double makes
 * itself (no EAL), us_conn_send_mbuf takes a chain whole or fails as the
 * stack would, and us_mbuf_free frees them; every mbuf made is freed by
 * the end of each test.  Each test ends with no connection state left
 * (srv.live == 0).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "apps/httpecho/server.h"

/* The API double */

struct us_conn {
	char *in;            /* what the peer sent, read from in_off */
	size_t in_len, in_off;
	bool fin;            /* the peer's FIN follows the bytes in in */
	char *out;           /* what the server sent */
	size_t out_len;
	size_t space;        /* bytes us_conn_send may still take */
	bool want_writable;  /* us_conn_send failed with EAGAIN */
	bool shut, closed, aborted;
	int migrated_to;     /* us_conn_migrate's engine + 1, 0: not migrated */
	int nodelay;         /* us_conn_set_nodelay was called with this */
	unsigned sends;      /* us_conn_send calls that took bytes */
	size_t copied_in;    /* bytes the server read by us_conn_recv */
	size_t zc_out;       /* bytes the server sent by us_conn_send_mbuf */
	size_t seg;          /* payload bytes per mbuf us_conn_recv_mbuf hands out */
	bool shared_mbufs;   /* us_conn_send_mbuf refuses them (EINVAL) */
	void *ctx;
};

static long g_mbufs; /* mbufs made and not yet freed */

static const struct us_tcp_handlers *g_h;
static void *g_listen_ctx;

int us_tcp_listen_engine(struct us_stack *st, unsigned engine, uint16_t port,
			 const struct us_tcp_handlers *h, void *ctx)
{
	(void)st;
	(void)engine;
	(void)port;
	g_h = h;
	g_listen_ctx = ctx;
	return 0;
}

void us_conn_set_ctx(struct us_conn *c, void *ctx)
{
	c->ctx = ctx;
}

int us_conn_set_nodelay(struct us_conn *c, int on)
{
	c->nodelay = on;
	return 0;
}

ssize_t us_conn_recv(struct us_conn *c, void *buf, size_t len)
{
	assert_false(c->closed || c->aborted);
	size_t n = c->in_len - c->in_off;
	if (n == 0) {
		if (c->fin)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	n = n < len ? n : len;
	memcpy(buf, c->in + c->in_off, n);
	c->in_off += n;
	c->copied_in += n;
	return (ssize_t)n;
}

/* One segment holding a copy of d[0, len). */
static struct rte_mbuf *mbuf_make(const char *d, size_t len)
{
	/* struct rte_mbuf is cache-line aligned (UBSan checks it). */
	size_t size = RTE_ALIGN_CEIL(sizeof(struct rte_mbuf) + len, RTE_CACHE_LINE_SIZE);
	struct rte_mbuf *m = aligned_alloc(RTE_CACHE_LINE_SIZE, size);

	assert_non_null(m);
	memset(m, 0, size);
	m->buf_addr = m + 1;
	m->buf_len = (uint16_t)len;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	m->nb_segs = 1;
	rte_mbuf_refcnt_set(m, 1);
	memcpy(m->buf_addr, d, len);
	g_mbufs++;
	return m;
}

void us_mbuf_free(struct rte_mbuf *m)
{
	while (m != NULL) {
		struct rte_mbuf *next = m->next;
		free(m);
		g_mbufs--;
		m = next;
	}
}

ssize_t us_conn_recv_mbuf(struct us_conn *c, struct rte_mbuf **chain)
{
	assert_false(c->closed || c->aborted);
	size_t n = c->in_len - c->in_off, seg = c->seg ? c->seg : 1448;
	struct rte_mbuf *head = NULL, *last = NULL;
	*chain = NULL;
	if (n == 0) {
		if (c->fin)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	for (size_t off = 0; off < n; off += seg) {
		struct rte_mbuf *m = mbuf_make(c->in + c->in_off + off, n - off < seg ? n - off : seg);
		if (head == NULL) {
			head = m;
		} else {
			last->next = m;
			head->nb_segs++;
			head->pkt_len += m->data_len;
		}
		last = m;
	}
	c->in_off += n;
	*chain = head;
	return (ssize_t)n;
}

/* The stack's checks: whole or nothing, each segment direct and unshared;
 * nb_segs and pkt_len must describe the chain (server.c cuts chains). */
ssize_t us_conn_send_mbuf(struct us_conn *c, struct rte_mbuf *chain)
{
	size_t len = 0;
	unsigned nseg = 0;
	assert_false(c->closed || c->aborted);
	for (struct rte_mbuf *m = chain; m != NULL; m = m->next) {
		assert_true(m->data_len > 0);
		len += m->data_len;
		nseg++;
	}
	assert_int_equal(chain->pkt_len, len);
	assert_int_equal(chain->nb_segs, nseg);
	if (c->shut) {
		errno = EPIPE;
		return -1;
	}
	if (c->shared_mbufs) {
		errno = EINVAL;
		return -1;
	}
	if (len > c->space) {
		c->want_writable = true;
		errno = EAGAIN;
		return -1;
	}
	c->out = realloc(c->out, c->out_len + len);
	assert_non_null(c->out);
	for (struct rte_mbuf *m = chain; m != NULL; m = m->next) {
		memcpy(c->out + c->out_len, rte_pktmbuf_mtod(m, const char *), m->data_len);
		c->out_len += m->data_len;
	}
	c->space -= len;
	c->zc_out += len;
	us_mbuf_free(chain); /* "acknowledged" at once */
	return (ssize_t)len;
}

ssize_t us_conn_send(struct us_conn *c, const void *buf, size_t len)
{
	assert_false(c->closed || c->aborted);
	if (c->shut) {
		errno = EPIPE;
		return -1;
	}
	if (c->space == 0) {
		c->want_writable = true;
		errno = EAGAIN;
		return -1;
	}
	size_t n = len < c->space ? len : c->space;
	c->out = realloc(c->out, c->out_len + n);
	assert_non_null(c->out);
	memcpy(c->out + c->out_len, buf, n);
	c->out_len += n;
	c->space -= n;
	c->sends++;
	return (ssize_t)n;
}

size_t us_conn_send_space(const struct us_conn *c)
{
	return c->space;
}

int us_conn_shutdown_write(struct us_conn *c)
{
	assert_false(c->shut);
	c->shut = true;
	return 0;
}

int us_conn_close(struct us_conn *c)
{
	assert_false(c->closed || c->aborted);
	c->closed = true;
	return 0;
}

int us_conn_abort(struct us_conn *c)
{
	assert_false(c->closed || c->aborted);
	c->aborted = true;
	return 0;
}

int us_conn_migrate(struct us_conn *c, unsigned engine)
{
	assert_false(c->closed || c->aborted || c->migrated_to);
	c->migrated_to = (int)engine + 1;
	return 0;
}

/* The peer's side */

static struct echo_server srv;

static struct us_conn *peer_connect(size_t space)
{
	struct us_conn *c = calloc(1, sizeof(*c));
	assert_non_null(c);
	c->space = space;
	g_h->on_accept(g_listen_ctx, c);
	assert_non_null(c->ctx);
	return c;
}

static bool peer_gone(const struct us_conn *c)
{
	return c->closed || c->aborted || c->migrated_to;
}

static void peer_write_n(struct us_conn *c, const char *s, size_t n)
{
	c->in = realloc(c->in, c->in_len + n);
	assert_non_null(c->in);
	memcpy(c->in + c->in_len, s, n);
	c->in_len += n;
	if (!peer_gone(c))
		g_h->on_readable(c->ctx, c);
}

static void peer_write(struct us_conn *c, const char *s)
{
	peer_write_n(c, s, strlen(s));
}

static void peer_fin(struct us_conn *c)
{
	c->fin = true;
	if (!peer_gone(c))
		g_h->on_readable(c->ctx, c);
}

/* The stack frees n bytes of send space (ACKs arrived). */
static void peer_grant(struct us_conn *c, size_t n)
{
	c->space += n;
	if (c->want_writable && !peer_gone(c)) {
		c->want_writable = false;
		g_h->on_writable(c->ctx, c);
	}
}

/* Grants space step bytes at a time until the server stops sending. */
static void peer_drain(struct us_conn *c, size_t step)
{
	for (int i = 0; i < 1000000 && c->want_writable && !peer_gone(c); i++)
		peer_grant(c, step);
	assert_false(c->want_writable && !peer_gone(c));
}

static void peer_free(struct us_conn *c)
{
	free(c->in);
	free(c->out);
	free(c);
}

static char *echo_of(const char *req, bool close)
{
	char head[256];
	int n = http_echo_head(head, sizeof(head), strlen(req), close);
	assert_true(n > 0);
	char *s = malloc((size_t)n + strlen(req) + 1);
	assert_non_null(s);
	sprintf(s, "%s%s", head, req);
	return s;
}

static void assert_out(const struct us_conn *c, const char *want)
{
	assert_int_equal(c->out_len, strlen(want));
	assert_memory_equal(c->out, want, c->out_len);
}

static int setup(void **state)
{
	(void)state;
	struct http_limits lim = { .max_body = 1 << 20 };
	assert_int_equal(echo_server_start(&srv, NULL, 0, 8080, &lim), 0);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	echo_server_stop(&srv);
	assert_int_equal(srv.live, 0);
	assert_int_equal(g_mbufs, 0);
	return 0;
}

#define REQ_GET "GET / HTTP/1.1\r\nHost: h\r\n\r\n"
#define REQ_POST "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
#define REQ_CLOSE "GET /c HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n"

/* Tests */

static void test_get_echoed_keep_alive(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	assert_int_equal(c->nodelay, 1); /* header + body writes, no Nagle wait */
	peer_write(c, REQ_GET);
	char *want = echo_of(REQ_GET, false);
	assert_out(c, want);
	assert_false(c->shut || peer_gone(c));
	/* Idle keep-alive connection, peer closes: we close too. */
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(srv.ctr.requests, 1);
	assert_int_equal(srv.ctr.connections, 1);
	assert_int_equal(echo_server_errors(&srv), 0);
	free(want);
	peer_free(c);
}

/* --migrate-every 2 with 2 engines: after its second answer, with nothing
 * pending and no next request read, the connection goes to engine 1 and
 * its state here is freed; a pipelined third request keeps it here until
 * that one is answered too. */
static void test_migrate_every(void **state)
{
	(void)state;
	srv.migrate_every = 2;
	srv.nengines = 2;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, REQ_GET);
	assert_int_equal(c->migrated_to, 0);
	peer_write(c, REQ_GET REQ_GET);
	assert_int_equal(c->migrated_to, 2); /* engine 1 */
	assert_int_equal(srv.ctr.requests, 3);
	assert_int_equal(srv.ctr.migrated, 1);
	assert_int_equal(srv.live, 0);
	assert_false(c->closed || c->aborted);
	peer_free(c);
}

/* A response that fits ECHO_ONE_SEND goes in one us_conn_send (one
 * segment with NODELAY); a bigger one as head, then the echo. */
static void test_one_send_per_small_response(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, REQ_POST);
	char *want = echo_of(REQ_POST, false);
	assert_out(c, want);
	assert_int_equal(c->sends, 1);
	free(want);

	static char big[8192];
	size_t body = 5000;
	int off = sprintf(big, "POST /b HTTP/1.1\r\nHost: h\r\nContent-Length: %zu\r\n\r\n", body);
	memset(big + off, 'b', body);
	big[off + (int)body] = '\0';
	c->out_len = 0;
	c->sends = 0;
	peer_write(c, big);
	want = echo_of(big, false);
	assert_out(c, want);
	assert_int_equal(c->sends, 2);
	free(want);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(echo_server_errors(&srv), 0);
	peer_free(c);
}

/* A closed connection's state waits on srv.spare and serves the next
 * accept (no malloc per connection); stop frees the spares (ASan's leak
 * check in the sanitizer build). */
static void test_closed_connection_is_reused(void **state)
{
	(void)state;
	struct us_conn *a = peer_connect(1 << 20), *b;
	void *first = a->ctx;
	char *want = echo_of(REQ_CLOSE, true);

	peer_write(a, REQ_CLOSE);
	assert_out(a, want);
	peer_fin(a);
	assert_true(a->closed);
	assert_int_equal(srv.live, 0);
	assert_int_equal(srv.nspare, 1);
	b = peer_connect(1 << 20);
	assert_ptr_equal(b->ctx, first);
	assert_int_equal(srv.nspare, 0);
	peer_write(b, REQ_CLOSE);
	assert_out(b, want); /* fresh state: nothing left from a */
	peer_fin(b);
	assert_true(b->closed);
	assert_int_equal(srv.nspare, 1);
	free(want);
	peer_free(a);
	peer_free(b);
}

static void test_byte_by_byte_and_partial_sends(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(0); /* nothing fits at first */
	const char *req = REQ_POST REQ_GET;
	for (size_t i = 0; i < strlen(req); i++)
		peer_write_n(c, req + i, 1);
	assert_int_equal(c->out_len, 0);
	assert_true(c->want_writable);
	peer_drain(c, 7);
	char *one = echo_of(REQ_POST, false), *two = echo_of(REQ_GET, false);
	char want[1024];
	snprintf(want, sizeof(want), "%s%s", one, two);
	assert_out(c, want);
	assert_int_equal(srv.ctr.requests, 2);
	echo_server_stop(&srv);
	assert_true(c->closed);
	free(one);
	free(two);
	peer_free(c);
}

static void test_connection_close_lingers_until_fin(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, REQ_CLOSE REQ_GET); /* the second is never answered */
	char *want = echo_of(REQ_CLOSE, true);
	assert_out(c, want);
	assert_true(c->shut);
	assert_false(peer_gone(c));
	peer_write(c, "more bytes are read and dropped");
	assert_out(c, want);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(srv.live, 0);
	free(want);
	peer_free(c);
}

static void test_close_waits_for_output(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(10);
	peer_write(c, REQ_CLOSE);
	assert_false(c->shut); /* FIN only after the whole response */
	peer_fin(c);           /* peer half-closes while we still send */
	assert_false(peer_gone(c));
	peer_drain(c, 3);
	char *want = echo_of(REQ_CLOSE, true);
	assert_out(c, want);
	assert_true(c->closed);
	free(want);
	peer_free(c);
}

static void test_bad_request_400_then_close(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, "GET / HTTP/1.1\r\nHost h\r\n\r\n");
	char want[256];
	assert_true(http_error_response(want, sizeof(want), 400) > 0);
	assert_out(c, want);
	assert_true(c->shut);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(srv.ctr.refused[HTTP_ERR_bad_header], 1);
	assert_int_equal(echo_server_errors(&srv), 1);
	peer_free(c);
}

static void test_too_large_413(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1048577\r\n\r\n");
	char want[256];
	assert_true(http_error_response(want, sizeof(want), 413) > 0);
	assert_out(c, want);
	assert_int_equal(srv.ctr.refused[HTTP_ERR_body_too_large], 1);
	peer_fin(c);
	assert_true(c->closed);
	peer_free(c);
}

static void test_expect_continue(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	const char *head = "PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
			   "Content-Length: 3\r\n\r\n";
	peer_write(c, head);
	assert_out(c, HTTP_CONTINUE);
	peer_write(c, "ab");
	assert_out(c, HTTP_CONTINUE); /* sent once */
	peer_write(c, "c");
	char req[256], want[512];
	snprintf(req, sizeof(req), "%sabc", head);
	char *echo = echo_of(req, false);
	snprintf(want, sizeof(want), "%s%s", HTTP_CONTINUE, echo);
	assert_out(c, want);
	/* Headers and body together: no 100. */
	c->out_len = 0;
	peer_write(c, req);
	assert_out(c, echo);
	free(echo);
	echo_server_stop(&srv); /* still open: close it before the double goes */
	assert_true(c->closed);
	peer_free(c);
}

static void test_fin_mid_request_is_truncated(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 9\r\n\r\nabc");
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(c->out_len, 0);
	assert_int_equal(srv.ctr.truncated, 1);
	peer_free(c);
}

static void test_big_body_back_pressure(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1000);
	const char *head = "POST /big HTTP/1.1\r\nHost: h\r\nContent-Length: 600000\r\n\r\n";
	size_t blen = 600000, hlen = strlen(head);
	char *req = malloc(hlen + blen + 1);
	assert_non_null(req);
	memcpy(req, head, hlen);
	for (size_t i = 0; i < blen; i++)
		req[hlen + i] = (char)('a' + i % 26);
	req[hlen + blen] = '\0';
	/* Two copies pipelined, arriving in 1460-byte segments. */
	for (int k = 0; k < 2; k++)
		for (size_t off = 0; off < hlen + blen; off += 1460) {
			size_t n = hlen + blen - off < 1460 ? hlen + blen - off : 1460;
			peer_write_n(c, req + off, n);
		}
	peer_drain(c, 65536);
	char *one = echo_of(req, false);
	size_t olen = strlen(one);
	assert_int_equal(c->out_len, 2 * olen);
	assert_memory_equal(c->out, one, olen);
	assert_memory_equal(c->out + olen, one, olen);
	assert_int_equal(srv.ctr.requests, 2);
	echo_server_stop(&srv);
	assert_true(c->closed);
	free(one);
	free(req);
	peer_free(c);
}

/* Streaming */

/* A POST of a body_len-byte patterned body (the pattern shifts with seed,
 * so one request's bytes cannot pass for another's); malloc'd, NUL-ended. */
static char *big_post(size_t body_len, unsigned seed, const char *extra_headers)
{
	char head[256];
	int n = snprintf(head, sizeof(head), "POST /big HTTP/1.1\r\nHost: h\r\n%sContent-Length: %zu\r\n\r\n",
			 extra_headers, body_len);
	char *req = malloc((size_t)n + body_len + 1);
	assert_non_null(req);
	memcpy(req, head, (size_t)n);
	for (size_t i = 0; i < body_len; i++)
		req[n + i] = (char)('a' + (i * 7 + seed) % 26);
	req[(size_t)n + body_len] = '\0';
	return req;
}

/* Writes s in pieces of the given sizes, cycling. */
static void peer_write_pieces(struct us_conn *c, const char *s, const size_t *sizes, size_t nsizes)
{
	size_t len = strlen(s);
	for (size_t off = 0, k = 0; off < len; k++) {
		size_t n = sizes[k % nsizes] < len - off ? sizes[k % nsizes] : len - off;
		peer_write_n(c, s + off, n);
		off += n;
	}
}

/* 1 MiB echoed: the response head once the request head is parsed, the
 * body as it arrives, by mbuf (only the first read is copied, so no
 * buffer grows with the body); byte-identical to the buffered echo. */
static void test_stream_large_body(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(4 << 20);
	char *req = big_post(1 << 20, 0, ""), *want = echo_of(req, false);
	const size_t piece = 65536;
	peer_write_pieces(c, req, &piece, 1);
	assert_out(c, want);
	assert_int_equal(srv.ctr.requests, 1);
	assert_int_equal(srv.ctr.streamed, 1);
	assert_true(c->copied_in <= 4096);
	assert_int_equal(c->zc_out, strlen(req) - c->copied_in);
	/* A small request after it takes the one-send path again. */
	c->out_len = 0;
	c->sends = 0;
	peer_write(c, REQ_GET);
	free(want);
	want = echo_of(REQ_GET, false);
	assert_out(c, want);
	assert_int_equal(c->sends, 1);
	assert_int_equal(srv.ctr.streamed, 1);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(echo_server_errors(&srv), 0);
	free(want);
	free(req);
	peer_free(c);
}

/* A body in many chains of odd sizes and small segments, with the send
 * buffer filling and draining in between: the same bytes come back. */
static void test_stream_many_chains(void **state)
{
	(void)state;
	static const size_t sizes[] = { 1, 4000, 17, 1448, 9000, 3, 2896, 700 };
	struct us_conn *c = peer_connect(3000);
	char *req = big_post(200000, 3, ""), *want = echo_of(req, false);
	c->seg = 512;
	size_t len = strlen(req);
	for (size_t off = 0, k = 0; off < len; k++) {
		size_t n = sizes[k % 8] < len - off ? sizes[k % 8] : len - off;
		peer_write_n(c, req + off, n);
		off += n;
		if (k % 5 == 4)
			peer_drain(c, 2048);
	}
	peer_drain(c, 2048);
	assert_out(c, want);
	assert_int_equal(srv.ctr.requests, 1);
	assert_int_equal(srv.ctr.streamed, 1);
	assert_true(c->zc_out > 190000);
	echo_server_stop(&srv);
	free(want);
	free(req);
	peer_free(c);
}

/* Back-pressure: with the send buffer full the server stops taking input
 * (it stays with the stack, whose window holds the peer back), and resumes
 * on on_writable. */
static void test_stream_back_pressure(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1000);
	char *req = big_post(1 << 20, 5, ""), *want = echo_of(req, false);
	size_t len = strlen(req);
	peer_write_n(c, req, 100000);
	peer_write_n(c, req + 100000, 100000);
	assert_true(c->want_writable);
	assert_true(c->in_len - c->in_off >= 100000); /* the second write not taken */
	peer_write_n(c, req + 200000, len - 200000);
	peer_drain(c, 65536);
	assert_out(c, want);
	assert_int_equal(srv.ctr.requests, 1);
	echo_server_stop(&srv);
	free(want);
	free(req);
	peer_free(c);
}

/* Pipelined requests in one chain: a streamed body ends inside a segment
 * and a small request, then another big one, follow in the same chain. */
static void test_stream_pipelined_same_chain(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(8 << 20);
	char *one = big_post(300001, 1, ""), *two = big_post(70000, 2, "");
	size_t l1 = strlen(one), l2 = strlen(two), lg = strlen(REQ_GET);
	char *all = malloc(l1 + lg + l2 + 1), *e1 = echo_of(one, false), *eg = echo_of(REQ_GET, false),
	     *e2 = echo_of(two, false);
	assert_non_null(all);
	memcpy(all, one, l1);
	memcpy(all + l1, REQ_GET, lg);
	memcpy(all + l1 + lg, two, l2 + 1);
	c->seg = 1000; /* the first body ends mid-segment */
	peer_write(c, all);
	size_t n1 = strlen(e1), ng = strlen(eg), n2 = strlen(e2);
	assert_int_equal(c->out_len, n1 + ng + n2);
	assert_memory_equal(c->out, e1, n1);
	assert_memory_equal(c->out + n1, eg, ng);
	assert_memory_equal(c->out + n1 + ng, e2, n2);
	assert_int_equal(srv.ctr.requests, 3);
	assert_int_equal(srv.ctr.streamed, 2);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(echo_server_errors(&srv), 0);
	free(all);
	free(one);
	free(two);
	free(e1);
	free(eg);
	free(e2);
	peer_free(c);
}

/* Content-Length 0 (and a head alone over the streaming size) is not a
 * streamed body: the one-send path answers it. */
static void test_stream_not_for_empty_body(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	const char *req = "POST /e HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n";
	char *want = echo_of(req, false);
	peer_write(c, req);
	assert_out(c, want);
	assert_int_equal(c->sends, 1);
	assert_int_equal(srv.ctr.streamed, 0);
	assert_int_equal(srv.ctr.requests, 1);
	free(want);
	peer_fin(c);
	assert_true(c->closed);
	peer_free(c);
}

/* The peer closes in the middle of a streamed body: what arrived was
 * echoed after the head, then the connection closes, counted truncated. */
static void test_stream_fin_mid_body(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	char *req = big_post(100000, 7, ""), *want = echo_of(req, false);
	size_t head_len = strlen(want) - strlen(req);
	peer_write_n(c, req, 50000);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(c->out_len, head_len + 50000);
	assert_memory_equal(c->out, want, c->out_len);
	assert_int_equal(srv.ctr.truncated, 1);
	assert_int_equal(srv.ctr.requests, 0);
	free(want);
	free(req);
	peer_free(c);
}

/* Expect: 100-continue on a streamed body: 100 first, then the echo; a
 * closing request closes after its body; mbufs the stack refuses (shared)
 * go by copy, counted. */
static void test_stream_continue_close_and_copy(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	char *req = big_post(20000, 9, "Expect: 100-continue\r\nConnection: close\r\n");
	char *echo = echo_of(req, true), want[32768];
	size_t head_len = strlen(req) - 20000;
	c->shared_mbufs = true;
	peer_write_n(c, req, head_len);
	snprintf(want, sizeof(want), "%s%.*s", HTTP_CONTINUE, (int)(strlen(echo) - 20000), echo);
	assert_out(c, want); /* 100, the response head, the request's head echoed */
	peer_write(c, req + head_len);
	snprintf(want, sizeof(want), "%s%s", HTTP_CONTINUE, echo);
	assert_out(c, want);
	assert_true(c->shut);
	assert_int_equal(c->zc_out, 0);
	assert_true(srv.ctr.stream_copied > 0);
	peer_fin(c);
	assert_true(c->closed);
	assert_int_equal(echo_server_errors(&srv), 0);
	free(echo);
	free(req);
	peer_free(c);
}

static void test_reset_frees(void **state)
{
	(void)state;
	struct us_conn *c = peer_connect(1 << 20);
	peer_write(c, "GET / HT");
	g_h->on_closed(c->ctx, c, ECONNRESET);
	assert_int_equal(srv.live, 0);
	assert_int_equal(srv.ctr.reset, 1);
	peer_free(c);
}

static void test_stop_closes_live(void **state)
{
	(void)state;
	struct us_conn *a = peer_connect(1 << 20), *b = peer_connect(0);
	peer_write(b, REQ_GET); /* b has output pending */
	assert_int_equal(srv.live, 2);
	echo_server_stop(&srv);
	assert_true(a->closed && b->closed);
	assert_int_equal(srv.live, 0);
	peer_free(a);
	peer_free(b);
}

/* Buffers: small ones stay; a big one stays while requests keep filling it
 * (bulk: no regrowth from 4 KiB per request); it goes back after a small
 * request, or when bytes read ahead still need it. */
static void test_shrink_policy(void **state)
{
	(void)state;
	assert_false(echo_should_shrink(4096, 10, 0));
	assert_false(echo_should_shrink(64 << 10, 10, 0)); /* not above 64 KiB */
	assert_false(echo_should_shrink(2 << 20, (1 << 20) + 80, 0)); /* bulk */
	assert_false(echo_should_shrink(2 << 20, 512 << 10, 0));     /* = cap / 4 */
	assert_true(echo_should_shrink(2 << 20, (512 << 10) - 1, 0));
	assert_true(echo_should_shrink(16 << 20, 100, 0));          /* after 16 MiB */
	assert_true(echo_should_shrink(16 << 20, 100, 4096));
	assert_false(echo_should_shrink(16 << 20, 100, 4097));      /* read ahead */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_get_echoed_keep_alive, setup, teardown),
		cmocka_unit_test_setup_teardown(test_migrate_every, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_send_per_small_response, setup, teardown),
		cmocka_unit_test_setup_teardown(test_closed_connection_is_reused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_byte_by_byte_and_partial_sends, setup, teardown),
		cmocka_unit_test_setup_teardown(test_connection_close_lingers_until_fin, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_close_waits_for_output, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_request_400_then_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_large_413, setup, teardown),
		cmocka_unit_test_setup_teardown(test_expect_continue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fin_mid_request_is_truncated, setup, teardown),
		cmocka_unit_test_setup_teardown(test_big_body_back_pressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_large_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_many_chains, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_back_pressure, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_pipelined_same_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_not_for_empty_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_fin_mid_body, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_continue_close_and_copy, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_reset_frees, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stop_closes_live, setup, teardown),
		cmocka_unit_test(test_shrink_policy),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
