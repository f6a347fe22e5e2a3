/* tcp/fastopen_cookie.c: TCP Fast Open options, server cookies and admission
 * (RFC 7413 4.1, 4.2.2, 5.1).  The client cookie cache is tcp/fastopen_cache.c.
 *
 * Cookie choice.  RFC 7413 4.1.2 asks for a MAC tag that only the server
 * can make, bound to the client's IP address, cheap to make and check, and
 * expirable by changing the secret; its example is AES-128 over the address.
 * We compute exactly what Linux does (tcp_fastopen.c since 5.x): libsodium's
 * crypto_shorthash (SipHash-2-4, 128-bit key, 64-bit tag) over the client's
 * then the server's address as they lie in the header (8 bytes for IPv4, 32
 * for IPv6), under the key bytes of the tcp_fastopen_key string (tfo_keys_parse).
 * Linux servers and ours behind one address with one shared key therefore
 * accept each other's cookies (Linux's own test vector, checked against this
 * machine's kernel: key a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4, client
 * 192.0.2.1, server 192.168.0.1, cookie 3021b9d889017eeb).  A keyed PRF
 * built for short inputs, several times cheaper than AES in software; an
 * 8-byte tag is well inside the 4..16 byte range.
 *
 * Keys: a primary (makes cookies) and a backup (the previous primary, still
 * accepted), so a rotation does not invalidate every cookie in the field at
 * once; a cookie dies at the second rotation after it was made.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "stack/base/rand.h"
#include "tcp/fastopen.h"

#define TFO_OPT_HDR 2      /* kind, length */
#define TFO_OPT_EXP_HDR 4  /* kind, length, 2-byte ExID */
#define TFO_KEY_GROUPS 4
#define TFO_KEY_GROUP_DIGITS 8

/* Options */

static bool cookie_len_ok(size_t n)
{
	/* RFC 7413 4.1.1: 4..16 bytes and the option length MUST be even. */
	return n >= TFO_COOKIE_MIN && n <= TFO_COOKIE_MAX && n % 2 == 0;
}

/* Decode one option whose kind byte is p[0]; avail is how many bytes are
 * left in the option area from p.  Anything malformed is ignored (RFC 7413
 * 4.1.1: "Options with invalid Length values ... MUST be ignored") and
 * reported as TFO_OPT_NONE; nothing beyond p[avail - 1] is ever read.  The
 * caller checks the SYN flag (the option is ignored without it). */
enum tfo_opt_type tfo_opt_decode(const uint8_t *p, size_t avail, struct tfo_opt *out)
{
	size_t len, hdr;

	out->type = TFO_OPT_NONE;
	out->exp = false;
	out->cookie_len = 0;
	if (avail < TFO_OPT_HDR)
		return TFO_OPT_NONE;
	len = p[1];
	if (len > avail)
		return TFO_OPT_NONE;
	if (p[0] == TFO_OPT_KIND) {
		hdr = TFO_OPT_HDR;
	} else if (p[0] == TFO_OPT_KIND_EXP) {
		/* RFC 6994 3: a 254 option with another ExID is someone else's. */
		if (len < TFO_OPT_EXP_HDR || (p[2] << 8 | p[3]) != TFO_OPT_EXP_MAGIC)
			return TFO_OPT_NONE;
		hdr = TFO_OPT_EXP_HDR;
		out->exp = true;
	} else {
		return TFO_OPT_NONE;
	}
	if (len < hdr)
		return TFO_OPT_NONE;
	if (len == hdr) {
		out->type = TFO_OPT_REQUEST;
		return out->type;
	}
	if (!cookie_len_ok(len - hdr)) {
		out->exp = false;
		return TFO_OPT_NONE;
	}
	out->cookie_len = (uint8_t)(len - hdr);
	memcpy(out->cookie, p + hdr, out->cookie_len);
	out->type = TFO_OPT_COOKIE;
	return out->type;
}

/* Walk a whole option area (EOL, NOPs, other options skipped by length) and
 * decode the first Fast Open option.  A bad length stops the walk, as in
 * tcp/options.c (RFC 9293 3.1). */
enum tfo_opt_type tfo_opt_find(const uint8_t *opts, size_t len, struct tfo_opt *out)
{
	size_t off = 0;

