/* tcp/tfo_syncookie_stub.h: "is this listener answering with SYN cookies?"
 * for Fast Open admission (RFC 7413 5.1: no Fast Open under a SYN flood).
 *
 * SYN cookies come with another branch (tcp/syncookie.h,
 * tcp_listener_syncookies_active).  Until it is merged this stub answers
 * through the stack's test seam (struct tcp_tfo_stack.syncookies_hook), so
 * the refusal path is already exercised by tests/pkt/test_fastopen.c.
 * Included by tcp/tfo.c only.
 */
#ifndef US_TCP_TFO_SYNCOOKIE_STUB_H
#define US_TCP_TFO_SYNCOOKIE_STUB_H

#include "tcp/tcb.h"

/* TODO(merge): replace with tcp_listener_syncookies_active */
static inline bool tfo_syncookies_active(const struct tcp_conn *l)
{
	return l->ts->tfo.syncookies_hook != NULL && l->ts->tfo.syncookies_hook(l);
}

#endif
