/* tests/sim/storm.c: a close storm (us-sim --storm N).
 *
 * Two stacks of one engine each on the world's segment (world.c), a link
 * with a small delay and no loss (or the seed's impairment, or a spec).
 * The client opens N connections, paced so the handshakes succeed, to as
 * many server ports as the ephemeral range needs; each side sends a few
 * bytes (checked) and reads the other's.  Once every connection is idle,
 * the client closes all N at one instant (or R a second); the server
 * closes each on its end of stream.  What is measured: when every TCB of
 * each stack is gone, how long TCBs stay in each state, what the NIC
 * queues (and the wire, the pool) dropped, what the engines counted
 * (RTOs, resets, ...).  The world's own end checks still hold: every TCB
 * gone within the bound its timers give, the gauges agree with the
 * tables, the timers back to their baseline, no mbuf left.
 *
 * The NIC queue's length (a real ring has 1024 descriptors), the engine's
 * time per received frame and the link (a rate with a bounded queue is a
 * sender's TX ring) are parameters: what a burst loses depends on them.
 *
 * Per-connection lifetimes come from walks of both stacks' tables at
 * samples spaced ~3 % of the time since the last close (every 10 ms while
 * closes are paced): state changes and ends are known to that resolution.
 * The gauges are read at every round (exact times of the last TCB of each
 * state, and of each stack's last TCB).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "stack/include/us_socket.h"
#include "stack/sock/socket_priv.h"
#include "tcp/tcb.h"
#include "tcp/tcp.h"
#include "tests/sim/sim_main.h"

#define STORM_PORTS_PER_SERVER_PORT 25000u /* of the 28,232 ephemeral ports */
#define STORM_PORTS_MAX 8u                 /* server ports: 200,000 connections */
#define STORM_CTRS_MAX 64u
#define STORM_HANDSHAKES_MAX 512u          /* handshakes in flight, like us-loadgen's window */
#define STORM_SETTLE US_SEC(1)             /* idle time between the last reply and the close */
#define STORM_EVENTS 256
#define STORM_BUF 4096u
#define STORM_SLOW US_SEC(1)               /* lifetimes above this are listed */
#define STORM_SHOW 8u                      /* connections listed per side */
#define STORM_SAMPLE_MIN US_US(50)         /* the finest sampling of the TCBs */
#define STORM_SAMPLE_PACED US_MS(10)       /* sampling while closes are paced */

enum storm_phase { PH_NONE, PH_OPEN, PH_READY, PH_CLOSED, PH_FAILED };

struct storm_conn {
	int cfd, sfd;
	uint16_t cport, sport;
	uint8_t phase;             /* enum storm_phase */
	bool connected, seof;
	uint32_t csent, crcvd, ssent, srcvd;
	int cerr, serr;
	uint64_t t_close, t_eof, t_sclose;
};

/* What the sampling walks learn of one connection's TCB on one side. */
struct storm_tcb {
	bool alive, seen;
	uint8_t state;
	uint16_t rtos;
	uint64_t since, last;      /* in this state since; seen last */
	uint64_t life;             /* client close -> first sample without it */
	uint64_t in_state[TCP_STATE_COUNT];
};

struct storm_row {
	uint64_t t;
	struct tcp_state_gauges g[2];
};

struct storm {
	struct sim_storm_params p;
	unsigned nports;
	struct storm_conn *c;
	struct storm_tcb *tcb[2];  /* [0] client, [1] server */
	int32_t *by_port;          /* (server port index, client port) -> conn + 1 */
	int epfd[2];
	int lfd[STORM_PORTS_MAX];
	unsigned opened, connected, ready, failed, closed, eofs, sclosed;
	uint64_t t_open0, t_all_ready, t_close0, t_close_last;
	uint64_t next_sample;
	uint64_t gone[2];          /* when the stack's last TCB went (0: not yet) */
	uint64_t state_last[2][TCP_STATE_COUNT]; /* last round a gauge was > 0 */
	uint32_t state_peak[2][TCP_STATE_COUNT];
	struct storm_row *rows;
	size_t nrows, cap_rows;
	int64_t ctr[2][STORM_CTRS_MAX]; /* engine counters at the end (storm_counters) */
	bool snap;
	struct nic_impair_stats link[2]; /* [0] client -> server, [1] back */
	uint64_t drop_rxq[2];
	uint8_t buf[STORM_BUF];
};

