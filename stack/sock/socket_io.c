/* stack/sock/socket_io.c: data, shutdown, close and options of the POSIX-shaped
 * sockets (us_socket.h).  Errors follow Linux: a pending error (reset,
 * refused, timed out) is reported once by the next call that looks, then
 * sending fails with EPIPE and receiving returns 0 (end of stream). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stack/sock/socket_priv.h"

#define SOCK_SEND_FLAGS (US_MSG_DONTWAIT | US_MSG_NOSIGNAL | US_MSG_MORE | US_MSG_OOB)
/* MSG_WAITALL on a socket that never blocks returns what is there, as on
 * a Linux O_NONBLOCK socket. */
#define SOCK_RECV_FLAGS (US_MSG_DONTWAIT | US_MSG_NOSIGNAL | US_MSG_PEEK | US_MSG_WAITALL | \
			 US_MSG_TRUNC | US_MSG_OOB)

static int sock_take_error(struct us_sock *s)
{
	int err = s->so_error;

	s->so_error = 0;
	return -err;
}

static bool sock_unsent_low(const struct us_sock *s)
{
	struct tcp_conn_status st;

	tcp_conn_status(s->tc, &st);
	return us_sock_unsent_low(s, st.unsent);
}

ssize_t us_send(int fd, const void *buf, size_t len, int flags)
{
	struct us_sock *s;
	ssize_t n;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (flags & US_MSG_FASTOPEN)
		return us_sendto(fd, buf, len, flags, NULL, 0); /* socket_tfo.c */
	if (flags & ~SOCK_SEND_FLAGS)
		return us_sock_fail(-EOPNOTSUPP);
	if (s->kind == US_SK_UDP) {
		if (flags & (US_MSG_MORE | US_MSG_OOB))
			return us_sock_fail(-EOPNOTSUPP); /* no corked datagrams, no urgent data */
		n = us_udp_sendto(s, buf, len, NULL, 0);
		return n < 0 ? us_sock_fail((int)n) : n;
	}
	if (buf == NULL && len > 0)
		return us_sock_fail(-EFAULT);
	switch (s->state) {
	case US_SS_NEW:
	case US_SS_LISTEN:
		return us_sock_fail(-ENOTCONN);
	case US_SS_CONNECTING:
		if (s->tfo_defer) { /* US_TCP_FASTOPEN_CONNECT: this data rides in the SYN */
			n = us_sock_tfo_start(s, buf, len);
			return n < 0 ? us_sock_fail((int)n) : n;
		}
		return us_sock_fail(-EAGAIN);
	default:
		break;
	}
	if (s->so_error)
		return us_sock_fail(sock_take_error(s));
	if (s->shut_wr || s->state == US_SS_ENDED)
		return us_sock_fail(-EPIPE);
	if (s->o.notsent_lowat != 0 && !sock_unsent_low(s)) {
		tcp_conn_want_writable(s->tc);
		return us_sock_fail(-EAGAIN); /* Linux's tcp_stream_memory_free */
	}
	tcp_send_more(s->tc, (flags & US_MSG_MORE) != 0);
	n = (flags & US_MSG_OOB) ? tcp_send_oob(s->tc, buf, len) : tcp_send(s->tc, buf, len);
	if (n < 0)
		return us_sock_fail(n == -ENOTCONN ? -EPIPE : (int)n);
	/* A short write leaves no room: ask tcp/ to say when room opens, as a
	 * send that failed with EAGAIN would (edge-triggered EPOLLOUT). */
	if ((size_t)n < len || tcp_send_space(s->tc) == 0)
		tcp_conn_want_writable(s->tc);
	return n;
}

/* MSG_OOB (Linux's tcp_recv_urg): the urgent byte, before any pending
 * error is looked at; once the connection ended there is none. */
static ssize_t sock_recv_oob(struct us_sock *s, void *buf, size_t len, int flags)
{
	ssize_t n;

	if (s->tc == NULL)
		return us_sock_fail(-EINVAL);
	n = tcp_recv_urg(s->tc, buf, len, (flags & US_MSG_PEEK) != 0);
	return n < 0 ? us_sock_fail((int)n) : n;
}

/* Copies the data kept after both FINs without consuming it (MSG_PEEK). */
static ssize_t sock_peek_rest(const struct us_sock *s, void *buf, size_t len)
{
	uint32_t avail = s->rest->pkt_len - s->rest_off;
	const void *p;

	len = len < avail ? len : avail;
	p = rte_pktmbuf_read(s->rest, s->rest_off, (uint32_t)len, buf);
	if (p != buf && len > 0)
		memcpy(buf, p, len);
	return (ssize_t)len;
}

