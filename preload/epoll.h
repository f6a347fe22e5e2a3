/* preload/epoll.h: mixed epoll sets.
 *
 * An application's epoll set is a kernel epoll (its number is the
 * kernel's) for its kernel members, plus, from the first userstack socket
 * added, a userstack epoll for the userstack members.  A wait polls both
 * without blocking, alternating which is asked first so neither starves
 * the other, and repeats until something is ready or the timeout passes.
 * Sleeping is the engine's idle back-off's ([engine] idle_sleep_max_us):
 * busy polling by default, so a waiting process keeps one core busy
 * unless the configuration says otherwise.  Level- and edge-triggered
 * and EPOLLONESHOT behave as Linux's on both sides: each side implements
 * them for its members.
 */
#ifndef PL_EPOLL_H
#define PL_EPOLL_H

#include <sys/epoll.h>

#include "preload/fdtable.h"

/* Prototypes */

/* Waits on the mixed set f (number epfd): the events, at most max, or 0
 * when timeout_ms (-1: none) passed. */
int pl_epoll_wait_mixed(int epfd, struct pl_file *f, struct epoll_event *events, int max,
			int timeout_ms);

#endif
