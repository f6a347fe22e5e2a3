/* tcp/walk.c: read-only walks over a stack's TCBs for operations tooling
 * (stack/engine/telemetry.c builds its `ss -ti`-like listing with them).
 *
 * Like every other tcp/ call these run on the engine's core only: the walk
 * reads the connection table as it is, so the callback must not open, close
 * or free connections.
 */
#include "tcp/tcb.h"

unsigned tcp_conn_walk(const struct tcp_stack *ts, tcp_walk_fn fn, void *arg)
{
	const struct tcp_conn *c;
	unsigned n = 0;

	for (unsigned i = 0; i < RTE_DIM(ts->listeners); i++)
		LIST_FOREACH(c, &ts->listeners[i], hash_link) {
			n++;
			if (fn(arg, c) != 0)
				return n;
		}
	for (uint32_t i = 0; i < ts->nbuckets; i++)
		LIST_FOREACH(c, &ts->buckets[i], hash_link) {
			n++;
			if (fn(arg, c) != 0)
				return n;
		}
	return n;
}

void tcp_conn_addrs(const struct tcp_conn *c, struct tcp_conn_addrs *a)
{
	a->local_ip = c->local_ip;
	a->remote_ip = c->remote_ip;
	a->local_port = c->local_port;
	a->remote_port = c->remote_port;
	a->state = (uint8_t)c->state;
	a->listener = c->state == TCP_LISTEN;
	a->sndq_bytes = c->sndq.bytes;
	a->rcvq_bytes = c->rcvq.bytes;
}

bool tcp_state_is_current_estab(uint8_t state)
{
	/* RFC 4022 tcpCurrEstab: "currently ESTABLISHED or CLOSE-WAIT". */
	return state == TCP_ESTABLISHED || state == TCP_CLOSE_WAIT;
}
