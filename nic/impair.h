/* nic/impair.h: a seeded link emulator (our own netem; the kernel here has
 * none) for loss-recovery tests.
 *
 * A pure, deterministic stage: it never calls ethdev and never reads a
 * clock.  The caller passes mbufs with their arrival time and later asks for
 * the packets whose departure time has come (smoltcp's poll_at() shape):
 *
 *   nic_impair_enqueue(imp, pkts, n, now_ns);   takes ownership of all n
 *   nic_impair_dequeue(imp, out, max, now_ns);  ready packets, in departure order
 *   nic_impair_next_ns(imp);                    earliest pending departure
 *
 * Fate of one packet, in this order (netem's order, less its qdisc tree):
 *  1. Loss.  Bernoulli with loss_pct, and/or the 4-parameter Gilbert-Elliott
 *     chain: per packet the state moves first (good->bad with ge_p, bad->good
 *     with ge_r), then the packet is lost with ge_loss_bad or ge_loss_good of
 *     the new state.  In the classic notation (h, k = chances of delivery in
 *     bad and good state) these are 1-h and 1-k; the spec takes them in
 *     netem's order "ge=p:r:1-h:1-k", so "ge=0.01:0.3:1:0" is the simple
 *     Gilbert model: bursts of mean length 1/r, never a loss in good state.
 *     The chain runs for every packet even when Bernoulli already dropped it,
 *     so the two models do not perturb each other's sequence.
 *  2. Duplication with dup_pct: the copy then takes steps 3-5 on its own.
 *  3. Bottleneck (rate_bps > 0): a FIFO serialising size*8/rate per packet
 *     (size = pkt_len, no framing overhead) behind a queue of queue_bytes;
 *     a packet that does not fit is tail-dropped (dropped_queue_full), so loss
 *     can come from congestion alone.  The queue is held as the time the link
 *     frees up, and its backlog in bytes derived from that.
 *  4. Delay: delay_us plus a uniform jitter in [-jitter_us, +jitter_us], but
 *     never earlier than the previous in-order packet: jitter alone does not
 *     reorder (a real path's queue does not), so reordering is only what
 *     step 5 asks for and is counted.
 *  5. Reordering with reorder_pct: the packet is held back an extra
 *     reorder_gap_us, so packets arriving within that gap overtake it.  (The
 *     "swap with next" variant is not built: it needs a timeout anyway for a
 *     packet that has no next one, which is what the gap already is.)
 *
 * Pending packets sit in a binary heap keyed by departure time, ties by
 * arrival order, bounded by limit packets (dropped_limit beyond).
 *
 * Determinism: same params (seed included) and the same enqueue calls at the
 * same times give the same fate to every packet.  Each decision draws from its
 * own splitmix64 stream derived from the seed, so e.g. turning on duplication
 * does not change which packets the loss model drops.
 *
 * Duplicates are deep copies (rte_pktmbuf_copy from the original's pool), not
 * refcount clones: the receiver of a copy may rewrite headers in place (our
 * stack does, and so do PMDs filling offload fields), and an indirect mbuf
 * would share that data with the original; a clone also needs an extra pool of
 * indirect mbufs.  The copy costs nothing that matters in a test tool.
 *
 * Ownership: every mbuf enqueued is either returned once by dequeue or freed
 * and counted (dropped_*; flushed by nic_impair_destroy).
 */
#ifndef US_NIC_IMPAIR_H
#define US_NIC_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rte_mbuf;

/* Types */

#define NIC_IMPAIR_COUNTERS(X) \
	X(enqueued, "packets offered to the stage") \
	X(passed, "packets delivered by dequeue (copies included)") \
	X(dropped_random, "dropped: Bernoulli loss") \
	X(dropped_burst, "dropped: Gilbert-Elliott loss") \
	X(dropped_queue_full, "dropped: bottleneck queue full (tail drop)") \
	X(dropped_limit, "dropped: pending-packet limit reached") \
	X(dup_no_mbuf, "duplicate not made: mbuf pool empty") \
	X(duplicated, "duplicates made") \
	X(reordered, "packets held back by the reorder gap") \
	X(delayed, "packets given a departure later than their arrival") \
	X(flushed, "pending packets freed by nic_impair_destroy")

