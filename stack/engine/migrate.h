/* stack/engine/migrate.h: live migration of a connection between the engines of
 * one stack, below the socket call us_migrate.
 *
 * Who may hold a connection: its RSS owner R (RETA[softrss(tuple)], the
 * engine every frame of the tuple reaches first, stack/engine/handoff.h) or one
 * other engine X.  So a migration is R -> X or X -> R; X -> Y (neither the
 * RSS owner) is refused: it would need a two-hop forwarding chain.
 *
 * Per engine, a small table of migrated tuples, written only by its engine
 * (no locks), consulted for every TCP frame while it is not empty:
 *   REDIRECT(next)  the connection left: frames go on to next;
 *   HELD            the connection came in from R: frames are ours (even
 *                   those a flow rule or a fanout put on our queue);
 *   DRAINING        R got its connection back from X, but frames R sent
 *                   to X before are still on their way back: frames from
 *                   R's own queue wait in a hold queue until the marker
 *                   R sent behind them returns; frames from rings are the
 *                   returning ones and go to TCP.
 *
 * The ordering hazard (a forwarded frame reaching the new holder before
 * the TCB, answered with RST) cannot happen: the parcel (the TCB) goes on
 * the hand-off ring from the old holder to the new one as a tagged pointer
 * (stack/engine/handoff.h), enqueued by the old holder's thread before it forwards
 * any later frame of the tuple on that same SP/SC FIFO ring.  The new
 * holder dequeues in ring order, so it attaches the TCB before it sees any
 * frame forwarded after it; frames forwarded before it were forwarded by
 * a REDIRECT entry, which only exists once the parcel left.  The way back
 * (X -> R) keeps order with the marker: R stops forwarding the moment the
 * parcel arrives and sends the marker to X behind everything it forwarded;
 * X passes frames and then the marker back in the same order; only when
 * the marker is back does R process the frames it held meanwhile.  No
 * frame is reordered; only a full hold queue or ring drops one, counted.
 *
 * The end: when a migrated-in connection leaves X's table (closed, reset,
 * TIME-WAIT over), X tells R by message (END) and R drops its REDIRECT.
 */
#ifndef US_MIGRATE_H
#define US_MIGRATE_H

#include <stdbool.h>
#include <stdint.h>

#include "stack/base/in6.h"
#include <sys/queue.h>

struct rte_mbuf;
struct tcp_conn;
struct tcp_parcel;
struct us_engine;
struct us_handoff;

/* Types */

#define US_MIG_BUCKETS 256  /* power of two */
#define US_MIG_HOLD 64      /* frames held per draining connection */
#define US_MIG_DEFER 256    /* moves asked for inside one loop iteration */

struct us_mig_tuple {
	struct us_in6 lip, rip; /* IPv4 v4-mapped, as tcp/ has them */
	uint16_t lport, rport;
};

enum us_mig_state { US_MIG_REDIRECT = 1, US_MIG_HELD, US_MIG_DRAINING };
enum us_mig_msg_type { US_MIG_PARCEL = 1, US_MIG_MARKER, US_MIG_END };

struct us_mig_msg {
	STAILQ_ENTRY(us_mig_msg) link; /* pending list while a ring is full */
	uint8_t type;
	uint8_t to;                    /* pending: the destination engine */
	struct us_mig_tuple tu;
	struct tcp_parcel *parcel;     /* US_MIG_PARCEL */
};

struct us_mig_entry {
	LIST_ENTRY(us_mig_entry) link;
	struct us_mig_tuple tu;
	uint8_t state;                 /* enum us_mig_state */
	uint8_t next;                  /* REDIRECT: where frames go */
	uint16_t nhold;
	struct rte_mbuf *hold[US_MIG_HOLD]; /* DRAINING: R's own frames, in order */
};

struct us_mig_defer {
	struct us_mig_tuple tu;
	uint8_t to;
};

struct us_migrate {
	LIST_HEAD(, us_mig_entry) b[US_MIG_BUCKETS];
	struct us_mig_defer defer[US_MIG_DEFER];
	unsigned ndefer;
	unsigned n;                    /* entries */
	STAILQ_HEAD(, us_mig_msg) pending;
	bool detaching;                /* a detach's conn_event is no end */
	struct us_handoff *ho;         /* the rings the messages travel on */
};

/* What the table says about a TCP frame (us_migrate_steer). */
enum us_mig_verdict {
	US_MIG_PASS,     /* no entry: the usual owner rule */
	US_MIG_LOCAL,    /* process here */
	US_MIG_FORWARD,  /* to *to */
	US_MIG_TAKEN,    /* held (or dropped and counted): consumed */
};

/* Prototypes */

/* e's table of migrated tuples, its messages travelling on ho, as e's
 * migration stage (stage.h: the moves deferred during an iteration run
 * after it; a connection leaving the table ends its migration).  0 and
 * the table in *out (the hand-off stage steers with it), -ENOMEM or
 * -ENOSPC.  Destroyed with e: held frames, pending messages, entries. */
int us_migrate_attach(struct us_engine *e, struct us_handoff *ho, struct us_migrate **out);
/* Frame m (at Ethernet) received on e's queue (from_ring false) or handed
 * over by another engine (true).  Call only while mg->n > 0. */
enum us_mig_verdict us_migrate_steer(struct us_engine *e, struct us_migrate *mg, struct rte_mbuf *m,
				     bool from_ring, unsigned *to);
/* A message from engine from, in ring order; consumes it. */
void us_migrate_msg_input(struct us_engine *e, struct us_migrate *mg, unsigned from,
			  struct us_mig_msg *msg);
void us_migrate_msg_free(struct us_mig_msg *msg);
/* Retries messages a full ring refused (each loop iteration). */
void us_migrate_flush_pending(struct us_engine *e, struct us_migrate *mg);
/* Sends connection c of engine e to engine to: 0 or -EINVAL (one engine,
 * no such engine, e itself, X -> Y, a state other than
 * ESTABLISHED/CLOSE-WAIT), -EBUSY (called inside the engine's loop or a
 * tcp/ callback; the ring to the target full; the connection's last return
 * still draining), -ENOMEM.  On 0 the caller forgets c (its callbacks are
 * never called again). */
int us_migrate_out(struct us_engine *e, struct tcp_conn *c, unsigned to);
/* The same from inside the loop (a callback-API handler): c's callbacks
 * stop now (the caller forgets c), the move happens at the end of the
 * iteration.  0 or -EINVAL as above, -EBUSY (US_MIG_DEFER moves already
 * waiting).  A move that cannot happen any more then (the connection
 * changed state) resets it, counted migrate_failed. */
int us_migrate_defer(struct us_engine *e, struct tcp_conn *c, unsigned to);
/* us_migrate_out, or us_migrate_defer inside the loop; refusals counted
 * (migrate_failed).  With one engine (no table): -EINVAL. */
int us_migrate_conn(struct us_engine *e, struct tcp_conn *c, unsigned to);
/* Entries in e's table (tests: every migration ended); 0 without one. */
unsigned us_migrate_count(const struct us_engine *e);

#endif
