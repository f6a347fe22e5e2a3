/* tcp/fastopen_tcb.c: TCP Fast Open (RFC 7413) in the state machine; the
 * design notes are in tcp/fastopen_tcb.h, the pure pieces in
 * tcp/fastopen_cookie.c and tcp/fastopen_cache.c. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_byteorder.h>

#include "tcp/tcb.h"
#include "tcp/syncookie.h"

#define TFO_NOP 1

/* Keys: rotation on the engine's wheel */

static void tfo_rotate_fn(struct us_timer *t, uint64_t now_ns)
{
	struct tcp_tfo_stack *tf = (struct tcp_tfo_stack *)((char *)t -
						offsetof(struct tcp_tfo_stack, rotate));
	struct tcp_stack *ts = (struct tcp_stack *)((char *)tf - offsetof(struct tcp_stack, tfo));

	/* RFC 7413 4.1.2: a new secret expires the cookies made two
	 * rotations ago; the previous one stays valid as the backup. */
	if (tfo_keys_maybe_rotate(&tf->keys, now_ns)) {
		tf->ctr.key_rotations++;
		/* One secret per stack: the other engines take it from here. */
		if (ts->env.tfo_keys_rotated != NULL)
			ts->env.tfo_keys_rotated(ts->env.ctx, &tf->keys);
	}
	us_timer_arm(ts->env.wheel, t, tf->keys.next_rotate_ns);
}

/* Only a stack that serves Fast Open needs the timer. */
static void tfo_rotate_arm(struct tcp_stack *ts)
{
	struct tcp_tfo_stack *tf = &ts->tfo;

	if (tf->keys.period_ns != 0 && !tf->follower && !us_timer_armed(&tf->rotate))
		us_timer_arm(ts->env.wheel, &tf->rotate, tf->keys.next_rotate_ns);
}

int tcp_tfo_init(struct tcp_stack *ts)
{
	const struct tcp_config *cfg = &ts->cfg;
	struct tcp_tfo_stack *tf = &ts->tfo;
	uint64_t period = cfg->fastopen_key_set ? 0 : US_SEC(cfg->fastopen_rotate_s);
	int rc;

	us_timer_init(&tf->rotate, tfo_rotate_fn);
	rc = tfo_keys_init(&tf->keys, period, us_timer_now(ts->env.wheel));
	if (rc < 0)
		return rc;
	if (cfg->fastopen_key_set) {
		/* Shared with other servers: never replaced by a random key. */
		memcpy(tf->keys.primary, cfg->fastopen_key[0], TFO_KEY_LEN);
		tf->keys.has_backup = cfg->fastopen_key_backup;
		if (tf->keys.has_backup)
			memcpy(tf->keys.backup, cfg->fastopen_key[1], TFO_KEY_LEN);
	}
	tf->cache = tfo_cache_create(TCP_TFO_CACHE_ENTRIES, US_SEC(TCP_TFO_NEG_TTL_S), &tf->ctr);
	if (tf->cache == NULL)
		return -ENOMEM;
	if (cfg->fastopen & TCP_FASTOPEN_SERVER)
		tfo_rotate_arm(ts);
	return 0;
}

void tcp_tfo_fini(struct tcp_stack *ts)
{
	us_timer_cancel(ts->env.wheel, &ts->tfo.rotate);
	tfo_cache_free(ts->tfo.cache);
	ts->tfo.cache = NULL;
	tfo_keys_wipe(&ts->tfo.keys);
}

void tcp_tfo_follow(struct tcp_stack *ts)
{
	ts->tfo.follower = true;
	us_timer_cancel(ts->env.wheel, &ts->tfo.rotate);
}

void tcp_tfo_keys_get(const struct tcp_stack *ts, struct tfo_keys *out)
{
	*out = ts->tfo.keys;
}

/* The writer's secret replaces ours whole: primary, backup and schedule
 * (the schedule only informs; a follower never rotates by itself). */
void tcp_tfo_keys_set(struct tcp_stack *ts, const struct tfo_keys *k)
{
	struct tfo_keys *mine = &ts->tfo.keys;

	memcpy(mine->primary, k->primary, sizeof(mine->primary));
	memcpy(mine->backup, k->backup, sizeof(mine->backup));
	mine->has_backup = k->has_backup;
	mine->next_rotate_ns = k->next_rotate_ns;
}

const struct tfo_counters *tcp_stack_tfo_stats(const struct tcp_stack *ts)
{
	return &ts->tfo.ctr;
}

/* Listeners */

