/* preload/epoll.c: epoll_create, epoll_ctl and the epoll_wait family over
 * mixed sets (preload/epoll.h). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "preload/epoll.h"
#include "preload/files.h"
#include "preload/libc.h"
#include "preload/interrupt.h"
#include "preload/stack.h"
#include "userstack.h"

/* What userstack's epoll knows (EPOLLPRI: TCP urgent data); EPOLLEXCLUSIVE
 * and EPOLLWAKEUP have no meaning for its sockets. */
#define PL_EP_KNOWN                                                                           \
	(EPOLLIN | EPOLLPRI | EPOLLOUT | EPOLLERR | EPOLLHUP | EPOLLRDHUP | EPOLLONESHOT | EPOLLET)
/* Events taken from the userstack side per turn. */
#define PL_EP_BATCH 64

_Static_assert(EPOLLIN == US_EPOLLIN && EPOLLPRI == US_EPOLLPRI && EPOLLOUT == US_EPOLLOUT &&
		       EPOLLERR == US_EPOLLERR && EPOLLHUP == US_EPOLLHUP && EPOLLRDHUP == US_EPOLLRDHUP &&
		       EPOLLONESHOT == US_EPOLLONESHOT && (uint32_t)EPOLLET == US_EPOLLET,
	       "userstack's epoll bits are Linux's");

int epoll_create(int size)
{
	return pl_libc()->epoll_create(size);
}

int epoll_create1(int flags)
{
	return pl_libc()->epoll_create1(flags);
}

/* The userstack half of epoll set epfd, made on first need. */
static struct pl_file *pl_epoll_half(int epfd)
{
	struct pl_file *f = pl_fd_get(epfd);
	int rc;

	if (f != NULL) {
		if (f->kind == PL_EPOLL)
			return f;
		errno = EINVAL; /* a socket's number is no epoll set */
		return NULL;
	}
	if (pl_libc()->fcntl(epfd, F_GETFD) < 0)
		return NULL; /* EBADF */
	PL_US(us_epoll_create1(0));
	if (rc < 0)
		return NULL;
	f = pl_file_new(PL_EPOLL, rc);
	if (f == NULL || pl_fd_attach(epfd, f) < 0) {
		PL_US(us_close(f != NULL ? f->usfd : rc));
		errno = ENOMEM;
		return NULL;
	}
	return f;
}

static int pl_epoll_ctl_sock(int epfd, int op, struct pl_file *s, struct epoll_event *ev)
{
	struct us_epoll_event uev = { 0 };
	struct pl_file *ep = pl_epoll_half(epfd);
	int rc;

	if (ep == NULL)
		return -1;
	if (ev != NULL) {
		uev.events = ev->events & PL_EP_KNOWN;
		uev.data.u64 = ev->data.u64;
	} else if (op != EPOLL_CTL_DEL) {
		return pl_fail(EFAULT);
	}
	PL_US(us_epoll_ctl(ep->usfd, op, s->usfd, op == EPOLL_CTL_DEL ? NULL : &uev));
	return rc;
}

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	bool kernel;
	struct pl_file *s = pl_sock(fd, &kernel);

	if (s == NULL)
		return kernel ? pl_libc()->epoll_ctl(epfd, op, fd, ev) : -1;
	if (fd == epfd)
		return pl_fail(EINVAL);
	return pl_epoll_ctl_sock(epfd, op, s, ev);
}

/* One non-blocking look at the userstack half (one engine turn). */
static int pl_epoll_us(struct pl_file *f, struct epoll_event *events, int max)
{
	struct us_epoll_event uev[PL_EP_BATCH];
	int rc;

	PL_US(us_epoll_wait(f->usfd, uev, max < PL_EP_BATCH ? max : PL_EP_BATCH, 0));
	for (int i = 0; i < rc; i++) {
		events[i].events = uev[i].events;
		events[i].data.u64 = uev[i].data.u64;
	}
	return rc < 0 ? 0 : rc;
}

static int pl_epoll_kernel(int epfd, struct epoll_event *events, int max)
{
	int n = pl_libc()->epoll_wait(epfd, events, max, 0);

	return n < 0 ? 0 : n;
}

int pl_epoll_wait_mixed(int epfd, struct pl_file *f, struct epoll_event *events, int max,
			int timeout_ms)
{
	static __thread bool kernel_first;
	struct pl_sigmark mark = pl_sig_mark();
	uint64_t deadline = timeout_ms > 0 ? pl_now_ms() + (uint64_t)timeout_ms : 0;
	int n;

	if (max <= 0)
		return pl_fail(EINVAL);
	for (;;) {
		kernel_first = !kernel_first;
		if (kernel_first) {
			n = pl_epoll_kernel(epfd, events, max);
			if (n < max)
				n += pl_epoll_us(f, events + n, max - n);
		} else {
			n = pl_epoll_us(f, events, max);
			if (n < max)
				n += pl_epoll_kernel(epfd, events + n, max - n);
		}
		if (n > 0 || timeout_ms == 0)
			return n;
		if (timeout_ms > 0 && pl_now_ms() >= deadline)
			return 0;
		if (pl_sig_since(&mark, false))
			return pl_fail(EINTR);
	}
}

/* The mixed set behind epfd, or NULL: a kernel-only set. */
static struct pl_file *pl_mixed(int epfd)
{
	struct pl_file *f;

	if (pl_owner_of(epfd, &f) != PL_OURS || f->kind != PL_EPOLL || pl_inside())
		return NULL;
	return f;
}

int epoll_wait(int epfd, struct epoll_event *events, int max, int timeout_ms)
{
	struct pl_file *f = pl_mixed(epfd);

	if (f == NULL)
		return pl_libc()->epoll_wait(epfd, events, max, timeout_ms);
	return pl_epoll_wait_mixed(epfd, f, events, max, timeout_ms);
}

/* The signal mask applies for the whole wait, as epoll_pwait(2) says. */
static int pl_epoll_wait_masked(int epfd, struct pl_file *f, struct epoll_event *events,
				int max, int timeout_ms, const sigset_t *mask)
{
	sigset_t old;
	int n, err;

	if (mask != NULL)
		pthread_sigmask(SIG_SETMASK, mask, &old);
	n = pl_epoll_wait_mixed(epfd, f, events, max, timeout_ms);
	err = errno;
	if (mask != NULL)
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = err;
	return n;
}

int epoll_pwait(int epfd, struct epoll_event *events, int max, int timeout_ms,
		const sigset_t *mask)
{
	struct pl_file *f = pl_mixed(epfd);

	if (f == NULL)
		return pl_libc()->epoll_pwait(epfd, events, max, timeout_ms, mask);
	return pl_epoll_wait_masked(epfd, f, events, max, timeout_ms, mask);
}

int epoll_pwait2(int epfd, struct epoll_event *events, int max, const struct timespec *ts,
		 const sigset_t *mask)
{
	struct pl_file *f = pl_mixed(epfd);
	int ms = -1;

	if (f == NULL)
		return pl_libc()->epoll_pwait2(epfd, events, max, ts, mask);
	if (ts != NULL) /* rounded up: never return before the time asked */
		ms = (int)(ts->tv_sec * 1000 + (ts->tv_nsec + 999999) / 1000000);
	return pl_epoll_wait_masked(epfd, f, events, max, ms, mask);
}
