/* Dual-stack sockets (stack/sock/socket_udp.c, sockaddr.c, socket_opt.c)
 * between two engines with IPv4 and IPv6 in virtual time: an AF_INET6 UDP
 * socket bound to :: takes both families and answers each in its own,
 * IPV6_V6ONLY splits a port between two sockets, the names connect
 * chooses, ICMPv6 port unreachable across the wire, a datagram larger
 * than the MTU in fragments, Linux's errors for a wrong family, and the
 * v4-mapped names of a TCP connection accepted on an AF_INET6 listener. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

static const struct us_in6 unknown6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 9 } };

/* A UDP socket of family on side, bound to the wildcard's port when port
 * is not 0, IPV6_V6ONLY as asked first. */
static int udp_on(struct sp_side *side, int family, uint16_t port, int v6only)
{
	struct sockaddr_in any4 = sp_addr(0, port);
	struct sockaddr_in6 any6 = sp_addr6(&(struct us_in6){ 0 }, port);
	int fd;

	sp_on(side);
	fd = us_socket(family, SOCK_DGRAM, 0);
	assert_true(fd > 0);
	if (v6only)
		assert_int_equal(us_setsockopt(fd, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v6only,
					       sizeof(v6only)), 0);
	if (port != 0 && family == AF_INET)
		assert_int_equal(us_bind(fd, SA(any4), sizeof(any4)), 0);
	if (port != 0 && family == AF_INET6)
		assert_int_equal(us_bind(fd, SA(any6), sizeof(any6)), 0);
	sp_on(&sp.a);
	return fd;
}

static uint16_t port_of(int fd)
{
	struct sockaddr_in6 me;
	socklen_t len = sizeof(me);

	assert_int_equal(us_getsockname(fd, SA(me), &len), 0);
	return ntohs(me.sin6_port); /* sin_port sits at the same offset */
}

/* One datagram from fd: its bytes in buf, the sender in from (a
 * sockaddr_in6, or a sockaddr_in in its first bytes), the name's length. */
static socklen_t recv_from(int fd, const char *want, struct sockaddr_in6 *from)
{
	char buf[64];
	socklen_t len = sizeof(*from);
	size_t n = strlen(want);

	memset(from, 0xa5, sizeof(*from));
	assert_int_equal(us_recvfrom(fd, buf, sizeof(buf), 0, SA(*from), &len), n);
	assert_memory_equal(buf, want, n);
	return len;
}

static void test_dual_stack_receive_and_answer(void **state)
{
	struct sockaddr_in to4 = sp_addr(SP_B_IP, 5000), got4;
	struct sockaddr_in6 to6 = sp_addr6(&sp_b6, 5000), from4, from6, me;
	struct us_in6 want4 = us_in6_of_v4(SP_A_IP), got, any = { 0 };
	socklen_t len = sizeof(me);
	int b, s4, s6;

	(void)state;
	b = udp_on(&sp.b, AF_INET6, 5000, 0);
	s4 = udp_on(&sp.a, AF_INET, 0, 0);
	s6 = udp_on(&sp.a, AF_INET6, 0, 0);
	assert_int_equal(us_sendto(s4, "four", 4, 0, SA(to4), sizeof(to4)), 4);
	assert_int_equal(us_sendto(s6, "six", 3, 0, SA(to6), sizeof(to6)), 3);
	sp_run(10);
	/* Each sender in the socket's family: IPv4 v4-mapped. */
	assert_int_equal(recv_from(b, "four", &from4), sizeof(from4));
	assert_int_equal(from4.sin6_family, AF_INET6);
	got = sp_in6_of(&from4);
	assert_true(us_in6_eq(&got, &want4));
	assert_int_equal(ntohs(from4.sin6_port), port_of(s4));
	assert_int_equal(recv_from(b, "six", &from6), sizeof(from6));
	got = sp_in6_of(&from6);
	assert_true(us_in6_eq(&got, &sp_a6));
	assert_int_equal(ntohs(from6.sin6_port), port_of(s6));
	assert_int_equal(us_engine_counter(sp.b.e, "udp6_rx"), 1);
	/* Its own name: [::]:5000. */
	assert_int_equal(us_getsockname(b, SA(me), &len), 0);
	assert_int_equal(len, sizeof(me));
	assert_int_equal(me.sin6_family, AF_INET6);
	got = sp_in6_of(&me);
	assert_true(us_in6_eq(&got, &any));
	assert_int_equal(ntohs(me.sin6_port), 5000);
	/* Answers: to the v4-mapped name over IPv4, to the other over IPv6. */
	assert_int_equal(us_sendto(b, "r4", 2, 0, SA(from4), sizeof(from4)), 2);
	assert_int_equal(sp.b.tab->stats.udp_tx6, 0);
	assert_int_equal(us_sendto(b, "r6", 2, 0, SA(from6), sizeof(from6)), 2);
	assert_int_equal(sp.b.tab->stats.udp_tx6, 1);
	sp_run(5);
	assert_int_equal(recv_from(s4, "r4", &from4), sizeof(got4));
	memcpy(&got4, &from4, sizeof(got4));
	assert_int_equal(got4.sin_family, AF_INET);
	assert_int_equal(ntohl(got4.sin_addr.s_addr), SP_B_IP);
	assert_int_equal(ntohs(got4.sin_port), 5000);
	assert_int_equal(recv_from(s6, "r6", &from6), sizeof(from6));
	got = sp_in6_of(&from6);
	assert_true(us_in6_eq(&got, &sp_b6));
	/* A dual-stack socket also takes a plain sockaddr_in as destination. */
	assert_int_equal(us_sendto(s6, "plain", 5, 0, SA(to4), sizeof(to4)), 5);
	sp_run(5);
	assert_int_equal(recv_from(b, "plain", &from4), sizeof(from4));
	got = sp_in6_of(&from4);
	assert_true(us_in6_eq(&got, &want4));
	assert_int_equal(ntohs(from4.sin6_port), port_of(s6));
	us_close(b);
	us_close(s4);
	us_close(s6);
}

