/* tcp/options.c: TCP options (RFC 9293 3.2, 3.7.1; RFC 7323 window scale
 * and timestamps; RFC 2018 SACK, RFC 2883 D-SACK) and what hangs off them:
 * negotiation on the SYNs, window scaling, PAWS and TS.Recent.
 *
 * Parsing never reads past the header: an option whose length byte is
 * missing, below 2 or running past the end stops parsing (RFC 9293 3.1: "a
 * TCP implementation MUST be prepared to handle an illegal option length");
 * unknown kinds are skipped by their length.  Options seen so far stay valid.
 */
#include <string.h>

#include "tcp/tcb.h"

#define TCPOPT_EOL 0
#define TCPOPT_NOP 1
#define TCPOPT_MSS 2
#define TCPOPT_WS 3
#define TCPOPT_SACK_PERM 4
#define TCPOPT_SACK 5
#define TCPOPT_TS 8
#define TCPOLEN_MSS 4
#define TCPOLEN_WS 3
#define TCPOLEN_SACK_PERM 2
#define TCPOLEN_TS 10
#define TCP_PAWS_IDLE_NS (24ull * 86400 * 1000000000ull) /* RFC 7323 5.5 */

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint8_t *wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return p + 4;
}

static void parse_one(struct tcp_stack *ts, const uint8_t *p, unsigned len, struct tcp_seg *seg)
{
	bool syn = seg->flags & TH_SYN;

	switch (p[0]) {
	case TCPOPT_MSS:
		/* RFC 9293 3.7.1: only meaningful on a SYN. */
		if (len == TCPOLEN_MSS && syn)
			seg->mss = (uint16_t)(p[2] << 8 | p[3]);
		break;
	case TCPOPT_WS:
		/* RFC 7323 2.2: only on a SYN; 2.3: above 14, log and use 14. */
		if (len == TCPOLEN_WS && syn) {
			seg->has_ws = true;
			seg->ws = p[2];
			if (seg->ws > TCP_MAX_WSCALE) {
				ts->stats.wscale_clamped++;
				seg->ws = TCP_MAX_WSCALE;
			}
		}
		break;
	case TCPOPT_SACK_PERM:
		/* RFC 2018 2: only on a SYN. */
		if (len == TCPOLEN_SACK_PERM && syn)
			seg->has_sack_perm = true;
		break;
	case TCPOPT_TS:
		if (len == TCPOLEN_TS) {
			seg->has_ts = true;
			seg->ts_val = rd32(p + 2);
			seg->ts_ecr = rd32(p + 6);
		}
		break;
	case TFO_OPT_KIND:
	case TFO_OPT_KIND_EXP:
		/* RFC 7413 4.1.1: only on a SYN, the first one counts; bad
		 * lengths (and other ExIDs of kind 254) are ignored. */
		if (syn && seg->tfo.type == TFO_OPT_NONE)
			tfo_opt_decode(p, len, &seg->tfo);
		break;
	case TCPOPT_SACK:
		/* RFC 2018 3: 2 + 8n bytes, at most 4 blocks in 40 bytes; a
		 * malformed length is ignored (the blocks would be garbage). */
		if (len >= 10 && (len - 2) % 8 == 0 && (len - 2) / 8 <= TCP_SACK_MAX_BLOCKS) {
			seg->nsack = (uint8_t)((len - 2) / 8);
			for (unsigned i = 0; i < seg->nsack; i++) {
				seg->sack[i][0] = rd32(p + 2 + 8 * i);
				seg->sack[i][1] = rd32(p + 6 + 8 * i);
			}
		}
		break;
	default:
		/* Unknown: skipped by its length. */
		break;
	}
}

void tcp_options_parse(struct tcp_stack *ts, const struct rte_tcp_hdr *th, unsigned hlen,
		       struct tcp_seg *seg)
{
	const uint8_t *p = (const uint8_t *)(th + 1);
	unsigned left = hlen > sizeof(*th) ? hlen - sizeof(*th) : 0;

