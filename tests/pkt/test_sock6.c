/* TCP over IPv6 through the POSIX-shaped socket API (stack/sock/) between
 * two engines with both families in virtual time, held to Linux's
 * behaviour (net/ipv6/af_inet6.c, tcp_ipv6.c, inet_connection_sock.c):
 * an AF_INET6 connection's data and names, a dual-stack [::] listener
 * taking an IPv4 client under its v4-mapped name and refusing it with
 * IPV6_V6ONLY, one port shared by an AF_INET and a V6ONLY AF_INET6
 * listener, the errors of a wrong family or address, Fast Open with data
 * in an IPv6 SYN, and epoll readiness on an IPv6 connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "tcp/fastopen.h"
#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 8080
/* What a segment carries over Ethernet: the MTU less the IPv6 (IPv4)
 * header, the TCP header and the timestamp option both ends use (tcpi_snd_mss
 * counts payload only, as Linux's). */
#define MSS6 (1500 - 40 - 20 - 12)
#define MSS4 (1500 - 20 - 20 - 12)

static const struct us_in6 any6 = { 0 };
static const struct us_in6 unknown6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 9 } };

/* A TCP listener of family on B bound to ip:port (ip NULL: the family's
 * wildcard), IPV6_V6ONLY set first when asked. */
static int b_listen_on(int family, const struct us_in6 *ip, uint16_t port, int v6only)
{
	struct sockaddr_in6 name6 = sp_addr6(ip != NULL ? ip : &any6, port);
	struct sockaddr_in name4 = sp_addr(0, port);
	int fd;

	sp_on(&sp.b);
	fd = us_socket(family, SOCK_STREAM, 0);
	assert_true(fd > 0);
	if (v6only)
		assert_int_equal(us_setsockopt(fd, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v6only,
					       sizeof(v6only)), 0);
	if (family == AF_INET6)
		assert_int_equal(us_bind(fd, SA(name6), sizeof(name6)), 0);
	else
		assert_int_equal(us_bind(fd, SA(name4), sizeof(name4)), 0);
	assert_int_equal(us_listen(fd, 16), 0);
	sp_on(&sp.a);
	return fd;
}

/* A non-blocking connect from A to B's port: over IPv6 (AF_INET6 to
 * sp_b6) or IPv4 (AF_INET to 10.0.0.2). */
static int a_connect(int family, uint16_t port)
{
	struct sockaddr_in6 to6 = sp_addr6(&sp_b6, port);
	struct sockaddr_in to4 = sp_addr(SP_B_IP, port);
	int fd;

	sp_on(&sp.a);
	fd = us_socket(family, SOCK_STREAM, 0);
	assert_true(fd > 0);
	if (family == AF_INET6)
		assert_fails(us_connect(fd, SA(to6), sizeof(to6)), EINPROGRESS);
	else
		assert_fails(us_connect(fd, SA(to4), sizeof(to4)), EINPROGRESS);
	return fd;
}

/* Accepts one connection on l (B), its peer's name in *peer. */
static int b_accept(int l, struct sockaddr_in6 *peer)
{
	socklen_t len = sizeof(*peer);
	int s;

	assert_true(sp_wait_events(&sp.b, l, US_EPOLLIN, 100) & US_EPOLLIN);
	memset(peer, 0xa5, sizeof(*peer));
	s = us_accept(l, SA(*peer), &len);
	assert_true(s > 0);
	assert_int_equal(len, sizeof(*peer));
	assert_int_equal(peer->sin6_family, AF_INET6);
	return s;
}

/* fd's own (local true) or peer's name, which must be a sockaddr_in6. */
static struct sockaddr_in6 name6_of(int fd, bool local)
{
	struct sockaddr_in6 n;
	socklen_t len = sizeof(n);

	memset(&n, 0xa5, sizeof(n));
	if (local)
		assert_int_equal(us_getsockname(fd, SA(n), &len), 0);
	else
		assert_int_equal(us_getpeername(fd, SA(n), &len), 0);
	assert_int_equal(len, sizeof(n));
	assert_int_equal(n.sin6_family, AF_INET6);
	assert_int_equal(n.sin6_flowinfo, 0);
	assert_int_equal(n.sin6_scope_id, 0);
	return n;
}

