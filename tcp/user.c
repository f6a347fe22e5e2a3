/* tcp/user.c: the application's data and close calls (RFC 9293 3.10.2 SEND,
 * 3.10.3 RECEIVE, 3.10.4 CLOSE, 3.10.5 ABORT). */
#include <errno.h>
#include <string.h>

#include "tcp/tcb.h"

/* Receiver-side SWS avoidance for window updates: announce the opened
 * window only once it is at least twice what the peer still has and grew by
 * min(rcvbuf / 2, MSS) (RFC 9293 3.8.6.2.2; the doubling rule as in Linux). */
static void window_update(struct tcp_conn *c)
{
	uint32_t rcvbuf = c->rcvbuf;
	uint32_t old = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0;
	uint32_t space = c->rcvq.bytes < rcvbuf ? rcvbuf - c->rcvq.bytes : 0;
	uint32_t step = RTE_MIN(rcvbuf / 2, (uint32_t)tcp_our_mss(c->ts, tcb_is_v6(c)));

	space = RTE_MIN(space, tcp_max_rcv_wnd(c)); /* scaled when wscale is on */
	if (space >= 2 * old && space - old >= step) {
		c->ack_now = true;
		tcp_output_soon(c);
	}
}

/* For tcp_recv_take; tcp_recv keeps window_update inlined (a call per
 * keep-alive request otherwise, bench/perf.py). */
void tcp_rcv_window_update(struct tcp_conn *c)
{
	window_update(c);
}

/* Receive-buffer autotuning, "dynamic right-sizing" (Fisk and Feng; Linux's
 * tcp_rcv_space_adjust): over a measurement of at least one smoothed RTT,
 * the bytes the application read per RTT are what the connection really
 * drains; a buffer of twice that lets the sender's window double in slow
 * start without ours being the limit, so the window follows the measured
 * bandwidth-delay product.  The buffer only grows, up to
 * tcp_rcvbuf_limit(), and reserves nothing: it bounds the queued bytes.
 * The inline check in tcb.h calls this only once the application read more
 * than half the buffer since the measurement started, the least that can
 * make it grow.  An interval longer than an RTT (an application that reads
 * in bursts) counts as its average per RTT: never more than twice what was
 * read.  No RTT sample yet: no growth. */
void tcp_rcvbuf_measure(struct tcp_conn *c)
{
	uint32_t pos = c->rcv_nxt - c->rcvq.bytes; /* the read position */
	uint32_t now_us = (uint32_t)(tcp_now(c) / 1000u);
	uint32_t limit = tcp_rcvbuf_limit(&c->ts->cfg);
	uint32_t elapsed = now_us - c->rcv_space_us;
	uint64_t want;

	/* SO_RCVBUF set: the application chose the size (Linux's
	 * SOCK_RCVBUF_LOCK), no autotuning. */
	if (c->rcv_space_us != 0 && c->rcvbuf < limit && c->rtt_valid && c->o.rcvbuf == 0) {
		if (elapsed < RTE_MAX(c->srtt_us, 1u))
			return; /* less than an RTT: measure on */
		want = 2ull * (pos - c->rcv_space_seq) * c->srtt_us / elapsed;
		if (want > c->rcvbuf) {
			c->rcvbuf = (uint32_t)RTE_MIN(want, (uint64_t)limit);
			c->ts->stats.rcvbuf_grown++;
		}
	}
	c->rcv_space_seq = pos; /* the next measurement */
	c->rcv_space_us = RTE_MAX(now_us, 1u);
}

ssize_t tcp_recv(struct tcp_conn *c, void *buf, size_t len)
{
	struct tcp_mq *q = &c->rcvq;
	size_t done = 0;

	if (c->app_closed)
		return -EBADF;
	if (q->bytes == 0) {
		if (c->fin_rcvd)
			return 0;
		return c->dead ? -ENOTCONN : -EAGAIN;
	}
	if (unlikely(c->urg.rcv != TCP_URG_NONE))
		len = tcp_urg_read_limit(c, len); /* a read stops at the mark */
	while (done < len && q->head != NULL) {
		struct rte_mbuf *m = q->head;
		uint32_t n = (uint32_t)RTE_MIN(len - done, (size_t)m->data_len);

		memcpy((char *)buf + done, rte_pktmbuf_mtod(m, char *), n);
		done += n;
		q->bytes -= n;
		if (n < m->data_len) {
			m->data_off += n;
			m->data_len -= n;
			m->pkt_len = m->data_len;
			break;
		}
		q->head = m->next;
		if (q->head == NULL)
			q->tail = NULL;
		m->next = NULL;
		rte_pktmbuf_free_seg(m);
	}
	if (!c->dead && tcb_synchronized(c) && c->state != TCP_TIME_WAIT) {
		tcp_rcvbuf_autotune(c);
		tcp_enter(c->ts);
		window_update(c);
		tcp_leave(c->ts);
	}
	return (ssize_t)done;
}

