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

#include "stack/base/limits.h"

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

/* Isolated mode (rte_flow_isolate, [port] isolate = on): the port delivers
 * only what a rule matches, so besides the per-connection rules above the
 * stack needs rules for everything else it wants (RFC 826 ARP and RFC 792
 * ICMP to the control queue, TCP to each listening port spread over every
 * engine).  One struct builds any of these; like us_steer_rule, build it in
 * place and do not copy it. */
enum us_steer_ctl_kind {
	US_STEER_CTL_ARP,       /* ETH type 0x0806 / END -> QUEUE */
	US_STEER_CTL_ICMP,      /* ETH / IPV4 proto 1 / END -> QUEUE */
	US_STEER_CTL_LISTENER,  /* ETH / IPV4 dst / TCP dport / END -> RSS */
};

#define US_STEER_CTL_KEY_MAX 52     /* US_RSS_KEY_MAX */

struct us_steer_ctl_rule {
	enum us_steer_ctl_kind kind;
	struct rte_flow_attr attr;
	struct rte_flow_item pattern[US_STEER_PATTERN_LEN];
	struct rte_flow_action actions[US_STEER_ACTIONS_LEN];
	struct rte_flow_item_eth eth_spec, eth_mask;
	struct rte_flow_item_ipv4 ip_spec, ip_mask;
	struct rte_flow_item_tcp tcp_spec, tcp_mask;
	struct rte_flow_action_queue queue;
	struct rte_flow_action_rss rss;
	uint16_t rss_queues[US_ENGINES_MAX];
	uint8_t rss_key[US_STEER_CTL_KEY_MAX];
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
	/* Isolated mode, tried before the port was configured (it cannot be
	 * entered later on most PMDs): see us_steer_isolate_probe. */
	bool isolate_tried;
	bool isolate_ok;            /* rte_flow_isolate(1) succeeded */
	bool isolated;              /* and the port stays isolated ([port] isolate = on) */
	int isolate_err;            /* -errno of the failing call */
	char isolate_msg[96];
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
 * The isolate_* fields are left as us_steer_isolate_probe set them (caps is
 * cleared only when isolate_tried is false).
 * 0, or -errno if the port's info cannot be read. */
int us_steer_probe(uint16_t port_id, struct us_steer_caps *caps);
/* The isolated-mode rules (see enum us_steer_ctl_kind).  queue: the control
 * queue (0 = engine 0).  lip/lport: our address and listening port, NETWORK
 * order; the RSS action hashes IPv4/TCP with key over queues 0..nb_queues-1
 * (the port's own RSS key and the symmetric owner rule, so a passive open
 * lands where rte_softrss says).  0, or -EINVAL (nb_queues or key_len out of
 * range). */
void us_steer_rule_build_arp(uint16_t queue, struct us_steer_ctl_rule *r);
void us_steer_rule_build_icmp(uint16_t queue, struct us_steer_ctl_rule *r);
int us_steer_rule_build_listener(rte_be32_t lip, rte_be16_t lport, uint16_t nb_queues,
				 const uint8_t *key, uint8_t key_len, struct us_steer_ctl_rule *r);
/* The symmetric Toeplitz key (0x6d5a repeated, as the port's RSS is set up
 * with) in the length the PMD takes (40 or 52 bytes). */
void us_steer_symmetric_key(uint8_t *key, uint8_t len);
/* Creates a built control rule; 0 with *flow set or -errno and the PMD's
 * message in msg. */
int us_steer_ctl_install(uint16_t port_id, struct us_steer_ctl_rule *r, struct rte_flow **flow,
			 char *msg, size_t msglen);
/* On a port NOT yet configured (rte_flow_isolate must come first): enters
 * isolated mode and, unless keep, leaves it again, recording in caps whether
 * that worked.  0, or -errno when keep is set and the port cannot isolate,
 * or when it entered but cannot leave (it would drop all our traffic). */
int us_steer_isolate_probe(uint16_t port_id, bool keep, struct us_steer_caps *caps);
/* One line: "port 0: rte_flow queue rules: no (...); RSS ipv4-tcp: no, reta 0,
 * key 0 B; steering: software". */
void us_steer_caps_format(const struct us_steer_caps *caps, char *buf, size_t len);
const char *us_steer_mode_name(enum us_steer_mode mode);

#endif
