/* nic/rss.c: software Toeplitz RSS over rte_softrss (see rss.h). */
#include "nic/rss.h"

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_thash.h>

/* Microsoft's RSS verification key (the 82599 datasheet 7.1.2.8.3 and the
 * "Verifying the RSS Hash Calculation" page use it with the same vectors). */
const uint8_t us_rss_key_default[US_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* Why 0x6d5a repeated is symmetric (Woo and Park, "Scalable TCP Session
 * Monitoring with Symmetric RSS", 2012): Toeplitz XORs, for every set bit i
 * of the input (bit 0 = MSB of the first byte), the 32-bit window of the key
 * that starts at key bit i.  A key with a 16-bit period has the same window at
 * bit i and at bit i + 16k.  Swapping source and destination moves each
 * address bit by 32 positions and each port bit by 16, so every set bit picks
 * the same window as before and the XOR is unchanged.  The price: the hash
 * depends only on the XOR of the tuple's 16-bit halves, which still spreads
 * connections well over a RETA of a few hundred entries. */
const uint8_t us_rss_key_symmetric[US_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

int us_rss_init(struct us_rss *rss, const uint8_t *key, size_t key_len, uint16_t reta_size,
		uint16_t nb_queues)
{
	if (rss == NULL || key == NULL || (key_len != US_RSS_KEY_LEN && key_len != US_RSS_KEY_MAX) ||
	    nb_queues == 0 || reta_size == 0 || reta_size > US_RSS_RETA_MAX ||
	    !rte_is_power_of_2(reta_size))
		return -EINVAL;
	memset(rss, 0, sizeof(*rss));
	memcpy(rss->key, key, key_len);
	rss->key_len = (uint8_t)key_len;
	rss->nb_queues = nb_queues;
	rss->reta_size = reta_size;
	/* The default RETA of ixgbe, i40e and mlx5: entry i -> queue i % N. */
	for (uint16_t i = 0; i < reta_size; i++)
		rss->reta[i] = i % nb_queues;
	return 0;
}

/* rte_softrss reads the key 32 bits at a time (it byte-swaps each word, so
 * the key stays in the NIC's byte order) and one word past the input: 16
 * bytes for IPv4+L4, 40 for IPv6+L4 (every key is at least 40).  Copying
 * them into words keeps that read aligned whatever pointer the caller
 * holds. */
static uint32_t rss_softrss(uint32_t *words, uint32_t nwords, const uint8_t *key)
{
	uint32_t k[RTE_THASH_V6_L4_LEN + 1];

	RTE_ASSERT(nwords <= RTE_THASH_V6_L4_LEN);
	memcpy(k, key, (nwords + 1) * sizeof(k[0]));
	return rte_softrss(words, nwords, (const uint8_t *)k);
}

uint32_t us_rss_hash_ipv4_tcp(const uint8_t *key, uint32_t src_ip, uint32_t dst_ip,
			      uint16_t sport, uint16_t dport)
{
	/* DPDK 22.11 rte_thash.h: "addresses and ports/sctp_tag have to be CPU
	 * byte order" -- rte_softrss hashes each 32-bit word from its most
	 * significant bit, so host-order values give the wire order
	 * src_ip, dst_ip, sport, dport.  The union puts dport in the low half of
	 * the third word, sport in the high half. */
	union rte_thash_tuple t;

	memset(&t, 0, sizeof(t));
	t.v4.src_addr = src_ip;
	t.v4.dst_addr = dst_ip;
	t.v4.sport = sport;
	t.v4.dport = dport;
	return rss_softrss((uint32_t *)&t.v4, RTE_THASH_V4_L4_LEN, key);
}

uint32_t us_rss_hash_ipv6_tcp(const uint8_t *key, const uint8_t src[16], const uint8_t dst[16],
			      uint16_t sport, uint16_t dport)
{
	/* The same CPU-order rule: each 32-bit word of the addresses loaded
	 * from network order (rte_thash_load_v6_addrs does that from a
	 * header), the ports host order.  Toeplitz over 36 bytes needs a
	 * 40-byte key at least, which every key we use is. */
	union rte_thash_tuple t;
	struct rte_ipv6_hdr ip;

	memset(&t, 0, sizeof(t));
	memcpy(ip.src_addr, src, 16);
	memcpy(ip.dst_addr, dst, 16);
	rte_thash_load_v6_addrs(&ip, &t);
	t.v6.sport = sport;
	t.v6.dport = dport;
	return rss_softrss((uint32_t *)&t.v6, RTE_THASH_V6_L4_LEN, key);
}

uint32_t us_rss_hash_ipv4(const uint8_t *key, uint32_t src_ip, uint32_t dst_ip)
{
	union rte_thash_tuple t;

	memset(&t, 0, sizeof(t));
	t.v4.src_addr = src_ip;
	t.v4.dst_addr = dst_ip;
	return rss_softrss((uint32_t *)&t.v4, RTE_THASH_V4_L3_LEN, key);
}

uint16_t us_rss_queue(const struct us_rss *rss, uint32_t hash)
{
	return rss->reta[hash % rss->reta_size];
}

uint16_t us_rss_queue_ipv4_tcp(const struct us_rss *rss, uint32_t src_ip, uint32_t dst_ip,
			       uint16_t sport, uint16_t dport)
{
	return us_rss_queue(rss, us_rss_hash_ipv4_tcp(rss->key, src_ip, dst_ip, sport, dport));
}

int us_rss_pick_port(const struct us_rss *rss, uint32_t local_ip, uint32_t remote_ip,
		     uint16_t remote_port, uint16_t want_queue, uint16_t start, uint16_t *port)
{
	const uint32_t span = US_RSS_EPHEMERAL_MAX - US_RSS_EPHEMERAL_MIN + 1;
	uint32_t off;

	if (rss == NULL || port == NULL || want_queue >= rss->nb_queues)
		return -EINVAL;
	off = start >= US_RSS_EPHEMERAL_MIN ? start - US_RSS_EPHEMERAL_MIN : 0;
	for (uint32_t i = 0; i < span; i++) {
		uint16_t p = (uint16_t)(US_RSS_EPHEMERAL_MIN + (off + i) % span);

		/* The NIC classifies the replies: remote -> local. */
		if (us_rss_queue_ipv4_tcp(rss, remote_ip, local_ip, remote_port, p) == want_queue) {
			*port = p;
			return 0;
		}
	}
	return -ENOENT;
}
