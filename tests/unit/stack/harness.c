/* tests/unit/stack/harness.c: fake port, engine set-up and frame builders. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include <rte_arp.h>
#include <rte_eal.h>
#include <rte_icmp.h>
#include <rte_mempool.h>
#include <rte_tcp.h>
#include <rte_udp.h>

#include "tests/common/test_eal.h"
#include "tests/unit/stack/harness.h"

struct rte_mempool *h_pool;
const struct rte_ether_addr h_our_mac = {{0x02, 0, 0, 0, 0, 0x02}};
const struct rte_ether_addr h_peer_mac = {{0x02, 0, 0, 0, 0, 0x07}};
const struct rte_ether_addr h_gw_mac = {{0x02, 0, 0, 0, 0, 0x01}};
const struct rte_ether_addr h_bcast_mac = {{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}};

void h_eal_init(const char *prefix)
{
	if (test_eal_start(prefix) < 0)
		exit(1);
	h_pool = rte_pktmbuf_pool_create("h_pool", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					 SOCKET_ID_ANY);
	if (h_pool == NULL) {
		fprintf(stderr, "pool create failed\n");
		exit(1);
	}
}

void h_config(struct us_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->nic.mtu = 1500;
	cfg->addr = H_OUR_IP;
	cfg->prefixlen = 24;
	cfg->gateway = H_GW_IP;
	cfg->ttl = 64;
	cfg->arp_timeout_s = 300;
	cfg->arp_pending_max = 16;
	cfg->arp_retry_ms = 1000;
	tcp_config_defaults(&cfg->tcp);
}

static uint16_t h_port_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct h_port *p = ctx;

	for (uint16_t i = 0; i < n; i++) {
		assert_true(p->ntx < H_TX_MAX);
		p->tx[p->ntx++] = pkts[i];
	}
	return n;
}

static uint16_t h_port_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct h_port *p = ctx;
	uint16_t k = p->nrx < n ? (uint16_t)p->nrx : n;

	memcpy(pkts, p->rx, k * sizeof(*pkts));
	memmove(p->rx, p->rx + k, (p->nrx - k) * sizeof(*pkts));
	p->nrx -= k;
	return k;
}

void h_prepare(struct harness *h)
{
	memset(h, 0, sizeof(*h));
	h_config(&h->cfg);
	h->ops = (struct us_port_ops){
		.rx = h_port_rx, .tx = h_port_tx, .ctx = &h->port, .mac = h_our_mac, .mtu = 1500,
	};
	h->now = 1000000000ull; /* not zero: catches "0 means unset" bugs */
}

void h_start(struct harness *h)
{
	h->e = us_engine_create(0, &h->cfg, h_pool, &h->ops, h->now);
	assert_non_null(h->e);
}

void h_clear_tx(struct harness *h)
{
	for (unsigned i = 0; i < h->port.ntx; i++)
		rte_pktmbuf_free(h->port.tx[i]);
	h->port.ntx = 0;
}

