/* stack/sock/socket_reuseport.c: SO_REUSEPORT on one engine, as Linux's
 * reuseport groups (net/core/sock_reuseport.c): TCP sockets that all set
 * the option may bind the same name, and those listening on it form a
 * group.  The first to listen owns tcp/'s listener (and its options); each
 * connection goes to one member's accept queue, chosen by a hash of the
 * peer's address and port, so one peer's connections go to one member.
 * A member that closes resets what waits in its queue (Linux, without
 * net.ipv4.tcp_migrate_req); the owner hands tcp/'s listener to the next
 * member.  Engines never share a socket: with several, each engine's
 * thread listens on its own and RSS spreads connections among them. */
#include <string.h>

#include "stack/sock/socket_priv.h"

bool us_sock_reuseport_shares(const struct us_sock *a, const struct us_sock *b)
{
	return a->reuseport && b->reuseport;
}

/* The listening socket of this table on exactly s's name, or NULL. */
static struct us_sock *rp_find_owner(const struct us_sock *s)
{
	const struct us_sock_table *tab = s->tab;

	for (unsigned i = 1; i < tab->cap; i++) {
		struct us_sock *o = tab->socks[i];

		if (o != NULL && o != s && o->kind == US_SK_TCP && o->state == US_SS_LISTEN &&
		    o->lport == s->lport && us_in6_eq(&o->lip, &s->lip) &&
		    o->v6only == s->v6only && us_sock_reuseport_shares(o, s))
			return o->rp_owner != NULL ? o->rp_owner : o;
	}
	return NULL;
}

bool us_sock_reuseport_join(struct us_sock *s)
{
	struct us_sock *o;

	if (!s->reuseport || (o = rp_find_owner(s)) == NULL)
		return false;
	o->rp_owner = o;
	s->rp_owner = o;
	s->rp_next = o->rp_next;
	o->rp_next = s;
	return true;
}

struct us_sock *us_sock_reuseport_pick(struct us_sock *owner, struct tcp_conn *tc)
{
	struct us_sock *m;
	struct us_in6 ip;
	uint16_t port;
	uint32_t h = 2166136261u, n = 0;

	if (owner->rp_owner == NULL)
		return owner;
	tcp_conn_peer(tc, &ip, &port);
	/* FNV-1a of the peer's address and port: a peer's connections stay
	 * with one member, peers spread over all. */
	for (unsigned i = 0; i < sizeof(ip.b); i++)
		h = (h ^ ip.b[i]) * 16777619u;
	h = ((h ^ (port & 0xff)) * 16777619u ^ (port >> 8)) * 16777619u;
	for (m = owner; m != NULL; m = m->rp_next)
		n++;
	for (m = owner, n = h % n; n > 0; n--)
		m = m->rp_next;
	return m;
}

bool us_sock_reuseport_leave(struct us_sock *s)
{
	struct us_sock *o = s->rp_owner, *m, *next;

	if (o == NULL)
		return false;
	s->rp_owner = NULL;
	if (s != o) {
		for (m = o; m->rp_next != s; m = m->rp_next)
			;
		m->rp_next = s->rp_next;
		s->rp_next = NULL;
		if (o->rp_next == NULL)
			o->rp_owner = NULL; /* alone again */
		return true;
	}
	/* The owner goes: the next member takes tcp/'s listener. */
	next = s->rp_next;
	s->rp_next = NULL;
	tcp_listener_set_ctx(s->tab->ts, &s->lip, s->lport, next);
	(void)tcp_listener_set_opts(s->tab->ts, &s->lip, s->lport, &next->o);
	for (m = next; m != NULL; m = m->rp_next)
		m->rp_owner = next->rp_next != NULL ? next : NULL;
	return true;
}