struct nic_impair_stats {
#define NIC_IMPAIR_X_FIELD(name, desc) uint64_t name;
	NIC_IMPAIR_COUNTERS(NIC_IMPAIR_X_FIELD)
#undef NIC_IMPAIR_X_FIELD
};

#define NIC_IMPAIR_DEFAULT_LIMIT 10000u        /* pending packets */
#define NIC_IMPAIR_DEFAULT_QUEUE (256u * 1024) /* bottleneck bytes, when rate is set */
#define NIC_IMPAIR_DEFAULT_GAP_US 1000u        /* reorder hold-back */

struct nic_impair_params {
	uint64_t seed;
	uint64_t delay_us, jitter_us;
	double loss_pct;              /* Bernoulli, 0..100 */
	bool ge;                      /* Gilbert-Elliott on */
	double ge_p, ge_r;            /* good->bad, bad->good, 0..1 */
	double ge_loss_bad;           /* 1-h: loss probability in bad state */
	double ge_loss_good;          /* 1-k: loss probability in good state */
	double reorder_pct;           /* 0..100 */
	uint64_t reorder_gap_us;
	double dup_pct;               /* 0..100 */
	uint64_t rate_bps;            /* 0 = no bottleneck */
	uint64_t queue_bytes;         /* bottleneck queue */
	uint32_t limit;               /* pending packets in the stage */
};

struct nic_impair;

/* Prototypes */

/* No impairment at all, seed 1, default limit, queue and gap. */
void nic_impair_params_defaults(struct nic_impair_params *p);
/* Parses "delay=50ms,jitter=5ms,loss=1%,ge=0.01:0.3:1:0,reorder=2%,
 * reorder_gap=1ms,dup=1%,rate=100mbit,queue=256kb,limit=10000,seed=42" on top
 * of the defaults.  "" and "none" mean no impairment.  Times take ns/us/ms/s,
 * rates bit/kbit/mbit/gbit (10^3 steps), queues b/kb/mb (2^10 steps),
 * percentages need '%', the ge fields are probabilities 0..1 (or n%).
 * 0, or -EINVAL with a message naming the bad item in err. */
int nic_impair_parse(const char *spec, struct nic_impair_params *out, char *err, size_t errlen);
/* One line: the params as a spec nic_impair_parse accepts. */
void nic_impair_format(const struct nic_impair_params *p, char *buf, size_t len);

/* NULL and errno (EINVAL, ENOMEM) on failure. */
struct nic_impair *nic_impair_create(const struct nic_impair_params *p);
/* Frees pending packets (counted as flushed) and the stage. */
void nic_impair_destroy(struct nic_impair *imp);
/* Takes ownership of all n mbufs (single-segment or chained). */
void nic_impair_enqueue(struct nic_impair *imp, struct rte_mbuf **pkts, uint16_t n,
			uint64_t now_ns);
/* Up to max packets whose departure is <= now_ns, earliest first. */
uint16_t nic_impair_dequeue(struct nic_impair *imp, struct rte_mbuf **out, uint16_t max,
			    uint64_t now_ns);
/* Earliest pending departure, UINT64_MAX when nothing is pending. */
uint64_t nic_impair_next_ns(const struct nic_impair *imp);
uint32_t nic_impair_pending(const struct nic_impair *imp);
const struct nic_impair_stats *nic_impair_stats(const struct nic_impair *imp);
/* Prints every counter as "prefix name value  # desc" lines. */
void nic_impair_stats_print(const struct nic_impair *imp, const char *prefix, FILE *f);

#endif
