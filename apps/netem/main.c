/* us-netem: a link emulator between two DPDK ports, one nic/impair stage per
 * direction, for loss-recovery tests (this kernel has no netem).
 *
 *   us-netem --port0 net_memif0,role=server --port1 net_tap0,iface=usnet0 \
 *            --a2b "delay=20ms,loss=1%,seed=1" --b2a "delay=20ms" [-- EAL args]
 *
 * Without --port0/--port1 the two ports are whatever EAL was given after
 * "--" (e.g. two --vdev), in port-id order.  Both ports are busy-polled on one
 * lcore and put in promiscuous mode (a bridge forwards frames for any MAC).
 * SIGINT or SIGTERM prints the counters and exits 0.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "config/config.h"
#include "nic/impair.h"
#include "nic/nic.h"

#define NETEM_BURST 32

struct netem_dir {
	const char *name;        /* "a2b" */
	struct nic_port *src, *dst;
	struct nic_impair *imp;
	struct nic_impair_params params;
};

struct netem_opts {
	const char *port[2];     /* vdev strings, or NULL */
	const char *spec[2];     /* a2b, b2a */
	uint32_t mem_mb;
	char eal_extra[US_CFG_STR];
};

static volatile sig_atomic_t netem_quit;

static void netem_on_signal(int sig)
{
	(void)sig;
	netem_quit = 1;
}

static void netem_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--port0 VDEV] [--port1 VDEV] [--a2b SPEC] [--b2a SPEC] [--mem MB]"
		" [-- EAL args]\n"
		"  SPEC: delay=50ms,jitter=5ms,loss=1%%,ge=0.01:0.3:1:0,reorder=2%%,"
		"reorder_gap=1ms,dup=1%%,rate=100mbit,queue=256kb,limit=10000,seed=42\n",
		prog);
}

/* Options, then everything after "--" joined as extra EAL arguments. */
static int netem_parse_args(int argc, char **argv, struct netem_opts *o)
{
	static const struct option longopts[] = {
		{ "port0", required_argument, NULL, '0' }, { "port1", required_argument, NULL, '1' },
		{ "a2b", required_argument, NULL, 'a' },   { "b2a", required_argument, NULL, 'b' },
		{ "mem", required_argument, NULL, 'm' },   { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 } };
	int c;
	size_t used = 0;

	memset(o, 0, sizeof(*o));
	o->mem_mb = 256;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case '0': o->port[0] = optarg; break;
		case '1': o->port[1] = optarg; break;
		case 'a': o->spec[0] = optarg; break;
		case 'b': o->spec[1] = optarg; break;
		case 'm': o->mem_mb = (uint32_t)strtoul(optarg, NULL, 10); break;
		default: return -EINVAL;
		}
	}
	if ((o->port[0] == NULL) != (o->port[1] == NULL) || o->mem_mb == 0) {
		fprintf(stderr, "us-netem: give both --port0 and --port1, or neither; "
			"--mem must be a number of MB\n");
		return -EINVAL;
	}
	if (o->port[1] != NULL)
		used = (size_t)snprintf(o->eal_extra, sizeof(o->eal_extra), "--vdev %s",
					o->port[1]);
	for (int i = optind; i < argc && used < sizeof(o->eal_extra); i++)
		used += (size_t)snprintf(o->eal_extra + used, sizeof(o->eal_extra) - used, "%s%s",
					 used ? " " : "", argv[i]);
	if (used >= sizeof(o->eal_extra)) {
		fprintf(stderr, "us-netem: EAL arguments longer than %zu characters\n",
			sizeof(o->eal_extra) - 1);
		return -E2BIG;
	}
	return 0;
}

/* Opens the port named name (an ethdev name or vdev string) through nic/. */
static int netem_open(struct us_config *cfg, struct rte_mempool *pool, const char *name,
		      struct nic_port *port)
{
	char err[256];
	int rc;

	snprintf(cfg->device, sizeof(cfg->device), "%s", name);
	rc = nic_port_open(cfg, pool, 1, port, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "us-netem: %s: %s\n", name, err);
		return rc;
	}
	if (rte_eth_promiscuous_enable(port->port_id) != 0)
		fprintf(stderr, "us-netem: %s: promiscuous mode refused; only frames to its MAC "
			"will cross\n", name);
	return 0;
}

/* The ethdev names of the two ports: from the options, else the first two. */
static int netem_port_names(const struct netem_opts *o, char names[2][RTE_ETH_NAME_MAX_LEN])
{
	uint16_t pid, k = 0;

	if (o->port[0] != NULL) {
		for (int i = 0; i < 2; i++)
			nic_device_name(o->port[i], names[i], RTE_ETH_NAME_MAX_LEN);
		return 0;
	}
	if (rte_eth_dev_count_avail() != 2) {
		fprintf(stderr, "us-netem: %u ports available, need exactly 2 (--port0/--port1 "
			"or two --vdev after --)\n", (unsigned)rte_eth_dev_count_avail());
		return -ENODEV;
	}
	RTE_ETH_FOREACH_DEV(pid)
		if (rte_eth_dev_get_name_by_port(pid, names[k++]) != 0)
			return -ENODEV;
	return 0;
}

