/* tests/unit/stack/harness.h: one engine over a fake port, in virtual time.
 *
 * The fake port captures every transmitted frame; tests inject frames with
 * us_engine_input, move time with us_engine_advance and free what they took.
 * h_teardown checks the leak rule: the mbuf pool is back to zero in use.
 */
#ifndef US_TEST_HARNESS_H
#define US_TEST_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "config/config.h"
#include "nic/rss.h"
#include "nic/steer_model.h"
#include "stack/engine/engine.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"

/* Types */

#define H_TX_MAX 512
#define H_RX_MAX 64

#define H_IP(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((c) << 8) | (d))
#define H_OUR_IP H_IP(10, 0, 0, 2)
#define H_GW_IP H_IP(10, 0, 0, 1)
#define H_PEER_IP H_IP(10, 0, 0, 7)

struct h_port {
	struct rte_mbuf *tx[H_TX_MAX];
	unsigned ntx;
	struct rte_mbuf *rx[H_RX_MAX];
	unsigned nrx;
};

struct harness {
	struct us_config cfg;
	struct us_port_ops ops;
	struct h_port port;
	struct us_engine *e;
	uint64_t now;
};

#define H_ENG_MAX 4

/* Several engines of one stack (stack/engine/handoff.h), each over its own fake
 * port (its RX queue), joined by hand-off rings; frames reach the queues
 * the way the test says (often through the software NIC model). */
struct h_multi {
	unsigned n;
	struct harness h[H_ENG_MAX];
	struct us_handoff *ho;
	struct us_rss sym;            /* the owner rule, computed here independently */
	struct us_steer_model nic;
	bool has_nic;                 /* h_multi_nic ran: checked and freed at the end */
	unsigned to_queue[H_ENG_MAX]; /* frames put on each engine's queue */
	unsigned wrong[H_ENG_MAX];    /* ... of which another engine owns (h_multi_queue_owned) */
};

extern struct rte_mempool *h_pool;
extern const struct rte_ether_addr h_our_mac, h_peer_mac, h_gw_mac, h_bcast_mac;

/* Prototypes */

/* EAL (once per process) and the shared pool; call from main(). */
void h_eal_init(const char *prefix);
void h_config(struct us_config *cfg);
/* Engine from h->cfg/h->ops after h_prepare (tests may tweak in between). */
void h_prepare(struct harness *h);
void h_start(struct harness *h);
void h_teardown(struct harness *h);
/* Advance virtual time by ns. */
void h_advance(struct harness *h, uint64_t ns);
/* Free every captured TX frame. */
void h_clear_tx(struct harness *h);

/* Several engines: h_multi_prepare (n engines' harnesses and the owner
 * rule; tests may tweak t->h[k].cfg), then h_multi_start (engines and
 * rings); h_multi_finish is the leak check (engines, rings and model gone,
 * every rule left with its engine, every mbuf back). */
void h_multi_prepare(struct h_multi *t, unsigned n);
void h_multi_start(struct h_multi *t);
void h_multi_finish(struct h_multi *t);
/* The software NIC model over rss (capacity flow rules) as t->nic. */
void h_multi_nic(struct h_multi *t, const struct us_rss *rss, uint32_t capacity);
/* Every engine polls until no queue or ring holds a frame. */
void h_multi_run(struct h_multi *t);
/* Frame m waits on engine q's RX queue. */
void h_multi_queue(struct h_multi *t, unsigned q, struct rte_mbuf *m);
/* The same, and counted in t->wrong[q] unless engine q is owner. */
void h_multi_queue_owned(struct h_multi *t, unsigned q, unsigned owner, struct rte_mbuf *m);
/* Every engine takes an ARP op (request or reply) from the peer for our
 * address, so knows the peer's MAC; what they answer is dropped. */
void h_multi_arp_all(struct h_multi *t, uint16_t op);

/* Flow-rule backends over the software NIC model (as stack/api/init.c does with
 * rte_flow): 5-tuple rules of engine e's connections to queue, and the
 * control rules of an isolated port. */
void h_model_flowrules(struct us_engine *e, uint16_t queue, struct us_steer_model *nic);
struct us_flowctl_ops h_model_ctl_ops(struct us_steer_model *nic);

/* Frames */
struct rte_mbuf *h_arp(uint16_t op, const struct rte_ether_addr *sha, uint32_t sip,
		       const struct rte_ether_addr *tha, uint32_t tip,
		       const struct rte_ether_addr *eth_dst);
/* Ethernet + IPv4 (valid checksum, DF clear unless frag_off says) + payload. */
struct rte_mbuf *h_ipv4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
			uint16_t frag_off, const void *payload, size_t len);
/* ICMP echo request message (header + data) into buf; returns its length. */
size_t h_icmp_echo(uint8_t *buf, uint16_t ident, uint16_t seq, size_t data_len);
/* UDP datagram with a valid checksum into buf; returns its length. */
size_t h_udp(uint8_t *buf, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
	     const void *data, size_t len);

/* Ethernet + IPv4 + a 20-byte TCP header (window 65535, valid checksums)
 * from src:sport to dst:dport, with len payload bytes of value fill. */
struct rte_mbuf *h_tcp(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
		       uint8_t flags, uint32_t seq, uint32_t ack, uint8_t fill, size_t len);
/* The same with olen bytes of TCP options (a multiple of 4, at most 40). */
struct rte_mbuf *h_tcp_opts(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
			    uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *opts,
			    size_t olen, uint8_t fill, size_t len);

struct rte_ether_hdr *h_eth(struct rte_mbuf *m);
struct rte_ipv4_hdr *h_iph(struct rte_mbuf *m);
/* Recompute the IPv4 header checksum of a frame after a test edited it. */
void h_fix_ip_csum(struct rte_mbuf *m);
/* Copy of a frame's bytes (any segment layout) into buf; returns length. */
size_t h_bytes(const struct rte_mbuf *m, uint8_t *buf, size_t cap);

#endif
