/* nic/port.c: port bring-up in the shape of DPDK's examples/skeleton
 * port_init (configure, adjust descriptors, queue setup, start), with an
 * error check that says what to fix at every step, and the burst wrappers.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "stack/base/log.h"
#include "nic/nic.h"
#include "nic/rss.h"

_Static_assert(NIC_PORT_NAME_MAX == RTE_ETH_NAME_MAX_LEN, "ethdev names fit in nic/'s buffers");
_Static_assert(NIC_PMD_QUEUE_STATS <= RTE_ETHDEV_QUEUE_STAT_CNTRS, "rte_eth_stats keeps them");

#define NIC_POOL_CACHE 256
#define NIC_LINK_POLL_MS 100

/* us_rss_key_symmetric's 16-bit pattern over the longest key PMDs take
 * (i40e/ice: 52 bytes); the 40-byte ones read a prefix. */
static const uint8_t port_rss_key[US_RSS_KEY_MAX] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d,
	0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d,
	0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

/* The port named by [port] device, or the only port when no device is named
 * (the device then came from extra_args). */
static int port_lookup(const char *device, uint16_t *port_id, char *err, size_t errlen)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t n;

	if (device[0] != '\0') {
		nic_device_name(device, name, sizeof(name));
		if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
			return 0;
		/* The name (the device's first field) says which device; the
		 * whole device string (up to 255 bytes) could not fit in err. */
		snprintf(err, errlen,
			 "[port] device: no port named '%s' (did EAL probe it? "
			 "a PCI NIC must be bound to vfio-pci; check the EAL log above)",
			 name);
		return -ENODEV;
	}
	n = rte_eth_dev_count_avail();
	if (n == 1) {
		RTE_ETH_FOREACH_DEV(*port_id)
			return 0;
	}
	snprintf(err, errlen, "[port] device is empty and %u ports are available: "
		 "name one with [port] device", (unsigned)n);
	return -ENODEV;
}

struct rte_mempool *nic_pool_create(const struct nic_config *cfg, const char *name)
{
	char err[256];
	uint16_t port_id;
	int socket = SOCKET_ID_ANY;
	unsigned cache = NIC_POOL_CACHE;

	if (port_lookup(cfg->device, &port_id, err, sizeof(err)) == 0 &&
	    rte_eth_dev_socket_id(port_id) >= 0)
		socket = rte_eth_dev_socket_id(port_id);
	/* rte_mempool_create refuses a cache larger than n / 1.5. */
	if (cache > cfg->mbufs * 2 / 3)
		cache = cfg->mbufs * 2 / 3;
	return rte_pktmbuf_pool_create(name, cfg->mbufs, cache, 0, nic_mbuf_room(cfg->mtu), socket);
}

/* A frame of the configured MTU fits one mbuf: the stack's own parsing wants
 * its headers in the first segment, and one buffer per frame is what the
 * PMD copies fastest.  DPDK's default room (2 KiB) up to a 1500-byte MTU,
 * more for jumbo frames. */
uint16_t nic_mbuf_room(uint16_t mtu)
{
	uint32_t frame = RTE_ALIGN_CEIL((uint32_t)mtu + RTE_ETHER_HDR_LEN + RTE_VLAN_HLEN, 64u);

	return (uint16_t)RTE_MAX((uint32_t)RTE_MBUF_DEFAULT_BUF_SIZE, RTE_PKTMBUF_HEADROOM + frame);
}

/* Checksum offloads are used when the PMD offers them; the stack computes in
 * software what the port flags say the NIC will not do. */