/* Engine counters reported per stack, in this order. */
static const char *const storm_counters[] = {
	"tcp_rx_segs", "tcp_tx_segs", "tcp_retrans_segs", "tcp_rto_fired", "tcp_conns_timed_out",
	"tcp_resets_sent", "tcp_resets_rcvd", "tcp_drop_no_conn", "tcp_rst_closed_ratelimited",
	"tcp_drop_rst_no_conn", "tcp_drop_unacceptable", "tcp_drop_after_close",
	"tcp_challenge_acks", "tcp_challenge_acks_suppressed", "tcp_drop_backlog_full",
	"tcp_drop_no_tcb", "tcp_drop_no_mbuf", "tcp_syncookies_sent", "tcp_dup_syn_rcvd",
	"tcp_embryos_timed_out", "tcp_delayed_acks", "tcp_dup_acks", "tcp_timewait_reused",
	"tcp_drop_paws", "tcp_drop_bad_ack", "tcp_drop_ack_too_old", "tcp_closed_in_syn_sent",
};
#define STORM_NCTR (sizeof(storm_counters) / sizeof(storm_counters[0]))
_Static_assert(STORM_NCTR <= STORM_CTRS_MAX, "struct storm's ctr holds them");

static struct storm *S; /* the one storm of this process */

static uint8_t pattern(unsigned i, unsigned dir, uint32_t off)
{
	return (uint8_t)(i * 31u + dir * 7u + off * 13u);
}

static struct sockaddr_in addr_of(uint32_t ip, uint16_t port)
{
	return (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
				     .sin_addr.s_addr = htonl(ip) };
}

static double secs(uint64_t ns)
{
	return ns / 1e9;
}

static double rel(const struct sim_world *w)
{
	return secs(w->now - w->t0);
}

/* The ends */

static void conn_fail(struct sim_world *w, unsigned i, unsigned side, int err)
{
	struct storm_conn *c = &S->c[i];
	int *fd = side ? &c->sfd : &c->cfd;

	if (w->verbose)
		fprintf(stderr, "  conn %u %s: %s at %.6fs\n", i, side ? "server" : "client",
			strerror(err), rel(w));
	*(side ? &c->serr : &c->cerr) = err;
	sim_bind(w, side, 0);
	if (*fd >= 0 && us_close(*fd) != 0)
		sim_fail(w, "us_close: %s", strerror(errno));
	*fd = -1;
	if (side == 0) {
		if (c->phase == PH_OPEN)
			S->failed++;
		c->phase = PH_FAILED;
	} else {
		S->sclosed++;
	}
}

/* Sends what is left of the side's few bytes; false when it failed. */
static bool conn_send(struct sim_world *w, unsigned i, unsigned side)
{
	struct storm_conn *c = &S->c[i];
	uint32_t *sent = side ? &c->ssent : &c->csent;
	int fd = side ? c->sfd : c->cfd;

	while (*sent < S->p.bytes) {
		uint32_t len = RTE_MIN(S->p.bytes - *sent, STORM_BUF);
		ssize_t n;

		for (uint32_t k = 0; k < len; k++)
			S->buf[k] = pattern(i, side, *sent + k);
		n = us_send(fd, S->buf, len, 0);
		if (n < 0) {
			if (errno == EAGAIN)
				return true;
			conn_fail(w, i, side, errno);
			return false;
		}
		*sent += (uint32_t)n;
		w->progress = true;
	}
	return true;
}

/* Reads and checks what came; 0, 1 at end of stream, -1 failed. */
static int conn_read(struct sim_world *w, unsigned i, unsigned side)
{
	struct storm_conn *c = &S->c[i];
	uint32_t *rcvd = side ? &c->srcvd : &c->crcvd;
	int fd = side ? c->sfd : c->cfd;

	for (;;) {
		ssize_t n = us_recv(fd, S->buf, STORM_BUF, 0);

		if (n < 0) {
			if (errno == EAGAIN)
				return 0;
			conn_fail(w, i, side, errno);
			return -1;
		}
		w->progress = true;
		if (n == 0)
			return 1;
		if (*rcvd + (uint64_t)n > S->p.bytes)
			sim_fail(w, "conn %u %s: %lu bytes read of %u sent", i, side ? "server" : "client",
				 (unsigned long)(*rcvd + (uint64_t)n), S->p.bytes);
		for (ssize_t k = 0; k < n; k++)
			if (S->buf[k] != pattern(i, !side, *rcvd + (uint32_t)k))
				sim_fail(w, "conn %u %s: byte %u is wrong", i, side ? "server" : "client",
					 *rcvd + (uint32_t)k);
		*rcvd += (uint32_t)n;
	}
}

static void client_event(struct sim_world *w, unsigned i)
{
	struct storm_conn *c = &S->c[i];
	struct us_sock *s;

	if (c->phase != PH_OPEN && c->phase != PH_READY)
		return;
	if (us_sock_lookup(c->cfd, &s) == 0 && s->state == US_SS_CONNECTING)
		return;
	if (!c->connected) {
		c->connected = true;
		S->connected++;
	}
	if (!conn_send(w, i, 0))
		return;
	switch (conn_read(w, i, 0)) {
	case 1: /* the server closes only after the client did */
		sim_fail(w, "conn %u client: end of stream before its close", i);
	case -1:
		return;
	default:
		break;
	}
	if (c->phase == PH_OPEN && c->csent == S->p.bytes && c->crcvd == S->p.bytes) {
		c->phase = PH_READY;
		S->ready++;
	}
}

