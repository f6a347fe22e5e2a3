/* UDP sockets (stack/sock/socket_udp.c) between two engines in virtual time:
 * bind, ephemeral ports, sendto/recvfrom with addresses, connect as default
 * destination and filter, truncation, queue limit, ICMP port unreachable
 * for a closed port, epoll readiness, and the error paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

static int udp_on(struct sp_side *side, uint16_t port)
{
	struct sockaddr_in any = sp_addr(0, port);
	int fd;

	sp_on(side);
	fd = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_true(fd > 0);
	if (port != 0)
		assert_int_equal(us_bind(fd, SA(any), sizeof(any)), 0);
	sp_on(&sp.a);
	return fd;
}

static void test_sendto_recvfrom(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, 5353), from, me;
	socklen_t flen = sizeof(from), mlen = sizeof(me);
	char buf[2000], big[1800];
	int a, b;

	(void)state;
	b = udp_on(&sp.b, 5353);
	a = udp_on(&sp.a, 0);
	assert_fails(us_recvfrom(b, buf, sizeof(buf), 0, SA(from), &flen), EAGAIN);
	assert_int_equal(us_sendto(a, "hello", 5, 0, SA(to), sizeof(to)), 5);
	/* The first send bound an ephemeral port. */
	assert_int_equal(us_getsockname(a, SA(me), &mlen), 0);
	assert_true(ntohs(me.sin_port) >= 32768);
	assert_int_equal(ntohl(me.sin_addr.s_addr), SP_A_IP);
	sp_run(5);
	assert_int_equal(us_recvfrom(b, buf, sizeof(buf), 0, SA(from), &flen), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_int_equal(flen, sizeof(from));
	assert_int_equal(ntohl(from.sin_addr.s_addr), SP_A_IP);
	assert_int_equal(from.sin_port, me.sin_port);
	/* Reply to the sender; a datagram larger than one mbuf; an empty one. */
	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (char)i;
	assert_int_equal(us_sendto(b, big, sizeof(big), 0, SA(from), flen), sizeof(big));
	assert_int_equal(us_sendto(b, "", 0, 0, SA(from), flen), 0);
	sp_run(5);
	assert_int_equal(us_recv(a, buf, sizeof(buf), 0), sizeof(big));
	assert_memory_equal(buf, big, sizeof(big));
	assert_int_equal(us_recv(a, buf, sizeof(buf), 0), 0); /* the empty one */
	/* Truncation: one datagram per call, its rest discarded. */
	assert_int_equal(us_sendto(a, "abcdef", 6, 0, SA(to), sizeof(to)), 6);
	assert_int_equal(us_sendto(a, "gh", 2, 0, SA(to), sizeof(to)), 2);
	sp_run(5);
	assert_int_equal(us_recv(b, buf, sizeof(buf), US_MSG_PEEK), 6); /* stays queued */
	assert_int_equal(us_recv(b, buf, 3, 0), 3);
	assert_memory_equal(buf, "abc", 3);
	assert_int_equal(us_recv(b, buf, sizeof(buf), 0), 2);
	assert_memory_equal(buf, "gh", 2);
	assert_int_equal(sp.b.tab->stats.udp_rx, 3);
	us_close(a);
	us_close(b);
}

static void test_connected(void **state)
{
	struct sockaddr_in peer = sp_addr(SP_B_IP, 7000), a_addr;
	socklen_t alen = sizeof(a_addr);
	char buf[16];
	int a, b, b2;

	(void)state;
	b = udp_on(&sp.b, 7000);
	b2 = udp_on(&sp.b, 7001);
	a = udp_on(&sp.a, 0);
	assert_fails(us_send(a, "x", 1, 0), EDESTADDRREQ);
	assert_int_equal(us_connect(a, SA(peer), sizeof(peer)), 0);
	assert_int_equal(us_send(a, "via-send", 8, 0), 8);
	assert_int_equal(us_getsockname(a, SA(a_addr), &alen), 0);
	sp_run(5);
	assert_int_equal(us_recv(b, buf, sizeof(buf), 0), 8);
	/* A connected socket takes datagrams from its peer only. */
	sp_on(&sp.b);
	a_addr.sin_addr.s_addr = htonl(SP_A_IP);
	assert_int_equal(us_sendto(b2, "stranger", 8, 0, SA(a_addr), sizeof(a_addr)), 8);
	assert_int_equal(us_sendto(b, "peer", 4, 0, SA(a_addr), sizeof(a_addr)), 4);
	sp_run(5);
	assert_int_equal(us_recv(a, buf, sizeof(buf), 0), 4);
	assert_memory_equal(buf, "peer", 4);
	assert_fails(us_recv(a, buf, sizeof(buf), 0), EAGAIN);
	assert_int_equal(sp.a.tab->stats.udp_drop_not_peer, 1);
	us_close(a);
	us_close(b);
	us_close(b2);
}