static void port_offloads(const struct rte_eth_dev_info *info, uint16_t nb_queues, bool gso,
			  bool gro, struct rte_eth_conf *conf, struct nic_port *port)
{
	const uint64_t tx_l4 = RTE_ETH_TX_OFFLOAD_TCP_CKSUM | RTE_ETH_TX_OFFLOAD_UDP_CKSUM;
	const uint64_t rss = RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP;

	memset(conf, 0, sizeof(*conf));
	if (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_IPV4_CKSUM) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_IPV4_CKSUM;
		port->tx_ip_csum = true;
	}
	if ((info->tx_offload_capa & tx_l4) == tx_l4) {
		conf->txmode.offloads |= tx_l4;
		port->tx_l4_csum = true;
	}
	if ((info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_CHECKSUM) == RTE_ETH_RX_OFFLOAD_CHECKSUM) {
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_CHECKSUM;
		port->rx_csum = true;
	}
	/* Segmentation and coalescing by the NIC where it offers them ([port]
	 * gso / gro = auto); stack/net does them in software otherwise.  TSO
	 * needs the NIC's TCP checksum too (it fills each piece's). */
	/* net_tap's TSO is rte_gso in software too, with its own limits: it
	 * dropped our 64 KiB segments (1 MiB over the interop tap took 50 s
	 * of RTOs); stack/net cuts them for it instead. */
	bool tap = info->driver_name != NULL && strcmp(info->driver_name, "net_tap") == 0;

	if (gso && !tap && port->tx_l4_csum && (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_TCP_TSO) &&
	    (info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)) {
		conf->txmode.offloads |= RTE_ETH_TX_OFFLOAD_TCP_TSO | RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
		port->tso = true;
	}
	if (gro && port->rx_csum && (info->rx_offload_capa & RTE_ETH_RX_OFFLOAD_TCP_LRO)) {
		conf->rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TCP_LRO;
		conf->rxmode.max_lro_pkt_size = info->max_lro_pkt_size;
		port->lro = true;
	}
	/* Several queues: let RSS spread flows, with the hash fields the PMD has
	 * and our symmetric key, so that the engines compute the same owner in
	 * software (stack/engine/handoff.h) for both directions of a connection. */
	if (nb_queues > 1 && (info->flow_type_rss_offloads & rss) != 0) {
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_hf = info->flow_type_rss_offloads & rss;
		if (info->hash_key_size == US_RSS_KEY_LEN || info->hash_key_size == US_RSS_KEY_MAX) {
			conf->rx_adv_conf.rss_conf.rss_key = (uint8_t *)port_rss_key;
			conf->rx_adv_conf.rss_conf.rss_key_len = info->hash_key_size;
		}
		port->rss = true;
	}
}

/* The RETA the engines mirror: entry i -> queue i % N (us_rss_init). */
static void port_reta(struct nic_port *port, const struct rte_eth_dev_info *info)
{
	struct rte_eth_rss_reta_entry64 reta[US_RSS_RETA_MAX / RTE_ETH_RETA_GROUP_SIZE];
	uint16_t size = info->reta_size;

	if (!port->rss || size == 0 || size > US_RSS_RETA_MAX)
		return;
	memset(reta, 0, sizeof(reta));
	for (uint16_t i = 0; i < size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			i % port->nb_queues;
	}
	if (rte_eth_dev_rss_reta_update(port->port_id, reta, size) == 0)
		port->reta_size = size;
	else
		US_LOG(nic, WARNING, "port %u: RETA update refused; the engines' owner "
		       "computation may disagree with the NIC (hand-offs will fix it)\n",
		       (unsigned)port->port_id);
}

static int port_queues(struct nic_port *port, const struct rte_eth_dev_info *info,
		       const struct rte_eth_conf *conf, struct rte_mempool *pool,
		       uint16_t nb_rxd, uint16_t nb_txd, char *err, size_t errlen)
{
	struct rte_eth_txconf txconf = info->default_txconf;
	int socket = rte_eth_dev_socket_id(port->port_id);
	int rc;

	txconf.offloads = conf->txmode.offloads;
	for (uint16_t q = 0; q < port->nb_queues; q++) {
		rc = rte_eth_rx_queue_setup(port->port_id, q, nb_rxd, socket, NULL, pool);
		if (rc < 0) {
			snprintf(err, errlen, "RX queue %u setup (%u descriptors): %s",
				 (unsigned)q, (unsigned)nb_rxd, rte_strerror(-rc));
			return rc;
		}
		rc = rte_eth_tx_queue_setup(port->port_id, q, nb_txd, socket, &txconf);
		if (rc < 0) {
			snprintf(err, errlen, "TX queue %u setup (%u descriptors): %s",
				 (unsigned)q, (unsigned)nb_txd, rte_strerror(-rc));
			return rc;
		}
	}
	return 0;
}

