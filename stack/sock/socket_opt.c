/* stack/sock/socket_opt.c: us_setsockopt/us_getsockopt (us_socket.h). */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "stack/sock/socket_priv.h"

static int opt_int(const void *val, socklen_t len, int *out)
{
	if (val == NULL || len < sizeof(int))
		return -EINVAL;
	memcpy(out, val, sizeof(int));
	return 0;
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

/* RFC 3493 5.3: IPV6_V6ONLY on an AF_INET6 socket, before it has a port
 * (Linux: EINVAL once bound or connecting).  An AF_INET socket has no
 * IPv6 level (ENOPROTOOPT, as Linux's ip_setsockopt). */
static int opt_set_ipv6(struct us_sock *s, int name, const void *val, socklen_t len)
{
	int v, rc;

	if (s->family != AF_INET6 || name != US_IPV6_V6ONLY)
		return -ENOPROTOOPT;
	rc = opt_int(val, len, &v);
	if (rc < 0)
		return rc;
	if (s->bound || s->state != US_SS_NEW)
		return -EINVAL;
	s->v6only = v != 0;
	return 0;
}

static int opt_set(struct us_sock *s, int level, int name, const void *val, socklen_t len)
{
	struct linger lg;
	int v = 0, rc;

	if (level == US_SOL_SOCKET && name == US_SO_LINGER) {
		if (val == NULL || len < sizeof(lg))
			return -EINVAL;
		memcpy(&lg, val, sizeof(lg));
		s->linger_rst = lg.l_onoff && lg.l_linger == 0;
		return 0;
	}
	if (level == US_IPPROTO_TCP &&
	    (name == US_TCP_FASTOPEN || name == US_TCP_FASTOPEN_CONNECT))
		return us_sock_tfo_setopt(s, name, val, len); /* socket_tfo.c */
	if (level == US_IPPROTO_IPV6)
		return opt_set_ipv6(s, name, val, len);
	rc = opt_int(val, len, &v);
	if (rc < 0)
		return rc;
	if (level == US_SOL_SOCKET) {
		switch (name) {
		case US_SO_REUSEADDR:
			s->reuseaddr = v != 0;
			return 0;
		case US_SO_KEEPALIVE:
			return opt_conn_bool(s, name, v != 0);
		case US_SO_SNDBUF:
		case US_SO_RCVBUF:
			return v > 0 ? 0 : -EINVAL; /* per engine: [tcp] sndbuf/rcvbuf */
		default:
			return -ENOPROTOOPT;
		}
	}
	if (level == US_IPPROTO_TCP && name == US_TCP_NODELAY)
		return opt_conn_bool(s, name, v != 0);
	if (level == US_IPPROTO_TCP && name == US_TCP_QUICKACK) {
		s->quickack_off = v == 0;
		return s->tc == NULL ? 0 : tcp_set_quickack(s->tc, v != 0);
	}
	return -ENOPROTOOPT;
}

int us_setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc == 0 && s->kind == US_SK_UDP && level == US_IPPROTO_TCP)
		rc = -ENOPROTOOPT;
	if (rc < 0)
		return us_sock_fail(rc);
	rc = opt_set(s, level, name, val, len);
	if (rc == -ENOTCONN)
		rc = 0; /* the connection just ended: nothing left to apply it to */
	return rc < 0 ? us_sock_fail(rc) : 0;
}

static void opt_tcp_info(const struct us_sock *s, struct us_tcp_info *ti)
{
	struct tcp_conn_info ci;

	memset(ti, 0, sizeof(*ti));
	if (s->tc == NULL)
		return; /* tcpi_state 0: CLOSED */
	tcp_conn_get_info(s->tc, &ci);
	*ti = (struct us_tcp_info){
		.tcpi_state = ci.state, .tcpi_nodelay = ci.nodelay,
		.tcpi_keepalive = ci.keepalive, .tcpi_in_recovery = ci.in_recovery,
		.tcpi_rto = ci.rto_ms * 1000u, .tcpi_snd_mss = ci.mss,
		.tcpi_rtt = ci.srtt_us, .tcpi_rttvar = ci.rttvar_us,
		.tcpi_snd_cwnd = ci.cwnd, .tcpi_snd_ssthresh = ci.ssthresh,
		.tcpi_snd_wnd = ci.snd_wnd, .tcpi_rcv_wnd = ci.rcv_wnd,
		.tcpi_retransmits = ci.retransmits, .tcpi_backoff = ci.backoff,
		.tcpi_bytes_acked = ci.bytes_acked, .tcpi_bytes_received = ci.bytes_received,
		.tcpi_delivery_rate = ci.delivery_rate,
		.tcpi_options = ci.syn_data_acked ? US_TCPI_OPT_SYN_DATA : 0,
	};
}

/* The value of an int-sized option; -ENOPROTOOPT if it is not one. */
static int opt_get_int(struct us_sock *s, int level, int name, int *v)
{
	if (level == US_SOL_SOCKET) {
		switch (name) {
		case US_SO_REUSEADDR:
			*v = s->reuseaddr;
			return 0;
		case US_SO_KEEPALIVE:
			*v = s->keepalive;
			return 0;
		case US_SO_ERROR:
			*v = s->so_error;
			s->so_error = 0;
			return 0;
		case US_SO_SNDBUF:
			*v = (int)s->tab->sndbuf;
			return 0;
		case US_SO_RCVBUF:
			*v = (int)s->tab->rcvbuf;
			return 0;
		default:
			return -ENOPROTOOPT;
		}
	}
	if (level == US_IPPROTO_IPV6) {
		if (s->family != AF_INET6 || name != US_IPV6_V6ONLY)
			return -ENOPROTOOPT;
		*v = s->v6only;
		return 0;
	}
	if (level == US_IPPROTO_TCP && name == US_TCP_NODELAY) {
		*v = s->nodelay;
		return 0;
	}
	if (level == US_IPPROTO_TCP && name == US_TCP_QUICKACK) {
		*v = !s->quickack_off;
		return 0;
	}
	if (level == US_IPPROTO_TCP &&
	    (name == US_TCP_FASTOPEN || name == US_TCP_FASTOPEN_CONNECT))
		return us_sock_tfo_getopt(s, name, v);
	return -ENOPROTOOPT;
}

int us_getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	struct us_sock *s;
	struct us_tcp_info ti;
	struct linger lg;
	int v, rc = us_sock_any(fd, &s);

	if (rc == 0 && s->kind == US_SK_UDP && level == US_IPPROTO_TCP)
		rc = -ENOPROTOOPT;
	if (rc < 0)
		return us_sock_fail(rc);
	if (val == NULL || len == NULL)
		return us_sock_fail(-EFAULT);
	if (level == US_IPPROTO_TCP && name == US_TCP_INFO) {
		opt_tcp_info(s, &ti);
		*len = *len < sizeof(ti) ? *len : (socklen_t)sizeof(ti);
		memcpy(val, &ti, *len);
		return 0;
	}
	if (level == US_SOL_SOCKET && name == US_SO_LINGER) {
		if (*len < sizeof(lg))
			return us_sock_fail(-EINVAL);
		lg = (struct linger){ .l_onoff = s->linger_rst, .l_linger = 0 };
		memcpy(val, &lg, sizeof(lg));
		*len = sizeof(lg);
		return 0;
	}
	rc = opt_get_int(s, level, name, &v);
	if (rc < 0)
		return us_sock_fail(rc);
	if (*len < sizeof(int))
		return us_sock_fail(-EINVAL);
	memcpy(val, &v, sizeof(v));
	*len = sizeof(v);
	return 0;
}
