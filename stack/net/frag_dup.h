/* stack/net/frag_dup.h: IPv4 fragments seen in the last second, so that an
 * exact duplicate is dropped before DPDK's reassembly.
 *
 * A network may duplicate a packet (RFC 791 does not forbid it; Linux's
 * reassembly drops a fragment lying inside what it already holds).  DPDK's
 * rte_ipv4_frag_reassemble_packet refuses a second first or last fragment
 * and throws the whole datagram away, and counts a second middle one
 * twice, so the datagram never completes: one duplicated fragment cost the
 * datagram.  Here a fragment with the same source, destination, protocol,
 * ID, offset, MF flag and length as one seen within the last second is a
 * duplicate (as Linux, the bytes are not compared).  A direct-mapped table:
 * a collision forgets the older fragment (its duplicate then goes to DPDK
 * as before).  One second, not the reassembly timeout: a sender reusing an
 * ID for a new datagram a second later (65536 datagrams a second to one
 * destination) is not mistaken for a duplicate.
 */
#ifndef US_NET_FRAG_DUP_H
#define US_NET_FRAG_DUP_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ip.h>

#include "stack/base/timer.h"

#define US_FRAG_DUP_SLOTS 256 /* a power of two */
#define US_FRAG_DUP_WINDOW_NS US_SEC(1)

struct us_frag_dup_slot {
	uint32_t src, dst;      /* network byte order, as in the header */
	uint16_t id, off_mf, len;
	uint8_t proto;
	bool used;
	uint64_t seen_ns;
};

struct us_frag_dup {
	struct us_frag_dup_slot s[US_FRAG_DUP_SLOTS];
};

/* Whether ip (a fragment) duplicates one seen within the window; if not,
 * it is remembered as seen at now_ns. */
bool us_frag_dup_seen(struct us_frag_dup *d, const struct rte_ipv4_hdr *ip, uint64_t now_ns);

#endif
