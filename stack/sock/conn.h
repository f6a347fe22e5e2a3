/* stack/sock/conn.h: the callback API (conn.c: us_tcp_listen*, us_conn_*)
 * and the two things it needs of the stack it serves, which the life
 * cycle (stack/api) implements: the engines and the listener records.
 * Private to stack/sock and stack/api.
 */
#ifndef US_SOCK_CONN_H
#define US_SOCK_CONN_H

#include "userstack.h"

struct us_engine;

/* Types */

/* Listener records, one per successful us_tcp_listen / us_tcp_listen_engine
 * call, kept for the stack's life (tcp/ holds a pointer to its record as
 * the listener's ctx).  A limit of this API alone: tcp/ has no listener
 * limit (its TCP_LISTEN_BUCKETS are hash buckets), and an isolated port's
 * rules (US_FLOWCTL_LISTENERS ports, shared with the sockets' listeners)
 * refuse a port of their own accord. */
#define US_CONN_LISTENERS 64

struct us_conn_listener {
	struct us_tcp_handlers h;
	void *ctx;
};

struct us_conn_listeners {
	struct us_conn_listener l[US_CONN_LISTENERS];
	unsigned n;
};

/* Prototypes: the life cycle's side (stack/api) */

/* Engine k of st, NULL if st has no such engine (or not yet). */
struct us_engine *us_stack_engine(const struct us_stack *st, unsigned k);
/* st's listener records (empty at us_init). */
struct us_conn_listeners *us_stack_listeners(struct us_stack *st);

#endif
