/* tests/pkt/tcp_pair.h: two tcp_stacks in one process, joined by two seeded
 * nic/impair stages (one per direction), in virtual time.
 *
 * No PMD and no EAL lcore: each stack's env->output prepends an IPv4 header
 * and hands the segment to the stage of its direction; tp_run() moves time
 * forward to the next packet departure or timer tick and feeds what departs
 * to the other stack's tcp_input.  Same seeds, same calls: the same run
 * (the stages are deterministic and nothing reads a real clock), so a
 * failing transfer can be replayed exactly.
 *
 * Ownership: every mbuf a stack emits belongs to a stage until it departs
 * (then to the receiving stack) or the stage drops or flushes it.
 */
#ifndef US_TCP_PAIR_H
#define US_TCP_PAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "nic/impair.h"
#include "stack/base/timer.h"
#include "tcp/tcp.h"

/* Types */

/* The client side (10.1.0.1 or fd01::1) and the server side (10.1.0.2 or
 * fd01::2), in the family US_PKT_FAMILY names (4 unless it is 6): the
 * frames between them carry that family's IP header. */
#define TP_IP_A (tp_addr(0))
#define TP_IP_B (tp_addr(1))

struct tp_pair;

struct tp_dir {
	struct tp_pair *p;
	struct nic_impair *imp;   /* towards the other stack */
	struct tcp_stack **to;    /* the receiving stack */
	uint64_t sent;            /* segments handed to the stage */
};

struct tp_pair {
	struct rte_mempool *pool;
	uint64_t now;             /* virtual ns */
	struct us_timer_wheel wa, wb;
	struct tcp_stack *a, *b;
	struct tp_dir ab, ba;
	uint64_t no_mbuf;         /* IP header could not be prepended */
};

/* Prototypes */

/* Side 0 (A) or 1 (B)'s address. */
const struct us_in6 *tp_addr(unsigned side);

/* cfg applies to both stacks; ab/ba impair each direction.  0 or -errno. */
int tp_create(struct tp_pair *p, struct rte_mempool *pool, const struct tcp_config *cfg,
	      const struct nic_impair_params *ab, const struct nic_impair_params *ba);
/* Runs until done(ctx) is true or `until_ns` is reached; true when done. */
bool tp_run(struct tp_pair *p, uint64_t until_ns, bool (*done)(void *ctx), void *ctx);
/* Destroys both stacks (every TCB) and both stages. */
void tp_destroy(struct tp_pair *p);

/* The stream pattern both sides check: byte at stream offset off. */
static inline uint8_t tp_pattern(uint64_t off)
{
	uint64_t x = off * 0x9e3779b97f4a7c15ull;

	return (uint8_t)(x >> 56 ^ off >> 13);
}

#endif
