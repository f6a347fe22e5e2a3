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

/* The socket flow k sends from: its stack's one for both families, or
 * the one of its family (world.h, sim_eng ufd). */
static int udp_socket(const struct sim_world *w, const struct sim_udp_plan *u, int *domain)
{
	const int *ufd = w->st[u->src].eng[0].ufd;
	bool dual = w->plan.ip6 && w->plan.stack[u->src].dual;

	*domain = dual || u->family == 6 ? AF_INET6 : AF_INET;
	return u->family == 6 && !dual ? ufd[1] : ufd[0];
}

static void udp_send(struct sim_world *w, unsigned k)
{
	const struct sim_udp_plan *u = &w->plan.udp[k];
	struct sim_udp *x = &w->udp[k];
	struct us_in6 to = sim_stack_addr(u->dst, u->family);
	struct sockaddr_storage dst;
	int domain, fd;
	socklen_t dlen;

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
			fd = udp_socket(w, u, &domain);
			dlen = sim_sockaddr(domain, &to, SIM_UDP_PORT, &dst);
			/* may fail (ARP or ND queue full): a lost datagram */
			us_sendto(fd, buf, len, 0, (struct sockaddr *)&dst, dlen);
		}
		x->sent++;
		x->next_ns = w->now + u->gap_ns;
		w->n.udp_sent++;
		w->n.udp_sent_ip6 += u->family == 6;
		w->progress = true;
	}
}

static void udp_check(struct sim_world *w, unsigned i, const struct sockaddr_storage *from,
		      ssize_t n)
{
	unsigned k = buf[0], seq = (unsigned)buf[1] << 8 | buf[2];
	const struct sim_udp_plan *u = &w->plan.udp[k];
	bool known = n >= 3 && k < w->plan.nudp && !u->off && u->dst == i;
	struct us_in6 src, want;
	uint16_t port;

	sim_sockaddr_parse(from, &src, &port);
	want = known ? sim_stack_addr(u->src, u->family) : src;
	if (!known || !us_in6_eq(&src, &want) || (uint32_t)n != udp_size(u, k, seq)) {
		char ep[US_IN6_EPSTRLEN];

		us_in6_endpoint_str(&src, port, ep, sizeof(ep));
		sim_fail(w, "stack %u: a datagram of %zd bytes from %s that nobody sent", i, n, ep);
	}
	for (uint32_t o = 3; o < (uint32_t)n; o++)
		if (buf[o] != udp_byte(k, seq, o))
			sim_fail(w, "udp %u datagram %u: byte %u corrupt", k, seq, o);
	w->udp[k].rcvd++;
	w->n.udp_rcvd++;
}

static void udp_receive(struct sim_world *w, unsigned i)
{
	struct sockaddr_storage from;
	socklen_t flen = sizeof(from);
	ssize_t n;

	for (unsigned j = 0; j < 2; j++) {
		int fd = w->st[i].eng[0].ufd[j];

		if (fd < 0)
			continue;
		sim_bind(w, i, 0);
		while ((n = us_recvfrom(fd, buf, UDP_BUF, 0, (struct sockaddr *)&from, &flen)) >= 0) {
			udp_check(w, i, &from, n);
			w->progress = true;
			flen = sizeof(from);
		}
	}
}

void sim_udp_step(struct sim_world *w)
{
	/* A sender starts once its stack's DAD is done (as us_init returns). */
	for (unsigned k = 0; k < w->plan.nudp; k++)
		if (!w->plan.udp[k].off && !w->st[w->plan.udp[k].src].dad_pending)
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
