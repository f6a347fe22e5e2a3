/* stack/sock/socket_opt_tcp.c: the IPPROTO_TCP level of us_setsockopt and
 * us_getsockopt, with Linux's ranges, units and errnos (net/ipv4/tcp.c
 * do_tcp_setsockopt, do_tcp_getsockopt).  A setting made before connect or
 * listen is kept in s->o and given to the connection (tcp_connect_opts) or
 * the listener, whose connections inherit it from their SYN on. */
#include <errno.h>
#include <string.h>
#include <strings.h>

#include "stack/sock/socket_priv.h"
#include "tcp/fastopen.h"

/* Linux's limits (include/net/tcp.h). */
#define TCP_MIN_MSS 88
#define TCP_MAX_WINDOW 65535
#define TCP_MAX_KEEPIDLE 32767
#define TCP_MAX_KEEPINTVL 32767
#define TCP_MAX_KEEPCNT 127
#define TCP_MAX_SYNCNT 127
#define TCP_FIN_TIMEOUT_MAX_S 120
#define TCP_MSS_DEFAULT 536      /* what TCP_MAXSEG reports before a connection */
#define TCP_CA_NAME_MAX 16

/* TCP_CONGESTION names: Linux's ("reno" is our NewReno), and ours. */
static int cc_by_name(const char *name, enum tcp_cc_alg *alg)
{
	if (strcmp(name, "reno") == 0) {
		*alg = TCP_CC_NEWRENO;
		return 0;
	}
	for (unsigned i = 0; i < TCP_CC_ALG_COUNT; i++)
		if (strcmp(name, tcp_cc_names[i]) == 0) {
			*alg = (enum tcp_cc_alg)i;
			return 0;
		}
	return -ENOENT; /* as Linux for a module it does not have */
}

static const char *cc_linux_name(enum tcp_cc_alg alg)
{
	return alg == TCP_CC_NEWRENO ? "reno" : tcp_cc_name(alg);
}

static int set_congestion(struct us_sock *s, const void *val, socklen_t len)
{
	char name[TCP_CA_NAME_MAX] = { 0 };
	enum tcp_cc_alg alg;
	int rc;

	if (len < 1)
		return -EINVAL;
	if (val == NULL)
		return -EFAULT;
	memcpy(name, val, len < TCP_CA_NAME_MAX - 1 ? len : TCP_CA_NAME_MAX - 1);
	rc = cc_by_name(name, &alg);
	if (rc < 0)
		return rc;
	s->o.cc_set = true;
	s->o.cc = alg;
	return us_sock_opts_push(s);
}

/* TCP_FASTOPEN_KEY: 16 bytes (primary) or 32 (primary, backup), as Linux.
 * The key is the engine's (every listener of it), never rotated after. */
static int set_fastopen_key(struct us_sock *s, const void *val, socklen_t len)
{
	struct tfo_keys k;

	if (len != TFO_KEY_LEN && len != 2 * TFO_KEY_LEN)
		return -EINVAL;
	if (val == NULL)
		return -EFAULT;
	tcp_tfo_keys_get(s->tab->ts, &k);
	memcpy(k.primary, val, TFO_KEY_LEN);
	k.has_backup = len == 2 * TFO_KEY_LEN;
	if (k.has_backup)
		memcpy(k.backup, (const uint8_t *)val + TFO_KEY_LEN, TFO_KEY_LEN);
	k.next_rotate_ns = UINT64_MAX;
	tcp_tfo_keys_set(s->tab->ts, &k);
	return 0;
}

/* Linux's secs_to_retrans / retrans_to_secs for TCP_DEFER_ACCEPT, with
 * our initial and largest RTO. */
static uint32_t defer_secs_to_rtx(const struct tcp_config *cfg, int secs)
{
	uint32_t t = cfg->rto_initial_ms / 1000, max = cfg->rto_max_ms / 1000, period, n = 0;

	if (secs <= 0)
		return 0;
	t = t ? t : 1;
	period = t;
	for (n = 1; (uint32_t)secs > period && n < 255; n++) {
		t = t * 2 > max ? max : t * 2;
		period += t;
	}
	return n;
}