static void test_v6only(void **state)
{
	struct sockaddr_in to4 = sp_addr(SP_B_IP, 5001), any4 = sp_addr(0, 5001);
	struct sockaddr_in6 to6 = sp_addr6(&sp_b6, 5001), from, m4 = sp_mapped(SP_A_IP, 6000);
	struct sockaddr_in6 any6 = sp_addr6(&(struct us_in6){ 0 }, 5001), mine = sp_addr6(&sp_b6, 5001);
	int b6s, b4s, other, s4, s6, one = 1, v = -1;
	socklen_t len = sizeof(v);

	(void)state;
	b6s = udp_on(&sp.b, AF_INET6, 5001, 1);
	assert_int_equal(us_getsockopt(b6s, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v, &len), 0);
	assert_int_equal(v, 1);
	assert_fails(us_setsockopt(b6s, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)),
		     EINVAL); /* bound */
	/* The port's IPv4 side is free for another socket, its IPv6 one not. */
	b4s = udp_on(&sp.b, AF_INET, 5001, 0);
	sp_on(&sp.b);
	other = us_socket(AF_INET6, SOCK_DGRAM, 0);
	assert_fails(us_bind(other, SA(any6), sizeof(any6)), EADDRINUSE);
	assert_fails(us_bind(other, SA(mine), sizeof(mine)), EADDRINUSE);
	assert_fails(us_bind(other, SA(any4), sizeof(any4)), EINVAL); /* AF_INET6 wants 24+ */
	us_close(other);
	sp_on(&sp.a);
	s4 = udp_on(&sp.a, AF_INET, 0, 0);
	s6 = udp_on(&sp.a, AF_INET6, 0, 0);
	assert_int_equal(us_sendto(s4, "four", 4, 0, SA(to4), sizeof(to4)), 4);
	assert_int_equal(us_sendto(s6, "six", 3, 0, SA(to6), sizeof(to6)), 3);
	sp_run(10);
	recv_from(b6s, "six", &from);
	assert_fails(us_recv(b6s, &v, sizeof(v), 0), EAGAIN);
	recv_from(b4s, "four", &from);
	/* No IPv4 side at all: no IPv4 destination, no IPv4 name. */
	assert_fails(us_sendto(b6s, "x", 1, 0, SA(m4), sizeof(m4)), ENETUNREACH);
	assert_fails(us_sendto(b6s, "x", 1, 0, SA(to4), sizeof(to4)), ENETUNREACH);
	assert_fails(us_connect(b6s, SA(to4), sizeof(to4)), EAFNOSUPPORT);
	assert_fails(us_connect(b6s, SA(m4), sizeof(m4)), ENETUNREACH);
	other = udp_on(&sp.b, AF_INET6, 0, 1);
	m4 = sp_mapped(SP_B_IP, 5002);
	assert_fails(us_bind(other, SA(m4), sizeof(m4)), EINVAL);
	us_close(other);
	/* With the IPv4 socket gone, IPv4 to the port is answered by ICMP. */
	us_close(b4s);
	assert_int_equal(us_sendto(s4, "gone", 4, 0, SA(to4), sizeof(to4)), 4);
	sp_run(5);
	assert_int_equal(us_engine_counter(sp.b.e, "icmp_unreach_out"), 1);
	assert_fails(us_recv(b6s, &v, sizeof(v), 0), EAGAIN);
	us_close(b6s);
	us_close(s4);
	us_close(s6);
}

