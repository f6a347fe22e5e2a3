/* preload/fd.c: calls on descriptor numbers: close, close_range,
 * closefrom, dup, dup2, dup3, fcntl, ioctl.  The kernel acts on the placeholder (so numbers, close-on-
 * exec and F_DUPFD's lowest-free rule are the kernel's own); the table
 * follows what the kernel did. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "preload/files.h"
#include "preload/libc.h"
#include "userstack.h"

/* Forgetting first: once the kernel frees the number another thread may
 * get it for a file of its own. */
int close(int fd)
{
	pl_forget(fd);
	return pl_libc()->close(fd);
}

/* close_range and closefrom close without calling close: the userstack
 * numbers among them are forgotten first, as close does. */
static void pl_forget_range(unsigned int first, unsigned int last)
{
	if (pl_fd_count() == 0)
		return;
	for (unsigned int fd = first; fd <= last && fd < PL_FD_MAX; fd++)
		pl_forget((int)fd);
}

int close_range(unsigned int first, unsigned int last, int flags)
{
	/* only a call that will close: bad flags or range fail as they are */
	if (first <= last && !(flags & ~(int)(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) &&
	    !(flags & CLOSE_RANGE_CLOEXEC))
		pl_forget_range(first, last);
	return pl_libc()->close_range(first, last, flags);
}

void closefrom(int lowfd)
{
	pl_forget_range(lowfd < 0 ? 0u : (unsigned int)lowfd, UINT_MAX);
	pl_libc()->closefrom(lowfd);
}

/* nfd, a kernel copy of fd's placeholder, names fd's file too. */
static int pl_dup_attach(int fd, int nfd)
{
	struct pl_file *f;

	if (nfd < 0 || pl_owner_of(fd, &f) == PL_KERNEL)
		return nfd;
	if (pl_fd_attach(nfd, f) < 0) {
		pl_libc()->close(nfd);
		return pl_fail(EMFILE);
	}
	return nfd;
}

int dup(int fd)
{
	return pl_dup_attach(fd, pl_libc()->dup(fd));
}

/* dup2 closes nfd first (silently), whoever it was. */
int dup2(int fd, int nfd)
{
	if (fd == nfd)
		return pl_libc()->dup2(fd, nfd);
	if (pl_libc()->fcntl(fd, F_GETFD) < 0)
		return -1; /* EBADF, and nfd stays open */
	pl_forget(nfd);
	return pl_dup_attach(fd, pl_libc()->dup2(fd, nfd));
}

int dup3(int fd, int nfd, int flags)
{
	if (fd == nfd)
		return pl_libc()->dup3(fd, nfd, flags); /* EINVAL */
	if (pl_libc()->fcntl(fd, F_GETFD) < 0)
		return -1;
	pl_forget(nfd);
	return pl_dup_attach(fd, pl_libc()->dup3(fd, nfd, flags));
}

/* O_NONBLOCK is the userstack file's; the other status flags and the
 * descriptor flags (FD_CLOEXEC) are the placeholder's. */
static int pl_fcntl_ours(int fd, struct pl_file *f, int cmd, uintptr_t arg)
{
	int fl;

	switch (cmd) {
	case F_GETFL:
		fl = pl_libc()->fcntl(fd, F_GETFL);
		if (fl < 0)
			return fl;
		return (fl & ~O_NONBLOCK) | (f->nonblock ? O_NONBLOCK : 0);
	case F_SETFL:
		f->nonblock = ((int)arg & O_NONBLOCK) != 0;
		return 0;
	case F_DUPFD:
	case F_DUPFD_CLOEXEC:
		return pl_dup_attach(fd, pl_libc()->fcntl(fd, cmd, (int)arg));
	default:
		return pl_libc()->fcntl(fd, cmd, arg);
	}
}

/* Every fcntl argument is an int or a pointer: one word carries both. */
static int pl_fcntl(int fd, int cmd, uintptr_t arg)
{
	struct pl_file *f;

	switch (pl_owner_of(fd, &f)) {
	case PL_KERNEL:
		return pl_libc()->fcntl(fd, cmd, arg);
	case PL_STALE:
		return cmd == F_GETFD || cmd == F_SETFD ? pl_libc()->fcntl(fd, cmd, arg)
							 : pl_fail(EBADF);
	default:
		if (f->kind == PL_EPOLL)
			return pl_libc()->fcntl(fd, cmd, arg); /* a kernel epoll */
		return pl_fcntl_ours(fd, f, cmd, arg);
	}
}

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	uintptr_t arg;

	va_start(ap, cmd);
	arg = va_arg(ap, uintptr_t);
	va_end(ap);
	return pl_fcntl(fd, cmd, arg);
}

/* glibc 2.28+ headers name fcntl fcntl64 under _FILE_OFFSET_BITS=64 (the
 * same call on 64-bit targets): both names, one body. */
int fcntl64(int fd, int cmd, ...) __attribute__((alias("fcntl")));

static int pl_ioctl_sock(struct pl_file *f, unsigned long req, int *arg)
{
	int rc;

	if (req == FIONBIO) {
		if (arg == NULL)
			return pl_fail(EFAULT);
		f->nonblock = *arg != 0;
		return 0;
	}
	PL_US(us_ioctl(f->usfd, req, arg));
	return rc;
}

int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	void *arg;
	bool kernel;
	struct pl_file *f;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	f = pl_sock(fd, &kernel);
	if (f == NULL)
		return kernel ? pl_libc()->ioctl(fd, req, arg) : -1;
	return pl_ioctl_sock(f, req, arg);
}
