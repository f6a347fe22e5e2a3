/* preload/stack.c: lazy start, the owning thread, fork, and the engine
 * turns that blocking calls and epoll_wait make. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "preload/libc.h"
#include "preload/interrupt.h"
#include "preload/stack.h"
#include "userstack.h"

/* How long one slice of a blocking wait runs the engine before looking
 * for signal handlers that ran (us_epoll_wait polls throughout). */
#define PL_WAIT_SLICE_MS 50

static enum pl_state pl_st = PL_IDLE;
static struct us_stack *pl_stack;
static pthread_t pl_owner;
static pthread_mutex_t pl_start_lock = PTHREAD_MUTEX_INITIALIZER;
static int pl_start_err;
static int pl_wait_ep = -1;  /* one member at a time: blocking waits */
static __thread int pl_depth;

enum pl_state pl_state(void)
{
	return __atomic_load_n(&pl_st, __ATOMIC_ACQUIRE);
}

void pl_enter(void)
{
	pl_depth++;
}

void pl_leave(void)
{
	pl_depth--;
}

uint64_t pl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

bool pl_inside(void)
{
	return pl_depth > 0;
}

bool pl_routes(void)
{
	enum pl_state st = pl_state();

	if (pl_inside() || st == PL_INERT)
		return false;
	return st != PL_RUNNING || pthread_equal(pl_owner, pthread_self());
}

/* The child of a fork after the start shares the parent's hugepages and
 * port: touching them would corrupt the parent's engine. */
static void pl_on_fork_child(void)
{
	if (pl_state() == PL_RUNNING)
		__atomic_store_n(&pl_st, PL_INERT, __ATOMIC_RELEASE);
}

/* Closes the connections and gives EAL's files back when the process
 * exits normally; not in an inert child, nor from another thread than the
 * owner's (it may be in the engine). */
static void pl_on_exit(void)
{
	if (pl_state() != PL_RUNNING || !pthread_equal(pl_owner, pthread_self()))
		return;
	__atomic_store_n(&pl_st, PL_INERT, __ATOMIC_RELEASE);
	pl_enter();
	us_fini(pl_stack);
	pl_leave();
}

/* A PMD may learn of arriving frames by I/O signals (net_tap sets O_ASYNC
 * and F_SETSIG on its queues, and its RX burst reads only after one came).
 * Delivered to the application's thread, each signal cuts its sleeps and
 * blocking system calls short (EINTR: Redis's DEBUG SLEEP returned at the
 * first frame).  Blocked on the stack's thread, the kernel hands them to
 * another thread of the process (EAL's, which started before this and
 * keeps them open); threads the application starts later inherit the mask. */
static void pl_block_pmd_signals(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	sigset_t set;
	int n = 0;

	if (d == NULL)
		return;
	sigemptyset(&set);
	while ((e = readdir(d)) != NULL) {
		int fd = atoi(e->d_name), sig;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (!(pl_libc()->fcntl(fd, F_GETFL) & O_ASYNC))
			continue;
		sig = pl_libc()->fcntl(fd, F_GETSIG);
		sigaddset(&set, sig > 0 ? sig : SIGIO);
		n++;
	}
	closedir(d);
	if (n > 0)
		pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static int pl_boot(void)
{
	const char *cfg = getenv("USERSTACK_CONFIG");
	extern char *program_invocation_name;

	if (cfg == NULL || cfg[0] == '\0') {
		fprintf(stderr, "userstack-preload: USERSTACK_CONFIG is not set (the stack's INI "
				"file): TCP/UDP sockets fail with EAFNOSUPPORT\n");
		return -EAFNOSUPPORT;
	}
	pl_stack = us_init(cfg, program_invocation_name);
	if (pl_stack == NULL) {
		fprintf(stderr, "userstack-preload: the stack did not start from %s (%s, see "
				"above): TCP/UDP sockets fail with EAFNOSUPPORT\n",
			cfg, strerror(errno));
		return -EAFNOSUPPORT;
	}
	pl_wait_ep = us_epoll_create1(0);
	if (pl_wait_ep < 0) {
		fprintf(stderr, "userstack-preload: no descriptor for the engine's own epoll "
				"set (%s): TCP/UDP sockets fail with EAFNOSUPPORT\n",
			strerror(errno));
		return -EAFNOSUPPORT;
	}
	pl_block_pmd_signals();
	pthread_atfork(NULL, NULL, pl_on_fork_child);
	atexit(pl_on_exit);
	return 0;
}

int pl_start(void)
{
	int rc;

	pthread_mutex_lock(&pl_start_lock);
	if (pl_st == PL_IDLE) {
		pl_enter();
		rc = pl_boot();
		pl_leave();
		pl_start_err = rc;
		pl_owner = pthread_self();
		__atomic_store_n(&pl_st, rc == 0 ? PL_RUNNING : PL_FAILED, __ATOMIC_RELEASE);
	}
	rc = pl_st == PL_RUNNING ? 0 : pl_st == PL_FAILED ? pl_start_err : -EBADF;
	pthread_mutex_unlock(&pl_start_lock);
	return rc;
}

int pl_wait(int usfd, uint32_t events, int timeout_ms)
{
	struct us_epoll_event ev = { .events = events, .data.fd = usfd };
	struct pl_sigmark mark = pl_sig_mark();
	int n = 0, left = timeout_ms;
	/* signal(7): a socket call under SO_RCVTIMEO/SO_SNDTIMEO is never
	 * restarted after a handler, SA_RESTART or not */
	bool restartable = timeout_ms < 0;

	if (pl_state() != PL_RUNNING)
		return 0;
	pl_enter();
	if (us_epoll_ctl(pl_wait_ep, US_EPOLL_CTL_ADD, usfd, &ev) < 0) {
		pl_leave();
		return 1; /* let the caller's call report what is wrong */
	}
	while (n == 0 && left != 0 && !pl_sig_since(&mark, restartable)) {
		int slice = left < 0 || left > PL_WAIT_SLICE_MS ? PL_WAIT_SLICE_MS : left;

		n = us_epoll_wait(pl_wait_ep, &ev, 1, slice);
		if (left > 0)
			left -= slice;
	}
	us_epoll_ctl(pl_wait_ep, US_EPOLL_CTL_DEL, usfd, NULL);
	pl_leave();
	if (n == 0 && pl_sig_since(&mark, restartable)) {
		errno = EINTR;
		return -1;
	}
	return n > 0;
}
