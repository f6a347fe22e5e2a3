/* apps/loadgen/resp.c: response head framing and parsing (resp.h). */
#include <string.h>
#include <strings.h>

#include "apps/loadgen/resp.h"

#define LG_CLEN_DIGITS 19 /* below 2^63: no overflow check per digit */

/* Digits from *pp (1..max of them), value in *v; -1 if none or more. */
static int lg_digits(const char **pp, const char *end, unsigned max, uint64_t *v)
{
	const char *p = *pp;
	uint64_t x = 0;
	unsigned n = 0;

	while (p < end && *p >= '0' && *p <= '9' && n < max) {
		x = x * 10 + (uint64_t)(*p++ - '0');
		n++;
	}
	if (n == 0 || (p < end && *p >= '0' && *p <= '9'))
		return -1;
	*pp = p;
	*v = x;
	return 0;
}

/* RFC 9112 4: HTTP-version SP 3DIGIT SP reason (the reason may be empty). */
static int lg_status_line(const char *b, const char *end, int *status)
{
	const char *p = b + 9;
	uint64_t v;

	if (end - b < 12 || strncmp(b, "HTTP/1.", 7) != 0 || b[8] != ' ')
		return -1;
	if (lg_digits(&p, end, 3, &v) < 0 || v < 100)
		return -1;
	*status = (int)v;
	return 0;
}

/* 8 bytes at p equal want, case-insensitively at the letters (mask: 0x20
 * in each byte that is a letter): one load, OR and compare instead of a
 * strncasecmp call per field line. */
static inline bool lg_eq8(const char *p, uint64_t want, uint64_t mask)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return (v | mask) == want;
}

/* Little-endian 8-byte words of the lower-case names and their letter
 * masks: "content-", "-length:", "connecti", "nection:". */
#define LG_W(a, b, c, d, e, f, g, h) \
	((uint64_t)(a) | (uint64_t)(b) << 8 | (uint64_t)(c) << 16 | (uint64_t)(d) << 24 | \
	 (uint64_t)(e) << 32 | (uint64_t)(f) << 40 | (uint64_t)(g) << 48 | (uint64_t)(h) << 56)
#define LG_CONTENT LG_W('c', 'o', 'n', 't', 'e', 'n', 't', '-')
#define LG_LENGTH LG_W('-', 'l', 'e', 'n', 'g', 't', 'h', ':')
#define LG_CONNECTI LG_W('c', 'o', 'n', 'n', 'e', 'c', 't', 'i')
#define LG_NECTION LG_W('n', 'e', 'c', 't', 'i', 'o', 'n', ':')
#define LG_MASK7L LG_W(0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0)  /* 7 letters, 1 not */
#define LG_MASK1N7L LG_W(0, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0) /* -length: */
#define LG_MASK8L LG_W(0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20)

/* One field line at p (before end): the two we need, others skipped. */
static int lg_field(const char *p, const char *end, struct lg_resp_head *h, bool *have_len)
{
	if ((*p | 0x20) != 'c' || end - p <= 15) /* both names start with C */
		return 0;
	if (lg_eq8(p, LG_CONTENT, LG_MASK7L) && lg_eq8(p + 7, LG_LENGTH, LG_MASK1N7L)) {
		p += 15; /* "Content-Length:" */
		while (p < end && (*p == ' ' || *p == '\t')) /* RFC 9110 5.6.3 OWS */
			p++;
		if (lg_digits(&p, end, LG_CLEN_DIGITS, &h->clen) < 0)
			return -1;
		*have_len = true;
	} else if (lg_eq8(p, LG_CONNECTI, LG_MASK8L) && lg_eq8(p + 3, LG_NECTION, LG_MASK7L)) {
		p += 11; /* "Connection:" */
		while (p < end && *p == ' ')
			p++;
		if (end - p >= 5 && strncasecmp(p, "close", 5) == 0)
			h->close = true;
	}
	return 0;
}

long lg_head_scan(const char *b, size_t len, struct lg_resp_head *h)
{
	const char *end = b + len, *line, *lf = memchr(b, '\n', len);
	bool have_len = false;

	h->close = false;
	h->clen = 0;
	if (lf == NULL)
		return 0;
	if (lg_status_line(b, lf + 1, &h->status) < 0)
		return -1;
	for (line = lf + 1; line < end; line = lf + 1) {
		lf = memchr(line, '\n', (size_t)(end - line));
		if (lf == NULL)
			break;
		/* The blank line, after a CRLF: "\r\n\r\n" ends the head. */
		if (lf == line + 1 && line[0] == '\r' && line[-2] == '\r')
			return have_len ? lf + 1 - b : -1;
		if (lg_field(line, lf + 1, h, &have_len) < 0)
			return -1;
	}
	return 0;
}
