/* stack/sock/socket_migrate.c: us_migrate, the socket side of moving a
 * connection to another engine (stack/engine/migrate.h has the engine side).
 *
 * The contract: the descriptor is closed on the calling engine (its epoll
 * registrations go with it, nothing is sent), and the connection appears
 * in the target engine's accept queue of the listener on the same local
 * port, as if accepted there (tcp_migrate_accept calls that listener's
 * on_accept): an existing server accepts it with us_accept (readiness:
 * EPOLLIN on that listener), unread data and a received FIN included; the
 * listener's socket options apply, as for any accepted connection. */
#include <errno.h>

#include "stack/net/net.h"
#include "stack/engine/migrate.h"
#include "stack/sock/socket_priv.h"

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
		US_NET_STAT_INC(us_engine_net(s->tab->e), migrate_failed);
	return rc < 0 ? us_sock_fail(rc) : 0;
}
