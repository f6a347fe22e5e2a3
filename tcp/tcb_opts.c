/* tcp/tcb_opts.c: the application's per-connection settings (struct
 * tcp_conn_opts, the socket options of us_socket.h) and the few places
 * where tcp/ consults them: our MSS option (TCP_MAXSEG), the retransmission
 * and keepalive give-up rules (TCP_USER_TIMEOUT, TCP_KEEP*), a closed
 * connection's FIN-WAIT-2 (TCP_LINGER2) and a listener's deferred accept
 * (TCP_DEFER_ACCEPT).  Linux is the model for each: its behaviour, named
 * where it is followed. */
#include <errno.h>

#include "tcp/tcb.h"

uint32_t tcp_adv_mss(const struct tcp_conn *c)
{
	uint32_t mss = tcp_our_mss(c->ts, tcb_is_v6(c));

	/* Linux's tcp_advertise_mss and mss_clamp: user_mss caps both the
	 * MSS we announce and the one we send with. */
	if (c->o.user_mss != 0 && c->o.user_mss < mss)
		mss = c->o.user_mss;
	return mss;
}

/* The start of a retransmission series, for the user timeout: when the
 * RTO timer still pending was armed, i.e. the oldest unacknowledged data's
 * send or the last ACK that moved SND.UNA (RFC 6298 5.3 restarts the timer
 * there; Linux measures from the oldest segment's send, at most an RTO
 * earlier).  Taken at the series' first retransmission, before a Tail
 * Loss Probe re-arms the RTO from the probe; an ACK of new data ends the
 * series (established.c). */
void tcp_user_timeout_mark(struct tcp_conn *c)
{
	uint64_t rto = US_MS(tcp_rto_current_ms(c));

	if (c->ut_start_ns != 0 || c->deadline[TCP_T_RTO] == 0)
		return;
	c->ut_start_ns = c->deadline[TCP_T_RTO] > rto ? c->deadline[TCP_T_RTO] - rto : 1;
}

/* RFC 5482 (and Linux's retransmits_timed_out with icsk_user_timeout): a
 * user timeout replaces the retry count, measured from the series' start. */
bool tcp_data_timed_out(struct tcp_conn *c)
{
	uint64_t now = tcp_now(c);

	if (c->o.user_timeout_ms == 0)
		return c->retries >= c->ts->cfg.data_retries;
	if (c->ut_start_ns == 0)
		c->ut_start_ns = RTE_MAX(now - US_MS(tcp_rto_current_ms(c)), (uint64_t)1);
	return now - c->ut_start_ns >= US_MS(c->o.user_timeout_ms);
}

/* Linux's tcp_clamp_rto_to_user_timeout: once retransmitting, the timer
 * fires at the user timeout's end at the latest, so the abort comes on
 * time rather than at the next backed-off RTO. */
uint64_t tcp_user_timeout_bound(const struct tcp_conn *c, uint64_t deadline)
{
	uint64_t end;

	if (c->o.user_timeout_ms == 0 || c->retries == 0 || !tcb_synchronized(c) ||
	    c->state == TCP_SYN_RECEIVED)
		return deadline;
	end = c->ut_start_ns + US_MS(c->o.user_timeout_ms);
	return end < deadline ? end : deadline;
}

/* Linux's tcp_keepalive_timer: with a user timeout, one unanswered probe
 * and that long without a word from the peer end the connection. */
bool tcp_keepalive_gave_up(const struct tcp_conn *c)
{
	if (c->o.user_timeout_ms == 0)
		return c->ka_unanswered >= tcp_ka_cnt(c);
	return c->ka_unanswered > 0 &&
	       tcp_now(c) - c->last_heard_ns >= US_MS(c->o.user_timeout_ms);
}

/* Linux's tcp_fin_time: linger2 (or the default, 2 MSL here as Linux's
 * tcp_fin_timeout is 60 s), at least 3.5 RTO. */
static uint64_t fin_wait2_ns(const struct tcp_conn *c)
{
	uint64_t t = US_MS(c->o.fin_wait2_ms > 0 ? (uint32_t)c->o.fin_wait2_ms
						  : c->ts->cfg.time_wait_ms);
	uint64_t rto = US_MS(tcp_rto_current_ms(c));
	uint64_t floor = (rto << 2) - (rto >> 1);

	return t < floor ? floor : t;
}

