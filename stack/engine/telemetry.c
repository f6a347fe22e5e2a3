/* stack/engine/telemetry.c: /userstack/... telemetry commands (see telemetry.h for
 * the commands and for why the engine, not the callback, reads its state). */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mempool.h>
#include <rte_telemetry.h>

#include "stack/base/log.h"
#include "nic/impair.h"
#include "nic/nic.h"
#include "nic/capture.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/stage_capture.h"
#include "stack/engine/stage_impair.h"
#include "stack/engine/telemetry.h"

/* Types */

struct telem_conn {
	struct tcp_conn_addrs a;
	struct tcp_conn_info info;
};

/* What the engine publishes: everything a reply is built from. */
struct telem_snap {
	unsigned id;
	uint64_t now_ns;          /* engine clock at publication */
	unsigned nconns;          /* TCBs (tcp_conn_count) */
	struct us_stack_stats stack;
	struct tcp_stats tcp;
	struct tcp_state_gauges tcbs;
	bool has_port;
	uint16_t port_id;
	uint16_t mtu;
	bool allmulti;            /* nic_port_info: all-multicast on */
	const char *gso, *gro;    /* nic_gso_name / nic_gro_name */
	int eth_rc;               /* nic_port_pmd_stats result */
	struct nic_pmd_stats eth;
	struct nic_stats nic;     /* the port: every queue summed */
	uint16_t nb_queues;
	struct nic_stats qnic[US_ENGINES_MAX];   /* per queue (several engines) */
	bool has_capture;
	struct nic_capture_stats capture;
	bool has_impair[2];             /* [impair] rx, tx */
	struct nic_impair_stats impair[2];
	unsigned conn_start, conn_rows, conn_total;
	unsigned listeners, curr_estab;  /* over every TCB, not only the page */
	struct telem_conn conns[US_TELEM_CONNS_PAGE];
	unsigned mbufs_in_use;    /* e->pool: leak checks (bench/soak.sh) */
	unsigned timers_armed;    /* e->wheel: leak checks */
};

struct telem_slot {
	pthread_mutex_t lock;       /* readers, attach, detach; never the engine */
	struct us_engine *e;        /* under lock */
	const struct nic_port *port;
	unsigned conn_start;        /* request parameter: written before request */
	uint32_t request;           /* reader: store-release */
	uint32_t done;              /* engine: store-release when snap is ready */
	struct telem_snap snap;
};

struct telem_walk {
	struct telem_snap *s;
	unsigned idx;
};

/* Globals: rte_telemetry commands are process-wide and never unregistered,
 * so their state is too. */
uint32_t us_telemetry_pending;
static struct telem_slot telem_slots[US_ENGINES_MAX];
static pthread_once_t telem_once = PTHREAD_ONCE_INIT;
static int telem_reg_rc;

/* Engine side */

static int telem_walk_row(void *arg, const struct tcp_conn *c)
{
	struct telem_walk *w = arg;
	struct telem_snap *s = w->s;
	struct tcp_conn_addrs a;

	tcp_conn_addrs(c, &a);
	s->listeners += a.listener;
	s->curr_estab += tcp_state_is_current_estab(a.state);
	if (w->idx++ >= s->conn_start && s->conn_rows < US_TELEM_CONNS_PAGE) {
		struct telem_conn *r = &s->conns[s->conn_rows++];

		r->a = a;
		tcp_conn_get_info(c, &r->info);
	}
	return 0; /* on to the end: the totals are part of the reply */
}

static void telem_fill_impair(struct telem_snap *s, const struct us_engine *e)
{
	const struct nic_impair *imp[2] = { us_impair_of(e, false), us_impair_of(e, true) };

	for (int i = 0; i < 2; i++) {
		s->has_impair[i] = imp[i] != NULL;
		if (imp[i] != NULL)
			s->impair[i] = *nic_impair_stats(imp[i]);
	}
}

/* On the engine's core, like every other read of the port.  Each queue's
 * counters have one writer, its engine; the port's figure is their sum, as
 * us_print_stats (nic_port_stats) makes it, but from the copies just taken,
 * so that the total matches the rows shown. */
