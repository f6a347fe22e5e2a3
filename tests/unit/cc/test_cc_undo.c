/* tests/unit/cc: the undo of a window reduction in the congestion-control
 * module (tcp/cc.h: tcp_cc_save before the reduction, tcp_cc_undo when it
 * proved spurious).  SMSS 1000 bytes, windows in whole segments. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "tcp/cc.h"

#define SMSS 1000u
#define SEC 1000000000ull

/* NewReno: a fast recovery's reduction (ssthresh = flight / 2, cwnd =
 * ssthresh at its end) undone: both back. */
static void test_newreno_recovery(void **state)
{
	struct tcp_cc cc;
	struct tcp_cc_prior p;

	(void)state;
	tcp_cc_init(&cc, TCP_CC_NEWRENO, SMSS, 20 * SMSS, 30 * SMSS, NULL);
	tcp_cc_save(&cc, &p);
	assert_int_equal(tcp_cc_on_congestion(&cc, 20 * SMSS), 10 * SMSS);
	tcp_cc_on_recovery_exit(&cc);
	assert_int_equal(cc.cwnd, 10 * SMSS);
	tcp_cc_undo(&cc, &p);
	assert_int_equal(cc.cwnd, 20 * SMSS);
	assert_int_equal(cc.ssthresh, 30 * SMSS);
}

/* An RTO proved spurious late, after slow start took cwnd past the prior
 * window: the larger one stays (max), ssthresh comes back. */
static void test_newreno_rto_grown_past(void **state)
{
	struct tcp_cc cc;
	struct tcp_cc_prior p;

	(void)state;
	tcp_cc_init(&cc, TCP_CC_NEWRENO, SMSS, 8 * SMSS, 30 * SMSS, NULL);
	tcp_cc_save(&cc, &p);
	tcp_cc_on_rto(&cc, 8 * SMSS, true);
	assert_int_equal(cc.cwnd, SMSS);
	assert_int_equal(cc.ssthresh, 4 * SMSS);
	for (unsigned i = 0; i < 30; i++)
		tcp_cc_on_ack(&cc, 2 * SMSS, 0, 0); /* slow start to 4, then +1 per cwnd */
	assert_true(cc.cwnd > 8 * SMSS);
	uint32_t grown = cc.cwnd;
	tcp_cc_undo(&cc, &p);
	assert_int_equal(cc.cwnd, grown);
	assert_int_equal(cc.ssthresh, 30 * SMSS);
}

/* CUBIC in congestion avoidance: the reduction sets a new W_max and ends
 * the epoch; the undo brings back W_max, K, W_est, cwnd_prior and the
 * epoch's start (RFC 9438 4.9), and the next ACK grows from there. */
static void test_cubic_state(void **state)
{
	struct tcp_cc cc;
	struct tcp_cc_prior p;
	double w_max, k, w_est, cwnd_prior;
	uint64_t epoch;
	uint32_t reduced;

	(void)state;
	tcp_cc_init(&cc, TCP_CC_CUBIC, SMSS, 20 * SMSS, 10 * SMSS, NULL);
	cc.w_max = 30; /* an earlier reduction from 30 segments */
	cc.cwnd_prior = 30;
	tcp_cc_on_ack(&cc, SMSS, 100000, 5 * SEC);
	tcp_cc_on_ack(&cc, SMSS, 100000, 6 * SEC);
	assert_true(cc.epoch_ns == 5 * SEC);
	assert_true(cc.k > 0);
	w_max = cc.w_max, k = cc.k, w_est = cc.w_est, cwnd_prior = cc.cwnd_prior;
	epoch = cc.epoch_ns;
	tcp_cc_save(&cc, &p);
	reduced = tcp_cc_on_congestion(&cc, cc.cwnd);
	tcp_cc_on_recovery_exit(&cc);
	assert_true(cc.epoch_ns == 0);
	assert_true(cc.w_max != w_max);
	tcp_cc_undo(&cc, &p);
	assert_int_equal(cc.cwnd, p.cwnd);
	/* ssthresh only goes up: 0.7 * cwnd was above the prior 10. */
	assert_true(reduced > 10 * SMSS);
	assert_int_equal(cc.ssthresh, reduced);
	assert_true(cc.w_max == w_max);
	assert_true(cc.k == k);
	assert_true(cc.w_est == w_est);
	assert_true(cc.cwnd_prior == cwnd_prior);
	assert_true(cc.epoch_ns == epoch);
	/* The epoch goes on: no new one starts on the next ACK. */
	tcp_cc_on_ack(&cc, SMSS, 100000, 7 * SEC);
	assert_true(cc.epoch_ns == epoch);
	assert_true(cc.cwnd >= p.cwnd);
}

/* CUBIC whose window grew past the prior one: its current state is kept. */
static void test_cubic_grown_past(void **state)
{
	struct tcp_cc cc;
	struct tcp_cc_prior p;

	(void)state;
	tcp_cc_init(&cc, TCP_CC_CUBIC, SMSS, 8 * SMSS, 30 * SMSS, NULL);
	tcp_cc_save(&cc, &p);
	tcp_cc_on_rto(&cc, 8 * SMSS, true);
	for (unsigned i = 0; i < 8; i++)
		tcp_cc_on_ack(&cc, 2 * SMSS, 100000, (2 + i) * SEC);
	assert_true(cc.cwnd > p.cwnd);
	uint32_t grown = cc.cwnd;
	double w_max = cc.w_max;
	uint64_t epoch = cc.epoch_ns;
	tcp_cc_undo(&cc, &p);
	assert_int_equal(cc.cwnd, grown);
	assert_int_equal(cc.ssthresh, 30 * SMSS);
	assert_true(cc.w_max == w_max);
	assert_true(cc.epoch_ns == epoch);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_newreno_recovery),
		cmocka_unit_test(test_newreno_rto_grown_past),
		cmocka_unit_test(test_cubic_state),
		cmocka_unit_test(test_cubic_grown_past),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
