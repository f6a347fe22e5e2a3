/* preload/files.h: what every interposed call does first: find out whether
 * a descriptor number is a userstack file, and give userstack descriptors
 * kernel numbers (placeholders) and take them back. */
#ifndef PL_FILES_H
#define PL_FILES_H

#include <stdbool.h>

#include "preload/fdtable.h"
#include "preload/stack.h"

/* Types */

enum pl_owner {
	PL_KERNEL,  /* not ours: the C library handles it */
	PL_OURS,    /* a live userstack file */
	PL_STALE,   /* ours, in a child forked after the start: EBADF but close */
};

/* Calls into libuserstack return -1/errno like ours: bracket them,
 * the result in rc. */
#define PL_US(call)                                                                          \
	do {                                                                                 \
		pl_enter();                                                                  \
		rc = (call);                                                                 \
		pl_leave();                                                                  \
	} while (0)

/* Prototypes */

/* Who handles number fd; *f the file when it is ours (live or stale). */
enum pl_owner pl_owner_of(int fd, struct pl_file **f);
/* The userstack socket behind fd: PL_OURS with *f when fd is one, and
 * PL_KERNEL also for a userstack epoll set's number (its kernel side). */
enum pl_owner pl_sock_of(int fd, struct pl_file **f);
/* The userstack socket behind fd, or NULL: *kernel set when the kernel
 * handles fd, else (a stale file) errno is EBADF. */
struct pl_file *pl_sock(int fd, bool *kernel);
/* A kernel number for userstack descriptor usfd: a placeholder opened
 * close-on-exec when cloexec; the number, or -errno (usfd closed then). */
int pl_publish(int usfd, enum pl_kind kind, bool nonblock, bool cloexec);
/* fd names nothing of ours any more: the userstack side closes with the
 * last number (never in an inert child).  The kernel number stays open:
 * the caller closes or reuses it. */
void pl_forget(int fd);
/* -1 with errno = -err: the shape of every failing call. */
int pl_fail(int err);

#endif
