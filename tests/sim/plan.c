/* tests/sim/plan.c: see plan.h.  The ranges below are chosen so a world
 * stays honest (every loss recoverable within the retry budget unless a
 * fault says otherwise) and cheap on average (most worlds small, some
 * carrying megabytes), as a long run needs a hundred thousand of them. */
#include <math.h>
#include <string.h>

#include <rte_common.h>

#include "stack/base/timer.h"
#include "tests/sim/plan.h"
#include "tests/sim/rng.h"

/* Streams: one per element kind and index. */
enum { S_WORLD, S_STACK = 0x100, S_LINK = 0x200, S_CONV = 0x300, S_UDP = 0x400,
       S_FAULT = 0x500, /* 0x600: the world's own draws while it runs (world.c) */
       S_IP6 = 0x700, S_IP6_STACK = 0x800, S_IP6_CONV = 0x900, S_IP6_UDP = 0xa00,
       S_IP6_FAULT = 0xb00, S_OPT_CONV = 0xc00, S_LOSS_STACK = 0xd00 };

uint32_t sim_ip(unsigned stack)
{
	return 0x0a000001u + stack; /* 10.0.0.1 ... */
}

struct us_in6 sim_stack_addr(unsigned stack, unsigned family)
{
	/* fd00:5e::1 ...: a unique local address (RFC 4193), the last byte
	 * the IPv4 address's. */
	struct us_in6 a = { .b = { 0xfd, 0x00, 0x00, 0x5e, [15] = (uint8_t)sim_ip(stack) } };

	return family == 6 ? a : us_in6_of_v4(sim_ip(stack));
}

uint64_t sim_log(struct sim_rng *r, uint64_t lo, uint64_t hi)
{
	double l = log((double)lo), h = log((double)hi + 1);
	uint64_t v = (uint64_t)exp(l + (h - l) * sim_unit(r));

	return v < lo ? lo : v > hi ? hi : v;
}

static void draw_tcp(struct sim_rng *r, struct tcp_config *t)
{
	tcp_config_defaults(t);
	t->rcvbuf = (uint32_t)sim_log(r, 4096, 1u << 20);
	t->rcvbuf_max = sim_pct(r, 50) ? t->rcvbuf : (uint32_t)sim_range(r, t->rcvbuf, 4u << 20);
	t->sndbuf = (uint32_t)sim_log(r, 4096, 1u << 20);
	t->wscale = sim_pct(r, 85);
	t->sack = sim_pct(r, 85);
	t->timestamps = sim_pct(r, 85);
	t->nodelay_default = sim_pct(r, 30);
	t->recovery = (enum tcp_rec_alg)sim_below(r, TCP_REC_ALG_COUNT);
	t->cc = (enum tcp_cc_alg)sim_below(r, TCP_CC_ALG_COUNT);
	t->delack_ms = sim_pct(r, 70) ? 40 : (uint32_t)sim_range(r, 1, 200);
	t->time_wait_ms = sim_pct(r, 30) ? 60000 : (uint32_t)sim_range(r, 1000, 60000);
	t->syn_retries = (uint32_t)sim_range(r, 3, 7);
	t->data_retries = (uint32_t)sim_range(r, 6, 15);
	t->keepalive_idle_ms = (uint32_t)sim_range(r, 2000, 60000);
	t->keepalive_intvl_ms = (uint32_t)sim_range(r, 500, 10000);
	t->keepalive_probes = (uint32_t)sim_range(r, 2, 9);
	t->fastopen = (uint8_t)(sim_pct(r, 60) ? TCP_FASTOPEN_CLIENT | TCP_FASTOPEN_SERVER : 0);
	t->max_conns = 128;
	t->backlog = (uint32_t)sim_range(r, 4, 64);
}

/* Loss detection from a stream of its own (drawn after the rest, so a seed's
 * world is otherwise what it was): RACK or duplicate ACKs, TLP and undo
 * each on or off, so worlds run RACK-TLP on and off. */
static void draw_loss(struct sim_plan *p, unsigned i)
{
	struct sim_rng r = sim_rng_of(p->seed, S_LOSS_STACK + i);
	struct tcp_config *t = &p->stack[i].tcp;

	t->loss_detection = sim_pct(&r, 50) ? TCP_LOSS_RACK : TCP_LOSS_DUPACK;
	t->tlp = sim_pct(&r, 50);
	t->undo = sim_pct(&r, 50);
}

