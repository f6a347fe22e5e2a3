/* stack/api/drain.c: the shutdown drain.  Closes the application started
 * (FINs, RSTs) reach the wire before the port stops: the engines are
 * polled until no connection is left short of TIME_WAIT's end, for at
 * most API_DRAIN_MS; what has not finished closing by then is reset.  The
 * engine threads have returned, so this thread polls them all (hand-offs
 * included). */
#include <stdbool.h>
#include <stdio.h>

#include "stack/api/api_priv.h"
#include "stack/base/timer.h"
#include "tcp/tcp.h"
#include "userstack.h"

/* Types */

/* How long us_fini lets closes finish, and waits for the SYN-ACK of a
 * connection closed in SYN-SENT: a fraction of a second, so a stopping
 * service is not kept waiting. */
#define API_DRAIN_MS 200u

/* A connection closed in SYN-SENT within the drain's span: its SYN-ACK may
 * still come, and only a running stack answers it with the RST that frees
 * the peer's half-open connection (else it retransmits for minutes). */
static bool drain_synack_awaited(const struct us_stack *st, uint64_t now)
{
	for (unsigned k = 0; k < st->n; k++) {
		if (st->eng[k].engine == NULL)
			continue;
		uint64_t t = tcp_syn_sent_closed_ns(us_engine_tcp(st->eng[k].engine));
		if (t != 0 && now - t < US_MS(API_DRAIN_MS))
			return true;
	}
	return false;
}

void api_drain(struct us_stack *st)
{
	/* A start that failed before EAL (bad config) has no clock and no
	 * engine: nothing to drain (and tsc_hz 0 would divide by zero). */
	if (!st->eal_up || st->tsc_hz == 0)
		return;
	uint64_t until = api_now_ns(st) + US_MS(API_DRAIN_MS);

	/* Nothing new is accepted while the closes drain (an accept now
	 * would reach an application that has stopped). */
	for (unsigned k = 0; k < st->n; k++)
		if (st->eng[k].engine != NULL)
			tcp_unlisten_all(us_engine_tcp(st->eng[k].engine));
	while ((us_conn_count(st) > 0 || drain_synack_awaited(st, api_now_ns(st))) &&
	       api_now_ns(st) < until)
		for (unsigned k = 0; k < st->n; k++)
			if (st->eng[k].engine != NULL)
				us_engine_poll(st->eng[k].engine, api_now_ns(st));
	/* What has not finished its close by now is reset, so that the
	 * peers do not keep their side for minutes (tcp_reset_unfinished). */
	unsigned reset = 0;
	for (unsigned k = 0; k < st->n; k++) {
		if (st->eng[k].engine == NULL)
			continue;
		reset += tcp_reset_unfinished(us_engine_tcp(st->eng[k].engine));
		us_engine_flush(st->eng[k].engine);
	}
	if (reset > 0)
		fprintf(stderr, "userstack: shutdown: %u connection(s) had not finished closing "
			"within %u ms: reset (exit_resets)\n", reset, API_DRAIN_MS);
}
