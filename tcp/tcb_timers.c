/* tcp/tcb_timers.c: retransmission (RFC 6298), delayed ACK (RFC 9293 3.8.6.3),
 * TIME-WAIT (RFC 9293 3.6), persist (3.8.6.1), keepalive (3.8.4), the
 * sender SWS override (3.8.6.2.1) and RACK's reordering timer (RFC 8985,
 * rack.c), all multiplexed on the TCB's one wheel
 * timer (see the notes in tcp/tcb.h). */
#include <errno.h>
#include <stddef.h>

#include "tcp/scoreboard.h"
#include "tcp/tcb.h"

static void tcb_timer_fn(struct us_timer *t, uint64_t now_ns);

/* The wheel timer goes off at the first deadline or before it: a timer
 * armed earlier is left where it is (also when no deadline is left), and
 * its early expiry finds nothing due and arms it for the first deadline
 * (tcb_timer_fn).  A request/response connection arms the RTO and the
 * Tail Loss Probe at every answer and stops them at its ACK (RFC 6298
 * 5.2, RFC 8985 7.2); moving the wheel entry each time cost more than one
 * early expiry per probe timeout (bench/perf.py, 64 B keep-alive: 6,750-
 * 6,860 instructions per request before, 6,530 after). */
static void rearm(struct tcp_conn *c)
{
	uint64_t first = 0;

	for (unsigned k = 0; k < TCP_T_COUNT; k++)
		if (c->deadline[k] && (first == 0 || c->deadline[k] < first))
			first = c->deadline[k];
	if (first != 0 && (!us_timer_armed(&c->timer) || c->timer.expire_ns > first))
		us_timer_arm(c->ts->env.wheel, &c->timer, first);
}

void tcp_timer_init(struct tcp_conn *c)
{
	us_timer_init(&c->timer, tcb_timer_fn);
	for (unsigned k = 0; k < TCP_T_COUNT; k++)
		c->deadline[k] = 0;
}

/* Only an earlier deadline moves the wheel timer (see rearm). */
void tcp_timer_set(struct tcp_conn *c, enum tcp_timer_kind k, uint64_t deadline_ns)
{
	c->deadline[k] = deadline_ns ? deadline_ns : 1;
	if (!us_timer_armed(&c->timer) || c->timer.expire_ns > c->deadline[k])
		us_timer_arm(c->ts->env.wheel, &c->timer, c->deadline[k]);
}

/* The wheel timer stays: a stopped deadline only leaves it early. */
void tcp_timer_stop(struct tcp_conn *c, enum tcp_timer_kind k)
{
	c->deadline[k] = 0;
}

void tcp_timer_stop_all(struct tcp_conn *c)
{
	for (unsigned k = 0; k < TCP_T_COUNT; k++)
		c->deadline[k] = 0;
	us_timer_cancel(c->ts->env.wheel, &c->timer);
}

/* RFC 6298 5.5: the backed-off RTO, bounded by rto_max (2.5). */
uint32_t tcp_rto_current_ms(const struct tcp_conn *c)
{
	uint64_t rto = c->rto_ms;

	for (unsigned i = 0; i < c->backoff && rto < c->ts->cfg.rto_max_ms; i++)
		rto <<= 1;
	return (uint32_t)RTE_MIN(rto, (uint64_t)c->ts->cfg.rto_max_ms);
}

void tcp_rto_start(struct tcp_conn *c, bool restart)
{
	if (!restart && c->deadline[TCP_T_RTO])
		return;
	tcp_timer_set(c, TCP_T_RTO,
		      tcp_user_timeout_bound(c, tcp_now(c) + US_MS(tcp_rto_current_ms(c))));
}

/* RFC 6298 2.2 / 2.3 (alpha 1/8, beta 1/4, K 4, G the wheel tick); a valid
 * sample also collapses the backoff (Karn: samples come only from segments
 * sent once). */
