/* stack/flowrule.c: queued, batched per-connection flow rules (see
 * flowrule.h). */
#include "stack/flowrule.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>

struct us_flowrules *us_flowrule_create(const struct us_flowrule_ops *ops, uint16_t queue,
					uint32_t capacity, const char *name)
{
	struct rte_hash_parameters hp = {
		.name = name,
		.entries = capacity < 8 ? 8 : capacity,
		.key_len = sizeof(struct us_flow_tuple),
		.hash_func = rte_jhash,
		.socket_id = (int)rte_socket_id(),
	};
	struct us_flowrules *fr;

	if (ops == NULL || ops->install == NULL || ops->remove == NULL || name == NULL) {
		errno = EINVAL;
		return NULL;
	}
	fr = calloc(1, sizeof(*fr));
	if (fr == NULL)
		return NULL;
	fr->ops = *ops;
	fr->queue = queue;
	fr->rules = rte_hash_create(&hp);
	if (fr->rules == NULL) {
		int err = rte_errno ? rte_errno : ENOMEM;

		free(fr);
		errno = err;
		return NULL;
	}
	return fr;
}

void us_flowrule_note(struct us_flowrules *fr, uint32_t lip, uint16_t lport, uint32_t rip,
		      uint16_t rport, bool open)
{
	struct us_flowrule_op *op;

	if (fr->tail - fr->head == US_FLOWRULE_PENDING) {
		fr->stats.rules_dropped_pending++;
		return;
	}
	op = &fr->pending[fr->tail++ & (US_FLOWRULE_PENDING - 1)];
	/* The rule matches what the NIC receives: remote -> local. */
	op->t = (struct us_flow_tuple){
		.src_ip = rte_cpu_to_be_32(rip), .dst_ip = rte_cpu_to_be_32(lip),
		.sport = rte_cpu_to_be_16(rport), .dport = rte_cpu_to_be_16(lport),
	};
	op->install = open;
}

static void flowrule_install(struct us_flowrules *fr, const struct us_flow_tuple *t)
{
	void *handle = NULL;
	int rc;

	if (rte_hash_lookup(fr->rules, t) >= 0)
		return; /* already steered (a TIME-WAIT reuse re-inserts the tuple) */
	rc = fr->ops.install(fr->ops.ctx, t, fr->queue, &handle);
	if (rc == -ENOSPC) {
		fr->stats.rules_full++;
		return;
	}
	if (rc < 0) {
		fr->stats.rules_failed++;
		return;
	}
	if (rte_hash_add_key_data(fr->rules, t, handle) < 0) {
		/* No room to remember it: take it back rather than leak it. */
		(void)fr->ops.remove(fr->ops.ctx, t, handle);
		fr->stats.rules_failed++;
		return;
	}
	fr->stats.rules_installed++;
}

static void flowrule_remove(struct us_flowrules *fr, const struct us_flow_tuple *t)
{
	void *handle;

	/* No rule: the install failed or was refused; nothing to undo. */
	if (rte_hash_lookup_data(fr->rules, t, &handle) < 0)
		return;
	(void)fr->ops.remove(fr->ops.ctx, t, handle);
	rte_hash_del_key(fr->rules, t);
	fr->stats.rules_removed++;
}

unsigned us_flowrule_apply(struct us_flowrules *fr, unsigned max)
{
	unsigned done = 0;

	for (; done < max && fr->head != fr->tail; done++) {
		const struct us_flowrule_op *op = &fr->pending[fr->head++ & (US_FLOWRULE_PENDING - 1)];

		if (op->install)
			flowrule_install(fr, &op->t);
		else
			flowrule_remove(fr, &op->t);
	}
	return done;
}

uint32_t us_flowrule_count(const struct us_flowrules *fr)
{
	return (uint32_t)rte_hash_count(fr->rules);
}

void us_flowrule_destroy(struct us_flowrules *fr)
{
	const void *key;
	void *handle;
	uint32_t iter = 0;

	if (fr == NULL)
		return;
	us_flowrule_apply(fr, UINT32_MAX);
	while (rte_hash_iterate(fr->rules, &key, &handle, &iter) >= 0)
		(void)fr->ops.remove(fr->ops.ctx, key, handle);
	rte_hash_free(fr->rules);
	free(fr);
}

/* rte_flow backend */

static int flowrule_rte_install(void *ctx, const struct us_flow_tuple *t, uint16_t queue,
				void **handle)
{
	char msg[96];
	struct rte_flow *flow;
	int rc = us_steer_install(*(const uint16_t *)ctx, t, queue, &flow, msg, sizeof(msg));

	if (rc == 0)
		*handle = flow;
	return rc;
}

static int flowrule_rte_remove(void *ctx, const struct us_flow_tuple *t, void *handle)
{
	(void)t;
	return us_steer_remove(*(const uint16_t *)ctx, handle);
}

const struct us_flowrule_ops us_flowrule_rte_ops = {
	.install = flowrule_rte_install,
	.remove = flowrule_rte_remove,
};
