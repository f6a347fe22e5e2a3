/* tests/fuzz/fuzz_rx_frame.c: whole Ethernet frames into one long-lived engine.
 *
 * One engine (10.77.0.2/24 and fd00:77::2/64 without DAD, fake port) lives
 * across inputs, with an echo
 * server on TCP port 80, so a corpus entry can build on the state the ones
 * before it left (connections, ARP entries, reassembly queues, timers).
 *
 * Input format (tests/fuzz/make_corpus.py writes it):
 *   byte 0    control: bits 0-5 = time to advance before the frames,
 *             in ms, or in seconds when bit 7 is set (timers: RTO,
 *             delayed ACK, TIME_WAIT, reassembly and ARP expiry);
 *             bit 6 = force the destination MAC and IPv4 address to ours.
 *   records   kind (1 byte), length (2 bytes, big endian), length bytes:
 *             kind bits 0-1: the checksum verdict a NIC would report
 *               (0/3 none: software checks, 1 good, 2 bad; the engine runs
 *               with rx_csum on, as over an offloading NIC);
 *             kind bit 2: "reply": the bytes are [tcp flags][window hi][lo]
 *               [seq delta] payload..., and the harness builds a TCP segment
 *               (or an ARP reply) answering the last frame the engine sent,
 *               with the right sequence numbers, timestamps and checksums -
 *               random ISNs would otherwise keep every connection in
 *               SYN-RECEIVED;
 *             kind bit 3: deliver the frame as a two-segment mbuf chain.
 * Frames are otherwise passed as they are.
 *
 * FUZZ_RX_STATS=1 in the environment prints the engine's counters after
 * each input (to check what a seed reaches).
 *
 * Leak checks: after every input the mbufs in use must stay under a bound
 * derived from what the engine may legitimately hold (below); every
 * FUZZ_RESET_EVERY inputs the engine is destroyed, the pool must then be
 * full again, and a fresh engine takes over.  FUZZ_RX_RESET_EVERY=1 does
 * that after every input: replaying one reproducer then checks it alone.
 */
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_errno.h>
#include <rte_ip_frag.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_tcp.h>

#include "config/config.h"
#include "stack/engine/engine.h"
#include "stack/engine/engine_priv.h"
#include "tcp/tcb.h"
#include "tcp/tcp.h"
#include "tests/common/test_eal.h"

/* Types */

#define FUZZ_OUR_IP RTE_IPV4(10, 77, 0, 2)
#define FUZZ_POOL_SIZE 16383
#define FUZZ_RESET_EVERY 20000u
#define FUZZ_MAX_CONNS 16u
#define FUZZ_ARP_PENDING 4u
#define FUZZ_SNDBUF (32u * 1024)
/* What the engine may hold between inputs, in mbufs:
 *  - per connection: the out-of-order queue (TCP_REASS_MAX_SEGS), the send
 *    queue (payload packed into full mbufs) and a few in flight;
 *    the echo app reads everything, so receive queues drain at once;
 *    listeners' embryos count against max_conns too;
 *  - ARP: one pending queue per on-link next hop (a /24);
 *  - IP reassembly: every table entry full of fragments, plus its death row;
 *  - IPv6: a pending queue per neighbour cache entry, and every fragment
 *    the IPv6 reassembly table may hold;
 *  - the TX buffer. */
#define FUZZ_MBUF_BOUND \
	(FUZZ_MAX_CONNS * (TCP_REASS_MAX_SEGS + FUZZ_SNDBUF / 1024u + 8u) + \
	 256u * FUZZ_ARP_PENDING + \
	 US_IP_FRAG_BUCKETS * US_IP_FRAG_BUCKET_ENTRIES * (RTE_LIBRTE_IP_FRAG_MAX_FRAG + 1) + \
	 RTE_IP_FRAG_DEATH_ROW_MBUF_LEN + US_TX_BUF + \
	 US_ND6_MAX_ENTRIES * FUZZ_ARP_PENDING + US_FRAG6_HELD)

