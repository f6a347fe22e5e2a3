/* stack/net/frag6.c: IPv6 fragments (RFC 8200 4.5): reassembly of what we
 * receive, fragmentation of what we send beyond the path MTU.
 *
 * Reassembly is ours, not DPDK's rte_ipv6_frag_reassemble_packet, which
 * does not fit three rules: it looks for the fragment header only right
 * after the fixed header (a hop-by-hop or destination options header in
 * front of it is legal); it holds at most RTE_LIBRTE_IP_FRAG_MAX_FRAG (8)
 * fragments per datagram (a 64 KiB datagram over a 1280-byte path is 52);
 * and on an overlap it drops the table entry, so the rest of the datagram
 * starts a fresh one, where RFC 5722 wants the whole datagram, fragments
 * still to come included, discarded.  It also gives us no hook for Time
 * Exceeded at the timeout.
 *
 * The table is small and bounded: US_FRAG6_DGRAMS datagrams, each of at
 * most US_FRAG6_FRAGS fragments (kept sorted by offset, so an overlap is a
 * look at two neighbours), US_FRAG6_HELD fragments in all (the mbuf pool
 * is shared with everything else).  A datagram is keyed by (source,
 * destination, identification) and found by a linear scan: fragments are
 * rare, and 64 comparisons cost less than keeping a hash.  Each datagram
 * has its own timer, armed when its first fragment arrives (RFC 8200 4.5:
 * 60 s from the first-arriving fragment).
 *
 * Buffers: every fragment held is the mbuf as received.  The first one
 * (offset 0) keeps its headers, both to quote in Time Exceeded and to
 * become the reassembled packet's first segment: its unfragmentable part
 * slides over the fragment header, the later fragments are chained behind
 * it, trimmed to their data.  So the rebuilt packet's first segment holds
 * every header through the upper-layer one (RFC 7112 makes the first
 * fragment carry them) and the upper layers find them contiguous.
 *
 * Output: the unfragmentable part is the fixed header (we send no
 * extension headers); each fragment is a fresh mbuf with the IPv6 and
 * fragment headers, its data attached from the original through indirect
 * mbufs, never copied.
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <stdlib.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stack/base/rand.h"
#include "stack/net/net.h"

/* RFC 8200 4.5 (RFC 7112): the first fragment lacks part of the header
 * chain; not named by <netinet/icmp6.h>. */
#define FRAG6_PARAMPROB_FIRST_FRAG 3

/* One fragment held: the mbuf as received; bytes [start, end) of the
 * fragmentable part.  The first fragment's data starts data_off bytes into
 * it; any other's m is already trimmed to its data. */
struct frag6_piece {
	struct rte_mbuf *m;
	uint16_t start, end;
	uint16_t data_off;
};

struct us_frag6_dgram {
	struct us_net *n;
	struct us_timer timer;
	struct us_in6 src, dst;
	uint32_t id;            /* as on the wire */
	bool used;
	bool dead;              /* overlap seen: refuse the rest until the timeout */
	bool has_last;          /* the fragment with M clear came: total is known */
	uint8_t nh;             /* first fragment: its fragment header's Next Header */
	uint16_t nh_off;        /* ... the offset of the byte naming that header */
	uint16_t frag_off;      /* ... and of the fragment header */
	uint32_t total;         /* length of the fragmentable part */
	uint32_t have;          /* bytes of it held */
	unsigned npieces;
	struct frag6_piece p[US_FRAG6_FRAGS];
};

/* What one received fragment says. */
struct frag6_info {
	struct us_in6 src, dst;
	uint32_t id;
	uint16_t start, end;    /* of the fragmentable part */
	bool more;
	uint8_t nh;             /* its fragment header's Next Header */
	uint16_t data_off;      /* where its data begins */
};

/* Parameter problem about the fragment m, then m freed. */
static void frag6_refuse(struct us_net *n, struct rte_mbuf *m, uint8_t code, uint32_t pointer)
{
	us_icmp6_error(n, ICMP6_PARAM_PROB, code, pointer,
		       rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *), m);
	rte_pktmbuf_free(m);
}

static void frag6_free_pieces(struct us_net *n, struct us_frag6_dgram *d)
{
	for (unsigned i = 0; i < d->npieces; i++)
		rte_pktmbuf_free(d->p[i].m);
	n->ip6.frag.held -= d->npieces;
	d->npieces = 0;
	d->have = 0;
}

