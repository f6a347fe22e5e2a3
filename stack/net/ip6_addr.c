/* stack/net/ip6_addr.c: the interface's IPv6 addresses and Duplicate
 * Address Detection (RFC 4862 5.4).
 *
 * Two slots: the link-local address formed from the MAC (EUI-64) and the
 * configured one.  Each starts TENTATIVE: it receives nothing and is no
 * source until US_IP6_DAD_TRANSMITS solicitations from :: to its
 * solicited-node group went unanswered for a RetransTimer each; then it is
 * PREFERRED.  An NA for it, or another node's NS from :: for it (that node
 * runs DAD for the same address), makes it DUPLICATE for good: start-up
 * fails with its name.  [ip6] dad = off makes both PREFERRED at once.
 *
 * The groups we listen to follow from the addresses: all-nodes and the
 * solicited-node group of every address not DUPLICATE (RFC 4862 5.4.2 joins
 * a tentative address's group before its first NS).
 */
#include <errno.h>
#include <string.h>

#include <rte_common.h>

#include "stack/base/log.h"
#include "stack/net/net.h"

static const struct us_in6 all_nodes = { .b = { 0xff, 0x02, [15] = 1 } };

static bool addr_used(const struct us_ip6_ifaddr *ifa)
{
	return ifa->state == US_IP6_ADDR_TENTATIVE || ifa->state == US_IP6_ADDR_PREFERRED;
}

static struct us_ip6_ifaddr *addr_find(struct us_net *n, const struct us_in6 *a)
{
	for (unsigned i = 0; i < US_IP6_ADDRS; i++)
		if (n->ip6a.a[i].state != US_IP6_ADDR_NONE && us_in6_eq(&n->ip6a.a[i].a, a))
			return &n->ip6a.a[i];
	return NULL;
}

static bool addr_any_tentative(const struct us_net *n)
{
	for (unsigned i = 0; i < US_IP6_ADDRS; i++)
		if (n->ip6a.a[i].state == US_IP6_ADDR_TENTATIVE)
			return true;
	return false;
}

/* One DAD solicitation, and the wait after it (RFC 4862 5.4.2). */
static void addr_dad_send(struct us_net *n, struct us_ip6_ifaddr *ifa)
{
	ifa->dad_left--;
	US_NET_STAT_INC(n, dad_tx_ns);
	us_nd6_solicit(n, &ifa->a, true);
	us_timer_arm(n->wheel, &ifa->dad_timer, us_timer_now(n->wheel) + US_IP6_DAD_WAIT_NS);
}

/* RFC 4862 5.4.5 reached without a reply: the address is ours.  The last
 * address to pass announces them all (RFC 4861 7.2.6). */
static void addr_dad_timer_fn(struct us_timer *t, uint64_t now_ns)
{
	struct us_ip6_ifaddr *ifa = container_of(t, struct us_ip6_ifaddr, dad_timer);
	struct us_net *n = ifa->n;

	(void)now_ns;
	if (ifa->state != US_IP6_ADDR_TENTATIVE)
		return;
	if (ifa->dad_left > 0) {
		addr_dad_send(n, ifa);
		return;
	}
	ifa->state = US_IP6_ADDR_PREFERRED;
	US_NET_STAT_INC(n, dad_ok);
	if (!addr_any_tentative(n))
		us_nd6_announce(n);
}

static void addr_set(struct us_net *n, unsigned i, const struct us_in6 *a, uint8_t plen,
		     bool dad)
{
	struct us_ip6_ifaddr *ifa = &n->ip6a.a[i];

	ifa->a = *a;
	ifa->plen = plen;
	ifa->state = dad ? US_IP6_ADDR_TENTATIVE : US_IP6_ADDR_PREFERRED;
	ifa->dad_left = US_IP6_DAD_TRANSMITS;
	ifa->n = n;
}

int us_ip6_addr_init(struct us_net *n, const struct us_config *cfg)
{
	struct us_in6 ll;

	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		n->ip6a.a[i] = (struct us_ip6_ifaddr){ .n = n };
		us_timer_init(&n->ip6a.a[i].dad_timer, addr_dad_timer_fn);
	}
	n->ip6a.dad = cfg->dad;
	us_in6_linklocal_of(n->port.mac.addr_bytes, &ll);
	addr_set(n, 0, &ll, 64, cfg->dad);
	if (!cfg->has_addr6)
		return 0;
	/* RFC 4291 2.5.2, 2.7: neither :: nor a group is an interface's. */
	if (us_in6_is_unspec(&cfg->addr6) || us_in6_is_mcast(&cfg->addr6) ||
	    us_in6_is_loopback(&cfg->addr6) || cfg->prefixlen6 > 128)
		return -EINVAL;
	/* The same address configured as the derived link-local one: one slot. */
	if (!us_in6_eq(&cfg->addr6, &ll))
		addr_set(n, 1, &cfg->addr6, cfg->prefixlen6, cfg->dad);
	return 0;
}

void us_ip6_addr_fini(struct us_net *n)
{
	for (unsigned i = 0; i < US_IP6_ADDRS; i++)
		us_timer_cancel(n->wheel, &n->ip6a.a[i].dad_timer);
}

