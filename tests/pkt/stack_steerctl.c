/* Packet scripts for several engines, steering control: one ARP
 * reply per request, isolated mode on the software NIC model (ARP/ICMP to
 * the control queue, listener SYNs spread by the listener rule's RSS,
 * connections on their own rules, nothing else delivered), and one TFO
 * secret for the whole stack.  Engines over fake ports in virtual time; each
 * script ends with the leak check (engines destroyed, pool empty). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nic/rss.h"
#include "nic/steer_model.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"
#include "stack/engine/publish.h"
#include "stack/sock/socket_priv.h"
#include "tests/unit/stack/harness.h"
#include "tcp/fastopen.h"
#include "tcp/tcp.h"

#define NFLOWS 16
#define DLEN 100
#define OUR_PORT 80
#define PEER_PORT0 40000

static const struct tcp_callbacks quiet_cb; /* no application: data waits */

/* n engines, TCP Fast Open on the server side when tfo says. */
static void multi_start_tfo(struct h_multi *t, unsigned n, bool tfo)
{
	h_multi_prepare(t, n);
	for (unsigned k = 0; k < n && tfo; k++)
		t->h[k].cfg.tcp.fastopen = TCP_FASTOPEN_SERVER;
	h_multi_start(t);
}

static void multi_start(struct h_multi *t, unsigned n)
{
	multi_start_tfo(t, n, false);
}

static unsigned count_arp_replies(struct h_multi *t, unsigned k, uint32_t tip)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->h[k].port.ntx; i++) {
		struct rte_mbuf *m = t->h[k].port.tx[i];
		const struct rte_arp_hdr *a;

		if (h_eth(m)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP))
			continue;
		a = rte_pktmbuf_mtod_offset(m, const struct rte_arp_hdr *,
					    sizeof(struct rte_ether_hdr));
		if (a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY) &&
		    a->arp_data.arp_tip == rte_cpu_to_be_32(tip))
			n++;
	}
	return n;
}

/* RFC 826: a request for us gets ONE reply, from the engine whose queue
 * received it; every other engine learns the sender from its copy and stays
 * silent.  For each receiving engine in turn, over 4 engines. */
static void test_arp_request_one_reply(void **state)
{
	static struct h_multi t;
	(void)state;

	multi_start(&t, 4);
	for (unsigned rx = 0; rx < t.n; rx++) {
		uint32_t sip = H_IP(10, 0, 0, 100 + rx);
		struct rte_ether_addr smac = h_peer_mac;

		smac.addr_bytes[5] = (uint8_t)(0x40 + rx);
		h_multi_queue(&t, rx, h_arp(RTE_ARP_OP_REQUEST, &smac, sip, &h_bcast_mac,
					    H_OUR_IP, &h_bcast_mac));
		h_multi_run(&t);
		for (unsigned k = 0; k < t.n; k++) {
			struct rte_ether_addr mac;

			assert_int_equal(count_arp_replies(&t, k, sip), k == rx ? 1 : 0);
			assert_int_equal(t.h[k].port.ntx, k == rx ? 1 : 0); /* nothing else */
			/* Every engine learned the sender. */
			assert_int_equal(us_arp_lookup(&t.h[k].e->net, sip, &mac), 0);
			assert_memory_equal(&mac, &smac, sizeof(mac));
			h_clear_tx(&t.h[k]);
		}
	}
	for (unsigned k = 0; k < t.n; k++) {
		assert_int_equal(us_engine_counter(t.h[k].e, "arp_tx_replies"), 1);
		assert_int_equal(us_engine_counter(t.h[k].e, "arp_copy_not_answered"), t.n - 1);
		assert_int_equal(us_engine_counter(t.h[k].e, "steer_arp_copies"), t.n - 1);
	}
	h_multi_finish(&t);
}

/* A reply to OUR request (the peer answers on whichever queue) teaches every
 * engine, and no engine answers a reply. */
