/* http.c: the incremental HTTP/1.1 request framer of http.h.
 *
 * One function per state: line states (request line, header lines, chunk
 * size lines, chunk CRLF, trailers) gather a CRLF-terminated line into
 * p->line and then parse it whole; body states (Content-Length bytes, chunk
 * data) only count.  The raw bytes themselves stay with the caller.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "http.h"

/* Types */

enum http_gather {
	HTTP_G_MORE,     /* every byte taken, no LF yet */
	HTTP_G_LINE,     /* a complete line (see http_gather for where it is) */
	HTTP_G_BAD_END,  /* CR not followed by LF, or LF without CR */
	HTTP_G_TOO_LONG, /* more than cap bytes before the CRLF */
};

/* Character classes (RFC 9110 5.6.2, 5.5) */

/* One table lookup per byte instead of comparisons (and strchr) per byte:
 * header names and values are scanned byte by byte.  The table is built at
 * compile time from the definitions below. */
#define HTTP_C_TCHAR 1u /* tchar (RFC 9110 5.6.2) */
#define HTTP_C_FIELD 2u /* field-vchar / obs-text, SP, HTAB (RFC 9110 5.5) */

/* tchar = "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." /
 *         "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
#define HTTP_TCHAR(c)                                                               \
	(((c) >= '0' && (c) <= '9') || ((c) >= 'a' && (c) <= 'z') ||                  \
	 ((c) >= 'A' && (c) <= 'Z') || (c) == '!' || (c) == '#' || (c) == '$' ||       \
	 (c) == '%' || (c) == '&' || (c) == '\'' || (c) == '*' || (c) == '+' ||        \
	 (c) == '-' || (c) == '.' || (c) == '^' || (c) == '_' || (c) == '`' ||          \
	 (c) == '|' || (c) == '~')
#define HTTP_FIELD(c) (((c) >= 0x21 && (c) != 0x7f) || (c) == ' ' || (c) == '\t')
#define HTTP_CLASS(c) ((HTTP_TCHAR(c) ? HTTP_C_TCHAR : 0u) | (HTTP_FIELD(c) ? HTTP_C_FIELD : 0u))
#define HTTP_CL4(c) HTTP_CLASS(c), HTTP_CLASS((c) + 1), HTTP_CLASS((c) + 2), HTTP_CLASS((c) + 3)
#define HTTP_CL16(c) HTTP_CL4(c), HTTP_CL4((c) + 4), HTTP_CL4((c) + 8), HTTP_CL4((c) + 12)
#define HTTP_CL64(c) HTTP_CL16(c), HTTP_CL16((c) + 16), HTTP_CL16((c) + 32), HTTP_CL16((c) + 48)

static const uint8_t http_class[256] = {
	HTTP_CL64(0), HTTP_CL64(64), HTTP_CL64(128), HTTP_CL64(192),
};

static bool http_is_tchar(unsigned char c)
{
	return http_class[c] & HTTP_C_TCHAR;
}

static bool http_is_ows(unsigned char c)
{
	return c == ' ' || c == '\t';
}

static bool http_is_field_char(unsigned char c)
{
	return http_class[c] & HTTP_C_FIELD;
}

static int http_hex(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool http_token_eq(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

/* Next element of a comma-separated list (RFC 9110 5.6.1), OWS trimmed;
 * empty elements are skipped as the RFC asks.  false at the end. */
static bool http_list_next(const char **s, const char *end, const char **el, size_t *n)
{
	while (*s < end) {
		const char *b = *s;
		const char *e = memchr(b, ',', (size_t)(end - b));
		if (e == NULL)
			e = end;
		*s = e < end ? e + 1 : end;
		while (b < e && http_is_ows((unsigned char)*b))
			b++;
		while (e > b && http_is_ows((unsigned char)e[-1]))
			e--;
		if (e > b) {
			*el = b;
			*n = (size_t)(e - b);
			return true;
		}
	}
	return false;
}

/* Parser plumbing */

static enum http_event http_fail(struct http_parser *p, enum http_error e)
{
	p->state = HTTP_S_ERROR;
	p->error = e;
	return HTTP_ERROR;
}

