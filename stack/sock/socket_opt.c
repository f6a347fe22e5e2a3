/* stack/sock/socket_opt.c: us_setsockopt/us_getsockopt (us_socket.h), the
 * SOL_SOCKET and IP levels; the TCP level is socket_opt_tcp.c.
 *
 * Linux is the reference for every value, range and errno (net/core/sock.c
 * sk_setsockopt/sk_getsockopt, net/ipv4/ip_sockglue.c): an unknown level
 * or name is ENOPROTOOPT, a value shorter than its type EINVAL, a NULL
 * value EFAULT; a get copies at most *len bytes of the value and sets *len
 * to what it copied.  docs/API.md has the table of every option. */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "stack/net/net.h"
#include "stack/sock/socket_priv.h"

/* Linux's SOCK_MIN_RCVBUF and SOCK_MIN_SNDBUF (x86-64): the smallest
 * doubled sizes SO_RCVBUF and SO_SNDBUF report. */
#define SOCK_MIN_RCVBUF 2304u
#define SOCK_MIN_SNDBUF 4608u

/* The largest buffer a socket may ask for (Linux's rmem_max, wmem_max):
 * what receive autotuning may reach, and the window scale is chosen for. */
static uint32_t opt_buf_max(const struct tcp_config *cfg)
{
	uint32_t m = cfg->rcvbuf_max > cfg->rcvbuf ? cfg->rcvbuf_max : cfg->rcvbuf;

	return m > cfg->sndbuf ? m : cfg->sndbuf;
}

int us_sock_opt_int(const void *val, socklen_t len, int *out)
{
	if (len < sizeof(int))
		return -EINVAL;
	if (val == NULL)
		return -EFAULT;
	memcpy(out, val, sizeof(int));
	return 0;
}

int us_sock_opts_push(struct us_sock *s)
{
	if (s->kind != US_SK_TCP)
		return 0;
	if (s->tc != NULL)
		return tcp_conn_set_opts(s->tc, &s->o);
	if (s->state == US_SS_LISTEN && (s->rp_owner == NULL || s->rp_owner == s))
		return tcp_listener_set_opts(s->tab->ts, &s->lip, s->lport, &s->o);
	return 0;
}

bool us_sock_readable_enough(const struct us_sock *s, uint32_t readable)
{
	return readable >= (s->rcvlowat ? s->rcvlowat : 1u);
}

bool us_sock_unsent_low(const struct us_sock *s, uint32_t unsent)
{
	return s->o.notsent_lowat == 0 || unsent < s->o.notsent_lowat;
}

/* Applies a boolean option to the connection when there is one; before
 * connect or on a listener it is kept and applied (or inherited) later. */
static int opt_conn_bool(struct us_sock *s, int name, bool on)
{
	if (name == US_TCP_NODELAY)
		s->nodelay = on;
	else
		s->keepalive = on;
	if (s->tc == NULL)
		return 0;
	return name == US_TCP_NODELAY ? tcp_set_nodelay(s->tc, on) : tcp_set_keepalive(s->tc, on);
}

/* SO_RCVBUF / SO_SNDBUF (Linux's __sock_set_rcvbuf): capped at the
 * largest buffer a connection may have here (Linux's rmem_max/wmem_max),
 * reported doubled with a floor; the connection gets half the reported
 * size, as Linux's window is about half its buffer. */
static uint32_t opt_buf_size(int v, uint32_t max, uint32_t floor)
{
	uint64_t u = (uint32_t)v; /* negative: huge, then capped, as Linux */

	if (u > max)
		u = max;
	u *= 2;
	return (uint32_t)(u < floor ? floor : u) / 2;
}

static int opt_set_buf(struct us_sock *s, int name, int v)
{
	const struct tcp_config *cfg = us_engine_tcp_config(s->tab->e);

	if (name == US_SO_RCVBUF) {
		s->o.rcvbuf = opt_buf_size(v, opt_buf_max(cfg), SOCK_MIN_RCVBUF);
		s->rcvbuf_set = true;
	} else {
		s->o.sndbuf = opt_buf_size(v, opt_buf_max(cfg), SOCK_MIN_SNDBUF);
		s->sndbuf_set = true;
	}
	us_sock_wake(s); /* room may have opened */
	return us_sock_opts_push(s);
}

/* SO_RCVLOWAT (Linux's tcp_set_rcvlowat): negative is INT_MAX, capped at
 * half the receive buffer's largest size, 0 is 1. */
static void opt_set_rcvlowat(struct us_sock *s, int v)
{
	const struct tcp_config *cfg = us_engine_tcp_config(s->tab->e);
	uint32_t cap = (s->rcvbuf_set ? s->o.rcvbuf * 2 : opt_buf_max(cfg)) / 2;
	uint32_t u = v < 0 ? (uint32_t)INT32_MAX : (uint32_t)v;

	if (s->kind == US_SK_TCP && u > cap)
		u = cap;
	s->rcvlowat = u ? u : 1;
	us_sock_wake(s);
}

