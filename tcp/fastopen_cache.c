/* tcp/fastopen_cache.c: the client's Fast Open cookie cache (RFC 7413 4.1.3),
 * one per engine, so no locks.
 *
 * Keyed by the server's address (IPv4 v4-mapped, tcp.h).  Each entry holds the
 * server's cookie (4..16 bytes), the MSS it advertised (RFC 7413 4.1.3: so
 * the next SYN carries no more data than the server takes) and a negative
 * mark: RFC 7413 4.1.3 says the client MUST cache negative responses (SYN
 * data not acknowledged, ICMP errors, no SYN-ACK at all) and stop trying
 * Fast Open to that server; we stop for neg_ttl_ns on the caller's clock,
 * after which TFO is tried again (paths and middleboxes change).
 *
 * Fixed capacity, allocated once: a chained hash over entry indices and a
 * doubly-linked LRU list, so lookup, store and eviction are O(1) and the
 * cache never allocates on the data path.  When full, the least recently
 * used entry (looked up, stored or marked) makes room.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/fastopen.h"

#define NIL UINT32_MAX

struct tfo_ent {
	struct us_in6 ip;
	uint32_t hnext;       /* hash chain, or free list */
	uint32_t prev, next;  /* LRU list: prev towards the MRU head */
	uint64_t neg_until_ns;
	bool negative;
	uint16_t mss;
	uint8_t cookie_len;
	uint8_t cookie[TFO_COOKIE_MAX];
};

struct tfo_cache {
	uint32_t cap, count, mask;
	uint32_t head, tail, free;
	uint64_t neg_ttl_ns;
	struct tfo_counters *ctr;
	uint32_t *buckets;
	struct tfo_ent ents[];
};

/* The servers are the ones we connect to, not chosen by a peer: an
 * unkeyed hash is enough. */
static uint32_t bucket_of(const struct tfo_cache *c, const struct us_in6 *ip)
{
	uint32_t w[4], h;

	memcpy(w, ip->b, sizeof(w));
	h = (w[0] ^ w[1] ^ w[2] ^ w[3]) * 0x9e3779b1u; /* Fibonacci hashing */

	return (h ^ h >> 16) & c->mask;
}

/* NULL + errno on failure (EINVAL for capacity 0 or NULL counters). */
struct tfo_cache *tfo_cache_create(uint32_t capacity, uint64_t neg_ttl_ns,
				   struct tfo_counters *ctr)
{
	struct tfo_cache *c;
	uint32_t nb = 1;

	if (capacity == 0 || capacity > (1u << 24) || ctr == NULL) {
		errno = EINVAL;
		return NULL;
	}
	while (nb < capacity)
		nb <<= 1;
	c = calloc(1, sizeof(*c) + (size_t)capacity * sizeof(c->ents[0]));
	if (c == NULL)
		return NULL;
	c->buckets = malloc((size_t)nb * sizeof(*c->buckets));
	if (c->buckets == NULL) {
		free(c);
		return NULL;
	}
	for (uint32_t i = 0; i < nb; i++)
		c->buckets[i] = NIL;
	for (uint32_t i = 0; i < capacity; i++)
		c->ents[i].hnext = i + 1 < capacity ? i + 1 : NIL;
	c->cap = capacity;
	c->mask = nb - 1;
	c->head = c->tail = NIL;
	c->free = 0;
	c->neg_ttl_ns = neg_ttl_ns;
	c->ctr = ctr;
	return c;
}

void tfo_cache_free(struct tfo_cache *c)
{
	if (c == NULL)
		return;
	free(c->buckets);
	free(c);
}

uint32_t tfo_cache_count(const struct tfo_cache *c)
{
	return c->count;
}

static uint32_t find(const struct tfo_cache *c, const struct us_in6 *ip)
{
	uint32_t i = c->buckets[bucket_of(c, ip)];

	while (i != NIL && !us_in6_eq(&c->ents[i].ip, ip))
		i = c->ents[i].hnext;
	return i;
}

static void lru_unlink(struct tfo_cache *c, uint32_t i)
{
	struct tfo_ent *e = &c->ents[i];

	if (e->prev != NIL)
		c->ents[e->prev].next = e->next;
	else
		c->head = e->next;
	if (e->next != NIL)
		c->ents[e->next].prev = e->prev;
	else
		c->tail = e->prev;
}

static void lru_push_head(struct tfo_cache *c, uint32_t i)
{
	struct tfo_ent *e = &c->ents[i];

	e->prev = NIL;
	e->next = c->head;
	if (c->head != NIL)
		c->ents[c->head].prev = i;
	c->head = i;
	if (c->tail == NIL)
		c->tail = i;
}

static void touch(struct tfo_cache *c, uint32_t i)
{
	if (c->head == i)
		return;
	lru_unlink(c, i);
	lru_push_head(c, i);
}

static void hash_unlink(struct tfo_cache *c, uint32_t i)
{
	uint32_t *pp = &c->buckets[bucket_of(c, &c->ents[i].ip)];

	while (*pp != i)
		pp = &c->ents[*pp].hnext;
	*pp = c->ents[i].hnext;
}