void http_parser_init(struct http_parser *p, const struct http_limits *lim)
{
	p->lim.max_header = lim && lim->max_header ? lim->max_header : HTTP_MAX_HEADER_DEFAULT;
	p->lim.max_body = lim && lim->max_body ? lim->max_body : HTTP_MAX_BODY_DEFAULT;
	http_parser_reset(p);
}

void http_parser_reset(struct http_parser *p)
{
	p->state = HTTP_S_START;
	p->error = HTTP_ERR_NONE;
	memset(&p->req, 0, sizeof(p->req));
	p->remaining = 0;
	p->host_count = 0;
	p->conn_close = p->conn_keep_alive = p->has_te = false;
	p->line_cr = false;
	p->line_len = 0;
}

/* Content bytes d[0..k) join p->line (the caller checked the cap). */
static void http_line_append(struct http_parser *p, const uint8_t *d, size_t k)
{
	memcpy(p->line + p->line_len, d, k);
	p->line_len += k;
}

/* Takes bytes of one line, at most cap before the CRLF.  On HTTP_G_LINE,
 * *line and *n are the line's content: in d itself when the whole line arrived
 * in this feed (no copy), else in p->line.  RFC 9112 2.2: we accept CRLF
 * only; a bare CR or LF is a framing error (lenient LF handling is what
 * request smuggling feeds on).  memchr finds the line end instead of a
 * byte-at-a-time loop: the parser was ~1,300 of ~8,800 instructions per
 * keep-alive request (bench/PERF.md). */
static enum http_gather http_gather(struct http_parser *p, const uint8_t *d, size_t len,
				    size_t cap, size_t *taken, const char **line, size_t *n)
{
	if (p->line_cr) { /* the previous feed ended with the CR */
		*taken = 1;
		if (d[0] != '\n')
			return HTTP_G_BAD_END;
		p->line_cr = false;
		*line = p->line;
		*n = p->line_len;
		return HTTP_G_LINE;
	}
	/* The LF search is not bounded by the cap: a line over it costs one
	 * scan of what was read (linear), and bounding it cost ~20
	 * instructions per request (bench/PERF.md). */
	const uint8_t *lf = memchr(d, '\n', len);
	size_t k = lf != NULL ? (size_t)(lf - d) : len;
	const uint8_t *cr = memchr(d, '\r', k);
	size_t room = p->line_len < cap ? cap - p->line_len : 0;
	if (cr != NULL)
		k = (size_t)(cr - d); /* content: d[0..k), then CR or LF at d[k] */
	if (k > room) {
		*taken = room + 1; /* the first byte over the cap */
		return HTTP_G_TOO_LONG;
	}
	if (cr == NULL) {
		if (lf != NULL) {
			*taken = k + 1; /* LF without CR */
			return HTTP_G_BAD_END;
		}
		http_line_append(p, d, len);
		*taken = len;
		return HTTP_G_MORE;
	}
	if (k + 1 == len) { /* the LF is in the next feed */
		http_line_append(p, d, k);
		p->line_cr = true;
		*taken = len;
		return HTTP_G_MORE;
	}
	*taken = k + 2;
	if (d[k + 1] != '\n')
		return HTTP_G_BAD_END;
	if (p->line_len == 0) {
		*line = (const char *)d;
		*n = k;
	} else {
		http_line_append(p, d, k);
		*line = p->line;
		*n = p->line_len;
	}
	return HTTP_G_LINE;
}

/* Room left for line content in the header section (the CRLF reserved). */
static size_t http_header_cap(const struct http_parser *p)
{
	size_t used = p->req.lead_len + p->req.header_len;
	size_t left = p->lim.max_header > used + 2 ? p->lim.max_header - used - 2 : 0;
	return left < HTTP_LINE_MAX ? left : HTTP_LINE_MAX;
}

/* Raw body bytes still allowed (chunked framing counts, see http.h). */
static uint64_t http_body_left(const struct http_parser *p)
{
	uint64_t used = p->req.raw_len - p->req.header_len;
	return p->lim.max_body > used ? p->lim.max_body - used : 0;
}

/* Room for a chunk-size or trailer line: the smaller of the line buffer and
 * the body budget; *limit_is_body tells which one binds. */
