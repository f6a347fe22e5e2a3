/* tests/sim/world.c: see world.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include <pcap/pcap.h>

#include <rte_byteorder.h>
#include <rte_icmp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "nic/impair.h"
#include "stack/base/rand.h"
#include "stack/engine/handoff.h"
#include "stack/sock/sock_table.h"
#include "stack/sock/socket_priv.h"
#include "tcp/tcp.h"
#include "tests/sim/world.h"

#define SIM_ROUTER_IP 0x0a0000feu /* 10.0.0.254: the router that reports MTUs */
#define SIM_ROUNDS_MAX 100000u    /* rounds at one instant before "livelock" */
#define SIM_T0 US_SEC(1000)       /* not zero: catches "0 means unset" */
/* After the applications are done, what their timers may still take:
 * retransmissions backed off to rto_max (data_retries of them), keepalive,
 * TIME-WAIT.  Computed per world in drain_bound. */
#define SIM_HORIZON US_SEC(4 * 3600) /* a world that has not finished by then fails */

static const struct rte_ether_addr router_mac = {{ 0x02, 0, 0, 0, 0, 0xfe }};
/* fd00:5e::fe: the router's IPv6 address (the stacks' prefix, plan.c) */
static const struct us_in6 router_ip6 = { .b = { 0xfd, 0x00, 0x00, 0x5e, [15] = 0xfe } };

void sim_fail(struct sim_world *w, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(w->fail, sizeof(w->fail), "seed %lu event %lu (t=%.6fs): ",
			 (unsigned long)w->plan.seed, (unsigned long)w->n.events,
			 (w->now - w->t0) / 1e9);

	va_start(ap, fmt);
	vsnprintf(w->fail + n, sizeof(w->fail) - (size_t)n, fmt, ap);
	va_end(ap);
	longjmp(w->fail_jmp, 1);
}

struct sockaddr_in sim_addr(uint32_t ip, uint16_t port)
{
	return (struct sockaddr_in){ .sin_family = AF_INET, .sin_port = htons(port),
				     .sin_addr.s_addr = htonl(ip) };
}

