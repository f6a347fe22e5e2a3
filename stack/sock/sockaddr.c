/* stack/sock/sockaddr.c: the address arguments of the socket calls
 * (socket_priv.h): sockaddr_in on AF_INET sockets, sockaddr_in6 on AF_INET6
 * ones, held inside as struct us_in6 with IPv4 v4-mapped (RFC 4291
 * 2.5.5.2), so that a dual-stack socket (RFC 3493 3.7) keeps one kind of
 * address whichever family its peer speaks.
 *
 * The errors are Linux's, which differ by call: a name to bind is checked
 * strictly by the socket's family (inet_bind, inet6_bind); a destination
 * of an AF_INET6 UDP socket may also be a sockaddr_in
 * (__ip6_datagram_connect, udpv6_sendmsg), TCP's may not (tcp_v6_connect).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <arpa/inet.h>

#include "stack/net/net.h"
#include "stack/sock/socket_priv.h"

/* RFC 2133's sockaddr_in6 had no sin6_scope_id: Linux still takes one that
 * short (SIN6_LEN_RFC2133). */
#define SOCKADDR_IN6_MIN ((socklen_t)offsetof(struct sockaddr_in6, sin6_scope_id))

static int sa_in(const struct sockaddr *addr, socklen_t len, struct us_in6 *ip, uint16_t *port)
{
	struct sockaddr_in sin;

	if (addr == NULL || len < sizeof(sin))
		return -EINVAL;
	memcpy(&sin, addr, sizeof(sin));
	if (sin.sin_family != AF_INET)
		return -EAFNOSUPPORT;
	*ip = us_in6_of_v4(ntohl(sin.sin_addr.s_addr));
	*port = ntohs(sin.sin_port);
	return 0;
}

static int sa_in6(const struct sockaddr *addr, socklen_t len, struct us_in6 *ip, uint16_t *port)
{
	struct sockaddr_in6 sin6;

	if (addr == NULL || len < SOCKADDR_IN6_MIN)
		return -EINVAL;
	memcpy(&sin6, addr, SOCKADDR_IN6_MIN);
	if (sin6.sin6_family != AF_INET6)
		return -EAFNOSUPPORT;
	memcpy(ip->b, &sin6.sin6_addr, sizeof(ip->b));
	*port = ntohs(sin6.sin6_port);
	return 0;
}

/* By the socket's family alone. */
static int sa_family_get(const struct us_sock *s, const struct sockaddr *addr, socklen_t len,
			 struct us_in6 *ip, uint16_t *port)
{
	return s->family == AF_INET6 ? sa_in6(addr, len, ip, port) : sa_in(addr, len, ip, port);
}

int us_sock_addr_get(const struct us_sock *s, const struct sockaddr *addr, socklen_t len,
		     struct us_in6 *ip, uint16_t *port)
{
	int rc = sa_family_get(s, addr, len, ip, port);

	/* inet6_bind: an IPv6-only socket has no IPv4 name. */
	if (rc == 0 && s->family == AF_INET6 && s->v6only && us_in6_is_v4mapped(ip))
		return -EINVAL;
	return rc;
}

int us_sock_addr_peer(const struct us_sock *s, const struct sockaddr *addr, socklen_t len,
		      enum us_sock_addr_use use, struct us_in6 *ip, uint16_t *port)
{
	int rc;

	if (s->family == AF_INET6 && s->kind == US_SK_UDP && addr != NULL &&
	    len >= (socklen_t)sizeof(sa_family_t) && addr->sa_family != AF_INET6) {
		/* A dual-stack UDP socket takes an IPv4 peer as such. */
		if (addr->sa_family == AF_INET && s->v6only)
			return use == US_SA_SENDTO ? -ENETUNREACH : -EAFNOSUPPORT;
		if (addr->sa_family == AF_INET)
			return sa_in(addr, len, ip, port);
		if (use == US_SA_SENDTO)
			return -EINVAL;
	}
	rc = sa_family_get(s, addr, len, ip, port);
	if (rc == 0 && s->family == AF_INET6 && s->v6only && us_in6_is_v4mapped(ip))
		return -ENETUNREACH;
	return rc;
}

void us_sock_addr_put(const struct us_sock *s, const struct us_in6 *ip, uint16_t port,
		      struct sockaddr *addr, socklen_t *len)
{
	struct sockaddr_in6 sin6;
	struct sockaddr_in sin;
	const void *from = &sin;
	socklen_t full = sizeof(sin);

	if (addr == NULL || len == NULL)
		return;
	if (s->family == AF_INET6) {
		sin6 = (struct sockaddr_in6){ .sin6_family = AF_INET6, .sin6_port = htons(port) };
		memcpy(&sin6.sin6_addr, ip->b, sizeof(ip->b));
		from = &sin6;
		full = sizeof(sin6);
	} else {
		sin = (struct sockaddr_in){
			.sin_family = AF_INET, .sin_port = htons(port),
			.sin_addr.s_addr = htonl(us_in6_v4(ip)),
		};
	}
	memcpy(addr, from, *len < full ? *len : full);
	*len = full;
}

bool us_sock_addr_ours(const struct us_sock *s, const struct us_in6 *ip)
{
	if (us_in6_is_v4mapped(ip))
		return us_in6_v4(ip) == us_engine_addr(s->tab->e);
	return us_ip6_is_local(us_engine_net(s->tab->e), ip);
}

bool us_sock_names_overlap(const struct us_in6 *a, bool a_v6only, const struct us_in6 *b,
			   bool b_v6only)
{
	bool a_v4 = us_in6_is_v4mapped(a) || (us_in6_is_unspec(a) && !a_v6only);
	bool b_v4 = us_in6_is_v4mapped(b) || (us_in6_is_unspec(b) && !b_v6only);

	if (a_v4 && b_v4)
		return true;
	return !us_in6_is_v4mapped(a) && !us_in6_is_v4mapped(b) &&
	       (us_in6_is_unspec(a) || us_in6_is_unspec(b) || us_in6_eq(a, b));
}