/* Reads the data kept after both FINs (us_sock_keep_rest). */
static ssize_t sock_read_rest(struct us_sock *s, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len && s->rest != NULL) {
		struct rte_mbuf *m = s->rest;
		uint32_t avail = m->data_len - s->rest_off;
		uint32_t n = (uint32_t)(len - done < avail ? len - done : avail);

		memcpy((char *)buf + done, rte_pktmbuf_mtod_offset(m, char *, s->rest_off), n);
		done += n;
		s->rest_off += n;
		if (s->rest_off < m->data_len)
			break;
		s->rest = m->next;
		if (s->rest != NULL) {
			s->rest->nb_segs = (uint16_t)(m->nb_segs - 1);
			s->rest->pkt_len = m->pkt_len - m->data_len;
		}
		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
		s->rest_off = 0;
	}
	return (ssize_t)done;
}

/* MSG_TRUNC on TCP (Linux's tcp_recvmsg): up to len bytes taken off the
 * stream and dropped, not copied; the count. */
static ssize_t sock_discard(struct tcp_conn *tc, size_t len)
{
	char scratch[2048];
	size_t done = 0;
	ssize_t n = 0;

	while (done < len) {
		size_t want = len - done < sizeof(scratch) ? len - done : sizeof(scratch);

		n = tcp_recv(tc, scratch, want);
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	return done > 0 ? (ssize_t)done : n;
}

ssize_t us_recv(int fd, void *buf, size_t len, int flags)
{
	struct us_sock *s;
	ssize_t n;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (flags & ~SOCK_RECV_FLAGS)
		return us_sock_fail(-EOPNOTSUPP);
	if (s->kind == US_SK_UDP)
		return us_recvfrom(fd, buf, len, flags, NULL, NULL);
	if (buf == NULL && len > 0 && !(flags & US_MSG_TRUNC))
		return us_sock_fail(-EFAULT);
	switch (s->state) {
	case US_SS_NEW:
	case US_SS_LISTEN:
		return us_sock_fail(-ENOTCONN);
	case US_SS_CONNECTING:
		return us_sock_fail(-EAGAIN);
	default:
		break;
	}
	if (flags & US_MSG_OOB)
		return sock_recv_oob(s, buf, len, flags);
	if (s->rest != NULL && !s->shut_rd && buf == NULL && len > 0)
		return us_sock_fail(-EFAULT);
	if (s->rest != NULL && !s->shut_rd)
		return (flags & US_MSG_PEEK) ? sock_peek_rest(s, buf, len)
					     : sock_read_rest(s, buf, len);
	if (s->so_error)
		return us_sock_fail(sock_take_error(s));
	if (s->shut_rd || s->state == US_SS_ENDED || len == 0)
		return 0;
	if ((flags & (US_MSG_TRUNC | US_MSG_PEEK)) == US_MSG_TRUNC)
		n = sock_discard(s->tc, len);
	else if (flags & US_MSG_PEEK)
		n = tcp_recv_peek(s->tc, buf, len);
	else
		n = tcp_recv(s->tc, buf, len);
	if (n == -ENOTCONN)
		return 0;
	return n < 0 ? us_sock_fail((int)n) : n;
}

ssize_t us_sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *addr,
		  socklen_t alen)
{
	struct us_sock *s;
	struct us_in6 ip;
	uint16_t port = 0;
	ssize_t n;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (s->kind == US_SK_UDP) {
		if (flags & (~SOCK_SEND_FLAGS | US_MSG_MORE))
			return us_sock_fail(-EOPNOTSUPP); /* no corked datagrams */
		if (addr != NULL &&
		    (rc = us_sock_addr_peer(s, addr, alen, US_SA_SENDTO, &ip, &port)) < 0)
			return us_sock_fail(rc);
		n = us_udp_sendto(s, buf, len, addr != NULL ? &ip : NULL, port);
		return n < 0 ? us_sock_fail((int)n) : n;
	}
	if (flags & US_MSG_FASTOPEN) {
		if (flags & ~(SOCK_SEND_FLAGS | US_MSG_FASTOPEN))
			return us_sock_fail(-EOPNOTSUPP);
		n = us_sock_tfo_sendto(s, buf, len, addr, alen);
		return n < 0 ? us_sock_fail((int)n) : n;
	}
	if (s->state == US_SS_NEW && addr != NULL)
		return us_sock_fail(-ENOTCONN);
	return us_send(fd, buf, len, flags);
}

ssize_t us_recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr,
		    socklen_t *alen)
{
	struct us_sock *s;
	struct us_in6 ip;
	uint16_t port;
	ssize_t n;

	if (us_sock_lookup(fd, &s) == 0 && s->kind == US_SK_UDP) {
		if (flags & ~SOCK_RECV_FLAGS)
			return us_sock_fail(-EOPNOTSUPP);
		n = us_udp_recvfrom(s, buf, len, &ip, &port, (flags & US_MSG_PEEK) != 0,
				    (flags & US_MSG_TRUNC) != 0);
		if (n < 0)
			return us_sock_fail((int)n);
		us_sock_addr_put(s, &ip, port, addr, alen);
		return n;
	}
	n = us_recv(fd, buf, len, flags);
	if (n >= 0 && addr != NULL && alen != NULL && us_getpeername(fd, addr, alen) < 0)
		*alen = 0;
	return n;
}