	seg->mss = 0;
	seg->has_ws = seg->has_sack_perm = seg->has_ts = false;
	seg->ws = 0;
	seg->ts_val = seg->ts_ecr = 0;
	seg->nsack = 0;
	seg->tfo = (struct tfo_opt){ .type = TFO_OPT_NONE };
	while (left > 0) {
		uint8_t kind = p[0];

		if (kind == TCPOPT_EOL)
			return;
		if (kind == TCPOPT_NOP) {
			p++;
			left--;
			continue;
		}
		if (left < 2 || p[1] < 2 || p[1] > left) {
			ts->stats.opt_malformed++;
			return; /* bad length: stop without reading further */
		}
		parse_one(ts, p, p[1], seg);
		left -= p[1];
		p += p[1];
	}
}

/* The largest a receive buffer may grow to (autotuning), never below where
 * it starts: config/ checks rcvbuf_max >= rcvbuf, a config built in code may
 * only have set rcvbuf. */
uint32_t tcp_rcvbuf_limit(const struct tcp_config *cfg)
{
	return RTE_MAX(cfg->rcvbuf, cfg->rcvbuf_max);
}

/* Smallest shift that lets the whole buffer be offered (RFC 7323 2.3):
 * chosen on the SYN for the largest the buffer may grow to, since the
 * shift cannot change later. */
uint8_t tcp_rcv_wscale_for(uint32_t rcvbuf)
{
	uint8_t s = 0;

	while (s < TCP_MAX_WSCALE && (rcvbuf >> s) > TCP_MAX_WIN)
		s++;
	return s;
}

void tcp_options_negotiate(struct tcp_conn *c, const struct tcp_seg *seg)
{
	const struct tcp_config *cfg = &c->ts->cfg;
	uint32_t peer = seg->mss ? seg->mss : tcp_default_mss(tcb_is_v6(c)); /* RFC 9293 3.7.1 */

	if (peer < TCP_MIN_SND_MSS) {
		c->ts->stats.mss_clamped_min++;
		peer = TCP_MIN_SND_MSS;
	}

	/* RFC 7323 2.2: scaling only when both SYNs carry the option. */
	c->ws_ok = cfg->wscale && seg->has_ws;
	c->snd_wscale = c->ws_ok ? seg->ws : 0;
	c->rcv_wscale = c->ws_ok ? tcp_rcv_wscale_for(tcp_rcvbuf_limit(cfg)) : 0;
	c->sack_ok = cfg->sack && seg->has_sack_perm; /* RFC 2018 2 */
	/* RFC 7323 3.2: timestamps only when both SYNs carry them. */
	c->ts_ok = cfg->timestamps && seg->has_ts;
	if (c->ts_ok) {
		c->ts_recent = seg->ts_val;
		c->ts_recent_ns = tcp_now(c);
	}
	/* RFC 9293 3.7.1: Eff.snd.MSS = min(SendMSS + 20, MMS_S) - TCPhdrsize,
	 * MMS_S from the route MTU; the header carries the timestamps. */
	c->mss = RTE_MIN(peer, tcp_conn_mss_cap(c));
	if (c->ts_ok)
		c->mss -= TCP_TS_OPT_SPACE;
}

uint32_t tcp_max_rcv_wnd(const struct tcp_conn *c)
{
	/* RFC 7323 2.2: the SYNs' windows are never scaled; until ESTABLISHED
	 * we offer no more than they could say. */
	if (c->state < TCP_ESTABLISHED)
		return TCP_MAX_WIN;
	return TCP_MAX_WIN << c->rcv_wscale;
}

uint16_t tcp_wnd_field(struct tcp_conn *c, uint8_t flags)
{
	uint32_t w = tcp_rcv_window(c);

	if (!(flags & TH_SYN))
		w >>= c->rcv_wscale; /* RFC 7323 2.3: SEG.WND = RCV.WND >> shift */
	return (uint16_t)RTE_MIN(w, TCP_MAX_WIN);
}

static uint32_t ts_clock(const struct tcp_conn *c)
{
	/* RFC 7323 5.4: a 1 ms clock, within the 1 ms .. 1 s range. */
	return (uint32_t)(tcp_now(c) / US_MS(1));
}

