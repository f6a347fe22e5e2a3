/* config/config.c: the INI file -> struct us_config.
 *
 * rte_cfgfile does the INI syntax; this file owns the meaning: one table of
 * known keys (section, name, type, field, range), a walk over every section
 * and entry that rejects what the table does not know, then the checks that
 * involve more than one key (required keys, gateway on-link, RTO ordering).
 * [ip6] is checked whole whether enable is on or off, so that switching
 * IPv6 on is one line that cannot turn a valid file into a refused one.
 *
 * rte_cfgfile quietly skips a line that has no '=' ("mtu 9000"), ignores text
 * after a section's ']' and fails without saying why on a line that is too
 * long; a short pre-scan of the file (cfg_prescan) turns each of those into
 * an error with a line number first.  Comments start with '#' (anywhere on a
 * line; "\#" is a literal '#', and then, as rte_cfgfile only looks at the
 * first '#' of a line, the rest of that line is no comment).
 *
 * The result is built in a local copy and handed out only when everything
 * passed, so a failed load leaves the caller's struct untouched.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cfgfile.h>
#include <sodium.h>

#include "config/config.h"
#include "stack/base/log.h"
#include "config/parse.h"
#include "stack/base/limits.h"
#include "nic/impair.h"
#include "tcp/fastopen.h"

/* Types */

enum cfg_type { CFG_T_U8, CFG_T_U16, CFG_T_U32, CFG_T_STR, CFG_T_HUGEPAGES,
		CFG_T_CIDR, CFG_T_IPV4, CFG_T_ROUTE, CFG_T_CIDR6, CFG_T_IPV6,
		CFG_T_ROUTE6, CFG_T_BOOL, CFG_T_CC,
		CFG_T_TFO, CFG_T_TFO_KEY, CFG_T_SYNCOOKIES,
		CFG_T_REC, CFG_T_LOSS_DET, CFG_T_PROFILE, CFG_T_IMPAIR, CFG_T_AUTO_OFF };

struct cfg_key {
	const char *section;
	const char *name;
	enum cfg_type type;
	size_t off;        /* offset of the field in struct us_config */
	size_t size;       /* buffer size (strings) */
	uint32_t min, max; /* inclusive range (numbers) */
	int (*check)(const char *s, char *why); /* extra rule for strings */
};

struct cfg_ctx {
	const char *file;  /* name used in messages */
	char *err;
	size_t errlen;
	struct us_config *cfg;
	unsigned *seen;    /* per cfg_keys[] entry: times given */
};

#define CFG_COMMENT '#'
/* rte_cfgfile reads lines with fgets() into CFG_NAME_LEN + CFG_VALUE_LEN + 4
 * bytes; a longer line makes the whole load fail. */
#define CFG_LINE_MAX (CFG_NAME_LEN + CFG_VALUE_LEN + 2)
#define CFG_MIB (1024u * 1024u)

static int cfg_check_lcores(const char *s, char *why);
static int cfg_check_prefix(const char *s, char *why);
static int cfg_check_loglevel(const char *s, char *why);
static int cfg_check_device(const char *s, char *why);

#define CFG_OFF(field) offsetof(struct us_config, field)
#define CFG_NUM(sec, key, t, field, lo, hi) { sec, key, t, CFG_OFF(field), 0, lo, hi, NULL }
#define CFG_STR(sec, key, field, chk) \
	{ sec, key, CFG_T_STR, CFG_OFF(field), sizeof(((struct us_config *)0)->field), 0, 0, chk }
#define CFG_OTHER(sec, key, t) { sec, key, t, 0, 0, 0, 0, NULL }
#define CFG_TCP(key, lo, hi) CFG_NUM("tcp", #key, CFG_T_U32, tcp.key, lo, hi)
#define CFG_TCP_BOOL(key) CFG_NUM("tcp", #key, CFG_T_BOOL, tcp.key, 0, 1)

static const char *const cfg_sections[] = { "eal", "port", "ip", "ip6", "arp", "tcp", "log",
					    "capture", "engine", "impair" };