static int opt_set_linger(struct us_sock *s, const void *val, socklen_t len)
{
	struct linger lg;

	if (len < sizeof(lg))
		return -EINVAL;
	if (val == NULL)
		return -EFAULT;
	memcpy(&lg, val, sizeof(lg));
	s->linger_on = lg.l_onoff != 0;
	s->linger_s = lg.l_linger < 0 ? 0 : lg.l_linger;
	return 0;
}

static int opt_set_socket(struct us_sock *s, int name, const void *val, socklen_t len)
{
	int v, rc;

	if (name == US_SO_LINGER)
		return opt_set_linger(s, val, len);
	rc = us_sock_opt_int(val, len, &v);
	if (rc < 0)
		return rc;
	switch (name) {
	case US_SO_REUSEADDR:
		s->reuseaddr = v != 0;
		return 0;
	case US_SO_REUSEPORT:
		s->reuseport = v != 0;
		return 0;
	case US_SO_KEEPALIVE:
		if (s->kind != US_SK_TCP) {
			s->keepalive = v != 0; /* Linux keeps the flag; nothing to probe */
			return 0;
		}
		return opt_conn_bool(s, name, v != 0);
	case US_SO_SNDBUF:
	case US_SO_RCVBUF:
		return opt_set_buf(s, name, v);
	case US_SO_RCVLOWAT:
		opt_set_rcvlowat(s, v);
		return 0;
	case US_SO_OOBINLINE:
		s->o.oobinline = v != 0;
		return us_sock_opts_push(s);
	default:
		return -ENOPROTOOPT; /* SO_TYPE, SO_ERROR, ...: get only, as Linux */
	}
}

/* IP level (Linux's do_ip_setsockopt): an int, or one byte when optlen is
 * shorter; TCP only here (UDP sends with the stack's TOS and TTL). */
static int opt_set_ip(struct us_sock *s, int name, const void *val, socklen_t len)
{
	int v = 0;
	uint8_t b;

	if (s->kind != US_SK_TCP || (name != US_IP_TOS && name != US_IP_TTL))
		return -ENOPROTOOPT;
	if (len >= sizeof(int) && us_sock_opt_int(val, len, &v) < 0)
		return -EFAULT;
	if (len >= 1 && len < sizeof(int)) {
		if (val == NULL)
			return -EFAULT;
		memcpy(&b, val, 1);
		v = b;
	}
	if (name == US_IP_TOS) {
		/* Linux's __ip_sock_set_tos: TCP keeps the ECN bits its own. */
		s->o.tos = (uint8_t)(v & ~0x3);
	} else {
		if (len < 1 || (v != -1 && (v < 1 || v > 255)))
			return -EINVAL;
		s->o.ttl = v == -1 ? 0 : (uint8_t)v;
	}
	return us_sock_opts_push(s);
}

/* RFC 3493 5.3: IPV6_V6ONLY on an AF_INET6 socket, before it has a port
 * (Linux: EINVAL once bound or connecting).  An AF_INET socket has no
 * IPv6 level (ENOPROTOOPT, as Linux's ip_setsockopt). */
static int opt_set_ipv6(struct us_sock *s, int name, const void *val, socklen_t len)
{
	int v, rc;

	if (s->family != AF_INET6 || name != US_IPV6_V6ONLY)
		return -ENOPROTOOPT;
	rc = us_sock_opt_int(val, len, &v);
	if (rc < 0)
		return rc;
	if (s->bound || s->state != US_SS_NEW)
		return -EINVAL;
	s->v6only = v != 0;
	return 0;
}

static int opt_set(struct us_sock *s, int level, int name, const void *val, socklen_t len)
{
	int v, rc;

	switch (level) {
	case US_SOL_SOCKET:
		return opt_set_socket(s, name, val, len);
	case US_IPPROTO_IP:
		return opt_set_ip(s, name, val, len);
	case US_IPPROTO_IPV6:
		return opt_set_ipv6(s, name, val, len);
	case US_IPPROTO_TCP:
		break;
	default:
		return -ENOPROTOOPT;
	}
	if (name == US_TCP_NODELAY) {
		rc = us_sock_opt_int(val, len, &v);
		return rc < 0 ? rc : opt_conn_bool(s, name, v != 0);
	}
	return us_sock_tcp_setopt(s, name, val, len); /* socket_opt_tcp.c */
}

int us_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc == 0 && s->kind == US_SK_UDP && level == US_IPPROTO_TCP)
		rc = -ENOPROTOOPT;
	if (rc < 0)
		return us_sock_fail(rc);
	if ((int)len < 0)
		return us_sock_fail(-EINVAL);
	rc = opt_set(s, level, name, val, len);
	if (rc == -ENOTCONN)
		rc = 0; /* the connection just ended: nothing left to apply it to */
	return rc < 0 ? us_sock_fail(rc) : 0;
}

