/* nic/impair.c: the seeded link emulator stage (design in nic/impair.h) and
 * its spec parser.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "nic/impair.h"
#include "stack/base/rand.h"

#define IMPAIR_NS_PER_US 1000ull
#define IMPAIR_NS_PER_S 1000000000ull

/* One splitmix64 stream per decision, so that the decisions are independent
 * of which other impairments are switched on. */
enum impair_stream {
	IMPAIR_RNG_LOSS,
	IMPAIR_RNG_GE,
	IMPAIR_RNG_DUP,
	IMPAIR_RNG_REORDER,
	IMPAIR_RNG_JITTER,
	IMPAIR_RNG_COUNT
};

struct impair_slot {
	uint64_t dep_ns;
	uint64_t seq;          /* arrival order: ties depart first-in first-out */
	struct rte_mbuf *m;
};

struct nic_impair {
	struct nic_impair_params p;
	uint64_t rng[IMPAIR_RNG_COUNT];
	bool ge_bad;
	uint64_t link_free_ns; /* when the bottleneck finishes its last packet */
	uint64_t last_dep_ns;  /* departure of the last in-order packet */
	uint64_t seq;
	uint32_t n;            /* heap size */
	struct impair_slot *heap;
	struct nic_impair_stats stats;
};

/* PRNG: splitmix64 (stack/base/rand.h); any seed, zero included, is a good
 * state. */

/* Uniform in [0, 1) from the top 53 bits. */
static double impair_uniform(uint64_t *s)
{
	return (double)(us_splitmix64(s) >> 11) * 0x1.0p-53;
}

static bool impair_chance(uint64_t *s, double prob)
{
	return impair_uniform(s) < prob;
}

/* Heap: a min-heap on (dep_ns, seq) */

static bool slot_before(const struct impair_slot *a, const struct impair_slot *b)
{
	return a->dep_ns < b->dep_ns || (a->dep_ns == b->dep_ns && a->seq < b->seq);
}

static void heap_push(struct nic_impair *imp, struct impair_slot s)
{
	uint32_t i = imp->n++;

	while (i > 0) {
		uint32_t parent = (i - 1) / 2;

		if (!slot_before(&s, &imp->heap[parent]))
			break;
		imp->heap[i] = imp->heap[parent];
		i = parent;
	}
	imp->heap[i] = s;
}

static struct impair_slot heap_pop(struct nic_impair *imp)
{
	struct impair_slot top = imp->heap[0];
	struct impair_slot last = imp->heap[--imp->n];
	uint32_t i = 0;

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= imp->n)
			break;
		if (c + 1 < imp->n && slot_before(&imp->heap[c + 1], &imp->heap[c]))
			c++;
		if (!slot_before(&imp->heap[c], &last))
			break;
		imp->heap[i] = imp->heap[c];
		i = c;
	}
	if (imp->n > 0)
		imp->heap[i] = last;
	return top;
}

/* Stage */

void nic_impair_params_defaults(struct nic_impair_params *p)
{
	memset(p, 0, sizeof(*p));
	p->seed = 1;
	p->reorder_gap_us = NIC_IMPAIR_DEFAULT_GAP_US;
	p->queue_bytes = NIC_IMPAIR_DEFAULT_QUEUE;
	p->limit = NIC_IMPAIR_DEFAULT_LIMIT;
}

static bool pct_ok(double v)
{
	return v >= 0.0 && v <= 100.0;
}

static bool prob_ok(double v)
{
	return v >= 0.0 && v <= 1.0;
}

static bool params_ok(const struct nic_impair_params *p)
{
	return pct_ok(p->loss_pct) && pct_ok(p->reorder_pct) && pct_ok(p->dup_pct) &&
	       prob_ok(p->ge_p) && prob_ok(p->ge_r) && prob_ok(p->ge_loss_bad) &&
	       prob_ok(p->ge_loss_good) && p->limit > 0 &&
	       (p->rate_bps == 0 || p->queue_bytes > 0);
}

struct nic_impair *nic_impair_create(const struct nic_impair_params *p)
{
	struct nic_impair *imp;
	uint64_t sm;

	if (p == NULL || !params_ok(p)) {
		errno = EINVAL;
		return NULL;
	}
	imp = calloc(1, sizeof(*imp));
	if (imp == NULL)
		return NULL;
	imp->heap = calloc(p->limit, sizeof(*imp->heap));
	if (imp->heap == NULL) {
		free(imp);
		errno = ENOMEM;
		return NULL;
	}
	imp->p = *p;
	/* Stream seeds are themselves drawn from a splitmix64 on the seed, so
	 * neighbouring seeds give unrelated streams. */
	sm = p->seed;
	for (int i = 0; i < IMPAIR_RNG_COUNT; i++)
		imp->rng[i] = us_splitmix64(&sm);
	return imp;
}

