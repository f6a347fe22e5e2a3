/* Packet scripts for us_migrate (stack/engine/migrate.h): one stack of two
 * engines fed by the software NIC model (nic/steer_model.h) and a peer
 * host (one engine, its own sockets) in virtual time, wired through a
 * scripted link that can lose chosen frames.  A transfer runs both ways
 * while the server moves the connection between the engines: data and
 * ACKs in flight, an RTO pending, out-of-order data queued.  Each script
 * ends with the leak check: every connection and migration entry gone,
 * engines destroyed, the mbuf pool back to empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include <rte_ip.h>
#include <rte_mbuf.h>
#include <rte_tcp.h>

#include "nic/rss.h"
#include "nic/steer_model.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/flowrule.h"
#include "stack/engine/handoff.h"
#include "stack/engine/migrate.h"
#include "stack/sock/socket_priv.h"
#include "tcp/tcb.h"
#include "tests/unit/stack/harness.h"

#define Q_MAX 8192u
#define SRV_PORT 80
#define NSIDES 3 /* our engines 0 and 1, the peer host */
#define PEER 2

struct wq {
	struct rte_mbuf *q[Q_MAX];
	unsigned head, n;
};

struct side {
	struct us_config cfg;
	struct us_port_ops ops;
	struct us_engine *e;
	struct us_sock_table *tab;
	struct wq rx;
	unsigned id;
};

struct world {
	uint64_t now;
	struct side s[NSIDES];
	struct us_handoff *ho;
	struct us_rss sym;
	struct us_steer_model nic;
	/* Scripted loss: our next drop_ours data frames, the peer's next
	 * drop_peer data frames. */
	unsigned drop_ours, drop_peer, dropped;
};

static struct world w;

/* Wire */

static struct rte_mbuf *wire_copy(struct rte_mbuf *m)
{
	struct rte_mbuf *c = rte_pktmbuf_alloc(h_pool);
	uint32_t len = rte_pktmbuf_pkt_len(m);
	char *d;

	assert_non_null(c);
	d = rte_pktmbuf_append(c, (uint16_t)len);
	assert_non_null(d);
	const void *p = rte_pktmbuf_read(m, 0, len, d);

	if (p != d)
		memcpy(d, p, len);
	rte_pktmbuf_free(m);
	return c;
}

static void wq_push(struct wq *q, struct rte_mbuf *m)
{
	assert_true(q->n < Q_MAX);
	q->q[(q->head + q->n++) % Q_MAX] = m;
}

/* TCP payload length of a frame (0 for anything else). */
static unsigned tcp_payload(struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip;
	const struct rte_tcp_hdr *th = us_handoff_tcp(m, &ip);

	if (th == NULL)
		return 0;
	return rte_be_to_cpu_16(ip->total_length) - (ip->version_ihl & 0xf) * 4u -
	       (th->data_off >> 4) * 4u;
}

static bool lose(unsigned *budget, struct rte_mbuf *m)
{
	if (*budget == 0 || tcp_payload(m) == 0)
		return false;
	(*budget)--;
	w.dropped++;
	rte_pktmbuf_free(m);
	return true;
}

/* The NIC of our port: the model picks the queue of TCP frames, the rest
 * (ARP) lands on queue 0. */
static void nic_deliver(struct rte_mbuf *m)
{
	const struct rte_ipv4_hdr *ip;
	const struct rte_tcp_hdr *th = us_handoff_tcp(m, &ip);
	unsigned q = 0;

	if (th != NULL) {
		struct us_flow_tuple tu = { .src_ip = ip->src_addr, .dst_ip = ip->dst_addr,
					    .sport = th->src_port, .dport = th->dst_port };

		q = us_steer_model_classify(&w.nic, &tu);
	}
	wq_push(&w.s[q].rx, m);
}

static uint16_t port_tx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct side *s = ctx;

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = wire_copy(pkts[i]);

		if (s->id == PEER) {
			if (!lose(&w.drop_peer, m))
				nic_deliver(m);
		} else if (!lose(&w.drop_ours, m)) {
			wq_push(&w.s[PEER].rx, m);
		}
	}
	return n;
}

static uint16_t port_rx(void *ctx, struct rte_mbuf **pkts, uint16_t n)
{
	struct wq *q = &((struct side *)ctx)->rx;
	uint16_t k = 0;

	for (; k < n && q->n > 0; k++, q->n--, q->head = (q->head + 1) % Q_MAX)
		pkts[k] = q->q[q->head];
	return k;
}

static uint64_t drv_now(void *ctx)
{
	(void)ctx;
	return w.now;
}

/* One step of the world: 1 ms, every engine polls once. */
static void step(void *ctx)
{
	(void)ctx;
	w.now += US_MS(1);
	for (unsigned k = 0; k < NSIDES; k++)
		us_engine_poll(w.s[k].e, w.now);
}

