/* apps/loadgen/idle.c: --idle N, connections opened before the load starts
 * and then left alone (bench/: the active rate and the server's memory with
 * many idle connections open).
 *
 * An idle connection needs only its descriptor, not a struct lg_conn (8 KiB
 * of response buffer each), so they live in a plain array with their own
 * epoll instance: the load's epoll never sees them.  They open in windows of
 * LG_IDLE_WINDOW handshakes so the server's listen backlog and the link's
 * rings see bursts, not N SYNs at once.  One client address reaches about
 * 28 K connections per server port (the ephemeral range), so --idle-ports P
 * spreads them over the P ports after the target's.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "loadgen.h"

#define LG_IDLE_WINDOW 512u
#define LG_IDLE_EVENTS 256

/* Polls the stack for s seconds (the bench samples the server meanwhile). */
static void lg_idle_pause(int ep, double s)
{
	struct us_epoll_event ev;
	uint64_t t_end = lg_now_ns() + (uint64_t)(s * 1e9);

	while (lg_now_ns() < t_end)
		us_epoll_wait(ep, &ev, 1, 10);
}

/* Connect i's target: the target's port, or one of the P ports after it. */
static union lg_sockaddr lg_idle_target(const struct lg_run *r, unsigned i)
{
	unsigned p = r->o.idle_ports;

	if (p == 0)
		return r->o.target;
	return lg_target_port(&r->o, (uint16_t)(lg_target_port_of(&r->o) + 1u + i % p));
}

/* Starts connect i; false when it failed at once (counted). */
static bool lg_idle_connect(struct lg_run *r, int ep, unsigned i)
{
	union lg_sockaddr to = lg_idle_target(r, i);
	struct us_epoll_event ev = { .events = US_EPOLLOUT, .data.u64 = i };
	int fd = us_socket(to.sa.sa_family, SOCK_STREAM | US_SOCK_NONBLOCK, 0);

	r->idle_fd[i] = fd;
	if (fd < 0) {
		r->idle_failed++;
		return false;
	}
	if (us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev) < 0 ||
	    (us_connect(fd, &to.sa, r->o.target_len) < 0 && errno != EINPROGRESS)) {
		us_close(fd);
		r->idle_fd[i] = -1;
		r->idle_failed++;
		return false;
	}
	return true;
}

/* One connect's outcome: established (kept, out of the epoll) or failed. */
static void lg_idle_settle(struct lg_run *r, int ep, unsigned i)
{
	int fd = r->idle_fd[i], err = 0;
	socklen_t len = sizeof(err);

	us_epoll_ctl(ep, US_EPOLL_CTL_DEL, fd, NULL);
	if (us_getsockopt(fd, US_SOL_SOCKET, US_SO_ERROR, &err, &len) == 0 && err == 0) {
		r->idle_open++;
		return;
	}
	us_close(fd);
	r->idle_fd[i] = -1;
	r->idle_failed++;
}

/* Opens r->o.idle connections, at most LG_IDLE_WINDOW in flight, within
 * timeout_s; those still connecting then count as failed. */
static void lg_idle_open(struct lg_run *r, int ep, double timeout_s)
{
	struct us_epoll_event evs[LG_IDLE_EVENTS];
	uint64_t deadline = lg_now_ns() + (uint64_t)(timeout_s * 1e9);
	unsigned next = 0, inflight = 0;

	while (next < r->o.idle || inflight > 0) {
		while (next < r->o.idle && inflight < LG_IDLE_WINDOW)
			inflight += lg_idle_connect(r, ep, next++);
		if (lg_now_ns() >= deadline)
			break;
		int n = us_epoll_wait(ep, evs, LG_IDLE_EVENTS, 10);

		for (int k = 0; k < n; k++) {
			lg_idle_settle(r, ep, (unsigned)evs[k].data.u64);
			inflight--;
		}
	}
	for (unsigned i = 0; i < next; i++) {
		struct us_epoll_event ev = { .events = 0 };

		/* Still in the epoll: never settled, a failure. */
		if (r->idle_fd[i] >= 0 && us_epoll_ctl(ep, US_EPOLL_CTL_MOD, r->idle_fd[i], &ev) == 0) {
			us_close(r->idle_fd[i]);
			r->idle_fd[i] = -1;
			r->idle_failed++;
		}
	}
	r->idle_failed += r->o.idle - next;
}

int lg_idle_start(struct lg_run *r)
{
	uint64_t t0;
	int ep;

	if (r->o.idle == 0)
		return 0;
	r->idle_fd = malloc(r->o.idle * sizeof(*r->idle_fd));
	ep = us_epoll_create1(0);
	if (r->idle_fd == NULL || ep < 0) {
		fprintf(stderr, "us-loadgen: --idle: no memory or epoll\n");
		return -1;
	}
	for (unsigned i = 0; i < r->o.idle; i++)
		r->idle_fd[i] = -1;
	printf("idle: ready, opening %u\n", r->o.idle);
	fflush(stdout);
	lg_idle_pause(ep, r->o.idle_wait_s);
	t0 = lg_now_ns();
	lg_idle_open(r, ep, 30.0 + r->o.idle / 1000.0);
	printf("idle: %u established, %u failed in %.1f s\n", r->idle_open, r->idle_failed,
	       (double)(lg_now_ns() - t0) / 1e9);
	fflush(stdout);
	lg_idle_pause(ep, r->o.idle_wait_s);
	us_close(ep);
	return 0;
}

void lg_idle_stop(struct lg_run *r)
{
	if (r->idle_fd == NULL)
		return;
	for (unsigned i = 0; i < r->o.idle; i++)
		if (r->idle_fd[i] >= 0)
			us_close(r->idle_fd[i]);
	free(r->idle_fd);
	r->idle_fd = NULL;
}