static void server_event(struct sim_world *w, unsigned i)
{
	struct storm_conn *c = &S->c[i];
	int rc;

	if (c->sfd < 0 || !conn_send(w, i, 1))
		return;
	rc = conn_read(w, i, 1);
	if (rc != 1)
		return;
	c->seof = true;
	c->t_eof = w->now;
	S->eofs++;
	if (us_close(c->sfd) != 0)
		sim_fail(w, "us_close: %s", strerror(errno));
	c->sfd = -1;
	c->t_sclose = w->now;
	S->sclosed++;
}

static void watch(struct sim_world *w, int epfd, int fd, uint64_t data)
{
	struct us_epoll_event ev = { .events = US_EPOLLIN | US_EPOLLOUT | US_EPOLLRDHUP | US_EPOLLET,
				     .data.u64 = data };

	if (us_epoll_ctl(epfd, US_EPOLL_CTL_ADD, fd, &ev) != 0)
		sim_fail(w, "us_epoll_ctl: %s", strerror(errno));
}

static void server_accept(struct sim_world *w, int lfd)
{
	struct sockaddr_in peer, me;
	socklen_t plen = sizeof(peer), mlen = sizeof(me);
	int fd;

	while ((fd = us_accept(lfd, (struct sockaddr *)&peer, &plen)) >= 0) {
		int32_t k;

		w->progress = true;
		if (us_getsockname(fd, (struct sockaddr *)&me, &mlen) != 0)
			sim_fail(w, "us_getsockname: %s", strerror(errno));
		k = S->by_port[(size_t)(ntohs(me.sin_port) - SIM_TCP_PORT) * 65536u + ntohs(peer.sin_port)];
		if (k <= 0 || S->c[k - 1].sfd >= 0)
			sim_fail(w, "accepted port %u from %u, which no client opened", ntohs(me.sin_port),
				 ntohs(peer.sin_port));
		S->c[k - 1].sfd = fd;
		watch(w, S->epfd[1], fd, (uint64_t)(k - 1));
		plen = sizeof(peer);
		mlen = sizeof(me);
	}
	if (errno != EAGAIN)
		sim_fail(w, "us_accept: %s", strerror(errno));
}

/* Every ready socket of one side, until its epoll has nothing more. */
static void side_events(struct sim_world *w, unsigned side)
{
	struct us_epoll_event ev[STORM_EVENTS];
	int n;

	if (w->st[side].eng[0].tab == NULL)
		return; /* the world's end closed the tables */
	sim_bind(w, side, 0);
	do {
		n = us_epoll_wait(S->epfd[side], ev, STORM_EVENTS, 0);
		if (n < 0)
			sim_fail(w, "us_epoll_wait: %s", strerror(errno));
		for (int k = 0; k < n; k++) {
			uint64_t d = ev[k].data.u64;

			if (d >= UINT32_MAX)
				server_accept(w, S->lfd[d - UINT32_MAX]);
			else if (side == 0)
				client_event(w, (unsigned)d);
			else
				server_event(w, (unsigned)d);
			sim_bind(w, side, 0);
		}
	} while (n == STORM_EVENTS);
}

/* Opening, paced */

static uint64_t open_due(const struct storm *s, unsigned k)
{
	return s->t_open0 + (uint64_t)((double)k * 1e9 / s->p.open_rate);
}

static void client_open(struct sim_world *w, unsigned i)
{
	struct storm_conn *c = &S->c[i];
	unsigned port = i % S->nports;
	struct sockaddr_in dst = addr_of(sim_ip(1), (uint16_t)(SIM_TCP_PORT + port)), me;
	socklen_t mlen = sizeof(me);

	sim_bind(w, 0, 0);
	c->cfd = us_socket(AF_INET, SOCK_STREAM, 0);
	if (c->cfd < 0)
		sim_fail(w, "us_socket: %s", strerror(errno));
	c->phase = PH_OPEN;
	c->sport = (uint16_t)(SIM_TCP_PORT + port);
	if (us_connect(c->cfd, (struct sockaddr *)&dst, sizeof(dst)) != 0 && errno != EINPROGRESS) {
		conn_fail(w, i, 0, errno);
		return;
	}
	if (us_getsockname(c->cfd, (struct sockaddr *)&me, &mlen) != 0)
		sim_fail(w, "us_getsockname: %s", strerror(errno));
	c->cport = ntohs(me.sin_port);
	S->by_port[(size_t)port * 65536u + c->cport] = (int32_t)i + 1;
	watch(w, S->epfd[0], c->cfd, i);
	w->progress = true;
}