static void side_start(unsigned k)
{
	struct side *s = &w.s[k];
	struct us_sock_driver drv = { .now_ns = drv_now, .poll = step };

	s->id = k;
	h_config(&s->cfg);
	s->cfg.gateway = 0;
	s->cfg.tcp.time_wait_ms = 2000;

	/* Small windows and a slow reader: the transfer spans many steps. */
	s->cfg.tcp.rcvbuf = 32 * 1024;
	s->cfg.tcp.sndbuf = 32 * 1024;
	/* No Tail Loss Probe: these worlds check that a move reorders nothing
	 * by counting out-of-order arrivals, and a probe of new data sent
	 * while segments cut at the slow reader's window edge are unrepaired
	 * arrives out of order by design (RACK still marks losses). */
	s->cfg.tcp.tlp = false;
	if (k == PEER)
		s->cfg.addr = H_PEER_IP;
	s->ops = (struct us_port_ops){ .rx = port_rx, .tx = port_tx, .ctx = s, .mtu = 1500,
				       .mac = k == PEER ? h_peer_mac : h_our_mac };
	s->e = us_engine_create(k == PEER ? 0 : k, &s->cfg, h_pool, &s->ops, w.now);
	assert_non_null(s->e);
	if (k != PEER)
		assert_int_equal(us_handoff_attach(s->e, w.ho), 0);
	s->tab = us_sock_table_create(s->e, k, 64, &drv);
	assert_non_null(s->tab);
	/* Each host knows the other's MAC (as ARP would teach). */
	if (k == PEER)
		us_engine_input(s->e, h_arp(1, &h_our_mac, H_OUR_IP, &h_peer_mac, H_PEER_IP,
					    &h_bcast_mac));
	else
		us_engine_input(s->e, h_arp(1, &h_peer_mac, H_PEER_IP, &h_our_mac, H_OUR_IP,
					    &h_bcast_mac));
}

static void world_start(unsigned rules)
{
	static unsigned seq;
	char name[16];

	memset(&w, 0, sizeof(w));
	w.now = US_SEC(1);
	assert_int_equal(us_rss_init(&w.sym, us_rss_key_symmetric, US_RSS_KEY_LEN, 128, 2), 0);
	assert_int_equal(us_steer_model_init(&w.nic, &w.sym, rules), 0);
	snprintf(name, sizeof(name), "mig%u", seq++);
	w.ho = us_handoff_create(2, &w.sym, name);
	assert_non_null(w.ho);
	for (unsigned k = 0; k < NSIDES; k++)
		side_start(k);
}

static void run(unsigned ms)
{
	for (unsigned i = 0; i < ms; i++)
		step(NULL);
}

/* FINISH: sockets closed, TIME-WAIT over, then no TCB, no migration entry
 * and no armed TCP timer is left, and the state gauges agree with the
 * table; engines gone, every mbuf back. */
static void world_finish(void)
{
	char why[96];

	for (unsigned k = 0; k < NSIDES; k++) {
		us_sock_table_destroy(w.s[k].tab);
		w.s[k].tab = NULL;
	}
	run(3000);
	for (unsigned k = 0; k < NSIDES; k++) {
		assert_int_equal(tcp_conn_count(us_engine_tcp(w.s[k].e)), 0);
		if (tcp_state_gauges_check(us_engine_tcp(w.s[k].e), why, sizeof(why)) != 0)
			fail_msg("engine %u: %s", k, why);
		if (k != PEER)
			assert_int_equal(us_migrate_count(w.s[k].e), 0);
	}
	for (unsigned k = 0; k < NSIDES; k++) {
		struct wq *q = &w.s[k].rx;

		us_engine_destroy(w.s[k].e);
		for (; q->n > 0; q->n--, q->head = (q->head + 1) % Q_MAX)
			rte_pktmbuf_free(q->q[q->head]);
	}
	us_handoff_destroy(w.ho);
	assert_int_equal(w.nic.nb_rules, 0);
	us_steer_model_free(&w.nic);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

static int64_t ctr(unsigned k, const char *name)
{
	return us_engine_counter(w.s[k].e, name);
}

/* Sockets */

static int listen_on(unsigned k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SRV_PORT) };
	int fd;

	us_sock_table_bind_thread(w.s[k].tab);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd > 0);
	assert_int_equal(us_bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(us_listen(fd, 16), 0);
	return fd;
}

static uint8_t pat(int dir, size_t i)
{
	return dir ? (uint8_t)(i * 13 + 5) : (uint8_t)(i * 7 + 3);
}

/* One end of the transfer: sends `total` bytes of pattern dir, checks the
 * other pattern as it reads; fd moves when the connection does. */
struct end {
	int fd;
	unsigned eng;
	int dir;
	size_t total, sent, rcvd;
	bool eof, shut;
	bool echo; /* reads back its own pattern */
};