static void assert_name(const struct sockaddr_in6 *n, const struct us_in6 *ip, uint16_t port)
{
	struct us_in6 got = sp_in6_of(n);

	assert_true(us_in6_eq(&got, ip));
	assert_int_equal(ntohs(n->sin6_port), port);
}

static uint32_t mss_of(int fd)
{
	struct us_tcp_info ti;
	socklen_t len = sizeof(ti);

	assert_int_equal(us_getsockopt(fd, US_IPPROTO_TCP, US_TCP_INFO, &ti, &len), 0);
	return ti.tcpi_snd_mss;
}

static int sock_error(int fd)
{
	int err = -1;
	socklen_t len = sizeof(err);

	assert_int_equal(us_getsockopt(fd, US_SOL_SOCKET, US_SO_ERROR, &err, &len), 0);
	return err;
}

/* n bytes each way at once (a pattern per direction), both ends writing
 * and reading as the windows allow and shutting down once all is sent:
 * each end must read exactly the other's bytes, then end of stream. */
static void exchange(int c, int s, size_t n)
{
	enum { MAX = 1 << 18 };
	static uint8_t out[2][MAX], in[2][MAX + 1]; /* room to see a byte too many */
	size_t sent[2] = { 0 }, got[2] = { 0 };
	const int from[2] = { c, s }, to[2] = { s, c };
	bool shut[2] = { false, false }, eof[2] = { false, false };

	assert_true(n <= MAX);
	for (size_t i = 0; i < n; i++) {
		out[0][i] = (uint8_t)(i * 13 + (i >> 10));
		out[1][i] = (uint8_t)(i * 7 + 5 + (i >> 12));
	}
	for (unsigned round = 0; round < 20000 && !(eof[0] && eof[1]); round++) {
		for (int d = 0; d < 2; d++) {
			ssize_t k;

			while (sent[d] < n && (k = us_send(from[d], out[d] + sent[d], n - sent[d],
							   US_MSG_NOSIGNAL)) > 0)
				sent[d] += (size_t)k;
			if (sent[d] == n && !shut[d]) {
				assert_int_equal(us_shutdown(from[d], US_SHUT_WR), 0);
				shut[d] = true;
			}
			while (!eof[d] &&
			       (k = us_recv(to[d], in[d] + got[d], sizeof(in[d]) - got[d], 0)) >= 0) {
				got[d] += (size_t)k;
				eof[d] = k == 0;
			}
			if (!eof[d])
				assert_int_equal(errno, EAGAIN);
		}
		sp_run(1);
	}
	for (int d = 0; d < 2; d++) {
		assert_true(eof[d]);
		assert_int_equal(got[d], n);
		assert_memory_equal(in[d], out[d], n);
	}
}

/* An AF_INET6 client to an IPv6 server on [::]: the names at both ends,
 * data both ways under loss, an IPv6-sized MSS. */
static void test_connect_v6(void **state)
{
	struct sockaddr_in6 peer, n;
	uint64_t rx6_before = (uint64_t)us_engine_counter(sp.b.e, "ip6_rx_tcp");
	int l, c, s;
	uint16_t cport;

	(void)state;
	l = b_listen_on(AF_INET6, NULL, PORT, 0);
	n = name6_of(l, true);
	assert_name(&n, &any6, PORT);
	c = a_connect(AF_INET6, PORT);
	/* Connecting: the names are known already (Linux picks them in
	 * tcp_v6_connect), the peer's not yet (ENOTCONN). */
	n = name6_of(c, true);
	cport = ntohs(n.sin6_port);
	assert_true(cport != 0);
	assert_name(&n, &sp_a6, cport);
	assert_fails(us_getpeername(c, SA(peer), &(socklen_t){ sizeof(peer) }), ENOTCONN);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(sock_error(c), 0);
	s = b_accept(l, &peer);
	assert_name(&peer, &sp_a6, cport);
	n = name6_of(s, false);
	assert_name(&n, &sp_a6, cport);
	n = name6_of(s, true);
	assert_name(&n, &sp_b6, PORT);
	n = name6_of(c, false);
	assert_name(&n, &sp_b6, PORT);
	assert_int_equal(mss_of(c), MSS6);
	assert_int_equal(mss_of(s), MSS6);
	/* Byte-exact both ways with segments lost on the wire in both
	 * directions: retransmission over IPv6 too. */
	sp.a.drop_every = 23;
	sp.b.drop_every = 31;
	exchange(c, s, 200000);
	sp.a.drop_every = sp.b.drop_every = 0;
	assert_true(us_engine_counter(sp.a.e, "tcp_retrans_segs") > 0);
	assert_true(us_engine_counter(sp.b.e, "tcp_retrans_segs") > 0);
	/* It all went over IPv6: more than one segment per MSS of data. */
	assert_true((uint64_t)us_engine_counter(sp.b.e, "ip6_rx_tcp") - rx6_before > 200000 / MSS6);
	assert_int_equal(us_engine_counter(sp.b.e, "ip_rx_packets"), 0);
	us_close(c);
	us_close(s);
	us_close(l);
}

