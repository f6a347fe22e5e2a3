/* stack/net/icmp.c: ICMP (RFC 792, RFC 1122 3.2.2): echo replies, destination
 * unreachable out (rate limited), errors quoting our TCP segments passed to
 * tcp/ (RFC 1122 4.2.3.9, RFC 1191 path MTU). */
#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"
#include "tcp/tcp.h"

#define ICMP_DEST_UNREACH 3
#define ICMP_TIME_EXCEEDED 11
#define ICMP_PARAMETERPROB 12
#define ICMP_FRAG_NEEDED 4 /* code of ICMP_DEST_UNREACH */
#define ICMP_HDR_LEN 8
#define ICMP_QUOTE_L4 8    /* RFC 792: the datagram's first 64 bits */
#define ICMP_QUOTE_MAX 128 /* what we read of a quoted datagram */

/* Token bucket in the wheel's time, so virtual-time tests see it too. */
bool us_icmp_rate_ok(struct us_net *n, uint64_t *refill_ns, uint32_t *tokens)
{
	const uint64_t step = US_SEC(1) / US_ICMP_RATE_PER_SEC;
	uint64_t now = us_timer_now(n->wheel);
	uint64_t add = now > *refill_ns ? (now - *refill_ns) / step : 0;

	if (add > 0) {
		if (*tokens + add >= US_ICMP_BURST) {
			*tokens = US_ICMP_BURST;
			*refill_ns = now;
		} else {
			*tokens += (uint32_t)add;
			*refill_ns += add * step;
		}
	}
	if (*tokens == 0)
		return false;
	(*tokens)--;
	return true;
}

/* RFC 1122 3.2.2: never an error about an error, a broadcast or multicast,
 * a datagram from a non-unique source, or a non-first fragment. */
static bool icmp_error_allowed(const struct us_net *n, const struct rte_ipv4_hdr *ip,
			       const struct rte_mbuf *m)
{
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);
	uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);
	const uint8_t *type;
	uint8_t buf;

	if (us_ip_is_bcast(n, dst) || us_ip_is_mcast(dst) || us_ip_is_bcast(n, src) ||
	    us_ip_is_mcast(src) || src == 0)
		return false;
	if (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_OFFSET_MASK)
		return false;
	if (ip->next_proto_id == IPPROTO_ICMP) {
		type = rte_pktmbuf_read(m, 0, 1, &buf);
		if (type == NULL || (*type != RTE_IP_ICMP_ECHO_REQUEST &&
				     *type != RTE_IP_ICMP_ECHO_REPLY))
			return false;
	}
	return true;
}

void us_icmp_unreach(struct us_net *n, uint8_t code, const struct rte_ipv4_hdr *ip,
		     const struct rte_mbuf *m)
{
	unsigned hlen = rte_ipv4_hdr_len(ip);
	unsigned l4 = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)ICMP_QUOTE_L4);
	struct rte_icmp_hdr *ih;
	struct rte_mbuf *out;
	const void *src;
	uint8_t *p;

	if (!icmp_error_allowed(n, ip, m)) {
		US_NET_STAT_INC(n, icmp_error_suppressed);
		return;
	}
	if (!us_icmp_rate_ok(n, &n->icmp.refill_ns, &n->icmp.tokens)) {
		US_NET_STAT_INC(n, icmp_ratelimited);
		return;
	}
	out = rte_pktmbuf_alloc(n->pool);
	if (out == NULL) {
		US_NET_STAT_INC(n, icmp_drop_no_mbuf);
		return;
	}
	p = (uint8_t *)rte_pktmbuf_append(out, ICMP_HDR_LEN + hlen + l4);
	if (p == NULL) {
		US_NET_STAT_INC(n, icmp_drop_no_mbuf);
		rte_pktmbuf_free(out);
		return;
	}
	memset(p, 0, ICMP_HDR_LEN);
	ih = (struct rte_icmp_hdr *)p;
	ih->icmp_type = ICMP_DEST_UNREACH;
	ih->icmp_code = code;
	memcpy(p + ICMP_HDR_LEN, ip, hlen);
	src = rte_pktmbuf_read(m, 0, l4, p + ICMP_HDR_LEN + hlen);
	if (src != NULL && src != p + ICMP_HDR_LEN + hlen)
		memcpy(p + ICMP_HDR_LEN + hlen, src, l4);
	ih->icmp_cksum = (uint16_t)us_csum_mbuf(out, 0, rte_pktmbuf_pkt_len(out));
	US_NET_STAT_INC(n, icmp_unreach_out);
	us_ip_output(n, out, n->addr, rte_be_to_cpu_32(ip->src_addr), IPPROTO_ICMP, 0);
}

/* RFC 792 echo: the reply is the request with the type changed, sent back
 * from the address it was sent to; m (maybe a reassembled chain) is reused
 * and fragmented again on output if it has to be. */
static void icmp_echo(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	struct rte_icmp_hdr *ih = rte_pktmbuf_mtod(m, struct rte_icmp_hdr *);
	uint32_t src = rte_be_to_cpu_32(ip->src_addr);
	uint32_t dst = rte_be_to_cpu_32(ip->dst_addr);

	US_NET_STAT_INC(n, icmp_echo_in);
	/* RFC 1122 3.2.2.6 lets us ignore broadcast echo (smurf amplifiers). */
	if (!us_ip_is_local(n, dst)) {
		US_NET_STAT_INC(n, icmp_drop_bcast_echo);
		rte_pktmbuf_free(m);
		return;
	}
	ih->icmp_type = RTE_IP_ICMP_ECHO_REPLY;
	ih->icmp_cksum = 0;
	ih->icmp_cksum = (uint16_t)us_csum_mbuf(m, 0, rte_pktmbuf_pkt_len(m));
	/* RX offload flags must not read as TX requests. */
	m->ol_flags = 0;
	US_NET_STAT_INC(n, icmp_echo_out);
	us_ip_output(n, m, dst, src, IPPROTO_ICMP, 0);
}

