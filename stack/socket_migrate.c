/* stack/socket_migrate.c: us_migrate, the socket side of moving a
 * connection to another engine (stack/migrate.h has the engine side).
 *
 * The contract: the descriptor is closed on the calling engine (its epoll
 * registrations go with it, nothing is sent), and the connection appears
 * in the target engine's accept queue of the listener on the same local
 * port, as if accepted there: an existing server accepts it with us_accept
 * (readiness: EPOLLIN on that listener), unread data and a received FIN
 * included.  Socket options that live in tcp/ (nodelay, keepalive) travel
 * with the connection. */
#include <errno.h>

#include "stack/engine_priv.h"
#include "stack/migrate.h"
#include "stack/socket_priv.h"

/* The target engine's side: the listener on the connection's local port
 * takes it, or it is refused (the engine resets it, counted). */
static int sock_migrate_in(void *ctx, struct tcp_parcel *p)
{
	struct us_sock_table *tab = ctx;
	struct tcp_conn_info info;
	struct tcp_conn *tc;
	struct us_sock *l, *s;
	uint32_t lip, rip;
	uint16_t lport, rport;
	int rc;

	tcp_parcel_tuple(p, &lip, &lport, &rip, &rport);
	l = tcp_listener_ctx(tab->ts, lip, lport);
	if (l == NULL || l->kind != US_SK_TCP || l->state != US_SS_LISTEN)
		return -ECONNREFUSED;
	if (l->nacceptq >= l->backlog) {
		tab->stats.sock_drop_accept_full++;
		return -ENOBUFS;
	}
	rc = tcp_migrate_attach(tab->ts, p, &us_sock_callbacks, NULL, &tc);
	if (rc < 0)
		return rc;
	if (us_sock_queue_accept(l, tc, &s) < 0) {
		US_STAT_INC(tab->e, migrate_failed);
		tcp_abort(tc); /* no memory: counted by the socket layer too */
		return 0;
	}
	tcp_conn_get_info(tc, &info);
	s->nodelay = info.nodelay;
	s->keepalive = info.keepalive;
	return 0;
}

void us_sock_migrate_init(struct us_sock_table *tab)
{
	tab->e->mig_deliver = sock_migrate_in;
	tab->e->mig_ctx = tab;
}

static int sock_migrate(int fd, unsigned engine)
{
	struct us_sock *s;
	int rc = us_sock_lookup(fd, &s);

	if (rc < 0)
		return rc;
	if (s->kind != US_SK_TCP)
		return -EINVAL;
	/* A shutdown for reading lives in the socket only: it would not
	 * travel, so the connection stays where it is. */
	if (s->state != US_SS_CONNECTED || s->tc == NULL || s->shut_rd || s->rest != NULL)
		return -EINVAL;
	rc = us_migrate_out(s->tab->e, s->tc, engine);
	if (rc < 0)
		return rc;
	/* tcp/ forgot this socket: the descriptor goes, nothing is sent. */
	s->tc = NULL;
	us_sock_unwatch(s);
	us_sock_release(s);
	return 0;
}

int us_migrate(int fd, unsigned engine)
{
	struct us_sock *s;
	int rc = sock_migrate(fd, engine);

	if (rc < 0 && rc != -EBADF && us_sock_lookup(fd, &s) == 0)
		US_STAT_INC(s->tab->e, migrate_failed);
	return rc < 0 ? us_sock_fail(rc) : 0;
}