socklen_t sim_sockaddr(int domain, const struct us_in6 *a, uint16_t port,
		       struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	if (domain == AF_INET) {
		*(struct sockaddr_in *)out = sim_addr(us_in6_v4(a), port);
		return sizeof(struct sockaddr_in);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	memcpy(&s6->sin6_addr, a->b, sizeof(a->b));
	return sizeof(*s6);
}

void sim_sockaddr_parse(const struct sockaddr_storage *sa, struct us_in6 *a, uint16_t *port)
{
	if (sa->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;

		*a = us_in6_of_v4(ntohl(s4->sin_addr.s_addr));
		*port = ntohs(s4->sin_port);
		return;
	}
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;

	memcpy(a->b, &s6->sin6_addr, sizeof(a->b));
	*port = ntohs(s6->sin6_port);
}

void sim_bind(struct sim_world *w, unsigned stack, unsigned eng)
{
	w->st[stack].touched = true;
	us_sock_table_bind_thread(w->st[stack].eng[eng].tab);
}

/* Digest: FNV-1a over every frame the stacks send, with when and who. */
static void digest_bytes(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		*h = (*h ^ b[i]) * 0x100000001b3ull;
}

static void digest_frame(struct sim_world *w, const struct sim_eng *g, const struct rte_mbuf *m)
{
	uint64_t rel = w->now - w->t0;
	uint32_t who = g->st->i << 8 | g->k;

	digest_bytes(&w->digest, &rel, sizeof(rel));
	digest_bytes(&w->digest, &who, sizeof(who));
	digest_bytes(&w->digest, rte_pktmbuf_mtod(m, const void *), rte_pktmbuf_data_len(m));
}

static struct rte_mempool *wire_pool(const struct sim_world *w)
{
	return w->opts.wire_pool != NULL ? w->opts.wire_pool : w->pool;
}

/* The frame as a NIC receives it: one segment (TX chains hold headers and
 * indirect payload apart), in pool p. */
static struct rte_mbuf *wire_copy(struct sim_world *w, struct rte_mempool *p, struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_alloc(p);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *d;

	if (c == NULL || (d = rte_pktmbuf_append(c, (uint16_t)len)) == NULL) {
		/* The pool is the world's memory: a NIC without buffers drops. */
		rte_pktmbuf_free(c);
		rte_pktmbuf_free(m);
		w->n.drop_no_mbuf++;
		return NULL;
	}
	const void *src = rte_pktmbuf_read(m, 0, len, d);

	if (src != d)
		memcpy(d, src, len);
	rte_pktmbuf_free(m);
	return c;
}

/* Links */

static void nic_receive(struct sim_world *w, unsigned j, struct rte_mbuf *m)
{
	struct sim_stack *st = &w->st[j];
	uint16_t q = 0;
	struct sim_rxq *rx;

	if (!st->up) {
		w->n.drop_down++;
		rte_pktmbuf_free(m);
		return;
	}
	/* A NIC receives into its host's memory: none left, the frame is lost. */
	if (w->opts.wire_pool != NULL && (m = wire_copy(w, w->pool, m)) == NULL)
		return;
	if (st->cfg.engine_count > 1 &&
	    us_steer_model_classify_frame(&st->nic, rte_pktmbuf_mtod(m, const void *),
					  rte_pktmbuf_data_len(m), &q) < 0)
		q = 0;
	rx = &st->eng[q].rx;
	if (rx->n == (w->opts.rxq_len ? w->opts.rxq_len : SIM_RXQ)) {
		w->n.drop_rxq++;
		st->drop_rxq++;
		rte_pktmbuf_free(m);
		return;
	}
	rx->m[(rx->head + rx->n++) % SIM_RXQ] = m;
}

/* ICMP "fragmentation needed" (RFC 792, RFC 1191 4) from the router to
 * stack i about frame m, which it quotes (IP header + 8 bytes). */
static struct rte_mbuf *frag_needed(struct sim_world *w, unsigned i, const struct rte_mbuf *m,
				    uint16_t mtu)
{
	const struct rte_ipv4_hdr *oip = rte_pktmbuf_mtod_offset(m, const void *, RTE_ETHER_HDR_LEN);
	size_t qlen = (size_t)(oip->version_ihl & 0xf) * 4 + 8;
	size_t ilen = sizeof(struct rte_ipv4_hdr) + sizeof(struct rte_icmp_hdr) + qlen;
	struct rte_mbuf *r = rte_pktmbuf_alloc(wire_pool(w));
	uint8_t *d;

	if (r == NULL || (d = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)(RTE_ETHER_HDR_LEN + ilen))) == NULL) {
		rte_pktmbuf_free(r);
		w->n.drop_no_mbuf++;
		return NULL;
	}
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)d;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	struct rte_icmp_hdr *ic = (struct rte_icmp_hdr *)(ip + 1);

	eh->dst_addr = w->st[i].mac;
	eh->src_addr = router_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)ilen);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_ICMP;
	ip->src_addr = rte_cpu_to_be_32(SIM_ROUTER_IP);
	ip->dst_addr = rte_cpu_to_be_32(sim_ip(i));
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	memset(ic, 0, sizeof(*ic));
	ic->icmp_type = 3; /* destination unreachable */
	ic->icmp_code = 4; /* fragmentation needed and DF set */
	ic->icmp_seq_nb = rte_cpu_to_be_16(mtu); /* RFC 1191: next-hop MTU in the low half */
	memcpy(ic + 1, oip, qlen);
	ic->icmp_cksum = (uint16_t)~rte_raw_cksum(ic, sizeof(*ic) + qlen);
	return r;
}

/* ICMPv6 Packet Too Big (RFC 4443 3.2) from the router to stack i about
 * frame m, quoting as much of it as a packet of the minimum MTU holds
 * (RFC 4443 2.4 (c)). */
static struct rte_mbuf *packet_too_big(struct sim_world *w, unsigned i, const struct rte_mbuf *m,
				       uint16_t mtu)
{
	const struct rte_ipv6_hdr *oip = rte_pktmbuf_mtod_offset(m, const void *, RTE_ETHER_HDR_LEN);
	size_t qlen = RTE_MIN((size_t)rte_pktmbuf_data_len(m) - RTE_ETHER_HDR_LEN,
			      (size_t)SIM_IP6_MTU_MIN - sizeof(struct rte_ipv6_hdr) - 8);
	size_t len = RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv6_hdr) + 8 + qlen;
	struct rte_mbuf *r = rte_pktmbuf_alloc(wire_pool(w));
	uint8_t *d;

	if (r == NULL || (d = (uint8_t *)rte_pktmbuf_append(r, (uint16_t)len)) == NULL) {
		rte_pktmbuf_free(r);
		w->n.drop_no_mbuf++;
		return NULL;
	}
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)d;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eh + 1);
	uint8_t *ic = (uint8_t *)(ip + 1);
	rte_be32_t be_mtu = rte_cpu_to_be_32(mtu);
	uint16_t ck;

	eh->dst_addr = w->st[i].mac;
	eh->src_addr = router_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	memset(ip, 0, sizeof(*ip));
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28);
	ip->payload_len = rte_cpu_to_be_16((uint16_t)(8 + qlen));
	ip->proto = IPPROTO_ICMPV6;
	ip->hop_limits = 64;
	memcpy(ip->src_addr, router_ip6.b, sizeof(ip->src_addr));
	memcpy(ip->dst_addr, oip->src_addr, sizeof(ip->dst_addr));
	memset(ic, 0, 8);
	ic[0] = 2; /* Packet Too Big, code 0 */
	memcpy(ic + 4, &be_mtu, sizeof(be_mtu));
	memcpy(ic + 8, oip, qlen);
	ck = rte_ipv6_udptcp_cksum(ip, ic);
	memcpy(ic + 2, &ck, sizeof(ck));
	return r;
}