static void test_arp_reply_learned_by_all(void **state)
{
	static struct h_multi t;
	(void)state;

	multi_start(&t, 2);
	h_multi_queue(&t, 1, h_arp(RTE_ARP_OP_REPLY, &h_gw_mac, H_GW_IP, &h_our_mac, H_OUR_IP,
				   &h_our_mac));
	h_multi_run(&t);
	for (unsigned k = 0; k < t.n; k++) {
		struct rte_ether_addr mac;

		assert_int_equal(t.h[k].port.ntx, 0);
		assert_int_equal(us_arp_lookup(&t.h[k].e->net, H_GW_IP, &mac), 0);
		assert_int_equal(us_engine_counter(t.h[k].e, "arp_copy_not_answered"), 0);
	}
	h_multi_finish(&t);
}


/* Isolated mode on the software NIC model */

/* A segment of flow f from the peer to dst:dport, checksums valid. */
static struct rte_mbuf *seg_to(unsigned f, uint32_t dst, uint16_t dport, uint8_t flags,
			       uint32_t seq, uint32_t ack, size_t len)
{
	return h_tcp(H_PEER_IP, (uint16_t)(PEER_PORT0 + f), dst, dport, flags, seq, ack,
		     (uint8_t)('a' + f % 26), len);
}

/* The NIC: the model classifies the whole frame; a drop never reaches an
 * engine.  Returns the queue, or -1 for a drop. */
static int wire(struct h_multi *t, struct rte_mbuf *m)
{
	uint16_t q;

	if (us_steer_model_classify_frame(&t->nic, rte_pktmbuf_mtod(m, const void *),
					  rte_pktmbuf_data_len(m), &q) < 0) {
		rte_pktmbuf_free(m);
		return -1;
	}
	h_multi_queue(t, q, m);
	return q;
}

static unsigned owner_of(const struct h_multi *t, unsigned f)
{
	return us_rss_queue_ipv4_tcp(&t->sym, H_PEER_IP, H_OUR_IP, (uint16_t)(PEER_PORT0 + f),
				     OUR_PORT);
}

static unsigned count_proto(struct h_multi *t, unsigned k, uint8_t proto, uint8_t tcp_flags)
{
	unsigned n = 0;

	for (unsigned i = 0; i < t->h[k].port.ntx; i++) {
		struct rte_mbuf *m = t->h[k].port.tx[i];
		struct rte_ipv4_hdr *ip;

		if (h_eth(m)->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4))
			continue;
		ip = h_iph(m);
		if (ip->next_proto_id != proto)
			continue;
		if (proto != IPPROTO_TCP ||
		    ((struct rte_tcp_hdr *)(ip + 1))->tcp_flags == tcp_flags)
			n++;
	}
	return n;
}

/* Two engines behind an isolated port on the model: only the control rules
 * (ARP and ICMP to queue 0) installed, nothing else delivered yet. */
static void isolated_nic(struct h_multi *t, struct us_flowctl *ctl)
{
	const struct us_flowctl_ops cops = h_model_ctl_ops(&t->nic);

	multi_start(t, 2);
	h_multi_nic(t, &t->sym, 64);
	t->nic.isolated = true;
	assert_int_equal(us_flowctl_start(ctl, &cops, H_OUR_IP, 0, (uint16_t)t->n,
					  us_rss_key_symmetric, US_RSS_KEY_LEN), 0);
}

/* Engines with per-connection rules on the model (as stack/api/init.c does with
 * rte_flow), the control rules of an isolated port, a listener on every
 * engine. */
static void isolate_start(struct h_multi *t, struct us_flowctl *ctl)
{
	isolated_nic(t, ctl);
	for (unsigned k = 0; k < t->n; k++) {
		h_model_flowrules(t->h[k].e, (uint16_t)k, &t->nic);
		assert_int_equal(tcp_listen(us_engine_tcp(t->h[k].e), NULL, OUR_PORT, 0,
					    &quiet_cb, NULL), 0);
	}
	for (unsigned k = 0; k < t->n; k++)
		assert_int_equal(us_flowctl_listen(ctl, OUR_PORT), 0);
	assert_int_equal(ctl->stats.ctl_installed, 3); /* ARP, ICMP, one listener */
}

