/* tcp/urgent.c: urgent data (RFC 9293 3.8.5, MUST-30..33 and 62; RFC 6093)
 * with Linux's semantics for the application, since that is what every
 * program using MSG_OOB expects:
 *
 * - Sending: us_send(MSG_OOB) makes the last byte of that send urgent.
 *   SND.UP is the octet after it (RFC 9293 MUST-62, and what Linux sends);
 *   every segment numbered below SND.UP carries URG and the pointer until
 *   SND.UNA reaches SND.UP.
 * - Receiving: the peer's pointer names one urgent byte (RCV.UP, the octet
 *   before the pointer).  Unless SO_OOBINLINE is on, that byte is taken out
 *   of the stream and kept for recv(MSG_OOB); a read stops at the mark so
 *   that SIOCATMARK can tell the application where it was; EPOLLPRI says
 *   an urgent byte waits (MUST-32).  Urgent data of any length (MUST-31):
 *   the pointer may lie any distance ahead, and a newer pointer replaces an
 *   older one.  Linux's difference kept: a second urgent byte arriving
 *   before the first was read replaces it; here the first, already out of
 *   the stream, is lost (Linux leaves it inline).
 * - The pointer is taken from any acceptable segment, even one whose text
 *   a zero window cuts (MUST-66), and its byte from that segment's payload.
 *
 * Positions: the read position counts sequence space without the bytes
 * taken out (rcv_read_pos); the mark is the read position at which the
 * urgent byte stands, known once the byte is in order. */
#include <errno.h>
#include <string.h>

#include "tcp/tcb.h"

/* Where the application's next read starts: RCV.NXT less what waits in
 * the queue, the FIN, and the urgent bytes taken out of the stream. */
static uint32_t rcv_read_pos(const struct tcp_conn *c)
{
	return c->rcv_nxt - c->fin_rcvd - c->rcvq.bytes - c->urg.pulled_bytes;
}

/* Linux's tcp_recvmsg forgets the urgent byte once a read went past it. */
static bool urg_passed(const struct tcp_conn *c)
{
	return c->urg.marked && SEQ_GT(rcv_read_pos(c), c->urg.mark);
}

static enum tcp_urg_rcv urg_state(const struct tcp_conn *c)
{
	return urg_passed(c) ? TCP_URG_NONE : (enum tcp_urg_rcv)c->urg.rcv;
}

/* Sending */

ssize_t tcp_send_oob(struct tcp_conn *c, const void *buf, size_t len)
{
	ssize_t n;

	tcp_enter(c->ts);
	n = tcp_send(c, buf, len);
	if (n > 0) {
		c->urg.snd_up = tcp_sndq_end(c);
		c->urg.snd_on = true;
		c->ts->stats.urg_sent++;
		/* Linux pushes an urgent send with Nagle off. */
		tcp_output_push(c);
	}
	tcp_leave(c->ts);
	return n;
}

uint8_t tcp_urg_out(struct tcp_conn *c, uint32_t seq, uint16_t *urp)
{
	if (SEQ_LEQ(c->urg.snd_up, c->snd_una)) {
		c->urg.snd_on = false; /* the urgent data is acknowledged */
		return 0;
	}
	if (!SEQ_LT(seq, c->urg.snd_up))
		return 0;
	if (SEQ_LT(c->urg.snd_up, seq + 0x10000u)) {
		*urp = (uint16_t)(c->urg.snd_up - seq);
		return TH_URG;
	}
	/* Too far ahead for 16 bits: as Linux, the largest pointer while it
	 * still lies beyond what was sent. */
	if (SEQ_GT(seq + 0xffffu, c->snd_nxt)) {
		*urp = 0xffff;
		return TH_URG;
	}
	return 0;
}

/* Receiving */

/* Linux's tcp_check_urg: the urgent byte is the octet before the pointer
 * (RFC 6093: what every stack sends).  One at or behind RCV.NXT was
 * delivered already; one not beyond the current one is old. */
static void urg_pointer(struct tcp_conn *c, uint32_t seq, uint16_t urp)
{
	uint32_t ptr = seq + urp - (urp != 0);

	if (SEQ_LT(ptr, c->rcv_nxt) ||
	    (urg_state(c) != TCP_URG_NONE && SEQ_LEQ(ptr, c->urg.rcv_up))) {
		c->ts->stats.urg_ignored_old++;
		return;
	}
	c->urg.rcv_up = ptr;
	c->urg.rcv = TCP_URG_NOTYET;
	c->urg.marked = false;
	c->ts->stats.urg_rcvd++;
	c->ev |= TCP_EV_READABLE; /* EPOLLPRI is a readiness change */
}

void tcp_urg_input(struct tcp_conn *c, const struct rte_mbuf *m, const struct tcp_urg_seg *u)
{
	const uint8_t *p;
	uint8_t b;

	if (u->flags & TH_URG)
		urg_pointer(c, u->seq, u->urp);
	if (c->urg.rcv != TCP_URG_NOTYET || !SEQ_LEQ(u->seq, c->urg.rcv_up) ||
	    !SEQ_LT(c->urg.rcv_up, u->seq + u->len))
		return;
	/* The byte is in this segment, whether or not its text is kept. */
	p = rte_pktmbuf_read(m, u->skip + (c->urg.rcv_up - u->seq), 1, &b);
	if (p == NULL)
		return;
	c->urg.byte = *p;
	c->urg.rcv = TCP_URG_VALID;
	c->ev |= TCP_EV_READABLE;
}

