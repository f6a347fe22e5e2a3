/* stack/engine/migrate.c: the per-engine table of migrated tuples, the messages
 * (parcel, marker, end) and the frame verdicts; design and the ordering
 * argument in stack/engine/migrate.h. */
#include "stack/engine/migrate.h"

#include <errno.h>
#include <stdlib.h>

#include <rte_byteorder.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "stack/engine/engine_priv.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"
#include "tcp/tcp.h"

/* Table */

static unsigned mig_bucket(const struct us_mig_tuple *tu)
{
	uint32_t w[8], h = (uint32_t)tu->lport << 16 | tu->rport;

	memcpy(w, tu->lip.b, 16);
	memcpy(w + 4, tu->rip.b, 16);
	for (unsigned i = 0; i < 8; i++)
		h = (h ^ w[i]) * 0x9e3779b1u;

	h ^= h >> 15;
	h *= 0x2c1b3c6du;
	return (h ^ (h >> 12)) & (US_MIG_BUCKETS - 1);
}

static bool mig_same(const struct us_mig_tuple *a, const struct us_mig_tuple *b)
{
	return us_in6_eq(&a->lip, &b->lip) && us_in6_eq(&a->rip, &b->rip) && a->lport == b->lport &&
	       a->rport == b->rport;
}

static struct us_mig_entry *mig_lookup(struct us_migrate *mg, const struct us_mig_tuple *tu)
{
	struct us_mig_entry *en;

	LIST_FOREACH(en, &mg->b[mig_bucket(tu)], link)
		if (mig_same(&en->tu, tu))
			return en;
	return NULL;
}

static struct us_mig_entry *mig_add(struct us_migrate *mg, const struct us_mig_tuple *tu)
{
	struct us_mig_entry *en = calloc(1, sizeof(*en));

	if (en == NULL)
		return NULL;
	en->tu = *tu;
	LIST_INSERT_HEAD(&mg->b[mig_bucket(tu)], en, link);
	mg->n++;
	return en;
}

static void mig_del(struct us_migrate *mg, struct us_mig_entry *en)
{
	for (unsigned i = 0; i < en->nhold; i++)
		rte_pktmbuf_free(en->hold[i]);
	LIST_REMOVE(en, link);
	mg->n--;
	free(en);
}

void us_migrate_msg_free(struct us_mig_msg *msg)
{
	if (msg == NULL)
		return;
	tcp_parcel_free(msg->parcel);
	free(msg);
}

static void mig_destroy(struct us_engine *e, void *ctx)
{
	struct us_migrate *mg = ctx;
	struct us_mig_msg *msg;

	(void)e;
	for (unsigned b = 0; b < US_MIG_BUCKETS; b++)
		while (!LIST_EMPTY(&mg->b[b]))
			mig_del(mg, LIST_FIRST(&mg->b[b]));
	while ((msg = STAILQ_FIRST(&mg->pending)) != NULL) {
		STAILQ_REMOVE_HEAD(&mg->pending, link);
		us_migrate_msg_free(msg);
	}
	free(mg);
}

/* Messages */

/* Behind everything e already sent to `to`; a full ring keeps it pending
 * (retried every iteration: nothing of its tuple follows it, see below). */
static void mig_send(struct us_engine *e, struct us_migrate *mg, unsigned to,
		     struct us_mig_msg *msg)
{
	msg->to = (uint8_t)to;
	if (STAILQ_EMPTY(&mg->pending) && us_handoff_send_msg(mg->ho, e->id, to, msg))
		return;
	STAILQ_INSERT_TAIL(&mg->pending, msg, link);
}

void us_migrate_flush_pending(struct us_engine *e, struct us_migrate *mg)
{
	struct us_mig_msg *msg;

	while ((msg = STAILQ_FIRST(&mg->pending)) != NULL) {
		if (!us_handoff_send_msg(mg->ho, e->id, msg->to, msg))
			return;
		STAILQ_REMOVE_HEAD(&mg->pending, link);
	}
}

static struct us_mig_msg *mig_msg_new(uint8_t type, const struct us_mig_tuple *tu)
{
	struct us_mig_msg *msg = calloc(1, sizeof(*msg));

	if (msg != NULL) {
		msg->type = type;
		msg->tu = *tu;
	}
	return msg;
}