/* The slot is free again; its pieces must be gone already. */
static void frag6_release(struct us_net *n, struct us_frag6_dgram *d)
{
	us_timer_cancel(n->wheel, &d->timer);
	d->used = false;
	n->ip6.frag.n--;
}

/* RFC 8200 4.5: 60 s after the first-arriving fragment the datagram is
 * abandoned; Time Exceeded goes to the source only if the first fragment
 * (offset 0) is among those held.  A datagram dropped for an overlap is
 * silent (RFC 5722). */
static void frag6_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct us_frag6_dgram *d = container_of(t, struct us_frag6_dgram, timer);
	struct us_net *n = d->n;

	(void)now_ns;
	US_NET_STAT_INC(n, ip6_frag_timeout);
	if (!d->dead && d->npieces > 0 && d->p[0].start == 0) {
		US_NET_STAT_INC(n, ip6_frag_timeout_icmp);
		us_icmp6_error(n, ICMP6_TIME_EXCEEDED, ICMP6_TIME_EXCEED_REASSEMBLY, 0,
			       rte_pktmbuf_mtod(d->p[0].m, const struct rte_ipv6_hdr *), d->p[0].m);
	}
	frag6_free_pieces(n, d);
	frag6_release(n, d);
}

int us_frag6_init(struct us_net *n)
{
	struct us_frag6_table *t = &n->ip6.frag;
	int rc;

	t->d = calloc(US_FRAG6_DGRAMS, sizeof(*t->d));
	if (t->d == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < US_FRAG6_DGRAMS; i++) {
		t->d[i].n = n;
		us_timer_init(&t->d[i].timer, frag6_timer_fn);
	}
	t->n = 0;
	t->held = 0;
	rc = us_rand_init();
	if (rc < 0)
		return rc;
	/* A random start, then one per datagram (as IPv4's). */
	n->ip6.next_frag_id = us_rand_u32();
	return 0;
}

void us_frag6_fini(struct us_net *n)
{
	struct us_frag6_table *t = &n->ip6.frag;

	if (t->d == NULL)
		return;
	for (unsigned i = 0; i < US_FRAG6_DGRAMS; i++) {
		if (!t->d[i].used)
			continue;
		frag6_free_pieces(n, &t->d[i]);
		frag6_release(n, &t->d[i]);
	}
	free(t->d);
	t->d = NULL;
}

/* Is m's first segment ours alone to write, holding at least upto bytes
 * (gathered there when the whole packet fits in its buffer)? */
static bool frag6_front(struct rte_mbuf *m, uint32_t upto)
{
	if (!RTE_MBUF_DIRECT(m) || rte_mbuf_refcnt_read(m) != 1)
		return false;
	if (rte_pktmbuf_data_len(m) < upto && rte_pktmbuf_linearize(m) < 0)
		return false;
	return rte_pktmbuf_data_len(m) >= upto;
}

/* m freed and counted under *counter (a field of n->stats). */
static void frag6_drop(struct rte_mbuf *m, uint64_t *counter)
{
	(*counter)++;
	rte_pktmbuf_free(m);
}

/* Reads what fragment m says and checks it alone (RFC 8200 4.5).  0, or
 * -EINVAL with m dropped, counted and perhaps answered. */
static int frag6_parse(struct us_net *n, struct rte_mbuf *m, const struct us_ip6_chain *c,
		       struct frag6_info *f)
{
	const struct rte_ipv6_hdr *ip6 = rte_pktmbuf_mtod(m, const struct rte_ipv6_hdr *);
	struct rte_ipv6_fragment_ext fbuf;
	const struct rte_ipv6_fragment_ext *fh;
	uint32_t end, len, unfrag = c->frag_off - sizeof(*ip6);
	uint16_t fd;

