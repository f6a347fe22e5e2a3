/* The TCP-level socket options through the socket API between two engines
 * in virtual time (sock_pair.c), each with its effect on the segments on
 * the wire and its errors, Linux's (tcp(7), net/ipv4/tcp.c):
 * TCP_MAXSEG, TCP_CORK and MSG_MORE (and TCP_NODELAY with them),
 * TCP_NOTSENT_LOWAT, TCP_INQ, TCP_USER_TIMEOUT, TCP_KEEPIDLE/KEEPINTVL/
 * KEEPCNT, TCP_SYNCNT, TCP_LINGER2, TCP_DEFER_ACCEPT, TCP_CONGESTION,
 * TCP_FASTOPEN_KEY. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 80
#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_ACK 0x10

static char big[64 * 1024];

static int sock_error(int fd)
{
	return sp_get_int(fd, US_SOL_SOCKET, US_SO_ERROR);
}

/* The data segments A sent since the log was cleared. */
static unsigned a_data_segs(void)
{
	unsigned n = 0;

	for (unsigned i = 0; i < sp.a.nlog; i++)
		n += sp.a.log[i].payload > 0;
	return n;
}

static void maxseg_1000(int fd)
{
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_MAXSEG, 1000);
}

static void maxseg_700(int fd)
{
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_MAXSEG, 700);
}

/* TCP_MAXSEG caps the MSS option of the SYN (client) and SYN-ACK
 * (listener) and the segments each side sends. */
static void test_maxseg(void **state)
{
	int l, c, s, v = 87;

	(void)state;
	/* Errors and the values reported before a connection. */
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_MAXSEG), 536);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_MAXSEG, &v, sizeof(v)), EINVAL);
	v = 65536;
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_MAXSEG, &v, sizeof(v)), EINVAL);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_MAXSEG, &v, 3), EINVAL);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_MAXSEG, NULL, 4), EFAULT);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_MAXSEG, 0);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_MAXSEG, 1000);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_MAXSEG), 1000);
	us_close(c);

	l = sp_listen_b(PORT, maxseg_700);
	sp_log_clear(&sp.a);
	sp_log_clear(&sp.b);
	sp_pair(l, PORT, maxseg_1000, &c, &s);
	assert_int_equal(sp.a.log[0].flags, TH_SYN);
	assert_int_equal(sp.a.log[0].mss, 1000);
	assert_int_equal(sp.b.log[0].flags, TH_SYN | TH_ACK);
	assert_int_equal(sp.b.log[0].mss, 700);
	/* Each sends with the smaller: 700, less the timestamp option. */
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_MAXSEG), 700 - 12);
	sp_on(&sp.b);
	assert_int_equal(sp_get_int(s, US_IPPROTO_TCP, US_TCP_MAXSEG), 700 - 12);
	assert_int_equal(us_send(s, big, 10000, 0), 10000);
	sp_on(&sp.a);
	assert_int_equal(us_send(c, big, 10000, 0), 10000);
	sp_run(50);
	assert_int_equal(sp_log_max_payload(&sp.a), 700 - 12);
	assert_int_equal(sp_log_max_payload(&sp.b), 700 - 12);
	assert_int_equal(sp_drain_b(s), 10000);
	sp_close3(c, s, l);
}

static void syncookies_always(struct us_config *cfg)
{
	cfg->tcp.syncookies = TCP_SYNCOOKIES_ALWAYS;
}

static int setup_syncookies(void **state)
{
	(void)state;
	sp_setup(syncookies_always);
	return 0;
}

/* A listener answering with SYN cookies announces its TCP_MAXSEG too. */
static void test_maxseg_syncookie(void **state)
{
	int l, c, s;

	(void)state;
	l = sp_listen_b(PORT, maxseg_700);
	sp_log_clear(&sp.b);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(sp.b.log[0].flags, TH_SYN | TH_ACK);
	assert_int_equal(sp.b.log[0].mss, 700);
	assert_true(tcp_stack_stats(sp.b.tab->ts)->syncookies_ok >= 1);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_MAXSEG), 700 - 12);
	sp_close3(c, s, l);
}

static void nodelay(int fd)
{
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_NODELAY, 1);
}

/* TCP_CORK holds partial segments until a full one, the uncork, or 200
 * ms; TCP_NODELAY set while corked pushes what waits. */
