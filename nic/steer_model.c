/* nic/steer_model.c: the software NIC steering model (see steer_model.h). */
#include "nic/steer_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_ethdev.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

int us_steer_model_init(struct us_steer_model *m, const struct us_rss *rss, uint32_t capacity)
{
	if (m == NULL || rss == NULL || rss->nb_queues == 0)
		return -EINVAL;
	memset(m, 0, sizeof(*m));
	m->rss = *rss;
	m->capacity = capacity;
	if (capacity > 0) {
		m->rules = calloc(capacity, sizeof(*m->rules));
		if (m->rules == NULL)
			return -ENOMEM;
	}
	return 0;
}

void us_steer_model_free(struct us_steer_model *m)
{
	free(m->rules);
	m->rules = NULL;
	m->capacity = 0;
	m->nb_rules = 0;
}

static bool model_tuple_eq(const struct us_flow_tuple *a, const struct us_flow_tuple *b)
{
	return a->src_ip == b->src_ip && a->dst_ip == b->dst_ip && a->sport == b->sport &&
	       a->dport == b->dport;
}

/* A linear scan: the model is for tests, not for line rate. */
static struct us_steer_model_rule *model_find(struct us_steer_model *m,
					      const struct us_flow_tuple *t)
{
	for (uint32_t i = 0; i < m->capacity; i++)
		if (m->rules[i].used && model_tuple_eq(&m->rules[i].tuple, t))
			return &m->rules[i];
	return NULL;
}

int us_steer_model_insert(struct us_steer_model *m, const struct us_flow_tuple *t, uint16_t queue)
{
	if (queue >= m->rss.nb_queues)
		return -EINVAL;
	if (model_find(m, t) != NULL)
		return -EEXIST;
	if (m->nb_rules == m->capacity) {
		m->stats.insert_full++;
		return -ENOSPC;
	}
	for (uint32_t i = 0; i < m->capacity; i++) {
		if (!m->rules[i].used) {
			m->rules[i] = (struct us_steer_model_rule){ .tuple = *t, .queue = queue,
								    .used = true };
			m->nb_rules++;
			m->stats.insert_ok++;
			return 0;
		}
	}
	return -ENOSPC; /* unreachable while nb_rules counts the used slots */
}

int us_steer_model_remove(struct us_steer_model *m, const struct us_flow_tuple *t)
{
	struct us_steer_model_rule *r = model_find(m, t);

	if (r == NULL)
		return -ENOENT;
	r->used = false;
	m->nb_rules--;
	m->stats.remove_ok++;
	return 0;
}

uint16_t us_steer_model_classify(struct us_steer_model *m, const struct us_flow_tuple *t)
{
	const struct us_steer_model_rule *r = model_find(m, t);

	/* A NIC checks its flow table before RSS: a matching rule wins. */
	if (r != NULL) {
		m->stats.classify_rule++;
		return r->queue;
	}
	m->stats.classify_rss++;
	return us_rss_queue_ipv4_tcp(&m->rss, rte_be_to_cpu_32(t->src_ip),
				     rte_be_to_cpu_32(t->dst_ip), rte_be_to_cpu_16(t->sport),
				     rte_be_to_cpu_16(t->dport));
}

/* Isolated mode: control rules */

/* A listener rule: ETH / IPV4 dst (full mask) / TCP dport (full mask) / END
 * with an RSS action over queues 0..n-1 in order (what steer.c builds). */
static int model_ctl_listener(struct us_steer_model_ctl *c, const struct us_steer_ctl_rule *r)
{
	const struct rte_flow_item_ipv4 *ip = r->pattern[1].spec;
	const struct rte_flow_item_tcp *tcp = r->pattern[2].spec;
	const struct rte_flow_action_rss *rss = r->actions[0].conf;

	if (r->pattern[1].type != RTE_FLOW_ITEM_TYPE_IPV4 ||
	    r->pattern[2].type != RTE_FLOW_ITEM_TYPE_TCP || ip == NULL || tcp == NULL ||
	    r->actions[0].type != RTE_FLOW_ACTION_TYPE_RSS || rss == NULL ||
	    rss->types != RTE_ETH_RSS_NONFRAG_IPV4_TCP || rss->queue_num == 0)
		return -EINVAL;
	for (uint32_t i = 0; i < rss->queue_num; i++)
		if (rss->queue[i] != i)
			return -EINVAL;
	c->dst_ip = ip->hdr.dst_addr;
	c->dport = tcp->hdr.dst_port;
	return us_rss_init(&c->rss, rss->key, rss->key_len, 128, (uint16_t)rss->queue_num);
}

static int model_ctl_read(struct us_steer_model *m, struct us_steer_model_ctl *c,
			  const struct us_steer_ctl_rule *r)
{
	const struct rte_flow_action_queue *q = r->actions[0].conf;

	c->kind = r->kind;
	if (r->kind == US_STEER_CTL_LISTENER)
		return model_ctl_listener(c, r);
	if (r->actions[0].type != RTE_FLOW_ACTION_TYPE_QUEUE || q == NULL ||
	    q->index >= m->rss.nb_queues)
		return -EINVAL;
	c->queue = (uint16_t)q->index;
	if (r->kind == US_STEER_CTL_ARP) {
		const struct rte_flow_item_eth *e = r->pattern[0].spec;

		return e != NULL && e->hdr.ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP) ? 0 : -EINVAL;
	}
	if (r->kind == US_STEER_CTL_ICMP) {
		const struct rte_flow_item_ipv4 *ip = r->pattern[1].spec;

		return r->pattern[1].type == RTE_FLOW_ITEM_TYPE_IPV4 && ip != NULL &&
		       ip->hdr.next_proto_id == IPPROTO_ICMP ? 0 : -EINVAL;
	}
	return -EINVAL;
}

