/* nic/steer_model.h: a software model of a NIC's steering, for tests.
 *
 * No PMD on our machines has rte_flow or Toeplitz RSS, so the decisions
 * built on them are tested against this model: an exact-match flow table of
 * fixed capacity (an insert fails when it is full, as on a real NIC), and
 * RSS over N queues for every packet no rule matches.
 */
#ifndef US_NIC_STEER_MODEL_H
#define US_NIC_STEER_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic/rss.h"
#include "nic/steer.h"

/* Types */

#define US_STEER_MODEL_COUNTERS(X) \
	X(classify_rule, "packets steered by a flow rule") \
	X(classify_rss, "packets steered by RSS (no rule)") \
	X(insert_ok, "rules inserted") \
	X(insert_full, "rule refused: flow table full") \
	X(remove_ok, "rules removed") \
	X(classify_ctl, "frames steered by a control rule (ARP, ICMP, listener RSS)") \
	X(classify_default, "frames not isolated, matching no rule: queue 0 (not TCP over IPv4 or IPv6)") \
	X(isolate_drop, "dropped: isolated port, no rule matches") \
	X(ctl_insert_ok, "control rules inserted") \
	X(ctl_insert_full, "control rule refused: control table full")

struct us_steer_model_stats {
#define US_STEER_MODEL_X_FIELD(name, desc) uint64_t name;
	US_STEER_MODEL_COUNTERS(US_STEER_MODEL_X_FIELD)
#undef US_STEER_MODEL_X_FIELD
};

struct us_steer_model_rule {
	struct us_flow_tuple tuple;
	uint16_t queue;
	bool used;
};

/* A control rule as the model keeps it (from a built us_steer_ctl_rule). */
struct us_steer_model_ctl {
	enum us_steer_ctl_kind kind;
	uint16_t queue;            /* ARP, ICMP */
	rte_be32_t dst_ip;         /* listener */
	rte_be16_t dport;
	struct us_rss rss;         /* listener: the rule's key over its queues */
	bool used;
};

#define US_STEER_MODEL_CTL_MAX 16

struct us_steer_model {
	/* Isolated mode (rte_flow_isolate): a frame no rule matches is
	 * dropped and counted, never given to RSS. */
	bool isolated;
	struct us_steer_model_ctl ctl[US_STEER_MODEL_CTL_MAX];
	struct us_rss rss;
	uint32_t capacity;
	uint32_t nb_rules;
	struct us_steer_model_rule *rules;   /* capacity slots */
	struct us_steer_model_stats stats;
};

/* Prototypes */

/* capacity 0 models a NIC without a flow table.  0, -EINVAL or -ENOMEM. */
int us_steer_model_init(struct us_steer_model *m, const struct us_rss *rss, uint32_t capacity);
void us_steer_model_free(struct us_steer_model *m);
/* 0, -ENOSPC (table full: the flow stays on RSS), -EEXIST, or -EINVAL
 * (queue out of range). */
int us_steer_model_insert(struct us_steer_model *m, const struct us_flow_tuple *t, uint16_t queue);
/* 0 or -ENOENT. */
int us_steer_model_remove(struct us_steer_model *m, const struct us_flow_tuple *t);
/* The queue an incoming packet with this tuple reaches. */
uint16_t us_steer_model_classify(struct us_steer_model *m, const struct us_flow_tuple *t);

/* Control rules, read from the rte_flow pattern and actions they were built
 * with (the model checks what nic/steer.c really builds): 0 with *slot, or
 * -EINVAL (a rule the model does not know), -ENOSPC (table full). */
int us_steer_model_insert_ctl(struct us_steer_model *m, const struct us_steer_ctl_rule *r,
			      unsigned *slot);
/* 0 or -ENOENT. */
int us_steer_model_remove_ctl(struct us_steer_model *m, unsigned slot);
/* A whole Ethernet frame: 0 with the queue it reaches, or -ENOENT when an
 * isolated port drops it (counted in isolate_drop).  Order as a NIC with
 * rule priorities: 5-tuple rules (priority 0), then ARP/ICMP/listener rules
 * (priority 1), then RSS (IPv4/TCP) or queue 0 -- or, isolated, a drop. */
int us_steer_model_classify_frame(struct us_steer_model *m, const void *frame, size_t len,
				  uint16_t *queue);

#endif