static void end_pump(struct end *x)
{
	uint8_t buf[4096]; /* read per step: a slow application */
	ssize_t n = -1;

	if (x->fd < 0)
		return;
	us_sock_table_bind_thread(w.s[x->eng].tab);
	while (x->sent < x->total) {
		size_t len = RTE_MIN(sizeof(buf), x->total - x->sent);

		for (size_t i = 0; i < len; i++)
			buf[i] = pat(x->dir, x->sent + i);
		n = us_send(x->fd, buf, len, 0);
		if (n < 0) {
			assert_int_equal(errno, EAGAIN);
			break;
		}
		x->sent += (size_t)n;
	}
	if (x->eof)
		return;
	n = us_recv(x->fd, buf, sizeof(buf), 0);
	if (n < 0) {
		assert_int_equal(errno, EAGAIN);
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		assert_int_equal(buf[i], pat(x->echo ? x->dir : !x->dir, x->rcvd + (size_t)i));
	x->rcvd += (size_t)n;
	x->eof = n == 0;
}

/* The peer connects; the server engine (the tuple's RSS owner) accepts. */
static void connect_pair(struct end *cli, struct end *srv, size_t total)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(SRV_PORT),
				 .sin_addr.s_addr = htonl(H_OUR_IP) };
	struct sockaddr_in loc;
	socklen_t len = sizeof(loc);

	*cli = (struct end){ .eng = PEER, .dir = 0, .total = total };
	*srv = (struct end){ .fd = -1, .dir = 1, .total = total };
	us_sock_table_bind_thread(w.s[PEER].tab);
	cli->fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_connect(cli->fd, (struct sockaddr *)&a, sizeof(a)), -1);
	assert_int_equal(errno, EINPROGRESS);
	run(3);
	assert_int_equal(us_getsockname(cli->fd, (struct sockaddr *)&loc, &len), 0);
	srv->eng = us_handoff_owner(w.ho, &(struct us_in6[]){ us_in6_of_v4(H_PEER_IP) }[0],
				    &(struct us_in6[]){ us_in6_of_v4(H_OUR_IP) }[0],
				    ntohs(loc.sin_port), SRV_PORT);
}

/* The server's engine takes the connection from its listener's queue. */
static void srv_accept(struct end *srv, int lfd[2])
{
	us_sock_table_bind_thread(w.s[srv->eng].tab);
	srv->fd = us_accept(lfd[srv->eng], NULL, NULL);
	assert_true(srv->fd > 0);
}

static struct us_sock *sock_of(int fd)
{
	struct us_sock *s;

	assert_int_equal(us_sock_lookup(fd, &s), 0);
	return s;
}

/* Moves the server end to engine `to`: EBUSY (a return still draining)
 * is tried again after a step; the target's listener queue gets it. */
static void srv_move(struct end *srv, unsigned to, int lfd[2])
{
	int rc;

	for (unsigned tries = 0; tries < 10; tries++) {
		us_sock_table_bind_thread(w.s[srv->eng].tab);
		rc = us_migrate(srv->fd, to);
		if (rc == 0)
			break;
		assert_int_equal(errno, EBUSY);
		step(NULL);
	}
	assert_int_equal(rc, 0);
	srv->fd = -1;
	srv->eng = to;
	step(NULL);
	srv_accept(srv, lfd);
}

static void pump_step(struct end *a, struct end *b)
{
	end_pump(a);
	end_pump(b);
	step(NULL);
}

static int64_t ooo_total(void)
{
	int64_t n = 0;

	for (unsigned k = 0; k < NSIDES; k++)
		n += ctr(k, "tcp_ooo_queued");
	return n;
}

static void assert_no_rst(void)
{
	for (unsigned k = 0; k < NSIDES; k++) {
		assert_int_equal(ctr(k, "tcp_resets_sent"), 0);
		assert_int_equal(ctr(k, "tcp_resets_rcvd"), 0);
		assert_int_equal(ctr(k, "tcp_drop_no_conn"), 0);
	}
}

/* Our engines' connections get rules on the NIC model (as stack/api/init.c installs
 * rte_flow rules). */
static void use_rules(void)
{
	for (unsigned k = 0; k < 2; k++)
		h_model_flowrules(w.s[k].e, (uint16_t)k, &w.nic);
}

/* A world with room for `rules` flow rules (0: none, no rules used), a
 * listener on both our engines, and one connection from the peer accepted
 * by its RSS owner, whose number is returned. */
static unsigned world_with_conn(unsigned rules, struct end *cli, struct end *srv, int lfd[2],
				size_t total)
{
	world_start(rules);
	if (rules)
		use_rules();
	lfd[0] = listen_on(0);
	lfd[1] = listen_on(1);
	connect_pair(cli, srv, total);
	srv_accept(srv, lfd);
	return srv->eng;
}

/* The model's rule for the server's connection: its queue, or -1. */
static int rule_queue(const struct end *cli)
{
	struct sockaddr_in loc;
	socklen_t len = sizeof(loc);

	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_getsockname(cli->fd, (struct sockaddr *)&loc, &len), 0);
	for (uint32_t i = 0; i < w.nic.capacity; i++)
		if (w.nic.rules[i].used && w.nic.rules[i].tuple.sport == loc.sin_port)
			return w.nic.rules[i].queue;
	return -1;
}

