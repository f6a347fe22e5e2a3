/* tests/pkt/harness.c: see harness.h.  Segments are built and checked with
 * the harness's own header layout and checksum code, not tcp/'s. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_byteorder.h>
#include <rte_eal.h>
#include <rte_ip.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tests/common/test_eal.h"
#include "tests/pkt/harness.h"

static struct rte_mempool *g_pool;
static struct pkt_t *g_current;
static int g_family = 4;
static struct us_in6 g_local, g_peer;

#define PKT_FAIL(file, line, ...) do { \
	print_error("%s:%d: ", (file), (line)); \
	print_error(__VA_ARGS__); \
	print_error("\n"); \
	_fail((file), (line)); \
} while (0)

int pkt_family(void)
{
	return g_family;
}

uint32_t pkt_default_mss(void)
{
	return g_family == 6 ? 1220 : 536;
}

const struct us_in6 *pkt_local_ip(void)
{
	return &g_local;
}

const struct us_in6 *pkt_peer_ip(void)
{
	return &g_peer;
}

int pkt_group_setup(void **state)
{
	const char *fam = getenv("US_PKT_FAMILY");
	static const struct us_in6 l6 = { .b = { 0xfd, [15] = 1 } }, p6 = { .b = { 0xfd, [15] = 2 } };

	(void)state;
	g_family = fam != NULL && strcmp(fam, "6") == 0 ? 6 : 4;
	g_local = g_family == 6 ? l6 : us_in6_of_v4(PKT_LOCAL_IP4);
	g_peer = g_family == 6 ? p6 : us_in6_of_v4(PKT_PEER_IP4);
	if (g_family == 6)
		print_message("[ family  ] IPv6\n");
	if (test_eal_start("pkt") < 0)
		return -1;
	g_pool = rte_pktmbuf_pool_create("pkt_pool", 4095, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 (int)rte_socket_id());
	return g_pool ? 0 : -1;
}

int pkt_group_teardown(void **state)
{
	(void)state;
	rte_mempool_free(g_pool);
	g_pool = NULL;
	rte_eal_cleanup();
	return 0;
}

static void cap_drain(struct pkt_t *t)
{
	while (t->ncap > 0) {
		rte_pktmbuf_free(t->cap[t->cap_head].m);
		t->cap_head = (t->cap_head + 1) % PKT_CAP_MAX;
		t->ncap--;
	}
}

static void pkt_free(struct pkt_t *t)
{
	if (t->ts)
		tcp_stack_destroy(t->ts);
	cap_drain(t);
	free(t->rx);
	free(t->wheel);
	free(t);
}

int pkt_teardown(void **state)
{
	(void)state;
	if (g_current != NULL) {
		pkt_free(g_current);
		g_current = NULL;
	}
	return 0;
}

uint8_t pkt_pattern(uint32_t off)
{
	return (uint8_t)(off * 131u + (off >> 8) + 7u);
}

/* Ones'-complement sum, written independently of tcp/. */
static uint32_t sum16(const uint8_t *p, size_t n, uint32_t sum)
{
	for (size_t i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	return sum;
}

/* Over the family's pseudo-header: IPv4's (RFC 9293 3.1) or IPv6's (RFC
 * 8200 8.1), its addresses as they lie in the header. */
static uint16_t tcp_csum(const uint8_t *seg, size_t n, const struct us_in6 *src,
			 const struct us_in6 *dst)
{
	unsigned from = us_in6_is_v4mapped(src) ? 12 : 0;
	uint32_t sum = 6 + (uint32_t)n;

	sum = sum16(src->b + from, 16 - from, sum);
	sum = sum16(dst->b + from, 16 - from, sum);
	sum = sum16(seg, n, sum);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum; /* 0xffff when the checksum field is right */
}

static void output_cb(void *ctx, struct rte_mbuf *m, const struct tcp_out_addr *a)
{
	struct pkt_t *t = ctx;

	if (t->ncap == PKT_CAP_MAX) {
		t->cap_overflow = true;
		rte_pktmbuf_free(m);
		return;
	}
	t->cap[(t->cap_head + t->ncap) % PKT_CAP_MAX] = (struct pkt_cap){ m, *a };
	t->ncap++;
}

static void on_accept(void *ctx, struct tcp_conn *c)
{
	struct pkt_t *t = ctx;

	t->n_accept++;
	t->conn = c;
}

void pkt_app_read(struct pkt_t *t, const char *file, int line)
{
	uint8_t buf[4096];
	ssize_t n = -EAGAIN;

	while (t->conn != NULL && (n = tcp_recv(t->conn, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++)
			if (buf[i] != pkt_pattern((uint32_t)t->rx_len + (uint32_t)i))
				PKT_FAIL(file, line, "received byte %zu is wrong", t->rx_len + (size_t)i);
		if (t->rx_len + (size_t)n > PKT_RX_MAX)
			PKT_FAIL(file, line, "more than %u bytes received", PKT_RX_MAX);
		memcpy(t->rx + t->rx_len, buf, (size_t)n);
		t->rx_len += (size_t)n;
	}
	if (t->conn != NULL && n == 0)
		t->eof = true;
}

static void on_readable(void *ctx, struct tcp_conn *c)
{
	struct pkt_t *t = ctx;

	t->n_readable++;
	if (!t->auto_read || c != t->conn)
		return;
	pkt_app_read(t, __FILE__, __LINE__);
	if (t->eof && t->close_on_eof) {
		tcp_close(c);
		t->conn = NULL;
	}
}

static void on_writable(void *ctx, struct tcp_conn *c)
{
	struct pkt_t *t = ctx;

	(void)c;
	t->n_writable++;
}

static void on_closed(void *ctx, struct tcp_conn *c, int err)
{
	struct pkt_t *t = ctx;

	t->n_closed++;
	t->closed_err = err;
	if (t->conn == c)
		t->conn = NULL;
}

static void on_connected(void *ctx, struct tcp_conn *c)
{
	struct pkt_t *t = ctx;

	t->n_connected++;
	t->conn = c;
}

void pkt_config_defaults(struct tcp_config *cfg)
{
	tcp_config_defaults(cfg);
	cfg->loss_detection = TCP_LOSS_DUPACK;
	cfg->tlp = false;
	cfg->undo = false;
	cfg->profile = TCP_PROFILE_RFC;
}

struct pkt_t *pkt_start(const struct tcp_config *cfg)
{
	struct pkt_t *t = calloc(1, sizeof(*t));

	assert_non_null(t);
	assert_null(g_current);
	assert_int_equal(rte_mempool_in_use_count(g_pool), 0);
	g_current = t;
	t->pool = g_pool;
	t->wheel = calloc(1, sizeof(*t->wheel));
	t->rx = malloc(PKT_RX_MAX);
	assert_non_null(t->wheel);
	assert_non_null(t->rx);
	t->now = US_SEC(1000); /* nonzero: the ISN clock term is exercised */
	us_timer_wheel_init(t->wheel, US_MS(1), t->now);
	if (cfg)
		t->cfg = *cfg;
	else {
		pkt_config_defaults(&t->cfg);
		t->cfg.wscale = t->cfg.sack = t->cfg.timestamps = false;
	}
	/* MSS 1460 in both families (tcp/: MTU less 40 or 60). */
	t->env = (struct tcp_env){
		.pool = g_pool, .wheel = t->wheel, .local_ip = us_in6_of_v4(PKT_LOCAL_IP4),
		.local_ip6 = { .b = { 0xfd, [15] = 1 } }, .mtu = g_family == 6 ? 1520 : 1500,
		.l4_csum_by_ip = false, .output = output_cb, .ctx = t,
	};
	t->ts = tcp_stack_create(&t->env, &t->cfg);
	assert_non_null(t->ts);
	t->cb = (struct tcp_callbacks){
		.on_accept = on_accept, .on_readable = on_readable, .on_writable = on_writable,
		.on_closed = on_closed, .on_connected = on_connected,
	};
	t->local_port = PKT_LOCAL_PORT;
	t->peer_port = PKT_PEER_PORT;
	return t;
}

int pkt_listen(struct pkt_t *t)
{
	return tcp_listen(t->ts, PKT_LOCAL_IP, PKT_LOCAL_PORT, 0, &t->cb, t);
}

ssize_t pkt_app_send(struct pkt_t *t, size_t n)
{
	uint8_t *buf = malloc(n ? n : 1);
	ssize_t rc;

	assert_non_null(buf);
	for (size_t i = 0; i < n; i++)
		buf[i] = pkt_pattern((uint32_t)(t->app_sent + i));
	rc = tcp_send(t->conn, buf, n);
	if (rc > 0)
		t->app_sent += (size_t)rc;
	free(buf);
	return rc;
}

uint32_t pkt_ts_now(const struct pkt_t *t)
{
	return (uint32_t)(t->now / US_MS(1));
}

void pkt_advance(struct pkt_t *t, uint32_t ms)
{
	/* One tick at a time, so timer callbacks see "now" at their tick. */
	for (uint32_t i = 0; i < ms; i++) {
		t->now += US_MS(1);
		us_timer_run(t->wheel, t->now);
	}
}

static size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
	return 4;
}

/* The options a script sets, each NOP-padded to 4 bytes (like Linux). */
static size_t build_opts(struct pkt_t *t, const struct pkt_seg *s, uint8_t *o)
{
	size_t n = 0;

	if (s->mss != PKT_ANY && s->mss > 0) {
		o[n++] = 2, o[n++] = 4;
		o[n++] = (uint8_t)(s->mss >> 8), o[n++] = (uint8_t)s->mss;
	}
	if (s->sack_perm > 0)
		o[n++] = 1, o[n++] = 1, o[n++] = 4, o[n++] = 2;
	if (s->ts_val != PKT_ANY) {
		o[n++] = 1, o[n++] = 1, o[n++] = 8, o[n++] = 10;
		n += put32(o + n, (uint32_t)s->ts_val);
		n += put32(o + n, s->ts_ecr == PKT_ANY ? 0 : (uint32_t)s->ts_ecr);
	}
	if (s->ws >= 0)
		o[n++] = 1, o[n++] = 3, o[n++] = 3, o[n++] = (uint8_t)s->ws;
	if (s->nsack > 0) {
		uint32_t base = s->abs ? 0 : t->our_isn;

		o[n++] = 1, o[n++] = 1, o[n++] = 5, o[n++] = (uint8_t)(2 + 8 * s->nsack);
		for (int i = 0; i < s->nsack; i++) {
			n += put32(o + n, base + s->sack[i][0]);
			n += put32(o + n, base + s->sack[i][1]);
		}
	}
	return n;
}

static const struct us_in6 *seg_peer(const struct pkt_seg *s)
{
	return s->peer_ip != NULL ? s->peer_ip : PKT_PEER_IP;
}

static const struct us_in6 *seg_local(const struct pkt_seg *s)
{
	return s->local_ip != NULL ? s->local_ip : PKT_LOCAL_IP;
}

/* Builds the TCP segment for s in a flat buffer; returns its length. */
static size_t build_flat(struct pkt_t *t, const struct pkt_seg *s, uint8_t *buf,
			 uint32_t seq, uint32_t ack, uint8_t flags, uint32_t plen)
{
	uint8_t *th = buf, opt[60] = { 0 };
	size_t optlen = 0, hlen;
	uint32_t data_off = seq + !!(flags & TH_SYN) - t->peer_isn - 1;
	uint16_t win = (uint16_t)(s->win == PKT_ANY ? 65535 : s->win);

	if (s->opts != NULL) {
		memcpy(opt, s->opts, s->optlen);
		optlen = s->optlen;
	} else {
		optlen = build_opts(t, s, opt);
	}
	hlen = 20 + ((optlen + 3) & ~(size_t)3);
	memset(buf, 0, hlen);
	*(uint16_t *)(th + 0) = rte_cpu_to_be_16((uint16_t)(s->sport ? s->sport : t->peer_port));
	*(uint16_t *)(th + 2) = rte_cpu_to_be_16((uint16_t)(s->dport ? s->dport : t->local_port));
	*(uint32_t *)(th + 4) = rte_cpu_to_be_32(seq);
	*(uint32_t *)(th + 8) = rte_cpu_to_be_32(ack);
	th[12] = (uint8_t)((s->doff == PKT_ANY ? (int)(hlen / 4) : s->doff) << 4);
	th[13] = flags;
	*(uint16_t *)(th + 14) = rte_cpu_to_be_16(win);
	*(uint16_t *)(th + 18) = rte_cpu_to_be_16((uint16_t)(s->urp == PKT_ANY ? 0 : s->urp));
	memcpy(th + 20, opt, optlen);
	for (uint32_t i = 0; i < plen; i++)
		th[hlen + i] = s->data ? (uint8_t)s->data[i] : pkt_pattern(data_off + i);
	uint16_t ck = (uint16_t)~tcp_csum(th, hlen + plen, seg_peer(s), seg_local(s));
	if (s->bad_csum)
		ck ^= 0x5a5a;
	*(uint16_t *)(th + 16) = rte_cpu_to_be_16(ck);
	return hlen + plen;
}

static struct rte_mbuf *flat_to_mbuf(struct pkt_t *t, const uint8_t *buf, size_t n,
				     size_t first)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(t->pool);
	size_t done;

	assert_non_null(m);
	first = RTE_MIN(first, n);
	first = RTE_MIN(first, (size_t)rte_pktmbuf_tailroom(m));
	uint8_t *p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)first);
	assert_non_null(p);
	memcpy(p, buf, RTE_MIN(first, n));
	/* The rest in as many mbufs as it takes (a coalesced segment is a
	 * chain of several MSS). */
	for (done = first; done < n;) {
		struct rte_mbuf *m2 = rte_pktmbuf_alloc(t->pool);
		size_t k;

		assert_non_null(m2);
		k = RTE_MIN(n - done, (size_t)rte_pktmbuf_tailroom(m2));
		p = (uint8_t *)rte_pktmbuf_append(m2, (uint16_t)k);
		assert_non_null(p);
		memcpy(p, buf + done, k);
		done += k;
		assert_int_equal(rte_pktmbuf_chain(m, m2), 0);
	}
	return m;
}

