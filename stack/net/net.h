/* stack/net/net.h: the network layers below TCP (eth.c, arp.c, route.c, ip.c,
 * icmp.c, udp.c): their state and their calls.
 *
 * One struct us_net per engine, embedded in it; only that engine's core
 * touches it.  What the layers need from the engine (the mbuf pool, the
 * timer wheel, the port's facts, somewhere to send frames) is handed over
 * once by us_net_init; TCP and the UDP sockets attach afterwards.
 *
 * Buffer ownership on every path: each *_input and *_output function
 * consumes the mbuf it is given (forwards, queues or frees+counts it).
 * Frames ready for the wire wait in n->tx until the engine's tx_drain hands
 * them to the port, which consumes them.
 */
#ifndef US_NET_H
#define US_NET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_ether.h>
#include <rte_gso.h>
#include <rte_ip.h>
#include <rte_ip_frag.h>

#include "config/config.h"
#include "stack/base/timer.h"
#include "stack/net/frag_dup.h"
#include "stack/net/net6.h"
#include "stack/net/stats.h"

struct rte_mbuf;
struct rte_mempool;
struct tcp_stack;

/* Types */

#define US_TX_BUF 256              /* room for frames waiting for TX */
/* Frames handed to the PMD as soon as this many wait, not only at the end of
 * the poll: the peer starts on the first answers of a burst while we build
 * the rest (bench/PERF.md "Lock-step bursts": 16 instead of 256 measured
 * ka-64 x2.1, close x1.4, bulk x1.4 over memif). */
#define US_TX_FLUSH 16

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

/* enum us_net_rx, where a received frame comes from (us_eth_input): in
 * net6.h, whose input calls take it too. */

/* What the layers know of the port. */
struct us_net_port {
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool tx_ip_csum; /* set RTE_MBUF_F_TX_IP_CKSUM instead of computing */
	bool tx_l4_csum; /* set RTE_MBUF_F_TX_TCP/UDP_CKSUM + pseudo-header sum */
	bool rx_csum;    /* trust RTE_MBUF_F_RX_*_CKSUM_GOOD/BAD flags */
	bool tso;        /* the NIC cuts TCP segments of several MSS */
	bool lro;        /* the NIC coalesces received TCP segments */
};

/* Called when n->tx holds US_TX_FLUSH frames or more (full: no room for
 * the next one, so it must be emptied). */
typedef void (*us_net_tx_drain_fn)(void *ctx, bool full);

/* UDP sockets: takes a valid datagram (m at its UDP header) for a bound port
 * (0, m consumed) or -ENOENT (m untouched, ICMP or ICMPv6 port unreachable
 * follows).  src and dst are its IP header's addresses, both families as
 * struct us_in6 (IPv4 ones v4-mapped, stack/base/in6.h). */
typedef int (*us_net_udp_deliver_fn)(void *ctx, struct rte_mbuf *m, const struct us_in6 *src,
				     const struct us_in6 *dst);

/* What the engine hands the layers once, at us_net_init. */
struct us_net_env {
	unsigned id;                  /* names the fragmentation pool */
	struct rte_mempool *pool;     /* packet buffers, lent */
	struct us_timer_wheel *wheel; /* the engine's clock and timers, lent */
	struct us_net_port port;      /* mtu 0: the configured one, else 1500 */
	us_net_tx_drain_fn tx_drain;
	void *tx_ctx;
};

enum us_arp_state {
	US_ARP_INCOMPLETE = 1, /* request sent, packets may be pending */
	US_ARP_REACHABLE,      /* MAC known until the expiry timer fires */
};

struct us_net;

struct us_arp_entry {
	LIST_ENTRY(us_arp_entry) link;
	struct us_net *n;
	uint32_t ip; /* host byte order */
	uint8_t state;
	uint8_t tries;
	bool polling;             /* a unicast poll is out (us_arp_poll) */
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
	uint32_t retry_ms;  /* [arp] retry_ms */
	uint32_t timeout_s; /* [arp] timeout_s */
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
	uint8_t ttl;        /* of the datagrams we send */
	struct rte_ip_frag_tbl *frag_tbl;
	struct rte_ip_frag_death_row dr;
	struct us_timer frag_timer;
	uint64_t last_frag_ns;
	struct us_frag_dup frag_dup;  /* frag_dup.h */
};

struct us_icmp_state {
	uint64_t refill_ns;
	uint32_t tokens;
};

