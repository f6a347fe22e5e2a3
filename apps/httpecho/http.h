/* http.h: an incremental HTTP/1.1 request framer for us-httpecho.
 *
 * The parser does no I/O and no allocation: the caller feeds bytes as they
 * arrive, split anywhere (byte by byte included), and the parser says whether
 * it needs more, where the current request ends, or which error status to
 * send.  It frames requests (RFC 9112 6.3: Content-Length or chunked) and
 * keeps only what framing and the connection decision need; it never copies
 * the body.  Lines are gathered in a fixed buffer inside struct http_parser,
 * so memory per connection is sizeof(struct http_parser), whatever arrives.
 *
 * Limits and the statuses they produce:
 *  - header section (request line through the blank line, leading empty
 *    lines included) over max_header bytes, or one header line longer than
 *    HTTP_LINE_MAX: 431 Request Header Fields Too Large; a request line
 *    alone longer than that: 414 URI Too Long;
 *  - body over max_body: 413.  For a chunked body the limit applies to the
 *    raw chunked bytes (sizes, extensions, CRLFs, trailers included), so a
 *    whole request is never more than max_header + max_body raw bytes: the
 *    bound an echo buffer needs;
 *  - HTTP versions other than 1.0 and 1.1: 505;
 *  - anything malformed (see HTTP_ERRORS): 400.
 *
 * Strictness (RFC 9112 2.2, 5.1, 5.2, 6.1, 6.3): lines end in CRLF (a bare LF
 * or CR is a 400); obs-fold, whitespace before a field's colon, both
 * Content-Length and Transfer-Encoding, any transfer coding other than a
 * single "chunked", differing Content-Length values, and an HTTP/1.1
 * request without exactly one Host are all 400.  Empty lines before the
 * request line are skipped (RFC 9112 2.2) and reported in lead_len; they are
 * not part of the request.
 */
#ifndef HTTP_H
#define HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Types */

#define HTTP_LINE_MAX 8192u                   /* longest single line gathered */
#define HTTP_MAX_HEADER_DEFAULT 16384u        /* header section, bytes */
#define HTTP_MAX_BODY_DEFAULT (16ull << 20)   /* 16 MiB */

/* Why a request was refused: X(name, status, description). */
#define HTTP_ERRORS(X) \
	X(bad_request_line, 400, "request line is not METHOD SP target SP HTTP/x.y") \
	X(request_line_too_long, 414, "request line longer than the line limit") \
	X(bad_version, 505, "HTTP version other than 1.0 and 1.1") \
	X(bad_line_end, 400, "CR not followed by LF, or a bare LF") \
	X(bad_header, 400, "header line not token \":\" value, or obs-fold") \
	X(header_too_large, 431, "header section or one header line over the limit") \
	X(bad_content_length, 400, "Content-Length not digits, overflowing or conflicting") \
	X(bad_transfer_encoding, 400, "Transfer-Encoding other than a single chunked") \
	X(length_and_chunked, 400, "both Content-Length and Transfer-Encoding") \
	X(bad_host, 400, "HTTP/1.1 request without exactly one Host") \
	X(bad_chunk_size, 400, "chunk size line not hex [; extensions]") \
	X(bad_chunk_end, 400, "chunk data not followed by CRLF") \
	X(bad_trailer, 400, "trailer line not a header field") \
	X(body_too_large, 413, "body over the limit")

enum http_error {
	HTTP_ERR_NONE = 0,
#define HTTP_ERR_ENUM(name, status, desc) HTTP_ERR_##name,
	HTTP_ERRORS(HTTP_ERR_ENUM)
#undef HTTP_ERR_ENUM
	HTTP_ERR_COUNT
};

enum http_event {
	HTTP_NEED_MORE, /* every byte fed was taken; the request is not complete */
	HTTP_REQUEST,   /* a request ended: *used bytes of this feed belong to it */
	HTTP_ERROR,     /* refused: send http_error_status(); no further feeding */
};

