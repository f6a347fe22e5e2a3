/* Packet scripts for [impair] rx/tx (stack/engine/stage_impair.c): the link emulator
 * in place on the engine's own port, one engine over the fake port of
 * tests/unit/stack/harness.h, virtual time.
 *
 * Traffic is ICMP echo: each request that reaches the stack gets exactly one
 * reply, so which requests the RX stage dropped is read off the replies'
 * sequence numbers.  Every script ends with h_teardown's leak check (frames
 * still held by a stage must be freed by us_engine_destroy).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_icmp.h>

#include "nic/impair.h"
#include "stack/engine/engine_priv.h"
#include "stack/engine/stage_impair.h"
#include "tests/unit/stack/harness.h"

#define NPINGS 200u
#define BATCH 32u

static const struct rte_ether_addr zero_mac;

/* Helpers */

static void start_with(struct harness *h, const char *rx, const char *tx)
{
	h_prepare(h);
	snprintf(h->cfg.impair_rx, sizeof(h->cfg.impair_rx), "%s", rx);
	snprintf(h->cfg.impair_tx, sizeof(h->cfg.impair_tx), "%s", tx);
	h_start(h);
}

static int64_t counter(struct harness *h, const char *name)
{
	return us_engine_counter(h->e, name);
}

/* The peer's MAC learnt from its ARP request, straight into the stack (not
 * through the RX stage); our reply is left on the port or in the TX stage. */
static void learn_peer(struct harness *h)
{
	us_engine_input(h->e, h_arp(RTE_ARP_OP_REQUEST, &h_peer_mac, H_PEER_IP, &zero_mac,
				    H_OUR_IP, &h_bcast_mac));
	us_engine_flush(h->e);
}

static struct rte_mbuf *echo_request(uint16_t seq)
{
	uint8_t msg[128];
	size_t n = h_icmp_echo(msg, 0x77, seq, 32);

	return h_ipv4(H_PEER_IP, H_OUR_IP, IPPROTO_ICMP, seq, 0, msg, n);
}

/* Sequence number of an echo reply on the port. */
static uint16_t reply_seq(struct rte_mbuf *m)
{
	uint8_t out[256];
	struct rte_icmp_hdr *ih = (struct rte_icmp_hdr *)(out + 34);

	assert_true(h_bytes(m, out, sizeof(out)) >= 34 + sizeof(*ih));
	assert_int_equal(rte_be_to_cpu_16(h_eth(m)->ether_type), RTE_ETHER_TYPE_IPV4);
	assert_int_equal(ih->icmp_type, RTE_IP_ICMP_ECHO_REPLY);
	return rte_be_to_cpu_16(ih->icmp_seq_nb);
}

/* NPINGS requests through port.rx in bursts, one poll per burst at the same
 * virtual time; got[i] says whether request i was answered. */
static unsigned ping_through_rx(struct harness *h, bool *got)
{
	unsigned answered = 0;

	memset(got, 0, NPINGS * sizeof(*got));
	for (unsigned i = 0; i < NPINGS; i += BATCH) {
		for (unsigned k = i; k < i + BATCH && k < NPINGS; k++)
			h->port.rx[h->port.nrx++] = echo_request((uint16_t)k);
		us_engine_poll(h->e, h->now);
		for (unsigned k = 0; k < h->port.ntx; k++) {
			uint16_t seq = reply_seq(h->port.tx[k]);

			assert_true(seq < NPINGS && !got[seq]);
			got[seq] = true;
			answered++;
		}
		h_clear_tx(h);
	}
	return answered;
}

/* One run of NPINGS pings with [impair] rx = spec: the answered set. */
static unsigned run_rx_loss(const char *spec, bool *got)
{
	struct harness h;
	unsigned answered;

	start_with(&h, spec, "");
	learn_peer(&h);
	h_clear_tx(&h);
	answered = ping_through_rx(&h, got);
	assert_int_equal(counter(&h, "impair_rx_enqueued"), NPINGS);
	assert_int_equal(counter(&h, "impair_rx_passed"), answered);
	assert_int_equal(counter(&h, "impair_rx_dropped_random"), NPINGS - answered);
	assert_int_equal(counter(&h, "icmp_echo_out"), answered);
	h_teardown(&h);
	return answered;
}

