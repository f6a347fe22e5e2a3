/* tcp/tcp_stack.c: the tcp_stack's life cycle (create, destroy, counters,
 * shutdown, ICMP errors) and the application calls of tcp.h that open
 * connections or read and set their options (RFC 9293 3.10.1 OPEN, 3.10.6
 * STATUS); SEND, RECEIVE, CLOSE and ABORT are in tcp/user.c. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <sodium.h>

#include "stack/base/rand.h"
#include "tcp/syncookie.h"
#include "tcp/tcb.h"

struct tcp_stack *tcp_stack_create(const struct tcp_env *env, const struct tcp_config *cfg)
{
	struct tcp_stack *ts;

	if (env == NULL || env->pool == NULL || env->wheel == NULL || env->output == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (sodium_init() < 0) {
		errno = EIO;
		return NULL;
	}
	ts = calloc(1, sizeof(*ts));
	if (ts == NULL)
		return NULL;
	ts->env = *env;
	if (cfg != NULL)
		ts->cfg = *cfg;
	else
		tcp_config_defaults(&ts->cfg);
	if (ts->cfg.backlog == 0)
		ts->cfg.backlog = 1;
	LIST_INIT(&ts->dead);
	us_rand_buf(ts->isn_key, sizeof(ts->isn_key));
	tcp_flow_key_init(ts);
	us_rand_buf(ts->hash_key, sizeof(ts->hash_key));
	tcp_syncookie_init(ts);
	ts->next_ephemeral = (uint16_t)(TCP_EPHEMERAL_LO +
		us_rand_uniform(TCP_EPHEMERAL_HI - TCP_EPHEMERAL_LO + 1));
	if (tcp_table_init(ts) < 0) {
		free(ts);
		errno = ENOMEM;
		return NULL;
	}
	int rc = tcp_tfo_init(ts); /* RFC 7413 keys and cookie cache */
	if (rc < 0) {
		tcp_tfo_fini(ts);
		tcp_table_fini(ts);
		free(ts);
		errno = -rc;
		return NULL;
	}
	return ts;
}

void tcp_stack_destroy(struct tcp_stack *ts)
{
	struct tcp_conn *c;

	if (ts == NULL)
		return;
	tcp_enter(ts);
	/* Connections first: embryos still point at their listener. */
	for (uint32_t i = 0; i < ts->nbuckets; i++)
		while ((c = LIST_FIRST(&ts->buckets[i])) != NULL)
			tcb_drop(c);
	for (unsigned i = 0; i < RTE_DIM(ts->listeners); i++)
		while ((c = LIST_FIRST(&ts->listeners[i])) != NULL)
			tcb_drop(c);
	tcp_leave(ts);
	tcb_cache_fini(ts);
	tcp_tfo_fini(ts);
	tcp_table_fini(ts);
	free(ts);
}

const struct tcp_stats *tcp_stack_stats(const struct tcp_stack *ts)
{
	return &ts->stats;
}

unsigned tcp_conn_count(const struct tcp_stack *ts)
{
	return ts->nconns;
}

/* Every state but CLOSED has its gauge (a new state needs one). */
_Static_assert(sizeof(struct tcp_state_gauges) == (TCP_STATE_COUNT - 1) * sizeof(uint32_t),
	       "TCP_STATE_GAUGES: one per enum tcp_state but TCP_CLOSED");

void tcp_stack_state_gauges(const struct tcp_stack *ts, struct tcp_state_gauges *out)
{
#define TCP_X_GAUGE_COPY(name, state, desc) out->name = ts->nstate[TCP_##state];
	TCP_STATE_GAUGES(TCP_X_GAUGE_COPY)
#undef TCP_X_GAUGE_COPY
}

uint64_t tcp_syn_sent_closed_ns(const struct tcp_stack *ts)
{
	return ts->syn_sent_closed_ns;
}

/* The process is going and its connections with it: no kernel keeps our
 * orphans to finish their closes.  A peer left in ESTABLISHED, CLOSE-WAIT
 * or LAST-ACK would hold its side for good or retransmit to nobody for
 * data_retries backoffs (minutes); an RST (RFC 9293 3.10.7.3's abort) tells
 * it now.  TIME_WAIT has nothing left to say; SYN-SENT is only dropped
 * (RFC 9293 3.10.4: no RST for a connection that never synchronized). */
