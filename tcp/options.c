/* tcp/options.c: TCP options (RFC 9293 3.2, 3.7.1).
 *
 * Parsing never reads past the header: an option whose length byte is
 * missing, below 2 or running past the end stops parsing (RFC 9293 3.1: "a
 * TCP implementation MUST be prepared to handle an illegal option length");
 * unknown kinds are skipped by their length.  Options seen so far stay valid.
 */
#include <string.h>

#include "tcp/tcb.h"

#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOLEN_MSS 4

static void parse_one(uint8_t kind, const uint8_t *p, unsigned len, uint8_t flags,
		      struct tcp_seg *seg)
{
	switch (kind) {
	case TCPOPT_MSS:
		/* RFC 9293 3.7.1: only meaningful on a SYN. */
		if (len == TCPOLEN_MSS && (flags & TH_SYN))
			seg->mss = (uint16_t)(p[2] << 8 | p[3]);
		break;
	default:
		break; /* unknown or not yet supported: skipped */
	}
}

void tcp_options_parse(const struct rte_tcp_hdr *th, unsigned hlen, struct tcp_seg *seg)
{
	const uint8_t *p = (const uint8_t *)(th + 1);
	unsigned left = hlen > sizeof(*th) ? hlen - sizeof(*th) : 0;

	seg->mss = 0;
	while (left > 0) {
		uint8_t kind = p[0];

		if (kind == TCPOPT_EOL)
			return;
		if (kind == TCPOPT_NOP) {
			p++;
			left--;
			continue;
		}
		if (left < 2 || p[1] < 2 || p[1] > left)
			return; /* bad length: stop without reading further */
		parse_one(kind, p, p[1], seg->flags, seg);
		left -= p[1];
		p += p[1];
	}
}

unsigned tcp_options_write(const struct tcp_conn *c, uint8_t flags, uint8_t *opt)
{
	unsigned n = 0;

	if (flags & TH_SYN) {
		uint16_t mss = tcp_our_mss(c->ts);

		opt[n++] = TCPOPT_MSS;
		opt[n++] = TCPOLEN_MSS;
		opt[n++] = (uint8_t)(mss >> 8);
		opt[n++] = (uint8_t)mss;
	}
	/* Pad to a multiple of 4 with EOL (none needed yet). */
	while (n % 4)
		opt[n++] = TCPOPT_EOL;
	return n;
}