static void test_cork(void **state)
{
	int l, c, s;
	uint64_t t0;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, nodelay, &c, &s);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_CORK, 1);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_CORK), 1);
	sp_log_clear(&sp.a);
	assert_int_equal(us_send(c, big, 100, 0), 100);
	assert_int_equal(us_send(c, big, 100, 0), 100);
	sp_run(20);
	assert_int_equal(a_data_segs(), 0); /* corked, although NODELAY */
	/* A full segment goes at once; the rest waits. */
	assert_int_equal(us_send(c, big, 1448, 0), 1448);
	sp_run(5);
	assert_int_equal(a_data_segs(), 1);
	assert_int_equal(sp_log_max_payload(&sp.a), 1448);
	/* Uncorked: the rest (200 bytes) leaves now. */
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_CORK, 0);
	sp_run(2);
	assert_int_equal(a_data_segs(), 2);
	assert_int_equal(sp_drain_b(s), 1648);

	/* The 200 ms ceiling with nothing in flight. */
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_CORK, 1);
	sp_run(10);
	sp_log_clear(&sp.a);
	t0 = sp.now;
	assert_int_equal(us_send(c, big, 10, 0), 10);
	sp_run(150);
	assert_int_equal(a_data_segs(), 0);
	sp_run(100);
	assert_int_equal(a_data_segs(), 1);
	assert_true(sp.a.log[0].at - t0 >= US_MS(199) && sp.a.log[0].at - t0 <= US_MS(210));

	/* NODELAY set again while corked: what waits goes (Linux's
	 * TCP_NAGLE_PUSH); later data is corked again. */
	sp_log_clear(&sp.a);
	assert_int_equal(us_send(c, big, 30, 0), 30);
	sp_run(5);
	assert_int_equal(a_data_segs(), 0);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_NODELAY, 1);
	sp_run(2);
	assert_int_equal(a_data_segs(), 1);
	assert_int_equal(us_send(c, big, 30, 0), 30);
	sp_run(5);
	assert_int_equal(a_data_segs(), 1);
	assert_int_equal(sp_drain_b(s), 10 + 30);
	sp_close3(c, s, l);
}

/* MSG_MORE holds that send's partial segment; the next send without it
 * goes out with it in one segment. */
static void test_msg_more(void **state)
{
	int l, c, s;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, nodelay, &c, &s);
	sp_log_clear(&sp.a);
	assert_int_equal(us_send(c, big, 100, US_MSG_MORE), 100);
	sp_run(20);
	assert_int_equal(a_data_segs(), 0);
	assert_int_equal(us_send(c, big, 50, 0), 50);
	sp_run(2);
	assert_int_equal(a_data_segs(), 1);
	assert_int_equal(sp_log_max_payload(&sp.a), 150);
	/* Without MSG_MORE (and NODELAY) a small send leaves at once. */
	assert_int_equal(us_send(c, big, 10, 0), 10);
	sp_run(2);
	assert_int_equal(a_data_segs(), 2);
	assert_int_equal(sp_drain_b(s), 160);
	sp_close3(c, s, l);
}

static void rcvbuf_small(int fd)
{
	sp_set_int(fd, US_SOL_SOCKET, US_SO_RCVBUF, 4096);
}

/* TCP_NOTSENT_LOWAT: with more than the bound waiting unsent (B's small
 * window holds it back), A is not writable and send says EAGAIN; once B
 * reads and the data goes, it is again. */
static void test_notsent_lowat(void **state)
{
	int l, c, s;
	uint32_t ev;

	(void)state;
	l = sp_listen_b(PORT, rcvbuf_small);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_NOTSENT_LOWAT), -1);
	assert_int_equal(us_send(c, big, 20000, 0), 20000);
	sp_run(20);
	/* No bound: writable (the send buffer has room). */
	ev = sp_wait_events(&sp.a, c, US_EPOLLOUT, 0);
	assert_int_equal(ev, US_EPOLLOUT);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_NOTSENT_LOWAT, 1000);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_NOTSENT_LOWAT), 1000);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 0), 0);
	/* A level-triggered registration made now is woken when the unsent
	 * bytes drop below the bound (no send failed to ask for it). */
	struct us_epoll_event eo = { .events = US_EPOLLOUT, .data.fd = c }, got_ev;
	int ep = us_epoll_create1(0);
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, c, &eo), 0);
	assert_int_equal(us_epoll_wait(ep, &got_ev, 1, 0), 0);
	/* B reads everything as it comes: the window lets the rest go. */
	size_t got = 0;
	for (int i = 0; i < 50 && got < 20000; i++) {
		sp_run(5);
		got += sp_drain_b(s);
	}
	assert_int_equal(got, 20000);
	sp_run(100); /* B's (delayed) ACK of the last bytes */
	assert_int_equal(us_epoll_wait(ep, &got_ev, 1, 0), 1);
	assert_int_equal(got_ev.events, US_EPOLLOUT);
	us_close(ep);
	/* Filled again past the bound: send says EAGAIN, as Linux's. */
	assert_int_equal(us_send(c, big, 20000, 0), 20000);
	sp_run(20);
	assert_fails(us_send(c, big, 10, 0), EAGAIN);
	for (int i = 0; i < 50 && got < 40000; i++) {
		sp_run(5);
		got += sp_drain_b(s);
	}
	assert_int_equal(got, 40000);
	assert_int_equal(us_send(c, big, 10, 0), 10);
	sp_close3(c, s, l);
}

