/* stack/api/stats.c: us_print_stats, every counter of the stack as text
 * ("name value  # description", one per line): the port, steering, each
 * engine (prefixed "e<k>." with several), and gauges for leak checks. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mempool.h>

#include "stack/api/api_priv.h"
#include "tcp/fastopen.h"
#include "tcp/tcp.h"
#include "userstack.h"

/* One engine's counters; prefix "" with one engine (the names tools and
 * tests know), "e<k>." with several. */
static void api_print_engine(const struct api_engine *ae, const char *prefix, FILE *out)
{
	const struct tfo_counters *tfo = tcp_stack_tfo_stats(us_engine_tcp(ae->engine));
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = prefix[0] ? open_memstream(&buf, &len) : out;

	if (mem == NULL)
		mem = out;
	us_engine_print_stats(ae->engine, mem);
#define API_X_PRINT_TFO(name, desc) \
	fprintf(mem, "tfo_%s %" PRIu64 "  # %s\n", #name, tfo->name, desc);
	TFO_COUNTERS(API_X_PRINT_TFO)
#undef API_X_PRINT_TFO
	if (ae->socks != NULL)
		us_sock_print_stats(ae->socks, mem);
	fprintf(mem, "idle_sleeps %lu # polls that found nothing and slept ([engine])\n"
		"idle_slept_us %lu # time slept by the idle back-off\n",
		(unsigned long)ae->idle.sleeps, (unsigned long)(ae->idle.slept_ns / 1000u));
	if (mem == out)
		return;
	fclose(mem);
	for (char *line = buf, *nl; line != NULL && *line != '\0'; line = nl) {
		nl = strchr(line, '\n');
		if (nl != NULL)
			*nl++ = '\0';
		fprintf(out, "%s%s\n", prefix, line);
	}
	free(buf);
}

/* What the PMD lost before any engine saw it: an RX ring that overflowed
 * while the engine was busy (imissed; af_packet's framecnt too small under a
 * flood), bad frames, no mbuf for a descriptor. */
static void api_print_pmd_drops(const struct us_stack *st, FILE *out)
{
	struct nic_pmd_stats es;

	if (nic_port_pmd_stats(&st->port, &es) != 0)
		return;
	fprintf(out, "nic.imissed %" PRIu64 "  # dropped by the PMD: RX ring full\n"
		"nic.ierrors %" PRIu64 "  # dropped by the PMD: bad frames\n"
		"nic.rx_nombuf %" PRIu64 "  # dropped by the PMD: no mbuf\n",
		es.imissed, es.ierrors, es.rx_nombuf);
}

/* The port's counters and what steering found at start. */
static void api_print_port(const struct us_stack *st, FILE *out)
{
	struct nic_stats ns;

	nic_port_stats(&st->port, &ns);
	fprintf(out, "nic.rx_pkts %lu\nnic.tx_pkts %lu\nnic.tx_dropped_full %lu\n",
		(unsigned long)ns.rx_pkts, (unsigned long)ns.tx_pkts,
		(unsigned long)ns.tx_dropped_full);
	api_print_pmd_drops(st, out);
	fprintf(out, "steer.flow_queue %d\nsteer.rss_ipv4_tcp %d\nsteer.port_rss %d\n"
		"steer.reta_size %u\n", st->steer.flow_queue, st->steer.rss_ipv4_tcp,
		st->port.rss, (unsigned)st->port.reta_size);
	fprintf(out, "steer.isolated %d\nsteer.ctl_rules_installed %lu\n"
		"steer.ctl_rules_failed %lu\n", st->port.iso.isolated,
		(unsigned long)st->ctl.stats.ctl_installed, (unsigned long)st->ctl.stats.ctl_failed);
}

void us_print_stats(const struct us_stack *st, FILE *out)
{
	char prefix[16];

	api_print_port(st, out);
	if (st->n > 1)
		fprintf(out, "engines %u\n", st->n);
	for (unsigned k = 0; k < st->n; k++) {
		if (st->eng[k].engine == NULL)
			continue;
		if (st->n > 1) {
			snprintf(prefix, sizeof(prefix), "e%u.", k);
			fprintf(out, "%snic.rx_pkts %lu\n%snic.tx_pkts %lu\n", prefix,
				(unsigned long)st->port.qstats[k].rx_pkts, prefix,
				(unsigned long)st->port.qstats[k].tx_pkts);
		} else {
			prefix[0] = '\0';
		}
		api_print_engine(&st->eng[k], prefix, out);
	}
	/* Gauges at the time of printing, for leak checks after a run (floods:
	 * the pool back near its RX-ring baseline, no TCB left behind). */
	fprintf(out, "mbufs_in_use %u  # mbufs taken from the pool now (RX ring included)\n",
		st->pool != NULL ? rte_mempool_in_use_count(st->pool) : 0u);
	fprintf(out, "tcp_conns_now %u  # connection TCBs now, every engine (listeners excluded)\n",
		us_conn_count(st));
}
