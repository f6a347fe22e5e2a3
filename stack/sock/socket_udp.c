/* stack/sock/socket_udp.c: UDP sockets (RFC 768) on the same calls as TCP:
 * us_socket(AF_INET or AF_INET6, SOCK_DGRAM, 0), us_bind, us_connect (a
 * default peer and a filter), us_sendto/us_send, us_recvfrom/us_recv,
 * us_close, epoll (EPOLLIN while a datagram waits; EPOLLOUT always).
 *
 * Both families: every address is a struct us_in6, IPv4 ones v4-mapped
 * (sockaddr.c).  An AF_INET socket speaks IPv4 only; an AF_INET6 socket
 * bound to :: takes datagrams of both families unless IPV6_V6ONLY, and
 * sends to a v4-mapped address over IPv4 (RFC 3493 3.7).
 *
 * Receive: stack/net/udp.c hands every valid datagram to the hook set
 * here (us_udp_set_deliver); the socket whose local address takes it
 * queues the mbuf itself (no copy, data at the UDP header, source address
 * beside it) up to [tcp] rcvbuf bytes, then drops and counts.  Ports
 * without such a socket still get a port unreachable from udp.c (RFC 1122
 * 4.1.3.1, RFC 4443 3.1).
 * Send: one datagram per call, copied into a chain from the engine's pool,
 * software checksum (mandatory over IPv6, RFC 8200 8.1), handed to IPv4 or
 * IPv6, which fragment above the path MTU. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_udp.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"
#include "stack/sock/socket_priv.h"

#define UDP_MAX_PAYLOAD 65507u  /* 65535 - IPv4 header - UDP header */
#define UDP6_MAX_PAYLOAD 65527u /* 65535 (IPv6 Payload Length) - UDP header */
#define UDP_EPHEMERAL_LO 32768u
#define UDP_EPHEMERAL_HI 60999u

/* Local addresses */

/* Does s take IPv4 datagrams?  An AF_INET socket all of them (an engine
 * has one IPv4 address, so bound or not it is the same); an AF_INET6 one
 * when bound to :: without IPV6_V6ONLY, or to a v4-mapped address. */
static bool udp_takes_v4(const struct us_sock *s)
{
	if (s->family == AF_INET || us_in6_is_v4mapped(&s->lip))
		return true;
	return us_in6_is_unspec(&s->lip) && !s->v6only;
}

/* Does s take IPv6 datagrams (to :: = any of our addresses, or to lip)? */
static bool udp_takes_v6(const struct us_sock *s)
{
	return s->family == AF_INET6 && !us_in6_is_v4mapped(&s->lip);
}

/* Does s take a datagram sent to dst? */
static bool udp_takes(const struct us_sock *s, const struct us_in6 *dst)
{
	if (us_in6_is_v4mapped(dst)) {
		if (!udp_takes_v4(s))
			return false;
		/* A v4-mapped name other than 0.0.0.0 takes its address only. */
		return s->family == AF_INET || !us_in6_is_v4mapped(&s->lip) ||
		       us_sock_addr_is_any(&s->lip) || us_in6_eq(&s->lip, dst);
	}
	return udp_takes_v6(s) && (us_in6_is_unspec(&s->lip) || us_in6_eq(&s->lip, dst));
}

/* Ports */

static int udp_port_table(struct us_sock_table *tab)
{
	if (tab->udp_ports == NULL)
		tab->udp_ports = calloc(65536, sizeof(*tab->udp_ports));
	return tab->udp_ports ? 0 : -ENOMEM;
}

/* A free ephemeral port (no socket on it at all), or 0. */
static uint16_t udp_ephemeral(struct us_sock_table *tab)
{
	const unsigned span = UDP_EPHEMERAL_HI - UDP_EPHEMERAL_LO + 1;

	for (unsigned i = 0; i < span; i++) {
		uint16_t p = (uint16_t)(UDP_EPHEMERAL_LO + (tab->udp_next + i) % span);

		if (tab->udp_ports[p] == NULL) {
			tab->udp_next = p - UDP_EPHEMERAL_LO + 1u;
			return p;
		}
	}
	return 0;
}

/* Puts s (its lip and v6only set) on port, or on an ephemeral one
 * (port 0), as Linux picks one at the first send. */
