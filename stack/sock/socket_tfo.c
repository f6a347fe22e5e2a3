/* stack/sock/socket_tfo.c: TCP Fast Open (RFC 7413) on the POSIX-shaped socket
 * calls (us_socket.h): US_TCP_FASTOPEN on listeners, us_sendto with
 * US_MSG_FASTOPEN and US_TCP_FASTOPEN_CONNECT on clients.  The protocol
 * itself lives in tcp/fastopen_tcb.c; this file only maps Linux's socket semantics
 * (net/ipv4/tcp.c tcp_sendmsg_fastopen, tcp_fastopen_defer_connect) onto
 * tcp_set_fastopen() and tcp_connect_data().
 *
 * Linux's answers, which we keep: a client with a cookie cached for the
 * server sends data in the SYN and sendto returns the bytes taken; without
 * one (or with the server marked TFO-unfriendly, RFC 7413 4.1.3) the SYN
 * asks for a cookie, nothing is queued and a non-blocking sendto fails with
 * EINPROGRESS: the application sends once the socket is writable.
 * US_TCP_FASTOPEN_CONNECT with a cookie makes connect return 0 at once and
 * the first send go in the SYN; without one, connect is an ordinary
 * non-blocking connect (EINPROGRESS) whose SYN asks for a cookie. */
#include <errno.h>
#include <string.h>

#include "stack/sock/socket_priv.h"

/* RFC 7413 5.1: qlen bounds PendingFastOpenRequests; 0 turns it off.  As
 * Linux, only before connect (kept until listen) or on a listener. */
static int tfo_set_qlen(struct us_sock *s, int v)
{
	int rc;

	if (v < 0 || (s->state != US_SS_NEW && s->state != US_SS_LISTEN))
		return -EINVAL;
	if (s->state == US_SS_LISTEN) {
		rc = tcp_set_fastopen(s->tab->ts, s->lport, (uint32_t)v);
		if (rc < 0)
			return rc;
	}
	s->tfo_qlen = (uint32_t)v;
	s->tfo_qlen_set = true;
	return 0;
}

int us_sock_tfo_setopt(struct us_sock *s, int name, const void *val, socklen_t len)
{
	int v, rc = us_sock_opt_int(val, len, &v);

	if (rc < 0)
		return rc;
	if (name == US_TCP_FASTOPEN)
		return tfo_set_qlen(s, v);
	/* US_TCP_FASTOPEN_CONNECT: 0 or 1, on a fresh socket (Linux: EINVAL
	 * otherwise). */
	if (v < 0 || v > 1 || s->state != US_SS_NEW)
		return -EINVAL;
	s->tfo_connect = v != 0;
	return 0;
}

int us_sock_tfo_getopt(struct us_sock *s, int name, int *v)
{
	*v = name == US_TCP_FASTOPEN ? (int)s->tfo_qlen : s->tfo_connect;
	return 0;
}

int us_sock_tfo_listen(struct us_sock *s)
{
	if (!s->tfo_qlen_set)
		return 0; /* the config's [tcp] fastopen decides */
	return tcp_set_fastopen(s->tab->ts, s->lport, s->tfo_qlen);
}

/* The connection exists (SYN-SENT): the socket follows it. */
static void tfo_connecting(struct us_sock *s)
{
	s->state = US_SS_CONNECTING;
	s->tfo_defer = false;
	us_sock_tcp_names(s);
	if (s->nodelay)
		tcp_set_nodelay(s->tc, true);
	if (s->keepalive)
		tcp_set_keepalive(s->tc, true);
	if (s->quickack_off)
		tcp_set_quickack(s->tc, false);
}

/* Profile linux: sendto(MSG_FASTOPEN) takes only what its SYN carries,
 * as Linux's on a non-blocking socket (tcp_sendmsg_fastopen returns the
 * bytes copied into the SYN); rfc queues all the send buffer takes, the
 * rest following the handshake. */