static void test_inq(void **state)
{
	int c = us_socket(AF_INET, SOCK_STREAM, 0), v = 2;

	(void)state;
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_INQ), 0);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_INQ, &v, sizeof(v)), EINVAL);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_INQ, 1);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_INQ), 1);
	us_close(c);
}

/* TCP_USER_TIMEOUT: data unacknowledged for the timeout aborts the
 * connection with ETIMEDOUT then, not after data_retries backoffs. */
static void test_user_timeout(void **state)
{
	int l, c, s, v = -1;
	uint64_t t0;
	uint32_t ev = 0;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_USER_TIMEOUT), 0);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_USER_TIMEOUT, &v, sizeof(v)),
		     EINVAL);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_USER_TIMEOUT, 1000);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_USER_TIMEOUT), 1000);
	sp_run(10);
	sp.b.wire_down = true; /* B's ACKs are lost */
	t0 = sp.now;
	assert_int_equal(us_send(c, big, 100, 0), 100);
	while (ev == 0 && sp.now - t0 < US_MS(5000))
		ev = sp_wait_events(&sp.a, c, US_EPOLLERR, 10);
	assert_true(ev & US_EPOLLERR);
	/* Linux aborts at the timeout (its RTO clamped to it), measured from
	 * the data's send even though a Tail Loss Probe went first and the
	 * RTO restarted from the probe. */
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->tlp_probes, 1);
	assert_true(sp.now - t0 >= US_MS(1000) && sp.now - t0 <= US_MS(1020));
	assert_int_equal(sock_error(c), ETIMEDOUT);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->user_timeouts, 1);
	us_close(c);
	sp.b.wire_down = false;
	sp_close3(-1, s, l);
}

static void keepalive_fast(int fd)
{
	sp_set_int(fd, US_SOL_SOCKET, US_SO_KEEPALIVE, 1);
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_KEEPIDLE, 2);
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_KEEPINTVL, 1);
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_KEEPCNT, 2);
}

/* TCP_KEEPIDLE/KEEPINTVL/KEEPCNT: probes after 2 s idle, every 1 s, the
 * connection gone (ETIMEDOUT, RST) when 2 go unanswered. */
static void test_keepalive_timing(void **state)
{
	int l, c, s, v;
	uint64_t t0, heard;
	uint32_t ev = 0;

	(void)state;
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_KEEPIDLE), 7200);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_KEEPINTVL), 75);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_KEEPCNT), 9);
	v = 0;
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_KEEPIDLE, &v, sizeof(v)), EINVAL);
	v = 32768;
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_KEEPINTVL, &v, sizeof(v)), EINVAL);
	v = 128;
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_KEEPCNT, &v, sizeof(v)), EINVAL);
	us_close(c);

	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, keepalive_fast, &c, &s);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_KEEPIDLE), 2);
	sp_run(10);
	heard = sp.b.log[sp.b.nlog - 1].at;
	sp.b.wire_down = true;
	sp_log_clear(&sp.a);
	t0 = sp.now;
	while (ev == 0 && sp.now - t0 < US_MS(10000))
		ev = sp_wait_events(&sp.a, c, US_EPOLLERR, 10);
	assert_true(ev & US_EPOLLERR);
	assert_int_equal(sock_error(c), ETIMEDOUT);
	/* Two probes (at 2 s and 3 s), then the RST at 4 s. */
	assert_int_equal(sp_log_count(&sp.a, TH_ACK, TH_RST), 2);
	assert_int_equal(sp_log_count(&sp.a, TH_RST, 0), 1);
	/* From the last segment heard from B: idle 2 s, then 1 s twice
	 * (within the timer wheel's few ms). */
	assert_true(sp.a.log[0].at - heard >= US_MS(1990) && sp.a.log[0].at - heard <= US_MS(2010));
	assert_true(sp.a.log[sp.a.nlog - 1].at - heard >= US_MS(3990));
	assert_true(sp.a.log[sp.a.nlog - 1].at - heard <= US_MS(4020));
	us_close(c);
	sp.b.wire_down = false;
	sp_close3(-1, s, l);
}

