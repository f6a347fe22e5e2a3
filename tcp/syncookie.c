/* tcp/syncookie.c: SYN cookies (design in tcp/syncookie.h). */
#include <string.h>

#include <sodium.h>

#include "stack/base/rand.h"
#include "tcp/syncookie.h"
#include "tcp/tcb.h"

#define COOKIE_MAC_BITS 22u
#define COOKIE_MAC_MASK ((1u << COOKIE_MAC_BITS) - 1u)
#define COOKIE_IDX_BITS 2u
#define COOKIE_IDX_MASK ((1u << COOKIE_IDX_BITS) - 1u)
#define COOKIE_CNT_SHIFT 24u
#define COOKIE_MAX_AGE 1u /* periods: the current and the previous one */

/* The peer MSS values a cookie can say, per family (like Linux's tables:
 * IPv4's minimum and the common values below Ethernet's 1460; IPv6's
 * minimum link, a tunnel, Ethernet and a jumbo frame, less 60). */
static const uint16_t mss_table[2][1u << COOKIE_IDX_BITS] = {
	{ 536, 1300, 1440, 1460 },
	{ 1280 - 60, 1480 - 60, 1500 - 60, 9000 - 60 },
};

static const uint16_t *mss_table_of(const struct tcp_seg *seg)
{
	return mss_table[!us_in6_is_v4mapped(&seg->src_ip)];
}

void tcp_syncookie_init(struct tcp_stack *ts)
{
	us_rand_buf(ts->syncookie_key, sizeof(ts->syncookie_key));
}

uint32_t tcp_syncookie_counter(uint64_t now_ns)
{
	return (uint32_t)(now_ns / US_SEC(TCP_SYNCOOKIE_PERIOD_S));
}

static uint64_t now_ns(const struct tcp_stack *ts)
{
	return us_timer_now(ts->env.wheel);
}

static uint32_t now_ms(const struct tcp_stack *ts)
{
	return (uint32_t)(now_ns(ts) / US_MS(1)); /* options.c's TS clock */
}

/* SipHash over the 4-tuple (local first, as the segment names them) and
 * n extra 32-bit words. */
static uint32_t cookie_hash(const struct tcp_stack *ts, const struct tcp_seg *seg,
			    const uint32_t *extra, unsigned n)
{
	uint8_t in[TCP_TUPLE_BYTES_MAX + 3 * 4], out[crypto_shorthash_BYTES];
	unsigned len = tcp_tuple_bytes(&seg->dst_ip, seg->dport, &seg->src_ip, seg->sport, in);
	uint32_t h;

	if (n > 0)
		memcpy(in + len, extra, 4 * n);
	crypto_shorthash(out, in, len + 4 * n, ts->syncookie_key);
	memcpy(&h, out, sizeof(h));
	return h;
}

static uint32_t cookie_mac(const struct tcp_stack *ts, const struct tcp_seg *seg, uint32_t pisn,
			   uint32_t counter, unsigned idx)
{
	uint32_t w[3] = { pisn, counter, idx };

	return cookie_hash(ts, seg, w, 3) & COOKIE_MAC_MASK;
}

uint32_t tcp_syncookie_make(const struct tcp_stack *ts, const struct tcp_seg *syn,
			    uint32_t counter, unsigned idx)
{
	uint32_t v = counter << COOKIE_CNT_SHIFT |
		     cookie_mac(ts, syn, syn->seq, counter, idx) << COOKIE_IDX_BITS |
		     (idx & COOKIE_IDX_MASK);

	return cookie_hash(ts, syn, NULL, 0) + v;
}

uint16_t tcp_syncookie_check(const struct tcp_stack *ts, const struct tcp_seg *ack,
			     uint32_t counter)
{
	uint32_t v = ack->ack - 1 - cookie_hash(ts, ack, NULL, 0);
	uint32_t age = (counter - (v >> COOKIE_CNT_SHIFT)) & 0xffu;
	unsigned idx = v & COOKIE_IDX_MASK;

	if (age > COOKIE_MAX_AGE)
		return 0;
	if (((v >> COOKIE_IDX_BITS) & COOKIE_MAC_MASK) !=
	    cookie_mac(ts, ack, ack->seq - 1, counter - age, idx))
		return 0;
	return mss_table_of(ack)[idx];
}

/* The largest table entry not above the peer's MSS (the smallest entry
 * for a smaller one, as Linux does). */