/* A frame over the path MTU i->j: dropped, and the router tells the
 * sender (IPv4: only when DF is set).  False when it fits. */
static bool path_mtu_drop(struct sim_world *w, unsigned i, unsigned j, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const void *);
	bool v4 = eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	bool v6 = eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	uint16_t mtu = v4 ? w->path_mtu[i][j] : v6 ? w->path_mtu6[i][j] : 0;
	struct rte_mbuf *r = NULL;

	if (mtu == 0 || rte_pktmbuf_data_len(m) <= RTE_ETHER_HDR_LEN + mtu)
		return false;
	w->n.drop_mtu++;
	if (v6)
		r = packet_too_big(w, i, m, mtu);
	else if (((const struct rte_ipv4_hdr *)(eh + 1))->fragment_offset &
		 rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG))
		r = frag_needed(w, i, m, mtu);
	if (r != NULL)
		nic_impair_enqueue(w->link[j][i], &r, 1, w->now);
	rte_pktmbuf_free(m);
	return true;
}

/* The path i->j: partition, loss burst, MTU, then the emulator. */
static void link_send(struct sim_world *w, unsigned i, unsigned j, struct rte_mbuf *m)
{
	if (w->partitioned[i][j]) {
		w->n.drop_partition++;
		rte_pktmbuf_free(m);
		return;
	}
	if (w->loss_pct[i][j] > 0 && sim_pct(&w->rng, w->loss_pct[i][j])) {
		w->n.drop_loss_fault++;
		rte_pktmbuf_free(m);
		return;
	}
	if (path_mtu_drop(w, i, j, m))
		return;
	nic_impair_enqueue(w->link[i][j], &m, 1, w->now);
}

/* The switch: by destination MAC; broadcasts and multicasts (IPv6's
 * 33:33 groups: Neighbor Discovery) to every other stack, whose NIC
 * filters them. */
static void switch_forward(struct sim_world *w, unsigned i, struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const void *);

	if (rte_is_multicast_ether_addr(&eh->dst_addr)) {
		for (unsigned j = 0; j < w->plan.nstacks; j++) {
			struct rte_mbuf *c;

			if (j == i || w->plan.stack[j].off)
				continue;
			c = rte_pktmbuf_copy(m, wire_pool(w), 0, UINT32_MAX);
			if (c == NULL)
				w->n.drop_no_mbuf++;
			else
				link_send(w, i, j, c);
		}
		rte_pktmbuf_free(m);
		return;
	}
	for (unsigned j = 0; j < w->plan.nstacks; j++)
		if (j != i && !w->plan.stack[j].off && rte_is_same_ether_addr(&eh->dst_addr, &w->st[j].mac)) {
			link_send(w, i, j, m);
			return;
		}
	rte_pktmbuf_free(m); /* to nobody */
}

static unsigned links_deliver(struct sim_world *w)
{
	struct rte_mbuf *out[64];
	unsigned moved = 0;

	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned j = 0; j < w->plan.nstacks; j++) {
			uint16_t n;

			if (w->link[i][j] == NULL)
				continue;
			while ((n = nic_impair_dequeue(w->link[i][j], out, 64, w->now)) > 0) {
				for (uint16_t k = 0; k < n; k++)
					nic_receive(w, j, out[k]);
				moved += n;
			}
		}
	return moved;
}

/* Ports */

static uint16_t port_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sim_eng *g = ctx;
	struct sim_world *w = g->st->w;

	/* Even a stream sent a byte per segment, each acknowledged, stays
	 * below this; an ACK storm does not. */
	if (w->n.frames > w->frame_budget)
		sim_fail(w, "frame storm: %lu frames sent, the plan's streams explain %lu at most",
			 (unsigned long)w->n.frames, (unsigned long)w->frame_budget);

	for (uint16_t k = 0; k < n; k++) {
		struct rte_mbuf *m = wire_copy(w, wire_pool(w), pkts[k]);

		if (m == NULL)
			continue;
		w->n.frames++;
		digest_frame(w, g, m);
		if (w->pcap != NULL) {
			struct pcap_pkthdr h = { .caplen = rte_pktmbuf_data_len(m),
						 .len = rte_pktmbuf_data_len(m) };
			uint64_t rel = w->now - w->t0;

			h.ts.tv_sec = (time_t)(rel / US_SEC(1));
			h.ts.tv_usec = (suseconds_t)(rel % US_SEC(1) / 1000);
			pcap_dump((u_char *)w->pcap, &h, rte_pktmbuf_mtod(m, const u_char *));
		}
		if (!g->st->up) { /* a crashing stack's last words never leave */
			w->n.drop_down++;
			rte_pktmbuf_free(m);
			continue;
		}
		switch_forward(w, g->st->i, m);
	}
	/* Not progress at this instant: every link delays what it carries
	 * (at least half its drawn delay of 20 us or more). */
	return n;
}