/* ARP and ICMP from the peer: on queue 0 only, answered by engine 0. */
static void isolate_control(struct h_multi *t)
{
	uint8_t msg[64];
	size_t len = h_icmp_echo(msg, 7, 1, 16);

	assert_int_equal(wire(t, h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP,
				       &h_bcast_mac, H_OUR_IP, &h_bcast_mac)), 0);
	h_multi_run(t);
	assert_int_equal(count_arp_replies(t, 0, H_PEER_IP), 1);
	assert_int_equal(t->h[1].port.ntx, 0);
	h_clear_tx(&t->h[0]);
	assert_int_equal(wire(t, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 1, 0, msg, len)), 0);
	h_multi_run(t);
	assert_int_equal(count_proto(t, 0, IPPROTO_ICMP, 0), 1); /* the echo reply */
	assert_int_equal(t->h[0].port.ntx, 1);
	assert_int_equal(t->h[1].port.ntx, 0);
	h_clear_tx(&t->h[0]);
}

/* Frames no rule matches: the NIC drops them, no engine sees them. */
static void isolate_unwanted(struct h_multi *t)
{
	uint8_t buf[64];
	size_t len = h_udp(buf, H_PEER_IP, H_OUR_IP, 5353, 53, "x", 1);
	uint64_t frames = 0;

	for (unsigned k = 0; k < t->n; k++)
		frames += (uint64_t)us_engine_counter(t->h[k].e, "eth_rx_frames");
	assert_int_equal(wire(t, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_UDP, 9, 0, buf, len)), -1);
	assert_int_equal(wire(t, seg_to(0, H_OUR_IP, 81, RTE_TCP_SYN_FLAG, 1, 0, 0)), -1);
	assert_int_equal(wire(t, seg_to(0, H_IP(10, 0, 0, 99), OUR_PORT, RTE_TCP_SYN_FLAG, 1, 0,
				      0)), -1);
	assert_int_equal(wire(t, h_ipv4(H_PEER_IP, H_OUR_IP, 47, 9, 0, buf, 8)), -1); /* GRE */
	assert_int_equal(t->nic.stats.isolate_drop, 4);
	h_multi_run(t);
	for (unsigned k = 0; k < t->n; k++)
		frames -= (uint64_t)us_engine_counter(t->h[k].e, "eth_rx_frames");
	assert_int_equal(frames, 0);
}

/* The socket layer's driver: these scripts poll the engines themselves. */
static uint64_t sock_now(void *ctx)
{
	(void)ctx;
	return 0;
}

static void sock_poll(void *ctx)
{
	(void)ctx;
}

/* A listener made with us_listen on an engine's own sockets (not
 * us_tcp_listen) of an isolated port gets the listener's RSS rule too, or no
 * SYN would arrive; the last listener's close takes it away. */