void tcp_tfo_listener_init(struct tcp_conn *l)
{
	const struct tcp_config *cfg = &l->ts->cfg;

	l->tfo.lst.ctr = &l->ts->tfo.ctr;
	tcp_tfo_listener_set(l, (cfg->fastopen & TCP_FASTOPEN_SERVER) ? cfg->fastopen_qlen : 0);
}

void tcp_tfo_listener_set(struct tcp_conn *l, uint32_t qlen)
{
	l->tfo.lst.enabled = qlen > 0;
	l->tfo.lst.qlen = qlen;
	if (qlen > 0)
		tfo_rotate_arm(l->ts);
}

/* Server */

/* The SYN-ACK carries a cookie for the client's address, in the client's
 * own option kind (34 or 254, RFC 7413 4.1.1 / RFC 6994). */
static void tfo_grant_cookie(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tfo_opt *o = &c->tfo.syn_opt;

	o->type = TFO_OPT_COOKIE;
	o->exp = seg->tfo.exp;
	o->cookie_len = TFO_SERVER_COOKIE_LEN;
	tfo_cookie_make(&c->ts->tfo.keys, &seg->src_ip, &seg->dst_ip, o->cookie);
	c->ts->tfo.ctr.srv_cookies_sent++;
}

/* RFC 7413 4.2.2: the SYN's data is queued and readable at once; the
 * SYN-ACK acknowledges it; the child is accepted before the handshake ends.
 * Consumes m. */
static void tfo_take_syn_data(struct tcp_conn *c, struct rte_mbuf *m, const struct tcp_seg *seg)
{
	struct tcp_stack *ts = c->ts;
	uint32_t skip = seg->skip, len = RTE_MIN(seg->len, c->rcvbuf), n = len;
	struct rte_mbuf *s;

	if (n < seg->len)
		ts->stats.drop_window_trimmed++; /* the rest comes again after the SYN-ACK */
	while ((s = tcp_mbuf_take_piece(&m, &skip, &len)) != NULL)
		tcp_mq_push(&c->rcvq, s);
	c->rcv_nxt += n;
	ts->stats.rx_bytes += n;
	c->bytes_received += n;
	ts->tfo.ctr.srv_data_bytes += n;
	c->tfo.child = true;
	c->tfo.syn_data_acked = true;
	ts->stats.passive_opens++;
	c->ev |= TCP_EV_ACCEPT | TCP_EV_READABLE;
}

/* Profile linux: a SYN-ACK that accepts a cookie made with the primary
 * key carries no cookie, the client's is current (Linux's tcp_try_fastopen
 * sends one only for a backup key's); rfc sends a fresh one each time. */
static bool tfo_cookie_current(const struct tcp_stack *ts, enum tfo_admit a,
			       enum tfo_cookie_verdict v)
{
	return tcp_profile_linux(ts) && a == TFO_ADMIT_ACCEPT && v == TFO_COOKIE_VALID_PRIMARY;
}

struct rte_mbuf *tcp_tfo_server_syn(struct tcp_conn *l, struct tcp_conn *c, struct rte_mbuf *m,
				    const struct tcp_seg *seg)
{
	const struct tfo_opt *o = &seg->tfo;
	enum tfo_cookie_verdict v = TFO_COOKIE_INVALID;
	enum tfo_admit a;
	bool flood;

	if (o->type == TFO_OPT_NONE)
		return m;
	flood = tcp_listener_syncookies_active(l); /* RFC 7413 5.1 */
	if (o->type == TFO_OPT_REQUEST || seg->len == 0) {
		/* RFC 7413 4.2.1: a cookie request (or a cookie with no data
		 * to accept) gets a fresh cookie, unless TFO is off here or
		 * the listener is flooded (it keeps no state then). */
		if (l->tfo.lst.enabled && !flood)
			tfo_grant_cookie(c, seg);
		return m;
	}
	if (l->tfo.lst.enabled)
		v = tfo_cookie_check(&l->ts->tfo.keys, &seg->src_ip, &seg->dst_ip, o->cookie,
				     o->cookie_len);
	/* Each refusal is counted by name in tfo_server_admit. */
	a = tfo_server_admit(&l->tfo.lst, v != TFO_COOKIE_INVALID, flood);
	if (tfo_admit_sends_cookie(a) && !tfo_cookie_current(l->ts, a, v))
		tfo_grant_cookie(c, seg);
	if (a != TFO_ADMIT_ACCEPT)
		return m; /* RFC 7413 4.2.2: ACK only the SYN, drop the data */
	tfo_take_syn_data(c, m, seg);
	return NULL;
}

void tcp_tfo_server_notify(struct tcp_conn *c)
{
	if (c->tfo.child)
		tcb_notify(c);
}