	out->type = TFO_OPT_NONE;
	out->exp = false;
	out->cookie_len = 0;
	while (off < len) {
		uint8_t kind = opts[off];

		if (kind == 0)
			break;
		if (kind == 1) {
			off++;
			continue;
		}
		if (len - off < 2 || opts[off + 1] < 2 || opts[off + 1] > len - off)
			break;
		if (kind == TFO_OPT_KIND || kind == TFO_OPT_KIND_EXP) {
			if (tfo_opt_decode(opts + off, len - off, out) != TFO_OPT_NONE)
				return out->type;
		}
		off += opts[off + 1];
	}
	return TFO_OPT_NONE;
}

/* Bytes the option takes on the wire (no padding), or -EINVAL. */
int tfo_opt_len(const struct tfo_opt *o)
{
	int hdr = o->exp ? TFO_OPT_EXP_HDR : TFO_OPT_HDR;

	if (o->type == TFO_OPT_REQUEST)
		return hdr;
	if (o->type == TFO_OPT_COOKIE && cookie_len_ok(o->cookie_len))
		return hdr + o->cookie_len;
	return -EINVAL;
}

/* Write the option into buf (no NOP padding: the caller aligns the option
 * area).  Returns bytes written, -EINVAL for a bad option, -ENOSPC. */
int tfo_opt_encode(uint8_t *buf, size_t room, const struct tfo_opt *o)
{
	int n = tfo_opt_len(o);
	size_t hdr = o->exp ? TFO_OPT_EXP_HDR : TFO_OPT_HDR;

	if (n < 0)
		return n;
	if ((size_t)n > room)
		return -ENOSPC;
	buf[0] = o->exp ? TFO_OPT_KIND_EXP : TFO_OPT_KIND;
	buf[1] = (uint8_t)n;
	if (o->exp) {
		buf[2] = TFO_OPT_EXP_MAGIC >> 8;
		buf[3] = TFO_OPT_EXP_MAGIC & 0xff;
	}
	if (o->type == TFO_OPT_COOKIE)
		memcpy(buf + hdr, o->cookie, o->cookie_len);
	return n;
}

/* Keys */

/* Fresh random keys, no backup; the first rotation is one period away. */
int tfo_keys_init(struct tfo_keys *k, uint64_t period_ns, uint64_t now_ns)
{
	if (sodium_init() < 0)
		return -EIO;
	memset(k, 0, sizeof(*k));
	us_rand_buf(k->primary, sizeof(k->primary));
	k->period_ns = period_ns;
	k->next_rotate_ns = period_ns ? now_ns + period_ns : 0;
	return 0;
}

void tfo_keys_wipe(struct tfo_keys *k)
{
	sodium_memzero(k, sizeof(*k));
}

/* Rotate when the period has passed: the primary becomes the backup (the
 * old backup is destroyed) and a new random primary is drawn.  Returns 1 if
 * it rotated, 0 if not yet (or never: period 0). */
int tfo_keys_maybe_rotate(struct tfo_keys *k, uint64_t now_ns)
{
	if (k->period_ns == 0 || now_ns < k->next_rotate_ns)
		return 0;
	memcpy(k->backup, k->primary, sizeof(k->backup));
	k->has_backup = true;
	us_rand_buf(k->primary, sizeof(k->primary));
	/* After a long stall rotate once, not once per missed period: a
	 * burst of rotations would just throw away the backup. */
	k->next_rotate_ns = now_ns + k->period_ns;
	return 1;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* One group of 8 hex digits = one 32-bit word, stored little-endian as
 * Linux stores tcp_fastopen_key words, so a key string means the same key
 * bytes here as in /proc/sys/net/ipv4/tcp_fastopen_key. */
static int parse_group(const char *s, size_t n, uint8_t *out, int key, int grp,
		       char *err, size_t errlen)
{
	uint32_t w = 0;

	if (n != TFO_KEY_GROUP_DIGITS) {
		snprintf(err, errlen, "key %d, group %d: expected 8 hex digits, got %zu characters",
			 key, grp, n);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++) {
		int v = hexval(s[i]);

		if (v < 0) {
			snprintf(err, errlen, "key %d, group %d: '%c' is not a hex digit", key, grp,
				 s[i]);
			return -EINVAL;
		}
		w = w << 4 | (uint32_t)v;
	}
	for (int i = 0; i < 4; i++)
		out[i] = (uint8_t)(w >> (8 * i));
	return 0;
}

static int parse_key(const char *s, size_t n, uint8_t out[TFO_KEY_LEN], int key, char *err,
		     size_t errlen)
{
	size_t start = 0;
	int grp = 0;

	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != '-')
			continue;
		if (grp == TFO_KEY_GROUPS) {
			snprintf(err, errlen, "key %d: more than 4 groups (format "
				 "xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxxxxxx)", key);
			return -EINVAL;
		}
		if (parse_group(s + start, i - start, out + 4 * grp, key, grp + 1, err, errlen))
			return -EINVAL;
		grp++;
		start = i + 1;
	}
	if (grp != TFO_KEY_GROUPS) {
		snprintf(err, errlen, "key %d: %d groups, expected 4 (format "
			 "xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxxxxxx)", key, grp);
		return -EINVAL;
	}
	return 0;
}

