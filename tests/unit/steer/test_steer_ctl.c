/* nic/steer: the isolated-mode control rules (ARP, ICMP, listener RSS) as
 * rte_flow patterns and actions, the NIC model's isolate semantics, and the
 * probe line's isolate field.  Pure: no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <netinet/in.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_tcp.h>

#include "nic/rss.h"
#include "nic/steer.h"
#include "nic/steer_model.h"

static void assert_attr(const struct us_steer_ctl_rule *r, uint32_t priority)
{
	assert_int_equal(r->attr.ingress, 1);
	assert_int_equal(r->attr.egress, 0);
	assert_int_equal(r->attr.transfer, 0);
	assert_int_equal(r->attr.group, 0);
	assert_int_equal(r->attr.priority, priority);
}

static void assert_queue_action(const struct us_steer_ctl_rule *r, uint16_t queue)
{
	const struct rte_flow_action_queue *q = r->actions[0].conf;

	assert_int_equal(r->actions[0].type, RTE_FLOW_ACTION_TYPE_QUEUE);
	assert_ptr_equal(q, &r->queue);
	assert_int_equal(q->index, queue);
	assert_int_equal(r->actions[1].type, RTE_FLOW_ACTION_TYPE_END);
}

/* ETH type 0x0806 (spec and a full type mask, addresses unmasked) / END ->
 * QUEUE(0) / END. */
