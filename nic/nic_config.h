/* nic/nic_config.h: what nic/ is configured with: the [eal] and [port]
 * sections, [capture] pdump (served from EAL start-up) and what [ip6]
 * enable asks of the port.
 *
 * Types only and no other header of ours, so that config/ fills it without
 * compiling against DPDK's ethdev, and nic/ takes it without knowing the
 * rest of the configuration.
 */
#ifndef US_NIC_CONFIG_H
#define US_NIC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

#define NIC_CFG_STR 256

enum nic_hugepages_mode {
	NIC_HUGEPAGES_AUTO = 0, /* use them when free, else --no-huge with a log line */
	NIC_HUGEPAGES_ON,       /* required: fail if none are free */
	NIC_HUGEPAGES_OFF,      /* always --no-huge */
};

struct nic_config {
	/* [eal] */
	char lcores[64];              /* "-l" argument, default "0" */
	enum nic_hugepages_mode hugepages; /* hugepages = auto|on|off */
	uint32_t no_huge_mem_mb;      /* memory for --no-huge, default 1024 */
	char file_prefix[64];         /* default "userstack" */
	char log_level[32];           /* e.g. "notice" (default) */
	char extra_args[NIC_CFG_STR]; /* appended verbatim, space-separated */

	/* [port] */
	char device[NIC_CFG_STR];     /* vdev string ("net_tap0,iface=ustap0") or PCI address */
	uint16_t rx_desc, tx_desc;    /* default 1024 each */
	uint32_t mbufs;               /* pool size, default 16383 */
	uint16_t mtu;                 /* default 1500 */
	uint32_t link_wait_ms;        /* default 5000 */
	bool port_isolate;            /* isolate = on: rte_flow isolated mode */
	/* gso / gro = auto (true, default) | off: TCP segmentation on TX (the
	 * NIC's TSO, else rte_gso) and coalescing on RX (the NIC's LRO, else
	 * rte_gro). */
	bool gso, gro;
	/* [ip6] enable: the port receives all multicast (IPv6's all-nodes and
	 * solicited-node groups, whose addresses follow ours). */
	bool ip6_multicast;

	/* [capture] */
	bool capture_pdump;           /* pdump = on: rte_pdump for dpdk-dumpcap (hugepages) */
};

/* Prototypes */

static inline void nic_config_defaults(struct nic_config *cfg)
{
	*cfg = (struct nic_config){
		.lcores = "0", .hugepages = NIC_HUGEPAGES_AUTO, .no_huge_mem_mb = 1024,
		.file_prefix = "userstack", .log_level = "notice",
		.rx_desc = 1024, .tx_desc = 1024, .mbufs = 16383, .mtu = 1500,
		.link_wait_ms = 5000, .gso = true, .gro = true,
	};
}

#endif
