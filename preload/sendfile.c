/* preload/sendfile.c: sendfile from a file to a userstack socket: pread
 * (or read at the file's offset) into the bounce buffer, then send.  The
 * file offset moves by what was sent, as sendfile(2) says: bytes read but
 * not taken by the socket are given back with lseek. */
#include <errno.h>
#include <stdbool.h>
#include <unistd.h>

#include "preload/files.h"
#include "preload/io.h"
#include "preload/libc.h"

static ssize_t pl_file_read(int in, char *b, size_t len, const off_t *off, size_t done)
{
	if (off != NULL)
		return pl_libc()->pread(in, b, len, *off + (off_t)done);
	return pl_libc()->read(in, b, len);
}

static ssize_t pl_sendfile(struct pl_file *f, int in, off_t *off, size_t count)
{
	char *b = pl_bounce();
	size_t done = 0;

	if (b == NULL)
		return pl_fail(ENOMEM);
	while (done < count) {
		size_t want = count - done < PL_BOUNCE_BYTES ? count - done : PL_BOUNCE_BYTES;
		ssize_t r = pl_file_read(in, b, want, off, done), w;

		if (r <= 0) {
			if (r < 0 && done == 0)
				return -1;
			break;
		}
		w = pl_send_to(f, b, (size_t)r, 0, NULL, 0);
		if (off == NULL && w < r)
			lseek(in, -(off_t)(r - (w < 0 ? 0 : w)), SEEK_CUR);
		if (w < 0) {
			if (done == 0)
				return -1;
			break;
		}
		done += (size_t)w;
		if (w < r)
			break;
	}
	if (off != NULL)
		*off += (off_t)done;
	return (ssize_t)done;
}

ssize_t sendfile(int out, int in, off_t *off, size_t count)
{
	bool kernel;
	struct pl_file *f = pl_sock(out, &kernel), *g;

	if (f == NULL)
		return kernel ? pl_libc()->sendfile(out, in, off, count) : -1;
	if (pl_owner_of(in, &g) != PL_KERNEL)
		return pl_fail(EINVAL); /* from a socket: not a file */
	return pl_sendfile(f, in, off, count);
}

ssize_t sendfile64(int out, int in, off_t *off, size_t count)
{
	return sendfile(out, in, off, count);
}
