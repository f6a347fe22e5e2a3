/* stack/engine/engine_priv.h: the engine's state and the interfaces between the
 * layers below TCP (eth.c, arp.c, route.c, ip.c, icmp.c, udp.c).  Private to
 * stack/ and its tests.
 *
 * Buffer ownership on every path: each *_input and *_output function
 * consumes the mbuf it is given (forwards, queues or frees+counts it).
 * Frames waiting for TX sit in e->tx until us_engine_flush hands them to
 * port.tx, which consumes them.
 */
#ifndef US_ENGINE_PRIV_H
#define US_ENGINE_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>

#include "stack/engine/engine.h"
#include "stack/engine/stage.h"
#include "stack/net/stats.h"
#include "stack/base/timer.h"
#include "tcp/tcp.h"

/* Types */

#define US_RX_BURST 32
#define US_TX_BUF 256              /* room for frames waiting for TX */
/* Frames handed to the PMD as soon as this many wait, not only at the end of
 * the poll: the peer starts on the first answers of a burst while we build
 * the rest (bench/PERF.md "Lock-step bursts": 16 instead of 256 measured
 * ka-64 x2.1, close x1.4, bulk x1.4 over memif). */
#define US_TX_FLUSH 16
#define US_WHEEL_TICK_NS US_MS(1)

#define US_ARP_BUCKETS 256         /* power of two */
#define US_ARP_MAX_ENTRIES 1024
#define US_ARP_MAX_TRIES 3         /* requests before giving a next hop up */

#define US_ROUTES_MAX (US_CFG_MAX_ROUTES + 2)

/* RFC 791 suggests a reassembly timer of about 15 s; Linux uses 30 s. */
#define US_IP_FRAG_TIMEOUT_NS US_SEC(30)
#define US_IP_FRAG_BUCKETS 64
#define US_IP_FRAG_BUCKET_ENTRIES 8
#define US_IP_FRAG_MAX_OUT 64      /* fragments per datagram on output */

/* Flags for us_ip_output. */
#define US_IP_DF 0x1       /* set Don't Fragment (TCP: PMTU discovery) */
#define US_IP_TCP_CSUM 0x2 /* TCP segment: offload its checksum if the port can */

/* ICMP error rate limit (token bucket, like Linux's icmp_msgs_per_sec/burst). */
#define US_ICMP_RATE_PER_SEC 1000
#define US_ICMP_BURST 50

enum us_arp_state {
	US_ARP_INCOMPLETE = 1, /* request sent, packets may be pending */
	US_ARP_REACHABLE,      /* MAC known until the expiry timer fires */
};

struct us_arp_entry {
	LIST_ENTRY(us_arp_entry) link;
	struct us_engine *e;
	uint32_t ip; /* host byte order */
	uint8_t state;
	uint8_t tries;
	uint16_t npending;
	struct rte_ether_addr mac;
	struct us_timer timer;    /* retry (INCOMPLETE) or expiry (REACHABLE) */
	struct rte_mbuf **pending; /* arp_pending_max slots, FIFO by index */
};

LIST_HEAD(us_arp_list, us_arp_entry);

struct us_arp_table {
	struct us_arp_list buckets[US_ARP_BUCKETS];
	struct us_arp_list free;
	struct us_arp_entry *entries;
	struct rte_mbuf **pending_store;
	unsigned pending_max;
};

struct us_route_entry {
	uint32_t net;     /* host byte order, masked */
	uint32_t mask;
	uint32_t gateway; /* 0 = directly connected */
	uint8_t prefixlen;
};

/* Kept sorted by prefix length, longest first: the first match wins. */
struct us_route_table {
	struct us_route_entry r[US_ROUTES_MAX];
	unsigned n;
};

struct us_ip_state {
	uint16_t next_id;
	struct rte_ip_frag_tbl *frag_tbl;
	struct rte_ip_frag_death_row dr;
	struct us_timer frag_timer;
	uint64_t last_frag_ns;
};

struct us_icmp_state {
	uint64_t refill_ns;
	uint32_t tokens;
};