struct us_net {
	uint32_t addr;      /* host byte order */
	uint32_t bcast;     /* directed broadcast of the connected subnet */
	struct us_net_port port;
	struct tcp_stack *tcp;
	struct us_timer_wheel *wheel;
	struct rte_mempool *pool;
	struct rte_mempool *indirect_pool; /* fragmentation output, owned */
	/* Frames queue here and the engine drains them every US_TX_FLUSH
	 * frames and at the end of its poll: appending stays inline, and the
	 * one call into the engine is paid per US_TX_FLUSH frames, not per
	 * frame. */
	uint16_t ntx;
	struct rte_mbuf *tx[US_TX_BUF];
	us_net_tx_drain_fn tx_drain;
	void *tx_ctx;
	us_net_udp_deliver_fn udp_deliver; /* NULL: no UDP sockets */
	void *udp_ctx;
	struct us_arp_table arp;
	struct us_route_table routes;
	struct us_ip_state ip;
	struct us_icmp_state icmp;
	/* IPv6 ([ip6] enable; off: IPv6 frames are dropped as an unknown
	 * ethertype).  net6.h. */
	bool ip6_on;
	struct us_ip6_addrs ip6a;
	struct us_ip6_state ip6;
	struct us_icmp6_state icmp6;
	struct us_nd6_table nd6;
	/* [port] gso / gro = auto: large TCP segments cut on TX (gso.c), and
	 * received ones coalesced (gro.c), by the NIC or in software. */
	bool gso, gro;
	struct rte_gso_ctx gso_ctx;
	void *gro_ctx; /* rte_gro's table, emptied every burst */
	struct us_stack_stats stats;
};

#define US_NET_STAT_INC(n, name) ((n)->stats.name++)
#define US_NET_STAT_ADD(n, name, k) ((n)->stats.name += (k))

/* Prototypes: net.c */

/* Addresses, routes, ARP table and IPv4 state from cfg; the wheel's now
 * starts the ICMP rate limit.  0, or -EINVAL (routes) / -ENOMEM; call
 * us_net_fini either way. */
int us_net_init(struct us_net *n, const struct us_net_env *env, const struct us_config *cfg);
/* TCP segments and ICMP errors about them go to tcp (NULL: dropped). */
void us_net_set_tcp(struct us_net *n, struct tcp_stack *tcp);
/* Frees every table, pending packet and queued frame (not sent: the port may
 * be gone already), cancels every timer.  After everything that may still
 * hold fragments of n's pool. */
void us_net_fini(struct us_net *n);

/* Prototypes: eth.c */

/* m at the Ethernet header. */
void us_eth_input(struct us_net *n, struct rte_mbuf *m, enum us_net_rx from);
/* m at the L3 header; prepends Ethernet and queues for TX. */
void us_eth_output(struct us_net *n, struct rte_mbuf *m, const struct rte_ether_addr *dst,
		   uint16_t ethertype);

/* Prototypes: arp.c */

int us_arp_init(struct us_net *n, const struct us_config *cfg);
/* Frees every entry and pending packet, cancels every timer. */
void us_arp_fini(struct us_net *n);
/* m at the ARP header. */
void us_arp_input(struct us_net *n, struct rte_mbuf *m, enum us_net_rx from);
/* m at its IPv4 header, ready to go: send to next_hop's MAC, or queue it and
 * resolve next_hop (host byte order). */
void us_arp_output(struct us_net *n, struct rte_mbuf *m, uint32_t next_hop);
void us_arp_announce(struct us_net *n);
/* 0 and the MAC when reachable; -EAGAIN while resolving; -ENOENT. */
int us_arp_lookup(const struct us_net *n, uint32_t ip, struct rte_ether_addr *mac);
/* Packets waiting for ip's resolution (-ENOENT if no entry). */
int us_arp_pending(const struct us_net *n, uint32_t ip);
/* A resolved entry for ip is polled (RFC 1122 2.3.2.1: a request to the
 * MAC it holds, the entry kept in use until it expires unanswered):
 * negative advice from TCP; true if there was one. */
bool us_arp_poll(struct us_net *n, uint32_t ip);
/* RFC 9293 3.8.3 (MUST-20): TCP's negative advice about dst (either
 * family): the next hop's link address is verified again. */
void us_net_negative_advice(struct us_net *n, const struct us_in6 *dst);

/* Prototypes: route.c */

