/* Packet scripts: a stack created under us_rand_seed (stack/base/rand.h)
 * shows the same secrets on the wire as another created under the same
 * seed, which is what a simulation's bit-for-bit replay rests on; another
 * seed, or no seed, shows others. */
#include "tests/pkt/harness.h"

#include <string.h>

#include <rte_byteorder.h>

#include "stack/base/rand.h"
#include "tcp/fastopen.h"

/* What a stack's random draws decide and a peer can see. */
struct world {
	uint32_t isn;         /* active open: isn_key */
	uint32_t cookie_isn;  /* SYN cookie: syncookie_key */
	uint16_t port;        /* the first ephemeral port */
	uint8_t tfo[TFO_SERVER_COOKIE_LEN]; /* the Fast Open key */
};

static int teardown(void **state)
{
	us_rand_unseed();
	return pkt_teardown(state);
}

/* A SYN answered with a cookie, then an active open; FINISH leaves no
 * mbuf, TCB or timer behind. */
static void observe(struct world *w)
{
	struct tcp_config cfg;
	struct tcp_conn *c = NULL;
	struct pkt_t *t;

	memset(w, 0, sizeof(*w));
	pkt_config_defaults(&cfg);
	cfg.syncookies = TCP_SYNCOOKIES_ALWAYS;
	t = pkt_start(&cfg);
	assert_int_equal(pkt_listen(t), 0);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	w->cookie_isn = t->our_isn;
	t->isn_known = false; /* learn the next SYN's */
	t->our_max = 0;
	t->local_port = 0;
	assert_int_equal(tcp_connect(t->ts, PKT_PEER_IP, PKT_PEER_PORT, &t->cb, t, &c), 0);
	EXPECT(t, SEG(.flags = TH_SYN, .seq = 0));
	w->isn = t->our_isn;
	w->port = t->local_port;
	tfo_cookie_make(&t->ts->tfo.keys, PKT_PEER_IP, PKT_LOCAL_IP, w->tfo);
	FINISH(t, 1);
}

static void observe_seeded(struct world *w, uint64_t seed)
{
	us_rand_seed(seed);
	observe(w);
	us_rand_unseed();
}

static void test_same_seed_same_world(void **state)
{
	(void)state;
	struct world a, b;

	observe_seeded(&a, 1);
	observe_seeded(&b, 1);
	assert_int_equal(a.isn, b.isn);
	assert_int_equal(a.cookie_isn, b.cookie_isn);
	assert_int_equal(a.port, b.port);
	assert_memory_equal(a.tfo, b.tfo, sizeof(a.tfo));
}

/* Seeded, so these never flake: seeds 1 and 2 differ in every draw. */
static void test_other_seed_other_world(void **state)
{
	(void)state;
	struct world a, b;

	observe_seeded(&a, 1);
	observe_seeded(&b, 2);
	assert_int_not_equal(a.isn, b.isn);
	assert_int_not_equal(a.cookie_isn, b.cookie_isn);
	assert_int_not_equal(a.port, b.port);
	assert_memory_not_equal(a.tfo, b.tfo, sizeof(a.tfo));
}

/* Production: nothing repeats (the chance of a false failure is that of
 * two 32-bit ISNs and two 64-bit cookies colliding). */
static void test_unseeded_worlds_differ(void **state)
{
	(void)state;
	struct world a, b;

	observe(&a);
	observe(&b);
	assert_int_not_equal(a.isn, b.isn);
	assert_int_not_equal(a.cookie_isn, b.cookie_isn);
	assert_memory_not_equal(a.tfo, b.tfo, sizeof(a.tfo));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(test_same_seed_same_world, teardown),
		cmocka_unit_test_teardown(test_other_seed_other_world, teardown),
		cmocka_unit_test_teardown(test_unseeded_worlds_differ, teardown),
	};
	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
