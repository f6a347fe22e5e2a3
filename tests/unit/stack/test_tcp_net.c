/* The network layers and TCP, through one engine (stack/net/ip.c, ip6.c,
 * icmp.c and icmp6.c over its tcp_stack): a segment of either family
 * reaches tcp/ with its header's addresses (behind IPv6 extension headers
 * too) and the answer leaves in the same family; an ICMP or ICMPv6 error
 * quoting a segment of ours reaches tcp/ sorted as RFC 1122 4.2.3.9 and
 * RFC 4443 3 say (protocol or port unreachable aborts a SYN-SENT, the
 * rest is soft, too big lowers the MSS, and IPv6's path MTU only if
 * believed), and errors about anything else stay out.  Every test runs
 * once per family; the frames are built and checked here, checksums
 * included, independently of the stack. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_tcp.h>

#include "stack/engine/engine_priv.h"
#include "tcp/tcp.h"
#include "tests/unit/stack/harness6.h"

#define PEER_PORT 80

/* A router between us and the peer: the source of the errors. */
static const struct us_in6 router6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 0x99 } };
static const struct rte_ether_addr zero_mac;

struct fx {
	struct harness h;
	bool v6;
	struct us_in6 peer;   /* as tcp/ has it: IPv4 v4-mapped */
	unsigned closed;      /* on_closed calls */
	int closed_err;
};

static struct fx fx4 = { .v6 = false }, fx6 = { .v6 = true };

/* What a test sends as the peer (SEG's defaults below). */
struct seg_spec {
	uint16_t sport, dport;
	uint8_t flags;
	uint32_t seq, ack;
	const uint8_t *opt;
	size_t olen;
	bool ext;      /* IPv6: a Destination Options header in front of TCP */
	bool bad_csum; /* the TCP checksum off by one bit */
};

/* A segment from the peer's port 80 to our port 81, fields overridden as
 * given (a later designated initializer wins: C11 6.7.9). */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif
#define SEG(...) (&(const struct seg_spec){ .sport = PEER_PORT, .dport = 81, __VA_ARGS__ })

/* Fixture: both families' addresses, the peer's MAC known to both ARP and
 * Neighbor Discovery. */

static int setup(void **state)
{
	struct fx *f = *state;
	bool v6 = f->v6;

	memset(f, 0, sizeof(*f));
	f->v6 = v6;
	f->peer = v6 ? h6_peer : us_in6_of_v4(H_PEER_IP);
	h_prepare(&f->h);
	h6_start(&f->h, false);
	h6_learn_peer(&f->h);
	h6_inject(&f->h, h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac, H_OUR_IP,
			       &h_bcast_mac));
	h_clear_tx(&f->h);
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	h_teardown(&f->h);
	return 0;
}

static int64_t ctr(struct fx *f, const char *name)
{
	return us_engine_counter(f->h.e, name);
}

static struct tcp_stack *ts_of(struct fx *f)
{
	return us_engine_tcp(f->h.e);
}

static void on_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct fx *f = ctx;

	(void)c;
	f->closed++;
	f->closed_err = err;
}

static const struct tcp_callbacks cbs = { .on_closed = on_closed };

/* Frames */

/* The IPv6 segment of s: TCP header (window 65535) and options, behind a
 * Destination Options header (PadN only) when s->ext. */
static struct rte_mbuf *seg6(const struct seg_spec *s)
{
	uint8_t buf[8 + 60] = { 0 };
	size_t off = s->ext ? 8 : 0, hlen = sizeof(struct rte_tcp_hdr) + s->olen;
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(buf + off);
	uint16_t sum;

