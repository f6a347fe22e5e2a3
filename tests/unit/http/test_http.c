/* Unit tests of us-httpecho's request framer and response builders
 * (apps/httpecho/http.c): pure, no stack, no I/O. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apps/httpecho/http.h"

/* Helpers */

#define GET_SIMPLE "GET /index.html?q=1 HTTP/1.1\r\nHost: example\r\nUser-Agent: t\r\n\r\n"
#define POST_HEAD "POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\n"
#define CHUNKED                                                                        \
	"POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"            \
	"5;name=val;q=\"a \\\" b\"\r\nhello\r\n"                                       \
	"6 ; ext ; e2 = v\r\n world\r\n"                                               \
	"0;last\r\nX-Trailer: 1\r\nY:z\r\n\r\n"
#define CHUNKED_HEAD_LEN (sizeof("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n") - 1)

static struct http_parser *new_parser(const struct http_limits *lim)
{
	struct http_parser *p = malloc(sizeof(*p));
	assert_non_null(p);
	http_parser_init(p, lim);
	return p;
}

/* Feeds s in pieces of step bytes until the parser stops needing more;
 * *used is the total it took. */
static enum http_event feed_steps(struct http_parser *p, const char *s, size_t len, size_t step,
				  size_t *used)
{
	enum http_event ev = HTTP_NEED_MORE;
	size_t off = 0;
	while (off < len && ev == HTTP_NEED_MORE) {
		size_t n = len - off < step ? len - off : step;
		size_t u = 0;
		ev = http_parser_feed(p, s + off, n, &u);
		assert_true(u <= n);
		if (ev == HTTP_NEED_MORE)
			assert_int_equal(u, n); /* need-more always takes everything */
		off += u;
	}
	*used = off;
	return ev;
}

static enum http_event feed_str(struct http_parser *p, const char *s, size_t *used)
{
	return feed_steps(p, s, strlen(s), strlen(s) ? strlen(s) : 1, used);
}

/* The error a whole request gets, fed in one piece. */
static enum http_error error_of(const char *s, const struct http_limits *lim)
{
	struct http_parser *p = new_parser(lim);
	size_t used;
	enum http_event ev = feed_str(p, s, &used);
	enum http_error e = ev == HTTP_ERROR ? p->error : HTTP_ERR_NONE;
	if (ev == HTTP_ERROR) { /* stays refused: nothing more is taken */
		assert_int_equal(http_parser_feed(p, "x", 1, &used), HTTP_ERROR);
		assert_int_equal(used, 0);
	}
	free(p);
	return e;
}

/* Simple requests and splits */

static void test_simple_get(void **state)
{
	(void)state;
	struct http_parser *p = new_parser(NULL);
	size_t used;
	assert_int_equal(feed_str(p, GET_SIMPLE, &used), HTTP_REQUEST);
	assert_int_equal(used, strlen(GET_SIMPLE));
	assert_int_equal(p->req.lead_len, 0);
	assert_int_equal(p->req.header_len, strlen(GET_SIMPLE));
	assert_int_equal(p->req.raw_len, strlen(GET_SIMPLE));
	assert_int_equal(p->req.body_len, 0);
	assert_int_equal(p->req.version_minor, 1);
	assert_true(p->req.headers_done);
	assert_true(p->req.keep_alive);
	assert_false(p->req.expect_continue);
	assert_false(p->req.chunked);
	assert_false(p->req.head);
	assert_false(http_parser_wants_continue(p));
	/* Done: further feeding takes nothing until reset. */
	assert_int_equal(http_parser_feed(p, "G", 1, &used), HTTP_REQUEST);
	assert_int_equal(used, 0);
	free(p);
}

static void test_get_split_at_every_byte(void **state)
{
	(void)state;
	const char *s = GET_SIMPLE;
	size_t len = strlen(s), used;
	struct http_parser *p = new_parser(NULL);
	for (size_t k = 1; k < len; k++) {
		http_parser_reset(p);
		assert_int_equal(http_parser_feed(p, s, k, &used), HTTP_NEED_MORE);
		assert_int_equal(used, k);
		assert_int_equal(http_parser_feed(p, s + k, len - k, &used), HTTP_REQUEST);
		assert_int_equal(used, len - k);
		assert_int_equal(p->req.raw_len, len);
		assert_true(p->req.keep_alive);
	}
	http_parser_reset(p);
	assert_int_equal(feed_steps(p, s, len, 1, &used), HTTP_REQUEST);
	assert_int_equal(used, len);
	assert_int_equal(p->req.header_len, len);
	free(p);
}