/* Without V6ONLY a socket on :: holds both sides of its port; bound to an
 * IPv6 address it holds that address only (and is IPv6-only, as Linux
 * makes it). */
static void test_bind_conflicts(void **state)
{
	struct sockaddr_in any4 = sp_addr(0, 5002), any4b = sp_addr(0, 5003);
	struct sockaddr_in6 any6 = sp_addr6(&(struct us_in6){ 0 }, 5002), mine = sp_addr6(&sp_b6, 5003);
	struct sockaddr_in6 mine2 = sp_addr6(&sp_b6, 5002), notmine = sp_addr6(&unknown6, 5004);
	struct sockaddr_in6 their4 = sp_mapped(SP_A_IP, 5004), our4 = sp_mapped(SP_B_IP, 5004);
	int dual, x, y, v = 0, one = 1;
	socklen_t len = sizeof(v);

	(void)state;
	dual = udp_on(&sp.b, AF_INET6, 5002, 0);
	sp_on(&sp.b);
	x = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_fails(us_bind(x, SA(any4), sizeof(any4)), EADDRINUSE);
	y = us_socket(AF_INET6, SOCK_DGRAM, 0);
	assert_int_equal(us_setsockopt(y, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), 0);
	assert_fails(us_bind(y, SA(any6), sizeof(any6)), EADDRINUSE);
	assert_fails(us_bind(y, SA(mine2), sizeof(mine2)), EADDRINUSE);
	us_close(y);
	/* Our IPv6 address on 5003: the IPv4 side stays free. */
	y = us_socket(AF_INET6, SOCK_DGRAM, 0);
	assert_int_equal(us_bind(y, SA(mine), sizeof(mine)), 0);
	assert_int_equal(us_getsockopt(y, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v, &len), 0);
	assert_int_equal(v, 1);
	assert_int_equal(us_bind(x, SA(any4b), sizeof(any4b)), 0);
	/* Names that are not ours. */
	us_close(y);
	y = us_socket(AF_INET6, SOCK_DGRAM, 0);
	assert_fails(us_bind(y, SA(notmine), sizeof(notmine)), EADDRNOTAVAIL);
	assert_fails(us_bind(y, SA(their4), sizeof(their4)), EADDRNOTAVAIL);
	assert_int_equal(us_bind(y, SA(our4), sizeof(our4)), 0); /* v4-mapped, ours */
	len = sizeof(mine);
	assert_int_equal(us_getsockname(y, SA(mine), &len), 0);
	assert_memory_equal(&mine.sin6_addr, &our4.sin6_addr, 16);
	sp_on(&sp.a);
	us_close(dual);
	us_close(x);
	us_close(y);
}

/* connect picks the source as Linux does and the socket takes only what
 * its peer sends. */
