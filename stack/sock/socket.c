/* stack/sock/socket.c: POSIX-shaped sockets over tcp/ (us_socket.h): the
 * descriptor tables, tcp/'s callbacks turned into socket state and
 * readiness, and the calls that set a connection up (bind, listen, accept,
 * connect).  Data, shutdown, close and options: stack/sock/socket_io.c;
 * readiness: stack/sock/epoll.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stack/net/net.h"
#include "stack/sock/socket_priv.h"

/* One writer (start-up), then read-only: each slot's table is used by the
 * one thread that drives its engine. */
static struct us_sock_table *sock_tables[US_ENGINES_MAX];
static __thread struct us_sock_table *sock_cur;

/* Table */

struct us_sock_table *us_sock_table_create(struct us_engine *e, unsigned slot, unsigned cap,
					   const struct us_sock_driver *drv)
{
	struct us_sock_table *tab;

	if (e == NULL || drv == NULL || drv->poll == NULL || drv->now_ns == NULL ||
	    slot >= US_ENGINES_MAX || cap < 2 || cap > US_FD_MAX_PER_TABLE) {
		errno = EINVAL;
		return NULL;
	}
	if (sock_tables[slot] != NULL) {
		errno = EBUSY;
		return NULL;
	}
	tab = calloc(1, sizeof(*tab));
	if (tab == NULL)
		return NULL;
	tab->socks = calloc(cap, sizeof(*tab->socks));
	tab->free_idx = calloc(cap, sizeof(*tab->free_idx));
	if (tab->socks == NULL || tab->free_idx == NULL) {
		free(tab->socks);
		free(tab->free_idx);
		free(tab);
		errno = ENOMEM;
		return NULL;
	}
	tab->e = e;
	tab->ts = us_engine_tcp(e);
	tab->sndbuf = us_engine_tcp_config(e)->sndbuf;
	tab->rcvbuf = us_engine_tcp_config(e)->rcvbuf;
	tab->drv = *drv;
	tab->slot = slot;
	tab->cap = cap;
	/* Index 0 is never handed out: descriptors start at 1, so code that
	 * takes 0 for "unset" does not mistake a socket for nothing. */
	for (unsigned i = cap - 1; i >= 1; i--)
		tab->free_idx[tab->nfree++] = i;
	sock_tables[slot] = tab;
	us_udp_table_init(tab);
	return tab;
}

void us_sock_table_destroy(struct us_sock_table *tab)
{
	if (tab == NULL)
		return;
	/* Epoll descriptors first, so closing sockets has no watchers left. */
	for (unsigned i = 1; i < tab->cap; i++)
		if (tab->socks[i] != NULL && tab->socks[i]->kind == US_SK_EPOLL)
			us_close((int)(tab->slot << US_FD_SHIFT | i));
	for (unsigned i = 1; i < tab->cap; i++)
		if (tab->socks[i] != NULL)
			us_close((int)(tab->slot << US_FD_SHIFT | i));
	us_udp_table_fini(tab);
	sock_tables[tab->slot] = NULL;
	if (sock_cur == tab)
		sock_cur = NULL;
	free(tab->socks);
	free(tab->free_idx);
	free(tab);
}

void us_sock_table_bind_thread(struct us_sock_table *tab)
{
	sock_cur = tab;
}

struct us_sock_table *us_sock_table_current(void)
{
	return sock_cur;
}

