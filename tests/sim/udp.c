/* tests/sim/udp.c: the UDP flows of a world: datagrams of drawn sizes (some
 * above the MTU, so fragmented), each carrying its flow, its number and a
 * pattern of both, sent one way at a drawn pace.  The receiver checks every
 * datagram it gets: from the flow's source, of the size that number has,
 * every byte right.  Loss and duplication are UDP's to have; corruption or
 * a datagram nobody sent fails the world. */
#include <arpa/inet.h>
#include <sys/socket.h>

#include "stack/include/us_socket.h"
#include "tests/sim/world.h"

#define UDP_BUF 65536u

static uint8_t buf[UDP_BUF];

static uint32_t udp_size(const struct sim_udp_plan *u, unsigned k, unsigned seq)
{
	uint32_t h = (k * 2654435761u) ^ (seq * 40503u);

	return 3 + h % (u->size_max > 3 ? u->size_max - 2 : 1);
}

static uint8_t udp_byte(unsigned k, unsigned seq, uint32_t off)
{
	return (uint8_t)(off * 13 + seq * 7 + k * 101);
}

static void udp_send(struct sim_world *w, unsigned k)
{
	const struct sim_udp_plan *u = &w->plan.udp[k];
	struct sim_udp *x = &w->udp[k];
	struct sockaddr_in dst = sim_addr(sim_ip(u->dst), SIM_UDP_PORT);

	if (x->next_ns == 0)
		x->next_ns = w->t0 + u->start_ns;
	while (x->sent < u->count && w->now >= x->next_ns) {
		uint32_t len = udp_size(u, k, x->sent);

		buf[0] = (uint8_t)k;
		buf[1] = (uint8_t)(x->sent >> 8);
		buf[2] = (uint8_t)x->sent;
		for (uint32_t o = 3; o < len; o++)
			buf[o] = udp_byte(k, x->sent, o);
		if (w->st[u->src].up) {
			sim_bind(w, u->src, 0);
			us_sendto(w->st[u->src].eng[0].ufd, buf, len, 0, (struct sockaddr *)&dst,
				  sizeof(dst)); /* may fail (ARP queue full): a lost datagram */
		}
		x->sent++;
		x->next_ns = w->now + u->gap_ns;
		w->n.udp_sent++;
		w->progress = true;
	}
}

static void udp_check(struct sim_world *w, unsigned i, uint32_t from, ssize_t n)
{
	unsigned k = buf[0], seq = (unsigned)buf[1] << 8 | buf[2];
	const struct sim_udp_plan *u = &w->plan.udp[k];

	if (n < 3 || k >= w->plan.nudp || u->off || u->dst != i || sim_ip(u->src) != from ||
	    (uint32_t)n != udp_size(u, k, seq))
		sim_fail(w, "stack %u: a datagram of %zd bytes from %#x that nobody sent", i, n, from);
	for (uint32_t o = 3; o < (uint32_t)n; o++)
		if (buf[o] != udp_byte(k, seq, o))
			sim_fail(w, "udp %u datagram %u: byte %u corrupt", k, seq, o);
	w->udp[k].rcvd++;
	w->n.udp_rcvd++;
}

static void udp_receive(struct sim_world *w, unsigned i)
{
	struct sockaddr_in from;
	socklen_t flen = sizeof(from);
	ssize_t n;

	if (w->st[i].eng[0].ufd < 0)
		return;
	sim_bind(w, i, 0);
	while ((n = us_recvfrom(w->st[i].eng[0].ufd, buf, UDP_BUF, 0, (struct sockaddr *)&from,
				&flen)) >= 0) {
		udp_check(w, i, ntohl(from.sin_addr.s_addr), n);
		w->progress = true;
		flen = sizeof(from);
	}
}

void sim_udp_step(struct sim_world *w)
{
	for (unsigned k = 0; k < w->plan.nudp; k++)
		if (!w->plan.udp[k].off)
			udp_send(w, k);
	for (unsigned i = 0; i < w->plan.nstacks; i++)
		if (w->st[i].up)
			udp_receive(w, i);
}

uint64_t sim_udp_next(const struct sim_world *w)
{
	uint64_t next = UINT64_MAX;

	for (unsigned k = 0; k < w->plan.nudp; k++) {
		const struct sim_udp *x = &w->udp[k];
		uint64_t t = x->next_ns ? x->next_ns : w->t0 + w->plan.udp[k].start_ns;

		if (!w->plan.udp[k].off && x->sent < w->plan.udp[k].count && t > w->now && t < next)
			next = t;
	}
	return next;
}

bool sim_udp_done(const struct sim_world *w)
{
	for (unsigned k = 0; k < w->plan.nudp; k++)
		if (!w->plan.udp[k].off && w->udp[k].sent < w->plan.udp[k].count)
			return false;
	return true;
}
