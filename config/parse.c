/* config/parse.c: value parsers (numbers, IPv4 and IPv6 addresses,
 * prefixes, routes).
 *
 * Strict on purpose: "100x", "-1", "0x10", "10.77.0", "10.77.0.300" and
 * "fd00::1::2" are errors, never a silently different value.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/parse.h"

static int cfgp_fail(char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int cfgp_fail(char *why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, US_CFGP_WHY, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int us_cfgp_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out, char *why)
{
	unsigned long long v;
	char *end;

	if (*s == '\0')
		return cfgp_fail(why, "empty value");
	if (*s == '-' && isdigit((unsigned char)s[1]))
		return cfgp_fail(why, "must not be negative");
	/* strtoull would also take blanks, a sign and (base 0) hex: refuse them. */
	if (!isdigit((unsigned char)*s))
		return cfgp_fail(why, "not a decimal number");
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end != '\0')
		return cfgp_fail(why, "trailing characters '%s' after the number", end);
	if (errno == ERANGE || v < min || v > max)
		return cfgp_fail(why, "out of range (%u..%u)", min, max);
	*out = (uint32_t)v;
	return 0;
}

int us_cfgp_ipv4(const char *s, uint32_t *out, char *why)
{
	struct in_addr a;

	/* inet_pton (unlike inet_aton) wants exactly four decimal parts, each
	 * 0..255: "10.77.0", "10.77.0.300" and "0xa.0.0.1" all fail. */
	if (inet_pton(AF_INET, s, &a) != 1)
		return cfgp_fail(why, "not an IPv4 address");
	*out = ntohl(a.s_addr);
	return 0;
}

uint32_t us_cfgp_mask(uint8_t len)
{
	return len == 0 ? 0 : UINT32_MAX << (32 - len);
}

const char *us_cfgp_ntoa(uint32_t addr, char *buf)
{
	snprintf(buf, 16, "%u.%u.%u.%u", addr >> 24, (addr >> 16) & 0xff, (addr >> 8) & 0xff,
		 addr & 0xff);
	return buf;
}

/* "addr/len": the address part into ip (NUL-terminated, at most ipsz - 1
 * characters); the length's text, or NULL with why set (form names the
 * expected shape, family the address kind). */
static const char *cfgp_split_prefix(const char *s, char *ip, size_t ipsz, const char *form,
				     const char *family, char *why)
{
	const char *slash = strchr(s, '/');

	if (slash == NULL) {
		cfgp_fail(why, "missing prefix length (expected %s)", form);
		return NULL;
	}
	if ((size_t)(slash - s) >= ipsz) {
		cfgp_fail(why, "not an %s address", family);
		return NULL;
	}
	memcpy(ip, s, slash - s);
	ip[slash - s] = '\0';
	return slash + 1;
}

static int cfgp_prefix_len(const char *t, uint8_t min_len, uint8_t max_len, uint8_t *len, char *why)
{
	char sub[US_CFGP_WHY];
	uint32_t l;

	if (us_cfgp_u32(t, min_len, max_len, &l, sub) < 0)
		return cfgp_fail(why, "prefix length: %s", sub);
	*len = (uint8_t)l;
	return 0;
}

int us_cfgp_cidr(const char *s, uint8_t min_len, uint32_t *addr, uint8_t *len, char *why)
{
	char ip[INET_ADDRSTRLEN];
	const char *t = cfgp_split_prefix(s, ip, sizeof(ip), "a.b.c.d/len", "IPv4", why);

	if (t == NULL || us_cfgp_ipv4(ip, addr, why) < 0)
		return -EINVAL;
	return cfgp_prefix_len(t, min_len, 32, len, why);
}