static const struct cfg_key cfg_keys[] = {
	CFG_STR("eal", "lcores", nic.lcores, cfg_check_lcores),
	CFG_OTHER("eal", "hugepages", CFG_T_HUGEPAGES),
	CFG_NUM("eal", "no_huge_mem_mb", CFG_T_U32, nic.no_huge_mem_mb, 64, 262144),
	CFG_STR("eal", "file_prefix", nic.file_prefix, cfg_check_prefix),
	CFG_STR("eal", "log_level", nic.log_level, cfg_check_loglevel),
	CFG_STR("eal", "extra_args", nic.extra_args, NULL),
	CFG_STR("port", "device", nic.device, cfg_check_device),
	CFG_NUM("port", "rx_desc", CFG_T_U16, nic.rx_desc, 32, 4096),
	CFG_NUM("port", "tx_desc", CFG_T_U16, nic.tx_desc, 32, 4096),
	CFG_NUM("port", "mbufs", CFG_T_U32, nic.mbufs, 1023, 1048575),
	/* RFC 791: every host must take 68-octet datagrams; 9000 = jumbo. */
	CFG_NUM("port", "mtu", CFG_T_U16, nic.mtu, 68, 9000),
	CFG_NUM("port", "link_wait_ms", CFG_T_U32, nic.link_wait_ms, 0, 600000),
	CFG_NUM("port", "isolate", CFG_T_BOOL, nic.port_isolate, 0, 1),
	CFG_NUM("port", "gso", CFG_T_AUTO_OFF, nic.gso, 0, 1),
	CFG_NUM("port", "gro", CFG_T_AUTO_OFF, nic.gro, 0, 1),
	CFG_OTHER("ip", "addr", CFG_T_CIDR),
	CFG_OTHER("ip", "gateway", CFG_T_IPV4),
	CFG_OTHER("ip", "route", CFG_T_ROUTE),
	CFG_NUM("ip", "ttl", CFG_T_U8, ttl, 1, 255),
	CFG_NUM("ip6", "enable", CFG_T_BOOL, ip6_enable, 0, 1),
	CFG_OTHER("ip6", "addr", CFG_T_CIDR6),
	CFG_OTHER("ip6", "gateway", CFG_T_IPV6),
	CFG_OTHER("ip6", "route", CFG_T_ROUTE6),
	CFG_NUM("ip6", "hop_limit", CFG_T_U8, hop_limit, 1, 255),
	/* RFC 4862 5.4: Duplicate Address Detection before an address is used. */
	CFG_NUM("ip6", "dad", CFG_T_BOOL, dad, 0, 1),
	CFG_NUM("arp", "timeout_s", CFG_T_U32, arp_timeout_s, 1, 86400),
	CFG_NUM("arp", "pending_max", CFG_T_U32, arp_pending_max, 1, 4096),
	CFG_NUM("arp", "retry_ms", CFG_T_U32, arp_retry_ms, 10, 60000),
	CFG_TCP(rto_min_ms, 1, 60000),
	CFG_TCP(rto_initial_ms, 1, 600000),
	CFG_TCP(rto_max_ms, 1, 3600000),
	CFG_TCP(time_wait_ms, 0, 600000),
	/* RFC 1122 4.2.3.2 / RFC 9293 3.8.6.3: an ACK must not be delayed more
	 * than 0.5 s. */
	CFG_TCP(delack_ms, 0, 500),
	CFG_TCP(syn_retries, 1, 127),
	CFG_TCP(synack_retries, 1, 127),
	CFG_TCP(data_retries, 1, 255),
	CFG_TCP(rcvbuf, 4096, 64 * CFG_MIB),
	CFG_TCP(rcvbuf_max, 4096, 64 * CFG_MIB),
	CFG_TCP(sndbuf, 4096, 64 * CFG_MIB),
	CFG_TCP(max_conns, 1, 16 * CFG_MIB),
	CFG_TCP(backlog, 1, 65535),
	CFG_TCP_BOOL(wscale),
	CFG_TCP_BOOL(sack),
	CFG_TCP_BOOL(timestamps),
	CFG_TCP_BOOL(nodelay_default),
	CFG_TCP(sws_override_ms, 1, 60000),
	/* RFC 1122 4.2.3.6: the idle interval MUST default to >= 2 hours, but
	 * it is configurable; 1 s is the floor that still means "idle". */
	CFG_TCP(keepalive_idle_ms, 1000, 86400000),
	CFG_TCP(keepalive_intvl_ms, 100, 86400000),
	CFG_TCP(keepalive_probes, 1, 255),
	CFG_NUM("tcp", "syncookies", CFG_T_SYNCOOKIES, tcp.syncookies, 0, 0),
	/* RFC 5961 7 (Linux's tcp_challenge_ack_limit defaults to 1000). */
	CFG_TCP(challenge_ack_limit, 1, 1000000),
	CFG_TCP_BOOL(challenge_ack_jitter),
	/* RSTs for closed ports per second per engine, 0 = no limit. */
	CFG_TCP(rst_closed_limit, 0, 10000000),
	/* IPv4 path MTU floor (Linux's route/min_pmtu): 68 is RFC 791's. */
	CFG_TCP(min_pmtu, 68, 1500),
	CFG_NUM("tcp", "cc", CFG_T_CC, tcp.cc, 0, 0),
	/* RFC 7413 TCP Fast Open. */
	CFG_NUM("tcp", "fastopen", CFG_T_TFO, tcp.fastopen, 0, 0),
	CFG_TCP(fastopen_qlen, 1, 65535),
	CFG_TCP(fastopen_rotate_s, 0, 31536000),
	CFG_OTHER("tcp", "fastopen_key", CFG_T_TFO_KEY),
	CFG_STR("log", "level", log.level, cfg_check_loglevel),
	CFG_STR("log", "nic", log.nic, cfg_check_loglevel),
	CFG_STR("log", "stack", log.stack, cfg_check_loglevel),
	CFG_STR("capture", "pcap", capture_pcap, NULL),
	/* 64: Ethernet + IPv4 + TCP headers with some options. */
	CFG_NUM("capture", "snaplen", CFG_T_U32, capture_snaplen, 64, 262144),
	CFG_NUM("capture", "pdump", CFG_T_BOOL, nic.capture_pdump, 0, 1),
	CFG_NUM("tcp", "recovery", CFG_T_REC, tcp.recovery, 0, 0),
	CFG_TCP_BOOL(tlp),
	CFG_TCP_BOOL(undo),
	CFG_NUM("tcp", "loss_detection", CFG_T_LOSS_DET, tcp.loss_detection, 0, 0),
	/* Linux's choice or our old one where the RFCs leave one. */
	CFG_NUM("tcp", "profile", CFG_T_PROFILE, tcp.profile, 0, 0),
	/* Idle back-off (stack/engine/idle.h): 0 = busy polling. */
	CFG_NUM("engine", "idle_sleep_max_us", CFG_T_U32, idle_sleep_max_us, 0, 100000),
	CFG_NUM("engine", "idle_spin", CFG_T_U32, idle_spin, 0, 100000000),
	{ "impair", "rx", CFG_T_IMPAIR, CFG_OFF(impair_rx), sizeof(((struct us_config *)0)->impair_rx),
	  0, 0, NULL },
	{ "impair", "tx", CFG_T_IMPAIR, CFG_OFF(impair_tx), sizeof(((struct us_config *)0)->impair_tx),
	  0, 0, NULL },
	/* Engines (stack/engine/handoff.h), each on its own lcore of [eal] lcores. */
	CFG_NUM("engine", "count", CFG_T_U32, engine_count, 1, US_ENGINES_MAX),
};

