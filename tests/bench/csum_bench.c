/* tests/bench/csum_bench.c: TSC cycles per byte of every checksum and
 * copy-and-checksum variant (tests/bench/csum_variants.h) against memcpy.
 *
 *   build/tests/bench/csum_bench [--runs 9] [--bytes 4194304] [--offset 0]
 *                                [--cpu N] [--sizes 20,64,...] [--only NAME]
 *
 * Each measurement calls one variant on one warm buffer until about --bytes
 * bytes have been summed and divides the TSC ticks by the bytes; a run
 * measures every variant at every size once (interleaved, so a burst of
 * load from a neighbour hits all of them alike), and the table shows the
 * median of --runs runs.  Not a test: it asserts nothing about timings.
 *
 * --only runs the one variant named NAME (as the table names it): under
 * callgrind, two runs with different --bytes give its instructions per
 * call, (Ir2 - Ir1) / (calls2 - calls1).
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "tests/bench/csum_variants.h"

#define MAX_SIZES 16
#define MAX_RUNS 101
#define BUF_MAX (65536 + 64)

struct opts {
	unsigned runs;
	size_t bytes;
	size_t offset;
	int cpu;
	size_t sizes[MAX_SIZES];
	unsigned nsizes;
	const char *only;
};

/* One row of the table: a name and something to time on (dst, src, len). */
struct row {
	const char *name;
	uint16_t (*sum)(const void *, size_t);
	uint16_t (*copy)(void *, const void *, size_t);
	double cpb[MAX_SIZES][MAX_RUNS];
};

static _Alignas(64) uint8_t src_buf[BUF_MAX];
static _Alignas(64) uint8_t dst_buf[BUF_MAX];
static volatile uint32_t sink;

static double measure(const struct row *r, size_t len, size_t off, size_t bytes)
{
	size_t iters = bytes / len < 200 ? 200 : bytes / len;
	const uint8_t *s = src_buf + off;
	uint8_t *d = dst_buf + off;
	uint32_t acc = 0;
	uint64_t t0, t1;

	/* Warm the buffers and the branch predictors. */
	for (size_t i = 0; i < 16; i++)
		acc += r->sum ? r->sum(s, len) : r->copy ? r->copy(d, s, len) : (memcpy(d, s, len), 0u);
	t0 = rte_rdtsc_precise();
	if (r->sum != NULL)
		for (size_t i = 0; i < iters; i++)
			acc += r->sum(s, len);
	else if (r->copy != NULL)
		for (size_t i = 0; i < iters; i++)
			acc += r->copy(d, s, len);
	else
		for (size_t i = 0; i < iters; i++) {
			memcpy(d, s, len);
			__asm__ volatile("" : : "r"(d) : "memory"); /* keep every copy */
		}
	t1 = rte_rdtsc_precise();
	sink += acc;
	return (double)(t1 - t0) / (double)iters / (double)len;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const double *v, unsigned n)
{
	double tmp[MAX_RUNS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static void print_table(const char *title, struct row *rows, unsigned n, const struct opts *o)
{
	printf("\n%s: TSC cycles per byte, median of %u runs\n| variant |", title, o->runs);
	for (unsigned s = 0; s < o->nsizes; s++)
		printf(" %zu B |", o->sizes[s]);
	printf("\n|---|");
	for (unsigned s = 0; s < o->nsizes; s++)
		printf("---:|");
	printf("\n");
	for (unsigned i = 0; i < n; i++) {
		printf("| %s |", rows[i].name);
		for (unsigned s = 0; s < o->nsizes; s++)
			printf(" %.3f |", median(rows[i].cpb[s], o->runs));
		printf("\n");
	}
}

static int parse_sizes(const char *arg, struct opts *o)
{
	char *end;

	o->nsizes = 0;
	do {
		unsigned long v = strtoul(arg, &end, 10);

		if (end == arg || v == 0 || v > 65536 || o->nsizes == MAX_SIZES)
			return -EINVAL;
		o->sizes[o->nsizes++] = v;
		arg = end + (*end == ',');
	} while (*end == ',');
	return *end == '\0' ? 0 : -EINVAL;
}

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{"runs", required_argument, NULL, 'r'}, {"bytes", required_argument, NULL, 'b'},
		{"offset", required_argument, NULL, 'o'}, {"cpu", required_argument, NULL, 'c'},
		{"sizes", required_argument, NULL, 's'}, {"only", required_argument, NULL, 'n'},
		{NULL, 0, NULL, 0},
	};
	int ch;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		if (ch == 'r')
			o->runs = (unsigned)atoi(optarg);
		else if (ch == 'b')
			o->bytes = strtoul(optarg, NULL, 0);
		else if (ch == 'o')
			o->offset = strtoul(optarg, NULL, 0);
		else if (ch == 'c')
			o->cpu = atoi(optarg);
		else if (ch == 'n')
			o->only = optarg;
		else if (ch != 's' || parse_sizes(optarg, o) < 0)
			return -EINVAL;
	}
	if (o->runs == 0 || o->runs > MAX_RUNS || o->bytes == 0 || o->offset > 63)
		return -EINVAL;
	return 0;
}

