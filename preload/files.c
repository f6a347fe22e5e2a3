/* preload/files.c: placeholders and the ownership test of each call. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

#include "preload/files.h"
#include "preload/libc.h"
#include "preload/stack.h"
#include "userstack.h"

int pl_fail(int err)
{
	errno = err;
	return -1;
}

enum pl_owner pl_owner_of(int fd, struct pl_file **f)
{
	*f = pl_fd_get(fd);
	if (*f == NULL)
		return PL_KERNEL;
	return pl_state() == PL_RUNNING ? PL_OURS : PL_STALE;
}

enum pl_owner pl_sock_of(int fd, struct pl_file **f)
{
	enum pl_owner o = pl_owner_of(fd, f);

	return o != PL_KERNEL && (*f)->kind == PL_EPOLL ? PL_KERNEL : o;
}

struct pl_file *pl_sock(int fd, bool *kernel)
{
	struct pl_file *f;
	enum pl_owner o = pl_sock_of(fd, &f);

	*kernel = o == PL_KERNEL;
	if (o == PL_STALE) {
		errno = EBADF;
		return NULL;
	}
	return o == PL_OURS ? f : NULL;
}

/* The userstack side of a file whose last number went. */
static void pl_file_drop(struct pl_file *f)
{
	if (f->usfd >= 0 && pl_state() == PL_RUNNING) {
		pl_enter();
		us_close(f->usfd);
		pl_leave();
	}
	free(f);
}

int pl_publish(int usfd, enum pl_kind kind, bool nonblock, bool cloexec)
{
	struct pl_file *f = pl_file_new(kind, usfd);
	int fd, rc;

	if (f == NULL) {
		pl_enter();
		us_close(usfd);
		pl_leave();
		return -ENOMEM;
	}
	fd = pl_libc()->open("/dev/null", O_RDWR | (cloexec ? O_CLOEXEC : 0));
	if (fd < 0) {
		rc = -errno;
		pl_file_drop(f);
		return rc;
	}
	rc = pl_fd_attach(fd, f);
	if (rc < 0) {
		pl_libc()->close(fd);
		pl_file_drop(f);
		return rc == -EBADF ? -EMFILE : rc;
	}
	f->nonblock = nonblock;
	return fd;
}

void pl_forget(int fd)
{
	struct pl_file *f = pl_fd_detach(fd);

	if (f != NULL && f->refs == 0)
		pl_file_drop(f);
}