static void test_arp_rule(void **state)
{
	struct us_steer_ctl_rule r;
	const uint8_t *b;
	static const uint8_t zero[12];
	(void)state;

	memset(&r, 0xa5, sizeof(r));
	us_steer_rule_build_arp(0, &r);
	assert_int_equal(r.kind, US_STEER_CTL_ARP);
	assert_attr(&r, 0);
	assert_int_equal(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
	assert_ptr_equal(r.pattern[0].spec, &r.eth_spec);
	assert_ptr_equal(r.pattern[0].mask, &r.eth_mask);
	assert_null(r.pattern[0].last);
	b = (const uint8_t *)&r.eth_spec.hdr.ether_type;
	assert_memory_equal(b, ((const uint8_t[]){ 0x08, 0x06 }), 2);
	b = (const uint8_t *)&r.eth_mask.hdr.ether_type;
	assert_memory_equal(b, ((const uint8_t[]){ 0xff, 0xff }), 2);
	assert_memory_equal(&r.eth_mask.hdr, zero, sizeof(zero)); /* no MAC matched */
	assert_int_equal(r.eth_mask.has_vlan, 0);
	assert_int_equal(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_END);
	assert_queue_action(&r, 0);
}

/* ETH (any) / IPV4 proto 1 (only that field masked) / END -> QUEUE / END. */
static void test_icmp_rule(void **state)
{
	struct us_steer_ctl_rule r;
	struct rte_flow_item_ipv4 want_mask;
	(void)state;

	memset(&r, 0xa5, sizeof(r));
	us_steer_rule_build_icmp(2, &r);
	assert_int_equal(r.kind, US_STEER_CTL_ICMP);
	assert_attr(&r, 0);
	assert_int_equal(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
	assert_null(r.pattern[0].spec);
	assert_null(r.pattern[0].mask);
	assert_int_equal(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
	assert_ptr_equal(r.pattern[1].spec, &r.ip_spec);
	assert_ptr_equal(r.pattern[1].mask, &r.ip_mask);
	assert_null(r.pattern[1].last);
	assert_int_equal(r.ip_spec.hdr.next_proto_id, 1);
	memset(&want_mask, 0, sizeof(want_mask));
	want_mask.hdr.next_proto_id = 0xff;
	assert_memory_equal(&r.ip_mask, &want_mask, sizeof(want_mask));
	assert_int_equal(r.pattern[2].type, RTE_FLOW_ITEM_TYPE_END);
	assert_queue_action(&r, 2);
}

/* ETH / IPV4 dst 192.0.2.1 / TCP dport 80 / END at priority 1 (below the
 * 5-tuple rules) -> RSS(Toeplitz, ipv4-tcp, our key, queues 0..3) / END. */
static void test_listener_rule(void **state)
{
	struct us_steer_ctl_rule r;
	struct rte_flow_item_ipv4 want_ip;
	struct rte_flow_item_tcp want_tcp;
	const struct rte_flow_action_rss *rss;
	(void)state;

	memset(&r, 0xa5, sizeof(r));
	assert_int_equal(us_steer_rule_build_listener(RTE_BE32(US_IPV4(192, 0, 2, 1)),
						      RTE_BE16(80), 4, us_rss_key_symmetric,
						      US_RSS_KEY_LEN, &r), 0);
	assert_int_equal(r.kind, US_STEER_CTL_LISTENER);
	assert_attr(&r, 1);
	assert_int_equal(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
	assert_null(r.pattern[0].spec);
	assert_int_equal(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
	assert_memory_equal(&r.ip_spec.hdr.dst_addr, ((const uint8_t[]){ 192, 0, 2, 1 }), 4);
	memset(&want_ip, 0, sizeof(want_ip));
	want_ip.hdr.dst_addr = RTE_BE32(UINT32_MAX);
	assert_memory_equal(&r.ip_mask, &want_ip, sizeof(want_ip));
	assert_int_equal(r.pattern[2].type, RTE_FLOW_ITEM_TYPE_TCP);
	assert_ptr_equal(r.pattern[2].spec, &r.tcp_spec);
	assert_memory_equal(&r.tcp_spec.hdr.dst_port, ((const uint8_t[]){ 0, 80 }), 2);
	memset(&want_tcp, 0, sizeof(want_tcp));
	want_tcp.hdr.dst_port = RTE_BE16(UINT16_MAX);
	assert_memory_equal(&r.tcp_mask, &want_tcp, sizeof(want_tcp));
	assert_int_equal(r.pattern[3].type, RTE_FLOW_ITEM_TYPE_END);

	assert_int_equal(r.actions[0].type, RTE_FLOW_ACTION_TYPE_RSS);
	rss = r.actions[0].conf;
	assert_ptr_equal(rss, &r.rss);
	assert_int_equal(rss->func, RTE_ETH_HASH_FUNCTION_TOEPLITZ);
	assert_int_equal(rss->level, 0);
	assert_int_equal(rss->types, RTE_ETH_RSS_NONFRAG_IPV4_TCP);
	assert_int_equal(rss->key_len, US_RSS_KEY_LEN);
	assert_memory_equal(rss->key, us_rss_key_symmetric, US_RSS_KEY_LEN);
	assert_int_equal(rss->queue_num, 4);
	for (uint16_t q = 0; q < 4; q++)
		assert_int_equal(rss->queue[q], q);
	assert_int_equal(r.actions[1].type, RTE_FLOW_ACTION_TYPE_END);
}

static void test_listener_rule_bad_args(void **state)
{
	struct us_steer_ctl_rule r;
	(void)state;

	assert_int_equal(us_steer_rule_build_listener(0, RTE_BE16(80), 0, us_rss_key_symmetric,
						      US_RSS_KEY_LEN, &r), -EINVAL);
	assert_int_equal(us_steer_rule_build_listener(0, RTE_BE16(80),
						      US_ENGINES_MAX + 1,
						      us_rss_key_symmetric, US_RSS_KEY_LEN, &r),
			 -EINVAL);
	assert_int_equal(us_steer_rule_build_listener(0, RTE_BE16(80), 2, us_rss_key_symmetric,
						      US_STEER_CTL_KEY_MAX + 1, &r), -EINVAL);
}

/* The symmetric key in both lengths PMDs take: 40 bytes equal rss.c's. */
static void test_symmetric_key(void **state)
{
	uint8_t key[US_RSS_KEY_MAX];
	(void)state;

	us_steer_symmetric_key(key, US_RSS_KEY_LEN);
	assert_memory_equal(key, us_rss_key_symmetric, US_RSS_KEY_LEN);
	us_steer_symmetric_key(key, US_RSS_KEY_MAX);
	assert_int_equal(key[50], 0x6d);
	assert_int_equal(key[51], 0x5a);
}

/* Frames for the model. */
static size_t frame_ipv4(uint8_t *f, uint8_t proto, uint32_t dst, uint16_t sport, uint16_t dport)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

	memset(f, 0, 64);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = 0x45;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(US_IPV4(203, 0, 113, 7));
	ip->dst_addr = rte_cpu_to_be_32(dst);
	th->src_port = rte_cpu_to_be_16(sport);
	th->dst_port = rte_cpu_to_be_16(dport);
	return sizeof(*eth) + sizeof(*ip) + sizeof(*th);
}

static int model_ctl(struct us_steer_model *m, struct us_steer_ctl_rule *r)
{
	unsigned slot;

	return us_steer_model_insert_ctl(m, r, &slot);
}

/* Isolated: ARP and ICMP by their rules, TCP to a listener by its RSS, a
 * connection by its 5-tuple rule first; everything else dropped and counted.
 * Not isolated: the same frames all arrive somewhere. */
static void test_model_isolate(void **state)
{
	const uint32_t us = US_IPV4(192, 0, 2, 1);
	struct us_steer_model m;
	struct us_steer_ctl_rule r;
	struct us_rss rss;
	uint8_t f[64] = { 0 };
	uint16_t q = 99;
	const struct us_flow_tuple t = { .src_ip = rte_cpu_to_be_32(US_IPV4(203, 0, 113, 7)),
					 .dst_ip = rte_cpu_to_be_32(us),
					 .sport = RTE_BE16(40001), .dport = RTE_BE16(80) };
	(void)state;

	assert_int_equal(us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 4), 0);
	assert_int_equal(us_steer_model_init(&m, &rss, 8), 0);
	m.isolated = true;
	/* Nothing installed: everything is dropped. */
	((struct rte_ether_hdr *)f)->ether_type = RTE_BE16(RTE_ETHER_TYPE_ARP);
	assert_int_equal(us_steer_model_classify_frame(&m, f, 42, &q), -ENOENT);
	us_steer_rule_build_arp(1, &r);
	assert_int_equal(model_ctl(&m, &r), 0);
	us_steer_rule_build_icmp(1, &r);
	assert_int_equal(model_ctl(&m, &r), 0);
	assert_int_equal(us_steer_rule_build_listener(rte_cpu_to_be_32(us), RTE_BE16(80), 4,
						      us_rss_key_symmetric, US_RSS_KEY_LEN, &r), 0);
	assert_int_equal(model_ctl(&m, &r), 0);

	assert_int_equal(us_steer_model_classify_frame(&m, f, 42, &q), 0);
	assert_int_equal(q, 1);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_ICMP, us, 0, 0),
						       &q), 0);
	assert_int_equal(q, 1);
	for (uint16_t p = 40000; p < 40064; p++) {
		assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_TCP, us,
										 p, 80), &q), 0);
		assert_int_equal(q, us_rss_queue_ipv4_tcp(&rss, US_IPV4(203, 0, 113, 7), us, p, 80));
	}
	assert_int_equal(us_steer_model_insert(&m, &t, 3), 0);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_TCP, us, 40001,
									 80), &q), 0);
	assert_int_equal(q, 3); /* the connection's own rule wins */
	assert_int_equal(m.stats.isolate_drop, 1);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_TCP, us, 1, 81),
						       &q), -ENOENT);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_UDP, us, 1, 80),
						       &q), -ENOENT);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_TCP, us + 1,
									 1, 80), &q), -ENOENT);
	assert_int_equal(m.stats.isolate_drop, 4);
	/* Not isolated: a frame no rule matches is delivered after all. */
	m.isolated = false;
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_UDP, us, 1, 80),
						       &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv4(f, IPPROTO_TCP, us, 1, 81),
						       &q), 0);
	assert_int_equal(m.stats.isolate_drop, 4);
	assert_int_equal(us_steer_model_remove(&m, &t), 0);
	us_steer_model_free(&m);
}