bool tcp_tfo_server_established(struct tcp_conn *c)
{
	struct tcp_conn *l = c->listener;

	if (!c->tfo.child)
		return false;
	c->tfo.child = false;
	if (l != NULL) {
		tfo_listener_pending_done(&l->tfo.lst);
		LIST_REMOVE(c, link);
		l->embryos--;
		c->listener = NULL;
	}
	return true;
}

bool tcp_tfo_may_send(const struct tcp_conn *c)
{
	return c->state == TCP_SYN_RECEIVED && c->tfo.child;
}

void tcp_tfo_on_drop(struct tcp_conn *c)
{
	if (c->tfo.child && c->listener != NULL)
		tfo_listener_pending_done(&c->listener->tfo.lst);
	c->tfo.child = false;
}

bool tcp_tfo_unlisten_detach(struct tcp_conn *c)
{
	if (!c->tfo.child || c->listener == NULL)
		return false;
	/* The application has it: it outlives the listener (no slot to
	 * return: the listener goes too). */
	LIST_REMOVE(c, link);
	c->listener->embryos--;
	c->listener = NULL;
	return true;
}

/* Options */

/* The option and pad NOPs to a 32-bit boundary: profile linux writes the
 * kind first and the NOPs after, as Linux's tcp_options_write; rfc puts
 * the NOPs first, so that the option itself starts aligned. */
static bool tfo_opt_write_aligned(uint8_t *o, unsigned room, const struct tfo_opt *t,
				  unsigned pad, bool nops_after)
{
	unsigned at = nops_after ? 0 : pad;
	int n = tfo_opt_encode(o + at, room - pad, t);

	if (n < 0)
		return false;
	memset(nops_after ? o + n : o, TFO_NOP, pad);
	return true;
}

unsigned tcp_tfo_write_option(struct tcp_conn *c, uint8_t *o, unsigned room)
{
	struct tfo_opt *t = &c->tfo.syn_opt;
	int n = t->type != TFO_OPT_NONE ? tfo_opt_len(t) : -EINVAL;
	unsigned pad;

	if (n < 0)
		return 0;
	pad = (4u - (unsigned)n % 4u) % 4u;
	if ((unsigned)n + pad > room)
		return 0;
	if (!tfo_opt_write_aligned(o, room, t, pad, tcp_profile_linux(c->ts)))
		return 0;
	/* RFC 7413 4.2.2: a retransmitted SYN-ACK carries no cookie. */
	if (c->state == TCP_SYN_RECEIVED)
		t->type = TFO_OPT_NONE;
	return (unsigned)n + pad;
}

/* Client */

static const struct us_in6 *tfo_server_key(const struct tcp_conn *c)
{
	return &c->remote_ip;
}

void tcp_tfo_client_connect(struct tcp_conn *c, bool asked)
{
	struct tcp_stack *ts = c->ts;
	struct tfo_cache_entry_view e;
	enum tfo_cache_status st;
	uint8_t scratch[40];
	uint32_t limit, opts;

	if (!asked && !(ts->cfg.fastopen & TCP_FASTOPEN_CLIENT))
		return;
	st = tfo_cache_lookup(ts->tfo.cache, tfo_server_key(c), tcp_now(c), &e);
	if (st == TFO_CACHE_NEGATIVE)
		return; /* RFC 7413 4.1.3: this server drops SYN data */
	c->tfo.active = true;
	if (st == TFO_CACHE_MISS) {
		/* RFC 7413 4.1.1: an empty option asks for a cookie; the data
		 * waits for the handshake. */
		c->tfo.syn_opt = (struct tfo_opt){ .type = TFO_OPT_REQUEST };
		ts->tfo.ctr.cli_cookie_requests++;
		return;
	}
	c->tfo.syn_opt = (struct tfo_opt){ .type = TFO_OPT_COOKIE, .cookie_len = e.cookie_len };
	memcpy(c->tfo.syn_opt.cookie, e.cookie, e.cookie_len);
	/* RFC 7413 4.1.3: no more than the server's cached MSS (536 without
	 * one); options count against it (RFC 6691). */
	limit = RTE_MIN((uint32_t)tfo_syn_data_limit(&e), (uint32_t)tcp_our_mss(ts, tcb_is_v6(c)));
	opts = tcp_options_write(c, TH_SYN, 0, scratch);
	c->tfo.syn_data_max = limit > opts ? limit - opts : 0;
}

/* RFC 7413 4.1.3: the Fast Open SYN timed out: from now on plain SYNs, and
 * a server that lost SYN data is marked unfriendly for a while. */