unsigned tcp_reset_unfinished(struct tcp_stack *ts)
{
	struct tcp_conn *c, *next;
	unsigned n = 0;

	tcp_enter(ts);
	for (uint32_t i = 0; i < ts->nbuckets; i++) {
		for (c = LIST_FIRST(&ts->buckets[i]); c != NULL; c = next) {
			next = LIST_NEXT(c, hash_link);
			if (c->state == TCP_TIME_WAIT)
				continue;
			n += tcb_synchronized(c);
			tcb_abort(c);
		}
	}
	ts->stats.exit_resets += n;
	tcp_leave(ts);
	return n;
}

/* Frag-needed lowered the MSS: the segments in flight were too big for the
 * path and are gone, so resend from SND.UNA at the new MSS now instead of
 * waiting for the RTO (as Linux's tcp_simple_retransmit does).  RFC 1191
 * 6.4: a Datagram Too Big is not a congestion signal, so cwnd, ssthresh
 * and the backoff stay as they are.  Fast recovery's own
 * NextSeg logic covers the case where it is running. */
static bool pmtu_rewind(struct tcp_conn *c)
{
	if (c->loss.in_recovery || c->snd_max == c->snd_una || !tcb_state_sends_data(c))
		return false;
	c->rtt_active = false; /* Karn: the timed segment is resent */
	c->snd_nxt = c->snd_una;
	c->ts->stats.pmtu_resends++;
	return true;
}

static void pmtu_resend(struct tcp_conn *c)
{
	if (pmtu_rewind(c))
		tcp_output(c);
}

/* The MSS a path MTU leaves (RFC 1191, RFC 8201 5.2), less the 12 bytes of
 * timestamp option every segment carries (as options.c counts them); 0 for
 * an IPv6 MTU below RFC 8200's 1280.  IPv4 MTUs come through ipv4_floor
 * first. */
static uint32_t pmtu_mss(const struct tcp_conn *c, uint32_t mtu)
{
	uint32_t mss;

	if (tcb_is_v6(c))
		mss = mtu >= 1280 ? mtu - 60 : 0;
	else
		mss = mtu - 40;
	if (mss != 0 && c->ts_ok)
		mss -= 12;
	return mss;
}

/* IPv4, as Linux's __ip_rt_update_pmtu: a next-hop MTU below min_pmtu (0
 * from an RFC 792 router too) is taken as min_pmtu, and the connection
 * sends without DF from then on, so that a path that really is narrower
 * fragments our segments instead of dropping them. */
static uint32_t ipv4_floor(struct tcp_conn *c, uint32_t mtu)
{
	uint32_t floor = c->ts->cfg.min_pmtu;

	if (mtu >= floor)
		return mtu;
	if (!c->df_off) {
		c->df_off = true;
		c->ts->stats.pmtu_df_cleared++;
	}
	return floor;
}

void tcp_pmtu_follow(struct tcp_conn *c)
{
	const struct tcp_env *env = &c->ts->env;
	uint32_t mtu, mss;

	if (env->path_mtu == NULL || c->state < TCP_ESTABLISHED)
		return;
	mtu = env->path_mtu(env->ctx, &c->remote_ip);
	mss = mtu != 0 ? pmtu_mss(c, mtu) : 0;
	if (mss == 0 || mss >= c->mss)
		return;
	c->mss = mss;
	c->ts->stats.pmtu_followed++;
	pmtu_rewind(c);
}

/* RFC 1191 / RFC 8201 (too big: lower the MSS) and RFC 5927 4.1 (believe
 * only errors quoting a sequence number in flight, SND.UNA =< seq <
 * SND.MAX).  RFC 1122 4.2.3.9 / RFC 5927 4.2: every other unreachable is a
 * soft error for a live connection (never aborts it); only protocol or
 * port unreachable for our SYN is a hard one (ECONNREFUSED).  The network
 * layer sorts the types (stack/net/icmp.c, icmp6.c): source quench is
 * discarded (MUST-55), time exceeded and parameter problem are soft
 * (MUST-56; RFC 4443 3.3/3.4 for ICMPv6). */
