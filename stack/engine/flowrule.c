/* stack/engine/flowrule.c: queued, batched per-connection flow rules (see
 * flowrule.h). */
#include "stack/engine/flowrule.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>
#include <rte_lcore.h>

#include "stack/engine/stage.h"

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

void us_flowrule_note(struct us_flowrules *fr, const struct us_in6 *lip, uint16_t lport,
		      const struct us_in6 *rip, uint16_t rport, bool open)
{
	struct us_flowrule_op *op;

	if (!us_in6_is_v4mapped(rip)) {
		if (open)
			fr->stats.rules_ip6_skipped++;
		return;
	}
	if (fr->tail - fr->head == US_FLOWRULE_PENDING) {
		fr->stats.rules_dropped_pending++;
		return;
	}
	op = &fr->pending[fr->tail++ & (US_FLOWRULE_PENDING - 1)];
	/* The rule matches what the NIC receives: remote -> local. */
	op->t = (struct us_flow_tuple){
		.src_ip = rte_cpu_to_be_32(us_in6_v4(rip)), .dst_ip = rte_cpu_to_be_32(us_in6_v4(lip)),
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

/* The per-connection rules as an engine stage (stage.h): a connection's
 * rule follows it in and out of tcp/'s table, queued, applied after the
 * iteration's TX. */

static void flowrules_conn(struct us_engine *e, void *ctx, const struct us_in6 *lip,
			   uint16_t lport, const struct us_in6 *rip, uint16_t rport, bool open)
{
	(void)e;
	us_flowrule_note(ctx, lip, lport, rip, rport, open);
}

static void flowrules_after(struct us_engine *e, void *ctx)
{
	(void)e;
	us_flowrule_apply(ctx, US_FLOWRULE_BATCH);
}

static void flowrules_print(const void *ctx, FILE *out)
{
	const struct us_flowrules *fr = ctx;

#define US_X_PRINT_FR(name, desc) \
	fprintf(out, "flow_%s %" PRIu64 "  # %s\n", #name, fr->stats.name, desc);
	US_FLOWRULE_COUNTERS(US_X_PRINT_FR)
#undef US_X_PRINT_FR
}

static int64_t flowrules_counter(const void *ctx, const char *name)
{
	const struct us_flowrules *fr = ctx;

	if (strncmp(name, "flow_", 5) != 0)
		return -1;
#define US_X_FIND_FR(n, desc) \
	if (strcmp(name + 5, #n) == 0) \
		return (int64_t)fr->stats.n;
	US_FLOWRULE_COUNTERS(US_X_FIND_FR)
#undef US_X_FIND_FR
	return -1;
}

static void flowrules_destroy(struct us_engine *e, void *ctx)
{
	(void)e;
	us_flowrule_destroy(ctx);
}

static const struct us_stage_ops flowrules_ops = {
	.name = "flowrules",
	.place = US_PLACE_FLOWRULES,
	.after = flowrules_after,
	.conn = flowrules_conn,
	.print_stats = flowrules_print,
	.counter = flowrules_counter,
	.destroy = flowrules_destroy,
};

int us_flowrules_attach(struct us_engine *e, struct us_flowrules *fr)
{
	int rc = us_engine_stage_add(e, &flowrules_ops, fr);

	if (rc < 0)
		us_flowrule_destroy(fr);
	return rc;
}

void us_flowrules_apply_all(struct us_engine *e)
{
	struct us_flowrules *fr = us_engine_stage_ctx(e, &flowrules_ops);

	if (fr != NULL)
		us_flowrule_apply(fr, UINT32_MAX);
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

/* Isolated mode: control rules */

static int flowctl_add(struct us_flowctl *c, struct us_steer_ctl_rule *r, void **handle)
{
	int rc = c->ops.install(c->ops.ctx, r, handle);

	if (rc < 0) {
		c->stats.ctl_failed++;
		return rc;
	}
	c->stats.ctl_installed++;
	return 0;
}

static void flowctl_del(struct us_flowctl *c, void **handle)
{
	(void)c->ops.remove(c->ops.ctx, *handle);
	*handle = NULL;
	c->stats.ctl_removed++;
}

int us_flowctl_start(struct us_flowctl *c, const struct us_flowctl_ops *ops, uint32_t lip,
		     uint16_t ctl_queue, uint16_t nb_queues, const uint8_t *key, uint8_t key_len)
{
	struct us_steer_ctl_rule r;
	int rc;

	if (ops == NULL || ops->install == NULL || ops->remove == NULL || key == NULL ||
	    key_len == 0 || key_len > US_STEER_CTL_KEY_MAX || nb_queues == 0 ||
	    nb_queues > US_ENGINES_MAX || ctl_queue >= nb_queues)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	rte_spinlock_init(&c->lock);
	c->ops = *ops;
	c->lip = lip;
	c->ctl_queue = ctl_queue;
	c->nb_queues = nb_queues;
	memcpy(c->key, key, key_len);
	c->key_len = key_len;
	/* RFC 826: without ARP nobody resolves us; RFC 1122 3.2.2: ICMP errors
	 * carry path MTU and unreachability news for our connections. */
	us_steer_rule_build_arp(ctl_queue, &r);
	rc = flowctl_add(c, &r, &c->arp);
	if (rc < 0)
		return rc;
	us_steer_rule_build_icmp(ctl_queue, &r);
	rc = flowctl_add(c, &r, &c->icmp);
	if (rc < 0) {
		flowctl_del(c, &c->arp);
		return rc;
	}
	c->started = true;
	return 0;
}

static struct us_flowctl_listener *flowctl_find(struct us_flowctl *c, uint16_t lport)
{
	for (unsigned i = 0; i < US_FLOWCTL_LISTENERS; i++)
		if (c->lst[i].refs > 0 && c->lst[i].lport == lport)
			return &c->lst[i];
	return NULL;
}

static int flowctl_listen_locked(struct us_flowctl *c, uint16_t lport)
{
	struct us_flowctl_listener *l = flowctl_find(c, lport);
	struct us_steer_ctl_rule r;
	int rc;

	if (l != NULL) {
		l->refs++;
		return 0;
	}
	for (unsigned i = 0; l == NULL && i < US_FLOWCTL_LISTENERS; i++)
		if (c->lst[i].refs == 0)
			l = &c->lst[i];
	if (l == NULL) {
		c->stats.ctl_failed++;
		return -ENOSPC;
	}
	rc = us_steer_rule_build_listener(rte_cpu_to_be_32(c->lip), rte_cpu_to_be_16(lport),
					  c->nb_queues, c->key, c->key_len, &r);
	if (rc == 0)
		rc = flowctl_add(c, &r, &l->handle);
	if (rc < 0)
		return rc;
	l->lport = lport;
	l->refs = 1;
	return 0;
}

int us_flowctl_listen(struct us_flowctl *c, uint16_t lport)
{
	int rc;

	rte_spinlock_lock(&c->lock);
	rc = flowctl_listen_locked(c, lport);
	rte_spinlock_unlock(&c->lock);
	return rc;
}

void us_flowctl_unlisten(struct us_flowctl *c, uint16_t lport)
{
	struct us_flowctl_listener *l;

	rte_spinlock_lock(&c->lock);
	l = flowctl_find(c, lport);
	if (l != NULL && --l->refs == 0)
		flowctl_del(c, &l->handle);
	rte_spinlock_unlock(&c->lock);
}

void us_flowctl_stop(struct us_flowctl *c)
{
	if (!c->started)
		return;
	for (unsigned i = 0; i < US_FLOWCTL_LISTENERS; i++) {
		if (c->lst[i].refs > 0) {
			c->lst[i].refs = 0;
			flowctl_del(c, &c->lst[i].handle);
		}
	}
	flowctl_del(c, &c->icmp);
	flowctl_del(c, &c->arp);
	c->started = false;
}

static int flowctl_rte_install(void *ctx, struct us_steer_ctl_rule *r, void **handle)
{
	char msg[96];
	struct rte_flow *flow;
	int rc = us_steer_ctl_install(*(const uint16_t *)ctx, r, &flow, msg, sizeof(msg));

	if (rc == 0)
		*handle = flow;
	return rc;
}

static int flowctl_rte_remove(void *ctx, void *handle)
{
	return us_steer_remove(*(const uint16_t *)ctx, handle);
}

const struct us_flowctl_ops us_flowctl_rte_ops = {
	.install = flowctl_rte_install,
	.remove = flowctl_rte_remove,
};

/* The control rules as an engine stage: a listener made through the
 * engine's sockets gets its rule (without it no SYN arrives). */

static int flowctl_engine_listen(struct us_engine *e, void *ctx, uint16_t port)
{
	struct us_flowctl *c = ctx;

	(void)e;
	return c->started ? us_flowctl_listen(c, port) : 0;
}

static void flowctl_engine_unlisten(struct us_engine *e, void *ctx, uint16_t port)
{
	struct us_flowctl *c = ctx;

	(void)e;
	if (c->started)
		us_flowctl_unlisten(c, port);
}

static const struct us_stage_ops flowctl_ops = {
	.name = "flowctl",
	.place = US_PLACE_FLOWCTL,
	.listen = flowctl_engine_listen,
	.unlisten = flowctl_engine_unlisten,
};

int us_flowctl_attach(struct us_engine *e, struct us_flowctl *c)
{
	return us_engine_stage_add(e, &flowctl_ops, c);
}