void tcp_rtt_sample(struct tcp_conn *c, uint64_t rtt_ns)
{
	uint32_t r = (uint32_t)RTE_MIN(rtt_ns / 1000u, (uint64_t)UINT32_MAX / 8);
	uint32_t g = (uint32_t)(c->ts->env.wheel->tick_ns / 1000u);
	uint64_t rto_us;

	if (!c->rtt_valid) {
		c->srtt_us = r;
		c->rttvar_us = r / 2;
		c->rtt_valid = true;
	} else {
		uint32_t err = c->srtt_us > r ? c->srtt_us - r : r - c->srtt_us;

		c->rttvar_us = (3 * c->rttvar_us + err) / 4;
		c->srtt_us = (7 * c->srtt_us + r) / 8;
	}
	if (c->min_rtt_us == 0 || r < c->min_rtt_us)
		c->min_rtt_us = r ? r : 1;
	rto_us = c->srtt_us + RTE_MAX(g, 4 * c->rttvar_us);
	c->rto_ms = (uint32_t)RTE_MIN((rto_us + 999) / 1000, (uint64_t)c->ts->cfg.rto_max_ms);
	if (c->rto_ms < c->ts->cfg.rto_min_ms)
		c->rto_ms = c->ts->cfg.rto_min_ms; /* RFC 6298 2.4, configurable */
	c->backoff = 0;
	tcp_tlp_on_rtt(c); /* tlp.c: RFC 8985 7.3 condition 2 */
}

/* Linux's TCP_MAX_QUICKACKS. */
#define TCP_QUICKACKS_MAX 16u

/* Linux's tcp_incr_quickack: room for a window's worth of quick ACKs,
 * rcv_wnd / (2 * rcv_mss) (at least 2, at most 16); it only grows. */
static void quickack_incr(struct tcp_conn *c)
{
	uint32_t n = tcp_rcv_window(c) / (2 * RTE_MAX(c->rcv_mss, 1u));

	n = RTE_MIN(RTE_MAX(n, 2u), TCP_QUICKACKS_MAX);
	if (n > c->quickacks)
		c->quickacks = (uint8_t)n;
}

/* Profile linux: Linux's quick-ACK mode (tcp_event_data_recv).  The first
 * data of a connection, and the first after no data came for more than an
 * RTO, start a run of quick ACKs, so that the sender's slow start (or its
 * restart after idle, RFC 5681 4.1) is not slowed by delayed ACKs; RFC
 * 9293 3.8.6.3 allows ACKing sooner.  Called for every data segment,
 * before last_data_rcvd_ns moves to now. */
static void quickack_note(struct tcp_conn *c)
{
	uint64_t now = tcp_now(c);

	if (c->last_data_rcvd_ns == 0 || now - c->last_data_rcvd_ns > US_MS(c->rto_ms))
		quickack_incr(c);
}

/* One quick ACK of the run, if any is left; TCP_QUICKACK 0 (ack_hold,
 * Linux's pingpong mode) keeps ACKs delayed. */
static bool quickack_take(struct tcp_conn *c)
{
	if (c->quickacks == 0 || c->ack_hold)
		return false;
	c->quickacks--;
	c->ts->stats.acks_quick++;
	return true;
}

/* The engine's next iteration (1 ns on the wheel), after the application
 * has run on what this one delivered (a socket's epoll wait returns after
 * one poll; a callback's call is already deferred to the end of input): if
 * it wrote or closed, its segment carried the ACK and stopped the timer;
 * if not, the ACK leaves alone by the delayed-ACK timer. */
static void ack_next_iteration(struct tcp_conn *c)
{
	uint64_t at = tcp_now(c) + 1;

	if (c->deadline[TCP_T_DELACK] == 0 || c->deadline[TCP_T_DELACK] > at)
		tcp_timer_set(c, TCP_T_DELACK, at);
}

void tcp_ack_received(struct tcp_conn *c, uint32_t seglen, bool now)
{
	uint32_t our = tcp_our_mss(c->ts, tcb_is_v6(c));
	bool linux = tcp_profile_linux(c->ts);

	c->unacked_bytes += seglen;
	if (seglen > c->rcv_mss)
		c->rcv_mss = RTE_MIN(seglen, our);
	if (linux)
		quickack_note(c);
	/* RFC 9293 3.8.6.3: at least every second full-sized segment, and
	 * within delack_ms (< 0.5 s) of the first unacknowledged one.  A
	 * quick ACK goes in this iteration, but after the application had
	 * its turn, so that an answer carries it (Linux sends it before the
	 * application runs: one segment more for a request answered at once). */
	if (now || c->unacked_bytes >= 2 * c->rcv_mss)
		c->ack_now = true;
	else if (linux && quickack_take(c))
		ack_next_iteration(c);
	else if (c->deadline[TCP_T_DELACK] == 0)
		tcp_timer_set(c, TCP_T_DELACK, tcp_now(c) + US_MS(c->ts->cfg.delack_ms));
}