static size_t http_body_line_cap(const struct http_parser *p, bool *limit_is_body)
{
	uint64_t left = http_body_left(p);
	uint64_t room = left > 2 ? left - 2 : 0;
	*limit_is_body = room < HTTP_LINE_MAX;
	return *limit_is_body ? (size_t)room : HTTP_LINE_MAX;
}

/* Request line (RFC 9112 3) */

static enum http_event http_version(struct http_parser *p, const char *v, size_t n)
{
	/* HTTP-version = "HTTP" "/" DIGIT "." DIGIT, case-sensitive (RFC 9112 2.3). */
	if (n != 8 || memcmp(v, "HTTP/", 5) != 0 || v[6] != '.' || v[5] < '0' || v[5] > '9' ||
	    v[7] < '0' || v[7] > '9')
		return http_fail(p, HTTP_ERR_bad_request_line);
	if (v[5] != '1' || v[7] > '1')
		return http_fail(p, HTTP_ERR_bad_version);
	p->req.version_minor = (uint8_t)(v[7] - '0');
	return HTTP_NEED_MORE;
}

/* request-line = method SP request-target SP HTTP-version */
static enum http_event http_request_line(struct http_parser *p, const char *line, size_t n)
{
	const char *s = line, *end = line + n;
	const char *m = s;
	while (s < end && http_is_tchar((unsigned char)*s))
		s++;
	if (s == m || s == end || *s != ' ')
		return http_fail(p, HTTP_ERR_bad_request_line);
	/* Methods are case-sensitive (RFC 9110 9.1). */
	p->req.head = s - m == 4 && memcmp(m, "HEAD", 4) == 0;
	const char *t = ++s;
	/* The target is visible ASCII only (RFC 3986 has no other octets). */
	while (s < end && (unsigned char)*s > 0x20 && (unsigned char)*s < 0x7f)
		s++;
	if (s == t || s == end || *s != ' ')
		return http_fail(p, HTTP_ERR_bad_request_line);
	s++;
	return http_version(p, s, (size_t)(end - s));
}

/* Header fields (RFC 9112 5, RFC 9110 5) */

/* Content-Length = 1*DIGIT; RFC 9110 8.6 lets a recipient accept a list of
 * identical values ("5, 5"), and repeated lines must agree too.  Values too
 * big to hold saturate: they are over any body limit and end as 413. */
static enum http_event http_content_length(struct http_parser *p, const char *v, size_t n)
{
	const char *s = v, *end = v + n, *el;
	size_t len;
	bool any = false;
	while (http_list_next(&s, end, &el, &len)) {
		uint64_t x = 0;
		for (size_t i = 0; i < len; i++) {
			if (el[i] < '0' || el[i] > '9')
				return http_fail(p, HTTP_ERR_bad_content_length);
			unsigned d = (unsigned)(el[i] - '0');
			x = x > (UINT64_MAX - d) / 10 ? UINT64_MAX : x * 10 + d;
		}
		if (p->req.has_length && p->req.content_length != x)
			return http_fail(p, HTTP_ERR_bad_content_length);
		p->req.has_length = true;
		p->req.content_length = x;
		any = true;
	}
	if (!any)
		return http_fail(p, HTTP_ERR_bad_content_length);
	return HTTP_NEED_MORE;
}

/* RFC 9112 6.1: the only coding we decode is chunked, and it must be the
 * one and only coding (twice chunked, or chunked after gzip, is refused). */
static enum http_event http_transfer_encoding(struct http_parser *p, const char *v, size_t n)
{
	const char *s = v, *end = v + n, *el;
	size_t len;
	while (http_list_next(&s, end, &el, &len)) {
		if (p->has_te || !http_token_eq(el, len, "chunked"))
			return http_fail(p, HTTP_ERR_bad_transfer_encoding);
		p->has_te = true;
	}
	if (!p->has_te)
		return http_fail(p, HTTP_ERR_bad_transfer_encoding);
	return HTTP_NEED_MORE;
}

/* Connection options (RFC 9110 7.6.1) and Expect (RFC 9110 10.1.1): lists
 * of case-insensitive tokens; unknown members are ignored. */