static uint16_t port_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct sim_eng *g = ctx;
	struct sim_rxq *q = &g->rx;
	struct sim_world *w = g->st->w;
	uint16_t k = 0;

	if (g->busy_until > w->now)
		return 0; /* the engine is still processing its last burst */
	for (; k < n && q->n > 0; k++, q->n--, q->head = (q->head + 1) % SIM_RXQ) {
		pkts[k] = q->m[q->head];
		sim_rx_check_frame(w, g->st->i, pkts[k]);
	}
	if (w->opts.rx_frame_ns != 0)
		g->busy_until = w->now + k * w->opts.rx_frame_ns;
	return k;
}

static uint64_t drv_now(void *ctx)
{
	return ((struct sim_world *)ctx)->now;
}

/* The applications never block: a call that would wait is a bug here,
 * except an epoll wait with timeout 0 (its one poll is the world's next
 * round) from applications that say they use it. */
static void drv_poll(void *ctx)
{
	struct sim_world *w = ctx;

	if (!w->app->epoll)
		sim_fail(w, "an application call blocked (the simulated applications never wait)");
}

/* Stacks */

static void stack_config(struct sim_world *w, struct sim_stack *st)
{
	const struct sim_stack_plan *sp = &w->plan.stack[st->i];
	struct us_config *c = &st->cfg;

	memset(c, 0, sizeof(*c));
	c->nic.mtu = w->plan.mtu;
	c->nic.gso = sp->gso;
	c->nic.gro = sp->gro;
	c->addr = st->ip;
	c->prefixlen = 24;
	c->ttl = 64;
	c->arp_timeout_s = 300;
	c->arp_pending_max = 16;
	c->arp_retry_ms = 1000;
	c->engine_count = sp->engines;
	c->tcp = sp->tcp;
	if (w->plan.ip6) {
		c->ip6_enable = true;
		c->addr6 = sim_stack_addr(st->i, 6);
		c->prefixlen6 = 64;
		c->has_addr6 = true;
		c->hop_limit = 64;
		c->dad = w->plan.dad;
	}
}

static unsigned socks_open(const struct sim_eng *g)
{
	return g->tab->cap - g->tab->nfree;
}

static void stack_start(struct sim_world *w, unsigned i)
{
	struct sim_stack *st = &w->st[i];
	unsigned n = w->plan.stack[i].engines;
	struct us_sock_driver drv = { .now_ns = drv_now, .poll = drv_poll, .ctx = w };
	char name[32];

	stack_config(w, st);
	if (n > 1) {
		static unsigned seq; /* ring names are process-wide */

		snprintf(name, sizeof(name), "sim%u", seq++);
		st->ho = us_handoff_create(n, &st->sym, name);
		if (st->ho == NULL)
			sim_fail(w, "us_handoff_create: %s", strerror(errno));
	}
	for (unsigned k = 0; k < n; k++) {
		struct sim_eng *g = &st->eng[k];

		g->st = st;
		g->k = k;
		g->slot = i * SIM_ENGINES_MAX + k;
		g->rx.head = g->rx.n = 0;
		g->busy_until = 0;
		g->ops = (struct us_port_ops){ .rx = port_rx, .tx = port_tx, .ctx = g,
					       .mtu = w->plan.mtu, .mac = st->mac };
		g->e = us_engine_create(k, &st->cfg, w->pool, &g->ops, w->now);
		if (g->e == NULL)
			sim_fail(w, "us_engine_create: %s", strerror(errno));
		if (st->ho != NULL && us_handoff_attach(g->e, st->ho) != 0)
			sim_fail(w, "us_handoff_attach failed");
		g->tab = us_sock_table_create(g->e, g->slot, w->opts.fds ? w->opts.fds : SIM_FDS, &drv);
		if (g->tab == NULL)
			sim_fail(w, "us_sock_table_create: %s", strerror(errno));
		g->timers0 = us_engine_wheel(g->e)->armed;
	}
	st->up = true;
	/* With [ip6], as us_init: engine 0 announces and runs DAD, the
	 * others take its verdict (stacks_dad). */
	for (unsigned k = 0; k < (w->plan.ip6 ? 1 : n); k++)
		us_engine_announce(st->eng[k].e);
	st->dad_pending = w->plan.ip6 && w->plan.dad;
	w->app->stack_up(w, i);
	for (unsigned k = 0; k < n; k++)
		st->eng[k].socks0 = socks_open(&st->eng[k]);
}