	if (s->ext) {
		buf[0] = IPPROTO_TCP; /* next header; length 0: 8 bytes */
		buf[2] = 1;           /* PadN over the other 6 */
		buf[3] = 4;
	}
	th->src_port = rte_cpu_to_be_16(s->sport);
	th->dst_port = rte_cpu_to_be_16(s->dport);
	th->sent_seq = rte_cpu_to_be_32(s->seq);
	th->recv_ack = rte_cpu_to_be_32(s->ack);
	th->data_off = (uint8_t)(hlen / 4 << 4);
	th->tcp_flags = s->flags;
	th->rx_win = rte_cpu_to_be_16(65535);
	if (s->olen > 0)
		memcpy(th + 1, s->opt, s->olen);
	sum = h6_l4_sum(&h6_peer, &h6_our, IPPROTO_TCP, (const uint8_t *)th, (uint32_t)hlen);
	th->cksum = rte_cpu_to_be_16((uint16_t)~sum ^ (s->bad_csum ? 0x0100 : 0));
	return h6_frame(&h_our_mac, &h6_peer, &h6_our, s->ext ? IPPROTO_DSTOPTS : IPPROTO_TCP, 64,
			buf, off + hlen);
}

/* The peer's segment s to us, in f's family. */
static struct rte_mbuf *seg(struct fx *f, const struct seg_spec *s)
{
	struct rte_mbuf *m;

	if (f->v6)
		return seg6(s);
	m = h_tcp_opts(H_PEER_IP, s->sport, H_OUR_IP, s->dport, s->flags, s->seq, s->ack, s->opt,
		       s->olen, 0, 0);
	if (s->bad_csum)
		((struct rte_tcp_hdr *)(h_iph(m) + 1))->cksum ^= rte_cpu_to_be_16(0x0100);
	return m;
}

/* A segment of ours, as read off the wire. */
struct sent {
	uint16_t sport, dport;
	uint8_t flags;
	uint32_t seq, ack;
	uint32_t len; /* payload bytes */
	bool df;      /* IPv4: Don't Fragment set */
};

/* Frame m of ours (any segment layout), once checked to be of f's family,
 * from our address to the peer's, with a valid checksum (and an IPv6 flow
 * label, RFC 6437). */
static struct sent sent_tcp(struct fx *f, const struct rte_mbuf *m)
{
	uint8_t frame[2048];
	size_t n = h_bytes(m, frame, sizeof(frame));
	const struct rte_ether_hdr *eh = (const struct rte_ether_hdr *)frame;
	const struct rte_tcp_hdr *th;
	uint32_t l4len;
	bool df = false;

	if (f->v6) {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(eh + 1);
		struct us_in6 src = h6_addr_at(ip->src_addr), dst = h6_addr_at(ip->dst_addr);

		assert_int_equal(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_IPV6);
		assert_int_equal(ip->proto, IPPROTO_TCP);
		assert_true(us_in6_eq(&src, &h6_our));
		assert_true(us_in6_eq(&dst, &h6_peer));
		assert_int_not_equal(rte_be_to_cpu_32(ip->vtc_flow) & 0xfffff, 0);
		l4len = rte_be_to_cpu_16(ip->payload_len);
		assert_int_equal(n, H6_ETH_IP6 + l4len);
		th = (const struct rte_tcp_hdr *)(ip + 1);
		assert_int_equal(h6_l4_sum(&src, &dst, IPPROTO_TCP, (const uint8_t *)th, l4len),
				 0xffff);
	} else {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eh + 1);

		assert_int_equal(rte_be_to_cpu_16(eh->ether_type), RTE_ETHER_TYPE_IPV4);
		assert_int_equal(ip->version_ihl, RTE_IPV4_VHL_DEF);
		assert_int_equal(ip->next_proto_id, IPPROTO_TCP);
		assert_int_equal(rte_be_to_cpu_32(ip->src_addr), H_OUR_IP);
		assert_int_equal(rte_be_to_cpu_32(ip->dst_addr), H_PEER_IP);
		l4len = rte_be_to_cpu_16(ip->total_length) - (uint32_t)sizeof(*ip);
		assert_int_equal(n, sizeof(*eh) + sizeof(*ip) + l4len);
		th = (const struct rte_tcp_hdr *)(ip + 1);
		assert_int_equal(rte_ipv4_udptcp_cksum_verify(ip, th), 0);
		df = (rte_be_to_cpu_16(ip->fragment_offset) & RTE_IPV4_HDR_DF_FLAG) != 0;
	}
	return (struct sent){
		.sport = rte_be_to_cpu_16(th->src_port), .dport = rte_be_to_cpu_16(th->dst_port),
		.flags = th->tcp_flags, .seq = rte_be_to_cpu_32(th->sent_seq),
		.ack = rte_be_to_cpu_32(th->recv_ack),
		.len = l4len - (uint32_t)(th->data_off >> 4) * 4, .df = df,
	};
}

