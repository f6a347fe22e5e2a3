/* stack/sock/conn.c: the callback API (userstack.h: us_tcp_listen*,
 * us_conn_*) over the engines' TCP stacks.
 *
 * struct us_conn is tcp/'s struct tcp_conn seen from outside; handlers are
 * forwarded through a small per-listener trampoline so that applications
 * only ever see us_* types.  The stack is reached through conn.h only.
 */
#include <errno.h>
#include <stdlib.h>

#include "stack/engine/engine.h"
#include "stack/engine/migrate.h"
#include "stack/net/net.h"
#include "stack/sock/conn.h"
#include "tcp/tcp.h"
#include "userstack.h"

/* Types */

/* A tcp_conn with the application's handlers and ctx; tcp/ calls back with
 * the wrapper as its ctx. */
struct us_conn {
	struct tcp_conn *tc;
	const struct us_tcp_handlers *h;
	void *app_ctx;
};

/* Callbacks from tcp/ */

static void conn_on_readable(void *ctx, struct tcp_conn *tc)
{
	struct us_conn *c = ctx;
	(void)tc;
	if (c->h->on_readable)
		c->h->on_readable(c->app_ctx, c);
}

static void conn_on_writable(void *ctx, struct tcp_conn *tc)
{
	struct us_conn *c = ctx;
	(void)tc;
	if (c->h->on_writable)
		c->h->on_writable(c->app_ctx, c);
}

/* tcp/ ends the connection: tell the application, then drop the wrapper. */
static void conn_on_closed(void *ctx, struct tcp_conn *tc, int err)
{
	struct us_conn *c = ctx;
	(void)tc;
	if (c->h->on_closed)
		c->h->on_closed(c->app_ctx, c, err);
	free(c);
}

static void conn_on_accept(void *listen_ctx, struct tcp_conn *tc)
{
	struct us_conn_listener *l = listen_ctx;
	struct us_conn *c = malloc(sizeof(*c));
	if (c == NULL) {
		tcp_abort(tc); /* no memory for its state: refuse it visibly */
		return;
	}
	*c = (struct us_conn){ .tc = tc, .h = &l->h, .app_ctx = l->ctx };
	tcp_conn_set_ctx(tc, c);
	if (l->h.on_accept)
		l->h.on_accept(l->ctx, c);
}

static const struct tcp_callbacks conn_tcp_callbacks = {
	.on_accept = conn_on_accept,
	.on_readable = conn_on_readable,
	.on_writable = conn_on_writable,
	.on_closed = conn_on_closed,
};

static int conn_errno(long rc)
{
	if (rc >= 0)
		return 0;
	errno = (int)-rc;
	return -1;
}

/* Listening */

/* Listens on engine e's TCP stack with the shared listener record l: on
 * every address of both families when IPv6 is on (::, not V6ONLY), else
 * on the engine's IPv4 address. */
static int conn_listen_one(struct us_engine *e, uint16_t port, struct us_conn_listener *l)
{
	struct us_in6 at = us_engine_net(e)->ip6_on ? (struct us_in6){ 0 }
						     : us_in6_of_v4(us_engine_addr(e));
	int rc = tcp_listen(us_engine_tcp(e), &at, port, 0, &conn_tcp_callbacks, l);

	/* Isolated port: without the listener's rule no SYN would arrive. */
	if (rc == 0 && (rc = us_engine_listen_rule(e, port)) < 0)
		(void)tcp_unlisten(us_engine_tcp(e), port);
	return rc;
}

static struct us_conn_listener *conn_listener_new(struct us_conn_listeners *ls,
						  const struct us_tcp_handlers *h, void *ctx)
{
	struct us_conn_listener *l;

	if (ls->n == US_CONN_LISTENERS) {
		errno = ENOBUFS;
		return NULL;
	}
	l = &ls->l[ls->n++];
	l->h = *h;
	l->ctx = ctx;
	return l;
}

int us_tcp_listen_engine(struct us_stack *st, unsigned engine, uint16_t port,
			 const struct us_tcp_handlers *h, void *ctx)
{
	struct us_engine *e = st != NULL ? us_stack_engine(st, engine) : NULL;
	struct us_conn_listeners *ls;
	struct us_conn_listener *l;

	if (e == NULL || h == NULL) {
		errno = EINVAL;
		return -1;
	}
	ls = us_stack_listeners(st);
	if ((l = conn_listener_new(ls, h, ctx)) == NULL)
		return -1;
	int rc = conn_listen_one(e, port, l);
	if (rc < 0)
		ls->n--;
	return conn_errno(rc);
}

/* SO_REUSEPORT-like: a listener on every engine, so each accepts the
 * connections whose SYN it owns. */