static unsigned mig_rss_owner(const struct us_migrate *mg, const struct us_mig_tuple *tu)
{
	return us_handoff_owner(mg->ho, &tu->rip, &tu->lip, tu->rport, tu->lport);
}

static void mig_conn_gone(struct us_engine *e, struct us_migrate *mg,
			  const struct us_mig_tuple *tu);

/* No listener on its port here (or no room for the TCB): reset it from
 * here, counted.  A listener that refuses it (accept queue full) resets
 * it itself and counts that. */
static void mig_refuse(struct us_engine *e, struct us_migrate *mg, struct tcp_parcel *p,
		       const struct us_mig_tuple *tu)
{
	static const struct tcp_callbacks none;
	struct tcp_conn *c;

	US_STAT_INC(e, migrate_failed);
	if (tcp_migrate_attach(e->tcp, p, &none, NULL, &c) == 0) {
		tcp_abort(c); /* its conn_event ends the migration (END) */
		return;
	}
	/* It never entered our table (its tuple is taken): gone silently. */
	tcp_parcel_free(p);
	mig_conn_gone(e, mg, tu);
}

static void mig_parcel_in(struct us_engine *e, struct us_migrate *mg, struct us_mig_msg *msg)
{
	struct us_mig_entry *en = mig_lookup(mg, &msg->tu);
	struct tcp_parcel *p = msg->parcel;
	int rc;

	msg->parcel = NULL;
	if (mig_rss_owner(mg, &msg->tu) == e->id) {
		/* Home again: frames we forwarded are on their way back. */
		if (en != NULL && en->state == US_MIG_REDIRECT) {
			struct us_mig_msg *mk = mig_msg_new(US_MIG_MARKER, &msg->tu);

			en->state = US_MIG_DRAINING;
			if (mk != NULL) {
				mig_send(e, mg, en->next, mk);
			} else {
				mig_del(mg, en); /* no marker: stop holding */
				en = NULL;
			}
		}
	} else if (en == NULL) {
		en = mig_add(mg, &msg->tu);
	}
	if (en != NULL && en->state != US_MIG_DRAINING)
		en->state = US_MIG_HELD;
	rc = tcp_migrate_accept(e->tcp, p);
	if (rc < 0)
		mig_refuse(e, mg, p, &msg->tu);
	else
		US_STAT_INC(e, migrate_in);
	free(msg);
}

/* The marker passes the old holder (its REDIRECT goes: R holds nothing
 * for it now) or comes home to the draining R (every frame R forwarded is
 * back: the held ones follow them, in order). */
static void mig_marker_in(struct us_engine *e, struct us_migrate *mg, struct us_mig_msg *msg)
{
	struct us_mig_entry *en = mig_lookup(mg, &msg->tu);
	unsigned next;

	US_STAT_INC(e, migrate_markers);
	if (en != NULL && en->state == US_MIG_REDIRECT) {
		next = en->next;
		mig_del(mg, en);
		mig_send(e, mg, next, msg);
		return;
	}
	free(msg);
	if (en == NULL || en->state != US_MIG_DRAINING)
		return;
	struct rte_mbuf *held[US_MIG_HOLD];
	unsigned n = en->nhold;

	for (unsigned i = 0; i < n; i++)
		held[i] = en->hold[i];
	en->nhold = 0;
	mig_del(mg, en);
	for (unsigned i = 0; i < n; i++)
		us_engine_input(e, held[i]);
}

void us_migrate_msg_input(struct us_engine *e, struct us_migrate *mg, unsigned from,
			  struct us_mig_msg *msg)
{
	struct us_mig_entry *en;

	(void)from;
	switch (msg->type) {
	case US_MIG_PARCEL:
		mig_parcel_in(e, mg, msg);
		return;
	case US_MIG_MARKER:
		mig_marker_in(e, mg, msg);
		return;
	case US_MIG_END:
		en = mig_lookup(mg, &msg->tu);
		if (en != NULL && en->state == US_MIG_REDIRECT)
			mig_del(mg, en);
		break;
	}
	us_migrate_msg_free(msg);
}