uint32_t tcp_ts_val(const struct tcp_conn *c)
{
	return ts_clock(c) + c->ts_off;
}

/* NOP NOP TS: TSval our clock, TSecr TS.Recent (RFC 7323 3.2: zero unless
 * the ACK bit is set). */
static unsigned write_ts(const struct tcp_conn *c, uint8_t flags, uint8_t *o, bool nops)
{
	unsigned n = 0;

	if (nops) {
		o[n++] = TCPOPT_NOP;
		o[n++] = TCPOPT_NOP;
	}
	o[n++] = TCPOPT_TS;
	o[n++] = TCPOLEN_TS;
	wr32(o + n, tcp_ts_val(c));
	wr32(o + n + 4, (flags & TH_ACK) ? c->ts_recent : 0);
	return n + 8;
}

static unsigned write_syn(struct tcp_conn *c, uint8_t flags, uint8_t *o)
{
	const struct tcp_config *cfg = &c->ts->cfg;
	bool offer = c->state == TCP_SYN_SENT; /* else a SYN-ACK: only answers */
	bool ws = offer ? cfg->wscale : c->ws_ok;
	bool sack = offer ? cfg->sack : c->sack_ok;
	bool ts = offer ? cfg->timestamps : c->ts_ok;
	uint16_t mss = (uint16_t)tcp_adv_mss(c);
	unsigned n = 0;

	o[n++] = TCPOPT_MSS;
	o[n++] = TCPOLEN_MSS;
	o[n++] = (uint8_t)(mss >> 8);
	o[n++] = (uint8_t)mss;
	if (sack) {
		if (!ts) {
			o[n++] = TCPOPT_NOP;
			o[n++] = TCPOPT_NOP;
		}
		o[n++] = TCPOPT_SACK_PERM;
		o[n++] = TCPOLEN_SACK_PERM;
	}
	if (ts)
		n += write_ts(c, flags, o + n, !sack);
	if (ws) {
		o[n++] = TCPOPT_NOP;
		o[n++] = TCPOPT_WS;
		o[n++] = TCPOLEN_WS;
		o[n++] = offer ? tcp_rcv_wscale_for(tcp_rcvbuf_limit(cfg)) : c->rcv_wscale;
	}
	/* RFC 7413 4.1.1: Fast Open cookie or request (tcp/fastopen_tcb.c). */
	n += tcp_tfo_write_option(c, o + n, 40 - n);
	return n;
}

/* NOP NOP SACK with as many blocks as fit in room bytes (RFC 2018 3). */
static unsigned write_sack(struct tcp_conn *c, uint8_t *o, unsigned room)
{
	uint32_t blk[TCP_SACK_MAX_BLOCKS][2];
	unsigned max = room >= 12 ? (room - 4) / 8 : 0, nb, n = 0;

	if (max == 0)
		return 0;
	nb = tcp_sack_blocks(c, blk, RTE_MIN(max, TCP_SACK_MAX_BLOCKS));
	if (nb == 0)
		return 0;
	o[n++] = TCPOPT_NOP;
	o[n++] = TCPOPT_NOP;
	o[n++] = TCPOPT_SACK;
	o[n++] = (uint8_t)(2 + 8 * nb);
	for (unsigned i = 0; i < nb; i++) {
		wr32(o + n, blk[i][0]);
		wr32(o + n + 4, blk[i][1]);
		n += 8;
	}
	return n;
}

/* An RST of a connection (ABORT, data after close): with timestamps
 * negotiated, profile linux sends TSopt as Linux's tcp_send_active_reset
 * does (RFC 7323 3.2: once negotiated, TSopt goes on every segment, and a
 * peer checking PAWS on RSTs then takes it); rfc sends a bare RST. */
static unsigned rst_options(const struct tcp_conn *c, uint8_t flags, uint8_t *opt)
{
	if (!c->ts_ok || !tcp_profile_linux(c->ts))
		return 0;
	return write_ts(c, flags, opt, true);
}

