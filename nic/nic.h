/* nic/: EAL start-up, port bring-up and burst I/O.  Only this room calls the
 * ethdev API.
 *
 * nic_tx consumes every mbuf it is given: what the PMD did not take is freed
 * and counted, so callers never leak on a full TX ring.
 */
#ifndef US_NIC_H
#define US_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rte_ether.h>

#include "config/config.h"

struct rte_mbuf;
struct rte_mempool;

/* Types */

#define NIC_COUNTERS(X) \
	X(rx_pkts, "packets received") \
	X(tx_pkts, "packets sent") \
	X(tx_dropped_full, "dropped: TX ring full")

struct nic_stats {
#define NIC_X_FIELD(name, desc) uint64_t name;
	NIC_COUNTERS(NIC_X_FIELD)
#undef NIC_X_FIELD
};

struct nic_port {
	uint16_t port_id;
	uint16_t nb_queues;
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool tx_ip_csum;   /* NIC fills IPv4 header checksums */
	bool tx_l4_csum;   /* NIC fills TCP/UDP checksums (from the pseudo-header sum) */
	bool rx_csum;      /* NIC validates checksums and flags mbufs */
	bool started;
	struct nic_stats stats;
};

/* Prototypes */

/* Starts EAL from the [eal] section: -l, --file-prefix, --no-pci unless the
 * device is a PCI address, --vdev for virtual devices, hugepages when free
 * (else --no-huge -m N with one log line saying so).  argv0 names the
 * program.  0 or -errno with a message on stderr. */
int nic_eal_init(const struct us_config *cfg, const char *argv0);
/* Pool sized from the config (mbufs), on the socket of the port. */
struct rte_mempool *nic_pool_create(const struct us_config *cfg, const char *name);
/* Configure, set up queues, start and wait for link; 0 or -errno, message in err. */
int nic_port_open(const struct us_config *cfg, struct rte_mempool *pool, uint16_t nb_queues,
		  struct nic_port *port, char *err, size_t errlen);
uint16_t nic_rx(struct nic_port *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t nic_tx(struct nic_port *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
void nic_port_close(struct nic_port *port);
void nic_eal_cleanup(void);

#endif