void nic_impair_destroy(struct nic_impair *imp)
{
	if (imp == NULL)
		return;
	while (imp->n > 0) {
		rte_pktmbuf_free(heap_pop(imp).m);
		imp->stats.flushed++;
	}
	free(imp->heap);
	free(imp);
}

/* Step 1: true if the packet is lost; the loss is counted here (Bernoulli
 * first when both fire), the caller frees.  Both models draw for every
 * packet. */
static bool impair_lose(struct nic_impair *imp)
{
	const struct nic_impair_params *p = &imp->p;
	bool random = false, burst = false;

	if (p->loss_pct > 0.0)
		random = impair_chance(&imp->rng[IMPAIR_RNG_LOSS], p->loss_pct / 100.0);
	if (p->ge) {
		uint64_t *s = &imp->rng[IMPAIR_RNG_GE];

		/* Move first, then lose with the new state's probability, so a bad
		 * sojourn of n packets (geometric, mean 1/r) loses n packets when
		 * 1-h = 1. */
		if (imp->ge_bad ? impair_chance(s, p->ge_r) : impair_chance(s, p->ge_p))
			imp->ge_bad = !imp->ge_bad;
		burst = impair_chance(s, imp->ge_bad ? p->ge_loss_bad : p->ge_loss_good);
	}
	if (random)
		imp->stats.dropped_random++;
	else if (burst)
		imp->stats.dropped_burst++;
	return random || burst;
}

/* Step 3: when the packet leaves the bottleneck, or UINT64_MAX if the queue
 * is full.  The backlog is what the link still has to send at now_ns. */
static uint64_t impair_bottleneck(struct nic_impair *imp, uint32_t bytes, uint64_t now_ns)
{
	const struct nic_impair_params *p = &imp->p;
	uint64_t start, tx_ns, backlog = 0;

	if (p->rate_bps == 0)
		return now_ns;
	if (imp->link_free_ns > now_ns)
		backlog = (uint64_t)(((unsigned __int128)(imp->link_free_ns - now_ns) *
				      p->rate_bps + 8 * IMPAIR_NS_PER_S - 1) / (8 * IMPAIR_NS_PER_S));
	if (backlog + bytes > p->queue_bytes)
		return UINT64_MAX;
	start = imp->link_free_ns > now_ns ? imp->link_free_ns : now_ns;
	/* Rounded up so back-to-back packets are never closer than the rate
	 * allows. */
	tx_ns = (uint64_t)(((unsigned __int128)bytes * 8 * IMPAIR_NS_PER_S + p->rate_bps - 1) /
			   p->rate_bps);
	imp->link_free_ns = start + tx_ns;
	return imp->link_free_ns;
}

/* Step 4 and 5: the departure of a packet that left the bottleneck at t. */
static uint64_t impair_departure(struct nic_impair *imp, uint64_t t)
{
	const struct nic_impair_params *p = &imp->p;
	uint64_t dep = t + p->delay_us * IMPAIR_NS_PER_US;

	if (p->jitter_us > 0) {
		uint64_t j = p->jitter_us * IMPAIR_NS_PER_US;
		uint64_t r = us_splitmix64(&imp->rng[IMPAIR_RNG_JITTER]) % (2 * j + 1);

		/* dep + r - j, clamped at t: a packet never leaves before it arrived. */
		dep = (dep + r >= t + j) ? dep + r - j : t;
	}
	if (dep < imp->last_dep_ns)
		dep = imp->last_dep_ns;
	if (p->reorder_pct > 0.0 &&
	    impair_chance(&imp->rng[IMPAIR_RNG_REORDER], p->reorder_pct / 100.0)) {
		imp->stats.reordered++;
		return dep + p->reorder_gap_us * IMPAIR_NS_PER_US;
	}
	imp->last_dep_ns = dep;
	return dep;
}