#define CFG_NKEYS (sizeof(cfg_keys) / sizeof(cfg_keys[0]))
#define CFG_NSECTIONS (sizeof(cfg_sections) / sizeof(cfg_sections[0]))

/* Prototypes (static) */

static int cfg_err(struct cfg_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int cfg_bad(struct cfg_ctx *c, const char *section, const char *key, const char *value,
		   const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Errors */

static int cfg_err(struct cfg_ctx *c, const char *fmt, ...)
{
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (c->err != NULL && c->errlen > 0)
		snprintf(c->err, c->errlen, "%s: %s", c->file, msg);
	return -EINVAL;
}

/* "<file>: [<section>] <key> = '<value>': <reason>" */
static int cfg_bad(struct cfg_ctx *c, const char *section, const char *key, const char *value,
		   const char *fmt, ...)
{
	char why[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return cfg_err(c, "[%s] %s = '%s': %s", section, key, value, why);
}

/* String rules */

static int cfg_check_charset(const char *s, const char *allowed)
{
	for (; *s != '\0'; s++) {
		if (strchr(allowed, *s) == NULL)
			return -EINVAL;
	}
	return 0;
}

static int cfg_check_lcores(const char *s, char *why)
{
	/* EAL's -l takes "0", "0-3" or "0,2,4-5". */
	if (cfg_check_charset(s, "0123456789,-") == 0)
		return 0;
	snprintf(why, US_CFGP_WHY, "expected a core list like 0 or 0-3,6 (digits, ',' and '-')");
	return -EINVAL;
}

static int cfg_check_prefix(const char *s, char *why)
{
	/* It becomes a directory name under /var/run/dpdk/. */
	if (s[0] != '.' && cfg_check_charset(s, "abcdefghijklmnopqrstuvwxyz"
				"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") == 0)
		return 0;
	snprintf(why, US_CFGP_WHY, "only letters, digits, '_', '-' and '.' (not first) allowed");
	return -EINVAL;
}

static int cfg_check_loglevel(const char *s, char *why)
{
	if (us_log_level_parse(s) > 0)
		return 0;
	snprintf(why, US_CFGP_WHY, "must be one of emergency, alert, critical, error, warning, "
		 "notice, info, debug or 1..8 (per-type levels go in extra_args)");
	return -EINVAL;
}

static int cfg_check_device(const char *s, char *why)
{
	if (strpbrk(s, " \t") == NULL)
		return 0;
	snprintf(why, US_CFGP_WHY, "contains blanks (a vdev string or a PCI address has none)");
	return -EINVAL;
}

/* Values */

static int cfg_parse_addr(struct us_config *cfg, const char *v, char *why)
{
	uint32_t host, mask;
	uint8_t top;

	if (us_cfgp_cidr(v, 1, &cfg->addr, &cfg->prefixlen, why) < 0)
		return -EINVAL;
	top = cfg->addr >> 24;
	if (top == 0 || top == 127 || top >= 224) {
		snprintf(why, US_CFGP_WHY, "not a unicast host address");
		return -EINVAL;
	}
	/* A /31 (RFC 3021) and a /32 have no network/broadcast addresses. */
	mask = us_cfgp_mask(cfg->prefixlen);
	host = cfg->addr & ~mask;
	if (cfg->prefixlen <= 30 && (host == 0 || host == ~mask)) {
		snprintf(why, US_CFGP_WHY, "is the %s address of its subnet",
			 host == 0 ? "network" : "broadcast");
		return -EINVAL;
	}
	return 0;
}

/* [ip6] addr: a global or unique-local host address.  The link-local one
 * is derived from the MAC (RFC 4291 appendix A), never configured. */
static int cfg_parse_addr6(struct us_config *cfg, const char *v, char *why)
{
	const char *bad;
	struct us_in6 net;

	if (us_cfgp_cidr6(v, 1, &cfg->addr6, &cfg->prefixlen6, why) < 0)
		return -EINVAL;
	bad = us_cfgp_unicast6_why(&cfg->addr6);
	if (bad == NULL && us_in6_is_linklocal(&cfg->addr6))
		bad = "a link-local address (fe80::/10): the stack makes its own from the MAC; "
		      "give a global or unique-local one (e.g. fd00:77::2/64)";
	/* RFC 4291 2.6.1: the prefix with a zero interface identifier is the
	 * Subnet-Router anycast address; a /127 (RFC 6164) and a /128 have none. */
	us_cfgp_mask6(&cfg->addr6, cfg->prefixlen6, &net);
	if (bad == NULL && cfg->prefixlen6 < 127 && us_in6_eq(&net, &cfg->addr6))
		bad = "is the Subnet-Router anycast address of its prefix (RFC 4291 2.6.1)";
	if (bad != NULL) {
		snprintf(why, US_CFGP_WHY, "%s", bad);
		return -EINVAL;
	}
	cfg->has_addr6 = true;
	return 0;
}

/* [ip6] gateway: where it is (on the link?) is checked with addr, once all
 * keys are read (cfg_gw6_on_link). */
static int cfg_parse_gateway6(struct us_config *cfg, const char *v, char *why)
{
	const char *bad;

	if (us_cfgp_ipv6(v, &cfg->gateway6, why) < 0)
		return -EINVAL;
	bad = us_cfgp_unicast6_why(&cfg->gateway6);
	if (bad != NULL) {
		snprintf(why, US_CFGP_WHY, "%s%s", bad,
			 us_in6_is_unspec(&cfg->gateway6) ? " (leave gateway out for none)" : "");
		return -EINVAL;
	}
	cfg->has_gateway6 = true;
	return 0;
}

static int cfg_parse_route6(struct us_config *cfg, const char *v, char *why)
{
	if (cfg->nroutes6 == US_CFG_MAX_ROUTES) {
		snprintf(why, US_CFGP_WHY, "more than %d routes", US_CFG_MAX_ROUTES);
		return -EINVAL;
	}
	if (us_cfgp_route6(v, &cfg->routes6[cfg->nroutes6], why) < 0)
		return -EINVAL;
	cfg->nroutes6++;
	return 0;
}

/* One key of fastopen_key into Linux's dashed form: 32 hex digits in a row
 * get a '-' after every 8th; anything else is copied for the parser to
 * judge.  out has room for n + 4 bytes. */
static void cfg_tfo_key_dashes(const char *s, size_t n, char *out)
{
	bool plain = n == 32 && strspn(s, "0123456789abcdefABCDEF") >= 32;

	for (size_t i = 0; i < n; i++) {
		if (plain && i > 0 && i % 8 == 0)
			*out++ = '-';
		*out++ = s[i];
	}
	*out = '\0';
}

/* "primary[,backup]", each as Linux's tcp_fastopen_key writes it (four
 * '-'-separated groups of 8 hex digits) or as 32 hex digits in a row. */
static int cfg_parse_tfo_key(struct tcp_config *t, const char *v, char *why)
{
	char dashed[CFG_VALUE_LEN + 8];
	const char *comma = strchr(v, ',');
	size_t n1 = comma ? (size_t)(comma - v) : strlen(v);
	struct tfo_keys k = { 0 };
	int rc;

	cfg_tfo_key_dashes(v, n1, dashed);
	if (comma != NULL) {
		size_t at = strlen(dashed);

		dashed[at] = ',';
		cfg_tfo_key_dashes(comma + 1, strlen(comma + 1), dashed + at + 1);
	}
	rc = tfo_keys_parse(dashed, &k, why, US_CFGP_WHY);
	if (rc == 0) {
		memcpy(t->fastopen_key[0], k.primary, sizeof(k.primary));
		memcpy(t->fastopen_key[1], k.backup, sizeof(k.backup));
		t->fastopen_key_set = true;
		t->fastopen_key_backup = k.has_backup;
	}
	tfo_keys_wipe(&k);
	sodium_memzero(dashed, sizeof(dashed));
	return rc;
}

/* [impair] rx/tx: one link emulator spec, checked with the parser the stage
 * uses (nic_impair_parse), stored without the optional surrounding double
 * quotes; "none" (or "") is stored as "" so that off has one spelling. */
static int cfg_parse_impair(char *field, size_t size, const char *v, char *why)
{
	struct nic_impair_params p;
	char spec[CFG_VALUE_LEN];
	size_t n = strlen(v);

	if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
		v++;
		n -= 2;
	}
	if (n >= sizeof(spec) || n >= size) {
		snprintf(why, US_CFGP_WHY, "longer than %zu characters", size - 1);
		return -EINVAL;
	}
	memcpy(spec, v, n);
	spec[n] = '\0';
	if (strchr(spec, '"') != NULL) {
		snprintf(why, US_CFGP_WHY, "a '\"' inside the spec (quotes may only surround it)");
		return -EINVAL;
	}
	/* The parser's message ("impairment item 2 'loss=1': expected a
	 * percentage ...") is the reason; a long item is cut to fit. */
	if (nic_impair_parse(spec, &p, why, US_CFGP_WHY) < 0)
		return -EINVAL;
	snprintf(field, size, "%s", strcmp(spec, "none") == 0 ? "" : spec);
	return 0;
}

static int cfg_parse_value(struct us_config *cfg, const struct cfg_key *k, const char *v,
			   char *why)
{
	char *field = (char *)cfg + k->off;
	uint32_t n;

	switch (k->type) {
	case CFG_T_U8:
	case CFG_T_U16:
	case CFG_T_U32:
		if (us_cfgp_u32(v, k->min, k->max, &n, why) < 0)
			return -EINVAL;
		if (k->type == CFG_T_U8)
			*(uint8_t *)field = (uint8_t)n;
		else if (k->type == CFG_T_U16)
			*(uint16_t *)field = (uint16_t)n;
		else
			*(uint32_t *)field = n;
		return 0;
	case CFG_T_STR:
		if (us_cfgp_str(v, field, k->size, why) < 0)
			return -EINVAL;
		return k->check != NULL ? k->check(v, why) : 0;
	case CFG_T_HUGEPAGES:
		return us_cfgp_hugepages(v, &cfg->nic.hugepages, why);
	case CFG_T_BOOL:
		return us_cfgp_bool(v, (bool *)field, why);
	case CFG_T_AUTO_OFF:
		return us_cfgp_auto_off(v, (bool *)field, why);
	case CFG_T_SYNCOOKIES:
		return us_cfgp_syncookies(v, &cfg->tcp.syncookies, why);
	case CFG_T_CC:
		return us_cfgp_cc(v, &cfg->tcp.cc, why);
	case CFG_T_TFO:
		return us_cfgp_fastopen(v, &cfg->tcp.fastopen, why);
	case CFG_T_TFO_KEY:
		return cfg_parse_tfo_key(&cfg->tcp, v, why);
	case CFG_T_REC:
		return us_cfgp_recovery(v, &cfg->tcp.recovery, why);
	case CFG_T_LOSS_DET:
		return us_cfgp_loss_detection(v, &cfg->tcp.loss_detection, why);
	case CFG_T_PROFILE:
		return us_cfgp_profile(v, &cfg->tcp.profile, why);
	case CFG_T_IMPAIR:
		return cfg_parse_impair(field, k->size, v, why);
	case CFG_T_CIDR:
		return cfg_parse_addr(cfg, v, why);
	case CFG_T_IPV4:
		if (us_cfgp_ipv4(v, &cfg->gateway, why) < 0)
			return -EINVAL;
		if (cfg->gateway == 0) {
			snprintf(why, US_CFGP_WHY, "not a host address (leave gateway out for none)");
			return -EINVAL;
		}
		return 0;
	case CFG_T_CIDR6:
		return cfg_parse_addr6(cfg, v, why);
	case CFG_T_IPV6:
		return cfg_parse_gateway6(cfg, v, why);
	case CFG_T_ROUTE6:
		return cfg_parse_route6(cfg, v, why);
	case CFG_T_ROUTE:
		if (cfg->nroutes == US_CFG_MAX_ROUTES) {
			snprintf(why, US_CFGP_WHY, "more than %d routes", US_CFG_MAX_ROUTES);
			return -EINVAL;
		}
		if (us_cfgp_route(v, &cfg->routes[cfg->nroutes], why) < 0)
			return -EINVAL;
		cfg->nroutes++;
		return 0;
	}
	return -EINVAL;
}

/* Walk */

static int cfg_find_key(const char *section, const char *name)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		if (strcmp(cfg_keys[i].section, section) == 0 && strcmp(cfg_keys[i].name, name) == 0)
			return (int)i;
	}
	return -1;
}

