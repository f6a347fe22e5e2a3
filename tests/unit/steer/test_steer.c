/* nic/steer: the exact rte_flow rule for a connection, and the software NIC
 * model (flow table of fixed capacity, RSS for the rest).  Pure: no EAL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <rte_ip.h>

#include "nic/steer.h"
#include "nic/steer_model.h"

/* 203.0.113.7:40000 -> 192.0.2.1:80, built from wire bytes so the byte
 * order under test is not produced by the code under test. */
static struct us_flow_tuple tuple_wire(void)
{
	static const uint8_t src[4] = { 203, 0, 113, 7 }, dst[4] = { 192, 0, 2, 1 };
	static const uint8_t sport[2] = { 0x9c, 0x40 }, dport[2] = { 0x00, 0x50 };
	struct us_flow_tuple t;

	memcpy(&t.src_ip, src, 4);
	memcpy(&t.dst_ip, dst, 4);
	memcpy(&t.sport, sport, 2);
	memcpy(&t.dport, dport, 2);
	return t;
}

static void test_rule_pattern(void **state)
{
	const struct us_flow_tuple t = tuple_wire();
	struct us_steer_rule r;

	(void)state;
	memset(&r, 0xa5, sizeof(r));
	us_steer_rule_build(&t, 3, &r);

	assert_int_equal(r.attr.ingress, 1);
	assert_int_equal(r.attr.egress, 0);
	assert_int_equal(r.attr.transfer, 0);
	assert_int_equal(r.attr.group, 0);
	assert_int_equal(r.attr.priority, 0);

	assert_int_equal(r.pattern[0].type, RTE_FLOW_ITEM_TYPE_ETH);
	assert_null(r.pattern[0].spec);
	assert_null(r.pattern[0].mask);
	assert_null(r.pattern[0].last);
	assert_int_equal(r.pattern[1].type, RTE_FLOW_ITEM_TYPE_IPV4);
	assert_ptr_equal(r.pattern[1].spec, &r.ip_spec);
	assert_ptr_equal(r.pattern[1].mask, &r.ip_mask);
	assert_null(r.pattern[1].last);
	assert_int_equal(r.pattern[2].type, RTE_FLOW_ITEM_TYPE_TCP);
	assert_ptr_equal(r.pattern[2].spec, &r.tcp_spec);
	assert_ptr_equal(r.pattern[2].mask, &r.tcp_mask);
	assert_null(r.pattern[2].last);
	assert_int_equal(r.pattern[3].type, RTE_FLOW_ITEM_TYPE_END);
}

static void test_rule_specs_masks(void **state)
{
	const struct us_flow_tuple t = tuple_wire();
	struct us_steer_rule r;
	const uint8_t *b;

	(void)state;
	us_steer_rule_build(&t, 3, &r);
	/* Specs hold wire bytes. */
	b = (const uint8_t *)&r.ip_spec.hdr.src_addr;
	assert_memory_equal(b, ((const uint8_t[]){ 203, 0, 113, 7 }), 4);
	b = (const uint8_t *)&r.ip_spec.hdr.dst_addr;
	assert_memory_equal(b, ((const uint8_t[]){ 192, 0, 2, 1 }), 4);
	assert_int_equal(r.ip_spec.hdr.src_addr, rte_cpu_to_be_32(US_IPV4(203, 0, 113, 7)));
	assert_int_equal(r.tcp_spec.hdr.src_port, rte_cpu_to_be_16(40000));
	assert_int_equal(r.tcp_spec.hdr.dst_port, rte_cpu_to_be_16(80));

	/* Masks: exactly the four tuple fields, fully; nothing else. */
	{
		struct rte_flow_item_ipv4 ipm = { 0 };
		struct rte_flow_item_tcp tcpm = { 0 };

		ipm.hdr.src_addr = 0xffffffff;
		ipm.hdr.dst_addr = 0xffffffff;
		tcpm.hdr.src_port = 0xffff;
		tcpm.hdr.dst_port = 0xffff;
		assert_memory_equal(&r.ip_mask, &ipm, sizeof(ipm));
		assert_memory_equal(&r.tcp_mask, &tcpm, sizeof(tcpm));
	}
	/* The specs carry nothing outside the masks. */
	{
		struct rte_flow_item_ipv4 ips = { 0 };
		struct rte_flow_item_tcp tcps = { 0 };

		ips.hdr.src_addr = t.src_ip;
		ips.hdr.dst_addr = t.dst_ip;
		tcps.hdr.src_port = t.sport;
		tcps.hdr.dst_port = t.dport;
		assert_memory_equal(&r.ip_spec, &ips, sizeof(ips));
		assert_memory_equal(&r.tcp_spec, &tcps, sizeof(tcps));
	}
}

static void test_rule_actions(void **state)
{
	const struct us_flow_tuple t = tuple_wire();
	struct us_steer_rule r;
	const struct rte_flow_action_queue *q;

	(void)state;
	us_steer_rule_build(&t, 7, &r);
	assert_int_equal(r.actions[0].type, RTE_FLOW_ACTION_TYPE_QUEUE);
	q = r.actions[0].conf;
	assert_ptr_equal(q, &r.queue);
	assert_int_equal(q->index, 7);
	assert_int_equal(r.actions[1].type, RTE_FLOW_ACTION_TYPE_END);
	assert_null(r.actions[1].conf);
}

static struct us_flow_tuple tuple_n(uint32_t i)
{
	return (struct us_flow_tuple){
		.src_ip = rte_cpu_to_be_32(US_IPV4(198, 51, 100, 1) + (i >> 12)),
		.dst_ip = rte_cpu_to_be_32(US_IPV4(192, 0, 2, 1)),
		.sport = rte_cpu_to_be_16((uint16_t)(40000 + (i & 0xfff))),
		.dport = rte_cpu_to_be_16(80),
	};
}

