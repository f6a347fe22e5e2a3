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

static uint32_t tuple_hash(const struct tcp_stack *ts, uint32_t lip, uint16_t lport,
			   uint32_t rip, uint16_t rport)
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

struct tcp_conn *tcp_table_lookup(struct tcp_stack *ts, uint32_t lip, uint16_t lport,
				  uint32_t rip, uint16_t rport)
{
	uint32_t h = tuple_hash(ts, lip, lport, rip, rport);
	struct tcp_conn *c;

	LIST_FOREACH(c, &ts->buckets[h & (ts->nbuckets - 1)], hash_link) {
		if (c->hash == h && c->local_port == lport && c->remote_port == rport &&
		    c->local_ip == lip && c->remote_ip == rip)
			return c;
	}
	return NULL;
}

void tcp_table_insert(struct tcp_stack *ts, struct tcp_conn *c)
{
	c->hash = tuple_hash(ts, c->local_ip, c->local_port, c->remote_ip, c->remote_port);
	LIST_INSERT_HEAD(&ts->buckets[c->hash & (ts->nbuckets - 1)], c, hash_link);
	ts->nconns++;
	ts->nstate[c->state]++;
	if (ts->env.conn_event != NULL)
		ts->env.conn_event(ts->env.ctx, c->local_ip, c->local_port, c->remote_ip,
				   c->remote_port, true);
}

void tcp_table_remove(struct tcp_conn *c)
{
	const struct tcp_env *env = &c->ts->env;

	LIST_REMOVE(c, hash_link);
	c->ts->nconns--;
	c->ts->nstate[c->state]--;
	if (env->conn_event != NULL)
		env->conn_event(env->ctx, c->local_ip, c->local_port, c->remote_ip,
				c->remote_port, false);
}

/* A listener bound to 0 (any address) matches every local address. */
struct tcp_conn *tcp_listener_lookup(struct tcp_stack *ts, uint32_t lip, uint16_t port)
{
	struct tcp_conn *l, *any = NULL;

	LIST_FOREACH(l, &ts->listeners[port % TCP_LISTEN_BUCKETS], hash_link) {
		if (l->local_port != port)
			continue;
		if (l->local_ip == lip)
			return l;
		if (l->local_ip == 0)
			any = l;
	}
	return any;
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

/* Next free local port for (local_ip, *, rip, rport), round robin over the
 * ephemeral range, skipping ports env.port_ok refuses (Seastar-style: with
 * several engines the replies must hash to the caller's queue). */
int tcp_ephemeral_port(struct tcp_stack *ts, uint32_t rip, uint16_t rport, uint16_t *port)
{
	const unsigned range = TCP_EPHEMERAL_HI - TCP_EPHEMERAL_LO + 1;

	for (unsigned i = 0; i < range; i++) {
		uint16_t p = ts->next_ephemeral;

		ts->next_ephemeral = (uint16_t)(p >= TCP_EPHEMERAL_HI ? TCP_EPHEMERAL_LO : p + 1u);
		if (tcp_listener_lookup(ts, ts->env.local_ip, p) != NULL)
			continue;
		if (ts->env.port_ok != NULL && !ts->env.port_ok(ts->env.ctx, rip, rport, p))
			continue;
		if (tcp_table_lookup(ts, ts->env.local_ip, p, rip, rport) == NULL) {
			*port = p;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}
