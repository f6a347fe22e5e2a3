/* stack/net/icmp6.c: ICMPv6 (RFC 4443): input validation, echo replies,
 * the errors we send (rate-limited, and never where 2.4 (e) forbids),
 * Packet Too Big lowering a destination's path MTU (RFC 8201), and the
 * Neighbor Discovery messages handed to nd6.c.
 *
 * Errors received about our TCP segments go to tcp/ (tcp_icmp_error),
 * which believes only those quoting a sequence number in flight.
 */
#include <errno.h>
#include <netinet/icmp6.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "stack/base/csum.h"
#include "stack/net/net.h"
#include "tcp/tcp.h"

#define ICMP6_HDR_LEN 8    /* type, code, checksum, and one 32-bit word */
/* 2.4 (c): an error quotes as much of the packet as fits in the minimum
 * MTU. */
#define ICMP6_QUOTE_MAX (US_IP6_MIN_MTU - sizeof(struct rte_ipv6_hdr) - ICMP6_HDR_LEN)

uint16_t us_icmp6_cksum(const struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst)
{
	uint32_t len = rte_pktmbuf_pkt_len(m);
	uint16_t raw;

	if (us_csum_raw_mbuf(m, 0, len, &raw) < 0)
		return 0;
	return us_csum_fold((uint32_t)raw + us_csum_phdr6(src, dst, len, IPPROTO_ICMPV6));
}

static void icmp6_set_cksum(struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst)
{
	uint8_t *p = rte_pktmbuf_mtod(m, uint8_t *);
	uint16_t ck;

	p[2] = p[3] = 0;
	ck = (uint16_t)~us_icmp6_cksum(m, src, dst);
	memcpy(p + 2, &ck, sizeof(ck));
}

/* Errors out */

/* Copies what fits of the packet whose IPv6 header is ip6 (in m's first
 * segment, at or before its data) into to; returns the length. */
static uint32_t icmp6_quote(const struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6, uint8_t *to)
{
	const uint8_t *data = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *at = (const uint8_t *)ip6;
	uint32_t pre = 0, off = 0, k;
	const void *p;

	if (at < data) {
		pre = RTE_MIN((uint32_t)(data - at), (uint32_t)ICMP6_QUOTE_MAX);
		memcpy(to, at, pre);
	} else {
		off = RTE_MIN((uint32_t)(at - data), rte_pktmbuf_pkt_len(m));
	}
	k = RTE_MIN(rte_pktmbuf_pkt_len(m) - off, (uint32_t)ICMP6_QUOTE_MAX - pre);
	p = rte_pktmbuf_read(m, off, k, to + pre);
	if (p == NULL)
		return pre;
	if (p != to + pre)
		memcpy(to + pre, p, k);
	return pre + k;
}

/* 2.4 (e.1, e.2): the quoted packet (at offset ICMP6_HDR_LEN of out) is an
 * ICMPv6 error or a redirect.  A chain we cannot follow, or a later
 * fragment, shows no ICMPv6 header: not one. */
static bool icmp6_quotes_error(const struct rte_mbuf *out)
{
	uint32_t l4, nh;
	uint8_t proto, buf;
	const uint8_t *type;

	if (us_ip6_skip_ext(out, ICMP6_HDR_LEN, &proto, &l4, &nh) < 0 || proto != IPPROTO_ICMPV6)
		return false;
	type = rte_pktmbuf_read(out, l4, 1, &buf);
	return type != NULL && (!(*type & ICMP6_INFOMSG_MASK) || *type == ND_REDIRECT);
}

/* 2.4 (e.3, e.6): no error about a packet to a group (except Packet Too
 * Big and an unrecognized option whose action bits ask for one, RFC 8200
 * 4.2), nor to a source that names no single node. */
static bool icmp6_error_allowed(uint8_t type, uint8_t code, const struct rte_ipv6_hdr *ip6)
{
	struct us_in6 src, dst;

	memcpy(src.b, ip6->src_addr, sizeof(src.b));
	memcpy(dst.b, ip6->dst_addr, sizeof(dst.b));
	if (us_in6_is_unspec(&src) || us_in6_is_mcast(&src))
		return false;
	if (us_in6_is_mcast(&dst) && type != ICMP6_PACKET_TOO_BIG &&
	    !(type == ICMP6_PARAM_PROB && code == ICMP6_PARAMPROB_OPTION))
		return false;
	return true;
}