/* Quick ACK off (tcp_set_quickack): in ESTABLISHED, the ACK of the
 * SYN-ACK (before a request) and of the peer's FIN (before our close) is
 * likely to ride on the application's next segment. */
bool tcp_ack_may_hold(const struct tcp_conn *c)
{
	return c->ack_hold && c->state == TCP_ESTABLISHED;
}

/* RFC 9293 3.8.6.3 (RFC 1122 4.2.3.2): an ACK may be delayed, for less
 * than 0.5 s.  This one waits for the engine's next iteration
 * (ack_next_iteration). */
void tcp_ack_hold(struct tcp_conn *c)
{
	c->ts->stats.acks_held++;
	ack_next_iteration(c);
}

void tcp_enter_time_wait(struct tcp_conn *c)
{
	tcb_set_state(c, TCP_TIME_WAIT);
	tcp_timer_stop(c, TCP_T_RTO);
	tcp_timer_stop(c, TCP_T_PERSIST);
	tcp_timer_stop(c, TCP_T_KEEPALIVE);
	tcp_timer_stop(c, TCP_T_SWS);
	tcp_mq_free(&c->sndq);
	c->sndq_seq = c->snd_una;
	tcb_set_closed(c, 0);
	tcp_timer_set(c, TCP_T_2MSL, tcp_now(c) + US_MS(c->ts->cfg.time_wait_ms));
}

/* RFC 6191 2: with timestamps on the new SYN (and on here), it may reopen
 * when its TSval is above the last one seen (equal: when its sequence
 * number is above too); without them, when the old incarnation had
 * timestamps, or (RFC 1122 4.2.2.13, RFC 9293 3.10.7.4's note on TIME-WAIT)
 * when its sequence number is above RCV.NXT.  Otherwise the old rules. */
bool tcp_time_wait_syn_ok(const struct tcp_conn *c, const struct tcp_seg *seg)
{
	bool new_ts = c->ts->cfg.timestamps && seg->has_ts;
	bool seq_above = SEQ_GT(seg->seq, c->rcv_nxt);

	if (c->state != TCP_TIME_WAIT)
		return false;
	if (new_ts && c->ts_ok)
		return SEQ_GT(seg->ts_val, c->ts_recent) ||
		       (seg->ts_val == c->ts_recent && seq_above);
	if (c->ts_ok)
		return true;
	return seq_above;
}

/* The new incarnation's ISS lies above the old SND.NXT plus the largest
 * window the peer could still accept (RFC 1122 4.2.2.13: "a new sequence
 * number larger than the largest sequence number used on the previous
 * connection incarnation"; Linux picks the same). */
uint32_t tcp_time_wait_reuse(struct tcp_conn *c)
{
	uint32_t iss = c->snd_nxt + TCP_MAX_WIN + 2;

	c->ts->stats.timewait_reused++;
	tcb_drop(c); /* the application was told at TIME-WAIT entry */
	return iss;
}

/* What a timeout reports (Linux's tcp_write_err): the last soft ICMP
 * error if one came (RFC 9293 3.9.1.8, MUST-47: host unreachable says
 * more than "timed out"), else ETIMEDOUT. */
static int timeout_err(struct tcp_conn *c)
{
	if (c->soft_err == 0)
		return ETIMEDOUT;
	c->ts->stats.soft_err_reported++;
	return c->soft_err;
}

static void give_up(struct tcp_conn *c)
{
	struct tcp_stats *st = &c->ts->stats;

	if (c->state == TCP_SYN_RECEIVED && c->listener != NULL && !c->tfo.child) {
		st->embryos_timed_out++; /* the application never saw it */
	} else {
		st->conns_timed_out++;
		tcb_set_closed(c, timeout_err(c));
	}
	tcb_drop(c);
}