static void opens_step(struct sim_world *w)
{
	while (S->opened < S->p.n && w->now >= open_due(S, S->opened) &&
	       S->opened - S->connected - S->failed < STORM_HANDSHAKES_MAX)
		client_open(w, S->opened++);
}

/* Closing, all at once or paced */

static uint64_t close_due(const struct storm *s, unsigned k)
{
	return s->p.close_rate > 0 ? s->t_close0 + (uint64_t)((double)k * 1e9 / s->p.close_rate)
				   : s->t_close0;
}

static void closes_step(struct sim_world *w)
{
	if (S->t_close0 == 0 && S->opened == S->p.n && S->ready + S->failed == S->p.n) {
		S->t_all_ready = w->now;
		S->t_close0 = w->now + STORM_SETTLE;
		S->next_sample = S->t_close0;
	}
	if (S->t_close0 == 0 || w->now < S->t_close0)
		return;
	sim_bind(w, 0, 0);
	while (S->closed < S->p.n && w->now >= close_due(S, S->closed)) {
		struct storm_conn *c = &S->c[S->closed++];

		c->t_close = w->now;
		S->t_close_last = w->now;
		if (c->phase != PH_READY)
			continue; /* it failed before: nothing to close */
		if (us_close(c->cfd) != 0)
			sim_fail(w, "us_close: %s", strerror(errno));
		c->cfd = -1;
		c->phase = PH_CLOSED;
		w->progress = true;
	}
}

/* Measuring */

struct walk_arg {
	struct sim_world *w;
	unsigned side;
};

static void tcb_state(struct storm_tcb *t, uint8_t state, uint64_t now)
{
	if (t->alive && t->state == state)
		return;
	if (t->alive)
		t->in_state[t->state] += now - t->since;
	t->alive = t->seen = true;
	t->state = state;
	t->since = now;
}

static int walk_one(void *arg, const struct tcp_conn *tc)
{
	struct walk_arg *a = arg;
	uint16_t sport = a->side ? tc->local_port : tc->remote_port;
	uint16_t cport = a->side ? tc->remote_port : tc->local_port;
	int32_t k;
	struct storm_tcb *t;

	if (tc->state == TCP_LISTEN || sport < SIM_TCP_PORT || sport >= SIM_TCP_PORT + S->nports)
		return 0;
	k = S->by_port[(size_t)(sport - SIM_TCP_PORT) * 65536u + cport];
	if (k <= 0)
		return 0;
	t = &S->tcb[a->side][k - 1];
	tcb_state(t, (uint8_t)tc->state, a->w->now);
	t->last = a->w->now;
	t->rtos = (uint16_t)RTE_MIN(tc->loss.rtos, (uint64_t)UINT16_MAX);
	return 0;
}

/* A TCB not seen now is gone: its time in its last state and its life end. */
static void tcbs_gone(struct sim_world *w, unsigned side)
{
	for (unsigned i = 0; i < S->p.n; i++) {
		struct storm_tcb *t = &S->tcb[side][i];

		if (!t->alive || t->last == w->now)
			continue;
		t->in_state[t->state] += w->now - t->since;
		t->alive = false;
		if (S->c[i].t_close != 0)
			t->life = w->now - S->c[i].t_close;
	}
}

static void sample(struct sim_world *w)
{
	struct storm_row row = { .t = w->now - S->t_close0 };

	for (unsigned side = 0; side < 2; side++) {
		struct walk_arg a = { .w = w, .side = side };
		struct tcp_stack *ts = us_engine_tcp(w->st[side].eng[0].e);

		tcp_conn_walk(ts, walk_one, &a);
		tcbs_gone(w, side);
		tcp_stack_state_gauges(ts, &row.g[side]);
	}
	if (S->nrows == S->cap_rows) {
		S->cap_rows = S->cap_rows ? 2 * S->cap_rows : 256;
		S->rows = realloc(S->rows, S->cap_rows * sizeof(*S->rows));
		if (S->rows == NULL)
			sim_fail(w, "out of memory");
	}
	S->rows[S->nrows++] = row;
	/* ~3 % of the time since the last close: a log scale of samples;
	 * while closes are paced, every STORM_SAMPLE_PACED. */
	if (S->closed < S->p.n && S->p.close_rate > 0)
		S->next_sample = w->now + STORM_SAMPLE_PACED;
	else
		S->next_sample = w->now + RTE_MAX(STORM_SAMPLE_MIN,
						  (w->now - RTE_MAX(S->t_close_last, S->t_close0)) / 32);
}

static unsigned gauge_of(const struct tcp_state_gauges *g, unsigned state)
{
	switch (state) {
#define STORM_X_CASE(name, st, desc) case TCP_##st: return g->name;
	TCP_STATE_GAUGES(STORM_X_CASE)
#undef STORM_X_CASE
	default:
		return 0;
	}
}