/* Steps 3-5 for one packet (an original or a copy). */
static void impair_schedule(struct nic_impair *imp, struct rte_mbuf *m, uint64_t now_ns)
{
	uint64_t t, dep;

	if (imp->n >= imp->p.limit) {
		imp->stats.dropped_limit++;
		rte_pktmbuf_free(m);
		return;
	}
	t = impair_bottleneck(imp, rte_pktmbuf_pkt_len(m), now_ns);
	if (t == UINT64_MAX) {
		imp->stats.dropped_queue_full++;
		rte_pktmbuf_free(m);
		return;
	}
	dep = impair_departure(imp, t);
	if (dep > now_ns)
		imp->stats.delayed++;
	heap_push(imp, (struct impair_slot){ .dep_ns = dep, .seq = imp->seq++, .m = m });
}

void nic_impair_enqueue(struct nic_impair *imp, struct rte_mbuf **pkts, uint16_t n,
			uint64_t now_ns)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i], *copy = NULL;

		imp->stats.enqueued++;
		if (impair_lose(imp)) {
			rte_pktmbuf_free(m);
			continue;
		}
		if (imp->p.dup_pct > 0.0 &&
		    impair_chance(&imp->rng[IMPAIR_RNG_DUP], imp->p.dup_pct / 100.0)) {
			copy = rte_pktmbuf_copy(m, m->pool, 0, UINT32_MAX);
			if (copy != NULL)
				imp->stats.duplicated++;
			else
				imp->stats.dup_no_mbuf++;
		}
		impair_schedule(imp, m, now_ns);
		if (copy != NULL)
			impair_schedule(imp, copy, now_ns);
	}
}

uint16_t nic_impair_dequeue(struct nic_impair *imp, struct rte_mbuf **out, uint16_t max,
			    uint64_t now_ns)
{
	uint16_t k = 0;

	while (k < max && imp->n > 0 && imp->heap[0].dep_ns <= now_ns)
		out[k++] = heap_pop(imp).m;
	imp->stats.passed += k;
	return k;
}

uint64_t nic_impair_next_ns(const struct nic_impair *imp)
{
	return imp->n > 0 ? imp->heap[0].dep_ns : UINT64_MAX;
}

uint32_t nic_impair_pending(const struct nic_impair *imp)
{
	return imp->n;
}

const struct nic_impair_stats *nic_impair_stats(const struct nic_impair *imp)
{
	return &imp->stats;
}