static void test_isolate_socket_listener_rule(void **state)
{
	static struct h_multi t;
	static struct us_flowctl ctl;
	const struct us_sock_driver drv = { .now_ns = sock_now, .poll = sock_poll };
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(OUR_PORT) };
	struct us_sock_table *tab[2];
	int fd[2];
	(void)state;

	isolated_nic(&t, &ctl);
	assert_int_equal(wire(&t, seg_to(0, H_OUR_IP, OUR_PORT, RTE_TCP_SYN_FLAG, 7, 0, 0)), -1);
	for (unsigned k = 0; k < t.n; k++) {
		assert_int_equal(us_flowctl_attach(t.h[k].e, &ctl), 0);
		tab[k] = us_sock_table_create(t.h[k].e, k, 16, &drv);
		assert_non_null(tab[k]);
		us_sock_table_bind_thread(tab[k]);
		fd[k] = us_socket(AF_INET, SOCK_STREAM, 0);
		assert_true(fd[k] >= 0);
		assert_int_equal(us_bind(fd[k], (struct sockaddr *)&sin, sizeof(sin)), 0);
		assert_int_equal(us_listen(fd[k], 16), 0);
	}
	assert_int_equal(ctl.stats.ctl_installed, 3); /* ARP, ICMP, one listener */
	isolate_control(&t); /* the peer's address learned: SYN-ACKs need no ARP */
	assert_int_equal(wire(&t, seg_to(0, H_OUR_IP, OUR_PORT, RTE_TCP_SYN_FLAG, 7, 0, 0)),
			 owner_of(&t, 0));
	h_multi_run(&t);
	assert_int_equal(count_proto(&t, owner_of(&t, 0), IPPROTO_TCP,
				     RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG), 1);
	for (unsigned k = 0; k < t.n; k++) {
		us_sock_table_bind_thread(tab[k]);
		assert_int_equal(us_close(fd[k]), 0);
		assert_int_equal(ctl.stats.ctl_removed, k); /* the last close removes it */
	}
	assert_int_equal(wire(&t, seg_to(1, H_OUR_IP, OUR_PORT, RTE_TCP_SYN_FLAG, 9, 0, 0)), -1);
	assert_int_equal(t.nic.stats.isolate_drop, 2);
	for (unsigned k = 0; k < t.n; k++)
		us_sock_table_destroy(tab[k]);
	us_flowctl_stop(&ctl);
	h_multi_finish(&t);
}

/* [port] isolate = on: ARP and ICMP reach engine 0 only, each listener SYN
 * reaches the engine the owner rule names (the listener rule's RSS), the
 * rest of each connection comes by its own 5-tuple rule, and nothing else
 * is delivered.  No frame is handed between engines. */
static void test_isolate_only_ruled_traffic(void **state)
{
	static struct h_multi t;
	static struct us_flowctl ctl;
	uint32_t peer_seq[NFLOWS], our_seq[NFLOWS];
	unsigned owned[H_ENG_MAX] = { 0 };
	(void)state;

	isolate_start(&t, &ctl);
	isolate_control(&t);
	for (unsigned f = 0; f < NFLOWS; f++) {
		peer_seq[f] = 1000u * f + 7;
		assert_int_equal(wire(&t, seg_to(f, H_OUR_IP, OUR_PORT, RTE_TCP_SYN_FLAG,
						 peer_seq[f]++, 0, 0)), owner_of(&t, f));
		owned[owner_of(&t, f)]++;
	}
	assert_true(owned[0] > 0 && owned[1] > 0); /* the SYNs spread */
	h_multi_run(&t);
	for (unsigned k = 0; k < t.n; k++) {
		assert_int_equal(count_proto(&t, k, IPPROTO_TCP,
					     RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG), owned[k]);
		for (unsigned i = 0; i < t.h[k].port.ntx; i++) {
			struct rte_tcp_hdr *th = (struct rte_tcp_hdr *)(h_iph(t.h[k].port.tx[i]) + 1);
			unsigned f = rte_be_to_cpu_16(th->dst_port) - PEER_PORT0;

			our_seq[f] = rte_be_to_cpu_32(th->sent_seq) + 1;
		}
		h_clear_tx(&t.h[k]);
	}
	assert_int_equal(t.nic.nb_rules, NFLOWS); /* one rule per connection */
	for (unsigned f = 0; f < NFLOWS; f++) {
		assert_int_equal(wire(&t, seg_to(f, H_OUR_IP, OUR_PORT, RTE_TCP_ACK_FLAG,
						 peer_seq[f], our_seq[f], 0)), owner_of(&t, f));
		assert_int_equal(wire(&t, seg_to(f, H_OUR_IP, OUR_PORT,
						 RTE_TCP_ACK_FLAG | RTE_TCP_PSH_FLAG, peer_seq[f],
						 our_seq[f], DLEN)), owner_of(&t, f));
	}
	h_multi_run(&t);
	assert_int_equal(t.nic.stats.classify_rule, 2 * NFLOWS);
	for (unsigned k = 0; k < t.n; k++) {
		const struct tcp_stats *s = tcp_stack_stats(us_engine_tcp(t.h[k].e));

		assert_int_equal(s->passive_opens, owned[k]);
		assert_int_equal(s->rx_bytes, (uint64_t)owned[k] * DLEN);
		assert_int_equal(us_engine_counter(t.h[k].e, "steer_handoff_out"), 0);
	}
	isolate_unwanted(&t);
	for (unsigned k = 0; k < t.n; k++)
		us_flowctl_unlisten(&ctl, OUR_PORT);
	assert_int_equal(ctl.stats.ctl_removed, 1); /* the last engine took it away */
	us_flowctl_stop(&ctl);
	for (unsigned i = 0; i < US_STEER_MODEL_CTL_MAX; i++)
		assert_false(t.nic.ctl[i].used);
	h_multi_finish(&t);
}


