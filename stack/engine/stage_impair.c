/* stack/engine/stage_impair.c: the link emulator (nic/impair.h) in place on
 * the engine's own port ([impair] rx / tx), whatever the PMD behind it.
 *
 * Where it sits (two wire stages at US_PLACE_IMPAIR, stage.h):
 *   RX: port.rx -> RX stage (at the poll's clock) -> capture -> the stack
 *   TX: the stack -> capture -> TX stage (at the engine's clock) -> port.tx
 * so the capture file shows what the stack saw and what it sent, and the
 * stage is the "wire" between the stack and its port.  The engine's clock
 * (TSC ns in production, virtual time in tests) drives both stages: packets
 * whose departure has come are released by the next loop iteration
 * (us_engine_poll, or us_engine_advance for TX), so the resolution of a delay
 * is one loop iteration; the TX stage therefore takes the engine's frames
 * once per iteration too (tx_per_iteration).
 *
 * Off costs nothing: a spec left empty registers no stage.
 *
 * Ownership: frames handed to a stage belong to it until dequeued (then
 * they go on as before) or dropped and counted in the stage's counters;
 * destroying the stage frees what is still pending (counted as flushed).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stack/base/log.h"
#include "nic/impair.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/stage_impair.h"

/* Frames released per dequeue call on TX (RX uses the caller's burst). */
#define IMPAIR_TX_BURST 32

/* One stage from a [impair] spec; *out stays NULL when the spec is empty. */
static int impair_create(const struct us_engine *e, const char *key, const char *spec,
			      struct nic_impair **out)
{
	struct nic_impair_params p;
	char err[256], text[512];

	*out = NULL;
	if (spec[0] == '\0')
		return 0;
	/* The config checked the spec already; a caller that filled struct
	 * us_config by hand gets the same message here. */
	if (nic_impair_parse(spec, &p, err, sizeof(err)) < 0) {
		US_LOG(stack, ERR, "%s%s[impair] %s = '%s': %s\n", e->cfg.path,
		       e->cfg.path[0] ? ": " : "", key, spec, err);
		return -EINVAL;
	}
	*out = nic_impair_create(&p);
	if (*out == NULL) {
		US_LOG(stack, ERR, "[impair] %s: cannot create the stage: %s\n", key,
		       strerror(errno));
		return errno ? -errno : -ENOMEM;
	}
	nic_impair_format(&p, text, sizeof(text));
	US_LOG(stack, NOTICE, "engine %u: [impair] %s on: %s\n", e->id, key, text);
	return 0;
}

static uint16_t impair_rx(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n,
			  uint16_t max, uint64_t now_ns)
{
	struct nic_impair *imp = ctx;

	(void)e;
	if (n > 0)
		nic_impair_enqueue(imp, pkts, n, now_ns);
	return nic_impair_dequeue(imp, pkts, max, now_ns);
}

/* The frames enter the stage at the engine's clock; what is due goes to
 * port.tx, which consumes it: nothing is left for the port after us. */
static uint16_t impair_tx(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct nic_impair *imp = ctx;
	struct rte_mbuf *out[IMPAIR_TX_BURST];
	uint64_t now = e->wheel.now_ns;

	if (n > 0)
		nic_impair_enqueue(imp, pkts, n, now);
	while (nic_impair_next_ns(imp) <= now) {
		uint16_t k = nic_impair_dequeue(imp, out, IMPAIR_TX_BURST, now);

		e->port.tx(e->port.ctx, out, k); /* consumes all k */
	}
	return 0;
}

static void impair_destroy(struct us_engine *e, void *ctx)
{
	(void)e;
	nic_impair_destroy(ctx);
}

/* Counters, named "impair_rx_<counter>" / "impair_tx_<counter>" */

static void impair_print(const struct nic_impair *imp, const char *dir, FILE *out)
{
	const struct nic_impair_stats *s;

	if (imp == NULL)
		return;
	s = nic_impair_stats(imp);
#define IMPAIR_X_PRINT(name, desc) \
	fprintf(out, "impair_%s_%s %" PRIu64 "  # %s (%s stage)\n", dir, #name, s->name, desc, \
		dir);
	NIC_IMPAIR_COUNTERS(IMPAIR_X_PRINT)
#undef IMPAIR_X_PRINT
	fprintf(out, "impair_%s_pending %" PRIu32 "  # packets in the %s stage now (gauge)\n",
		dir, nic_impair_pending(imp), dir);
}

static void impair_print_rx(const void *ctx, FILE *out)
{
	impair_print(ctx, "rx", out);
}

static void impair_print_tx(const void *ctx, FILE *out)
{
	impair_print(ctx, "tx", out);
}

static int64_t impair_counter(const struct nic_impair *imp, const char *prefix,
				   const char *name)
{
	const struct nic_impair_stats *s;

	if (strncmp(name, prefix, 10) != 0)
		return -1;
	name += 10;
	s = nic_impair_stats(imp);
#define IMPAIR_X_FIND(n, desc) \
	if (strcmp(name, #n) == 0) \
		return (int64_t)s->n;
	NIC_IMPAIR_COUNTERS(IMPAIR_X_FIND)
#undef IMPAIR_X_FIND
	if (strcmp(name, "pending") == 0)
		return nic_impair_pending(imp);
	return -1;
}

static int64_t impair_counter_rx(const void *ctx, const char *name)
{
	return impair_counter(ctx, "impair_rx_", name);
}

static int64_t impair_counter_tx(const void *ctx, const char *name)
{
	return impair_counter(ctx, "impair_tx_", name);
}

/* The stages */

static const struct us_stage_ops impair_rx_ops = {
	.name = "impair_rx",
	.place = US_PLACE_IMPAIR,
	.rx = impair_rx,
	.print_stats = impair_print_rx,
	.counter = impair_counter_rx,
	.destroy = impair_destroy,
};

static const struct us_stage_ops impair_tx_ops = {
	.name = "impair_tx",
	.place = US_PLACE_IMPAIR,
	.tx = impair_tx,
	.tx_per_iteration = true,
	.print_stats = impair_print_tx,
	.counter = impair_counter_tx,
	.destroy = impair_destroy,
};

static int impair_attach_one(struct us_engine *e, const char *key, const char *spec,
			     const struct us_stage_ops *ops)
{
	struct nic_impair *imp;
	int rc = impair_create(e, key, spec, &imp);

	if (rc < 0 || imp == NULL)
		return rc;
	rc = us_engine_stage_add(e, ops, imp);
	if (rc < 0)
		nic_impair_destroy(imp);
	return rc;
}

int us_impair_attach(struct us_engine *e)
{
	int rc = impair_attach_one(e, "rx", e->cfg.impair_rx, &impair_rx_ops);

	if (rc == 0)
		rc = impair_attach_one(e, "tx", e->cfg.impair_tx, &impair_tx_ops);
	return rc;
}

const struct nic_impair *us_impair_of(const struct us_engine *e, bool tx)
{
	return us_engine_stage_ctx(e, tx ? &impair_tx_ops : &impair_rx_ops);
}