void h_teardown(struct harness *h)
{
	h_clear_tx(h);
	for (unsigned i = 0; i < h->port.nrx; i++)
		rte_pktmbuf_free(h->port.rx[i]);
	us_engine_destroy(h->e);
	h->e = NULL;
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

void h_advance(struct harness *h, uint64_t ns)
{
	h->now += ns;
	us_engine_advance(h->e, h->now);
}

static struct rte_mbuf *h_frame(const struct rte_ether_addr *dst, uint16_t type, size_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(h_pool);
	struct rte_ether_hdr *eh;

	assert_non_null(m);
	eh = (struct rte_ether_hdr *)rte_pktmbuf_append(m, (uint16_t)(sizeof(*eh) + len));
	assert_non_null(eh);
	memset(eh, 0, sizeof(*eh) + len);
	eh->dst_addr = *dst;
	eh->src_addr = h_peer_mac;
	eh->ether_type = rte_cpu_to_be_16(type);
	return m;
}

struct rte_mbuf *h_arp(uint16_t op, const struct rte_ether_addr *sha, uint32_t sip,
		       const struct rte_ether_addr *tha, uint32_t tip,
		       const struct rte_ether_addr *eth_dst)
{
	struct rte_mbuf *m = h_frame(eth_dst, RTE_ETHER_TYPE_ARP, sizeof(struct rte_arp_hdr));
	struct rte_arp_hdr *a = rte_pktmbuf_mtod_offset(m, struct rte_arp_hdr *,
							sizeof(struct rte_ether_hdr));

	h_eth(m)->src_addr = *sha;
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = 6;
	a->arp_plen = 4;
	a->arp_opcode = rte_cpu_to_be_16(op);
	a->arp_data.arp_sha = *sha;
	a->arp_data.arp_sip = rte_cpu_to_be_32(sip);
	a->arp_data.arp_tha = *tha;
	a->arp_data.arp_tip = rte_cpu_to_be_32(tip);
	return m;
}

struct rte_mbuf *h_ipv4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t id,
			uint16_t frag_off, const void *payload, size_t len)
{
	struct rte_mbuf *m = h_frame(&h_our_mac, RTE_ETHER_TYPE_IPV4, sizeof(struct rte_ipv4_hdr) + len);
	struct rte_ipv4_hdr *ip = h_iph(m);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(sizeof(*ip) + len));
	ip->packet_id = rte_cpu_to_be_16(id);
	ip->fragment_offset = rte_cpu_to_be_16(frag_off);
	ip->time_to_live = 64;
	ip->next_proto_id = proto;
	ip->src_addr = rte_cpu_to_be_32(src);
	ip->dst_addr = rte_cpu_to_be_32(dst);
	memcpy(ip + 1, payload, len);
	h_fix_ip_csum(m);
	return m;
}

size_t h_icmp_echo(uint8_t *buf, uint16_t ident, uint16_t seq, size_t data_len)
{
	struct rte_icmp_hdr *ih = (struct rte_icmp_hdr *)buf;

	memset(ih, 0, sizeof(*ih));
	ih->icmp_type = RTE_IP_ICMP_ECHO_REQUEST;
	ih->icmp_ident = rte_cpu_to_be_16(ident);
	ih->icmp_seq_nb = rte_cpu_to_be_16(seq);
	for (size_t i = 0; i < data_len; i++)
		buf[sizeof(*ih) + i] = (uint8_t)(i * 7 + (i >> 8));
	ih->icmp_cksum = (uint16_t)~rte_raw_cksum(buf, sizeof(*ih) + data_len);
	return sizeof(*ih) + data_len;
}

size_t h_udp(uint8_t *buf, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
	     const void *data, size_t len)
{
	struct rte_udp_hdr *uh = (struct rte_udp_hdr *)buf;
	struct rte_ipv4_hdr ip = {
		.version_ihl = RTE_IPV4_VHL_DEF,
		.total_length = rte_cpu_to_be_16((uint16_t)(sizeof(ip) + sizeof(*uh) + len)),
		.next_proto_id = IPPROTO_UDP,
		.src_addr = rte_cpu_to_be_32(src),
		.dst_addr = rte_cpu_to_be_32(dst),
	};

	uh->src_port = rte_cpu_to_be_16(sport);
	uh->dst_port = rte_cpu_to_be_16(dport);
	uh->dgram_len = rte_cpu_to_be_16((uint16_t)(sizeof(*uh) + len));
	uh->dgram_cksum = 0;
	memcpy(uh + 1, data, len);
	uh->dgram_cksum = rte_ipv4_udptcp_cksum(&ip, uh);
	return sizeof(*uh) + len;
}

struct rte_mbuf *h_tcp(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
		       uint8_t flags, uint32_t seq, uint32_t ack, uint8_t fill, size_t len)
{
	return h_tcp_opts(src, sport, dst, dport, flags, seq, ack, NULL, 0, fill, len);
}