/* Every round: the gauges, the last time each state was held, the end. */
static void gauges_step(struct sim_world *w)
{
	for (unsigned side = 0; side < 2; side++) {
		struct tcp_stack *ts = us_engine_tcp(w->st[side].eng[0].e);
		struct tcp_state_gauges g;

		tcp_stack_state_gauges(ts, &g);
		for (unsigned st = 0; st < TCP_STATE_COUNT; st++) {
			unsigned v = st == TCP_LISTEN ? 0 : gauge_of(&g, st);

			if (v > 0)
				S->state_last[side][st] = w->now;
			if (v > S->state_peak[side][st])
				S->state_peak[side][st] = v;
		}
		if (S->closed == S->p.n && S->gone[side] == 0 && tcp_conn_count(ts) == 0) {
			S->gone[side] = w->now;
			tcbs_gone(w, side);
		}
	}
}

/* The world's calls */

static void storm_start(struct sim_world *w)
{
	(void)w;
}

static void storm_stack_up(struct sim_world *w, unsigned i)
{
	sim_bind(w, i, 0);
	S->epfd[i] = us_epoll_create1(0);
	if (S->epfd[i] < 0)
		sim_fail(w, "us_epoll_create1: %s", strerror(errno));
	if (i == 0)
		return;
	for (unsigned p = 0; p < S->nports; p++) {
		struct sockaddr_in any = addr_of(0, (uint16_t)(SIM_TCP_PORT + p));

		S->lfd[p] = us_socket(AF_INET, SOCK_STREAM, 0);
		if (S->lfd[p] < 0 || us_bind(S->lfd[p], (struct sockaddr *)&any, sizeof(any)) != 0 ||
		    us_listen(S->lfd[p], (int)w->plan.stack[i].tcp.backlog) != 0)
			sim_fail(w, "listen on port %u: %s", SIM_TCP_PORT + p, strerror(errno));
		watch(w, S->epfd[1], S->lfd[p], (uint64_t)UINT32_MAX + p);
	}
}

/* The counters before the world frees its stacks (and after a failure). */
static void snapshot(struct sim_world *w)
{
	for (unsigned side = 0; side < 2; side++) {
		const struct us_engine *e = w->st[side].eng[0].e;

		for (unsigned k = 0; k < STORM_NCTR; k++)
			S->ctr[side][k] = e != NULL ? us_engine_counter(e, storm_counters[k]) : -1;
		S->drop_rxq[side] = w->st[side].drop_rxq;
		if (w->link[side][!side] != NULL)
			S->link[side] = *nic_impair_stats(w->link[side][!side]);
	}
	S->snap = true;
}

static void storm_stack_down(struct sim_world *w, unsigned i)
{
	if (i == 0)
		snapshot(w);
}

static void storm_step(struct sim_world *w)
{
	if (S->t_open0 == 0)
		S->t_open0 = w->now;
	opens_step(w);
	side_events(w, 0);
	side_events(w, 1);
	if (S->t_close0 != 0 && w->now >= S->next_sample && (S->gone[0] == 0 || S->gone[1] == 0))
		sample(w);
	closes_step(w);
	gauges_step(w);
}

static void next_min(uint64_t *next, uint64_t t, uint64_t now)
{
	if (t > now && t < *next)
		*next = t;
}

static uint64_t storm_next(const struct sim_world *w)
{
	uint64_t next = UINT64_MAX;

	if (S->opened < S->p.n)
		next_min(&next, open_due(S, S->opened), w->now);
	if (S->t_close0 != 0 && S->closed < S->p.n)
		next_min(&next, close_due(S, S->closed), w->now);
	if (S->t_close0 != 0 && (S->gone[0] == 0 || S->gone[1] == 0))
		next_min(&next, S->next_sample, w->now);
	return next;
}

/* The applications are done when the client has closed everything; the
 * server's closes on end of stream, and every TCB's end, are what the
 * world's drain (within the bound the timers give) waits for. */
static bool storm_done(const struct sim_world *w)
{
	(void)w;
	return S->closed == S->p.n;
}

static void storm_finish(struct sim_world *w)
{
	(void)w;
}

static const struct sim_app_ops storm_ops = {
	.start = storm_start, .stack_up = storm_stack_up, .stack_down = storm_stack_down,
	.step = storm_step, .next = storm_next, .done = storm_done, .finish = storm_finish,
	.epoll = true,
};

/* The world */

