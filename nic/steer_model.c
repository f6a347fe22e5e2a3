/* nic/steer_model.c: the software NIC steering model (see steer_model.h). */
#include "nic/steer_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