static int defer_rtx_to_secs(const struct tcp_config *cfg, uint32_t n)
{
	uint32_t t = cfg->rto_initial_ms / 1000, max = cfg->rto_max_ms / 1000, period;

	if (n == 0)
		return 0;
	t = t ? t : 1;
	period = t;
	while (--n) {
		t = t * 2 > max ? max : t * 2;
		period += t;
	}
	return (int)period;
}

/* An int option's value into s->o (or the socket); -ENOPROTOOPT: none. */
static int set_int(struct us_sock *s, int name, int v)
{
	const struct tcp_config *cfg = us_engine_tcp_config(s->tab->e);

	switch (name) {
	case US_TCP_MAXSEG:
		if (v != 0 && (v < TCP_MIN_MSS || v > TCP_MAX_WINDOW))
			return -EINVAL;
		s->o.user_mss = (uint32_t)v;
		break;
	case US_TCP_CORK:
		s->o.cork = v != 0;
		break;
	case US_TCP_KEEPIDLE:
	case US_TCP_KEEPINTVL:
		if (v < 1 || v > (name == US_TCP_KEEPIDLE ? TCP_MAX_KEEPIDLE : TCP_MAX_KEEPINTVL))
			return -EINVAL;
		*(name == US_TCP_KEEPIDLE ? &s->o.keepidle_ms : &s->o.keepintvl_ms) =
			(uint32_t)v * 1000u;
		break;
	case US_TCP_KEEPCNT:
		if (v < 1 || v > TCP_MAX_KEEPCNT)
			return -EINVAL;
		s->o.keepcnt = (uint32_t)v;
		break;
	case US_TCP_SYNCNT:
		if (v < 1 || v > TCP_MAX_SYNCNT)
			return -EINVAL;
		s->o.syn_retries = (uint32_t)v;
		break;
	case US_TCP_LINGER2:
		s->o.fin_wait2_ms = v < 0 ? -1 : v > TCP_FIN_TIMEOUT_MAX_S ?
			TCP_FIN_TIMEOUT_MAX_S * 1000 : v * 1000;
		break;
	case US_TCP_DEFER_ACCEPT:
		s->o.defer_accept_rtx = defer_secs_to_rtx(cfg, v);
		break;
	case US_TCP_USER_TIMEOUT:
		if (v < 0)
			return -EINVAL;
		s->o.user_timeout_ms = (uint32_t)v;
		break;
	case US_TCP_NOTSENT_LOWAT:
		/* Linux: an unsigned bound; its default (and -1) is no bound. */
		s->o.notsent_lowat = v == -1 ? 0 : (uint32_t)v;
		us_sock_wake(s);
		break;
	case US_TCP_INQ:
		if (v < 0 || v > 1)
			return -EINVAL;
		s->inq = v;
		return 0;
	case US_TCP_QUICKACK:
		s->quickack_off = v == 0;
		return s->tc == NULL ? 0 : tcp_set_quickack(s->tc, v != 0);
	default:
		return -ENOPROTOOPT;
	}
	return us_sock_opts_push(s);
}

int us_sock_tcp_setopt(struct us_sock *s, int name, const void *val, socklen_t len)
{
	int v, rc;

	switch (name) {
	case US_TCP_FASTOPEN:
	case US_TCP_FASTOPEN_CONNECT:
		return us_sock_tfo_setopt(s, name, val, len); /* socket_tfo.c */
	case US_TCP_CONGESTION:
		return set_congestion(s, val, len);
	case US_TCP_FASTOPEN_KEY:
		return set_fastopen_key(s, val, len);
	case US_TCP_INFO:
		return -ENOPROTOOPT; /* get only, as Linux */
	default:
		break;
	}
	/* Linux checks the length before the name: a short value is EINVAL
	 * even for a name it does not know. */
	rc = us_sock_opt_int(val, len, &v);
	return rc < 0 ? rc : set_int(s, name, v);
}

/* TCP_MAXSEG as Linux reports it: the user's value before a connection
 * (or on a listener), the connection's send MSS once there is one, 536
 * before either. */
