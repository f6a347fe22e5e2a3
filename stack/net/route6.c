/* stack/net/route6.c: where an IPv6 packet goes next, and how big it may
 * be on the way.
 *
 * Routes are static ([ip6] addr's prefix on-link, [ip6] routes, the default
 * route via [ip6] gateway), sorted longest prefix first as IPv4's are;
 * link-local destinations and groups are always on the link (RFC 4291
 * 2.5.6, RFC 4861 5.2).  Path MTUs lowered by Packet Too Big sit in a small
 * table in struct us_ip6_state, each for US_IP6_PMTU_AGE_NS.
 */
#include <errno.h>

#include <rte_common.h>

#include "stack/net/net.h"

_Static_assert(US_ROUTES6_MAX >= US_CFG_MAX_ROUTES + 2,
	       "room for the on-link prefix, every [ip6] route and the default route");

static void route6_mask(struct us_in6 *a, unsigned plen)
{
	for (unsigned i = 0; i < sizeof(a->b); i++) {
		unsigned bits = plen > i * 8 ? plen - i * 8 : 0;

		a->b[i] &= bits >= 8 ? 0xff : (uint8_t)(0xff00 >> bits);
	}
}

/* Insert keeping the longest prefixes first; equal lengths keep
 * configuration order. */
static int route6_add(struct us_ip6_state *s, const struct us_in6 *net, unsigned plen,
		      const struct us_in6 *gw)
{
	unsigned i;

	if (plen > 128)
		return -EINVAL;
	if (s->nroutes == US_ROUTES6_MAX)
		return -ENOSPC;
	for (i = s->nroutes; i > 0 && s->routes[i - 1].plen < plen; i--)
		s->routes[i] = s->routes[i - 1];
	s->routes[i] = (struct us_route6_entry){
		.net = *net, .plen = (uint8_t)plen, .has_gw = gw != NULL,
	};
	route6_mask(&s->routes[i].net, plen);
	if (gw != NULL)
		s->routes[i].gw = *gw;
	s->nroutes++;
	return 0;
}

int us_route6_init(struct us_net *n, const struct us_config *cfg)
{
	static const struct us_in6 any;
	struct us_ip6_state *s = &n->ip6;
	int rc = 0;

	s->nroutes = 0;
	if (cfg->has_addr6)
		rc = route6_add(s, &cfg->addr6, cfg->prefixlen6, NULL);
	for (unsigned i = 0; rc == 0 && i < cfg->nroutes6 && i < US_CFG_MAX_ROUTES; i++) {
		const struct us_route6 *r = &cfg->routes6[i];

		rc = route6_add(s, &r->net, r->prefixlen, r->has_gateway ? &r->gateway : NULL);
	}
	if (rc == 0 && cfg->has_gateway6)
		rc = route6_add(s, &any, 0, &cfg->gateway6);
	return rc;
}

int us_route6_lookup(const struct us_net *n, const struct us_in6 *dst, struct us_in6 *next_hop)
{
	if (us_in6_is_mcast(dst) || us_in6_is_linklocal(dst)) {
		*next_hop = *dst;
		return 0;
	}
	for (unsigned i = 0; i < n->ip6.nroutes; i++) {
		const struct us_route6_entry *r = &n->ip6.routes[i];

		if (us_in6_prefix_eq(dst, &r->net, r->plen)) {
			*next_hop = r->has_gw ? r->gw : *dst;
			return 0;
		}
	}
	return -ENETUNREACH;
}

/* Path MTU */

static bool pmtu_live(const struct us_net *n, const struct us_ip6_pmtu *p)
{
	return p->mtu != 0 && us_timer_now(n->wheel) - p->since_ns < US_IP6_PMTU_AGE_NS;
}

uint16_t us_ip6_path_mtu(const struct us_net *n, const struct us_in6 *dst)
{
	if (n->ip6.npmtu == 0)
		return n->port.mtu;
	for (unsigned i = 0; i < US_IP6_PMTU_MAX; i++) {
		const struct us_ip6_pmtu *p = &n->ip6.pmtu[i];

		if (pmtu_live(n, p) && us_in6_eq(&p->dst, dst))
			return RTE_MIN(p->mtu, n->port.mtu);
	}
	return n->port.mtu;
}

/* dst's slot, else a free or aged one, else the oldest. */
static struct us_ip6_pmtu *pmtu_slot(struct us_net *n, const struct us_in6 *dst)
{
	struct us_ip6_pmtu *oldest = &n->ip6.pmtu[0], *spare = NULL;

	for (unsigned i = 0; i < US_IP6_PMTU_MAX; i++) {
		struct us_ip6_pmtu *p = &n->ip6.pmtu[i];

		if (pmtu_live(n, p) && us_in6_eq(&p->dst, dst))
			return p;
		if (!pmtu_live(n, p) && spare == NULL)
			spare = p;
		if (p->since_ns < oldest->since_ns)
			oldest = p;
	}
	return spare != NULL ? spare : oldest;
}

int us_ip6_pmtu_lower(struct us_net *n, const struct us_in6 *dst, uint32_t mtu)
{
	struct us_ip6_pmtu *p;

	/* RFC 8201 4: a report below the IPv6 minimum is discarded. */
	if (mtu < US_IP6_MIN_MTU)
		return -EINVAL;
	if (mtu >= us_ip6_path_mtu(n, dst))
		return -EALREADY;
	p = pmtu_slot(n, dst);
	if (p->mtu == 0)
		n->ip6.npmtu++;
	*p = (struct us_ip6_pmtu){
		.dst = *dst, .mtu = (uint16_t)mtu, .since_ns = us_timer_now(n->wheel),
	};
	return 0;
}