static void telem_fill_port(struct telem_snap *s, const struct nic_port *port)
{
	struct nic_port_info info;

	nic_port_info(port, &info);
	s->port_id = info.port_id;
	s->mtu = info.mtu;
	s->allmulti = info.allmulti;
	s->nb_queues = RTE_MIN(info.nb_queues, (uint16_t)US_ENGINES_MAX);
	memset(&s->nic, 0, sizeof(s->nic));
	for (uint16_t q = 0; q < s->nb_queues; q++) {
		nic_port_queue_stats(port, q, &s->qnic[q]);
#define TELEM_X_SUM(n, desc) s->nic.n += s->qnic[q].n;
		NIC_COUNTERS(TELEM_X_SUM)
#undef TELEM_X_SUM
	}
	s->eth_rc = nic_port_pmd_stats(port, &s->eth);
}

static void telem_fill(struct telem_slot *slot, struct us_engine *e, unsigned id)
{
	struct telem_snap *s = &slot->snap;
	struct telem_walk w = { .s = s };
	const struct nic_capture *cap = us_capture_of(e);

	s->id = id;
	s->now_ns = e->wheel.now_ns;
	s->stack = e->net.stats;
	memset(&s->tcp, 0, sizeof(s->tcp));
	memset(&s->tcbs, 0, sizeof(s->tcbs));
	s->nconns = 0;
	s->conn_start = slot->conn_start;
	s->conn_rows = 0;
	s->conn_total = 0;
	s->listeners = 0;
	s->curr_estab = 0;
	if (e->tcp != NULL) {
		s->tcp = *tcp_stack_stats(e->tcp);
		tcp_stack_state_gauges(e->tcp, &s->tcbs);
		s->nconns = tcp_conn_count(e->tcp);
		s->conn_total = tcp_conn_walk(e->tcp, telem_walk_row, &w);
	}
	s->mbufs_in_use = e->pool != NULL ? rte_mempool_in_use_count(e->pool) : 0;
	s->timers_armed = e->wheel.armed;
	s->has_capture = cap != NULL;
	if (s->has_capture)
		s->capture = *nic_capture_stats(cap);
	telem_fill_impair(s, e);
	s->has_port = slot->port != NULL;
	if (s->has_port) {
		telem_fill_port(s, slot->port);
		s->gso = nic_gso_name(slot->port, e->net.gso);
		s->gro = nic_gro_name(slot->port, e->net.gro || e->net.port.lro);
	}
}

void us_telemetry_serve(struct us_engine *e, unsigned id)
{
	struct telem_slot *slot = &telem_slots[id];
	uint32_t req;

	/* Clear first: a request posted after this load sets the bit again. */
	__atomic_fetch_and(&us_telemetry_pending, ~(1u << id), __ATOMIC_ACQ_REL);
	req = __atomic_load_n(&slot->request, __ATOMIC_ACQUIRE);
	if (req == __atomic_load_n(&slot->done, __ATOMIC_RELAXED))
		return;
	telem_fill(slot, e, id);
	__atomic_store_n(&slot->done, req, __ATOMIC_RELEASE);
}

/* Reader side (telemetry threads) */

static bool telem_wait(struct telem_slot *slot, uint32_t req)
{
	const struct timespec step = { 0, 200 * 1000 };

	for (unsigned i = 0; i < US_TELEM_WAIT_MS * 5; i++) {
		if (__atomic_load_n(&slot->done, __ATOMIC_ACQUIRE) == req)
			return true;
		nanosleep(&step, NULL);
	}
	return false;
}

/* "E" or "E,S": engine id and first connection row. */
static int telem_params(const char *params, unsigned *id, unsigned *start)
{
	char *end;
	unsigned long v;

	*id = 0;
	*start = 0;
	if (params == NULL || params[0] == '\0')
		return 0;
	v = strtoul(params, &end, 10);
	if (end == params || v >= US_ENGINES_MAX)
		return -EINVAL;
	*id = (unsigned)v;
	if (*end == '\0')
		return 0;
	if (*end != ',')
		return -EINVAL;
	params = end + 1;
	v = strtoul(params, &end, 10);
	if (end == params || *end != '\0' || v > UINT32_MAX)
		return -EINVAL;
	*start = (unsigned)v;
	return 0;
}

/* Asks engine id for a snapshot and copies it to out.  Readers take turns
 * on the slot's lock; a request an earlier reader gave up on is waited for
 * before the parameters change. */
