/* stack/net/net6.h: IPv6 below the transports: the interface's addresses
 * (ip6_addr.c, with Duplicate Address Detection), the header and its
 * extension-header chain (ip6.c), routes (route6.c), fragments (frag6.c),
 * ICMPv6 (icmp6.c) and Neighbor Discovery (nd6.c).  Their state lives in
 * struct us_net (net.h) beside IPv4's; the same ownership rules hold: each
 * *_input and *_output consumes the mbuf it is given.
 *
 * Addresses are struct us_in6 (stack/base/in6.h): network byte order, as in
 * the header.  Every IPv6 drop is counted under its reason (stats.h,
 * ip6_* / icmp6_* / nd6_*).
 */
#ifndef US_NET6_H
#define US_NET6_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include "config/config.h"
#include "stack/base/in6.h"
#include "stack/base/timer.h"

struct rte_mbuf;
struct us_net;
struct us_config;

/* Types */

/* Where a received frame comes from: us_eth_input and us_arp_input (net.h)
 * take it as well as the IPv6 input calls below. */
enum us_net_rx {
	US_NET_RX_QUEUE,  /* this engine's own port queue */
	/* Handed over by another engine.  An ARP frame, NS or NA among them is
	 * a copy (the engine whose queue received it answers it), so this
	 * engine only learns from it. */
	US_NET_RX_HANDED,
};

/* RFC 8200 5: every link carries 1280-byte packets; a smaller PMTU is
 * refused (RFC 8201 4). */
#define US_IP6_MIN_MTU 1280u

/* The interface's addresses: [0] the link-local one (EUI-64 of the MAC),
 * [1] the configured one, if any. */
#define US_IP6_ADDRS 2

enum us_ip6_addr_state {
	US_IP6_ADDR_NONE = 0,  /* slot unused */
	US_IP6_ADDR_TENTATIVE, /* DAD running: not ours yet (RFC 4862 5.4) */
	US_IP6_ADDR_PREFERRED, /* usable */
	US_IP6_ADDR_DUPLICATE, /* DAD found another owner: never used */
};

struct us_ip6_ifaddr {
	struct us_in6 a;
	uint8_t plen;
	uint8_t state;        /* enum us_ip6_addr_state */
	uint8_t dad_left;     /* solicitations still to send */
	struct us_timer dad_timer;
	struct us_net *n;     /* the DAD timer's way back */
};

/* RFC 4862 5.1: DupAddrDetectTransmits, one RetransTimer (RFC 4861 10)
 * apart and after the last. */
#define US_IP6_DAD_TRANSMITS 1
#define US_IP6_DAD_WAIT_NS US_SEC(1)

/* Neighbour cache (RFC 4861 7.3.2). */
enum us_nd6_state {
	US_ND6_INCOMPLETE = 1,
	US_ND6_REACHABLE,
	US_ND6_STALE,
	US_ND6_DELAY,
	US_ND6_PROBE,
};

/* State, embedded in struct us_net.  Each struct belongs to the files
 * named on it. */

/* ip6_addr.c */
struct us_ip6_addrs {
	struct us_ip6_ifaddr a[US_IP6_ADDRS];
	bool dad;             /* [ip6] dad */
};

/* Neighbour cache bounds: an entry for each neighbour we talk to; when
 * full, the least recently used STALE entry (else the least recently used
 * one) makes room. */
#define US_ND6_BUCKETS 64          /* power of two */
#define US_ND6_MAX_ENTRIES 256

/* RFC 4861 10: the protocol constants.  REACHABLE_TIME is not randomized
 * (RFC 4861 6.3.2 asks for 0.5..1.5 x BaseReachableTime): one value keeps
 * the state machine reproducible, and we answer to no router's RA. */
#define US_ND6_REACHABLE_TIME_NS US_SEC(30)
#define US_ND6_RETRANS_TIMER_NS US_SEC(1)
#define US_ND6_DELAY_FIRST_PROBE_NS US_SEC(5)
#define US_ND6_MAX_MULTICAST_SOLICIT 3
#define US_ND6_MAX_UNICAST_SOLICIT 3

