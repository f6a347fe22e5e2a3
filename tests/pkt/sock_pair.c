/* tests/pkt/sock_pair.c: see sock_pair.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define SP_TCPOPT_TFO 34 /* RFC 7413 4.1.1 */

struct sp sp;

/* The frame as a NIC receives it: one fresh segment (TX chains hold
 * headers and indirect payload separately). */
static struct rte_mbuf *sp_wire_copy(struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_alloc(h_pool);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *d;

	if (c != NULL && (d = rte_pktmbuf_append(c, (uint16_t)len)) != NULL) {
		const void *p = rte_pktmbuf_read(m, 0, len, d);

		if (p != d)
			memcpy(d, p, len);
	} else {
		rte_pktmbuf_free(c);
		c = NULL;
	}
	rte_pktmbuf_free(m);
	return c;
}

static const struct rte_tcp_hdr *sp_tcp_of(const struct rte_mbuf *m, int *family, int *payload);

/* The MSS option of a header, -1 when absent. */
static int sp_mss_of(const struct rte_tcp_hdr *th)
{
	const uint8_t *o = (const uint8_t *)(th + 1), *end;

	end = (const uint8_t *)th + (th->data_off >> 4) * 4u;
	while (o < end) {
		if (o[0] == 0)
			break;
		if (o[0] == 1) {
			o++;
			continue;
		}
		if (o[0] == 2 && o + 4 <= end)
			return o[2] << 8 | o[3];
		o += o[1] < 2 ? 2 : o[1];
	}
	return -1;
}

static void sp_log(struct sp_side *s, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_tcp_hdr *th;
	struct sp_seg *g;
	int family, payload;

	if (s->nlog == SP_LOG_MAX || (th = sp_tcp_of(m, &family, &payload)) == NULL)
		return;
	g = &s->log[s->nlog++];
	*g = (struct sp_seg){
		.at = sp.now, .flags = th->tcp_flags, .seq = rte_be_to_cpu_32(th->sent_seq),
		.ack = rte_be_to_cpu_32(th->recv_ack), .wnd = rte_be_to_cpu_16(th->rx_win),
		.payload = payload, .mss = sp_mss_of(th),
	};
	if (family == AF_INET) {
		const struct rte_ipv4_hdr *ip = (const void *)(eh + 1);

		g->tos = ip->type_of_service;
		g->ttl = ip->time_to_live;
	} else {
		g->ttl = ((const struct rte_ipv6_hdr *)(eh + 1))->hop_limits;
	}
}

void sp_log_clear(struct sp_side *side)
{
	side->nlog = 0;
}

unsigned sp_log_count(const struct sp_side *side, uint8_t flags, uint8_t not)
{
	unsigned n = 0;

	for (unsigned i = 0; i < side->nlog; i++)
		if ((side->log[i].flags & flags) == flags && !(side->log[i].flags & not))
			n++;
	return n;
}

int sp_log_max_payload(const struct sp_side *side)
{
	int max = 0;

	for (unsigned i = 0; i < side->nlog; i++)
		if (side->log[i].payload > max)
			max = side->log[i].payload;
	return max;
}

static uint16_t sp_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sp_side *s = ctx, *p = s->peer;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = sp_wire_copy(pkts[i]);

		assert_non_null(m);
		s->sent++;
		sp_log(s, m);
		if (rte_pktmbuf_pkt_len(m) > s->max_frame)
			s->max_frame = rte_pktmbuf_pkt_len(m);
		if (s->wire_down || p->n == SP_Q_MAX ||
		    (s->drop_every != 0 && s->sent % s->drop_every == 0)) {
			rte_pktmbuf_free(m);
			continue;
		}
		p->q[(p->head + p->n++) % SP_Q_MAX] = m;
	}
	return n;
}

static uint16_t sp_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sp_side *s = ctx;
	uint16_t k = 0;

	while (k < n && s->n > 0) {
		pkts[k++] = s->q[s->head];
		s->head = (s->head + 1) % SP_Q_MAX;
		s->n--;
	}
	return k;
}

static uint64_t sp_now(void *ctx)
{
	(void)ctx;
	return sp.now;
}

static void sp_poll(void *ctx)
{
	(void)ctx;
	sp.now += US_MS(1);
	us_engine_poll(sp.a.e, sp.now);
	us_engine_poll(sp.b.e, sp.now);
}

