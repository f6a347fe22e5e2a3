/* tests/unit/fastopen: TCP Fast Open pure pieces (RFC 7413): the option
 * codec (kind 34 and the RFC 6994 experimental form), server cookies and
 * keys, admission, and the client cookie cache.
 *
 * Option buffers are heap copies of exactly the bytes given, so a decoder
 * that reads one byte too far is caught by ASan / valgrind runs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>
#include <sodium.h>

#include "tcp/fastopen.h"

#define SEC 1000000000ull
#define KEY0 "00000000-00000000-00000000-00000000"
#define KEYA "03020100-07060504-0b0a0908-0f0e0d0c"

/* Helpers */

static enum tfo_opt_type decode_exact(const uint8_t *bytes, size_t n, struct tfo_opt *o)
{
	uint8_t *copy = malloc(n ? n : 1);
	enum tfo_opt_type t;

	assert_non_null(copy);
	memcpy(copy, bytes, n);
	t = tfo_opt_decode(copy, n, o);
	free(copy);
	return t;
}

static size_t make_opt(uint8_t *buf, bool exp, size_t cookie_len)
{
	size_t hdr = exp ? 4 : 2;

	buf[0] = exp ? TFO_OPT_KIND_EXP : TFO_OPT_KIND;
	buf[1] = (uint8_t)(hdr + cookie_len);
	if (exp) {
		buf[2] = 0xF9;
		buf[3] = 0x89;
	}
	for (size_t i = 0; i < cookie_len; i++)
		buf[hdr + i] = (uint8_t)(0xA0 + i);
	return hdr + cookie_len;
}

/* The address s (dotted quad or IPv6 text) as tcp/ holds it: IPv4
 * v4-mapped.  A pointer into a small ring, so that the arguments of one
 * call may take several; copy what must live longer. */
static const struct us_in6 *ip(const char *s)
{
	static struct us_in6 ring[8];
	static unsigned next;
	struct us_in6 *a = &ring[next++ % (sizeof(ring) / sizeof(ring[0]))];
	struct in_addr v4;

	if (inet_pton(AF_INET, s, &v4) == 1)
		*a = us_in6_of_v4(ntohl(v4.s_addr));
	else
		assert_int_equal(inet_pton(AF_INET6, s, a->b), 1);
	return a;
}

/* The server address a cookie is bound to with the client's (Linux's MAC):
 * 192.168.0.1 for an IPv4 client, 2001:db8::1 for an IPv6 one. */
static const struct us_in6 *srv_for(const struct us_in6 *client)
{
	static const struct us_in6 s6 = { .b = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 } };
	static struct us_in6 s4;

	s4 = us_in6_of_v4(0xc0a80001);
	return us_in6_is_v4mapped(client) ? &s4 : &s6;
}

/* Options */

static void test_opt_request_kind34(void **state)
{
	const uint8_t b[] = {34, 2};
	struct tfo_opt o;

	(void)state;
	assert_int_equal(decode_exact(b, sizeof(b), &o), TFO_OPT_REQUEST);
	assert_false(o.exp);
	assert_int_equal(o.cookie_len, 0);
}

static void test_opt_request_exp(void **state)
{
	const uint8_t b[] = {254, 4, 0xF9, 0x89};
	struct tfo_opt o;

	(void)state;
	assert_int_equal(decode_exact(b, sizeof(b), &o), TFO_OPT_REQUEST);
	assert_true(o.exp);
}

/* RFC 7413 4.1.1: every even cookie length from 4 to 16, both kinds. */
static void test_opt_even_cookies_accepted(void **state)
{
	(void)state;
	for (int exp = 0; exp <= 1; exp++) {
		for (size_t n = TFO_COOKIE_MIN; n <= TFO_COOKIE_MAX; n += 2) {
			uint8_t b[TFO_OPT_MAX_LEN];
			size_t len = make_opt(b, exp, n);
			struct tfo_opt o;

			assert_int_equal(decode_exact(b, len, &o), TFO_OPT_COOKIE);
			assert_int_equal(o.exp, exp);
			assert_int_equal(o.cookie_len, n);
			assert_memory_equal(o.cookie, b + (exp ? 4 : 2), n);
		}
	}
}

static void test_opt_odd_cookies_ignored(void **state)
{
	(void)state;
	for (int exp = 0; exp <= 1; exp++) {
		for (size_t n = 1; n <= 17; n += 2) {
			uint8_t b[32];
			size_t len = make_opt(b, exp, n);
			struct tfo_opt o;

			assert_int_equal(decode_exact(b, len, &o), TFO_OPT_NONE);
			assert_false(o.exp);
		}
	}
}

/* Cookie of 2 bytes (too short), 18 and 20 (too long); length bytes 0 and
 * 1 (below the option header). */