struct rte_mbuf *h_tcp_opts(uint32_t src, uint16_t sport, uint32_t dst, uint16_t dport,
			    uint8_t flags, uint32_t seq, uint32_t ack, const uint8_t *opts,
			    size_t olen, uint8_t fill, size_t len)
{
	uint8_t buf[sizeof(struct rte_tcp_hdr) + 40 + 1460];
	struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)buf;
	struct rte_ipv4_hdr *ip;
	struct rte_mbuf *m;

	/* RFC 9293 3.1: the options fill whole 32-bit words, at most 40 bytes. */
	assert_true(olen % 4 == 0 && olen <= 40);
	assert_true(len <= 1460);
	memset(buf, 0, sizeof(*th));
	th->src_port = rte_cpu_to_be_16(sport);
	th->dst_port = rte_cpu_to_be_16(dport);
	th->sent_seq = rte_cpu_to_be_32(seq);
	th->recv_ack = rte_cpu_to_be_32(ack);
	th->data_off = (uint8_t)(((sizeof(*th) + olen) / 4) << 4);
	th->tcp_flags = flags;
	th->rx_win = rte_cpu_to_be_16(65535);
	if (olen > 0) /* memcpy from NULL is UB even for 0 bytes */
		memcpy(buf + sizeof(*th), opts, olen);
	memset(buf + sizeof(*th) + olen, fill, len);
	m = h_ipv4(src, dst, IPPROTO_TCP, (uint16_t)seq, 0, buf, sizeof(*th) + olen + len);
	ip = h_iph(m);
	th = (struct rte_tcp_hdr *)(ip + 1);
	th->cksum = 0;
	th->cksum = rte_ipv4_udptcp_cksum(ip, th);
	return m;
}

struct rte_ether_hdr *h_eth(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
}

struct rte_ipv4_hdr *h_iph(struct rte_mbuf *m)
{
	return rte_pktmbuf_mtod_offset(m, struct rte_ipv4_hdr *, sizeof(struct rte_ether_hdr));
}

void h_fix_ip_csum(struct rte_mbuf *m)
{
	struct rte_ipv4_hdr *ip = h_iph(m);

	ip->hdr_checksum = 0;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
}

size_t h_bytes(const struct rte_mbuf *m, uint8_t *buf, size_t cap)
{
	size_t len = rte_pktmbuf_pkt_len(m);
	const void *p;

	assert_true(len <= cap);
	p = rte_pktmbuf_read(m, 0, (uint32_t)len, buf);
	assert_non_null(p);
	if (p != buf)
		memcpy(buf, p, len);
	return len;
}

/* Several engines */

void h_multi_prepare(struct h_multi *t, unsigned n)
{
	assert_true(n > 0 && n <= H_ENG_MAX);
	memset(t, 0, sizeof(*t));
	t->n = n;
	assert_int_equal(us_rss_init(&t->sym, us_rss_key_symmetric, US_RSS_KEY_LEN, 128,
				     (uint16_t)n), 0);
	for (unsigned k = 0; k < n; k++)
		h_prepare(&t->h[k]);
}

void h_multi_start(struct h_multi *t)
{
	/* Ring names are global to the process: one set per script. */
	static unsigned seq;
	char name[16];

	snprintf(name, sizeof(name), "hm%u", seq++);
	t->ho = us_handoff_create(t->n, &t->sym, name);
	assert_non_null(t->ho);
	for (unsigned k = 0; k < t->n; k++) {
		struct harness *h = &t->h[k];

		h->e = us_engine_create(k, &h->cfg, h_pool, &h->ops, h->now);
		assert_non_null(h->e);
		assert_int_equal(us_handoff_attach(h->e, t->ho), 0);
	}
}