/* RFC 3493 3.7: an AF_INET6 listener on [::] takes IPv4 clients and names
 * them ::ffff:a.b.c.d; with IPV6_V6ONLY the IPv4 SYN finds no listener
 * and the client is refused. */
static void test_dual_stack_listener(void **state)
{
	struct us_in6 a4 = us_in6_of_v4(SP_A_IP), b4 = us_in6_of_v4(SP_B_IP);
	struct sockaddr_in6 peer, n, to = sp_mapped(SP_B_IP, PORT + 1);
	struct sockaddr_in me4;
	socklen_t len = sizeof(me4);
	int l, l6, c, c6, cm, s;

	(void)state;
	l = b_listen_on(AF_INET6, NULL, PORT, 0);
	c = a_connect(AF_INET, PORT);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	s = b_accept(l, &peer);
	assert_int_equal(us_getsockname(c, SA(me4), &len), 0);
	assert_int_equal(len, sizeof(me4));
	assert_name(&peer, &a4, ntohs(me4.sin_port));
	n = name6_of(s, false);
	assert_name(&n, &a4, ntohs(me4.sin_port));
	n = name6_of(s, true);
	assert_name(&n, &b4, PORT);
	assert_int_equal(mss_of(s), MSS4);
	exchange(c, s, 50000);
	us_close(c);
	us_close(s);

	/* IPv6 only: the IPv4 client is reset, the IPv6 one accepted. */
	l6 = b_listen_on(AF_INET6, NULL, PORT + 1, 1);
	c = a_connect(AF_INET, PORT + 1);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100),
			 US_EPOLLOUT | US_EPOLLERR | US_EPOLLHUP);
	assert_int_equal(sock_error(c), ECONNREFUSED);
	/* ... as is an AF_INET6 client naming B by its v4-mapped address. */
	sp_on(&sp.a);
	cm = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_fails(us_connect(cm, SA(to), sizeof(to)), EINPROGRESS);
	sp_run(10);
	assert_fails(us_connect(cm, SA(to), sizeof(to)), ECONNREFUSED);
	c6 = a_connect(AF_INET6, PORT + 1);
	s = b_accept(l6, &peer);
	assert_name(&peer, &sp_a6, ntohs(name6_of(c6, true).sin6_port));
	sp_on(&sp.b);
	assert_fails(us_accept(l6, NULL, NULL), EAGAIN); /* nothing from IPv4 */
	us_close(c);
	us_close(cm);
	us_close(c6);
	us_close(s);
	us_close(l);
	us_close(l6);

	/* An AF_INET6 listener on B's v4-mapped address is an IPv4 one. */
	l = b_listen_on(AF_INET6, &b4, PORT + 2, 0);
	n = name6_of(l, true);
	assert_name(&n, &b4, PORT + 2);
	c = a_connect(AF_INET, PORT + 2);
	c6 = a_connect(AF_INET6, PORT + 2);
	s = b_accept(l, &peer);
	len = sizeof(me4);
	assert_int_equal(us_getsockname(c, SA(me4), &len), 0);
	assert_name(&peer, &a4, ntohs(me4.sin_port));
	/* ... and the IPv6 client is reset (RST over IPv6). */
	assert_int_equal(sp_wait_events(&sp.a, c6, US_EPOLLOUT, 100),
			 US_EPOLLOUT | US_EPOLLERR | US_EPOLLHUP);
	assert_int_equal(sock_error(c6), ECONNREFUSED);
	us_close(c);
	us_close(c6);
	us_close(s);
	us_close(l);
}

