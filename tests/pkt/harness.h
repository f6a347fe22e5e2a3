/* tests/pkt/harness.h: packet scripts against one tcp_stack in virtual time.
 *
 * A script reads like a trace (smoltcp's send!/recv!, packetdrill):
 *
 *	INJECT(t, SEG(.flags = TH_SYN, .seq = 1000, .mss = 1460));
 *	EXPECT(t, SEG(.flags = TH_SYN | TH_ACK, .seq = 0, .ack = 1001, .mss = 1460));
 *	ADVANCE(t, 200);
 *	EXPECT_NOTHING(t);
 *	FINISH(t, 0);
 *
 * SEG(...) overlays a template whose fields are PKT_ANY.  Numbering: the
 * peer's sequence numbers are absolute (the script picks them); ours are
 * relative to our ISN (learnt from the first SYN we emit), unless .abs.  So
 * in EXPECT .seq is relative and .ack absolute; in INJECT .seq absolute and
 * .ack relative.
 *
 * INJECT fills what the script leaves out: seq = the peer's next sequence
 * number, ack = our highest sequence seen (when the ACK flag is set), flags
 * ACK, window 65535, no options, payload of .len pattern bytes (pkt_pattern
 * of the peer's stream offset) or .data.
 * EXPECT checks only what the script sets (plus addresses, ports and the
 * checksum, always); a payload without .data must be our stream's pattern.
 *
 * Address family: every script runs over IPv4 or IPv6 as the environment
 * says (US_PKT_FAMILY=6 for IPv6; meson registers each script suite once
 * per family).  PKT_LOCAL_IP and PKT_PEER_IP are the family's addresses;
 * the interface MTU is chosen so that the MSS is 1460 either way, so a
 * script's numbers hold in both.
 *
 * Every script ends with FINISH(t, tcbs): no segment left unasserted, the
 * expected TCB count, the state gauges equal to a recount of the table
 * (tcp_state_gauges_check), then tcp_stack_destroy must leave the mbuf pool
 * with nothing in use and the wheel with no armed timer.
 */
#ifndef US_PKT_HARNESS_H
#define US_PKT_HARNESS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <sys/types.h>

#include "stack/base/timer.h"
#include "tcp/fastopen.h"
#include "tcp/tcb.h"
#include "tcp/tcp.h"

/* SEG(...) overrides template fields on purpose. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

/* Types */

#define PKT_ANY (-1)
#define PKT_ABSENT (-2) /* EXPECT: the option must not be there */
#define PKT_CAP_MAX 512u
#define PKT_RX_MAX (1u << 20)
#define PKT_LOCAL_IP4 0x0a000001u /* 10.0.0.1 */
#define PKT_PEER_IP4 0x0a000002u  /* 10.0.0.2 */
/* fd00::1 and fd00::2 over IPv6 */
#define PKT_LOCAL_IP (pkt_local_ip())
#define PKT_PEER_IP (pkt_peer_ip())
#define PKT_LOCAL_PORT 80u
#define PKT_PEER_PORT 40000u

struct pkt_seg {
	int64_t seq, ack;
	int flags;
	int32_t win;
	int32_t mss;          /* INJECT: option value; EXPECT: 0 = must be absent */
	int32_t len;          /* payload bytes */
	int32_t urp;          /* urgent pointer field: INJECT PKT_ANY = 0 */
	const char *data;     /* explicit payload instead of the pattern */
	bool abs;             /* our side's numbers absolute */
	uint32_t sport, dport; /* 0: the defaults */
	/* Options (RFC 7323, RFC 2018).  INJECT sends those set (PKT_ANY:
	 * none); EXPECT compares those set, PKT_ABSENT = must be absent. */
	int32_t ws;           /* window scale shift */
	int32_t sack_perm;    /* 1 present; EXPECT 0 = absent */
	int64_t ts_val, ts_ecr; /* INJECT: TS option when ts_val is set (ecr 0
				 * unless set); EXPECT ts_val PKT_ABSENT: no TS */
	int32_t nsack;        /* SACK blocks; EXPECT 0 = no SACK option */
	uint32_t sack[4][2];  /* [start, end): EXPECT absolute (peer's space);
			       * INJECT relative to our ISN unless .abs;
			       * EXPECT skips a block left {0, 0} */
	/* INJECT only: */
	const uint8_t *opts;  /* raw options (replace .mss) */
	uint8_t optlen;
	int doff;             /* data offset in words, PKT_ANY = computed */
	bool bad_csum;
	bool csum_good_flag;  /* set RTE_MBUF_F_RX_L4_CKSUM_GOOD */
	uint32_t split;       /* payload bytes in the first mbuf (0: one mbuf) */
	uint32_t cut;         /* bytes cut off the end (a truncated segment) */
	/* Both: the peer's and our address when not the family's defaults (a
	 * script that mixes families). */
	const struct us_in6 *peer_ip, *local_ip;
};

#define SEG(...) ((struct pkt_seg){ .seq = PKT_ANY, .ack = PKT_ANY, .flags = PKT_ANY, \
				    .win = PKT_ANY, .mss = PKT_ANY, .len = PKT_ANY, .urp = PKT_ANY, \
				    .doff = PKT_ANY, .ws = PKT_ANY, .sack_perm = PKT_ANY, \
				    .ts_val = PKT_ANY, .ts_ecr = PKT_ANY, .nsack = PKT_ANY, \
				    __VA_ARGS__ })

struct pkt_cap {
	struct rte_mbuf *m;
	struct tcp_out_addr a;
};

struct pkt_t {
	struct rte_mempool *pool;
	struct us_timer_wheel *wheel;
	uint64_t now;
	struct tcp_env env;
	struct tcp_config cfg;
	struct tcp_stack *ts;
	bool finished;