struct us_engine {
	unsigned id;
	struct us_config cfg;
	uint32_t addr;      /* host byte order */
	uint32_t bcast;     /* directed broadcast of the connected subnet */
	struct rte_mempool *pool;
	struct rte_mempool *indirect_pool; /* fragmentation output */
	struct us_port_ops port;
	struct us_timer_wheel wheel;
	uint16_t ntx;
	struct rte_mbuf *tx[US_TX_BUF];
	struct us_arp_table arp;
	struct us_route_table routes;
	struct us_ip_state ip;
	struct us_icmp_state icmp;
	struct tcp_stack *tcp;
	struct us_stack_stats stats;
	/* UDP sockets (stack/sock/socket_udp.c): takes a valid datagram for a bound
	 * port (0, m consumed) or -ENOENT (ICMP port unreachable follows). */
	int (*udp_deliver)(void *ctx, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip);
	void *udp_ctx;
	/* Optional stages (stage.h): the wire, hand-off, migration, published
	 * state, flow rules; none with one engine and no [impair]/[capture]. */
	struct us_stages stages;
	/* True while frames handed over by another engine are processed: an
	 * ARP frame among them is a copy (the receiving engine answers it),
	 * so this engine only learns from it. */
	bool rx_handed;
	bool polling;                /* inside us_engine_poll */
};

#define US_STAT_INC(e, name) ((e)->stats.name++)
#define US_STAT_ADD(e, name, n) ((e)->stats.name += (n))

/* Prototypes: engine.c */

/* Queue one complete frame for TX (flushes early when the buffer is full). */
void us_engine_tx(struct us_engine *e, struct rte_mbuf *m);
/* us_engine_input for a frame another engine handed over (stage_handoff.c). */
void us_engine_input_handed(struct us_engine *e, struct rte_mbuf *m);

/* Prototypes: eth.c */

/* m at the Ethernet header. */
void us_eth_input(struct us_engine *e, struct rte_mbuf *m);
/* m at the L3 header; prepends Ethernet and queues for TX. */
void us_eth_output(struct us_engine *e, struct rte_mbuf *m, const struct rte_ether_addr *dst,
		   uint16_t ethertype);

/* Prototypes: arp.c */

int us_arp_init(struct us_engine *e);
/* Frees every entry and pending packet, cancels every timer. */
void us_arp_fini(struct us_engine *e);
/* m at the ARP header. */
void us_arp_input(struct us_engine *e, struct rte_mbuf *m);
/* m at its IPv4 header, ready to go: send to next_hop's MAC, or queue it and
 * resolve next_hop (host byte order). */
void us_arp_output(struct us_engine *e, struct rte_mbuf *m, uint32_t next_hop);
void us_arp_announce(struct us_engine *e);
/* 0 and the MAC when reachable; -EAGAIN while resolving; -ENOENT. */
int us_arp_lookup(const struct us_engine *e, uint32_t ip, struct rte_ether_addr *mac);
/* Packets waiting for ip's resolution (-ENOENT if no entry). */
int us_arp_pending(const struct us_engine *e, uint32_t ip);

/* Prototypes: route.c */

/* Connected subnet, cfg->routes, default gateway.  0 or -EINVAL. */
int us_route_init(struct us_route_table *t, const struct us_config *cfg);
/* Longest-prefix match: 0 and the next hop, or -ENETUNREACH. */
int us_route_lookup(const struct us_route_table *t, uint32_t dst, uint32_t *next_hop);

/* Prototypes: ip.c */

int us_ip_init(struct us_engine *e);
void us_ip_fini(struct us_engine *e);
/* m at the IPv4 header. */
void us_ip_input(struct us_engine *e, struct rte_mbuf *m);
/* m at the L4 header with headroom for IPv4 + Ethernet; addresses host byte
 * order; flags US_IP_*.  Routes, fragments if needed, resolves and queues. */
void us_ip_output(struct us_engine *e, struct rte_mbuf *m, uint32_t src, uint32_t dst,
		  uint8_t proto, unsigned flags);
/* Is dst (host byte order) one of ours, broadcast included? */
bool us_ip_is_local(const struct us_engine *e, uint32_t dst);
bool us_ip_is_bcast(const struct us_engine *e, uint32_t dst);
/* 224.0.0.0/4 (host byte order).  Not RTE_IS_IPV4_MCAST: its RTE_IPV4()
 * shifts a signed int into the sign bit (undefined behaviour, UBSan). */
static inline bool us_ip_is_mcast(uint32_t a) { return (a >> 28) == 0xe; }

/* Prototypes: icmp.c */

/* m at the ICMP header; ip is its IPv4 header (in front of m's data). */
void us_icmp_input(struct us_engine *e, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip);
/* Sends a destination unreachable quoting ip and the first 8 bytes of the
 * datagram's payload (m at the L4 header).  Does not consume m. */
void us_icmp_unreach(struct us_engine *e, uint8_t code, const struct rte_ipv4_hdr *ip,
		     const struct rte_mbuf *m);

/* Prototypes: udp.c */

/* m at the UDP header. */
void us_udp_input(struct us_engine *e, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip);

#endif