static void http_connection(struct http_parser *p, const char *v, size_t n)
{
	const char *s = v, *end = v + n, *el;
	size_t len;
	while (http_list_next(&s, end, &el, &len)) {
		if (http_token_eq(el, len, "close"))
			p->conn_close = true;
		else if (http_token_eq(el, len, "keep-alive"))
			p->conn_keep_alive = true;
	}
}

static void http_expect(struct http_parser *p, const char *v, size_t n)
{
	const char *s = v, *end = v + n, *el;
	size_t len;
	while (http_list_next(&s, end, &el, &len))
		if (http_token_eq(el, len, "100-continue"))
			p->req.expect_continue = true;
}

/* field-line = field-name ":" OWS field-value OWS.  Splits the line; false
 * when it is not one (RFC 9112 5.1: no whitespace before the colon; 5.2:
 * obs-fold refused, the line starts with the name). */
static bool http_split_field(const char *line, size_t n, const char **name, size_t *nlen,
			     const char **val, size_t *vlen)
{
	const char *s = line, *end = line + n;
	while (s < end && http_is_tchar((unsigned char)*s))
		s++;
	if (s == line || s == end || *s != ':')
		return false;
	*name = line;
	*nlen = (size_t)(s - line);
	for (const char *c = s + 1; c < end; c++)
		if (!http_is_field_char((unsigned char)*c))
			return false;
	s++;
	while (s < end && http_is_ows((unsigned char)*s))
		s++;
	while (end > s && http_is_ows((unsigned char)end[-1]))
		end--;
	*val = s;
	*vlen = (size_t)(end - s);
	return true;
}

static enum http_event http_header_line(struct http_parser *p, const char *line, size_t n)
{
	const char *name, *val;
	size_t nlen, vlen;
	if (!http_split_field(line, n, &name, &nlen, &val, &vlen))
		return http_fail(p, HTTP_ERR_bad_header);
	if (http_token_eq(name, nlen, "content-length"))
		return http_content_length(p, val, vlen);
	if (http_token_eq(name, nlen, "transfer-encoding"))
		return http_transfer_encoding(p, val, vlen);
	if (http_token_eq(name, nlen, "connection"))
		http_connection(p, val, vlen);
	else if (http_token_eq(name, nlen, "expect"))
		http_expect(p, val, vlen);
	else if (http_token_eq(name, nlen, "host"))
		p->host_count++;
	return HTTP_NEED_MORE;
}

/* The empty line: decide framing (RFC 9112 6.3) and persistence (9.3). */
static enum http_event http_headers_end(struct http_parser *p)
{
	struct http_request *r = &p->req;
	bool v11 = r->version_minor == 1;

	if (p->has_te && r->has_length)
		return http_fail(p, HTTP_ERR_length_and_chunked);
	/* RFC 9112 6.1: Transfer-Encoding in HTTP/1.0 is faulty framing. */
	if (p->has_te && !v11)
		return http_fail(p, HTTP_ERR_bad_transfer_encoding);
	/* RFC 9112 3.2: exactly one Host in 1.1, never more than one. */
	if (p->host_count > 1 || (v11 && p->host_count == 0))
		return http_fail(p, HTTP_ERR_bad_host);
	r->headers_done = true;
	r->keep_alive = v11 ? !p->conn_close : p->conn_keep_alive && !p->conn_close;
	/* RFC 9110 10.1.1: a 1.0 request's 100-continue is ignored. */
	r->expect_continue = r->expect_continue && v11;
	r->chunked = p->has_te;
	if (r->chunked) {
		p->state = HTTP_S_CHUNK_SIZE;
	} else if (r->has_length && r->content_length > 0) {
		if (r->content_length > p->lim.max_body)
			return http_fail(p, HTTP_ERR_body_too_large);
		p->remaining = r->content_length;
		p->state = HTTP_S_BODY;
	} else {
		p->state = HTTP_S_DONE; /* RFC 9112 6.3 rule 7: no body */
	}
	return HTTP_NEED_MORE;
}

/* Chunked body (RFC 9112 7.1) */

/* chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] ),
 * ext-val = token / quoted-string.  Returns the end of what parsed. */