	if (rte_pktmbuf_data_len(m) < sizeof(*ip6))
		return frag6_drop(m, &n->stats.ip6_frag_drop_unusable), -EINVAL;
	end = sizeof(*ip6) + rte_be_to_cpu_16(ip6->payload_len);
	fh = rte_pktmbuf_read(m, c->frag_off, sizeof(*fh), &fbuf);
	if (fh == NULL || rte_pktmbuf_pkt_len(m) < end || c->frag_off + sizeof(*fh) > end)
		return frag6_drop(m, &n->stats.ip6_frag_drop_unusable), -EINVAL;
	fd = rte_be_to_cpu_16(fh->frag_data);
	f->data_off = (uint16_t)(c->frag_off + sizeof(*fh));
	len = end - f->data_off;
	f->start = fd & RTE_IPV6_EHDR_FO_MASK;
	f->more = RTE_IPV6_GET_MF(fd) != 0;
	if (f->more && len % 8 != 0) {
		US_NET_STAT_INC(n, ip6_frag_drop_bad_len);
		frag6_refuse(n, m, ICMP6_PARAMPROB_HEADER, offsetof(struct rte_ipv6_hdr, payload_len));
		return -EINVAL;
	}
	if (unfrag + f->start + len > UINT16_MAX) {
		US_NET_STAT_INC(n, ip6_frag_drop_too_big);
		frag6_refuse(n, m, ICMP6_PARAMPROB_HEADER,
			     c->frag_off + offsetof(struct rte_ipv6_fragment_ext, frag_data));
		return -EINVAL;
	}
	/* Ethernet padding past the Payload Length is not fragment data. */
	if (rte_pktmbuf_pkt_len(m) > end && rte_pktmbuf_trim(m, rte_pktmbuf_pkt_len(m) - end) < 0)
		return frag6_drop(m, &n->stats.ip6_frag_drop_unusable), -EINVAL;
	f->end = (uint16_t)(f->start + len);
	f->nh = fh->next_header;
	f->id = fh->id;
	memcpy(f->src.b, ip6->src_addr, sizeof(f->src.b));
	memcpy(f->dst.b, ip6->dst_addr, sizeof(f->dst.b));
	return 0;
}

/* The least an upper-layer header of type nh must show in the first
 * fragment: its ports, checksum and sequence numbers. */
static unsigned frag6_upper_len(uint8_t nh)
{
	switch (nh) {
	case IPPROTO_TCP:
		return 20;
	case IPPROTO_UDP:
	case IPPROTO_ICMPV6:
		return 8;
	default:
		return 0;
	}
}

/* RFC 8200 4.5 (RFC 7112): where the headers that follow the fragment
 * header (type nh at off) end, through the upper-layer header; 0 when the
 * fragment (ending at end) stops before.  Past US_IP6_EXT_MAX headers the
 * walk of the reassembled datagram refuses it: stop counting there. */
static uint32_t frag6_chain_end(const struct rte_mbuf *m, uint8_t nh, uint32_t off, uint32_t end)
{
	for (unsigned k = 0; k < US_IP6_EXT_MAX; k++) {
		const uint8_t *h;
		uint8_t b[2];

		if (nh != IPPROTO_HOPOPTS && nh != IPPROTO_ROUTING && nh != IPPROTO_DSTOPTS &&
		    nh != IPPROTO_FRAGMENT && nh != IPPROTO_AH)
			break;
		if (off + 2 > end || (h = rte_pktmbuf_read(m, off, 2, b)) == NULL)
			return 0;
		if (nh == IPPROTO_FRAGMENT)
			off += sizeof(struct rte_ipv6_fragment_ext);
		else if (nh == IPPROTO_AH) /* RFC 4302 2.2: 4-octet units, less 2 */
			off += (h[1] + 2u) * 4u;
		else
			off += (h[1] + 1u) * 8u;
		nh = h[0];
	}
	off += frag6_upper_len(nh);
	return off <= end ? off : 0;
}

/* The fragment header (8 bytes at frag_off) leaves m: the unfragmentable
 * part slides over it, and the Next Header before it (at nh_off) and the
 * Payload Length take the datagram's values.  m's first segment holds
 * [0, frag_off + 8), written in place. */
static void frag6_strip(struct rte_mbuf *m, uint16_t frag_off, uint16_t nh_off, uint8_t nh,
			uint32_t payload_len)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	struct rte_ipv6_hdr *ip6;

	memmove(p + sizeof(struct rte_ipv6_fragment_ext), p, frag_off);
	p = (uint8_t *)rte_pktmbuf_adj(m, sizeof(struct rte_ipv6_fragment_ext));
	p[nh_off] = nh;
	ip6 = (struct rte_ipv6_hdr *)p;
	ip6->payload_len = rte_cpu_to_be_16((uint16_t)payload_len);
	/* A NIC's verdict on a fragment's L4 checksum means nothing. */
	m->ol_flags &= ~RTE_MBUF_F_RX_L4_CKSUM_MASK;
}

/* RFC 6946: offset 0 and M clear: the whole datagram, taken at once and
 * never mixed with fragments held under the same identification. */