/* What an error quotes of frame m of ours: from its IP header on. */
static size_t quote_of(struct rte_mbuf *m, uint8_t *buf, size_t cap)
{
	uint8_t frame[1600];
	size_t n = h_bytes(m, frame, sizeof(frame));

	assert_true(n > RTE_ETHER_HDR_LEN);
	n = RTE_MIN(n - RTE_ETHER_HDR_LEN, cap);
	memcpy(buf, frame + RTE_ETHER_HDR_LEN, n);
	return n;
}

/* Where the quoted TCP header starts (no options or extension headers in
 * what we send). */
static size_t quoted_l4(const struct fx *f)
{
	return f->v6 ? sizeof(struct rte_ipv6_hdr) : sizeof(struct rte_ipv4_hdr);
}

/* An ICMP or ICMPv6 error from the router: type, code, the 32-bit word
 * after the checksum (the MTU of a too big: IPv4's in its low half), and
 * qlen quoted bytes. */
static struct rte_mbuf *error_msg(struct fx *f, uint8_t type, uint8_t code, uint32_t word,
				  const uint8_t *quote, size_t qlen)
{
	uint8_t msg[8 + 256] = { type, code, 0, 0, (uint8_t)(word >> 24), (uint8_t)(word >> 16),
				 (uint8_t)(word >> 8), (uint8_t)word };
	uint16_t ck;

	assert_true(qlen <= sizeof(msg) - 8);
	memcpy(msg + 8, quote, qlen);
	if (f->v6)
		return h6_icmp(&h_our_mac, &router6, &h6_our, 64, msg, 8 + qlen);
	ck = (uint16_t)~rte_raw_cksum(msg, 8 + qlen);
	memcpy(msg + 2, &ck, sizeof(ck));
	return h_ipv4(H_GW_IP, H_OUR_IP, IPPROTO_ICMP, 1, 0, msg, 8 + qlen);
}

/* The error about frame m of ours, quoted from its IP header. */
static struct rte_mbuf *error_about(struct fx *f, uint8_t type, uint8_t code, uint32_t word,
				    struct rte_mbuf *m)
{
	uint8_t q[256];
	size_t n = quote_of(m, q, sizeof(q));

	return error_msg(f, type, code, word, q, n);
}

/* An active open to the peer: its SYN, taken from the port (the caller
 * frees it). */
static struct tcp_conn *open_to_peer(struct fx *f, struct rte_mbuf **syn)
{
	struct tcp_conn *c;

	assert_int_equal(tcp_connect(ts_of(f), &f->peer, PEER_PORT, &cbs, f, &c), 0);
	us_engine_flush(f->h.e);
	assert_int_equal(f->h.port.ntx, 1);
	*syn = f->h.port.tx[0];
	f->h.port.ntx = 0;
	assert_int_equal(sent_tcp(f, *syn).flags, RTE_TCP_SYN_FLAG);
	return c;
}

static const char *errors_to_tcp(const struct fx *f)
{
	return f->v6 ? "icmp6_errors_to_tcp" : "icmp_errors_to_tcp";
}

/* Segments both ways */

/* RFC 9293 3.10.7.1: a SYN to a closed port is answered <SEQ=0>
 * <ACK=SEG.SEQ+1><CTL=RST,ACK>, from the address it was sent to. */