static int telem_query(const char *params, struct telem_snap *out)
{
	struct telem_slot *slot;
	unsigned id, start;
	uint32_t req;
	int rc = 0;

	if (telem_params(params, &id, &start) < 0)
		return -EINVAL;
	slot = &telem_slots[id];
	pthread_mutex_lock(&slot->lock);
	req = __atomic_load_n(&slot->request, __ATOMIC_RELAXED);
	if (slot->e == NULL)
		rc = -ENODEV;
	else if (!telem_wait(slot, req))
		rc = -ETIMEDOUT;
	if (rc == 0) {
		slot->conn_start = start;
		__atomic_store_n(&slot->request, ++req, __ATOMIC_RELEASE);
		__atomic_fetch_or(&us_telemetry_pending, 1u << id, __ATOMIC_RELEASE);
		rc = telem_wait(slot, req) ? 0 : -ETIMEDOUT;
	}
	if (rc == 0)
		*out = slot->snap;
	pthread_mutex_unlock(&slot->lock);
	return rc;
}

/* Replies */

static struct rte_tel_data *telem_dict(void)
{
	struct rte_tel_data *d = rte_tel_data_alloc();

	if (d != NULL)
		rte_tel_data_start_dict(d);
	return d;
}

/* Adds child under name; telemetry frees it with the reply (keep = 0). */
static void telem_add_child(struct rte_tel_data *d, const char *name, struct rte_tel_data *c)
{
	if (c != NULL && rte_tel_data_add_dict_container(d, name, c, 0) != 0)
		rte_tel_data_free(c);
}

static void telem_head(struct rte_tel_data *d, const struct telem_snap *s)
{
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "engine", s->id);
	rte_tel_data_add_dict_u64(d, "time_ns", s->now_ns);
	rte_tel_data_add_dict_u64(d, "conns", s->nconns);
	rte_tel_data_add_dict_u64(d, "mbufs_in_use", s->mbufs_in_use);
	rte_tel_data_add_dict_u64(d, "timers_armed", s->timers_armed);
}

/* A reply built from a snapshot; 0 or -errno. */
typedef int (*telem_build_fn)(struct rte_tel_data *d, const struct telem_snap *s);

/* What every command does: one snapshot (on the heap: telemetry threads
 * have small stacks), then its own reply from it. */
static int telem_run(const char *params, struct rte_tel_data *d, telem_build_fn build)
{
	struct telem_snap *s = malloc(sizeof(*s));
	int rc;

	if (s == NULL)
		return -ENOMEM;
	rc = telem_query(params, s);
	if (rc == 0)
		rc = build(d, s);
	free(s);
	return rc;
}

/* RFC 4022 (TCP-MIB) scalars, from our counters: what SNMP tooling and
 * `netstat -s` readers expect.  tcpAttemptFails and tcpEstabResets count
 * state transitions tcp/ does not count yet: left out, not guessed. */
static struct rte_tel_data *telem_mib(const struct telem_snap *s)
{
	struct rte_tel_data *m = telem_dict();

	if (m == NULL)
		return NULL;
	rte_tel_data_add_dict_u64(m, "tcpActiveOpens", s->tcp.active_opens);
	rte_tel_data_add_dict_u64(m, "tcpPassiveOpens", s->tcp.passive_opens);
	rte_tel_data_add_dict_u64(m, "tcpCurrEstab", s->curr_estab);
	rte_tel_data_add_dict_u64(m, "tcpInSegs", s->tcp.rx_segs);
	rte_tel_data_add_dict_u64(m, "tcpOutSegs", s->tcp.tx_segs);
	rte_tel_data_add_dict_u64(m, "tcpRetransSegs", s->tcp.retrans_segs);
	/* "received in error (e.g., bad TCP checksums)" */
	rte_tel_data_add_dict_u64(m, "tcpInErrs", s->tcp.drop_bad_csum + s->tcp.drop_short +
				  s->tcp.drop_bad_offset);
	rte_tel_data_add_dict_u64(m, "tcpOutRsts", s->tcp.resets_sent);
	rte_tel_data_add_dict_u64(m, "listeners", s->listeners);
	return m;
}