void us_sock_print_stats(const struct us_sock_table *tab, FILE *out)
{
#define US_SOCK_X_PRINT(name, desc) \
	fprintf(out, "%s %lu # %s\n", #name, (unsigned long)tab->stats.name, desc);
	SOCK_COUNTERS(US_SOCK_X_PRINT)
#undef US_SOCK_X_PRINT
}

int us_sock_lookup(int fd, struct us_sock **out)
{
	unsigned slot, idx;
	struct us_sock_table *tab;

	if (fd <= 0)
		return -EBADF;
	slot = (unsigned)fd >> US_FD_SHIFT;
	idx = (unsigned)fd & (US_FD_MAX_PER_TABLE - 1);
	if (slot >= US_ENGINES_MAX || (tab = sock_tables[slot]) == NULL || idx >= tab->cap ||
	    tab->socks[idx] == NULL)
		return -EBADF;
	*out = tab->socks[idx];
	return 0;
}

/* Gives s a descriptor in its table. */
static int sock_assign_fd(struct us_sock *s)
{
	struct us_sock_table *tab = s->tab;
	unsigned idx;

	if (tab->nfree == 0) {
		tab->stats.sock_emfile++;
		return -EMFILE;
	}
	idx = tab->free_idx[--tab->nfree];
	tab->socks[idx] = s;
	s->fd = (int)(tab->slot << US_FD_SHIFT | idx);
	return 0;
}

static struct us_sock *sock_new(struct us_sock_table *tab, enum us_sock_kind kind)
{
	struct us_sock *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->tab = tab;
	s->fd = -1;
	s->kind = kind;
	LIST_INIT(&s->watchers);
	LIST_INIT(&s->items);
	TAILQ_INIT(&s->readyq);
	STAILQ_INIT(&s->acceptq);
	return s;
}

int us_sock_alloc(struct us_sock_table *tab, enum us_sock_kind kind, struct us_sock **out)
{
	struct us_sock *s;
	int rc;

	if (tab == NULL)
		return -ENETDOWN; /* no engine bound to this thread: us_init first */
	s = sock_new(tab, kind);
	if (s == NULL)
		return -ENOMEM;
	rc = sock_assign_fd(s);
	if (rc < 0) {
		free(s);
		return rc;
	}
	if (kind != US_SK_EPOLL)
		tab->stats.sock_opened++;
	*out = s;
	return 0;
}

void us_sock_release(struct us_sock *s)
{
	struct us_sock_table *tab = s->tab;

	if (s->fd > 0) {
		unsigned idx = (unsigned)s->fd & (US_FD_MAX_PER_TABLE - 1);

		tab->socks[idx] = NULL;
		tab->free_idx[tab->nfree++] = idx;
	}
	if (s->rest != NULL)
		rte_pktmbuf_free(s->rest);
	if (s->kind == US_SK_UDP)
		us_udp_close(s);
	free(s);
}

/* Readiness, as Linux's tcp_poll() would report it. */
uint32_t us_sock_poll(struct us_sock *s)
{
	struct tcp_conn_status st;
	uint32_t m = 0;

	if (s->kind == US_SK_UDP)
		return US_EPOLLOUT | (s->dq_n > 0 ? US_EPOLLIN : 0);
	switch (s->state) {
	case US_SS_NEW:
		return US_EPOLLOUT | US_EPOLLHUP; /* nothing will ever come */
	case US_SS_LISTEN:
		return s->nacceptq > 0 ? US_EPOLLIN : 0;
	case US_SS_CONNECTING:
		return s->tfo_defer ? US_EPOLLOUT : 0; /* the first send opens it */
	case US_SS_ENDED:
		m = US_EPOLLIN | US_EPOLLRDHUP | US_EPOLLOUT | US_EPOLLHUP;
		return s->so_error ? m | US_EPOLLERR : m;
	case US_SS_CONNECTED:
		break;
	}
	tcp_conn_status(s->tc, &st);
	/* SO_RCVLOWAT: readable once that much is queued (tcp_poll). */
	if (us_sock_readable_enough(s, st.readable) || s->rest != NULL)
		m |= US_EPOLLIN;
	if (st.fin_rcvd || s->shut_rd)
		m |= US_EPOLLIN | US_EPOLLRDHUP;
	if (tcp_urg_waiting(s->tc))
		m |= US_EPOLLPRI; /* RFC 9293 3.8.5 MUST-32 */
	/* TCP_NOTSENT_LOWAT: writable while little waits unsent; when too
	 * much does, tcp/ says when it has gone (on_writable). */
	if (s->shut_wr ||
	    (st.established && st.send_space > 0 && us_sock_unsent_low(s, st.unsent)))
		m |= US_EPOLLOUT;
	else if (st.established && st.send_space > 0)
		tcp_conn_want_writable(s->tc);
	if (s->shut_wr && (st.fin_rcvd || s->shut_rd))
		m |= US_EPOLLHUP;
	if (s->so_error)
		m |= US_EPOLLERR;
	return m;
}

/* Both FINs are out: tcp/ frees the receive queue when the connection ends,
 * so unread data moves to the socket now (no copy). */
void us_sock_keep_rest(struct us_sock *s)
{
	struct tcp_conn_status st;
	struct rte_mbuf *m;
	uint32_t n;

	if (s->tc == NULL)
		return;
	tcp_conn_status(s->tc, &st);
	if (!st.fin_rcvd || !st.fin_queued || st.readable == 0)
		return;
	while ((m = tcp_recv_take(s->tc, &n)) != NULL) {
		if (s->rest == NULL) {
			s->rest = m;
			s->rest_off = 0;
		} else if (rte_pktmbuf_chain(s->rest, m) < 0) {
			/* Over 65535 segments kept: the application reads on
			 * until end of stream and loses the rest, counted. */
			s->tab->stats.sock_drop_rest_overflow++;
			rte_pktmbuf_free(m);
		}
	}
}

void us_sock_tcp_names(struct us_sock *s)
{
	tcp_conn_local(s->tc, &s->lip, &s->lport);
	tcp_conn_peer(s->tc, &s->rip, &s->rport);
}

/* tcp/ callbacks: record, then wake the epoll registrations.  No
 * application code runs here. */

static void sock_apply_opts(struct us_sock *s)
{
	if (s->nodelay)
		tcp_set_nodelay(s->tc, true);
	if (s->keepalive)
		tcp_set_keepalive(s->tc, true);
	if (s->quickack_off)
		tcp_set_quickack(s->tc, false);
}

/* Linux's sk_clone: an accepted socket starts with its listener's
 * options.  tcp/'s part is the connection's own (its listener's from the
 * SYN on, or what it brought along from another engine). */
static void sock_inherit_opts(struct us_sock *s, const struct us_sock *l)
{
	tcp_conn_get_opts(s->tc, &s->o);
	s->rcvbuf_set = s->o.rcvbuf != 0;
	s->sndbuf_set = s->o.sndbuf != 0;
	s->rcvlowat = l->rcvlowat;
	s->inq = l->inq;
	s->linger_on = l->linger_on;
	s->linger_s = l->linger_s;
	s->reuseaddr = l->reuseaddr;
}

static void sk_on_accept(void *lctx, struct tcp_conn *tc)
{
	struct us_sock *l = us_sock_reuseport_pick(lctx, tc), *s;

	if (l->nacceptq >= l->backlog) {
		l->tab->stats.sock_drop_accept_full++;
		tcp_abort(tc); /* visible refusal, like Linux with tcp_abort_on_overflow */
		return;
	}
	s = sock_new(l->tab, US_SK_TCP);
	if (s == NULL) {
		l->tab->stats.sock_drop_no_mem++;
		tcp_abort(tc);
		return;
	}
	s->state = US_SS_CONNECTED;
	s->tc = tc;
	s->family = l->family;
	s->v6only = l->v6only;
	s->nodelay = l->nodelay;
	s->keepalive = l->keepalive;
	s->quickack_off = l->quickack_off;
	sock_inherit_opts(s, l);
	us_sock_tcp_names(s);
	tcp_conn_set_ctx(tc, s);
	sock_apply_opts(s);
	s->listener = l;
	STAILQ_INSERT_TAIL(&l->acceptq, s, accept_link);
	l->nacceptq++;
	us_sock_wake(l);
}

static void sk_on_connected(void *ctx, struct tcp_conn *tc)
{
	struct us_sock *s = ctx;

	(void)tc;
	s->state = US_SS_CONNECTED;
	us_sock_wake(s);
}

static void sk_on_readable(void *ctx, struct tcp_conn *tc)
{
	struct us_sock *s = ctx;

	(void)tc;
	us_sock_keep_rest(s);
	us_sock_wake(s);
}

static void sk_on_writable(void *ctx, struct tcp_conn *tc)
{
	(void)tc;
	us_sock_wake(ctx);
}

static void sk_on_closed(void *ctx, struct tcp_conn *tc, int err)
{
	struct us_sock *s = ctx;

	(void)tc;
	s->tc = NULL;
	s->state = US_SS_ENDED;
	s->so_error = err;
	us_sock_wake(s);
}

const struct tcp_callbacks us_sock_callbacks = {
	.on_accept = sk_on_accept,
	.on_readable = sk_on_readable,
	.on_writable = sk_on_writable,
	.on_closed = sk_on_closed,
	.on_connected = sk_on_connected,
};

/* Calls */

int us_sock_any(int fd, struct us_sock **out)
{
	int rc = us_sock_lookup(fd, out);

	if (rc < 0)
		return rc;
	return (*out)->kind == US_SK_EPOLL ? -ENOTSOCK : 0;
}

int us_socket(int domain, int type, int protocol)
{
	struct us_sock *s;
	int rc;

	if (domain != AF_INET && domain != AF_INET6)
		return us_sock_fail(-EAFNOSUPPORT);
	type &= ~(US_SOCK_NONBLOCK | US_SOCK_CLOEXEC);
	if (type == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP)) {
		rc = us_sock_alloc(sock_cur, US_SK_UDP, &s);
		if (rc == 0) {
			s->family = (uint8_t)domain;
			if ((rc = us_udp_open(s)) < 0)
				us_sock_release(s);
		}
		return rc < 0 ? us_sock_fail(rc) : s->fd;
	}
	if (type != SOCK_STREAM || (protocol != 0 && protocol != IPPROTO_TCP))
		return us_sock_fail(-EPROTONOSUPPORT);
	rc = us_sock_alloc(sock_cur, US_SK_TCP, &s);
	if (rc < 0)
		return us_sock_fail(rc);
	s->family = (uint8_t)domain;
	s->state = US_SS_NEW;
	return s->fd;
}