static void syncnt_2(int fd)
{
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_SYNCNT, 2);
}

/* TCP_SYNCNT: the SYN and 2 retransmissions, then ETIMEDOUT. */
static void test_syncnt(void **state)
{
	int c, v = 0;
	uint64_t t0;
	uint32_t ev = 0;

	(void)state;
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_SYNCNT),
			 (int)sp.a.cfg.tcp.syn_retries);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_SYNCNT, &v, sizeof(v)), EINVAL);
	v = 128;
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_SYNCNT, &v, sizeof(v)), EINVAL);
	us_close(c);
	/* A refused connect first, so that A knows B's MAC. */
	c = sp_connect_a(PORT, NULL);
	assert_true(sp_wait_events(&sp.a, c, US_EPOLLERR, 100) & US_EPOLLERR);
	us_close(c);
	sp.b.wire_down = true; /* no SYN-ACK (nor RST) comes back */
	sp_log_clear(&sp.a);
	t0 = sp.now;
	c = sp_connect_a(PORT, syncnt_2);
	while (ev == 0 && sp.now - t0 < US_MS(30000))
		ev = sp_wait_events(&sp.a, c, US_EPOLLERR, 100);
	assert_true(ev & US_EPOLLERR);
	assert_int_equal(sock_error(c), ETIMEDOUT);
	assert_int_equal(sp_log_count(&sp.a, TH_SYN, 0), 3);
	/* RTOs of 1, 2 and 4 s. */
	assert_true(sp.now - t0 >= US_MS(7000) && sp.now - t0 <= US_MS(7200));
	us_close(c);
	sp.b.wire_down = false;
}

/* TCP_LINGER2: its values, and -1: a close in FIN-WAIT-2 sends an RST. */
static void test_linger2(void **state)
{
	int l, c, s, v;

	(void)state;
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_LINGER2),
			 (int)(sp.a.cfg.tcp.time_wait_ms / 1000));
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_LINGER2, 500);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_LINGER2), 120);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_LINGER2, 7);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_LINGER2), 7);
	v = -5;
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_LINGER2, &v, sizeof(v)), 0);
	assert_int_equal(sp_get_int(c, US_IPPROTO_TCP, US_TCP_LINGER2), -1);
	us_close(c);

	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_LINGER2, -1);
	assert_int_equal(us_shutdown(c, US_SHUT_WR), 0);
	sp_run(20); /* our FIN is acknowledged: FIN-WAIT-2 */
	sp_log_clear(&sp.a);
	assert_int_equal(us_close(c), 0);
	sp_run(2);
	assert_int_equal(sp_log_count(&sp.a, TH_RST, 0), 1);
	assert_int_equal(tcp_stack_stats(sp.a.tab->ts)->fin_wait2_dropped, 1);
	sp_close3(-1, s, l);
}

/* TCP_LINGER2 > 0: a closed connection leaves FIN-WAIT-2 after that long
 * (not the default 60 s). */
static void test_linger2_timer(void **state)
{
	int l, c, s;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_LINGER2, 3);
	assert_int_equal(us_close(c), 0);
	sp_run(20);
	assert_int_equal(tcp_conn_count(sp.a.tab->ts), 1); /* FIN-WAIT-2 */
	sp_run(2900);
	assert_int_equal(tcp_conn_count(sp.a.tab->ts), 1);
	sp_run(200);
	assert_int_equal(tcp_conn_count(sp.a.tab->ts), 0);
	sp_close3(-1, s, l);
}

static void defer_5(int fd)
{
	sp_set_int(fd, US_IPPROTO_TCP, US_TCP_DEFER_ACCEPT, 5);
}

/* TCP_DEFER_ACCEPT: the bare handshake ACK is dropped, the connection is
 * accepted with its first data. */
static void test_defer_accept(void **state)
{
	int l, c, s;
	char buf[8];

	(void)state;
	l = sp_listen_b(PORT, defer_5);
	sp_on(&sp.b);
	/* Linux rounds to the retransmissions covering it: 1 + 2 + 4 s. */
	assert_int_equal(sp_get_int(l, US_IPPROTO_TCP, US_TCP_DEFER_ACCEPT), 7);
	sp_on(&sp.a);
	c = sp_connect_a(PORT, NULL);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(sp_wait_events(&sp.b, l, US_EPOLLIN, 200), 0);
	assert_true(tcp_stack_stats(sp.b.tab->ts)->defer_accept_dropped >= 1);
	assert_int_equal(us_send(c, "hello", 5, 0), 5);
	assert_int_equal(sp_wait_events(&sp.b, l, US_EPOLLIN, 100), US_EPOLLIN);
	sp_on(&sp.b);
	s = us_accept(l, NULL, NULL);
	assert_true(s > 0);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 5);
	us_close(s);
	us_close(l);
	sp_on(&sp.a);
	us_close(c);
}