static void icmp6_count_error(struct us_net *n, uint8_t type)
{
	switch (type) {
	case ICMP6_DST_UNREACH:
		US_NET_STAT_INC(n, icmp6_unreach_out);
		break;
	case ICMP6_PACKET_TOO_BIG:
		US_NET_STAT_INC(n, icmp6_ptb_out);
		break;
	case ICMP6_TIME_EXCEEDED:
		US_NET_STAT_INC(n, icmp6_time_exceeded_out);
		break;
	default:
		US_NET_STAT_INC(n, icmp6_param_problem_out);
		break;
	}
}

/* The error message with the quote, or NULL (counted). */
static struct rte_mbuf *icmp6_error_build(struct us_net *n, uint8_t type, uint8_t code,
					  uint32_t param, const struct rte_ipv6_hdr *ip6,
					  const struct rte_mbuf *m)
{
	struct rte_mbuf *out = rte_pktmbuf_alloc(n->pool);
	uint8_t *p = out != NULL ? (uint8_t *)rte_pktmbuf_append(out, ICMP6_HDR_LEN +
								  ICMP6_QUOTE_MAX) : NULL;
	uint32_t qlen;

	if (p == NULL) {
		US_NET_STAT_INC(n, icmp6_drop_no_mbuf);
		rte_pktmbuf_free(out);
		return NULL;
	}
	p[0] = type;
	p[1] = code;
	param = rte_cpu_to_be_32(param);
	memcpy(p + 4, &param, sizeof(param));
	qlen = icmp6_quote(m, ip6, p + ICMP6_HDR_LEN);
	rte_pktmbuf_trim(out, (uint16_t)(ICMP6_QUOTE_MAX - qlen));
	return out;
}

void us_icmp6_error(struct us_net *n, uint8_t type, uint8_t code, uint32_t param,
		    const struct rte_ipv6_hdr *ip6, const struct rte_mbuf *m)
{
	struct us_in6 from, to, dst;
	struct rte_mbuf *out;

	memcpy(to.b, ip6->src_addr, sizeof(to.b));
	memcpy(dst.b, ip6->dst_addr, sizeof(dst.b));
	if (!icmp6_error_allowed(type, code, ip6)) {
		US_NET_STAT_INC(n, icmp6_error_suppressed);
		return;
	}
	out = icmp6_error_build(n, type, code, param, ip6, m);
	if (out == NULL)
		return;
	if (icmp6_quotes_error(out)) {
		US_NET_STAT_INC(n, icmp6_error_suppressed);
		goto drop;
	}
	/* 2.4 (f) */
	if (!us_icmp_rate_ok(n, &n->icmp6.refill_ns, &n->icmp6.tokens)) {
		US_NET_STAT_INC(n, icmp6_ratelimited);
		goto drop;
	}
	/* 2.2: from the address the packet was sent to when it is ours. */
	if (us_ip6_is_local(n, &dst))
		from = dst;
	else if (us_ip6_src_for(n, &to, &from) < 0) {
		US_NET_STAT_INC(n, ip6_drop_no_src);
		goto drop;
	}
	icmp6_set_cksum(out, &from, &to);
	icmp6_count_error(n, type);
	us_ip6_output(n, out, &from, &to, IPPROTO_ICMPV6, 0, 0);
	return;
drop:
	rte_pktmbuf_free(out);
}

/* Input */

/* 4.2: the reply carries the request's identifier, sequence and data,
 * from the address the request went to; to a group we joined (Linux
 * answers those too), from a unicast address of ours (2.2 b).  m is
 * reused, and fragmented again on output if it has to be. */
static void icmp6_echo(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip)
{
	struct us_in6 src, dst, from;

	US_NET_STAT_INC(n, icmp6_echo_in);
	memcpy(src.b, ip->src_addr, sizeof(src.b));
	memcpy(dst.b, ip->dst_addr, sizeof(dst.b));
	if (us_in6_is_unspec(&src)) {
		US_NET_STAT_INC(n, icmp6_drop_echo_unspec);
		goto drop;
	}
	if (!us_in6_is_mcast(&dst))
		from = dst;
	else if (us_ip6_src_for(n, &src, &from) < 0) {
		US_NET_STAT_INC(n, ip6_drop_no_src);
		goto drop;
	}
	rte_pktmbuf_mtod(m, uint8_t *)[0] = ICMP6_ECHO_REPLY;
	icmp6_set_cksum(m, &from, &src);
	/* RX offload flags must not read as TX requests. */
	m->ol_flags = 0;
	US_NET_STAT_INC(n, icmp6_echo_out);
	us_ip6_output(n, m, &from, &src, IPPROTO_ICMPV6, 0, 0);
	return;
drop:
	rte_pktmbuf_free(m);
}