static void test_connect_names(void **state)
{
	struct sockaddr_in6 peer6 = sp_addr6(&sp_b6, 7000), peer4 = sp_mapped(SP_B_IP, 7000);
	struct sockaddr_in6 me, them, from;
	struct us_in6 got, want4 = us_in6_of_v4(SP_A_IP);
	socklen_t len = sizeof(me);
	int b, b2, c6, c4;

	(void)state;
	b = udp_on(&sp.b, AF_INET6, 7000, 0);
	b2 = udp_on(&sp.b, AF_INET6, 7001, 0);
	c6 = udp_on(&sp.a, AF_INET6, 0, 0);
	c4 = udp_on(&sp.a, AF_INET6, 0, 0);
	assert_int_equal(us_connect(c6, SA(peer6), sizeof(peer6)), 0);
	assert_int_equal(us_connect(c4, SA(peer4), sizeof(peer4)), 0);
	assert_int_equal(us_getsockname(c6, SA(me), &len), 0);
	got = sp_in6_of(&me);
	assert_true(us_in6_eq(&got, &sp_a6));
	assert_true(ntohs(me.sin6_port) >= 32768);
	len = sizeof(them);
	assert_int_equal(us_getpeername(c6, SA(them), &len), 0);
	got = sp_in6_of(&them);
	assert_true(us_in6_eq(&got, &sp_b6));
	assert_int_equal(ntohs(them.sin6_port), 7000);
	len = sizeof(me);
	assert_int_equal(us_getsockname(c4, SA(me), &len), 0);
	got = sp_in6_of(&me);
	assert_true(us_in6_eq(&got, &want4));
	assert_int_equal(us_send(c6, "c6", 2, 0), 2);
	assert_int_equal(us_send(c4, "c4", 2, 0), 2);
	sp_run(10);
	recv_from(b, "c6", &from);
	got = sp_in6_of(&from);
	assert_true(us_in6_eq(&got, &sp_a6));
	recv_from(b, "c4", &from);
	got = sp_in6_of(&from);
	assert_true(us_in6_eq(&got, &want4));
	/* From another port of the peer: dropped, counted. */
	from.sin6_port = htons(port_of(c4));
	assert_int_equal(us_sendto(b2, "no", 2, 0, SA(from), sizeof(from)), 2);
	assert_int_equal(us_sendto(b, "yes", 3, 0, SA(from), sizeof(from)), 3);
	sp_run(5);
	recv_from(c4, "yes", &them);
	assert_fails(us_recv(c4, &len, sizeof(len), 0), EAGAIN);
	assert_int_equal(sp.a.tab->stats.udp_drop_not_peer, 1);
	us_close(b);
	us_close(b2);
	us_close(c6);
	us_close(c4);
}

/* RFC 4443 3.1 across the wire: B answers, A receives the error. */
static void test_port_unreachable(void **state)
{
	struct sockaddr_in6 closed = sp_addr6(&sp_b6, 9);
	int a;

	(void)state;
	a = udp_on(&sp.a, AF_INET6, 0, 0);
	assert_int_equal(us_sendto(a, "x", 1, 0, SA(closed), sizeof(closed)), 1);
	sp_run(10);
	assert_int_equal(us_engine_counter(sp.b.e, "udp_drop_no_port"), 1);
	assert_int_equal(us_engine_counter(sp.b.e, "icmp6_unreach_out"), 1);
	assert_int_equal(us_engine_counter(sp.a.e, "icmp6_rx_errors"), 1);
	us_close(a);
}

/* RFC 8200 4.5: 3000 bytes over a 1500-byte MTU go in three fragments of
 * at most the MTU and arrive whole; the largest datagram IPv6 carries
 * too. */
static void test_fragments(void **state)
{
	struct sockaddr_in6 to = sp_addr6(&sp_b6, 6000);
	static char big[65528], got[65528];
	int a, b;

	(void)state;
	for (unsigned i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7 + (i >> 9));
	b = udp_on(&sp.b, AF_INET6, 6000, 0);
	a = udp_on(&sp.a, AF_INET6, 0, 0);
	assert_int_equal(us_sendto(a, big, 3000, 0, SA(to), sizeof(to)), 3000);
	sp_run(10);
	assert_int_equal(us_recv(b, got, sizeof(got), 0), 3000);
	assert_memory_equal(got, big, 3000);
	assert_int_equal(us_engine_counter(sp.a.e, "ip6_frag_out"), 3);
	assert_int_equal(us_engine_counter(sp.b.e, "ip6_frag_reassembled"), 1);
	assert_true(sp.a.max_frame <= RTE_ETHER_HDR_LEN + 1500);
	assert_true(sp.a.max_frame > RTE_ETHER_HDR_LEN + 1400);
	/* 65535 bytes of IPv6 payload, and one byte more refused. */
	assert_fails(us_sendto(a, big, 65528, 0, SA(to), sizeof(to)), EMSGSIZE);
	assert_int_equal(us_sendto(a, big, 65527, 0, SA(to), sizeof(to)), 65527);
	sp_run(10);
	assert_int_equal(us_recv(b, got, sizeof(got), 0), 65527);
	assert_memory_equal(got, big, 65527);
	assert_int_equal(us_engine_counter(sp.b.e, "ip6_frag_reassembled"), 2);
	us_close(a);
	us_close(b);
}