struct us_nd6_entry {
	LIST_ENTRY(us_nd6_entry) link; /* its bucket, or the free list */
	TAILQ_ENTRY(us_nd6_entry) lru; /* in use: least recently used first */
	struct us_net *n;
	struct us_in6 ip;
	uint8_t state;        /* enum us_nd6_state; 0: free */
	uint8_t probes;       /* solicitations sent in INCOMPLETE or PROBE */
	bool router;          /* IsRouter (RFC 4861 7.2.5) */
	uint16_t npending;
	struct rte_ether_addr mac;
	struct us_timer timer; /* retransmission, reachable time, delay */
	struct rte_mbuf **pending; /* pending_max slots, FIFO by index */
};

LIST_HEAD(us_nd6_list, us_nd6_entry);
TAILQ_HEAD(us_nd6_lru, us_nd6_entry);

/* route6.c: the static routes, longest prefix first. */
#define US_ROUTES6_MAX (US_CFG_MAX_ROUTES + 2)

struct us_route6_entry {
	struct us_in6 net;    /* host bits clear */
	uint8_t plen;
	bool has_gw;          /* false: on-link */
	struct us_in6 gw;
};

/* route6.c: path MTUs lowered by Packet Too Big (RFC 8201), a few
 * destinations at a time: a new one takes an aged or the oldest slot.
 * RFC 8201 4: an estimate ages out after at least 5 minutes (10
 * recommended), so that a path that grew is used again. */
#define US_IP6_PMTU_MAX 16
#define US_IP6_PMTU_AGE_NS US_SEC(600)

struct us_ip6_pmtu {
	struct us_in6 dst;
	uint16_t mtu;         /* 0: slot free */
	uint64_t since_ns;    /* when it was learned */
};

/* frag6.c: datagrams being reassembled (bounded, with timeouts). */
#define US_FRAG6_DGRAMS 64      /* datagrams in progress at once */
#define US_FRAG6_FRAGS 64       /* fragments held per datagram */
#define US_FRAG6_HELD 1024      /* fragments held in all (mbufs kept from the pool) */
#define US_FRAG6_TIMEOUT_NS US_SEC(60) /* RFC 8200 4.5 */

struct us_frag6_dgram;

struct us_frag6_table {
	unsigned n;           /* datagrams in progress */
	unsigned held;        /* fragments held, all datagrams */
	struct us_frag6_dgram *d; /* US_FRAG6_DGRAMS slots (frag6.c) */
};

/* ip6.c, route6.c, frag6.c */
struct us_ip6_state {
	uint8_t hop_limit;    /* [ip6] hop_limit */
	uint32_t next_frag_id;
	struct us_frag6_table frag;
	/* route6.c */
	struct us_route6_entry routes[US_ROUTES6_MAX];
	unsigned nroutes;
	struct us_ip6_pmtu pmtu[US_IP6_PMTU_MAX];
	/* Slots ever filled (none is emptied): while 0, a lookup, made for
	 * every IPv6 segment sent, skips the walk. */
	unsigned npmtu;
};

/* icmp6.c: the error rate limit (a token bucket, like IPv4's). */
struct us_icmp6_state {
	uint64_t refill_ns;
	uint32_t tokens;
};

/* nd6.c */
struct us_nd6_table {
	unsigned n;           /* entries in use */
	struct us_nd6_list buckets[US_ND6_BUCKETS];
	struct us_nd6_list free;
	struct us_nd6_lru lru;
	struct us_nd6_entry *entries;
	struct rte_mbuf **pending_store;
	unsigned pending_max; /* [arp] pending_max: packets held per unresolved neighbour */
};

/* Flags for us_ip6_output. */
#define US_IP6_TCP_CSUM 0x1 /* TCP segment: offload its checksum if the port can */
#define US_IP6_NO_FRAG 0x2  /* never fragment (TCP: PMTU discovery lowers its MSS instead) */

/* Prototypes: ip6_addr.c (addresses and DAD) */

/* Fills n's addresses from cfg ([ip6] addr, the link-local one from the
 * MAC) as TENTATIVE, or PREFERRED when [ip6] dad = off. */
