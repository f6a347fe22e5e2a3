/* tests/dpdk/port_setup.c: EAL and a pool for the net_ring port tests. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#include "nic/nic.h"
#include "stack/base/log.h"
#include "tests/common/test_eal.h"
#include "tests/dpdk/port_setup.h"

/* The first CPU we may run on: lcore 0 is not always in our affinity. */
static int tport_first_cpu(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &set))
				return i;
	return 0;
}

void tport_config(struct nic_config *cfg, const char *prefix, const char *extra_args,
		  unsigned link_wait_ms)
{
	nic_config_defaults(cfg);
	snprintf(cfg->lcores, sizeof(cfg->lcores), "%d", tport_first_cpu());
	test_eal_prefix(cfg->file_prefix, sizeof(cfg->file_prefix), prefix);
	snprintf(cfg->log_level, sizeof(cfg->log_level), "%s", "error");
	snprintf(cfg->device, sizeof(cfg->device), "%s", "net_ring0");
	snprintf(cfg->extra_args, sizeof(cfg->extra_args), "%s", extra_args);
	cfg->hugepages = NIC_HUGEPAGES_OFF;
	cfg->no_huge_mem_mb = 64;
	cfg->mbufs = 2047;
	cfg->rx_desc = cfg->tx_desc = 256;
	cfg->mtu = 1500;
	cfg->link_wait_ms = link_wait_ms;
}

int tport_start(const struct nic_config *cfg, const char *argv0, const char *pool_name,
		struct rte_mempool **pool)
{
	static const struct us_log_config log = { .level = "notice" };

	if (nic_eal_init(cfg, &log, "", argv0) != 0)
		return -1;
	atexit(test_eal_remove_runtime_dir);
	*pool = nic_pool_create(cfg, pool_name);
	return *pool ? 0 : -1;
}

void tport_stop(struct rte_mempool *pool)
{
	rte_mempool_free(pool);
	nic_eal_cleanup();
}
