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
 *
 * --queues N opens N queue pairs on each port (net_memif, whose sender picks
 * the queue its peer receives on) and forwards queue by queue, one impair
 * stage per queue and direction.  --swap-queues sends what arrived on queue
 * q out of queue (q + 1) % N: a peer that owns one queue per engine then
 * receives every frame on an engine that does not own its connection, so
 * the stack's software hand-off (stack/engine/handoff.h) carries all of them.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_errno.h>
#include <rte_mbuf.h>

#include "nic/impair.h"
#include "nic/nic.h"
#include "nic/nic_config.h"

#define NETEM_BURST 32

struct netem_dir {
	const char *name;        /* "a2b" */
	struct nic_port *src, *dst;
	struct nic_impair *imp[US_ENGINES_MAX]; /* one stage per RX queue of src */
	struct nic_impair_params params;
	uint16_t nq;             /* queue pairs per port */
	bool swap;               /* queue q -> queue (q + 1) % nq */
};

struct netem_opts {
	const char *port[2];     /* vdev strings, or NULL */
	const char *spec[2];     /* a2b, b2a */
	uint32_t mem_mb;
	uint16_t queues;         /* --queues, 1..US_ENGINES_MAX */
	bool swap;               /* --swap-queues */
	char eal_extra[NIC_CFG_STR];
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
		" [--queues N [--swap-queues]] [-- EAL args]\n"
		"  --queues N       N queue pairs per port, forwarded queue by queue (default 1)\n"
		"  --swap-queues    a frame received on queue q leaves on queue (q + 1) %% N\n"
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
		{ "queues", required_argument, NULL, 'q' },
		{ "swap-queues", no_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 } };
	unsigned long nq;
	char *end;
	int c;
	size_t used = 0;

	memset(o, 0, sizeof(*o));
	o->mem_mb = 256;
	o->queues = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case '0': o->port[0] = optarg; break;
		case '1': o->port[1] = optarg; break;
		case 'a': o->spec[0] = optarg; break;
		case 'b': o->spec[1] = optarg; break;
		case 'm': o->mem_mb = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'q':
			nq = strtoul(optarg, &end, 10);
			if (*end != '\0' || nq == 0 || nq > US_ENGINES_MAX) {
				fprintf(stderr, "us-netem: --queues '%s': need 1..%u\n", optarg,
					US_ENGINES_MAX);
				return -EINVAL;
			}
			o->queues = (uint16_t)nq;
			break;
		case 's': o->swap = true; break;
		default: return -EINVAL;
		}
	}
	if (o->swap && o->queues < 2) {
		fprintf(stderr, "us-netem: --swap-queues needs --queues 2 or more\n");
		return -EINVAL;
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
static int netem_open(struct nic_config *cfg, struct rte_mempool *pool, const char *name,
		      uint16_t nq, struct nic_port *port)
{
	char err[256];
	int rc;

	snprintf(cfg->device, sizeof(cfg->device), "%s", name);
	rc = nic_port_open(cfg, pool, nq, port, err, sizeof(err));
	if (rc != 0) {
		fprintf(stderr, "us-netem: %s: %s\n", name, err);
		return rc;
	}
	if (nic_port_promiscuous(port) != 0)
		fprintf(stderr, "us-netem: %s: promiscuous mode refused; only frames to its MAC "
			"will cross\n", name);
	return 0;
}

/* The ethdev names of the two ports: from the options, else the first two. */
static int netem_port_names(const struct netem_opts *o, char names[2][NIC_PORT_NAME_MAX])
{
	int n;

	if (o->port[0] != NULL) {
		for (int i = 0; i < 2; i++)
			nic_device_name(o->port[i], names[i], NIC_PORT_NAME_MAX);
		return 0;
	}
	n = nic_ports_avail(names, 2);
	if (n < 0)
		return n;
	if (n != 2) {
		fprintf(stderr, "us-netem: %u ports available, need exactly 2 (--port0/--port1 "
			"or two --vdev after --)\n", (unsigned)n);
		return -ENODEV;
	}
	return 0;
}

static uint64_t netem_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The queue of dst that a frame received on queue q of src leaves by. */
static uint16_t netem_out_queue(const struct netem_dir *d, uint16_t q)
{
	return d->swap ? (uint16_t)((q + 1u) % d->nq) : q;
}

/* One pass over one direction: receive, impair, send what is due, queue by
 * queue (each stage keeps its frames' order). */
static void netem_poll(struct netem_dir *d)
{
	struct rte_mbuf *pkts[NETEM_BURST];

	for (uint16_t q = 0; q < d->nq; q++) {
		uint16_t n = nic_rx(d->src, q, pkts, NETEM_BURST);
		uint64_t now = netem_now_ns();

		if (n > 0)
			nic_impair_enqueue(d->imp[q], pkts, n, now);
		while (nic_impair_next_ns(d->imp[q]) <= now) {
			n = nic_impair_dequeue(d->imp[q], pkts, NETEM_BURST, now);
			/* nic_tx frees and counts what the ring refused */
			nic_tx(d->dst, netem_out_queue(d, q), pkts, n);
		}
	}
}

/* One stage's counters; prefix "a2b." (one queue) or "a2b.q0." (several). */
static void netem_report_stage(const struct netem_dir *d, uint16_t q)
{
	char prefix[32];

	if (d->nq == 1)
		snprintf(prefix, sizeof(prefix), "%s.", d->name);
	else
		snprintf(prefix, sizeof(prefix), "%s.q%u.", d->name, (unsigned)q);
	nic_impair_stats_print(d->imp[q], prefix, stdout);
	printf("%s%-20s %12u  # still pending, freed now\n", prefix, "pending",
	       (unsigned)nic_impair_pending(d->imp[q]));
}

/* A port's totals ("port0.rx_pkts"), then per queue ("port0.q1.rx_pkts")
 * when it has several. */
static void netem_report_port(const struct nic_port *port, int i)
{
	struct nic_stats sum;

	nic_port_stats(port, &sum);
#define NETEM_X_PRINT(name, desc) \
	printf("port%d.%-18s %12" PRIu64 "  # %s\n", i, #name, sum.name, desc);
	NIC_COUNTERS(NETEM_X_PRINT)
#undef NETEM_X_PRINT
	for (uint16_t q = 0; port->nb_queues > 1 && q < port->nb_queues; q++) {
#define NETEM_X_QPRINT(name, desc) \
		printf("port%d.q%u.%-15s %12" PRIu64 "  # %s\n", i, (unsigned)q, #name, \
		       port->qstats[q].name, desc);
		NIC_COUNTERS(NETEM_X_QPRINT)
#undef NETEM_X_QPRINT
	}
}

static void netem_report(const struct netem_dir *dirs, const struct nic_port *ports)
{
	char spec[512];

	for (int i = 0; i < 2; i++) {
		nic_impair_format(&dirs[i].params, spec, sizeof(spec));
		printf("%s: %s\n", dirs[i].name, spec);
		for (uint16_t q = 0; q < dirs[i].nq; q++) {
			if (dirs[i].nq > 1)
				printf("%s: port%d queue %u -> port%d queue %u\n", dirs[i].name, i,
				       (unsigned)q, 1 - i, (unsigned)netem_out_queue(&dirs[i], q));
			netem_report_stage(&dirs[i], q);
		}
	}
	for (int i = 0; i < 2; i++)
		netem_report_port(&ports[i], i);
	fflush(stdout);
}

static int netem_setup_dirs(const struct netem_opts *o, struct netem_dir *dirs)
{
	char err[256];

	for (int i = 0; i < 2; i++) {
		dirs[i].name = i == 0 ? "a2b" : "b2a";
		dirs[i].nq = o->queues;
		dirs[i].swap = o->swap;
		if (nic_impair_parse(o->spec[i], &dirs[i].params, err, sizeof(err)) != 0) {
			fprintf(stderr, "us-netem: --%s: %s\n", dirs[i].name, err);
			return -EINVAL;
		}
	}
	return 0;
}

/* One impair stage per queue; queue q's seed is the spec's plus q, so the
 * stages do not lose the same frames in step. */
static int netem_create_stages(struct netem_dir *d)
{
	for (uint16_t q = 0; q < d->nq; q++) {
		struct nic_impair_params p = d->params;

		p.seed += q;
		d->imp[q] = nic_impair_create(&p);
		if (d->imp[q] == NULL)
			return -errno;
	}
	return 0;
}

static void netem_loop(struct netem_dir *dirs, const char names[2][NIC_PORT_NAME_MAX])
{
	printf("us-netem: %s <-> %s, %u queue%s%s, Ctrl-C to stop\n", names[0], names[1],
	       (unsigned)dirs[0].nq, dirs[0].nq > 1 ? "s" : "",
	       dirs[0].swap ? " (swapped)" : "");
	fflush(stdout);
	while (!netem_quit) {
		netem_poll(&dirs[0]);
		netem_poll(&dirs[1]);
	}
}

static int netem_run(const struct netem_opts *o, struct nic_config *cfg, struct netem_dir *dirs)
{
	char names[2][NIC_PORT_NAME_MAX];
	struct nic_port ports[2];
	struct rte_mempool *pool;
	int rc = netem_port_names(o, names);

	if (rc != 0)
		return rc;
	/* Room for every stage full plus the descriptor rings of both ports. */
	cfg->mbufs = (dirs[0].params.limit + dirs[1].params.limit +
		      2u * (cfg->rx_desc + cfg->tx_desc)) * o->queues + 2 * NETEM_BURST + 1024;
	snprintf(cfg->device, sizeof(cfg->device), "%s", names[0]);
	pool = nic_pool_create(cfg, "netem_pool");
	if (pool == NULL) {
		fprintf(stderr, "us-netem: mbuf pool of %u: %s (raise --mem)\n",
			(unsigned)cfg->mbufs, rte_strerror(rte_errno));
		return -ENOMEM;
	}
	if ((rc = netem_open(cfg, pool, names[0], o->queues, &ports[0])) != 0)
		return rc;
	if ((rc = netem_open(cfg, pool, names[1], o->queues, &ports[1])) != 0) {
		nic_port_close(&ports[0]);
		return rc;
	}
	for (int i = 0; i < 2 && rc == 0; i++) {
		dirs[i].src = &ports[i];
		dirs[i].dst = &ports[1 - i];
		rc = netem_create_stages(&dirs[i]);
	}
	if (rc == 0) {
		netem_loop(dirs, names);
		netem_report(dirs, ports);
	}
	for (int i = 0; i < 2; i++)
		for (uint16_t q = 0; q < dirs[i].nq; q++)
			nic_impair_destroy(dirs[i].imp[q]);
	nic_port_close(&ports[0]);
	nic_port_close(&ports[1]);
	return rc;
}

int main(int argc, char **argv)
{
	struct netem_opts o;
	struct netem_dir dirs[2] = { 0 };
	/* us-netem's own lines at notice, like the stack's default [log]. */
	static const struct us_log_config log = { .level = "notice" };
	struct nic_config cfg;
	struct sigaction sa = { .sa_handler = netem_on_signal };
	int rc;

	if (netem_parse_args(argc, argv, &o) != 0) {
		netem_usage(argv[0]);
		return 2;
	}
	if (netem_setup_dirs(&o, dirs) != 0)
		return 2;
	nic_config_defaults(&cfg);
	/* A second instance passes its own --file-prefix after "--" (EAL keeps the last). */
	snprintf(cfg.file_prefix, sizeof(cfg.file_prefix), "us-netem");
	cfg.no_huge_mem_mb = o.mem_mb;
	snprintf(cfg.device, sizeof(cfg.device), "%s", o.port[0] ? o.port[0] : "");
	snprintf(cfg.extra_args, sizeof(cfg.extra_args), "%s", o.eal_extra);
	if (nic_eal_init(&cfg, &log, "", argv[0]) != 0)
		return 1;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = netem_run(&o, &cfg, dirs);
	nic_eal_cleanup();
	return rc == 0 ? 0 : 1;
}