static unsigned tfo_open_flags(const struct us_sock *s)
{
	const struct tcp_config *cfg = us_engine_tcp_config(s->tab->e);

	return TCP_CONNECT_FASTOPEN |
	       (cfg->profile == TCP_PROFILE_LINUX ? TCP_CONNECT_SYN_ONLY : 0u);
}

/* tcp_connect_data with the socket's callbacks: bytes queued or -errno. */
static ssize_t tfo_open(struct us_sock *s, const struct us_in6 *ip, uint16_t port,
			const void *buf, size_t len)
{
	ssize_t n = tcp_connect_data(s->tab->ts, ip, port, buf, len, tfo_open_flags(s),
				     &s->o, &us_sock_callbacks, s, &s->tc);

	if (n < 0)
		return n == -ENOBUFS ? -EAGAIN : n;
	tfo_connecting(s);
	return n;
}

/* A destination for an active open: 0 or -errno, as us_connect checks. */
static int tfo_dest(struct us_sock *s, const struct sockaddr *addr, socklen_t alen,
		    struct us_in6 *ip, uint16_t *port)
{
	int rc = us_sock_addr_peer(s, addr, alen, US_SA_CONNECT, ip, port);

	if (rc < 0)
		return rc;
	if (*port == 0 || us_sock_addr_is_any(ip))
		return -EADDRNOTAVAIL;
	if (s->bound && s->lport != 0)
		return -EOPNOTSUPP; /* tcp/ picks the source port */
	return 0;
}

ssize_t us_sock_tfo_sendto(struct us_sock *s, const void *buf, size_t len,
			   const struct sockaddr *addr, socklen_t alen)
{
	struct us_in6 ip;
	uint16_t port;
	ssize_t n;
	int rc;

	if (s->tfo_defer)
		return us_sock_tfo_start(s, buf, len); /* connect already named the peer */
	/* Linux (__inet_stream_connect from tcp_sendmsg_fastopen): a
	 * listener or a connection already under way is "connected". */
	if (s->state == US_SS_CONNECTING)
		return -EALREADY;
	if (s->state != US_SS_NEW)
		return -EISCONN;
	rc = tfo_dest(s, addr, alen, &ip, &port);
	if (rc < 0)
		return rc;
	if (buf == NULL && len > 0)
		return -EFAULT;
	if (!tcp_fastopen_cookie_ready(s->tab->ts, &ip)) {
		/* RFC 7413 4.1.1: the SYN asks for a cookie; the data is not
		 * taken (Linux: EINPROGRESS, send it once writable). */
		n = tfo_open(s, &ip, port, NULL, 0);
		return n < 0 ? n : -EINPROGRESS;
	}
	n = tfo_open(s, &ip, port, buf, len);
	return n == 0 ? -EINPROGRESS : n;
}

int us_sock_tfo_connect(struct us_sock *s, const struct us_in6 *ip, uint16_t port)
{
	struct us_in6 src;
	ssize_t n;

	if (s->bound && s->lport != 0)
		return -EOPNOTSUPP;
	if (tcp_fastopen_cookie_ready(s->tab->ts, ip) &&
	    tcp_connect_src(s->tab->ts, ip, &src) == 0) {
		/* Linux tcp_fastopen_defer_connect: nothing goes out until
		 * the first send, which rides in the SYN.  The socket is
		 * named by the source that SYN will carry, of ip's family
		 * (the port comes with the connection). */
		s->state = US_SS_CONNECTING;
		s->tfo_defer = true;
		s->rip = *ip;
		s->rport = port;
		s->lip = src;
		us_sock_wake(s);
		return 0;
	}
	n = tfo_open(s, ip, port, NULL, 0);
	return n < 0 ? (int)n : -EINPROGRESS;
}

ssize_t us_sock_tfo_start(struct us_sock *s, const void *buf, size_t len)
{
	if (buf == NULL && len > 0)
		return -EFAULT;
	/* The cookie may have gone since connect (negative mark): the data is
	 * queued anyway and follows the handshake, so nothing is lost. */
	return tfo_open(s, &s->rip, s->rport, buf, len);
}