static int get_maxseg(const struct us_sock *s)
{
	struct tcp_conn_info ci;

	if (s->tc != NULL && s->state != US_SS_LISTEN) {
		tcp_conn_get_info(s->tc, &ci);
		return (int)ci.mss;
	}
	return s->o.user_mss ? (int)s->o.user_mss : TCP_MSS_DEFAULT;
}

static int get_int(struct us_sock *s, int name, int *v)
{
	const struct tcp_config *cfg = us_engine_tcp_config(s->tab->e);
	const struct tcp_conn_opts *o = &s->o;

	switch (name) {
	case US_TCP_MAXSEG:
		*v = get_maxseg(s);
		return 0;
	case US_TCP_CORK:
		*v = o->cork;
		return 0;
	case US_TCP_KEEPIDLE:
		*v = (int)((o->keepidle_ms ? o->keepidle_ms : cfg->keepalive_idle_ms) / 1000u);
		return 0;
	case US_TCP_KEEPINTVL:
		*v = (int)((o->keepintvl_ms ? o->keepintvl_ms : cfg->keepalive_intvl_ms) / 1000u);
		return 0;
	case US_TCP_KEEPCNT:
		*v = (int)(o->keepcnt ? o->keepcnt : cfg->keepalive_probes);
		return 0;
	case US_TCP_SYNCNT:
		*v = (int)(o->syn_retries ? o->syn_retries : cfg->syn_retries);
		return 0;
	case US_TCP_LINGER2:
		*v = o->fin_wait2_ms < 0 ? -1 :
		     (int)((o->fin_wait2_ms ? (uint32_t)o->fin_wait2_ms : cfg->time_wait_ms) / 1000u);
		return 0;
	case US_TCP_DEFER_ACCEPT:
		*v = defer_rtx_to_secs(cfg, o->defer_accept_rtx);
		return 0;
	case US_TCP_USER_TIMEOUT:
		*v = (int)o->user_timeout_ms;
		return 0;
	case US_TCP_NOTSENT_LOWAT:
		*v = o->notsent_lowat ? (int)o->notsent_lowat : -1; /* UINT_MAX: none */
		return 0;
	case US_TCP_INQ:
		*v = s->inq;
		return 0;
	case US_TCP_QUICKACK:
		*v = !s->quickack_off;
		return 0;
	case US_TCP_FASTOPEN:
	case US_TCP_FASTOPEN_CONNECT:
		return us_sock_tfo_getopt(s, name, v);
	default:
		return -ENOPROTOOPT;
	}
}

/* Copies n bytes of a value, truncated to *len (Linux). */
static void put(void *val, socklen_t *len, const void *v, size_t n)
{
	if (*len > n)
		*len = (socklen_t)n;
	memcpy(val, v, *len);
}

int us_sock_tcp_getopt(struct us_sock *s, int name, void *val, socklen_t *len, int *v,
		       bool *done)
{
	const struct tcp_config *cfg = us_engine_tcp_config(s->tab->e);
	char cc[TCP_CA_NAME_MAX] = { 0 };
	uint8_t key[2 * TFO_KEY_LEN];
	struct us_tcp_info ti;
	struct tfo_keys k;

	*done = true;
	switch (name) {
	case US_TCP_INFO:
		us_sock_tcp_info(s, &ti); /* socket_tcpinfo.c */
		put(val, len, &ti, sizeof(ti));
		return 0;
	case US_TCP_CONGESTION:
		strncpy(cc, cc_linux_name(s->o.cc_set ? s->o.cc : cfg->cc), sizeof(cc) - 1);
		put(val, len, cc, sizeof(cc));
		return 0;
	case US_TCP_FASTOPEN_KEY:
		tcp_tfo_keys_get(s->tab->ts, &k);
		memcpy(key, k.primary, TFO_KEY_LEN);
		memcpy(key + TFO_KEY_LEN, k.backup, TFO_KEY_LEN);
		put(val, len, key, k.has_backup ? sizeof(key) : TFO_KEY_LEN);
		return 0;
	default:
		*done = false;
		return get_int(s, name, v);
	}
}
