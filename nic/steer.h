/* nic/steer.h: flow-director steering -- an rte_flow rule per connection
 * that sends its packets to the owning engine's RX queue, and the start-up
 * probe that decides whether the port can do that.
 *
 * Where the probe says no, RSS decides (nic/rss.h) and the software path
 * forwards misdelivered packets; nic/steer_model.h models a NIC doing both
 * for tests.
 */
#ifndef US_NIC_STEER_H
#define US_NIC_STEER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_byteorder.h>
#include <rte_flow.h>

/* Types */

/* A TCP/IPv4 flow as the NIC sees an INCOMING packet: src = the remote peer,
 * dst = us.  NETWORK byte order, as on the wire and in rte_flow specs. */
struct us_flow_tuple {
	rte_be32_t src_ip;
	rte_be32_t dst_ip;
	rte_be16_t sport;
	rte_be16_t dport;
};

#define US_STEER_PATTERN_LEN 4   /* ETH / IPV4 / TCP / END */
#define US_STEER_ACTIONS_LEN 2   /* QUEUE / END */

/* A rule ready for rte_flow_validate/create.  pattern[] and actions[] point
 * into the struct itself: build it in place and do not copy it. */
struct us_steer_rule {
	struct rte_flow_attr attr;
	struct rte_flow_item pattern[US_STEER_PATTERN_LEN];
	struct rte_flow_action actions[US_STEER_ACTIONS_LEN];
	struct rte_flow_item_ipv4 ip_spec, ip_mask;
	struct rte_flow_item_tcp tcp_spec, tcp_mask;
	struct rte_flow_action_queue queue;
};

/* How a port steers connections to their engine. */
enum us_steer_mode {
	US_STEER_FLOW,       /* rte_flow 5-tuple rules */
	US_STEER_RSS,        /* NIC Toeplitz RSS, mirrored with rte_softrss */
	US_STEER_SOFTWARE,   /* neither: the receiving engine forwards by ring */
};

/* What us_steer_probe found. */
struct us_steer_caps {
	uint16_t port_id;
	bool flow_queue;            /* a 5-tuple QUEUE rule was created AND destroyed */
	bool flow_validated;        /* rte_flow_validate accepted it (may lie) */
	int flow_err;               /* -errno of the failing step, 0 if it worked */
	char flow_msg[96];          /* the PMD's message for that failure */
	uint64_t rss_offloads;      /* rte_eth_dev_info.flow_type_rss_offloads */
	bool rss_ipv4_tcp;          /* RTE_ETH_RSS_NONFRAG_IPV4_TCP offered */
	uint16_t reta_size;
	uint8_t hash_key_size;
	uint16_t max_rx_queues;
	enum us_steer_mode mode;    /* the choice these imply */
};

/* Prototypes */

/* Builds an ingress rule: ETH (any) / IPV4 src+dst (full masks) / TCP
 * sport+dport (full masks) / END, actions QUEUE(queue) / END. */
void us_steer_rule_build(const struct us_flow_tuple *t, uint16_t queue, struct us_steer_rule *r);
/* Creates the rule on the port; 0 with *flow set, or -errno (-ENOSYS or
 * -ENOTSUP where the PMD has no rte_flow) with the PMD's message in msg. */
int us_steer_install(uint16_t port_id, const struct us_flow_tuple *t, uint16_t queue,
		     struct rte_flow **flow, char *msg, size_t msglen);
/* Destroys a rule made by us_steer_install; 0 or -errno. */
int us_steer_remove(uint16_t port_id, struct rte_flow *flow);
/* Probes a STARTED port (some PMDs take rules only then): creates and
 * destroys a real rule on queue 0 for a TEST-NET tuple (validation alone
 * lies: net_tap validates but cannot create), and reads the RSS offload bits.
 * 0, or -errno if the port's info cannot be read. */
int us_steer_probe(uint16_t port_id, struct us_steer_caps *caps);
/* One line: "port 0: rte_flow queue rules: no (...); RSS ipv4-tcp: no, reta 0,
 * key 0 B; steering: software". */
void us_steer_caps_format(const struct us_steer_caps *caps, char *buf, size_t len);
const char *us_steer_mode_name(enum us_steer_mode mode);

#endif