/* A copy of the bytes of m after off, in a fresh mbuf (payload only, no
 * headroom, as the send queue's); NULL without one large enough. */
static struct rte_mbuf *split_after(struct tcp_conn *c, const struct rte_mbuf *m, uint32_t off)
{
	uint32_t rest = m->data_len - off - 1u;
	struct rte_mbuf *n = rte_pktmbuf_alloc(c->ts->env.pool);

	if (n == NULL)
		return NULL;
	n->data_off = 0;
	if (rte_pktmbuf_tailroom(n) < rest) {
		rte_pktmbuf_free(n);
		return NULL;
	}
	memcpy(rte_pktmbuf_mtod(n, char *), rte_pktmbuf_mtod_offset(m, const char *, off + 1u),
	       rest);
	n->data_len = (uint16_t)rest;
	n->pkt_len = rest;
	return n;
}

/* Takes the byte at offset off out of the receive queue: trims an end of
 * its mbuf (freeing one left empty), or splits the mbuf around it. */
static bool rcvq_cut_byte(struct tcp_conn *c, uint32_t off)
{
	struct tcp_mq *q = &c->rcvq;
	struct rte_mbuf *m = q->head, *prev = NULL, *n;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		prev = m;
		m = m->next;
	}
	if (m == NULL)
		return false;
	if (off == 0) {
		m->data_off++;
	} else if (off + 1u < m->data_len) {
		if ((n = split_after(c, m, off)) == NULL)
			return false;
		n->next = m->next;
		m->next = n;
		if (q->tail == m)
			q->tail = n;
		m->data_len = (uint16_t)(off + 1u);
	}
	m->data_len--;
	m->pkt_len = m->data_len;
	q->bytes--;
	if (m->data_len == 0) {
		if (prev != NULL)
			prev->next = m->next;
		else
			q->head = m->next;
		if (q->tail == m)
			q->tail = prev;
		m->next = NULL;
		rte_pktmbuf_free_seg(m);
	}
	return true;
}

/* The byte at offset off of the receive queue. */
static bool rcvq_byte_at(const struct tcp_mq *q, uint32_t off, uint8_t *out)
{
	const struct rte_mbuf *m = q->head;

	while (m != NULL && off >= m->data_len) {
		off -= m->data_len;
		m = m->next;
	}
	if (m == NULL)
		return false;
	*out = *rte_pktmbuf_mtod_offset(m, const uint8_t *, off);
	return true;
}

void tcp_urg_deliver(struct tcp_conn *c)
{
	uint32_t off;

	if (c->urg.rcv == TCP_URG_NONE || c->urg.marked || !SEQ_LT(c->urg.rcv_up, c->rcv_nxt))
		return;
	/* In order now: its place in the queue (the bytes before it). */
	off = c->rcvq.bytes - (c->rcv_nxt - c->fin_rcvd - c->urg.rcv_up);
	if (c->urg.rcv == TCP_URG_NOTYET) {
		/* The pointer came after the byte (reassembly): read it here. */
		if (!rcvq_byte_at(&c->rcvq, off, &c->urg.byte))
			return;
		c->urg.rcv = TCP_URG_VALID;
	}
	c->urg.mark = rcv_read_pos(c) + off;
	c->urg.marked = true;
	if (c->o.oobinline)
		return;
	if (!rcvq_cut_byte(c, off)) {
		c->ts->stats.urg_inline_no_mbuf++;
		return;
	}
	c->urg.pulled_bytes++;
	c->ts->stats.urg_pulled++;
}

/* The application */

ssize_t tcp_recv_urg(struct tcp_conn *c, void *buf, size_t len, bool peek)
{
	switch (urg_state(c)) {
	case TCP_URG_VALID:
		if (c->o.oobinline)
			return -EINVAL;
		if (!peek)
			c->urg.rcv = TCP_URG_READ;
		if (len == 0)
			return 0;
		*(uint8_t *)buf = c->urg.byte;
		return 1;
	case TCP_URG_NOTYET:
		if (c->o.oobinline)
			return -EINVAL;
		/* Linux's tcp_recv_urg: the pointer came, the byte not yet. */
		return c->fin_rcvd || c->dead ? 0 : -EAGAIN;
	default:
		return -EINVAL; /* none, or read already */
	}
}

bool tcp_urg_at_mark(const struct tcp_conn *c)
{
	return urg_state(c) != TCP_URG_NONE && c->urg.marked && rcv_read_pos(c) == c->urg.mark;
}

bool tcp_urg_waiting(const struct tcp_conn *c)
{
	return urg_state(c) == TCP_URG_VALID;
}

size_t tcp_urg_read_limit(const struct tcp_conn *c, size_t len)
{
	uint32_t pos;

	if (c->urg.rcv == TCP_URG_NONE || !c->urg.marked)
		return len;
	pos = rcv_read_pos(c);
	if (!SEQ_LT(pos, c->urg.mark))
		return len;
	return RTE_MIN(len, (size_t)(c->urg.mark - pos));
}
