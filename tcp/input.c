/* tcp/input.c: segment arrival (RFC 9293 3.10.7): header validation,
 * demultiplexing, and the states before synchronization (CLOSED, LISTEN,
 * SYN-SENT).  The synchronized states are in established.c. */
#include <errno.h>

#include <rte_byteorder.h>
#include <rte_ip.h>

#include "tcp/syncookie.h"
#include "tcp/tcb.h"

/* Validates m (data at the TCP header) and fills seg; 0 or -errno with the
 * drop counted.  m is not consumed here. */
static int parse(struct tcp_stack *ts, struct rte_mbuf *m, const struct us_in6 *src,
		 const struct us_in6 *dst, struct tcp_seg *seg)
{
	/* The IP layers cut link-layer padding off: the mbuf is the segment. */
	uint32_t tcp_len = rte_pktmbuf_pkt_len(m);
	const struct rte_tcp_hdr *th;
	uint32_t hlen;

	if (tcp_len < sizeof(*th) || m->pkt_len < tcp_len) {
		ts->stats.drop_short++;
		return -EINVAL;
	}
	if (m->data_len < sizeof(*th)) {
		ts->stats.drop_split_header++;
		return -EINVAL;
	}
	th = rte_pktmbuf_mtod(m, const struct rte_tcp_hdr *);
	hlen = (uint32_t)(th->data_off >> 4) * 4;
	if (hlen < sizeof(*th) || hlen > tcp_len) {
		ts->stats.drop_bad_offset++;
		return -EINVAL;
	}
	if (hlen > m->data_len) {
		ts->stats.drop_split_header++;
		return -EINVAL;
	}
	seg->src_ip = *src;
	seg->dst_ip = *dst;
	if ((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) != RTE_MBUF_F_RX_L4_CKSUM_GOOD &&
	    ((m->ol_flags & RTE_MBUF_F_RX_L4_CKSUM_MASK) == RTE_MBUF_F_RX_L4_CKSUM_BAD ||
	     tcp_sum(m, src, dst, tcp_len) != 0xffff)) {
		ts->stats.drop_bad_csum++;
		return -EINVAL;
	}
	seg->sport = rte_be_to_cpu_16(th->src_port);
	seg->dport = rte_be_to_cpu_16(th->dst_port);
	seg->seq = rte_be_to_cpu_32(th->sent_seq);
	seg->ack = rte_be_to_cpu_32(th->recv_ack);
	seg->wnd = rte_be_to_cpu_16(th->rx_win);
	seg->urp = rte_be_to_cpu_16(th->tcp_urp);
	seg->flags = th->tcp_flags & (TH_FIN | TH_SYN | TH_RST | TH_PSH | TH_ACK | TH_URG);
	seg->skip = hlen;
	seg->len = tcp_len - hlen;
	tcp_options_parse(ts, th, hlen, seg);
	/* SYN with RST or FIN: no legitimate sender does that. */
	if ((seg->flags & TH_SYN) && (seg->flags & (TH_RST | TH_FIN))) {
		ts->stats.drop_bad_flags++;
		return -EINVAL;
	}
	return 0;
}

/* RFC 9293 3.10.7.1: no TCB and no listener. */
static void input_closed(struct tcp_stack *ts, const struct tcp_seg *seg)
{
	if (seg->flags & TH_RST) {
		ts->stats.drop_rst_no_conn++; /* an RST is never answered */
		return;
	}
	ts->stats.drop_no_conn++;
	tcp_send_rst_closed(ts, seg); /* rate limited (output.c) */
}

static void input_listen(struct tcp_conn *l, struct rte_mbuf *m, struct tcp_seg *seg,
			 const uint32_t *tw_iss);

/* RFC 6191 / RFC 1122 4.2.2.13 (tcb_timers.c decides): a SYN that may end a
 * TIME-WAIT, with a listener to take it, opens a new connection with an ISS
 * above the old SND.NXT; true when m was consumed that way.  Not while the
 * listener answers with SYN cookies: a cookie cannot be that ISS. */
static bool input_time_wait_syn(struct tcp_stack *ts, struct tcp_conn *c, struct rte_mbuf *m,
				struct tcp_seg *seg)
{
	struct tcp_conn *l;
	uint32_t iss;

	if ((seg->flags & (TH_SYN | TH_ACK | TH_RST)) != TH_SYN)
		return false;
	l = tcp_listener_lookup(ts, &seg->dst_ip, seg->dport);
	if (l == NULL || tcp_syncookie_wanted(l) || !tcp_time_wait_syn_ok(c, seg)) {
		ts->stats.timewait_syn_refused++; /* the old rules answer it */
		return false;
	}
	iss = tcp_time_wait_reuse(c);
	input_listen(l, m, seg, &iss);
	return true;
}

