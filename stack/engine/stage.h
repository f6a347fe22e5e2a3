/* stack/engine/stage.h: the engine's optional stages, through one interface.
 *
 * A stage is a module that takes part in the engine's loop without the
 * engine knowing it: the emulated wire and the capture file, the hand-off
 * and migration between engines, state published by message, flow rules.
 * The module owns its struct (the stage's ctx) and offers an attach call
 * that registers {ops, ctx} on the engine (us_engine_stage_add); the engine
 * then runs "for each stage" at fixed points of a loop iteration:
 *
 *   input   before the port's RX burst: messages, frames handed over by
 *           other engines; returns the frames it processed
 *   rx      the wire, port side first: the frames the port gave; returns
 *           how many go on (a stage may hold some back, to release later)
 *   steer   after the wire: keeps in the burst the frames this engine owns
 *           and sends the others where they belong; returns how many stay
 *   tx      the wire, stack side first: the frames about to go to port.tx;
 *           returns how many port.tx still gets (a stage that holds frames
 *           sends them to port.tx itself when they are due); runs at every
 *           flush, with no new frame too
 *   after   once the iteration's TX went out: work that must not delay a
 *           segment
 *   conn    a connection entered (open) or left tcp/'s table
 *   listen / unlisten   a listener opens (0, or -errno refuses it) or
 *           closes on a port
 *   print_stats, counter   the stage's counters, printed and looked up with
 *           the engine's: a wire stage's (rx or tx hook) after the stack's
 *           own, the others' after TCP's
 *   destroy with the engine; NULL when the ctx is shared and its owner
 *           frees it
 *
 * Order: every stage has a place; hooks run in place order, tx in the
 * reverse order (a frame crosses the wire the other way).  The places
 * below say why each sits where it does.
 *
 * Cost: per hook the engine keeps the list of the stages that have it,
 * built when a stage is added, so an engine without stages tests one count
 * per hook and loop iteration, and nothing is looked up per frame.  A
 * module that needs its ctx back from an engine (a socket asking the
 * migration module) finds it with us_engine_stage_ctx, on the control path.
 */
#ifndef US_ENGINE_STAGE_H
#define US_ENGINE_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/base/in6.h"
#include <stdio.h>

struct rte_mbuf;
struct us_engine;

/* Types */

/* One slot per place below (the link emulator takes two, RX and TX). */
#define US_STAGES_MAX 8

enum us_stage_place {
	US_PLACE_IMPAIR,    /* the emulated wire: nearest the port */
	US_PLACE_CAPTURE,   /* inside the wire: what the stack saw and sent */
	US_PLACE_PUBLISH,   /* messages applied before any frame is looked at */
	US_PLACE_HANDOFF,   /* frames to and from the other engines */
	US_PLACE_MIGRATE,   /* moves asked for during the iteration, after it */
	US_PLACE_FLOWRULES, /* rule changes last: the NIC never delays a segment */
	US_PLACE_FLOWCTL,   /* listener rules, on the control path only */
	US_PLACE_COUNT
};

struct us_stage_ops {
	const char *name;
	enum us_stage_place place;
	unsigned (*input)(struct us_engine *e, void *ctx);
	uint16_t (*rx)(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n,
		       uint16_t max, uint64_t now_ns);
	uint16_t (*steer)(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n);
	uint16_t (*tx)(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n);
	/* tx takes the frames once per iteration: the engine does not hand
	 * them over early when US_TX_FLUSH wait. */
	bool tx_per_iteration;
	void (*after)(struct us_engine *e, void *ctx);
	/* Addresses as tcp/ has them (IPv4 v4-mapped), ports host order. */
	void (*conn)(struct us_engine *e, void *ctx, const struct us_in6 *lip, uint16_t lport,
		     const struct us_in6 *rip, uint16_t rport, bool open);
	int (*listen)(struct us_engine *e, void *ctx, uint16_t port);
	void (*unlisten)(struct us_engine *e, void *ctx, uint16_t port);
	/* "name value  # description" lines. */
	void (*print_stats)(const void *ctx, FILE *out);
	/* The counter's value, or -1 if name is none of this stage's. */
	int64_t (*counter)(const void *ctx, const char *name);
	void (*destroy)(struct us_engine *e, void *ctx);
};

