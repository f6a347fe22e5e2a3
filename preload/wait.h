/* preload/wait.h: one wait over userstack sockets and kernel descriptors
 * together, in poll's shape: poll, ppoll, select and pselect all wait
 * through it. */
#ifndef PL_WAIT_H
#define PL_WAIT_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <time.h>

/* Prototypes */

/* Whether any of the n entries is a userstack socket. */
bool pl_poll_any_ours(const struct pollfd *fds, nfds_t n);
/* poll(2) over both kinds (timeout_ms -1: no limit); EINTR once an
 * application handler ran. */
int pl_poll_mixed(struct pollfd *fds, nfds_t n, int timeout_ms);
/* pl_poll_mixed with the signal mask set to mask (NULL: unchanged) for
 * the wait, as ppoll and pselect do. */
int pl_poll_masked(struct pollfd *fds, nfds_t n, int timeout_ms, const sigset_t *mask);
/* A timespec timeout in milliseconds, rounded up (NULL: -1); -2 with
 * errno EINVAL for a negative or unnormalized one. */
int pl_timespec_ms(const struct timespec *ts);

#endif