/* net_memif (DPDK 22.11) chains its buffers for a frame larger than one
 * (its bsize devarg, 2048 by default) on paper, but such frames arrived
 * corrupted and crashed the receiver here: a frame must fit one buffer. */
static int port_memif_fits(const struct nic_config *cfg, const char *driver, char *err,
			   size_t errlen)
{
	const char *b = strstr(cfg->device, "bsize=");
	unsigned long bsize = b != NULL ? strtoul(b + strlen("bsize="), NULL, 10) : 2048;
	unsigned frame = (unsigned)cfg->mtu + RTE_ETHER_HDR_LEN;

	if (driver == NULL || strcmp(driver, "net_memif") != 0 || frame <= bsize)
		return 0;
	snprintf(err, errlen, "[port] mtu = %u: a %u-byte frame does not fit a memif buffer of %lu "
		 "bytes: add bsize=%u (or more) to [port] device", (unsigned)cfg->mtu, frame, bsize,
		 (unsigned)rte_align32pow2(frame));
	return -EINVAL;
}

/* A PMD without an MTU operation (net_memif, net_ring) has no MTU of its
 * own to enforce: it carries what it is given (memif chains its buffers),
 * so the stack's MTU is the configured one, and the mbufs are sized for it
 * (nic_mbuf_room).  A PMD that refuses the value is an error. */
static int port_mtu(struct nic_port *port, uint16_t mtu, char *err, size_t errlen)
{
	uint16_t cur;
	int rc;

	if (rte_eth_dev_get_mtu(port->port_id, &cur) == 0 && cur == mtu) {
		port->mtu = mtu;
		return 0;
	}
	rc = rte_eth_dev_set_mtu(port->port_id, mtu);
	if (rc == -ENOTSUP) {
		US_LOG(nic, NOTICE, "port %u: the driver has no MTU setting: the stack keeps "
		       "[port] mtu = %u itself\n", (unsigned)port->port_id, (unsigned)mtu);
		port->mtu = mtu;
		return 0;
	} else if (rc < 0) {
		snprintf(err, errlen, "[port] mtu = %u: %s", (unsigned)mtu, rte_strerror(-rc));
		return rc;
	}
	if (rte_eth_dev_get_mtu(port->port_id, &port->mtu) != 0)
		port->mtu = mtu;
	return 0;
}

/* net_tap reports link up only once the kernel side is up, which a test
 * script may do after we start: a link still down is a warning, not an error. */
static void port_wait_link(struct nic_port *port, uint32_t wait_ms)
{
	struct rte_eth_link link;
	const struct timespec step = { 0, NIC_LINK_POLL_MS * 1000000L };

	for (uint32_t waited = 0;; waited += NIC_LINK_POLL_MS) {
		memset(&link, 0, sizeof(link));
		if (rte_eth_link_get_nowait(port->port_id, &link) == 0 &&
		    link.link_status == RTE_ETH_LINK_UP)
			return;
		if (waited >= wait_ms)
			break;
		nanosleep(&step, NULL);
	}
	US_LOG(nic, WARNING, "port %u: link still down after %u ms, carrying on "
	       "(a tap link comes up with its kernel interface)\n",
	       (unsigned)port->port_id, (unsigned)wait_ms);
}

