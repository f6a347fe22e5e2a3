/* nic/steer.c: rte_flow 5-tuple rules and the steering capability probe. */
#include "nic/rss.h"
#include "nic/steer.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

void us_steer_rule_build(const struct us_flow_tuple *t, uint16_t queue, struct us_steer_rule *r)
{
	memset(r, 0, sizeof(*r));
	r->attr.ingress = 1;

	/* IPv4 and TCP carry every field of the tuple with a full mask; the TCP
	 * item implies protocol 6, so next_proto_id stays unmasked. */
	r->ip_spec.hdr.src_addr = t->src_ip;
	r->ip_spec.hdr.dst_addr = t->dst_ip;
	r->ip_mask.hdr.src_addr = RTE_BE32(UINT32_MAX);
	r->ip_mask.hdr.dst_addr = RTE_BE32(UINT32_MAX);
	r->tcp_spec.hdr.src_port = t->sport;
	r->tcp_spec.hdr.dst_port = t->dport;
	r->tcp_mask.hdr.src_port = RTE_BE16(UINT16_MAX);
	r->tcp_mask.hdr.dst_port = RTE_BE16(UINT16_MAX);

	/* ETH with no spec matches any Ethernet frame. */
	r->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
	r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	r->pattern[1].spec = &r->ip_spec;
	r->pattern[1].mask = &r->ip_mask;
	r->pattern[2].type = RTE_FLOW_ITEM_TYPE_TCP;
	r->pattern[2].spec = &r->tcp_spec;
	r->pattern[2].mask = &r->tcp_mask;
	r->pattern[3].type = RTE_FLOW_ITEM_TYPE_END;

	r->queue.index = queue;
	r->actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
	r->actions[0].conf = &r->queue;
	r->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

static void steer_msg(const struct rte_flow_error *e, char *msg, size_t msglen)
{
	if (msg != NULL && msglen > 0)
		snprintf(msg, msglen, "%s", e->message != NULL ? e->message : "no message");
}

int us_steer_install(uint16_t port_id, const struct us_flow_tuple *t, uint16_t queue,
		     struct rte_flow **flow, char *msg, size_t msglen)
{
	struct us_steer_rule r;
	struct rte_flow_error e = { 0 };

	us_steer_rule_build(t, queue, &r);
	*flow = rte_flow_create(port_id, &r.attr, r.pattern, r.actions, &e);
	if (*flow == NULL) {
		steer_msg(&e, msg, msglen);
		return rte_errno != 0 ? -rte_errno : -EIO;
	}
	return 0;
}

int us_steer_remove(uint16_t port_id, struct rte_flow *flow)
{
	struct rte_flow_error e = { 0 };

	return rte_flow_destroy(port_id, flow, &e);
}

/* Tries validate, then create and destroy, of a rule nothing will match:
 * 192.0.2.1:9 -> 198.51.100.1:9 (RFC 5737 documentation addresses). */
static void steer_probe_flow(uint16_t port_id, struct us_steer_caps *caps)
{
	const struct us_flow_tuple t = {
		.src_ip = RTE_BE32(US_IPV4(192, 0, 2, 1)),
		.dst_ip = RTE_BE32(US_IPV4(198, 51, 100, 1)),
		.sport = RTE_BE16(9),
		.dport = RTE_BE16(9),
	};
	struct us_steer_rule r;
	struct rte_flow_error e = { 0 };
	struct rte_flow *flow;
	int rc;

	us_steer_rule_build(&t, 0, &r);
	rte_errno = 0;
	caps->flow_validated = rte_flow_validate(port_id, &r.attr, r.pattern, r.actions, &e) == 0;
	memset(&e, 0, sizeof(e));
	rc = us_steer_install(port_id, &t, 0, &flow, caps->flow_msg, sizeof(caps->flow_msg));
	if (rc != 0) {
		caps->flow_err = rc;
		return;
	}
	rc = us_steer_remove(port_id, flow);
	if (rc != 0) {
		/* A rule we cannot take back is no use for per-connection steering. */
		caps->flow_err = rc;
		snprintf(caps->flow_msg, sizeof(caps->flow_msg), "created but destroy failed");
		return;
	}
	caps->flow_queue = true;
}

int us_steer_probe(uint16_t port_id, struct us_steer_caps *caps)
{
	struct rte_eth_dev_info info;
	struct us_steer_caps iso = *caps;
	int rc;

	memset(caps, 0, sizeof(*caps));
	if (iso.isolate_tried) {
		caps->isolate_tried = true;
		caps->isolate_ok = iso.isolate_ok;
		caps->isolated = iso.isolated;
		caps->isolate_err = iso.isolate_err;
		memcpy(caps->isolate_msg, iso.isolate_msg, sizeof(caps->isolate_msg));
	}
	caps->port_id = port_id;
	rc = rte_eth_dev_info_get(port_id, &info);
	if (rc != 0)
		return rc;
	caps->rss_offloads = info.flow_type_rss_offloads;
	caps->rss_ipv4_tcp = (info.flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_TCP) != 0;
	caps->reta_size = info.reta_size;
	caps->hash_key_size = info.hash_key_size;
	caps->max_rx_queues = info.max_rx_queues;
	steer_probe_flow(port_id, caps);

	if (caps->flow_queue)
		caps->mode = US_STEER_FLOW;
	else if (caps->rss_ipv4_tcp && caps->reta_size > 0)
		caps->mode = US_STEER_RSS;
	else
		caps->mode = US_STEER_SOFTWARE;
	return 0;
}

const char *us_steer_mode_name(enum us_steer_mode mode)
{
	switch (mode) {
	case US_STEER_FLOW:
		return "rte_flow";
	case US_STEER_RSS:
		return "rss";
	case US_STEER_SOFTWARE:
		return "software";
	}
	return "?";
}

/* "; isolate: on|yes|no (why)", nothing when it was not tried. */
static void steer_isolate_format(const struct us_steer_caps *caps, char *buf, size_t len)
{
	const char *why = strerror(-caps->isolate_err);

	if (!caps->isolate_tried)
		buf[0] = '\0';
	else if (caps->isolate_ok)
		snprintf(buf, len, "; isolate: %s", caps->isolated ? "on" : "yes");
	else if (caps->isolate_msg[0] != '\0' && strcmp(caps->isolate_msg, why) != 0)
		snprintf(buf, len, "; isolate: no (%s: %s)", why, caps->isolate_msg);
	else
		snprintf(buf, len, "; isolate: no (%s)", why);
}

void us_steer_caps_format(const struct us_steer_caps *caps, char *buf, size_t len)
{
	char flow[160], iso[128];

	if (caps->flow_queue)
		snprintf(flow, sizeof(flow), "yes");
	else if (strcmp(caps->flow_msg, strerror(-caps->flow_err)) == 0)
		/* rte_flow's generic "no ops" message is just strerror again. */
		snprintf(flow, sizeof(flow), "no (%s%s)",
			 caps->flow_validated ? "validates, but create: " : "",
			 strerror(-caps->flow_err));
	else
		snprintf(flow, sizeof(flow), "no (%s%s: %s)",
			 caps->flow_validated ? "validates, but create: " : "",
			 strerror(-caps->flow_err), caps->flow_msg);
	steer_isolate_format(caps, iso, sizeof(iso));
	snprintf(buf, len,
		 "port %u: rte_flow queue rules: %s; RSS ipv4-tcp: %s, reta %u, key %u B "
		 "(offloads 0x%" PRIx64 ")%s; steering: %s",
		 caps->port_id, flow, caps->rss_ipv4_tcp ? "yes" : "no", caps->reta_size,
		 caps->hash_key_size, caps->rss_offloads, iso, us_steer_mode_name(caps->mode));
}

/* Isolated mode: control rules */

static void steer_ctl_init(struct us_steer_ctl_rule *r, enum us_steer_ctl_kind kind)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->attr.ingress = 1;
	r->pattern[0].type = RTE_FLOW_ITEM_TYPE_ETH;
}

