/* preload/io.c: receive and send on a userstack socket, blocking as the
 * file's O_NONBLOCK says: a blocking call is a polling wait that runs the
 * engine on this thread. */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "preload/files.h"
#include "preload/io.h"
#include "preload/stack.h"
#include "preload/timeo.h"
#include "userstack.h"

/* The flags libuserstack understands; the rest (MSG_CMSG_CLOEXEC,
 * MSG_EOR, ...) mean nothing to it. */
#define PL_MSG_KNOWN                                                                          \
	(MSG_PEEK | MSG_TRUNC | MSG_WAITALL | MSG_DONTWAIT | MSG_NOSIGNAL | MSG_MORE |          \
	 MSG_FASTOPEN)

static __thread char *pl_bounce_buf;

char *pl_bounce(void)
{
	if (pl_bounce_buf == NULL)
		pl_bounce_buf = malloc(PL_BOUNCE_BYTES);
	return pl_bounce_buf;
}

static bool pl_blocks(const struct pl_file *f, int flags)
{
	return !f->nonblock && !(flags & MSG_DONTWAIT);
}

static bool pl_is_stream(const struct pl_file *f)
{
	int type = 0, rc;
	socklen_t tlen = sizeof(type);

	PL_US(us_getsockopt(f->usfd, US_SOL_SOCKET, US_SO_TYPE, &type, &tlen));
	return rc == 0 && type == SOCK_STREAM;
}

/* MSG_WAITALL on a blocking stream socket: Linux's recv waits for the
 * whole length, returning less only at the end of the stream, on an
 * error, a signal or SO_RCVTIMEO. */
static ssize_t pl_recv_all(struct pl_file *f, char *buf, size_t len, int flags)
{
	struct pl_deadline d = { 0 };
	size_t done = 0;
	ssize_t rc;

	while (done < len) {
		PL_US(us_recv(f->usfd, buf + done, len - done, flags & PL_MSG_KNOWN));
		if (rc == 0)
			break; /* the end of the stream */
		if (rc > 0) {
			done += (size_t)rc;
			continue;
		}
		if (errno != EAGAIN)
			return done > 0 ? (ssize_t)done : -1;
		rc = pl_wait_timed(f, US_EPOLLIN, false, &d);
		if (rc <= 0 && done == 0)
			return rc < 0 ? -1 : pl_fail(EAGAIN);
		if (rc <= 0)
			break; /* a signal or SO_RCVTIMEO: what came so far */
	}
	return (ssize_t)done;
}

ssize_t pl_recv_from(struct pl_file *f, void *buf, size_t len, int flags, struct sockaddr *addr,
		     socklen_t *alen)
{
	struct pl_deadline d = { 0 };
	ssize_t rc;

	/* a peek with MSG_WAITALL returns what is there: it could not tell
	 * the end of the stream from data still to come */
	if ((flags & (MSG_WAITALL | MSG_PEEK)) == MSG_WAITALL && len > 0 && pl_blocks(f, flags) &&
	    pl_is_stream(f))
		return pl_recv_all(f, buf, len, flags);

	for (;;) {
		PL_US(us_recvfrom(f->usfd, buf, len, flags & PL_MSG_KNOWN, addr, alen));
		if (rc >= 0 || errno != EAGAIN || !pl_blocks(f, flags))
			return rc;
		rc = pl_wait_timed(f, US_EPOLLIN, false, &d);
		if (rc <= 0)
			return rc < 0 ? -1 : pl_fail(EAGAIN); /* EINTR, SO_RCVTIMEO */
	}
}

/* Linux's sk_stream_error: a write to a connection that is gone raises
 * SIGPIPE, which kills a program that did not ask otherwise. */
static ssize_t pl_send_failed(int flags)
{
	int err = errno;

	if (err == EPIPE && !(flags & MSG_NOSIGNAL))
		raise(SIGPIPE);
	errno = err;
	return -1;
}

ssize_t pl_send_to(struct pl_file *f, const void *buf, size_t len, int flags,
		   const struct sockaddr *addr, socklen_t alen)
{
	const char *p = buf;
	struct pl_deadline d = { 0 };
	size_t done = 0;
	ssize_t rc;

	for (;;) {
		PL_US(us_sendto(f->usfd, p + done, len - done, flags & PL_MSG_KNOWN, addr, alen));
		if (rc >= 0) {
			done += (size_t)rc;
			if (done == len || !pl_blocks(f, flags))
				return (ssize_t)done;
			continue;
		}
		if (errno == EAGAIN && pl_blocks(f, flags)) {
			rc = pl_wait_timed(f, US_EPOLLOUT, true, &d);
			if (rc > 0)
				continue;
			if (done > 0)
				return (ssize_t)done; /* a signal or SO_SNDTIMEO: what went */
			return rc < 0 ? -1 : pl_fail(EAGAIN);
		}
		if (done > 0)
			return (ssize_t)done;
		return pl_send_failed(flags);
	}
}