/* TCP_CONGESTION by name, Linux's names; ENOENT for another. */
static void test_congestion(void **state)
{
	int l, c, s;
	char name[16];
	socklen_t len = sizeof(name);

	(void)state;
	l = sp_listen_b(PORT, NULL);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_getsockopt(c, US_IPPROTO_TCP, US_TCP_CONGESTION, name, &len), 0);
	assert_int_equal(len, 16);
	assert_string_equal(name, "cubic");
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_CONGESTION, "bbr", 3), ENOENT);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_CONGESTION, "reno", 0), EINVAL);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_CONGESTION, "reno", 4), 0);
	len = 3; /* truncated, as Linux */
	memset(name, 0, sizeof(name));
	assert_int_equal(us_getsockopt(c, US_IPPROTO_TCP, US_TCP_CONGESTION, name, &len), 0);
	assert_int_equal(len, 3);
	assert_string_equal(name, "ren");
	us_close(c);
	/* Applied from the SYN on, and changeable on a live connection. */
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_CONGESTION, "reno", 5), 0);
	assert_int_equal(us_send(c, big, 30000, 0), 30000);
	sp_run(50);
	assert_int_equal(sp_drain_b(s), 30000);
	struct tcp_conn_info ci;
	struct us_sock *us;
	assert_int_equal(us_sock_lookup(c, &us), 0);
	tcp_conn_get_info(us->tc, &ci);
	assert_int_equal(ci.cc, TCP_CC_NEWRENO);
	sp_close3(c, s, l);
}

static void test_fastopen_key(void **state)
{
	uint8_t key[32], got[32];
	socklen_t len = sizeof(got);
	int l;

	(void)state;
	for (unsigned i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(i * 7 + 1);
	l = sp_listen_b(PORT, NULL);
	sp_on(&sp.b);
	assert_fails(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN_KEY, key, 15), EINVAL);
	assert_int_equal(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN_KEY, key, 16), 0);
	assert_int_equal(us_getsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN_KEY, got, &len), 0);
	assert_int_equal(len, 16);
	assert_memory_equal(got, key, 16);
	assert_int_equal(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN_KEY, key, 32), 0);
	len = sizeof(got);
	assert_int_equal(us_getsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN_KEY, got, &len), 0);
	assert_int_equal(len, 32);
	assert_memory_equal(got, key, 32);
	us_close(l);
	sp_on(&sp.a);
}

/* The TCP level's general errors, as Linux's. */
static void test_tcp_level_errors(void **state)
{
	int c = us_socket(AF_INET, SOCK_STREAM, 0), u = us_socket(AF_INET, SOCK_DGRAM, 0);
	int v = 1;
	char one;
	socklen_t len = 1;

	(void)state;
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, 99, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, 99, &v, 2), EINVAL);
	assert_fails(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_INFO, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_setsockopt(c, 999, US_TCP_NODELAY, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_setsockopt(u, US_IPPROTO_TCP, US_TCP_NODELAY, &v, sizeof(v)), ENOPROTOOPT);
	assert_fails(us_getsockopt(c, US_IPPROTO_TCP, 99, &v, &len), ENOPROTOOPT);
	/* A short buffer gets the value truncated, as Linux. */
	sp_set_int(c, US_IPPROTO_TCP, US_TCP_NODELAY, 1);
	assert_int_equal(us_getsockopt(c, US_IPPROTO_TCP, US_TCP_NODELAY, &one, &len), 0);
	assert_int_equal(len, 1);
	assert_int_equal(one, 1);
	us_close(c);
	us_close(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_maxseg),
		cmocka_unit_test_setup_teardown(test_maxseg_syncookie, setup_syncookies,
						sp_test_teardown),
		sp_unit_test(test_cork),
		sp_unit_test(test_msg_more),
		sp_unit_test(test_notsent_lowat),
		sp_unit_test(test_inq),
		sp_unit_test(test_user_timeout),
		sp_unit_test(test_keepalive_timing),
		sp_unit_test(test_syncnt),
		sp_unit_test(test_linger2),
		sp_unit_test(test_linger2_timer),
		sp_unit_test(test_defer_accept),
		sp_unit_test(test_congestion),
		sp_unit_test(test_fastopen_key),
		sp_unit_test(test_tcp_level_errors),
	};

	h_eal_init("pkt_sockopt");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
