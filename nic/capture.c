/* nic/capture.c: libpcap capture file written from the engine loop (see
 * capture.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include "nic/capture.h"

/* Types */

#define CAPTURE_FLUSH_NS 1000000000ull

struct nic_capture {
	pcap_t *pcap;           /* a "dead" handle: only the link type and snaplen */
	pcap_dumper_t *dumper;
	uint32_t snaplen;
	uint64_t last_flush_ns;
	struct nic_capture_stats stats;
	uint8_t *buf;           /* snaplen bytes: frames split over segments */
};

struct nic_capture *nic_capture_open(const char *path, uint32_t snaplen, char *err,
				     size_t errlen)
{
	struct nic_capture *c = calloc(1, sizeof(*c));

	if (c == NULL || (c->buf = malloc(snaplen)) == NULL) {
		snprintf(err, errlen, "out of memory");
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	c->snaplen = snaplen;
	c->pcap = pcap_open_dead(DLT_EN10MB, (int)snaplen);
	if (c->pcap != NULL)
		c->dumper = pcap_dump_open(c->pcap, path);
	if (c->dumper == NULL) {
		int e = errno ? errno : EIO;

		snprintf(err, errlen, "%s", c->pcap ? pcap_geterr(c->pcap) : "pcap_open_dead failed");
		nic_capture_close(c);
		errno = e;
		return NULL;
	}
	return c;
}

void nic_capture_burst(struct nic_capture *c, struct rte_mbuf *const *pkts, uint16_t n)
{
	struct timespec ts;
	struct pcap_pkthdr h;

	/* One wall-clock read per burst: pcap timestamps are calendar time. */
	clock_gettime(CLOCK_REALTIME, &ts);
	h.ts.tv_sec = ts.tv_sec;
	h.ts.tv_usec = ts.tv_nsec / 1000;
	for (uint16_t i = 0; i < n; i++) {
		const struct rte_mbuf *m = pkts[i];
		const void *data;

		h.len = m->pkt_len;
		h.caplen = m->pkt_len < c->snaplen ? m->pkt_len : c->snaplen;
		if (h.caplen < h.len)
			c->stats.truncated++;
		/* Contiguous: a pointer into the mbuf; else copied into buf. */
		data = rte_pktmbuf_read(m, 0, h.caplen, c->buf);
		if (data == NULL) {
			/* caplen <= pkt_len: only a corrupt chain gets here. */
			c->stats.write_errors++;
			continue;
		}
		pcap_dump((u_char *)c->dumper, &h, data);
		c->stats.frames++;
	}
	uint64_t now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now - c->last_flush_ns >= CAPTURE_FLUSH_NS) {
		c->last_flush_ns = now;
		if (pcap_dump_flush(c->dumper) != 0)
			c->stats.write_errors++;
	}
}

const struct nic_capture_stats *nic_capture_stats(const struct nic_capture *c)
{
	return &c->stats;
}

void nic_capture_close(struct nic_capture *c)
{
	if (c == NULL)
		return;
	if (c->dumper != NULL)
		pcap_dump_close(c->dumper);
	if (c->pcap != NULL)
		pcap_close(c->pcap);
	free(c->buf);
	free(c);
}