const char *const sim_ctr_names[SIM_CTRS] = {
#define SIM_X_NAME(name) #name,
	SIM_STACK_COUNTERS(SIM_X_NAME)
#undef SIM_X_NAME
};

static void gather_counters(struct sim_world *w, unsigned i)
{
	for (unsigned k = 0; k < w->plan.stack[i].engines; k++) {
		const struct us_engine *e = w->st[i].eng[k].e;

		for (unsigned c = 0; c < SIM_CTRS; c++) {
			int64_t v = us_engine_counter(e, sim_ctr_names[c]);

			if (v < 0)
				sim_fail(w, "no engine counter %s", sim_ctr_names[c]);
			w->n.ctr[c] += (uint64_t)v;
		}
		w->n.rec_episodes[w->plan.stack[i].tcp.recovery] +=
			(uint64_t)us_engine_counter(e, "tcp_recovery_episodes");
	}
}

/* All state gone at once, as in a crash: sockets, TCBs, queued frames. */
static void stack_stop(struct sim_world *w, unsigned i)
{
	struct sim_stack *st = &w->st[i];

	st->up = false;
	st->dad_pending = false;
	w->app->stack_down(w, i);
	gather_counters(w, i);
	for (unsigned k = 0; k < w->plan.stack[i].engines; k++) {
		struct sim_eng *g = &st->eng[k];

		if (g->tab != NULL)
			us_sock_table_destroy(g->tab);
		g->tab = NULL;
	}
	for (unsigned k = 0; k < w->plan.stack[i].engines; k++) {
		struct sim_eng *g = &st->eng[k];

		us_engine_destroy(g->e);
		g->e = NULL;
		for (; g->rx.n > 0; g->rx.n--, g->rx.head = (g->rx.head + 1) % SIM_RXQ)
			rte_pktmbuf_free(g->rx.m[g->rx.head]);
	}
	if (st->ho != NULL)
		us_handoff_destroy(st->ho);
	st->ho = NULL;
}

static void stack_init(struct sim_world *w, unsigned i)
{
	struct sim_stack *st = &w->st[i];
	uint8_t key[US_RSS_KEY_LEN];
	unsigned n = w->plan.stack[i].engines;

	st->w = w;
	st->i = i;
	st->ip = sim_ip(i);
	st->mac = (struct rte_ether_addr){{ 0x02, 0, 0, 0, 0, (uint8_t)(i + 1) }};
	if (us_rss_init(&st->sym, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, (uint16_t)n) != 0)
		sim_fail(w, "us_rss_init");
	/* The NIC's key: the owner rule's, or one that disagrees (every
	 * other flow then crosses the hand-off rings). */
	for (unsigned b = 0; b < sizeof(key); b++)
		key[b] = sim_pct(&w->rng, 50) ? us_rss_key_symmetric[b] : (uint8_t)sim_u64(&w->rng);
	if (us_rss_init(&st->nic_rss, key, sizeof(key), 128, (uint16_t)n) != 0 ||
	    us_steer_model_init(&st->nic, &st->nic_rss, 0) != 0)
		sim_fail(w, "the NIC model");
	stack_start(w, i);
}

/* Faults */

static void fault_apply(struct sim_world *w, const struct sim_fault_plan *f, bool on)
{
	switch (f->kind) {
	case SIM_F_PARTITION:
		w->partitioned[f->a][f->b] = w->partitioned[f->b][f->a] = on;
		break;
	case SIM_F_LOSS:
		w->loss_pct[f->a][f->b] = w->loss_pct[f->b][f->a] = on ? f->loss_pct : 0;
		break;
	case SIM_F_MTU:
		/* The path MTU stays low once dropped (a route change): what
		 * PMTU discovery must cope with for the rest of the world. */
		if (on)
			w->path_mtu[f->a][f->b] = w->path_mtu[f->b][f->a] = f->mtu;
		if (on && w->plan.ip6)
			w->path_mtu6[f->a][f->b] = w->path_mtu6[f->b][f->a] = f->mtu6;
		break;
	case SIM_F_RESTART:
		if (on) {
			stack_stop(w, f->a);
			w->n.restarts++;
		} else {
			w->st[f->a].epoch++;
			stack_start(w, f->a);
		}
		break;
	default:
		break;
	}
	w->progress = true;
}