int us_ip6_addr_init(struct us_net *n, const struct us_config *cfg);
void us_ip6_addr_fini(struct us_net *n);
/* Starts DAD on every tentative address (the engine's first poll). */
void us_ip6_addr_start(struct us_net *n);
/* Is a one of our PREFERRED addresses? */
bool us_ip6_is_local(const struct us_net *n, const struct us_in6 *a);
/* Is a a tentative address of ours (DAD: NS for it from :: means a
 * duplicate, RFC 4862 5.4.3)? */
bool us_ip6_is_tentative(const struct us_net *n, const struct us_in6 *a);
/* A group this interface has joined: all-nodes ff02::1 and the
 * solicited-node group of each of our addresses, tentative ones included. */
bool us_ip6_is_joined(const struct us_net *n, const struct us_in6 *group);
/* The source for a packet to dst (RFC 6724, reduced to our two addresses):
 * the link-local one for link-local and multicast link-scope destinations,
 * else the configured one; -EADDRNOTAVAIL when none is PREFERRED. */
int us_ip6_src_for(const struct us_net *n, const struct us_in6 *dst, struct us_in6 *src);
/* DAD found the address a taken (an NA for it, or an NS from :: while
 * tentative): marks it DUPLICATE, logs and counts. */
void us_ip6_addr_duplicate(struct us_net *n, const struct us_in6 *a);
/* Every configured address either PREFERRED (true) or DUPLICATE (false,
 * start-up fails); *done false while DAD is still running. */
bool us_ip6_addr_dad_result(const struct us_net *n, bool *done);
/* Slot i's address (0: link-local, 1: configured) and its state; NONE for
 * an unused slot. */
enum us_ip6_addr_state us_ip6_addr_at(const struct us_net *n, unsigned i, struct us_in6 *a);
/* Another engine of the same stack ran DAD for the same addresses: take
 * its verdict instead of soliciting again. */
void us_ip6_addr_adopt(struct us_net *n, const struct us_net *from);
/* A 33:33 destination MAC (RFC 2464 7) of a group we joined: the low 32
 * bits of ff02::1 or of a solicited-node group of ours.  Coarser than
 * us_ip6_is_joined (the MAC keeps 32 bits of the group): IPv6 checks the
 * whole destination next. */
bool us_ip6_is_joined_mac(const struct us_net *n, const struct rte_ether_addr *mac);

/* Prototypes: ip6.c */

/* Hop limit, routes (us_route6_init). */
int us_ip6_init(struct us_net *n, const struct us_config *cfg);
/* Prepends a fixed IPv6 header to m (at its payload): traffic class and
 * flow label 0.  0, or -ENOBUFS (no headroom; m untouched). */
int us_ip6_prepend(struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
		   uint8_t proto, uint8_t hop_limit);
/* The same with a flow label (RFC 6437: a transport's per-flow label). */
int us_ip6_prepend_flow(struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst,
			uint8_t proto, uint8_t hop_limit, uint32_t flow_label);
/* Follows the Next Header fields of a chain that the walk accepted (or
 * whose headers are at least complete) from the IPv6 header at offset
 * ip_off of m: the upper-layer protocol, its offset, and the offset of the
 * byte that names it; a fragment with a non-zero offset ends the chain
 * there (*proto IPPROTO_FRAGMENT).  0, or -EINVAL when a header is cut
 * off or the chain is longer than US_IP6_EXT_MAX. */
int us_ip6_skip_ext(const struct rte_mbuf *m, uint32_t ip_off, uint8_t *proto, uint32_t *l4_off,
		    uint32_t *nh_off);

/* m at the IPv6 header; from: as for us_eth_input (an NS or NA handed over
 * by another engine is a copy, enum us_net_rx). */
void us_ip6_input(struct us_net *n, struct rte_mbuf *m, enum us_net_rx from);
/* m at the L4 header with headroom for IPv6 (+ a fragment header) +
 * Ethernet; src NULL: chosen by us_ip6_src_for; hop_limit 0: [ip6]
 * hop_limit.  Routes, fragments what exceeds the path MTU (unless
 * US_IP6_NO_FRAG), resolves the next hop through ND and queues. */
void us_ip6_output(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *src,
		   const struct us_in6 *dst, uint8_t proto, uint8_t hop_limit, unsigned flags);