/* A fresh entry for ip, evicting the LRU entry when full. */
static uint32_t alloc_ent(struct tfo_cache *c, const struct us_in6 *ip)
{
	uint32_t i = c->free, b;

	if (i != NIL) {
		c->free = c->ents[i].hnext;
		c->count++;
	} else {
		i = c->tail;
		hash_unlink(c, i);
		lru_unlink(c, i);
		c->ctr->cli_cache_evictions++;
	}
	memset(&c->ents[i], 0, sizeof(c->ents[i]));
	c->ents[i].ip = *ip;
	b = bucket_of(c, ip);
	c->ents[i].hnext = c->buckets[b];
	c->buckets[b] = i;
	lru_push_head(c, i);
	return i;
}

static uint32_t find_or_alloc(struct tfo_cache *c, const struct us_in6 *ip)
{
	uint32_t i = find(c, ip);

	if (i == NIL)
		return alloc_ent(c, ip);
	touch(c, i);
	return i;
}

/* What to put in the next SYN to server_ip.  out always gets the cached MSS
 * (0 if unknown) and the cookie, if any, so tfo_syn_data_limit(out) works on
 * every path.  A negative mark whose time has come is cleared here. */
enum tfo_cache_status tfo_cache_lookup(struct tfo_cache *c, const struct us_in6 *server_ip,
				       uint64_t now_ns, struct tfo_cache_entry_view *out)
{
	uint32_t i = find(c, server_ip);
	struct tfo_ent *e;

	memset(out, 0, sizeof(*out));
	if (i == NIL) {
		c->ctr->cli_cache_misses++;
		return TFO_CACHE_MISS;
	}
	touch(c, i);
	e = &c->ents[i];
	out->mss = e->mss;
	if (e->negative && now_ns < e->neg_until_ns) {
		c->ctr->cli_cache_negative++;
		return TFO_CACHE_NEGATIVE;
	}
	e->negative = false;
	if (e->cookie_len == 0) {
		c->ctr->cli_cache_misses++;
		return TFO_CACHE_MISS;
	}
	out->cookie_len = e->cookie_len;
	memcpy(out->cookie, e->cookie, e->cookie_len);
	c->ctr->cli_cache_hits++;
	return TFO_CACHE_HIT;
}

/* Remember the cookie (4..16 bytes, even; 0 = none received) and MSS (0 =
 * none advertised) from a SYN-ACK; both replace what was cached.  A negative
 * mark is kept until it expires: one good handshake does not prove that SYN
 * data gets through.  Returns 0 or -EINVAL. */
int tfo_cache_store(struct tfo_cache *c, const struct us_in6 *server_ip, const uint8_t *cookie,
		    size_t cookie_len, uint16_t mss)
{
	struct tfo_ent *e;

	if (cookie_len != 0 && (cookie == NULL || cookie_len < TFO_COOKIE_MIN ||
				cookie_len > TFO_COOKIE_MAX || cookie_len % 2 != 0))
		return -EINVAL;
	e = &c->ents[find_or_alloc(c, server_ip)];
	e->cookie_len = (uint8_t)cookie_len;
	if (cookie_len)
		memcpy(e->cookie, cookie, cookie_len);
	e->mss = mss;
	return 0;
}

/* RFC 7413 4.1.3: SYN data timed out, or an ICMP error came back: no Fast
 * Open to this server until now_ns + neg_ttl_ns.  The cookie is kept for
 * when the mark expires. */
int tfo_cache_mark_unfriendly(struct tfo_cache *c, const struct us_in6 *server_ip, uint64_t now_ns)
{
	struct tfo_ent *e = &c->ents[find_or_alloc(c, server_ip)];

	e->negative = true;
	e->neg_until_ns = now_ns + c->neg_ttl_ns;
	c->ctr->cli_marked_unfriendly++;
	return 0;
}

/* RFC 7413 4.1.3: SYN data up to the cached server MSS; without one, the
 * default IPv4 MSS of 536 bytes (RFC 1122). */
uint16_t tfo_syn_data_limit(const struct tfo_cache_entry_view *e)
{
	return e != NULL && e->mss != 0 ? e->mss : TFO_DEFAULT_SYN_MSS;
}

/* RFC 7413 4.1.3: would a SYN to server_ip carry data now (a cookie cached,
 * no negative mark in force)?  A peek for callers that must know before
 * they queue data (us_sendto with MSG_FASTOPEN): no counter moves, the LRU
 * order stays, an expired mark is left for tfo_cache_lookup to clear. */
bool tfo_cache_has_cookie(const struct tfo_cache *c, const struct us_in6 *server_ip, uint64_t now_ns)
{
	uint32_t i = find(c, server_ip);
	const struct tfo_ent *e;

	if (i == NIL)
		return false;
	e = &c->ents[i];
	if (e->negative && now_ns < e->neg_until_ns)
		return false;
	return e->cookie_len != 0;
}
