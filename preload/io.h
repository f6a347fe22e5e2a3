/* preload/io.h: the data path of a userstack socket as the blocking or
 * non-blocking POSIX calls have it (shared by the read/write family and
 * sendfile). */
#ifndef PL_IO_H
#define PL_IO_H

#include <sys/socket.h>
#include <sys/types.h>

#include "preload/fdtable.h"

/* Types */

/* The bounce buffer of vectored calls and sendfile: a short read or write
 * of this much is what one call moves at most. */
#define PL_BOUNCE_BYTES 65536u

/* Prototypes */

/* recvfrom on f: waits (running the engine) when f blocks and flags have
 * no MSG_DONTWAIT. */
ssize_t pl_recv_from(struct pl_file *f, void *buf, size_t len, int flags, struct sockaddr *addr,
		     socklen_t *alen);
/* sendto on f: a blocking socket queues all of buf before returning; EPIPE
 * raises SIGPIPE unless MSG_NOSIGNAL. */
ssize_t pl_send_to(struct pl_file *f, const void *buf, size_t len, int flags,
		   const struct sockaddr *addr, socklen_t alen);
/* This thread's bounce buffer (PL_BOUNCE_BYTES), NULL when out of memory. */
char *pl_bounce(void);

#endif