static const char *http_skip_token(const char *s, const char *end)
{
	while (s < end && http_is_tchar((unsigned char)*s))
		s++;
	return s;
}

static const char *http_skip_ows(const char *s, const char *end)
{
	while (s < end && http_is_ows((unsigned char)*s))
		s++;
	return s;
}

/* quoted-string (RFC 9110 5.6.4); NULL when malformed. */
static const char *http_skip_quoted(const char *s, const char *end)
{
	for (s++; s < end; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"')
			return s + 1;
		if (c == '\\') {
			if (++s == end || !http_is_field_char((unsigned char)*s))
				return NULL;
		} else if (!http_is_field_char(c)) {
			return NULL;
		}
	}
	return NULL;
}

static bool http_chunk_ext_ok(const char *s, const char *end)
{
	for (s = http_skip_ows(s, end); s < end; s = http_skip_ows(s, end)) {
		if (*s != ';')
			return false;
		s = http_skip_ows(s + 1, end);
		const char *name = s;
		s = http_skip_token(s, end);
		if (s == name)
			return false;
		const char *after = http_skip_ows(s, end);
		if (after == end || *after != '=')
			continue;
		s = http_skip_ows(after + 1, end);
		if (s < end && *s == '"') {
			s = http_skip_quoted(s, end);
			if (s == NULL)
				return false;
		} else {
			const char *val = s;
			s = http_skip_token(s, end);
			if (s == val)
				return false;
		}
	}
	return true;
}

static enum http_event http_chunk_size_line(struct http_parser *p, const char *line, size_t n)
{
	const char *s = line, *end = line + n;
	uint64_t size = 0;
	int d;
	if (s == end || http_hex((unsigned char)*s) < 0)
		return http_fail(p, HTTP_ERR_bad_chunk_size);
	for (; s < end && (d = http_hex((unsigned char)*s)) >= 0; s++)
		size = size > (UINT64_MAX >> 4) ? UINT64_MAX : size << 4 | (uint64_t)d;
	if (!http_chunk_ext_ok(s, end))
		return http_fail(p, HTTP_ERR_bad_chunk_size);
	/* Data plus its CRLF must fit in what is left of the raw body budget. */
	if (size > UINT64_MAX - 2 || size + 2 > http_body_left(p))
		return http_fail(p, HTTP_ERR_body_too_large);
	p->req.body_len += size;
	p->remaining = size;
	p->state = size == 0 ? HTTP_S_TRAILERS : HTTP_S_CHUNK_DATA;
	return HTTP_NEED_MORE;
}

/* trailer-section = *( field-line CRLF ), then CRLF.  Trailers cannot
 * change framing (RFC 9110 6.5.1), so they are only checked for syntax. */
static enum http_event http_trailer_line(struct http_parser *p, const char *line, size_t n)
{
	const char *name, *val;
	size_t nlen, vlen;
	if (n == 0) {
		p->state = HTTP_S_DONE;
		return HTTP_NEED_MORE;
	}
	if (!http_split_field(line, n, &name, &nlen, &val, &vlen))
		return http_fail(p, HTTP_ERR_bad_trailer);
	return HTTP_NEED_MORE;
}

/* Per-state steps: each takes some of d[0..len) and says how many. */

/* Gathers one line of the header section: true once it is complete (in
 * *line, *n), else false with *ev saying why (more needed, or the refusal;
 * too_long names the limit that applies to this line). */
static bool http_gather_header_line(struct http_parser *p, const uint8_t *d, size_t len,
				    size_t *taken, enum http_error too_long, enum http_event *ev,
				    const char **line, size_t *n)
{
	switch (http_gather(p, d, len, http_header_cap(p), taken, line, n)) {
	case HTTP_G_MORE:
		*ev = HTTP_NEED_MORE;
		return false;
	case HTTP_G_BAD_END:
		*ev = http_fail(p, HTTP_ERR_bad_line_end);
		return false;
	case HTTP_G_TOO_LONG:
		*ev = http_fail(p, too_long);
		return false;
	case HTTP_G_LINE:
		break;
	}
	return true;
}