static bool wanted(const struct opts *o, const char *name, bool (*usable)(void))
{
	return csum_variant_usable(usable) && (o->only == NULL || strcmp(name, o->only) == 0);
}

static void run_all(struct row *rows, unsigned n, const struct opts *o)
{
	for (unsigned r = 0; r < o->runs; r++)
		for (unsigned s = 0; s < o->nsizes; s++)
			for (unsigned i = 0; i < n; i++)
				rows[i].cpb[s][r] = measure(&rows[i], o->sizes[s], o->offset, o->bytes);
}

int main(int argc, char **argv)
{
	struct opts o = {.runs = 9, .bytes = 4u << 20, .cpu = -1,
			 .sizes = {20, 64, 512, 1460, 4096, 9000, 65536}, .nsizes = 7};
	static struct row rows[32];
	unsigned n = 0, n_sum;

	if (parse_opts(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: %s [--runs N (1..%d)] [--bytes B] [--offset 0..63] [--cpu N] "
			"[--sizes a,b,...] [--only NAME]\n", argv[0], MAX_RUNS);
		return 2;
	}
	if (o.cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set) < 0)
			perror("sched_setaffinity");
	}
	for (size_t i = 0; i < BUF_MAX; i++)
		src_buf[i] = (uint8_t)(i * 131 + 7);
	for (unsigned i = 0; i < csum_variants_n; i++)
		if (csum_variants[i].sum != csum_ref &&
		    wanted(&o, csum_variants[i].name, csum_variants[i].usable))
			rows[n++] = (struct row){.name = csum_variants[i].name, .sum = csum_variants[i].sum};
	n_sum = n;
	if (wanted(&o, "memcpy alone", NULL))
		rows[n++] = (struct row){.name = "memcpy alone"};
	for (unsigned i = 0; i < csum_copy_variants_n; i++)
		if (wanted(&o, csum_copy_variants[i].name, csum_copy_variants[i].usable))
			rows[n++] = (struct row){.name = csum_copy_variants[i].name,
						 .copy = csum_copy_variants[i].copy};
#if defined(__x86_64__)
	printf("csum_bench: avx2 %d avx512f %d adx %d; ", __builtin_cpu_supports("avx2") != 0,
	       __builtin_cpu_supports("avx512f") != 0, __builtin_cpu_supports("adx") != 0);
#endif
	printf("offset %zu, %zu bytes per measurement\n", o.offset, o.bytes);
	run_all(rows, n, &o);
	print_table("sum", rows, n_sum, &o);
	print_table("copy and sum", rows + n_sum, n - n_sum, &o);
	return 0;
}
