/* stack/sock/socket_zc.c: zero-copy receive and send of mbuf chains
 * (us_socket.h, "Zero copy").  Received payload already sits in mbufs on
 * the connection's receive queue (tcp/ never copies it), so a receive hands
 * that chain over; a send puts the caller's mbufs on the send queue, where
 * transmitted segments reference them (indirect mbufs) until acknowledged. */
#include <errno.h>

#include <rte_mbuf.h>

#include "stack/sock/socket_priv.h"

struct rte_mbuf *us_mbuf_alloc(int fd)
{
	struct us_sock *s;
	struct rte_mbuf *m;
	int rc = us_sock_any(fd, &s);

	if (rc == 0 && s->kind == US_SK_UDP)
		rc = -EOPNOTSUPP; /* TCP only */

	if (rc < 0) {
		errno = -rc;
		return NULL;
	}
	m = rte_pktmbuf_alloc(us_engine_pool(s->tab->e));
	if (m == NULL)
		errno = ENOBUFS;
	return m;
}

void us_mbuf_free(struct rte_mbuf *m)
{
	rte_pktmbuf_free(m);
}

/* The chain kept after both FINs, minus what us_recv already read. */
static ssize_t zc_take_rest(struct us_sock *s, struct rte_mbuf **chain)
{
	struct rte_mbuf *m = s->rest;

	if (s->rest_off > 0) {
		m->data_off += (uint16_t)s->rest_off;
		m->data_len -= (uint16_t)s->rest_off;
		m->pkt_len -= s->rest_off;
	}
	s->rest = NULL;
	s->rest_off = 0;
	*chain = m;
	return (ssize_t)m->pkt_len;
}

/* The checks both zero-copy calls start with: a TCP socket (UDP has no
 * zero-copy path), a chain pointer, known flags, and a connection begun. */
static int zc_tcp_sock(int fd, const void *chain, int flags, struct us_sock **s)
{
	int rc = us_sock_any(fd, s);

	if (rc < 0)
		return rc;
	if ((*s)->kind == US_SK_UDP)
		return -EOPNOTSUPP;
	if (chain == NULL)
		return -EFAULT;
	if (flags & ~(US_MSG_DONTWAIT | US_MSG_NOSIGNAL))
		return -EOPNOTSUPP;
	if ((*s)->state == US_SS_NEW || (*s)->state == US_SS_LISTEN)
		return -ENOTCONN;
	return 0;
}

ssize_t us_recv_mbuf(int fd, struct rte_mbuf **chain, int flags)
{
	struct us_sock *s;
	ssize_t n;
	int rc;

	if (chain != NULL)
		*chain = NULL;
	if ((rc = zc_tcp_sock(fd, chain, flags, &s)) < 0)
		return us_sock_fail(rc);
	if (s->state == US_SS_CONNECTING)
		return us_sock_fail(-EAGAIN);
	if (s->rest != NULL && !s->shut_rd)
		return zc_take_rest(s, chain);
	if (s->so_error) {
		rc = s->so_error;
		s->so_error = 0;
		return us_sock_fail(-rc);
	}
	if (s->shut_rd || s->state == US_SS_ENDED)
		return 0;
	n = tcp_recv_chain(s->tc, chain);
	if (n == -ENOTCONN)
		return 0; /* as us_recv: the error was reported once, then end of stream */
	return n < 0 ? us_sock_fail((int)n) : n;
}

ssize_t us_send_mbuf(int fd, struct rte_mbuf *chain, int flags)
{
	struct us_sock *s;
	ssize_t n;
	int rc;

	if ((rc = zc_tcp_sock(fd, chain, flags, &s)) < 0)
		return us_sock_fail(rc);
	if (s->tfo_defer && (rc = (int)us_sock_tfo_start(s, NULL, 0)) < 0)
		return us_sock_fail(rc); /* a deferred connect opens now, chain after */
	if (s->state == US_SS_CONNECTING)
		return us_sock_fail(-EAGAIN);
	if (s->so_error) {
		rc = s->so_error;
		s->so_error = 0;
		return us_sock_fail(-rc);
	}
	if (s->shut_wr || s->state == US_SS_ENDED)
		return us_sock_fail(-EPIPE);
	n = tcp_send_chain(s->tc, chain);
	if (n < 0)
		return us_sock_fail(n == -ENOTCONN ? -EPIPE : (int)n);
	return n;
}