void nic_impair_stats_print(const struct nic_impair *imp, const char *prefix, FILE *f)
{
#define NIC_IMPAIR_X_PRINT(name, desc) \
	fprintf(f, "%s%-20s %12" PRIu64 "  # %s\n", prefix, #name, imp->stats.name, desc);
	NIC_IMPAIR_COUNTERS(NIC_IMPAIR_X_PRINT)
#undef NIC_IMPAIR_X_PRINT
}

/* Spec parser */

/* A number at the start of s: digits with an optional fraction, no sign.
 * *end is set past it. */
static int spec_number(const char *s, double *v, const char **end)
{
	char buf[32], *e;
	size_t n = strspn(s, "0123456789.");

	/* Copied so strtod cannot read "0x1p3", "inf" or an exponent. */
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	*v = strtod(buf, &e);
	if (*e != '\0')
		return -EINVAL;
	*end = s + n;
	return 0;
}

struct spec_unit {
	const char *name;
	double scale;
};

/* number followed by exactly one of the units; the result is scaled. */
static int spec_scaled(const char *s, const struct spec_unit *units, double *out)
{
	const char *end;
	double v;

	if (spec_number(s, &v, &end) < 0)
		return -EINVAL;
	for (const struct spec_unit *u = units; u->name != NULL; u++)
		if (strcmp(end, u->name) == 0) {
			*out = v * u->scale;
			return 0;
		}
	return -EINVAL;
}

static int spec_duration(const char *s, uint64_t *us, char *why, size_t len)
{
	static const struct spec_unit units[] = {
		{ "us", 1 }, { "ms", 1e3 }, { "s", 1e6 }, { NULL, 0 } };
	double v;

	if (spec_scaled(s, units, &v) < 0 || v > 1e12) {
		snprintf(why, len, "expected a time with a unit us, ms or s, like 50ms");
		return -EINVAL;
	}
	*us = (uint64_t)(v + 0.5);
	return 0;
}

static int spec_pct(const char *s, double *pct, char *why, size_t len)
{
	static const struct spec_unit units[] = { { "%", 1 }, { NULL, 0 } };

	if (spec_scaled(s, units, pct) < 0 || !pct_ok(*pct)) {
		snprintf(why, len, "expected a percentage 0..100 with %%, like 1%%");
		return -EINVAL;
	}
	return 0;
}

static int spec_rate(const char *s, uint64_t *bps, char *why, size_t len)
{
	static const struct spec_unit units[] = {
		{ "bit", 1 }, { "kbit", 1e3 }, { "mbit", 1e6 }, { "gbit", 1e9 }, { NULL, 0 } };
	double v;

	if (spec_scaled(s, units, &v) < 0 || v < 1.0 || v > 1e13) {
		snprintf(why, len, "expected a rate of at least 1bit with a unit bit, kbit, "
			 "mbit or gbit, like 100mbit");
		return -EINVAL;
	}
	*bps = (uint64_t)(v + 0.5);
	return 0;
}

static int spec_bytes(const char *s, uint64_t *bytes, char *why, size_t len)
{
	static const struct spec_unit units[] = {
		{ "b", 1 }, { "kb", 1024 }, { "mb", 1024 * 1024 }, { NULL, 0 } };
	double v;

	if (spec_scaled(s, units, &v) < 0 || v < 1.0 || v > 1e12) {
		snprintf(why, len, "expected a size of at least 1b with a unit b, kb or mb, "
			 "like 256kb");
		return -EINVAL;
	}
	*bytes = (uint64_t)(v + 0.5);
	return 0;
}

static int spec_u64(const char *s, uint64_t max, uint64_t *out, char *why, size_t len)
{
	char *e;

	errno = 0;
	if (*s >= '0' && *s <= '9')
		*out = strtoull(s, &e, 10);
	if (!(*s >= '0' && *s <= '9') || errno != 0 || *e != '\0' || *out > max) {
		snprintf(why, len, "expected a whole number 0..%" PRIu64, max);
		return -EINVAL;
	}
	return 0;
}

/* One ge field: a probability 0..1, or a percentage with %. */
static int spec_prob(const char *s, double *p)
{
	const char *end;

	if (spec_number(s, p, &end) < 0)
		return -EINVAL;
	if (strcmp(end, "%") == 0)
		*p /= 100.0;
	else if (*end != '\0')
		return -EINVAL;
	return prob_ok(*p) ? 0 : -EINVAL;
}

/* ge=p[:r[:1-h[:1-k]]], netem's defaults for the missing ones: r = 1-p,
 * 1-h = 1, 1-k = 0. */
static int spec_ge(const char *s, struct nic_impair_params *p, char *why, size_t len)
{
	double v[4] = { 0, 0, 1, 0 };
	char buf[128], *save = NULL, *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ":", &save); tok != NULL; tok = strtok_r(NULL, ":", &save)) {
		if (n == 4 || spec_prob(tok, &v[n]) < 0) {
			snprintf(why, len, "expected p[:r[:1-h[:1-k]]], each a probability 0..1 "
				 "or n%%, like 0.01:0.3:1:0 (field %d is wrong)", n + 1);
			return -EINVAL;
		}
		n++;
	}
	if (n == 0 || s[strlen(s) - 1] == ':' || strstr(s, "::") != NULL) {
		snprintf(why, len, "expected p[:r[:1-h[:1-k]]], like 0.01:0.3:1:0");
		return -EINVAL;
	}
	if (n == 1)
		v[1] = 1.0 - v[0];
	p->ge = true;
	p->ge_p = v[0];
	p->ge_r = v[1];
	p->ge_loss_bad = v[2];
	p->ge_loss_good = v[3];
	return 0;
}

/* Bits of nic_impair_params an item set, for the cross-item checks. */
enum spec_seen {
	SPEC_SEEN_QUEUE = 1u << 0,
	SPEC_SEEN_RATE = 1u << 1,
	SPEC_SEEN_GAP = 1u << 2,
	SPEC_SEEN_REORDER = 1u << 3,
};