static void draw_stack(struct sim_plan *p, unsigned i)
{
	struct sim_rng r = sim_rng_of(p->seed, S_STACK + i);
	struct sim_stack_plan *s = &p->stack[i];

	s->engines = sim_pct(&r, 40) ? 2 : 1;
	draw_tcp(&r, &s->tcp);
	s->gso = sim_pct(&r, 70);
	s->gro = sim_pct(&r, 70);
}

/* One path a<->b, the same emulator settings each way (own seeds). */
static void draw_link(struct sim_plan *p, unsigned a, unsigned b)
{
	struct sim_rng r = sim_rng_of(p->seed, S_LINK + a * SIM_STACKS_MAX + b);
	struct nic_impair_params l;

	nic_impair_params_defaults(&l);
	l.delay_us = sim_log(&r, 20, 50000);
	l.jitter_us = sim_pct(&r, 50) ? 0 : sim_below(&r, l.delay_us / 2 + 1);
	if (sim_pct(&r, 50))
		l.loss_pct = 0.1 + 4.9 * sim_unit(&r);
	if (sim_pct(&r, 20)) {
		l.ge = true;
		l.ge_p = 0.001 + 0.02 * sim_unit(&r);
		l.ge_r = 0.2 + 0.5 * sim_unit(&r);
		l.ge_loss_bad = 0.5 + 0.5 * sim_unit(&r);
		l.ge_loss_good = 0;
	}
	if (sim_pct(&r, 25)) {
		l.reorder_pct = 0.5 + 4.5 * sim_unit(&r);
		l.reorder_gap_us = sim_log(&r, 100, 5000);
	}
	if (sim_pct(&r, 15))
		l.dup_pct = 0.5 + 2.5 * sim_unit(&r);
	if (sim_pct(&r, 30)) {
		l.rate_bps = sim_log(&r, 1000000, 1000000000);
		l.queue_bytes = sim_log(&r, 16384, 1u << 20);
	}
	l.seed = sim_u64(&r);
	p->link[a][b] = l;
	l.seed = sim_u64(&r);
	p->link[b][a] = l;
}

/* A stream length: mostly small, a few megabytes (1 B to 4 MiB).  The
 * big ones cost most of a long run's time, hence 1 in 40. */
static uint64_t draw_bytes(struct sim_rng *r)
{
	unsigned k = (unsigned)sim_below(r, 40);

	if (k < 8)
		return sim_below(r, 2);
	if (k < 26)
		return sim_log(r, 1, 2000);
	if (k < 39)
		return sim_log(r, 2000, 200000);
	return sim_log(r, 200000, 4u << 20);
}

static void draw_side(struct sim_rng *r, struct sim_side_plan *s)
{
	s->bytes = draw_bytes(r);
	s->chunk = (uint32_t)sim_log(r, 1, 65536);
	s->gap_ns = sim_pct(r, 50) ? 0 : US_US(sim_log(r, 100, 200000));
	s->read = sim_pct(r, 65) ? SIM_READ_FAST : sim_pct(r, 60) ? SIM_READ_SLOW : SIM_READ_STALL;
	s->read_max = (uint32_t)sim_log(r, 100, 65536);
	s->read_every_ns = US_US(sim_log(r, 500, 100000));
	s->stall_at_ns = US_MS(sim_below(r, 2000));
	s->stall_ns = US_MS(sim_log(r, 100, 30000));
	s->nodelay = sim_pct(r, 30);
	s->keepalive = sim_pct(r, 30);
}

/* A stream paced in small chunks would hold the world for hours: the
 * pauses of one stream add up to a minute at most, and its writes to a
 * few thousand. */
static void bound_pacing(struct sim_side_plan *s)
{
	uint64_t calls;

	/* At most ~2000 send calls per stream: a megabyte written a byte at a
	 * time with Nagle off is a million segments, all cost and no new
	 * path (small writes stay common on the small streams). */
	if (s->chunk < s->bytes / 2000)
		s->chunk = (uint32_t)(s->bytes / 2000);
	calls = s->bytes / s->chunk + 1;

	if (s->gap_ns > US_SEC(60) / calls)
		s->gap_ns = US_SEC(60) / calls;
}

/* A slow reader of a big stream would hold the world for hours: a reader
 * slower than the stream's length per minute reads fast instead. */
static void bound_slow(struct sim_side_plan *reader, uint64_t incoming)
{
	if (reader->read == SIM_READ_SLOW &&
	    (double)reader->read_max * US_SEC(60) / (double)reader->read_every_ns < (double)incoming)
		reader->read = SIM_READ_FAST;
}