static void test_opt_out_of_range_ignored(void **state)
{
	const size_t bad[] = {2, 18, 20};
	struct tfo_opt o;

	(void)state;
	for (int exp = 0; exp <= 1; exp++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			uint8_t b[32];
			size_t len = make_opt(b, exp, bad[i]);

			assert_int_equal(decode_exact(b, len, &o), TFO_OPT_NONE);
		}
	}
	for (uint8_t l = 0; l < 2; l++) {
		const uint8_t b34[] = {34, l}, b254[] = {254, l, 0xF9, 0x89};

		assert_int_equal(decode_exact(b34, sizeof(b34), &o), TFO_OPT_NONE);
		assert_int_equal(decode_exact(b254, sizeof(b254), &o), TFO_OPT_NONE);
	}
	/* 254 with length 2 or 3: too short to hold the ExID. */
	const uint8_t s2[] = {254, 2}, s3[] = {254, 3, 0xF9};
	assert_int_equal(decode_exact(s2, sizeof(s2), &o), TFO_OPT_NONE);
	assert_int_equal(decode_exact(s3, sizeof(s3), &o), TFO_OPT_NONE);
}

static void test_opt_exp_wrong_magic_ignored(void **state)
{
	uint8_t b[TFO_OPT_MAX_LEN];
	size_t len = make_opt(b, true, 8);
	const uint8_t req[] = {254, 4, 0x89, 0xF9}; /* byte-swapped ExID */
	struct tfo_opt o;

	(void)state;
	b[3] = 0x8A;
	assert_int_equal(decode_exact(b, len, &o), TFO_OPT_NONE);
	assert_int_equal(decode_exact(req, sizeof(req), &o), TFO_OPT_NONE);
}

/* The length byte claims more than the buffer holds: ignored, and the
 * exact-size heap copy catches any read past the end. */
static void test_opt_truncated(void **state)
{
	uint8_t b[TFO_OPT_MAX_LEN];
	struct tfo_opt o;
	size_t len;

	(void)state;
	len = make_opt(b, false, 8);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(decode_exact(b, n, &o), TFO_OPT_NONE);
	len = make_opt(b, true, 16);
	for (size_t n = 0; n < len; n++)
		assert_int_equal(decode_exact(b, n, &o), TFO_OPT_NONE);
	len = make_opt(b, false, 0);
	assert_int_equal(decode_exact(b, 1, &o), TFO_OPT_NONE);
	assert_int_equal(decode_exact(b, len, &o), TFO_OPT_REQUEST);
}

/* A SYN's option area: MSS, NOP, WS, SACK-permitted, TS, then TFO. */
static void test_opt_find_in_option_area(void **state)
{
	uint8_t a[40] = {2, 4, 0x05, 0xb4, 1, 3, 3, 7, 4, 2,
			 8, 10, 0, 0, 0, 1, 0, 0, 0, 0};
	size_t len = 20 + make_opt(a + 20, false, 8);
	struct tfo_opt o;
	uint8_t *copy = malloc(len);

	(void)state;
	assert_non_null(copy);
	memcpy(copy, a, len);
	assert_int_equal(tfo_opt_find(copy, len, &o), TFO_OPT_COOKIE);
	assert_int_equal(o.cookie_len, 8);
	/* Cut inside the TFO option: not found, no over-read. */
	assert_int_equal(tfo_opt_find(copy, len - 1, &o), TFO_OPT_NONE);
	/* EOL before it ends the area. */
	copy[4] = 0;
	assert_int_equal(tfo_opt_find(copy, len, &o), TFO_OPT_NONE);
	/* A bad length (1) stops the walk. */
	copy[4] = 1;
	copy[9] = 1;
	assert_int_equal(tfo_opt_find(copy, len, &o), TFO_OPT_NONE);
	free(copy);
	/* A bad TFO option followed by a good one: the good one counts. */
	uint8_t two[4 + TFO_OPT_MAX_LEN] = {34, 5, 0xAA, 0xBB, 0xCC};
	size_t n2 = 5 + make_opt(two + 5, true, 4);
	assert_int_equal(tfo_opt_find(two, n2, &o), TFO_OPT_COOKIE);
	assert_true(o.exp);
}

/* The server answers in the kind the client used (34 or 254 + 0xF989). */
static void test_opt_encode_answer_in_kind(void **state)
{
	const uint8_t syn34[] = {34, 2}, syn254[] = {254, 4, 0xF9, 0x89};
	const uint8_t *syns[] = {syn34, syn254};
	const size_t lens[] = {sizeof(syn34), sizeof(syn254)};

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct tfo_opt req, rep = {.type = TFO_OPT_COOKIE, .cookie_len = 8}, back;
		uint8_t buf[TFO_OPT_MAX_LEN];
		int n;

		assert_int_equal(decode_exact(syns[i], lens[i], &req), TFO_OPT_REQUEST);
		rep.exp = req.exp;
		memset(rep.cookie, 0x5A, 8);
		n = tfo_opt_encode(buf, sizeof(buf), &rep);
		assert_int_equal(n, req.exp ? 12 : 10);
		assert_int_equal(n, tfo_opt_len(&rep));
		assert_int_equal(buf[0], req.exp ? 254 : 34);
		assert_int_equal(buf[1], n);
		if (req.exp) {
			assert_int_equal(buf[2], 0xF9);
			assert_int_equal(buf[3], 0x89);
		}
		assert_int_equal(decode_exact(buf, (size_t)n, &back), TFO_OPT_COOKIE);
		assert_int_equal(back.exp, req.exp);
		assert_memory_equal(back.cookie, rep.cookie, 8);
		/* And a request re-encodes to the bytes it came from. */
		assert_int_equal(tfo_opt_encode(buf, sizeof(buf), &req), (int)lens[i]);
		assert_memory_equal(buf, syns[i], lens[i]);
	}
}

