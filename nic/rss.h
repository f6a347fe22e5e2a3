/* nic/rss.h: software Toeplitz RSS, the same choice the NIC makes.
 *
 * Where the NIC spreads packets by RSS, an engine must know which queue (and
 * so which engine) a connection's packets will reach: passive opens to find
 * the owner of a packet that landed on the wrong queue (software path), active
 * opens to choose a source port whose replies land on the caller's own queue
 * (Seastar does the same).  This file is pure: no EAL, no port.
 *
 * Byte order: every us_rss_* call takes addresses and ports in HOST order,
 * like rte_softrss (see rss.c).  struct us_flow_tuple in nic/steer.h is in
 * network order, as in packets and rte_flow specs.
 */
#ifndef US_NIC_RSS_H
#define US_NIC_RSS_H

#include <stddef.h>
#include <stdint.h>

/* Types */

/* An IPv4 address in host order.  Not RTE_IPV4: it shifts a signed int into
 * the sign bit for first octets >= 128 (undefined behaviour, UBSan). */
#define US_IPV4(a, b, c, d) \
	((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (uint32_t)(d))

#define US_RSS_KEY_LEN      40   /* the common Toeplitz key size (ixgbe, mlx5, virtio) */
#define US_RSS_KEY_MAX      52   /* i40e/ice use 52 bytes */
#define US_RSS_RETA_MAX     512
/* RFC 6335 6: the dynamic (ephemeral) port range. */
#define US_RSS_EPHEMERAL_MIN 49152u
#define US_RSS_EPHEMERAL_MAX 65535u

/* Microsoft's default key (the "RSS verification suite" key, also the
 * default of ixgbe and many PMDs). */
extern const uint8_t us_rss_key_default[US_RSS_KEY_LEN];
/* 0x6d5a repeated: hash(a->b) == hash(b->a), so both directions of a
 * connection reach the same queue (why: see rss.c). */
extern const uint8_t us_rss_key_symmetric[US_RSS_KEY_LEN];

/* A port's RSS state as we mirror it: key plus redirection table. */
struct us_rss {
	uint8_t key[US_RSS_KEY_MAX];
	uint8_t key_len;
	uint16_t nb_queues;
	uint16_t reta_size;               /* power of two, 1..US_RSS_RETA_MAX */
	uint16_t reta[US_RSS_RETA_MAX];   /* hash -> queue */
};

/* Prototypes */

/* Copies the key (key_len 40 or 52) and fills the RETA round-robin over
 * nb_queues, as PMDs do by default.  0 or -EINVAL. */
int us_rss_init(struct us_rss *rss, const uint8_t *key, size_t key_len, uint16_t reta_size,
		uint16_t nb_queues);
/* Toeplitz hash of an IPv4/TCP packet src->dst (host order), as a NIC
 * computes it for RTE_ETH_RSS_NONFRAG_IPV4_TCP.  key must hold >= 16 bytes. */
uint32_t us_rss_hash_ipv4_tcp(const uint8_t *key, uint32_t src_ip, uint32_t dst_ip,
			      uint16_t sport, uint16_t dport);
/* Toeplitz hash of an IPv6/TCP packet src->dst (addresses network order, as
 * in the header; ports host order), as a NIC computes it for
 * RTE_ETH_RSS_NONFRAG_IPV6_TCP.  key must hold >= 40 bytes. */
uint32_t us_rss_hash_ipv6_tcp(const uint8_t *key, const uint8_t src[16], const uint8_t dst[16],
			      uint16_t sport, uint16_t dport);
/* Toeplitz hash of the IPv4 addresses only (RTE_ETH_RSS_IPV4, non-TCP). */
uint32_t us_rss_hash_ipv4(const uint8_t *key, uint32_t src_ip, uint32_t dst_ip);
/* The queue a hash selects: reta[hash % reta_size] (the low bits, as NICs
 * index the RETA). */
uint16_t us_rss_queue(const struct us_rss *rss, uint32_t hash);
/* The queue an incoming IPv4/TCP packet src->dst (host order) reaches. */
uint16_t us_rss_queue_ipv4_tcp(const struct us_rss *rss, uint32_t src_ip, uint32_t dst_ip,
			       uint16_t sport, uint16_t dport);
/* Active open local_ip:? -> remote_ip:remote_port: scans the ephemeral range
 * from start (wrapping once) for a local port whose REPLIES (remote->local,
 * the packets the NIC classifies) land on want_queue.  The caller checks the
 * port is free and calls again from *port + 1 if not.  0 with *port set,
 * -EINVAL (bad queue), or -ENOENT (no port in the range maps there, e.g.
 * the queue is not in the RETA). */
int us_rss_pick_port(const struct us_rss *rss, uint32_t local_ip, uint32_t remote_ip,
		     uint16_t remote_port, uint16_t want_queue, uint16_t start, uint16_t *port);

#endif