void tcp_input(struct tcp_stack *ts, struct rte_mbuf *m, const struct us_in6 *src,
	       const struct us_in6 *dst)
{
	struct tcp_seg seg;
	struct tcp_conn *c;

	tcp_enter(ts);
	ts->stats.rx_segs++;
	if (parse(ts, m, src, dst, &seg) < 0) {
		rte_pktmbuf_free(m);
		goto out;
	}
	/* RFC 9293 3.9.2.3 (MUST-57, MUST-63): TCP is between two hosts; a
	 * segment to or from a group is discarded without a word (an RST to
	 * a group would be an amplifier). */
	if (unlikely(tcp_addr_is_group(&seg.dst_ip) || tcp_addr_is_group(&seg.src_ip))) {
		ts->stats.drop_group_addr++;
		rte_pktmbuf_free(m);
		goto out;
	}
	c = tcp_table_lookup(ts, &seg.dst_ip, seg.dport, &seg.src_ip, seg.sport);
	/* TIME-WAIT reuse (RFC 6191): see input_time_wait_syn. */
	if (c != NULL && c->state == TCP_TIME_WAIT && input_time_wait_syn(ts, c, m, &seg))
		goto out;
	if (c != NULL) {
		if (c->state == TCP_SYN_SENT)
			tcp_input_syn_sent(c, m, &seg);
		else
			tcp_input_synchronized(c, m, &seg);
		tcb_notify(c);
		goto out;
	}
	c = tcp_listener_lookup(ts, &seg.dst_ip, seg.dport);
	if (c != NULL) {
		input_listen(c, m, &seg, NULL);
		goto out;
	}
	input_closed(ts, &seg);
	rte_pktmbuf_free(m);
out:
	tcp_leave(ts);
}

/* A TCB for a SYN from the peer (passive open or simultaneous open). */
static void take_syn(struct tcp_conn *c, const struct tcp_seg *seg)
{
	c->irs = seg->seq;
	c->rcv_nxt = seg->seq + 1;
	c->rcv_adv = c->rcv_nxt;
	/* MSS (RFC 9293 3.7.1), window scale, SACK, timestamps. */
	tcp_options_negotiate(c, seg);
	c->cwnd = TCP_IW_SEGS * c->mss; /* RFC 6928 */
	c->snd_wnd = seg->wnd; /* RFC 7323 2.2: a SYN's window is not scaled */
	c->snd_wl1 = seg->seq;
	c->snd_wl2 = seg->ack;
}

struct tcp_conn *tcp_passive_tcb(struct tcp_conn *l, const struct tcp_seg *seg,
				 enum tcp_state state)
{
	struct tcp_stack *ts = l->ts;
	struct tcp_conn *c;

	if (ts->nconns >= ts->cfg.max_conns || (c = tcb_alloc(ts)) == NULL) {
		ts->stats.drop_no_tcb++;
		return NULL;
	}
	c->state = state;
	c->local_ip = seg->dst_ip;
	c->local_port = seg->dport;
	c->remote_ip = seg->src_ip;
	c->remote_port = seg->sport;
	c->cb = l->cb;
	c->ctx = l->ctx;
	tcp_conn_opts_inherit(c, l);
	return c;
}

/* RFC 9293 3.10.7.2: LISTEN.  tw_iss: the ISS a reopened TIME-WAIT
 * connection must use, NULL to pick a fresh one. */
static struct tcp_conn *new_embryo(struct tcp_conn *l, const struct tcp_seg *seg,
				   const uint32_t *tw_iss)
{
	struct tcp_stack *ts = l->ts;
	struct tcp_conn *c;

	if (l->embryos >= l->backlog) {
		ts->stats.drop_backlog_full++;
		return NULL;
	}
	if ((c = tcp_passive_tcb(l, seg, TCP_SYN_RECEIVED)) == NULL)
		return NULL;
	c->listener = l;
	LIST_INSERT_HEAD(&l->embryo_list, c, link);
	l->embryos++;
	take_syn(c, seg);
	c->iss = tw_iss != NULL ? *tw_iss :
		 tcp_isn(ts, &c->local_ip, c->local_port, &c->remote_ip, c->remote_port);
	c->snd_una = c->iss;
	c->snd_nxt = c->snd_max = c->sndq_seq = c->iss + 1;
	tcp_table_insert(ts, c);
	return c;
}