static void test_opt_encode_errors(void **state)
{
	struct tfo_opt o = {.type = TFO_OPT_COOKIE, .cookie_len = 5};
	uint8_t buf[TFO_OPT_MAX_LEN];

	(void)state;
	assert_int_equal(tfo_opt_encode(buf, sizeof(buf), &o), -EINVAL);
	o.cookie_len = 18;
	assert_int_equal(tfo_opt_encode(buf, sizeof(buf), &o), -EINVAL);
	o.type = TFO_OPT_NONE;
	assert_int_equal(tfo_opt_encode(buf, sizeof(buf), &o), -EINVAL);
	o.type = TFO_OPT_COOKIE;
	o.cookie_len = 16;
	assert_int_equal(tfo_opt_encode(buf, 17, &o), -ENOSPC);
	assert_int_equal(tfo_opt_encode(buf, 18, &o), 18);
	o.exp = true;
	assert_int_equal(tfo_opt_encode(buf, 19, &o), -ENOSPC);
	assert_int_equal(tfo_opt_encode(buf, 20, &o), 20);
}

/* Cookies and keys */

static void test_cookie_deterministic(void **state)
{
	struct tfo_keys k;
	uint8_t c1[TFO_SERVER_COOKIE_LEN], c2[TFO_SERVER_COOKIE_LEN];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 0, 0), 0);
	tfo_cookie_make(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c1);
	tfo_cookie_make(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c2);
	assert_memory_equal(c1, c2, sizeof(c1));
	assert_int_equal(tfo_cookie_check(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c1, sizeof(c1)),
			 TFO_COOKIE_VALID_PRIMARY);
	tfo_keys_wipe(&k);
}

static void test_cookie_per_ip_and_key(void **state)
{
	struct tfo_keys k, k2;
	uint8_t a[TFO_SERVER_COOKIE_LEN], b[TFO_SERVER_COOKIE_LEN], c[TFO_SERVER_COOKIE_LEN];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 0, 0), 0);
	assert_int_equal(tfo_keys_init(&k2, 0, 0), 0);
	tfo_cookie_make(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), a);
	tfo_cookie_make(&k, ip("192.0.2.2"), srv_for(ip("192.0.2.2")), b);
	tfo_cookie_make(&k2, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c);
	assert_memory_not_equal(a, b, sizeof(a));
	assert_memory_not_equal(a, c, sizeof(a));
	assert_int_equal(tfo_cookie_check(&k, ip("192.0.2.2"), srv_for(ip("192.0.2.2")), a, sizeof(a)), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k2, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), a, sizeof(a)), TFO_COOKIE_INVALID);
}

/* The cookie is SipHash-2-4 under the key bytes of the Linux-format string
 * (32-bit words, little-endian) over the client's then the server's address
 * in network order. */
static void test_cookie_byte_order(void **state)
{
	struct tfo_keys k = {0};
	uint8_t want_key[TFO_KEY_LEN], want[8], got[8];
	const uint8_t addr[8] = {192, 0, 2, 1, 192, 168, 0, 1};
	char err[128];

	(void)state;
	assert_int_equal(tfo_keys_parse(KEYA, &k, err, sizeof(err)), 0);
	for (int i = 0; i < TFO_KEY_LEN; i++)
		want_key[i] = (uint8_t)i;
	assert_memory_equal(k.primary, want_key, TFO_KEY_LEN);
	assert_int_equal(crypto_shorthash(want, addr, sizeof(addr), want_key), 0);
	tfo_cookie_make(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), got);
	assert_memory_equal(got, want, sizeof(want));
}

/* Linux's own test vector (tools/testing/selftests' defaults), checked
 * against this machine's kernel with a SYN asking for a cookie: the same
 * key string gives the same cookie, so Linux servers and ours can share one
 * address and key.  The server address counts too. */
static void test_cookie_linux_vector(void **state)
{
	static const uint8_t linux_cookie[8] = { 0x30, 0x21, 0xb9, 0xd8, 0x89, 0x01, 0x7e, 0xeb };
	struct tfo_keys k = {0};
	uint8_t got[8];
	char err[128];

	(void)state;
	assert_int_equal(tfo_keys_parse("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4", &k, err, sizeof(err)),
			 0);
	tfo_cookie_make(&k, ip("192.0.2.1"), ip("192.168.0.1"), got);
	assert_memory_equal(got, linux_cookie, sizeof(got));
	assert_int_equal(tfo_cookie_check(&k, ip("192.0.2.1"), ip("192.168.0.1"), got, 8),
			 TFO_COOKIE_VALID_PRIMARY);
	assert_int_equal(tfo_cookie_check(&k, ip("192.0.2.1"), ip("192.168.0.2"), got, 8),
			 TFO_COOKIE_INVALID);
}