static void test_closed_port_reset(void **state)
{
	struct fx *f = *state;
	struct sent o;

	h6_inject(&f->h, seg(f, SEG(.flags = RTE_TCP_SYN_FLAG, .seq = 1000)));
	assert_int_equal(f->h.port.ntx, 1);
	o = sent_tcp(f, f->h.port.tx[0]);
	assert_int_equal(o.len, 0);
	assert_int_equal(o.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(o.sport, 81);
	assert_int_equal(o.dport, PEER_PORT);
	assert_int_equal(o.seq, 0);
	assert_int_equal(o.ack, 1001);
	assert_int_equal(ctr(f, "tcp_rx_segs"), 1);
	assert_int_equal(ctr(f, "ip6_rx_tcp"), f->v6 ? 1 : 0);
}

/* RFC 8200 4: TCP is found behind the extension headers, and given its
 * own bytes only. */
static void test_segment_behind_extension_header(void **state)
{
	struct fx *f = *state;
	struct sent o;

	h6_inject(&f->h, seg6(SEG(.flags = RTE_TCP_SYN_FLAG, .seq = 7, .ext = true)));
	assert_int_equal(f->h.port.ntx, 1);
	o = sent_tcp(f, f->h.port.tx[0]);
	assert_int_equal(o.flags, RTE_TCP_RST_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(o.ack, 8);
	assert_int_equal(ctr(f, "ip6_rx_tcp"), 1);
	assert_int_equal(ctr(f, "tcp_drop_bad_csum"), 0);
}

/* The checksum covers the family's pseudo-header: one bit off and the
 * segment is dropped unanswered. */
static void test_bad_checksum_dropped(void **state)
{
	struct fx *f = *state;

	h6_inject(&f->h, seg(f, SEG(.flags = RTE_TCP_SYN_FLAG, .seq = 1000, .bad_csum = true)));
	assert_int_equal(f->h.port.ntx, 0);
	assert_int_equal(ctr(f, "tcp_drop_bad_csum"), 1);
}

/* A listener on :: takes a passive open of either family and answers
 * from the address the SYN came to. */
static void test_passive_open_on_wildcard(void **state)
{
	static const uint8_t mss[] = { 2, 4, 0x05, 0xb4 };
	struct fx *f = *state;
	struct sent o;

	assert_int_equal(tcp_listen(ts_of(f), NULL, 81, 0, &cbs, f), 0);
	h6_inject(&f->h, seg(f, SEG(.flags = RTE_TCP_SYN_FLAG, .seq = 1000, .opt = mss,
				    .olen = sizeof(mss))));
	assert_int_equal(f->h.port.ntx, 1);
	o = sent_tcp(f, f->h.port.tx[0]);
	assert_int_equal(o.flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	assert_int_equal(o.ack, 1001);
	assert_int_equal(ctr(f, "tcp_passive_opens"), 0);
	h6_inject(&f->h, seg(f, SEG(.flags = RTE_TCP_ACK_FLAG, .seq = 1001,
				    .ack = o.seq + 1)));
	assert_int_equal(ctr(f, "tcp_passive_opens"), 1);
	assert_int_equal(ctr(f, "tcbs_established"), 1);
}

/* ICMP and ICMPv6 errors */

enum err_effect { E_NOT_TO_TCP, E_SOFT, E_HARD };

struct err_case {
	uint8_t type, code;
	enum err_effect want;
	int soft_err; /* E_SOFT: the errno kept for the application */
};

/* RFC 1122 4.2.3.9: protocol and port unreachable abort a connection in
 * SYN-SENT; the other unreachables, time exceeded and parameter problem
 * do not (MUST-56) and are kept with Linux's errno (tcp_v4_err,
 * icmp_err_convert); source quench does not reach TCP (MUST-55). */
static const struct err_case cases4[] = {
	{ ICMP_DEST_UNREACH, ICMP_NET_UNREACH, E_SOFT, ENETUNREACH },
	{ ICMP_DEST_UNREACH, ICMP_HOST_UNREACH, E_SOFT, EHOSTUNREACH },
	{ ICMP_DEST_UNREACH, ICMP_PROT_UNREACH, E_HARD, 0 },
	{ ICMP_DEST_UNREACH, ICMP_PORT_UNREACH, E_HARD, 0 },
	{ ICMP_DEST_UNREACH, ICMP_PKT_FILTERED, E_SOFT, EHOSTUNREACH },
	{ ICMP_TIME_EXCEEDED, ICMP_EXC_TTL, E_SOFT, EHOSTUNREACH },
	{ ICMP_PARAMETERPROB, 0, E_SOFT, EPROTO },
	{ ICMP_SOURCE_QUENCH, 0, E_NOT_TO_TCP, 0 },
};

/* RFC 4443 3 with Linux's reading (icmpv6_err_convert): port unreachable
 * and an unrecognized next header (IPv6's protocol unreachable) are hard. */
static const struct err_case cases6[] = {
	{ ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOROUTE, E_SOFT, ENETUNREACH },
	{ ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_ADMIN, E_SOFT, EACCES },
	{ ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_ADDR, E_SOFT, EHOSTUNREACH },
	{ ICMP6_DST_UNREACH, ICMP6_DST_UNREACH_NOPORT, E_HARD, 0 },
	{ ICMP6_PARAM_PROB, ICMP6_PARAMPROB_HEADER, E_SOFT, EPROTO },
	{ ICMP6_PARAM_PROB, ICMP6_PARAMPROB_NEXTHEADER, E_HARD, 0 },
	{ ICMP6_TIME_EXCEEDED, ICMP6_TIME_EXCEED_TRANSIT, E_SOFT, EHOSTUNREACH },
};

static void check_error_case(struct fx *f, const struct err_case *k)
{
	int64_t to = ctr(f, errors_to_tcp(f)), soft = ctr(f, "tcp_icmp_soft_errors");
	int64_t hard = ctr(f, "tcp_icmp_hard_errors");
	struct rte_mbuf *syn;
	struct tcp_conn *c = open_to_peer(f, &syn);

	f->closed = 0;
	h6_inject(&f->h, error_about(f, k->type, k->code, 0, syn));
	rte_pktmbuf_free(syn);
	assert_int_equal(ctr(f, errors_to_tcp(f)), to + (k->want != E_NOT_TO_TCP));
	assert_int_equal(ctr(f, "tcp_icmp_soft_errors"), soft + (k->want == E_SOFT));
	assert_int_equal(ctr(f, "tcp_icmp_hard_errors"), hard + (k->want == E_HARD));
	if (k->want == E_HARD) {
		assert_int_equal(f->closed, 1);
		assert_int_equal(f->closed_err, ECONNREFUSED);
		assert_int_equal(tcp_conn_count(ts_of(f)), 0);
	} else {
		struct tcp_conn_info info;

		tcp_conn_get_info(c, &info);
		assert_int_equal(info.soft_err, k->soft_err);
		assert_int_equal(f->closed, 0);
		assert_int_equal(tcp_conn_count(ts_of(f)), 1);
		assert_int_equal(tcp_abort(c), 0);
	}
	assert_int_equal(f->h.port.ntx, 0); /* no answer to an error, no RST from SYN-SENT */
}

static void test_errors_sorted_for_tcp(void **state)
{
	struct fx *f = *state;
	const struct err_case *k = f->v6 ? cases6 : cases4;
	size_t n = f->v6 ? RTE_DIM(cases6) : RTE_DIM(cases4);

	for (size_t i = 0; i < n; i++)
		check_error_case(f, &k[i]);
}

/* Only an error quoting a TCP segment from our address reaches tcp/, and
 * tcp/ believes it only for a connection's sequence number in flight
 * (RFC 5927 4.1). */
static void test_errors_about_other_packets(void **state)
{
	struct fx *f = *state;
	uint8_t type = f->v6 ? ICMP6_DST_UNREACH : ICMP_DEST_UNREACH;
	uint8_t code = f->v6 ? ICMP6_DST_UNREACH_NOPORT : ICMP_PORT_UNREACH;
	size_t src_at = f->v6 ? 8 : 12, proto_at = f->v6 ? 6 : 9, l4 = quoted_l4(f);
	uint8_t q[256], e[256];
	struct rte_mbuf *syn;
	struct tcp_conn *c = open_to_peer(f, &syn);
	size_t n = quote_of(syn, q, sizeof(q));

	rte_pktmbuf_free(syn);
	memcpy(e, q, n);
	e[src_at + 3] ^= 0x40; /* from an address not ours */
	h6_inject(&f->h, error_msg(f, type, code, 0, e, n));
	memcpy(e, q, n);
	e[proto_at] = IPPROTO_UDP;
	h6_inject(&f->h, error_msg(f, type, code, 0, e, n));
	assert_int_equal(ctr(f, errors_to_tcp(f)), 0);
	/* Ours, but of no connection (another source port) ... */
	memcpy(e, q, n);
	e[l4 + 1] ^= 1;
	h6_inject(&f->h, error_msg(f, type, code, 0, e, n));
	assert_int_equal(ctr(f, "tcp_icmp_ignored_no_conn"), 1);
	/* ... or a sequence number never sent. */
	memcpy(e, q, n);
	e[l4 + 4] ^= 0x80;
	h6_inject(&f->h, error_msg(f, type, code, 0, e, n));
	assert_int_equal(ctr(f, "tcp_icmp_ignored_out_of_window"), 1);
	assert_int_equal(ctr(f, errors_to_tcp(f)), 2);
	assert_int_equal(ctr(f, "tcp_icmp_hard_errors"), 0);
	assert_int_equal(tcp_conn_count(ts_of(f)), 1);
	assert_int_equal(f->closed, 0);
	assert_int_equal(tcp_abort(c), 0);
}

/* A connection to the peer (MSS 1460 offered) with 4000 bytes in flight:
 * the first data segment, full (1460 or 1440 bytes), taken from the port
 * (the caller frees it); the rest cleared. */
static struct rte_mbuf *data_in_flight(struct fx *f)
{
	static const uint8_t mss1460[] = { 2, 4, 0x05, 0xb4 };
	static uint8_t data[4000];
	struct rte_mbuf *syn, *first;
	struct tcp_conn *c = open_to_peer(f, &syn);
	struct sent o = sent_tcp(f, syn);

	rte_pktmbuf_free(syn);
	h6_inject(&f->h, seg(f, SEG(.dport = o.sport, .flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
				    .seq = 5000, .ack = o.seq + 1, .opt = mss1460,
				    .olen = sizeof(mss1460))));
	assert_int_equal(ctr(f, "tcbs_established"), 1);
	h_clear_tx(&f->h); /* the handshake's ACK */
	assert_int_equal(tcp_send(c, data, sizeof(data)), (ssize_t)sizeof(data));
	us_engine_flush(f->h.e);
	assert_true(f->h.port.ntx >= 2);
	first = f->h.port.tx[0];
	assert_int_equal(sent_tcp(f, first).len, f->v6 ? 1440 : 1460);
	f->h.port.tx[0] = NULL;
	h_clear_tx(&f->h);
	return first;
}

/* RFC 1191 / RFC 8201: a too big about a data segment in flight lowers
 * the connection's MSS to what the reported MTU leaves (40 or 60 bytes
 * of headers) and what was sent goes again in smaller segments. */
static void test_too_big_lowers_mss(void **state)
{
	struct fx *f = *state;
	uint32_t hdrs = f->v6 ? 60 : 40;
	struct rte_mbuf *first = data_in_flight(f);
	struct sent o = sent_tcp(f, first);

	h6_inject(&f->h, error_about(f, f->v6 ? ICMP6_PACKET_TOO_BIG : ICMP_DEST_UNREACH,
				     f->v6 ? 0 : ICMP_FRAG_NEEDED, 1280, first));
	rte_pktmbuf_free(first);
	assert_int_equal(ctr(f, errors_to_tcp(f)), 1);
	assert_int_equal(ctr(f, "tcp_icmp_frag_needed_applied"), 1);
	if (f->v6)
		assert_int_equal(us_ip6_path_mtu(h6_net(&f->h), &h6_peer), 1280);
	assert_true(f->h.port.ntx >= 1);
	for (unsigned i = 0; i < f->h.port.ntx; i++)
		assert_true(sent_tcp(f, f->h.port.tx[i]).len <= 1280 - hdrs);
	/* From SND.UNA again, a full segment of the new size. */
	assert_int_equal(sent_tcp(f, f->h.port.tx[0]).seq, o.seq);
	assert_int_equal(sent_tcp(f, f->h.port.tx[0]).len, 1280 - hdrs);
}

/* IPv4: a frag-needed reporting less than [tcp] min_pmtu (552, Linux's
 * route/min_pmtu) takes 552, and the connection's segments leave the
 * network layer without DF (a path narrower than that fragments them). */
static void test_frag_needed_below_floor_sends_without_df(void **state)
{
	struct fx *f = *state;
	struct rte_mbuf *first = data_in_flight(f);
	struct sent o = sent_tcp(f, first);

	assert_true(o.df);
	h6_inject(&f->h, error_about(f, ICMP_DEST_UNREACH, ICMP_FRAG_NEEDED, 200, first));
	rte_pktmbuf_free(first);
	assert_int_equal(ctr(f, "tcp_pmtu_df_cleared"), 1);
	assert_true(f->h.port.ntx >= 1);
	for (unsigned i = 0; i < f->h.port.ntx; i++) {
		o = sent_tcp(f, f->h.port.tx[i]);
		assert_false(o.df);
		assert_true(o.len <= 552 - 40);
	}
	assert_int_equal(ctr(f, "ip_drop_df_too_big"), 0);
}

/* RFC 5927 4.1: a Packet Too Big quoting a sequence number not in flight,
 * or a segment of no connection, is not believed: it lowers neither the
 * MSS nor the destination's path MTU (icmp6_ptb_drop_tcp_ignored).  Had
 * it lowered the path MTU alone, the connection's full-size segments
 * would be dropped as too big for it (ip6_drop_too_big): the
 * retransmission after the RTO leaves whole. */
static void test_too_big_not_in_flight_lowers_nothing(void **state)
{
	struct fx *f = *state;
	struct rte_mbuf *first = data_in_flight(f);
	struct sent o = sent_tcp(f, first);
	size_t l4 = quoted_l4(f);
	uint8_t q[256];
	size_t n = quote_of(first, q, sizeof(q));

	rte_pktmbuf_free(first);
	q[l4 + 4] ^= 0x80; /* a sequence number never sent */
	h6_inject(&f->h, error_msg(f, ICMP6_PACKET_TOO_BIG, 0, 1280, q, n));
	q[l4 + 4] ^= 0x80;
	q[l4 + 1] ^= 1;    /* another port of ours: no connection */
	h6_inject(&f->h, error_msg(f, ICMP6_PACKET_TOO_BIG, 0, 1280, q, n));
	assert_int_equal(ctr(f, "icmp6_errors_to_tcp"), 2);
	assert_int_equal(ctr(f, "tcp_icmp_ignored_out_of_window"), 1);
	assert_int_equal(ctr(f, "tcp_icmp_ignored_no_conn"), 1);
	assert_int_equal(ctr(f, "icmp6_ptb_drop_tcp_ignored"), 2);
	assert_int_equal(ctr(f, "icmp6_ptb_lowered"), 0);
	assert_int_equal(us_ip6_path_mtu(h6_net(&f->h), &h6_peer), 1500);
	assert_int_equal(f->h.port.ntx, 0);

	h_advance(&f->h, US_SEC(3));
	assert_true(f->h.port.ntx >= 1);
	assert_int_equal(sent_tcp(f, f->h.port.tx[0]).seq, o.seq);
	assert_int_equal(sent_tcp(f, f->h.port.tx[0]).len, 1440);
	assert_int_equal(ctr(f, "ip6_drop_too_big"), 0);
	assert_int_equal(ctr(f, "tcp_icmp_frag_needed_applied"), 0);
}

/* A path MTU learned from one connection's too big is the destination's
 * (RFC 8201 4): every other connection to it follows on its next send, as
 * Linux's tcp_current_mss follows the route's MTU.  Otherwise their full
 * segments would be dropped before they leave (ip6_drop_too_big), every
 * resend too, with no router left to say why.  IPv6 only: IPv4 keeps no
 * path MTU (a frag-needed speaks to one connection). */
static void test_too_big_followed_by_other_connections(void **state)
{
	static const uint8_t mss1460[] = { 2, 4, 0x05, 0xb4 };
	static uint8_t data[4000];
	struct fx *f = *state;
	struct rte_mbuf *first = data_in_flight(f), *syn;
	struct tcp_conn *b = open_to_peer(f, &syn);
	struct sent o = sent_tcp(f, syn);
	uint32_t total = 0;

	rte_pktmbuf_free(syn);
	h6_inject(&f->h, seg(f, SEG(.dport = o.sport, .flags = RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG,
				    .seq = 9000, .ack = o.seq + 1, .opt = mss1460,
				    .olen = sizeof(mss1460))));
	assert_int_equal(ctr(f, "tcbs_established"), 2);
	h6_inject(&f->h, error_about(f, ICMP6_PACKET_TOO_BIG, 0, 1280, first));
	rte_pktmbuf_free(first);
	assert_int_equal(ctr(f, "tcp_icmp_frag_needed_applied"), 1);
	assert_int_equal(us_ip6_path_mtu(h6_net(&f->h), &h6_peer), 1280);
	h_clear_tx(&f->h);

	assert_int_equal(tcp_send(b, data, sizeof(data)), (ssize_t)sizeof(data));
	us_engine_flush(f->h.e);
	assert_true(f->h.port.ntx >= 4);
	for (unsigned i = 0; i < f->h.port.ntx; i++) {
		o = sent_tcp(f, f->h.port.tx[i]);
		assert_true(o.len <= 1280 - 60);
		total += o.len;
	}
	assert_int_equal(total, sizeof(data));
	assert_int_equal(ctr(f, "ip6_drop_too_big"), 0);
	assert_int_equal(ctr(f, "tcp_pmtu_followed"), 1);
}

/* RFC 9293 3.8.3 (MUST-20) over IPv6: at the R1-th (3rd) retransmission
 * TCP's negative advice turns the peer's REACHABLE neighbour entry STALE
 * (RFC 4861 7.3.1), so the resend that follows starts unreachability
 * detection (DELAY); the 1st and 2nd leave it REACHABLE.  IPv4's ARP side
 * is tests/unit/stack/test_tcp_lower.c's. */
static void test_r1_negative_advice_makes_neighbour_stale(void **state)
{
	struct fx *f = *state;
	struct us_net *n = h6_net(&f->h);

	rte_pktmbuf_free(data_in_flight(f));
	us_nd6_confirm(n, &h6_peer);
	assert_int_equal(us_nd6_state(n, &h6_peer), US_ND6_REACHABLE);
	while (ctr(f, "tcp_rto_fired") < 2)
		h_advance(&f->h, US_MS(10));
	assert_int_equal(us_nd6_state(n, &h6_peer), US_ND6_REACHABLE);
	assert_int_equal(ctr(f, "tcp_negative_advice"), 0);
	while (ctr(f, "tcp_rto_fired") < 3)
		h_advance(&f->h, US_MS(10));
	assert_int_equal(ctr(f, "tcp_negative_advice"), 1);
	assert_int_equal(ctr(f, "net_negative_advice"), 1);
	assert_int_equal(us_nd6_state(n, &h6_peer), US_ND6_DELAY);
	h_clear_tx(&f->h);
}

/* Each test once per family, named for it. */
#define T4(fn) { #fn " (IPv4)", fn, setup, teardown, &fx4 }
#define T6(fn) { #fn " (IPv6)", fn, setup, teardown, &fx6 }

int main(void)
{
	const struct CMUnitTest tests[] = {
		T4(test_closed_port_reset),
		T6(test_closed_port_reset),
		T6(test_segment_behind_extension_header),
		T4(test_bad_checksum_dropped),
		T6(test_bad_checksum_dropped),
		T4(test_passive_open_on_wildcard),
		T6(test_passive_open_on_wildcard),
		T4(test_errors_sorted_for_tcp),
		T6(test_errors_sorted_for_tcp),
		T4(test_errors_about_other_packets),
		T6(test_errors_about_other_packets),
		T4(test_too_big_lowers_mss),
		T6(test_too_big_lowers_mss),
		T4(test_frag_needed_below_floor_sends_without_df),
		T6(test_too_big_not_in_flight_lowers_nothing),
		T6(test_too_big_followed_by_other_connections),
		T6(test_r1_negative_advice_makes_neighbour_stale),
	};

	h_eal_init("us_test_tcp_net");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
