/* Packet scripts: TCP is between two hosts (RFC 9293 3.9.1.1 MUST-46,
 * 3.9.2.3 MUST-57 and MUST-63).  A segment to or from a broadcast or
 * multicast address is discarded without an answer (an RST to a group
 * would be an amplifier), even by a listener on every address; an active
 * open to one is refused with Linux's ENETUNREACH.  The subnet's directed
 * broadcast is the network layer's (tests/unit/stack/test_tcp_net.c). */
#include "tests/pkt/harness.h"

#include <errno.h>

/* The family's groups: IPv4's limited broadcast and a multicast group
 * (v4-mapped), or IPv6's all-nodes group. */
static struct us_in6 group(unsigned i)
{
	static const struct us_in6 all_nodes = { .b = { 0xff, 0x02, [15] = 1 } };

	if (pkt_family() == 6)
		return all_nodes;
	return us_in6_of_v4(i == 0 ? 0xffffffffu : 0xe0000001u); /* 224.0.0.1 */
}

/* A listener on every address of the family. */
static void listen_any(struct pkt_t *t)
{
	struct us_in6 any = pkt_family() == 6 ? (struct us_in6){ 0 } : us_in6_of_v4(0);

	assert_int_equal(tcp_listen(t->ts, &any, PKT_LOCAL_PORT, 0, &t->cb, t), 0);
}

/* MUST-57: a SYN to a group opens nothing and draws no SYN-ACK or RST. */
static void test_syn_to_group_discarded(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);

	listen_any(t);
	for (unsigned i = 0; i < 2; i++) {
		struct us_in6 g = group(i);

		INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .local_ip = &g));
		EXPECT_NOTHING(t);
	}
	assert_int_equal(STAT(t, drop_group_addr), 2);
	assert_int_equal(STAT(t, drop_no_conn), 0);
	/* The same SYN to our address opens. */
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .ack = 1001));
	FINISH(t, 1);
}

/* MUST-63: a SYN from a group is discarded (no SYN-ACK, no RST), and so
 * is any other segment from one, even to a closed port. */
static void test_syn_from_group_discarded(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct us_in6 g = group(0);

	listen_any(t);
	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460, .peer_ip = &g));
	EXPECT_NOTHING(t);
	INJECT(t, SEG(.flags = TH_ACK, .seq = 1000, .ack = 5, .dport = 9, .peer_ip = &g));
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, drop_group_addr), 2);
	assert_int_equal(STAT(t, resets_sent), 0);
	FINISH(t, 0);
}

/* MUST-46: an active open to a group fails at once (ENETUNREACH, as
 * Linux's connect), no TCB made and no SYN sent. */
static void test_connect_to_group_refused(void **state)
{
	(void)state;
	struct pkt_t *t = pkt_start(NULL);
	struct tcp_conn *c = NULL;

	for (unsigned i = 0; i < 2; i++) {
		struct us_in6 g = group(i);

		assert_int_equal(tcp_connect(t->ts, &g, 80, &t->cb, t, &c), -ENETUNREACH);
		assert_null(c);
	}
	EXPECT_NOTHING(t);
	assert_int_equal(STAT(t, connect_group_refused), 2);
	assert_int_equal(STAT(t, active_opens), 0);
	FINISH(t, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		PKT_TEST(test_syn_to_group_discarded),
		PKT_TEST(test_syn_from_group_discarded),
		PKT_TEST(test_connect_to_group_refused),
	};

	return cmocka_run_group_tests(tests, pkt_group_setup, pkt_group_teardown);
}
