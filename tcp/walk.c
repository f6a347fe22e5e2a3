/* tcp/walk.c: read-only walks over a stack's TCBs for operations tooling
 * (stack/engine/telemetry.c builds its `ss -ti`-like listing with them).
 *
 * Like every other tcp/ call these run on the engine's core only: the walk
 * reads the connection table as it is, so the callback must not open, close
 * or free connections.  tcp_state_gauges_check recounts the state gauges
 * this way.
 */
#include <errno.h>
#include <stdio.h>

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

/* What the gauges should say: the tables' TCBs counted by state. */
static int gauges_count(void *arg, const struct tcp_conn *c)
{
	uint32_t *n = arg;

	n[c->state < TCP_STATE_COUNT ? c->state : TCP_CLOSED]++;
	return 0;
}

/* The first difference between the gauges and a count of the tables: the
 * name it is printed under, or NULL.  CLOSED has no gauge: its count must
 * be 0 (a TCB leaves the tables as it closes). */
static const char *gauges_diff(const struct tcp_stack *ts, const uint32_t *n, uint32_t *gauge,
			       uint32_t *table)
{
	static const char *const names[TCP_STATE_COUNT] = {
		[TCP_CLOSED] = "tcbs_closed",
#define TCP_X_GAUGE_NAME(name, state, desc) [TCP_##state] = "tcbs_" #name,
		TCP_STATE_GAUGES(TCP_X_GAUGE_NAME)
#undef TCP_X_GAUGE_NAME
	};

	for (unsigned s = 0; s < TCP_STATE_COUNT; s++) {
		if (ts->nstate[s] != n[s]) {
			*gauge = ts->nstate[s];
			*table = n[s];
			return names[s];
		}
	}
	return NULL;
}

int tcp_state_gauges_check(const struct tcp_stack *ts, char *why, size_t len)
{
	uint32_t n[TCP_STATE_COUNT] = { 0 }, gauge = 0, table = 0, conns = 0;
	const char *name;

	tcp_conn_walk(ts, gauges_count, n);
	for (unsigned s = 0; s < TCP_STATE_COUNT; s++)
		conns += s != TCP_LISTEN ? n[s] : 0;
	name = gauges_diff(ts, n, &gauge, &table);
	if (name == NULL && ts->nconns == conns)
		return 0;
	if (why != NULL && len > 0) {
		if (name != NULL)
			snprintf(why, len, "%s: gauge %u, table %u", name, gauge, table);
		else
			snprintf(why, len, "tcp_conn_count: %u, table %u", ts->nconns, conns);
	}
	return -EINVAL;
}