int us_cfgp_route(const char *s, struct us_route *r, char *why)
{
	char buf[US_CFG_STR], *save = NULL, *tok[4];
	char a[16], b[16];
	unsigned n = 0;
	uint32_t net;
	uint8_t len;

	if (us_cfgp_str(s, buf, sizeof(buf), why) < 0)
		return -EINVAL;
	for (char *t = strtok_r(buf, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
		if (n == 4)
			break;
		tok[n++] = t;
	}
	if (!(n == 1 || (n == 3 && strcmp(tok[1], "via") == 0)))
		return cfgp_fail(why, "expected 'net/len via gateway' or 'net/len'");
	if (us_cfgp_cidr(tok[0], 0, &net, &len, why) < 0)
		return -EINVAL;
	if (net & ~us_cfgp_mask(len))
		return cfgp_fail(why, "host bits set in the network (did you mean %s/%u?)",
				 us_cfgp_ntoa(net & us_cfgp_mask(len), a), len);
	r->net = net;
	r->prefixlen = len;
	r->gateway = 0;
	if (n == 3) {
		if (us_cfgp_ipv4(tok[2], &r->gateway, why) < 0)
			return cfgp_fail(why, "gateway '%s' is not an IPv4 address", tok[2]);
		if (r->gateway == 0)
			return cfgp_fail(why, "gateway %s is not a host address",
					 us_cfgp_ntoa(r->gateway, b));
	}
	return 0;
}

int us_cfgp_ipv6(const char *s, struct us_in6 *out, char *why)
{
	struct in_addr v4;

	if (inet_pton(AF_INET6, s, out->b) == 1)
		return 0;
	if (strchr(s, '%') != NULL)
		return cfgp_fail(why, "not an IPv6 address (no zone index: the stack has one link)");
	if (inet_pton(AF_INET, s, &v4) == 1)
		return cfgp_fail(why, "not an IPv6 address (IPv4 addresses go in [ip])");
	return cfgp_fail(why, "not an IPv6 address");
}

const char *us_cfgp_ntop6(const struct us_in6 *a, char *buf)
{
	if (inet_ntop(AF_INET6, a->b, buf, US_IN6_STRLEN) == NULL)
		snprintf(buf, US_IN6_STRLEN, "?");
	return buf;
}

void us_cfgp_mask6(const struct us_in6 *a, uint8_t len, struct us_in6 *out)
{
	*out = *a;
	for (unsigned i = 0; i < sizeof(out->b); i++) {
		unsigned keep = len > 8 * i ? len - 8 * i : 0;

		if (keep < 8)
			out->b[i] &= (uint8_t)(0xff00 >> keep);
	}
}

int us_cfgp_cidr6(const char *s, uint8_t min_len, struct us_in6 *addr, uint8_t *len, char *why)
{
	char ip[64]; /* room for a zone index, refused with a reason */
	const char *t = cfgp_split_prefix(s, ip, sizeof(ip), "x::y/len", "IPv6", why);

	if (t == NULL || us_cfgp_ipv6(ip, addr, why) < 0)
		return -EINVAL;
	return cfgp_prefix_len(t, min_len, 128, len, why);
}

const char *us_cfgp_unicast6_why(const struct us_in6 *a)
{
	if (us_in6_is_mcast(a))
		return "a multicast address (ff00::/8), not a host";
	if (us_in6_is_unspec(a))
		return "the unspecified address ::, not a host";
	if (us_in6_is_loopback(a))
		return "the loopback address ::1, not on the link";
	if (us_in6_is_v4mapped(a))
		return "an IPv4-mapped address (::ffff:0:0/96); IPv4 addresses go in [ip]";
	return NULL;
}

int us_cfgp_route6(const char *s, struct us_route6 *r, char *why)
{
	char buf[US_CFG_STR], *save = NULL, *tok[4];
	char a[US_IN6_STRLEN];
	struct us_in6 masked;
	const char *bad;
	unsigned n = 0;

	if (us_cfgp_str(s, buf, sizeof(buf), why) < 0)
		return -EINVAL;
	for (char *t = strtok_r(buf, " \t", &save); t != NULL; t = strtok_r(NULL, " \t", &save)) {
		if (n == 4)
			break;
		tok[n++] = t;
	}
	if (!(n == 1 || (n == 3 && strcmp(tok[1], "via") == 0)))
		return cfgp_fail(why, "expected 'net/len via gateway' or 'net/len'");
	memset(r, 0, sizeof(*r));
	if (us_cfgp_cidr6(tok[0], 0, &r->net, &r->prefixlen, why) < 0)
		return -EINVAL;
	us_cfgp_mask6(&r->net, r->prefixlen, &masked);
	if (!us_in6_eq(&masked, &r->net))
		return cfgp_fail(why, "host bits set in the network (did you mean %s/%u?)",
				 us_cfgp_ntop6(&masked, a), r->prefixlen);
	if (n == 1)
		return 0;
	if (us_cfgp_ipv6(tok[2], &r->gateway, why) < 0)
		return cfgp_fail(why, "gateway '%s' is not an IPv6 address", tok[2]);
	bad = us_cfgp_unicast6_why(&r->gateway);
	if (bad != NULL)
		return cfgp_fail(why, "gateway %s is %s", us_cfgp_ntop6(&r->gateway, a), bad);
	r->has_gateway = true;
	return 0;
}

int us_cfgp_str(const char *s, char *buf, size_t size, char *why)
{
	size_t n = strlen(s);

	if (n >= size)
		return cfgp_fail(why, "longer than %zu characters", size - 1);
	memcpy(buf, s, n + 1);
	return 0;
}

int us_cfgp_bool(const char *s, bool *out, char *why)
{
	static const char *const yes[] = { "on", "yes", "true", "1" };
	static const char *const no[] = { "off", "no", "false", "0" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0) {
			*out = strcmp(s, yes[i]) == 0;
			return 0;
		}
	}
	return cfgp_fail(why, "must be on or off (or yes/no, true/false, 1/0)");
}