static uint64_t netem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One pass over one direction: receive, impair, send what is due. */
static void netem_poll(struct netem_dir *d)
{
	struct rte_mbuf *pkts[NETEM_BURST];
	uint16_t n = nic_rx(d->src, 0, pkts, NETEM_BURST);
	uint64_t now = netem_now_ns();

	if (n > 0)
		nic_impair_enqueue(d->imp, pkts, n, now);
	while (nic_impair_next_ns(d->imp) <= now) {
		n = nic_impair_dequeue(d->imp, pkts, NETEM_BURST, now);
		nic_tx(d->dst, 0, pkts, n); /* frees and counts what the ring refused */
	}
}

static void netem_report(const struct netem_dir *dirs, const struct nic_port *ports)
{
	char spec[512], prefix[32];

	for (int i = 0; i < 2; i++) {
		nic_impair_format(&dirs[i].params, spec, sizeof(spec));
		printf("%s: %s\n", dirs[i].name, spec);
		snprintf(prefix, sizeof(prefix), "%s.", dirs[i].name);
		nic_impair_stats_print(dirs[i].imp, prefix, stdout);
		printf("%s.%-20s %12u  # still pending, freed now\n", dirs[i].name, "pending",
		       (unsigned)nic_impair_pending(dirs[i].imp));
	}
	for (int i = 0; i < 2; i++) {
#define NETEM_X_PRINT(name, desc) \
		printf("port%d.%-18s %12" PRIu64 "  # %s\n", i, #name, ports[i].stats.name, desc);
		NIC_COUNTERS(NETEM_X_PRINT)
#undef NETEM_X_PRINT
	}
	fflush(stdout);
}

static int netem_setup_dirs(const struct netem_opts *o, struct netem_dir *dirs)
{
	char err[256];

	for (int i = 0; i < 2; i++) {
		dirs[i].name = i == 0 ? "a2b" : "b2a";
		if (nic_impair_parse(o->spec[i], &dirs[i].params, err, sizeof(err)) != 0) {
			fprintf(stderr, "us-netem: --%s: %s\n", dirs[i].name, err);
			return -EINVAL;
		}
	}
	return 0;
}

static int netem_run(const struct netem_opts *o, struct us_config *cfg, struct netem_dir *dirs)
{
	char names[2][RTE_ETH_NAME_MAX_LEN];
	struct nic_port ports[2];
	struct rte_mempool *pool;
	int rc = netem_port_names(o, names);

	if (rc != 0)
		return rc;
	/* Room for both stages full plus the descriptor rings of both ports. */
	cfg->mbufs = dirs[0].params.limit + dirs[1].params.limit +
		     2u * (cfg->rx_desc + cfg->tx_desc) + 2 * NETEM_BURST + 1024;
	snprintf(cfg->device, sizeof(cfg->device), "%s", names[0]);
	pool = nic_pool_create(cfg, "netem_pool");
	if (pool == NULL) {
		fprintf(stderr, "us-netem: mbuf pool of %u: %s (raise --mem)\n",
			(unsigned)cfg->mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if ((rc = netem_open(cfg, pool, names[0], &ports[0])) != 0)
		return rc;
	if ((rc = netem_open(cfg, pool, names[1], &ports[1])) != 0) {
		nic_port_close(&ports[0]);
		return rc;
	}
	for (int i = 0; i < 2 && rc == 0; i++) {
		dirs[i].src = &ports[i];
		dirs[i].dst = &ports[1 - i];
		dirs[i].imp = nic_impair_create(&dirs[i].params);
		if (dirs[i].imp == NULL)
			rc = -errno;
	}
	if (rc == 0) {
		printf("us-netem: %s <-> %s, Ctrl-C to stop\n", names[0], names[1]);
		fflush(stdout);
		while (!netem_quit) {
			netem_poll(&dirs[0]);
			netem_poll(&dirs[1]);
		}
		netem_report(dirs, ports);
	}
	nic_impair_destroy(dirs[0].imp);
	nic_impair_destroy(dirs[1].imp);
	nic_port_close(&ports[0]);
	nic_port_close(&ports[1]);
	return rc;
}

int main(int argc, char **argv)
{
	struct netem_opts o;
	struct netem_dir dirs[2] = { 0 };
	struct us_config cfg;
	struct sigaction sa = { .sa_handler = netem_on_signal };
	int rc;

	if (netem_parse_args(argc, argv, &o) != 0) {
		netem_usage(argv[0]);
		return 2;
	}
	if (netem_setup_dirs(&o, dirs) != 0)
		return 2;
	us_config_defaults(&cfg);
	/* A second instance passes its own --file-prefix after "--" (EAL keeps the last). */
	snprintf(cfg.file_prefix, sizeof(cfg.file_prefix), "us-netem");
	cfg.no_huge_mem_mb = o.mem_mb;
	snprintf(cfg.device, sizeof(cfg.device), "%s", o.port[0] ? o.port[0] : "");
	snprintf(cfg.extra_args, sizeof(cfg.extra_args), "%s", o.eal_extra);
	if (nic_eal_init(&cfg, argv[0]) != 0)
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = netem_run(&o, &cfg, dirs);
	nic_eal_cleanup();
	return rc == 0 ? 0 : 1;
}