size_t tcp_send_space(const struct tcp_conn *c)
{
	uint32_t sndbuf = tcp_sndbuf(c);

	if (c->dead || c->fin_queued || c->app_closed)
		return 0;
	return c->sndq.bytes < sndbuf ? sndbuf - c->sndq.bytes : 0;
}

/* Copies into the tail's free room, then into fresh mbufs; bytes taken. */
static size_t sndq_copy(struct tcp_conn *c, const char *buf, size_t len)
{
	struct rte_mbuf *m = c->sndq.tail;
	size_t done = 0;

	while (done < len) {
		uint32_t room = m ? rte_pktmbuf_tailroom(m) : 0;
		uint32_t n;

		if (room == 0) {
			m = rte_pktmbuf_alloc(c->ts->env.pool);
			if (m == NULL)
				break;
			m->data_off = 0; /* payload only: no headroom needed */
			tcp_mq_push(&c->sndq, m);
			room = rte_pktmbuf_tailroom(m);
		}
		n = (uint32_t)RTE_MIN(len - done, (size_t)room);
		memcpy(rte_pktmbuf_mtod_offset(m, char *, m->data_len), buf + done, n);
		m->data_len += n;
		m->pkt_len = m->data_len;
		c->sndq.bytes += n;
		done += n;
	}
	return done;
}

ssize_t tcp_send(struct tcp_conn *c, const void *buf, size_t len)
{
	size_t space, done;

	if (c->app_closed)
		return -EBADF;
	if (c->dead || c->state == TCP_CLOSED || c->state == TCP_LISTEN)
		return -ENOTCONN;
	if (c->fin_queued)
		return -EPIPE;
	space = tcp_send_space(c);
	if (space == 0) {
		c->want_writable = true;
		return -EAGAIN;
	}
	done = sndq_copy(c, buf, RTE_MIN(len, space));
	if (done == 0 && len > 0)
		return -ENOBUFS;
	tcp_enter(c->ts);
	tcp_output_soon(c);
	tcp_leave(c->ts);
	return (ssize_t)done;
}

/* Queues our FIN after the data (RFC 9293 3.10.4). */
static int queue_fin(struct tcp_conn *c)
{
	if (c->fin_queued)
		return 0;
	switch (c->state) {
	case TCP_SYN_SENT:
	case TCP_SYN_RECEIVED:
		break; /* sent once ESTABLISHED (tcp_handshake_done) */
	case TCP_ESTABLISHED:
		tcb_set_state(c, TCP_FIN_WAIT_1);
		break;
	case TCP_CLOSE_WAIT:
		tcb_set_state(c, TCP_LAST_ACK);
		break;
	default:
		return -ENOTCONN;
	}
	c->fin_queued = true;
	c->fin_seq = tcp_sndq_end(c);
	tcp_output_soon(c);
	return 0;
}

int tcp_shutdown_write(struct tcp_conn *c)
{
	int rc;

	if (c->app_closed)
		return -EBADF;
	if (c->dead)
		return -ENOTCONN;
	tcp_enter(c->ts);
	rc = queue_fin(c);
	tcp_leave(c->ts);
	return rc;
}

void tcb_abort(struct tcp_conn *c)
{
	if (tcb_synchronized(c) && c->state != TCP_TIME_WAIT)
		tcp_send_rst(c);
	tcb_drop(c);
}

int tcp_close(struct tcp_conn *c)
{
	if (c->app_closed)
		return -EBADF;
	c->app_closed = true;
	c->ev = 0;
	if (c->dead)
		return 0; /* reset or timed out; the TCB goes with the reap */
	tcp_enter(c->ts);
	if (c->rcvq.bytes > 0) {
		/* RFC 2525 2.17: unread data is lost, so say so with an RST. */
		tcb_abort(c);
	} else if (c->state == TCP_SYN_SENT) {
		/* RFC 9293 3.10.4: delete the TCB.  A SYN-ACK still to come is
		 * answered with an RST by the closed-port path, as long as the
		 * process runs (us_fini's drain waits for it). */
		c->ts->stats.closed_in_syn_sent++;
		if (c->snd_max != c->iss)
			c->ts->syn_sent_closed_ns = tcp_now(c);
		tcb_drop(c);
	} else if (c->state == TCP_FIN_WAIT_2) {
		tcp_fin_wait2_orphan(c, true); /* TCP_LINGER2 */
	} else {
		queue_fin(c);
	}
	tcp_leave(c->ts);
	return 0;
}

int tcp_abort(struct tcp_conn *c)
{
	if (c->app_closed)
		return -EBADF;
	c->app_closed = true;
	c->ev = 0;
	if (c->dead)
		return 0;
	tcp_enter(c->ts);
	tcb_abort(c);
	tcp_leave(c->ts);
	return 0;
}