static struct rte_mbuf *frag6_atomic(struct us_net *n, struct rte_mbuf *m,
				     const struct us_ip6_chain *c, const struct frag6_info *f)
{
	if (!frag6_front(m, f->data_off)) {
		frag6_drop(m, &n->stats.ip6_frag_drop_unusable);
		return NULL;
	}
	frag6_strip(m, c->frag_off, c->frag_nh_off, f->nh,
		    c->frag_off - sizeof(struct rte_ipv6_hdr) + f->end);
	US_NET_STAT_INC(n, ip6_frag_atomic);
	return m;
}

/* A fragment's own checks before the table: the first one carries the
 * whole header chain, the others are trimmed to their data.  0, or
 * -EINVAL with m dropped. */
static int frag6_prepare(struct us_net *n, struct rte_mbuf *m, const struct frag6_info *f)
{
	uint32_t chain_end;

	if (f->end == f->start)
		return frag6_drop(m, &n->stats.ip6_frag_drop_empty), -EINVAL;
	if (f->start != 0) {
		if (rte_pktmbuf_data_len(m) < f->data_off && !frag6_front(m, f->data_off))
			return frag6_drop(m, &n->stats.ip6_frag_drop_unusable), -EINVAL;
		rte_pktmbuf_adj(m, f->data_off);
		return 0;
	}
	chain_end = frag6_chain_end(m, f->nh, f->data_off, f->data_off + (f->end - f->start));
	if (chain_end == 0) {
		US_NET_STAT_INC(n, ip6_frag_drop_incomplete_chain);
		frag6_refuse(n, m, FRAG6_PARAMPROB_FIRST_FRAG, 0);
		return -EINVAL;
	}
	if (!frag6_front(m, chain_end))
		return frag6_drop(m, &n->stats.ip6_frag_drop_unusable), -EINVAL;
	return 0;
}

/* The datagram f belongs to, or a new one (its timer armed); NULL when
 * the table is full. */
static struct us_frag6_dgram *frag6_find(struct us_net *n, const struct frag6_info *f)
{
	struct us_frag6_table *t = &n->ip6.frag;
	struct us_frag6_dgram *free_slot = NULL;

	for (unsigned i = 0; i < US_FRAG6_DGRAMS; i++) {
		struct us_frag6_dgram *d = &t->d[i];

		if (!d->used) {
			if (free_slot == NULL)
				free_slot = d;
			continue;
		}
		if (d->id == f->id && us_in6_eq(&d->src, &f->src) && us_in6_eq(&d->dst, &f->dst))
			return d;
	}
	if (free_slot == NULL)
		return NULL;
	free_slot->src = f->src;
	free_slot->dst = f->dst;
	free_slot->id = f->id;
	free_slot->used = true;
	free_slot->dead = false;
	free_slot->has_last = false;
	free_slot->total = 0;
	free_slot->have = 0;
	free_slot->npieces = 0;
	t->n++;
	us_timer_arm(n->wheel, &free_slot->timer, us_timer_now(n->wheel) + US_FRAG6_TIMEOUT_NS);
	return free_slot;
}

/* Are the len bytes of a held piece those of m from m_off? */
static bool frag6_same_bytes(const struct frag6_piece *p, const struct rte_mbuf *m, uint32_t m_off)
{
	uint32_t len = p->end - p->start;
	uint8_t a[256], b[256];

	for (uint32_t done = 0; done < len;) {
		uint32_t k = RTE_MIN(len - done, (uint32_t)sizeof(a));
		const void *x = rte_pktmbuf_read(p->m, p->data_off + done, k, a);
		const void *y = rte_pktmbuf_read(m, m_off + done, k, b);

		if (x == NULL || y == NULL || memcmp(x, y, k) != 0)
			return false;
		done += k;
	}
	return true;
}

/* Every fragment held and m dropped; the datagram's slot freed, or kept
 * dead until its timeout (an overlap, RFC 5722). */
static void frag6_discard(struct us_net *n, struct us_frag6_dgram *d, struct rte_mbuf *m,
			  bool dead)
{
	rte_pktmbuf_free(m);
	frag6_free_pieces(n, d);
	if (dead) {
		d->dead = true;
		d->has_last = false;
	} else {
		frag6_release(n, d);
	}
}

/* A fragment that contradicts the end the datagram already has. */
static bool frag6_bad_end(const struct us_frag6_dgram *d, const struct frag6_info *f)
{
	if (f->more)
		return d->has_last && f->end > d->total;
	if (d->has_last)
		return f->end != d->total;
	return d->npieces > 0 && d->p[d->npieces - 1].end > f->end;
}

