/* preload/fdtable.c: the map from kernel descriptor numbers to userstack
 * files.  A flat array indexed by number: the lookup is on the path of
 * every read and write the application makes, userstack or not.  Entries
 * are read with atomic loads: other threads (the application's own, EAL's)
 * look numbers up while the stack's thread changes them. */
#include <errno.h>
#include <stdlib.h>

#include "preload/fdtable.h"

static struct pl_file *pl_fds[PL_FD_MAX];
static unsigned pl_used;

struct pl_file *pl_file_new(enum pl_kind kind, int usfd)
{
	struct pl_file *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return NULL;
	f->kind = kind;
	f->usfd = usfd;
	return f;
}

struct pl_file *pl_fd_get(int fd)
{
	if (fd < 0 || fd >= PL_FD_MAX)
		return NULL;
	return __atomic_load_n(&pl_fds[fd], __ATOMIC_ACQUIRE);
}

int pl_fd_attach(int fd, struct pl_file *f)
{
	if (fd < 0 || fd >= PL_FD_MAX)
		return -EBADF;
	if (pl_fds[fd] != NULL)
		return -EEXIST;
	f->refs++;
	pl_used++;
	__atomic_store_n(&pl_fds[fd], f, __ATOMIC_RELEASE);
	return 0;
}

struct pl_file *pl_fd_detach(int fd)
{
	struct pl_file *f = pl_fd_get(fd);

	if (f == NULL)
		return NULL;
	__atomic_store_n(&pl_fds[fd], NULL, __ATOMIC_RELEASE);
	f->refs--;
	pl_used--;
	return f;
}

unsigned pl_fd_count(void)
{
	return pl_used;
}
