/* tcp/reass.c: the out-of-order queue (RFC 9293 3.10.7.4 "segments with
 * higher beginning sequence numbers may be held for later processing") and
 * the receiver's SACK blocks (RFC 2018 4, RFC 2883).
 *
 * The queue holds single-segment mbufs of payload only, sorted by sequence
 * number and never overlapping: a new piece is trimmed against what is
 * queued, and a queued piece the new one covers entirely is replaced.  The
 * sequence number of a piece lives in m->hash.usr (the RSS hash is dead once
 * the segment has been demultiplexed).  Memory is bounded by the receive
 * buffer (in-order plus out-of-order bytes) and by TCP_REASS_MAX_SEGS mbufs,
 * since tiny segments in full-sized mbufs would otherwise drain the pool.
 */
#include <string.h>

#include "tcp/tcb.h"

static uint32_t pseq(const struct rte_mbuf *m)
{
	return m->hash.usr;
}

static uint32_t pend(const struct rte_mbuf *m)
{
	return m->hash.usr + m->data_len;
}

void tcp_dsack_note(struct tcp_conn *c, uint32_t start, uint32_t end)
{
	if (!c->sack_ok || !SEQ_LT(start, end))
		return;
	/* RFC 2883 4: one D-SACK block per ACK; extend a contiguous one. */
	if (c->dsack_pending && c->dsack_end == start) {
		c->dsack_end = end;
		return;
	}
	if (c->dsack_pending && c->dsack_start == end) {
		c->dsack_start = start;
		return;
	}
	c->dsack_start = start;
	c->dsack_end = end;
	c->dsack_pending = true;
}

static void unlink_after(struct tcp_conn *c, struct rte_mbuf *prev, struct rte_mbuf *m)
{
	if (prev)
		prev->next = m->next;
	else
		c->ooo.head = m->next;
	if (c->ooo.tail == m)
		c->ooo.tail = prev;
	m->next = NULL;
	c->ooo.bytes -= m->data_len;
	c->ooo_segs--;
}

static void link_after(struct tcp_conn *c, struct rte_mbuf *prev, struct rte_mbuf *s)
{
	s->next = prev ? prev->next : c->ooo.head;
	if (prev)
		prev->next = s;
	else
		c->ooo.head = s;
	if (s->next == NULL)
		c->ooo.tail = s;
	c->ooo.bytes += s->data_len;
	c->ooo_segs++;
}

/* Puts piece s at sseq into the queue, trimmed against its neighbours;
 * false when all of it was there already (s freed). */
static bool insert_piece(struct tcp_conn *c, struct rte_mbuf *s, uint32_t sseq)
{
	struct rte_mbuf *prev = NULL, *cur = c->ooo.head;
	uint32_t end = sseq + s->data_len;

	while (cur != NULL) {
		struct rte_mbuf *next = cur->next;
		uint32_t cs = pseq(cur), ce = pend(cur);

		if (SEQ_LEQ(ce, sseq)) {
			prev = cur;
		} else if (SEQ_GEQ(cs, end)) {
			break;
		} else if (SEQ_LEQ(cs, sseq)) {
			tcp_dsack_note(c, sseq, SEQ_LT(ce, end) ? ce : end);
			if (SEQ_GEQ(ce, end)) {
				rte_pktmbuf_free_seg(s);
				return false;
			}
			s->data_off += (uint16_t)(ce - sseq);
			s->data_len -= (uint16_t)(ce - sseq);
			sseq = ce;
			prev = cur;
		} else if (SEQ_LEQ(ce, end)) {
			/* cur lies inside the new piece: the new one replaces it. */
			tcp_dsack_note(c, cs, ce);
			unlink_after(c, prev, cur);
			rte_pktmbuf_free_seg(cur);
		} else {
			tcp_dsack_note(c, cs, end);
			s->data_len = (uint16_t)(cs - sseq);
			break;
		}
		cur = next;
	}
	s->pkt_len = s->data_len;
	s->hash.usr = sseq;
	link_after(c, prev, s);
	return true;
}

/* The contiguous queued run holding x, or false. */
static bool run_of(const struct tcp_conn *c, uint32_t x, uint32_t *rs, uint32_t *re)
{
	const struct rte_mbuf *m;
	bool in = false;

	for (m = c->ooo.head; m != NULL; m = m->next) {
		if (!in || pseq(m) != *re)
			*rs = pseq(m);
		*re = pend(m);
		in = true;
		if (SEQ_LEQ(*rs, x) && SEQ_LT(x, *re) && (m->next == NULL || pseq(m->next) != *re))
			return true;
	}
	return false;
}

