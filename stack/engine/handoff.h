/* stack/engine/handoff.h: software hand-off between the engines of one stack.
 *
 * Every engine owns one RX queue.  Where the port's own steering (RSS with
 * our key, rte_flow rules) agrees with us, a TCP segment reaches the queue
 * of the engine that owns its connection.  Where it does not (a PMD without
 * RSS that spreads flows its own way, like af_packet's fanout), the engine
 * that received the frame passes it to the owner over a single-producer /
 * single-consumer rte_ring, one per ordered pair of engines, in bursts; the
 * owner processes and frees it (Seastar forwards the same way).
 *
 * The owner of a TCP 4-tuple (IPv4 or IPv6) is RETA[Toeplitz(symmetric
 * key, tuple)]: the symmetric key (a 16-bit pattern, so swapping addresses
 * and ports of either family changes nothing) makes both directions
 * agree, so an active open that
 * picks its source port with us_handoff_port_ok is owned by the engine that
 * sent the SYN, and a listener replicated on every engine accepts a passive
 * open on the engine the SYN's tuple hashes to.  ARP frames, and IPv6
 * Neighbor Solicitations and Advertisements, are copied to every engine
 * (each keeps its own ARP table and neighbour cache, DESIGN.md: read-mostly
 * state published by message); ICMP errors quoting a TCP segment go to its
 * connection's owner; other frames stay where they arrived.
 *
 * No locks: each ring has one writer engine and one reader engine.
 */
#ifndef US_HANDOFF_H
#define US_HANDOFF_H

#include <stdbool.h>
#include <stdint.h>

#include "nic/rss.h"
#include "stack/base/in6.h"
#include "stack/base/limits.h"

struct rte_ipv4_hdr;
struct rte_mbuf;
struct rte_ring;
struct rte_tcp_hdr;
struct us_engine;

/* Types */

#define US_HANDOFF_RING 1024  /* frames in flight per engine pair */
#define US_HANDOFF_BURST 32

/* Where a received frame goes (us_handoff_classify). */
enum us_handoff_dest {
	US_HO_LOCAL,   /* process here */
	US_HO_OWNER,   /* another engine owns it: *owner says which */
	US_HO_ALL_ARP, /* ARP: here and a copy to every other engine */
	US_HO_ALL_ND6, /* IPv6 NS or NA: the same */
};

struct us_handoff {
	unsigned n;                                          /* engines */
	struct us_rss rss;                                   /* owner computation */
	struct rte_ring *ring[US_ENGINES_MAX][US_ENGINES_MAX]; /* [from][to] */
};

/* Prototypes */

/* n engines (2..US_ENGINES_MAX) with rss's key and RETA over n queues;
 * name makes the ring names unique per stack.  NULL + errno. */
struct us_handoff *us_handoff_create(unsigned n, const struct us_rss *rss, const char *name);
/* Frees every frame still in a ring, then the rings.  Engines stopped. */
void us_handoff_destroy(struct us_handoff *h);
/* The engine owning TCP tuple remote:rport -> local:lport (addresses as
 * tcp/ has them, IPv4 v4-mapped; ports host order): the Toeplitz hash of
 * the IPv4 or IPv6 tuple. */
unsigned us_handoff_owner(const struct us_handoff *h, const struct us_in6 *rip,
			  const struct us_in6 *lip, uint16_t rport, uint16_t lport);
/* Active open: is lport a source port whose connection engine self owns? */
bool us_handoff_port_ok(const struct us_handoff *h, unsigned self, const struct us_in6 *lip,
			const struct us_in6 *rip, uint16_t rport, uint16_t lport);
/* Where frame m (at its Ethernet header) belongs; *owner for US_HO_OWNER.
 * Reads headers only. */
enum us_handoff_dest us_handoff_classify(const struct us_handoff *h, const struct rte_mbuf *m,
					 unsigned *owner);
/* Sends n frames from engine from to engine to; returns how many the ring
 * took (the caller frees and counts the rest). */
unsigned us_handoff_send(struct us_handoff *h, unsigned from, unsigned to,
			 struct rte_mbuf **pkts, unsigned n);
/* Frames handed to engine to by engine from, up to n. */
unsigned us_handoff_recv(struct us_handoff *h, unsigned from, unsigned to,
			 struct rte_mbuf **pkts, unsigned n);

/* Messages between engines (stack/engine/migrate.c) travel on the same rings as
 * frames, as tagged pointers: an mbuf is cache-line aligned, so bit 0 of a
 * frame's pointer is always clear and a pointer with it set is a message.
 * One ring per ordered pair, one producer, FIFO: a message and the frames
 * enqueued around it keep their order (what migration's ordering rests on). */
static inline bool us_handoff_is_msg(const void *p)
{
	return ((uintptr_t)p & 1u) != 0;
}

static inline void *us_handoff_msg_ptr(void *p)
{
	return (void *)((uintptr_t)p & ~(uintptr_t)1u);
}

/* Enqueues message msg (not tagged yet) behind what from already sent to
 * to: true if the ring took it. */
bool us_handoff_send_msg(struct us_handoff *h, unsigned from, unsigned to, void *msg);
/* Free places in the ring from -> to (from's thread: a later send of that
 * many cannot fail). */
unsigned us_handoff_room(const struct us_handoff *h, unsigned from, unsigned to);
/* The IPv4/TCP header of an unfragmented TCP frame m (at Ethernet), with
 * its IPv4 header in *ip; NULL for anything else.  Reads headers only. */
const struct rte_tcp_hdr *us_handoff_tcp(const struct rte_mbuf *m,
					 const struct rte_ipv4_hdr **ip);
/* The connection frame m is about, from our side (addresses as tcp/ has
 * them, ports host order): a TCP segment to us over either family, or an
 * ICMP or ICMPv6 error quoting a segment of ours (path MTU news for that
 * connection); false for anything else (a fragment among them). */
bool us_handoff_conn_of(const struct rte_mbuf *m, struct us_in6 *lip, uint16_t *lport,
			struct us_in6 *rip, uint16_t *rport);

/* Prototypes: stage_handoff.c, the engine's side */

/* Engine e (its id = its queue) hands frames it does not own to their
 * owner through ho and takes those handed to it (a stage, stage.h), with
 * a migration table of its own (migrate.h); active opens pick ports that
 * e owns.  Call before any traffic; ho outlives e.  0, -ENOMEM or
 * -ENOSPC. */
int us_handoff_attach(struct us_engine *e, struct us_handoff *ho);
/* tcp_env.port_ok: is lport a source port whose connection to rip:rport
 * e owns?  Any port without hand-off. */
bool us_handoff_engine_port_ok(const struct us_engine *e, const struct us_in6 *lip,
			       const struct us_in6 *rip, uint16_t rport, uint16_t lport);

#endif
