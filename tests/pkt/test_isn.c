/* Packet scripts: the ISN generator (tcp/tcb.c tcp_isn, RFC 6528 as RFC
 * 9293 3.4.1 asks): ISN = M + F(localip, localport, remoteip, remoteport,
 * secretkey), F SipHash under a key of 16 random bytes drawn per stack.
 * MUST-9 (F not computable from outside) rests on that key; what a test
 * can show is that nothing but the key links ISNs: two stacks at the same
 * moment give unrelated ISNs for the same 4-tuples, and within one stack
 * neighbouring 4-tuples give unrelated ISNs (no offset or pattern an
 * observer of one connection could carry to another). */
#include "tests/pkt/harness.h"

#include <stdlib.h>

#define N 256

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Distinct values among n (sorts v). */
static unsigned distinct(uint32_t *v, unsigned n)
{
	unsigned d = n > 0;

	qsort(v, n, sizeof(*v), cmp_u32);
	for (unsigned i = 1; i < n; i++)
		d += v[i] != v[i - 1];
	return d;
}

static uint32_t isn_of(struct tcp_stack *ts, uint16_t rport)
{
	return tcp_isn(ts, PKT_LOCAL_IP, PKT_LOCAL_PORT, PKT_PEER_IP, rport);
}

/* Two stacks (two keys) at the same virtual time: the difference between
 * their ISNs for a 4-tuple changes with every 4-tuple, so one stack's ISNs
 * say nothing about the other's. */
static void test_isn_depends_on_the_key(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_stack *other = tcp_stack_create(&t->env, &t->cfg);
	uint32_t diff[N];

	assert_non_null(other);
	for (unsigned i = 0; i < N; i++)
		diff[i] = isn_of(t->ts, (uint16_t)(40000 + i)) - isn_of(other, (uint16_t)(40000 + i));
	assert_true(distinct(diff, N) >= N - 2);
	tcp_stack_destroy(other);
	FINISH(t, 0);
}

/* One stack: the ISNs of neighbouring ports differ by no fixed step, and
 * about half their bits (a PRF's avalanche; a counter or a linear hash
 * would flip a few). */
static void test_isn_unrelated_across_tuples(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	uint32_t step[N - 1];
	unsigned flipped = 0;

	for (unsigned i = 0; i + 1 < N; i++) {
		uint32_t a = isn_of(t->ts, (uint16_t)(40000 + i));
		uint32_t b = isn_of(t->ts, (uint16_t)(40001 + i));

		step[i] = b - a;
		flipped += (unsigned)__builtin_popcount(a ^ b);
	}
	assert_true(distinct(step, N - 1) >= N - 3);
	/* 16 bits on average; 255 pairs keep the mean within 14..18. */
	assert_in_range(flipped / (N - 1), 14, 18);
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_isn_depends_on_the_key),
		PKT_TEST(test_isn_unrelated_across_tuples),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
