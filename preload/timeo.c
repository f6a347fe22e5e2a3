/* preload/timeo.c: SO_RCVTIMEO and SO_SNDTIMEO (preload/timeo.h). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <sys/time.h>

#include "preload/files.h"
#include "preload/stack.h"
#include "preload/timeo.h"

/* Linux's asm-generic names: SO_RCVTIMEO is the old one on 64-bit glibc;
 * the new ones take the same 64-bit timeval there. */
#define PL_SO_RCVTIMEO_NEW 66
#define PL_SO_SNDTIMEO_NEW 67

static bool pl_is_send(int name)
{
	return name == SO_SNDTIMEO || name == PL_SO_SNDTIMEO_NEW;
}

bool pl_timeo_opt(int level, int name)
{
	return level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO ||
				       name == PL_SO_RCVTIMEO_NEW || name == PL_SO_SNDTIMEO_NEW);
}

int pl_timeo_set(struct pl_file *f, int name, const void *val, socklen_t len)
{
	struct timeval tv;
	uint64_t us;

	if (val == NULL || len < sizeof(tv))
		return pl_fail(EINVAL);
	memcpy(&tv, val, sizeof(tv));
	if (tv.tv_usec < 0 || tv.tv_usec >= 1000000)
		return pl_fail(EDOM);
	if (tv.tv_sec < 0)
		us = PL_TIMEO_NOWAIT;
	else if (tv.tv_sec >= (time_t)(INT_MAX / 1000 - 1))
		us = 0; /* longer than a wait can say: for ever, as Linux */
	else
		us = (uint64_t)tv.tv_sec * 1000000u + (uint64_t)tv.tv_usec;
	if (pl_is_send(name))
		f->sndtimeo_us = us;
	else
		f->rcvtimeo_us = us;
	return 0;
}

int pl_timeo_get(const struct pl_file *f, int name, void *val, socklen_t *len)
{
	uint64_t us = pl_is_send(name) ? f->sndtimeo_us : f->rcvtimeo_us;
	struct timeval tv = { 0 };

	if (val == NULL || len == NULL)
		return pl_fail(EFAULT);
	if (us != PL_TIMEO_NOWAIT) {
		tv.tv_sec = (time_t)(us / 1000000u);
		tv.tv_usec = (suseconds_t)(us % 1000000u);
	}
	/* Linux copies what fits of the value and says how much */
	if (*len > sizeof(tv))
		*len = sizeof(tv);
	memcpy(val, &tv, *len);
	return 0;
}

void pl_timeo_inherit(struct pl_file *child, const struct pl_file *listener)
{
	if (child == NULL)
		return;
	child->rcvtimeo_us = listener->rcvtimeo_us;
	child->sndtimeo_us = listener->sndtimeo_us;
}

int pl_wait_timed(const struct pl_file *f, uint32_t events, bool send, struct pl_deadline *d)
{
	uint64_t us = send ? f->sndtimeo_us : f->rcvtimeo_us, now;

	if (us == 0)
		return pl_wait(f->usfd, events, -1);
	if (us == PL_TIMEO_NOWAIT)
		return 0;
	now = pl_now_ms();
	if (!d->started) {
		d->at_ms = now + (us + 999) / 1000;
		d->started = true;
	}
	if (now >= d->at_ms)
		return 0;
	return pl_wait(f->usfd, events, (int)(d->at_ms - now));
}