/* rte_flow isolated mode must be asked for before configure.  With
 * [port] isolate = on a port that cannot isolate is refused; with off the
 * probe enters and leaves it only to report whether it could (a PMD that
 * then cannot leave stays isolated: the stack installs its rules as for on). */
static int port_isolate(const struct nic_config *cfg, struct nic_port *port, char *err,
			size_t errlen)
{
	int rc = us_steer_isolate_probe(port->port_id, cfg->port_isolate, &port->iso);

	if (rc != 0 && cfg->port_isolate) {
		snprintf(err, errlen, "[port] isolate = on: port %u cannot enter rte_flow isolated "
			 "mode: %s%s%s; set isolate = off (RSS and hand-off steer instead)",
			 (unsigned)port->port_id, strerror(-rc),
			 port->iso.isolate_msg[0] != '\0' ? ": " : "", port->iso.isolate_msg);
		return rc;
	}
	if (rc != 0)
		US_LOG(nic, WARNING, "port %u: entered isolated mode while probing and cannot "
		       "leave it (%s): running isolated, as with [port] isolate = on\n",
		       (unsigned)port->port_id, strerror(-rc));
	return 0;
}

static int port_configure(const struct nic_config *cfg, struct rte_mempool *pool,
			  struct nic_port *port, char *err, size_t errlen)
{
	struct rte_eth_dev_info info;
	struct rte_eth_conf conf;
	uint16_t nb_rxd = cfg->rx_desc, nb_txd = cfg->tx_desc;
	int rc;

	rc = rte_eth_dev_info_get(port->port_id, &info);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: device info: %s", (unsigned)port->port_id,
			 rte_strerror(-rc));
		return rc;
	}
	if (port->nb_queues > info.max_rx_queues || port->nb_queues > info.max_tx_queues ||
	    port->nb_queues > US_ENGINES_MAX) {
		snprintf(err, errlen, "%u queues asked, the port has %u RX and %u TX: "
			 "use fewer lcores", (unsigned)port->nb_queues,
			 (unsigned)info.max_rx_queues, (unsigned)info.max_tx_queues);
		return -EINVAL;
	}
	rc = port_isolate(cfg, port, err, errlen);
	if (rc != 0)
		return rc;
	port_offloads(&info, port->nb_queues, cfg->gso, cfg->gro, &conf, port);
	rc = rte_eth_dev_configure(port->port_id, port->nb_queues, port->nb_queues, &conf);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: configure with %u queues: %s",
			 (unsigned)port->port_id, (unsigned)port->nb_queues, rte_strerror(-rc));
		return rc;
	}
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(port->port_id, &nb_rxd, &nb_txd);
	if (rc != 0) {
		snprintf(err, errlen, "[port] rx_desc = %u, tx_desc = %u: %s",
			 (unsigned)cfg->rx_desc, (unsigned)cfg->tx_desc, rte_strerror(-rc));
		return rc;
	}
	rc = port_queues(port, &info, &conf, pool, nb_rxd, nb_txd, err, errlen);
	if (rc == 0)
		rc = port_memif_fits(cfg, info.driver_name, err, errlen);
	if (rc == 0)
		rc = port_mtu(port, cfg->mtu, err, errlen);
	return rc;
}

/* Two net_tap quirks of DPDK 22.11, handled here so nothing above nic/ knows.
 *
 * TX L4 checksum "offload": the PMD computes it in software and gets it
 * wrong for some multi-segment mbufs (a segment whose payload spans two
 * send-queue buffers split at an odd offset: seen as kernel-side bad
 * checksums and a stalled 1 MB echo).  Our own chain-aware checksum costs
 * the same CPU, so the stack computes it.
 *
 * MAC: net_tap gives the kernel's tap netdev the port's own MAC, so both ends of
 * the wire would share one address (ARP answers naming the kernel's own MAC,
 * frames arriving with the receiver's source address).  The stack takes a
 * distinct locally administered address instead and the port goes
 * promiscuous so frames to it are delivered (a tap fd gets every frame the
 * kernel sends anyway; promiscuous only says so). */