enum us_stage_hook {
	US_HOOK_INPUT,
	US_HOOK_RX,
	US_HOOK_STEER,
	US_HOOK_TX,
	US_HOOK_AFTER,
	US_HOOK_CONN,
	US_HOOK_LISTEN,
	US_HOOK_COUNT
};

struct us_stage {
	const struct us_stage_ops *ops;
	void *ctx;
};

struct us_stages {
	uint8_t n;
	uint8_t nhook[US_HOOK_COUNT];
	uint8_t hook[US_HOOK_COUNT][US_STAGES_MAX]; /* indexes into s, in run order */
	/* us_engine_tx hands the buffer to the port once this many frames wait
	 * (US_TX_FLUSH, or never before the flush with a tx_per_iteration stage). */
	uint16_t tx_flush_at;
	struct us_stage s[US_STAGES_MAX];           /* in place order */
};

/* Prototypes: stage.c */

/* Registers {ops, ctx} on e, before any traffic.  0 or -ENOSPC. */
int us_engine_stage_add(struct us_engine *e, const struct us_stage_ops *ops, void *ctx);
/* The ctx of e's stage with ops, or NULL: for a module's typed calls on
 * the control path (a linear search over at most US_STAGES_MAX). */
void *us_engine_stage_ctx(const struct us_engine *e, const struct us_stage_ops *ops);
/* Empty list; tx_flush is the early-flush threshold without stages. */
void us_stages_init(struct us_stages *ss, uint16_t tx_flush);
/* Every stage's destroy, the innermost first; the list is empty after. */
void us_stages_destroy(struct us_stages *ss, struct us_engine *e);
/* The wire stages' counters (wire true) or the others'. */
void us_stages_print(const struct us_stages *ss, bool wire, FILE *out);
/* The first stage's counter of that name; -1 if none has it. */
int64_t us_stages_counter(const struct us_stages *ss, const char *name);

/* Runners: the engine's loop calls these once per iteration each. */

static inline const struct us_stage *us_stages_at(const struct us_stages *ss,
						  enum us_stage_hook h, unsigned i)
{
	return &ss->s[ss->hook[h][i]];
}

static inline unsigned us_stages_input(struct us_stages *ss, struct us_engine *e)
{
	unsigned frames = 0;

	for (unsigned i = 0; i < ss->nhook[US_HOOK_INPUT]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_INPUT, i);

		frames += s->ops->input(e, s->ctx);
	}
	return frames;
}

static inline uint16_t us_stages_rx(struct us_stages *ss, struct us_engine *e,
				    struct rte_mbuf **pkts, uint16_t n, uint16_t max,
				    uint64_t now_ns)
{
	for (unsigned i = 0; i < ss->nhook[US_HOOK_RX]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_RX, i);

		n = s->ops->rx(e, s->ctx, pkts, n, max, now_ns);
	}
	return n;
}

static inline uint16_t us_stages_steer(struct us_stages *ss, struct us_engine *e,
				       struct rte_mbuf **pkts, uint16_t n)
{
	for (unsigned i = 0; i < ss->nhook[US_HOOK_STEER]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_STEER, i);

		n = s->ops->steer(e, s->ctx, pkts, n);
	}
	return n;
}

static inline uint16_t us_stages_tx(struct us_stages *ss, struct us_engine *e,
				    struct rte_mbuf **pkts, uint16_t n)
{
	for (unsigned i = 0; i < ss->nhook[US_HOOK_TX]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_TX, i);

		n = s->ops->tx(e, s->ctx, pkts, n);
	}
	return n;
}

static inline void us_stages_after(struct us_stages *ss, struct us_engine *e)
{
	for (unsigned i = 0; i < ss->nhook[US_HOOK_AFTER]; i++) {
		const struct us_stage *s = us_stages_at(ss, US_HOOK_AFTER, i);

		s->ops->after(e, s->ctx);
	}
}

#endif