/* Parse "primary" or "primary,backup", each in Linux's tcp_fastopen_key
 * format (four '-'-separated groups of 8 hex digits).  Sets the key bytes
 * and has_backup only; the rotation period is left alone.  On error k is
 * unchanged and err says what is wrong and where. */
int tfo_keys_parse(const char *s, struct tfo_keys *k, char *err, size_t errlen)
{
	uint8_t keys[2][TFO_KEY_LEN];
	const char *comma;
	int rc;

	if (s == NULL || *s == '\0') {
		snprintf(err, errlen, "empty TFO key (format xxxxxxxx-xxxxxxxx-xxxxxxxx-xxxxxxxx)");
		return -EINVAL;
	}
	comma = strchr(s, ',');
	if (comma != NULL && strchr(comma + 1, ',') != NULL) {
		snprintf(err, errlen, "at most two TFO keys (primary,backup)");
		return -EINVAL;
	}
	rc = parse_key(s, comma ? (size_t)(comma - s) : strlen(s), keys[0], 1, err, errlen);
	if (rc == 0 && comma != NULL)
		rc = parse_key(comma + 1, strlen(comma + 1), keys[1], 2, err, errlen);
	if (rc == 0) {
		memcpy(k->primary, keys[0], TFO_KEY_LEN);
		k->has_backup = comma != NULL;
		if (k->has_backup)
			memcpy(k->backup, keys[1], TFO_KEY_LEN);
	}
	sodium_memzero(keys, sizeof(keys));
	return rc;
}

static void format_key(const uint8_t *key, char *out)
{
	for (int g = 0; g < TFO_KEY_GROUPS; g++) {
		const uint8_t *b = key + 4 * g;
		uint32_t w = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
			     (uint32_t)b[3] << 24;

		sprintf(out + 9 * g, "%08x%s", (unsigned)w, g < TFO_KEY_GROUPS - 1 ? "-" : "");
	}
}

/* The inverse of tfo_keys_parse.  Returns 0, or -ENOSPC (needs 36 bytes for
 * one key, 72 with a backup). */
int tfo_keys_format(const struct tfo_keys *k, char *buf, size_t len)
{
	size_t need = k->has_backup ? 72 : 36;

	if (len < need)
		return -ENOSPC;
	format_key(k->primary, buf);
	if (k->has_backup) {
		buf[35] = ',';
		format_key(k->backup, buf + 36);
	}
	return 0;
}

/* Cookies */

/* Linux's MAC: the client's address then the server's, as they lie in the
 * header (IPv4's 4 bytes each, IPv6's 16). */
static void mac(const uint8_t key[TFO_KEY_LEN], const struct us_in6 *client_ip,
		const struct us_in6 *server_ip, uint8_t out[TFO_SERVER_COOKIE_LEN])
{
	uint8_t msg[2 * sizeof(client_ip->b)];
	size_t n = us_in6_is_v4mapped(client_ip) ? 4 : sizeof(client_ip->b);

	memcpy(msg, client_ip->b + sizeof(client_ip->b) - n, n);
	memcpy(msg + n, server_ip->b + sizeof(server_ip->b) - n, n);
	crypto_shorthash(out, msg, 2 * n, key);
}