/* Connected subnet, cfg->routes, default gateway.  0 or -EINVAL. */
int us_route_init(struct us_route_table *t, const struct us_config *cfg);
/* Longest-prefix match: 0 and the next hop, or -ENETUNREACH. */
int us_route_lookup(const struct us_route_table *t, uint32_t dst, uint32_t *next_hop);

/* Prototypes: gso.c */

/* The most TCP payload one segment handed to IPv4 may carry when gso is on. */
#define US_GSO_MAX_PAYLOAD (UINT16_MAX - 20u - 60u)
/* Frames one large segment may become: 64 KiB of the smallest MSS (RFC
 * 9293's 536 bytes less options). */
#define US_GSO_FRAMES_MAX 160

void us_gso_init(struct us_net *n);
/* m (at its Ethernet header, RTE_MBUF_F_TX_TCP_SEG, tso_segsz, l2/l3/l4
 * lengths set) as frames ready for the port, checksums filled: out[0] = m
 * itself when the NIC cuts it.  The count, or -errno with m freed. */
int us_gso_cut(struct us_net *n, struct rte_mbuf *m, struct rte_mbuf **out, uint16_t max);

/* Prototypes: gro.c */

/* Coalesces in-order TCP segments of one flow among pkts[0..nb) (frames at
 * their Ethernet header, this engine's) with rte_gro, checksums verified
 * first; the others stay where they were, in order.  Returns the new count. */
uint16_t us_gro(struct us_net *n, struct rte_mbuf **pkts, uint16_t nb);
/* Frames coalesced per call at most (an RX burst), and flows per burst
 * kept apart. */
#define US_GRO_BURST 32
#define US_GRO_FLOWS 8
/* 0 or -ENOMEM. */
int us_gro_init(struct us_net *n, int socket);
void us_gro_fini(struct us_net *n);

/* Prototypes: ip.c */

int us_ip_init(struct us_net *n, const struct us_config *cfg);
void us_ip_fini(struct us_net *n);
/* m at the IPv4 header. */
void us_ip_input(struct us_net *n, struct rte_mbuf *m);
/* m at the L4 header with headroom for IPv4 + Ethernet; addresses host byte
 * order; flags US_IP_*.  Routes, fragments if needed, resolves and queues. */
void us_ip_output(struct us_net *n, struct rte_mbuf *m, uint32_t src, uint32_t dst,
		  uint8_t proto, unsigned flags);
/* The same with a TOS byte and a TTL (0: the configured one), a socket's
 * IP_TOS and IP_TTL. */
void us_ip_output_tos(struct us_net *n, struct rte_mbuf *m, uint32_t src, uint32_t dst,
		      uint8_t proto, unsigned flags, uint8_t tos, uint8_t ttl);
/* Is dst (host byte order) one of ours, broadcast included? */
bool us_ip_is_local(const struct us_net *n, uint32_t dst);
bool us_ip_is_bcast(const struct us_net *n, uint32_t dst);
/* 224.0.0.0/4 (host byte order).  Not RTE_IS_IPV4_MCAST: its RTE_IPV4()
 * shifts a signed int into the sign bit (undefined behaviour, UBSan). */
static inline bool us_ip_is_mcast(uint32_t a) { return (a >> 28) == 0xe; }

/* Prototypes: icmp.c */

/* The ICMP error rate limit (US_ICMP_RATE_PER_SEC, bursts of US_ICMP_BURST)
 * over one bucket: IPv4's (n->icmp) or ICMPv6's (n->icmp6).  True and a
 * token taken, or false. */
bool us_icmp_rate_ok(struct us_net *n, uint64_t *refill_ns, uint32_t *tokens);

/* m at the ICMP header; ip is its IPv4 header (in front of m's data). */
void us_icmp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip);
/* Sends a destination unreachable quoting ip and the first 8 bytes of the
 * datagram's payload (m at the L4 header).  Does not consume m. */
void us_icmp_unreach(struct us_net *n, uint8_t code, const struct rte_ipv4_hdr *ip,
		     const struct rte_mbuf *m);

/* Prototypes: udp.c */

/* Datagrams for bound ports go to deliver(ctx, ...) (NULL: none, every port
 * is closed). */
void us_udp_set_deliver(struct us_net *n, us_net_udp_deliver_fn deliver, void *ctx);
/* m at the UDP header; ip its IPv4 header (in front of m's data). */
void us_udp_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv4_hdr *ip);
/* m at the UDP header; ip6 its IPv6 header (in front of m's data, in its
 * first segment).  A zero checksum is refused (RFC 8200 8.1). */
void us_udp6_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6);

#endif