/* The last frame the engine sent, as much as a reply needs. */
struct fuzz_last {
	bool valid, is_arp;
	struct rte_ether_addr peer_mac;
	uint32_t peer_ip;       /* host byte order */
	uint16_t peer_port, our_port;
	uint32_t next_seq;      /* what the peer should ACK: SEG.SEQ + SEG.LEN */
	uint32_t ack;           /* what the peer should send next */
	bool has_ts;
	uint32_t tsval, tsecr;  /* ours, and the peer's we echoed (TS.Recent) */
};

static struct rte_mempool *g_pool;
static struct us_engine *g_eng;
static struct us_config g_cfg;
static uint64_t g_now = US_SEC(1000);
static uint32_t g_inputs;
static struct fuzz_last g_last;
static uint32_t g_reset_every = FUZZ_RESET_EVERY;
static bool g_verbose; /* FUZZ_RX_STATS=1: counters after each input (seeds) */
static const struct rte_ether_addr g_our_mac = {{0x02, 0, 0, 0, 0, 0x02}};

/* The echo server */

static void echo_readable(void *ctx, struct tcp_conn *c)
{
	uint8_t buf[2048];
	ssize_t n;

	(void)ctx;
	while ((n = tcp_recv(c, buf, sizeof(buf))) > 0)
		(void)tcp_send(c, buf, (size_t)n); /* what does not fit is dropped */
	if (n == 0)
		tcp_close(c);
}

static void echo_accept(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	(void)c;
}

static void echo_writable(void *ctx, struct tcp_conn *c)
{
	(void)ctx;
	(void)c;
}

static void echo_closed(void *ctx, struct tcp_conn *c, int err)
{
	(void)ctx;
	(void)c;
	(void)err;
}

static const struct tcp_callbacks g_echo = {
	.on_accept = echo_accept, .on_readable = echo_readable,
	.on_writable = echo_writable, .on_closed = echo_closed,
};

/* The fake port: remembers the last frame, frees everything. */

static void fuzz_note_tcp(const struct rte_ipv4_hdr *ip, const uint8_t *end)
{
	unsigned ihl = (ip->version_ihl & 0xf) * 4u;
	const struct rte_tcp_hdr *th = (const void *)((const uint8_t *)ip + ihl);
	unsigned hlen, tot = rte_be_to_cpu_16(ip->total_length);
	const uint8_t *o;

	if ((const uint8_t *)(th + 1) > end || tot < ihl + sizeof(*th))
		return;
	hlen = (th->data_off >> 4) * 4u;
	if (hlen < sizeof(*th) || (const uint8_t *)th + hlen > end || tot < ihl + hlen)
		return;
	g_last.is_arp = false;
	g_last.peer_ip = rte_be_to_cpu_32(ip->dst_addr);
	g_last.peer_port = rte_be_to_cpu_16(th->dst_port);
	g_last.our_port = rte_be_to_cpu_16(th->src_port);
	g_last.next_seq = rte_be_to_cpu_32(th->sent_seq) + (tot - ihl - hlen) +
			  !!(th->tcp_flags & RTE_TCP_SYN_FLAG) + !!(th->tcp_flags & RTE_TCP_FIN_FLAG);
	g_last.ack = rte_be_to_cpu_32(th->recv_ack);
	g_last.has_ts = false;
	for (o = (const uint8_t *)(th + 1); o < (const uint8_t *)th + hlen;) {
		if (o[0] == 0)
			break;
		if (o[0] == 1) {
			o++;
			continue;
		}
		if (o + 1 >= (const uint8_t *)th + hlen || o[1] < 2)
			break;
		if (o[0] == 8 && o[1] == 10 && o + 10 <= (const uint8_t *)th + hlen) {
			g_last.has_ts = true;
			g_last.tsval = (uint32_t)o[2] << 24 | (uint32_t)o[3] << 16 |
				       (uint32_t)o[4] << 8 | o[5];
			g_last.tsecr = (uint32_t)o[6] << 24 | (uint32_t)o[7] << 16 |
				       (uint32_t)o[8] << 8 | o[9];
		}
		o += o[1];
	}
	g_last.valid = true;
}

