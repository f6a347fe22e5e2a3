/* stack/engine/stage_handoff.c: the engine's side of the hand-off between
 * engines (handoff.h has the rings and the owner rule), as a stage
 * (stage.h): after the wire it keeps the frames this engine owns and hands
 * the others to their owners; before the port's RX burst it takes what
 * the other engines handed over.  Migrated connections (migrate.h) bend
 * both ways through the migration table this stage holds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "stack/engine/engine_priv.h"
#include "stack/engine/handoff.h"
#include "stack/engine/migrate.h"

/* Types */

struct handoff_stage {
	struct us_handoff *ho;  /* shared by the engines, owned by the stack */
	struct us_migrate *mig; /* e's own table (its own stage) */
};

/* ARP and IPv6 neighbour discovery reach every engine: each keeps its own
 * ARP table and neighbour cache (DESIGN.md: one writer per copy, no shared
 * mutable state), and a reply may come back on another engine's queue than
 * the request went out of.  The engine whose queue received the frame
 * answers it; the copies are only learned from (US_NET_RX_HANDED). */
static void handoff_copy_all(struct us_engine *e, struct us_handoff *ho, const struct rte_mbuf *m,
			     enum us_handoff_dest d)
{
	for (unsigned k = 0; k < ho->n; k++) {
		struct rte_mbuf *c;

		if (k == e->id)
			continue;
		c = rte_pktmbuf_copy(m, e->pool, 0, UINT32_MAX);
		if (c == NULL) {
			US_STAT_INC(e, steer_drop_no_mbuf);
			continue;
		}
		if (us_handoff_send(ho, e->id, k, &c, 1) != 1) {
			rte_pktmbuf_free(c);
			US_STAT_INC(e, steer_drop_ring_full);
		} else if (d == US_HO_ALL_ARP) {
			US_STAT_INC(e, steer_arp_copies);
		} else {
			US_STAT_INC(e, steer_nd6_copies);
		}
	}
}

/* An NS or NA this stack takes: to our MAC or to a group we joined.  With
 * [ip6] on the port runs all-multicast, and another node's solicitations
 * for its own group are not worth a copy per engine (with [ip6] off every
 * engine would drop any copy unread). */
static bool handoff_nd6_ours(const struct us_engine *e, const struct rte_mbuf *m)
{
	const struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, const struct rte_ether_hdr *);

	return e->net.ip6_on && (rte_is_same_ether_addr(&eh->dst_addr, &e->net.port.mac) ||
				 us_ip6_is_joined_mac(&e->net, &eh->dst_addr));
}

/* Sends each owner its frames in one burst; what a full ring refuses is
 * freed and counted. */
static void handoff_flush(struct us_engine *e, struct us_handoff *ho,
			  struct rte_mbuf *out[][US_RX_BURST], const unsigned *nout)
{
	for (unsigned k = 0; k < ho->n; k++) {
		unsigned sent;

		if (nout[k] == 0)
			continue;
		sent = us_handoff_send(ho, e->id, k, out[k], nout[k]);
		US_STAT_ADD(e, steer_handoff_out, sent);
		if (sent < nout[k]) {
			rte_pktmbuf_free_bulk(out[k] + sent, nout[k] - sent);
			US_STAT_ADD(e, steer_drop_ring_full, nout[k] - sent);
		}
	}
}

/* Keeps the frames this engine owns in pkts (returns how many) and hands
 * the others to their owners. */
static uint16_t handoff_steer(struct us_engine *e, void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct handoff_stage *hs = ctx;
	struct rte_mbuf *out[US_ENGINES_MAX][US_RX_BURST];
	unsigned nout[US_ENGINES_MAX] = { 0 };
	uint16_t keep = 0;

	for (uint16_t i = 0; i < n; i++) {
		unsigned owner = e->id;
		enum us_handoff_dest d = US_HO_OWNER;
		enum us_mig_verdict v = hs->mig->n > 0 ?
			us_migrate_steer(e, hs->mig, pkts[i], false, &owner) : US_MIG_PASS;

		if (v == US_MIG_TAKEN)
			continue;
		if (v == US_MIG_PASS)
			d = us_handoff_classify(hs->ho, pkts[i], &owner);
		if (d == US_HO_ALL_ARP || (d == US_HO_ALL_ND6 && handoff_nd6_ours(e, pkts[i])))
			handoff_copy_all(e, hs->ho, pkts[i], d);
		if (owner != e->id) {
			out[owner][nout[owner]++] = pkts[i];
			continue;
		}
		US_STAT_INC(e, steer_rx_own);
		/* Steering agreed with us: no hand-off needed for this connection. */
		if (d == US_HO_OWNER)
			US_STAT_INC(e, steer_rx_own_tcp);
		pkts[keep++] = pkts[i];
	}
	handoff_flush(e, hs->ho, out, nout);
	return keep;
}

