/* stack/sock/socket_tcpinfo.c: US_TCP_INFO, Linux's struct tcp_info filled
 * as Linux's tcp_get_info does (net/ipv4/tcp.c), from tcp/'s
 * tcp_conn_info: the same units (segments where Linux counts segments,
 * microseconds, milliseconds for the tcpi_last_* ages), Linux's state and
 * TCP_CA_* numbers.  What we cannot know stays 0 (docs/API.md). */
#include <string.h>

#include "stack/sock/socket_priv.h"

/* Linux's include/net/tcp_states.h numbers for enum tcp_state's order
 * (CLOSED, LISTEN, SYN-SENT, SYN-RECEIVED, ESTABLISHED, FIN-WAIT-1,
 * FIN-WAIT-2, CLOSE-WAIT, CLOSING, LAST-ACK, TIME-WAIT). */
static const uint8_t linux_state[] = {
	US_TCP_CLOSE, US_TCP_LISTEN, US_TCP_SYN_SENT, US_TCP_SYN_RECV, US_TCP_ESTABLISHED,
	US_TCP_FIN_WAIT1, US_TCP_FIN_WAIT2, US_TCP_CLOSE_WAIT, US_TCP_CLOSING, US_TCP_LAST_ACK,
	US_TCP_TIME_WAIT,
};

/* Linux's TCP_INFINITE_SSTHRESH: ssthresh before the first loss. */
#define INFINITE_SSTHRESH 0x7fffffffu

static uint32_t segs(uint64_t bytes, uint32_t mss)
{
	return (uint32_t)((bytes + mss - 1) / mss);
}

/* Milliseconds since t (0: never). */
static uint32_t age_ms(uint64_t now, uint64_t t)
{
	return t == 0 || t > now ? 0 : (uint32_t)((now - t) / 1000000u);
}

static uint8_t info_options(const struct tcp_conn_info *ci)
{
	return (uint8_t)((ci->ts_ok ? US_TCPI_OPT_TIMESTAMPS : 0) |
			 (ci->sack_ok ? US_TCPI_OPT_SACK : 0) |
			 (ci->ws_ok ? US_TCPI_OPT_WSCALE : 0) |
			 (ci->syn_data_acked ? US_TCPI_OPT_SYN_DATA : 0));
}

static void info_conn(const struct tcp_conn_info *ci, struct us_tcp_info *ti)
{
	uint32_t mss = ci->mss ? ci->mss : 1;

	ti->tcpi_state = ci->state < sizeof(linux_state) ? linux_state[ci->state] : US_TCP_CLOSE;
	ti->tcpi_ca_state = ci->ca_state;
	ti->tcpi_retransmits = (uint8_t)(ci->retries > 255 ? 255 : ci->retries);
	ti->tcpi_probes = (uint8_t)(ci->probes > 255 ? 255 : ci->probes);
	ti->tcpi_backoff = (uint8_t)(ci->backoff > 255 ? 255 : ci->backoff);
	ti->tcpi_options = info_options(ci);
	if (ci->ws_ok) {
		ti->tcpi_snd_wscale = ci->snd_wscale & 0xf;
		ti->tcpi_rcv_wscale = ci->rcv_wscale & 0xf;
	}
	ti->tcpi_rto = ci->rto_ms * 1000u;
	ti->tcpi_ato = ci->ato_us;
	ti->tcpi_snd_mss = ci->mss;
	ti->tcpi_rcv_mss = ci->rcv_mss;
	ti->tcpi_unacked = segs(ci->in_flight, mss);
	ti->tcpi_sacked = segs(ci->sacked, mss);
	ti->tcpi_lost = segs(ci->lost, mss);
	ti->tcpi_retrans = segs(ci->retrans_out, mss);
	ti->tcpi_last_data_sent = age_ms(ci->now_ns, ci->last_data_sent_ns);
	ti->tcpi_last_data_recv = age_ms(ci->now_ns, ci->last_data_rcvd_ns);
	ti->tcpi_last_ack_recv = age_ms(ci->now_ns, ci->last_heard_ns);
	ti->tcpi_pmtu = ci->pmtu;
	ti->tcpi_rtt = ci->srtt_us;
	ti->tcpi_rttvar = ci->rttvar_us;
	ti->tcpi_snd_ssthresh = ci->ssthresh >= UINT32_MAX / 2 ? INFINITE_SSTHRESH
							       : ci->ssthresh / mss;
	ti->tcpi_snd_cwnd = ci->cwnd / mss;
	ti->tcpi_advmss = ci->adv_mss;
	ti->tcpi_reordering = 3; /* RFC 6675 DupThresh, Linux's tcp_reordering */
	ti->tcpi_rcv_space = ci->rcvbuf / 2;
	ti->tcpi_total_retrans = ci->retransmits;
	ti->tcpi_bytes_acked = ci->bytes_acked;
	ti->tcpi_bytes_received = ci->bytes_received;
	ti->tcpi_notsent_bytes = ci->unsent;
	ti->tcpi_min_rtt = ci->min_rtt_us ? ci->min_rtt_us : UINT32_MAX;
	ti->tcpi_delivery_rate = ci->delivery_rate;
	ti->tcpi_busy_time = ci->busy_ns / 1000u;
	ti->tcpi_rwnd_limited = ci->rwnd_limited_ns / 1000u;
	ti->tcpi_sndbuf_limited = ci->sndbuf_limited_ns / 1000u;
	ti->tcpi_delivered = segs(ci->bytes_acked, mss) + segs(ci->sacked, mss);
	ti->tcpi_bytes_sent = ci->bytes_sent;
	ti->tcpi_bytes_retrans = ci->bytes_retrans;
	ti->tcpi_reord_seen = (uint32_t)ci->spurious_recoveries;
	ti->tcpi_rcv_ooopack = ci->rcv_ooopack;
	ti->tcpi_snd_wnd = ci->snd_wnd;
	ti->tcpi_rcv_wnd = ci->rcv_wnd;
	ti->tcpi_total_rto = (uint16_t)(ci->rtos > UINT16_MAX ? UINT16_MAX : ci->rtos);
}

void us_sock_tcp_info(const struct us_sock *s, struct us_tcp_info *ti)
{
	struct tcp_conn_info ci;

	memset(ti, 0, sizeof(*ti));
	if (s->state == US_SS_LISTEN) {
		/* Linux's tcp_get_info on a listener: the accept queue. */
		ti->tcpi_state = US_TCP_LISTEN;
		ti->tcpi_unacked = s->nacceptq;
		ti->tcpi_sacked = s->backlog;
		return;
	}
	if (s->tc == NULL) {
		ti->tcpi_state = US_TCP_CLOSE;
		return;
	}
	tcp_conn_get_info(s->tc, &ci);
	info_conn(&ci, ti);
}