static void fuzz_note_frame(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	const uint8_t *end = p + m->data_len;
	const struct rte_ether_hdr *eh = (const void *)p;

	if (m->data_len < sizeof(*eh) + sizeof(struct rte_arp_hdr))
		return;
	g_last.peer_mac = eh->dst_addr;
	if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP)) {
		const struct rte_arp_hdr *a = (const void *)(eh + 1);

		if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
			return;
		g_last.valid = g_last.is_arp = true;
		g_last.peer_ip = rte_be_to_cpu_32(a->arp_data.arp_tip);
	} else if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
		const struct rte_ipv4_hdr *ip = (const void *)(eh + 1);

		if (ip->next_proto_id == IPPROTO_TCP && (ip->fragment_offset &
		    rte_cpu_to_be_16(RTE_IPV4_HDR_OFFSET_MASK)) == 0)
			fuzz_note_tcp(ip, end);
	}
}

static uint16_t fuzz_port_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	(void)ctx;
	for (uint16_t i = 0; i < n; i++) {
		fuzz_note_frame(pkts[i]);
		rte_pktmbuf_free(pkts[i]);
	}
	return n;
}

static uint16_t fuzz_port_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	(void)ctx;
	(void)pkts;
	(void)n;
	return 0;
}

/* Engine life cycle and leak checks */

static void fuzz_engine_start(void)
{
	struct us_port_ops ops = {
		.rx = fuzz_port_rx, .tx = fuzz_port_tx, .mac = g_our_mac, .mtu = 1500,
		.rx_csum = true,
	};

	g_eng = us_engine_create(0, &g_cfg, g_pool, &ops, g_now);
	if (g_eng == NULL) {
		fprintf(stderr, "fuzz_rx_frame: us_engine_create failed\n");
		abort();
	}
	/* Every address of both families: IPv6 seeds reach the listener too. */
	if (tcp_listen(us_engine_tcp(g_eng), NULL, 80, 0, &g_echo, NULL) < 0) {
		fprintf(stderr, "fuzz_rx_frame: tcp_listen failed\n");
		abort();
	}
	memset(&g_last, 0, sizeof(g_last));
}

static void fuzz_check_bound(void)
{
	unsigned used;
	char why[96];

	us_engine_flush(g_eng);
	used = rte_mempool_in_use_count(g_pool);
	if (used > FUZZ_MBUF_BOUND) {
		fprintf(stderr, "fuzz_rx_frame: %u mbufs in use after %u inputs, bound %u "
			"(%u TCBs): mbuf leak?\n", used, g_inputs, (unsigned)FUZZ_MBUF_BOUND,
			tcp_conn_count(us_engine_tcp(g_eng)));
		abort();
	}
	if (tcp_state_gauges_check(us_engine_tcp(g_eng), why, sizeof(why)) != 0) {
		fprintf(stderr, "fuzz_rx_frame: state gauges after %u inputs: %s\n", g_inputs,
			why);
		abort();
	}
}

/* Destroy and recreate: everything the engine held must come back. */
static void fuzz_engine_reset(void)
{
	unsigned used;

	us_engine_destroy(g_eng);
	used = rte_mempool_in_use_count(g_pool);
	if (used != 0) {
		fprintf(stderr, "fuzz_rx_frame: %u mbufs still in use after us_engine_destroy "
			"(after %u inputs): mbuf leak\n", used, g_inputs);
		abort();
	}
	fuzz_engine_start();
}