static int udp_bind_port(struct us_sock *s, uint16_t port)
{
	struct us_sock_table *tab = s->tab;
	int rc = udp_port_table(tab);

	if (rc < 0)
		return rc;
	if (port == 0 && (port = udp_ephemeral(tab)) == 0)
		return -EADDRINUSE;
	for (const struct us_sock *o = tab->udp_ports[port]; o != NULL; o = o->udp_port_next)
		/* No SO_REUSEADDR sharing for UDP: at most one socket on a
		 * port takes any datagram. */
		if (us_sock_names_overlap(&o->lip, o->v6only, &s->lip, s->v6only))
			return -EADDRINUSE;
	s->udp_port_next = tab->udp_ports[port];
	tab->udp_ports[port] = s;
	s->lport = port;
	s->bound = true;
	return 0;
}

/* An auto-bind (first send, connect): an AF_INET socket's name is the
 * engine's address, an AF_INET6 one stays :: until connect picks. */
static int udp_autobind(struct us_sock *s)
{
	if (s->bound)
		return 0;
	if (s->family == AF_INET)
		s->lip = us_in6_of_v4(us_engine_addr(s->tab->e));
	return udp_bind_port(s, 0);
}

int us_udp_bind(struct us_sock *s, const struct us_in6 *ip, uint16_t port)
{
	struct us_in6 old_lip = s->lip;
	bool old_v6only = s->v6only;
	int rc;

	if (s->bound)
		return -EINVAL;
	if (!us_sock_addr_is_any(ip) && !us_sock_addr_ours(s, ip))
		return -EADDRNOTAVAIL;
	if (s->family == AF_INET) {
		s->lip = us_in6_of_v4(us_engine_addr(s->tab->e));
	} else {
		s->lip = *ip;
		/* inet6_bind: a socket bound to an IPv6 address of ours has no
		 * IPv4 side any more. */
		if (!us_in6_is_unspec(ip) && !us_in6_is_v4mapped(ip))
			s->v6only = true;
	}
	rc = udp_bind_port(s, port);
	if (rc < 0) {
		s->lip = old_lip;
		s->v6only = old_v6only;
	}
	return rc;
}

/* Routes */

/* The source of a datagram from s to dst: the engine's IPv4 address for an
 * IPv4 peer, else s's IPv6 name or, for ::, the source selection's
 * (ip6_addr.c).  0, -ENETUNREACH (a family s has no side of, or no route),
 * -EADDRNOTAVAIL (no usable IPv6 address). */
static int udp_source(const struct us_sock *s, const struct us_in6 *dst, struct us_in6 *src)
{
	struct us_net *n = us_engine_net(s->tab->e);
	struct us_in6 hop;

	if (us_in6_is_v4mapped(dst)) {
		if (!udp_takes_v4(s))
			return -ENETUNREACH; /* udpv6_sendmsg: IPv6-only */
		*src = us_in6_of_v4(us_engine_addr(s->tab->e));
		return 0;
	}
	if (!udp_takes_v6(s) || !n->ip6_on || us_route6_lookup(n, dst, &hop) < 0)
		return -ENETUNREACH;
	if (!us_in6_is_unspec(&s->lip)) {
		*src = s->lip;
		return 0;
	}
	return us_ip6_src_for(n, dst, src) < 0 ? -EADDRNOTAVAIL : 0;
}

int us_udp_connect(struct us_sock *s, const struct us_in6 *ip, uint16_t port)
{
	struct us_in6 src;
	int rc;

	if (us_sock_addr_is_any(ip) || port == 0)
		return -EADDRNOTAVAIL;
	rc = udp_source(s, ip, &src);
	if (rc == 0)
		rc = udp_autobind(s);
	if (rc < 0)
		return rc;
	/* __ip6_datagram_connect: a wildcard name becomes the source, so the
	 * socket takes nothing of the other family any more. */
	if (s->family == AF_INET6 && us_sock_addr_is_any(&s->lip))
		s->lip = src;
	s->rip = *ip;
	s->rport = port;
	s->state = US_SS_CONNECTED;
	return 0;
}

/* Send */

/* The pseudo-header sum of either family (RFC 768, RFC 8200 8.1). */
static uint16_t udp_phdr(const struct us_in6 *src, const struct us_in6 *dst, uint16_t ulen)
{
	if (!us_in6_is_v4mapped(dst))
		return us_csum_phdr6(src, dst, ulen, IPPROTO_UDP);
	return us_csum_fold((uint32_t)us_csum_raw(src->b + 12, 4) + us_csum_raw(dst->b + 12, 4) +
			    rte_cpu_to_be_16(IPPROTO_UDP) + rte_cpu_to_be_16(ulen));
}

/* Appends len bytes of buf to head, chaining segments as it takes.  0, or
 * -ENOBUFS (what was chained stays on head, for the caller to free). */
