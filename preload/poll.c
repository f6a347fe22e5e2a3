/* preload/poll.c: poll and ppoll over userstack sockets and kernel
 * descriptors together.  The userstack members go, for the one call, into
 * a userstack epoll set of this thread (level-triggered, each entry's
 * index as data); the kernel's are polled with their userstack entries
 * masked out (a negative fd is skipped by poll(2)).  Both are asked
 * without blocking until something is ready or the time is up. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "preload/files.h"
#include "preload/libc.h"
#include "preload/interrupt.h"
#include "preload/wait.h"
#include "preload/stack.h"
#include "userstack.h"

extern void __chk_fail(void) __attribute__((noreturn));

#define PL_POLL_BITS (POLLIN | POLLPRI | POLLOUT | POLLRDHUP)

_Static_assert(POLLIN == US_EPOLLIN && POLLPRI == US_EPOLLPRI && POLLOUT == US_EPOLLOUT &&
		       POLLERR == US_EPOLLERR && POLLHUP == US_EPOLLHUP &&
		       POLLRDHUP == US_EPOLLRDHUP,
	       "poll's bits are epoll's");

static __thread int pl_poll_ep = -1;

bool pl_poll_any_ours(const struct pollfd *fds, nfds_t n)
{
	struct pl_file *f;

	for (nfds_t i = 0; i < n; i++)
		if (pl_sock_of(fds[i].fd, &f) == PL_OURS)
			return true;
	return false;
}

/* Registers the userstack entries in the thread's set, masks them in the
 * kernel's copy k, and marks in k the stale ones POLLNVAL. */
static int pl_poll_split(const struct pollfd *fds, nfds_t n, struct pollfd *k)
{
	int rc;

	if (pl_poll_ep < 0) {
		PL_US(us_epoll_create1(0));
		if (rc < 0)
			return -1;
		pl_poll_ep = rc;
	}
	for (nfds_t i = 0; i < n; i++) {
		struct pl_file *f;
		struct us_epoll_event ev = { .events = (uint32_t)(fds[i].events & PL_POLL_BITS),
					     .data.u64 = i };

		k[i] = fds[i];
		k[i].revents = 0;
		if (pl_sock_of(fds[i].fd, &f) != PL_OURS)
			continue;
		k[i].fd = -1;
		/* a second entry for the same socket fails EEXIST and is
		 * reported through the first's */
		PL_US(us_epoll_ctl(pl_poll_ep, US_EPOLL_CTL_ADD, f->usfd, &ev));
	}
	return 0;
}

static void pl_poll_unsplit(const struct pollfd *fds, nfds_t n)
{
	int rc;

	for (nfds_t i = 0; i < n; i++) {
		struct pl_file *f;

		if (pl_sock_of(fds[i].fd, &f) == PL_OURS)
			PL_US(us_epoll_ctl(pl_poll_ep, US_EPOLL_CTL_DEL, f->usfd, NULL));
	}
	(void)rc;
}

/* One look at both halves (ev: room for n events): the entries with
 * events. */
static int pl_poll_once(struct pollfd *fds, nfds_t n, struct pollfd *k,
			struct us_epoll_event *ev)
{
	int ready = 0, rc;

	for (nfds_t i = 0; i < n; i++)
		k[i].revents = 0;
	if (pl_libc()->poll(k, n, 0) < 0)
		return -1;
	for (nfds_t i = 0; i < n; i++)
		fds[i].revents = k[i].revents;
	PL_US(us_epoll_wait(pl_poll_ep, ev, (int)n, 0));
	for (int j = 0; j < rc; j++)
		fds[ev[j].data.u64].revents = (short)ev[j].events;
	for (nfds_t i = 0; i < n; i++)
		ready += fds[i].revents != 0;
	return ready;
}

int pl_poll_mixed(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	struct pollfd *k = malloc(sizeof(*k) * (n ? n : 1));
	struct us_epoll_event *ev = malloc(sizeof(*ev) * (n ? n : 1));
	uint64_t deadline = pl_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	struct pl_sigmark mark = pl_sig_mark();
	int ready;

	if (k == NULL || ev == NULL || pl_poll_split(fds, n, k) < 0) {
		free(k);
		free(ev);
		return k == NULL || ev == NULL ? pl_fail(ENOMEM) : -1;
	}
	do {
		ready = pl_poll_once(fds, n, k, ev);
		if (ready == 0 && pl_sig_since(&mark, false))
			ready = pl_fail(EINTR);
	} while (ready == 0 && timeout_ms != 0 && (timeout_ms < 0 || pl_now_ms() < deadline));
	pl_poll_unsplit(fds, n);
	free(k);
	free(ev);
	return ready;
}

int poll(struct pollfd *fds, nfds_t n, int timeout_ms)
{
	if (pl_inside() || !pl_poll_any_ours(fds, n))
		return pl_libc()->poll(fds, n, timeout_ms);
	return pl_poll_mixed(fds, n, timeout_ms);
}

int __poll_chk(struct pollfd *fds, nfds_t n, int timeout_ms, size_t fdslen)
{
	if (fdslen / sizeof(*fds) < n)
		__chk_fail();
	return poll(fds, n, timeout_ms);
}

int pl_timespec_ms(const struct timespec *ts)
{
	if (ts == NULL)
		return -1;
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000)
		return pl_fail(EINVAL) - 1;
	if (ts->tv_sec >= INT_MAX / 1000 - 1)
		return INT_MAX;
	return (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
}

int pl_poll_masked(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask)
{
	sigset_t old;
	int ready, err;

	if (mask != NULL)
		pthread_sigmask(SIG_SETMASK, mask, &old);
	ready = pl_poll_mixed(fds, n, timeout_ms);
	err = errno;
	if (mask != NULL)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return ready;
}

int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts, const sigset_t *mask)
{
	int ms;

	if (pl_inside() || !pl_poll_any_ours(fds, n))
		return pl_libc()->ppoll(fds, n, ts, mask);
	ms = pl_timespec_ms(ts);
	if (ms < -1)
		return -1;
	return pl_poll_masked(fds, n, ms, mask);
}