/* Linux's inet_bind_conflict with bindv6only 0: 0.0.0.0:p and a V6ONLY
 * [::]:p do not overlap, a dual-stack [::]:p overlaps both.  Each family's
 * client reaches its own listener. */
static void test_port_shared_by_family(void **state)
{
	struct sockaddr_in6 any = sp_addr6(&any6, PORT), mine = sp_addr6(&sp_b6, PORT), peer;
	struct sockaddr_in any4 = sp_addr(0, PORT + 1), peer4;
	socklen_t len = sizeof(peer4);
	int l4, l6, other, c4, c6, s4, s6, v6only = 1;

	(void)state;
	l4 = b_listen_on(AF_INET, NULL, PORT, 0);
	l6 = b_listen_on(AF_INET6, NULL, PORT, 1);
	sp_on(&sp.b);
	other = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_fails(us_bind(other, SA(any), sizeof(any)), EADDRINUSE); /* the IPv4 side is l4's */
	us_close(other);
	other = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(other, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v6only,
				       sizeof(v6only)), 0);
	assert_fails(us_bind(other, SA(any), sizeof(any)), EADDRINUSE); /* ... IPv6 l6's */
	assert_fails(us_bind(other, SA(mine), sizeof(mine)), EADDRINUSE);
	us_close(other);

	/* Each family to its own listener, named in its own family. */
	c4 = a_connect(AF_INET, PORT);
	c6 = a_connect(AF_INET6, PORT);
	sp_run(10);
	sp_on(&sp.b);
	s4 = us_accept(l4, SA(peer4), &len);
	assert_true(s4 > 0);
	assert_int_equal(len, sizeof(peer4));
	assert_int_equal(peer4.sin_family, AF_INET);
	assert_int_equal(ntohl(peer4.sin_addr.s_addr), SP_A_IP);
	assert_fails(us_accept(l4, NULL, NULL), EAGAIN);
	s6 = b_accept(l6, &peer);
	assert_name(&peer, &sp_a6, ntohs(name6_of(c6, true).sin6_port));
	sp_on(&sp.b);
	assert_fails(us_accept(l6, NULL, NULL), EAGAIN);
	exchange(c4, s4, 3000);
	exchange(c6, s6, 3000);

	us_close(c4);
	us_close(c6);
	us_close(s4);
	us_close(s6);
	us_close(l4);
	us_close(l6);

	/* The other order: a dual-stack [::] first leaves no room for 0.0.0.0. */
	l6 = b_listen_on(AF_INET6, NULL, PORT + 1, 0);
	sp_on(&sp.b);
	other = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_bind(other, SA(any4), sizeof(any4)), EADDRINUSE);
	us_close(other);
	us_close(l6);
	/* One IPv6 address of ours leaves the port's IPv4 side free. */
	l6 = b_listen_on(AF_INET6, &sp_b6, PORT + 2, 0);
	l4 = b_listen_on(AF_INET, NULL, PORT + 2, 0);
	c4 = a_connect(AF_INET, PORT + 2);
	c6 = a_connect(AF_INET6, PORT + 2);
	sp_run(10);
	s4 = us_accept(l4, NULL, NULL);
	s6 = us_accept(l6, NULL, NULL);
	assert_true(s4 > 0 && s6 > 0);
	assert_fails(us_accept(l4, NULL, NULL), EAGAIN);
	assert_fails(us_accept(l6, NULL, NULL), EAGAIN);
}