static void tfo_client_syn_timeout(struct tcp_conn *c)
{
	struct tcp_tfo_stack *tf = &c->ts->tfo;

	if (c->tfo.syn_opt.type == TFO_OPT_NONE)
		return;
	c->tfo.syn_opt.type = TFO_OPT_NONE;
	tf->ctr.cli_syn_timeouts++;
	if (c->tfo.syn_data_sent)
		tfo_cache_mark_unfriendly(tf->cache, tfo_server_key(c), tcp_now(c));
}

uint32_t tcp_tfo_syn_data_room(const struct tcp_conn *c)
{
	return c->tfo.active && c->tfo.syn_opt.type == TFO_OPT_COOKIE ? c->tfo.syn_data_max : 0;
}

uint32_t tcp_tfo_syn_data_len(struct tcp_conn *c)
{
	if (c->state != TCP_SYN_SENT || !c->tfo.active)
		return 0;
	if (c->syn_retransmitted) {
		tfo_client_syn_timeout(c);
		return 0;
	}
	if (c->tfo.syn_opt.type != TFO_OPT_COOKIE)
		return 0;
	return RTE_MIN(c->sndq.bytes, c->tfo.syn_data_max);
}

void tcp_tfo_syn_data_sent(struct tcp_conn *c, uint32_t len)
{
	uint32_t end = c->iss + 1 + len;

	c->tfo.syn_data_sent = true;
	if (SEQ_GT(end, c->snd_nxt))
		c->snd_nxt = end;
	if (SEQ_GT(c->snd_nxt, c->snd_max))
		c->snd_max = c->snd_nxt;
	c->ts->tfo.ctr.cli_syn_data_sent++;
}

void tcp_tfo_client_synack(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_tfo_stack *tf = &c->ts->tfo;
	const struct tfo_opt *o = &seg->tfo;
	const struct tfo_opt *mine = &c->tfo.syn_opt;

	if (!c->tfo.active)
		return;
	c->tfo.syn_data_acked = c->tfo.syn_data_sent && SEQ_GT(seg->ack, c->iss + 1);
	if (c->tfo.syn_data_sent && seg->ack == c->snd_max)
		tf->ctr.cli_syn_data_acked++;
	/* RFC 7413 4.1.3: cache the cookie and the server's MSS. */
	if (o->type == TFO_OPT_COOKIE) {
		tfo_cache_store(tf->cache, tfo_server_key(c), o->cookie, o->cookie_len, seg->mss);
		tf->ctr.cli_cookies_stored++;
	} else if (mine->type == TFO_OPT_COOKIE && c->tfo.syn_data_acked) {
		/* Accepted without a new cookie (as Linux does): keep ours. */
		tfo_cache_store(tf->cache, tfo_server_key(c), mine->cookie, mine->cookie_len,
				seg->mss);
	} else if (mine->type != TFO_OPT_NONE) {
		/* Answered to our option without a cookie: the server does not
		 * (or no longer) do Fast Open; ask again next time. */
		tfo_cache_store(tf->cache, tfo_server_key(c), NULL, 0, seg->mss);
	}
}

void tcp_tfo_established(struct tcp_conn *c)
{
	if (c->tfo.syn_data_sent)
		tcp_sndq_release_to_una(c); /* the SYN-ACK acked (some of) it */
	if (!SEQ_LT(c->snd_una, c->snd_max))
		return;
	if (c->tfo.syn_data_sent && SEQ_LT(c->snd_una, c->snd_nxt)) {
		/* RFC 7413 4.1.3 / 4.2.2: the server took only part (or none)
		 * of the SYN's data: the rest goes at once, not after an RTO. */
		c->snd_nxt = c->snd_una;
		c->ts->tfo.ctr.cli_syn_data_resent++;
		return;
	}
	/* A server child sent data during the handshake: keep it watched. */
	tcp_rto_start(c, true);
}

void tcp_tfo_client_icmp(struct tcp_conn *c)
{
	struct tcp_tfo_stack *tf = &c->ts->tfo;

	/* RFC 7413 4.1.3: ICMP errors in answer to a Fast Open SYN count as
	 * a negative response. */
	if (c->state != TCP_SYN_SENT || !c->tfo.active)
		return;
	if (c->tfo.syn_data_sent || c->tfo.syn_opt.type != TFO_OPT_NONE)
		tfo_cache_mark_unfriendly(tf->cache, tfo_server_key(c), tcp_now(c));
}

bool tcp_fastopen_cookie_ready(struct tcp_stack *ts, const struct us_in6 *dst_ip)
{
	/* Keyed as tfo_server_key() keys a connection's lookups. */
	return tfo_cache_has_cookie(ts->tfo.cache, dst_ip,
				    us_timer_now(ts->env.wheel));
}