/* The same with a flow label (TCP's per connection, tcp/tcb.c). */
void us_ip6_output_flow(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *src,
			const struct us_in6 *dst, uint8_t proto, uint8_t hop_limit,
			unsigned flags, uint32_t flow_label);

/* Prototypes: ip6_ext.c (the extension-header chain, RFC 8200 4) */

/* Where the chain of a received packet ends. */
struct us_ip6_chain {
	uint8_t proto;        /* upper-layer protocol (IPPROTO_NONE: nothing follows) */
	uint16_t l4_off;      /* its header's offset from the IPv6 header */
	uint16_t frag_off;    /* the fragment header's offset, 0 when none */
	uint16_t frag_nh_off; /* offset of the Next Header byte that names it */
	unsigned nhdrs;       /* extension headers walked */
};

/* What the walk asks the caller to do with a packet it refuses. */
struct us_ip6_refusal {
	bool icmp;            /* send an ICMPv6 error (RFC 8200 4.2, 4.4) ... */
	uint8_t type, code;   /* ... of this type and code ... */
	uint32_t pointer;     /* ... pointing at this offset (parameter problem) ... */
	bool even_mcast;      /* ... even to a packet sent to a multicast group
			       * (an unrecognised option whose type's two
			       * high-order bits are 10, RFC 8200 4.2) */
};

/* Walks the chain of the packet whose IPv6 header is at m's data start,
 * within the bounds below: 0 and *c, or -EINVAL (dropped, counted under
 * its reason, *r says whether an error is owed).  Hop-by-hop only first;
 * unknown options by their two high-order bits (RFC 8200 4.2); a routing
 * header of type 0 refused (RFC 5095), others by Segments Left (4.4). */
#define US_IP6_EXT_MAX 8        /* extension headers per packet */
#define US_IP6_EXT_BYTES 1024u  /* bytes of extension headers per packet */
int us_ip6_walk(struct us_net *n, const struct rte_mbuf *m, struct us_ip6_chain *c,
		struct us_ip6_refusal *r);

/* Prototypes: frag6.c (RFC 8200 4.5; overlaps RFC 5722; atomic RFC 6946) */

int us_frag6_init(struct us_net *n);
/* Frees every datagram in progress, cancels the timer. */
void us_frag6_fini(struct us_net *n);
/* m at the IPv6 header, c its chain (c->frag_off != 0).  Consumes m:
 * returns the whole datagram (m at its IPv6 header, the fragment header
 * gone, the Payload Length and the Next Header before it fixed, every
 * header through the upper-layer one in its first segment) when this
 * fragment completes it or it is atomic, else NULL; the caller walks the
 * datagram again (us_ip6_walk) for what follows.  An overlap drops the
 * whole datagram; a timeout sends Time Exceeded (code 1) when the first
 * fragment had arrived; a fragment refused alone may send a parameter
 * problem (RFC 8200 4.5: length, end past 65535, incomplete header chain).
 * Bounded by US_FRAG6_DGRAMS, US_FRAG6_FRAGS and US_FRAG6_HELD. */
struct rte_mbuf *us_frag6_input(struct us_net *n, struct rte_mbuf *m, const struct us_ip6_chain *c);
/* m at the IPv6 header, longer than mtu: cut into fragments of at most mtu
 * bytes each (a fragment header after the unfragmentable part, RFC 8200
 * 4.5), placed in out[] ready for ND.  The count, or -errno with m freed.
 * m's checksums must be final (a fragment cannot be offloaded); the
 * unfragmentable part is the fixed header (we send no extension headers);
 * the fragments reference m's data through n->indirect_pool. */
int us_frag6_output(struct us_net *n, struct rte_mbuf *m, uint16_t mtu, struct rte_mbuf **out,
		    unsigned max);

/* Prototypes: route6.c */

/* 0 and the next hop (dst itself when on-link or multicast), or
 * -ENETUNREACH.  Longest prefix first; fe80::/10 is always on-link. */
int us_route6_lookup(const struct us_net *n, const struct us_in6 *dst, struct us_in6 *next_hop);
/* The on-link prefix of [ip6] addr, [ip6] routes, the default route via
 * [ip6] gateway.  0 or -EINVAL / -ENOSPC. */
