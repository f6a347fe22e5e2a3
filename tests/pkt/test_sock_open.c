/* The OPEN call's addresses through the socket API between two engines in
 * virtual time (sock_pair.c), RFC 9293 3.9.1.1: the local address of an
 * active open may be given (bind before connect, MUST-43) or is chosen by
 * the network layer (MUST-44: one address per family and engine, so the
 * choice is that one; an address not ours cannot be given); an OPEN to a
 * broadcast or multicast address is refused with Linux's ENETUNREACH,
 * the subnet's broadcast included (MUST-46); and a passive OPEN does not
 * disturb the connections that exist (MUST-41). */
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
#define SP_BCAST 0x0a0000ffu /* 10.0.0.255: the pair's /24 */

/* fd's local address, which must be IPv4. */
static struct sockaddr_in local_of(int fd)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);

	assert_int_equal(us_getsockname(fd, SA(a), &len), 0);
	assert_int_equal(a.sin_family, AF_INET);
	return a;
}

/* MUST-43, MUST-44: bind to our address (port 0) then connect opens from
 * it, the port chosen; without bind the network layer's address is taken
 * all the same; an address that is not ours is refused at bind. */
static void test_active_open_local_address(void **state)
{
	struct sockaddr_in ours = sp_addr(SP_A_IP, 0), foreign = sp_addr(0x0a000009u, 0);
	struct sockaddr_in to = sp_addr(SP_B_IP, PORT), peer;
	socklen_t len = sizeof(peer);
	int l, c, c2, s;

	(void)state;
	l = sp_listen_b(PORT, NULL);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_bind(c, SA(foreign), sizeof(foreign)), EADDRNOTAVAIL);
	assert_int_equal(us_bind(c, SA(ours), sizeof(ours)), 0);
	assert_fails(us_connect(c, SA(to), sizeof(to)), EINPROGRESS);
	assert_true(sp_wait_events(&sp.a, c, US_EPOLLOUT, 50) & US_EPOLLOUT);
	assert_int_equal(local_of(c).sin_addr.s_addr, htonl(SP_A_IP));
	assert_int_not_equal(local_of(c).sin_port, 0);
	sp_on(&sp.b);
	s = us_accept(l, SA(peer), &len);
	assert_true(s > 0);
	assert_int_equal(peer.sin_addr.s_addr, htonl(SP_A_IP));
	assert_int_equal(peer.sin_port, local_of(c).sin_port);
	us_close(s);
	sp_on(&sp.a);
	c2 = sp_connect_a(PORT, NULL); /* no bind */
	assert_true(sp_wait_events(&sp.a, c2, US_EPOLLOUT, 50) & US_EPOLLOUT);
	assert_int_equal(local_of(c2).sin_addr.s_addr, htonl(SP_A_IP));
	us_close(c2);
	sp_close3(c, -1, l);
}

/* MUST-46: connect to the limited broadcast, the subnet's broadcast or a
 * multicast group fails at once with ENETUNREACH, nothing sent. */
static void test_connect_to_group_refused(void **state)
{
	const uint32_t groups[] = { 0xffffffffu, SP_BCAST, 0xe0000001u };

	(void)state;
	sp_log_clear(&sp.a);
	for (unsigned i = 0; i < 3; i++) {
		struct sockaddr_in to = sp_addr(groups[i], PORT);
		int c = us_socket(AF_INET, SOCK_STREAM, 0);

		assert_fails(us_connect(c, SA(to), sizeof(to)), ENETUNREACH);
		us_close(c);
	}
	sp_run(10);
	assert_int_equal(sp.a.nlog, 0);
	/* The network layer knows the broadcasts, tcp/ the groups. */
	assert_int_equal(us_engine_counter(sp.a.e, "ip_tcp_connect_bcast"), 2);
	assert_int_equal(us_engine_counter(sp.a.e, "tcp_connect_group_refused"), 1);
}

/* MUST-41: a LISTEN opened while connections exist (a second listener,
 * and a new one on the port of a closed listener whose connection lives
 * on) leaves those connections as they were: their data goes to them. */
static void test_passive_open_leaves_connections(void **state)
{
	int l, l2, l3, c, s, c2, s2;
	char buf[16];

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	l2 = sp_listen_b(PORT + 1, NULL);
	sp_on(&sp.b);
	us_close(l); /* the connection's listener goes ... */
	sp_on(&sp.a);
	l3 = sp_listen_b(PORT, NULL); /* ... and a new one takes its port */
	assert_int_equal(us_send(c, "hello", 5, 0), 5);
	sp_run(20);
	sp_on(&sp.b);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 5);
	assert_memory_equal(buf, "hello", 5);
	assert_fails(us_accept(l3, NULL, NULL), EAGAIN); /* nothing new for it */
	assert_int_equal(us_send(s, "back", 4, 0), 4);
	sp_on(&sp.a);
	sp_run(20);
	assert_int_equal(us_recv(c, buf, sizeof(buf), 0), 4);
	assert_int_equal(us_engine_counter(sp.b.e, "tcp_resets_sent"), 0);
	/* The new listener opens connections of its own beside it. */
	sp_pair(l3, PORT, NULL, &c2, &s2);
	sp_close3(c2, s2, l2);
	sp_close3(c, s, l3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_active_open_local_address),
		sp_unit_test(test_connect_to_group_refused),
		sp_unit_test(test_passive_open_leaves_connections),
	};

	h_eal_init("pkt_sock_open");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