/* [impair] stages, as "impair_rx" / "impair_tx" dicts when on. */
static void telem_add_impair(struct rte_tel_data *d, const struct telem_snap *s)
{
	static const char *const names[2] = { "impair_rx", "impair_tx" };

	for (int i = 0; i < 2; i++) {
		struct rte_tel_data *c = s->has_impair[i] ? telem_dict() : NULL;

		if (c == NULL)
			continue;
#define TELEM_X_IMP(n, desc) rte_tel_data_add_dict_u64(c, #n, s->impair[i].n);
		NIC_IMPAIR_COUNTERS(TELEM_X_IMP)
#undef TELEM_X_IMP
		telem_add_child(d, names[i], c);
	}
}

static int telem_build_stats(struct rte_tel_data *d, const struct telem_snap *s)
{
	struct rte_tel_data *st = telem_dict(), *tc = telem_dict(), *tb = telem_dict();
	struct rte_tel_data *nc = s->has_port ? telem_dict() : NULL;
	struct rte_tel_data *cc = s->has_capture ? telem_dict() : NULL;

	telem_head(d, s);
#define TELEM_X_STACK(n, desc) if (st) rte_tel_data_add_dict_u64(st, #n, s->stack.n);
#define TELEM_X_TCP(n, desc) if (tc) rte_tel_data_add_dict_u64(tc, #n, s->tcp.n);
#define TELEM_X_NIC(n, desc) if (nc) rte_tel_data_add_dict_u64(nc, #n, s->nic.n);
#define TELEM_X_CAP(n, desc) if (cc) rte_tel_data_add_dict_u64(cc, #n, s->capture.n);
#define TELEM_X_TCBS(n, state, desc) if (tb) rte_tel_data_add_dict_u64(tb, #n, s->tcbs.n);
	STACK_COUNTERS(TELEM_X_STACK)
	TCP_COUNTERS(TELEM_X_TCP)
	TCP_STATE_GAUGES(TELEM_X_TCBS)
	NIC_COUNTERS(TELEM_X_NIC)
	NIC_CAPTURE_COUNTERS(TELEM_X_CAP)
#undef TELEM_X_CAP
#undef TELEM_X_TCBS
#undef TELEM_X_STACK
#undef TELEM_X_TCP
#undef TELEM_X_NIC
	telem_add_child(d, "stack", st);
	telem_add_child(d, "mib", telem_mib(s));
	telem_add_child(d, "tcp", tc);
	telem_add_child(d, "tcbs", tb);
	telem_add_child(d, "nic", nc);
	telem_add_child(d, "capture", cc);
	telem_add_impair(d, s);
	return 0;
}

/* Every counter whose description says "dropped", under the name
 * us_engine_print_stats prints (TCP's with "tcp_"), and their sum. */
static int telem_build_drops(struct rte_tel_data *d, const struct telem_snap *s)
{
	uint64_t total = 0;

	telem_head(d, s);
#define TELEM_X_DROP(pfx, n, v, desc) \
	if (strncmp(desc, "dropped", 7) == 0) { \
		rte_tel_data_add_dict_u64(d, pfx #n, v); \
		total += v; \
	}
#define TELEM_X_DROP_STACK(n, desc) TELEM_X_DROP("", n, s->stack.n, desc)
#define TELEM_X_DROP_TCP(n, desc) TELEM_X_DROP("tcp_", n, s->tcp.n, desc)
#define TELEM_X_DROP_NIC(n, desc) TELEM_X_DROP("nic_", n, s->nic.n, desc)
	STACK_COUNTERS(TELEM_X_DROP_STACK)
	TCP_COUNTERS(TELEM_X_DROP_TCP)
	NIC_COUNTERS(TELEM_X_DROP_NIC)
#undef TELEM_X_DROP_STACK
#undef TELEM_X_DROP_TCP
#undef TELEM_X_DROP_NIC
#undef TELEM_X_DROP
	rte_tel_data_add_dict_u64(d, "total", total);
	return 0;
}

/* Several queues: one dict per queue ("0", "1", ...), our counters and
 * the PMD's per-queue ones (kept for the first NIC_PMD_QUEUE_STATS
 * queues). */
static struct rte_tel_data *telem_port_queues(const struct telem_snap *s)
{
	struct rte_tel_data *qs = telem_dict();

	for (uint16_t q = 0; qs != NULL && q < s->nb_queues; q++) {
		struct rte_tel_data *c = telem_dict();
		char key[8];

		if (c == NULL)
			break;
#define TELEM_X_Q_NIC(n, desc) rte_tel_data_add_dict_u64(c, "nic_" #n, s->qnic[q].n);
		NIC_COUNTERS(TELEM_X_Q_NIC)
#undef TELEM_X_Q_NIC
		if (s->eth_rc == 0 && q < NIC_PMD_QUEUE_STATS) {
#define TELEM_X_Q_PMD(n) rte_tel_data_add_dict_u64(c, #n, s->eth.q[q].n);
			NIC_PMD_QUEUE_COUNTERS(TELEM_X_Q_PMD)
#undef TELEM_X_Q_PMD
		}
		snprintf(key, sizeof(key), "%u", (unsigned)q);
		telem_add_child(qs, key, c);
	}
	return qs;
}

static int telem_build_port(struct rte_tel_data *d, const struct telem_snap *s)
{
	if (!s->has_port)
		return -ENODEV;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "engine", s->id);
	rte_tel_data_add_dict_u64(d, "port_id", s->port_id);
	rte_tel_data_add_dict_u64(d, "mtu", s->mtu);
	rte_tel_data_add_dict_string(d, "gso", s->gso);
	rte_tel_data_add_dict_string(d, "gro", s->gro);
	rte_tel_data_add_dict_u64(d, "allmulticast", s->allmulti);
	if (s->eth_rc == 0) {
#define TELEM_X_PMD(n) rte_tel_data_add_dict_u64(d, #n, s->eth.n);
		NIC_PMD_COUNTERS(TELEM_X_PMD)
#undef TELEM_X_PMD
	}
#define TELEM_X_PORT_NIC(n, desc) rte_tel_data_add_dict_u64(d, "nic_" #n, s->nic.n);
	NIC_COUNTERS(TELEM_X_PORT_NIC)
#undef TELEM_X_PORT_NIC
	if (s->nb_queues > 1)
		telem_add_child(d, "queues", telem_port_queues(s));
	return 0;
}

