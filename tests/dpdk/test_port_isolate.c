/* nic/: [port] isolate over a real PMD.  net_ring has no rte_flow at all, so
 * isolate = on must be refused with a clear error before the port is
 * configured, and isolate = off must still start, the probe reporting that
 * isolation was tried and did not work. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "tests/dpdk/port_setup.h"
#include "nic/nic.h"
#include "nic/steer.h"

static struct nic_config cfg;
static struct rte_mempool *pool;

static int group_setup(void **state)
{
	(void)state;
	tport_config(&cfg, "isolate", "--no-shconf", 100);
	return tport_start(&cfg, "test_port_isolate", "test_isolate_pool", &pool);
}

static int group_teardown(void **state)
{
	(void)state;
	tport_stop(pool);
	return 0;
}

/* isolate = on: refused before configure, the error names the key, the
 * reason and the way out.  (First: a closed vdev port cannot be reopened.) */
static void test_isolate_on_refused(void **state)
{
	struct nic_config c = cfg;
	struct nic_port port;
	char err[512] = "";
	(void)state;

	c.port_isolate = true;
	assert_int_equal(nic_port_open(&c, pool, 1, &port, err, sizeof(err)), -ENOSYS);
	assert_false(port.started);
	assert_non_null(strstr(err, "[port] isolate = on"));
	assert_non_null(strstr(err, strerror(ENOSYS)));
	assert_non_null(strstr(err, "set isolate = off"));
	assert_true(port.iso.isolate_tried);
	assert_false(port.iso.isolate_ok);
	assert_false(port.iso.isolated);
}

/* isolate = off: the port starts; the probe line says isolation was tried
 * and why it failed, and the steering choice is unchanged. */
static void test_isolate_off_reported(void **state)
{
	struct nic_port port;
	struct us_steer_caps caps;
	char err[512] = "", line[512];
	(void)state;

	assert_int_equal(nic_port_open(&cfg, pool, 1, &port, err, sizeof(err)), 0);
	assert_true(port.started);
	assert_true(port.iso.isolate_tried);
	assert_false(port.iso.isolate_ok);
	assert_false(port.iso.isolated);
	assert_int_equal(port.iso.isolate_err, -ENOSYS);
	caps = port.iso;
	assert_int_equal(us_steer_probe(port.port_id, &caps), 0);
	assert_true(caps.isolate_tried); /* kept by the probe */
	assert_int_equal(caps.mode, US_STEER_SOFTWARE);
	us_steer_caps_format(&caps, line, sizeof(line));
	assert_non_null(strstr(line, "; isolate: no (Function not implemented); steering: software"));
	nic_port_close(&port);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_isolate_on_refused),
		cmocka_unit_test(test_isolate_off_reported),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