static void test_post_content_length(void **state)
{
	(void)state;
	const char *s = POST_HEAD "helloGET";
	size_t total = strlen(POST_HEAD) + 5, used;
	for (size_t step = 1; step <= strlen(s); step++) {
		struct http_parser *p = new_parser(NULL);
		assert_int_equal(feed_steps(p, s, strlen(s), step, &used), HTTP_REQUEST);
		assert_int_equal(used, total); /* "GET" belongs to the next request */
		assert_int_equal(p->req.header_len, strlen(POST_HEAD));
		assert_int_equal(p->req.raw_len, total);
		assert_int_equal(p->req.body_len, 5);
		assert_true(p->req.has_length);
		assert_int_equal(p->req.content_length, 5);
		free(p);
	}
}

static void test_head_and_identical_lengths(void **state)
{
	(void)state;
	struct http_parser *p = new_parser(NULL);
	size_t used;
	const char *s = "HEAD / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n"
			"Content-Length: 2\r\n\r\nab";
	assert_int_equal(feed_str(p, s, &used), HTTP_REQUEST);
	assert_true(p->req.head);
	assert_int_equal(p->req.body_len, 2);
	http_parser_reset(p);
	/* Methods are case-sensitive: "head" is some other method. */
	assert_int_equal(feed_str(p, "head / HTTP/1.1\r\nHost: h\r\n\r\n", &used), HTTP_REQUEST);
	assert_false(p->req.head);
	free(p);
}

/* Chunked */

static void test_chunked_extensions_trailers(void **state)
{
	(void)state;
	const char *s = CHUNKED "GET / HTTP/1.1\r\n";
	size_t total = strlen(CHUNKED), used;
	for (size_t step = 1; step <= strlen(s); step++) {
		struct http_parser *p = new_parser(NULL);
		assert_int_equal(feed_steps(p, s, strlen(s), step, &used), HTTP_REQUEST);
		assert_int_equal(used, total);
		assert_true(p->req.chunked);
		assert_false(p->req.has_length);
		assert_int_equal(p->req.header_len, CHUNKED_HEAD_LEN);
		assert_int_equal(p->req.raw_len, total);
		assert_int_equal(p->req.body_len, 11); /* "hello" " world" */
		free(p);
	}
}

static void test_chunked_no_trailers_hex_sizes(void **state)
{
	(void)state;
	struct http_parser *p = new_parser(NULL);
	size_t used;
	char s[256];
	int n = snprintf(s, sizeof(s),
			 "PUT /x HTTP/1.1\r\nHost: h\r\ntransfer-encoding: Chunked\r\n\r\n"
			 "A\r\n0123456789\r\n00001\r\nz\r\n0\r\n\r\n");
	assert_int_equal(feed_str(p, s, &used), HTTP_REQUEST);
	assert_int_equal(used, (size_t)n);
	assert_int_equal(p->req.body_len, 11);
	free(p);
}

/* Pipelining */

static void test_pipelined_two_requests(void **state)
{
	(void)state;
	const char *one = POST_HEAD "hello";
	const char *two = "GET /two HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
	char both[512];
	snprintf(both, sizeof(both), "%s%s", one, two);
	struct http_parser *p = new_parser(NULL);
	size_t used;
	assert_int_equal(http_parser_feed(p, both, strlen(both), &used), HTTP_REQUEST);
	assert_int_equal(used, strlen(one));
	assert_true(p->req.keep_alive);
	http_parser_reset(p);
	assert_int_equal(http_parser_feed(p, both + used, strlen(both) - used, &used),
			 HTTP_REQUEST);
	assert_int_equal(used, strlen(two));
	assert_int_equal(p->req.raw_len, strlen(two));
	assert_false(p->req.keep_alive);
	free(p);
}

static void test_leading_empty_lines_skipped(void **state)
{
	(void)state;
	struct http_parser *p = new_parser(NULL);
	size_t used;
	const char *s = "\r\n\r\n" GET_SIMPLE;
	assert_int_equal(feed_steps(p, s, strlen(s), 1, &used), HTTP_REQUEST);
	assert_int_equal(p->req.lead_len, 4);
	assert_int_equal(p->req.raw_len, strlen(GET_SIMPLE));
	assert_int_equal(used, p->req.lead_len + p->req.raw_len);
	free(p);
}