/* The script: a 400 KiB transfer each way; just before the first
 * move a peer segment is lost (its successors wait out of order here) and
 * four of ours (in flight, the RTO armed); then the server moves the
 * connection to the other engine and back every 64 KiB it reads.
 * Byte-exact both ways, no RST anywhere, every frame after a move followed
 * the connection (forwarded by the RSS owner, never answered). */
static void mid_transfer(bool rules)
{
	struct end cli, srv;
	int lfd[2];
	unsigned home, moves = 0;
	size_t next_move = 64 * 1024;

	home = world_with_conn(rules ? 16 : 0, &cli, &srv, lfd, 400 * 1024);
	for (unsigned i = 0; i < 20; i++)
		pump_step(&cli, &srv);
	struct tcp_conn *c = sock_of(srv.fd)->tc;

	w.drop_peer = 1;
	w.drop_ours = 4;
	for (unsigned i = 0; i < 100 && (w.drop_peer + w.drop_ours > 0 || c->ooo.bytes == 0); i++)
		pump_step(&cli, &srv);

	assert_int_equal(w.drop_peer + w.drop_ours, 0);
	assert_true(c->ooo.bytes > 0);              /* out-of-order data queued */
	assert_true(c->deadline[TCP_T_RTO] != 0);   /* an RTO pending */
	assert_true(SEQ_LT(c->snd_una, c->snd_max)); /* our data in flight */
	assert_true(SEQ_LT(c->rcv_nxt, cli.sent + c->irs + 1)); /* theirs too */
	struct tcp_conn *pc = sock_of(cli.fd)->tc;
	uint32_t our_lost_end = c->snd_max, peer_lost_end = pc->snd_max;
	int64_t ooo_after = -1;

	srv_move(&srv, 1 - home, lfd);
	moves++;
	assert_ptr_equal(sock_of(srv.fd)->tc, c); /* the same TCB, now there */
	for (unsigned i = 0; i < 20000 && (cli.rcvd < cli.total || srv.rcvd < srv.total); i++) {
		pump_step(&cli, &srv);
		/* Once both losses are repaired, any segment queued out of order
		 * would be one the migration reordered. */
		if (ooo_after < 0 && SEQ_GEQ(c->snd_una, our_lost_end) &&
		    SEQ_GEQ(pc->snd_una, peer_lost_end) && c->ooo.bytes == 0 && pc->ooo.bytes == 0)
			ooo_after = ooo_total();
		if (srv.rcvd >= next_move && srv.rcvd < srv.total) {
			srv_move(&srv, srv.eng == home ? 1 - home : home, lfd);
			moves++;
			next_move += 64 * 1024;
			if (rules) { /* the rule followed, applied after the burst */
				step(NULL);
				assert_int_equal(rule_queue(&cli), (int)srv.eng);
			}
		}
	}
	assert_int_equal(cli.rcvd, cli.total);
	assert_int_equal(srv.rcvd, srv.total);
	assert_true(ooo_after > 0);
	assert_int_equal(ooo_total(), ooo_after); /* nothing reordered since */
	assert_true(moves >= 6);
	if (rules) {
		assert_true(w.nic.stats.classify_rule > 0);
		assert_true(ctr(0, "flow_rules_installed") + ctr(1, "flow_rules_installed") >=
			    moves + 1);
	} else {
		assert_true(ctr(home, "migrate_held") > 0); /* returns held frames back */
	}
	assert_int_equal(ctr(0, "migrate_out") + ctr(1, "migrate_out"), moves);
	assert_int_equal(ctr(0, "migrate_in") + ctr(1, "migrate_in"), moves);
	assert_int_equal(ctr(0, "migrate_failed") + ctr(1, "migrate_failed"), 0);
	assert_true(ctr(home, "migrate_redirected") > 0);
	assert_true(ctr(home, "migrate_markers") > 0);
	assert_true(ctr(0, "tcp_retrans_segs") + ctr(1, "tcp_retrans_segs") > 0);
	assert_int_equal(ctr(0, "migrate_drop_hold_full") + ctr(1, "migrate_drop_hold_full"), 0);
	assert_int_equal(ctr(0, "steer_drop_ring_full") + ctr(1, "steer_drop_ring_full"), 0);
	assert_no_rst();
	us_sock_table_bind_thread(w.s[srv.eng].tab);
	assert_int_equal(us_close(srv.fd), 0);
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_close(cli.fd), 0);
	run(10);
	assert_no_rst();
	world_finish();
}

static void test_migrate_mid_transfer(void **state)
{
	(void)state;
	mid_transfer(false);
}

/* The same with a flow rule per connection (NIC model): the rule moves to
 * the holder's queue with every move, frames then reach it directly. */