static unsigned mss_index(const uint16_t *table, uint16_t mss)
{
	unsigned i = RTE_DIM(mss_table[0]) - 1;

	while (i > 0 && mss < table[i])
		i--;
	return i;
}

uint32_t tcp_syncookie_ts_encode(uint32_t now, const struct tcp_syncookie_opts *o)
{
	uint32_t bits = o->ws_ok ? o->ws : TCP_SYNCOOKIE_TS_NO_WS;
	uint32_t ts;

	if (o->sack_ok)
		bits |= TCP_SYNCOOKIE_TS_SACK;
	ts = (now & ~TCP_SYNCOOKIE_TS_MASK) | bits;
	/* Never ahead of the clock the connection's later TSvals come from:
	 * the peer's PAWS (RFC 7323 5) needs them non-decreasing. */
	if (SEQ_GT(ts, now))
		ts -= TCP_SYNCOOKIE_TS_MASK + 1;
	return ts;
}

bool tcp_syncookie_ts_decode(const struct tcp_stack *ts, uint32_t ecr,
			     struct tcp_syncookie_opts *o)
{
	uint32_t bits = ecr & TCP_SYNCOOKIE_TS_MASK;
	uint32_t ws = bits & TCP_SYNCOOKIE_TS_NO_WS;

	/* An echo from the future, or options we never offered, were not
	 * made here. */
	if (SEQ_GT(ecr, now_ms(ts)) || (bits & TCP_SYNCOOKIE_TS_ECN))
		return false;
	o->ws_ok = ws != TCP_SYNCOOKIE_TS_NO_WS;
	o->ws = o->ws_ok ? (uint8_t)ws : 0;
	o->sack_ok = bits & TCP_SYNCOOKIE_TS_SACK;
	if (o->ws_ok && (ws > TCP_MAX_WSCALE || !ts->cfg.wscale))
		return false;
	if (o->sack_ok && !ts->cfg.sack)
		return false;
	return true;
}

bool tcp_syncookie_wanted(const struct tcp_conn *l)
{
	switch (l->ts->cfg.syncookies) {
	case TCP_SYNCOOKIES_ALWAYS:
		return true;
	case TCP_SYNCOOKIES_AUTO:
		return l->embryos >= l->backlog;
	default:
		return false;
	}
}

bool tcp_listener_syncookies_active(const struct tcp_conn *l)
{
	return l->syncookie_sent_ns != 0 &&
	       now_ns(l->ts) - l->syncookie_sent_ns < US_SEC(TCP_SYNCOOKIE_ACTIVE_S);
}

/* Whether an ACK to l may be the end of a cookie handshake (like Linux's
 * "no recent overflow" test, so that stray ACKs cost no hashing). */
static bool cookies_recent(const struct tcp_conn *l)
{
	switch (l->ts->cfg.syncookies) {
	case TCP_SYNCOOKIES_ALWAYS:
		return true;
	case TCP_SYNCOOKIES_AUTO:
		return l->syncookie_sent_ns != 0 &&
		       now_ns(l->ts) - l->syncookie_sent_ns <=
			       US_SEC((COOKIE_MAX_AGE + 1) * TCP_SYNCOOKIE_PERIOD_S);
	default:
		return false;
	}
}

/* RFC 9293 3.10.7.2 without a TCB: the SYN-ACK is built on a scratch TCB
 * that lives only for this call (never in a table, no timer armed). */
