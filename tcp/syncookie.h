/* tcp/syncookie.h: SYN cookies for listeners under SYN flood.
 *
 * When a listener's SYN backlog is full ([tcp] syncookies = auto, the
 * default) or always ([tcp] syncookies = always), a SYN is answered without
 * a TCB: our ISN is the cookie, and the handshake's final ACK (SEG.ACK - 1)
 * brings it back.  Like Linux (net/ipv4/syncookies.c), written fresh:
 *
 *   ISN = H1(4-tuple) + (counter << 24 | MAC22 << 2 | mss_index)
 *
 * counter: a coarse clock (TCP_SYNCOOKIE_PERIOD_S per tick, its low 8
 * bits in the cookie); a cookie is valid during its own period and the
 * next one.  mss_index: the largest entry of a 4-entry MSS table not above
 * the peer's MSS.  MAC22: 22 bits of SipHash (libsodium crypto_shorthash,
 * key drawn at stack creation from stack/base/rand.h: randombytes) over the
 * 4-tuple, the peer's ISN, the counter and the index.  H1: SipHash of the
 * 4-tuple, so that cookie ISNs do not expose the counter.
 *
 * What does not fit in the ISN goes in the low 6 bits of our TSval when
 * the SYN had timestamps (RFC 7323): the peer's window shift (0xf = none),
 * SACK-permitted (bit 4); bit 5 (ECN in Linux) must be 0.  The peer echoes
 * TSval in TSecr on the ACK.  Without timestamps the SYN-ACK offers no
 * window scale and no SACK: the cookie carries the MSS only.
 */
#ifndef US_TCP_SYNCOOKIE_H
#define US_TCP_SYNCOOKIE_H

#include <stdbool.h>
#include <stdint.h>

struct rte_mbuf;
struct tcp_conn;
struct tcp_seg;
struct tcp_stack;

/* Types */

#define TCP_SYNCOOKIE_PERIOD_S 64u  /* one counter tick (Linux: 60 s) */
#define TCP_SYNCOOKIE_ACTIVE_S 3u   /* tcp_listener_syncookies_active window */
#define TCP_SYNCOOKIE_TS_BITS 6u    /* low TSval bits carrying options */
#define TCP_SYNCOOKIE_TS_MASK ((1u << TCP_SYNCOOKIE_TS_BITS) - 1u)
#define TCP_SYNCOOKIE_TS_NO_WS 0xfu /* "no window scale" in the TSval */
#define TCP_SYNCOOKIE_TS_SACK 0x10u
#define TCP_SYNCOOKIE_TS_ECN 0x20u  /* unused: must be 0 */

/* What a cookie and its timestamp echo carry. */
struct tcp_syncookie_opts {
	uint16_t mss;        /* the peer's MSS, rounded down to the table */
	bool ts_ok;          /* the SYN (and ACK) had timestamps */
	bool ws_ok, sack_ok; /* only with ts_ok */
	uint8_t ws;          /* the peer's window shift when ws_ok */
};

/* Prototypes */

/* Key from the random source (stack/base/rand.h: libsodium's randombytes
 * unless a test seeded it); called by tcp_stack_create. */
void tcp_syncookie_init(struct tcp_stack *ts);
/* Should a SYN to listener l be answered with a cookie (no embryo)? */
bool tcp_syncookie_wanted(const struct tcp_conn *l);
/* Answers seg, a SYN to l, with a stateless cookie SYN-ACK. */
void tcp_syncookie_send(struct tcp_conn *l, const struct tcp_seg *seg);
/* An ACK (no SYN/RST) to listener l: when it returns a valid cookie, the
 * connection is created ESTABLISHED, m is processed on it (data on the ACK)
 * and consumed, and true is returned.  false: m untouched (a bad cookie is
 * counted in syncookies_failed; the caller answers with RST as usual). */
bool tcp_syncookie_ack(struct tcp_conn *l, struct rte_mbuf *m, struct tcp_seg *seg);
/* True while l answered SYNs with cookies in the last
 * TCP_SYNCOOKIE_ACTIVE_S seconds (Fast Open is refused under SYN flood). */
bool tcp_listener_syncookies_active(const struct tcp_conn *l);

/* The pure pieces (unit-testable, used by the functions above). */
uint32_t tcp_syncookie_counter(uint64_t now_ns);
/* The cookie ISN for the SYN syn at counter with MSS table index idx. */
uint32_t tcp_syncookie_make(const struct tcp_stack *ts, const struct tcp_seg *syn,
			    uint32_t counter, unsigned idx);
/* The peer's MSS for a valid cookie (SEG.ACK - 1 of the ACK seg, whose
 * SEG.SEQ - 1 is the peer's ISN) at counter now; 0 when invalid or
 * older than the previous period. */
uint16_t tcp_syncookie_check(const struct tcp_stack *ts, const struct tcp_seg *ack,
			     uint32_t counter);
/* Our TSval carrying o's options at our timestamp clock now_ms (never
 * above now_ms). */
uint32_t tcp_syncookie_ts_encode(uint32_t now_ms, const struct tcp_syncookie_opts *o);
/* Fills o's ws/sack from a TSecr; false when the bits are invalid. */
bool tcp_syncookie_ts_decode(const struct tcp_stack *ts, uint32_t ecr,
			     struct tcp_syncookie_opts *o);

#endif