	struct pkt_cap cap[PKT_CAP_MAX];
	unsigned cap_head, ncap;
	bool cap_overflow;

	uint16_t local_port, peer_port; /* local_port learnt on active open */
	bool isn_known;
	uint32_t our_isn, our_max;      /* our_max: highest relative seq seen + len */
	uint32_t peer_isn, peer_nxt;
	bool peer_isn_known;

	struct tcp_callbacks cb;
	struct tcp_conn *conn;          /* accepted or connected; NULL once closed */
	unsigned n_accept, n_readable, n_writable, n_closed, n_connected;
	int closed_err;
	bool auto_read;                 /* on_readable drains into rx[] */
	bool close_on_eof;              /* ... and calls tcp_close at EOF */
	uint8_t *rx;
	size_t rx_len;
	bool eof;
	size_t app_sent;                /* bytes of our pattern handed to tcp_send */
};

/* Prototypes */

/* The script's family (4 or 6, from US_PKT_FAMILY) and its addresses. */
int pkt_family(void);
/* The MSS tcp/ assumes of a peer whose SYN has none: 536 over IPv4, 1220
 * over IPv6 (RFC 9293 3.7.1). */
uint32_t pkt_default_mss(void);
const struct us_in6 *pkt_local_ip(void);
const struct us_in6 *pkt_peer_ip(void);
int pkt_group_setup(void **state);
int pkt_group_teardown(void **state);
/* Per-test teardown: frees a script's harness if it failed before FINISH. */
int pkt_teardown(void **state);
#define PKT_TEST(fn) cmocka_unit_test_teardown(fn, pkt_teardown)

/* tcp_config_defaults with RFC 5681 / RFC 6675 loss detection: duplicate
 * ACKs (not RACK), no Tail Loss Probe, no undo, and profile rfc (delayed
 * ACKs from the first segment, PSH only when the send queue empties, ABC
 * slow start, bare RSTs).  The scripts assert the exact segments of those
 * rules; RACK, TLP, undo and profile linux have scripts of their own
 * (test_rack.c, test_tlp.c, test_undo.c, test_profile.c), and the
 * transfers, the simulator and the interop tests run the defaults. */
void pkt_config_defaults(struct tcp_config *cfg);
/* cfg NULL: pkt_config_defaults with window scaling, SACK and timestamps
 * off (the scripts written before them); pass a config to turn them on. */
struct pkt_t *pkt_start(const struct tcp_config *cfg);
/* Our timestamp clock now (RFC 7323: 1 ms ticks of the wheel's time). */
uint32_t pkt_ts_now(const struct pkt_t *t);
uint8_t pkt_pattern(uint32_t off);

void pkt_inject(struct pkt_t *t, struct pkt_seg s, const char *file, int line);
void pkt_expect(struct pkt_t *t, struct pkt_seg s, const char *file, int line);
/* Like pkt_expect, but returns the segment instead of freeing it. */
struct rte_mbuf *pkt_expect_keep(struct pkt_t *t, struct pkt_seg s, const char *file, int line);
void pkt_expect_nothing(struct pkt_t *t, const char *file, int line);
void pkt_advance(struct pkt_t *t, uint32_t ms);
void pkt_finish(struct pkt_t *t, unsigned tcbs, const char *file, int line);

int pkt_listen(struct pkt_t *t);
/* Passive open to ESTABLISHED: peer ISN 1000, MSS 1460, window 65535. */
void pkt_establish(struct pkt_t *t, const char *file, int line);
/* The same with t's config, the peer offering SACK-permitted when sack, and
 * its final ACK rtt_ms after our SYN-ACK (an RTT sample, RFC 6298 2.2);
 * checks that we took MSS 1460. */
void pkt_establish_rtt(struct pkt_t *t, uint32_t rtt_ms, bool sack, const char *file,
		       int line);
/* Passive open with timestamps (t's config must allow them): the peer's
 * TSval 100 on the SYN, 101 on the ACK. */
void pkt_establish_ts(struct pkt_t *t, const char *file, int line);
/* tcp_send of n pattern bytes (continuing the stream); its return value. */
ssize_t pkt_app_send(struct pkt_t *t, size_t n);
/* Reads everything readable into t->rx (checking the peer's pattern). */
void pkt_app_read(struct pkt_t *t, const char *file, int line);
/* The Fast Open option (RFC 7413 4.1.1) of a segment we sent, which it
 * frees (type NONE when absent). */
struct tfo_opt pkt_tfo_of(struct rte_mbuf *m);

#define INJECT(t, s) pkt_inject((t), (s), __FILE__, __LINE__)
#define EXPECT(t, s) pkt_expect((t), (s), __FILE__, __LINE__)
#define EXPECT_KEEP(t, s) pkt_expect_keep((t), (s), __FILE__, __LINE__)
#define EXPECT_TFO(t, s) pkt_tfo_of(EXPECT_KEEP((t), (s)))
#define EXPECT_NOTHING(t) pkt_expect_nothing((t), __FILE__, __LINE__)
#define ADVANCE(t, ms) pkt_advance((t), (ms))
#define FINISH(t, tcbs) pkt_finish((t), (tcbs), __FILE__, __LINE__)
#define ESTABLISH(t) pkt_establish((t), __FILE__, __LINE__)
#define ESTABLISH_RTT(t, rtt_ms, sack) pkt_establish_rtt((t), (rtt_ms), (sack), __FILE__, __LINE__)
#define ESTABLISH_TS(t) pkt_establish_ts((t), __FILE__, __LINE__)
#define APP_READ(t) pkt_app_read((t), __FILE__, __LINE__)

#define STAT(t, name) (tcp_stack_stats((t)->ts)->name)

#endif