/* What an ICMP error means to TCP (RFC 1122 4.2.3.9, RFC 5927): protocol
 * and port unreachable are hard, fragmentation needed carries a path MTU,
 * the other unreachables, time exceeded and parameter problem are soft
 * (MUST-56: never abort; kept for the application as Linux keeps them in
 * sk_err_soft); source quench (MUST-55) does not reach here. */
static enum tcp_icmp_kind icmp_tcp_kind(uint8_t type, uint8_t code)
{
	if (type != ICMP_DEST_UNREACH)
		return TCP_ICMP_SOFT;
	if (code == ICMP_FRAG_NEEDED)
		return TCP_ICMP_TOO_BIG;
	return code == 2 || code == 3 ? TCP_ICMP_HARD : TCP_ICMP_SOFT; /* protocol, port */
}

/* The errno an ICMP error means (Linux's tcp_v4_err and icmp_err_convert),
 * which tcp/ leaves for the application when the error is soft. */
static int icmp_errno(uint8_t type, uint8_t code)
{
	if (type == ICMP_TIME_EXCEEDED)
		return EHOSTUNREACH;
	if (type == ICMP_PARAMETERPROB)
		return EPROTO;
	switch (code) {
	case 0:  /* net unreachable */
	case 6:  /* net unknown */
	case 9:  /* net administratively prohibited */
	case 11: /* net unreachable for TOS */
		return ENETUNREACH;
	case 5: /* source route failed */
		return EOPNOTSUPP;
	case 7: /* host unknown */
		return EHOSTDOWN;
	case 8: /* host isolated */
		return ENONET;
	default:
		return EHOSTUNREACH;
	}
}

/* Errors about our own datagrams: TCP's go to tcp/, the rest are noted. */
static void icmp_error_input(struct us_net *n, struct rte_mbuf *m)
{
	struct us_in6 qsrc, qdst;
	const struct rte_icmp_hdr *ih = rte_pktmbuf_mtod(m, const struct rte_icmp_hdr *);
	uint8_t buf[ICMP_QUOTE_MAX];
	uint32_t qlen = RTE_MIN(rte_pktmbuf_pkt_len(m) - ICMP_HDR_LEN, (uint32_t)sizeof(buf));
	const struct rte_ipv4_hdr *qip;
	unsigned qhl;

	if (ih->icmp_type == ICMP_DEST_UNREACH)
		US_NET_STAT_INC(n, icmp_unreach_in);
	qip = rte_pktmbuf_read(m, ICMP_HDR_LEN, qlen, buf);
	qhl = qip != NULL && qlen >= sizeof(*qip) ? rte_ipv4_hdr_len(qip) : 0;
	if (qhl < sizeof(*qip) || qhl + ICMP_QUOTE_L4 > qlen || (qip->version_ihl >> 4) != 4) {
		US_NET_STAT_INC(n, icmp_drop_bad);
		goto out;
	}
	if (qip->next_proto_id != IPPROTO_TCP ||
	    rte_be_to_cpu_32(qip->src_addr) != n->addr) {
		US_NET_STAT_INC(n, icmp_drop_unhandled);
		goto out;
	}
	/* RFC 1191 4: the next-hop MTU is the low half of the unused word. */
	US_NET_STAT_INC(n, icmp_errors_to_tcp);
	qsrc = us_in6_of_v4(rte_be_to_cpu_32(qip->src_addr));
	qdst = us_in6_of_v4(rte_be_to_cpu_32(qip->dst_addr));
	tcp_icmp_error(n->tcp, icmp_tcp_kind(ih->icmp_type, ih->icmp_code),
		       icmp_errno(ih->icmp_type, ih->icmp_code), rte_be_to_cpu_16(ih->icmp_seq_nb), &qsrc, &qdst, (const uint8_t *)qip + qhl,
		       qlen - qhl);
out:
	rte_pktmbuf_free(m);
}

void us_icmp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip)
{
	const struct rte_icmp_hdr *ih;

	US_NET_STAT_INC(n, icmp_rx);
	if (rte_pktmbuf_data_len(m) < ICMP_HDR_LEN ||
	    us_csum_mbuf(m, 0, rte_pktmbuf_pkt_len(m)) != 0) {
		US_NET_STAT_INC(n, icmp_drop_bad);
		goto drop;
	}
	ih = rte_pktmbuf_mtod(m, const struct rte_icmp_hdr *);
	switch (ih->icmp_type) {
	case RTE_IP_ICMP_ECHO_REQUEST:
		icmp_echo(n, m, ip);
		return;
	case ICMP_DEST_UNREACH:
	case ICMP_TIME_EXCEEDED:
	case ICMP_PARAMETERPROB:
		icmp_error_input(n, m);
		return;
	default:
		US_NET_STAT_INC(n, icmp_drop_unhandled);
		goto drop;
	}
drop:
	rte_pktmbuf_free(m);
}