/* fd00::7 -> fd00::1, next header proto, ports sport -> dport. */
static size_t frame_ipv6(uint8_t *f, uint8_t proto, uint16_t sport, uint16_t dport)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)f;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);

	memset(f, 0, 96);
	eth->ether_type = RTE_BE16(RTE_ETHER_TYPE_IPV6);
	ip->vtc_flow = RTE_BE32(6u << 28);
	ip->proto = proto;
	ip->src_addr[0] = ip->dst_addr[0] = 0xfd;
	ip->src_addr[15] = 7;
	ip->dst_addr[15] = 1;
	th->src_port = rte_cpu_to_be_16(sport);
	th->dst_port = rte_cpu_to_be_16(dport);
	return sizeof(*eth) + sizeof(*ip) + sizeof(*th);
}

/* IPv6/TCP is spread by RSS over its tuple (the symmetric key: both
 * directions on one queue); other IPv6 goes to queue 0; isolated, IPv6
 * matches no rule and is dropped. */
static void test_model_ipv6_rss(void **state)
{
	struct us_steer_model m;
	struct us_rss rss;
	uint8_t f[96], g[96];
	uint16_t q = 99, back = 99;
	bool seen[4] = { false };
	(void)state;

	assert_int_equal(us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 4), 0);
	assert_int_equal(us_steer_model_init(&m, &rss, 8), 0);
	for (uint16_t p = 40000; p < 40064; p++) {
		const struct rte_ipv6_hdr *ip = (const struct rte_ipv6_hdr *)(f + RTE_ETHER_HDR_LEN);
		struct rte_ipv6_hdr *rip = (struct rte_ipv6_hdr *)(g + RTE_ETHER_HDR_LEN);

		assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv6(f, IPPROTO_TCP, p, 80),
							       &q), 0);
		assert_int_equal(q, us_rss_queue(&rss, us_rss_hash_ipv6_tcp(rss.key, ip->src_addr,
									  ip->dst_addr, p, 80)));
		seen[q] = true;
		frame_ipv6(g, IPPROTO_TCP, 80, p); /* the reply */
		memcpy(rip->src_addr, ip->dst_addr, 16);
		memcpy(rip->dst_addr, ip->src_addr, 16);
		assert_int_equal(us_steer_model_classify_frame(&m, g, sizeof(g), &back), 0);
		assert_int_equal(back, q);
	}
	assert_true(seen[0] && seen[1] && seen[2] && seen[3]);
	assert_int_equal(m.stats.classify_rss, 128);
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv6(f, IPPROTO_UDP, 1, 80), &q), 0);
	assert_int_equal(q, 0);
	assert_int_equal(m.stats.classify_default, 1);
	/* Too short for a TCP header: not classified as TCP. */
	frame_ipv6(f, IPPROTO_TCP, 1, 80);
	assert_int_equal(us_steer_model_classify_frame(&m, f, RTE_ETHER_HDR_LEN + 40, &q), 0);
	assert_int_equal(q, 0);
	m.isolated = true;
	assert_int_equal(us_steer_model_classify_frame(&m, f, frame_ipv6(f, IPPROTO_TCP, 1, 80), &q),
			 -ENOENT);
	assert_int_equal(m.stats.isolate_drop, 1);
	us_steer_model_free(&m);
}