static void faults_step(struct sim_world *w)
{
	for (unsigned k = 0; k < w->plan.nfaults; k++) {
		const struct sim_fault_plan *f = &w->plan.fault[k];
		uint64_t at = w->t0 + f->at_ns;

		if (f->off || w->fault_over[k])
			continue;
		if (!w->fault_on[k] && w->now >= at) {
			/* A restart of a stack already down waits for it. */
			if (f->kind == SIM_F_RESTART && !w->st[f->a].up)
				continue;
			w->fault_on[k] = true;
			fault_apply(w, f, true);
		} else if (w->fault_on[k] && w->now >= at + f->dur_ns) {
			w->fault_on[k] = false;
			w->fault_over[k] = true;
			fault_apply(w, f, false);
		}
	}
}

static uint64_t faults_next(const struct sim_world *w)
{
	uint64_t next = UINT64_MAX;

	for (unsigned k = 0; k < w->plan.nfaults; k++) {
		const struct sim_fault_plan *f = &w->plan.fault[k];
		uint64_t t = w->t0 + f->at_ns + (w->fault_on[k] ? f->dur_ns : 0);

		/* A restart due while its stack is down waits for the stack to
		 * come back, which another fault's end brings. */
		if (f->kind == SIM_F_RESTART && !w->fault_on[k] && !w->st[f->a].up)
			continue;
		if (!f->off && !w->fault_over[k] && t < next)
			next = t;
	}
	return next;
}

/* The loop */

/* Frames an engine can take now (not busy with its last burst). */
static bool any_rx_pending(const struct sim_world *w)
{
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++)
			if (w->st[i].eng[k].rx.n > 0 && w->st[i].eng[k].busy_until <= w->now)
				return true;
	return false;
}

/* A stack whose engines may have work in a later round of an instant: a
 * frame on a queue, a timer due, or the stack was touched (an application
 * called into it, or one of its engines took frames: the hand-off rings
 * and migration messages go to its siblings).  The first round polls
 * every engine, so each engine's clock is the instant's before any
 * application calls into it. */
static bool stack_due(struct sim_world *w, unsigned i)
{
	struct sim_stack *st = &w->st[i];

	if (st->touched)
		return true;
	for (unsigned k = 0; k < w->plan.stack[i].engines; k++)
		if ((st->eng[k].rx.n > 0 && st->eng[k].busy_until <= w->now) ||
		    us_engine_next_timer(st->eng[k].e) <= w->now)
			return true;
	return false;
}

static void stack_poll(struct sim_world *w, unsigned i)
{
	struct sim_stack *st = &w->st[i];

	st->touched = false;
	for (unsigned k = 0; k < w->plan.stack[i].engines; k++)
		if (us_engine_poll(st->eng[k].e, w->now) > 0) {
			w->progress = true;
			st->touched = true;
		}
}

/* DAD done on engine 0 of a stack: the other engines take its verdict and
 * the stack's clients may start (as us_init returns).  No other node has
 * the address, so a duplicate is a bug. */
static void stacks_dad(struct sim_world *w)
{
	char dup[US_IN6_STRLEN] = "";

	for (unsigned i = 0; i < w->plan.nstacks; i++) {
		struct sim_stack *st = &w->st[i];
		int rc;

		if (!st->up || !st->dad_pending)
			continue;
		rc = us_engine_dad_status(st->eng[0].e, dup, sizeof(dup));
		if (rc == -EAGAIN)
			continue;
		if (rc != 0)
			sim_fail(w, "stack %u: DAD found %s in use, which no other stack has", i, dup);
		for (unsigned k = 1; k < w->plan.stack[i].engines; k++)
			us_engine_adopt_addrs(st->eng[k].e, st->eng[0].e);
		st->dad_pending = false;
		st->touched = true;
		w->progress = true;
	}
}

/* Every engine polls and every application runs until nothing moves. */
static void instant(struct sim_world *w)
{
	for (unsigned rounds = 0;; rounds++) {
		if (rounds == SIM_ROUNDS_MAX)
			sim_fail(w, "livelock: %u rounds at one instant", rounds);
		w->progress = false;
		w->n.events++;
		faults_step(w);
		if (links_deliver(w) > 0)
			w->progress = true;
		for (unsigned i = 0; i < w->plan.nstacks; i++)
			if (w->st[i].up && (rounds == 0 || stack_due(w, i)))
				stack_poll(w, i);
		stacks_dad(w);
		w->app->step(w);
		if (w->opts.check_every <= 1 || w->n.events % w->opts.check_every == 0)
			sim_check_event(w);
		if (w->cut.max_events != 0 && w->n.events >= w->cut.max_events)
			longjmp(w->fail_jmp, 2);
		if (!w->progress && !any_rx_pending(w)) {
			sim_rx_check_settle(w);
			return;
		}
	}
}