static enum http_event http_step_start(struct http_parser *p, const uint8_t *d, size_t len,
				       size_t *taken)
{
	enum http_event ev;
	const char *line;
	size_t n;

	if (!http_gather_header_line(p, d, len, taken, HTTP_ERR_request_line_too_long, &ev,
				     &line, &n))
		return ev;
	if (n == 0) { /* RFC 9112 2.2: skip empty lines before it */
		p->req.lead_len += 2;
		if (p->req.lead_len > p->lim.max_header)
			return http_fail(p, HTTP_ERR_header_too_large);
		return HTTP_NEED_MORE;
	}
	p->req.header_len = n + 2;
	p->req.raw_len = p->req.header_len;
	p->state = HTTP_S_HEADERS;
	ev = http_request_line(p, line, n);
	p->line_len = 0;
	return ev;
}

static enum http_event http_step_headers(struct http_parser *p, const uint8_t *d, size_t len,
					 size_t *taken)
{
	enum http_event ev;
	const char *line;
	size_t n;

	if (!http_gather_header_line(p, d, len, taken, HTTP_ERR_header_too_large, &ev, &line,
				     &n))
		return ev;
	p->req.header_len += n + 2;
	p->req.raw_len = p->req.header_len;
	if (p->req.lead_len + p->req.header_len > p->lim.max_header)
		return http_fail(p, HTTP_ERR_header_too_large);
	if (n == 0)
		return http_headers_end(p);
	ev = http_header_line(p, line, n);
	p->line_len = 0;
	return ev;
}

/* Chunk-size lines, the CRLF after chunk data and trailer lines. */
static enum http_event http_step_chunk_line(struct http_parser *p, const uint8_t *d,
					    size_t len, size_t *taken)
{
	bool body_limit;
	size_t cap = http_body_line_cap(p, &body_limit);
	enum http_state st = p->state;
	if (st == HTTP_S_CHUNK_CRLF)
		cap = 0;
	const char *line = NULL;
	size_t n = 0;
	enum http_gather g = http_gather(p, d, len, cap, taken, &line, &n);
	p->req.raw_len += *taken;
	if (g == HTTP_G_MORE)
		return HTTP_NEED_MORE;
	if (g == HTTP_G_TOO_LONG && body_limit && st != HTTP_S_CHUNK_CRLF)
		return http_fail(p, HTTP_ERR_body_too_large);
	if (g != HTTP_G_LINE) {
		if (st == HTTP_S_CHUNK_CRLF)
			return http_fail(p, HTTP_ERR_bad_chunk_end);
		if (g == HTTP_G_BAD_END)
			return http_fail(p, HTTP_ERR_bad_line_end);
		return http_fail(p, st == HTTP_S_CHUNK_SIZE ? HTTP_ERR_bad_chunk_size
							    : HTTP_ERR_header_too_large);
	}
	if (st == HTTP_S_CHUNK_CRLF) {
		p->state = HTTP_S_CHUNK_SIZE;
		return HTTP_NEED_MORE;
	}
	enum http_event ev = st == HTTP_S_CHUNK_SIZE ? http_chunk_size_line(p, line, n)
						     : http_trailer_line(p, line, n);
	p->line_len = 0;
	return ev;
}

/* Content-Length bytes or chunk data: counted, never looked at. */
static void http_step_data(struct http_parser *p, size_t len, size_t *taken)
{
	uint64_t n = len < p->remaining ? len : p->remaining;
	*taken = (size_t)n;
	p->remaining -= n;
	p->req.raw_len += n;
	if (p->state == HTTP_S_BODY)
		p->req.body_len += n;
	if (p->remaining == 0)
		p->state = p->state == HTTP_S_BODY ? HTTP_S_DONE : HTTP_S_CHUNK_CRLF;
}

enum http_event http_parser_feed(struct http_parser *p, const void *data, size_t len,
				 size_t *used)
{
	const uint8_t *d = data;
	size_t i = 0;
	enum http_event ev = HTTP_NEED_MORE;

	while (ev == HTTP_NEED_MORE && p->state < HTTP_S_DONE && i < len) {
		size_t taken = 0;
		switch (p->state) {
		case HTTP_S_START:
			ev = http_step_start(p, d + i, len - i, &taken);
			break;
		case HTTP_S_HEADERS:
			ev = http_step_headers(p, d + i, len - i, &taken);
			break;
		case HTTP_S_BODY:
		case HTTP_S_CHUNK_DATA:
			http_step_data(p, len - i, &taken);
			break;
		default:
			ev = http_step_chunk_line(p, d + i, len - i, &taken);
			break;
		}
		i += taken;
	}
	*used = i;
	if (p->state == HTTP_S_ERROR)
		return HTTP_ERROR;
	return p->state == HTTP_S_DONE ? HTTP_REQUEST : HTTP_NEED_MORE;
}

