/* config/parse.h: value parsers for config/ (internal to the room).
 *
 * Each parser takes one value exactly as rte_cfgfile handed it over (already
 * stripped of surrounding blanks and of a trailing comment) and either stores
 * the result and returns 0, or returns -EINVAL and writes the reason, in
 * words a user can act on, into why (e.g. "out of range (68..9000)").
 */
#ifndef US_CONFIG_PARSE_H
#define US_CONFIG_PARSE_H

#include <stddef.h>
#include <stdint.h>

#include "config/config.h"
#include "stack/base/in6.h"

/* Types */

#define US_CFGP_WHY 160

/* Prototypes */

/* Decimal only: no sign, no hex, no blanks, no trailing characters. */
int us_cfgp_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out, char *why);
/* Dotted quad via inet_pton(); result in host byte order. */
int us_cfgp_ipv4(const char *s, uint32_t *out, char *why);
/* "a.b.c.d/len" with len in min_len..32. */
int us_cfgp_cidr(const char *s, uint8_t min_len, uint32_t *addr, uint8_t *len, char *why);
/* "net/len via gw" or "net/len" (directly connected); net has no host bits. */
int us_cfgp_route(const char *s, struct us_route *r, char *why);
/* An IPv6 address via inet_pton(), into network byte order (struct us_in6).
 * No zone index ("%eth0": the stack has one link) and no brackets. */
int us_cfgp_ipv6(const char *s, struct us_in6 *out, char *why);
/* "x::y/len" with len in min_len..128. */
int us_cfgp_cidr6(const char *s, uint8_t min_len, struct us_in6 *addr, uint8_t *len, char *why);
/* "net/len via gw" or "net/len" (directly connected); net has no host bits,
 * gw is a unicast address (us_cfgp_unicast6_why) other than ::. */
int us_cfgp_route6(const char *s, struct us_route6 *r, char *why);
/* Why a cannot be a neighbour's or our own address (multicast, ::, ::1,
 * v4-mapped), or NULL when it can.  Link-local is left to the caller. */
const char *us_cfgp_unicast6_why(const struct us_in6 *a);
/* a with every bit after the first len cleared. */
void us_cfgp_mask6(const struct us_in6 *a, uint8_t len, struct us_in6 *out);
/* The RFC 5952 text of a (inet_ntop) into buf of US_IN6_STRLEN bytes. */
const char *us_cfgp_ntop6(const struct us_in6 *a, char *buf);
/* Copies s into buf (size bytes) or fails when it does not fit. */
int us_cfgp_str(const char *s, char *buf, size_t size, char *why);
/* "auto" (true: the NIC's offload if it has one, software otherwise) or "off". */
int us_cfgp_auto_off(const char *s, bool *out, char *why);
int us_cfgp_hugepages(const char *s, enum nic_hugepages_mode *out, char *why);
/* on/off, yes/no, true/false, 1/0. */
int us_cfgp_bool(const char *s, bool *out, char *why);
/* The names in tcp/tcp_config.h's tables: auto | always | off. */
int us_cfgp_syncookies(const char *s, enum tcp_syncookies_mode *out, char *why);
/* cubic | newreno (tcp_cc_names). */
int us_cfgp_cc(const char *s, enum tcp_cc_alg *out, char *why);
/* off | client | server | both: TCP_FASTOPEN_* bits (RFC 7413). */
int us_cfgp_fastopen(const char *s, uint8_t *out, char *why);
/* prr | prr-crb | ... (tcp_rec_alg_names). */
int us_cfgp_recovery(const char *s, enum tcp_rec_alg *out, char *why);
int us_cfgp_loss_detection(const char *s, enum tcp_loss_det *out, char *why);
int us_cfgp_profile(const char *s, enum tcp_profile *out, char *why);
/* Netmask for a prefix length 0..32, host byte order. */
uint32_t us_cfgp_mask(uint8_t len);
/* "a.b.c.d" into buf (at least 16 bytes), from host byte order. */
const char *us_cfgp_ntoa(uint32_t addr, char *buf);

#endif