static int cfg_apply(struct cfg_ctx *c, const char *section, const struct rte_cfgfile_entry *e)
{
	int i = cfg_find_key(section, e->name);
	char why[US_CFGP_WHY];
	const struct cfg_key *k;

	if (i < 0)
		return cfg_err(c, "[%s] %s: unknown key", section, e->name);
	k = &cfg_keys[i];
	/* "route" ([ip] and [ip6]) is the one key that may repeat (rte_cfgfile
	 * keeps every occurrence, in file order). */
	if (c->seen[i]++ > 0 && k->type != CFG_T_ROUTE && k->type != CFG_T_ROUTE6)
		return cfg_bad(c, section, e->name, e->value, "key given twice");
	/* rte_cfgfile truncates values to CFG_VALUE_LEN - 1 characters without
	 * a word; a value that long may have been cut, so refuse it. */
	if (strlen(e->value) >= CFG_VALUE_LEN - 1)
		return cfg_bad(c, section, e->name, e->value, "longer than %d characters",
			       CFG_VALUE_LEN - 2);
	if (e->value[0] == '\0')
		return cfg_bad(c, section, e->name, e->value,
			       "empty value (remove the line to get the default)");
	if (cfg_parse_value(c->cfg, k, e->value, why) < 0)
		return cfg_bad(c, section, e->name, e->value, "%s", why);
	return 0;
}