/* The fate a bare stage gives NPINGS packets with these params. */
static void bare_stage_fate(const char *spec, bool *passed)
{
	struct nic_impair_params p;
	struct nic_impair *imp;
	struct rte_mbuf *m, *out[NPINGS];
	char err[128];
	uint16_t n;

	assert_int_equal(nic_impair_parse(spec, &p, err, sizeof(err)), 0);
	imp = nic_impair_create(&p);
	assert_non_null(imp);
	for (unsigned i = 0; i < NPINGS; i++) {
		m = rte_pktmbuf_alloc(h_pool);
		assert_non_null(m);
		*rte_pktmbuf_mtod(m, uint16_t *) = (uint16_t)i;
		rte_pktmbuf_append(m, 64);
		nic_impair_enqueue(imp, &m, 1, 0);
	}
	memset(passed, 0, NPINGS * sizeof(*passed));
	n = nic_impair_dequeue(imp, out, NPINGS, 0);
	for (uint16_t i = 0; i < n; i++) {
		passed[*rte_pktmbuf_mtod(out[i], uint16_t *)] = true;
		rte_pktmbuf_free(out[i]);
	}
	nic_impair_destroy(imp);
}

/* Tests */

/* Same seed, same input: the same requests are lost, run after run, and they
 * are exactly those a bare nic/impair stage with that spec loses (the engine
 * feeds the stage every frame, in arrival order).  Another seed loses
 * others. */
static void test_rx_loss_same_seed_same_fate(void **state)
{
	static bool a[NPINGS], b[NPINGS], bare[NPINGS], other[NPINGS];
	unsigned na, nb, no;

	(void)state;
	na = run_rx_loss("loss=30%,seed=7", a);
	nb = run_rx_loss("loss=30%,seed=7", b);
	bare_stage_fate("loss=30%,seed=7", bare);
	no = run_rx_loss("loss=30%,seed=8", other);
	assert_int_equal(na, nb);
	assert_memory_equal(a, b, sizeof(a));
	assert_memory_equal(a, bare, sizeof(a));
	/* 30% of 200: a stage that loses nothing or everything is broken. */
	assert_true(na > NPINGS / 2 && na < NPINGS);
	assert_true(no > NPINGS / 2 && no < NPINGS);
	assert_memory_not_equal(a, other, sizeof(a));
}

/* RX delay: a request is held until the engine's clock reaches its
 * departure, then answered by that poll. */
static void test_rx_delay_holds_until_due(void **state)
{
	struct harness h;
	uint64_t t0;

	(void)state;
	start_with(&h, "delay=5ms", "");
	learn_peer(&h);
	h_clear_tx(&h);
	t0 = h.now;
	h.port.rx[h.port.nrx++] = echo_request(1);
	assert_int_equal(us_engine_poll(h.e, t0), 0);
	assert_int_equal(counter(&h, "impair_rx_pending"), 1);
	assert_int_equal(us_engine_poll(h.e, t0 + US_MS(5) - 1), 0);
	assert_int_equal(h.port.ntx, 0);
	assert_int_equal(us_engine_poll(h.e, t0 + US_MS(5)), 1);
	assert_int_equal(h.port.ntx, 1);
	assert_int_equal(reply_seq(h.port.tx[0]), 1);
	assert_int_equal(counter(&h, "impair_rx_delayed"), 1);
	assert_int_equal(counter(&h, "impair_rx_pending"), 0);
	h_teardown(&h);
}

/* TX delay: what the stack sends reaches the port when the engine's clock
 * (advanced by us_engine_advance as by us_engine_poll) reaches it. */
static void test_tx_delay_released_by_advance(void **state)
{
	struct harness h;

	(void)state;
	start_with(&h, "", "delay=2ms");
	learn_peer(&h); /* our ARP reply goes into the TX stage */
	assert_int_equal(h.port.ntx, 0);
	assert_int_equal(counter(&h, "impair_tx_pending"), 1);
	h_advance(&h, US_MS(2) - 1);
	assert_int_equal(h.port.ntx, 0);
	h_advance(&h, 1);
	assert_int_equal(h.port.ntx, 1);
	assert_int_equal(rte_be_to_cpu_16(h_eth(h.port.tx[0])->ether_type), RTE_ETHER_TYPE_ARP);
	assert_int_equal(counter(&h, "impair_tx_passed"), 1);
	assert_int_equal(counter(&h, "eth_tx_frames"), 1);
	h_teardown(&h);
}

/* TX loss of every frame: nothing reaches the port, each frame is counted
 * by the stage (the stack still counts what it sent). */