static int udp_copy_in(struct rte_mempool *pool, struct rte_mbuf *head, const void *buf,
		       size_t len)
{
	struct rte_mbuf *m = head;
	size_t done = 0;

	while (done < len) {
		uint16_t room = (uint16_t)RTE_MIN((size_t)rte_pktmbuf_tailroom(m), len - done);

		if (room == 0) {
			struct rte_mbuf *n = rte_pktmbuf_alloc(pool);

			if (n == NULL || rte_pktmbuf_chain(head, n) < 0) {
				rte_pktmbuf_free(n);
				return -ENOBUFS;
			}
			n->data_off = 0;
			m = n;
			continue;
		}
		memcpy(rte_pktmbuf_mtod_offset(m, char *, m->data_len), (const char *)buf + done,
		       room);
		m->data_len += room;
		head->pkt_len += room;
		done += room;
	}
	return 0;
}

/* The datagram as a chain: UDP header and payload, checksum filled. */
static struct rte_mbuf *udp_build(struct us_sock *s, const void *buf, size_t len,
				  const struct us_in6 *src, const struct us_in6 *dst,
				  uint16_t dport)
{
	struct rte_mempool *pool = us_engine_pool(s->tab->e);
	struct rte_mbuf *head = rte_pktmbuf_alloc(pool);
	struct rte_udp_hdr *uh;
	uint16_t raw, ulen = (uint16_t)(len + sizeof(*uh));

	if (head == NULL)
		return NULL;
	uh = (struct rte_udp_hdr *)rte_pktmbuf_append(head, sizeof(*uh));
	if (udp_copy_in(pool, head, buf, len) < 0) {
		rte_pktmbuf_free(head);
		return NULL;
	}
	*uh = (struct rte_udp_hdr){
		.src_port = htons(s->lport), .dst_port = htons(dport), .dgram_len = htons(ulen),
	};
	us_csum_raw_mbuf(head, 0, head->pkt_len, &raw);
	uh->dgram_cksum = (uint16_t)~us_csum_fold((uint32_t)raw + udp_phdr(src, dst, ulen));
	if (uh->dgram_cksum == 0)
		uh->dgram_cksum = 0xffff; /* zero means "none" (RFC 768; refused over IPv6) */
	return head;
}

ssize_t us_udp_sendto(struct us_sock *s, const void *buf, size_t len, const struct us_in6 *dst,
		      uint16_t dport)
{
	struct us_net *n = us_engine_net(s->tab->e);
	struct us_in6 src;
	struct rte_mbuf *m;
	bool v6;
	int rc;

	if (dst == NULL) {
		if (s->state != US_SS_CONNECTED)
			return -EDESTADDRREQ;
		dst = &s->rip;
		dport = s->rport;
	}
	if (us_sock_addr_is_any(dst) || dport == 0)
		return -EINVAL;
	v6 = !us_in6_is_v4mapped(dst);
	if (len > (v6 ? UDP6_MAX_PAYLOAD : UDP_MAX_PAYLOAD))
		return -EMSGSIZE;
	if (buf == NULL && len > 0)
		return -EFAULT;
	rc = udp_source(s, dst, &src);
	if (rc == 0)
		rc = udp_autobind(s);
	if (rc < 0)
		return rc;
	m = udp_build(s, buf, len, &src, dst, dport);
	if (m == NULL) {
		s->tab->stats.udp_tx_no_mbuf++;
		return -ENOBUFS;
	}
	s->tab->stats.udp_tx++;
	if (v6) {
		s->tab->stats.udp_tx6++;
		us_ip6_output(n, m, &src, dst, IPPROTO_UDP, 0, 0);
	} else {
		us_ip_output(n, m, us_in6_v4(&src), us_in6_v4(dst), IPPROTO_UDP, 0);
	}
	return (ssize_t)len;
}

/* Receive */

/* The next datagram: up to len bytes copied (the rest of it is discarded,
 * as POSIX says for message sockets), source address out. */
uint32_t us_udp_next_len(const struct us_sock *s)
{
	if (s->dq_n == 0)
		return 0;
	return rte_pktmbuf_pkt_len(s->dq[s->dq_head]) - (uint32_t)sizeof(struct rte_udp_hdr);
}