static int cfg_section_known(const char *name)
{
	for (size_t i = 0; i < CFG_NSECTIONS; i++) {
		if (strcmp(cfg_sections[i], name) == 0)
			return (int)i;
	}
	return -1;
}

/* Section index 0 is rte_cfgfile's "GLOBAL" (CFG_FLAG_GLOBAL_SECTION): the
 * entries above the first [section], which we refuse. */
static int cfg_walk_section(struct cfg_ctx *c, struct rte_cfgfile *cf, int idx, unsigned *sec_seen)
{
	char name[CFG_NAME_LEN];
	struct rte_cfgfile_entry *e;
	int n, s, rc = 0;

	n = rte_cfgfile_section_num_entries_by_index(cf, name, idx);
	if (n < 0)
		return cfg_err(c, "cannot read section %d", idx);
	s = idx == 0 ? -1 : cfg_section_known(name);
	if (idx > 0 && s < 0)
		return cfg_err(c, "[%s]: unknown section", name);
	if (idx > 0 && sec_seen[s]++ > 0)
		return cfg_err(c, "[%s]: section given twice (merge them)", name);
	e = calloc(n > 0 ? n : 1, sizeof(*e));
	if (e == NULL)
		return cfg_err(c, "out of memory");
	n = rte_cfgfile_section_entries_by_index(cf, idx, name, e, n);
	if (idx == 0 && n > 0)
		rc = cfg_err(c, "%s = '%s': key before the first [section]", e[0].name, e[0].value);
	for (int i = 0; rc == 0 && idx > 0 && i < n; i++)
		rc = cfg_apply(c, name, &e[i]);
	free(e);
	return rc;
}