static bool sock_port_taken(const struct us_sock *s, const struct us_in6 *ip, uint16_t port)
{
	const struct us_sock_table *tab = s->tab;

	for (unsigned i = 1; i < tab->cap; i++) {
		const struct us_sock *o = tab->socks[i];

		if (o != NULL && o->kind == US_SK_TCP && o->bound && o->lport == port &&
		    (o->state == US_SS_NEW || o->state == US_SS_LISTEN) &&
		    !us_sock_reuseport_shares(o, s) &&
		    us_sock_names_overlap(&o->lip, o->v6only, ip, s->v6only))
			return true;
	}
	return false;
}

/* The name a TCP socket takes for the address it was asked to bind: our
 * IPv4 address for 0.0.0.0 (or ::ffff:0.0.0.0), :: itself on an AF_INET6
 * socket (both families, unless V6ONLY), else an address of ours:
 * 0 or -EADDRNOTAVAIL. */
static int sock_tcp_bind_name(struct us_sock *s, const struct us_in6 *ip, struct us_in6 *name)
{
	if (us_in6_is_unspec(ip)) {
		*name = *ip;
		return 0;
	}
	if (!us_sock_addr_is_any(ip) && !us_sock_addr_ours(s, ip))
		return -EADDRNOTAVAIL;
	*name = us_in6_is_v4mapped(ip) ? us_in6_of_v4(us_engine_addr(s->tab->e)) : *ip;
	return 0;
}

