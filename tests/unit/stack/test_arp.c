/* ARP cache (stack/net/arp.c): learn, reply, expiry, pending queue, retries. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <rte_arp.h>

#include "stack/engine/engine_priv.h"
#include "tests/unit/stack/harness.h"

static const struct rte_ether_addr zero_mac;

static int setup(void **state)
{
	static struct harness h;

	h_prepare(&h);
	h.cfg.arp_pending_max = 4;
	h_start(&h);
	*state = &h;
	return 0;
}

static int teardown(void **state)
{
	h_teardown(*state);
	return 0;
}

static struct rte_arp_hdr *arp_of(struct rte_mbuf *m)
{
	assert_int_equal(rte_be_to_cpu_16(h_eth(m)->ether_type), RTE_ETHER_TYPE_ARP);
	return rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *, sizeof(struct rte_ether_hdr));
}

/* An IPv4 packet (header only, id = tag) as IP output would hand to ARP. */
static struct rte_mbuf *ip_pkt(uint16_t tag)
{
	struct rte_ipv4_hdr ip = {
		.version_ihl = RTE_IPV4_VHL_DEF,
		.packet_id = rte_cpu_to_be_16(tag),
	};
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	void *p;

	assert_non_null(m);
	p = rte_pktmbuf_append(m, sizeof(ip));
	assert_non_null(p);
	memcpy(p, &ip, sizeof(ip));
	return m;
}

static void learn_peer(struct harness *h)
{
	us_engine_input(h->e, h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac,
				    H_OUR_IP, &h_bcast_mac));
	us_engine_flush(h->e);
}

static void test_request_for_us_is_answered_and_learned(void **state)
{
	struct harness *h = *state;
	struct rte_ether_addr mac;
	struct rte_arp_hdr *a;

	learn_peer(h);
	assert_int_equal(h->port.ntx, 1);
	assert_true(rte_is_same_ether_addr(&h_eth(h->port.tx[0])->dst_addr, &h_peer_mac));
	assert_true(rte_is_same_ether_addr(&h_eth(h->port.tx[0])->src_addr, &h_our_mac));
	a = arp_of(h->port.tx[0]);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REPLY);
	assert_true(rte_is_same_ether_addr(&a->arp_data.arp_sha, &h_our_mac));
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_sip), H_OUR_IP);
	assert_true(rte_is_same_ether_addr(&a->arp_data.arp_tha, &h_peer_mac));
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), H_PEER_IP);
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &h_peer_mac));
	assert_int_equal(us_engine_counter(h->e, "arp_entries"), 1);
	assert_int_equal(us_engine_counter(h->e, "arp_tx_replies"), 1);
}

static void test_request_for_other_not_learned(void **state)
{
	struct harness *h = *state;

	us_engine_input(h->e, h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac,
				    H_IP(10, 0, 0, 9), &h_bcast_mac));
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, NULL), -ENOENT);
	assert_int_equal(us_engine_counter(h->e, "arp_rx_other_target"), 1);
}

static void test_malformed_dropped(void **state)
{
	struct harness *h = *state;
	struct rte_mbuf *m = h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac,
				   H_OUR_IP, &h_bcast_mac);

	arp_of(m)->arp_hlen = 5;
	us_engine_input(h->e, m);
	m = h_arp(RTE_ARP_OP_REQUEST, &h_bcast_mac, H_PEER_IP, &zero_mac, H_OUR_IP, &h_bcast_mac);
	us_engine_input(h->e, m); /* broadcast sender MAC */
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 0);
	assert_int_equal(us_engine_counter(h->e, "arp_drop_bad"), 2);
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, NULL), -ENOENT);
}

static void test_entry_expires(void **state)
{
	struct harness *h = *state;

	learn_peer(h);
	h_advance(h, US_SEC(300) - US_MS(10));
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, NULL), 0);
	h_advance(h, US_MS(20));
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, NULL), -ENOENT);
	assert_int_equal(us_engine_counter(h->e, "arp_expired"), 1);
	assert_int_equal(us_engine_counter(h->e, "arp_entries"), 0);
}