/* What an ICMPv6 error means to TCP (like Linux's icmpv6_err_convert):
 * port unreachable and an unknown next header (the protocol unreachable
 * of IPv6) are hard; packet too big carries the path MTU; the other
 * unreachables, parameter problems and time exceeded are soft (RFC 9293
 * MUST-56: never abort; kept for the application as Linux does). */
static enum tcp_icmp_kind icmp6_tcp_kind(uint8_t type, uint8_t code)
{
	switch (type) {
	case ICMP6_PACKET_TOO_BIG:
		return TCP_ICMP_TOO_BIG;
	case ICMP6_DST_UNREACH:
		return code == ICMP6_DST_UNREACH_NOPORT ? TCP_ICMP_HARD : TCP_ICMP_SOFT;
	case ICMP6_PARAM_PROB:
		return code == ICMP6_PARAMPROB_NEXTHEADER ? TCP_ICMP_HARD : TCP_ICMP_SOFT;
	default:
		return TCP_ICMP_SOFT; /* time exceeded */
	}
}

/* The errno an ICMPv6 error means (Linux's icmpv6_err_convert), which
 * tcp/ leaves for the application when the error is soft. */
static int icmp6_errno(uint8_t type, uint8_t code)
{
	if (type == ICMP6_TIME_EXCEEDED)
		return EHOSTUNREACH;
	if (type != ICMP6_DST_UNREACH)
		return EPROTO;
	switch (code) {
	case ICMP6_DST_UNREACH_NOROUTE:
		return ENETUNREACH;
	case ICMP6_DST_UNREACH_ADMIN:
	case 5: /* source address failed ingress/egress policy */
	case 6: /* reject route to destination */
		return EACCES;
	default:
		return EHOSTUNREACH;
	}
}

/* An error quoting a TCP segment from one of our addresses goes to tcp/
 * (m at the ICMPv6 header, not consumed): the quoted chain is walked to
 * the TCP header, of which 8 bytes (ports and sequence number) are read.
 * 1 if tcp/ believed it (a connection with that sequence in flight), 0
 * if not, -1 if it quotes no TCP segment of ours. */
static int icmp6_error_to_tcp(struct us_net *n, const struct rte_mbuf *m, uint32_t mtu)
{
	const uint8_t *h = rte_pktmbuf_mtod(m, const uint8_t *);
	uint8_t ipbuf[sizeof(struct rte_ipv6_hdr)], l4buf[8], proto;
	const struct rte_ipv6_hdr *q;
	const uint8_t *l4;
	struct us_in6 qsrc, qdst;
	uint32_t l4_off, nh_off;

	q = rte_pktmbuf_read(m, ICMP6_HDR_LEN, sizeof(ipbuf), ipbuf);
	if (n->tcp == NULL || q == NULL ||
	    us_ip6_skip_ext(m, ICMP6_HDR_LEN, &proto, &l4_off, &nh_off) < 0 ||
	    proto != IPPROTO_TCP || (l4 = rte_pktmbuf_read(m, l4_off, sizeof(l4buf), l4buf)) == NULL)
		goto unhandled;
	memcpy(qsrc.b, q->src_addr, sizeof(qsrc.b));
	memcpy(qdst.b, q->dst_addr, sizeof(qdst.b));
	if (!us_ip6_is_local(n, &qsrc))
		goto unhandled;
	US_NET_STAT_INC(n, icmp6_errors_to_tcp);
	return tcp_icmp_error(n->tcp, icmp6_tcp_kind(h[0], h[1]), icmp6_errno(h[0], h[1]), mtu,
			      &qsrc, &qdst, l4, sizeof(l4buf));
unhandled:
	US_NET_STAT_INC(n, icmp6_error_unhandled);
	return -1;
}