/* RFC 2018 4: the block holding the newest segment goes first; entries
 * that now fall in that same block are merged away. */
static void sack_remember(struct tcp_conn *c, uint32_t seq)
{
	uint32_t keep[TCP_SACK_MAX_BLOCKS], rs, re;
	unsigned i, n = 0;

	if (!run_of(c, seq, &rs, &re))
		return;
	keep[n++] = seq;
	for (i = 0; i < c->sack_nrecent && n < TCP_SACK_MAX_BLOCKS; i++) {
		uint32_t x = c->sack_recent[i];

		if (!(SEQ_LEQ(rs, x) && SEQ_LT(x, re)))
			keep[n++] = x;
	}
	memcpy(c->sack_recent, keep, n * sizeof(keep[0]));
	c->sack_nrecent = n;
}

void tcp_reass_insert(struct tcp_conn *c, struct rte_mbuf *m, uint32_t skip, uint32_t seq,
		      uint32_t len, bool fin)
{
	struct tcp_stack *ts = c->ts;
	struct rte_mbuf *s;
	uint32_t off = 0, at;
	bool dropped = false, queued = false;

	if (fin) {
		c->ooo_fin = true;
		c->ooo_fin_seq = seq + len;
	}
	while ((s = tcp_mbuf_take_piece(&m, &skip, &len)) != NULL) {
		at = seq + off;
		off += s->data_len;
		if (c->ooo_segs >= TCP_REASS_MAX_SEGS ||
		    c->rcvq.bytes + c->ooo.bytes + s->data_len > c->rcvbuf) {
			dropped = true;
			rte_pktmbuf_free_seg(s);
			continue;
		}
		if (insert_piece(c, s, at))
			queued = true;
	}
	if (dropped)
		ts->stats.drop_ooo_mem++;
	else if (!queued && off > 0)
		ts->stats.drop_ooo_dup++;
	if (c->sack_ok && queued)
		sack_remember(c, seq);
}

uint32_t tcp_reass_deliver(struct tcp_conn *c, bool *fin)
{
	struct rte_mbuf *m;
	uint32_t moved = 0;
	unsigned i, n = 0;

	while ((m = c->ooo.head) != NULL && SEQ_LEQ(pseq(m), c->rcv_nxt)) {
		unlink_after(c, NULL, m);
		if (SEQ_LEQ(pend(m), c->rcv_nxt)) {
			rte_pktmbuf_free_seg(m); /* the in-order segment had it */
			continue;
		}
		m->data_off += (uint16_t)(c->rcv_nxt - pseq(m));
		m->data_len -= (uint16_t)(c->rcv_nxt - pseq(m));
		m->pkt_len = m->data_len;
		c->rcv_nxt += m->data_len;
		moved += m->data_len;
		tcp_mq_push(&c->rcvq, m);
	}
	if (c->ooo_fin && c->rcv_nxt == c->ooo_fin_seq) {
		c->ooo_fin = false;
		*fin = true;
	}
	for (i = 0; i < c->sack_nrecent; i++)
		if (SEQ_GT(c->sack_recent[i], c->rcv_nxt))
			c->sack_recent[n++] = c->sack_recent[i];
	c->sack_nrecent = n;
	return moved;
}

void tcp_reass_free(struct tcp_conn *c)
{
	tcp_mq_free(&c->ooo);
	c->ooo_segs = 0;
	c->ooo_fin = false;
	c->sack_nrecent = 0;
}

unsigned tcp_sack_blocks(struct tcp_conn *c, uint32_t (*blk)[2], unsigned max)
{
	unsigned n = 0, first;

	/* RFC 2883 4: the D-SACK block first, reported once. */
	if (c->dsack_pending && max > 0) {
		blk[n][0] = c->dsack_start;
		blk[n][1] = c->dsack_end;
		n++;
		c->dsack_pending = false;
	}
	first = n; /* a SACK block may repeat the D-SACK one (RFC 2883 4.1.2) */
	for (unsigned i = 0; i < c->sack_nrecent && n < max; i++) {
		uint32_t rs, re;
		bool dup = false;

		if (!run_of(c, c->sack_recent[i], &rs, &re))
			continue;
		for (unsigned j = first; j < n; j++)
			dup |= blk[j][0] == rs && blk[j][1] == re;
		if (!dup) {
			blk[n][0] = rs;
			blk[n][1] = re;
			n++;
		}
	}
	return n;
}