static void port_tap_quirks(struct nic_port *port)
{
	struct rte_eth_dev_info info;

	if (rte_eth_dev_info_get(port->port_id, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_tap") != 0)
		return;
	port->tx_l4_csum = false;
	port->mac.addr_bytes[0] |= 0x02;  /* locally administered */
	port->mac.addr_bytes[0] &= ~0x01; /* unicast */
	port->mac.addr_bytes[5] ^= 0x01;
	if (rte_eth_promiscuous_enable(port->port_id) != 0)
		RTE_LOG(WARNING, USER1, "port %u: promiscuous mode refused; the stack's MAC "
			"may not receive\n", (unsigned)port->port_id);
}

/* IPv6 listens on groups that follow its addresses (all-nodes ff02::1 and
 * each address's solicited-node group, RFC 4861 7.2.1; 33:33:xx:xx:xx:xx
 * on Ethernet): all-multicast rather than a filter list kept in step with
 * them.  The virtual PMDs here have no multicast filter: net_tap,
 * net_af_packet and net_memif deliver every frame, whether or not they
 * take the call, so -ENOTSUP is only worth a notice. */
static void port_ip6_multicast(struct nic_port *port)
{
	int rc = rte_eth_allmulticast_enable(port->port_id);

	port->allmulti = rte_eth_allmulticast_get(port->port_id) == 1;
	if (rc == 0)
		US_LOG(nic, INFO, "port %u: all-multicast on (IPv6 neighbour discovery)\n",
		       (unsigned)port->port_id);
	else if (rc == -ENOTSUP)
		US_LOG(nic, NOTICE, "port %u: the driver has no all-multicast setting: IPv6 "
		       "neighbour discovery relies on it delivering every frame (net_tap, "
		       "net_af_packet and net_memif do)\n", (unsigned)port->port_id);
	else
		US_LOG(nic, WARNING, "port %u: all-multicast refused (%s): IPv6 neighbour "
		       "discovery may miss its multicast\n", (unsigned)port->port_id,
		       rte_strerror(-rc));
}

int nic_port_open(const struct nic_config *cfg, struct rte_mempool *pool, uint16_t nb_queues,
		  struct nic_port *port, char *err, size_t errlen)
{
	int rc;

	memset(port, 0, sizeof(*port));
	port->nb_queues = nb_queues ? nb_queues : 1;
	rc = port_lookup(cfg->device, &port->port_id, err, errlen);
	if (rc == 0)
		rc = port_configure(cfg, pool, port, err, errlen);
	if (rc != 0)
		return rc;
	rc = rte_eth_dev_start(port->port_id);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: start: %s", (unsigned)port->port_id,
			 rte_strerror(-rc));
		return rc;
	}
	port->started = true;
	{
		struct rte_eth_dev_info info;

		if (rte_eth_dev_info_get(port->port_id, &info) == 0)
			port_reta(port, &info);
	}
	rc = rte_eth_macaddr_get(port->port_id, &port->mac);
	if (rc != 0) {
		snprintf(err, errlen, "port %u: MAC address: %s", (unsigned)port->port_id,
			 rte_strerror(-rc));
		nic_port_close(port);
		return rc;
	}
	port_tap_quirks(port);
	if (cfg->ip6_multicast)
		port_ip6_multicast(port);
	port_wait_link(port, cfg->link_wait_ms);
	US_LOG(nic, NOTICE, "port %u: mtu %u, segmentation %s, coalescing %s, checksums %s\n",
	       (unsigned)port->port_id, (unsigned)port->mtu, nic_gso_name(port, cfg->gso),
	       nic_gro_name(port, cfg->gro), port->tx_l4_csum ? "by the NIC" : "software");
	return 0;
}

const char *nic_gso_name(const struct nic_port *port, bool on)
{
	return !on ? "off" : port->tso ? "NIC TSO" : "rte_gso";
}

