/* tcp/fastopen.h: the pure pieces of TCP Fast Open (RFC 7413).
 *
 * Nothing here sees a packet, a connection or a clock: the option codec
 * works on byte buffers, the cookie functions on an address and a key set,
 * admission on a listener's counters, and the client cache on the caller's
 * "now".  The state machine (tcp/fastopen_tcb.c) calls these:
 *   - input: tfo_opt_decode() on a SYN/SYN-ACK option (or tfo_opt_find() on
 *     the whole option area);
 *   - server SYN: tfo_cookie_check(), then tfo_server_admit(); the SYN-ACK
 *     carries tfo_cookie_make() when tfo_admit_sends_cookie() says so,
 *     encoded in the client's own option kind (34 or 254, "answered in kind");
 *   - client connect: tfo_cache_lookup() and tfo_syn_data_limit(); on the
 *     SYN-ACK tfo_cache_store(); on a SYN-data timeout or ICMP error
 *     tfo_cache_mark_unfriendly().
 *
 * Ownership: a tfo_keys set has one writer (the engine that rotates it) and
 * is published to the other engines by copy (DESIGN.md "Cross-engine
 * state").  A tfo_cache and a tfo_listener belong to one engine.
 */
#ifndef US_TCP_FASTOPEN_H
#define US_TCP_FASTOPEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stack/base/in6.h"

/* Types */

/* RFC 7413 4.1.1: kind 34; RFC 6994 shared experimental kind 254 with the
 * ExID 0xF989 that pre-RFC stacks (Linux before 4.x by default) still send. */
#define TFO_OPT_KIND 34
#define TFO_OPT_KIND_EXP 254
#define TFO_OPT_EXP_MAGIC 0xF989
#define TFO_COOKIE_MIN 4
#define TFO_COOKIE_MAX 16
#define TFO_OPT_MAX_LEN (4 + TFO_COOKIE_MAX) /* experimental form, largest */

/* Our server cookies: SipHash-2-4 output (crypto_shorthash_BYTES). */
#define TFO_SERVER_COOKIE_LEN 8
#define TFO_KEY_LEN 16 /* crypto_shorthash_KEYBYTES */

/* RFC 7413 4.1.3: without a cached server MSS, SYN data is limited to the
 * default IPv4 MSS of RFC 1122 (576 - 40). */
#define TFO_DEFAULT_SYN_MSS 536

enum tfo_opt_type {
	TFO_OPT_NONE = 0, /* absent, or present but ignored (bad length/magic) */
	TFO_OPT_REQUEST,  /* empty cookie: "please give me a cookie" */
	TFO_OPT_COOKIE,   /* cookie of 4..16 bytes, even length */
};

struct tfo_opt {
	enum tfo_opt_type type;
	bool exp; /* experimental form (254 + 0xF989): answer in kind */
	uint8_t cookie_len;
	uint8_t cookie[TFO_COOKIE_MAX];
};

/* Server secrets, like Linux's tcp_fastopen_key: a primary that makes
 * cookies and a backup (the previous primary) that is still accepted. */
struct tfo_keys {
	uint8_t primary[TFO_KEY_LEN];
	uint8_t backup[TFO_KEY_LEN];
	bool has_backup;
	uint64_t period_ns;      /* 0: never rotate */
	uint64_t next_rotate_ns; /* on the caller's clock */
};

enum tfo_cookie_verdict {
	TFO_COOKIE_INVALID = 0,
	TFO_COOKIE_VALID_PRIMARY,
	TFO_COOKIE_VALID_BACKUP,
};

/* Counters: every refusal has its own name.  X(name, description) */
#define TFO_COUNTERS(X) \
	X(srv_accepted, "server: SYN data accepted (valid cookie)") \
	X(srv_refused_disabled, "server: SYN data refused, TFO disabled on the listener") \
	X(srv_refused_qlen, "server: SYN data refused, PendingFastOpenRequests >= qlen (RFC 7413 5.1)") \
	X(srv_refused_syn_flood, "server: SYN data refused, SYN cookies active") \
	X(srv_refused_bad_cookie, "server: SYN data refused, cookie invalid (new cookie sent)") \
	X(cli_cache_hits, "client: cookie found for the server") \
	X(cli_cache_misses, "client: no cookie cached for the server") \
	X(cli_cache_negative, "client: server marked TFO-unfriendly, no SYN data") \
	X(cli_cache_evictions, "client: cache entries evicted (LRU)") \
	X(cli_marked_unfriendly, "client: servers marked TFO-unfriendly (timeout / ICMP)") \
	X(srv_cookies_sent, "server: SYN-ACKs carrying a fresh cookie (RFC 7413 4.2.1)") \
	X(srv_data_bytes, "server: SYN data bytes accepted") \
	X(cli_cookie_requests, "client: SYNs asking for a cookie") \
	X(cli_syn_data_sent, "client: SYNs sent with data and a cookie") \
	X(cli_syn_data_acked, "client: SYN data fully acknowledged by the SYN-ACK") \
	X(cli_syn_data_resent, "client: SYN data not (fully) acknowledged, sent after the handshake") \
	X(cli_syn_timeouts, "client: Fast Open SYN timed out, plain SYN sent instead (RFC 7413 4.1.3)") \
	X(cli_cookies_stored, "client: cookies received in SYN-ACKs and cached") \
	X(key_rotations, "server: key rotations (the old primary stays valid as backup)")