int us_tcp_listen(struct us_stack *st, uint16_t port, const struct us_tcp_handlers *h,
		  void *ctx)
{
	struct us_conn_listeners *ls;
	struct us_conn_listener *l;
	unsigned n = us_engine_count(st), done = 0;
	int rc = 0;

	if (n == 0 || us_stack_engine(st, 0) == NULL || h == NULL) {
		errno = EINVAL;
		return -1;
	}
	ls = us_stack_listeners(st);
	if ((l = conn_listener_new(ls, h, ctx)) == NULL)
		return -1;
	while (rc == 0 && done < n)
		if ((rc = conn_listen_one(us_stack_engine(st, done), port, l)) == 0)
			done++;
	if (rc < 0) {
		/* All or nothing: the engines that took it let go again. */
		while (done > 0) {
			struct us_engine *e = us_stack_engine(st, --done);

			(void)tcp_unlisten(us_engine_tcp(e), port);
			us_engine_unlisten_rule(e, port);
		}
		ls->n--;
	}
	return conn_errno(rc);
}

int us_listen_set_fastopen(struct us_stack *st, uint16_t port, unsigned qlen)
{
	unsigned n = us_engine_count(st);
	int rc = 0;

	if (n == 0 || us_stack_engine(st, 0) == NULL) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned k = 0; rc == 0 && k < n; k++)
		rc = tcp_set_fastopen(us_engine_tcp(us_stack_engine(st, k)), port, qlen);
	return conn_errno(rc);
}

/* Connections */

void us_conn_set_ctx(struct us_conn *c, void *ctx)
{
	c->app_ctx = ctx;
}

ssize_t us_conn_recv(struct us_conn *c, void *buf, size_t len)
{
	ssize_t rc = tcp_recv(c->tc, buf, len);
	return rc < 0 ? conn_errno(rc) : rc;
}

ssize_t us_conn_send(struct us_conn *c, const void *buf, size_t len)
{
	ssize_t rc = tcp_send(c->tc, buf, len);
	return rc < 0 ? conn_errno(rc) : rc;
}

/* Zero copy: the rules of us_recv_mbuf / us_send_mbuf (us_socket.h), on the
 * same tcp/ calls. */
ssize_t us_conn_recv_mbuf(struct us_conn *c, struct rte_mbuf **chain)
{
	if (chain == NULL)
		return conn_errno(-EFAULT);
	ssize_t rc = tcp_recv_chain(c->tc, chain);
	return rc < 0 ? conn_errno(rc) : rc;
}

ssize_t us_conn_send_mbuf(struct us_conn *c, struct rte_mbuf *chain)
{
	if (chain == NULL)
		return conn_errno(-EFAULT);
	ssize_t rc = tcp_send_chain(c->tc, chain);
	if (rc == -ENOTCONN)
		rc = -EPIPE; /* as us_send_mbuf: the connection is gone for sending */
	return rc < 0 ? conn_errno(rc) : rc;
}

size_t us_conn_send_space(const struct us_conn *c)
{
	return tcp_send_space(c->tc);
}

int us_conn_shutdown_write(struct us_conn *c)
{
	return conn_errno(tcp_shutdown_write(c->tc));
}

/* After an application close tcp/ never calls back, so the wrapper goes now. */
int us_conn_close(struct us_conn *c)
{
	int rc = tcp_close(c->tc);
	free(c);
	return conn_errno(rc);
}

int us_conn_abort(struct us_conn *c)
{
	int rc = tcp_abort(c->tc);
	free(c);
	return conn_errno(rc);
}

/* Inside a handler: the move is deferred to the end of the engine's loop
 * iteration (stack/engine/migrate.h); the wrapper goes now, like a close. */
int us_conn_migrate(struct us_conn *c, unsigned engine)
{
	int rc = us_migrate_conn(tcp_conn_env_ctx(c->tc), c->tc, engine);

	if (rc < 0)
		return conn_errno(rc);
	free(c);
	return 0;
}

int us_conn_set_nodelay(struct us_conn *c, int on)
{
	return conn_errno(tcp_set_nodelay(c->tc, on != 0));
}

int us_conn_set_keepalive(struct us_conn *c, int on)
{
	return conn_errno(tcp_set_keepalive(c->tc, on != 0));
}

unsigned us_conn_count(const struct us_stack *st)
{
	unsigned n = 0;

	for (unsigned k = 0; k < us_engine_count(st); k++) {
		struct us_engine *e = us_stack_engine(st, k);

		if (e != NULL)
			n += tcp_conn_count(us_engine_tcp(e));
	}
	return n;
}