/* RFC 8200 4.5, RFC 5722: m (prepared) joins d, sorted by offset.  0, or
 * -errno with m dropped (and d with it when m makes it unusable). */
static int frag6_add(struct us_net *n, struct us_frag6_dgram *d, struct rte_mbuf *m,
		     const struct us_ip6_chain *c, const struct frag6_info *f)
{
	unsigned i = 0;

	while (i < d->npieces && d->p[i].start < f->start)
		i++;
	/* RFC 8200 4.5 lets an exact duplicate go alone (the network may
	 * duplicate a packet); the same range with other bytes is an overlap. */
	if (i < d->npieces && d->p[i].start == f->start && d->p[i].end == f->end &&
	    frag6_same_bytes(&d->p[i], m, f->start == 0 ? f->data_off : 0))
		return frag6_drop(m, &n->stats.ip6_frag_dup), -EEXIST;
	if ((i > 0 && d->p[i - 1].end > f->start) || (i < d->npieces && d->p[i].start < f->end)) {
		US_NET_STAT_INC(n, ip6_frag_drop_overlap);
		return frag6_discard(n, d, m, true), -EINVAL;
	}
	if (frag6_bad_end(d, f)) {
		US_NET_STAT_INC(n, ip6_frag_drop_inconsistent);
		return frag6_discard(n, d, m, false), -EINVAL;
	}
	if (d->npieces == US_FRAG6_FRAGS) {
		US_NET_STAT_INC(n, ip6_frag_drop_too_many);
		return frag6_discard(n, d, m, false), -EINVAL;
	}
	memmove(&d->p[i + 1], &d->p[i], (d->npieces - i) * sizeof(d->p[0]));
	d->p[i] = (struct frag6_piece){
		.m = m, .start = f->start, .end = f->end, .data_off = f->start == 0 ? f->data_off : 0,
	};
	d->npieces++;
	n->ip6.frag.held++;
	d->have += f->end - f->start;
	if (!f->more) {
		d->has_last = true;
		d->total = f->end;
	}
	if (f->start == 0) {
		d->nh = f->nh;
		d->nh_off = c->frag_nh_off;
		d->frag_off = c->frag_off;
	}
	return 0;
}

/* RFC 8200 4.5: the datagram from its fragments, d's slot freed.  The
 * first fragment's headers (the Next Header of its fragment header), the
 * data of all behind them in order. */
static struct rte_mbuf *frag6_rebuild(struct us_net *n, struct us_frag6_dgram *d)
{
	struct rte_mbuf *m = d->p[0].m;
	unsigned i, np = d->npieces;

	frag6_strip(m, d->frag_off, d->nh_off, d->nh,
		    d->frag_off - sizeof(struct rte_ipv6_hdr) + d->total);
	for (i = 1; i < np; i++)
		if (rte_pktmbuf_chain(m, d->p[i].m) < 0)
			break;
	n->ip6.frag.held -= np;
	d->npieces = 0;
	frag6_release(n, d);
	if (i < np) {
		/* More segments than an mbuf chain counts. */
		for (; i < np; i++)
			rte_pktmbuf_free(d->p[i].m);
		frag6_drop(m, &n->stats.ip6_frag_drop_unusable);
		return NULL;
	}
	US_NET_STAT_INC(n, ip6_frag_reassembled);
	return m;
}

struct rte_mbuf *us_frag6_input(struct us_net *n, struct rte_mbuf *m, const struct us_ip6_chain *c)
{
	struct us_frag6_dgram *d;
	struct frag6_info f;

	US_NET_STAT_INC(n, ip6_frag_in);
	if (frag6_parse(n, m, c, &f) < 0)
		return NULL;
	if (f.start == 0 && !f.more)
		return frag6_atomic(n, m, c, &f);
	if (frag6_prepare(n, m, &f) < 0)
		return NULL;
	d = n->ip6.frag.held < US_FRAG6_HELD ? frag6_find(n, &f) : NULL;
	if (d == NULL) {
		frag6_drop(m, &n->stats.ip6_frag_drop_table_full);
		return NULL;
	}
	if (d->dead) {
		frag6_drop(m, &n->stats.ip6_frag_drop_after_overlap);
		return NULL;
	}
	if (frag6_add(n, d, m, c, &f) < 0 || !d->has_last || d->have != d->total)
		return NULL;
	return frag6_rebuild(n, d);
}