/* One TFO secret per stack */

/* A SYN of flow f with a Fast Open option (cookie request when clen is 0)
 * and dlen bytes of data. */
static struct rte_mbuf *tfo_syn(unsigned f, uint32_t seq, const uint8_t *cookie, uint8_t clen,
				size_t dlen)
{
	uint8_t o[4 + TFO_COOKIE_MAX];
	size_t olen = (2u + clen + 3u) & ~3u;

	memset(o, 1, olen);                       /* NOP padding */
	o[0] = TFO_OPT_KIND;                      /* RFC 7413 4.1.1 */
	o[1] = (uint8_t)(2 + clen);
	if (clen > 0) /* a cookie request carries none (memcpy from NULL is UB) */
		memcpy(o + 2, cookie, clen);
	return h_tcp_opts(H_PEER_IP, (uint16_t)(PEER_PORT0 + f), H_OUR_IP, OUR_PORT,
			  RTE_TCP_SYN_FLAG, seq, 0, o, olen, 'd', dlen);
}

/* Engine k's only frame is a SYN-ACK; its cookie (if any) into cookie,
 * length returned; its ack number into *ack. */
static uint8_t synack_cookie(struct h_multi *t, unsigned k, uint8_t *cookie, uint32_t *ack)
{
	struct rte_tcp_hdr *th;
	const uint8_t *o, *end;
	uint8_t len = 0;

	assert_int_equal(t->h[k].port.ntx, 1);
	th = (struct rte_tcp_hdr *)(h_iph(t->h[k].port.tx[0]) + 1);
	assert_int_equal(th->tcp_flags, RTE_TCP_SYN_FLAG | RTE_TCP_ACK_FLAG);
	*ack = rte_be_to_cpu_32(th->recv_ack);
	o = (const uint8_t *)(th + 1);
	end = (const uint8_t *)th + (th->data_off >> 4) * 4;
	while (o < end && o[0] != 0) {
		if (o[0] == 1) {
			o++;
			continue;
		}
		if (o[0] == TFO_OPT_KIND) {
			len = (uint8_t)(o[1] - 2);
			memcpy(cookie, o + 2, len);
		}
		o += o[1];
	}
	h_clear_tx(&t->h[k]);
	return len;
}

/* A flow from f0 on whose SYN engine k owns. */
static unsigned flow_on(const struct h_multi *t, unsigned k, unsigned f0)
{
	while (owner_of(t, f0) != k)
		f0++;
	return f0;
}

/* Engine `to` takes a SYN with this cookie and 10 bytes: the data is
 * acknowledged by the SYN-ACK (RFC 7413 4.2.2) iff the cookie is valid. */
static bool cookie_accepted(struct h_multi *t, unsigned to, unsigned f, const uint8_t *cookie,
			    uint8_t clen)
{
	uint8_t unused[TFO_COOKIE_MAX];
	uint32_t ack;

	h_multi_queue(t, to, tfo_syn(f, 5000, cookie, clen, 10));
	h_multi_run(t);
	(void)synack_cookie(t, to, unused, &ack);
	return ack == 5000 + 1 + 10;
}

static uint8_t cookie_from(struct h_multi *t, unsigned k, unsigned f, uint8_t *cookie)
{
	uint32_t ack;
	uint8_t len;

	h_multi_queue(t, k, tfo_syn(f, 100, NULL, 0, 0));
	h_multi_run(t);
	len = synack_cookie(t, k, cookie, &ack);
	assert_int_equal(len, TFO_SERVER_COOKIE_LEN);
	return len;
}