bool http_parser_wants_continue(const struct http_parser *p)
{
	/* Only before any body byte: a client already sending needs no 100. */
	return p->req.headers_done && p->req.expect_continue && p->state != HTTP_S_DONE &&
	       p->state != HTTP_S_ERROR && p->req.raw_len == p->req.header_len;
}

uint64_t http_parser_body_left(const struct http_parser *p)
{
	return p->state == HTTP_S_BODY ? p->remaining : 0;
}

/* Errors */

int http_error_status(enum http_error e)
{
	switch (e) {
#define HTTP_ERR_STATUS(name, status, desc) \
	case HTTP_ERR_##name:               \
		return status;
		HTTP_ERRORS(HTTP_ERR_STATUS)
#undef HTTP_ERR_STATUS
	default:
		return 0;
	}
}

const char *http_error_name(enum http_error e)
{
	static const char *const names[] = {
		[HTTP_ERR_NONE] = "none",
#define HTTP_ERR_NAME(name, status, desc) [HTTP_ERR_##name] = #name,
		HTTP_ERRORS(HTTP_ERR_NAME)
#undef HTTP_ERR_NAME
	};
	return (unsigned)e < HTTP_ERR_COUNT ? names[e] : "?";
}

const char *http_error_desc(enum http_error e)
{
	static const char *const descs[] = {
		[HTTP_ERR_NONE] = "no error",
#define HTTP_ERR_DESC(name, status, desc) [HTTP_ERR_##name] = desc,
		HTTP_ERRORS(HTTP_ERR_DESC)
#undef HTTP_ERR_DESC
	};
	return (unsigned)e < HTTP_ERR_COUNT ? descs[e] : "?";
}

/* Responses */

const char *http_reason(int status)
{
	switch (status) {
	case 100: return "Continue";
	case 200: return "OK";
	case 400: return "Bad Request";
	case 413: return "Payload Too Large"; /* RFC 9110 15.5.14 now says Content Too Large */
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large"; /* RFC 6585 5 */
	case 500: return "Internal Server Error";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}

static int http_fit(int n, size_t size)
{
	return n < 0 || (size_t)n >= size ? -ENOSPC : n;
}

/* Built by hand, not with snprintf: one head per response, and formatting
 * was ~600 of ~9,400 instructions per keep-alive request (bench/PERF.md). */
int http_echo_head(char *buf, size_t size, uint64_t body_len, bool close)
{
	static const char pre[] = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
				  "Content-Length: ";
	static const char conn[] = "\r\nConnection: close";
	char digits[20];
	size_t nd = 0, n, pos;

	do {
		digits[nd++] = (char)('0' + body_len % 10);
		body_len /= 10;
	} while (body_len > 0);
	n = sizeof(pre) - 1 + nd + (close ? sizeof(conn) - 1 : 0) + 4;
	if (n >= size)   /* snprintf's contract: room for the NUL too */
		return -ENOSPC;
	memcpy(buf, pre, sizeof(pre) - 1);
	pos = sizeof(pre) - 1;
	while (nd > 0)
		buf[pos++] = digits[--nd];
	if (close) {
		memcpy(buf + pos, conn, sizeof(conn) - 1);
		pos += sizeof(conn) - 1;
	}
	memcpy(buf + pos, "\r\n\r\n", 5);
	return (int)n;
}

int http_error_response(char *buf, size_t size, int status)
{
	const char *reason = http_reason(status);
	/* Body: "<status> <reason>\n", so its length is known before printing. */
	size_t body = 3 + 1 + strlen(reason) + 1;
	int n = snprintf(buf, size,
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n%d %s\n",
			 status, reason, body, status, reason);
	return http_fit(n, size);
}