/* Appends len bytes of m from off to f through indirect mbufs, one per
 * segment of m they span.  0 or -ENOMEM. */
static int frag6_attach(struct us_net *n, struct rte_mbuf *f, struct rte_mbuf *m, uint32_t off,
			uint32_t len)
{
	for (struct rte_mbuf *seg = m; seg != NULL && len > 0; seg = seg->next) {
		struct rte_mbuf *ind;
		uint32_t take;

		if (off >= seg->data_len) {
			off -= seg->data_len;
			continue;
		}
		take = RTE_MIN(seg->data_len - off, len);
		ind = rte_pktmbuf_alloc(n->indirect_pool);
		if (ind == NULL)
			return -ENOMEM;
		rte_pktmbuf_attach(ind, seg);
		ind->data_off = (uint16_t)(ind->data_off + off);
		ind->data_len = (uint16_t)take;
		ind->pkt_len = take;
		if (rte_pktmbuf_chain(f, ind) < 0) {
			rte_pktmbuf_free(ind);
			return -ENOMEM;
		}
		off = 0;
		len -= take;
	}
	return len == 0 ? 0 : -EINVAL;
}

/* One fragment of m (whose IPv6 header is ip6): the headers in a fresh
 * mbuf, then bytes [off, off + len) of the fragmentable part. */
static struct rte_mbuf *frag6_one(struct us_net *n, struct rte_mbuf *m,
				  const struct rte_ipv6_hdr *ip6, uint32_t id, uint32_t off,
				  uint32_t len, bool more)
{
	struct rte_mbuf *f = rte_pktmbuf_alloc(n->pool);
	struct rte_ipv6_fragment_ext *fh;
	struct rte_ipv6_hdr *h;

	if (f == NULL)
		return NULL;
	h = (struct rte_ipv6_hdr *)rte_pktmbuf_append(f, sizeof(*h) + sizeof(*fh));
	if (h == NULL)
		goto fail;
	*h = *ip6;
	h->payload_len = rte_cpu_to_be_16((uint16_t)(sizeof(*fh) + len));
	h->proto = IPPROTO_FRAGMENT;
	fh = (struct rte_ipv6_fragment_ext *)(h + 1);
	*fh = (struct rte_ipv6_fragment_ext){
		.next_header = ip6->proto,
		.frag_data = rte_cpu_to_be_16((uint16_t)RTE_IPV6_SET_FRAG_DATA(off, more)),
		.id = rte_cpu_to_be_32(id),
	};
	if (frag6_attach(n, f, m, sizeof(*ip6) + off, len) == 0)
		return f;
fail:
	rte_pktmbuf_free(f);
	return NULL;
}

int us_frag6_output(struct us_net *n, struct rte_mbuf *m, uint16_t mtu, struct rte_mbuf **out,
		    unsigned max)
{
	struct rte_ipv6_hdr hbuf;
	const struct rte_ipv6_hdr *ip6 = rte_pktmbuf_read(m, 0, sizeof(hbuf), &hbuf);
	/* RFC 8200 4.5: every fragment but the last carries a multiple of 8. */
	uint32_t step = mtu > sizeof(hbuf) + RTE_IPV6_FRAG_HDR_SIZE ?
				(mtu - sizeof(hbuf) - RTE_IPV6_FRAG_HDR_SIZE) & ~7u : 0;
	uint32_t plen = rte_pktmbuf_pkt_len(m) - sizeof(hbuf), id;
	unsigned k = 0;

	if (ip6 == NULL || plen > UINT16_MAX || step == 0 || (plen + step - 1) / step > max) {
		US_NET_STAT_INC(n, ip6_frag_drop_out_fail);
		rte_pktmbuf_free(m);
		return -EINVAL;
	}
	hbuf = *ip6; /* m's header may live in m: keep a copy past its free */
	id = n->ip6.next_frag_id++;
	for (uint32_t off = 0; off < plen; off += step) {
		uint32_t len = RTE_MIN(step, plen - off);

		out[k] = frag6_one(n, m, &hbuf, id, off, len, off + len < plen);
		if (out[k] == NULL) {
			while (k > 0)
				rte_pktmbuf_free(out[--k]);
			US_NET_STAT_INC(n, ip6_frag_drop_out_fail);
			rte_pktmbuf_free(m);
			return -ENOMEM;
		}
		k++;
	}
	/* The fragments hold their own references to m's data. */
	rte_pktmbuf_free(m);
	US_NET_STAT_ADD(n, ip6_frag_out, k);
	return (int)k;
}