/* Checks across keys */

static int cfg_check_ip(struct cfg_ctx *c)
{
	const struct us_config *cfg = c->cfg;
	uint32_t mask = us_cfgp_mask(cfg->prefixlen);
	char a[16], g[16], n[16];

	if (cfg->gateway != 0 && cfg->gateway == cfg->addr)
		return cfg_bad(c, "ip", "gateway", us_cfgp_ntoa(cfg->gateway, g),
			       "is addr itself");
	if (cfg->gateway != 0 && ((cfg->gateway ^ cfg->addr) & mask) != 0)
		return cfg_bad(c, "ip", "gateway", us_cfgp_ntoa(cfg->gateway, g),
			       "not in the subnet of addr %s/%u", us_cfgp_ntoa(cfg->addr, a),
			       cfg->prefixlen);
	for (unsigned i = 0; i < cfg->nroutes; i++) {
		const struct us_route *r = &cfg->routes[i];
		char v[64];

		snprintf(v, sizeof(v), "%s/%u%s%s", us_cfgp_ntoa(r->net, n), r->prefixlen,
			 r->gateway ? " via " : "", r->gateway ? us_cfgp_ntoa(r->gateway, g) : "");
		if (r->gateway != 0 && ((r->gateway ^ cfg->addr) & mask) != 0)
			return cfg_bad(c, "ip", "route", v, "gateway not in the subnet of addr %s/%u",
				       us_cfgp_ntoa(cfg->addr, a), cfg->prefixlen);
		for (unsigned j = 0; j < i; j++) {
			if (cfg->routes[j].net == r->net && cfg->routes[j].prefixlen == r->prefixlen)
				return cfg_bad(c, "ip", "route", v, "a route to %s/%u is already given",
					       n, r->prefixlen);
		}
	}
	return 0;
}

/* A next hop must be a neighbour: link-local, or inside addr's prefix (on
 * the link) and not addr.  0, or -EINVAL with the reason in why. */
static int cfg_gw6_on_link(const struct us_config *cfg, const struct us_in6 *gw, char *why)
{
	char a[US_IN6_STRLEN];

	if (us_in6_is_linklocal(gw))
		return 0;
	if (!cfg->has_addr6)
		snprintf(why, US_CFGP_WHY, "is not link-local and there is no addr whose prefix "
			 "it could be in (give the router's link-local address, fe80::...)");
	else if (us_in6_eq(gw, &cfg->addr6))
		snprintf(why, US_CFGP_WHY, "is addr itself");
	else if (!us_in6_prefix_eq(gw, &cfg->addr6, cfg->prefixlen6))
		snprintf(why, US_CFGP_WHY, "is not in the prefix of addr %s/%u (not on the link: "
			 "give the router's link-local address, fe80::...)",
			 us_cfgp_ntop6(&cfg->addr6, a), cfg->prefixlen6);
	else
		return 0;
	return -EINVAL;
}

