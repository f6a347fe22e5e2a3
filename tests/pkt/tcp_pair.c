/* tests/pkt/tcp_pair.c: see tcp_pair.h. */
#include "tests/pkt/tcp_pair.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#define TP_TICK_NS 1000000ull /* the wheels' tick: timers are run at least this often */
#define TP_BURST 64

const struct us_in6 *tp_addr(unsigned side)
{
	static const struct us_in6 v6[2] = { { .b = { 0xfd, 0x01, [15] = 1 } },
					     { .b = { 0xfd, 0x01, [15] = 2 } } };
	static struct us_in6 v4[2];
	const char *fam = getenv("US_PKT_FAMILY");

	if (fam != NULL && strcmp(fam, "6") == 0)
		return &v6[side & 1];
	v4[side & 1] = us_in6_of_v4(0x0a010001u + (side & 1));
	return &v4[side & 1];
}

/* An IPv4 or IPv6 header in front of m (tcp/ left TCP_HEADROOM_NEEDED
 * bytes): false when there was no room. */
static bool tp_prepend_ip(struct rte_mbuf *m, const struct tcp_out_addr *a)
{
	uint32_t plen = m->pkt_len;

	if (us_in6_is_v4mapped(&a->dst)) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));

		if (ip == NULL)
			return false;
		memset(ip, 0, sizeof(*ip));
		ip->version_ihl = 0x45;
		ip->total_length = rte_cpu_to_be_16((uint16_t)(plen + sizeof(*ip)));
		ip->time_to_live = 64;
		ip->next_proto_id = IPPROTO_TCP;
		memcpy(&ip->src_addr, a->src.b + 12, 4);
		memcpy(&ip->dst_addr, a->dst.b + 12, 4);
	} else {
		struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));

		if (ip == NULL)
			return false;
		ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | a->flow_label);
		ip->payload_len = rte_cpu_to_be_16((uint16_t)plen);
		ip->proto = IPPROTO_TCP;
		ip->hop_limits = 64;
		memcpy(ip->src_addr, a->src.b, 16);
		memcpy(ip->dst_addr, a->dst.b, 16);
	}
	return true;
}

/* env->output: the IP header in front, then into this direction's stage. */
static void tp_output(void *ctx, struct rte_mbuf *m, const struct tcp_out_addr *a)
{
	struct tp_dir *d = ctx;

	if (!tp_prepend_ip(m, a)) {
		d->p->no_mbuf++;
		rte_pktmbuf_free(m);
		return;
	}
	d->sent++;
	nic_impair_enqueue(d->imp, &m, 1, d->p->now);
}

/* The addresses of the IP header at m's data, which it strips. */
static void tp_strip_ip(struct rte_mbuf *m, struct us_in6 *src, struct us_in6 *dst)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);

	if (p[0] >> 4 == 4) {
		const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)p;

		*src = us_in6_of_v4(rte_be_to_cpu_32(ip->src_addr));
		*dst = us_in6_of_v4(rte_be_to_cpu_32(ip->dst_addr));
		rte_pktmbuf_adj(m, sizeof(*ip));
	} else {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)p;

		memcpy(src->b, ip->src_addr, 16);
		memcpy(dst->b, ip->dst_addr, 16);
		rte_pktmbuf_adj(m, sizeof(*ip));
	}
}

static int tp_stack(struct tp_pair *p, struct tcp_stack **ts, struct us_timer_wheel *w,
		    const struct us_in6 *ip, struct tp_dir *out, const struct tcp_config *cfg)
{
	bool v4 = us_in6_is_v4mapped(ip);
	/* MSS 1460 in both families, as the packet scripts have it. */
	struct tcp_env env = {
		.pool = p->pool, .wheel = w, .local_ip = v4 ? *ip : us_in6_of_v4(0),
		.local_ip6 = v4 ? (struct us_in6){ { 0 } } : *ip, .mtu = v4 ? 1500 : 1520,
		.l4_csum_by_ip = false, .output = tp_output, .ctx = out,
	};

	us_timer_wheel_init(w, TP_TICK_NS, p->now);
	*ts = tcp_stack_create(&env, cfg);
	return *ts == NULL ? -errno : 0;
}

int tp_create(struct tp_pair *p, struct rte_mempool *pool, const struct tcp_config *cfg,
	      const struct nic_impair_params *ab, const struct nic_impair_params *ba)
{
	memset(p, 0, sizeof(*p));
	p->pool = pool;
	p->now = 1000000000ull; /* 1 s: no timer at zero */
	p->ab = (struct tp_dir){ .p = p, .to = &p->b };
	p->ba = (struct tp_dir){ .p = p, .to = &p->a };
	p->ab.imp = nic_impair_create(ab);
	p->ba.imp = nic_impair_create(ba);
	if (p->ab.imp == NULL || p->ba.imp == NULL ||
	    tp_stack(p, &p->a, &p->wa, TP_IP_A, &p->ab, cfg) < 0 ||
	    tp_stack(p, &p->b, &p->wb, TP_IP_B, &p->ba, cfg) < 0) {
		tp_destroy(p);
		return -ENOMEM;
	}
	return 0;
}

/* Delivers what departs from d's stage at p->now; the count. */
static unsigned tp_deliver(struct tp_pair *p, struct tp_dir *d)
{
	struct rte_mbuf *pk[TP_BURST];
	uint16_t n = nic_impair_dequeue(d->imp, pk, TP_BURST, p->now);

	for (uint16_t i = 0; i < n; i++) {
		struct us_in6 src, dst;

		tp_strip_ip(pk[i], &src, &dst);
		tcp_input(*d->to, pk[i], &src, &dst);
	}
	return n;
}

bool tp_run(struct tp_pair *p, uint64_t until_ns, bool (*done)(void *ctx), void *ctx)
{
	while (!done(ctx)) {
		uint64_t next = (p->now / TP_TICK_NS + 1) * TP_TICK_NS;

		us_timer_run(&p->wa, p->now);
		us_timer_run(&p->wb, p->now);
		/* Zero-delay packets may answer each other at the same instant. */
		while (tp_deliver(p, &p->ab) + tp_deliver(p, &p->ba) > 0)
			;
		if (done(ctx))
			return true;
		next = RTE_MIN(next, nic_impair_next_ns(p->ab.imp));
		next = RTE_MIN(next, nic_impair_next_ns(p->ba.imp));
		if (next <= p->now)
			next = p->now + 1;
		if (next > until_ns)
			return false;
		p->now = next;
	}
	return true;
}

void tp_destroy(struct tp_pair *p)
{
	tcp_stack_destroy(p->a);
	tcp_stack_destroy(p->b);
	p->a = p->b = NULL;
	if (p->ab.imp != NULL)
		nic_impair_destroy(p->ab.imp);
	if (p->ba.imp != NULL)
		nic_impair_destroy(p->ba.imp);
	p->ab.imp = p->ba.imp = NULL;
}