static struct rte_tel_data *telem_conn_row(const struct telem_conn *r)
{
	const struct tcp_conn_info *i = &r->info;
	struct rte_tel_data *c = telem_dict();
	char ep[US_IN6_EPSTRLEN];

	if (c == NULL)
		return NULL;
	us_in6_endpoint_str(&r->a.local_ip, r->a.local_port, ep, sizeof(ep));
	rte_tel_data_add_dict_string(c, "local", ep);
	us_in6_endpoint_str(&r->a.remote_ip, r->a.remote_port, ep, sizeof(ep));
	rte_tel_data_add_dict_string(c, "remote", ep);
	rte_tel_data_add_dict_string(c, "state", tcp_state_str(i->state));
	rte_tel_data_add_dict_string(c, "cc", tcp_cc_name(i->cc));
	rte_tel_data_add_dict_u64(c, "mss", i->mss);
	rte_tel_data_add_dict_u64(c, "cwnd", i->cwnd);
	rte_tel_data_add_dict_u64(c, "ssthresh", i->ssthresh);
	rte_tel_data_add_dict_u64(c, "rtt_us", i->srtt_us);
	rte_tel_data_add_dict_u64(c, "rttvar_us", i->rttvar_us);
	rte_tel_data_add_dict_u64(c, "rto_ms", i->rto_ms);
	rte_tel_data_add_dict_u64(c, "snd_wnd", i->snd_wnd);
	rte_tel_data_add_dict_u64(c, "rcv_wnd", i->rcv_wnd);
	rte_tel_data_add_dict_u64(c, "rcvbuf", i->rcvbuf);
	rte_tel_data_add_dict_u64(c, "unacked", i->snd_nxt - i->snd_una);
	rte_tel_data_add_dict_u64(c, "sndq", r->a.sndq_bytes);
	rte_tel_data_add_dict_u64(c, "rcvq", r->a.rcvq_bytes);
	rte_tel_data_add_dict_u64(c, "bytes_acked", i->bytes_acked);
	rte_tel_data_add_dict_u64(c, "bytes_received", i->bytes_received);
	rte_tel_data_add_dict_u64(c, "retrans", i->retransmits);
	rte_tel_data_add_dict_u64(c, "backoff", i->backoff);
	rte_tel_data_add_dict_u64(c, "sacked", i->sacked);
	rte_tel_data_add_dict_u64(c, "lost", i->lost);
	rte_tel_data_add_dict_u64(c, "delivery_rate", i->delivery_rate);
	rte_tel_data_add_dict_u64(c, "in_recovery", i->in_recovery);
	rte_tel_data_add_dict_u64(c, "fast_retransmits", i->fast_retransmits);
	return c;
}

