/* apps/loadgen/resp.h: the HTTP/1.1 response head as us-loadgen reads it
 * (pure: no stack, no allocation; tests/unit/loadgen/test_resp.c).
 *
 * us-loadgen asks for nothing that needs chunked framing, so a response is
 * a status line, header fields with a Content-Length, a blank line and that
 * many body bytes (RFC 9112 6.3 rule 6).  This runs once per response on
 * the client's core, so it finds lines with memchr and looks only at the
 * two fields it needs (measured: bench/PERF.md, client profile).
 */
#ifndef LG_RESP_H
#define LG_RESP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Types */

struct lg_resp_head {
	int status;        /* 100..999 */
	uint64_t clen;     /* Content-Length */
	bool close;        /* Connection: close */
};

/* Prototypes */

/* One walk over the lines of b[0, len): the head's length (through its
 * blank line, CRLF CRLF) with h filled in; 0 while it is incomplete; -1
 * when it is malformed (status line, a Content-Length that is no number)
 * or has no Content-Length.  A head that came in pieces is walked again
 * from its start (rare: us-httpecho's fits one segment). */
long lg_head_scan(const char *b, size_t len, struct lg_resp_head *h);

#endif
