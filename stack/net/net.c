/* stack/net/net.c: the network layers' life cycle: what the engine hands
 * over at start, the tables built from the configuration, and everything
 * freed at the end. */
#include <errno.h>
#include <stdio.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "stack/net/net.h"
#include "stack/net/net6.h"

/* Fragmentation and segmentation (gso.c) output attach the payload through
 * indirect mbufs, which carry no data room of their own. */
static struct rte_mempool *net_indirect_pool(unsigned id, const struct rte_mempool *pool)
{
	static unsigned seq;
	char name[RTE_MEMPOOL_NAMESIZE];
	int socket = pool->socket_id;

	snprintf(name, sizeof(name), "us_ind%u_%u", id, __atomic_fetch_add(&seq, 1,
									   __ATOMIC_RELAXED));
	return rte_pktmbuf_pool_create(name, 8191, 32, 0, 0,
				       socket < 0 ? (int)SOCKET_ID_ANY : socket);
}

/* [ip6] enable = on: addresses (DAD starts with the engine), routes, the
 * reassembly table, the neighbour cache. */
static int net_ip6_init(struct us_net *n, const struct us_config *cfg)
{
	int rc;

	n->ip6_on = cfg->ip6_enable;
	if (!n->ip6_on)
		return 0;
	n->icmp6.tokens = US_ICMP_BURST;
	n->icmp6.refill_ns = us_timer_now(n->wheel);
	rc = us_ip6_addr_init(n, cfg);
	if (rc == 0)
		rc = us_ip6_init(n, cfg);
	if (rc == 0)
		rc = us_frag6_init(n);
	if (rc == 0)
		rc = us_nd6_init(n, cfg);
	return rc;
}

int us_net_init(struct us_net *n, const struct us_net_env *env, const struct us_config *cfg)
{
	int rc;

	n->addr = cfg->addr;
	n->bcast = cfg->prefixlen < 31 ? cfg->addr | ~(~0u << (32 - cfg->prefixlen)) : 0;
	n->port = env->port;
	if (n->port.mtu == 0)
		n->port.mtu = cfg->nic.mtu ? cfg->nic.mtu : RTE_ETHER_MTU;
	n->wheel = env->wheel;
	n->pool = env->pool;
	n->tx_drain = env->tx_drain;
	n->tx_ctx = env->tx_ctx;
	n->icmp.tokens = US_ICMP_BURST;
	n->icmp.refill_ns = us_timer_now(env->wheel);

	rc = us_route_init(&n->routes, cfg);
	if (rc == 0 && (n->indirect_pool = net_indirect_pool(env->id, env->pool)) == NULL)
		rc = -ENOMEM;
	if (rc == 0)
		rc = us_arp_init(n, cfg);
	if (rc == 0)
		rc = us_ip_init(n, cfg);
	if (rc == 0)
		rc = net_ip6_init(n, cfg);
	/* Offloads: the NIC's where it has them, else software (gso.c, gro.c). */
	n->gso = cfg->nic.gso;
	n->gro = cfg->nic.gro && !n->port.lro;
	if (rc == 0)
		us_gso_init(n);
	if (rc == 0 && n->gro)
		rc = us_gro_init(n, env->pool->socket_id);
	return rc;
}

void us_net_set_tcp(struct us_net *n, struct tcp_stack *tcp)
{
	n->tcp = tcp;
}

void us_net_fini(struct us_net *n)
{
	us_gro_fini(n);
	if (n->ip6_on) {
		us_nd6_fini(n);
		us_frag6_fini(n);
		us_ip6_addr_fini(n);
	}
	us_arp_fini(n);
	us_ip_fini(n);
	for (uint16_t i = 0; i < n->ntx; i++)
		rte_pktmbuf_free(n->tx[i]);
	n->ntx = 0;
	/* Last: fragments freed above held indirect mbufs from it. */
	if (n->indirect_pool != NULL)
		rte_mempool_free(n->indirect_pool);
	n->indirect_pool = NULL;
}

void us_net_negative_advice(struct us_net *n, const struct us_in6 *dst)
{
	struct us_in6 nh6;
	uint32_t nh;
	bool done;

	if (us_in6_is_v4mapped(dst))
		done = us_route_lookup(&n->routes, us_in6_v4(dst), &nh) == 0 && us_arp_poll(n, nh);
	else
		done = n->ip6_on && us_route6_lookup(n, dst, &nh6) == 0 &&
		       us_nd6_unconfirm(n, &nh6);
	if (done)
		US_NET_STAT_INC(n, net_negative_advice);
	else
		US_NET_STAT_INC(n, net_negative_advice_none);
}