static uint64_t next_time(struct sim_world *w)
{
	uint64_t next = faults_next(w), t;

	for (unsigned i = 0; i < w->plan.nstacks; i++) {
		for (unsigned j = 0; j < w->plan.nstacks; j++)
			if (w->link[i][j] != NULL && (t = nic_impair_next_ns(w->link[i][j])) < next)
				next = t;
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			const struct sim_eng *g = &w->st[i].eng[k];

			if ((t = us_engine_next_timer(g->e)) < next)
				next = t;
			if (g->rx.n > 0 && g->busy_until > w->now && g->busy_until < next)
				next = g->busy_until;
		}
	}
	if ((t = w->app->next(w)) < next)
		next = t;
	return next;
}

static double rel_s(const struct sim_world *w, uint64_t t)
{
	return t == UINT64_MAX ? -1 : (double)(t - w->t0) / 1e9;
}

/* Which engine's timer names the past, for a failure report. */
static const char *timers_due(struct sim_world *w)
{
	static char out[256];
	size_t n = 0;

	out[0] = 0;
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			uint64_t t = us_engine_next_timer(w->st[i].eng[k].e);

			if (t <= w->now && n < sizeof(out) - 64)
				n += (size_t)snprintf(out + n, sizeof(out) - n, "stack %u engine %u timer at %.6f; ",
						      i, k, rel_s(w, t));
		}
	return n ? out : "no timer in the past";
}

bool sim_run_until(struct sim_world *w, bool (*until)(const struct sim_world *), uint64_t limit)
{
	unsigned still = 0;

	for (;;) {
		uint64_t next;

		instant(w);
		if (until(w))
			return true;
		next = next_time(w);
		if (next >= limit)
			return false;
		/* Every source names a time after now once the instant is
		 * over; one that keeps naming the past would spin the world. */
		if (next <= w->now && ++still == 1000)
			sim_fail(w, "time stands still: the next event is due at %.6fs (faults %.6f, applications %.6f, %s)",
				 (next - w->t0) / 1e9, rel_s(w, faults_next(w)), rel_s(w, w->app->next(w)),
				 timers_due(w));
		if (next > w->now)
			still = 0;
		w->now = next > w->now ? next : w->now + US_US(1);
	}
}

static bool apps_done(const struct sim_world *w)
{
	return w->app->done(w) && faults_next(w) == UINT64_MAX;
}

static bool no_tcbs(const struct sim_world *w)
{
	return sim_check_tcbs(w) == 0;
}

/* How long TCBs may outlive their applications: the longest chain of
 * timers a connection can still run (RTOs backed off to rto_max for
 * data_retries, then keepalive's probes, then TIME-WAIT), doubled. */
static uint64_t drain_bound(const struct sim_world *w)
{
	uint64_t worst = 0;

	for (unsigned i = 0; i < w->plan.nstacks; i++) {
		const struct tcp_config *t = &w->plan.stack[i].tcp;
		uint64_t b = US_MS((uint64_t)(t->data_retries + 1) * t->rto_max_ms) +
			     US_MS(t->keepalive_idle_ms + (uint64_t)t->keepalive_probes * t->keepalive_intvl_ms) +
			     US_MS(t->time_wait_ms);

		if (b > worst)
			worst = b;
	}
	return 2 * worst;
}

static bool never(const struct sim_world *w)
{
	(void)w;
	return false;
}

/* The per-state gauges every engine keeps against a walk of its table. */
static void check_gauges(struct sim_world *w)
{
	char why[128];

	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++)
			if (tcp_state_gauges_check(us_engine_tcp(w->st[i].eng[k].e), why, sizeof(why)) != 0)
				sim_fail(w, "stack %u engine %u: %s", i, k, why);
}

/* With every TCB gone, every recovery episode a stack entered has ended
 * through the loss module: a full ACK, an RTO, the connection's end or an
 * undo.
 * Summed over the stack's engines (a connection may move between them). */
static void check_episodes(struct sim_world *w)
{
	for (unsigned i = 0; i < w->plan.nstacks; i++) {
		uint64_t in = 0, out = 0;

		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			const struct tcp_stats *st = tcp_stack_stats(us_engine_tcp(w->st[i].eng[k].e));

			in += st->recovery_episodes;
			out += st->recovery_exits + st->recovery_rto + st->recovery_dropped +
			       st->recovery_undone;
		}
		if (in != out)
			sim_fail(w, "stack %u: %lu recovery episodes entered, %lu ended", i,
				 (unsigned long)in, (unsigned long)out);
	}
}

/* The end: the applications have closed everything; every TCB must go
 * within the bound its timers give; then the listeners close and the
 * stacks must be back to their baseline (timers) before they are
 * destroyed and the pool is empty again. */
