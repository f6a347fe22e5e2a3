/* tests/pkt/tcp_pair.c: see tcp_pair.h. */
#include "tests/pkt/tcp_pair.h"

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#define TP_TICK_NS 1000000ull /* the wheels' tick: timers are run at least this often */
#define TP_BURST 64

/* env->output: an IPv4 header in front (tcp/ left TCP_HEADROOM_NEEDED
 * bytes), then into this direction's stage. */
static void tp_output(void *ctx, struct rte_mbuf *m, uint32_t src, uint32_t dst)
{
	struct tp_dir *d = ctx;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)rte_pktmbuf_prepend(m, sizeof(*ip));

	if (ip == NULL) {
		d->p->no_mbuf++;
		rte_pktmbuf_free(m);
		return;
	}
	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = 0x45;
	ip->total_length = rte_cpu_to_be_16((uint16_t)m->pkt_len);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	d->sent++;
	nic_impair_enqueue(d->imp, &m, 1, d->p->now);
}

static int tp_stack(struct tp_pair *p, struct tcp_stack **ts, struct us_timer_wheel *w,
		    uint32_t ip, struct tp_dir *out, const struct tcp_config *cfg)
{
	struct tcp_env env = {
		.pool = p->pool, .wheel = w, .local_ip = ip, .mtu = 1500,
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
		struct rte_ipv4_hdr *ip = rte_pktmbuf_mtod(pk[i], struct rte_ipv4_hdr *);

		rte_pktmbuf_adj(pk[i], sizeof(*ip));
		tcp_input(*d->to, pk[i], ip);
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