/* As test_eal_start(), with room for a pool above FUZZ_MBUF_BOUND. */
static void fuzz_eal_start(void)
{
	static char prefix_arg[96];
	char prefix[64];

	test_eal_prefix(prefix, sizeof(prefix), "fuzz_rx");
	snprintf(prefix_arg, sizeof(prefix_arg), "--file-prefix=%s", prefix);
	char *argv[] = { "fuzz_rx_frame", "--no-huge", "--no-pci", "--no-shconf", "-m", "192",
			 "--log-level=error", prefix_arg };
	if (rte_eal_init((int)RTE_DIM(argv), argv) < 0) {
		fprintf(stderr, "fuzz_rx_frame: rte_eal_init failed\n");
		abort();
	}
	atexit(test_eal_remove_runtime_dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_eal_start();
	g_pool = rte_pktmbuf_pool_create("fuzz_pool", FUZZ_POOL_SIZE, 0, 0,
					 RTE_MBUF_DEFAULT_BUF_SIZE, (int)rte_socket_id());
	if (g_pool == NULL) {
		fprintf(stderr, "fuzz_rx_frame: mbuf pool: %s\n", rte_strerror(rte_errno));
		abort();
	}
	g_verbose = getenv("FUZZ_RX_STATS") != NULL;
	if (getenv("FUZZ_RX_RESET_EVERY") != NULL && atoi(getenv("FUZZ_RX_RESET_EVERY")) > 0)
		g_reset_every = (uint32_t)atoi(getenv("FUZZ_RX_RESET_EVERY"));
	us_config_defaults(&g_cfg);
	g_cfg.addr = FUZZ_OUR_IP;
	g_cfg.prefixlen = 24;
	g_cfg.ip6_enable = true;
	inet_pton(AF_INET6, "fd00:77::2", g_cfg.addr6.b);
	g_cfg.prefixlen6 = 64;
	g_cfg.has_addr6 = true;
	g_cfg.dad = false; /* usable at once: no start-up wait in a fuzz target */
	g_cfg.arp_pending_max = FUZZ_ARP_PENDING;
	g_cfg.tcp.max_conns = FUZZ_MAX_CONNS;
	g_cfg.tcp.backlog = 8;
	g_cfg.tcp.rcvbuf = 32 * 1024;
	g_cfg.tcp.sndbuf = FUZZ_SNDBUF;
	fuzz_engine_start();
	return 0;
}

/* Building frames */

static struct rte_mbuf *fuzz_mbuf(const uint8_t *p, size_t len, uint8_t kind)
{
	size_t first = (kind & 0x8) && len > 1 ? len / 2 : len;
	struct rte_mbuf *m = rte_pktmbuf_alloc(g_pool), *m2;

	if (m == NULL)
		return NULL;
	if (first > rte_pktmbuf_tailroom(m))
		first = rte_pktmbuf_tailroom(m);
	memcpy(rte_pktmbuf_append(m, (uint16_t)first), p, first);
	if (first < len) {
		size_t rest = len - first;

		m2 = rte_pktmbuf_alloc(g_pool);
		if (m2 == NULL || rest > rte_pktmbuf_tailroom(m2) ||
		    rte_pktmbuf_chain(m, m2) < 0) {
			rte_pktmbuf_free(m2);
			rte_pktmbuf_free(m);
			return NULL;
		}
		memcpy(rte_pktmbuf_append(m, (uint16_t)rest), p + first, rest);
	}
	switch (kind & 0x3) {
	case 1:
		m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_GOOD | RTE_MBUF_F_RX_L4_CKSUM_GOOD;
		break;
	case 2:
		m->ol_flags |= RTE_MBUF_F_RX_IP_CKSUM_BAD | RTE_MBUF_F_RX_L4_CKSUM_BAD;
		break;
	default:
		break;
	}
	return m;
}

static void fuzz_force_dst(struct rte_mbuf *m)
{
	struct rte_ether_hdr *eh = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);

	if (m->data_len < sizeof(*eh))
		return;
	eh->dst_addr = g_our_mac;
	if (eh->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
	    m->data_len >= sizeof(*eh) + sizeof(struct rte_ipv4_hdr)) {
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);

		ip->dst_addr = rte_cpu_to_be_32(FUZZ_OUR_IP);
	}
}

static size_t fuzz_build_arp_reply(uint8_t *f)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eh + 1);
	struct rte_ether_addr peer = {{0x02, 0, 0, 0, 0x4d, (uint8_t)g_last.peer_ip}};

	eh->dst_addr = g_our_mac;
	eh->src_addr = peer;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	a->arp_data.arp_sha = peer;
	a->arp_data.arp_sip = rte_cpu_to_be_32(g_last.peer_ip);
	a->arp_data.arp_tha = g_our_mac;
	a->arp_data.arp_tip = rte_cpu_to_be_32(FUZZ_OUR_IP);
	return sizeof(*eh) + sizeof(*a);
}

