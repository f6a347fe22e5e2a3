/* tcp/output.c: building segments and the send loop.
 *
 * A segment is a header mbuf from env->pool (TCP header and options, with
 * the headroom IPv4 and Ethernet need) followed by indirect mbufs attached
 * to the send queue's mbufs: the queue keeps its reference, so sending and
 * retransmitting never copy payload and an acknowledged buffer is freed only
 * when the last segment referencing it has left the NIC.
 *
 * Except small payloads (TCP_TX_COPY_MAX): they are copied into the header
 * mbuf.  An indirect mbuf costs an allocation, a refcount update, a second
 * checksum piece, a second NIC descriptor and a detach on free, several
 * times a ~100-byte memcpy (bench/PERF.md).
 */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "stack/base/csum.h"
#include "tcp/tcb.h"

/* Payloads up to this many bytes are copied, not referenced (see above). */
#define TCP_TX_COPY_MAX 512u

uint16_t tcp_our_mss(const struct tcp_stack *ts, bool v6)
{
	/* RFC 9293 3.7.1: MSS = MTU - fixed IP and TCP headers (RFC 8200's
	 * fixed header is 40 bytes, IPv4's 20). */
	uint32_t hdrs = v6 ? 60u : 40u;

	return (uint16_t)(ts->env.mtu > hdrs + TCP_DEFAULT_MSS ? ts->env.mtu - hdrs
							       : TCP_DEFAULT_MSS);
}

uint32_t tcp_conn_mss_cap(const struct tcp_conn *c)
{
	const struct tcp_env *env = &c->ts->env;
	uint32_t mss = tcp_adv_mss(c);
	uint32_t hdrs = tcb_is_v6(c) ? 60u : 40u;
	uint32_t pmtu = env->path_mtu != NULL ? env->path_mtu(env->ctx, &c->remote_ip) : 0;

	if (pmtu > hdrs + TCP_MIN_SND_MSS && pmtu - hdrs < mss)
		mss = pmtu - hdrs;
	return mss;
}

/* The pseudo-header's sum, unfolded: IPv4's (RFC 9293 3.1: the two
 * addresses, the protocol and a 16-bit length) or IPv6's (RFC 8200 8.1,
 * stack/base/csum.h). */
static uint32_t phdr_sum(const struct us_in6 *src, const struct us_in6 *dst, uint32_t len)
{
	uint32_t s, d;

	if (!us_in6_is_v4mapped(dst))
		return us_csum_phdr6(src, dst, len, IPPROTO_TCP);
	memcpy(&s, src->b + 12, 4);
	memcpy(&d, dst->b + 12, 4);
	return (s & 0xffff) + (s >> 16) + (d & 0xffff) + (d >> 16) +
	       rte_cpu_to_be_16(IPPROTO_TCP) + rte_cpu_to_be_16((uint16_t)len);
}