static int telem_build_conns(struct rte_tel_data *d, const struct telem_snap *s)
{
	struct rte_tel_data *rows;

	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "engine", s->id);
	rte_tel_data_add_dict_u64(d, "total", s->conn_total);
	rte_tel_data_add_dict_u64(d, "start", s->conn_start);
	if (s->conn_start + s->conn_rows < s->conn_total)
		rte_tel_data_add_dict_u64(d, "next", s->conn_start + s->conn_rows);
	/* 22.11 nests only arrays of scalars or dicts in a dict: the rows
	 * are a dict keyed by row number ("0", "1", ...). */
	rows = telem_dict();
	for (unsigned i = 0; rows != NULL && i < s->conn_rows; i++) {
		char key[16];

		snprintf(key, sizeof(key), "%u", s->conn_start + i);
		telem_add_child(rows, key, telem_conn_row(&s->conns[i]));
	}
	telem_add_child(d, "rows", rows);
	return 0;
}

#define TELEM_CMD(name) \
	static int telem_cmd_##name(const char *cmd, const char *params, struct rte_tel_data *d) \
	{ \
		(void)cmd; \
		return telem_run(params, d, telem_build_##name); \
	}
TELEM_CMD(stats)
TELEM_CMD(drops)
TELEM_CMD(port)
TELEM_CMD(conns)
#undef TELEM_CMD

/* Attach and detach (the engine's own thread, at start and at the end) */

static void telem_register(void)
{
	static const struct {
		const char *cmd;
		telemetry_cb fn;
		const char *help;
	} cmds[] = {
		{ "/userstack/stats", telem_cmd_stats,
		  "Every userstack counter (stack, tcp, nic) and the TCBs per state (tcbs). "
		  "Parameters: engine id (default 0)" },
		{ "/userstack/drops", telem_cmd_drops,
		  "userstack drop counters and their total. Parameters: engine id (default 0)" },
		{ "/userstack/port", telem_cmd_port,
		  "The engine's port: rte_eth_stats and nic counters (summed over queues, "
		  "per queue under 'queues'). Parameters: engine id" },
		{ "/userstack/conns", telem_cmd_conns,
		  "Listeners and connections (ss -ti), 16 rows. Parameters: engine id,first row" },
	};

	for (unsigned i = 0; i < RTE_DIM(telem_slots); i++)
		pthread_mutex_init(&telem_slots[i].lock, NULL);
	for (unsigned i = 0; i < RTE_DIM(cmds) && telem_reg_rc == 0; i++)
		telem_reg_rc = rte_telemetry_register_cmd(cmds[i].cmd, cmds[i].fn, cmds[i].help);
}

int us_telemetry_attach(struct us_engine *e, const struct nic_port *port)
{
	struct telem_slot *slot;
	int rc = 0;

	if (e == NULL || e->id >= US_ENGINES_MAX)
		return -EINVAL;
	pthread_once(&telem_once, telem_register);
	if (telem_reg_rc != 0)
		return telem_reg_rc;
	slot = &telem_slots[e->id];
	pthread_mutex_lock(&slot->lock);
	if (slot->e != NULL)
		rc = -EBUSY;
	else {
		slot->e = e;
		slot->port = port;
	}
	pthread_mutex_unlock(&slot->lock);
	return rc;
}

void us_telemetry_detach(struct us_engine *e)
{
	struct telem_slot *slot;

	if (e == NULL || e->id >= US_ENGINES_MAX)
		return;
	slot = &telem_slots[e->id];
	/* Only attach and detach write slot->e, both on the engine's thread, so
	 * this unlocked read races with nothing; packet-script engines, never
	 * attached, return here without touching the lock. */
	if (slot->e != e)
		return;
	pthread_mutex_lock(&slot->lock);
	slot->e = NULL;
	slot->port = NULL;
	pthread_mutex_unlock(&slot->lock);
}

int us_engine_telemetry(struct us_engine *e, const struct nic_port *port)
{
	int rc = us_telemetry_attach(e, port);

	/* Serving goes on without it: a warning, not an error. */
	if (rc < 0)
		US_LOG(stack, WARNING, "engine %u: no telemetry commands: %s\n",
		       e ? e->id : 0u, strerror(-rc));
	return rc;
}
