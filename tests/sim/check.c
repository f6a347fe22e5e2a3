/* tests/sim/check.c: the invariants checked at every event, over every TCB
 * of every engine (tcp/walk.c), and the coverage they record.
 *
 *  - SND.UNA <= SND.NXT <= SND.MAX (RFC 9293 3.3.1, with SND.MAX as RFC
 *    6675 and our go-back-N after an RTO keep it);
 *  - cwnd >= 1 SMSS once the connection is synchronized (RFC 5681 3.1: the
 *    loss window is one segment, never less), outside fast recovery: inside,
 *    PRR sets cwnd = pipe + sndcnt (RFC 9937 6.2), below one SMSS when
 *    little is in flight, and what may be sent is sndcnt, not cwnd;
 *  - the SACK scoreboard within [SND.UNA, SND.MAX], ascending, disjoint;
 *  - the right edge of the receive window never moves left (RFC 9293
 *    3.8.6.2.2: a receiver should not shrink the window), tracked per
 *    connection (stack, ports, address, ISS) across events and engines.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/tcb.h"
#include "tcp/tcp.h"
#include "tests/sim/world.h"

#define TRACK_SLOTS 1024u /* connections tracked, unless the world's options say */

struct track {
	bool used;
	uint8_t state;
	uint16_t lport, rport;
	struct us_in6 rip;
	uint32_t iss;
	unsigned stack;
	bool edge_valid;
	uint32_t edge;
};

struct sim_check {
	unsigned slots;
	struct track *t;
	/* Segments in and out per engine at its last check: a TCB's sequence
	 * numbers, window and cwnd change only with a segment. */
	uint64_t segs[SIM_STACKS_MAX][SIM_ENGINES_MAX];
};

struct walk_ctx {
	struct sim_world *w;
	unsigned stack, eng;
};

void sim_check_init(struct sim_world *w)
{
	unsigned slots = w->opts.check_slots ? w->opts.check_slots : TRACK_SLOTS;

	w->check = calloc(1, sizeof(*w->check));
	if (w->check == NULL || (w->check->t = calloc(slots, sizeof(struct track))) == NULL)
		sim_fail(w, "out of memory");
	w->check->slots = slots;
}

void sim_check_free(struct sim_world *w)
{
	if (w->check != NULL)
		free(w->check->t);
	free(w->check);
	w->check = NULL;
}

static struct track *track_of(struct sim_world *w, unsigned stack, const struct tcp_conn *c)
{
	uint32_t h = (c->iss * 2654435761u) ^ c->remote_port ^ ((uint32_t)c->local_port << 16) ^ stack;

	for (unsigned i = 0; i < w->check->slots; i++) {
		struct track *t = &w->check->t[(h + i) % w->check->slots];

		if (!t->used) {
			*t = (struct track){ .used = true, .state = (uint8_t)c->state,
					     .lport = c->local_port, .rport = c->remote_port,
					     .rip = c->remote_ip, .iss = c->iss, .stack = stack };
			return t;
		}
		if (t->stack == stack && t->iss == c->iss && t->lport == c->local_port &&
		    t->rport == c->remote_port && us_in6_eq(&t->rip, &c->remote_ip))
			return t;
	}
	return NULL; /* full: this one goes untracked */
}

/* "local -> remote" of c, as [addr]:port, for a failure report. */
static const char *tcb_str(const struct tcp_conn *c)
{
	static char out[2 * US_IN6_EPSTRLEN + 8];
	char l[US_IN6_EPSTRLEN], r[US_IN6_EPSTRLEN];

	us_in6_endpoint_str(&c->local_ip, c->local_port, l, sizeof(l));
	us_in6_endpoint_str(&c->remote_ip, c->remote_port, r, sizeof(r));
	snprintf(out, sizeof(out), "%s -> %s", l, r);
	return out;
}

static bool synchronized(enum tcp_state s)
{
	return s >= TCP_ESTABLISHED && s <= TCP_TIME_WAIT;
}

static void check_seq(struct sim_world *w, const struct walk_ctx *x, const struct tcp_conn *c)
{
	if (!SEQ_LEQ(c->snd_una, c->snd_nxt) || !SEQ_LEQ(c->snd_nxt, c->snd_max))
		sim_fail(w, "stack %u engine %u %s %s: SND.UNA %u SND.NXT %u SND.MAX %u out of order",
			 x->stack, x->eng, tcb_str(c), tcp_state_str((uint8_t)c->state),
			 c->snd_una - c->iss, c->snd_nxt - c->iss, c->snd_max - c->iss);
	if (synchronized(c->state) && !c->loss.in_recovery && c->mss > 0 && c->cwnd < c->mss)
		sim_fail(w, "stack %u %s %s: cwnd %u below one SMSS (%u), ssthresh %u, %s, una %u nxt %u max %u, rtos %lu, episodes %lu",
			 x->stack, tcb_str(c), tcp_state_str((uint8_t)c->state),
			 c->cwnd, c->mss, c->ssthresh, c->loss.in_recovery ? "in recovery" : "not in recovery",
			 c->snd_una - c->iss, c->snd_nxt - c->iss, c->snd_max - c->iss,
			 (unsigned long)c->loss.rtos, (unsigned long)c->loss.recovery_episodes);
}