uint16_t tcp_sum(const struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
		 uint32_t len)
{
	uint32_t sum = phdr_sum(src, dst, len);
	uint16_t raw = 0;

	/* A segment in its first mbuf (a received frame, a sent one whose
	 * payload was copied): one flat sum, no walk of a chain.  Not
	 * rte_raw_cksum_mbuf for chains: wrong in 22.11 for chains split at odd
	 * offsets. */
	if (likely(len <= m->data_len))
		raw = us_csum_raw(rte_pktmbuf_mtod(m, const void *), len);
	else if (us_csum_raw_mbuf(m, 0, len, &raw) < 0)
		return 0;
	sum += raw;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* RFC 9293 3.8.6.2.2: the advertised right edge never moves left, and only
 * moves right by at least min(rcvbuf / 2, MSS) (receiver-side SWS
 * avoidance). */
uint32_t tcp_rcv_window(struct tcp_conn *c)
{
	uint32_t rcvbuf = c->rcvbuf;
	uint32_t space = c->rcvq.bytes < rcvbuf ? rcvbuf - c->rcvq.bytes : 0;
	uint32_t step = RTE_MIN(rcvbuf / 2, (uint32_t)tcp_our_mss(c->ts, tcb_is_v6(c)));
	uint32_t edge;

	space = RTE_MIN(space, tcp_max_rcv_wnd(c)); /* RFC 7323 2.2 */
	edge = c->rcv_nxt + space;
	if (SEQ_LT(c->rcv_adv, c->rcv_nxt))
		c->rcv_adv = c->rcv_nxt;
	/* A window clipped at its maximum is not silly: move the edge freely. */
	if (SEQ_GT(edge, c->rcv_adv) && (space == tcp_max_rcv_wnd(c) || edge - c->rcv_adv >= step))
		c->rcv_adv = edge;
	return c->rcv_adv - c->rcv_nxt;
}

/* The send queue mbuf holding byte off of the queue; *off becomes the
 * offset inside it.  Starts from the queue's cursor when off is at or
 * past it (new data, in order), from the head otherwise (retransmissions). */
static struct rte_mbuf *sndq_seek(struct tcp_conn *c, uint32_t *off)
{
	struct tcp_mq *sq = &c->sndq;
	struct rte_mbuf *q = sq->head;
	uint32_t base = 0;

	if (sq->cur != NULL && sq->cur_off <= *off) {
		q = sq->cur;
		base = sq->cur_off;
	}
	while (q != NULL && *off - base >= q->data_len) {
		base += q->data_len;
		q = q->next;
	}
	if (q != NULL) {
		sq->cur = q;
		sq->cur_off = base;
	}
	*off -= base;
	return q;
}

/* Copies [off, off + len) of the send queue behind h's header. */
static int copy_payload(struct tcp_conn *c, struct rte_mbuf *h, uint32_t off, uint32_t len)
{
	struct rte_mbuf *q = sndq_seek(c, &off);
	char *dst = rte_pktmbuf_append(h, (uint16_t)len);

	if (dst == NULL)
		return -ENOBUFS;
	while (len > 0 && q != NULL) {
		uint32_t n = RTE_MIN(len, (uint32_t)q->data_len - off);

		memcpy(dst, rte_pktmbuf_mtod_offset(q, const char *, off), n);
		dst += n;
		len -= n;
		off = 0;
		q = q->next;
	}
	return len == 0 ? 0 : -EINVAL;
}

/* Attaches [off, off + len) of the send queue to h as indirect mbufs. */
static int attach_payload(struct tcp_conn *c, struct rte_mbuf *h, uint32_t off, uint32_t len)
{
	struct rte_mbuf *q = sndq_seek(c, &off);

	while (len > 0 && q != NULL) {
		uint32_t n = RTE_MIN(len, (uint32_t)q->data_len - off);
		struct rte_mbuf *mi = rte_pktmbuf_alloc(c->ts->env.pool);

		if (mi == NULL)
			return -ENOBUFS;
		rte_pktmbuf_attach(mi, q);
		mi->data_off += off;
		mi->data_len = (uint16_t)n;
		mi->pkt_len = n;
		if (rte_pktmbuf_chain(h, mi) < 0) {
			rte_pktmbuf_free(mi);
			return -EOVERFLOW;
		}
		len -= n;
		off = 0;
		q = q->next;
	}
	return len == 0 ? 0 : -EINVAL;
}

/* Inlined like its caller send_segment: once send_segment has two callers,
 * GCC would otherwise keep this out of line, a call per segment
 * (bench/perf.sh counts it). */
static __rte_always_inline int add_payload(struct tcp_conn *c, struct rte_mbuf *h, uint32_t off,
					       uint32_t len)
{
	if (len <= TCP_TX_COPY_MAX && len <= rte_pktmbuf_tailroom(h))
		return copy_payload(c, h, off, len);
	return attach_payload(c, h, off, len);
}

struct seg_spec {
	const struct us_in6 *lip, *rip;
	uint16_t lport, rport;
	uint32_t flow_label;
	bool df_off;
	uint8_t tos, ttl;   /* IP_TOS, IP_TTL (tcp_conn_opts) */
	uint32_t seq, ack;
	uint8_t flags;
	uint16_t wnd;
	uint16_t urp;       /* with TH_URG (tcp/urgent.c) */
	const uint8_t *opt;
	unsigned optlen;
	uint16_t tso_segsz; /* > 0: a segment of several MSS, the port cuts it */
};

/* Header mbuf with the TCP header filled in (checksum zero). */
static struct rte_mbuf *build_header(struct tcp_stack *ts, const struct seg_spec *sp)
{
	unsigned hlen = sizeof(struct rte_tcp_hdr) + sp->optlen;
	struct rte_mbuf *h = rte_pktmbuf_alloc(ts->env.pool);
	struct rte_tcp_hdr *th;

	if (h == NULL)
		return NULL;
	if (rte_pktmbuf_headroom(h) < TCP_HEADROOM_NEEDED ||
	    (th = (struct rte_tcp_hdr *)rte_pktmbuf_append(h, (uint16_t)hlen)) == NULL) {
		rte_pktmbuf_free(h);
		return NULL;
	}
	th->src_port = rte_cpu_to_be_16(sp->lport);
	th->dst_port = rte_cpu_to_be_16(sp->rport);
	th->sent_seq = rte_cpu_to_be_32(sp->seq);
	th->recv_ack = rte_cpu_to_be_32((sp->flags & TH_ACK) ? sp->ack : 0);
	th->data_off = (uint8_t)((hlen / 4) << 4);
	th->tcp_flags = sp->flags;
	th->rx_win = rte_cpu_to_be_16(sp->wnd);
	th->cksum = 0;
	th->tcp_urp = rte_cpu_to_be_16(sp->urp);
	if (sp->optlen > 0)
		memcpy(th + 1, sp->opt, sp->optlen);
	h->l4_len = (uint8_t)hlen;
	return h;
}

static void finish_and_output(struct tcp_stack *ts, struct rte_mbuf *h, const struct seg_spec *sp)
{
	if (unlikely(sp->tso_segsz != 0)) {
		/* Each piece gets its own checksum where it is cut. */
		uint32_t len = h->pkt_len - h->l4_len;

		h->ol_flags |= RTE_MBUF_F_TX_TCP_SEG;
		h->tso_segsz = sp->tso_segsz;
		ts->stats.tx_gso_segs++;
		ts->stats.tx_segs += (len + sp->tso_segsz - 1) / sp->tso_segsz;
	} else {
		if (!ts->env.l4_csum_by_ip) {
			struct rte_tcp_hdr *th = rte_pktmbuf_mtod(h, struct rte_tcp_hdr *);

			th->cksum = (uint16_t)~tcp_sum(h, sp->lip, sp->rip, h->pkt_len);
		}
		ts->stats.tx_segs++;
	}
	if (sp->flags & TH_RST)
		ts->stats.resets_sent++;
	ts->env.output(ts->env.ctx, h,
		       &(struct tcp_out_addr){ .src = *sp->lip, .dst = *sp->rip,
					       .flow_label = sp->flow_label, .df_off = sp->df_off,
					       .tos = sp->tos, .ttl = sp->ttl });
}

/* A SYN sent again, or data or a FIN below SND.MAX. */
static bool is_retransmission(const struct tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len)
{
	return (flags & TH_SYN) ? c->syn_retransmitted && !(flags & TH_RST) :
	       SEQ_LT(seq, c->snd_max) && (len > 0 || (flags & TH_FIN));
}

/* rexmit: counted as a retransmission (retrans_segs, total_retrans).
 * Inlined into both callers: tcp_send_segment is the per-segment path. */
static __rte_always_inline int send_segment(struct tcp_conn *c, uint8_t flags, uint32_t seq,
					    uint32_t len, bool rexmit)
{
	struct tcp_stack *ts = c->ts;
	uint8_t opt[40];
	struct seg_spec sp = {
		.lip = &c->local_ip, .rip = &c->remote_ip,
		.lport = c->local_port, .rport = c->remote_port, .flow_label = c->flow_label,
		.df_off = c->df_off, .tos = c->o.tos, .ttl = c->o.ttl,
		.seq = seq, .ack = c->rcv_nxt, .flags = flags, .opt = opt,
	};
	struct rte_mbuf *h;

	if (unlikely(c->urg.snd_on) && !(flags & (TH_SYN | TH_RST)))
		sp.flags |= tcp_urg_out(c, seq, &sp.urp); /* RFC 9293 3.8.5 */
	/* A segment of several MSS leaves as MSS-sized frames with its options. */
	if (unlikely(len > c->mss))
		sp.tso_segsz = (uint16_t)c->mss;
	sp.optlen = tcp_options_write(c, flags, RTE_MIN(len, c->mss), opt);
	/* a bare RST's window means nothing; an RST with an ACK carries one */
	sp.wnd = (flags & (TH_RST | TH_ACK)) == TH_RST ? 0 : tcp_wnd_field(c, flags); /* options.c */
	h = build_header(ts, &sp);
	if (h == NULL) {
		ts->stats.drop_no_mbuf++;
		return -ENOBUFS;
	}
	/* A SYN's data (RFC 7413) starts after the SYN's sequence number. */
	if (len > 0 && add_payload(c, h, seq + !!(flags & TH_SYN) - c->sndq_seq, len) < 0) {
		rte_pktmbuf_free(h);
		ts->stats.drop_no_mbuf++;
		return -ENOBUFS;
	}
	if (rexmit) {
		ts->stats.retrans_segs++;
		c->total_retrans++;
		c->bytes_retrans += len;
	}
	ts->stats.tx_bytes += len;
	if (len > 0) {
		c->bytes_sent += len;
		c->last_data_sent_ns = tcp_now(c);
	}
	if (flags & TH_ACK) {
		/* Any ACK we send carries everything received so far. */
		c->ack_now = false;
		c->unacked_bytes = 0;
		tcp_timer_stop(c, TCP_T_DELACK);
	}
	finish_and_output(ts, h, &sp);
	return 0;
}

int tcp_send_segment(struct tcp_conn *c, uint8_t flags, uint32_t seq, uint32_t len)
{
	return send_segment(c, flags, seq, len, is_retransmission(c, flags, seq, len));
}

/* The sequence number of a segment without data (an ACK, an RST): RFC
 * 9293's SND.NXT, the next new byte, which is our snd_max: after an RTO
 * our snd_nxt goes back to SND.UNA to resend, and an ACK numbered there
 * lies below what the peer has received, so the peer finds it unacceptable,
 * drops it unread and answers with an ACK of its own.  Two ends both
 * resending after RTOs then answer each other's ACKs at line rate, neither
 * ever reading the other's acknowledgement (an ACK storm, found by the
 * simulator).  Capped at the right edge of the peer's window, which a
 * zero-window probe's byte lies beyond (Linux's tcp_acceptable_seq). */
static uint32_t acceptable_seq(const struct tcp_conn *c)
{
	uint32_t wnd_end = c->snd_una + c->snd_wnd;

	return SEQ_LT(wnd_end, c->snd_max) ? wnd_end : c->snd_max;
}

int tcp_send_ack(struct tcp_conn *c)
{
	return tcp_send_segment(c, TH_ACK, acceptable_seq(c), 0);
}

int tcp_send_ack_at(struct tcp_conn *c, uint32_t ack)
{
	struct tcp_stack *ts = c->ts;
	uint8_t opt[40];
	/* The right edge stays where it was advertised (RFC 9293 3.8.6.2.2). */
	uint32_t wnd = SEQ_GT(c->rcv_adv, ack) ? (c->rcv_adv - ack) >> c->rcv_wscale : 0;
	struct seg_spec sp = {
		.lip = &c->local_ip, .rip = &c->remote_ip,
		.lport = c->local_port, .rport = c->remote_port, .flow_label = c->flow_label,
		.df_off = c->df_off, .tos = c->o.tos, .ttl = c->o.ttl,
		.seq = acceptable_seq(c), .ack = ack, .flags = TH_ACK, .opt = opt,
		.wnd = (uint16_t)RTE_MIN(wnd, TCP_MAX_WIN),
	};
	struct rte_mbuf *h;

	sp.optlen = tcp_options_write(c, TH_ACK, 0, opt);
	h = build_header(ts, &sp);
	if (h == NULL) {
		ts->stats.drop_no_mbuf++;
		return -ENOBUFS;
	}
	finish_and_output(ts, h, &sp);
	return 0;
}

int tcp_send_syn(struct tcp_conn *c)
{
	uint8_t flags = c->state == TCP_SYN_RECEIVED ? TH_SYN | TH_ACK : TH_SYN;
	/* RFC 7413 3: a Fast Open client's first SYN carries data (tcp/fastopen_tcb.c). */
	uint32_t len = tcp_tfo_syn_data_len(c);
	int rc = tcp_send_segment(c, flags, c->iss, len);

	if (rc == 0 && len > 0)
		tcp_tfo_syn_data_sent(c, len);
	return rc;
}

/* RFC 9293 3.10.5 (ABORT): <SEQ=SND.NXT><CTL=RST>, SND.NXT as for an ACK.
 * Linux's active reset (tcp_send_active_reset) also sets the ACK bit,
 * acknowledging RCV.NXT, so that its timestamps echo TS.Recent and a
 * window goes with it: profile linux does the same. */
int tcp_send_rst(struct tcp_conn *c)
{
	uint8_t flags = tcp_profile_linux(c->ts) ? TH_RST | TH_ACK : TH_RST;

	return tcp_send_segment(c, flags, acceptable_seq(c), 0);
}

/* RFC 9293 3.10.7.1: if the ACK bit is off, <SEQ=0><ACK=SEG.SEQ+SEG.LEN>
 * <CTL=RST,ACK>; if on, <SEQ=SEG.ACK><CTL=RST>.  Never answers an RST. */
void tcp_send_rst_for(struct tcp_stack *ts, const struct tcp_seg *seg)
{
	struct seg_spec sp = {
		.lip = &seg->dst_ip, .rip = &seg->src_ip,
		.lport = seg->dport, .rport = seg->sport,
		.flow_label = tcp_flow_label(ts, &seg->dst_ip, seg->dport, &seg->src_ip, seg->sport),
	};
	struct rte_mbuf *h;

	if (seg->flags & TH_ACK) {
		sp.seq = seg->ack;
		sp.flags = TH_RST;
	} else {
		sp.seq = 0;
		sp.ack = seg->seq + seg->len + !!(seg->flags & TH_SYN) + !!(seg->flags & TH_FIN);
		sp.flags = TH_RST | TH_ACK;
	}
	h = build_header(ts, &sp);
	if (h == NULL) {
		ts->stats.drop_no_mbuf++;
		return;
	}
	finish_and_output(ts, h, &sp);
}

/* A flood of segments to closed ports must not become a flood of RSTs
 * that fills our TX ring ahead of real answers: like ICMP errors (RFC 1812
 * 4.3.2.8, RFC 1122 3.2.2) and FreeBSD's closed-port RSTs (icmplim), at
 * most rst_closed_limit a second per engine; the second is the wheel's. */
static bool rst_closed_allowed(struct tcp_stack *ts)
{
	uint64_t sec = us_timer_now(ts->env.wheel) / US_SEC(1);

	if (ts->cfg.rst_closed_limit == 0)
		return true;
	if (sec != ts->rst_closed_sec) {
		ts->rst_closed_sec = sec;
		ts->rst_closed_count = 0;
	}
	if (ts->rst_closed_count >= ts->cfg.rst_closed_limit) {
		ts->stats.rst_closed_ratelimited++;
		return false;
	}
	ts->rst_closed_count++;
	return true;
}

void tcp_send_rst_closed(struct tcp_stack *ts, const struct tcp_seg *seg)
{
	if (rst_closed_allowed(ts))
		tcp_send_rst_for(ts, seg);
}

static bool can_send_data(const struct tcp_conn *c)
{
	return tcb_state_sends_data(c) || tcp_tfo_may_send(c) /* RFC 7413 4.2.2 */;
}

/* D of RFC 9293 3.8.6.2.1: queued data at SND.NXT not yet sent. */
static uint32_t unsent(const struct tcp_conn *c)
{
	uint32_t end = tcp_sndq_end(c);

	return SEQ_LT(c->snd_nxt, end) ? end - c->snd_nxt : 0;
}

/* RFC 3042 limited transmit: on the 1st and 2nd duplicate ACK new data
 * may go out as long as the outstanding data stays within cwnd + 2 SMSS
 * (here cwnd + dupacks * SMSS: one segment per dup ACK); only new data,
 * not the go-back-N resend after an RTO (SND.NXT < SND.MAX). */
static uint32_t limited_transmit_allowance(const struct tcp_conn *c)
{
	if (c->loss.in_recovery || c->loss.dupacks == 0 || c->loss.dupacks >= TCP_SB_DUPTHRESH ||
	    c->snd_nxt != c->snd_max)
		return 0;
	return c->loss.dupacks * c->mss;
}

/* The window the send loop may fill outside fast recovery (in recovery
 * tcp_recovery_send spends the recovery algorithm's budget instead). */
static uint32_t cwnd_for_send(const struct tcp_conn *c)
{
	return c->cwnd + limited_transmit_allowance(c);
}

/* U of RFC 9293 3.8.6.2.1: SND.UNA + min(SND.WND, cwnd) - SND.NXT. */
static uint32_t usable(const struct tcp_conn *c)
{
	uint32_t flight = c->snd_nxt - c->snd_una;
	uint32_t wnd = RTE_MIN(c->snd_wnd, cwnd_for_send(c));

	return wnd > flight ? wnd - flight : 0;
}

static bool nagle_on(const struct tcp_conn *c)
{
	return !(c->nodelay_set ? c->nodelay : c->ts->cfg.nodelay_default);
}

/* RFC 9293 Appendix A.3 (Minshall's modification of Nagle): a small segment
 * waits only while an earlier small segment is unacknowledged, so the tail
 * of a large write is not held behind full-sized segments. */
static bool small_unacked(const struct tcp_conn *c)
{
	return SEQ_GT(c->snd_sml, c->snd_una) && SEQ_LEQ(c->snd_sml, c->snd_nxt);
}

/* Segmentation offload (env.gso_max): full-sized segments of new data go
 * to the port as one segment of several MSS, which it cuts into MSS-sized
 * frames, so this path runs once per large segment, not once per MSS.  Whole
 * MSS only, and only in the open (no duplicate ACKs, no recovery, no resend
 * after an RTO): the frames on the wire are exactly those per-MSS output
 * sends, a retransmission stays one MSS and the tail of the queue still
 * goes through Nagle and SWS avoidance on its own.  IPv4 only: the
 * port's segmentation (stack/net/gso.c) cuts TCP over IPv4. */
static uint32_t gso_len(const struct tcp_conn *c, uint32_t avail)
{
	uint32_t max = c->ts->env.gso_max;

	/* Urgent mode too: each cut frame would repeat the first's pointer. */
	if (likely(max <= c->mss) || tcb_is_v6(c) || c->loss.dupacks != 0 || c->loss.in_recovery ||
	    c->snd_nxt != c->snd_max || c->urg.snd_on)
		return c->mss;
	avail = RTE_MIN(avail, max);
	return avail - avail % c->mss;
}

/* Length of the next data segment at SND.NXT, 0 to send nothing now.
 * RFC 9293 3.8.6.2.1 (sender SWS avoidance, MUST-38): send when
 * (1) min(D, U) >= MSS, (2) all queued data fits (D <= U) and Nagle
 * (3.7.4, SHLD-7) allows it, (3) min(D, U) >= Fs * max(SND.WND) with
 * Fs = 1/2, or (4) the override timer fired (sws_override).  *sws_held
 * says that only SWS avoidance (not Nagle, not a closed window) kept data
 * back. */
static uint32_t send_len(const struct tcp_conn *c, bool sws_override, bool *sws_held)
{
	uint32_t d = unsent(c), u = usable(c);
	uint32_t len = RTE_MIN(RTE_MIN(d, u), c->mss);

	*sws_held = false;
	if (len == c->mss)
		return gso_len(c, RTE_MIN(d, u));
	if (len == 0 || sws_override)
		return len;
	if (d <= u) {
		/* Nagle; a segment that completes the stream before our FIN
		 * is not held (like Linux's tcp_nagle_test). */
		if (c->fin_queued)
			return len;
		/* TCP_CORK or MSG_MORE: a partial segment waits for more data,
		 * its uncorking, or the override timer (Linux's 200 ms). */
		if (c->o.cork || c->more) {
			*sws_held = true;
			return 0;
		}
		if (!nagle_on(c) || !small_unacked(c))
			return len;
		return 0;
	}
	if (c->max_snd_wnd > 0 && len >= c->max_snd_wnd / 2)
		return len;
	*sws_held = true;
	return 0;
}

/* RFC 9293 3.9.1 leaves PSH to the sender: the segment that empties the
 * send queue carries it (the end of the application's last write).
 * Profile linux also pushes every half of the largest window the peer
 * offered (Linux's forced_push, pushed_seq + max_window / 2), so that a
 * long write is handed to the receiving application as it arrives, not
 * only at its end.  New data only: a resend goes as it went. */
static bool push_due(const struct tcp_conn *c, uint32_t len)
{
	if (c->snd_nxt + len == tcp_sndq_end(c))
		return true;
	return tcp_profile_linux(c->ts) && SEQ_GEQ(c->snd_nxt, c->snd_max) &&
	       c->unpushed + len > c->max_snd_wnd / 2;
}

/* One data (and/or FIN) segment at SND.NXT; false when nothing went. */
static bool output_one(struct tcp_conn *c, uint32_t len)
{
	bool fin = c->fin_queued && c->snd_nxt + len == c->fin_seq;
	uint8_t flags = TH_ACK;

	if (len == 0 && !fin)
		return false;
	if (fin)
		flags |= TH_FIN;
	if (len > 0 && push_due(c, len))
		flags |= TH_PSH;
	if (tcp_send_segment(c, flags, c->snd_nxt, len) < 0)
		return false;
	if (SEQ_GEQ(c->snd_nxt, c->snd_max))
		c->unpushed = (flags & TH_PSH) ? 0 : c->unpushed + len;
	if (SEQ_LT(c->snd_nxt, c->snd_max)) /* go-back-N after an RTO */
		tcp_undo_on_rxt(c, c->snd_nxt, c->snd_nxt + len + fin); /* undo.c */
	tcp_rack_sent(c, c->snd_nxt, c->snd_nxt + len + fin, SEQ_LT(c->snd_nxt, c->snd_max));
	/* RFC 6298 3 / Karn: time one segment of new data at a time. */
	if (!c->rtt_active && SEQ_GEQ(c->snd_nxt, c->snd_max)) {
		c->rtt_active = true;
		c->rtt_seq = c->snd_nxt;
		c->rtt_start_ns = tcp_now(c);
	}
	if (len > 0 && len < c->mss)
		c->snd_sml = c->snd_nxt + len;
	/* RFC 3042: counted when only the allowance let it go. */
	if (len > 0 && limited_transmit_allowance(c) > 0 &&
	    c->snd_nxt + len - c->snd_una > c->cwnd) {
		tcp_loss_on_limited_transmit(c, len);
	}
	if (SEQ_GEQ(c->snd_nxt, c->snd_max))
		tcp_tlp_sent_new(&c->loss.tlp, c->snd_nxt); /* tlp.h: what a probe resends */
	c->snd_nxt += len + fin;
	if (SEQ_GT(c->snd_nxt, c->snd_max))
		c->snd_max = c->snd_nxt;
	tcp_rto_start(c, false);
	return true;
}

bool tcp_output_probe_new(struct tcp_conn *c)
{
	uint32_t wnd_end = c->snd_una + c->snd_wnd;
	uint32_t room = SEQ_GT(wnd_end, c->snd_nxt) ? wnd_end - c->snd_nxt : 0;

	if (!can_send_data(c) || c->snd_nxt != c->snd_max)
		return false;
	return output_one(c, RTE_MIN(RTE_MIN(unsent(c), c->mss), room));
}

/* Data waiting with nothing in flight gets no ACK to wake us: a closed
 * window needs the persist timer (RFC 9293 3.8.6.1), a window too small for
 * SWS avoidance the override timer (3.8.6.2.1).  With data in flight the
 * next ACK (or the RTO) re-runs the decision. */
/* Inlined like its caller output() (two callers), for the same reason as
 * add_payload. */
static __rte_always_inline void idle_send_timers(struct tcp_conn *c, bool sws_held)
{
	bool waiting = can_send_data(c) && c->snd_nxt == c->snd_una && unsent(c) > 0;

	if (waiting && c->snd_wnd == 0) {
		tcp_persist_start(c);
	} else {
		tcp_persist_stop(c);
	}
	if (waiting && sws_held) {
		if (c->deadline[TCP_T_SWS] == 0)
			tcp_timer_set(c, TCP_T_SWS, tcp_now(c) + US_MS(c->ts->cfg.sws_override_ms));
	} else {
		tcp_timer_stop(c, TCP_T_SWS);
	}
}

/* sws_override: as for send_len.  Inlined: tcp_output runs per segment. */
static __rte_always_inline void output(struct tcp_conn *c, bool sws_override)
{
	bool sws_held = false;

	if (c->snd_wnd > c->max_snd_wnd)
		c->max_snd_wnd = c->snd_wnd;
	if (c->ts->env.path_mtu != NULL && tcb_is_v6(c))
		tcp_pmtu_follow(c);
	if (c->loss.in_recovery) {
		tcp_recovery_send(c);
	} else {
		uint32_t max0 = c->snd_max;

		while (can_send_data(c) && output_one(c, send_len(c, sws_override, &sws_held)))
			;
		if (c->snd_max != max0)
			tcp_tlp_on_send(c); /* tlp.c: the PTO (re)starts */
	}
	idle_send_timers(c, sws_held);
	tcp_chrono_update(c);
	c->more = false; /* MSG_MORE held only the push of its own send */
	if (c->ack_now && c->state != TCP_CLOSED && c->state != TCP_LISTEN &&
	    c->state != TCP_SYN_SENT)
		tcp_send_ack(c);
}

void tcp_output(struct tcp_conn *c)
{
	output(c, false);
}

/* An application call made from a callback (depth > 1: inside input or a
 * timer, which hold depth 1) waits for that entry point's end.  A request
 * answered from on_readable then leaves as one segment carrying the ACK,
 * the header and body writes and the FIN, instead of a window-update ACK
 * and one segment per call (bench/PERF.md: 6 segments per connection
 * became 3).  RFC 9293 3.7.4 and 3.8.6.3 allow holding data and ACKs this
 * briefly; nothing waits beyond the current segment's processing. */
void tcp_output_soon(struct tcp_conn *c)
{
	struct tcp_stack *ts = c->ts;

	if (ts->depth <= 1) {
		tcp_output(c);
		return;
	}
	if (c->out_deferred)
		return;
	c->out_deferred = true;
	c->defer_next = NULL;
	if (ts->defer_tail != NULL)
		ts->defer_tail->defer_next = c;
	else
		ts->defer_head = c;
	ts->defer_tail = c;
}

/* Dead TCBs stay allocated until depth reaches 0, after this runs. */
void tcp_output_flush(struct tcp_stack *ts)
{
	struct tcp_conn *c;

	while ((c = ts->defer_head) != NULL) {
		ts->defer_head = c->defer_next;
		if (ts->defer_head == NULL)
			ts->defer_tail = NULL;
		c->out_deferred = false;
		c->defer_next = NULL;
		if (!c->dead && c->state != TCP_CLOSED)
			tcp_output(c);
	}
}

/* RFC 9293 3.8.6.1: one byte beyond a zero window.  It is counted as a
 * probe, not a retransmission, and SND.NXT stays put: the byte is sent
 * for real only when the window opens (SND.MAX covers it so that the
 * peer's ACK of it is acceptable).  Profile linux probes as Linux does,
 * with a segment the receiver must answer and cannot take
 * (tcp_write_wakeup's tcp_xmit_probe_skb: SND.UNA-1, no data, like a
 * keepalive); the byte's advantage, that a window opened meanwhile takes
 * it, is the window update's job there. */
int tcp_send_window_probe(struct tcp_conn *c)
{
	int rc;

	if (tcp_profile_linux(c->ts)) {
		rc = send_segment(c, TH_ACK, c->snd_una - 1, 0, false);
	} else {
		rc = send_segment(c, TH_ACK, c->snd_una, 1, false);
		if (SEQ_GT(c->snd_una + 1, c->snd_max))
			c->snd_max = c->snd_una + 1;
	}
	if (rc == 0) {
		c->ts->stats.persist_probes++;
		c->persist_probes++;
	}
	return rc;
}

/* RFC 9293 3.8.4 / RFC 1122 4.2.3.6: <SEQ=SND.UNA-1><CTL=ACK>, no data,
 * which the peer must answer with an ACK. */
int tcp_send_keepalive(struct tcp_conn *c)
{
	int rc = tcp_send_segment(c, TH_ACK, c->snd_una - 1, 0);

	if (rc == 0) {
		c->ts->stats.keepalive_probes++;
		c->ka_probes++;
	}
	return rc;
}

/* The SWS override timer (RFC 9293 3.8.6.2.1 (4)): send what fits. */
void tcp_output_push(struct tcp_conn *c)
{
	output(c, true);
}

void tcp_sws_override(struct tcp_conn *c)
{
	uint32_t before = c->snd_nxt;

	output(c, true);
	if (c->snd_nxt != before)
		c->ts->stats.sws_overrides++;
}

/* Fast recovery's send side: RFC 6675 4 NextSeg, each call one segment.
 * HighRxt is kept as c->loss.rxt_high, the end of what was retransmitted. */
struct rec_seg {
	uint32_t seq, len; /* payload [seq, seq + len) */
	bool fin;          /* with the FIN (which ends the data there) */
	bool rescue;       /* rule 4: HighRxt not moved */
	uint64_t *ctr;     /* the rule's counter */
};

/* The outstanding sequence space [from, to) of a hole, cut to one segment,
 * with the FIN when the hole ends at a FIN already sent. */
static bool rec_fill(const struct tcp_conn *c, uint32_t from, uint32_t to, struct rec_seg *r)
{
	uint32_t data_end = tcp_sndq_end(c);
	bool fin_sent = c->fin_queued && SEQ_LT(c->fin_seq, c->snd_max);

	if (!SEQ_LT(from, to))
		return false;
	r->seq = from;
	r->len = SEQ_LT(from, data_end) ? RTE_MIN(RTE_MIN(to, data_end) - from, c->mss) : 0;
	r->fin = fin_sent && from + r->len == c->fin_seq && SEQ_LT(c->fin_seq, to);
	r->rescue = false;
	return r->len > 0 || r->fin;
}

/* Rules 1 and 3: the first hole octet at or above HighRxt and below the
 * highest SACKed octet; rule 1 wants it IsLost (the whole hole shares the
 * SACKed ranges above it, so its first octet decides). */
static bool rec_hole(const struct tcp_conn *c, bool want_lost, struct rec_seg *r)
{
	const struct tcp_sb *sb = &c->sb;
	uint32_t prev = c->snd_una;

	for (unsigned k = 0; k < sb->n; k++) {
		uint32_t from = SEQ_GT(c->loss.rxt_high, prev) ? c->loss.rxt_high : prev;

		if (SEQ_LT(from, sb->r[k].start) &&
		    (!want_lost || tcp_sb_is_lost(sb, from, c->mss)))
			return rec_fill(c, from, sb->r[k].start, r);
		prev = sb->r[k].end;
	}
	return false;
}

/* Rule 1 with RACK (rack.c): the first range it marked lost, wherever
 * HighRxt is (a retransmission RACK found lost again goes again too). */
static bool rack_lost(const struct tcp_conn *c, struct rec_seg *r)
{
	uint32_t from, to;

	return tcp_rack_on(c) && tcp_rack_next_lost(c, &from, &to) && rec_fill(c, from, to, r);
}

/* Rule 4 (rescue retransmission): once per window, the segment that ends
 * at the highest unSACKed outstanding octet. */
static bool rec_rescue(struct tcp_conn *c, struct rec_seg *r)
{
	uint32_t top = c->snd_max, floor = c->snd_una, dtop, lo;

	if (!c->sack_ok || (c->loss.rescue_valid && !SEQ_GT(c->snd_una, c->loss.rescue_rxt)))
		return false;
	/* The highest unSACKed octet ends below the top range if that one
	 * reaches SND.MAX; the hole under it starts at the range below. */
	for (unsigned k = c->sb.n; k-- > 0;) {
		if (SEQ_LT(c->sb.r[k].start, top) && SEQ_LEQ(top, c->sb.r[k].end))
			top = c->sb.r[k].start;
		else if (SEQ_LEQ(c->sb.r[k].end, top)) {
			floor = c->sb.r[k].end;
			break;
		}
	}
	/* Rule 3 already resent holes below HighRxt. */
	if (!SEQ_GT(top, c->loss.rxt_high))
		return false;
	/* A FIN at the top goes along with the data before it (rec_fill). */
	dtop = c->fin_queued && top == c->fin_seq + 1 ? c->fin_seq : top;
	lo = dtop - floor > c->mss ? dtop - c->mss : floor;
	if (!rec_fill(c, lo, top, r))
		return false;
	r->rescue = true;
	return true;
}

/* RFC 6675 4 NextSeg.  SND.UNA's segment goes first on entry (RFC 6675
 * 5 (4.3), RFC 5681 3.2 step 3) and, without SACK, after every partial ACK
 * (RFC 6582 3.2 step 5).  With RACK, rule 1 resends what RACK marked lost
 * instead, SND.UNA's segment included when it is. */
static bool rec_next_seg(struct tcp_conn *c, struct rec_seg *r)
{
	struct tcp_stats *st = &c->ts->stats;
	uint32_t room = c->snd_una + c->snd_wnd - c->snd_nxt;
	uint32_t first_end = c->sack_ok && c->sb.n > 0 ? c->sb.r[0].start : c->snd_max;

	if ((c->loss.rec_first_rxt || !c->sack_ok) && !tcp_rack_on(c) &&
	    c->loss.rxt_high == c->snd_una &&
	    rec_fill(c, c->snd_una, first_end, r)) {
		r->ctr = &st->rec_rxt_lost;
		return true;
	}
	if (rack_lost(c, r) || (!tcp_rack_on(c) && c->sack_ok && rec_hole(c, true, r))) {
		r->ctr = &st->rec_rxt_lost;
		return true;
	}
	if (c->snd_nxt == c->snd_max &&
	    ((unsent(c) > 0 && SEQ_LT(c->snd_nxt, c->snd_una + c->snd_wnd)) ||
	     (c->fin_queued && c->snd_nxt == c->fin_seq))) {
		r->seq = c->snd_nxt;
		r->len = unsent(c) > 0 ? RTE_MIN(RTE_MIN(unsent(c), c->mss), room) : 0;
		r->fin = false;
		r->ctr = &st->rec_new_data;
		return true;
	}
	/* Rules 3 and 4 resend what nothing says is lost; with RACK only its
	 * marks go again, as in Linux (tcp_xmit_retransmit_queue sends only
	 * segments marked lost): the rules doubled RACK's needless
	 * retransmissions (docs/recovery-experiment.md) and its reordering
	 * timer marks what they would have guessed. */
	if (tcp_rack_on(c))
		return false;
	if (c->sack_ok && rec_hole(c, false, r)) {
		r->ctr = &st->rec_rxt_unsacked;
		return true;
	}
	r->ctr = &st->rec_rescue;
	return rec_rescue(c, r);
}

static int rec_retransmit(struct tcp_conn *c, const struct rec_seg *r)
{
	uint8_t flags = TH_ACK | (r->fin ? TH_FIN : 0);
	int rc;

	c->rtt_active = false; /* Karn: the timed segment may be this one */
	rc = tcp_send_segment(c, flags, r->seq, r->len);
	if (rc < 0)
		return rc;
	tcp_rack_sent(c, r->seq, r->seq + r->len + r->fin, true);
	tcp_loss_on_rxt(c, r->seq, r->seq + r->len + r->fin, r->rescue);
	/* The earliest outstanding segment went again: its ACK is a round
	 * trip away, so the timer restarts from now (as RFC 6298 5.4 does for
	 * the RTO's own retransmission, and Linux for the retransmitted head);
	 * otherwise a timer armed a round trip ago fires just before that ACK
	 * on a path whose RTO is close to the RTT. */
	if (r->seq == c->snd_una)
		tcp_rto_start(c, true);
	return 0;
}

void tcp_recovery_send(struct tcp_conn *c)
{
	struct rec_seg r;
	bool any = false;

	/* The budget is bytes; a segment goes while any is left (as RFC 6937
	 * 3.1's tables count whole segments). */
	while (can_send_data(c) && c->loss.rec_budget > 0 && rec_next_seg(c, &r)) {
		if (r.seq == c->snd_nxt && SEQ_GEQ(r.seq, c->snd_max)) {
			if (!output_one(c, r.len))
				break;
		} else if (rec_retransmit(c, &r) < 0) {
			break;
		}
		(*r.ctr)++;
		any = true;
		tcp_loss_spent(c, r.len + r.fin);
	}
	if (!any && c->loss.rec_budget > 0)
		c->ts->stats.rec_budget_unused++;
}
