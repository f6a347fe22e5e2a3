/* tests/fuzz/fuzz_tcp_options.c: the TCP option parser (tcp/options.c) alone.
 *
 * The input is the option bytes of one header (at most 40, RFC 9293 3.1);
 * its first byte picks the flags (SYN or not: MSS, window scale and
 * SACK-permitted count only on a SYN).  The header is built in a buffer of
 * exactly its own size, so ASan sees any read past the data offset.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_tcp.h>

#include "tcp/tcb.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct tcp_stack ts; /* the parser only counts into ts.stats */
	struct tcp_seg seg;
	struct rte_tcp_hdr *th;
	size_t olen;

	if (size < 1)
		return 0;
	olen = (size - 1) & ~(size_t)3; /* a header is whole 32-bit words */
	if (olen > 40)
		olen = 40;
	th = malloc(sizeof(*th) + olen);
	if (th == NULL)
		return 0;
	memset(th, 0, sizeof(*th));
	th->data_off = (uint8_t)((sizeof(*th) + olen) / 4 << 4);
	memcpy(th + 1, data + 1, olen);
	memset(&seg, 0, sizeof(seg));
	seg.flags = data[0] & (TH_SYN | TH_ACK | TH_FIN | TH_RST);
	th->tcp_flags = seg.flags;
	tcp_options_parse(&ts, th, (unsigned)(sizeof(*th) + olen), &seg);
	/* What the parser promises (tcp/tcb.h, RFC 7323 2.3, RFC 9293 3.7.1). */
	if (seg.ws > TCP_MAX_WSCALE || (seg.ws != 0 && !seg.has_ws) ||
	    ((seg.mss || seg.has_ws || seg.has_sack_perm) && !(seg.flags & TH_SYN)) ||
	    (!seg.has_ts && (seg.ts_val || seg.ts_ecr)) ||
	    seg.nsack > 4 /* RFC 2018 3: at most 4 blocks fit in 40 bytes */) {
		fprintf(stderr, "fuzz_tcp_options: inconsistent result: mss %u ws %u/%d "
			"sack_perm %d ts %d nsack %u flags 0x%x\n", seg.mss, seg.ws, seg.has_ws,
			seg.has_sack_perm, seg.has_ts, (unsigned)seg.nsack, seg.flags);
		abort();
	}
	free(th);
	return 0;
}