/* One key=value item; why says what is wrong with the value. */
static int spec_item(const char *key, const char *val, struct nic_impair_params *p,
		     unsigned *seen, char *why, size_t len)
{
	uint64_t u;
	int rc;

	if (strcmp(key, "delay") == 0)
		return spec_duration(val, &p->delay_us, why, len);
	if (strcmp(key, "jitter") == 0)
		return spec_duration(val, &p->jitter_us, why, len);
	if (strcmp(key, "loss") == 0)
		return spec_pct(val, &p->loss_pct, why, len);
	if (strcmp(key, "ge") == 0)
		return spec_ge(val, p, why, len);
	if (strcmp(key, "reorder") == 0) {
		*seen |= SPEC_SEEN_REORDER;
		return spec_pct(val, &p->reorder_pct, why, len);
	}
	if (strcmp(key, "reorder_gap") == 0) {
		*seen |= SPEC_SEEN_GAP;
		return spec_duration(val, &p->reorder_gap_us, why, len);
	}
	if (strcmp(key, "dup") == 0)
		return spec_pct(val, &p->dup_pct, why, len);
	if (strcmp(key, "rate") == 0) {
		*seen |= SPEC_SEEN_RATE;
		return spec_rate(val, &p->rate_bps, why, len);
	}
	if (strcmp(key, "queue") == 0) {
		*seen |= SPEC_SEEN_QUEUE;
		return spec_bytes(val, &p->queue_bytes, why, len);
	}
	if (strcmp(key, "seed") == 0)
		return spec_u64(val, UINT64_MAX, &p->seed, why, len);
	if (strcmp(key, "limit") == 0) {
		rc = spec_u64(val, 10000000, &u, why, len);
		if (rc < 0)
			return rc;
		if (u == 0) {
			snprintf(why, len, "the limit must be at least 1 packet");
			return -EINVAL;
		}
		p->limit = (uint32_t)u;
		return 0;
	}
	snprintf(why, len, "unknown key (known: delay, jitter, loss, ge, reorder, "
		 "reorder_gap, dup, rate, queue, limit, seed)");
	return -EINVAL;
}

static int spec_cross(unsigned seen, char *err, size_t errlen)
{
	if ((seen & SPEC_SEEN_QUEUE) && !(seen & SPEC_SEEN_RATE)) {
		snprintf(err, errlen, "impairment: 'queue' needs 'rate' (the queue is the "
			 "bottleneck's)");
		return -EINVAL;
	}
	if ((seen & SPEC_SEEN_GAP) && !(seen & SPEC_SEEN_REORDER)) {
		snprintf(err, errlen, "impairment: 'reorder_gap' needs 'reorder'");
		return -EINVAL;
	}
	return 0;
}

int nic_impair_parse(const char *spec, struct nic_impair_params *out, char *err, size_t errlen)
{
	struct nic_impair_params p;
	char item[160], why[200];
	unsigned seen = 0;
	int idx = 0;

	nic_impair_params_defaults(&p);
	if (spec == NULL || spec[0] == '\0' || strcmp(spec, "none") == 0) {
		*out = p;
		return 0;
	}
	for (const char *s = spec;; s++) {
		size_t n = strcspn(s, ",");
		char *eq;

		idx++;
		if (n >= sizeof(item)) {
			snprintf(err, errlen, "impairment item %d: longer than %zu characters",
				 idx, sizeof(item) - 1);
			return -EINVAL;
		}
		memcpy(item, s, n);
		item[n] = '\0';
		eq = strchr(item, '=');
		if (eq == NULL || eq == item || eq[1] == '\0') {
			snprintf(err, errlen, "impairment item %d '%s': expected key=value", idx,
				 item);
			return -EINVAL;
		}
		*eq = '\0';
		if (spec_item(item, eq + 1, &p, &seen, why, sizeof(why)) < 0) {
			*eq = '=';
			snprintf(err, errlen, "impairment item %d '%s': %s", idx, item, why);
			return -EINVAL;
		}
		s += n;
		if (*s == '\0')
			break;
	}
	if (spec_cross(seen, err, errlen) < 0)
		return -EINVAL;
	*out = p;
	return 0;
}

void nic_impair_format(const struct nic_impair_params *p, char *buf, size_t len)
{
	int n = snprintf(buf, len, "delay=%" PRIu64 "us,jitter=%" PRIu64 "us,loss=%g%%,"
			 "dup=%g%%,limit=%u,seed=%" PRIu64, p->delay_us, p->jitter_us,
			 p->loss_pct, p->dup_pct, (unsigned)p->limit, p->seed);

	if (n >= 0 && (size_t)n < len && p->ge)
		n += snprintf(buf + n, len - (size_t)n, ",ge=%g:%g:%g:%g", p->ge_p, p->ge_r,
			      p->ge_loss_bad, p->ge_loss_good);
	if (n >= 0 && (size_t)n < len && p->reorder_pct > 0.0)
		n += snprintf(buf + n, len - (size_t)n, ",reorder=%g%%,reorder_gap=%" PRIu64 "us",
			      p->reorder_pct, p->reorder_gap_us);
	if (n >= 0 && (size_t)n < len && p->rate_bps > 0)
		snprintf(buf + n, len - (size_t)n, ",rate=%" PRIu64 "bit,queue=%" PRIu64 "b",
			 p->rate_bps, p->queue_bytes);
}