/* One pointer from engine k's ring: a message (migrate.h), or a frame for
 * here or, for a migrated connection, for where it went. */
static void handoff_one(struct us_engine *e, struct handoff_stage *hs, unsigned k, void *p,
			struct rte_mbuf *out[][US_RX_BURST], unsigned *nout)
{
	struct rte_mbuf *m = p;
	unsigned to = e->id;

	if (us_handoff_is_msg(p)) {
		/* Frames forwarded before it stay ahead of whatever it sends. */
		handoff_flush(e, hs->ho, out, nout);
		memset(nout, 0, sizeof(*nout) * US_ENGINES_MAX);
		us_migrate_msg_input(e, hs->mig, k, us_handoff_msg_ptr(p));
		return;
	}
	US_STAT_INC(e, steer_handoff_in);
	if (hs->mig->n > 0) {
		switch (us_migrate_steer(e, hs->mig, m, true, &to)) {
		case US_MIG_TAKEN:
			return;
		case US_MIG_FORWARD:
			if (to != e->id) {
				out[to][nout[to]++] = m;
				return;
			}
			break;
		default:
			break;
		}
	}
	us_engine_input_handed(e, m);
}

/* Frames the other engines handed to this one, processed like received
 * ones (the owner frees them).  They go first in the iteration: they left
 * their queues before what ours holds now (a migrated connection whose
 * flow rule just moved here sees its forwarded frames before its direct
 * ones). */
static unsigned handoff_input(struct us_engine *e, void *ctx)
{
	struct handoff_stage *hs = ctx;
	void *pkts[US_HANDOFF_BURST];
	struct rte_mbuf *out[US_ENGINES_MAX][US_RX_BURST];
	unsigned nout[US_ENGINES_MAX] = { 0 };
	unsigned total = 0;

	us_migrate_flush_pending(e, hs->mig);
	for (unsigned k = 0; k < hs->ho->n; k++) {
		unsigned got;

		if (k == e->id)
			continue;
		/* At most US_RX_BURST forwarded per destination per burst. */
		got = us_handoff_recv(hs->ho, k, e->id, (struct rte_mbuf **)pkts,
				      RTE_MIN(US_HANDOFF_BURST, US_RX_BURST));
		for (unsigned i = 0; i < got; i++)
			handoff_one(e, hs, k, pkts[i], out, nout);
		handoff_flush(e, hs->ho, out, nout);
		memset(nout, 0, sizeof(nout));
		total += got;
	}
	return total;
}

static void handoff_destroy(struct us_engine *e, void *ctx)
{
	(void)e;
	free(ctx); /* the rings are the stack's, the table its own stage's */
}

static const struct us_stage_ops handoff_ops = {
	.name = "handoff",
	.place = US_PLACE_HANDOFF,
	.input = handoff_input,
	.steer = handoff_steer,
	.destroy = handoff_destroy,
};

int us_handoff_attach(struct us_engine *e, struct us_handoff *ho)
{
	struct handoff_stage *hs = calloc(1, sizeof(*hs));
	int rc;

	if (hs == NULL)
		return -ENOMEM;
	hs->ho = ho;
	rc = us_migrate_attach(e, ho, &hs->mig);
	if (rc == 0)
		rc = us_engine_stage_add(e, &handoff_ops, hs);
	if (rc < 0)
		free(hs); /* a table already attached goes with e */
	return rc;
}

bool us_handoff_engine_port_ok(const struct us_engine *e, const struct us_in6 *lip,
			       const struct us_in6 *rip, uint16_t rport, uint16_t lport)
{
	const struct handoff_stage *hs = us_engine_stage_ctx(e, &handoff_ops);

	return us_handoff_port_ok(hs != NULL ? hs->ho : NULL, e->id, lip, rip, rport, lport);
}