static void test_migrate_mid_transfer_rules(void **state)
{
	(void)state;
	mid_transfer(true);
}

/* A closing connection: the peer sent everything and its FIN; unread, in
 * CLOSE-WAIT, it moves, and the target reads it all and the end of stream,
 * then answers and closes.  Once we shut down writing it stays put. */
static void test_migrate_close_wait(void **state)
{
	struct end cli, srv;
	int lfd[2];
	unsigned home;
	(void)state;

	home = world_with_conn(0, &cli, &srv, lfd, 16 * 1024);
	srv.total = 0;
	for (unsigned i = 0; i < 50; i++) {
		end_pump(&cli);
		step(NULL);
	}
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_shutdown(cli.fd, SHUT_WR), 0);
	run(20);
	assert_int_equal(sock_of(srv.fd)->tc->state, TCP_CLOSE_WAIT);
	assert_int_equal(sock_of(srv.fd)->tc->rcvq.bytes, cli.total);
	srv_move(&srv, 1 - home, lfd);
	srv.total = 1000;
	for (unsigned i = 0; i < 100 && (!srv.eof || cli.rcvd < srv.total); i++)
		pump_step(&cli, &srv);
	assert_true(srv.eof);
	assert_int_equal(srv.rcvd, cli.total);
	assert_int_equal(cli.rcvd, srv.total);
	us_sock_table_bind_thread(w.s[srv.eng].tab);
	assert_int_equal(us_shutdown(srv.fd, SHUT_WR), 0);
	assert_int_equal(us_migrate(srv.fd, home), -1); /* LAST-ACK: stays */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ctr(srv.eng, "migrate_failed"), 1);
	assert_int_equal(us_close(srv.fd), 0);
	run(10);
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_close(cli.fd), 0);
	assert_no_rst();
	world_finish();
}

/* ICMP "fragmentation needed" (RFC 1191) quoting a segment of a moved
 * connection reaches the RSS owner, like the connection's segments, and
 * must follow it to its new engine: left at the owner, which has no TCB,
 * it is ignored, the MSS never drops and every full segment is lost on
 * the path for good (found by the simulator). */
static void test_migrate_icmp_follows(void **state)
{
	struct end cli, srv;
	int lfd[2];
	unsigned home;
	uint8_t msg[8 + sizeof(struct rte_ipv4_hdr) + 8] = { 3, 4 };
	struct rte_ipv4_hdr *q = (struct rte_ipv4_hdr *)(msg + 8);
	uint8_t *qt = msg + 8 + sizeof(*q);
	struct tcp_conn *c;
	(void)state;

	home = world_with_conn(0, &cli, &srv, lfd, 1000);
	srv_move(&srv, 1 - home, lfd);
	/* A full segment the path loses, still in flight when the error comes. */
	srv.total = 1460;
	w.drop_ours = 1;
	end_pump(&srv);
	step(NULL);
	c = sock_of(srv.fd)->tc;
	assert_true(c->snd_nxt != c->snd_una);
	msg[6] = 1000 >> 8; /* next-hop MTU */
	msg[7] = 1000 & 0xff;
	*q = (struct rte_ipv4_hdr){ .version_ihl = 0x45, .next_proto_id = IPPROTO_TCP,
				    .src_addr = rte_cpu_to_be_32(H_OUR_IP),
				    .dst_addr = rte_cpu_to_be_32(H_PEER_IP) };
	qt[0] = SRV_PORT >> 8;
	qt[1] = SRV_PORT & 0xff;
	qt[2] = (uint8_t)(c->remote_port >> 8);
	qt[3] = (uint8_t)c->remote_port;
	qt[4] = (uint8_t)(c->snd_una >> 24);
	qt[5] = (uint8_t)(c->snd_una >> 16);
	qt[6] = (uint8_t)(c->snd_una >> 8);
	qt[7] = (uint8_t)c->snd_una;
	msg[2] = msg[3] = 0;
	{
		uint16_t ck = (uint16_t)~rte_raw_cksum(msg, sizeof(msg));

		memcpy(msg + 2, &ck, 2);
	}
	wq_push(&w.s[home].rx, h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, 1, 0, msg, sizeof(msg)));
	run(3);
	assert_int_equal(ctr(home, "tcp_icmp_ignored_no_conn"), 0);
	assert_int_equal(ctr(1 - home, "tcp_icmp_frag_needed_applied"), 1);
	assert_true(sock_of(srv.fd)->tc->mss <= 1000 - 40);
	for (unsigned i = 0; i < 200 && cli.rcvd < srv.total; i++)
		pump_step(&cli, &srv);
	assert_int_equal(cli.rcvd, srv.total);
	us_sock_table_bind_thread(w.s[srv.eng].tab);
	assert_int_equal(us_close(srv.fd), 0);
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_close(cli.fd), 0);
	run(10);
	world_finish();
}