static void world_end(struct sim_world *w)
{
	w->app->finish(w);
	check_gauges(w);
	if (!sim_run_until(w, no_tcbs, w->now + drain_bound(w))) {
		sim_check_print_tcbs(w, stderr, w->opts.print_tcbs_max);
		sim_fail(w, "%u TCBs left past the bound their timers give", sim_check_tcbs(w));
	}
	check_episodes(w);
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			if (socks_open(&w->st[i].eng[k]) != w->st[i].eng[k].socks0)
				sim_fail(w, "stack %u engine %u: %u descriptors open at the end, %u at start",
					 i, k, socks_open(&w->st[i].eng[k]), w->st[i].eng[k].socks0);
			us_sock_table_destroy(w->st[i].eng[k].tab);
			w->st[i].eng[k].tab = NULL;
			w->st[i].eng[k].lfd[0] = w->st[i].eng[k].lfd[1] = -1;
			w->st[i].eng[k].ufd[0] = w->st[i].eng[k].ufd[1] = -1;
		}
	/* Past the ARP entries' lifetime (and the neighbour cache's timers):
	 * only the engines' own timers stay. */
	sim_run_until(w, never, w->now + US_SEC(400));
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned k = 0; w->st[i].up && k < w->plan.stack[i].engines; k++) {
			const struct sim_eng *g = &w->st[i].eng[k];
			unsigned armed = us_engine_wheel(g->e)->armed;

			if (armed != g->timers0)
				sim_fail(w, "stack %u engine %u: %u timers armed at the end, %u at start",
					 i, k, armed, g->timers0);
		}
}

static void world_free(struct sim_world *w)
{
	for (unsigned i = 0; i < w->plan.nstacks; i++) {
		struct sim_stack *st = &w->st[i];

		if (w->plan.stack[i].off)
			continue;
		if (st->up)
			stack_stop(w, i);
		us_steer_model_free(&st->nic);
	}
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned j = 0; j < w->plan.nstacks; j++)
			if (w->link[i][j] != NULL) {
				nic_impair_destroy(w->link[i][j]);
				w->link[i][j] = NULL;
			}
	sim_check_free(w);
	sim_rx_check_free(w);
}

int sim_world_run(struct sim_world *w, const struct sim_plan *plan, const struct sim_cut *cut,
		  struct rte_mempool *pool)
{
	bool verbose = w->verbose;
	struct pcap_dumper *pcap = w->pcap;
	struct sim_world_opts opts = w->opts;
	int jumped;

	memset(w, 0, sizeof(*w));
	w->verbose = verbose;
	w->pcap = pcap;
	w->opts = opts;
	w->app = opts.app != NULL ? opts.app : &sim_apps_conv;
	w->plan = *plan;
	w->cut = *cut;
	sim_plan_cut(&w->plan, cut);
	w->pool = pool;
	w->now = w->t0 = SIM_T0;
	w->rng = sim_rng_of(plan->seed, 0x600);
	us_rand_seed(plan->seed);
	jumped = setjmp(w->fail_jmp);
	if (jumped != 0) {
		w->n.sim_ns = w->now - w->t0;
		us_rand_unseed();
		return jumped == 2 ? 0 : 1; /* 2: cut short at max_events */
	}
	sim_check_init(w);
	sim_rx_check_init(w);
	w->frame_budget = 2000000;
	for (unsigned k = 0; k < w->plan.nconvs; k++)
		w->frame_budget += 4 * (w->plan.conv[k].side[0].bytes + w->plan.conv[k].side[1].bytes);
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		for (unsigned j = 0; j < w->plan.nstacks; j++)
			if (i != j && !w->plan.stack[i].off && !w->plan.stack[j].off &&
			    (w->link[i][j] = nic_impair_create(&w->plan.link[i][j])) == NULL)
				sim_fail(w, "nic_impair_create: %s", strerror(errno));
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		if (!w->plan.stack[i].off)
			stack_init(w, i);
	w->app->start(w);
	if (!sim_run_until(w, apps_done, w->t0 + SIM_HORIZON)) {
		sim_check_print_tcbs(w, stderr, w->opts.print_tcbs_max);
		sim_fail(w, "the applications did not finish within %.0f s", SIM_HORIZON / 1e9);
	}
	world_end(w);
	world_free(w);
	w->n.sim_ns = w->now - w->t0;
	us_rand_unseed();
	if (rte_mempool_in_use_count(pool) != 0 || rte_mempool_in_use_count(wire_pool(w)) != 0) {
		snprintf(w->fail, sizeof(w->fail), "seed %lu: %u mbufs in use after the world ended",
			 (unsigned long)plan->seed,
			 rte_mempool_in_use_count(pool) +
			 (wire_pool(w) != pool ? rte_mempool_in_use_count(wire_pool(w)) : 0));
		return 1;
	}
	return 0;
}