/* FIONREAD/SIOCINQ, SIOCOUTQ, SIOCOUTQNSD, SIOCATMARK on TCP (Linux's tcp_ioctl):
 * EINVAL on a listener, 0 before the handshake is done. */
static int sock_tcp_ioctl(struct us_sock *s, unsigned long request, int *arg)
{
	struct tcp_conn_status st = { 0 };

	if (s->state == US_SS_LISTEN)
		return -EINVAL;
	if (s->tc != NULL)
		tcp_conn_status(s->tc, &st);
	if (!st.established) {
		st = (struct tcp_conn_status){ 0 };
		if (s->tc == NULL && s->rest != NULL)
			st.readable = s->rest->pkt_len - s->rest_off;
	} else if (s->rest != NULL) {
		st.readable += s->rest->pkt_len - s->rest_off;
	}
	if (request == US_SIOCATMARK)
		*arg = s->tc != NULL && tcp_urg_at_mark(s->tc);
	else if (request == US_FIONREAD)
		*arg = (int)st.readable;
	else
		*arg = (int)(request == US_SIOCOUTQ ? st.unacked : st.unsent);
	return 0;
}

int us_ioctl(int fd, unsigned long request, int *arg)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (request != US_FIONREAD && request != US_SIOCOUTQ && request != US_SIOCOUTQNSD &&
	    request != US_SIOCATMARK)
		return us_sock_fail(-ENOTTY);
	if (arg == NULL)
		return us_sock_fail(-EFAULT);
	if (s->kind == US_SK_UDP) {
		/* Linux's udp_ioctl: the next datagram's length; nothing waits
		 * to be sent; no SIOCOUTQNSD. */
		if (request == US_SIOCOUTQNSD || request == US_SIOCATMARK)
			return us_sock_fail(-ENOTTY);
		*arg = request == US_FIONREAD ? (int)us_udp_next_len(s) : 0;
		return 0;
	}
	rc = sock_tcp_ioctl(s, request, arg);
	return rc < 0 ? us_sock_fail(rc) : 0;
}

int us_shutdown(int fd, int how)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc == 0 && s->kind == US_SK_UDP)
		rc = -EOPNOTSUPP;
	if (rc < 0)
		return us_sock_fail(rc);
	if (how != US_SHUT_RD && how != US_SHUT_WR && how != US_SHUT_RDWR)
		return us_sock_fail(-EINVAL);
	if (s->state != US_SS_CONNECTED && s->state != US_SS_CONNECTING)
		return us_sock_fail(-ENOTCONN);
	if (s->tfo_defer && (rc = (int)us_sock_tfo_start(s, NULL, 0)) < 0)
		return us_sock_fail(rc); /* a deferred connect opens now */
	if (how != US_SHUT_WR)
		s->shut_rd = true;
	if (how != US_SHUT_RD && !s->shut_wr) {
		s->shut_wr = true;
		rc = tcp_shutdown_write(s->tc);
		if (rc < 0 && rc != -ENOTCONN)
			return us_sock_fail(rc);
		us_sock_keep_rest(s);
	}
	us_sock_wake(s);
	return 0;
}

/* Resets a listener's connections that were never accepted. */
static void sock_close_listener(struct us_sock *l)
{
	struct us_sock *s;

	if (!us_sock_reuseport_leave(l)) {
		tcp_unlisten_addr(l->tab->ts, &l->lip, l->lport);
		us_engine_unlisten_rule(l->tab->e, l->lport);
	}
	while ((s = STAILQ_FIRST(&l->acceptq)) != NULL) {
		STAILQ_REMOVE_HEAD(&l->acceptq, accept_link);
		if (s->tc != NULL)
			tcp_abort(s->tc);
		l->tab->stats.sock_drop_listener_closed++;
		us_sock_release(s);
	}
	l->nacceptq = 0;
}

int us_close(int fd)
{
	struct us_sock *s;
	int rc = us_sock_lookup(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (s->kind == US_SK_EPOLL) {
		us_epoll_close(s);
		us_sock_release(s);
		return 0;
	}
	us_sock_unwatch(s);
	if (s->state == US_SS_LISTEN)
		sock_close_listener(s);
	else if (s->tc != NULL && s->linger_on && s->linger_s == 0)
		tcp_abort(s->tc); /* SO_LINGER {1, 0}: RST, like Linux */
	else if (s->tc != NULL)
		tcp_close(s->tc);
	us_sock_release(s);
	return 0;
}