static void steer_ctl_queue(struct us_steer_ctl_rule *r, uint16_t queue)
{
	r->queue.index = queue;
	r->actions[0].type = RTE_FLOW_ACTION_TYPE_QUEUE;
	r->actions[0].conf = &r->queue;
	r->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
}

/* RFC 826: ARP has its own EtherType; only the type is matched (every
 * request and reply, broadcast or not, goes to the control queue). */
void us_steer_rule_build_arp(uint16_t queue, struct us_steer_ctl_rule *r)
{
	steer_ctl_init(r, US_STEER_CTL_ARP);
	r->eth_spec.hdr.ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	r->eth_mask.hdr.ether_type = RTE_BE16(UINT16_MAX);
	r->pattern[0].spec = &r->eth_spec;
	r->pattern[0].mask = &r->eth_mask;
	r->pattern[1].type = RTE_FLOW_ITEM_TYPE_END;
	steer_ctl_queue(r, queue);
}

/* RFC 792: ICMP is IPv4 protocol 1.  Errors quoting one of our segments
 * are handed from the control queue to the connection's owner
 * (stack/engine/handoff.c), as on a port without isolation. */
void us_steer_rule_build_icmp(uint16_t queue, struct us_steer_ctl_rule *r)
{
	steer_ctl_init(r, US_STEER_CTL_ICMP);
	r->ip_spec.hdr.next_proto_id = IPPROTO_ICMP;
	r->ip_mask.hdr.next_proto_id = UINT8_MAX;
	r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	r->pattern[1].spec = &r->ip_spec;
	r->pattern[1].mask = &r->ip_mask;
	r->pattern[2].type = RTE_FLOW_ITEM_TYPE_END;
	steer_ctl_queue(r, queue);
}