/* The connection is gone for lack of answers: on_closed(ETIMEDOUT, or the
 * soft error that explains it). */
static void timed_out(struct tcp_conn *c, uint64_t *counter)
{
	(*counter)++;
	tcb_set_closed(c, timeout_err(c));
	tcb_drop(c);
}

/* RFC 1122 4.2.2.17: the first probe after one RTO, then exponentially
 * further apart, bounded by rto_max (like the RFC 6298 5.5 backoff). */
static uint64_t persist_interval_ns(const struct tcp_conn *c)
{
	uint64_t ms = c->rto_ms;

	for (unsigned i = 0; i < c->persist_backoff && ms < c->ts->cfg.rto_max_ms; i++)
		ms <<= 1;
	return US_MS(RTE_MIN(ms, (uint64_t)c->ts->cfg.rto_max_ms));
}

void tcp_persist_start(struct tcp_conn *c)
{
	if (c->deadline[TCP_T_PERSIST] == 0)
		tcp_timer_set(c, TCP_T_PERSIST, tcp_now(c) + persist_interval_ns(c));
}

void tcp_persist_stop(struct tcp_conn *c)
{
	tcp_timer_stop(c, TCP_T_PERSIST);
	c->persist_backoff = 0;
	c->persist_unanswered = 0;
}

/* RFC 9293 3.8.6.1 (MUST-26 style): probes continue as long as the peer
 * answers them, however long it keeps the window closed; only probes
 * that go unanswered data_retries times in a row end the connection
 * (like Linux's tcp_retries2 for probes). */
static void persist_expired(struct tcp_conn *c)
{
	if (c->snd_wnd != 0 || c->snd_nxt != c->snd_una || !SEQ_LT(c->snd_nxt, tcp_sndq_end(c))) {
		tcp_output(c); /* no longer a closed window: send or stop */
		return;
	}
	if (c->persist_unanswered >= c->ts->cfg.data_retries) {
		timed_out(c, &c->ts->stats.persist_timeouts);
		return;
	}
	tcp_send_window_probe(c);
	c->persist_unanswered++;
	if (c->persist_backoff < 32)
		c->persist_backoff++;
	tcp_persist_start(c);
}

static bool keepalive_state(const struct tcp_conn *c)
{
	return c->state == TCP_ESTABLISHED || c->state == TCP_CLOSE_WAIT ||
	       c->state == TCP_FIN_WAIT_2;
}

static void keepalive_arm(struct tcp_conn *c, uint32_t ms)
{
	tcp_timer_set(c, TCP_T_KEEPALIVE, tcp_now(c) + US_MS(RTE_MAX(ms, 1u)));
}

/* RFC 9293 3.8.4 / RFC 1122 4.2.3.6: after keepalive_idle_ms without a
 * segment from the peer, a probe every keepalive_intvl_ms; keepalive_probes
 * unanswered ones end the connection (ETIMEDOUT, and an RST as Linux sends
 * in case the peer is still there).  With data in flight or a closed window
 * the RTO or persist timer watches the peer instead. */
static void keepalive_expired(struct tcp_conn *c)
{
	if (!c->keepalive)
		return;
	if (!keepalive_state(c) || c->snd_nxt != c->snd_una || c->deadline[TCP_T_PERSIST]) {
		keepalive_arm(c, tcp_ka_idle_ms(c));
		return;
	}
	if (tcp_keepalive_gave_up(c)) {
		tcp_send_rst(c);
		timed_out(c, &c->ts->stats.keepalive_timeouts);
		return;
	}
	tcp_send_keepalive(c);
	c->ka_unanswered++;
	keepalive_arm(c, tcp_ka_intvl_ms(c));
}

void tcp_peer_heard(struct tcp_conn *c)
{
	c->persist_unanswered = 0;
	c->ka_unanswered = 0;
	c->last_heard_ns = tcp_now(c);
	if (c->keepalive)
		keepalive_arm(c, tcp_ka_idle_ms(c));
}

