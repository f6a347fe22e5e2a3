/* config/: the INI configuration file (parsed with DPDK's rte_cfgfile).
 *
 * Every key has a default; every bad section, key or value is rejected at
 * start with the file, section, key, value and the reason, e.g.
 *   config/tap.ini: [ip] addr = '10.77.0.300': not an IPv4 address
 * Unknown sections and unknown keys are errors too (a typo must not silently
 * fall back to a default).
 */
#ifndef US_CONFIG_H
#define US_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nic/nic_config.h"
#include "stack/base/in6.h"
#include "stack/base/log.h"
#include "tcp/tcp_config.h"

/* Types */

#define US_CFG_MAX_ROUTES 16
#define US_CFG_STR 256

struct us_route {
	uint32_t net;       /* host byte order */
	uint8_t prefixlen;
	uint32_t gateway;   /* host byte order; 0 = directly connected */
};

struct us_route6 {
	struct us_in6 net;    /* host bits clear */
	uint8_t prefixlen;
	struct us_in6 gateway;
	bool has_gateway;     /* false: directly connected */
};

struct us_config {
	char path[US_CFG_STR];

	/* [eal], [port], [capture] pdump: what nic/ takes */
	struct nic_config nic;

	/* [ip] */
	uint32_t addr;                /* host byte order; required */
	uint8_t prefixlen;            /* from addr = a.b.c.d/len */
	uint32_t gateway;             /* 0 = none */
	struct us_route routes[US_CFG_MAX_ROUTES]; /* route = net/len via gw */
	unsigned nroutes;
	uint8_t ttl;                  /* default 64 */

	/* [ip6] (off unless enable = on) */
	bool ip6_enable;
	struct us_in6 addr6;          /* addr = x::y/len; has_addr6 false: link-local only */
	uint8_t prefixlen6;
	bool has_addr6;
	struct us_in6 gateway6;       /* default router: link-local or in addr's prefix */
	bool has_gateway6;
	struct us_route6 routes6[US_CFG_MAX_ROUTES]; /* route = net/len [via gw] */
	unsigned nroutes6;
	uint8_t hop_limit;            /* of the packets we send, default 64 */
	bool dad;                     /* Duplicate Address Detection (RFC 4862), default on */

	/* [arp] */
	uint32_t arp_timeout_s;       /* entry lifetime, default 300 */
	uint32_t arp_pending_max;     /* packets queued per unresolved hop, default 16 */
	uint32_t arp_retry_ms;        /* default 1000 */

	/* [tcp] */
	struct tcp_config tcp;        /* keys named as the fields: rto_min_ms = 200 ... */

	/* [log]: rte_log levels of the userstack log types (stack/base/log.h) */
	struct us_log_config log;

	/* [capture] */
	char capture_pcap[US_CFG_STR]; /* pcap = FILE: both directions, libpcap; "" = off */
	uint32_t capture_snaplen;     /* snaplen = bytes per frame kept, default 65535 */

	/* [engine] */
	uint32_t engine_count;        /* count = engines, one RX/TX queue each, default 1 */
	uint32_t idle_sleep_max_us;   /* idle back-off bound, 0 = busy poll (default) */
	uint32_t idle_spin;           /* empty polls before sleeping, default 1000 */

	/* [impair]: the seeded link emulator (nic/impair.h) on this stack's own
	 * port, as nic_impair_parse takes it (checked at load, quotes removed);
	 * "" = off (also what "none" becomes). */
	char impair_rx[US_CFG_STR];   /* rx = SPEC: frames from the port, before the stack */
	char impair_tx[US_CFG_STR];   /* tx = SPEC: frames from the stack, before the port */
};

/* Prototypes */

void us_config_defaults(struct us_config *cfg);
/* 0 on success; -1 with a one-line human message in err on failure. */
int us_config_load(const char *path, struct us_config *cfg, char *err, size_t errlen);
/* Same, from text in memory (tests); name is used in messages. */
int us_config_parse_string(const char *name, const char *text, struct us_config *cfg,
			   char *err, size_t errlen);

#endif
