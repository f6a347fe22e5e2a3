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

#include "nic/nic_config.h"
#include "stack/base/limits.h"
#include "nic/steer.h"
#include "stack/base/log.h"

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


/* The PMD's own counters (rte_eth_stats), in the order telemetry lists
 * them, and those it keeps per queue for the first NIC_PMD_QUEUE_STATS
 * queues. */
#define NIC_PMD_COUNTERS(X) \
	X(ipackets) X(opackets) X(ibytes) X(obytes) \
	X(imissed) X(ierrors) X(oerrors) X(rx_nombuf)
#define NIC_PMD_QUEUE_COUNTERS(X) X(ipackets) X(opackets) X(ibytes) X(obytes)
#define NIC_PMD_QUEUE_STATS RTE_ETHDEV_QUEUE_STAT_CNTRS

struct nic_pmd_queue_stats {
#define NIC_X_PMD_FIELD(name) uint64_t name;
	NIC_PMD_QUEUE_COUNTERS(NIC_X_PMD_FIELD)
};

struct nic_pmd_stats {
	NIC_PMD_COUNTERS(NIC_X_PMD_FIELD)
#undef NIC_X_PMD_FIELD
	struct nic_pmd_queue_stats q[NIC_PMD_QUEUE_STATS];
};

/* Ethdev names (nic_device_name, nic_ports_avail) fit in this many bytes. */
#define NIC_PORT_NAME_MAX 64

struct nic_port {
	uint16_t port_id;
	uint16_t nb_queues;
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool tx_ip_csum;   /* NIC fills IPv4 header checksums */
	bool tx_l4_csum;   /* NIC fills TCP/UDP checksums (from the pseudo-header sum) */
	bool rx_csum;      /* NIC validates checksums and flags mbufs */
	bool tso;          /* NIC cuts TCP segments of several MSS (RTE_MBUF_F_TX_TCP_SEG) */
	bool lro;          /* NIC coalesces received TCP segments */
	bool allmulti;     /* all-multicast on (asked for by [ip6] enable) */
	bool started;
	struct nic_stats stats;  /* one queue: the port; several: see qstats */
	/* Several queues: RSS configured with us_rss_key_symmetric and a
	 * round-robin RETA of reta_size entries (rss false: the PMD spreads
	 * flows its own way, or not at all).  Counters per queue, each written
	 * only by the engine owning the queue. */
	bool rss;
	uint16_t reta_size;
	struct nic_stats qstats[US_ENGINES_MAX];
	/* rte_flow isolated mode, tried before configure (us_steer_isolate_probe):
	 * iso.isolated says the port delivers only what rules match. */
	struct us_steer_caps iso;
};

/* What a port is, as nic_port_open left it. */
struct nic_port_info {
	uint16_t port_id;
	uint16_t nb_queues;
	struct rte_ether_addr mac;
	uint16_t mtu;
	bool tx_ip_csum, tx_l4_csum, rx_csum; /* as in struct nic_port */
	bool tso, lro;
	bool rss;
	uint16_t reta_size;
	bool isolated;     /* rte_flow isolated mode */
	bool allmulti;     /* all-multicast on (nic_config ip6_multicast) */
};

/* The EAL command line built from the [eal] and [port] sections.  argv points
 * into buf, so the struct must outlive rte_eal_init. */
#define NIC_EAL_MAX_ARGS 64
struct nic_eal_args {
	int argc;
	char *argv[NIC_EAL_MAX_ARGS + 1]; /* NULL-terminated */
	bool no_huge;                     /* --no-huge was chosen */
	char buf[2048];
};

/* What the hugepage probe found (nic_hugepages_probe). */
struct nic_hugepages {
	long free_pages;   /* HugePages_Free, -1 if unreadable */
	bool mounted;      /* a hugetlbfs is mounted */
};

/* Prototypes */

/* Starts EAL from the [eal] section: -l, --file-prefix, --no-pci unless the
 * device is a PCI address, --vdev for virtual devices, hugepages when free
 * (else --no-huge -m N with one log line saying so), then sets the [log]
 * levels (log).  source names the configuration file in messages, argv0
 * the program.  0 or -errno with a message on stderr. */
int nic_eal_init(const struct nic_config *cfg, const struct us_log_config *log,
		 const char *source, const char *argv0);
/* Pool sized from the config (mbufs), on the socket of the port. */
struct rte_mempool *nic_pool_create(const struct nic_config *cfg, const char *name);
/* Configure, set up queues, start and wait for link; 0 or -errno, message in err. */
int nic_port_open(const struct nic_config *cfg, struct rte_mempool *pool, uint16_t nb_queues,
		  struct nic_port *port, char *err, size_t errlen);
uint16_t nic_rx(struct nic_port *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
uint16_t nic_tx(struct nic_port *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n);
void nic_port_close(struct nic_port *port);
/* The port's counters summed over its queues. */
void nic_port_stats(const struct nic_port *port, struct nic_stats *sum);
/* One queue's counters (with one queue, the port's).  Only the queue's own
 * engine writes them; read from another core they may be a moment old. */
void nic_port_queue_stats(const struct nic_port *port, uint16_t queue, struct nic_stats *st);
void nic_port_info(const struct nic_port *port, struct nic_port_info *info);
/* Who cuts large TCP segments / coalesces received ones with [port] gso /
 * gro = auto (on) or off: "off", "NIC TSO" / "NIC LRO", "rte_gso" / "rte_gro". */
const char *nic_gso_name(const struct nic_port *port, bool on);
const char *nic_gro_name(const struct nic_port *port, bool on);
/* The data room of the pool's mbufs for an MTU (one frame per mbuf). */
uint16_t nic_mbuf_room(uint16_t mtu);
/* The PMD's counters (rte_eth_stats_get); 0 or -errno. */
int nic_port_pmd_stats(const struct nic_port *port, struct nic_pmd_stats *st);
/* Frames to any MAC are delivered (a bridge); 0 or -errno. */
int nic_port_promiscuous(const struct nic_port *port);
/* The names of the ports EAL probed, in port-id order, at most max of them;
 * returns how many there are (which may be more than max), or -errno. */
int nic_ports_avail(char names[][NIC_PORT_NAME_MAX], unsigned max);
void nic_eal_cleanup(void);

/* The pieces of nic_eal_init, exposed so they can be tested without EAL. */
/* Reads HugePages_Free from meminfo and looks for hugetlbfs in mounts (the
 * paths are /proc/meminfo and /proc/mounts outside tests). */
void nic_hugepages_probe(const char *meminfo, const char *mounts, struct nic_hugepages *hp);
/* Builds the EAL argv; hugepages_available comes from the probe.  0, or
 * -EINVAL / -ENOMEM / -E2BIG with a message in err (bad device, hugepages = on
 * without free pages, too many arguments). */
int nic_eal_build_args(const struct nic_config *cfg, const char *argv0, bool hugepages_available,
		       struct nic_eal_args *a, char *err, size_t errlen);
/* True if s (up to a comma or the end) is dddd:bb:dd.f or bb:dd.f, hex digits. */
bool nic_device_is_pci(const char *s);
/* The ethdev name of the [port] device: a vdev name up to the first comma, or
 * the PCI address with the domain filled in (0000:).  Empty if no device. */
void nic_device_name(const char *device, char *name, size_t len);

#endif
