/* tests/sim/verdict.c: what the world accepts as the end of a conversation
 * (docs/SIMULATION.md, "What explains a failed conversation"): complete,
 * every byte checked; reset on purpose; or failed in a way a fault, a lossy
 * path or a peer's timed-out orphan explains.  Anything else fails the
 * world. */
#include <errno.h>

#include "tests/sim/world.h"

/* A path that can lose packets: random loss, Gilbert-Elliott bursts, or a
 * bottleneck whose queue tail-drops under a bulk flow.  Loss can beat any
 * retry budget: the emulator's burst state moves per packet, so a bad
 * state outlasts a whole chain of backed-off retransmissions, and a
 * congested queue drops every keepalive probe of an idle connection. */
bool sim_path_lossy(const struct sim_world *w, unsigned a, unsigned b)
{
	const struct nic_impair_params *x = &w->plan.link[a][b], *y = &w->plan.link[b][a];

	return !w->cut.no_impair && (x->ge || y->ge || x->loss_pct > 0 || y->loss_pct > 0 ||
				     x->rate_bps > 0 || y->rate_bps > 0);
}

static uint64_t link_drops(const struct nic_impair *l)
{
	const struct nic_impair_stats *x = l != NULL ? nic_impair_stats(l) : NULL;

	return x != NULL ? x->dropped_random + x->dropped_burst + x->dropped_queue_full + x->dropped_limit : 0;
}

uint64_t sim_path_drops(const struct sim_world *w, unsigned a, unsigned b)
{
	return link_drops(w->link[a][b]) + link_drops(w->link[b][a]);
}

/* What explains conversation k's failure: a fault that touched it while it
 * lived (a restart of either stack, a partition or loss burst on the path
 * between them), a timed-out orphan, or loss on the path for a timeout. */
bool sim_explained(const struct sim_world *w, unsigned k)
{
	const struct sim_conv_plan *cp = &w->plan.conv[k];
	const struct sim_conv *c = &w->conv[k];
	uint64_t from = w->t0 + cp->start_ns, to = c->done ? c->done_ns : w->now;

	if (c->end[0].lost || c->end[1].lost)
		return true;
	/* A reset from a peer whose application had closed cleanly: its
	 * orphaned TCB went away, at its FIN-WAIT-2 bound (Linux's
	 * tcp_fin_timeout) or, on a lossy path, out of retries with data or
	 * its FIN unacknowledged, and the next segment this end sent (a
	 * keepalive probe of a reader that stalled) met a closed port. */
	for (unsigned s = 0; s < 2; s++) {
		const struct sim_end *e = &c->end[s], *peer = &c->end[!s];
		unsigned ps = s ? cp->cli : cp->srv;

		if (e->err == ECONNRESET && peer->done && !peer->err && !peer->lost &&
		    (e->err_ns >= peer->closed_ns + US_MS(w->plan.stack[ps].tcp.time_wait_ms) ||
		     sim_path_lossy(w, cp->cli, cp->srv)))
			return true;
	}
	if ((c->end[0].err == ETIMEDOUT || c->end[1].err == ETIMEDOUT) && sim_path_lossy(w, cp->cli, cp->srv))
		return true;
	/* The server's SYN-RECEIVED TCB ran out of SYN-ACK retries on a lossy
	 * path (every ACK lost): the client's next segment meets a reset. */
	if (c->end[0].err == ECONNRESET && !c->end[1].open && sim_path_lossy(w, cp->cli, cp->srv))
		return true;
	for (unsigned f = 0; f < w->plan.nfaults; f++) {
		const struct sim_fault_plan *x = &w->plan.fault[f];
		uint64_t a = w->t0 + x->at_ns, b = a + x->dur_ns;
		bool path = (x->a == cp->cli && x->b == cp->srv) || (x->a == cp->srv && x->b == cp->cli);

		if (x->off || b < from || a > to)
			continue;
		if (x->kind == SIM_F_RESTART && (x->a == cp->cli || x->a == cp->srv))
			return true;
		if ((x->kind == SIM_F_PARTITION || x->kind == SIM_F_LOSS) && path)
			return true;
	}
	return false;
}

void sim_verdict(struct sim_world *w)
{
	for (unsigned k = 0; k < w->plan.nconvs; k++) {
		const struct sim_conv *c = &w->conv[k];
		const struct sim_conv_plan *cp = &w->plan.conv[k];
		bool err = c->end[0].err || c->end[1].err || c->end[0].lost || c->end[1].lost;

		if (cp->off)
			continue;
		if (c->aborted) {
			w->n.convs_aborted++;
			continue;
		}
		if (err) {
			if (!sim_explained(w, k))
				sim_fail(w, "conv %u (%s): client %s, server %s, and no fault explains it", k,
					 sim_conv_str(w, k),
					 c->end[0].err ? strerror(c->end[0].err) : "ok",
					 c->end[1].err ? strerror(c->end[1].err) : "ok");
			w->n.convs_err++;
			continue;
		}
		/* A stream cut short without an error nobody saw: a client that
		 * closed with data still in flight, whose orphaned connection
		 * then failed (no socket left to report it), as a kernel's
		 * would.  Only a fault or a lossy path explains it (an early
		 * end of stream already failed in end_finish). */
		if ((c->end[0].rcvd != cp->side[1].bytes || c->end[1].rcvd != cp->side[0].bytes) &&
		    (sim_explained(w, k) || sim_path_lossy(w, cp->cli, cp->srv))) {
			w->n.convs_err++;
			continue;
		}
		if (c->end[0].rcvd != cp->side[1].bytes || c->end[1].rcvd != cp->side[0].bytes)
			sim_fail(w, "conv %u (%s): %lu of %lu and %lu of %lu bytes delivered", k,
				 sim_conv_str(w, k),
				 (unsigned long)c->end[1].rcvd, (unsigned long)cp->side[0].bytes,
				 (unsigned long)c->end[0].rcvd, (unsigned long)cp->side[1].bytes);
		w->n.convs_ok++;
	}
}