static int cfg_check_ip6(struct cfg_ctx *c)
{
	const struct us_config *cfg = c->cfg;
	char why[US_CFGP_WHY], g[US_IN6_STRLEN], n[US_IN6_STRLEN];

	if (cfg->has_gateway6 && cfg_gw6_on_link(cfg, &cfg->gateway6, why) < 0)
		return cfg_bad(c, "ip6", "gateway", us_cfgp_ntop6(&cfg->gateway6, g), "%s", why);
	for (unsigned i = 0; i < cfg->nroutes6; i++) {
		const struct us_route6 *r = &cfg->routes6[i];
		char v[2 * US_IN6_STRLEN + 16];

		snprintf(v, sizeof(v), "%s/%u%s%s", us_cfgp_ntop6(&r->net, n), r->prefixlen,
			 r->has_gateway ? " via " : "",
			 r->has_gateway ? us_cfgp_ntop6(&r->gateway, g) : "");
		if (r->has_gateway && cfg_gw6_on_link(cfg, &r->gateway, why) < 0)
			return cfg_bad(c, "ip6", "route", v, "gateway %s", why);
		for (unsigned j = 0; j < i; j++) {
			if (us_in6_eq(&cfg->routes6[j].net, &r->net) &&
			    cfg->routes6[j].prefixlen == r->prefixlen)
				return cfg_bad(c, "ip6", "route", v, "a route to %s/%u is already given",
					       n, r->prefixlen);
		}
	}
	return 0;
}

/* Autotuning grows a connection's buffer from rcvbuf up to rcvbuf_max.
 * Left out, rcvbuf_max follows a bigger rcvbuf (no autotuning) rather than
 * refusing a file that only raised rcvbuf. */
static int cfg_check_rcvbuf(struct cfg_ctx *c)
{
	struct tcp_config *t = &c->cfg->tcp;
	char v[16];

	if (t->rcvbuf_max >= t->rcvbuf)
		return 0;
	if (c->seen[cfg_find_key("tcp", "rcvbuf_max")] == 0) {
		t->rcvbuf_max = t->rcvbuf;
		return 0;
	}
	snprintf(v, sizeof(v), "%u", t->rcvbuf_max);
	return cfg_bad(c, "tcp", "rcvbuf_max", v,
		       "less than rcvbuf (%u): the buffer starts at rcvbuf and only grows; "
		       "rcvbuf_max = rcvbuf turns autotuning off", t->rcvbuf);
}

static int cfg_check_cross(struct cfg_ctx *c)
{
	const struct us_config *cfg = c->cfg;
	const struct tcp_config *t = &cfg->tcp;
	char v[16];

	if (c->seen[cfg_find_key("port", "device")] == 0)
		return cfg_err(c, "[port] device: required key missing");
	if (c->seen[cfg_find_key("ip", "addr")] == 0)
		return cfg_err(c, "[ip] addr: required key missing");
	if (cfg_check_ip(c) < 0 || cfg_check_ip6(c) < 0)
		return -EINVAL;
	/* RFC 6298 2.4/2.5: the RTO is clamped to [min, max]. */
	if (t->rto_min_ms > t->rto_max_ms) {
		snprintf(v, sizeof(v), "%u", t->rto_min_ms);
		return cfg_bad(c, "tcp", "rto_min_ms", v, "greater than rto_max_ms (%u)",
			       t->rto_max_ms);
	}
	if (t->rto_initial_ms < t->rto_min_ms || t->rto_initial_ms > t->rto_max_ms) {
		snprintf(v, sizeof(v), "%u", t->rto_initial_ms);
		return cfg_bad(c, "tcp", "rto_initial_ms", v, "outside rto_min_ms..rto_max_ms (%u..%u)",
			       t->rto_min_ms, t->rto_max_ms);
	}
	if (cfg_check_rcvbuf(c) < 0)
		return -EINVAL;
	/* dpdk-dumpcap is a secondary process: it can attach only to a primary
	 * whose memory is in hugepage files it can map too. */
	if (cfg->nic.capture_pdump && cfg->nic.hugepages == NIC_HUGEPAGES_OFF)
		return cfg_bad(c, "capture", "pdump", "on",
			       "needs hugepages ([eal] hugepages = off; dpdk-dumpcap attaches "
			       "only to a primary on hugepages; use pcap = FILE instead)");
	if (cfg->nic.mbufs <= (uint32_t)cfg->nic.rx_desc + cfg->nic.tx_desc) {
		snprintf(v, sizeof(v), "%u", cfg->nic.mbufs);
		return cfg_bad(c, "port", "mbufs", v,
			       "too few to fill one RX and one TX ring (rx_desc + tx_desc = %u)",
			       cfg->nic.rx_desc + cfg->nic.tx_desc);
	}
	return 0;
}

/* Files */

/* One line, comment already cut off and blanks stripped: what rte_cfgfile
 * would silently skip or misread.  NULL when fine. */
static const char *cfg_line_problem(const char *s, size_t len)
{
	const char *eq;

	if (len == 0)
		return NULL;
	if (s[0] == '[') {
		const char *end = memchr(s, ']', len);

		if (end == NULL)
			return "section header without ']'";
		if (end != s + len - 1)
			return "text after the section header's ']'";
		return NULL;
	}
	eq = memchr(s, '=', len);
	if (eq == NULL)
		return "neither '[section]' nor 'key = value'";
	if (eq == s)
		return "no key name before '='";
	return NULL;
}

/* Mirrors rte_cfgfile's reading of a line: the first '#' starts a comment
 * unless escaped as "\#", then blanks around the rest are ignored. */