ssize_t us_udp_recvfrom(struct us_sock *s, void *buf, size_t len, struct us_in6 *src,
			uint16_t *sport, bool peek, bool trunc)
{
	uint32_t whole;
	struct rte_mbuf *m;
	const struct rte_udp_hdr *uh;
	const void *p;
	uint32_t plen;

	if (s->dq_n == 0)
		return -EAGAIN;
	if (buf == NULL && len > 0)
		return -EFAULT;
	m = s->dq[s->dq_head];
	uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	*src = s->dq_src[s->dq_head];
	*sport = ntohs(uh->src_port);
	plen = rte_pktmbuf_pkt_len(m) - (uint32_t)sizeof(*uh);
	if (!peek) {
		s->dq_head = (s->dq_head + 1) % US_UDP_QUEUE;
		s->dq_n--;
		s->dq_bytes -= plen;
	}
	whole = plen;
	if (len > plen)
		len = plen;
	if (len > 0) {
		p = rte_pktmbuf_read(m, sizeof(*uh), (uint32_t)len, buf);
		if (p != buf)
			memcpy(buf, p, len);
	}
	if (!peek)
		rte_pktmbuf_free(m);
	return trunc ? (ssize_t)whole : (ssize_t)len;
}

/* The socket on dport that takes a datagram to dst, or NULL. */
static struct us_sock *udp_lookup(const struct us_sock_table *tab, uint16_t dport,
				  const struct us_in6 *dst)
{
	struct us_sock *s;

	if (tab->udp_ports == NULL)
		return NULL;
	for (s = tab->udp_ports[dport]; s != NULL; s = s->udp_port_next)
		if (udp_takes(s, dst))
			return s;
	return NULL;
}

/* stack/net/udp.c's hook: 0 when a socket took m (queued or dropped and
 * counted), -ENOENT when no socket takes it (m untouched). */
static int udp_deliver(void *ctx, struct rte_mbuf *m, const struct us_in6 *src,
		       const struct us_in6 *dst)
{
	struct us_sock_table *tab = ctx;
	const struct rte_udp_hdr *uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	uint16_t ulen = ntohs(uh->dgram_len);
	uint32_t plen = ulen - (uint32_t)sizeof(*uh);
	struct us_sock *s = udp_lookup(tab, ntohs(uh->dst_port), dst);
	unsigned slot;

	if (s == NULL)
		return -ENOENT;
	if (rte_pktmbuf_pkt_len(m) > ulen && rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
									     ulen)) < 0) {
		tab->stats.udp_drop_padding++; /* padding over two segments */
		goto drop;
	}
	if (s->state == US_SS_CONNECTED &&
	    (!us_in6_eq(src, &s->rip) || ntohs(uh->src_port) != s->rport)) {
		tab->stats.udp_drop_not_peer++; /* connected: only its peer's */
		goto drop;
	}
	if (s->dq_n == US_UDP_QUEUE || s->dq_bytes + plen > (s->rcvbuf_set ? s->o.rcvbuf : tab->rcvbuf)) {
		tab->stats.udp_drop_rcvbuf++;
		goto drop;
	}
	slot = (s->dq_head + s->dq_n++) % US_UDP_QUEUE;
	s->dq[slot] = m;
	s->dq_src[slot] = *src;
	s->dq_bytes += plen;
	tab->stats.udp_rx++;
	us_sock_wake(s);
	return 0;
drop:
	rte_pktmbuf_free(m);
	return 0;
}

void us_udp_table_init(struct us_sock_table *tab)
{
	us_udp_set_deliver(us_engine_net(tab->e), udp_deliver, tab);
}

void us_udp_table_fini(struct us_sock_table *tab)
{
	us_udp_set_deliver(us_engine_net(tab->e), NULL, NULL);
	free(tab->udp_ports);
	tab->udp_ports = NULL;
}

int us_udp_open(struct us_sock *s)
{
	s->dq = calloc(US_UDP_QUEUE, sizeof(*s->dq));
	s->dq_src = calloc(US_UDP_QUEUE, sizeof(*s->dq_src));
	if (s->dq != NULL && s->dq_src != NULL)
		return 0;
	free(s->dq);
	free(s->dq_src);
	s->dq = NULL;
	s->dq_src = NULL;
	return -ENOMEM;
}

/* Takes s off its port's list. */
static void udp_unbind(struct us_sock *s)
{
	struct us_sock **pp;

	if (!s->bound || s->tab->udp_ports == NULL)
		return;
	for (pp = &s->tab->udp_ports[s->lport]; *pp != NULL; pp = &(*pp)->udp_port_next)
		if (*pp == s) {
			*pp = s->udp_port_next;
			break;
		}
	s->udp_port_next = NULL;
}

void us_udp_close(struct us_sock *s)
{
	udp_unbind(s);
	while (s->dq != NULL && s->dq_n > 0) {
		rte_pktmbuf_free(s->dq[s->dq_head]);
		s->dq_head = (s->dq_head + 1) % US_UDP_QUEUE;
		s->dq_n--;
	}
	free(s->dq);
	free(s->dq_src);
	s->dq = NULL;
	s->dq_src = NULL;
}
