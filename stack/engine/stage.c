/* stack/engine/stage.c: registering the engine's stages and the calls that
 * go to all of them (see stage.h). */
#include "stack/engine/stage.h"

#include <errno.h>
#include <string.h>

#include "stack/engine/engine_priv.h"

/* Every place once, the link emulator twice (its RX and TX stages). */
_Static_assert(US_STAGES_MAX >= US_PLACE_COUNT + 1, "US_STAGES_MAX: a slot per stage");

static bool stage_has(const struct us_stage_ops *ops, enum us_stage_hook h)
{
	switch (h) {
	case US_HOOK_INPUT:
		return ops->input != NULL;
	case US_HOOK_RX:
		return ops->rx != NULL;
	case US_HOOK_STEER:
		return ops->steer != NULL;
	case US_HOOK_TX:
		return ops->tx != NULL;
	case US_HOOK_AFTER:
		return ops->after != NULL;
	case US_HOOK_CONN:
		return ops->conn != NULL;
	case US_HOOK_LISTEN:
		return ops->listen != NULL;
	default:
		return false;
	}
}

static bool stage_is_wire(const struct us_stage_ops *ops)
{
	return ops->rx != NULL || ops->tx != NULL;
}

/* The per-hook lists from the stages in place order; tx runs the other
 * way (stack side first). */
static void stages_index(struct us_stages *ss)
{
	memset(ss->nhook, 0, sizeof(ss->nhook));
	for (unsigned h = 0; h < US_HOOK_COUNT; h++) {
		for (unsigned i = 0; i < ss->n; i++) {
			unsigned k = h == US_HOOK_TX ? ss->n - 1 - i : i;

			if (stage_has(ss->s[k].ops, (enum us_stage_hook)h))
				ss->hook[h][ss->nhook[h]++] = (uint8_t)k;
		}
	}
}

void us_stages_init(struct us_stages *ss, uint16_t tx_flush)
{
	memset(ss, 0, sizeof(*ss));
	ss->tx_flush_at = tx_flush;
}

int us_engine_stage_add(struct us_engine *e, const struct us_stage_ops *ops, void *ctx)
{
	struct us_stages *ss = &e->stages;
	unsigned at = ss->n;

	if (ss->n == US_STAGES_MAX)
		return -ENOSPC;
	/* After the stages of the same place: they run in the order added. */
	while (at > 0 && ss->s[at - 1].ops->place > ops->place)
		at--;
	memmove(&ss->s[at + 1], &ss->s[at], (ss->n - at) * sizeof(ss->s[0]));
	ss->s[at] = (struct us_stage){ .ops = ops, .ctx = ctx };
	ss->n++;
	if (ops->tx_per_iteration)
		ss->tx_flush_at = US_TX_BUF + 1; /* never reached: ntx <= US_TX_BUF */
	stages_index(ss);
	return 0;
}

void *us_engine_stage_ctx(const struct us_engine *e, const struct us_stage_ops *ops)
{
	const struct us_stages *ss = &e->stages;

	for (unsigned i = 0; i < ss->n; i++)
		if (ss->s[i].ops == ops)
			return ss->s[i].ctx;
	return NULL;
}

void us_stages_destroy(struct us_stages *ss, struct us_engine *e)
{
	/* No hook of a stage being destroyed runs any more. */
	memset(ss->nhook, 0, sizeof(ss->nhook));
	while (ss->n > 0) {
		const struct us_stage *s = &ss->s[ss->n - 1];

		if (s->ops->destroy != NULL)
			s->ops->destroy(e, s->ctx);
		ss->n--;
	}
}

void us_stages_print(const struct us_stages *ss, bool wire, FILE *out)
{
	for (unsigned i = 0; i < ss->n; i++) {
		const struct us_stage *s = &ss->s[i];

		if (s->ops->print_stats != NULL && stage_is_wire(s->ops) == wire)
			s->ops->print_stats(s->ctx, out);
	}
}

int64_t us_stages_counter(const struct us_stages *ss, const char *name)
{
	for (unsigned i = 0; i < ss->n; i++) {
		const struct us_stage *s = &ss->s[i];
		int64_t v;

		if (s->ops->counter != NULL && (v = s->ops->counter(s->ctx, name)) >= 0)
			return v;
	}
	return -1;
}