/* A rule the model does not understand is refused, not guessed at. */
static void test_model_ctl_refuses_unknown(void **state)
{
	struct us_steer_model m;
	struct us_steer_ctl_rule r;
	struct us_rss rss;
	(void)state;

	assert_int_equal(us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 2), 0);
	assert_int_equal(us_steer_model_init(&m, &rss, 0), 0);
	us_steer_rule_build_arp(2, &r); /* queue 2 of 2 */
	assert_int_equal(model_ctl(&m, &r), -EINVAL);
	us_steer_rule_build_icmp(0, &r);
	r.ip_spec.hdr.next_proto_id = IPPROTO_UDP;
	assert_int_equal(model_ctl(&m, &r), -EINVAL);
	us_steer_model_free(&m);
}

/* The probe line: isolate yes / on / no (why), nothing when not tried. */
static void test_caps_format_isolate(void **state)
{
	struct us_steer_caps c;
	char line[512];
	(void)state;

	memset(&c, 0, sizeof(c));
	c.flow_err = -ENOSYS;
	c.mode = US_STEER_SOFTWARE;
	us_steer_caps_format(&c, line, sizeof(line));
	assert_null(strstr(line, "isolate"));
	c.isolate_tried = true;
	c.isolate_err = -ENOTSUP;
	snprintf(c.isolate_msg, sizeof(c.isolate_msg), "port must be stopped first");
	us_steer_caps_format(&c, line, sizeof(line));
	assert_non_null(strstr(line, "; isolate: no (Operation not supported: port must be "
				     "stopped first); steering: software"));
	c.isolate_ok = true;
	us_steer_caps_format(&c, line, sizeof(line));
	assert_non_null(strstr(line, "; isolate: yes; "));
	c.isolated = true;
	us_steer_caps_format(&c, line, sizeof(line));
	assert_non_null(strstr(line, "; isolate: on; "));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_rule),
		cmocka_unit_test(test_icmp_rule),
		cmocka_unit_test(test_listener_rule),
		cmocka_unit_test(test_listener_rule_bad_args),
		cmocka_unit_test(test_symmetric_key),
		cmocka_unit_test(test_model_isolate),
		cmocka_unit_test(test_model_ipv6_rss),
		cmocka_unit_test(test_model_ctl_refuses_unknown),
		cmocka_unit_test(test_caps_format_isolate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