static void test_cookie_bad_length_or_tampered(void **state)
{
	struct tfo_keys k;
	uint8_t c[16];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 0, 0), 0);
	tfo_cookie_make(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), c);
	memset(c + 8, 0, 8);
	assert_int_equal(tfo_cookie_check(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), c, 4), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), c, 16), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), c, 0), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), NULL, 8), TFO_COOKIE_INVALID);
	c[7] ^= 1;
	assert_int_equal(tfo_cookie_check(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), c, 8), TFO_COOKIE_INVALID);
	c[7] ^= 1;
	assert_int_equal(tfo_cookie_check(&k, ip("198.51.100.7"), srv_for(ip("198.51.100.7")), c, 8), TFO_COOKIE_VALID_PRIMARY);
}

/* An IPv4 cookie is the MAC of the two 4-byte addresses in network order
 * (as Linux), not of the 16 bytes of their v4-mapped form. */
static void test_cookie_v4_mac_of_four_bytes(void **state)
{
	static const char *const addrs[] = {"192.0.2.1", "0.0.0.0", "255.255.255.255", "10.1.0.2"};
	struct tfo_keys k;
	uint8_t want[8], mapped[8], got[8];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 0, 0), 0);
	for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		struct in_addr a;
		const struct us_in6 *in6 = ip(addrs[i]);
		uint8_t msg[8] = { [4] = 192, 168, 0, 1 }, msg16[32];

		assert_int_equal(inet_pton(AF_INET, addrs[i], &a), 1);
		memcpy(msg, &a.s_addr, 4);
		memcpy(msg16, in6->b, 16);
		memcpy(msg16 + 16, srv_for(in6)->b, 16);
		assert_int_equal(crypto_shorthash(want, msg, sizeof(msg), k.primary), 0);
		assert_int_equal(crypto_shorthash(mapped, msg16, sizeof(msg16), k.primary), 0);
		tfo_cookie_make(&k, in6, srv_for(in6), got);
		assert_memory_equal(got, want, sizeof(want));
		assert_memory_not_equal(got, mapped, sizeof(got));
		assert_int_equal(tfo_cookie_check(&k, in6, srv_for(in6), want, sizeof(want)),
				 TFO_COOKIE_VALID_PRIMARY);
	}
	tfo_keys_wipe(&k);
}

/* An IPv6 client's cookie is the MAC of its 16 bytes: not an IPv4 one's,
 * even when the low 32 bits agree, and valid for that address only. */
static void test_cookie_v6_client(void **state)
{
	const struct us_in6 v6 = *ip("2001:db8::c000:201");
	struct tfo_keys k;
	uint8_t want[8], c6[8], c4[8];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 10 * SEC, 5 * SEC), 0);
	uint8_t msg[32];

	memcpy(msg, v6.b, 16);
	memcpy(msg + 16, srv_for(&v6)->b, 16);
	assert_int_equal(crypto_shorthash(want, msg, sizeof(msg), k.primary), 0);
	tfo_cookie_make(&k, &v6, srv_for(&v6), c6);
	assert_memory_equal(c6, want, sizeof(want));
	tfo_cookie_make(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c4);
	assert_memory_not_equal(c6, c4, sizeof(c6));
	assert_int_equal(tfo_cookie_check(&k, &v6, srv_for(&v6), c6, 8), TFO_COOKIE_VALID_PRIMARY);
	assert_int_equal(tfo_cookie_check(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c6, 8), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, ip("::c000:201"), srv_for(ip("::c000:201")), c6, 8), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, ip("2001:db8::c000:202"), srv_for(ip("2001:db8::c000:202")), c6, 8), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, ip("2001:db9::c000:201"), srv_for(ip("2001:db9::c000:201")), c6, 8), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, &v6, srv_for(&v6), c4, 8), TFO_COOKIE_INVALID);
	/* Through a rotation, as an IPv4 cookie: the backup key still takes it. */
	assert_int_equal(tfo_keys_maybe_rotate(&k, 15 * SEC), 1);
	assert_int_equal(tfo_cookie_check(&k, &v6, srv_for(&v6), c6, 8), TFO_COOKIE_VALID_BACKUP);
	assert_int_equal(tfo_cookie_check(&k, ip("192.0.2.1"), srv_for(ip("192.0.2.1")), c6, 8), TFO_COOKIE_INVALID);
	tfo_keys_wipe(&k);
}

/* A cookie stays valid (as backup) through one rotation and dies at the
 * second. */
static void test_key_rotation(void **state)
{
	struct tfo_keys k;
	const struct us_in6 addr = *ip("203.0.113.9"), *a = &addr;
	uint8_t c0[8], c1[8];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 10 * SEC, 5 * SEC), 0);
	tfo_cookie_make(&k, a, srv_for(a), c0);
	assert_int_equal(tfo_keys_maybe_rotate(&k, 14 * SEC), 0);
	assert_int_equal(tfo_cookie_check(&k, a, srv_for(a), c0, 8), TFO_COOKIE_VALID_PRIMARY);
	assert_int_equal(tfo_keys_maybe_rotate(&k, 15 * SEC), 1);
	assert_int_equal(tfo_cookie_check(&k, a, srv_for(a), c0, 8), TFO_COOKIE_VALID_BACKUP);
	tfo_cookie_make(&k, a, srv_for(a), c1);
	assert_memory_not_equal(c0, c1, 8);
	assert_int_equal(tfo_cookie_check(&k, a, srv_for(a), c1, 8), TFO_COOKIE_VALID_PRIMARY);
	assert_int_equal(tfo_keys_maybe_rotate(&k, 24 * SEC), 0);
	/* A long stall: one rotation, the next a full period later. */
	assert_int_equal(tfo_keys_maybe_rotate(&k, 100 * SEC), 1);
	assert_int_equal(tfo_cookie_check(&k, a, srv_for(a), c0, 8), TFO_COOKIE_INVALID);
	assert_int_equal(tfo_cookie_check(&k, a, srv_for(a), c1, 8), TFO_COOKIE_VALID_BACKUP);
	assert_int_equal(tfo_keys_maybe_rotate(&k, 109 * SEC), 0);
	assert_int_equal(tfo_keys_maybe_rotate(&k, 110 * SEC), 1);
	assert_int_equal(tfo_cookie_check(&k, a, srv_for(a), c1, 8), TFO_COOKIE_INVALID);
	tfo_keys_wipe(&k);
}