struct tfo_counters {
#define TFO_COUNTER_FIELD(name, desc) uint64_t name;
	TFO_COUNTERS(TFO_COUNTER_FIELD)
#undef TFO_COUNTER_FIELD
};

/* Per listener (listeners are replicated per engine). */
struct tfo_listener {
	bool enabled;
	uint32_t qlen;    /* limit on PendingFastOpenRequests (RFC 7413 5.1) */
	uint32_t pending; /* TFO children still in SYN-RECEIVED */
	struct tfo_counters *ctr; /* the engine's counters; never NULL */
};

enum tfo_admit {
	TFO_ADMIT_ACCEPT = 0,
	TFO_ADMIT_REFUSE_DISABLED,
	TFO_ADMIT_REFUSE_SYN_FLOOD,
	TFO_ADMIT_REFUSE_QLEN,
	TFO_ADMIT_REFUSE_BAD_COOKIE,
};

enum tfo_cache_status {
	TFO_CACHE_MISS = 0, /* no cookie: send a cookie request */
	TFO_CACHE_HIT,      /* cookie (and maybe MSS) filled in: send SYN data */
	TFO_CACHE_NEGATIVE, /* server marked unfriendly: plain SYN, no TFO */
};

struct tfo_cache_entry_view {
	uint8_t cookie_len;
	uint8_t cookie[TFO_COOKIE_MAX];
	uint16_t mss; /* 0: not known */
};

struct tfo_cache; /* opaque, one per engine */

/* Prototypes */

/* Options (tcp/fastopen_cookie.c) */
enum tfo_opt_type tfo_opt_decode(const uint8_t *p, size_t avail, struct tfo_opt *out);
enum tfo_opt_type tfo_opt_find(const uint8_t *opts, size_t len, struct tfo_opt *out);
int tfo_opt_encode(uint8_t *buf, size_t room, const struct tfo_opt *o);
int tfo_opt_len(const struct tfo_opt *o);

/* Server keys and cookies (tcp/fastopen_cookie.c) */
int tfo_keys_init(struct tfo_keys *k, uint64_t period_ns, uint64_t now_ns);
int tfo_keys_parse(const char *s, struct tfo_keys *k, char *err, size_t errlen);
int tfo_keys_format(const struct tfo_keys *k, char *buf, size_t len);
int tfo_keys_maybe_rotate(struct tfo_keys *k, uint64_t now_ns);
void tfo_keys_wipe(struct tfo_keys *k);
/* client_ip and server_ip: the SYN's source and destination. */
void tfo_cookie_make(const struct tfo_keys *k, const struct us_in6 *client_ip,
		     const struct us_in6 *server_ip, uint8_t out[TFO_SERVER_COOKIE_LEN]);
enum tfo_cookie_verdict tfo_cookie_check(const struct tfo_keys *k, const struct us_in6 *client_ip,
					 const struct us_in6 *server_ip, const uint8_t *cookie,
					 size_t len);

/* Server admission (tcp/fastopen_cookie.c) */
enum tfo_admit tfo_server_admit(struct tfo_listener *l, bool have_valid_cookie,
				bool syn_cookies_active);
bool tfo_admit_sends_cookie(enum tfo_admit a);
void tfo_listener_pending_done(struct tfo_listener *l);
const char *tfo_admit_name(enum tfo_admit a);

/* Client cache (tcp/fastopen_cache.c) */
struct tfo_cache *tfo_cache_create(uint32_t capacity, uint64_t neg_ttl_ns,
				   struct tfo_counters *ctr);
void tfo_cache_free(struct tfo_cache *c);
enum tfo_cache_status tfo_cache_lookup(struct tfo_cache *c, const struct us_in6 *server_ip,
				       uint64_t now_ns, struct tfo_cache_entry_view *out);
int tfo_cache_store(struct tfo_cache *c, const struct us_in6 *server_ip, const uint8_t *cookie,
		    size_t cookie_len, uint16_t mss);
int tfo_cache_mark_unfriendly(struct tfo_cache *c, const struct us_in6 *server_ip, uint64_t now_ns);
uint32_t tfo_cache_count(const struct tfo_cache *c);
uint16_t tfo_syn_data_limit(const struct tfo_cache_entry_view *e);
/* A cookie usable now for server_ip (no side effects). */
bool tfo_cache_has_cookie(const struct tfo_cache *c, const struct us_in6 *server_ip, uint64_t now_ns);

#endif /* US_TCP_FASTOPEN_H */