static void storm_link(struct sim_plan *plan, const struct sim_storm_params *p)
{
	char err[128];

	if (p->impair) {
		struct sim_plan drawn;

		sim_plan_draw(&drawn, p->seed); /* link 0<->1 of the seed's world */
		plan->link[0][1] = drawn.link[0][1];
		plan->link[1][0] = drawn.link[1][0];
	} else {
		for (unsigned d = 0; d < 2; d++) {
			struct nic_impair_params *l = &plan->link[d][!d];

			if (nic_impair_parse(p->link, l, err, sizeof(err)) != 0) {
				fprintf(stderr, "us-sim: --link: %s\n", err);
				exit(2);
			}
			l->seed = p->seed * 2 + d + 1;
		}
	}
	for (unsigned d = 0; d < 2; d++) /* the link holds a whole burst in flight */
		plan->link[d][!d].limit = RTE_MAX(plan->link[d][!d].limit, 4 * p->n + 65536);
}

static void storm_plan(struct sim_plan *plan, const struct sim_storm_params *p)
{
	memset(plan, 0, sizeof(*plan));
	plan->seed = p->seed;
	plan->nstacks = 2;
	plan->mtu = 1500;
	for (unsigned i = 0; i < 2; i++) {
		struct sim_stack_plan *s = &plan->stack[i];

		s->engines = 1;
		tcp_config_defaults(&s->tcp);
		s->tcp.max_conns = p->n + 1024;
		s->tcp.backlog = p->n;
		s->gso = s->gro = true;
	}
	storm_link(plan, p);
}

/* One chain of retransmissions: RTO doubling from rto_min to rto_max,
 * data_retries of them before the connection gives up. */
static uint64_t rto_chain_ns(const struct tcp_config *t)
{
	uint64_t sum = 0, rto = t->rto_min_ms;

	for (unsigned k = 0; k <= t->data_retries; k++, rto = RTE_MIN(2 * rto, (uint64_t)t->rto_max_ms))
		sum += US_MS(rto);
	return sum;
}

/* The report */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double pct(const uint64_t *v, size_t n, double q)
{
	return n ? secs(v[(size_t)((double)(n - 1) * q)]) : 0;
}

static void print_dist(const char *what, uint64_t *v, size_t n)
{
	size_t over[3] = { 0 };

	qsort(v, n, sizeof(*v), cmp_u64);
	for (size_t k = 0; k < n; k++)
		for (unsigned j = 0; j < 3; j++)
			over[j] += v[k] > US_SEC(1) * (j == 0 ? 1 : j == 1 ? 10 : 100);
	printf("    %-22s %7zu  p50 %9.4f  p90 %9.4f  p99 %9.4f  p99.9 %9.4f  max %9.4f s;"
	       " > 1 s %zu, > 10 s %zu, > 100 s %zu\n", what, n, pct(v, n, .5), pct(v, n, .9),
	       pct(v, n, .99), pct(v, n, .999), n ? secs(v[n - 1]) : 0, over[0], over[1], over[2]);
}

static void report_lifetimes(uint64_t *v)
{
	static const char *const side_name[2] = { "client", "server" };

	printf("  TCB lifetimes after the client's close (to the first sample without it):\n");
	for (unsigned side = 0; side < 2; side++) {
		size_t n = 0, left = 0;

		for (unsigned i = 0; i < S->p.n; i++) {
			const struct storm_tcb *t = &S->tcb[side][i];

			if (t->alive)
				left++;
			else if (t->seen && S->c[i].t_close != 0)
				v[n++] = t->life;
		}
		print_dist(side_name[side], v, n);
		if (left)
			printf("    %-22s %7zu still there at the end\n", "", left);
	}
	printf("  time in each state after the close began (per TCB, sampled):\n");
	for (unsigned side = 0; side < 2; side++)
		for (unsigned st = 0; st < TCP_STATE_COUNT; st++) {
			char what[40];
			size_t n = 0;

			for (unsigned i = 0; i < S->p.n; i++)
				if (S->tcb[side][i].in_state[st] > 0)
					v[n++] = S->tcb[side][i].in_state[st];
			snprintf(what, sizeof(what), "%s %s", side_name[side], tcp_state_str((uint8_t)st));
			if (n > 0)
				print_dist(what, v, n);
		}
}

static void report_states(void)
{
	printf("  last round each state was held (s after the close began; peak count):\n");
	printf("    %-12s %22s %22s\n", "state", "client", "server");
	for (unsigned st = 0; st < TCP_STATE_COUNT; st++) {
		if (st == TCP_LISTEN || (S->state_peak[0][st] == 0 && S->state_peak[1][st] == 0))
			continue;
		printf("    %-12s", tcp_state_str((uint8_t)st));
		for (unsigned side = 0; side < 2; side++) {
			uint64_t t = S->state_last[side][st];

			if (S->state_peak[side][st] == 0)
				printf(" %22s", "-");
			else
				printf(" %12.3f (%7u)", t >= S->t_close0 ? secs(t - S->t_close0) : -secs(S->t_close0 - t),
				       S->state_peak[side][st]);
		}
		printf("\n");
	}
}

