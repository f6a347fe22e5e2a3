/* tcp/sent_log.c: what RACK's record of the flight keeps.  A burst sent at
 * one instant is one range; a SACK block, an ACK or a retransmission cut
 * it where they start or end inside it (a segment of several MSS, or one
 * sent before the MSS changed); touching ranges alike join again; the
 * acknowledged front goes, and with it the memory grown beyond the first
 * allocation; a full record refuses what it cannot hold.  Sequence
 * numbers wrap (RFC 9293 3.4). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp/sent_log.h"

#define MSS 1460u

static uint32_t count(const struct tcp_slog *l)
{
	return l->n - l->lo;
}

static const struct tcp_slog_ent *at(const struct tcp_slog *l, uint32_t k)
{
	return &l->e[l->lo + k];
}

static void expect_ent(const struct tcp_slog *l, uint32_t k, uint32_t start, uint32_t end,
		       uint64_t t, uint8_t flags)
{
	assert_true(k < count(l));
	assert_int_equal(at(l, k)->start, start);
	assert_int_equal(at(l, k)->end, end);
	assert_int_equal(at(l, k)->xmit_ns, t);
	assert_int_equal(at(l, k)->flags, flags);
}

/* One instant, one range; another instant or other flags, another. */
static void test_append_coalesces_bursts(void **state)
{
	struct tcp_slog l = { 0 };

	(void)state;
	assert_true(tcp_slog_empty(&l));
	for (uint32_t k = 0; k < 10; k++)
		assert_true(tcp_slog_append(&l, k * MSS, (k + 1) * MSS, 100, 0));
	assert_int_equal(count(&l), 1);
	expect_ent(&l, 0, 0, 10 * MSS, 100, 0);
	assert_true(tcp_slog_append(&l, 10 * MSS, 11 * MSS, 200, 0));
	assert_true(tcp_slog_append(&l, 11 * MSS, 12 * MSS, 200, TCP_SLOG_RETRANS));
	assert_int_equal(count(&l), 3);
	tcp_slog_free(&l);
	assert_null(l.e);
}

/* A segment of 4 MSS (segmentation offload) SACKed in its middle: split
 * at both edges; a split where a boundary already is changes nothing;
 * find returns the range holding a byte. */
static void test_split_inside_and_at_boundary(void **state)
{
	struct tcp_slog l = { 0 };

	(void)state;
	assert_true(tcp_slog_append(&l, 0, 4 * MSS, 100, 0));
	assert_true(tcp_slog_split(&l, MSS));
	assert_true(tcp_slog_split(&l, 2 * MSS));
	assert_true(tcp_slog_split(&l, 2 * MSS));
	assert_true(tcp_slog_split(&l, 4 * MSS)); /* the end: nothing to cut */
	assert_int_equal(count(&l), 3);
	expect_ent(&l, 0, 0, MSS, 100, 0);
	expect_ent(&l, 1, MSS, 2 * MSS, 100, 0);
	expect_ent(&l, 2, 2 * MSS, 4 * MSS, 100, 0);
	assert_int_equal(tcp_slog_find(&l, 0), l.lo);
	assert_int_equal(tcp_slog_find(&l, MSS), l.lo + 1);
	assert_int_equal(tcp_slog_find(&l, 3 * MSS), l.lo + 2);
	assert_int_equal(tcp_slog_find(&l, 4 * MSS), l.n);
	/* A retransmission cut at a lowered MSS (536) covers part of a range. */
	assert_true(tcp_slog_split(&l, 2 * MSS + 536));
	expect_ent(&l, 2, 2 * MSS, 2 * MSS + 536, 100, 0);
	expect_ent(&l, 3, 2 * MSS + 536, 4 * MSS, 100, 0);
	tcp_slog_free(&l);
}

/* Ranges made alike again (a go-back-N resend) join: only touching ones
 * with the same time and flags. */
