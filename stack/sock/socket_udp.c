/* stack/sock/socket_udp.c: UDP sockets (RFC 768) on the same calls as TCP:
 * us_socket(AF_INET, SOCK_DGRAM, 0), us_bind, us_connect (a default peer
 * and a filter), us_sendto/us_send, us_recvfrom/us_recv, us_close, epoll
 * (EPOLLIN while a datagram waits; EPOLLOUT always).
 *
 * Receive: stack/net/udp.c hands every valid datagram to the hook set
 * here (us_udp_set_deliver); a bound socket queues the mbuf itself (no
 * copy, data at the UDP header, source address in m->hash.usr) up to
 * [tcp] rcvbuf bytes, then drops and counts.  Unbound ports still get ICMP
 * port unreachable from udp.c (RFC 1122 4.1.3.1).
 * Send: one datagram per call, copied into a chain from the engine's pool,
 * software checksum, handed to IPv4 (which fragments above the MTU). */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_udp.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"
#include "stack/sock/socket_priv.h"

#define UDP_MAX_PAYLOAD 65507u /* 65535 - IPv4 header - UDP header */
#define UDP_EPHEMERAL_LO 32768u
#define UDP_EPHEMERAL_HI 60999u

static int udp_port_table(struct us_sock_table *tab)
{
	if (tab->udp_ports == NULL)
		tab->udp_ports = calloc(65536, sizeof(*tab->udp_ports));
	return tab->udp_ports ? 0 : -ENOMEM;
}

static int udp_bind_port(struct us_sock *s, uint16_t port)
{
	struct us_sock_table *tab = s->tab;
	int rc = udp_port_table(tab);

	if (rc < 0)
		return rc;
	if (port == 0) {
		/* An ephemeral port, as Linux picks one at the first send. */
		for (unsigned i = 0; i <= UDP_EPHEMERAL_HI - UDP_EPHEMERAL_LO; i++) {
			uint16_t p = (uint16_t)(UDP_EPHEMERAL_LO +
						(tab->udp_next + i) % (UDP_EPHEMERAL_HI -
								       UDP_EPHEMERAL_LO + 1));
			if (tab->udp_ports[p] == NULL) {
				port = p;
				tab->udp_next = p - UDP_EPHEMERAL_LO + 1u;
				break;
			}
		}
		if (port == 0)
			return -EADDRINUSE;
	} else if (tab->udp_ports[port] != NULL) {
		return -EADDRINUSE;
	}
	tab->udp_ports[port] = s;
	s->lip = us_engine_addr(tab->e);
	s->lport = port;
	s->bound = true;
	return 0;
}

int us_udp_bind(struct us_sock *s, uint32_t ip, uint16_t port)
{
	if (s->bound)
		return -EINVAL;
	if (ip != INADDR_ANY && ip != us_engine_addr(s->tab->e))
		return -EADDRNOTAVAIL;
	return udp_bind_port(s, port);
}

int us_udp_connect(struct us_sock *s, uint32_t ip, uint16_t port)
{
	int rc;

	if (ip == INADDR_ANY || port == 0)
		return -EADDRNOTAVAIL;
	if (!s->bound && (rc = udp_bind_port(s, 0)) < 0)
		return rc;
	s->rip = ip;
	s->rport = port;
	s->state = US_SS_CONNECTED;
	return 0;
}