static int cfg_prescan(struct cfg_ctx *c, const char *path)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int lineno = 0, rc = 0;

	if (f == NULL)
		return cfg_err(c, "cannot read: %s", strerror(errno));
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		char *s = line, *hash = memchr(line, CFG_COMMENT, len);
		const char *why;

		lineno++;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > CFG_LINE_MAX) {
			rc = cfg_err(c, "line %d: longer than %d characters", lineno, CFG_LINE_MAX);
			break;
		}
		if (hash != NULL && (hash == line || hash[-1] != '\\'))
			len = hash - line;
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t' || s[len - 1] == '\r'))
			len--;
		while (len > 0 && (*s == ' ' || *s == '\t')) {
			s++;
			len--;
		}
		why = cfg_line_problem(s, len);
		if (why != NULL)
			rc = cfg_err(c, "line %d: %s: '%.*s'", lineno, why, (int)len, s);
	}
	if (rc == 0 && ferror(f))
		rc = cfg_err(c, "cannot read: %s", strerror(errno));
	free(line);
	fclose(f);
	return rc;
}

/* name: what messages call the file; path: what is opened. */
static int cfg_load_path(const char *name, const char *path, struct us_config *out, char *err,
			 size_t errlen)
{
	static const struct rte_cfgfile_parameters params = { .comment_character = CFG_COMMENT };
	struct us_config cfg;
	unsigned seen[CFG_NKEYS] = { 0 }, sec_seen[CFG_NSECTIONS] = { 0 };
	struct cfg_ctx c = { .file = name, .err = err, .errlen = errlen, .cfg = &cfg, .seen = seen };
	struct rte_cfgfile *cf;
	int rc = 0, nsec;

	us_config_defaults(&cfg);
	if (strlen(name) >= sizeof(cfg.path)) {
		cfg_err(&c, "file name longer than %zu characters", sizeof(cfg.path) - 1);
		return -1;
	}
	strcpy(cfg.path, name);
	if (cfg_prescan(&c, path) < 0)
		return -1;
	/* Empty values are let through so that "device =" gets our message
	 * rather than an unexplained load failure. */
	cf = rte_cfgfile_load_with_params(path, CFG_FLAG_GLOBAL_SECTION | CFG_FLAG_EMPTY_VALUES,
					  &params);
	if (cf == NULL) {
		cfg_err(&c, "cannot parse (rte_cfgfile_load failed)");
		return -1;
	}
	nsec = rte_cfgfile_num_sections(cf, NULL, 0);
	for (int i = 0; rc == 0 && i < nsec; i++)
		rc = cfg_walk_section(&c, cf, i, sec_seen);
	rte_cfgfile_close(cf);
	if (rc == 0)
		rc = cfg_check_cross(&c);
	if (rc < 0)
		return -1;
	/* nic/ takes only its own struct: IPv6 needs the port to deliver the
	 * all-nodes and solicited-node groups (Neighbor Discovery, DAD). */
	cfg.nic.ip6_multicast = cfg.ip6_enable;
	*out = cfg;
	return 0;
}

/* API */

void us_config_defaults(struct us_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	nic_config_defaults(&cfg->nic);
	cfg->ttl = 64;
	cfg->hop_limit = 64;
	cfg->dad = true;
	cfg->arp_timeout_s = 300;
	cfg->arp_pending_max = 16;
	cfg->arp_retry_ms = 1000;
	tcp_config_defaults(&cfg->tcp);
	strcpy(cfg->log.level, "notice");
	cfg->capture_snaplen = 65535;
	cfg->idle_spin = 1000;
	cfg->engine_count = 1;
}

int us_config_load(const char *path, struct us_config *cfg, char *err, size_t errlen)
{
	return cfg_load_path(path, path, cfg, err, errlen);
}

static int cfg_write_all(int fd, const char *text)
{
	size_t len = strlen(text);

	while (len > 0) {
		ssize_t n = write(fd, text, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EIO;
		text += n;
		len -= (size_t)n;
	}
	return 0;
}

/* rte_cfgfile only loads from a path: put the text in a memfd and open it
 * as /proc/self/fd/N (a temporary file if memfd or /proc is missing). */
int us_config_parse_string(const char *name, const char *text, struct us_config *cfg,
			   char *err, size_t errlen)
{
	struct cfg_ctx c = { .file = name, .err = err, .errlen = errlen };
	char path[64] = "/tmp/us_config.XXXXXX";
	bool is_tmp = false;
	int fd, rc;

	fd = memfd_create("us_config", MFD_CLOEXEC);
	if (fd >= 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		if (access(path, R_OK) != 0) {
			close(fd);
			fd = -1;
			strcpy(path, "/tmp/us_config.XXXXXX");
		}
	}
	if (fd < 0) {
		fd = mkstemp(path);
		is_tmp = fd >= 0;
	}
	if (fd < 0) {
		cfg_err(&c, "cannot create a temporary file: %s", strerror(errno));
		return -1;
	}
	if (cfg_write_all(fd, text) < 0) {
		cfg_err(&c, "cannot write a temporary file: %s", strerror(errno));
		rc = -1;
	} else {
		rc = cfg_load_path(name, path, cfg, err, errlen);
	}
	if (is_tmp)
		unlink(path);
	close(fd);
	return rc;
}