/* Refusals, each counted: a bad descriptor, a listener, no such engine,
 * this engine; a target without a listener on the port resets the
 * connection there (the peer sees the RST) and the RSS owner forgets its
 * redirect when told. */
static void test_migrate_failures(void **state)
{
	struct end cli, srv;
	int lfd[2];
	unsigned home;
	(void)state;

	home = world_with_conn(0, &cli, &srv, lfd, 0);
	us_sock_table_bind_thread(w.s[home].tab);
	assert_int_equal(us_migrate(12345, 1 - home), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(us_migrate(lfd[home], 1 - home), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(us_migrate(srv.fd, 2), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(us_migrate(srv.fd, home), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(ctr(home, "migrate_failed"), 3);
	us_sock_table_bind_thread(w.s[1 - home].tab);
	assert_int_equal(us_close(lfd[1 - home]), 0);
	us_sock_table_bind_thread(w.s[home].tab);
	assert_int_equal(us_migrate(srv.fd, 1 - home), 0);
	run(5);
	assert_int_equal(ctr(1 - home, "migrate_failed"), 1);
	assert_int_equal(ctr(1 - home, "migrate_in"), 0);
	assert_int_equal(ctr(1 - home, "tcp_resets_sent"), 1);
	assert_int_equal(ctr(PEER, "tcp_resets_rcvd"), 1);
	assert_int_equal(us_migrate_count(w.s[home].e), 0); /* END reached the RSS owner */
	assert_int_equal(us_migrate_count(w.s[1 - home].e), 0);
	world_finish();
}

/* The parcel keeps time: moved onto an engine whose clock is 7 s ahead,
 * the RTO has the time it had left and our TSval goes on from where the
 * peer saw it (RFC 7323 5.4 offset), not 7000 ticks later. */
static void test_migrate_keeps_timers(void **state)
{
	static const struct tcp_callbacks none;
	struct end cli, srv;
	int lfd[2];
	unsigned home;
	struct tcp_parcel *p;
	struct tcp_conn *c, *c2;
	uint64_t t0, rem;
	uint32_t tsval;
	(void)state;

	home = world_with_conn(0, &cli, &srv, lfd, 0);
	/* The TCB moves by hand here, no steering follows it: an ACK of
	 * "hello" reaching the home engine would draw a closed port's RST.
	 * The peer's ACK waits (TCP_QUICKACK 0 keeps profile linux's quick
	 * ACK of the first data off); this test is about the timers. */
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_setsockopt(cli.fd, US_IPPROTO_TCP, US_TCP_QUICKACK, &(int){ 0 },
				       sizeof(int)), 0);
	us_sock_table_bind_thread(w.s[home].tab);
	assert_int_equal(us_send(srv.fd, "hello", 5, 0), 5);
	w.drop_ours = 1;
	step(NULL);
	c = sock_of(srv.fd)->tc;
	t0 = us_timer_now(us_engine_wheel(w.s[home].e));
	rem = c->deadline[TCP_T_RTO] - t0;
	assert_true(c->deadline[TCP_T_RTO] > t0);
	tsval = (uint32_t)(t0 / US_MS(1)) + c->ts_off;
	assert_int_equal(ctr(home, "tcbs_established"), 1);
	assert_int_equal(tcp_migrate_detach(c, &p), 0);
	assert_int_equal(tcp_conn_count(us_engine_tcp(w.s[home].e)), 0);
	assert_int_equal(ctr(home, "tcbs_established"), 0);
	sock_of(srv.fd)->tc = NULL;
	assert_int_equal(us_close(srv.fd), 0);
	us_engine_advance(w.s[1 - home].e, t0 + US_SEC(7));
	assert_int_equal(ctr(1 - home, "tcbs_established"), 0);
	assert_int_equal(tcp_migrate_attach(us_engine_tcp(w.s[1 - home].e), p, &none, NULL, &c2), 0);
	assert_ptr_equal(c2, c);
	assert_int_equal(ctr(1 - home, "tcbs_established"), 1);
	assert_int_equal(c->deadline[TCP_T_RTO] - (t0 + US_SEC(7)), rem);
	assert_int_equal(c->timer.expire_ns, c->deadline[TCP_T_RTO]);
	assert_int_equal((uint32_t)((t0 + US_SEC(7)) / US_MS(1)) + c->ts_off, tsval);
	w.now = t0 + US_SEC(7);
	/* The RTO fires there, on time: "hello" again, accepted by the peer. */
	run((unsigned)(rem / US_MS(1)) + 2);
	assert_int_equal(ctr(1 - home, "tcp_rto_fired"), 1);
	us_sock_table_bind_thread(w.s[PEER].tab);
	char buf[8];
	assert_int_equal(us_recv(cli.fd, buf, sizeof(buf), 0), 5);
	assert_memory_equal(buf, "hello", 5);
	tcp_abort(c);
	world_finish();
}


/* The callback API's way (us_conn_migrate): an echo handler on each
 * engine's tcp/ moves its connection to the other engine from inside
 * on_readable every 8 KiB it echoed; the move waits for the end of the
 * loop iteration, then the other engine's listener takes it (on_accept)
 * and echoes on.  The peer gets its bytes back exactly. */
#define ECHO_PORT 81
static struct {
	unsigned engine[2];
	size_t echoed[2], next_move;
	unsigned moves, accepts[2];
} ech;

static void ech_readable(void *ctx, struct tcp_conn *c)
{
	unsigned k = (unsigned)(uintptr_t)ctx;
	uint8_t buf[2048];
	ssize_t n = -1;

	while (tcp_send_space(c) >= sizeof(buf) && (n = tcp_recv(c, buf, sizeof(buf))) > 0) {
		assert_int_equal(tcp_send(c, buf, (size_t)n), n);
		ech.echoed[k] += (size_t)n;
	}
	if (n == 0) {
		tcp_close(c); /* the peer is done: so are we */
		return;
	}
	if (ech.echoed[0] + ech.echoed[1] >= ech.next_move) {
		ech.next_move += 8192;
		assert_int_equal(us_migrate_defer(w.s[k].e, c, 1 - k), 0);
		ech.moves++;
	}
}

static void ech_accept(void *ctx, struct tcp_conn *c)
{
	unsigned k = (unsigned)(uintptr_t)ctx;

	ech.accepts[k]++;
	tcp_conn_set_ctx(c, ctx);
}

static void test_migrate_from_handler(void **state)
{
	static const struct tcp_callbacks cb = { .on_accept = ech_accept,
						 .on_readable = ech_readable,
						 .on_writable = ech_readable };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(ECHO_PORT),
				 .sin_addr.s_addr = htonl(H_OUR_IP) };
	struct end cli = { .eng = PEER, .dir = 0, .total = 64 * 1024, .echo = true };
	(void)state;

	memset(&ech, 0, sizeof(ech));
	ech.next_move = 8192;
	world_start(0);
	for (uintptr_t k = 0; k < 2; k++)
		assert_int_equal(tcp_listen(us_engine_tcp(w.s[k].e), NULL, ECHO_PORT, 0, &cb,
					    (void *)k), 0);
	us_sock_table_bind_thread(w.s[PEER].tab);
	cli.fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_connect(cli.fd, (struct sockaddr *)&a, sizeof(a)), -1);
	run(3);
	for (unsigned i = 0; i < 5000 && cli.rcvd < cli.total; i++) {
		end_pump(&cli);
		step(NULL);
	}
	assert_int_equal(cli.rcvd, cli.total);
	assert_true(ech.moves >= 4);
	assert_int_equal(ech.accepts[0] + ech.accepts[1], 1 + ech.moves);
	assert_true(ech.echoed[0] > 0 && ech.echoed[1] > 0); /* both served it */
	assert_int_equal(ctr(0, "migrate_out") + ctr(1, "migrate_out"), ech.moves);
	assert_int_equal(ctr(0, "migrate_in") + ctr(1, "migrate_in"), ech.moves);
	assert_int_equal(ctr(0, "migrate_failed") + ctr(1, "migrate_failed"), 0);
	assert_no_rst();
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_close(cli.fd), 0);
	run(10);
	assert_no_rst();
	world_finish();
}