static void test_coalesce_alike(void **state)
{
	struct tcp_slog l = { 0 };

	(void)state;
	assert_true(tcp_slog_append(&l, 0, 4 * MSS, 100, 0));
	for (uint32_t k = 1; k < 4; k++)
		assert_true(tcp_slog_split(&l, k * MSS));
	for (uint32_t k = 0; k < 3; k++) {
		l.e[l.lo + k].xmit_ns = 300;
		l.e[l.lo + k].flags = TCP_SLOG_RETRANS;
	}
	tcp_slog_coalesce(&l, l.lo, l.n - 1);
	assert_int_equal(count(&l), 2);
	expect_ent(&l, 0, 0, 3 * MSS, 300, TCP_SLOG_RETRANS);
	expect_ent(&l, 1, 3 * MSS, 4 * MSS, 100, 0);
	tcp_slog_free(&l);
}

/* The acknowledged front goes (a range holding SND.UNA keeps its upper
 * part); emptied, a record grown beyond TCP_SLOG_MIN frees its array, a
 * small one keeps it for the next flight. */
static void test_trim_and_memory(void **state)
{
	struct tcp_slog l = { 0 };

	(void)state;
	for (uint32_t k = 0; k < 8; k++)
		assert_true(tcp_slog_append(&l, k * MSS, (k + 1) * MSS, k, 0));
	tcp_slog_trim(&l, 2 * MSS + 100);
	assert_int_equal(count(&l), 6);
	expect_ent(&l, 0, 2 * MSS + 100, 3 * MSS, 2, 0);
	tcp_slog_trim(&l, 8 * MSS);
	assert_true(tcp_slog_empty(&l));
	assert_non_null(l.e);
	assert_int_equal(l.cap, TCP_SLOG_MIN);
	for (uint32_t k = 0; k < 3 * TCP_SLOG_MIN; k++)
		assert_true(tcp_slog_append(&l, k * MSS, (k + 1) * MSS, k, 0));
	assert_true(l.cap > TCP_SLOG_MIN);
	tcp_slog_trim(&l, 3 * TCP_SLOG_MIN * MSS);
	assert_true(tcp_slog_empty(&l));
	assert_null(l.e);
	assert_int_equal(l.cap, 0);
}

/* At TCP_SLOG_MAX ranges a new one is refused (the acknowledged front is
 * reused first), and so is a split; joining the last range still works. */
static void test_bound(void **state)
{
	struct tcp_slog l = { 0 };
	uint32_t k;

	(void)state;
	for (k = 0; k < TCP_SLOG_MAX; k++)
		assert_true(tcp_slog_append(&l, k * 10, k * 10 + 10, k, 0));
	assert_false(tcp_slog_append(&l, k * 10, k * 10 + 10, k, 0));
	assert_false(tcp_slog_split(&l, 5));
	assert_true(tcp_slog_append(&l, k * 10, k * 10 + 10, k - 1, 0));
	tcp_slog_trim(&l, 20);
	assert_true(tcp_slog_append(&l, k * 10 + 10, k * 10 + 20, k, 0));
	assert_int_equal(l.cap, TCP_SLOG_MAX);
	tcp_slog_free(&l);
}

/* Ranges across 2^32. */
static void test_wrap(void **state)
{
	struct tcp_slog l = { 0 };
	uint32_t base = 0xffffffffu - MSS;

	(void)state;
	assert_true(tcp_slog_append(&l, base, base + 3 * MSS, 7, 0));
	assert_true(tcp_slog_split(&l, base + 2 * MSS));
	assert_int_equal(count(&l), 2);
	assert_int_equal(tcp_slog_find(&l, 0), l.lo);
	assert_int_equal(tcp_slog_find(&l, base + 2 * MSS), l.lo + 1);
	tcp_slog_trim(&l, base + MSS + 10);
	expect_ent(&l, 0, base + MSS + 10, base + 2 * MSS, 7, 0);
	tcp_slog_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_append_coalesces_bursts),
		cmocka_unit_test(test_split_inside_and_at_boundary),
		cmocka_unit_test(test_coalesce_alike),
		cmocka_unit_test(test_trim_and_memory),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