void pkt_inject(struct pkt_t *t, struct pkt_seg s, const char *file, int line)
{
	uint8_t flags = (uint8_t)(s.flags == PKT_ANY ? (int)TH_ACK : s.flags);
	uint32_t seq = s.seq == PKT_ANY ? t->peer_nxt : (uint32_t)s.seq;
	uint32_t ack = 0, plen, end;
	uint8_t *buf;
	size_t n, first;
	struct rte_mbuf *m;

	if (s.ack != PKT_ANY)
		ack = s.abs ? (uint32_t)s.ack : t->our_isn + (uint32_t)s.ack;
	else if (flags & TH_ACK)
		ack = t->our_isn + t->our_max;
	if ((flags & TH_SYN) && !t->peer_isn_known) {
		t->peer_isn = seq;
		t->peer_isn_known = true;
		t->peer_nxt = seq;
	}
	plen = (uint32_t)(s.len != PKT_ANY ? s.len : (s.data ? (int32_t)strlen(s.data) : 0));
	buf = malloc(60 + plen);
	if (buf == NULL)
		PKT_FAIL(file, line, "out of memory");
	n = build_flat(t, &s, buf, seq, ack, flags, plen);
	if (s.cut > n)
		PKT_FAIL(file, line, "cut %u of %zu bytes", s.cut, n);
	n -= s.cut;
	first = s.split ? n - plen + s.split : n;
	m = flat_to_mbuf(t, buf, n, first);
	free(buf);
	if (s.csum_good_flag)
		m->ol_flags |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	end = seq + plen + !!(flags & TH_SYN) + !!(flags & TH_FIN);
	if (!(flags & TH_RST) && SEQ_GT(end, t->peer_nxt))
		t->peer_nxt = end;
	tcp_input(t->ts, m, seg_peer(&s), seg_local(&s));
}

