/* tcp/tcb_migrate.c: moving a synchronized connection from one engine's
 * tcp_stack to another's (the engine's side is stack/engine/migrate.c).
 *
 * The parcel is the TCB itself, taken out of everything its stack keeps
 * about it: the 4-tuple table (whose conn_event hook takes the flow rule
 * away; table.c moves the connection count and the state gauge with it)
 * and the wheel (its deadlines are kept as they are; attach shifts them).
 * Nothing else of an ESTABLISHED or CLOSE-WAIT TCB belongs to the stack:
 * no listener (embryo lists end at ESTABLISHED), no dead list, no Fast
 * Open slot.  Its queues (send, receive, out-of-order) travel with it:
 * mbufs of the source engine's pool, which is a ring_mp_mc mempool
 * (rte_pktmbuf_pool_create's default), so the target engine may free them
 * on its own lcore; the source's TX path may still hold indirect mbufs
 * referencing the send queue, whose reference counts are atomic.
 *
 * Time: every absolute time in the TCB is the source wheel's clock.  Attach
 * moves each one by (target now - source now at detach), so an RTO with
 * 120 ms left still has 120 ms left on the target's wheel, and our TSval
 * (RFC 7323 5.4: a per-connection offset is allowed) keeps counting from
 * where the peer last saw it (its PAWS check stays happy). */
#include <errno.h>
#include <stdlib.h>

#include "tcp/tcb.h"

struct tcp_parcel {
	struct tcp_conn *c;
	uint64_t from_ns; /* the source wheel's now at detach */
};

int tcp_migrate_detach(struct tcp_conn *c, struct tcp_parcel **out)
{
	struct tcp_stack *ts = c->ts;
	struct tcp_parcel *p;

	if (c->dead || c->app_closed || c->listener != NULL ||
	    (c->state != TCP_ESTABLISHED && c->state != TCP_CLOSE_WAIT))
		return -EINVAL;
	/* Inside tcp/ (a callback): a caller up the stack holds c. */
	if (ts->depth != 0 || c->ev != 0)
		return -EBUSY;
	p = malloc(sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->c = c;
	p->from_ns = tcp_now(c);
	us_timer_cancel(ts->env.wheel, &c->timer);
	tcp_table_remove(c);
	c->ts = NULL;
	c->cb = (struct tcp_callbacks){ 0 };
	c->ctx = NULL;
	*out = p;
	return 0;
}

void tcp_parcel_free(struct tcp_parcel *p)
{
	if (p == NULL)
		return;
	tcp_mq_free(&p->c->sndq);
	tcp_mq_free(&p->c->rcvq);
	tcp_reass_free(p->c);
	tcp_rack_free(p->c);
	free(p->c);
	free(p);
}

static void migrate_shift(uint64_t *t, int64_t delta, uint64_t now)
{
	int64_t v;

	if (*t == 0)
		return; /* off / never */
	v = (int64_t)*t + delta;
	*t = v <= 0 ? now : (uint64_t)v;
}

/* Every absolute time of c onto the target's clock (see the top). */
static void migrate_retime(struct tcp_conn *c, uint64_t from_ns, uint64_t now)
{
	int64_t delta = (int64_t)(now - from_ns);
	uint64_t dl[TCP_T_COUNT];

	migrate_shift(&c->rtt_start_ns, delta, now);
	migrate_shift(&c->ts_recent_ns, delta, now);
	migrate_shift(&c->cc.epoch_ns, delta, now);
	migrate_shift(&c->loss.undo.prior.epoch_ns, delta, now);
	migrate_shift(&c->sb.dr_start_ns, delta, now);
	tcp_rack_retime(c, delta);
	/* The user timeout's start, tcp_info's ages and chronograph. */
	migrate_shift(&c->ut_start_ns, delta, now);
	migrate_shift(&c->last_heard_ns, delta, now);
	migrate_shift(&c->last_data_sent_ns, delta, now);
	migrate_shift(&c->last_data_rcvd_ns, delta, now);
	migrate_shift(&c->chrono_start_ns, delta, now);
	/* Autotuning measures again from here (32-bit microseconds). */
	c->rcv_space_us = 0;
	/* TSval = now_ms + ts_off: keep it continuous (modulo 2^32). */
	c->ts_off += (uint32_t)(from_ns / US_MS(1)) - (uint32_t)(now / US_MS(1));
	for (unsigned k = 0; k < TCP_T_COUNT; k++) {
		dl[k] = c->deadline[k];
		migrate_shift(&dl[k], delta, now);
		c->deadline[k] = 0;
	}
	/* Re-armed one by one on the target's wheel (the earliest wins). */
	for (unsigned k = 0; k < TCP_T_COUNT; k++)
		if (dl[k] != 0)
			tcp_timer_set(c, (enum tcp_timer_kind)k, dl[k]);
}

int tcp_migrate_attach(struct tcp_stack *ts, struct tcp_parcel *p, const struct tcp_callbacks *cb,
		       void *ctx, struct tcp_conn **out)
{
	struct tcp_conn *c = p->c;

	if (tcp_table_lookup(ts, &c->local_ip, c->local_port, &c->remote_ip, c->remote_port) !=
	    NULL)
		return -EEXIST;
	if (ts->nconns >= ts->cfg.max_conns) {
		ts->stats.drop_no_tcb++;
		return -ENOBUFS;
	}
	c->ts = ts;
	c->cc.st = &ts->stats;
	c->cb = *cb;
	c->ctx = ctx;
	us_timer_init(&c->timer, c->timer.fn);
	tcp_table_insert(ts, c);
	migrate_retime(c, p->from_ns, us_timer_now(ts->env.wheel));
	free(p);
	*out = c;
	return 0;
}

/* "As if accepted there": the listener's own on_accept takes it (the
 * socket layer queues it for us_accept, the callback API calls the
 * application's handler), then on_readable if data or a FIN waits. */
int tcp_migrate_accept(struct tcp_stack *ts, struct tcp_parcel *p)
{
	struct tcp_conn *l = tcp_listener_lookup(ts, &p->c->local_ip, p->c->local_port), *c;
	int rc;

	if (l == NULL)
		return -ECONNREFUSED;
	rc = tcp_migrate_attach(ts, p, &l->cb, l->ctx, &c);
	if (rc < 0)
		return rc;
	tcp_enter(ts);
	c->ev |= TCP_EV_ACCEPT;
	if (c->rcvq.bytes > 0 || c->fin_rcvd)
		c->ev |= TCP_EV_READABLE;
	tcb_notify(c);
	tcp_leave(ts);
	return 0;
}

struct tcp_conn *tcp_conn_find(struct tcp_stack *ts, const struct us_in6 *lip, uint16_t lport,
			       const struct us_in6 *rip, uint16_t rport)
{
	return tcp_table_lookup(ts, lip, lport, rip, rport);
}

void tcp_conn_forget(struct tcp_conn *c)
{
	c->cb = (struct tcp_callbacks){ 0 };
	c->ctx = NULL;
}

void *tcp_conn_env_ctx(const struct tcp_conn *c)
{
	return c->ts->env.ctx;
}