/* A TCP segment answering g_last: [flags][wnd hi][wnd lo][seq delta] data. */
static size_t fuzz_build_reply(const uint8_t *p, size_t len, uint8_t *f, size_t room)
{
	struct rte_ether_hdr *eh = (struct rte_ether_hdr *)f;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eh + 1);
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(ip + 1);
	uint8_t *o = (uint8_t *)(th + 1);
	unsigned olen = g_last.has_ts ? 12 : 0;
	size_t dlen = len > 4 ? len - 4 : 0, hdrs = sizeof(*eh) + sizeof(*ip) + sizeof(*th) + olen;

	if (!g_last.valid || len < 4)
		return 0;
	if (g_last.is_arp)
		return fuzz_build_arp_reply(f);
	if (dlen > room - hdrs)
		dlen = room - hdrs;
	memset(f, 0, hdrs);
	eh->dst_addr = g_our_mac;
	eh->src_addr = g_last.peer_mac;
	eh->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + sizeof(*th) + olen + dlen));
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_TCP;
	ip->src_addr = rte_cpu_to_be_32(g_last.peer_ip);
	ip->dst_addr = rte_cpu_to_be_32(FUZZ_OUR_IP);
	th->src_port = rte_cpu_to_be_16(g_last.peer_port);
	th->dst_port = rte_cpu_to_be_16(g_last.our_port);
	/* A small signed delta reaches the edges of the window. */
	th->sent_seq = rte_cpu_to_be_32(g_last.ack + (uint32_t)(int32_t)(int8_t)p[3]);
	th->recv_ack = rte_cpu_to_be_32(g_last.next_seq);
	th->data_off = (uint8_t)((sizeof(*th) + olen) / 4 << 4);
	th->tcp_flags = p[0];
	th->rx_win = rte_cpu_to_be_16((uint16_t)(p[1] << 8 | p[2]));
	if (olen) {
		/* Our clock runs on from the TSval we last saw echoed (PAWS). */
		uint32_t tsval = g_last.tsecr + (p[0] & 3);

		o[0] = o[1] = 1;
		o[2] = 8;
		o[3] = 10;
		for (int i = 0; i < 4; i++) {
			o[4 + i] = (uint8_t)(tsval >> (24 - 8 * i));
			o[8 + i] = (uint8_t)(g_last.tsval >> (24 - 8 * i));
		}
	}
	memcpy(f + hdrs, p + 4, dlen);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return hdrs + dlen;
}

static void fuzz_one_record(uint8_t kind, const uint8_t *p, size_t len, bool force)
{
	uint8_t frame[2 * 1536];
	struct rte_mbuf *m;

	if (kind & 0x4) {
		len = fuzz_build_reply(p, len, frame, sizeof(frame) / 2);
		if (len == 0)
			return;
		p = frame;
	}
	m = fuzz_mbuf(p, len, kind);
	if (m == NULL)
		return;
	if (force && !(kind & 0x4))
		fuzz_force_dst(m);
	us_engine_input(g_eng, m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t step;
	size_t off = 1;

	if (size < 1)
		return 0;
	step = (uint64_t)(data[0] & 0x3f) * (data[0] & 0x80 ? US_SEC(1) : US_MS(1));
	g_now += step;
	us_engine_advance(g_eng, g_now);
	while (off + 3 <= size) {
		uint8_t kind = data[off];
		size_t len = (size_t)data[off + 1] << 8 | data[off + 2];

		off += 3;
		if (len > size - off)
			len = size - off;
		fuzz_one_record(kind, data + off, len, data[0] & 0x40);
		off += len;
		g_now += US_MS(1);
		us_engine_advance(g_eng, g_now);
	}
	g_inputs++;
	if (g_verbose) {
		fprintf(stderr, "--- input %u: %u TCBs\n", g_inputs,
			tcp_conn_count(us_engine_tcp(g_eng)));
		us_engine_print_stats(g_eng, stderr);
	}
	fuzz_check_bound();
	if (g_inputs % g_reset_every == 0)
		fuzz_engine_reset();
	return 0;
}