static void test_key_rotation_disabled(void **state)
{
	struct tfo_keys k;

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 0, 0), 0);
	assert_int_equal(tfo_keys_maybe_rotate(&k, 0), 0);
	assert_int_equal(tfo_keys_maybe_rotate(&k, UINT64_MAX), 0);
	assert_false(k.has_backup);
}

static void test_keys_parse_valid(void **state)
{
	struct tfo_keys k = {0};
	char err[128] = "", out[80];
	uint8_t zero[TFO_KEY_LEN] = {0};
	const char *two = "0123abcd-DEADBEEF-00000001-ffffffff,03020100-07060504-0b0a0908-0f0e0d0c";

	(void)state;
	assert_int_equal(tfo_keys_parse(KEY0, &k, err, sizeof(err)), 0);
	assert_memory_equal(k.primary, zero, TFO_KEY_LEN);
	assert_false(k.has_backup);
	assert_int_equal(tfo_keys_format(&k, out, sizeof(out)), 0);
	assert_string_equal(out, KEY0);

	assert_int_equal(tfo_keys_parse(two, &k, err, sizeof(err)), 0);
	assert_true(k.has_backup);
	assert_int_equal(k.primary[0], 0xcd); /* word 0x0123abcd, little-endian */
	assert_int_equal(k.primary[3], 0x01);
	assert_int_equal(k.backup[15], 0x0f);
	assert_int_equal(tfo_keys_format(&k, out, 71), -ENOSPC);
	assert_int_equal(tfo_keys_format(&k, out, sizeof(out)), 0);
	assert_string_equal(out, "0123abcd-deadbeef-00000001-ffffffff,"
				 "03020100-07060504-0b0a0908-0f0e0d0c");
}

static void test_keys_parse_malformed(void **state)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{"", "empty TFO key"},
		{"0000000-00000000-00000000-00000000", "key 1, group 1: expected 8 hex digits, got 7"},
		{"00000000-000000000-00000000-00000000", "key 1, group 2: expected 8 hex digits, got 9"},
		{"00000000-00000000-0000g000-00000000", "key 1, group 3: 'g' is not a hex digit"},
		{"00000000-00000000-00000000", "key 1: 3 groups, expected 4"},
		{"00000000-00000000-00000000-00000000-00000000", "key 1: more than 4 groups"},
		{"00000000-00000000-00000000-00000000-", "key 1: more than 4 groups"},
		{"00000000-00000000-00000000-00000000 ", "key 1, group 4: expected 8 hex digits, got 9"},
		{" 00000000-00000000-00000000-00000000", "key 1, group 1: expected 8 hex digits, got 9"},
		{"00000000--00000000-00000000-00000000", "key 1, group 2: expected 8 hex digits, got 0"},
		{KEY0 ",", "key 2, group 1: expected 8 hex digits, got 0"},
		{KEY0 ",0000000x-00000000-00000000-00000000", "key 2, group 1: 'x' is not a hex digit"},
		{KEY0 "," KEY0 "," KEY0, "at most two TFO keys"},
		{"0x000000-00000000-00000000-00000000", "key 1, group 1: 'x' is not a hex digit"},
	};
	struct tfo_keys k, before;
	char err[160];

	(void)state;
	assert_int_equal(tfo_keys_init(&k, 0, 0), 0);
	before = k;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		err[0] = '\0';
		assert_int_equal(tfo_keys_parse(cases[i].in, &k, err, sizeof(err)), -EINVAL);
		if (strstr(err, cases[i].want) == NULL)
			fail_msg("'%s': error '%s' does not contain '%s'", cases[i].in, err,
				 cases[i].want);
		assert_memory_equal(&k, &before, sizeof(k));
	}
	assert_int_equal(tfo_keys_parse(NULL, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty TFO key"));
}

/* Admission */

static void test_admit_accept_and_pending(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_listener l = {.enabled = true, .qlen = 2, .ctr = &ctr};

	(void)state;
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_ACCEPT);
	assert_true(tfo_admit_sends_cookie(TFO_ADMIT_ACCEPT));
	assert_int_equal(l.pending, 1);
	assert_int_equal(ctr.srv_accepted, 1);
	tfo_listener_pending_done(&l);
	tfo_listener_pending_done(&l); /* no underflow */
	assert_int_equal(l.pending, 0);
	assert_string_equal(tfo_admit_name(TFO_ADMIT_ACCEPT), "accept");
}

