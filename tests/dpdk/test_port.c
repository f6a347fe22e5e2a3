/* nic/ over a real PMD: EAL started by nic_eal_init from a configuration,
 * net_ring ports opened with nic_port_open.  A net_ring created by --vdev
 * without arguments uses one rte_ring as both its RX and TX queue, so what
 * nic_tx sends comes back from nic_rx: a loopback wire with no kernel. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "tests/dpdk/port_setup.h"
#include "nic/nic.h"

#define BURST 32

static struct nic_config cfg;
static struct rte_mempool *pool;

static int group_setup(void **state)
{
	(void)state;
	/* More ring ports from extra_args: a closed vdev port cannot be reopened. */
	tport_config(&cfg, "port", "--no-shconf --vdev net_ring1 --vdev net_ring2", 1000);
	return tport_start(&cfg, "test_port", "test_port_pool", &pool);
}

static int group_teardown(void **state)
{
	(void)state;
	tport_stop(pool);
	return 0;
}

/* A broadcast frame whose payload carries seq, so order and content can be
 * checked on the far side. */
static struct rte_mbuf *make_frame(uint32_t seq)
{
	uint8_t frame[sizeof(struct rte_ether_hdr) + 46] = {0};
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)frame;
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	char *data;

	memset(&eh->dst_addr, 0xff, sizeof(eh->dst_addr));
	eh->ether_type = rte_cpu_to_be_16(0x88b5); /* IEEE local experimental */
	memcpy(frame + sizeof(*eh), &seq, sizeof(seq));
	data = m ? rte_pktmbuf_append(m, sizeof(frame)) : NULL;
	if (data == NULL)
		fail_msg("no mbuf or no room for a %zu-byte frame", sizeof(frame));
	else
		memcpy(data, frame, sizeof(frame));
	return m;
}

static uint32_t frame_seq(struct rte_mbuf *m)
{
	uint32_t seq;

	memcpy(&seq, rte_pktmbuf_mtod_offset(m, char *, sizeof(struct rte_ether_hdr)), sizeof(seq));
	return seq;
}

static void test_open_loopback_close(void **state)
{
	(void)state;
	struct nic_port port;
	struct rte_mbuf *pkts[BURST];
	char err[256] = "";
	uint16_t n;

	assert_int_equal(nic_port_open(&cfg, pool, 1, &port, err, sizeof(err)), 0);
	assert_true(port.started);
	assert_int_equal(port.nb_queues, 1);
	/* net_ring offers no checksum offload: none may be claimed. */
	assert_false(port.tx_ip_csum);
	assert_false(port.tx_l4_csum);
	assert_false(port.rx_csum);
	assert_int_equal(port.mtu, 1500);

	for (uint32_t i = 0; i < 8; i++)
		pkts[i] = make_frame(100 + i);
	assert_int_equal(nic_tx(&port, 0, pkts, 8), 8);
	n = nic_rx(&port, 0, pkts, BURST);
	assert_int_equal(n, 8);
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(frame_seq(pkts[i]), 100 + i);
		assert_int_equal(rte_pktmbuf_pkt_len(pkts[i]), sizeof(struct rte_ether_hdr) + 46);
	}
	rte_pktmbuf_free_bulk(pkts, n);
	assert_int_equal(nic_rx(&port, 0, pkts, BURST), 0);
	assert_int_equal(port.stats.tx_pkts, 8);
	assert_int_equal(port.stats.rx_pkts, 8);
	assert_int_equal(port.stats.tx_dropped_full, 0);

	nic_port_close(&port);
	assert_false(port.started);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* With nobody reading, the ring fills: nic_tx must free and count what the
 * PMD refused, so every frame is either received later or counted dropped. */
static void test_tx_full_frees_and_counts(void **state)
{
	(void)state;
	struct nic_config c = cfg;
	struct nic_port port;
	struct rte_mbuf *pkts[BURST];
	char err[256] = "";
	uint64_t offered = 0, received = 0;
	uint16_t n;

	snprintf(c.device, sizeof(c.device), "%s", "net_ring1");
	assert_int_equal(nic_port_open(&c, pool, 1, &port, err, sizeof(err)), 0);
	while (port.stats.tx_dropped_full == 0 && offered < 4096) {
		for (uint32_t i = 0; i < BURST; i++)
			pkts[i] = make_frame((uint32_t)(offered + i));
		nic_tx(&port, 0, pkts, BURST);
		offered += BURST;
	}
	assert_true(port.stats.tx_dropped_full > 0);
	assert_int_equal(port.stats.tx_pkts + port.stats.tx_dropped_full, offered);
	while ((n = nic_rx(&port, 0, pkts, BURST)) > 0) {
		for (uint16_t i = 0; i < n; i++)
			assert_int_equal(frame_seq(pkts[i]), received + i);
		received += n;
		rte_pktmbuf_free_bulk(pkts, n);
	}
	assert_int_equal(received, port.stats.tx_pkts);
	nic_port_close(&port);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* [ip6] enable asks for all-multicast: a PMD without the setting (net_ring
 * delivers every frame anyway) still opens, and the port facts say what the
 * PMD reports. */
static void test_ip6_multicast(void **state)
{
	(void)state;
	struct nic_config c = cfg;
	struct nic_port port;
	struct nic_port_info info;
	struct rte_mbuf *m;
	char err[256] = "";

	snprintf(c.device, sizeof(c.device), "%s", "net_ring2");
	c.ip6_multicast = true;
	assert_int_equal(nic_port_open(&c, pool, 1, &port, err, sizeof(err)), 0);
	nic_port_info(&port, &info);
	assert_int_equal(info.allmulti, rte_eth_allmulticast_get(port.port_id) == 1);
	m = make_frame(7);
	assert_int_equal(nic_tx(&port, 0, &m, 1), 1);
	assert_int_equal(nic_rx(&port, 0, &m, 1), 1);
	assert_int_equal(frame_seq(m), 7);
	rte_pktmbuf_free(m);
	nic_port_close(&port);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* Runs first, while every ring port exists. */
static void test_open_errors_say_what_to_fix(void **state)
{
	(void)state;
	struct nic_config c = cfg;
	struct nic_port port;
	struct rte_eth_dev_info info;
	char err[256] = "", want[64];
	uint16_t nq, id;

	snprintf(c.device, sizeof(c.device), "%s", "net_ring9,foo=1");
	assert_int_equal(nic_port_open(&c, pool, 1, &port, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "'net_ring9'"));

	c.device[0] = '\0';
	assert_int_equal(nic_port_open(&c, pool, 1, &port, err, sizeof(err)), -ENODEV);
	assert_non_null(strstr(err, "3 ports are available"));

	/* One queue more than the PMD has. */
	snprintf(c.device, sizeof(c.device), "%s", "net_ring0");
	assert_int_equal(rte_eth_dev_get_port_by_name("net_ring0", &id), 0);
	assert_int_equal(rte_eth_dev_info_get(id, &info), 0);
	nq = (uint16_t)(RTE_MAX(info.max_rx_queues, info.max_tx_queues) + 1);
	snprintf(want, sizeof(want), "%u queues asked", (unsigned)nq);
	assert_int_equal(nic_port_open(&c, pool, nq, &port, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, want));
	assert_false(port.started);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_open_errors_say_what_to_fix),
		cmocka_unit_test(test_open_loopback_close),
		cmocka_unit_test(test_tx_full_frees_and_counts),
		cmocka_unit_test(test_ip6_multicast),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
