/* preload/select.c: select and pselect over userstack sockets and kernel
 * descriptors together.  The three sets become one poll list (a number in
 * any set is one entry), waited on as poll waits, and the results go back
 * into the sets by the kernel's rules for which poll events make a number
 * ready in which set (Linux fs/select.c: readable on IN, HUP or ERR,
 * writable on OUT or ERR, exceptional on PRI, an urgent byte). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/select.h>

#include "preload/files.h"
#include "preload/libc.h"
#include "preload/wait.h"
#include "preload/stack.h"

#define PL_SEL_READ (POLLIN | POLLHUP | POLLERR)
#define PL_SEL_WRITE (POLLOUT | POLLERR)
#define PL_SEL_EXCEPT POLLPRI

/* The three sets of one call. */
struct pl_sets {
	fd_set *rd, *wr, *ex;
};

static bool pl_sel_has(const fd_set *s, int fd)
{
	return s != NULL && FD_ISSET(fd, s);
}

/* What poll is asked for number fd: none when it is in no set. */
static short pl_sel_events(const struct pl_sets *s, int fd)
{
	return (short)((pl_sel_has(s->rd, fd) ? POLLIN : 0) | (pl_sel_has(s->wr, fd) ? POLLOUT : 0) |
		       (pl_sel_has(s->ex, fd) ? POLLPRI : 0));
}

static bool pl_sel_any_ours(const struct pl_sets *s, int nfds)
{
	struct pl_file *f;

	for (int fd = 0; fd < nfds; fd++)
		if (pl_sel_events(s, fd) != 0 && pl_sock_of(fd, &f) == PL_OURS)
			return true;
	return false;
}

/* The poll list for the sets (room for nfds entries), its length in *n. */
static struct pollfd *pl_sel_list(const struct pl_sets *s, int nfds, nfds_t *n)
{
	struct pollfd *p = malloc(sizeof(*p) * (size_t)(nfds ? nfds : 1));

	*n = 0;
	for (int fd = 0; p != NULL && fd < nfds; fd++) {
		short ev = pl_sel_events(s, fd);

		if (ev != 0)
			p[(*n)++] = (struct pollfd){ .fd = fd, .events = ev };
	}
	return p;
}

/* How many set bits the poll results make (select's return value). */
static int pl_sel_count(const struct pollfd *p, nfds_t n)
{
	int c = 0;

	for (nfds_t i = 0; i < n; i++) {
		c += (p[i].events & POLLIN) && (p[i].revents & PL_SEL_READ);
		c += (p[i].events & POLLOUT) && (p[i].revents & PL_SEL_WRITE);
		c += (p[i].events & POLLPRI) && (p[i].revents & PL_SEL_EXCEPT);
	}
	return c;
}

static void pl_sel_put(fd_set *s, int fd, bool ready)
{
	if (s == NULL)
		return;
	if (ready)
		FD_SET(fd, s);
	else
		FD_CLR(fd, s);
}

/* Leaves in the sets only the numbers the poll results made ready. */
static void pl_sel_write_back(const struct pl_sets *s, const struct pollfd *p, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++) {
		if (p[i].events & POLLIN)
			pl_sel_put(s->rd, p[i].fd, p[i].revents & PL_SEL_READ);
		if (p[i].events & POLLOUT)
			pl_sel_put(s->wr, p[i].fd, p[i].revents & PL_SEL_WRITE);
		if (p[i].events & POLLPRI)
			pl_sel_put(s->ex, p[i].fd, p[i].revents & PL_SEL_EXCEPT);
	}
}

static bool pl_sel_closed(const struct pollfd *p, nfds_t n)
{
	for (nfds_t i = 0; i < n; i++)
		if (p[i].revents & POLLNVAL)
			return true;
	return false;
}

/* The wait: until a number is ready in a set it was asked in, the time
 * is up (timeout_ms -1: never) or a handler ran.  Poll can report an
 * entry no set asked for (a hang-up on a number only in the write set),
 * so such a result waits on for the time left. */
static int pl_sel_wait(const struct pl_sets *s, int nfds, int timeout_ms, const sigset_t *mask,
		       int *left_ms)
{
	uint64_t deadline = pl_now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	int ready = 0, ms = timeout_ms;
	nfds_t n;
	struct pollfd *p = pl_sel_list(s, nfds, &n);

	if (p == NULL)
		return pl_fail(ENOMEM);
	for (;;) {
		int rc = pl_poll_masked(p, n, ms, mask);

		if (rc < 0) {
			ready = -1;
			break;
		}
		if (pl_sel_closed(p, n)) {
			ready = pl_fail(EBADF);
			break;
		}
		ready = pl_sel_count(p, n);
		if (ready > 0 || rc == 0 || timeout_ms == 0)
			break;
		if (timeout_ms > 0) {
			uint64_t now = pl_now_ms();

			if (now >= deadline)
				break;
			ms = (int)(deadline - now);
		}
	}
	if (ready >= 0)
		pl_sel_write_back(s, p, n);
	free(p);
	if (left_ms != NULL && timeout_ms > 0) {
		uint64_t now = pl_now_ms();

		*left_ms = now < deadline ? (int)(deadline - now) : 0;
	}
	return ready;
}

/* Numbers past FD_SETSIZE are outside any fd_set: the kernel stops at its
 * own table's size, we at the set's. */
static int pl_sel_nfds(int nfds)
{
	if (nfds < 0)
		return pl_fail(EINVAL);
	return nfds > FD_SETSIZE ? FD_SETSIZE : nfds;
}

int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, struct timeval *tv)
{
	struct pl_sets s = { rd, wr, ex };
	int n = pl_sel_nfds(nfds), ms = -1, left = 0, ready;

	if (pl_inside() || n < 0 || !pl_sel_any_ours(&s, n))
		return pl_libc()->select(nfds, rd, wr, ex, tv);
	if (tv != NULL) {
		if (tv->tv_sec < 0 || tv->tv_usec < 0)
			return pl_fail(EINVAL);
		ms = tv->tv_sec >= INT_MAX / 1000 - 1
			     ? INT_MAX
			     : (int)(tv->tv_sec * 1000 + (tv->tv_usec + 999) / 1000);
	}
	ready = pl_sel_wait(&s, n, ms, NULL, &left);
	/* Linux writes the time left back into the timeval */
	if (tv != NULL && ready >= 0)
		*tv = (struct timeval){ .tv_sec = left / 1000, .tv_usec = (left % 1000) * 1000 };
	return ready;
}

int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex, const struct timespec *ts,
	    const sigset_t *mask)
{
	struct pl_sets s = { rd, wr, ex };
	int n = pl_sel_nfds(nfds), ms;

	if (pl_inside() || n < 0 || !pl_sel_any_ours(&s, n))
		return pl_libc()->pselect(nfds, rd, wr, ex, ts, mask);
	ms = pl_timespec_ms(ts);
	if (ms < -1)
		return -1;
	return pl_sel_wait(&s, n, ms, mask, NULL);
}