const char *nic_gro_name(const struct nic_port *port, bool on)
{
	return !on ? "off" : port->lro ? "NIC LRO" : "rte_gro";
}

uint16_t nic_rx(struct nic_port *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t got = rte_eth_rx_burst(port->port_id, queue, pkts, n);

	/* Each queue's counters are written by its own engine only. */
	if (port->nb_queues == 1)
		port->stats.rx_pkts += got;
	else
		port->qstats[queue].rx_pkts += got;
	return got;
}

uint16_t nic_tx(struct nic_port *port, uint16_t queue, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t sent = rte_eth_tx_burst(port->port_id, queue, pkts, n);
	struct nic_stats *st = port->nb_queues == 1 ? &port->stats : &port->qstats[queue];

	st->tx_pkts += sent;
	if (sent < n) {
		/* Ownership: nic_tx consumes every mbuf; the rest are dropped here. */
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
		st->tx_dropped_full += n - sent;
	}
	return sent;
}

void nic_port_stats(const struct nic_port *port, struct nic_stats *sum)
{
	*sum = port->stats;
	for (uint16_t q = 0; q < US_ENGINES_MAX; q++) {
#define NIC_X_SUM(name, desc) sum->name += port->qstats[q].name;
		NIC_COUNTERS(NIC_X_SUM)
#undef NIC_X_SUM
	}
}

void nic_port_queue_stats(const struct nic_port *port, uint16_t queue, struct nic_stats *st)
{
	if (port->nb_queues == 1)
		*st = port->stats;
	else if (queue < US_ENGINES_MAX)
		*st = port->qstats[queue];
	else
		memset(st, 0, sizeof(*st));
}

void nic_port_info(const struct nic_port *port, struct nic_port_info *info)
{
	*info = (struct nic_port_info){
		.port_id = port->port_id, .nb_queues = port->nb_queues, .mac = port->mac,
		.mtu = port->mtu, .tx_ip_csum = port->tx_ip_csum, .tx_l4_csum = port->tx_l4_csum,
		.tso = port->tso, .lro = port->lro,
		.rx_csum = port->rx_csum, .rss = port->rss, .reta_size = port->reta_size,
		.isolated = port->iso.isolated, .allmulti = port->allmulti,
	};
}

int nic_port_pmd_stats(const struct nic_port *port, struct nic_pmd_stats *st)
{
	struct rte_eth_stats es;
	int rc = rte_eth_stats_get(port->port_id, &es);

	if (rc != 0)
		return rc;
#define NIC_X_PMD(name) st->name = es.name;
	NIC_PMD_COUNTERS(NIC_X_PMD)
#undef NIC_X_PMD
	for (unsigned q = 0; q < NIC_PMD_QUEUE_STATS; q++) {
#define NIC_X_PMD_Q(name) st->q[q].name = es.q_##name[q];
		NIC_PMD_QUEUE_COUNTERS(NIC_X_PMD_Q)
#undef NIC_X_PMD_Q
	}
	return 0;
}

int nic_port_promiscuous(const struct nic_port *port)
{
	return rte_eth_promiscuous_enable(port->port_id);
}

int nic_ports_avail(char names[][NIC_PORT_NAME_MAX], unsigned max)
{
	unsigned k = 0;
	uint16_t pid;

	RTE_ETH_FOREACH_DEV(pid) {
		if (k < max && rte_eth_dev_get_name_by_port(pid, names[k]) != 0)
			return -ENODEV;
		k++;
	}
	return (int)k;
}

void nic_port_close(struct nic_port *port)
{
	if (port->started) {
		int rc = rte_eth_dev_stop(port->port_id);
		if (rc != 0)
			US_LOG(nic, ERR, "port %u: stop: %s\n", (unsigned)port->port_id,
			       rte_strerror(-rc));
		port->started = false;
	}
	rte_eth_dev_close(port->port_id);
}