static void draw_conv(struct sim_plan *p, unsigned k)
{
	struct sim_rng r = sim_rng_of(p->seed, S_CONV + k);
	struct sim_conv_plan *c = &p->conv[k];

	c->cli = (unsigned)sim_below(&r, p->nstacks);
	c->srv = (c->cli + 1 + (unsigned)sim_below(&r, p->nstacks - 1)) % p->nstacks;
	c->cli_eng = (unsigned)sim_below(&r, p->stack[c->cli].engines);
	c->start_ns = US_MS(sim_below(&r, 5000));
	draw_side(&r, &c->side[0]);
	draw_side(&r, &c->side[1]);
	bound_pacing(&c->side[0]);
	bound_pacing(&c->side[1]);
	bound_slow(&c->side[0], c->side[1].bytes);
	bound_slow(&c->side[1], c->side[0].bytes);
	c->tfo = sim_pct(&r, 30);
	c->end = sim_pct(&r, 10) ? SIM_END_ABORT : sim_pct(&r, 50) ? SIM_END_HALF : SIM_END_FULL;
	c->abort_side = (unsigned)sim_below(&r, 2);
	c->abort_after = sim_below(&r, c->side[!c->abort_side].bytes + 1);
	if (sim_pct(&r, 15)) {
		c->idle_at = sim_below(&r, c->side[0].bytes + 1);
		c->idle_ns = US_MS(sim_log(&r, 1000, 200000));
	}
	c->migrate = p->stack[c->srv].engines > 1 && sim_pct(&r, 30);
	c->migrate_after_ns = US_US(sim_log(&r, 1, 2000000));
}

static void draw_udp(struct sim_plan *p, unsigned k)
{
	struct sim_rng r = sim_rng_of(p->seed, S_UDP + k);
	struct sim_udp_plan *u = &p->udp[k];

	u->src = (unsigned)sim_below(&r, p->nstacks);
	u->dst = (u->src + 1 + (unsigned)sim_below(&r, p->nstacks - 1)) % p->nstacks;
	u->start_ns = US_MS(sim_below(&r, 5000));
	u->gap_ns = US_US(sim_log(&r, 10, 100000));
	u->count = (unsigned)sim_log(&r, 1, 200);
	u->size_max = (uint32_t)(sim_pct(&r, 20) ? sim_range(&r, 1500, 8000) : sim_log(&r, 8, 1472));
}

static void draw_fault(struct sim_plan *p, unsigned k)
{
	struct sim_rng r = sim_rng_of(p->seed, S_FAULT + k);
	struct sim_fault_plan *f = &p->fault[k];

	f->kind = (enum sim_fault_kind)sim_below(&r, SIM_F_KINDS);
	f->a = (unsigned)sim_below(&r, p->nstacks);
	f->b = (f->a + 1 + (unsigned)sim_below(&r, p->nstacks - 1)) % p->nstacks;
	f->at_ns = US_MS(sim_below(&r, 20000));
	f->dur_ns = US_MS(sim_log(&r, 100, 60000));
	f->loss_pct = (unsigned)sim_range(&r, 20, 90);
	f->mtu = (uint16_t)sim_range(&r, 576, 1400);
}

/* No [ip6]: everything over IPv4, on AF_INET sockets. */
static void ip4_only(struct sim_plan *p)
{
	p->ip6 = p->dad = false;
	for (unsigned i = 0; i < p->nstacks; i++)
		p->stack[i].dual = false;
	for (unsigned k = 0; k < p->nconvs; k++) {
		p->conv[k].family = 4;
		p->conv[k].mapped = false;
	}
	for (unsigned k = 0; k < p->nudp; k++)
		p->udp[k].family = 4;
}

/* The families, each element from its own stream (plan.h): half the
 * conversations and flows over IPv6; of the IPv4 conversations, a third
 * from an AF_INET6 socket (a v4-mapped peer). */
static void draw_ip6(struct sim_plan *p)
{
	struct sim_rng r = sim_rng_of(p->seed, S_IP6);

	p->ip6 = p->mtu >= SIM_IP6_MTU_MIN;
	p->dad = sim_pct(&r, 30);
	for (unsigned i = 0; i < p->nstacks; i++) {
		struct sim_rng s = sim_rng_of(p->seed, S_IP6_STACK + i);

		p->stack[i].dual = sim_pct(&s, 50);
	}
	for (unsigned k = 0; k < p->nconvs; k++) {
		struct sim_rng c = sim_rng_of(p->seed, S_IP6_CONV + k);

		p->conv[k].family = sim_pct(&c, 50) ? 6 : 4;
		p->conv[k].mapped = p->conv[k].family == 4 && sim_pct(&c, 33);
	}
	for (unsigned k = 0; k < p->nudp; k++) {
		struct sim_rng u = sim_rng_of(p->seed, S_IP6_UDP + k);

		p->udp[k].family = sim_pct(&u, 50) ? 6 : 4;
	}
	for (unsigned k = 0; k < p->nfaults; k++) {
		struct sim_rng f = sim_rng_of(p->seed, S_IP6_FAULT + k);

		p->fault[k].mtu6 = (uint16_t)sim_range(&f, SIM_IP6_MTU_MIN,
						       RTE_MAX(p->mtu - 20, SIM_IP6_MTU_MIN));
	}
	if (!p->ip6)
		ip4_only(p);
}