static void test_admit_disabled(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_listener l = {.enabled = false, .qlen = 10, .ctr = &ctr};

	(void)state;
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_REFUSE_DISABLED);
	assert_int_equal(ctr.srv_refused_disabled, 1);
	assert_int_equal(ctr.srv_accepted, 0);
	assert_int_equal(l.pending, 0);
	assert_false(tfo_admit_sends_cookie(TFO_ADMIT_REFUSE_DISABLED));
	assert_string_equal(tfo_admit_name(TFO_ADMIT_REFUSE_DISABLED), "disabled");
}

static void test_admit_syn_flood(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_listener l = {.enabled = true, .qlen = 10, .ctr = &ctr};

	(void)state;
	assert_int_equal(tfo_server_admit(&l, true, true), TFO_ADMIT_REFUSE_SYN_FLOOD);
	assert_int_equal(ctr.srv_refused_syn_flood, 1);
	assert_int_equal(l.pending, 0);
	assert_false(tfo_admit_sends_cookie(TFO_ADMIT_REFUSE_SYN_FLOOD));
	assert_string_equal(tfo_admit_name(TFO_ADMIT_REFUSE_SYN_FLOOD), "syn-flood");
}

/* RFC 7413 5.1: PendingFastOpenRequests >= qlen falls back to the 3WHS. */
static void test_admit_qlen(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_listener l = {.enabled = true, .qlen = 2, .ctr = &ctr};

	(void)state;
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_ACCEPT);
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_ACCEPT);
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_REFUSE_QLEN);
	assert_int_equal(l.pending, 2);
	assert_int_equal(ctr.srv_refused_qlen, 1);
	tfo_listener_pending_done(&l);
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_ACCEPT);
	assert_int_equal(ctr.srv_accepted, 3);
	l.qlen = 0;
	l.pending = 0;
	assert_int_equal(tfo_server_admit(&l, true, false), TFO_ADMIT_REFUSE_QLEN);
	assert_false(tfo_admit_sends_cookie(TFO_ADMIT_REFUSE_QLEN));
	assert_string_equal(tfo_admit_name(TFO_ADMIT_REFUSE_QLEN), "qlen-exhausted");
}

static void test_admit_bad_cookie(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_listener l = {.enabled = true, .qlen = 2, .ctr = &ctr};

	(void)state;
	assert_int_equal(tfo_server_admit(&l, false, false), TFO_ADMIT_REFUSE_BAD_COOKIE);
	assert_int_equal(ctr.srv_refused_bad_cookie, 1);
	assert_int_equal(l.pending, 0);
	/* RFC 7413 4.2.2: the SYN-ACK carries a valid cookie instead. */
	assert_true(tfo_admit_sends_cookie(TFO_ADMIT_REFUSE_BAD_COOKIE));
	assert_string_equal(tfo_admit_name(TFO_ADMIT_REFUSE_BAD_COOKIE), "invalid-cookie");
}

/* Client cache */

static void test_cache_store_lookup(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_cache *c = tfo_cache_create(8, SEC, &ctr);
	struct tfo_cache_entry_view v;
	const uint8_t ck[6] = {1, 2, 3, 4, 5, 6};

	(void)state;
	assert_non_null(c);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 0, &v), TFO_CACHE_MISS);
	assert_int_equal(ctr.cli_cache_misses, 1);
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), ck, sizeof(ck), 1460), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.cookie_len, 6);
	assert_memory_equal(v.cookie, ck, 6);
	assert_int_equal(v.mss, 1460);
	assert_int_equal(tfo_syn_data_limit(&v), 1460);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.2"), 0, &v), TFO_CACHE_MISS);
	assert_int_equal(ctr.cli_cache_hits, 1);
	/* Replaced by a newer cookie; no cookie (len 0) keeps just the MSS. */
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), ck, 4, 1400), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.cookie_len, 4);
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), NULL, 0, 1300), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 0, &v), TFO_CACHE_MISS);
	assert_int_equal(tfo_syn_data_limit(&v), 1300);
	assert_int_equal(tfo_cache_count(c), 1);
	tfo_cache_free(c);
}

/* RFC 7413 4.1.3: without a cached MSS, SYN data is limited to 536. */
static void test_cache_mss_default(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_cache *c = tfo_cache_create(4, SEC, &ctr);
	struct tfo_cache_entry_view v;
	const uint8_t ck[8] = {9};

	(void)state;
	assert_non_null(c);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 0, &v), TFO_CACHE_MISS);
	assert_int_equal(tfo_syn_data_limit(&v), 536);
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), ck, sizeof(ck), 0), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(tfo_syn_data_limit(&v), TFO_DEFAULT_SYN_MSS);
	assert_int_equal(tfo_syn_data_limit(NULL), 536);
	tfo_cache_free(c);
}

static void test_cache_rejects_bad_cookie(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_cache *c = tfo_cache_create(4, SEC, &ctr);
	const uint8_t ck[20] = {0};
	const size_t bad[] = {2, 3, 5, 15, 17, 18, 20};

	(void)state;
	assert_non_null(c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), ck, bad[i], 1460), -EINVAL);
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), NULL, 8, 1460), -EINVAL);
	assert_int_equal(tfo_cache_count(c), 0);
	tfo_cache_free(c);
}