static uint16_t rss_queue_of(const struct us_rss *rss, const struct us_flow_tuple *t)
{
	return us_rss_queue_ipv4_tcp(rss, rte_be_to_cpu_32(t->src_ip), rte_be_to_cpu_32(t->dst_ip),
				     rte_be_to_cpu_16(t->sport), rte_be_to_cpu_16(t->dport));
}

/* Finds a flow whose RSS queue is not want, so a rule visibly moves it. */
static uint32_t flow_not_on(const struct us_rss *rss, uint16_t want, uint32_t from)
{
	uint32_t i = from;
	struct us_flow_tuple t;

	for (t = tuple_n(i); rss_queue_of(rss, &t) == want; t = tuple_n(++i))
		;
	return i;
}

static void test_model_rules_and_fallback(void **state)
{
	struct us_rss rss;
	struct us_steer_model m;
	uint32_t idx[5], fallback = 0, i = 0;
	struct us_flow_tuple t;

	(void)state;
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, US_RSS_KEY_LEN, 128, 4), 0);
	assert_int_equal(us_steer_model_init(&m, &rss, 4), 0);
	/* Five connections all wanted on queue 3, each of which RSS puts elsewhere. */
	for (int k = 0; k < 5; k++) {
		i = idx[k] = flow_not_on(&rss, 3, i);
		i++;
		t = tuple_n(idx[k]);
		if (us_steer_model_insert(&m, &t, 3) == -ENOSPC)
			fallback++; /* the caller counts what stays on RSS */
	}
	assert_int_equal(fallback, 1);
	assert_int_equal(m.stats.insert_full, 1);
	assert_int_equal(m.nb_rules, 4);
	for (int k = 0; k < 4; k++) {
		t = tuple_n(idx[k]);
		assert_int_equal(us_steer_model_classify(&m, &t), 3);
	}
	/* The fifth fell back: RSS decides, and that is not queue 3. */
	t = tuple_n(idx[4]);
	assert_int_equal(us_steer_model_classify(&m, &t), rss_queue_of(&rss, &t));
	assert_int_not_equal(us_steer_model_classify(&m, &t), 3);
	/* A flow with no rule at all: RSS. */
	t = tuple_n(idx[4] + 1);
	assert_int_equal(us_steer_model_classify(&m, &t), rss_queue_of(&rss, &t));
	assert_int_equal(m.stats.classify_rule, 4);
	assert_int_equal(m.stats.classify_rss, 3);

	/* Removal frees capacity: the fifth now fits and moves to queue 3. */
	t = tuple_n(idx[0]);
	assert_int_equal(us_steer_model_remove(&m, &t), 0);
	assert_int_not_equal(us_steer_model_classify(&m, &t), 3);
	assert_int_equal(us_steer_model_remove(&m, &t), -ENOENT);
	t = tuple_n(idx[4]);
	assert_int_equal(us_steer_model_insert(&m, &t, 3), 0);
	assert_int_equal(us_steer_model_classify(&m, &t), 3);
	us_steer_model_free(&m);
}

static void test_model_errors(void **state)
{
	struct us_rss rss;
	struct us_steer_model m;
	struct us_flow_tuple t = tuple_n(0);

	(void)state;
	assert_int_equal(us_rss_init(&rss, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 2), 0);
	assert_int_equal(us_steer_model_init(&m, &rss, 2), 0);
	assert_int_equal(us_steer_model_insert(&m, &t, 2), -EINVAL);
	assert_int_equal(us_steer_model_insert(&m, &t, 1), 0);
	assert_int_equal(us_steer_model_insert(&m, &t, 0), -EEXIST);
	assert_int_equal(m.nb_rules, 1);
	us_steer_model_free(&m);

	/* A NIC without a flow table: every insert is refused, RSS decides. */
	assert_int_equal(us_steer_model_init(&m, &rss, 0), 0);
	assert_int_equal(us_steer_model_insert(&m, &t, 1), -ENOSPC);
	assert_int_equal(us_steer_model_classify(&m, &t), rss_queue_of(&rss, &t));
	us_steer_model_free(&m);
}

/* The model agrees with the active-open port picker: a picked port's replies
 * land on the wanted queue with no rule installed. */
static void test_model_with_picked_ports(void **state)
{
	const uint32_t local = US_IPV4(192, 0, 2, 1), remote = US_IPV4(198, 51, 100, 9);
	struct us_rss rss;
	struct us_steer_model m;

	(void)state;
	assert_int_equal(us_rss_init(&rss, us_rss_key_default, US_RSS_KEY_LEN, 512, 8), 0);
	assert_int_equal(us_steer_model_init(&m, &rss, 16), 0);
	for (uint16_t q = 0; q < 8; q++) {
		uint16_t port;
		struct us_flow_tuple reply;

		assert_int_equal(us_rss_pick_port(&rss, local, remote, 443, q, US_RSS_EPHEMERAL_MIN,
						  &port), 0);
		reply = (struct us_flow_tuple){ .src_ip = rte_cpu_to_be_32(remote),
						.dst_ip = rte_cpu_to_be_32(local),
						.sport = rte_cpu_to_be_16(443),
						.dport = rte_cpu_to_be_16(port) };
		assert_int_equal(us_steer_model_classify(&m, &reply), q);
	}
	assert_int_equal(m.stats.classify_rss, 8);
	us_steer_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_pattern),
		cmocka_unit_test(test_rule_specs_masks),
		cmocka_unit_test(test_rule_actions),
		cmocka_unit_test(test_model_rules_and_fallback),
		cmocka_unit_test(test_model_errors),
		cmocka_unit_test(test_model_with_picked_ports),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
