/* stack/engine/port_impair.c: the link emulator (nic/impair.h) in place on the
 * engine's own port ([impair] rx / tx), whatever the PMD behind it.
 *
 * Where it sits in the engine's port view:
 *   RX: port.rx -> RX stage (at the poll's clock) -> capture -> the stack
 *   TX: the stack -> capture -> TX stage (at the engine's clock) -> port.tx
 * so the capture file shows what the stack saw and what it sent, and the
 * stage is the "wire" between the stack and its port.  The engine's clock
 * (TSC ns in production, virtual time in tests) drives both stages: packets
 * whose departure has come are released by the next loop iteration
 * (us_engine_poll, or us_engine_advance for TX), so the resolution of a delay
 * is one loop iteration.
 *
 * Off costs one predictable branch per burst each way: e->impair_rx and
 * e->impair_tx are NULL and nothing of this file runs.
 *
 * Ownership: frames handed to a stage belong to it until dequeued (then
 * they go on as before) or dropped and counted in the stage's counters;
 * us_port_impair_fini frees what is still pending (counted as flushed).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stack/base/log.h"
#include "nic/impair.h"
#include "stack/engine/engine_priv.h"

/* Frames released per dequeue call on TX (RX uses the caller's burst). */
#define PORT_IMPAIR_TX_BURST 32

/* One stage from a [impair] spec; *out stays NULL when the spec is empty. */
static int port_impair_create(const struct us_engine *e, const char *key, const char *spec,
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

int us_port_impair_init(struct us_engine *e)
{
	int rc = port_impair_create(e, "rx", e->cfg.impair_rx, &e->impair_rx);

	if (rc == 0)
		rc = port_impair_create(e, "tx", e->cfg.impair_tx, &e->impair_tx);
	return rc;
}

void us_port_impair_fini(struct us_engine *e)
{
	nic_impair_destroy(e->impair_rx);
	nic_impair_destroy(e->impair_tx);
	e->impair_rx = NULL;
	e->impair_tx = NULL;
}

uint16_t us_port_impair_rx(struct us_engine *e, struct rte_mbuf **pkts, uint16_t n,
			   uint16_t max, uint64_t now_ns)
{
	if (n > 0)
		nic_impair_enqueue(e->impair_rx, pkts, n, now_ns);
	return nic_impair_dequeue(e->impair_rx, pkts, max, now_ns);
}

void us_port_impair_tx(struct us_engine *e)
{
	struct rte_mbuf *out[PORT_IMPAIR_TX_BURST];
	uint64_t now = e->wheel.now_ns;

	if (e->net.ntx > 0) {
		nic_impair_enqueue(e->impair_tx, e->net.tx, e->net.ntx, now);
		e->net.ntx = 0;
	}
	while (nic_impair_next_ns(e->impair_tx) <= now) {
		uint16_t n = nic_impair_dequeue(e->impair_tx, out, PORT_IMPAIR_TX_BURST, now);

		e->port.tx(e->port.ctx, out, n); /* consumes all n */
	}
}

/* Counters, named "impair_rx_<counter>" / "impair_tx_<counter>" */

static void port_impair_print(const struct nic_impair *imp, const char *dir, FILE *out)
{
	const struct nic_impair_stats *s;

	if (imp == NULL)
		return;
	s = nic_impair_stats(imp);
#define PORT_IMPAIR_X_PRINT(name, desc) \
	fprintf(out, "impair_%s_%s %" PRIu64 "  # %s (%s stage)\n", dir, #name, s->name, desc, \
		dir);
	NIC_IMPAIR_COUNTERS(PORT_IMPAIR_X_PRINT)
#undef PORT_IMPAIR_X_PRINT
	fprintf(out, "impair_%s_pending %" PRIu32 "  # packets in the %s stage now (gauge)\n",
		dir, nic_impair_pending(imp), dir);
}

void us_port_impair_print_stats(const struct us_engine *e, FILE *out)
{
	port_impair_print(e->impair_rx, "rx", out);
	port_impair_print(e->impair_tx, "tx", out);
}

int64_t us_port_impair_counter(const struct us_engine *e, const char *name)
{
	const struct nic_impair *imp;
	const struct nic_impair_stats *s;

	if (strncmp(name, "impair_rx_", 10) == 0)
		imp = e->impair_rx;
	else if (strncmp(name, "impair_tx_", 10) == 0)
		imp = e->impair_tx;
	else
		return -1;
	if (imp == NULL)
		return -1;
	name += 10;
	s = nic_impair_stats(imp);
#define PORT_IMPAIR_X_FIND(n, desc) \
	if (strcmp(name, #n) == 0) \
		return (int64_t)s->n;
	NIC_IMPAIR_COUNTERS(PORT_IMPAIR_X_FIND)
#undef PORT_IMPAIR_X_FIND
	if (strcmp(name, "pending") == 0)
		return nic_impair_pending(imp);
	return -1;
}