static void check_scoreboard(struct sim_world *w, const struct walk_ctx *x, const struct tcp_conn *c)
{
	const struct tcp_sb *sb = &c->sb;

	for (unsigned i = 0; i < sb->n; i++) {
		const struct tcp_sb_range *r = &sb->r[i];

		if (!SEQ_LT(r->start, r->end) || SEQ_LT(r->start, c->snd_una) ||
		    SEQ_GT(r->end, c->snd_max) || (i > 0 && !SEQ_LT(sb->r[i - 1].end, r->start)))
			sim_fail(w, "stack %u %s: SACK range %u [%u, %u) outside [SND.UNA %u, SND.MAX %u] or out of order",
				 x->stack, tcb_str(c), i, r->start - c->iss,
				 r->end - c->iss, c->snd_una - c->iss, c->snd_max - c->iss);
	}
}

static void record(struct sim_world *w, struct track *t, const struct tcp_conn *c)
{
	unsigned from = t->state, to = (unsigned)c->state;

	w->n.states_seen |= 1ull << to;
	if (from != to) {
		unsigned bit = from * TCP_STATE_COUNT + to;

		w->n.trans_seen[bit / 64] |= 1ull << (bit % 64);
		t->state = (uint8_t)to;
	}
}

static int check_one(void *arg, const struct tcp_conn *c)
{
	struct walk_ctx *x = arg;
	struct sim_world *w = x->w;
	struct track *t;

	if (c->state == TCP_LISTEN)
		return 0;
	check_seq(w, x, c);
	check_scoreboard(w, x, c);
	t = track_of(w, x->stack, c);
	if (t == NULL)
		return 0;
	record(w, t, c);
	if (synchronized(c->state) && c->state != TCP_TIME_WAIT) {
		if (t->edge_valid && SEQ_LT(c->rcv_adv, t->edge))
			sim_fail(w, "stack %u %s %s: the receive window's right edge moved left by %u (RCV.NXT %u)",
				 x->stack, tcb_str(c), tcp_state_str((uint8_t)c->state),
				 t->edge - c->rcv_adv, c->rcv_nxt - c->irs);
		t->edge = c->rcv_adv;
		t->edge_valid = true;
	}
	return 0;
}

void sim_check_event(struct sim_world *w)
{
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			struct walk_ctx x = { .w = w, .stack = i, .eng = k };
			struct tcp_stack *ts = us_engine_tcp(w->st[i].eng[k].e);
			const struct tcp_stats *st = tcp_stack_stats(ts);
			uint64_t segs = st->rx_segs + st->tx_segs;

			if (segs == w->check->segs[i][k] || tcp_conn_count(ts) == 0)
				continue;
			w->check->segs[i][k] = segs;
			tcp_conn_walk(ts, check_one, &x);
		}
}

unsigned sim_check_tcbs(const struct sim_world *w)
{
	unsigned n = 0;

	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++)
			n += tcp_conn_count(us_engine_tcp(w->st[i].eng[k].e));
	return n;
}

struct print_ctx {
	FILE *f;
	unsigned stack, eng;
	unsigned left;             /* lines still to print (UINT_MAX: all) */
};

static int print_one(void *arg, const struct tcp_conn *c)
{
	struct print_ctx *p = arg;
	char peer[US_IN6_EPSTRLEN];

	if (c->state == TCP_LISTEN)
		return 0;
	if (p->left == 0)
		return 1;
	p->left--;
	us_in6_endpoint_str(&c->remote_ip, c->remote_port, peer, sizeof(peer));
	fprintf(p->f, "  stack %u engine %u: %s %u -> %s una %u nxt %u max %u wnd %u cwnd %u rto %u ms backoff %u retries %u rtos %lu"
		" rcv_nxt %u rcv_adv %u sndq %u rcvq %u app_closed %d timers",
		p->stack, p->eng, tcp_state_str((uint8_t)c->state), c->local_port, peer,
		c->snd_una - c->iss, c->snd_nxt - c->iss, c->snd_max - c->iss,
		c->snd_wnd, c->cwnd, c->rto_ms, c->backoff, c->retries, (unsigned long)c->loss.rtos,
		c->rcv_nxt - c->irs, c->rcv_adv - c->irs, c->sndq.bytes, c->rcvq.bytes, c->app_closed);
	for (unsigned t = 0; t < TCP_T_COUNT; t++)
		fprintf(p->f, " %lu", (unsigned long)(c->deadline[t] ? c->deadline[t] / 1000000 : 0));
	fprintf(p->f, "\n");
	return 0;
}

void sim_check_print_tcbs(const struct sim_world *w, FILE *f, unsigned max)
{
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			struct print_ctx p = { .f = f, .stack = i, .eng = k, .left = max ? max : UINT_MAX };
			struct tcp_state_gauges g;

			tcp_stack_state_gauges(us_engine_tcp(w->st[i].eng[k].e), &g);
			fprintf(f, "  stack %u engine %u gauges:", i, k);
#define SIM_X_GAUGE(name, state, desc) fprintf(f, " " #name " %u", g.name);
			TCP_STATE_GAUGES(SIM_X_GAUGE)
#undef SIM_X_GAUGE
			fprintf(f, "\n");

			tcp_conn_walk(us_engine_tcp(w->st[i].eng[k].e), print_one, &p);
		}
}