void tcp_fin_wait2_orphan(struct tcp_conn *c, bool at_close)
{
	if (c->o.fin_wait2_ms < 0) {
		/* Linux: closed in FIN-WAIT-2, an RST (tcp_close); reaching it
		 * closed, the TCB just goes (tcp_rcv_state_process). */
		c->ts->stats.fin_wait2_dropped++;
		if (at_close)
			tcp_send_rst(c);
		tcb_drop(c);
		return;
	}
	tcp_timer_set(c, TCP_T_2MSL, tcp_now(c) + fin_wait2_ns(c));
}

/* Linux's tcp_check_req: while the listener defers, a bare ACK completing
 * the handshake is dropped (the embryo stays, its SYN-ACK is resent by
 * the RTO); one with data, a FIN, or after defer_accept_rtx SYN-ACK
 * retransmissions is taken. */
bool tcp_defer_accept_drop(struct tcp_conn *c, const struct tcp_seg *seg)
{
	const struct tcp_conn *l = c->listener;

	if (l == NULL || l->o.defer_accept_rtx == 0 || seg->len > 0 || (seg->flags & TH_FIN) ||
	    c->retries >= l->o.defer_accept_rtx)
		return false;
	c->ts->stats.defer_accept_dropped++;
	return true;
}

/* The buffer sizes take effect on a new TCB (tcb_alloc gave it the
 * stack's receive buffer). */
static void opts_take(struct tcp_conn *c, const struct tcp_conn_opts *o)
{
	c->o = *o;
	if (o->rcvbuf != 0)
		c->rcvbuf = o->rcvbuf;
}

void tcp_conn_opts_inherit(struct tcp_conn *c, const struct tcp_conn *l)
{
	opts_take(c, &l->o);
}

/* What changing o on a live connection sets in motion. */
static void opts_apply(struct tcp_conn *c, const struct tcp_conn_opts *old)
{
	const struct tcp_conn_opts *o = &c->o;

	if (c->cc.ready && (o->cc_set != old->cc_set || o->cc != old->cc)) {
		/* Linux's tcp_reinit_congestion_control: the new algorithm
		 * starts from the window as it is. */
		c->cc.ready = false;
		(void)tcp_cc_load(c); /* from c->cwnd and c->ssthresh, the truth */
	}
	if (c->keepalive && (o->keepidle_ms != old->keepidle_ms))
		(void)tcp_set_keepalive(c, true);
	if (o->rcvbuf != old->rcvbuf && o->rcvbuf != 0) {
		c->rcvbuf = o->rcvbuf;
		tcp_rcv_window_update(c);
	}
	if ((old->cork && !o->cork) || o->sndbuf > old->sndbuf)
		tcp_output_soon(c);
}

int tcp_conn_set_opts(struct tcp_conn *c, const struct tcp_conn_opts *o)
{
	struct tcp_conn_opts old = c->o;

	if (o->cc_set && (unsigned)o->cc >= TCP_CC_ALG_COUNT)
		return -EINVAL;
	if (c->app_closed)
		return -EBADF;
	if (c->dead)
		return -ENOTCONN;
	c->o = *o;
	if (!tcb_synchronized(c))
		return 0;
	tcp_enter(c->ts);
	opts_apply(c, &old);
	tcp_leave(c->ts);
	return 0;
}

void tcp_conn_get_opts(const struct tcp_conn *c, struct tcp_conn_opts *o)
{
	*o = c->o;
}

int tcp_listener_set_opts(struct tcp_stack *ts, const struct us_in6 *local_ip, uint16_t port,
			  const struct tcp_conn_opts *o)
{
	struct tcp_conn *l = tcp_listener_exact(ts, local_ip, port);

	if (o->cc_set && (unsigned)o->cc >= TCP_CC_ALG_COUNT)
		return -EINVAL;
	if (l == NULL)
		return -ENOENT;
	l->o = *o;
	return 0;
}

void tcp_conn_opts_connect(struct tcp_conn *c, const struct tcp_conn_opts *o)
{
	if (o != NULL)
		opts_take(c, o);
}

void tcp_send_more(struct tcp_conn *c, bool more)
{
	c->more = more;
}