int us_steer_rule_build_listener(rte_be32_t lip, rte_be16_t lport, uint16_t nb_queues,
				 const uint8_t *key, uint8_t key_len, struct us_steer_ctl_rule *r)
{
	if (nb_queues == 0 || nb_queues > US_ENGINES_MAX || key == NULL ||
	    key_len == 0 || key_len > US_STEER_CTL_KEY_MAX)
		return -EINVAL;
	steer_ctl_init(r, US_STEER_CTL_LISTENER);
	/* Below the per-connection rules (priority 0): where both match, an
	 * accepted connection's own rule decides. */
	r->attr.priority = 1;
	r->ip_spec.hdr.dst_addr = lip;
	r->ip_mask.hdr.dst_addr = RTE_BE32(UINT32_MAX);
	r->tcp_spec.hdr.dst_port = lport;
	r->tcp_mask.hdr.dst_port = RTE_BE16(UINT16_MAX);
	r->pattern[1].type = RTE_FLOW_ITEM_TYPE_IPV4;
	r->pattern[1].spec = &r->ip_spec;
	r->pattern[1].mask = &r->ip_mask;
	r->pattern[2].type = RTE_FLOW_ITEM_TYPE_TCP;
	r->pattern[2].spec = &r->tcp_spec;
	r->pattern[2].mask = &r->tcp_mask;
	r->pattern[3].type = RTE_FLOW_ITEM_TYPE_END;

	/* Every engine's queue, hashed on the 4-tuple with the key the port's
	 * RSS and rte_softrss use: a SYN lands on the engine the owner rule
	 * names, so passive opens still spread and need no hand-off. */
	for (uint16_t q = 0; q < nb_queues; q++)
		r->rss_queues[q] = q;
	memcpy(r->rss_key, key, key_len);
	r->rss.func = RTE_ETH_HASH_FUNCTION_TOEPLITZ;
	r->rss.level = 0;
	r->rss.types = RTE_ETH_RSS_NONFRAG_IPV4_TCP;
	r->rss.key_len = key_len;
	r->rss.key = r->rss_key;
	r->rss.queue_num = nb_queues;
	r->rss.queue = r->rss_queues;
	r->actions[0].type = RTE_FLOW_ACTION_TYPE_RSS;
	r->actions[0].conf = &r->rss;
	r->actions[1].type = RTE_FLOW_ACTION_TYPE_END;
	return 0;
}

void us_steer_symmetric_key(uint8_t *key, uint8_t len)
{
	/* rss.c: a 16-bit period makes hash(a->b) == hash(b->a). */
	for (uint8_t i = 0; i < len; i++)
		key[i] = (i & 1) ? 0x5a : 0x6d;
}

int us_steer_ctl_install(uint16_t port_id, struct us_steer_ctl_rule *r, struct rte_flow **flow,
			 char *msg, size_t msglen)
{
	struct rte_flow_error e = { 0 };

	rte_errno = 0;
	*flow = rte_flow_create(port_id, &r->attr, r->pattern, r->actions, &e);
	if (*flow == NULL) {
		steer_msg(&e, msg, msglen);
		return rte_errno != 0 ? -rte_errno : -EIO;
	}
	return 0;
}

int us_steer_isolate_probe(uint16_t port_id, bool keep, struct us_steer_caps *caps)
{
	struct rte_flow_error e = { 0 };
	int rc;

	memset(caps, 0, sizeof(*caps));
	caps->port_id = port_id;
	caps->isolate_tried = true;
	rc = rte_flow_isolate(port_id, 1, &e);
	if (rc != 0) {
		caps->isolate_err = rc < 0 ? rc : -EIO;
		steer_msg(&e, caps->isolate_msg, sizeof(caps->isolate_msg));
		return keep ? caps->isolate_err : 0;
	}
	caps->isolate_ok = true;
	if (keep) {
		caps->isolated = true;
		return 0;
	}
	/* rte_flow.h: leaving isolated mode may not be possible on every PMD;
	 * an isolated port without our rules would deliver nothing. */
	memset(&e, 0, sizeof(e));
	rc = rte_flow_isolate(port_id, 0, &e);
	if (rc != 0) {
		caps->isolated = true;
		caps->isolate_err = rc < 0 ? rc : -EIO;
		steer_msg(&e, caps->isolate_msg, sizeof(caps->isolate_msg));
		return caps->isolate_err;
	}
	return 0;
}