void us_ip6_addr_start(struct us_net *n)
{
	bool any = false;

	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		struct us_ip6_ifaddr *ifa = &n->ip6a.a[i];

		if (ifa->state == US_IP6_ADDR_TENTATIVE && !us_timer_armed(&ifa->dad_timer) &&
		    ifa->dad_left > 0) {
			addr_dad_send(n, ifa);
			any = true;
		}
	}
	/* dad = off: usable already, tell the neighbours now. */
	if (!any && !addr_any_tentative(n))
		us_nd6_announce(n);
}

bool us_ip6_is_local(const struct us_net *n, const struct us_in6 *a)
{
	for (unsigned i = 0; i < US_IP6_ADDRS; i++)
		if (n->ip6a.a[i].state == US_IP6_ADDR_PREFERRED && us_in6_eq(&n->ip6a.a[i].a, a))
			return true;
	return false;
}

bool us_ip6_is_tentative(const struct us_net *n, const struct us_in6 *a)
{
	for (unsigned i = 0; i < US_IP6_ADDRS; i++)
		if (n->ip6a.a[i].state == US_IP6_ADDR_TENTATIVE && us_in6_eq(&n->ip6a.a[i].a, a))
			return true;
	return false;
}

bool us_ip6_is_joined(const struct us_net *n, const struct us_in6 *group)
{
	struct us_in6 sn;

	if (us_in6_eq(group, &all_nodes))
		return true;
	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		if (!addr_used(&n->ip6a.a[i]))
			continue;
		us_in6_solicited_node(&n->ip6a.a[i].a, &sn);
		if (us_in6_eq(group, &sn))
			return true;
	}
	return false;
}

bool us_ip6_is_joined_mac(const struct us_net *n, const struct rte_ether_addr *mac)
{
	uint8_t want[RTE_ETHER_ADDR_LEN];
	struct us_in6 sn;

	us_in6_mcast_mac(&all_nodes, want);
	if (memcmp(mac->addr_bytes, want, sizeof(want)) == 0)
		return true;
	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		if (!addr_used(&n->ip6a.a[i]))
			continue;
		us_in6_solicited_node(&n->ip6a.a[i].a, &sn);
		us_in6_mcast_mac(&sn, want);
		if (memcmp(mac->addr_bytes, want, sizeof(want)) == 0)
			return true;
	}
	return false;
}

/* Link-local and interface/link-scope multicast destinations (RFC 4291
 * 2.7: scope in the group's low nibble of byte 1). */
static bool addr_link_scope(const struct us_in6 *dst)
{
	return us_in6_is_linklocal(dst) || (us_in6_is_mcast(dst) && (dst->b[1] & 0x0f) <= 2);
}

int us_ip6_src_for(const struct us_net *n, const struct us_in6 *dst, struct us_in6 *src)
{
	/* RFC 6724 5 rule 2 (appropriate scope), over our two addresses. */
	unsigned first = addr_link_scope(dst) ? 0 : 1;

	for (unsigned k = 0; k < US_IP6_ADDRS; k++) {
		const struct us_ip6_ifaddr *ifa = &n->ip6a.a[(first + k) % US_IP6_ADDRS];

		if (ifa->state == US_IP6_ADDR_PREFERRED) {
			*src = ifa->a;
			return 0;
		}
	}
	return -EADDRNOTAVAIL;
}

void us_ip6_addr_duplicate(struct us_net *n, const struct us_in6 *a)
{
	struct us_ip6_ifaddr *ifa = addr_find(n, a);
	char text[US_IN6_STRLEN];

	if (ifa == NULL || ifa->state != US_IP6_ADDR_TENTATIVE)
		return;
	ifa->state = US_IP6_ADDR_DUPLICATE;
	us_timer_cancel(n->wheel, &ifa->dad_timer);
	US_NET_STAT_INC(n, dad_duplicate);
	us_in6_str(a, text, sizeof(text));
	US_LOG(stack, ERR, "IPv6 address %s is already in use on the link (Duplicate Address "
	       "Detection, RFC 4862 5.4.5): not used\n", text);
	/* The other address may have passed while this one waited. */
	if (!addr_any_tentative(n))
		us_nd6_announce(n);
}

bool us_ip6_addr_dad_result(const struct us_net *n, bool *done)
{
	bool ok = true;

	*done = !addr_any_tentative(n);
	for (unsigned i = 0; i < US_IP6_ADDRS; i++)
		if (n->ip6a.a[i].state == US_IP6_ADDR_DUPLICATE)
			ok = false;
	return ok;
}

enum us_ip6_addr_state us_ip6_addr_at(const struct us_net *n, unsigned i, struct us_in6 *a)
{
	if (i >= US_IP6_ADDRS)
		return US_IP6_ADDR_NONE;
	if (a != NULL)
		*a = n->ip6a.a[i].a;
	return n->ip6a.a[i].state;
}

void us_ip6_addr_adopt(struct us_net *n, const struct us_net *from)
{
	for (unsigned i = 0; i < US_IP6_ADDRS; i++) {
		struct us_ip6_ifaddr *ifa = &n->ip6a.a[i];
		const struct us_ip6_ifaddr *src = &from->ip6a.a[i];

		if (ifa->state == US_IP6_ADDR_NONE || !us_in6_eq(&ifa->a, &src->a))
			continue;
		us_timer_cancel(n->wheel, &ifa->dad_timer);
		ifa->state = src->state;
		ifa->dad_left = 0;
	}
}