static void test_tx_loss_counted(void **state)
{
	struct harness h;
	bool got[NPINGS];

	(void)state;
	start_with(&h, "", "loss=100%");
	learn_peer(&h);
	assert_int_equal(ping_through_rx(&h, got), 0);
	assert_int_equal(counter(&h, "icmp_echo_out"), NPINGS);
	assert_int_equal(counter(&h, "impair_tx_enqueued"), NPINGS + 1);
	assert_int_equal(counter(&h, "impair_tx_dropped_random"), NPINGS + 1);
	assert_int_equal(counter(&h, "impair_tx_passed"), 0);
	h_teardown(&h);
}

/* RX duplication: both copies reach the stack, each is answered. */
static void test_rx_duplicate_answered_twice(void **state)
{
	struct harness h;

	(void)state;
	start_with(&h, "dup=100%", "");
	learn_peer(&h);
	h_clear_tx(&h);
	h.port.rx[h.port.nrx++] = echo_request(4);
	assert_int_equal(us_engine_poll(h.e, h.now), 2);
	assert_int_equal(h.port.ntx, 2);
	assert_int_equal(reply_seq(h.port.tx[0]), 4);
	assert_int_equal(reply_seq(h.port.tx[1]), 4);
	assert_int_equal(counter(&h, "impair_rx_duplicated"), 1);
	h_teardown(&h);
}

/* Frames still in both stages at the end are freed by us_engine_destroy
 * (h_teardown asserts the pool is back to zero in use). */
static void test_destroy_frees_pending(void **state)
{
	struct harness h;

	(void)state;
	start_with(&h, "delay=1s", "delay=1s");
	learn_peer(&h);
	for (uint16_t i = 0; i < 10; i++)
		h.port.rx[h.port.nrx++] = echo_request(i);
	assert_int_equal(us_engine_poll(h.e, h.now), 0);
	assert_int_equal(counter(&h, "impair_rx_pending"), 10);
	assert_int_equal(counter(&h, "impair_tx_pending"), 1);
	assert_int_equal(h.port.ntx, 0);
	h_teardown(&h);
}

static char *stats_text(struct harness *h)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	us_engine_print_stats(h->e, f);
	fclose(f);
	return buf;
}

/* Off: no stage, no counter, nothing printed, frames go straight through.
 * On: the stage's counters are printed with the stack's. */
static void test_counters_off_and_on(void **state)
{
	struct harness h;
	char *text;

	(void)state;
	start_with(&h, "", "");
	assert_null(us_impair_of(h.e, false));
	assert_null(us_impair_of(h.e, true));
	learn_peer(&h);
	assert_int_equal(h.port.ntx, 1);
	assert_int_equal(counter(&h, "impair_rx_enqueued"), -1);
	assert_int_equal(counter(&h, "impair_tx_enqueued"), -1);
	text = stats_text(&h);
	assert_null(strstr(text, "impair_"));
	free(text);
	h_teardown(&h);

	start_with(&h, "loss=100%,seed=3", "");
	h.port.rx[h.port.nrx++] = echo_request(0);
	us_engine_poll(h.e, h.now);
	text = stats_text(&h);
	assert_non_null(strstr(text, "\nimpair_rx_dropped_random 1  # dropped: Bernoulli loss "
			       "(rx stage)\n"));
	assert_non_null(strstr(text, "\nimpair_rx_pending 0  #"));
	assert_null(strstr(text, "impair_tx_"));
	assert_int_equal(counter(&h, "impair_rx_nonsense"), -1);
	free(text);
	h_teardown(&h);
}

/* A struct us_config filled by hand (no config file check) with a bad spec:
 * the engine refuses to start. */
static void test_bad_spec_refused(void **state)
{
	struct harness h;

	(void)state;
	h_prepare(&h);
	snprintf(h.cfg.impair_tx, sizeof(h.cfg.impair_tx), "loss=5");
	errno = 0;
	assert_null(us_engine_create(0, &h.cfg, h_pool, &h.ops, h.now));
	assert_int_equal(errno, EINVAL);
	assert_int_equal(rte_mempool_in_use_count(h_pool), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rx_loss_same_seed_same_fate),
		cmocka_unit_test(test_rx_delay_holds_until_due),
		cmocka_unit_test(test_tx_delay_released_by_advance),
		cmocka_unit_test(test_tx_loss_counted),
		cmocka_unit_test(test_rx_duplicate_answered_twice),
		cmocka_unit_test(test_destroy_frees_pending),
		cmocka_unit_test(test_counters_off_and_on),
		cmocka_unit_test(test_bad_spec_refused),
	};

	h_eal_init("us_pkt_impair");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