int us_route6_init(struct us_net *n, const struct us_config *cfg);
/* The MTU for a packet to dst: the port's, or less when a Packet Too Big
 * lowered it (never below US_IP6_MIN_MTU). */
uint16_t us_ip6_path_mtu(const struct us_net *n, const struct us_in6 *dst);
/* A Packet Too Big reported mtu for dst: 0 when that lowered its path MTU,
 * -EINVAL below US_IP6_MIN_MTU (RFC 8201 4), -EALREADY when it is not
 * lower than what we use (a PTB never raises it). */
int us_ip6_pmtu_lower(struct us_net *n, const struct us_in6 *dst, uint32_t mtu);

/* Prototypes: icmp6.c */

/* m at the ICMPv6 header; ip6 its IPv6 header (in front of m's data). */
void us_icmp6_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6,
		    enum us_net_rx from);
/* Sends an ICMPv6 error (RFC 4443 2.4) quoting the packet whose IPv6
 * header is ip6, up to the end of m's data (ip6 points into m), as much as
 * fits in 1280 bytes; rate-limited, never about an error or a packet to a
 * multicast address (except Packet Too Big and the parameter problem of an
 * unrecognized option whose action bits ask for it).  Does not consume m. */
void us_icmp6_error(struct us_net *n, uint8_t type, uint8_t code, uint32_t param,
		    const struct rte_ipv6_hdr *ip6, const struct rte_mbuf *m);
/* The ICMPv6 checksum (RFC 4443 2.3) over m's data from its current start
 * with the pseudo-header of src/dst: 0xffff for a correct received one. */
uint16_t us_icmp6_cksum(const struct rte_mbuf *m, const struct us_in6 *src, const struct us_in6 *dst);

/* Prototypes: nd6.c */

int us_nd6_init(struct us_net *n, const struct us_config *cfg);
/* Frees every entry and pending packet, cancels every timer. */
void us_nd6_fini(struct us_net *n);
/* m at the ICMPv6 header of an NS, NA, RS, RA or redirect (types 133..137).
 * from US_NET_RX_HANDED: another engine's queue received it and answers
 * it; here an NS is only learned from (7.2.3), an NA updates the cache as
 * any NA does (7.2.5) and still counts for DAD. */
void us_nd6_input(struct us_net *n, struct rte_mbuf *m, const struct rte_ipv6_hdr *ip6,
		  enum us_net_rx from);
/* m at its IPv6 header, ready to go: to next_hop's MAC (a multicast
 * next hop maps to its 33:33 group), or queued while next_hop resolves. */
void us_nd6_output(struct us_net *n, struct rte_mbuf *m, const struct us_in6 *next_hop);
/* Sends a Neighbor Solicitation for target: from :: to its solicited-node
 * group (DAD), else from our address with our MAC. */
void us_nd6_solicit(struct us_net *n, const struct us_in6 *target, bool dad);
/* The unsolicited all-nodes NA of our addresses (RFC 4861 7.2.6), at start. */
void us_nd6_announce(struct us_net *n);
/* 0 and the MAC when usable (REACHABLE, STALE, DELAY, PROBE); -EAGAIN
 * while INCOMPLETE; -ENOENT. */
int us_nd6_lookup(const struct us_net *n, const struct us_in6 *ip, struct rte_ether_addr *mac);
/* An upper layer saw forward progress with ip (RFC 4861 7.3.1: a TCP ACK
 * of new data): REACHABLE again without a probe. */
void us_nd6_confirm(struct us_net *n, const struct us_in6 *ip);
/* RFC 4861 7.3.1: upper-layer doubt (TCP's negative advice): a REACHABLE
 * entry becomes STALE, so the next packet starts unreachability detection;
 * true if it was REACHABLE. */
bool us_nd6_unconfirm(struct us_net *n, const struct us_in6 *ip);
/* ip's entry state (enum us_nd6_state), or -ENOENT (tests, listings). */
int us_nd6_state(const struct us_net *n, const struct us_in6 *ip);
/* Packets waiting for ip's resolution (-ENOENT if no entry). */
int us_nd6_pending(const struct us_net *n, const struct us_in6 *ip);

#endif