static void sp_side_start(struct sp_side *s, unsigned slot, uint32_t ip, uint8_t mac_last,
			  void (*cfg_hook)(struct us_config *cfg))
{
	struct us_sock_driver drv = { .now_ns = sp_now, .poll = sp_poll };

	h_config(&s->cfg);
	s->cfg.addr = ip;
	s->cfg.gateway = 0;
	if (cfg_hook != NULL)
		cfg_hook(&s->cfg);
	s->ops = (struct us_port_ops){
		.rx = sp_rx, .tx = sp_tx, .ctx = s, .mtu = 1500,
		.mac = {{ 0x02, 0, 0, 0, 0, mac_last }},
	};
	s->e = us_engine_create(slot, &s->cfg, h_pool, &s->ops, sp.now);
	assert_non_null(s->e);
	s->tab = us_sock_table_create(s->e, slot, 256, &drv);
	assert_non_null(s->tab);
}

void sp_setup(void (*cfg_hook)(struct us_config *cfg))
{
	memset(&sp, 0, sizeof(sp));
	sp.now = 1000000000ull;
	sp.a.peer = &sp.b;
	sp.b.peer = &sp.a;
	sp_side_start(&sp.a, 0, SP_A_IP, 1, cfg_hook);
	sp_side_start(&sp.b, 1, SP_B_IP, 2, cfg_hook);
	sp_on(&sp.a);
}

static void sp_side_stop(struct sp_side *s)
{
	us_sock_table_destroy(s->tab);
	s->tab = NULL;
}

void sp_teardown(void)
{
	/* Closes first (FINs/RSTs go out), a little time for them, then the
	 * engines go with whatever is left (TIME-WAIT TCBs, timers). */
	sp_side_stop(&sp.a);
	sp_side_stop(&sp.b);
	for (unsigned i = 0; i < 10; i++) {
		sp.now += US_MS(1);
		us_engine_poll(sp.a.e, sp.now);
		us_engine_poll(sp.b.e, sp.now);
	}
	us_engine_destroy(sp.a.e);
	us_engine_destroy(sp.b.e);
	for (struct sp_side *s = &sp.a; s != NULL; s = s == &sp.a ? &sp.b : NULL)
		for (; s->n > 0; s->n--, s->head = (s->head + 1) % SP_Q_MAX)
			rte_pktmbuf_free(s->q[s->head]);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

void sp_on(struct sp_side *s)
{
	us_sock_table_bind_thread(s->tab);
}

void sp_run(unsigned ms)
{
	for (unsigned i = 0; i < ms; i++)
		sp_poll(NULL);
}

struct sockaddr_in sp_addr(uint32_t ip, uint16_t port)
{
	return (struct sockaddr_in){
		.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(ip),
	};
}

const struct us_in6 sp_a6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 1 } };
const struct us_in6 sp_b6 = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 } };

void sp_cfg_ip6(struct us_config *cfg)
{
	cfg->ip6_enable = true;
	cfg->addr6 = cfg->addr == SP_A_IP ? sp_a6 : sp_b6;
	cfg->prefixlen6 = 64;
	cfg->has_addr6 = true;
	cfg->hop_limit = 64;
	cfg->dad = false;
}

struct sockaddr_in6 sp_addr6(const struct us_in6 *ip, uint16_t port)
{
	struct sockaddr_in6 s = { .sin6_family = AF_INET6, .sin6_port = htons(port) };

	memcpy(&s.sin6_addr, ip->b, sizeof(ip->b));
	return s;
}

struct sockaddr_in6 sp_mapped(uint32_t ip, uint16_t port)
{
	struct us_in6 m = us_in6_of_v4(ip);

	return sp_addr6(&m, port);
}

struct us_in6 sp_in6_of(const struct sockaddr_in6 *s)
{
	struct us_in6 a;

	memcpy(a.b, &s->sin6_addr, sizeof(a.b));
	return a;
}

int sp_test_setup(void **state)
{
	(void)state;
	sp_setup(NULL);
	return 0;
}

int sp_test_setup6(void **state)
{
	(void)state;
	sp_setup(sp_cfg_ip6);
	return 0;
}

int sp_test_teardown(void **state)
{
	(void)state;
	sp_teardown();
	return 0;
}

void sp_set_int(int fd, int level, int name, int v)
{
	assert_int_equal(us_setsockopt(fd, level, name, &v, sizeof(v)), 0);
}

int sp_get_int(int fd, int level, int name)
{
	int v = -12345;
	socklen_t len = sizeof(v);

	assert_int_equal(us_getsockopt(fd, level, name, &v, &len), 0);
	assert_int_equal(len, sizeof(v));
	return v;
}