/* A conversation's socket options, from a stream of their own drawn
 * last, so a seed's world is otherwise the one it drew before them.  The
 * user timeout is long enough that only a fault or a lossy path (which
 * explain an ETIMEDOUT, verdict.c) can reach it. */
static void draw_conv_opts(struct sim_plan *p, unsigned k)
{
	struct sim_rng r = sim_rng_of(p->seed, S_OPT_CONV + k);
	struct sim_conv_plan *c = &p->conv[k];

	for (unsigned s = 0; s < 2; s++) {
		c->side[s].cork = sim_pct(&r, 15);
		c->side[s].more = !c->side[s].cork && sim_pct(&r, 15);
		c->side[s].peek = sim_pct(&r, 20);
	}
	c->user_timeout_ms = sim_pct(&r, 25) ? (uint32_t)sim_range(&r, 10000, 120000) : 0;
}

void sim_plan_draw(struct sim_plan *p, uint64_t seed)
{
	struct sim_rng r = sim_rng_of(seed, S_WORLD);

	memset(p, 0, sizeof(*p));
	p->seed = seed;
	p->nstacks = (unsigned)(sim_pct(&r, 60) ? sim_range(&r, 2, 3) : sim_range(&r, 2, SIM_STACKS_MAX));
	p->mtu = sim_pct(&r, 80) ? 1500 : (uint16_t)sim_range(&r, 576, 1500);
	p->nconvs = (unsigned)sim_log(&r, 1, SIM_CONVS_MAX);
	p->nudp = (unsigned)sim_below(&r, SIM_UDP_MAX + 1);
	p->nfaults = sim_pct(&r, 50) ? 0 : (unsigned)sim_range(&r, 1, SIM_FAULTS_MAX);
	for (unsigned i = 0; i < p->nstacks; i++)
		draw_stack(p, i);
	for (unsigned a = 0; a < p->nstacks; a++)
		for (unsigned b = a + 1; b < p->nstacks; b++)
			draw_link(p, a, b);
	for (unsigned k = 0; k < p->nconvs; k++)
		draw_conv(p, k);
	for (unsigned k = 0; k < p->nudp; k++)
		draw_udp(p, k);
	for (unsigned k = 0; k < p->nfaults; k++)
		draw_fault(p, k);
	draw_ip6(p);
	for (unsigned i = 0; i < p->nstacks; i++)
		draw_loss(p, i);
	for (unsigned k = 0; k < p->nconvs; k++)
		draw_conv_opts(p, k);
}

void sim_plan_cut(struct sim_plan *p, const struct sim_cut *cut)
{
	for (unsigned i = 0; i < p->nstacks; i++)
		p->stack[i].off = cut->stacks >> i & 1;
	for (unsigned k = 0; k < p->nconvs; k++) {
		struct sim_conv_plan *c = &p->conv[k];

		c->off = (cut->convs >> k & 1) || p->stack[c->cli].off || p->stack[c->srv].off;
	}
	for (unsigned k = 0; k < p->nudp; k++) {
		struct sim_udp_plan *u = &p->udp[k];

		u->off = (cut->udp >> k & 1) || p->stack[u->src].off || p->stack[u->dst].off;
	}
	for (unsigned k = 0; k < p->nfaults; k++) {
		struct sim_fault_plan *f = &p->fault[k];

		f->off = (cut->faults >> k & 1) || p->stack[f->a].off ||
			 (f->kind != SIM_F_RESTART && p->stack[f->b].off);
	}
	if (cut->ip4_only)
		ip4_only(p);
	if (cut->no_impair)
		for (unsigned a = 0; a < p->nstacks; a++)
			for (unsigned b = 0; b < p->nstacks; b++) {
				uint64_t seed = p->link[a][b].seed;

				nic_impair_params_defaults(&p->link[a][b]);
				p->link[a][b].seed = seed;
				p->link[a][b].delay_us = 100;
			}
}