/* Keep-alive (RFC 9112 9.3) */

static void test_keep_alive_rules(void **state)
{
	(void)state;
	static const struct {
		const char *req;
		bool keep_alive;
	} cases[] = {
		{ "GET / HTTP/1.1\r\nHost: h\r\n\r\n", true },
		{ "GET / HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nHost: h\r\nCONNECTION: Close\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nHost: h\r\nConnection: upgrade, close\r\n\r\n", false },
		{ "GET / HTTP/1.1\r\nHost: h\r\nConnection: keep-alive\r\n\r\n", true },
		{ "GET / HTTP/1.1\r\nHost: h\r\nConnection: Upgrade\r\n\r\n", true },
		{ "GET / HTTP/1.1\r\nHost: h\r\nConnection: closed\r\n\r\n", true },
		{ "GET / HTTP/1.0\r\n\r\n", false },
		{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", true },
		{ "GET / HTTP/1.0\r\nconnection: Keep-Alive\r\n\r\n", true },
		{ "GET / HTTP/1.0\r\nConnection: keep-alive, close\r\n\r\n", false },
		{ "GET / HTTP/1.0\r\nConnection: keep-alive\r\nConnection: close\r\n\r\n", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct http_parser *p = new_parser(NULL);
		size_t used;
		assert_int_equal(feed_str(p, cases[i].req, &used), HTTP_REQUEST);
		if (p->req.keep_alive != cases[i].keep_alive)
			fail_msg("case %zu: keep_alive %d for %s", i, p->req.keep_alive,
				 cases[i].req);
		free(p);
	}
}

/* Expect: 100-continue (RFC 9110 10.1.1) */

static void test_expect_continue(void **state)
{
	(void)state;
	const char *head = "PUT /u HTTP/1.1\r\nHost: h\r\nexpect: 100-Continue\r\n"
			   "Content-Length: 3\r\n\r\n";
	struct http_parser *p = new_parser(NULL);
	size_t used;
	/* Headers alone: the moment to send 100 Continue. */
	assert_int_equal(feed_str(p, head, &used), HTTP_NEED_MORE);
	assert_true(p->req.headers_done);
	assert_true(p->req.expect_continue);
	assert_true(http_parser_wants_continue(p));
	assert_int_equal(p->req.header_len, strlen(head));
	assert_int_equal(http_parser_body_left(p), 3);
	assert_int_equal(http_parser_feed(p, "a", 1, &used), HTTP_NEED_MORE);
	assert_false(http_parser_wants_continue(p)); /* the body has started */
	assert_int_equal(http_parser_body_left(p), 2);
	assert_int_equal(http_parser_feed(p, "bc", 2, &used), HTTP_REQUEST);
	assert_true(p->req.expect_continue);
	assert_false(http_parser_wants_continue(p)); /* all there: no 100 */
	assert_int_equal(http_parser_body_left(p), 0);

	/* HTTP/1.0 expectations are ignored; no body means nothing to wait for. */
	http_parser_reset(p);
	assert_int_equal(feed_str(p, "PUT / HTTP/1.0\r\nExpect: 100-continue\r\n"
				     "Content-Length: 3\r\n\r\n", &used), HTTP_NEED_MORE);
	assert_false(p->req.expect_continue);
	assert_false(http_parser_wants_continue(p));
	http_parser_reset(p);
	assert_int_equal(feed_str(p, "GET / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n\r\n",
				  &used), HTTP_REQUEST);
	assert_false(http_parser_wants_continue(p));
	/* Chunked: wanted until the first chunk-size byte arrives. */
	http_parser_reset(p);
	assert_int_equal(feed_str(p, "PUT / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\n"
				     "Transfer-Encoding: chunked\r\n\r\n", &used), HTTP_NEED_MORE);
	assert_true(http_parser_wants_continue(p));
	assert_int_equal(http_parser_body_left(p), 0); /* not a Content-Length body */
	free(p);
}

/* Refusals */

static void test_malformed_400(void **state)
{
	(void)state;
	static const struct {
		const char *req;
		enum http_error err;
	} cases[] = {
		{ "GET /\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GE(T / HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ " GET / HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GET / HTTX/1.1\r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GET / http/1.1\r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GET / HTTP/1.1 \r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GET /a\x7f HTTP/1.1\r\nHost: h\r\n\r\n", HTTP_ERR_bad_request_line },
		{ "GET / HTTP/1.1\nHost: h\n\n", HTTP_ERR_bad_line_end },
		{ "GET / HTTP/1.1\r\rHost: h\r\n\r\n", HTTP_ERR_bad_line_end },
		{ "GET / HTTP/1.1\r\nHost: h\n\r\n", HTTP_ERR_bad_line_end },
		{ "GET / HTTP/1.1\r\nHost h\r\n\r\n", HTTP_ERR_bad_header },
		{ "GET / HTTP/1.1\r\nHost : h\r\n\r\n", HTTP_ERR_bad_header },
		{ "GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n", HTTP_ERR_bad_header },
		{ "GET / HTTP/1.1\r\nHost: h\r\nX: a\x01z\r\n\r\n", HTTP_ERR_bad_header },
		{ "GET / HTTP/1.1\r\nHost: h\r\n: a\r\n\r\n", HTTP_ERR_bad_header },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5a\r\n\r\n", HTTP_ERR_bad_content_length },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", HTTP_ERR_bad_content_length },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length:\r\n\r\n", HTTP_ERR_bad_content_length },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1 2\r\n\r\n", HTTP_ERR_bad_content_length },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5, 6\r\n\r\n", HTTP_ERR_bad_content_length },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		  HTTP_ERR_bad_content_length },
		{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", HTTP_ERR_bad_transfer_encoding },
		{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
		  HTTP_ERR_bad_transfer_encoding },
		{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		  HTTP_ERR_bad_transfer_encoding },
		{ "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: \r\n\r\n", HTTP_ERR_bad_transfer_encoding },
		{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", HTTP_ERR_bad_transfer_encoding },
		{ "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
		  HTTP_ERR_length_and_chunked },
		{ "GET / HTTP/1.1\r\n\r\n", HTTP_ERR_bad_host },
		{ "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", HTTP_ERR_bad_host },
		{ "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", HTTP_ERR_bad_host },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum http_error e = error_of(cases[i].req, NULL);
		if (e != cases[i].err)
			fail_msg("case %zu: got %s, want %s", i, http_error_name(e),
				 http_error_name(cases[i].err));
		assert_int_equal(http_error_status(e), 400);
	}
}

static void test_bad_chunks_400(void **state)
{
	(void)state;
	static const struct {
		const char *body;
		enum http_error err;
	} cases[] = {
		{ "zz\r\n", HTTP_ERR_bad_chunk_size },
		{ "\r\n", HTTP_ERR_bad_chunk_size },
		{ ";a\r\n", HTTP_ERR_bad_chunk_size },
		{ "5;\r\n", HTTP_ERR_bad_chunk_size },
		{ "5 x\r\n", HTTP_ERR_bad_chunk_size },
		{ "5;a=\r\n", HTTP_ERR_bad_chunk_size },
		{ "5;a=\"open\r\n", HTTP_ERR_bad_chunk_size },
		{ "5\nhello\r\n", HTTP_ERR_bad_line_end },
		{ "5\r\nhelloXX", HTTP_ERR_bad_chunk_end },
		{ "5\r\nhello\n", HTTP_ERR_bad_chunk_end },
		{ "0\r\nnot a field\r\n\r\n", HTTP_ERR_bad_trailer },
		{ "0\r\n folded: x\r\n\r\n", HTTP_ERR_bad_trailer },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char s[256];
		snprintf(s, sizeof(s), "POST / HTTP/1.1\r\nHost: h\r\n"
			 "Transfer-Encoding: chunked\r\n\r\n%s", cases[i].body);
		enum http_error e = error_of(s, NULL);
		if (e != cases[i].err)
			fail_msg("case %zu: got %s, want %s", i, http_error_name(e),
				 http_error_name(cases[i].err));
		assert_int_equal(http_error_status(e), 400);
	}
}

static void test_version_505(void **state)
{
	(void)state;
	assert_int_equal(error_of("GET / HTTP/2.0\r\nHost: h\r\n\r\n", NULL), HTTP_ERR_bad_version);
	assert_int_equal(error_of("GET / HTTP/1.2\r\nHost: h\r\n\r\n", NULL), HTTP_ERR_bad_version);
	assert_int_equal(error_of("GET / HTTP/0.9\r\n\r\n", NULL), HTTP_ERR_bad_version);
	assert_int_equal(http_error_status(HTTP_ERR_bad_version), 505);
}

static void test_body_too_large_413(void **state)
{
	(void)state;
	struct http_limits lim = { .max_body = 10 };
	size_t used;
	/* Refused at the end of the headers, before any body byte. */
	assert_int_equal(error_of("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", &lim),
			 HTTP_ERR_body_too_large);
	assert_int_equal(error_of("POST / HTTP/1.1\r\nHost: h\r\n"
				  "Content-Length: 99999999999999999999999999\r\n\r\n", NULL),
			 HTTP_ERR_body_too_large);
	struct http_parser *p = new_parser(&lim);
	assert_int_equal(feed_str(p, "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\n"
				     "0123456789", &used), HTTP_REQUEST);
	free(p);
	/* Chunked: one big chunk, a huge size, or framing that adds up. */
	const char *te = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n";
	char s[512];
	snprintf(s, sizeof(s), "%sB\r\n", te);
	assert_int_equal(error_of(s, &lim), HTTP_ERR_body_too_large);
	snprintf(s, sizeof(s), "%sFFFFFFFFFFFFFFFFFFFFFFFF\r\n", te);
	assert_int_equal(error_of(s, NULL), HTTP_ERR_body_too_large);
	snprintf(s, sizeof(s), "%s1\r\na\r\n1\r\nb\r\n1\r\nc\r\n", te);
	assert_int_equal(error_of(s, &lim), HTTP_ERR_body_too_large);
	snprintf(s, sizeof(s), "%s0;%s\r\n\r\n", te, "a-very-long-extension-name");
	assert_int_equal(error_of(s, &lim), HTTP_ERR_body_too_large);
	/* 5 data bytes + "5\r\n" + "\r\n" = 10 raw bytes: fits, then the last
	 * chunk does not. */
	snprintf(s, sizeof(s), "%s5\r\nhello\r\n0\r\n\r\n", te);
	assert_int_equal(error_of(s, &lim), HTTP_ERR_body_too_large);
	struct http_limits roomy = { .max_body = 15 };
	assert_int_equal(error_of(s, &roomy), HTTP_ERR_NONE);
	assert_int_equal(http_error_status(HTTP_ERR_body_too_large), 413);
}

static void test_header_limits(void **state)
{
	(void)state;
	const char *s = "GET / HTTP/1.1\r\nHost: h\r\nX-Pad: 0123456789\r\n\r\n";
	struct http_limits exact = { .max_header = strlen(s) };
	struct http_limits less = { .max_header = strlen(s) - 1 };
	assert_int_equal(error_of(s, &exact), HTTP_ERR_NONE);
	assert_int_equal(error_of(s, &less), HTTP_ERR_header_too_large);
	assert_int_equal(http_error_status(HTTP_ERR_header_too_large), 431);

	/* A request line alone over the limit: 414. */
	struct http_limits tiny = { .max_header = 16 };
	assert_int_equal(error_of("GET /0123456789abcdef HTTP/1.1\r\n", &tiny),
			 HTTP_ERR_request_line_too_long);
	assert_int_equal(http_error_status(HTTP_ERR_request_line_too_long), 414);
	/* Boundaries: "GET / HTTP/1.0" CRLF CRLF is 18 bytes. */
	const char *v10 = "GET / HTTP/1.0\r\n\r\n";
	struct http_limits l15 = { .max_header = 15 }, l17 = { .max_header = 17 },
			   l18 = { .max_header = 18 };
	assert_int_equal(error_of(v10, &l15), HTTP_ERR_request_line_too_long);
	assert_int_equal(error_of(v10, &l17), HTTP_ERR_header_too_large);
	assert_int_equal(error_of(v10, &l18), HTTP_ERR_NONE);

	/* One header line longer than the line buffer, under the section limit. */
	struct http_limits big = { .max_header = 4 * HTTP_LINE_MAX };
	size_t n = HTTP_LINE_MAX + 64;
	/* static, not malloc: GCC's -Warray-bounds under ASan cannot see that
	 * assert_non_null() stops on NULL. */
	static char line[HTTP_LINE_MAX + 128];
	int off = sprintf(line, "GET / HTTP/1.1\r\nHost: h\r\nX-Long: ");
	memset(line + off, 'a', n);
	strcpy(line + off + n, "\r\n\r\n");
	assert_int_equal(error_of(line, &big), HTTP_ERR_header_too_large);

	/* Endless empty lines before a request end too. */
	char crlfs[64];
	for (int i = 0; i < 30; i++)
		memcpy(crlfs + 2 * i, "\r\n", 2);
	crlfs[60] = '\0';
	assert_int_equal(error_of(crlfs, &tiny), HTTP_ERR_header_too_large);
}

static void test_error_table(void **state)
{
	(void)state;
	assert_int_equal(http_error_status(HTTP_ERR_NONE), 0);
	for (unsigned e = 1; e < HTTP_ERR_COUNT; e++) {
		int st = http_error_status(e);
		assert_true(st == 400 || st == 413 || st == 414 || st == 431 || st == 505);
		assert_string_not_equal(http_reason(st), "Error");
		assert_true(strlen(http_error_desc(e)) > 0);
		for (unsigned f = 1; f < e; f++)
			assert_string_not_equal(http_error_name(e), http_error_name(f));
	}
}

/* Any split gives the same verdict as one piece: valid or not. */
static void test_random_splits_agree(void **state)
{
	(void)state;
	static const char *const reqs[] = {
		GET_SIMPLE, POST_HEAD "hello", CHUNKED, ("\r\n" GET_SIMPLE),
		"GET / HTTP/1.1\r\nHost: h\r\nX: a\r\n b\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX",
		"GET / HTTP/1.1\r\nHost: h\n\r\n", "GET / HTTP/3.0\r\n\r\n",
	};
	uint32_t seed = 12345;
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		struct http_parser *one = new_parser(NULL), *p = new_parser(NULL);
		size_t len = strlen(reqs[i]), used1, used = 0, u;
		enum http_event ev1 = http_parser_feed(one, reqs[i], len, &used1), ev = HTTP_NEED_MORE;
		for (int round = 0; round < 50; round++) {
			http_parser_reset(p);
			used = 0;
			ev = HTTP_NEED_MORE;
			while (used < len && ev == HTTP_NEED_MORE) {
				seed = seed * 1103515245u + 12345u;
				size_t n = 1 + (seed >> 16) % 9;
				n = n < len - used ? n : len - used;
				ev = http_parser_feed(p, reqs[i] + used, n, &u);
				used += u;
			}
			assert_int_equal(ev, ev1);
			assert_int_equal(p->error, one->error);
			assert_int_equal(p->req.raw_len, one->req.raw_len);
			if (ev != HTTP_ERROR)
				assert_int_equal(used, used1);
		}
		free(one);
		free(p);
	}
}

/* Line ends found with memchr (http_gather): the refusal and the byte it
 * comes at are the same whatever the pieces, CR and LF split apart
 * included.  used counts the bytes up to and including the offending one. */
static void test_line_end_errors_at_byte(void **state)
{
	(void)state;
	static const struct http_limits tiny = { .max_header = 16 };
	static const struct {
		const char *req;
		const struct http_limits *lim;
		enum http_error err;
		size_t used;
	} cases[] = {
		{ "GET / HTTP/1.1\r\rHost: h\r\n\r\n", NULL, HTTP_ERR_bad_line_end, 16 },
		{ "GET / HTTP/1.1\rXHost: h\r\n\r\n", NULL, HTTP_ERR_bad_line_end, 16 },
		{ "GET / HTTP/1.1\nHost: h\r\n\r\n", NULL, HTTP_ERR_bad_line_end, 15 },
		{ "GET / HTTP/1.1\r\nHost: h\n\r\n", NULL, HTTP_ERR_bad_line_end, 24 },
		{ "GET / HTTP/1.1\r\nHost: h\r\n\n", NULL, HTTP_ERR_bad_line_end, 26 },
		{ "\r\n\rGET / HTTP/1.1\r\n", NULL, HTTP_ERR_bad_line_end, 4 },
		{ "GET /0123456789abcdef HTTP/1.1\r\n", &tiny, HTTP_ERR_request_line_too_long, 15 },
		{ "GET /0123456789\r\n", &tiny, HTTP_ERR_request_line_too_long, 15 },
		/* A CR at the last byte the limit allows, then no LF. */
		{ "GET /012345678\rX HTTP/1.1\r\n", &tiny, HTTP_ERR_bad_line_end, 16 },
		{ "GET /012345678\r\n", &tiny, HTTP_ERR_bad_request_line, 16 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len = strlen(cases[i].req);
		for (size_t step = 1; step <= len; step++) {
			struct http_parser *p = new_parser(cases[i].lim);
			size_t used;
			enum http_event ev = feed_steps(p, cases[i].req, len, step, &used);
			if (ev != HTTP_ERROR || p->error != cases[i].err || used != cases[i].used)
				print_error("case %zu step %zu: ev %d err %d used %zu\n", i, step, ev, p->error, used);
			assert_int_equal(ev, HTTP_ERROR);
			assert_int_equal(p->error, cases[i].err);
			assert_int_equal(used, cases[i].used);
			free(p);
		}
	}
}

/* Responses */

static void test_echo_head_exact(void **state)
{
	(void)state;
	char buf[256];
	const char *keep = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
			   "Content-Length: 42\r\n\r\n";
	const char *close = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
			    "Content-Length: 16777216\r\nConnection: close\r\n\r\n";
	assert_int_equal(http_echo_head(buf, sizeof(buf), 42, false), (int)strlen(keep));
	assert_string_equal(buf, keep);
	assert_int_equal(http_echo_head(buf, sizeof(buf), 16777216, true), (int)strlen(close));
	assert_string_equal(buf, close);
	assert_int_equal(http_echo_head(buf, strlen(keep), 42, false), -ENOSPC);
	assert_int_equal(http_echo_head(buf, strlen(keep) + 1, 42, false), (int)strlen(keep));
	/* Digits by hand since bench/PERF.md: the extremes of the length. */
	assert_int_equal(http_echo_head(buf, sizeof(buf), 0, false), (int)strlen(keep) - 1);
	assert_string_equal(buf + strlen(keep) - 8, ": 0\r\n\r\n");
	assert_int_equal(http_echo_head(buf, sizeof(buf), UINT64_MAX, true),
			 (int)strlen(close) + 12);
	assert_non_null(strstr(buf, "Content-Length: 18446744073709551615\r\nConnection: close\r\n\r\n"));
	assert_string_equal(HTTP_CONTINUE, "HTTP/1.1 100 Continue\r\n\r\n");
}

static void test_error_response_exact(void **state)
{
	(void)state;
	char buf[256];
	const char *bad = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\n"
			  "Content-Length: 16\r\nConnection: close\r\n\r\n400 Bad Request\n";
	const char *big = "HTTP/1.1 413 Payload Too Large\r\nContent-Type: text/plain\r\n"
			  "Content-Length: 22\r\nConnection: close\r\n\r\n413 Payload Too Large\n";
	assert_int_equal(http_error_response(buf, sizeof(buf), 400), (int)strlen(bad));
	assert_string_equal(buf, bad);
	assert_int_equal(http_error_response(buf, sizeof(buf), 413), (int)strlen(big));
	assert_string_equal(buf, big);
	/* Content-Length matches the body for every status we send. */
	for (unsigned e = 1; e < HTTP_ERR_COUNT; e++) {
		int n = http_error_response(buf, sizeof(buf), http_error_status(e));
		assert_true(n > 0);
		const char *body = strstr(buf, "\r\n\r\n") + 4;
		unsigned long cl = strtoul(strstr(buf, "Content-Length: ") + 16, NULL, 10);
		assert_int_equal(cl, strlen(body));
	}
	assert_int_equal(http_error_response(buf, 10, 400), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_simple_get),
		cmocka_unit_test(test_get_split_at_every_byte),
		cmocka_unit_test(test_post_content_length),
		cmocka_unit_test(test_head_and_identical_lengths),
		cmocka_unit_test(test_chunked_extensions_trailers),
		cmocka_unit_test(test_chunked_no_trailers_hex_sizes),
		cmocka_unit_test(test_pipelined_two_requests),
		cmocka_unit_test(test_leading_empty_lines_skipped),
		cmocka_unit_test(test_keep_alive_rules),
		cmocka_unit_test(test_expect_continue),
		cmocka_unit_test(test_malformed_400),
		cmocka_unit_test(test_bad_chunks_400),
		cmocka_unit_test(test_version_505),
		cmocka_unit_test(test_body_too_large_413),
		cmocka_unit_test(test_header_limits),
		cmocka_unit_test(test_error_table),
		cmocka_unit_test(test_random_splits_agree),
		cmocka_unit_test(test_line_end_errors_at_byte),
		cmocka_unit_test(test_echo_head_exact),
		cmocka_unit_test(test_error_response_exact),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
