/* stack/net/frag_dup.c: exact duplicates of IPv4 fragments (frag_dup.h). */
#include "stack/net/frag_dup.h"

#include <rte_jhash.h>

static unsigned slot_of(const struct rte_ipv4_hdr *ip)
{
	uint32_t h = rte_jhash_3words(ip->src_addr, ip->dst_addr,
				      (uint32_t)ip->packet_id << 16 | ip->fragment_offset,
				      ip->next_proto_id);

	return h & (US_FRAG_DUP_SLOTS - 1);
}

static bool same_fragment(const struct us_frag_dup_slot *s, const struct rte_ipv4_hdr *ip)
{
	return s->src == ip->src_addr && s->dst == ip->dst_addr && s->id == ip->packet_id &&
	       s->off_mf == ip->fragment_offset && s->len == ip->total_length &&
	       s->proto == ip->next_proto_id;
}

bool us_frag_dup_seen(struct us_frag_dup *d, const struct rte_ipv4_hdr *ip, uint64_t now_ns)
{
	struct us_frag_dup_slot *s = &d->s[slot_of(ip)];

	if (s->used && same_fragment(s, ip) && now_ns - s->seen_ns < US_FRAG_DUP_WINDOW_NS)
		return true;
	*s = (struct us_frag_dup_slot){
		.src = ip->src_addr, .dst = ip->dst_addr, .id = ip->packet_id,
		.off_mf = ip->fragment_offset, .len = ip->total_length,
		.proto = ip->next_proto_id, .used = true, .seen_ns = now_ns,
	};
	return false;
}
