/* tcp/tcb.c: TCB lifetime, state names, event delivery, ISN. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "tcp/tcb.h"

static const char *const state_names[TCP_STATE_COUNT] = {
	[TCP_CLOSED] = "CLOSED",
	[TCP_LISTEN] = "LISTEN",
	[TCP_SYN_SENT] = "SYN-SENT",
	[TCP_SYN_RECEIVED] = "SYN-RECEIVED",
	[TCP_ESTABLISHED] = "ESTABLISHED",
	[TCP_FIN_WAIT_1] = "FIN-WAIT-1",
	[TCP_FIN_WAIT_2] = "FIN-WAIT-2",
	[TCP_CLOSE_WAIT] = "CLOSE-WAIT",
	[TCP_CLOSING] = "CLOSING",
	[TCP_LAST_ACK] = "LAST-ACK",
	[TCP_TIME_WAIT] = "TIME-WAIT",
};

const char *tcp_state_str(uint8_t state)
{
	return state < TCP_STATE_COUNT ? state_names[state] : "?";
}

bool tcb_synchronized(const struct tcp_conn *c)
{
	return c->state >= TCP_SYN_RECEIVED;
}

void tcp_mq_push(struct tcp_mq *q, struct rte_mbuf *m)
{
	m->next = NULL;
	if (q->tail)
		q->tail->next = m;
	else
		q->head = m;
	q->tail = m;
	q->bytes += m->data_len;
}

struct rte_mbuf *tcp_mbuf_take_piece(struct rte_mbuf **chain, uint32_t *skip, uint32_t *len)
{
	struct rte_mbuf *s;

	while ((s = *chain) != NULL) {
		*chain = s->next;
		s->next = NULL;
		s->nb_segs = 1;
		if (*skip >= s->data_len || *len == 0) {
			*skip -= RTE_MIN(*skip, (uint32_t)s->data_len);
			rte_pktmbuf_free_seg(s);
			continue;
		}
		s->data_off += (uint16_t)*skip;
		s->data_len -= (uint16_t)*skip;
		*skip = 0;
		if (s->data_len > *len)
			s->data_len = (uint16_t)*len;
		*len -= s->data_len;
		s->pkt_len = s->data_len;
		return s;
	}
	return NULL;
}

void tcp_mq_free(struct tcp_mq *q)
{
	struct rte_mbuf *m = q->head, *next;

	for (; m != NULL; m = next) {
		next = m->next;
		m->next = NULL;
		m->nb_segs = 1;
		rte_pktmbuf_free_seg(m);
	}
	*q = (struct tcp_mq){ 0 };
}

/* TCBs kept for reuse per stack.  A sanitizer build keeps none, so that a
 * use after free stays a use after free. */
#define TCB_CACHE_MAX 256u
#if defined(__SANITIZE_ADDRESS__)
#define TCB_CACHE_ON false
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TCB_CACHE_ON false
#endif
#endif
#ifndef TCB_CACHE_ON
#define TCB_CACHE_ON true
#endif

static void tcb_free(struct tcp_stack *ts, struct tcp_conn *c)
{
	if (!TCB_CACHE_ON || ts->tcb_cached >= TCB_CACHE_MAX) {
		free(c);
		return;
	}
	c->defer_next = ts->tcb_cache;
	ts->tcb_cache = c;
	ts->tcb_cached++;
}

void tcb_cache_fini(struct tcp_stack *ts)
{
	struct tcp_conn *c;

	while ((c = ts->tcb_cache) != NULL) {
		ts->tcb_cache = c->defer_next;
		free(c);
	}
	ts->tcb_cached = 0;
}

struct tcp_conn *tcb_alloc(struct tcp_stack *ts)
{
	struct tcp_conn *c = ts->tcb_cache;

	if (c != NULL) {
		ts->tcb_cache = c->defer_next;
		ts->tcb_cached--;
		memset(c, 0, sizeof(*c));
	} else if ((c = calloc(1, sizeof(*c))) == NULL) {
		return NULL;
	}
	c->ts = ts;
	c->state = TCP_CLOSED;
	c->rto_ms = ts->cfg.rto_initial_ms;
	c->rcvbuf = ts->cfg.rcvbuf;
	c->mss = TCP_DEFAULT_MSS;
	c->rcv_mss = TCP_DEFAULT_MSS;
	c->ssthresh = UINT32_MAX;
	LIST_INIT(&c->embryo_list);
	tcp_sb_init(&c->sb);
	tcp_timer_init(c);
	return c;
}

void tcb_drop(struct tcp_conn *c)
{
	struct tcp_stack *ts = c->ts;

	if (c->dead)
		return;
	tcp_timer_stop_all(c);
	tcp_loss_on_drop(c);
	if (c->state == TCP_LISTEN) {
		tcp_listener_remove(c);
	} else {
		tcp_table_remove(c);
		if (c->listener) {
			tcp_tfo_on_drop(c); /* RFC 7413 5.1: pending slot back */
			LIST_REMOVE(c, link);
			c->listener->embryos--;
			c->listener = NULL;
		}
	}
	/* Queued data is useless from here on: give the mbufs back now. */
	tcp_mq_free(&c->sndq);
	tcp_mq_free(&c->rcvq);
	tcp_reass_free(c);
	tcp_sb_clear(&c->sb); /* no memory of its own: nothing to free */
	tcp_rack_free(c);
	c->state = TCP_CLOSED;
	c->dead = true;
	LIST_INSERT_HEAD(&ts->dead, c, link);
}