/* The shape of interop-multi-memif-migrate (a corruption once seen there):
 * 3000-byte requests (three segments), each answered with its own bytes;
 * the handler moves the connection the moment it answered one and holds
 * nothing, like us-httpecho --migrate-every 1: the answer is still
 * unacked (it travels in the send queue), and the peer keeps two requests
 * outstanding, so the next one's segments reach the old engine in the
 * same burst as the move (they travel in the receive queue) or after it
 * (forwarded).  Every request has its own pattern: an answer shifted,
 * duplicated or taken from another request shows.  (The corruption itself
 * was us-loadgen's receive buffer shared by its engine threads, which no
 * script of the stack reaches; this pins the stack's side of it.) */
#define RR_PORT 82
#define RR_REQ 3000u
#define RR_COUNT 60u
static struct {
	uint8_t in[4 * RR_REQ];
	size_t in_len;
	unsigned answered, moves, accepts, carried_rx, carried_unacked;
} rr;

static uint8_t rr_pat(size_t off)
{
	return (uint8_t)((off / RR_REQ) * 31 + (off % RR_REQ) * 7 + 3);
}

static void rr_readable(void *ctx, struct tcp_conn *c)
{
	unsigned k = (unsigned)(uintptr_t)ctx;
	ssize_t n;

	while ((n = tcp_recv(c, rr.in + rr.in_len, sizeof(rr.in) - rr.in_len)) > 0)
		rr.in_len += (size_t)n;
	if (n == 0) {
		tcp_close(c);
		return;
	}
	if (rr.in_len < RR_REQ)
		return;
	assert_true(tcp_send_space(c) >= RR_REQ);
	assert_int_equal(tcp_send(c, rr.in, RR_REQ), RR_REQ);
	rr.answered++;
	rr.in_len -= RR_REQ;
	memmove(rr.in, rr.in + RR_REQ, rr.in_len);
	if (rr.in_len > 0)
		return; /* like us-httpecho: only a connection holding nothing */
	rr.carried_unacked += SEQ_LT(c->snd_una, c->snd_max) || c->sndq.bytes > 0;
	assert_int_equal(us_migrate_defer(w.s[k].e, c, 1 - k), 0);
	rr.moves++;
}