int sp_listen_b(uint16_t port, void (*prep)(int fd))
{
	struct sockaddr_in any = sp_addr(0, port);
	int fd;

	sp_on(&sp.b);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd > 0);
	assert_int_equal(us_bind(fd, SA(any), sizeof(any)), 0);
	if (prep != NULL)
		prep(fd);
	assert_int_equal(us_listen(fd, 8), 0);
	sp_on(&sp.a);
	return fd;
}

int sp_connect_a(uint16_t port, void (*prep)(int fd))
{
	struct sockaddr_in to = sp_addr(SP_B_IP, port);
	int fd;

	sp_on(&sp.a);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd > 0);
	if (prep != NULL)
		prep(fd);
	errno = 0;
	assert_int_equal(us_connect(fd, SA(to), sizeof(to)), -1);
	assert_int_equal(errno, EINPROGRESS);
	return fd;
}

void sp_pair(int l, uint16_t port, void (*cprep)(int fd), int *c, int *s)
{
	*c = sp_connect_a(port, cprep);
	assert_int_equal(sp_wait_events(&sp.a, *c, US_EPOLLOUT, 100), US_EPOLLOUT);
	assert_int_equal(sp_wait_events(&sp.b, l, US_EPOLLIN, 100), US_EPOLLIN);
	sp_on(&sp.b);
	*s = us_accept(l, NULL, NULL);
	assert_true(*s > 0);
	sp_on(&sp.a);
}

size_t sp_drain_b(int s)
{
	static char buf[65536];
	size_t got = 0;
	ssize_t n;

	sp_on(&sp.b);
	while ((n = us_recv(s, buf, sizeof(buf), 0)) > 0)
		got += (size_t)n;
	sp_on(&sp.a);
	return got;
}

void sp_close3(int c, int s, int l)
{
	sp_on(&sp.a);
	if (c >= 0)
		us_close(c);
	sp_on(&sp.b);
	if (s >= 0)
		us_close(s);
	if (l >= 0)
		us_close(l);
	sp_on(&sp.a);
}

uint32_t sp_wait_events(struct sp_side *side, int fd, uint32_t interest, int ms)
{
	struct us_epoll_event ev = { .events = interest, .data.fd = fd }, out[4];
	int ep, n;

	sp_on(side);
	ep = us_epoll_create1(0);
	assert_true(ep > 0);
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev), 0);
	n = us_epoll_wait(ep, out, 4, ms);
	assert_int_equal(us_close(ep), 0);
	sp_on(&sp.a);
	assert_true(n == 0 || n == 1);
	if (n == 1)
		assert_int_equal(out[0].data.fd, fd);
	return n == 1 ? out[0].events : 0;
}

/* The TCP header of frame m and its payload length; NULL if m is not TCP
 * (our segments carry no IPv4 options or IPv6 extension headers). */
static const struct rte_tcp_hdr *sp_tcp_of(const struct rte_mbuf *m, int *family, int *payload)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);
	const struct rte_tcp_hdr *th;

	if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const void *)(eh + 1);
		unsigned ihl = (ip->version_ihl & 0xf) * 4u;

		if (ip->next_proto_id != IPPROTO_TCP)
			return NULL;
		th = (const void *)((const uint8_t *)ip + ihl);
		*family = AF_INET;
		*payload = rte_be_to_cpu_16(ip->total_length) - (int)ihl;
	} else if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6)) {
		const struct rte_ipv6_hdr *ip6 = (const void *)(eh + 1);

		if (ip6->proto != IPPROTO_TCP)
			return NULL;
		th = (const void *)(ip6 + 1);
		*family = AF_INET6;
		*payload = rte_be_to_cpu_16(ip6->payload_len);
	} else {
		return NULL;
	}
	*payload -= (th->data_off >> 4) * 4;
	return th;
}

struct sp_syn sp_syn_waiting(const struct sp_side *side)
{
	struct sp_syn r = { .cookie_len = -1 };

	for (unsigned i = 0; i < side->n && !r.found; i++) {
		const struct rte_tcp_hdr *th = sp_tcp_of(side->q[(side->head + i) % SP_Q_MAX],
							 &r.family, &r.payload);
		const uint8_t *o, *end;

		if (th == NULL || !(th->tcp_flags & RTE_TCP_SYN_FLAG))
			continue;
		r.found = true;
		end = (const uint8_t *)th + (th->data_off >> 4) * 4u;
		for (o = (const uint8_t *)(th + 1); o < end;) {
			if (o[0] == 0 || o[0] == 1) { /* EOL, NOP */
				o++;
				continue;
			}
			if (o[0] == SP_TCPOPT_TFO)
				r.cookie_len = o[1] - 2;
			o += o[1] < 2 ? 2 : o[1];
		}
	}
	return r;
}
