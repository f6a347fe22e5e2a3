/* stack/net/route.c: the static IPv4 route table (connected subnet, configured
 * routes, default gateway) with longest-prefix match.  A handful of routes:
 * a sorted array beats any trie here. */
#include <errno.h>

#include "stack/net/net.h"

static uint32_t route_mask(uint8_t prefixlen)
{
	return prefixlen == 0 ? 0 : ~0u << (32 - prefixlen);
}

/* Insert keeping the table sorted by prefix length, longest first; equal
 * lengths keep configuration order. */
static int route_add(struct us_route_table *t, uint32_t net, uint8_t prefixlen, uint32_t gw)
{
	unsigned i;

	if (prefixlen > 32)
		return -EINVAL;
	if (t->n == US_ROUTES_MAX)
		return -ENOSPC;
	for (i = t->n; i > 0 && t->r[i - 1].prefixlen < prefixlen; i--)
		t->r[i] = t->r[i - 1];
	t->r[i] = (struct us_route_entry){
		.net = net & route_mask(prefixlen),
		.mask = route_mask(prefixlen),
		.gateway = gw,
		.prefixlen = prefixlen,
	};
	t->n++;
	return 0;
}

int us_route_init(struct us_route_table *t, const struct us_config *cfg)
{
	int rc = 0;

	t->n = 0;
	if (cfg->addr != 0)
		rc = route_add(t, cfg->addr, cfg->prefixlen, 0);
	for (unsigned i = 0; rc == 0 && i < cfg->nroutes && i < US_CFG_MAX_ROUTES; i++)
		rc = route_add(t, cfg->routes[i].net, cfg->routes[i].prefixlen,
			       cfg->routes[i].gateway);
	if (rc == 0 && cfg->gateway != 0)
		rc = route_add(t, 0, 0, cfg->gateway);
	return rc;
}

int us_route_lookup(const struct us_route_table *t, uint32_t dst, uint32_t *next_hop)
{
	for (unsigned i = 0; i < t->n; i++) {
		const struct us_route_entry *r = &t->r[i];

		if ((dst & r->mask) == r->net) {
			*next_hop = r->gateway != 0 ? r->gateway : dst;
			return 0;
		}
	}
	return -ENETUNREACH;
}