/* SO_RCVBUF / SO_SNDBUF as reported: doubled when set (Linux), else the
 * connection's buffer now (the receive one autotuned) or the stack's. */
static int opt_get_buf(const struct us_sock *s, int name)
{
	struct tcp_conn_info ci;

	if (name == US_SO_RCVBUF) {
		if (s->rcvbuf_set)
			return (int)(s->o.rcvbuf * 2);
		if (s->tc != NULL) {
			tcp_conn_get_info(s->tc, &ci);
			return (int)ci.rcvbuf;
		}
		return (int)s->tab->rcvbuf;
	}
	return s->sndbuf_set ? (int)(s->o.sndbuf * 2) : (int)s->tab->sndbuf;
}

static int opt_get_socket(struct us_sock *s, int name, int *v)
{
	switch (name) {
	case US_SO_REUSEADDR:
		*v = s->reuseaddr;
		return 0;
	case US_SO_REUSEPORT:
		*v = s->reuseport;
		return 0;
	case US_SO_KEEPALIVE:
		*v = s->keepalive;
		return 0;
	case US_SO_ERROR:
		*v = s->so_error;
		s->so_error = 0;
		return 0;
	case US_SO_SNDBUF:
	case US_SO_RCVBUF:
		*v = opt_get_buf(s, name);
		return 0;
	case US_SO_RCVLOWAT:
		*v = s->rcvlowat ? (int)s->rcvlowat : 1;
		return 0;
	case US_SO_OOBINLINE:
		*v = s->o.oobinline;
		return 0;
	case US_SO_TYPE:
		*v = s->kind == US_SK_UDP ? SOCK_DGRAM : SOCK_STREAM;
		return 0;
	case US_SO_DOMAIN:
		*v = s->family;
		return 0;
	case US_SO_PROTOCOL:
		*v = s->kind == US_SK_UDP ? IPPROTO_UDP : IPPROTO_TCP;
		return 0;
	case US_SO_ACCEPTCONN:
		*v = s->state == US_SS_LISTEN;
		return 0;
	default:
		return -ENOPROTOOPT;
	}
}

/* The value of an int-sized option; -ENOPROTOOPT if it is not one. */
static int opt_get_int(struct us_sock *s, int level, int name, int *v)
{
	switch (level) {
	case US_SOL_SOCKET:
		return opt_get_socket(s, name, v);
	case US_IPPROTO_IP:
		if (s->kind != US_SK_TCP || (name != US_IP_TOS && name != US_IP_TTL))
			return -ENOPROTOOPT;
		*v = name == US_IP_TOS ? s->o.tos
		     : s->o.ttl ? s->o.ttl : us_engine_net(s->tab->e)->ip.ttl;
		return 0;
	case US_IPPROTO_IPV6:
		if (s->family != AF_INET6 || name != US_IPV6_V6ONLY)
			return -ENOPROTOOPT;
		*v = s->v6only;
		return 0;
	case US_IPPROTO_TCP:
		if (name == US_TCP_NODELAY) {
			*v = s->nodelay;
			return 0;
		}
		return -ENOPROTOOPT;
	default:
		return -ENOPROTOOPT;
	}
}

/* Copies n bytes of a value, truncated to *len, as Linux does. */
static void opt_put(void *val, socklen_t *len, const void *v, size_t n)
{
	if (*len > n)
		*len = (socklen_t)n;
	memcpy(val, v, *len);
}

int us_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct us_sock *s;
	struct linger lg;
	bool done = false;
	int v = 0, rc = us_sock_any(fd, &s);
	uint8_t b;

	if (rc == 0 && s->kind == US_SK_UDP && level == US_IPPROTO_TCP)
		rc = -ENOPROTOOPT;
	if (rc < 0)
		return us_sock_fail(rc);
	if (val == NULL || len == NULL)
		return us_sock_fail(-EFAULT);
	if ((int)*len < 0)
		return us_sock_fail(-EINVAL);
	if (level == US_SOL_SOCKET && name == US_SO_LINGER) {
		lg = (struct linger){ .l_onoff = s->linger_on, .l_linger = s->linger_s };
		opt_put(val, len, &lg, sizeof(lg));
		return 0;
	}
	rc = opt_get_int(s, level, name, &v);
	if (rc == -ENOPROTOOPT && level == US_IPPROTO_TCP)
		rc = us_sock_tcp_getopt(s, name, val, len, &v, &done); /* socket_opt_tcp.c */
	if (rc < 0)
		return us_sock_fail(rc);
	if (done)
		return 0;
	/* Linux's do_ip_getsockopt: a short buffer takes a byte value as one. */
	if (level == US_IPPROTO_IP && *len > 0 && *len < sizeof(int) && v >= 0 && v <= 255) {
		b = (uint8_t)v;
		opt_put(val, len, &b, 1);
		return 0;
	}
	opt_put(val, len, &v, sizeof(v));
	return 0;
}
