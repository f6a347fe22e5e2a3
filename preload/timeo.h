/* preload/timeo.h: SO_RCVTIMEO and SO_SNDTIMEO of userstack sockets.
 *
 * libuserstack never blocks, so it has no such options: the blocking calls
 * are the preload library's waits, and these options bound them as Linux's
 * sk_rcvtimeo and sk_sndtimeo bound the kernel's.  The receive timeout
 * bounds recv/read and accept (EAGAIN when it passes), the send timeout
 * send/write (what was queued, else EAGAIN) and connect (EINPROGRESS, the
 * handshake going on).
 */
#ifndef PL_TIMEO_H
#define PL_TIMEO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "preload/fdtable.h"

/* Types */

/* One blocking call's deadline, fixed at its first wait (a call that never
 * waits never reads the clock). */
struct pl_deadline {
	uint64_t at_ms;
	bool started;
};

/* Prototypes */

/* Whether level/name is SO_RCVTIMEO or SO_SNDTIMEO (old or new name). */
bool pl_timeo_opt(int level, int name);
/* setsockopt and getsockopt of those on f, with Linux's rules (EINVAL for
 * a short value, EDOM for tv_usec outside [0, 1000000)). */
int pl_timeo_set(struct pl_file *f, int name, const void *val, socklen_t len);
int pl_timeo_get(const struct pl_file *f, int name, void *val, socklen_t *len);
/* An accepted connection's timeouts are its listener's. */
void pl_timeo_inherit(struct pl_file *child, const struct pl_file *listener);
/* pl_wait for f's events within f's timeout for the direction (send: the
 * send timeout) from d's start: 1 ready, 0 the time is up, -1/EINTR. */
int pl_wait_timed(const struct pl_file *f, uint32_t events, bool send, struct pl_deadline *d);

#endif