/* Linux's answers to a wrong family, address or moment. */
static void test_errors(void **state)
{
	struct sockaddr_in6 not_ours = sp_addr6(&unknown6, PORT), to6 = sp_addr6(&sp_b6, PORT);
	struct sockaddr_in6 mapped_not_ours = sp_mapped(0x0a000009u, PORT);
	struct sockaddr_in6 mapped_ours = sp_mapped(SP_B_IP, PORT), any = sp_addr6(&any6, PORT);
	struct sockaddr_in6 to_mapped = sp_mapped(SP_B_IP, PORT);
	struct sockaddr_in to4 = sp_addr(SP_B_IP, PORT);
	int t4, t6, l, c, one = 1;

	(void)state;
	sp_on(&sp.b);
	t4 = us_socket(AF_INET, SOCK_STREAM, 0);
	t6 = us_socket(AF_INET6, SOCK_STREAM, 0);
	/* __inet6_bind: an address that is not ours, of either family. */
	assert_fails(us_bind(t6, SA(not_ours), sizeof(not_ours)), EADDRNOTAVAIL);
	assert_fails(us_bind(t6, SA(mapped_not_ours), sizeof(mapped_not_ours)), EADDRNOTAVAIL);
	/* A name of the wrong length or family to bind and connect, and
	 * IPV6_V6ONLY on an AF_INET socket: test_udp6.c's
	 * test_wrong_families, TCP sockets included.  Fast Open's implicit
	 * connect (tcp_sendmsg_fastopen) checks the name as connect does. */
	assert_fails(us_sendto(t6, "x", 1, US_MSG_FASTOPEN, SA(to4), sizeof(to4)), EINVAL);
	assert_fails(us_sendto(t4, "x", 1, US_MSG_FASTOPEN, SA(to6), sizeof(to6)), EAFNOSUPPORT);
	/* do_ipv6_setsockopt: V6ONLY once the socket has its port. */
	assert_int_equal(us_bind(t6, SA(mapped_ours), sizeof(mapped_ours)), 0);
	assert_fails(us_setsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), EINVAL);
	us_close(t6);
	l = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_bind(l, SA(any), sizeof(any)), 0);
	assert_int_equal(us_listen(l, 4), 0);
	assert_fails(us_setsockopt(l, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), EINVAL);
	/* A V6ONLY socket has no IPv4 name and reaches no IPv4 peer. */
	t6 = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), 0);
	assert_fails(us_bind(t6, SA(mapped_ours), sizeof(mapped_ours)), EINVAL);
	us_close(t6);
	sp_on(&sp.a);
	t6 = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), 0);
	assert_fails(us_connect(t6, SA(to_mapped), sizeof(to_mapped)), ENETUNREACH);
	assert_fails(us_sendto(t6, "x", 1, US_MSG_FASTOPEN, SA(to_mapped), sizeof(to_mapped)),
		     ENETUNREACH);
	/* ... and an unconnected one has no peer. */
	assert_fails(us_getpeername(t6, SA(any), &(socklen_t){ sizeof(any) }), ENOTCONN);
	/* A connecting socket takes no V6ONLY either (it has a port). */
	c = a_connect(AF_INET6, PORT);
	assert_fails(us_setsockopt(c, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), EINVAL);
	us_close(c);
	us_close(t6);
	us_close(t4);
	us_close(l);
}

static const struct tfo_counters *tfo(struct sp_side *side)
{
	return tcp_stack_tfo_stats(side->tab->ts);
}

/* Reads exactly want from fd on side (running both engines as needed). */
static void expect_read(struct sp_side *side, int fd, const char *want)
{
	char buf[256];
	size_t n = strlen(want);

	assert_true(sp_wait_events(side, fd, US_EPOLLIN, 3000) & US_EPOLLIN);
	assert_int_equal(us_recv(fd, buf, sizeof(buf), 0), (long)n);
	assert_memory_equal(buf, want, n);
}

#define REQ "GET / HTTP/1.1\r\nHost: b\r\n\r\n"
#define RESP "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"

/* A Fast Open listener on B's [::]:PORT. */
static int b_listen_tfo(void)
{
	int l = b_listen_on(AF_INET6, NULL, PORT, 0), qlen = 8;

	assert_int_equal(us_setsockopt(l, US_IPPROTO_TCP, US_TCP_FASTOPEN, &qlen, sizeof(qlen)), 0);
	return l;
}

/* The request from c, the response from B, both closed. */
static void serve_once(int l, int c)
{
	struct sockaddr_in6 peer;
	int s = b_accept(l, &peer);

	expect_read(&sp.b, s, REQ);
	assert_int_equal(us_send(s, RESP, strlen(RESP), 0), (long)strlen(RESP));
	expect_read(&sp.a, c, RESP);
	assert_int_equal(us_close(c), 0);
	assert_int_equal(us_close(s), 0);
	sp_run(10);
}

