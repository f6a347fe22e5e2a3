/* stack/sock/sock_table.h: what the life cycle (stack/api/) needs of the
 * socket layer: one descriptor table per engine, created, bound to the
 * thread that drives the engine, printed and destroyed.  The tables' and
 * sockets' insides stay in socket_priv.h.
 */
#ifndef US_SOCK_TABLE_H
#define US_SOCK_TABLE_H

#include <stdint.h>
#include <stdio.h>

#include "stack/base/limits.h"

struct us_engine;
struct us_sock_table;

/* Types */

/* A descriptor is (table slot << US_FD_SHIFT | index): a call finds its
 * engine's table from the descriptor alone.  One slot per engine. */
#define US_FD_SHIFT 20
#define US_FD_MAX_PER_TABLE (1u << US_FD_SHIFT)
_Static_assert(US_ENGINES_MAX <= (1u << (31 - US_FD_SHIFT)), "descriptors stay positive ints");

/* How the table drives its engine: production polls the NIC on the real
 * clock, tests move virtual time and may run a peer engine too. */
struct us_sock_driver {
	uint64_t (*now_ns)(void *ctx);
	void (*poll)(void *ctx); /* one engine loop iteration */
	void *ctx;
};

/* Prototypes */

/* socket.c: a table for engine e, registered in slot (0 .. US_ENGINES_MAX-1),
 * with room for cap descriptors; NULL + errno (EBUSY: slot taken). */
struct us_sock_table *us_sock_table_create(struct us_engine *e, unsigned slot, unsigned cap,
					   const struct us_sock_driver *drv);
/* Closes every socket (connections reset if not closed already) and frees
 * the table; call before destroying the engine. */
void us_sock_table_destroy(struct us_sock_table *tab);
/* The thread that calls this creates its sockets on tab's engine. */
void us_sock_table_bind_thread(struct us_sock_table *tab);
/* The table's counters, one "name value  # description" line each. */
void us_sock_print_stats(const struct us_sock_table *tab, FILE *out);

#endif