/* The datagram as a chain: UDP header and payload, checksum filled. */
static struct rte_mbuf *udp_build(struct us_sock *s, const void *buf, size_t len, uint32_t dst,
				  uint16_t dport)
{
	struct rte_mempool *pool = us_engine_pool(s->tab->e);
	struct rte_mbuf *head = rte_pktmbuf_alloc(pool), *m = head;
	struct rte_udp_hdr *uh;
	size_t done = 0;
	uint16_t raw;
	uint32_t sum;

	if (head == NULL)
		return NULL;
	uh = (struct rte_udp_hdr *)rte_pktmbuf_append(head, sizeof(*uh));
	while (done < len) {
		uint16_t room = (uint16_t)RTE_MIN((size_t)rte_pktmbuf_tailroom(m), len - done);

		if (room == 0) {
			struct rte_mbuf *n = rte_pktmbuf_alloc(pool);

			if (n == NULL || rte_pktmbuf_chain(head, n) < 0) {
				rte_pktmbuf_free(n);
				rte_pktmbuf_free(head);
				return NULL;
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
	*uh = (struct rte_udp_hdr){
		.src_port = htons(s->lport), .dst_port = htons(dport),
		.dgram_len = htons((uint16_t)(len + sizeof(*uh))),
	};
	/* RFC 768: pseudo header (addresses, protocol, UDP length) + datagram. */
	struct {
		uint32_t src, dst;
		uint8_t zero, proto;
		uint16_t len;
	} __attribute__((packed)) ph = {
		.src = htonl(s->lip), .dst = htonl(dst), .proto = IPPROTO_UDP,
		.len = uh->dgram_len,
	};
	us_csum_raw_mbuf(head, 0, head->pkt_len, &raw);
	sum = (uint32_t)raw + rte_raw_cksum(&ph, sizeof(ph));
	uh->dgram_cksum = (uint16_t)~us_csum_fold(sum);
	if (uh->dgram_cksum == 0)
		uh->dgram_cksum = 0xffff; /* zero means "none" (RFC 768) */
	return head;
}

ssize_t us_udp_sendto(struct us_sock *s, const void *buf, size_t len, uint32_t dst,
		      uint16_t dport, bool have_dst)
{
	struct rte_mbuf *m;
	int rc;

	if (!have_dst) {
		if (s->state != US_SS_CONNECTED)
			return -EDESTADDRREQ;
		dst = s->rip;
		dport = s->rport;
	}
	if (dst == INADDR_ANY || dport == 0)
		return -EINVAL;
	if (len > UDP_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (buf == NULL && len > 0)
		return -EFAULT;
	if (!s->bound && (rc = udp_bind_port(s, 0)) < 0)
		return rc;
	m = udp_build(s, buf, len, dst, dport);
	if (m == NULL) {
		s->tab->stats.udp_tx_no_mbuf++;
		return -ENOBUFS;
	}
	s->tab->stats.udp_tx++;
	us_ip_output(us_engine_net(s->tab->e), m, s->lip, dst, IPPROTO_UDP, 0);
	return (ssize_t)len;
}

/* The next datagram: up to len bytes copied (the rest of it is discarded,
 * as POSIX says for message sockets), source address out. */
ssize_t us_udp_recvfrom(struct us_sock *s, void *buf, size_t len, uint32_t *src,
			uint16_t *sport, bool peek)
{
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
	*src = m->hash.usr;
	*sport = ntohs(uh->src_port);
	plen = rte_pktmbuf_pkt_len(m) - (uint32_t)sizeof(*uh);
	if (!peek) {
		s->dq_head = (s->dq_head + 1) % US_UDP_QUEUE;
		s->dq_n--;
		s->dq_bytes -= plen;
	}
	if (len > plen)
		len = plen;
	if (len > 0) {
		p = rte_pktmbuf_read(m, sizeof(*uh), (uint32_t)len, buf);
		if (p != buf)
			memcpy(buf, p, len);
	}
	if (!peek)
		rte_pktmbuf_free(m);
	return (ssize_t)len;
}

/* stack/net/udp.c's hook: 0 when a socket took m (queued or dropped and
 * counted), -ENOENT when no socket has the port (m untouched). */
static int udp_deliver(void *ctx, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	struct us_sock_table *tab = ctx;
	const struct rte_udp_hdr *uh = rte_pktmbuf_mtod(m, const struct rte_udp_hdr *);
	uint16_t ulen = ntohs(uh->dgram_len);
	uint32_t src = ntohl(ip->src_addr), plen = ulen - (uint32_t)sizeof(*uh);
	struct us_sock *s;

	if (tab->udp_ports == NULL || (s = tab->udp_ports[ntohs(uh->dst_port)]) == NULL)
		return -ENOENT;
	if (rte_pktmbuf_pkt_len(m) > ulen && rte_pktmbuf_trim(m, (uint16_t)(rte_pktmbuf_pkt_len(m) -
									     ulen)) < 0) {
		tab->stats.udp_drop_padding++; /* padding over two segments */
		goto drop;
	}
	if (s->state == US_SS_CONNECTED &&
	    (src != s->rip || ntohs(uh->src_port) != s->rport)) {
		tab->stats.udp_drop_not_peer++; /* connected: only its peer's */
		goto drop;
	}
	if (s->dq_n == US_UDP_QUEUE || s->dq_bytes + plen > tab->rcvbuf) {
		tab->stats.udp_drop_rcvbuf++;
		goto drop;
	}
	m->hash.usr = src;
	s->dq[(s->dq_head + s->dq_n++) % US_UDP_QUEUE] = m;
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
	return s->dq ? 0 : -ENOMEM;
}

void us_udp_close(struct us_sock *s)
{
	if (s->bound && s->tab->udp_ports != NULL && s->tab->udp_ports[s->lport] == s)
		s->tab->udp_ports[s->lport] = NULL;
	while (s->dq_n > 0) {
		rte_pktmbuf_free(s->dq[s->dq_head]);
		s->dq_head = (s->dq_head + 1) % US_UDP_QUEUE;
		s->dq_n--;
	}
	free(s->dq);
	s->dq = NULL;
}