int tcp_set_keepalive(struct tcp_conn *c, bool on)
{
	if (c->app_closed)
		return -EBADF;
	if (c->dead || c->state == TCP_LISTEN)
		return -ENOTCONN;
	c->keepalive = on;
	c->ka_unanswered = 0;
	if (on)
		keepalive_arm(c, tcp_ka_idle_ms(c));
	else
		tcp_timer_stop(c, TCP_T_KEEPALIVE);
	return 0;
}

/* RFC 9293 3.8.3 (MUST-20): from the R1-th retransmission on, every RTO
 * tells the network layer its way to the peer is in doubt (Linux's
 * __dst_negative_advice in tcp_write_timeout), before the resend that may
 * then go the new way. */
static void negative_advice(struct tcp_conn *c)
{
	const struct tcp_env *env = &c->ts->env;

	if (c->retries < TCP_R1_RETRIES || env->negative_advice == NULL)
		return;
	c->ts->stats.negative_advice++;
	env->negative_advice(env->ctx, &c->remote_ip);
}

/* RFC 6298 5.4-5.6: retransmit the earliest unacknowledged segment, back
 * off, restart the timer.  Go-back-N from snd_una with cwnd one segment
 * (RFC 5681 3.1, eq. 4 for ssthresh). */
static void rto_expired(struct tcp_conn *c)
{
	bool handshake = c->state == TCP_SYN_SENT || c->state == TCP_SYN_RECEIVED;

	c->ts->stats.rto_fired++;
	if (handshake ? c->retries >= tcp_handshake_retries(c) : tcp_data_timed_out(c)) {
		if (!handshake && c->o.user_timeout_ms != 0)
			c->ts->stats.user_timeouts++;
		give_up(c);
		return;
	}
	c->retries++;
	c->backoff++;
	c->rtt_active = false; /* Karn: never time a retransmitted segment */
	negative_advice(c);
	tcp_sb_on_rto(c);
	if (handshake) {
		c->syn_retransmitted = true;
		tcp_send_syn(c);
		tcp_rto_start(c, true);
		return;
	}
	/* RFC 5681 3.1 (RFC 9438 4.8 for CUBIC): ssthresh from FlightSize,
	 * held constant when the same segment times out again; cwnd = 1 SMSS. */
	tcp_loss_on_rto(c);
	tcp_rack_on_rto(c); /* rack.c: RFC 8985 6.3 */
	tcp_cc_on_rto(tcp_cc_load(c), c->snd_max - c->snd_una, c->retries == 1);
	tcp_cc_store(c);
	c->snd_nxt = c->snd_una;
	tcp_output(c); /* a closed window hands over to the persist timer */
	if (c->snd_nxt != c->snd_una)
		tcp_rto_start(c, false);
}

static void expire(struct tcp_conn *c, enum tcp_timer_kind k)
{
	switch (k) {
	case TCP_T_RTO:
		rto_expired(c);
		break;
	case TCP_T_DELACK:
		if (tcb_synchronized(c)) {
			c->ts->stats.delayed_acks++;
			tcp_send_ack(c);
		}
		break;
	case TCP_T_2MSL:
		tcb_drop(c); /* RFC 9293 3.10.8: delete the TCB */
		break;
	case TCP_T_PERSIST:
		persist_expired(c);
		break;
	case TCP_T_KEEPALIVE:
		keepalive_expired(c);
		break;
	case TCP_T_SWS:
		tcp_sws_override(c);
		break;
	case TCP_T_TLP:
		tcp_tlp_expired(c); /* tlp.c */
		break;
	case TCP_T_RACK:
		tcp_rack_timer(c);
		break;
	default:
		break;
	}
}

static void tcb_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct tcp_conn *c = (struct tcp_conn *)((char *)t - offsetof(struct tcp_conn, timer));
	struct tcp_stack *ts = c->ts;

	tcp_enter(ts);
	for (unsigned k = 0; k < TCP_T_COUNT && !c->dead; k++) {
		if (c->deadline[k] == 0 || c->deadline[k] > now_ns)
			continue;
		c->deadline[k] = 0;
		expire(c, (enum tcp_timer_kind)k);
	}
	if (!c->dead)
		rearm(c);
	tcb_notify(c);
	tcp_leave(ts);
}