int us_bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct us_sock *s;
	struct us_in6 ip, name;
	uint16_t port;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (s->state != US_SS_NEW || s->bound)
		return us_sock_fail(-EINVAL);
	rc = us_sock_addr_get(s, addr, len, &ip, &port);
	if (rc == 0 && s->kind == US_SK_UDP)
		rc = us_udp_bind(s, &ip, port);
	if (rc < 0 || s->kind == US_SK_UDP)
		return rc < 0 ? us_sock_fail(rc) : 0;
	rc = sock_tcp_bind_name(s, &ip, &name);
	if (rc < 0)
		return us_sock_fail(rc);
	if (port != 0 && sock_port_taken(s, &name, port))
		return us_sock_fail(-EADDRINUSE);
	s->lip = name;
	s->lport = port;
	s->bound = true;
	return 0;
}

int us_listen(int fd, int backlog)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc == 0 && s->kind == US_SK_UDP)
		rc = -EOPNOTSUPP;
	if (rc < 0)
		return us_sock_fail(rc);
	backlog = backlog < 1 ? 1 : backlog > 65535 ? 65535 : backlog;
	if (s->state == US_SS_LISTEN) {
		s->backlog = (unsigned)backlog; /* POSIX: listen again adjusts it */
		return 0;
	}
	if (s->state != US_SS_NEW)
		return us_sock_fail(-EINVAL);
	if (!s->bound || s->lport == 0)
		return us_sock_fail(-EDESTADDRREQ);
	if (us_sock_reuseport_join(s)) {
		s->state = US_SS_LISTEN; /* tcp/'s listener is the group's */
		s->backlog = (unsigned)backlog;
		return 0;
	}
	rc = tcp_listen(s->tab->ts, &s->lip, s->lport, s->v6only ? TCP_LISTEN_V6ONLY : 0,
			&us_sock_callbacks, s);
	if (rc == 0 && (rc = tcp_listener_set_opts(s->tab->ts, &s->lip, s->lport, &s->o)) < 0)
		tcp_unlisten_addr(s->tab->ts, &s->lip, s->lport);
	if (rc == 0 && (rc = us_sock_tfo_listen(s)) < 0)
		tcp_unlisten_addr(s->tab->ts, &s->lip, s->lport);
	/* Isolated port: without the listener's rule no SYN would arrive. */
	if (rc == 0 && (rc = us_engine_listen_rule(s->tab->e, s->lport)) < 0)
		tcp_unlisten_addr(s->tab->ts, &s->lip, s->lport);
	if (rc < 0)
		return us_sock_fail(rc);
	s->state = US_SS_LISTEN;
	s->backlog = (unsigned)backlog;
	return 0;
}