int us_steer_model_insert_ctl(struct us_steer_model *m, const struct us_steer_ctl_rule *r,
			      unsigned *slot)
{
	for (unsigned i = 0; i < US_STEER_MODEL_CTL_MAX; i++) {
		struct us_steer_model_ctl c = { .used = true };
		int rc;

		if (m->ctl[i].used)
			continue;
		rc = model_ctl_read(m, &c, r);
		if (rc < 0)
			return rc;
		m->ctl[i] = c;
		*slot = i;
		m->stats.ctl_insert_ok++;
		return 0;
	}
	m->stats.ctl_insert_full++;
	return -ENOSPC;
}

int us_steer_model_remove_ctl(struct us_steer_model *m, unsigned slot)
{
	if (slot >= US_STEER_MODEL_CTL_MAX || !m->ctl[slot].used)
		return -ENOENT;
	m->ctl[slot].used = false;
	return 0;
}

static const struct us_steer_model_ctl *model_ctl_find(const struct us_steer_model *m,
						       enum us_steer_ctl_kind kind,
						       rte_be32_t dst, rte_be16_t dport)
{
	for (unsigned i = 0; i < US_STEER_MODEL_CTL_MAX; i++) {
		const struct us_steer_model_ctl *c = &m->ctl[i];

		if (!c->used || c->kind != kind)
			continue;
		if (kind != US_STEER_CTL_LISTENER || (c->dst_ip == dst && c->dport == dport))
			return c;
	}
	return NULL;
}

/* IPv4/TCP: 5-tuple rule, listener rule, then RSS unless isolated. */
static int model_tcp(struct us_steer_model *m, const struct rte_ipv4_hdr *ip,
		     const struct rte_tcp_hdr *th, uint16_t *queue)
{
	const struct us_flow_tuple t = { .src_ip = ip->src_addr, .dst_ip = ip->dst_addr,
					 .sport = th->src_port, .dport = th->dst_port };
	const struct us_steer_model_rule *r = model_find(m, &t);
	const struct us_steer_model_ctl *c;

	if (r != NULL) {
		m->stats.classify_rule++;
		*queue = r->queue;
		return 0;
	}
	c = model_ctl_find(m, US_STEER_CTL_LISTENER, t.dst_ip, t.dport);
	if (c != NULL) {
		m->stats.classify_ctl++;
		*queue = us_rss_queue_ipv4_tcp(&c->rss, rte_be_to_cpu_32(t.src_ip),
					       rte_be_to_cpu_32(t.dst_ip),
					       rte_be_to_cpu_16(t.sport), rte_be_to_cpu_16(t.dport));
		return 0;
	}
	if (m->isolated)
		return -ENOENT;
	*queue = us_steer_model_classify(m, &t);
	return 0;
}

/* IPv6/TCP with no extension header (RTE_ETH_RSS_NONFRAG_IPV6_TCP): RSS
 * over the tuple.  No rule matches IPv6 (flow rules and isolate's control
 * rules are IPv4's), so an isolated port drops it. */
static int model_tcp6(struct us_steer_model *m, const struct rte_ipv6_hdr *ip,
		      const struct rte_tcp_hdr *th, uint16_t *queue)
{
	if (m->isolated)
		return -ENOENT;
	m->stats.classify_rss++;
	*queue = us_rss_queue(&m->rss, us_rss_hash_ipv6_tcp(m->rss.key, ip->src_addr, ip->dst_addr,
							    rte_be_to_cpu_16(th->src_port),
							    rte_be_to_cpu_16(th->dst_port)));
	return 0;
}

static int model_frame(struct us_steer_model *m, const uint8_t *f, size_t len, uint16_t *queue)
{
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)f;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct us_steer_model_ctl *c = NULL;
	size_t ihl;

	if (len < sizeof(*eth))
		return -ENOENT;
	if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_ARP))
		c = model_ctl_find(m, US_STEER_CTL_ARP, 0, 0);
	else if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV4) &&
		 len >= sizeof(*eth) + sizeof(*ip)) {
		ihl = (ip->version_ihl & 0x0f) * 4u;
		if (ip->next_proto_id == IPPROTO_TCP && ihl >= sizeof(*ip) &&
		    len >= sizeof(*eth) + ihl + sizeof(struct rte_tcp_hdr))
			return model_tcp(m, ip, (const struct rte_tcp_hdr *)((const uint8_t *)ip +
									   ihl), queue);
		if (ip->next_proto_id == IPPROTO_ICMP)
			c = model_ctl_find(m, US_STEER_CTL_ICMP, 0, 0);
	} else if (eth->ether_type == RTE_BE16(RTE_ETHER_TYPE_IPV6) &&
		   len >= sizeof(*eth) + sizeof(struct rte_ipv6_hdr) + sizeof(struct rte_tcp_hdr)) {
		const struct rte_ipv6_hdr *ip6 = (const struct rte_ipv6_hdr *)(eth + 1);

		if (ip6->proto == IPPROTO_TCP)
			return model_tcp6(m, ip6, (const struct rte_tcp_hdr *)(ip6 + 1), queue);
	}
	if (c != NULL) {
		m->stats.classify_ctl++;
		*queue = c->queue;
		return 0;
	}
	if (m->isolated)
		return -ENOENT;
	m->stats.classify_default++;
	*queue = 0;
	return 0;
}

int us_steer_model_classify_frame(struct us_steer_model *m, const void *frame, size_t len,
				  uint16_t *queue)
{
	int rc = model_frame(m, frame, len, queue);

	if (rc < 0)
		m->stats.isolate_drop++;
	return rc;
}
