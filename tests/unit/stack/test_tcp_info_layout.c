/* struct us_tcp_info is Linux's struct tcp_info field for field: every
 * field of the system's <linux/tcp.h> at the same offset with the same
 * size (the bit-fields as the byte they share), so code written for
 * Linux reads the same bytes.  Fields newer than the system header are
 * checked by the layout rule alone (no padding before them). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <linux/tcp.h>
#include <sys/ioctl.h>

#include "us_socket.h"

#define SAME(f) do { \
	assert_int_equal(offsetof(struct us_tcp_info, f), offsetof(struct tcp_info, f)); \
	assert_int_equal(sizeof(((struct us_tcp_info *)0)->f), \
			 sizeof(((struct tcp_info *)0)->f)); \
} while (0)

static void test_layout(void **state)
{
	struct us_tcp_info u = { 0 };
	struct tcp_info l = { 0 };

	(void)state;
	SAME(tcpi_state); SAME(tcpi_ca_state); SAME(tcpi_retransmits); SAME(tcpi_probes);
	SAME(tcpi_backoff); SAME(tcpi_options);
	SAME(tcpi_rto); SAME(tcpi_ato); SAME(tcpi_snd_mss); SAME(tcpi_rcv_mss);
	SAME(tcpi_unacked); SAME(tcpi_sacked); SAME(tcpi_lost); SAME(tcpi_retrans);
	SAME(tcpi_fackets); SAME(tcpi_last_data_sent); SAME(tcpi_last_ack_sent);
	SAME(tcpi_last_data_recv); SAME(tcpi_last_ack_recv); SAME(tcpi_pmtu);
	SAME(tcpi_rcv_ssthresh); SAME(tcpi_rtt); SAME(tcpi_rttvar); SAME(tcpi_snd_ssthresh);
	SAME(tcpi_snd_cwnd); SAME(tcpi_advmss); SAME(tcpi_reordering); SAME(tcpi_rcv_rtt);
	SAME(tcpi_rcv_space); SAME(tcpi_total_retrans); SAME(tcpi_pacing_rate);
	SAME(tcpi_max_pacing_rate); SAME(tcpi_bytes_acked); SAME(tcpi_bytes_received);
	SAME(tcpi_segs_out); SAME(tcpi_segs_in); SAME(tcpi_notsent_bytes); SAME(tcpi_min_rtt);
	SAME(tcpi_data_segs_in); SAME(tcpi_data_segs_out); SAME(tcpi_delivery_rate);
	SAME(tcpi_busy_time); SAME(tcpi_rwnd_limited); SAME(tcpi_sndbuf_limited);
	SAME(tcpi_delivered); SAME(tcpi_delivered_ce); SAME(tcpi_bytes_sent);
	SAME(tcpi_bytes_retrans); SAME(tcpi_dsack_dups); SAME(tcpi_reord_seen);
	SAME(tcpi_rcv_ooopack); SAME(tcpi_snd_wnd);
	/* The bit-fields share byte 6 (wscales, send in the low nibble) and 7. */
	u.tcpi_snd_wscale = 7;
	u.tcpi_rcv_wscale = 9;
	l.tcpi_snd_wscale = 7;
	l.tcpi_rcv_wscale = 9;
	u.tcpi_delivery_rate_app_limited = 1;
	u.tcpi_fastopen_client_fail = 2;
	l.tcpi_delivery_rate_app_limited = 1;
	l.tcpi_fastopen_client_fail = 2;
	assert_memory_equal((const uint8_t *)&u + 6, (const uint8_t *)&l + 6, 2);
	/* Linux 6.7's tail after tcpi_snd_wnd, with no padding. */
	assert_int_equal(offsetof(struct us_tcp_info, tcpi_rcv_wnd),
			 offsetof(struct us_tcp_info, tcpi_snd_wnd) + 4);
	assert_int_equal(offsetof(struct us_tcp_info, tcpi_total_rto_time),
			 offsetof(struct us_tcp_info, tcpi_rcv_wnd) + 12);
	assert_int_equal(sizeof(struct us_tcp_info),
			 offsetof(struct us_tcp_info, tcpi_total_rto_time) + 4);
	/* Linux's constants. */
	assert_int_equal(US_TCPI_OPT_TIMESTAMPS, TCPI_OPT_TIMESTAMPS);
	assert_int_equal(US_TCPI_OPT_SACK, TCPI_OPT_SACK);
	assert_int_equal(US_TCPI_OPT_WSCALE, TCPI_OPT_WSCALE);
	assert_int_equal(US_TCPI_OPT_SYN_DATA, TCPI_OPT_SYN_DATA);
	assert_int_equal(US_TCP_CA_RECOVERY, TCP_CA_Recovery);
	assert_int_equal(US_TCP_CA_LOSS, TCP_CA_Loss);
	assert_int_equal(US_TCP_CA_DISORDER, TCP_CA_Disorder);
	assert_int_equal(US_TCP_INFO, TCP_INFO);
	assert_int_equal(US_TCP_MAXSEG, TCP_MAXSEG);
	assert_int_equal(US_TCP_CORK, TCP_CORK);
	assert_int_equal(US_TCP_KEEPIDLE, TCP_KEEPIDLE);
	assert_int_equal(US_TCP_KEEPINTVL, TCP_KEEPINTVL);
	assert_int_equal(US_TCP_KEEPCNT, TCP_KEEPCNT);
	assert_int_equal(US_TCP_SYNCNT, TCP_SYNCNT);
	assert_int_equal(US_TCP_LINGER2, TCP_LINGER2);
	assert_int_equal(US_TCP_DEFER_ACCEPT, TCP_DEFER_ACCEPT);
	assert_int_equal(US_TCP_CONGESTION, TCP_CONGESTION);
	assert_int_equal(US_TCP_USER_TIMEOUT, TCP_USER_TIMEOUT);
	assert_int_equal(US_TCP_NOTSENT_LOWAT, TCP_NOTSENT_LOWAT);
	assert_int_equal(US_TCP_FASTOPEN_KEY, TCP_FASTOPEN_KEY);
	assert_int_equal(US_TCP_INQ, TCP_INQ);
	assert_int_equal(US_TCP_QUICKACK, TCP_QUICKACK);
	assert_int_equal(US_TCP_FASTOPEN, TCP_FASTOPEN);
	assert_int_equal(US_TCP_FASTOPEN_CONNECT, TCP_FASTOPEN_CONNECT);
}

