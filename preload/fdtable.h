/* preload/fdtable.h: one descriptor space for kernel and userstack files.
 *
 * Every userstack socket (and every epoll set that watches one) is a
 * struct pl_file.  The application sees a kernel descriptor number for it:
 * a placeholder kernel descriptor (/dev/null) reserved for each socket, so
 * the kernel never hands that number out for something else, and dup, dup2,
 * fcntl(F_DUPFD) and close-on-exec act on real kernel numbers.  This table
 * maps such a number to its file; a number not in it is the kernel's.
 *
 * Several numbers may name one file (dup): the file counts them, and the
 * userstack socket is closed when the last number goes, as the kernel
 * closes an open file description.  The O_NONBLOCK flag belongs to the
 * file, as on Linux.  Pure bookkeeping: no stack, no kernel calls.
 */
#ifndef PL_FDTABLE_H
#define PL_FDTABLE_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

/* Numbers above this are never ours (the placeholder is given back). */
#define PL_FD_MAX 65536

enum pl_kind {
	PL_SOCK,  /* a userstack socket: usfd */
	PL_EPOLL, /* an application epoll set: the kernel epoll is the number
		   * itself, usfd the userstack epoll of its userstack members */
};

/* A timeout of SO_RCVTIMEO/SO_SNDTIMEO set negative: Linux then does not
 * wait at all. */
#define PL_TIMEO_NOWAIT UINT64_MAX

struct pl_file {
	enum pl_kind kind;
	int usfd;      /* userstack descriptor; -1 none (an epoll not yet mixed) */
	int refs;      /* numbers naming this file */
	bool nonblock; /* O_NONBLOCK */
	/* SO_RCVTIMEO, SO_SNDTIMEO in µs: 0 none (a blocking call waits for
	 * ever), or PL_TIMEO_NOWAIT */
	uint64_t rcvtimeo_us, sndtimeo_us;
};

/* Prototypes */

/* A new file of kind for usfd, no numbers yet; NULL when out of memory. */
struct pl_file *pl_file_new(enum pl_kind kind, int usfd);
/* The file number fd names, or NULL (the kernel's or out of range). */
struct pl_file *pl_fd_get(int fd);
/* fd names f from now on (f->refs + 1); -EBADF when fd is out of range,
 * -EEXIST when fd already names a file. */
int pl_fd_attach(int fd, struct pl_file *f);
/* fd names nothing any more (f->refs - 1); the file it named or NULL.  The
 * caller closes the userstack side and frees f when f->refs reaches 0. */
struct pl_file *pl_fd_detach(int fd);
/* Numbers in use (tests: nothing left behind). */
unsigned pl_fd_count(void);

#endif