static void test_errors(void **state)
{
	struct sockaddr_in any = sp_addr(0, 9000), to = sp_addr(SP_B_IP, 9000);
	struct sockaddr_in zero = sp_addr(SP_B_IP, 0), v = sp_addr(SP_B_IP, 9);
	static char huge[65508];
	int a, a2, one = 1;

	(void)state;
	a = us_socket(AF_INET, SOCK_DGRAM, IPPROTO_UDP);
	assert_true(a > 0);
	assert_fails(us_socket(AF_INET, SOCK_DGRAM, IPPROTO_TCP), EPROTONOSUPPORT);
	assert_int_equal(us_bind(a, SA(any), sizeof(any)), 0);
	assert_fails(us_bind(a, SA(any), sizeof(any)), EINVAL);
	a2 = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_fails(us_bind(a2, SA(any), sizeof(any)), EADDRINUSE);
	assert_fails(us_bind(a2, SA(to), sizeof(to)), EADDRNOTAVAIL);
	assert_fails(us_listen(a, 1), EOPNOTSUPP);
	assert_fails(us_accept(a, NULL, NULL), EOPNOTSUPP);
	assert_fails(us_shutdown(a, US_SHUT_WR), EOPNOTSUPP);
	assert_fails(us_recv_mbuf(a, &(struct rte_mbuf *){ NULL }, 0), EOPNOTSUPP);
	assert_fails(us_sendto(a, huge, sizeof(huge), 0, SA(to), sizeof(to)), EMSGSIZE);
	assert_fails(us_sendto(a, "x", 1, 0, SA(zero), sizeof(zero)), EINVAL);
	assert_fails(us_sendto(a, "x", 1, 0, SA(to), 3), EINVAL);
	assert_fails(us_sendto(a, "x", 1, 0x02, SA(to), sizeof(to)), EOPNOTSUPP);
	assert_fails(us_setsockopt(a, US_IPPROTO_TCP, US_TCP_NODELAY, &one, sizeof(one)),
		     ENOPROTOOPT);
	assert_int_equal(us_setsockopt(a, US_SOL_SOCKET, US_SO_REUSEADDR, &one, sizeof(one)), 0);
	assert_fails(us_getpeername(a, SA(v), &(socklen_t){ sizeof(v) }), ENOTCONN);
	/* A closed port on B answers with ICMP port unreachable. */
	uint64_t unreach = (uint64_t)us_engine_counter(sp.b.e, "icmp_unreach_out");
	assert_int_equal(us_sendto(a, "x", 1, 0, SA(v), sizeof(v)), 1);
	sp_run(5);
	assert_int_equal((uint64_t)us_engine_counter(sp.b.e, "icmp_unreach_out"), unreach + 1);
	us_close(a);
	us_close(a2);
	/* Closed: the port is free again. */
	a = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_int_equal(us_bind(a, SA(any), sizeof(any)), 0);
	us_close(a);
}

/* Readiness, and the per-socket queue bound (with datagrams left queued at
 * close: the teardown's leak check proves they are freed). */
static void test_epoll_and_queue(void **state)
{
	struct sockaddr_in to = sp_addr(SP_B_IP, 6000);
	struct us_epoll_event ev = { .events = US_EPOLLIN | US_EPOLLET, .data.fd = 0 }, out[2];
	char buf[8];
	int a, b, ep;

	(void)state;
	b = udp_on(&sp.b, 6000);
	a = udp_on(&sp.a, 0);
	sp_on(&sp.b);
	ep = us_epoll_create1(0);
	ev.data.fd = b;
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, b, &ev), 0);
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 0);
	assert_int_equal(us_sendto(a, "1", 1, 0, SA(to), sizeof(to)), 1);
	assert_int_equal(us_epoll_wait(ep, out, 2, 10), 1);
	assert_int_equal(out[0].events, US_EPOLLIN);
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 0); /* edge */
	assert_int_equal(us_recv(b, buf, sizeof(buf), 0), 1);
	for (unsigned i = 0; i < US_UDP_QUEUE + 5; i++) {
		assert_int_equal(us_sendto(a, "q", 1, 0, SA(to), sizeof(to)), 1);
		if (i % 16 == 0)
			sp_run(1);
	}
	sp_run(5);
	assert_int_equal(sp.b.tab->stats.udp_drop_rcvbuf, 5);
	us_close(ep);
	us_close(a);
	us_close(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_sendto_recvfrom),
		sp_unit_test(test_connected),
		sp_unit_test(test_errors),
		sp_unit_test(test_epoll_and_queue),
	};

	h_eal_init("pkt_udp");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
