/* tcp/tcb_chrono.c: Linux's sending chronographs (net/ipv4/tcp_output.c
 * tcp_chrono_start/stop) for tcp_info's tcpi_busy_time, tcpi_rwnd_limited
 * and tcpi_sndbuf_limited: after each output, the one state that fits the
 * connection runs; the others are stopped. */
#include "tcp/tcb.h"

/* What limits c now, the highest first as in Linux (its enum order):
 * an application waiting for send-buffer room (sndbuf); data queued whose
 * next segment the peer's window does not take (rwnd); else busy, or
 * nothing queued or in flight (none). */
static enum tcp_chrono chrono_now(const struct tcp_conn *c)
{
	uint32_t flight = c->snd_nxt - c->snd_una;

	if (!tcb_synchronized(c) || (flight == 0 && tcp_sndq_unsent(c) == 0))
		return TCP_CHRONO_NONE;
	if (c->want_writable)
		return TCP_CHRONO_SNDBUF;
	/* Linux's tcp_snd_wnd_test: the next segment does not fit. */
	if (tcp_sndq_unsent(c) > 0 &&
	    flight + RTE_MIN(tcp_sndq_unsent(c), c->mss) > c->snd_wnd)
		return TCP_CHRONO_RWND;
	return TCP_CHRONO_BUSY;
}

void tcp_chrono_update(struct tcp_conn *c)
{
	enum tcp_chrono t = chrono_now(c);
	uint64_t now;

	if (t == c->chrono_type)
		return;
	now = tcp_now(c);
	if (c->chrono_type != TCP_CHRONO_NONE)
		c->chrono_ns[c->chrono_type] += now - c->chrono_start_ns;
	c->chrono_type = (uint8_t)t;
	c->chrono_start_ns = now;
}

void tcp_chrono_read(const struct tcp_conn *c, uint64_t out[TCP_CHRONO_COUNT])
{
	for (unsigned i = 0; i < TCP_CHRONO_COUNT; i++)
		out[i] = c->chrono_ns[i];
	if (c->chrono_type != TCP_CHRONO_NONE)
		out[c->chrono_type] += tcp_now(c) - c->chrono_start_ns;
}