static void mig_conn_gone(struct us_engine *e, struct us_migrate *mg,
			  const struct us_mig_tuple *tu)
{
	struct us_mig_entry *en;
	struct us_mig_msg *msg;

	if (mg->detaching || (en = mig_lookup(mg, tu)) == NULL ||
	    en->state != US_MIG_HELD)
		return;
	mig_del(mg, en);
	/* R forwards nothing more that matters: tell it to stop. */
	msg = mig_msg_new(US_MIG_END, tu);
	if (msg != NULL)
		mig_send(e, mg, mig_rss_owner(mg, tu), msg);
}

/* Frames */

enum us_mig_verdict us_migrate_steer(struct us_engine *e, struct us_migrate *mg, struct rte_mbuf *m,
				     bool from_ring, unsigned *to)
{
	struct us_mig_tuple tu;
	struct us_mig_entry *en;

	/* ICMP errors about a moved connection follow it like its segments:
	 * a frag-needed left at the RSS owner never lowers the MSS of the
	 * TCB that moved away, and the connection black-holes. */
	if (!us_handoff_conn_of(m, &tu.lip, &tu.lport, &tu.rip, &tu.rport))
		return US_MIG_PASS;
	en = mig_lookup(mg, &tu);
	if (en == NULL)
		return US_MIG_PASS;
	switch (en->state) {
	case US_MIG_REDIRECT:
		US_STAT_INC(e, migrate_redirected);
		*to = en->next;
		return US_MIG_FORWARD;
	case US_MIG_DRAINING:
		if (from_ring)
			return US_MIG_LOCAL; /* one coming back: older than any held */
		if (en->nhold == US_MIG_HOLD) {
			US_STAT_INC(e, migrate_drop_hold_full);
			rte_pktmbuf_free(m);
			return US_MIG_TAKEN;
		}
		US_STAT_INC(e, migrate_held);
		en->hold[en->nhold++] = m;
		return US_MIG_TAKEN;
	default:
		return US_MIG_LOCAL;
	}
}

/* The stage */

static void mig_run_deferred(struct us_engine *e, void *ctx);

/* tcp_env.conn_event: only a connection leaving matters, and only while
 * the table has entries. */
static void mig_conn(struct us_engine *e, void *ctx, const struct us_in6 *lip, uint16_t lport,
		     const struct us_in6 *rip, uint16_t rport, bool open)
{
	struct us_migrate *mg = ctx;
	struct us_mig_tuple tu = { .lip = *lip, .rip = *rip, .lport = lport, .rport = rport };

	if (!open && mg->n > 0)
		mig_conn_gone(e, mg, &tu);
}

static const struct us_stage_ops mig_ops = {
	.name = "migrate",
	.place = US_PLACE_MIGRATE,
	.after = mig_run_deferred,
	.conn = mig_conn,
	.destroy = mig_destroy,
};

int us_migrate_attach(struct us_engine *e, struct us_handoff *ho, struct us_migrate **out)
{
	struct us_migrate *mg = calloc(1, sizeof(*mg));
	int rc;

	if (mg == NULL)
		return -ENOMEM;
	STAILQ_INIT(&mg->pending);
	mg->ho = ho;
	rc = us_engine_stage_add(e, &mig_ops, mg);
	if (rc < 0) {
		free(mg);
		return rc;
	}
	*out = mg;
	return 0;
}

/* The call */

static int mig_check(struct us_engine *e, struct us_migrate *mg, const struct us_mig_tuple *tu,
		     unsigned to, struct us_mig_entry **en)
{
	unsigned rss;

	if (mg == NULL || to >= mg->ho->n || to == e->id)
		return -EINVAL;
	rss = mig_rss_owner(mg, tu);
	*en = mig_lookup(mg, tu);
	if (rss == e->id)
		return *en == NULL ? 0 : -EBUSY; /* the last return still draining */
	/* X -> R only. */
	return to == rss && *en != NULL && (*en)->state == US_MIG_HELD ? 0 : -EINVAL;
}

static void mig_tuple_of(struct tcp_conn *c, struct us_mig_tuple *tu)
{
	tcp_conn_local(c, &tu->lip, &tu->lport);
	tcp_conn_peer(c, &tu->rip, &tu->rport);
}

/* Checked: detach c and send it, the REDIRECT in place before the parcel
 * is on the ring (see the ordering argument in migrate.h). */
