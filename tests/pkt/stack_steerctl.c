/* Packet scripts for several engines, steering control (issue 8): one ARP
 * reply per request, isolated mode on the software NIC model (ARP/ICMP to
 * the control queue, listener SYNs spread by the listener rule's RSS,
 * connections on their own rules, nothing else delivered), and one TFO
 * secret for the whole stack.  Engines over fake ports in virtual time; each
 * script ends with the leak check (engines destroyed, pool empty). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nic/rss.h"
#include "nic/steer_model.h"
#include "stack/engine_priv.h"
#include "stack/flowrule.h"
#include "stack/handoff.h"
#include "tests/unit/stack/harness.h"
#include "tcp/tcp.h"

#define NENG_MAX 4
#define OUR_PORT 80
#define PEER_PORT0 40000

struct multi {
	unsigned n;
	struct harness h[NENG_MAX];
	struct us_handoff *ho;
	struct us_rss sym;          /* the owner rule */
	struct us_steer_model nic;
	bool has_nic;
	unsigned to_queue[NENG_MAX];
};

static const struct tcp_callbacks quiet_cb __attribute__((unused)); /* no application */

static void multi_start(struct multi *t, unsigned n)
{
	static unsigned seq;
	char name[16];

	memset(t, 0, sizeof(*t));
	t->n = n;
	assert_int_equal(us_rss_init(&t->sym, us_rss_key_symmetric, US_RSS_KEY_LEN, 128,
				     (uint16_t)n), 0);
	snprintf(name, sizeof(name), "sc%u", seq++);
	t->ho = us_handoff_create(n, &t->sym, name);
	assert_non_null(t->ho);
	for (unsigned k = 0; k < n; k++) {
		h_prepare(&t->h[k]);
		t->h[k].e = us_engine_create(k, &t->h[k].cfg, h_pool, &t->h[k].ops, t->h[k].now);
		assert_non_null(t->h[k].e);
		us_engine_set_handoff(t->h[k].e, t->ho);
	}
}

static void multi_finish(struct multi *t)
{
	for (unsigned k = 0; k < t->n; k++) {
		h_clear_tx(&t->h[k]);
		for (unsigned i = 0; i < t->h[k].port.nrx; i++)
			rte_pktmbuf_free(t->h[k].port.rx[i]);
		us_engine_destroy(t->h[k].e);
	}
	us_handoff_destroy(t->ho);
	if (t->has_nic)
		us_steer_model_free(&t->nic);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

/* Every engine polls until no queue or ring holds a frame. */
static void run_engines(struct multi *t)
{
	for (unsigned round = 0; round < 8; round++) {
		unsigned work = 0;

		for (unsigned k = 0; k < t->n; k++) {
			t->h[k].now += US_US(10);
			work += us_engine_poll(t->h[k].e, t->h[k].now);
		}
		if (work == 0 && round > 0)
			return;
	}
}

static void on_queue(struct multi *t, unsigned q, struct rte_mbuf *m)
{
	struct h_port *p = &t->h[q].port;

	assert_true(p->nrx < H_RX_MAX);
	p->rx[p->nrx++] = m;
	t->to_queue[q]++;
}

static unsigned count_arp_replies(struct multi *t, unsigned k, uint32_t tip)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->h[k].port.ntx; i++) {
		struct rte_mbuf *m = t->h[k].port.tx[i];
		const struct rte_arp_hdr *a;

		if (h_eth(m)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
			continue;
		a = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *,
					    sizeof(struct rte_ether_hdr));
		if (a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY) &&
		    a->arp_data.arp_tip == rte_cpu_to_be_32(tip))
			n++;
	}
	return n;
}

/* RFC 826: a request for us gets ONE reply, from the engine whose queue
 * received it; every other engine learns the sender from its copy and stays
 * silent.  For each receiving engine in turn, over 4 engines. */
static void test_arp_request_one_reply(void **state)
{
	static struct multi t;
	(void)state;

	multi_start(&t, 4);
	for (unsigned rx = 0; rx < t.n; rx++) {
		uint32_t sip = H_IP(10, 0, 0, 100 + rx);
		struct rte_ether_addr smac = h_peer_mac;

		smac.addr_bytes[5] = (uint8_t)(0x40 + rx);
		on_queue(&t, rx, h_arp(RTE_ARP_OP_REQUEST, &smac, sip, &h_bcast_mac, H_OUR_IP,
				       &h_bcast_mac));
		run_engines(&t);
		for (unsigned k = 0; k < t.n; k++) {
			struct rte_ether_addr mac;

			assert_int_equal(count_arp_replies(&t, k, sip), k == rx ? 1 : 0);
			assert_int_equal(t.h[k].port.ntx, k == rx ? 1 : 0); /* nothing else */
			assert_int_equal(us_arp_lookup(t.h[k].e, sip, &mac), 0); /* all learned */
			assert_memory_equal(&mac, &smac, sizeof(mac));
			h_clear_tx(&t.h[k]);
		}
	}
	for (unsigned k = 0; k < t.n; k++) {
		assert_int_equal(us_engine_counter(t.h[k].e, "arp_tx_replies"), 1);
		assert_int_equal(us_engine_counter(t.h[k].e, "arp_copy_not_answered"), t.n - 1);
		assert_int_equal(us_engine_counter(t.h[k].e, "steer_arp_copies"), t.n - 1);
	}
	multi_finish(&t);
}

/* A reply to OUR request (the peer answers on whichever queue) teaches every
 * engine, and no engine answers a reply. */
static void test_arp_reply_learned_by_all(void **state)
{
	static struct multi t;
	(void)state;

	multi_start(&t, 2);
	on_queue(&t, 1, h_arp(RTE_ARP_OP_REPLY, &h_gw_mac, H_GW_IP, &h_our_mac, H_OUR_IP,
			      &h_our_mac));
	run_engines(&t);
	for (unsigned k = 0; k < t.n; k++) {
		struct rte_ether_addr mac;

		assert_int_equal(t.h[k].port.ntx, 0);
		assert_int_equal(us_arp_lookup(t.h[k].e, H_GW_IP, &mac), 0);
		assert_int_equal(us_engine_counter(t.h[k].e, "arp_copy_not_answered"), 0);
	}
	multi_finish(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_request_one_reply),
		cmocka_unit_test(test_arp_reply_learned_by_all),
	};

	h_eal_init("us_pkt_steerctl");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