/* Linux's errors: the family the socket has, the length it needs. */
static void test_wrong_families(void **state)
{
	struct sockaddr_in to4 = sp_addr(SP_B_IP, 5353), any4 = sp_addr(0, 5353);
	struct sockaddr_in6 to6 = sp_addr6(&sp_b6, 5353), any6 = sp_addr6(&(struct us_in6){ 0 }, 5353);
	struct sockaddr_in6 fake = { .sin6_family = AF_INET }; /* 28 bytes of AF_INET */
	struct sockaddr_in6 unix6 = to6;
	int u4, u6, t4, t6, one = 1, v;
	socklen_t len = sizeof(v);

	(void)state;
	unix6.sin6_family = AF_UNIX;
	u4 = us_socket(AF_INET, SOCK_DGRAM, 0);
	u6 = us_socket(AF_INET6, SOCK_DGRAM, 0);
	t4 = us_socket(AF_INET, SOCK_STREAM, 0);
	t6 = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_true(u4 > 0 && u6 > 0 && t4 > 0 && t6 > 0);
	assert_fails(us_socket(AF_UNIX, SOCK_DGRAM, 0), EAFNOSUPPORT);
	/* AF_INET sockets: a sockaddr_in6 is another family; short is EINVAL. */
	assert_fails(us_bind(u4, SA(any6), sizeof(any6)), EAFNOSUPPORT);
	assert_fails(us_bind(t4, SA(any6), sizeof(any6)), EAFNOSUPPORT);
	assert_fails(us_bind(u4, SA(any4), sizeof(any4) - 1), EINVAL);
	assert_fails(us_sendto(u4, "x", 1, 0, SA(to6), sizeof(to6)), EAFNOSUPPORT);
	assert_fails(us_connect(u4, SA(to6), sizeof(to6)), EAFNOSUPPORT);
	assert_fails(us_connect(t4, SA(to6), sizeof(to6)), EAFNOSUPPORT);
	/* AF_INET6: a 16-byte sockaddr_in is too short to be a name (inet6_bind,
	 * tcp_v6_connect), 28 bytes of another family are EAFNOSUPPORT. */
	assert_fails(us_bind(u6, SA(any4), sizeof(any4)), EINVAL);
	assert_fails(us_bind(t6, SA(any4), sizeof(any4)), EINVAL);
	assert_fails(us_bind(u6, SA(fake), sizeof(fake)), EAFNOSUPPORT);
	assert_fails(us_connect(t6, SA(to4), sizeof(to4)), EINVAL);
	assert_fails(us_connect(t6, SA(fake), sizeof(fake)), EAFNOSUPPORT);
	assert_fails(us_bind(u6, SA(any6), 23), EINVAL);
	/* ... UDP sendto: another family is EINVAL (udpv6_sendmsg). */
	assert_fails(us_sendto(u6, "x", 1, 0, SA(unix6), sizeof(unix6)), EINVAL);
	assert_fails(us_sendto(u6, "x", 1, 0, SA(to6), 2), EINVAL);
	/* The RFC 2133 length (no scope id) is still a name. */
	assert_int_equal(us_bind(u6, SA(any6), 24), 0);
	/* IPV6_V6ONLY: no IPv6 level on AF_INET; a short value. */
	assert_fails(us_setsockopt(u4, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)),
		     ENOPROTOOPT);
	assert_fails(us_setsockopt(t4, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)),
		     ENOPROTOOPT);
	assert_fails(us_getsockopt(t4, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v, &len), ENOPROTOOPT);
	assert_fails(us_setsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, 2), EINVAL);
	assert_fails(us_setsockopt(t6, US_IPPROTO_IPV6, 99, &one, sizeof(one)), ENOPROTOOPT);
	assert_int_equal(us_getsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v, &len), 0);
	assert_int_equal(v, 0); /* net.ipv6.bindv6only = 0 */
	assert_int_equal(us_setsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &one, sizeof(one)), 0);
	assert_int_equal(us_getsockopt(t6, US_IPPROTO_IPV6, US_IPV6_V6ONLY, &v, &len), 0);
	assert_int_equal(v, 1);
	us_close(u4);
	us_close(u6);
	us_close(t4);
	us_close(t6);
}

/* Without [ip6] an AF_INET6 socket still reaches IPv4 peers; IPv6 ones
 * have no route. */