/* 3.2, RFC 8201 4: a Packet Too Big about a packet of ours lowers its
 * destination's path MTU, never below 1280 and never up; one about a TCP
 * segment only if tcp/ believes it. */
static void icmp6_ptb_input(struct us_net *n, struct rte_mbuf *m)
{
	uint8_t buf[ICMP6_HDR_LEN + sizeof(struct rte_ipv6_hdr)];
	const struct rte_ipv6_hdr *q;
	struct us_in6 qsrc, qdst;
	const uint8_t *p = NULL;
	uint32_t mtu;
	int rc;

	US_NET_STAT_INC(n, icmp6_ptb_in);
	if (rte_pktmbuf_pkt_len(m) >= sizeof(buf))
		p = rte_pktmbuf_read(m, 0, sizeof(buf), buf);
	q = p != NULL ? (const struct rte_ipv6_hdr *)(p + ICMP6_HDR_LEN) : NULL;
	if (q == NULL || rte_be_to_cpu_32(q->vtc_flow) >> 28 != 6) {
		US_NET_STAT_INC(n, icmp6_drop_bad);
		goto out;
	}
	memcpy(qsrc.b, q->src_addr, sizeof(qsrc.b));
	memcpy(qdst.b, q->dst_addr, sizeof(qdst.b));
	/* RFC 8201 5.2: about a packet we sent, at least by its source. */
	if (!us_ip6_is_local(n, &qsrc)) {
		US_NET_STAT_INC(n, icmp6_ptb_drop_not_ours);
		goto out;
	}
	memcpy(&mtu, p + 4, sizeof(mtu));
	mtu = rte_be_to_cpu_32(mtu);
	if (mtu < US_IP6_MIN_MTU) {
		US_NET_STAT_INC(n, icmp6_ptb_drop_small);
		goto out;
	}
	/* A connection made before a lower path MTU was known still has its
	 * larger MSS: TCP lowers it, for a segment in flight only (RFC 5927
	 * 4.1).  One TCP does not believe lowers the path MTU neither (Linux's
	 * tcp_v6_err checks the window first): else a forged error, its
	 * sequence guessed wrong, would still narrow every flow to the peer. */
	if (icmp6_error_to_tcp(n, m, mtu) == 0) {
		US_NET_STAT_INC(n, icmp6_ptb_drop_tcp_ignored);
		goto out;
	}
	rc = us_ip6_pmtu_lower(n, &qdst, mtu);
	if (rc == 0)
		US_NET_STAT_INC(n, icmp6_ptb_lowered);
	else
		US_NET_STAT_INC(n, icmp6_ptb_not_lower);
out:
	rte_pktmbuf_free(m);
}

void us_icmp6_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip,
		    enum us_net_rx from)
{
	struct us_in6 src, dst;
	uint8_t type;

	US_NET_STAT_INC(n, icmp6_rx);
	if (rte_pktmbuf_data_len(m) < ICMP6_HDR_LEN) {
		US_NET_STAT_INC(n, icmp6_drop_short);
		goto drop;
	}
	memcpy(src.b, ip->src_addr, sizeof(src.b));
	memcpy(dst.b, ip->dst_addr, sizeof(dst.b));
	if (us_icmp6_cksum(m, &src, &dst) != 0xffff) {
		US_NET_STAT_INC(n, icmp6_drop_bad_csum);
		goto drop;
	}
	type = rte_pktmbuf_mtod(m, const uint8_t *)[0];
	if (type >= ND_ROUTER_SOLICIT && type <= ND_REDIRECT) {
		us_nd6_input(n, m, ip, from);
		return;
	}
	switch (type) {
	case ICMP6_ECHO_REQUEST:
		icmp6_echo(n, m, ip);
		return;
	case ICMP6_PACKET_TOO_BIG:
		icmp6_ptb_input(n, m);
		return;
	case ICMP6_DST_UNREACH:
	case ICMP6_TIME_EXCEEDED:
	case ICMP6_PARAM_PROB:
		US_NET_STAT_INC(n, icmp6_rx_errors);
		icmp6_error_to_tcp(n, m, 0);
		goto drop;
	default:
		/* 2.4 (b): unknown informational messages are dropped; unknown
		 * errors (a) would go to the transport. */
		US_NET_STAT_INC(n, icmp6_drop_unhandled);
		goto drop;
	}
drop:
	rte_pktmbuf_free(m);
}
