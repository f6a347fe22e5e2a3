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
#include <stdint.h>

#include "nic/rss.h"
#include "nic/steer.h"

/* Types */

#define US_STEER_MODEL_COUNTERS(X) \
	X(classify_rule, "packets steered by a flow rule") \
	X(classify_rss, "packets steered by RSS (no rule)") \
	X(insert_ok, "rules inserted") \
	X(insert_full, "rule refused: flow table full") \
	X(remove_ok, "rules removed")

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

struct us_steer_model {
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

#endif