/* Every engine knows the peer's MAC again (the ARP cache expires during
 * long jumps of virtual time). */
static void learn_peer(struct h_multi *t)
{
	h_multi_arp_all(t, RTE_ARP_OP_REPLY);
}

/* RFC 7413 4.1.2 with two engines: a cookie engine 0 issued is valid on
 * engine 1 (one secret per stack, published by engine 0), also after engine
 * 0 rotated the secret (the new one published too, the old one still the
 * backup everywhere). */
static void test_tfo_cookie_valid_on_every_engine(void **state)
{
	static struct h_multi t;
	struct us_publish *pub;
	uint8_t c1[TFO_COOKIE_MAX], c2[TFO_COOKIE_MAX];
	unsigned f = 0;
	(void)state;

	multi_start_tfo(&t, 2, true);
	pub = us_publish_create(2, 0, "sct");
	assert_non_null(pub);
	for (unsigned k = 0; k < t.n; k++) {
		assert_int_equal(us_publish_attach(t.h[k].e, pub), 0);
		assert_int_equal(tcp_listen(us_engine_tcp(t.h[k].e), NULL, OUR_PORT, 0,
					    &quiet_cb, NULL), 0);
	}
	assert_int_equal(us_publish_send_tfo_keys(t.h[1].e), -EINVAL); /* not the writer */
	assert_int_equal(us_publish_send_tfo_keys(t.h[0].e), 0);
	learn_peer(&t);

	f = flow_on(&t, 0, f);
	cookie_from(&t, 0, f++, c1);
	f = flow_on(&t, 1, f);
	assert_true(cookie_accepted(&t, 1, f++, c1, TFO_SERVER_COOKIE_LEN));
	assert_int_equal(us_engine_counter(t.h[1].e, "pub_tfo_keys_applied"), 1);

	/* Engine 0's rotation: a new secret, published; engine 1 follows. */
	for (unsigned k = 0; k < t.n; k++)
		t.h[k].now += US_SEC(3601);
	h_multi_run(&t);
	learn_peer(&t);
	assert_int_equal(tcp_stack_tfo_stats(us_engine_tcp(t.h[0].e))->key_rotations, 1);
	assert_int_equal(tcp_stack_tfo_stats(us_engine_tcp(t.h[1].e))->key_rotations, 0);
	assert_int_equal(us_engine_counter(t.h[0].e, "pub_tfo_keys_sent"), 2);
	assert_int_equal(us_engine_counter(t.h[1].e, "pub_tfo_keys_applied"), 2);
	f = flow_on(&t, 0, f);
	cookie_from(&t, 0, f++, c2);
	assert_memory_not_equal(c1, c2, TFO_SERVER_COOKIE_LEN);
	f = flow_on(&t, 1, f);
	assert_true(cookie_accepted(&t, 1, f++, c2, TFO_SERVER_COOKIE_LEN));  /* the new primary */
	f = flow_on(&t, 1, f);
	assert_true(cookie_accepted(&t, 1, f++, c1, TFO_SERVER_COOKIE_LEN));  /* the old one, now backup */
	c1[0] ^= 1;
	f = flow_on(&t, 1, f);
	assert_false(cookie_accepted(&t, 1, f++, c1, TFO_SERVER_COOKIE_LEN)); /* and not any cookie */
	assert_int_equal(tcp_stack_tfo_stats(us_engine_tcp(t.h[1].e))->srv_accepted, 3);
	h_multi_finish(&t);
	us_publish_destroy(pub);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_arp_request_one_reply),
		cmocka_unit_test(test_arp_reply_learned_by_all),
		cmocka_unit_test(test_isolate_only_ruled_traffic),
		cmocka_unit_test(test_isolate_socket_listener_rule),
		cmocka_unit_test(test_tfo_cookie_valid_on_every_engine),
	};

	h_eal_init("us_pkt_steerctl");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