int us_accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct us_sock *l, *s;
	int rc = us_sock_any(fd, &l);

	if (rc == 0 && l->kind == US_SK_UDP)
		rc = -EOPNOTSUPP;
	if (rc < 0)
		return us_sock_fail(rc);
	if (l->state != US_SS_LISTEN)
		return us_sock_fail(-EINVAL);
	s = STAILQ_FIRST(&l->acceptq);
	if (s == NULL)
		return us_sock_fail(-EAGAIN);
	rc = sock_assign_fd(s);
	if (rc < 0)
		return us_sock_fail(rc); /* stays queued for a later accept */
	STAILQ_REMOVE_HEAD(&l->acceptq, accept_link);
	l->nacceptq--;
	s->listener = NULL;
	l->tab->stats.sock_opened++;
	l->tab->stats.sock_accepted++;
	us_sock_addr_put(s, &s->rip, s->rport, addr, len);
	return s->fd;
}

/* A connect on a socket that is not fresh: the POSIX answers. */
static int sock_connect_state(struct us_sock *s)
{
	int err;

	switch (s->state) {
	case US_SS_CONNECTING:
		return -EALREADY;
	case US_SS_CONNECTED:
		return -EISCONN;
	case US_SS_LISTEN:
		return -EINVAL;
	case US_SS_ENDED:
		/* A failed non-blocking connect reports its error once. */
		err = s->so_error;
		s->so_error = 0;
		return err ? -err : -EISCONN;
	default:
		return 0;
	}
}

/* RFC 9293 3.9.1.1 (MUST-46): no OPEN to a broadcast address, the
 * subnet's being one only the network layer knows (tcp/ refuses the
 * multicast groups too, for the callback API); ENETUNREACH as Linux's
 * tcp_v4_connect. */
static int sock_connect_bcast(struct us_sock *s, const struct us_in6 *ip)
{
	struct us_net *n = us_engine_net(s->tab->e);

	if (!us_in6_is_v4mapped(ip) || !us_ip_is_bcast(n, us_in6_v4(ip)))
		return 0;
	US_NET_STAT_INC(n, ip_tcp_connect_bcast);
	return -ENETUNREACH;
}

int us_connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct us_sock *s;
	struct us_in6 ip;
	uint16_t port;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (s->kind == US_SK_UDP) {
		rc = us_sock_addr_peer(s, addr, len, US_SA_CONNECT, &ip, &port);
		if (rc == 0)
			rc = us_udp_connect(s, &ip, port);
		return rc < 0 ? us_sock_fail(rc) : 0;
	}
	rc = sock_connect_state(s);
	if (rc < 0)
		return us_sock_fail(rc);
	rc = us_sock_addr_peer(s, addr, len, US_SA_CONNECT, &ip, &port);
	if (rc < 0)
		return us_sock_fail(rc);
	if (port == 0 || us_sock_addr_is_any(&ip))
		return us_sock_fail(-EADDRNOTAVAIL);
	rc = sock_connect_bcast(s, &ip);
	if (rc < 0)
		return us_sock_fail(rc);
	if (s->bound && s->lport != 0)
		return us_sock_fail(-EOPNOTSUPP); /* tcp/ picks the source port */
	if (s->tfo_connect) {
		rc = us_sock_tfo_connect(s, &ip, port);
		return rc < 0 ? us_sock_fail(rc) : 0;
	}
	rc = tcp_connect_opts(s->tab->ts, &ip, port, &s->o, &us_sock_callbacks, s, &s->tc);
	if (rc < 0)
		return us_sock_fail(rc == -ENOBUFS ? -EAGAIN : rc);
	s->state = US_SS_CONNECTING;
	us_sock_tcp_names(s);
	sock_apply_opts(s);
	return us_sock_fail(-EINPROGRESS);
}

int us_getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (addr == NULL || len == NULL)
		return us_sock_fail(-EFAULT);
	us_sock_addr_put(s, &s->lip, s->lport, addr, len);
	return 0;
}

int us_getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	struct us_sock *s;
	int rc = us_sock_any(fd, &s);

	if (rc < 0)
		return us_sock_fail(rc);
	if (addr == NULL || len == NULL)
		return us_sock_fail(-EFAULT);
	if (s->state != US_SS_CONNECTED && s->state != US_SS_ENDED)
		return us_sock_fail(-ENOTCONN);
	us_sock_addr_put(s, &s->rip, s->rport, addr, len);
	return 0;
}
