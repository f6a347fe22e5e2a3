/* stack/engine/publish.h: read-mostly cross-engine state, published by message.
 *
 * DESIGN.md: state every engine reads but one writes (today the TCP Fast
 * Open server secret) has one writer engine; each change is sent to every
 * other engine as a message on a per-engine single-producer inbox ring, and
 * each engine applies its messages at the top of its loop iteration, on its
 * own core.  Nothing is shared mutably: a message is an immutable copy,
 * allocated by the writer and freed by the reader that applied it.
 * Messages are rare (start-up, key rotation), so malloc is fine here.
 */
#ifndef US_STACK_PUBLISH_H
#define US_STACK_PUBLISH_H

#include <stdint.h>

#include "stack/engine/handoff.h"
#include "tcp/fastopen.h"

struct rte_ring;
struct us_engine;

/* Types */

#define US_PUBLISH_RING 64   /* messages in flight per engine (power of two) */

enum us_publish_type {
	US_PUB_TFO_KEYS,     /* RFC 7413 4.1.2 server secret: primary + backup */
};

struct us_publish_msg {
	enum us_publish_type type;
	struct tfo_keys keys;
};

struct us_publish {
	unsigned n;
	unsigned writer;                        /* the engine that may send */
	struct rte_ring *inbox[US_ENGINES_MAX]; /* to engine k (none for the writer) */
};

/* Prototypes */

/* Inboxes for n engines (2..US_ENGINES_MAX) written by engine writer; name
 * unique per process.  NULL + errno. */
struct us_publish *us_publish_create(unsigned n, unsigned writer, const char *name);
/* Frees the messages never applied, then the rings. */
void us_publish_destroy(struct us_publish *p);
/* The writer sends a copy of k to every other engine; how many inboxes
 * took it (a full inbox is skipped: the caller counts n - 1 - returned). */
unsigned us_publish_tfo_keys(struct us_publish *p, const struct tfo_keys *k);
/* The next message for engine k, or NULL; the caller frees it with
 * us_publish_msg_free (secrets are wiped first). */
struct us_publish_msg *us_publish_recv(struct us_publish *p, unsigned k);

void us_publish_msg_free(struct us_publish_msg *m);

/* Prototypes: the engine's side */

/* e applies p's messages at the top of each loop iteration (a stage,
 * stage.h); an engine other than p's writer stops drawing its own TFO
 * secret and takes the writer's.  Call before any traffic; p outlives e.
 * 0 or -ENOSPC. */
int us_publish_attach(struct us_engine *e, struct us_publish *p);
/* The writer engine sends its current TFO secret to the others (at
 * start): 0, or -EINVAL (e is not attached as the writer). */
int us_publish_send_tfo_keys(struct us_engine *e);
/* RFC 7413 4.1.2, one secret per stack: the writer engine's new secret k
 * goes to every other engine by message (nothing for another engine or
 * without publishing). */
void us_publish_tfo_rotated(struct us_engine *e, const struct tfo_keys *k);

#endif