/* RFC 7413 over IPv6: the first sendto(MSG_FASTOPEN) asks for a cookie,
 * the second carries the request in the SYN; the IPv4 address of the same
 * host has no cookie of its own yet. */
static void test_fastopen_sendto(void **state)
{
	struct sockaddr_in6 to = sp_addr6(&sp_b6, PORT), peer;
	struct us_in6 b4 = us_in6_of_v4(SP_B_IP);
	struct sp_syn syn;
	char buf[128];
	int l, c, s;

	(void)state;
	l = b_listen_tfo();
	c = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_fails(us_sendto(c, REQ, strlen(REQ), US_MSG_FASTOPEN, SA(to), sizeof(to)),
		     EINPROGRESS);
	assert_int_equal(tfo(&sp.a)->cli_cookie_requests, 1);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (long)strlen(REQ));
	serve_once(l, c);
	assert_int_equal(tfo(&sp.a)->cli_cookies_stored, 1);

	c = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_sendto(c, REQ, strlen(REQ), US_MSG_FASTOPEN, SA(to), sizeof(to)),
			 (long)strlen(REQ));
	us_engine_poll(sp.a.e, sp.now); /* A's SYN out, B not run yet */
	syn = sp_syn_waiting(&sp.b);
	assert_true(syn.found);
	assert_int_equal(syn.family, AF_INET6);
	assert_int_equal(syn.payload, (int)strlen(REQ));
	assert_int_equal(syn.cookie_len, 8);
	/* B has only the SYN: the child is accepted with the data readable. */
	us_engine_poll(sp.b.e, sp.now);
	sp_on(&sp.b);
	s = us_accept(l, SA(peer), &(socklen_t){ sizeof(peer) });
	assert_true(s > 0);
	assert_name(&peer, &sp_a6, ntohs(name6_of(c, true).sin6_port));
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), (long)strlen(REQ));
	assert_memory_equal(buf, REQ, strlen(REQ));
	assert_int_equal(tfo(&sp.b)->srv_accepted, 1);
	assert_int_equal(us_send(s, RESP, strlen(RESP), 0), (long)strlen(RESP));
	expect_read(&sp.a, c, RESP);
	assert_int_equal(tfo(&sp.a)->cli_syn_data_acked, 1);
	us_close(c);
	us_close(s);
	sp_run(10);

	/* The cookie belongs to B's IPv6 address, not to the host. */
	assert_true(tcp_fastopen_cookie_ready(sp.a.tab->ts, &sp_b6));
	assert_false(tcp_fastopen_cookie_ready(sp.a.tab->ts, &b4));
	us_close(l);
}

/* US_TCP_FASTOPEN_CONNECT with a cookie for an IPv6 server: connect
 * returns 0 with the socket's IPv6 name known, the first send rides in
 * the SYN. */
static void test_fastopen_connect(void **state)
{
	struct sockaddr_in6 to = sp_addr6(&sp_b6, PORT), n;
	struct sp_syn syn;
	int l, c, on = 1;

	(void)state;
	l = b_listen_tfo();
	c = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &on,
				       sizeof(on)), 0);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS); /* no cookie yet */
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (long)strlen(REQ));
	serve_once(l, c);

	c = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(c, US_IPPROTO_TCP, US_TCP_FASTOPEN_CONNECT, &on,
				       sizeof(on)), 0);
	assert_int_equal(us_connect(c, SA(to), sizeof(to)), 0);
	assert_int_equal(sp.b.n, 0); /* nothing sent yet */
	/* SYN-SENT for Linux already: no peer name yet (inet6_getname). */
	assert_fails(us_getpeername(c, SA(n), &(socklen_t){ sizeof(n) }), ENOTCONN);
	/* Named at connect by the IPv6 source its SYN will carry, as Linux
	 * (tcp_v6_connect); the port comes with the SYN here (us_socket.h). */
	n = name6_of(c, true);
	assert_name(&n, &sp_a6, 0);
	assert_int_equal(sp_wait_events(&sp.a, c, US_EPOLLOUT, 0), US_EPOLLOUT);
	assert_int_equal(us_send(c, REQ, strlen(REQ), 0), (long)strlen(REQ));
	us_engine_poll(sp.a.e, sp.now);
	syn = sp_syn_waiting(&sp.b);
	assert_true(syn.found);
	assert_int_equal(syn.family, AF_INET6);
	assert_int_equal(syn.payload, (int)strlen(REQ));
	assert_int_equal(syn.cookie_len, 8);
	n = name6_of(c, true);
	assert_name(&n, &sp_a6, ntohs(n.sin6_port));
	assert_true(ntohs(n.sin6_port) != 0);
	serve_once(l, c);
	assert_int_equal(tfo(&sp.a)->cli_syn_data_acked, 1);
	us_close(l);
}