unsigned tcp_options_write(struct tcp_conn *c, uint8_t flags, uint32_t len, uint8_t *opt)
{
	unsigned n = 0, room;
	/* The largest segment this connection may send: its MSS (which the
	 * timestamps' room was taken from, and which an ICMP "fragmentation
	 * needed" lowers to the path's MTU) plus the headers and that room,
	 * not the interface's MTU (RFC 6691: options come out of the MSS). */
	uint32_t mtu = c->mss + 40 + (c->ts_ok ? TCP_TS_OPT_SPACE : 0);

	if (flags & TH_RST)
		return rst_options(c, flags, opt);
	if (flags & TH_ACK)
		c->last_ack_sent = c->rcv_nxt; /* RFC 7323 4.3 */
	if (flags & TH_SYN)
		return write_syn(c, flags, opt); /* 40 bytes at most, x4 */
	if (c->ts_ok)
		n += write_ts(c, flags, opt + n, true);
	if (c->sack_ok && (flags & TH_ACK)) {
		/* The blocks must not push a full segment past that size. */
		room = 40 - n;
		if (len > 0)
			room = mtu > 40 + len + n ? RTE_MIN(room, mtu - 40 - len - n) : 0;
		n += write_sack(c, opt + n, room);
	}
	return tcp_options_pad(opt, n);
}

unsigned tcp_options_pad(uint8_t *opt, unsigned n)
{
	/* RFC 9293 3.1 (MUST-69): EOL, then zeros, which EOL is. */
	while (n % 4)
		opt[n++] = TCPOPT_EOL;
	return n;
}

/* RFC 7323 5.3 R1 (PAWS) and 3.2; false: the caller drops the segment. */
bool tcp_paws_ok(struct tcp_conn *c, const struct tcp_seg *seg)
{
	struct tcp_stats *st = &c->ts->stats;

	if (!c->ts_ok || (seg->flags & TH_RST))
		return true;
	if (!seg->has_ts) {
		/* RFC 7323 3.2: a non-RST segment without TSopt once it was
		 * negotiated SHOULD be silently dropped. */
		st->drop_no_ts++;
		return false;
	}
	if (!SEQ_LT(seg->ts_val, c->ts_recent))
		return true;
	if (tcp_now(c) - c->ts_recent_ns > TCP_PAWS_IDLE_NS) {
		/* RFC 7323 5.5: TS.Recent from an idle connection is invalid. */
		c->ts_recent = seg->ts_val;
		c->ts_recent_ns = tcp_now(c);
		return true;
	}
	/* RFC 7323 5.3 R1: not acceptable; acknowledge and drop. */
	st->drop_paws++;
	tcp_send_ack(c);
	return false;
}

/* RFC 7323 4.3 (2): TS.Recent follows segments at or left of Last.ACK.sent. */
bool tcp_ts_recent_due(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	return c->ts_ok && seg->has_ts && SEQ_GEQ(seg->ts_val, c->ts_recent) &&
	       SEQ_LEQ(seg->seq, c->last_ack_sent);
}

void tcp_ts_take_recent(struct tcp_conn *c, const struct tcp_seg *seg)
{
	c->ts_recent = seg->ts_val;
	c->ts_recent_ns = tcp_now(c);
}

void tcp_ts_update_recent(struct tcp_conn *c, const struct tcp_seg *seg)
{
	if (tcp_ts_recent_due(c, seg))
		tcp_ts_take_recent(c, seg);
}

bool tcp_ts_rtt_sample(struct tcp_conn *c, const struct tcp_seg *seg)
{
	uint32_t rtt_ms;

	if (!c->ts_ok || !seg->has_ts || seg->ts_ecr == 0)
		return false;
	rtt_ms = tcp_ts_val(c) - seg->ts_ecr;
	if ((int32_t)rtt_ms < 0)
		return false; /* an echo from the future: not ours */
	tcp_rtt_sample(c, US_MS(rtt_ms));
	c->ts->stats.ts_rtt_samples++;
	return true;
}
