/* tests/dpdk/port_setup.h: EAL and an mbuf pool for the tests of nic/ over
 * net_ring ports (a real PMD, no kernel, no hugepages).
 *
 * Each test process starts EAL once from a configuration (nic_eal_init, as
 * the stack does) with its own --file-prefix, and removes its runtime
 * directory at exit, pass or fail. */
#ifndef US_TEST_PORT_SETUP_H
#define US_TEST_PORT_SETUP_H

#include <rte_mempool.h>

#include "nic/nic_config.h"

/* Prototypes */

/* cfg: defaults, then net_ring0 on our first CPU, no hugepages, 2047
 * mbufs, 256 descriptors, MTU 1500, a file prefix made of prefix, the
 * given extra EAL arguments and link wait. */
void tport_config(struct nic_config *cfg, const char *prefix, const char *extra_args,
		  unsigned link_wait_ms);
/* EAL from cfg (argv0 as the program name), then the pool; 0 or -1. */
int tport_start(const struct nic_config *cfg, const char *argv0, const char *pool_name,
		struct rte_mempool **pool);
/* The pool freed, EAL cleaned up. */
void tport_stop(struct rte_mempool *pool);

#endif