bool tcp_icmp_error(struct tcp_stack *ts, enum tcp_icmp_kind kind, int err, uint32_t mtu,
		    const struct us_in6 *qsrc, const struct us_in6 *qdst, const void *quoted_l4,
		    size_t quoted_len)
{
	const uint8_t *l4 = quoted_l4;
	struct tcp_conn *c;
	uint32_t seq, mss;
	bool df_was_off;

	if (qsrc == NULL || qdst == NULL || l4 == NULL || quoted_len < 8)
		return false;
	c = tcp_table_lookup(ts, qsrc, (uint16_t)(l4[0] << 8 | l4[1]), qdst,
			     (uint16_t)(l4[2] << 8 | l4[3]));
	if (c == NULL) {
		ts->stats.icmp_ignored_no_conn++;
		return false;
	}
	seq = (uint32_t)l4[4] << 24 | (uint32_t)l4[5] << 16 | (uint32_t)l4[6] << 8 | l4[7];
	if (SEQ_LT(seq, c->snd_una) || SEQ_GEQ(seq, c->snd_max)) {
		ts->stats.icmp_ignored_out_of_window++;
		return false;
	}
	tcp_tfo_client_icmp(c); /* RFC 7413 4.1.3: negative cache */
	df_was_off = c->df_off;
	if (kind == TCP_ICMP_TOO_BIG && !tcb_is_v6(c))
		mtu = ipv4_floor(c, mtu);
	mss = kind == TCP_ICMP_TOO_BIG ? pmtu_mss(c, mtu) : 0;
	tcp_enter(ts);
	if (mss != 0 && mss < c->mss) {
		c->mss = mss;
		ts->stats.icmp_frag_needed_applied++;
		pmtu_resend(c);
	} else if (c->df_off != df_was_off) {
		/* No smaller MSS, but what was dropped for DF may pass now. */
		pmtu_resend(c);
	} else if (c->state == TCP_SYN_SENT && kind == TCP_ICMP_HARD) {
		/* Protocol/port unreachable for our SYN: a hard error. */
		ts->stats.icmp_hard_errors++;
		tcb_set_closed(c, ECONNREFUSED);
		tcb_drop(c);
		tcb_notify(c);
	} else {
		/* RFC 9293 3.9.1.8 (MUST-47), as Linux's tcp_v4_err: kept for
		 * the application, reported if the connection times out. */
		ts->stats.icmp_soft_errors++;
		c->soft_err = err != 0 ? err : EHOSTUNREACH;
		c->soft_errors++;
	}
	tcp_leave(ts);
	return true;
}

int tcp_listen(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port,
	       unsigned flags, const struct tcp_callbacks *cb, void *ctx)
{
	static const struct us_in6 any;
	struct tcp_conn *l;

	if (port == 0 || cb == NULL)
		return -EINVAL;
	if (local_ip == NULL)
		local_ip = &any;
	if (tcp_listener_exact(ts, local_ip, port) != NULL)
		return -EADDRINUSE;
	l = tcb_alloc(ts);
	if (l == NULL)
		return -ENOMEM;
	l->state = TCP_LISTEN;
	l->local_ip = *local_ip;
	l->listen_v6only = (flags & TCP_LISTEN_V6ONLY) != 0;
	l->local_port = port;
	l->cb = *cb;
	l->ctx = ctx;
	l->backlog = ts->cfg.backlog;
	tcp_tfo_listener_init(l);
	tcp_listener_insert(ts, l);
	return 0;
}

int tcp_listener_set_ctx(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port,
			 void *ctx)
{
	struct tcp_conn *l = tcp_listener_exact(ts, local_ip, port);

	struct tcp_conn *c;

	if (l == NULL)
		return -ENOENT;
	/* Embryos not yet accepted are delivered to the new ctx too. */
	LIST_FOREACH(c, &l->embryo_list, link)
		if (c->ctx == l->ctx)
			c->ctx = ctx;
	l->ctx = ctx;
	return 0;
}

