/* tcp/socket_calls.c: calls only the public API's layer (stack/sock) makes:
 * small read-only views for socket.c, which needs to know what a POSIX
 * poll() would say about a connection, and the zero-copy hand-overs of
 * whole mbuf chains that its sockets (socket_zc.c) and the callback API
 * (conn.c) share. */
#include <errno.h>
#include <string.h>

#include "tcp/tcb.h"

void tcp_conn_local(const struct tcp_conn *c, struct us_in6 *ip, uint16_t *port)
{
	*ip = c->local_ip;
	*port = c->local_port;
}

void tcp_conn_status(const struct tcp_conn *c, struct tcp_conn_status *st)
{
	*st = (struct tcp_conn_status){
		.readable = c->app_closed ? 0 : c->rcvq.bytes,
		.send_space = tcp_send_space(c),
		.unsent = tcp_sndq_unsent(c),
		.unacked = SEQ_GT(tcp_sndq_end(c), c->snd_una) ? tcp_sndq_end(c) - c->snd_una : 0,
		.fin_rcvd = c->fin_rcvd,
		.fin_queued = c->fin_queued,
		.established = tcb_synchronized(c) && c->state != TCP_SYN_RECEIVED,
		.dead = c->dead,
	};
}

/* The caller will retry a send once room opens: on_writable fires when half
 * the send buffer is free again, as after a send that returned -EAGAIN. */
void tcp_conn_want_writable(struct tcp_conn *c)
{
	c->want_writable = true;
}

/* Zero copy: the whole receive queue as one chain (NULL when empty).  The
 * window opens as after a tcp_recv of the same bytes, by the same rule: an
 * ACK for every take would add a pure ACK per response on a keep-alive
 * connection, where the next request carries it. */
struct rte_mbuf *tcp_recv_take(struct tcp_conn *c, uint32_t *bytes)
{
	struct rte_mbuf *head = c->rcvq.head, *m, *last = NULL;
	uint32_t nseg = 0, len = 0;

	*bytes = 0;
	if (c->app_closed || head == NULL)
		return NULL;
	/* nb_segs is 16 bits: a queue of tiny segments goes in several takes. */
	for (m = head; m != NULL && nseg < UINT16_MAX; m = m->next) {
		nseg++;
		len += m->data_len;
		last = m;
	}
	c->rcvq.head = last->next;
	if (c->rcvq.head == NULL)
		c->rcvq.tail = NULL;
	c->rcvq.bytes -= len;
	last->next = NULL;
	head->nb_segs = (uint16_t)nseg;
	head->pkt_len = len;
	*bytes = len;
	if (!c->dead && tcb_synchronized(c) && c->state != TCP_TIME_WAIT) {
		tcp_rcvbuf_autotune(c);
		tcp_enter(c->ts);
		tcp_rcv_window_update(c);
		tcp_leave(c->ts);
	}
	return head;
}

ssize_t tcp_recv_chain(struct tcp_conn *c, struct rte_mbuf **chain)
{
	uint32_t n;

	*chain = tcp_recv_take(c, &n);
	if (*chain != NULL)
		return (ssize_t)n;
	if (c->app_closed)
		return -EBADF;
	if (c->fin_rcvd)
		return 0;
	return c->dead ? -ENOTCONN : -EAGAIN;
}

/* Zero copy send: the chain's segments join the send queue as they are and
 * are freed once acknowledged.  Each must be a direct mbuf nobody else
 * references, since later copied-in data may fill its tail room. */
ssize_t tcp_send_chain(struct tcp_conn *c, struct rte_mbuf *m)
{
	struct rte_mbuf *s, *next;
	uint32_t len = 0;

	if (c->app_closed)
		return -EBADF;
	if (c->dead || c->state == TCP_CLOSED || c->state == TCP_LISTEN)
		return -ENOTCONN;
	if (c->fin_queued)
		return -EPIPE;
	for (s = m; s != NULL; s = s->next) {
		if (!RTE_MBUF_DIRECT(s) || rte_mbuf_refcnt_read(s) != 1)
			return -EINVAL;
		len += s->data_len;
	}
	if (len > tcp_sndbuf(c))
		return -EMSGSIZE;
	if (len > tcp_send_space(c)) {
		c->want_writable = true;
		return -EAGAIN;
	}
	for (s = m; s != NULL; s = next) {
		next = s->next;
		s->next = NULL;
		s->nb_segs = 1;
		s->pkt_len = s->data_len;
		if (s->data_len == 0)
			rte_pktmbuf_free_seg(s);
		else
			tcp_mq_push(&c->sndq, s);
	}
	tcp_enter(c->ts);
	tcp_output_soon(c);
	tcp_leave(c->ts);
	return (ssize_t)len;
}

/* MSG_PEEK: copies up to len bytes from the front of the receive queue,
 * leaving them queued; 0 at end of stream, -EAGAIN when nothing is there.
 * Like a read it stops at the urgent mark. */
ssize_t tcp_recv_peek(const struct tcp_conn *c, void *buf, size_t len)
{
	const struct rte_mbuf *m;
	size_t done = 0;

	if (c->app_closed)
		return -EBADF;
	if (c->rcvq.bytes == 0)
		return c->fin_rcvd ? 0 : c->dead ? -ENOTCONN : -EAGAIN;
	if (unlikely(c->urg.rcv != TCP_URG_NONE))
		len = tcp_urg_read_limit(c, len);
	for (m = c->rcvq.head; m != NULL && done < len; m = m->next) {
		size_t n = RTE_MIN(len - done, (size_t)m->data_len);

		memcpy((char *)buf + done, rte_pktmbuf_mtod(m, const char *), n);
		done += n;
	}
	return (ssize_t)done;
}