static void test_no_ip6(void **state)
{
	struct sockaddr_in6 to4 = sp_mapped(SP_B_IP, 5005), to6 = sp_addr6(&sp_b6, 5005), from;
	struct us_in6 got, want4 = us_in6_of_v4(SP_A_IP);
	int a, b;

	(void)state;
	b = udp_on(&sp.b, AF_INET6, 5005, 0);
	a = udp_on(&sp.a, AF_INET6, 0, 0);
	assert_fails(us_sendto(a, "x", 1, 0, SA(to6), sizeof(to6)), ENETUNREACH);
	assert_int_equal(us_sendto(a, "v4", 2, 0, SA(to4), sizeof(to4)), 2);
	sp_run(5);
	recv_from(b, "v4", &from);
	got = sp_in6_of(&from);
	assert_true(us_in6_eq(&got, &want4));
	us_close(a);
	us_close(b);
}

/* An AF_INET6 TCP listener on :: accepts an IPv4 connection and names
 * both ends v4-mapped; an AF_INET6 client connects to a v4-mapped
 * address. */
static void test_tcp_dual_stack_names(void **state)
{
	struct sockaddr_in to4 = sp_addr(SP_B_IP, 8080);
	struct sockaddr_in6 any6 = sp_addr6(&(struct us_in6){ 0 }, 8080), to = sp_mapped(SP_B_IP, 8080);
	struct sockaddr_in6 peer, me;
	struct us_in6 got, a4 = us_in6_of_v4(SP_A_IP), b4 = us_in6_of_v4(SP_B_IP);
	socklen_t len = sizeof(peer);
	int l, c, c6, s, s6;

	(void)state;
	sp_on(&sp.b);
	l = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_int_equal(us_bind(l, SA(any6), sizeof(any6)), 0);
	assert_int_equal(us_listen(l, 4), 0);
	sp_on(&sp.a);
	c = us_socket(AF_INET, SOCK_STREAM, 0);
	c6 = us_socket(AF_INET6, SOCK_STREAM, 0);
	assert_fails(us_connect(c, SA(to4), sizeof(to4)), EINPROGRESS);
	assert_fails(us_connect(c6, SA(to), sizeof(to)), EINPROGRESS);
	sp_run(10);
	s = us_accept(l, SA(peer), &len);
	assert_true(s > 0);
	assert_int_equal(len, sizeof(peer));
	assert_int_equal(peer.sin6_family, AF_INET6);
	got = sp_in6_of(&peer);
	assert_true(us_in6_eq(&got, &a4));
	assert_int_equal(ntohs(peer.sin6_port), port_of(c));
	len = sizeof(me);
	assert_int_equal(us_getsockname(s, SA(me), &len), 0);
	got = sp_in6_of(&me);
	assert_true(us_in6_eq(&got, &b4));
	assert_int_equal(ntohs(me.sin6_port), 8080);
	s6 = us_accept(l, NULL, NULL);
	assert_true(s6 > 0);
	len = sizeof(peer);
	assert_int_equal(us_getpeername(c6, SA(peer), &len), 0);
	assert_int_equal(len, sizeof(peer));
	got = sp_in6_of(&peer);
	assert_true(us_in6_eq(&got, &b4));
	assert_int_equal(ntohs(peer.sin6_port), 8080);
	len = sizeof(me);
	assert_int_equal(us_getsockname(c6, SA(me), &len), 0);
	got = sp_in6_of(&me);
	assert_true(us_in6_eq(&got, &a4));
	/* A short buffer: truncated, the full length reported. */
	len = 8;
	memset(&me, 0xa5, sizeof(me));
	assert_int_equal(us_getsockname(l, SA(me), &len), 0);
	assert_int_equal(len, sizeof(me));
	assert_int_equal(me.sin6_family, AF_INET6);
	assert_int_equal(ntohs(me.sin6_port), 8080);
	assert_int_equal(me.sin6_addr.s6_addr[0], 0xa5); /* beyond the 8 bytes */
	us_close(s);
	us_close(s6);
	us_close(c);
	us_close(c6);
	us_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test6(test_dual_stack_receive_and_answer),
		sp_unit_test6(test_v6only),
		sp_unit_test6(test_bind_conflicts),
		sp_unit_test6(test_connect_names),
		sp_unit_test6(test_port_unreachable),
		sp_unit_test6(test_fragments),
		sp_unit_test6(test_wrong_families),
		sp_unit_test(test_no_ip6),
		sp_unit_test6(test_tcp_dual_stack_names),
	};

	h_eal_init("pkt_udp6");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