struct pkt_out {
	uint32_t seq, rel, ack, plen;
	uint16_t sport, dport, win, urp;
	uint8_t flags;
	int mss; /* 0 absent */
	int ws;  /* PKT_ABSENT when absent */
	int sack_perm;
	bool has_ts;
	uint32_t ts_val, ts_ecr;
	int nsack;
	uint32_t sack[4][2];
	const uint8_t *payload;
};

static void describe(const struct pkt_out *o, char *d, size_t dn)
{
	snprintf(d, dn, "[%s%s%s%s%s] rel seq %u ack %u win %u mss %d len %u ws %d ts %d sack %d",
		 (o->flags & TH_SYN) ? "S" : "", (o->flags & TH_FIN) ? "F" : "",
		 (o->flags & TH_RST) ? "R" : "", (o->flags & TH_PSH) ? "P" : "",
		 (o->flags & TH_ACK) ? "." : "", o->rel, o->ack, o->win, o->mss, o->plen, o->ws,
		 o->has_ts, o->nsack);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void parse_opt(const uint8_t *p, struct pkt_out *o, const char *file, int line)
{
	if (p[0] == 3 && p[1] == 3)
		o->ws = p[2];
	else if (p[0] == 4 && p[1] == 2)
		o->sack_perm = 1;
	else if (p[0] == 8 && p[1] == 10) {
		o->has_ts = true;
		o->ts_val = get32(p + 2);
		o->ts_ecr = get32(p + 6);
	} else if (p[0] == 5) {
		if (p[1] < 10 || (p[1] - 2) % 8 != 0 || p[1] > 2 + 8 * 4)
			PKT_FAIL(file, line, "bad SACK option length %u", p[1]);
		o->nsack = (p[1] - 2) / 8;
		for (int k = 0; k < o->nsack; k++) {
			o->sack[k][0] = get32(p + 2 + 8 * k);
			o->sack[k][1] = get32(p + 6 + 8 * k);
		}
	} else if (p[0] == 2 && p[1] != 4) {
		PKT_FAIL(file, line, "bad MSS option length %u", p[1]);
	}
}

/* Parses a captured segment; checks what must always hold (the addresses
 * s names, the family's defaults when s is NULL). */
static void parse_out(struct pkt_t *t, const struct pkt_cap *cap, const struct pkt_seg *s,
		      uint8_t *buf, struct pkt_out *o, const char *file, int line)
{
	const struct us_in6 *local = s != NULL ? seg_local(s) : PKT_LOCAL_IP;
	const struct us_in6 *peer = s != NULL ? seg_peer(s) : PKT_PEER_IP;
	size_t n = cap->m->pkt_len, hlen;
	const uint8_t *p = rte_pktmbuf_read(cap->m, 0, (uint32_t)n, buf);

	if (p != buf)
		memcpy(buf, p, n);
	if (!us_in6_eq(&cap->a.src, local) || !us_in6_eq(&cap->a.dst, peer) || n < 20)
		PKT_FAIL(file, line, "bad addresses or length %zu", n);
	/* RFC 6437: an IPv6 segment carries a label, never 0. */
	if (!us_in6_is_v4mapped(peer) && (cap->a.flow_label == 0 || cap->a.flow_label > 0xfffff))
		PKT_FAIL(file, line, "flow label %#x", cap->a.flow_label);
	if (rte_pktmbuf_headroom(cap->m) < TCP_HEADROOM_NEEDED)
		PKT_FAIL(file, line, "headroom %u", rte_pktmbuf_headroom(cap->m));
	hlen = (size_t)(buf[12] >> 4) * 4;
	if (hlen < 20 || hlen > n)
		PKT_FAIL(file, line, "bad data offset %zu", hlen);
	/* A segment of several MSS gets its checksums where it is cut. */
	if (cap->m->ol_flags & RTE_MBUF_F_TX_TCP_SEG) {
		if (cap->m->tso_segsz == 0 || n - hlen <= cap->m->tso_segsz ||
		    (n - hlen) % cap->m->tso_segsz != 0)
			PKT_FAIL(file, line, "segmentation: %zu bytes in pieces of %u", n - hlen,
				 (unsigned)cap->m->tso_segsz);
	} else if (tcp_csum(buf, n, local, peer) != 0xffff) {
		PKT_FAIL(file, line, "bad TCP checksum");
	}
	o->sport = rte_be_to_cpu_16(*(uint16_t *)buf);
	o->dport = rte_be_to_cpu_16(*(uint16_t *)(buf + 2));
	o->seq = rte_be_to_cpu_32(*(uint32_t *)(buf + 4));
	o->ack = rte_be_to_cpu_32(*(uint32_t *)(buf + 8));
	o->flags = buf[13];
	o->win = rte_be_to_cpu_16(*(uint16_t *)(buf + 14));
	o->urp = rte_be_to_cpu_16(*(uint16_t *)(buf + 18));
	o->plen = (uint32_t)(n - hlen);
	o->payload = buf + hlen;
	o->mss = 0;
	o->ws = PKT_ABSENT;
	o->sack_perm = 0;
	o->has_ts = false;
	o->nsack = 0;
	for (size_t i = 20; i < hlen;) {
		if (buf[i] == 0) {
			/* RFC 9293 3.1 (MUST-69): what follows EOL is zero padding. */
			for (size_t k = i; k < hlen; k++)
				if (buf[k] != 0)
					PKT_FAIL(file, line, "option byte %zu after EOL not zero", k);
			break;
		}
		if (buf[i] == 1) {
			i++;
			continue;
		}
		if (i + 1 >= hlen || buf[i + 1] < 2 || i + buf[i + 1] > hlen)
			PKT_FAIL(file, line, "malformed options");
		if (buf[i] == 2 && buf[i + 1] == 4)
			o->mss = buf[i + 2] << 8 | buf[i + 3];
		parse_opt(buf + i, o, file, line);
		i += buf[i + 1];
	}
	if (!t->isn_known && (o->flags & TH_SYN)) {
		t->our_isn = o->seq;
		t->isn_known = true;
	}
	if (t->local_port == 0 && (o->flags & TH_SYN))
		t->local_port = o->sport;
	o->rel = o->seq - t->our_isn;
}

static void check_opts(const struct pkt_seg *s, const struct pkt_out *o, const char *d,
		       const char *file, int line)
{
	if (s->ws != PKT_ANY && o->ws != s->ws)
		PKT_FAIL(file, line, "wscale %d, want %d: %s", o->ws, s->ws, d);
	if (s->sack_perm != PKT_ANY && o->sack_perm != s->sack_perm)
		PKT_FAIL(file, line, "sack-permitted %d, want %d: %s", o->sack_perm, s->sack_perm, d);
	if (s->ts_val == PKT_ABSENT && o->has_ts)
		PKT_FAIL(file, line, "timestamps present: %s", d);
	if (s->ts_val >= 0 && (!o->has_ts || o->ts_val != (uint32_t)s->ts_val))
		PKT_FAIL(file, line, "TSval %u, want %lld: %s", o->ts_val, (long long)s->ts_val, d);
	if (s->ts_ecr >= 0 && (!o->has_ts || o->ts_ecr != (uint32_t)s->ts_ecr))
		PKT_FAIL(file, line, "TSecr %u, want %lld: %s", o->ts_ecr, (long long)s->ts_ecr, d);
	if (s->nsack != PKT_ANY && o->nsack != s->nsack)
		PKT_FAIL(file, line, "%d SACK blocks, want %d: %s", o->nsack, s->nsack, d);
	for (int k = 0; s->nsack > 0 && k < s->nsack; k++)
		if ((s->sack[k][0] | s->sack[k][1]) != 0 &&
		    (o->sack[k][0] != s->sack[k][0] || o->sack[k][1] != s->sack[k][1]))
			PKT_FAIL(file, line, "SACK block %d [%u, %u), want [%u, %u): %s", k,
				 o->sack[k][0], o->sack[k][1], s->sack[k][0], s->sack[k][1], d);
}

static void check_out(struct pkt_t *t, const struct pkt_seg *s, const struct pkt_out *o,
		      const char *file, int line)
{
	char d[200];
	uint32_t want_seq = s->abs ? (uint32_t)s->seq : t->our_isn + (uint32_t)s->seq;
	uint32_t off = o->rel - 1 + !!(o->flags & TH_SYN);

	describe(o, d, sizeof(d));
	if (o->sport != (s->sport ? s->sport : t->local_port) ||
	    o->dport != (s->dport ? s->dport : t->peer_port))
		PKT_FAIL(file, line, "ports %u->%u in %s", o->sport, o->dport, d);
	if (s->flags != PKT_ANY && o->flags != (uint8_t)s->flags)
		PKT_FAIL(file, line, "flags 0x%02x, want 0x%02x: %s", o->flags, s->flags, d);
	if (s->seq != PKT_ANY && o->seq != want_seq)
		PKT_FAIL(file, line, "seq (rel %u), want %s%lld: %s", o->rel,
			 s->abs ? "abs " : "rel ", (long long)s->seq, d);
	if (s->ack != PKT_ANY && o->ack != (uint32_t)s->ack)
		PKT_FAIL(file, line, "ack %u, want %lld: %s", o->ack, (long long)s->ack, d);
	if (s->win != PKT_ANY && o->win != (uint16_t)s->win)
		PKT_FAIL(file, line, "window %u, want %d: %s", o->win, s->win, d);
	if (s->mss != PKT_ANY && o->mss != s->mss)
		PKT_FAIL(file, line, "mss %d, want %d: %s", o->mss, s->mss, d);
	if (s->urp != PKT_ANY && o->urp != (uint16_t)s->urp)
		PKT_FAIL(file, line, "urgent pointer %u, want %d: %s", o->urp, s->urp, d);
	check_opts(s, o, d, file, line);
	if (s->len != PKT_ANY && o->plen != (uint32_t)s->len)
		PKT_FAIL(file, line, "payload %u bytes, want %d: %s", o->plen, s->len, d);
	for (uint32_t i = 0; i < o->plen; i++) {
		uint8_t want = s->data ? (uint8_t)s->data[i] : pkt_pattern(off + i);

		if (o->payload[i] != want)
			PKT_FAIL(file, line, "payload byte %u is 0x%02x, want 0x%02x: %s", i,
				 o->payload[i], want, d);
	}
	if (!(o->flags & TH_RST)) {
		uint32_t end = o->rel + o->plen + !!(o->flags & TH_SYN) + !!(o->flags & TH_FIN);

		if (SEQ_GT(end, t->our_max))
			t->our_max = end;
	}
}

struct rte_mbuf *pkt_expect_keep(struct pkt_t *t, struct pkt_seg s, const char *file, int line)
{
	struct pkt_cap cap;
	struct pkt_out o;
	uint8_t *buf;

	if (t->cap_overflow)
		PKT_FAIL(file, line, "capture queue overflowed");
	if (t->ncap == 0)
		PKT_FAIL(file, line, "expected a segment, none was sent");
	/* Peek: on failure the segment stays queued and teardown frees it. */
	cap = t->cap[t->cap_head];
	buf = malloc(cap.m->pkt_len + 1);
	if (buf == NULL)
		PKT_FAIL(file, line, "out of memory");
	parse_out(t, &cap, &s, buf, &o, file, line);
	check_out(t, &s, &o, file, line);
	free(buf);
	t->cap_head = (t->cap_head + 1) % PKT_CAP_MAX;
	t->ncap--;
	return cap.m;
}

void pkt_expect(struct pkt_t *t, struct pkt_seg s, const char *file, int line)
{
	rte_pktmbuf_free(pkt_expect_keep(t, s, file, line));
}

void pkt_expect_nothing(struct pkt_t *t, const char *file, int line)
{
	if (t->ncap > 0) {
		uint8_t *buf = malloc(t->cap[t->cap_head].m->pkt_len + 1);
		struct pkt_out o;
		char d[200];

		assert_non_null(buf);
		parse_out(t, &t->cap[t->cap_head], NULL, buf, &o, file, line);
		describe(&o, d, sizeof(d));
		free(buf);
		PKT_FAIL(file, line, "expected nothing, %u segment(s) sent, first %s", t->ncap, d);
	}
}

void pkt_finish(struct pkt_t *t, unsigned tcbs, const char *file, int line)
{
	char why[96];

	if (t->cap_overflow)
		PKT_FAIL(file, line, "capture queue overflowed");
	pkt_expect_nothing(t, file, line);
	if (tcp_conn_count(t->ts) != tcbs)
		PKT_FAIL(file, line, "%u TCBs alive, want %u", tcp_conn_count(t->ts), tcbs);
	if (tcp_state_gauges_check(t->ts, why, sizeof(why)) != 0)
		PKT_FAIL(file, line, "state gauges disagree with the table: %s", why);
	tcp_stack_destroy(t->ts);
	t->ts = NULL;
	if (rte_mempool_in_use_count(t->pool) != 0)
		PKT_FAIL(file, line, "%u mbufs still in use after destroy",
			 rte_mempool_in_use_count(t->pool));
	if (t->wheel->armed != 0)
		PKT_FAIL(file, line, "%u timers still armed after destroy", t->wheel->armed);
	g_current = NULL;
	pkt_free(t);
}

void pkt_establish(struct pkt_t *t, const char *file, int line)
{
	if (pkt_listen(t) != 0)
		PKT_FAIL(file, line, "tcp_listen failed");
	pkt_inject(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460), file, line);
	pkt_expect(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460), file, line);
	pkt_inject(t, SEG(.flags = TH_ACK, .seq = 1001, .ack = 1), file, line);
	if (t->n_accept != 1 || t->conn == NULL)
		PKT_FAIL(file, line, "connection not accepted");
}

