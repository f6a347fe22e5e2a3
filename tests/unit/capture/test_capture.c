/* tests/unit/capture: nic/capture.c writes what libpcap reads back: every
 * byte of single-segment and chained frames, cut to the snaplen with the
 * original length kept, and counts what it wrote and cut.  EAL for mbufs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include "nic/capture.h"
#include "tests/common/test_eal.h"

static struct rte_mempool *pool;

/* Helpers */

/* A frame of len bytes, byte i = (seed + i) & 0xff, in nseg segments. */
static struct rte_mbuf *frame(uint32_t len, unsigned nseg, uint8_t seed)
{
	struct rte_mbuf *head = NULL;
	uint32_t off = 0;

	for (unsigned s = 0; s < nseg; s++) {
		struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
		uint32_t n = s == nseg - 1 ? len - off : len / nseg;
		uint8_t *p;

		assert_non_null(m);
		p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)n);
		assert_non_null(p);
		for (uint32_t i = 0; i < n; i++)
			p[i] = (uint8_t)(seed + off + i);
		off += n;
		if (head == NULL)
			head = m;
		else
			assert_int_equal(rte_pktmbuf_chain(head, m), 0);
	}
	return head;
}

static void tmp_path(char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/us-capture-test-%d.pcap", (int)getpid());
}

/* Reads record i back and checks it against frame(len, ., seed). */
static void expect_record(pcap_t *p, uint32_t len, uint32_t snaplen, uint8_t seed)
{
	struct pcap_pkthdr *h;
	const u_char *data;

	assert_int_equal(pcap_next_ex(p, &h, &data), 1);
	assert_int_equal(h->len, len);
	assert_int_equal(h->caplen, len < snaplen ? len : snaplen);
	assert_true(h->ts.tv_sec > 1600000000); /* calendar time, not the TSC */
	for (uint32_t i = 0; i < h->caplen; i++)
		assert_int_equal(data[i], (uint8_t)(seed + i));
}

static void roundtrip(uint32_t snaplen)
{
	char path[96], err[256] = "", perr[PCAP_ERRBUF_SIZE];
	struct rte_mbuf *pkts[3];
	struct nic_capture *c;
	pcap_t *p;

	tmp_path(path, sizeof(path));
	c = nic_capture_open(path, snaplen, err, sizeof(err));
	assert_non_null(c);
	pkts[0] = frame(60, 1, 1);
	pkts[1] = frame(1514, 3, 7);  /* chained: copied out of three segments */
	pkts[2] = frame(200, 2, 9);
	nic_capture_burst(c, pkts, 2);
	nic_capture_burst(c, pkts + 2, 1);
	/* Frames are neither consumed nor changed. */
	assert_int_equal(rte_pktmbuf_pkt_len(pkts[1]), 1514);
	assert_int_equal(nic_capture_stats(c)->frames, 3);
	assert_int_equal(nic_capture_stats(c)->truncated,
			 (60 > snaplen) + (1514 > snaplen) + (200 > snaplen));
	assert_int_equal(nic_capture_stats(c)->write_errors, 0);
	nic_capture_close(c);
	rte_pktmbuf_free_bulk(pkts, 3);

	p = pcap_open_offline(path, perr);
	assert_non_null(p);
	assert_int_equal(pcap_datalink(p), DLT_EN10MB);
	assert_int_equal(pcap_snapshot(p), (int)snaplen);
	expect_record(p, 60, snaplen, 1);
	expect_record(p, 1514, snaplen, 7);
	expect_record(p, 200, snaplen, 9);
	struct pcap_pkthdr *h;
	const u_char *d;
	assert_int_equal(pcap_next_ex(p, &h, &d), PCAP_ERROR_BREAK); /* nothing more */
	pcap_close(p);
	unlink(path);
	assert_int_equal(rte_mempool_in_use_count(pool), 0);
}

/* Tests */

static void whole_frames(void **state)
{
	(void)state;
	roundtrip(65535);
}

static void cut_to_snaplen(void **state)
{
	(void)state;
	roundtrip(96);
}

static void open_error_says_why(void **state)
{
	char err[256] = "";

	(void)state;
	assert_null(nic_capture_open("/nonexistent-dir/x.pcap", 65535, err, sizeof(err)));
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err, "/nonexistent-dir/x.pcap"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_frames),
		cmocka_unit_test(cut_to_snaplen),
		cmocka_unit_test(open_error_says_why),
	};

	if (test_eal_start("capture") < 0)
		return 1;
	pool = rte_pktmbuf_pool_create("cap_pool", 255, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	if (pool == NULL)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
