/* tcp/table.c: connection lookup by 4-tuple, listeners by port, ephemeral
 * ports.
 *
 * An open hash with chaining (LIST per bucket) sized from max_conns; the hash
 * of the 4-tuple is keyed (SipHash-1-3 with a per-boot random key, see
 * tcp/tuple_hash.h for why that is safe) so a peer cannot aim its
 * connections at one bucket, and stored in the TCB so removal needs no
 * rehash.  Listeners are few: 64 buckets by port.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/tcb.h"
#include "tcp/tuple_hash.h"

#define TCP_LISTEN_BUCKETS 64u

static uint32_t tuple_hash(const struct tcp_stack *ts, const struct us_in6 *lip,
			   uint16_t lport, const struct us_in6 *rip, uint16_t rport)
{
	return tcp_tuple_hash(ts->hash_key, lip, lport, rip, rport);
}

int tcp_table_init(struct tcp_stack *ts)
{
	uint32_t n = 64;

	/* About two TCBs per bucket at the limit. */
	while (n < ts->cfg.max_conns / 2 && n < (1u << 20))
		n <<= 1;
	ts->buckets = calloc(n, sizeof(*ts->buckets));
	if (ts->buckets == NULL)
		return -ENOMEM;
	ts->nbuckets = n;
	for (uint32_t i = 0; i < n; i++)
		LIST_INIT(&ts->buckets[i]);
	for (unsigned i = 0; i < TCP_LISTEN_BUCKETS; i++)
		LIST_INIT(&ts->listeners[i]);
	return 0;
}

void tcp_table_fini(struct tcp_stack *ts)
{
	free(ts->buckets);
	ts->buckets = NULL;
}

struct tcp_conn *tcp_table_lookup(struct tcp_stack *ts, const struct us_in6 *lip,
				  uint16_t lport, const struct us_in6 *rip, uint16_t rport)
{
	uint32_t h = tuple_hash(ts, lip, lport, rip, rport);
	struct tcp_conn *c;

	LIST_FOREACH(c, &ts->buckets[h & (ts->nbuckets - 1)], hash_link) {
		if (c->hash == h && c->local_port == lport && c->remote_port == rport &&
		    us_in6_eq(&c->remote_ip, rip) && us_in6_eq(&c->local_ip, lip))
			return c;
	}
	return NULL;
}

void tcp_table_insert(struct tcp_stack *ts, struct tcp_conn *c)
{
	c->hash = tuple_hash(ts, &c->local_ip, c->local_port, &c->remote_ip, c->remote_port);
	/* Set once: a connection moved to another engine keeps its label. */
	if (c->flow_label == 0)
		c->flow_label = tcp_flow_label(ts, &c->local_ip, c->local_port, &c->remote_ip,
					       c->remote_port);
	LIST_INSERT_HEAD(&ts->buckets[c->hash & (ts->nbuckets - 1)], c, hash_link);
	ts->nconns++;
	ts->nstate[c->state]++;
	if (ts->env.conn_event != NULL)
		ts->env.conn_event(ts->env.ctx, &c->local_ip, c->local_port, &c->remote_ip,
				   c->remote_port, true);
}

void tcp_table_remove(struct tcp_conn *c)
{
	const struct tcp_env *env = &c->ts->env;

	LIST_REMOVE(c, hash_link);
	c->ts->nconns--;
	c->ts->nstate[c->state]--;
	if (env->conn_event != NULL)
		env->conn_event(env->ctx, &c->local_ip, c->local_port, &c->remote_ip,
				c->remote_port, false);
}

/* Does the wildcard listener l take segments to an address of this
 * family?  ::ffff:0.0.0.0 takes IPv4; :: takes IPv6, and IPv4 too unless
 * V6ONLY (Linux's inet6 listeners, net.ipv6.bindv6only). */
static bool listener_wild_takes(const struct tcp_conn *l, bool v4)
{
	static const struct us_in6 v4any = { .b = { [10] = 0xff, [11] = 0xff } };

	if (us_in6_is_unspec(&l->local_ip))
		return !v4 || !l->listen_v6only;
	return v4 && us_in6_eq(&l->local_ip, &v4any);
}

struct tcp_conn *tcp_listener_lookup(struct tcp_stack *ts, const struct us_in6 *lip,
				     uint16_t port)
{
	bool v4 = us_in6_is_v4mapped(lip);
	struct tcp_conn *l, *any = NULL;

	LIST_FOREACH(l, &ts->listeners[port % TCP_LISTEN_BUCKETS], hash_link) {
		if (l->local_port != port)
			continue;
		if (us_in6_eq(&l->local_ip, lip))
			return l;
		/* A family's own wildcard before the dual-stack one, as Linux
		 * scores an AF_INET listener above an AF_INET6 one. */
		if (listener_wild_takes(l, v4) &&
		    (any == NULL || us_in6_is_unspec(&any->local_ip)))
			any = l;
	}
	return any;
}

struct tcp_conn *tcp_listener_exact(struct tcp_stack *ts, const struct us_in6 *lip,
				    uint16_t port)
{
	struct tcp_conn *l;

	LIST_FOREACH(l, &ts->listeners[port % TCP_LISTEN_BUCKETS], hash_link)
		if (l->local_port == port && us_in6_eq(&l->local_ip, lip))
			return l;
	return NULL;
}

void tcp_listener_insert(struct tcp_stack *ts, struct tcp_conn *l)
{
	LIST_INSERT_HEAD(&ts->listeners[l->local_port % TCP_LISTEN_BUCKETS], l, hash_link);
	ts->nstate[TCP_LISTEN]++;
}

void tcp_listener_remove(struct tcp_conn *l)
{
	LIST_REMOVE(l, hash_link);
	l->ts->nstate[TCP_LISTEN]--;
}

/* Next free local port for (lip, *, rip, rport), round robin over the
 * ephemeral range, skipping ports env.port_ok refuses (Seastar-style: with
 * several engines the replies must hash to the caller's queue). */
int tcp_ephemeral_port(struct tcp_stack *ts, const struct us_in6 *lip,
		       const struct us_in6 *rip, uint16_t rport, uint16_t *port)
{
	const unsigned range = TCP_EPHEMERAL_HI - TCP_EPHEMERAL_LO + 1;

	for (unsigned i = 0; i < range; i++) {
		uint16_t p = ts->next_ephemeral;

		ts->next_ephemeral = (uint16_t)(p >= TCP_EPHEMERAL_HI ? TCP_EPHEMERAL_LO : p + 1u);
		if (tcp_listener_lookup(ts, lip, p) != NULL)
			continue;
		if (ts->env.port_ok != NULL && !ts->env.port_ok(ts->env.ctx, lip, rip, rport, p))
			continue;
		if (tcp_table_lookup(ts, lip, p, rip, rport) == NULL) {
			*port = p;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}