/* s as one of names[0..n): its index, or -EINVAL with "must be a, b or c". */
static int cfgp_choice(const char *s, const char *const *names, size_t n, size_t *idx,
		       char *why)
{
	size_t used;

	for (size_t i = 0; i < n; i++) {
		if (strcmp(s, names[i]) == 0) {
			*idx = i;
			return 0;
		}
	}
	used = (size_t)snprintf(why, US_CFGP_WHY, "must be");
	for (size_t i = 0; i < n && used < US_CFGP_WHY; i++)
		used += (size_t)snprintf(why + used, US_CFGP_WHY - used, "%s%s",
					 i == 0 ? " " : i + 1 < n ? ", " : " or ", names[i]);
	return -EINVAL;
}

int us_cfgp_syncookies(const char *s, enum tcp_syncookies_mode *out, char *why)
{
	size_t i;

	if (cfgp_choice(s, tcp_syncookies_names, TCP_SYNCOOKIES_MODE_COUNT, &i, why) < 0)
		return -EINVAL;
	*out = (enum tcp_syncookies_mode)i;
	return 0;
}

int us_cfgp_cc(const char *s, enum tcp_cc_alg *out, char *why)
{
	size_t i;

	if (cfgp_choice(s, tcp_cc_names, TCP_CC_ALG_COUNT, &i, why) < 0)
		return -EINVAL;
	*out = (enum tcp_cc_alg)i;
	return 0;
}

int us_cfgp_fastopen(const char *s, uint8_t *out, char *why)
{
	/* The index is the TCP_FASTOPEN_* bit set, as Linux's tcp_fastopen. */
	static const char *const names[] = { "off", "client", "server", "both" };
	size_t i;

	if (cfgp_choice(s, names, sizeof(names) / sizeof(names[0]), &i, why) < 0)
		return -EINVAL;
	*out = (uint8_t)i;
	return 0;
}

int us_cfgp_recovery(const char *s, enum tcp_rec_alg *out, char *why)
{
	size_t i;

	if (cfgp_choice(s, tcp_rec_alg_names, TCP_REC_ALG_COUNT, &i, why) < 0)
		return -EINVAL;
	*out = (enum tcp_rec_alg)i;
	return 0;
}

int us_cfgp_loss_detection(const char *s, enum tcp_loss_det *out, char *why)
{
	size_t i;

	if (cfgp_choice(s, tcp_loss_det_names, TCP_LOSS_DET_COUNT, &i, why) < 0)
		return -EINVAL;
	*out = (enum tcp_loss_det)i;
	return 0;
}

int us_cfgp_profile(const char *s, enum tcp_profile *out, char *why)
{
	size_t i;

	if (cfgp_choice(s, tcp_profile_names, TCP_PROFILE_COUNT, &i, why) < 0)
		return -EINVAL;
	*out = (enum tcp_profile)i;
	return 0;
}

int us_cfgp_auto_off(const char *s, bool *out, char *why)
{
	static const char *const names[] = { "off", "auto" };
	size_t i;

	if (cfgp_choice(s, names, sizeof(names) / sizeof(names[0]), &i, why) < 0)
		return -EINVAL;
	*out = i == 1;
	return 0;
}

int us_cfgp_hugepages(const char *s, enum nic_hugepages_mode *out, char *why)
{
	static const char *const names[] = {
		[NIC_HUGEPAGES_AUTO] = "auto", [NIC_HUGEPAGES_ON] = "on", [NIC_HUGEPAGES_OFF] = "off",
	};
	size_t i;

	if (cfgp_choice(s, names, sizeof(names) / sizeof(names[0]), &i, why) < 0)
		return -EINVAL;
	*out = (enum nic_hugepages_mode)i;
	return 0;
}