static uint64_t next_mark(uint64_t m)
{
	uint64_t d = 1;

	while (m / d >= 10)
		d *= 10;
	return m / d == 2 ? m * 5 / 2 : m * 2;
}

/* Sampled gauges on a 1-2-5 scale of time (every sample with -v). */
static void report_rows(bool all)
{
	uint64_t mark = 0;

	printf("  TCBs by state over time (s after the close began; client | server):\n");
	printf("    %10s  %6s %6s %6s %6s %6s | %6s %6s %6s %6s\n", "t", "EST", "FW1", "FW2",
	       "CLOSING", "TW", "EST", "CW", "LA", "total");
	for (size_t r = 0; r < S->nrows; r++) {
		const struct storm_row *x = &S->rows[r];
		const struct tcp_state_gauges *c = &x->g[0], *s = &x->g[1];

		if (!all && x->t < mark && r + 1 < S->nrows)
			continue;
		while (mark <= x->t) /* 0.1, 0.2, 0.5, 1, 2, 5 ... ms */
			mark = mark == 0 ? US_US(100) : next_mark(mark);
		printf("    %10.3f  %6u %6u %6u %6u %6u | %6u %6u %6u %6u\n", secs(x->t), c->established,
		       c->fin_wait_1, c->fin_wait_2, c->closing, c->time_wait, s->established,
		       s->close_wait, s->last_ack,
		       s->established + s->close_wait + s->last_ack + s->syn_received + s->fin_wait_1 +
		       s->fin_wait_2 + s->closing + s->time_wait);
	}
}

static void report_counters(const struct sim_world *w)
{
	printf("  drops: NIC queue full client %" PRIu64 " server %" PRIu64 "; no mbuf %" PRIu64
	       "; wire client->server %" PRIu64 " server->client %" PRIu64 " (loss, queue, limit)\n",
	       S->drop_rxq[0], S->drop_rxq[1], w->n.drop_no_mbuf,
	       S->link[0].dropped_random + S->link[0].dropped_burst + S->link[0].dropped_queue_full +
	       S->link[0].dropped_limit,
	       S->link[1].dropped_random + S->link[1].dropped_burst + S->link[1].dropped_queue_full +
	       S->link[1].dropped_limit);
	printf("  engine counters (client, server; zeros left out):\n");
	for (unsigned k = 0; k < STORM_NCTR; k++)
		if (S->ctr[0][k] > 0 || S->ctr[1][k] > 0)
			printf("    %-32s %10" PRId64 " %10" PRId64 "\n", storm_counters[k], S->ctr[0][k],
			       S->ctr[1][k]);
}

/* The connections whose server TCB lived longest, with their history. */
static void report_slowest(void)
{
	unsigned shown = 0;
	uint64_t floor = UINT64_MAX;

	printf("  longest-lived server TCBs (over %.0f s):\n", secs(STORM_SLOW));
	while (shown < STORM_SHOW) {
		uint64_t best = 0;
		unsigned bi = 0;

		for (unsigned i = 0; i < S->p.n; i++) {
			const struct storm_tcb *t = &S->tcb[1][i];

			if (t->life > best && t->life < floor) {
				best = t->life;
				bi = i;
			}
		}
		if (best <= STORM_SLOW)
			break;
		floor = best;
		printf("    conn %u (port %u->%u): server %.3f s, rtos %u;", bi, S->c[bi].cport,
		       S->c[bi].sport, secs(best), S->tcb[1][bi].rtos);
		for (unsigned side = 0; side < 2; side++)
			for (unsigned st = 0; st < TCP_STATE_COUNT; st++)
				if (S->tcb[side][bi].in_state[st] > 0)
					printf(" %c:%s %.3f", side ? 'S' : 'C', tcp_state_str((uint8_t)st),
					       secs(S->tcb[side][bi].in_state[st]));
		printf("; client rtos %u, server EOF at %+.3f s\n", S->tcb[0][bi].rtos,
		       S->c[bi].t_eof ? secs(S->c[bi].t_eof - S->c[bi].t_close) : -1.0);
		shown++;
	}
}

/* Connections whose end on this side saw an error. */
static unsigned errors(unsigned side)
{
	unsigned n = 0;

	for (unsigned i = 0; i < S->p.n; i++)
		n += (side ? S->c[i].serr : S->c[i].cerr) != 0;
	return n;
}