void h_multi_finish(struct h_multi *t)
{
	for (unsigned k = 0; k < t->n; k++) {
		h_clear_tx(&t->h[k]);
		for (unsigned i = 0; i < t->h[k].port.nrx; i++)
			rte_pktmbuf_free(t->h[k].port.rx[i]);
		us_engine_destroy(t->h[k].e);
		t->h[k].e = NULL;
	}
	us_handoff_destroy(t->ho);
	t->ho = NULL;
	if (t->has_nic) {
		assert_int_equal(t->nic.nb_rules, 0); /* every rule left with its engine */
		us_steer_model_free(&t->nic);
		t->has_nic = false;
	}
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

void h_multi_nic(struct h_multi *t, const struct us_rss *rss, uint32_t capacity)
{
	assert_int_equal(us_steer_model_init(&t->nic, rss, capacity), 0);
	t->has_nic = true;
}

void h_multi_run(struct h_multi *t)
{
	for (unsigned round = 0; round < 8; round++) {
		unsigned work = 0;

		for (unsigned k = 0; k < t->n; k++) {
			t->h[k].now += US_US(10);
			work += us_engine_poll(t->h[k].e, t->h[k].now);
		}
		if (work == 0 && round > 0)
			return;
	}
}

void h_multi_queue(struct h_multi *t, unsigned q, struct rte_mbuf *m)
{
	struct h_port *p = &t->h[q].port;

	assert_true(q < t->n);
	assert_true(p->nrx < H_RX_MAX);
	p->rx[p->nrx++] = m;
	t->to_queue[q]++;
}

void h_multi_queue_owned(struct h_multi *t, unsigned q, unsigned owner, struct rte_mbuf *m)
{
	h_multi_queue(t, q, m);
	t->wrong[q] += owner != q;
}

void h_multi_arp_all(struct h_multi *t, uint16_t op)
{
	const struct rte_ether_addr *dst = op == RTE_ARP_OP_REQUEST ? &h_bcast_mac : &h_our_mac;

	for (unsigned k = 0; k < t->n; k++) {
		us_engine_input(t->h[k].e, h_arp(op, &h_peer_mac, H_PEER_IP, &h_our_mac, H_OUR_IP,
						 dst));
		us_engine_flush(t->h[k].e);
		h_clear_tx(&t->h[k]);
	}
}

/* The flow-rule backends: the model keeps no handle of its own. */
static int h_model_install(void *ctx, const struct us_flow_tuple *tu, uint16_t queue, void **h)
{
	*h = NULL;
	return us_steer_model_insert(ctx, tu, queue);
}

static int h_model_remove(void *ctx, const struct us_flow_tuple *tu, void *h)
{
	(void)h;
	return us_steer_model_remove(ctx, tu);
}

/* A control rule's handle is its slot + 1 (NULL means none). */
static int h_model_ctl_install(void *ctx, struct us_steer_ctl_rule *r, void **h)
{
	unsigned slot;
	int rc = us_steer_model_insert_ctl(ctx, r, &slot);

	*h = (void *)(uintptr_t)(slot + 1);
	return rc;
}

static int h_model_ctl_remove(void *ctx, void *h)
{
	return us_steer_model_remove_ctl(ctx, (unsigned)((uintptr_t)h - 1));
}

void h_model_flowrules(struct us_engine *e, uint16_t queue, struct us_steer_model *nic)
{
	/* Rule table names are global to the process too. */
	static unsigned seq;
	const struct us_flowrule_ops ops = { .install = h_model_install,
					     .remove = h_model_remove, .ctx = nic };
	struct us_flowrules *fr;
	char name[16];

	snprintf(name, sizeof(name), "hfr%u", seq++);
	fr = us_flowrule_create(&ops, queue, 64, name);
	assert_non_null(fr);
	assert_int_equal(us_flowrules_attach(e, fr), 0);
}

struct us_flowctl_ops h_model_ctl_ops(struct us_steer_model *nic)
{
	return (struct us_flowctl_ops){ .install = h_model_ctl_install,
					.remove = h_model_ctl_remove, .ctx = nic };
}