void tcb_set_closed(struct tcp_conn *c, int err)
{
	if (c->app_closed || c->closed_notified)
		return;
	c->ev |= TCP_EV_CLOSED;
	c->ev_err = err;
}

/* Called with the TCB consistent; callbacks may call back into tcp/. */
void tcb_notify(struct tcp_conn *c)
{
	while (c->ev != 0 && !c->app_closed) {
		/* Lowest bit first: the TCP_EV_* values are in delivery order,
		 * closed last because c is invalid afterwards. */
		unsigned one = c->ev & -c->ev;

		c->ev &= ~one;
		switch (one) {
		case TCP_EV_ACCEPT:
			if (c->cb.on_accept)
				c->cb.on_accept(c->ctx, c);
			break;
		case TCP_EV_CONNECTED:
			if (c->cb.on_connected)
				c->cb.on_connected(c->ctx, c);
			break;
		case TCP_EV_READABLE:
			if (c->cb.on_readable)
				c->cb.on_readable(c->ctx, c);
			break;
		case TCP_EV_WRITABLE:
			c->want_writable = false;
			if (c->cb.on_writable)
				c->cb.on_writable(c->ctx, c);
			break;
		case TCP_EV_CLOSED:
			c->closed_notified = true;
			c->ev = 0;
			/* Unread data is unreachable once the app lets go of c. */
			tcp_mq_free(&c->rcvq);
			if (c->cb.on_closed)
				c->cb.on_closed(c->ctx, c, c->ev_err);
			return;
		}
	}
	if (c->app_closed)
		c->ev = 0;
}

void tcp_enter(struct tcp_stack *ts)
{
	ts->depth++;
}

/* Frees dead TCBs once no caller up the stack can hold one. */
void tcp_leave(struct tcp_stack *ts)
{
	struct tcp_conn *c;

	/* Deferred output first, still inside (depth 1): its segments may
	 * free nothing a caller holds, and dead TCBs are skipped. */
	if (ts->depth == 1 && ts->defer_head != NULL)
		tcp_output_flush(ts);
	if (--ts->depth != 0)
		return;
	while ((c = LIST_FIRST(&ts->dead)) != NULL) {
		LIST_REMOVE(c, link);
		tcp_mq_free(&c->sndq);
		tcp_mq_free(&c->rcvq);
		tcp_reass_free(c);
		tcb_free(ts, c);
	}
}

unsigned tcp_tuple_bytes(const struct us_in6 *lip, uint16_t lport, const struct us_in6 *rip,
			 uint16_t rport, uint8_t out[TCP_TUPLE_BYTES_MAX])
{
	unsigned alen = us_in6_is_v4mapped(rip) ? 4 : 16, from = 16 - alen;

	memcpy(out, lip->b + from, alen);
	memcpy(out + alen, rip->b + from, alen);
	memcpy(out + 2 * alen, &lport, 2);
	memcpy(out + 2 * alen + 2, &rport, 2);
	return 2 * alen + 4;
}

/* SipHash-2-4 (libsodium) of a 4-tuple's bytes (tcp_tuple_bytes) under key. */
static uint32_t tuple_mac(const unsigned char *key, const struct us_in6 *lip, uint16_t lport,
			  const struct us_in6 *rip, uint16_t rport)
{
	uint8_t in[TCP_TUPLE_BYTES_MAX], out[crypto_shorthash_BYTES];
	uint32_t f;

	crypto_shorthash(out, in, tcp_tuple_bytes(lip, lport, rip, rport, in), key);
	memcpy(&f, out, sizeof(f));
	return f;
}

/* RFC 6528: ISN = M + F(localip, localport, remoteip, remoteport, secretkey),
 * M a 4 microsecond clock (here the wheel's now), F SipHash (libsodium). */
uint32_t tcp_isn(struct tcp_stack *ts, const struct us_in6 *lip, uint16_t lport,
		 const struct us_in6 *rip, uint16_t rport)
{
	return tuple_mac(ts->isn_key, lip, lport, rip, rport) +
	       (uint32_t)(us_timer_now(ts->env.wheel) / 4000u);
}

/* Two SipHash outputs of the ISN key over constants of their own: a key
 * no label or ISN reveals (a PRF's outputs on distinct inputs), without a
 * random draw of its own, so a seeded simulation draws what it drew
 * before IPv6 and its recorded worlds replay. */
void tcp_flow_key_init(struct tcp_stack *ts)
{
	static const char label[2][16] = { "flow label key 0", "flow label key 1" };

	crypto_shorthash(ts->flow_key, (const unsigned char *)label[0], sizeof(label[0]),
			 ts->isn_key);
	crypto_shorthash(ts->flow_key + 8, (const unsigned char *)label[1], sizeof(label[1]),
			 ts->isn_key);
}

/* RFC 6437 3: a flow's label is a hash of its 5-tuple with a secret, so
 * that a router's ECMP keeps the flow on one path and an outsider cannot
 * guess it; 20 bits under a key of its own (a label is seen on the wire,
 * an ISN's hash must not be).  Like Linux's auto flow labels, never 0 (0
 * means "no label"). */
uint32_t tcp_flow_label(const struct tcp_stack *ts, const struct us_in6 *lip, uint16_t lport,
			const struct us_in6 *rip, uint16_t rport)
{
	uint32_t f = tuple_mac(ts->flow_key, lip, lport, rip, rport) & 0xfffffu;

	return f != 0 ? f : 1;
}