/* tw_iss: as for new_embryo. */
static void input_listen(struct tcp_conn *l, struct rte_mbuf *m, struct tcp_seg *seg,
			 const uint32_t *tw_iss)
{
	struct tcp_stack *ts = l->ts;
	struct tcp_conn *c;

	if (seg->flags & TH_RST) {
		ts->stats.drop_listen_bad++;
	} else if (seg->flags & TH_ACK) {
		/* SYN cookies: the ACK may complete a stateless handshake. */
		if (tcp_syncookie_ack(l, m, seg))
			return;
		ts->stats.drop_listen_bad++;
		tcp_send_rst_for(ts, seg); /* <SEQ=SEG.ACK><CTL=RST> */
	} else if (!(seg->flags & TH_SYN)) {
		ts->stats.drop_listen_bad++;
	} else if (tcp_syncookie_wanted(l)) {
		/* SYN cookies: backlog full (or always): no embryo TCB. */
		tcp_syncookie_send(l, seg);
	} else if ((c = new_embryo(l, seg, tw_iss)) != NULL) {
		c->rtt_active = true;
		c->rtt_seq = c->iss;
		c->rtt_start_ns = tcp_now(c);
		/* RFC 7413 4.2: Fast Open may take the SYN's data (tcp/fastopen_tcb.c);
		 * otherwise it is not acknowledged and the peer sends it again
		 * once we are synchronized. */
		m = tcp_tfo_server_syn(l, c, m, seg);
		tcp_send_syn(c);
		tcp_rto_start(c, true);
		tcp_tfo_server_notify(c); /* accepted at once, after the SYN-ACK */
	}
	rte_pktmbuf_free(m);
}

/* RFC 6298 5.7 and Karn on the handshake's ACK; common to both opens. */
void tcp_handshake_done(struct tcp_conn *c, uint32_t ack)
{
	if (c->rtt_active && SEQ_GT(ack, c->rtt_seq))
		tcp_rtt_sample(c, tcp_now(c) - c->rtt_start_ns);
	c->rtt_active = false;
	c->retries = 0;
	c->backoff = 0;
	if (c->syn_retransmitted && !c->rtt_valid && c->rto_ms < TCP_SYN_FALLBACK_RTO_MS)
		c->rto_ms = RTE_MIN(TCP_SYN_FALLBACK_RTO_MS, c->ts->cfg.rto_max_ms);
	c->snd_una = ack;
	tcp_timer_stop(c, TCP_T_RTO);
	/* A FIN queued before synchronization goes out now (RFC 9293 3.10.4). */
	tcb_set_state(c, c->fin_queued ? TCP_FIN_WAIT_1 : TCP_ESTABLISHED);
	tcp_tfo_established(c); /* RFC 7413: data sent during the handshake */
}

/* RFC 9293 3.10.7.3: SYN-SENT. */
void tcp_input_syn_sent(struct tcp_conn *c, struct rte_mbuf *m, struct tcp_seg *seg)
{
	struct tcp_stats *st = &c->ts->stats;
	bool ack = seg->flags & TH_ACK;

	if (ack && (SEQ_LEQ(seg->ack, c->iss) || SEQ_GT(seg->ack, c->snd_max))) {
		st->drop_syn_sent_bad++;
		if (!(seg->flags & TH_RST))
			tcp_send_rst_for(c->ts, seg);
		goto drop;
	}
	if (seg->flags & TH_RST) {
		if (!ack) {
			st->drop_syn_sent_bad++;
			goto drop;
		}
		st->resets_rcvd++;
		tcb_set_closed(c, ECONNREFUSED);
		tcb_drop(c);
		goto drop;
	}
	if (!(seg->flags & TH_SYN)) {
		st->drop_syn_sent_bad++;
		goto drop;
	}
	take_syn(c, seg);
	if (ack)
		tcp_tfo_client_synack(c, seg); /* RFC 7413 4.1.3: cookie cache */
	if (!ack) {
		/* Simultaneous open: SYN-RECEIVED, SYN-ACK at the same ISS. */
		tcb_set_state(c, TCP_SYN_RECEIVED);
		tcp_send_syn(c);
		tcp_rto_start(c, true);
		goto drop;
	}
	tcp_handshake_done(c, seg->ack);
	/* Our SYN offered its window (unscaled, RFC 7323 2.2) before the
	 * peer's ISN was known: it starts at RCV.NXT now, whether or not our
	 * ACK leaves at once (a held one, or text on this SYN-ACK). */
	c->rcv_adv = c->rcv_nxt + RTE_MIN(c->rcvbuf, (uint32_t)TCP_MAX_WIN);
	c->ev |= TCP_EV_CONNECTED;
	/* RFC 9293 3.10.7.3: the ACK, which queued data may ride on. */
	if (tcp_ack_may_hold(c))
		tcp_ack_hold(c);
	else
		c->ack_now = true;
	/* Data on the SYN-ACK follows the SYN's sequence number. */
	seg->seq++;
	seg->flags &= (uint8_t)~TH_SYN;
	tcp_input_text(c, m, seg);
	if (!c->dead)
		tcp_output(c);
	return;
drop:
	rte_pktmbuf_free(m);
}