/* One IPv6 connection's readiness, as epoll reports it: the listener
 * readable with a connection to accept, the client writable once
 * connected, each end readable with data, RDHUP at the peer's FIN. */
static void test_epoll_v6(void **state)
{
	struct us_epoll_event ev, out[4];
	struct sockaddr_in6 peer;
	char buf[16];
	int l, c, s, ea, eb;

	(void)state;
	l = b_listen_on(AF_INET6, NULL, PORT, 1);
	sp_on(&sp.b);
	eb = us_epoll_create1(0);
	ev = (struct us_epoll_event){ .events = US_EPOLLIN, .data.fd = l };
	assert_int_equal(us_epoll_ctl(eb, US_EPOLL_CTL_ADD, l, &ev), 0);
	sp_on(&sp.a);
	ea = us_epoll_create1(0);
	c = a_connect(AF_INET6, PORT);
	ev = (struct us_epoll_event){ .events = US_EPOLLIN | US_EPOLLOUT | US_EPOLLRDHUP,
				      .data.fd = c };
	assert_int_equal(us_epoll_ctl(ea, US_EPOLL_CTL_ADD, c, &ev), 0);
	assert_int_equal(us_epoll_wait(ea, out, 4, 0), 0); /* SYN-SENT: nothing yet */
	assert_int_equal(us_epoll_wait(ea, out, 4, 100), 1);
	assert_int_equal(out[0].data.fd, c);
	assert_int_equal(out[0].events, US_EPOLLOUT);
	assert_int_equal(us_epoll_wait(eb, out, 4, 100), 1);
	assert_int_equal(out[0].data.fd, l);
	assert_int_equal(out[0].events, US_EPOLLIN);
	s = us_accept(l, SA(peer), &(socklen_t){ sizeof(peer) });
	assert_true(s > 0);
	assert_int_equal(us_epoll_wait(eb, out, 4, 0), 0); /* accepted: not readable */
	ev = (struct us_epoll_event){ .events = US_EPOLLIN | US_EPOLLRDHUP, .data.fd = s };
	assert_int_equal(us_epoll_ctl(eb, US_EPOLL_CTL_ADD, s, &ev), 0);
	assert_int_equal(us_epoll_wait(eb, out, 4, 0), 0);
	assert_int_equal(us_send(c, "six", 3, 0), 3);
	assert_int_equal(us_epoll_wait(eb, out, 4, 100), 1);
	assert_int_equal(out[0].data.fd, s);
	assert_int_equal(out[0].events, US_EPOLLIN);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 3);
	assert_memory_equal(buf, "six", 3);
	assert_int_equal(us_send(s, "v6", 2, 0), 2);
	assert_int_equal(us_shutdown(s, US_SHUT_WR), 0);
	sp_run(10);
	assert_int_equal(us_epoll_wait(ea, out, 4, 0), 1);
	assert_int_equal(out[0].events, US_EPOLLIN | US_EPOLLOUT | US_EPOLLRDHUP);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 2);
	assert_memory_equal(buf, "v6", 2);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 0);
	us_close(ea);
	us_close(eb);
	us_close(c);
	us_close(s);
	us_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test6(test_connect_v6),
		sp_unit_test6(test_dual_stack_listener),
		sp_unit_test6(test_port_shared_by_family),
		sp_unit_test6(test_errors),
		sp_unit_test6(test_fastopen_sendto),
		sp_unit_test6(test_fastopen_connect),
		sp_unit_test6(test_epoll_v6),
	};

	h_eal_init("pkt_sock6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
