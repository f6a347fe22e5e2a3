/* tcp/sock.c: small read-only views and hand-overs for the socket layer
 * (stack/socket.c), which needs to know what a POSIX poll() would say about a
 * connection and to take the receive queue without copying. */
#include <errno.h>

#include "tcp/tcb.h"

void tcp_conn_local(const struct tcp_conn *c, uint32_t *ip, uint16_t *port)
{
	*ip = c->local_ip;
	*port = c->local_port;
}

void tcp_conn_status(const struct tcp_conn *c, struct tcp_conn_status *st)
{
	*st = (struct tcp_conn_status){
		.readable = c->app_closed ? 0 : c->rcvq.bytes,
		.send_space = tcp_send_space(c),
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
 * window opens as after a tcp_recv of the same bytes. */
struct rte_mbuf *tcp_recv_take(struct tcp_conn *c, uint32_t *bytes)
{
	struct rte_mbuf *head = c->rcvq.head, *m;
	uint16_t nseg = 0;

	*bytes = c->rcvq.bytes;
	if (c->app_closed || head == NULL) {
		*bytes = 0;
		return NULL;
	}
	for (m = head; m != NULL; m = m->next)
		nseg++;
	head->nb_segs = nseg;
	head->pkt_len = c->rcvq.bytes;
	c->rcvq = (struct tcp_mq){ 0 };
	if (!c->dead && tcb_synchronized(c) && c->state != TCP_TIME_WAIT) {
		/* Same rule as tcp_recv: announce the opened window. */
		tcp_enter(c->ts);
		c->ack_now = true;
		tcp_output(c);
		tcp_leave(c->ts);
	}
	return head;
}