static const char *const read_names[] = { "fast", "slow", "stall" };
static const char *const end_names[] = { "half-close", "close", "abort" };
static const char *const fault_names[] = { "partition", "loss", "mtu", "restart" };

static void print_stack(const struct sim_plan *p, unsigned i, FILE *f)
{
	const struct sim_stack_plan *s = &p->stack[i];
	char a4[US_IN6_STRLEN], a6[US_IN6_STRLEN] = "";
	struct us_in6 v4 = sim_stack_addr(i, 4), v6 = sim_stack_addr(i, 6);

	us_in6_str(&v4, a4, sizeof(a4));
	if (p->ip6)
		us_in6_str(&v6, a6, sizeof(a6));
	fprintf(f, "  stack %u: %s%s%s%s, %u engine(s), rcvbuf %u..%u sndbuf %u, sack %d ts %d ws %d, %s, %s tlp %d undo %d, %s, tfo %u, gso %d gro %d\n",
		i, a4, p->ip6 ? " " : "", a6,
		!p->ip6 ? "" : s->dual ? " (dual-stack sockets)" : " (a socket per family)",
		s->engines, s->tcp.rcvbuf, s->tcp.rcvbuf_max, s->tcp.sndbuf, s->tcp.sack,
		s->tcp.timestamps, s->tcp.wscale, tcp_rec_alg_name(s->tcp.recovery),
		tcp_loss_det_names[s->tcp.loss_detection], s->tcp.tlp, s->tcp.undo,
		tcp_cc_name(s->tcp.cc), s->tcp.fastopen, s->gso, s->gro);
}

static void print_conv(const struct sim_plan *p, unsigned k, FILE *f)
{
	const struct sim_conv_plan *c = &p->conv[k];
	struct us_in6 dst = sim_stack_addr(c->srv, c->family);
	char ep[US_IN6_EPSTRLEN];

	us_in6_endpoint_str(&dst, SIM_TCP_PORT, ep, sizeof(ep));
	fprintf(f, "  conv %u: %u/%u -> %u (%s, ipv%u%s) at %.3fs, %lu<->%lu bytes, read %s/%s, %s%s%s%s\n",
		k, c->cli, c->cli_eng, c->srv, ep, c->family, c->mapped ? " v4-mapped" : "",
		c->start_ns / 1e9, (unsigned long)c->side[0].bytes, (unsigned long)c->side[1].bytes,
		read_names[c->side[0].read], read_names[c->side[1].read], end_names[c->end],
		c->tfo ? ", tfo" : "", c->idle_ns ? ", idle" : "", c->migrate ? ", migrate" : "");
}

void sim_plan_print(const struct sim_plan *p, FILE *f)
{
	char spec[256];

	fprintf(f, "  world: %u stacks, mtu %u, %s\n", p->nstacks, p->mtu,
		!p->ip6 ? "ipv4 only" : p->dad ? "ipv4 and ipv6 (dad on)" : "ipv4 and ipv6 (dad off)");
	for (unsigned i = 0; i < p->nstacks; i++)
		if (!p->stack[i].off)
			print_stack(p, i, f);
	for (unsigned a = 0; a < p->nstacks; a++)
		for (unsigned b = 0; b < p->nstacks; b++)
			if (a != b && !p->stack[a].off && !p->stack[b].off) {
				nic_impair_format(&p->link[a][b], spec, sizeof(spec));
				fprintf(f, "  link %u->%u: %s\n", a, b, spec);
			}
	for (unsigned k = 0; k < p->nconvs; k++)
		if (!p->conv[k].off)
			print_conv(p, k, f);
	for (unsigned k = 0; k < p->nudp; k++)
		if (!p->udp[k].off)
			fprintf(f, "  udp %u: %u -> %u (ipv%u), %u datagrams up to %u bytes\n", k,
				p->udp[k].src, p->udp[k].dst, p->udp[k].family, p->udp[k].count,
				p->udp[k].size_max);
	for (unsigned k = 0; k < p->nfaults; k++) {
		const struct sim_fault_plan *x = &p->fault[k];

		if (x->off)
			continue;
		fprintf(f, "  fault %u: %s %u-%u at %.3fs for %.3fs", k, fault_names[x->kind],
			x->a, x->b, x->at_ns / 1e9, x->dur_ns / 1e9);
		if (x->kind == SIM_F_MTU && p->ip6)
			fprintf(f, " (%u, ipv6 %u)", x->mtu, x->mtu6);
		else if (x->kind == SIM_F_MTU)
			fprintf(f, " (%u)", x->mtu);
		fprintf(f, "\n");
	}
}