void tcp_syncookie_send(struct tcp_conn *l, const struct tcp_seg *seg)
{
	struct tcp_stack *ts = l->ts;
	struct tcp_conn tmp;
	/* RFC 9293 3.7.1: the family's default without an option. */
	uint16_t mss = seg->mss ? seg->mss
				: (uint16_t)tcp_default_mss(!us_in6_is_v4mapped(&seg->src_ip));
	unsigned idx = mss_index(mss_table_of(seg), mss);

	memset(&tmp, 0, sizeof(tmp));
	tmp.ts = ts;
	tmp.rcvbuf = ts->cfg.rcvbuf;
	tcp_conn_opts_inherit(&tmp, l); /* the listener's MSS cap, buffers, TOS */
	tmp.state = TCP_SYN_RECEIVED;
	tmp.local_ip = seg->dst_ip;
	tmp.local_port = seg->dport;
	tmp.remote_ip = seg->src_ip;
	tmp.remote_port = seg->sport;
	tmp.flow_label = tcp_flow_label(ts, &tmp.local_ip, tmp.local_port, &tmp.remote_ip,
					tmp.remote_port);
	tcp_timer_init(&tmp);
	tcp_options_negotiate(&tmp, seg);
	if (tmp.ts_ok) {
		struct tcp_syncookie_opts o = {
			.ts_ok = true, .ws_ok = tmp.ws_ok, .ws = tmp.snd_wscale,
			.sack_ok = tmp.sack_ok,
		};

		tmp.ts_off = tcp_syncookie_ts_encode(now_ms(ts), &o) - now_ms(ts);
	} else {
		/* Nothing would remember them: MSS only. */
		tmp.ws_ok = tmp.sack_ok = false;
		tmp.snd_wscale = tmp.rcv_wscale = 0;
	}
	tmp.iss = tcp_syncookie_make(ts, seg, tcp_syncookie_counter(now_ns(ts)), idx);
	tmp.irs = seg->seq;
	tmp.rcv_nxt = tmp.rcv_adv = seg->seq + 1;
	tcp_send_syn(&tmp);
	ts->stats.syncookies_sent++;
	l->syncookie_sent_ns = RTE_MAX(now_ns(ts), (uint64_t)1);
}

/* The ESTABLISHED connection a valid cookie stands for (RFC 9293 3.10.7.2
 * and the SYN-RECEIVED half of 3.10.7.4 at once). */
static struct tcp_conn *cookie_conn(struct tcp_conn *l, const struct tcp_seg *seg,
				    const struct tcp_syncookie_opts *o)
{
	struct tcp_stack *ts = l->ts;
	struct tcp_seg syn = {
		.flags = TH_SYN, .mss = o->mss, .has_ws = o->ws_ok, .ws = o->ws,
		.has_sack_perm = o->sack_ok, .has_ts = o->ts_ok, .ts_val = seg->ts_val,
	};
	struct tcp_conn *c;

	if ((c = tcp_passive_tcb(l, seg, TCP_ESTABLISHED)) == NULL)
		return NULL; /* drop_no_tcb counted */
	tcp_options_negotiate(c, &syn);
	c->irs = seg->seq - 1;
	c->rcv_nxt = seg->seq;
	/* The window our SYN-ACK offered (never scaled, RFC 7323 2.2). */
	c->rcv_adv = c->rcv_nxt + RTE_MIN(c->rcvbuf, TCP_MAX_WIN);
	c->last_ack_sent = c->rcv_nxt;
	c->iss = seg->ack - 1;
	c->snd_una = c->snd_nxt = c->snd_max = c->sndq_seq = seg->ack;
	c->cwnd = TCP_IW_SEGS * c->mss; /* RFC 6928 */
	c->snd_wnd = (uint32_t)seg->wnd << c->snd_wscale;
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
	tcp_table_insert(ts, c);
	ts->stats.passive_opens++;
	c->ev |= TCP_EV_ACCEPT;
	return c;
}

bool tcp_syncookie_ack(struct tcp_conn *l, struct rte_mbuf *m, struct tcp_seg *seg)
{
	struct tcp_stack *ts = l->ts;
	struct tcp_syncookie_opts o = { 0 };
	struct tcp_conn *c;

	if ((seg->flags & (TH_SYN | TH_RST | TH_ACK)) != TH_ACK || !cookies_recent(l))
		return false;
	o.mss = tcp_syncookie_check(ts, seg, tcp_syncookie_counter(now_ns(ts)));
	/* RFC 7323 3.2: without TSecr (or with timestamps off here) the SYN-ACK
	 * had no timestamps, so neither window scale nor SACK either. */
	o.ts_ok = ts->cfg.timestamps && seg->has_ts && seg->ts_ecr != 0;
	if (o.mss == 0 || (o.ts_ok && !tcp_syncookie_ts_decode(ts, seg->ts_ecr, &o))) {
		ts->stats.syncookies_failed++;
		return false;
	}
	c = cookie_conn(l, seg, &o);
	if (c == NULL) {
		rte_pktmbuf_free(m); /* drop_no_tcb counted */
		return true;
	}
	ts->stats.syncookies_ok++;
	/* The ACK may carry data (and a FIN): it is the first segment of the
	 * synchronized connection. */
	tcp_input_synchronized(c, m, seg);
	tcb_notify(c);
	return true;
}