static void report(const struct sim_world *w, int rc, double wall_s)
{
	const struct tcp_config *t = &w->plan.stack[1].tcp;
	uint64_t *v = malloc(sizeof(*v) * (S->p.n + 1));
	char spec[256];

	if (v == NULL)
		abort();
	nic_impair_format(&w->plan.link[0][1], spec, sizeof(spec));
	printf("storm: %u connections (%u server ports), seed %" PRIu64 "\n", S->p.n, S->nports,
	       S->p.seed);
	if (S->p.close_rate > 0)
		printf("  close: %.0f a second\n", S->p.close_rate);
	else
		printf("  close: all at one instant\n");
	printf("  link: %s; NIC queue %u frames; engine %" PRIu64 " ns per frame received; mbufs %u\n",
	       spec, S->p.rxq, S->p.rx_frame_ns, S->p.mbufs);
	printf("  open: %u opened, %u connected, %u failed; all idle at %.3f s (open %.0f/s)\n",
	       S->opened, S->connected, S->failed, secs(S->t_all_ready - w->t0), S->p.open_rate);
	printf("  close: began at %.3f s, last close +%.6f s; server saw %u EOFs, closed %u;"
	       " errors: client %u, server %u\n", secs(S->t_close0 - w->t0),
	       secs(S->t_close_last - S->t_close0), S->eofs, S->sclosed, errors(0), errors(1));
	for (unsigned side = 0; side < 2; side++)
		if (S->gone[side])
			printf("  %s TCBs all gone %.6f s after the close began\n", side ? "server" : "client",
			       secs(S->gone[side] - S->t_close0));
		else
			printf("  %s TCBs NOT all gone\n", side ? "server" : "client");
	printf("  bounds: one RTO chain (rto_min %u ms doubling to %u ms, %u retries) %.1f s;"
	       " + TIME-WAIT %.0f s; the world's drain bound %.0f s\n", t->rto_min_ms, t->rto_max_ms,
	       t->data_retries, secs(rto_chain_ns(t)), secs(US_MS(t->time_wait_ms)),
	       secs(2 * (US_MS((uint64_t)(t->data_retries + 1) * t->rto_max_ms) +
			 US_MS(t->keepalive_idle_ms + (uint64_t)t->keepalive_probes * t->keepalive_intvl_ms) +
			 US_MS(t->time_wait_ms))));
	report_counters(w);
	report_states();
	report_lifetimes(v);
	report_rows(S->p.verbose);
	report_slowest();
	printf("  world: %s; %" PRIu64 " events, %" PRIu64 " frames, simulated %.1f s, wall %.1f s\n",
	       rc == 0 ? "pass" : w->fail, w->n.events, w->n.frames, secs(w->n.sim_ns), wall_s);
	free(v);
}

static uint64_t pow2_at_least(uint64_t x)
{
	uint64_t p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

static void storm_alloc(const struct sim_storm_params *p)
{
	S = calloc(1, sizeof(*S));
	if (S == NULL)
		abort();
	S->p = *p;
	S->nports = (p->n + STORM_PORTS_PER_SERVER_PORT - 1) / STORM_PORTS_PER_SERVER_PORT;
	S->c = calloc(p->n, sizeof(*S->c));
	S->tcb[0] = calloc(p->n, sizeof(*S->tcb[0]));
	S->tcb[1] = calloc(p->n, sizeof(*S->tcb[1]));
	S->by_port = calloc((size_t)S->nports * 65536u, sizeof(*S->by_port));
	if (S->c == NULL || S->tcb[0] == NULL || S->tcb[1] == NULL || S->by_port == NULL)
		abort();
	for (unsigned i = 0; i < p->n; i++)
		S->c[i].cfd = S->c[i].sfd = -1;
}

int sim_storm_run(const struct sim_storm_params *p, struct rte_mempool *pool,
		  struct rte_mempool *wire)
{
	struct sim_world *w = sim_last_world();
	struct sim_plan plan;
	struct sim_cut cut = { 0 };
	double t0 = sim_wall();
	int rc;

	if (p->n == 0 || p->n > STORM_PORTS_MAX * STORM_PORTS_PER_SERVER_PORT) {
		fprintf(stderr, "us-sim: --storm takes 1 to %u connections\n",
			STORM_PORTS_MAX * STORM_PORTS_PER_SERVER_PORT);
		return 2;
	}
	storm_alloc(p);
	storm_plan(&plan, p);
	w->verbose = p->verbose;
	w->opts = (struct sim_world_opts){
		.app = &storm_ops, .rxq_len = p->rxq, .fds = p->n + 64,
		.rx_frame_ns = p->rx_frame_ns, .wire_pool = wire,
		/* A check walks all 2N TCBs: ~32 TCBs per event on average. */
		.check_every = p->check_every ? p->check_every : RTE_MAX(64u, p->n / 16),
		.check_slots = (unsigned)pow2_at_least(4ull * p->n), .print_tcbs_max = 20,
	};
	rc = sim_world_run(w, &plan, &cut, pool);
	if (!S->snap)
		snapshot(w); /* a failed world keeps its stacks */
	report(w, rc, sim_wall() - t0);
	return rc;
}