static int mig_move(struct us_engine *e, struct us_migrate *mg, struct tcp_conn *c, unsigned to)
{
	struct us_mig_tuple tu;
	struct us_mig_entry *en;
	struct us_mig_msg *msg;
	bool added = false;
	int rc;

	mig_tuple_of(c, &tu);
	rc = mig_check(e, mg, &tu, to, &en);
	/* Our ring is SP: with room now, the parcel's enqueue cannot fail. */
	if (rc == 0 && (us_handoff_room(mg->ho, e->id, to) == 0 ||
			!STAILQ_EMPTY(&mg->pending)))
		rc = -EBUSY;
	if (rc < 0)
		return rc;
	msg = mig_msg_new(US_MIG_PARCEL, &tu);
	if (msg != NULL && en == NULL && (en = mig_add(mg, &tu)) != NULL)
		added = true;
	if (msg == NULL || en == NULL) {
		free(msg);
		return -ENOMEM;
	}
	/* Segments this connection queued go out before the target's. */
	us_engine_flush(e);
	mg->detaching = true;
	rc = tcp_migrate_detach(c, &msg->parcel);
	mg->detaching = false;
	if (rc < 0) {
		if (added)
			mig_del(mg, en);
		free(msg);
		return rc;
	}
	/* The flow rule's removal (queued by the detach) now, before the
	 * target can queue its own for the same tuple: a NIC takes one rule
	 * per 5-tuple, so the target's must not meet ours. */
	us_flowrules_apply_all(e); /* ours is the last queued */
	en->state = US_MIG_REDIRECT;
	en->next = (uint8_t)to;
	mig_send(e, mg, to, msg);
	US_STAT_INC(e, migrate_out);
	return 0;
}

int us_migrate_out(struct us_engine *e, struct tcp_conn *c, unsigned to)
{
	/* Inside the loop, frames of this burst already judged ours would
	 * meet no TCB here: us_migrate_defer is for that. */
	if (e->polling)
		return -EBUSY;
	return mig_move(e, us_engine_stage_ctx(e, &mig_ops), c, to);
}

int us_migrate_defer(struct us_engine *e, struct tcp_conn *c, unsigned to)
{
	struct us_migrate *mg = us_engine_stage_ctx(e, &mig_ops);
	struct us_mig_tuple tu;
	struct us_mig_entry *en;
	int rc;

	mig_tuple_of(c, &tu);
	rc = mig_check(e, mg, &tu, to, &en);
	if (rc == -EBUSY)
		rc = 0; /* draining: the deferred move waits for it */
	if (rc == 0 && mg->ndefer == US_MIG_DEFER)
		rc = -EBUSY;
	if (rc < 0)
		return rc;
	tcp_conn_forget(c);
	mg->defer[mg->ndefer].tu = tu;
	mg->defer[mg->ndefer++].to = (uint8_t)to;
	return 0;
}

/* End of an iteration: every frame judged ours is processed, so a move is
 * safe.  A full ring or a drain makes one wait for the next iteration;
 * one that cannot happen any more is reset (nobody owns it now). */
static void mig_run_deferred(struct us_engine *e, void *ctx)
{
	struct us_migrate *mg = ctx;
	unsigned keep = 0;

	if (mg->ndefer == 0)
		return;
	for (unsigned i = 0; i < mg->ndefer; i++) {
		struct us_mig_defer d = mg->defer[i];
		struct tcp_conn *c = tcp_conn_find(e->tcp, &d.tu.lip, d.tu.lport, &d.tu.rip,
						   d.tu.rport);
		int rc = c != NULL ? mig_move(e, mg, c, d.to) : -ENOTCONN;

		if (rc == -EBUSY) {
			mg->defer[keep++] = d;
			continue;
		}
		if (rc < 0) {
			US_STAT_INC(e, migrate_failed);
			if (c != NULL)
				tcp_abort(c);
		}
	}
	mg->ndefer = keep;
}

int us_migrate_conn(struct us_engine *e, struct tcp_conn *c, unsigned to)
{
	int rc = e->polling ? us_migrate_defer(e, c, to) : us_migrate_out(e, c, to);

	if (rc < 0 && us_engine_stage_ctx(e, &mig_ops) != NULL)
		US_STAT_INC(e, migrate_failed);
	return rc;
}

unsigned us_migrate_count(const struct us_engine *e)
{
	const struct us_migrate *mg = us_engine_stage_ctx(e, &mig_ops);

	return mg != NULL ? mg->n : 0;
}
