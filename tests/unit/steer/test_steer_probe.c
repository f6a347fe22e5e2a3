/* nic/steer: the capability probe on a real PMD.  net_ring has neither
 * rte_flow nor RSS, so the probe must say so and choose software steering. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "nic/rss.h"
#include "nic/steer.h"
#include "tests/common/test_eal.h"

static struct rte_mempool *pool;
static uint16_t ring_port;

/* test_eal_start takes no extra arguments: the same start, plus the vdev. */
static int steer_eal_start(void)
{
	static char prefix_arg[96];
	char prefix[64];

	test_eal_prefix(prefix, sizeof(prefix), "steer");
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	char *argv[] = { "test_steer_probe", "--no-huge", "--no-pci", "--no-shconf", "-m", "64",
			 "--log-level=error", "--vdev=net_ring0", prefix_arg };
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0)
		return -1;
	atexit(test_eal_remove_runtime_dir);
	return 0;
}

static int setup(void **state)
{
	struct rte_eth_conf conf = { 0 };

	(void)state;
	if (steer_eal_start() != 0 || rte_eth_dev_get_port_by_name("net_ring0", &ring_port) != 0)
		return -1;
	pool = rte_pktmbuf_pool_create("steer_pool", 512, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL || rte_eth_dev_configure(ring_port, 1, 1, &conf) != 0 ||
	    rte_eth_rx_queue_setup(ring_port, 0, 64, SOCKET_ID_ANY, NULL, pool) != 0 ||
	    rte_eth_tx_queue_setup(ring_port, 0, 64, SOCKET_ID_ANY, NULL) != 0 ||
	    rte_eth_dev_start(ring_port) != 0)
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	rte_eth_dev_stop(ring_port);
	rte_eth_dev_close(ring_port);
	if (pool != NULL && rte_mempool_in_use_count(pool) != 0)
		return -1;
	rte_mempool_free(pool);
	rte_eal_cleanup();
	return 0;
}

static void test_probe_net_ring(void **state)
{
	struct us_steer_caps caps;
	char line[512];

	(void)state;
	assert_int_equal(us_steer_probe(ring_port, &caps), 0);
	assert_int_equal(caps.port_id, ring_port);
	assert_false(caps.flow_queue);
	assert_true(caps.flow_err < 0);
	assert_false(caps.rss_ipv4_tcp);
	assert_int_equal(caps.reta_size, 0);
	assert_int_equal(caps.mode, US_STEER_SOFTWARE);
	assert_true(caps.max_rx_queues >= 1);

	us_steer_caps_format(&caps, line, sizeof(line));
	print_message("%s\n", line);
	assert_non_null(strstr(line, "rte_flow queue rules: no"));
	assert_non_null(strstr(line, "RSS ipv4-tcp: no"));
	assert_non_null(strstr(line, "steering: software"));
}

static void test_install_fails_cleanly(void **state)
{
	const struct us_flow_tuple t = {
		.src_ip = RTE_BE32(US_IPV4(198, 51, 100, 1)),
		.dst_ip = RTE_BE32(US_IPV4(192, 0, 2, 1)),
		.sport = RTE_BE16(40000),
		.dport = RTE_BE16(80),
	};
	struct rte_flow *flow = (struct rte_flow *)&t;
	char msg[96] = "";

	(void)state;
	assert_true(us_steer_install(ring_port, &t, 0, &flow, msg, sizeof(msg)) < 0);
	assert_null(flow);
	assert_true(msg[0] != '\0');
}

static void test_probe_bad_port(void **state)
{
	struct us_steer_caps caps;

	(void)state;
	assert_true(us_steer_probe(RTE_MAX_ETHPORTS - 1, &caps) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_probe_net_ring),
		cmocka_unit_test(test_install_fails_cleanly),
		cmocka_unit_test(test_probe_bad_port),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