/* Addresses: IPv4 v4-mapped (tcp.h). */
void tfo_cookie_make(const struct tfo_keys *k, const struct us_in6 *client_ip,
		     const struct us_in6 *server_ip, uint8_t out[TFO_SERVER_COOKIE_LEN])
{
	mac(k->primary, client_ip, server_ip, out);
}

/* RFC 7413 4.1.2: valid if it is the MAC of the client's address under the
 * primary or the backup key.  Compared in constant time so that a forger
 * learns nothing from timing. */
enum tfo_cookie_verdict tfo_cookie_check(const struct tfo_keys *k, const struct us_in6 *client_ip,
					 const struct us_in6 *server_ip, const uint8_t *cookie,
					 size_t len)
{
	uint8_t want[TFO_SERVER_COOKIE_LEN];
	enum tfo_cookie_verdict v = TFO_COOKIE_INVALID;

	if (len != TFO_SERVER_COOKIE_LEN || cookie == NULL)
		return TFO_COOKIE_INVALID;
	mac(k->primary, client_ip, server_ip, want);
	if (sodium_memcmp(want, cookie, sizeof(want)) == 0) {
		v = TFO_COOKIE_VALID_PRIMARY;
	} else if (k->has_backup) {
		mac(k->backup, client_ip, server_ip, want);
		if (sodium_memcmp(want, cookie, sizeof(want)) == 0)
			v = TFO_COOKIE_VALID_BACKUP;
	}
	sodium_memzero(want, sizeof(want));
	return v;
}

/* Admission */

/* RFC 7413 4.2.2 / 5.1: may the data on this SYN (which carried a cookie)
 * be accepted?  Checked in this order, each refusal counted by name:
 *  - TFO disabled on the listener;
 *  - SYN cookies active: the listener is under a SYN flood and keeps no
 *    state for embryos, so it cannot hold SYN data either (as Linux);
 *  - PendingFastOpenRequests >= qlen (RFC 7413 5.1: past the limit, fall
 *    back to the 3WHS so spoofed-cookie floods cannot pin resources);
 *  - invalid cookie (RFC 7413 4.2.2: drop the data, answer with a valid
 *    cookie in the SYN-ACK).
 * On accept the pending count goes up; tfo_listener_pending_done() brings it
 * down when the child leaves SYN-RECEIVED (established, reset or timed out).
 */
enum tfo_admit tfo_server_admit(struct tfo_listener *l, bool have_valid_cookie,
				bool syn_cookies_active)
{
	if (!l->enabled) {
		l->ctr->srv_refused_disabled++;
		return TFO_ADMIT_REFUSE_DISABLED;
	}
	if (syn_cookies_active) {
		l->ctr->srv_refused_syn_flood++;
		return TFO_ADMIT_REFUSE_SYN_FLOOD;
	}
	if (l->pending >= l->qlen) {
		l->ctr->srv_refused_qlen++;
		return TFO_ADMIT_REFUSE_QLEN;
	}
	if (!have_valid_cookie) {
		l->ctr->srv_refused_bad_cookie++;
		return TFO_ADMIT_REFUSE_BAD_COOKIE;
	}
	l->pending++;
	l->ctr->srv_accepted++;
	return TFO_ADMIT_ACCEPT;
}

/* Does the SYN-ACK carry a (fresh) cookie?  On accept and on a bad cookie
 * (RFC 7413 4.2.2); not when TFO is off, flooded or over qlen, where the
 * listener behaves as a plain 3WHS server (as Linux). */
bool tfo_admit_sends_cookie(enum tfo_admit a)
{
	return a == TFO_ADMIT_ACCEPT || a == TFO_ADMIT_REFUSE_BAD_COOKIE;
}

void tfo_listener_pending_done(struct tfo_listener *l)
{
	if (l->pending > 0)
		l->pending--;
}

const char *tfo_admit_name(enum tfo_admit a)
{
	switch (a) {
	case TFO_ADMIT_ACCEPT: return "accept";
	case TFO_ADMIT_REFUSE_DISABLED: return "disabled";
	case TFO_ADMIT_REFUSE_SYN_FLOOD: return "syn-flood";
	case TFO_ADMIT_REFUSE_QLEN: return "qlen-exhausted";
	case TFO_ADMIT_REFUSE_BAD_COOKIE: return "invalid-cookie";
	}
	return "?";
}