/* The socket-level and IP values against the C library's. */
static void test_constants(void **state)
{
	(void)state;
	assert_int_equal(US_SOL_SOCKET, SOL_SOCKET);
	assert_int_equal(US_SO_TYPE, SO_TYPE);
	assert_int_equal(US_SO_ERROR, SO_ERROR);
	assert_int_equal(US_SO_SNDBUF, SO_SNDBUF);
	assert_int_equal(US_SO_RCVBUF, SO_RCVBUF);
	assert_int_equal(US_SO_KEEPALIVE, SO_KEEPALIVE);
	assert_int_equal(US_SO_LINGER, SO_LINGER);
	assert_int_equal(US_SO_REUSEADDR, SO_REUSEADDR);
	assert_int_equal(US_SO_REUSEPORT, SO_REUSEPORT);
	assert_int_equal(US_SO_RCVLOWAT, SO_RCVLOWAT);
	assert_int_equal(US_SO_ACCEPTCONN, SO_ACCEPTCONN);
	assert_int_equal(US_SO_PROTOCOL, SO_PROTOCOL);
	assert_int_equal(US_SO_DOMAIN, SO_DOMAIN);
	assert_int_equal(US_IPPROTO_IP, IPPROTO_IP);
	assert_int_equal(US_IP_TOS, IP_TOS);
	assert_int_equal(US_IP_TTL, IP_TTL);
	assert_int_equal(US_MSG_PEEK, MSG_PEEK);
	assert_int_equal(US_MSG_TRUNC, MSG_TRUNC);
	assert_int_equal(US_MSG_WAITALL, MSG_WAITALL);
	assert_int_equal(US_MSG_MORE, MSG_MORE);
	assert_int_equal(US_MSG_DONTWAIT, MSG_DONTWAIT);
	assert_int_equal(US_MSG_NOSIGNAL, MSG_NOSIGNAL);
	assert_int_equal(US_MSG_FASTOPEN, MSG_FASTOPEN);
	assert_int_equal(US_MSG_OOB, MSG_OOB);
	assert_int_equal(US_SO_OOBINLINE, SO_OOBINLINE);
	assert_int_equal(US_SIOCATMARK, SIOCATMARK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_constants),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