static void rr_accept(void *ctx, struct tcp_conn *c)
{
	rr.accepts++;
	rr.carried_rx += rr.accepts > 1 && c->rcvq.bytes > 0; /* a moved one */
	tcp_conn_set_ctx(c, ctx);
}

/* The peer: two requests at a time (one us_send each, Nagle off, so each
 * ends with its own segment and the pair reaches the server in one
 * burst) or one, the next once all answers are in, checked byte by byte. */
static void rr_client_pump(int fd, size_t *sent, size_t *rcvd)
{
	uint8_t buf[RR_REQ];
	ssize_t n;

	us_sock_table_bind_thread(w.s[PEER].tab);
	/* Pairs and single requests by turns: after a single one the
	 * connection waits on the other engine and the peer's next frames
	 * reach the old one first (forwarded). */
	unsigned want = (*sent / RR_REQ) % 3 == 0 ? 1 : 2;

	for (unsigned j = 0; j < want && *sent == *rcvd + j * RR_REQ && *sent < RR_COUNT * RR_REQ;
	     j++) {
		for (size_t i = 0; i < RR_REQ; i++)
			buf[i] = rr_pat(*sent + i);
		assert_int_equal(us_send(fd, buf, RR_REQ, 0), RR_REQ);
		*sent += RR_REQ;
	}
	while ((n = us_recv(fd, buf, sizeof(buf), 0)) > 0) {
		for (ssize_t i = 0; i < n; i++)
			assert_int_equal(buf[i], rr_pat(*rcvd + (size_t)i));
		*rcvd += (size_t)n;
	}
	assert_true(n < 0 && errno == EAGAIN);
}

static void test_migrate_request_response(void **state)
{
	static const struct tcp_callbacks cb = { .on_accept = rr_accept,
						 .on_readable = rr_readable };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(RR_PORT),
				 .sin_addr.s_addr = htonl(H_OUR_IP) };
	size_t sent = 0, rcvd = 0;
	int fd, one = 1;
	(void)state;

	memset(&rr, 0, sizeof(rr));
	world_start(0);
	for (uintptr_t k = 0; k < 2; k++)
		assert_int_equal(tcp_listen(us_engine_tcp(w.s[k].e), NULL, RR_PORT, 0, &cb,
					    (void *)k), 0);
	us_sock_table_bind_thread(w.s[PEER].tab);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_setsockopt(fd, US_IPPROTO_TCP, US_TCP_NODELAY, &one, sizeof(one)), 0);
	assert_int_equal(us_connect(fd, (struct sockaddr *)&a, sizeof(a)), -1);
	run(3);
	for (unsigned i = 0; i < 20000 && rcvd < RR_COUNT * RR_REQ; i++) {
		rr_client_pump(fd, &sent, &rcvd);
		step(NULL);
	}
	assert_int_equal(rcvd, RR_COUNT * RR_REQ);
	assert_int_equal(rr.answered, RR_COUNT);
	assert_true(rr.moves >= RR_COUNT / 2);
	assert_int_equal(rr.accepts, 1 + rr.moves);
	assert_true(rr.carried_unacked > 0); /* an answer in flight moved with it */
	assert_true(rr.carried_rx > 0);      /* and the next request's bytes */
	assert_int_equal(ctr(0, "migrate_out") + ctr(1, "migrate_out"), rr.moves);
	assert_int_equal(ctr(0, "migrate_in") + ctr(1, "migrate_in"), rr.moves);
	assert_int_equal(ctr(0, "migrate_failed") + ctr(1, "migrate_failed"), 0);
	assert_true(ctr(0, "migrate_redirected") + ctr(1, "migrate_redirected") > 0);
	assert_no_rst();
	us_sock_table_bind_thread(w.s[PEER].tab);
	assert_int_equal(us_close(fd), 0);
	run(10);
	assert_no_rst();
	world_finish();
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_migrate_mid_transfer),
		cmocka_unit_test(test_migrate_mid_transfer_rules),
		cmocka_unit_test(test_migrate_close_wait),
		cmocka_unit_test(test_migrate_icmp_follows),
		cmocka_unit_test(test_migrate_failures),
		cmocka_unit_test(test_migrate_keeps_timers),
		cmocka_unit_test(test_migrate_from_handler),
		cmocka_unit_test(test_migrate_request_response),
	};

	h_eal_init("us_pkt_migrate");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