static void test_pending_bounded_and_flushed_in_order(void **state)
{
	struct harness *h = *state;
	struct rte_arp_hdr *a;

	for (uint16_t i = 0; i < 6; i++)
		us_arp_output(&h->e->net, ip_pkt(100 + i), H_PEER_IP);
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 1); /* one request, not six */
	assert_true(rte_is_broadcast_ether_addr(&h_eth(h->port.tx[0])->dst_addr));
	a = arp_of(h->port.tx[0]);
	assert_int_equal(rte_be_to_cpu_16(a->arp_opcode), RTE_ARP_OP_REQUEST);
	assert_int_equal(rte_be_to_cpu_32(a->arp_data.arp_tip), H_PEER_IP);
	assert_int_equal(us_arp_pending(&h->e->net, H_PEER_IP), 4);
	assert_int_equal(us_engine_counter(h->e, "arp_drop_pending_full"), 2);
	h_clear_tx(h);

	us_engine_input(h->e, h_arp(RTE_ARP_OP_REPLY, &h_peer_mac, H_PEER_IP, &h_our_mac,
				    H_OUR_IP, &h_our_mac));
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 4);
	for (unsigned i = 0; i < 4; i++) {
		struct rte_mbuf *m = h->port.tx[i];

		assert_true(rte_is_same_ether_addr(&h_eth(m)->dst_addr, &h_peer_mac));
		assert_int_equal(rte_be_to_cpu_16(h_eth(m)->ether_type), RTE_ETHER_TYPE_IPV4);
		assert_int_equal(rte_be_to_cpu_16(h_iph(m)->packet_id), 100 + i);
	}
	assert_int_equal(us_arp_pending(&h->e->net, H_PEER_IP), 0);
	/* Resolved: the next packet goes straight out. */
	us_arp_output(&h->e->net, ip_pkt(200), H_PEER_IP);
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 5);
}

static void test_retries_then_gives_up(void **state)
{
	struct harness *h = *state;

	us_arp_output(&h->e->net, ip_pkt(1), H_PEER_IP);
	us_arp_output(&h->e->net, ip_pkt(2), H_PEER_IP);
	us_engine_flush(h->e);
	assert_int_equal(h->port.ntx, 1);
	h_advance(h, US_MS(999));
	assert_int_equal(h->port.ntx, 1);
	h_advance(h, US_MS(2));
	assert_int_equal(h->port.ntx, 2);
	h_advance(h, US_MS(1000));
	assert_int_equal(h->port.ntx, 3);
	assert_int_equal(us_arp_pending(&h->e->net, H_PEER_IP), 2);
	h_advance(h, US_MS(1000));
	assert_int_equal(h->port.ntx, 3);
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, NULL), -ENOENT);
	assert_int_equal(us_engine_counter(h->e, "arp_tx_requests"), 3);
	assert_int_equal(us_engine_counter(h->e, "arp_timeouts"), 1);
	assert_int_equal(us_engine_counter(h->e, "arp_drop_unresolved"), 2);
	assert_int_equal(us_engine_counter(h->e, "arp_entries"), 0);
}

/* A reply we did not ask for and that updates nothing is not cached (RFC 826
 * merge rule), but one for an existing entry refreshes its MAC. */
static void test_unsolicited_reply_updates_only_known(void **state)
{
	struct harness *h = *state;
	struct rte_ether_addr mac;

	us_engine_input(h->e, h_arp(RTE_ARP_OP_REPLY, &h_gw_mac, H_GW_IP, &h_bcast_mac,
				    H_IP(10, 0, 0, 99), &h_bcast_mac));
	assert_int_equal(us_arp_lookup(&h->e->net, H_GW_IP, NULL), -ENOENT);
	learn_peer(h);
	us_engine_input(h->e, h_arp(RTE_ARP_OP_REPLY, &h_gw_mac, H_PEER_IP, &h_bcast_mac,
				    H_IP(10, 0, 0, 99), &h_bcast_mac));
	assert_int_equal(us_arp_lookup(&h->e->net, H_PEER_IP, &mac), 0);
	assert_true(rte_is_same_ether_addr(&mac, &h_gw_mac));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_request_for_us_is_answered_and_learned, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_request_for_other_not_learned, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_entry_expires, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending_bounded_and_flushed_in_order, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_retries_then_gives_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unsolicited_reply_updates_only_known, setup,
						teardown),
	};

	h_eal_init("us_test_arp");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