void pkt_establish_rtt(struct pkt_t *t, uint32_t rtt_ms, bool sack, const char *file,
		       int line)
{
	if (pkt_listen(t) != 0)
		PKT_FAIL(file, line, "tcp_listen failed");
	pkt_inject(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460,
			  .sack_perm = sack ? 1 : PKT_ANY), file, line);
	pkt_expect(t, SEG(.flags = TH_SYN | TH_ACK, .sack_perm = sack ? 1 : 0), file, line);
	pkt_advance(t, rtt_ms);
	pkt_inject(t, SEG(.seq = 1001, .ack = 1), file, line);
	if (t->conn == NULL || t->conn->mss != 1460)
		PKT_FAIL(file, line, "connection not established with MSS 1460");
}

void pkt_establish_ts(struct pkt_t *t, const char *file, int line)
{
	if (pkt_listen(t) != 0)
		PKT_FAIL(file, line, "tcp_listen failed");
	pkt_inject(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .ts_val = 100), file, line);
	pkt_expect(t, SEG(.flags = TH_SYN | TH_ACK, .ts_val = pkt_ts_now(t), .ts_ecr = 100), file,
		   line);
	pkt_inject(t, SEG(.seq = 1001, .ack = 1, .ts_val = 101, .ts_ecr = pkt_ts_now(t)), file,
		   line);
	if (t->conn == NULL || !t->conn->ts_ok)
		PKT_FAIL(file, line, "connection not established with timestamps");
}

struct tfo_opt pkt_tfo_of(struct rte_mbuf *m)
{
	uint8_t buf[60];
	const uint8_t *p = rte_pktmbuf_read(m, 0, 20, buf);
	unsigned hlen = (unsigned)(p[12] >> 4) * 4;
	struct tfo_opt o;

	assert_true(hlen >= 20 && hlen <= 60);
	p = rte_pktmbuf_read(m, 0, hlen, buf);
	tfo_opt_find(p + 20, hlen - 20, &o);
	rte_pktmbuf_free(m);
	return o;
}