struct http_limits {
	size_t max_header;  /* header section bytes; 0: HTTP_MAX_HEADER_DEFAULT */
	uint64_t max_body;  /* body bytes (raw for chunked); 0: HTTP_MAX_BODY_DEFAULT */
};

/* What the caller learns about the current request.  The fields that the
 * header section decides are valid once headers_done is set. */
struct http_request {
	size_t lead_len;       /* empty-line bytes skipped before the request line */
	size_t header_len;     /* request line through the blank line */
	uint64_t raw_len;      /* header_len + raw body bytes so far (the echo) */
	uint64_t body_len;     /* decoded body bytes so far */
	uint8_t version_minor; /* HTTP/1.<minor>, 0 or 1 */
	bool head;             /* method HEAD: the response carries no body */
	bool headers_done;
	bool keep_alive;       /* the connection stays open after the response */
	bool expect_continue;  /* HTTP/1.1 "Expect: 100-continue" */
	bool chunked;
	bool has_length;       /* Content-Length present */
	uint64_t content_length;
};

enum http_state {
	HTTP_S_START,      /* before the request line (empty lines skipped) */
	HTTP_S_HEADERS,    /* header lines until the empty one */
	HTTP_S_BODY,       /* Content-Length bytes */
	HTTP_S_CHUNK_SIZE, /* chunk-size [ chunk-ext ] CRLF */
	HTTP_S_CHUNK_DATA,
	HTTP_S_CHUNK_CRLF, /* CRLF after chunk data */
	HTTP_S_TRAILERS,   /* trailer lines until the empty one */
	HTTP_S_DONE,
	HTTP_S_ERROR,
};

struct http_parser {
	struct http_limits lim;
	enum http_state state;
	enum http_error error;
	struct http_request req;
	uint64_t remaining;   /* body or chunk bytes still to come */
	unsigned host_count;
	bool conn_close;      /* Connection: close */
	bool conn_keep_alive; /* Connection: keep-alive */
	bool has_te;
	bool line_cr;         /* the last byte gathered was CR */
	size_t line_len;
	char line[HTTP_LINE_MAX];
};

/* Prototypes: parser */

/* lim may be NULL for the defaults. */
void http_parser_init(struct http_parser *p, const struct http_limits *lim);
/* Ready for the next request on the same connection (limits kept). */
void http_parser_reset(struct http_parser *p);
/* Takes up to len bytes; *used says how many.  On HTTP_REQUEST the bytes
 * after *used are the next (pipelined) request: reset, then feed them. */
enum http_event http_parser_feed(struct http_parser *p, const void *data, size_t len,
				 size_t *used);
/* Headers are complete, "Expect: 100-continue" was sent and body bytes are
 * still to come: the moment to send HTTP_CONTINUE (RFC 9110 10.1.1). */
bool http_parser_wants_continue(const struct http_parser *p);
/* Content-Length body bytes still to come (0 outside such a body).  A
 * caller may pass them on without feeding them (us-httpecho streams big
 * bodies); the request then ends with them: http_parser_reset. */
uint64_t http_parser_body_left(const struct http_parser *p);
/* Status to send for p->error (0 when there is none). */
int http_error_status(enum http_error e);
const char *http_error_name(enum http_error e);
const char *http_error_desc(enum http_error e);

/* Prototypes: responses */

#define HTTP_CONTINUE "HTTP/1.1 100 Continue\r\n\r\n"

const char *http_reason(int status);
/* Head of the echo response for a body of body_len bytes (the raw request):
 * status line, Content-Type, Content-Length, Connection: close when closing.
 * Returns its length, or -ENOSPC if it does not fit in size. */
int http_echo_head(char *buf, size_t size, uint64_t body_len, bool close);
/* A complete error response (short text body, Connection: close). */
int http_error_response(char *buf, size_t size, int status);

#endif