int tcp_set_fastopen(struct tcp_stack *ts, uint16_t port, uint32_t qlen)
{
	struct tcp_conn_list *bucket = &ts->listeners[port % RTE_DIM(ts->listeners)];
	struct tcp_conn *l;
	int found = 0;

	LIST_FOREACH(l, bucket, hash_link) {
		if (l->local_port != port)
			continue;
		tcp_tfo_listener_set(l, qlen);
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

/* Drops listener l; its half-open connections are reset. */
static void unlisten_one(struct tcp_conn *l)
{
	struct tcp_conn *c;

	while ((c = LIST_FIRST(&l->embryo_list)) != NULL) {
		if (tcp_tfo_unlisten_detach(c))
			continue; /* RFC 7413: accepted already, lives on */
		tcp_send_rst(c);
		tcb_drop(c);
	}
	tcb_drop(l);
}

int tcp_unlisten(struct tcp_stack *ts, uint16_t port)
{
	struct tcp_conn_list *bucket = &ts->listeners[port % RTE_DIM(ts->listeners)];
	struct tcp_conn *l, *next;
	int found = 0;

	tcp_enter(ts);
	for (l = LIST_FIRST(bucket); l != NULL; l = next) {
		next = LIST_NEXT(l, hash_link);
		if (l->local_port != port)
			continue;
		unlisten_one(l);
		found = 1;
	}
	tcp_leave(ts);
	return found ? 0 : -ENOENT;
}

int tcp_unlisten_addr(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port)
{
	struct tcp_conn *l = tcp_listener_exact(ts, local_ip, port);

	if (l == NULL)
		return -ENOENT;
	tcp_enter(ts);
	unlisten_one(l);
	tcp_leave(ts);
	return 0;
}

void tcp_unlisten_all(struct tcp_stack *ts)
{
	for (unsigned i = 0; i < RTE_DIM(ts->listeners); i++)
		while (!LIST_EMPTY(&ts->listeners[i]))
			(void)tcp_unlisten(ts, LIST_FIRST(&ts->listeners[i])->local_port);
}

int tcp_connect_src(const struct tcp_stack *ts, const struct us_in6 *dst_ip, struct us_in6 *src)
{
	bool v4 = us_in6_is_v4mapped(dst_ip);
	const struct us_in6 *a = v4 ? &ts->env.local_ip : &ts->env.local_ip6;

	if (v4 ? us_in6_v4(a) == 0 : us_in6_is_unspec(a))
		return -EADDRNOTAVAIL; /* no address of dst_ip's family */
	*src = *a;
	return 0;
}

/* A TCB in SYN-SENT, in the table, its SYN not sent yet. */
static int connect_alloc(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
			 const struct tcp_conn_opts *o, const struct tcp_callbacks *cb, void *ctx,
			 struct tcp_conn **out)
{
	struct us_in6 src;
	struct tcp_conn *c;
	uint16_t port;
	int rc;

	if (cb == NULL || out == NULL || dst_ip == NULL || dst_port == 0 ||
	    (o != NULL && o->cc_set && (unsigned)o->cc >= TCP_CC_ALG_COUNT))
		return -EINVAL;
	/* RFC 9293 3.9.1.1 (MUST-46): no OPEN to a group; Linux's error. */
	if (tcp_addr_is_group(dst_ip)) {
		ts->stats.connect_group_refused++;
		return -ENETUNREACH;
	}
	rc = tcp_connect_src(ts, dst_ip, &src);
	if (rc < 0)
		return rc;
	if (ts->nconns >= ts->cfg.max_conns)
		return -ENOBUFS;
	rc = tcp_ephemeral_port(ts, &src, dst_ip, dst_port, &port);
	if (rc < 0)
		return rc;
	c = tcb_alloc(ts);
	if (c == NULL)
		return -ENOMEM;
	c->state = TCP_SYN_SENT;
	c->local_ip = src;
	c->local_port = port;
	c->remote_ip = *dst_ip;
	c->remote_port = dst_port;
	c->cb = *cb;
	c->ctx = ctx;
	c->iss = tcp_isn(ts, &c->local_ip, port, &c->remote_ip, dst_port);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->sndq_seq = c->iss + 1;
	tcp_conn_opts_connect(c, o);
	c->mss = tcp_conn_mss_cap(c);
	tcp_table_insert(ts, c);
	ts->stats.active_opens++;
	*out = c;
	return 0;
}

static void connect_start(struct tcp_conn *c)
{
	struct tcp_stack *ts = c->ts;

	c->rtt_active = true;
	c->rtt_seq = c->iss;
	c->rtt_start_ns = us_timer_now(ts->env.wheel);
	tcp_enter(ts);
	tcp_send_syn(c); /* if the pool is empty, the RTO sends it again */
	tcp_rto_start(c, true);
	tcp_leave(ts);
}

int tcp_connect(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
		const struct tcp_callbacks *cb, void *ctx, struct tcp_conn **out)
{
	return tcp_connect_opts(ts, dst_ip, dst_port, NULL, cb, ctx, out);
}

int tcp_connect_opts(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
		     const struct tcp_conn_opts *o, const struct tcp_callbacks *cb, void *ctx,
		     struct tcp_conn **out)
{
	int rc = connect_alloc(ts, dst_ip, dst_port, o, cb, ctx, out);

	if (rc == 0)
		connect_start(*out);
	return rc;
}

ssize_t tcp_connect_data(struct tcp_stack *ts, const struct us_in6 *dst_ip, uint16_t dst_port,
			 const void *data, size_t len, unsigned flags,
			 const struct tcp_conn_opts *o, const struct tcp_callbacks *cb, void *ctx,
			 struct tcp_conn **out)
{
	ssize_t queued = 0;
	int rc;

	if (data == NULL && len > 0)
		return -EINVAL;
	rc = connect_alloc(ts, dst_ip, dst_port, o, cb, ctx, out);
	if (rc < 0)
		return rc;
	/* RFC 7413 4.1: cookie (and data in the SYN) or a cookie request. */
	tcp_tfo_client_connect(*out, (flags & TCP_CONNECT_FASTOPEN) != 0);
	if (flags & TCP_CONNECT_SYN_ONLY)
		len = RTE_MIN(len, (size_t)tcp_tfo_syn_data_room(*out));
	/* Queued in SYN-SENT, nothing goes out yet (output.c). */
	if (len > 0)
		queued = tcp_send(*out, data, len);
	if (queued < 0) {
		tcp_enter(ts);
		tcb_drop(*out);
		tcp_leave(ts);
		*out = NULL;
		return queued;
	}
	connect_start(*out);
	return queued;
}

void tcp_conn_set_ctx(struct tcp_conn *c, void *ctx)
{
	c->ctx = ctx;
}

/* Linux's tcp_set_ca_state, from our recovery state: Recovery during fast
 * recovery, Loss after an RTO until SND.UNA passes what was then sent,
 * Disorder with duplicate ACKs or SACKed data. */
static uint8_t conn_ca_state(const struct tcp_conn *c)
{
	if (c->loss.in_recovery)
		return 3;
	if (c->loss.recover_valid && SEQ_LT(c->snd_una, c->loss.recover))
		return 4;
	return c->loss.dupacks > 0 || c->sb.sacked > 0 ? 1 : 0;
}

/* What Linux's struct tcp_info has beyond our own view. */
static void conn_info_more(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	const struct tcp_env *env = &c->ts->env;
	uint32_t pmtu = env->path_mtu != NULL ? env->path_mtu(env->ctx, &c->remote_ip) : 0;
	uint64_t chrono[TCP_CHRONO_COUNT];

	tcp_chrono_read(c, chrono);
	info->ca_state = conn_ca_state(c);
	info->retries = c->retries;
	info->ts_ok = c->ts_ok;
	info->sack_ok = c->sack_ok;
	info->ws_ok = c->ws_ok;
	info->snd_wscale = c->snd_wscale;
	info->rcv_wscale = c->rcv_wscale;
	info->rcv_mss = c->rcv_mss ? c->rcv_mss : TCP_DEFAULT_MSS;
	info->adv_mss = tcp_adv_mss(c) - (c->ts_ok ? TCP_TS_OPT_SPACE : 0);
	info->pmtu = pmtu != 0 ? pmtu : env->mtu;
	info->ato_us = c->ts->cfg.delack_ms * 1000u;
	info->in_flight = c->snd_max - c->snd_una;
	info->unsent = tcp_sndq_unsent(c);
	info->retrans_out = SEQ_LT(c->snd_nxt, c->snd_max) ? c->snd_nxt - c->snd_una : 0;
	info->now_ns = tcp_now(c);
	info->last_data_sent_ns = c->last_data_sent_ns;
	info->last_data_rcvd_ns = c->last_data_rcvd_ns;
	info->last_heard_ns = c->last_heard_ns;
	info->min_rtt_us = c->min_rtt_us;
	info->bytes_sent = c->bytes_sent;
	info->bytes_retrans = c->bytes_retrans;
	info->rcv_ooopack = c->rcv_ooopack;
	info->soft_errors = c->soft_errors;
	info->soft_err = c->soft_err;
	info->busy_ns = chrono[TCP_CHRONO_BUSY] + chrono[TCP_CHRONO_RWND] +
			chrono[TCP_CHRONO_SNDBUF];
	info->rwnd_limited_ns = chrono[TCP_CHRONO_RWND];
	info->sndbuf_limited_ns = chrono[TCP_CHRONO_SNDBUF];
}

void tcp_conn_get_info(const struct tcp_conn *c, struct tcp_conn_info *info)
{
	*info = (struct tcp_conn_info){
		.state = (uint8_t)c->state,
		.snd_una = c->snd_una, .snd_nxt = c->snd_nxt, .rcv_nxt = c->rcv_nxt,
		.snd_wnd = c->snd_wnd,
		.rcv_wnd = SEQ_GT(c->rcv_adv, c->rcv_nxt) ? c->rcv_adv - c->rcv_nxt : 0,
		.rcvbuf = c->rcvbuf,
		.mss = c->mss, .cwnd = c->cwnd,
		.ssthresh = c->ssthresh,
		.srtt_us = c->srtt_us, .rttvar_us = c->rttvar_us,
		.rto_ms = tcp_rto_current_ms(c),
		.retransmits = c->total_retrans,
		.bytes_acked = c->bytes_acked, .bytes_received = c->bytes_received,
		.backoff = c->backoff,
		.probes = RTE_MAX(c->persist_unanswered, c->ka_unanswered),
		.persist_probes = c->persist_probes, .keepalive_probes = c->ka_probes,
		.nodelay = c->nodelay_set ? c->nodelay : c->ts->cfg.nodelay_default,
		.keepalive = c->keepalive,
		.sacked = tcp_sb_conn_sacked(c), .lost = tcp_sb_conn_lost(c),
		.delivery_rate = c->sb.delivery_rate,
		.cc = (uint8_t)(c->cc.ready ? c->cc.alg : tcp_cc_alg(c)),
		.in_recovery = c->loss.in_recovery,
		.fast_retransmits = c->loss.fast_retransmits,
		.recovery_episodes = c->loss.recovery_episodes,
		.partial_acks = c->loss.partial_acks,
		.syn_data_acked = c->tfo.syn_data_acked,
	};
	tcp_loss_info(c, info); /* loss.c */
	conn_info_more(c, info);
}

/* RFC 9293 3.7.4 (MUST-17): the application may turn Nagle off; data it
 * held back goes out at once. */
int tcp_set_nodelay(struct tcp_conn *c, bool on)
{
	if (c->app_closed)
		return -EBADF;
	if (c->dead || c->state == TCP_LISTEN)
		return -ENOTCONN;
	c->nodelay_set = true;
	c->nodelay = on;
	if (on) {
		/* Linux's TCP_NAGLE_PUSH: what a cork holds goes out now; the
		 * cork still holds what comes after. */
		tcp_enter(c->ts);
		if (c->o.cork && c->ts->depth <= 1)
			tcp_output_push(c);
		else
			tcp_output_soon(c);
		tcp_leave(c->ts);
	}
	return 0;
}

int tcp_set_quickack(struct tcp_conn *c, bool on)
{
	if (c->app_closed)
		return -EBADF;
	if (c->dead || c->state == TCP_LISTEN)
		return -ENOTCONN;
	c->ack_hold = !on;
	return 0;
}

void tcp_conn_peer(const struct tcp_conn *c, struct us_in6 *ip, uint16_t *port)
{
	*ip = c->remote_ip;
	*port = c->remote_port;
}