/* Capacity 3: A, B, C stored, A looked up, D stored -> B (least recently
 * used) is evicted. */
static void test_cache_lru_eviction(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_cache *c = tfo_cache_create(3, SEC, &ctr);
	struct tfo_cache_entry_view v;
	const uint8_t ck[4] = {1, 2, 3, 4};
	const char *srv[] = {"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"};

	(void)state;
	assert_non_null(c);
	for (int i = 0; i < 3; i++)
		assert_int_equal(tfo_cache_store(c, ip(srv[i]), ck, 4, (uint16_t)(1000 + i)), 0);
	assert_int_equal(tfo_cache_lookup(c, ip(srv[0]), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(tfo_cache_store(c, ip(srv[3]), ck, 4, 1003), 0);
	assert_int_equal(tfo_cache_count(c), 3);
	assert_int_equal(ctr.cli_cache_evictions, 1);
	assert_int_equal(tfo_cache_lookup(c, ip(srv[1]), 0, &v), TFO_CACHE_MISS);
	assert_int_equal(tfo_cache_lookup(c, ip(srv[0]), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.mss, 1000);
	assert_int_equal(tfo_cache_lookup(c, ip(srv[2]), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(tfo_cache_lookup(c, ip(srv[3]), 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.mss, 1003);
	tfo_cache_free(c);
}

/* Many servers through a small cache: exactly the last `cap` survive. */
static void test_cache_many_servers(void **state)
{
	struct tfo_counters ctr = {0};
	const uint32_t cap = 64, n = 1000;
	struct tfo_cache *c = tfo_cache_create(cap, SEC, &ctr);
	struct tfo_cache_entry_view v;
	uint8_t ck[4];

	(void)state;
	assert_non_null(c);
	for (uint32_t i = 0; i < n; i++) {
		struct us_in6 a = us_in6_of_v4(0x0a000000 + i * 256);

		memcpy(ck, &i, sizeof(ck));
		assert_int_equal(tfo_cache_store(c, &a, ck, 4, 1460), 0);
	}
	assert_int_equal(tfo_cache_count(c), cap);
	assert_int_equal(ctr.cli_cache_evictions, n - cap);
	for (uint32_t i = 0; i < n; i++) {
		struct us_in6 a = us_in6_of_v4(0x0a000000 + i * 256);
		enum tfo_cache_status s = tfo_cache_lookup(c, &a, 0, &v);

		assert_int_equal(s, i >= n - cap ? TFO_CACHE_HIT : TFO_CACHE_MISS);
		if (s == TFO_CACHE_HIT)
			assert_memory_equal(v.cookie, &i, 4);
	}
	tfo_cache_free(c);
}

/* RFC 7413 4.1.3 negative caching: no TFO until the mark expires on the
 * caller's clock; the cookie survives the mark. */
static void test_cache_negative_expiry(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_cache *c = tfo_cache_create(4, 1000, &ctr);
	struct tfo_cache_entry_view v;
	const uint8_t ck[8] = {7, 7, 7, 7, 7, 7, 7, 7};

	(void)state;
	assert_non_null(c);
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.1"), ck, 8, 1460), 0);
	assert_int_equal(tfo_cache_mark_unfriendly(c, ip("10.0.0.1"), 100), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 500, &v), TFO_CACHE_NEGATIVE);
	assert_int_equal(v.cookie_len, 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 1099, &v), TFO_CACHE_NEGATIVE);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.1"), 1100, &v), TFO_CACHE_HIT);
	assert_memory_equal(v.cookie, ck, 8);
	assert_int_equal(ctr.cli_cache_negative, 2);
	/* A server never seen: the mark creates the entry, expiry -> miss. */
	assert_int_equal(tfo_cache_mark_unfriendly(c, ip("10.0.0.9"), 2000), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.9"), 2999, &v), TFO_CACHE_NEGATIVE);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.9"), 3000, &v), TFO_CACHE_MISS);
	/* Storing a cookie does not lift a live mark. */
	assert_int_equal(tfo_cache_mark_unfriendly(c, ip("10.0.0.9"), 4000), 0);
	assert_int_equal(tfo_cache_store(c, ip("10.0.0.9"), ck, 8, 1460), 0);
	assert_int_equal(tfo_cache_lookup(c, ip("10.0.0.9"), 4500, &v), TFO_CACHE_NEGATIVE);
	assert_int_equal(ctr.cli_marked_unfriendly, 3);
	tfo_cache_free(c);
}

/* The cache keys on the whole address: an IPv4 server and IPv6 servers
 * whose low 32 bits are its address (one of them with the v4-mapped
 * form's words, reordered) each keep their own cookie, MSS and mark. */
static void test_cache_v4_v6_apart(void **state)
{
	struct tfo_counters ctr = {0};
	struct tfo_cache *c = tfo_cache_create(8, SEC, &ctr);
	struct tfo_cache_entry_view v;
	const uint8_t ck4[4] = {4, 4, 4, 4}, ck6[8] = {6, 6, 6, 6, 6, 6, 6, 6}, ckw[6] = {9};
	const struct us_in6 v4 = *ip("192.0.2.1"), v6 = *ip("2001:db8::c000:201"),
			    words = *ip("::ffff:0:0:c000:201");

	(void)state;
	assert_non_null(c);
	assert_int_equal(tfo_cache_store(c, &v4, ck4, sizeof(ck4), 1460), 0);
	assert_int_equal(tfo_cache_lookup(c, &v6, 0, &v), TFO_CACHE_MISS);
	assert_int_equal(tfo_cache_lookup(c, &words, 0, &v), TFO_CACHE_MISS);
	assert_int_equal(tfo_cache_store(c, &v6, ck6, sizeof(ck6), 1220), 0);
	assert_int_equal(tfo_cache_store(c, &words, ckw, sizeof(ckw), 1400), 0);
	assert_int_equal(tfo_cache_count(c), 3);
	assert_int_equal(tfo_cache_lookup(c, &v4, 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.cookie_len, 4);
	assert_memory_equal(v.cookie, ck4, 4);
	assert_int_equal(v.mss, 1460);
	assert_int_equal(tfo_cache_lookup(c, &v6, 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.cookie_len, 8);
	assert_memory_equal(v.cookie, ck6, 8);
	assert_int_equal(v.mss, 1220);
	assert_int_equal(tfo_cache_lookup(c, &words, 0, &v), TFO_CACHE_HIT);
	assert_int_equal(v.cookie_len, 6);
	assert_int_equal(v.mss, 1400);
	assert_int_equal(tfo_cache_lookup(c, ip("2001:db8::c000:202"), 0, &v), TFO_CACHE_MISS);
	/* A negative mark on the IPv4 server leaves the IPv6 ones alone. */
	assert_int_equal(tfo_cache_mark_unfriendly(c, &v4, 0), 0);
	assert_false(tfo_cache_has_cookie(c, &v4, 10));
	assert_true(tfo_cache_has_cookie(c, &v6, 10));
	assert_true(tfo_cache_has_cookie(c, &words, 10));
	assert_int_equal(tfo_cache_lookup(c, &v4, 10, &v), TFO_CACHE_NEGATIVE);
	assert_int_equal(tfo_cache_lookup(c, &v6, 10, &v), TFO_CACHE_HIT);
	assert_memory_equal(v.cookie, ck6, 8);
	/* And the other way round. */
	assert_int_equal(tfo_cache_mark_unfriendly(c, &v6, 20), 0);
	assert_int_equal(tfo_cache_lookup(c, &v6, 30, &v), TFO_CACHE_NEGATIVE);
	assert_int_equal(tfo_cache_lookup(c, &words, 30, &v), TFO_CACHE_HIT);
	assert_int_equal(tfo_cache_count(c), 3);
	tfo_cache_free(c);
}

static void test_cache_create_invalid(void **state)
{
	struct tfo_counters ctr = {0};

	(void)state;
	errno = 0;
	assert_null(tfo_cache_create(0, SEC, &ctr));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(tfo_cache_create(4, SEC, NULL));
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_opt_request_kind34),
		cmocka_unit_test(test_opt_request_exp),
		cmocka_unit_test(test_opt_even_cookies_accepted),
		cmocka_unit_test(test_opt_odd_cookies_ignored),
		cmocka_unit_test(test_opt_out_of_range_ignored),
		cmocka_unit_test(test_opt_exp_wrong_magic_ignored),
		cmocka_unit_test(test_opt_truncated),
		cmocka_unit_test(test_opt_find_in_option_area),
		cmocka_unit_test(test_opt_encode_answer_in_kind),
		cmocka_unit_test(test_opt_encode_errors),
		cmocka_unit_test(test_cookie_deterministic),
		cmocka_unit_test(test_cookie_per_ip_and_key),
		cmocka_unit_test(test_cookie_byte_order),
		cmocka_unit_test(test_cookie_linux_vector),
		cmocka_unit_test(test_cookie_bad_length_or_tampered),
		cmocka_unit_test(test_cookie_v4_mac_of_four_bytes),
		cmocka_unit_test(test_cookie_v6_client),
		cmocka_unit_test(test_key_rotation),
		cmocka_unit_test(test_key_rotation_disabled),
		cmocka_unit_test(test_keys_parse_valid),
		cmocka_unit_test(test_keys_parse_malformed),
		cmocka_unit_test(test_admit_accept_and_pending),
		cmocka_unit_test(test_admit_disabled),
		cmocka_unit_test(test_admit_syn_flood),
		cmocka_unit_test(test_admit_qlen),
		cmocka_unit_test(test_admit_bad_cookie),
		cmocka_unit_test(test_cache_store_lookup),
		cmocka_unit_test(test_cache_mss_default),
		cmocka_unit_test(test_cache_rejects_bad_cookie),
		cmocka_unit_test(test_cache_lru_eviction),
		cmocka_unit_test(test_cache_many_servers),
		cmocka_unit_test(test_cache_negative_expiry),
		cmocka_unit_test(test_cache_v4_v6_apart),
		cmocka_unit_test(test_cache_create_invalid),
	};

	if (sodium_init() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
