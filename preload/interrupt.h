/* preload/interrupt.h: signals that cut a wait short.
 *
 * In the kernel a signal handler interrupts epoll_wait, poll and a blocking
 * read (EINTR), which is how nginx learns of SIGTERM while it waits without
 * a timeout.  Our waits are polling loops in user space that no signal
 * interrupts, so sigaction and signal are interposed: the application's
 * handlers run through a trampoline that counts them, and every wait
 * returns EINTR once the count moved (a blocking socket call only for a
 * handler without SA_RESTART, as the kernel restarts it otherwise).  The
 * stack's own handlers (installed from inside it) are left alone.
 */
#ifndef PL_INTERRUPT_H
#define PL_INTERRUPT_H

#include <stdbool.h>

/* Types */

/* Where a wait stands with respect to the handlers that ran. */
struct pl_sigmark {
	unsigned long any;       /* every application handler */
	unsigned long norestart; /* handlers without SA_RESTART */
};

/* Prototypes */

struct pl_sigmark pl_sig_mark(void);
/* Whether a handler ran since m: any handler (epoll_wait, poll), or one
 * without SA_RESTART only (blocking socket calls). */
bool pl_sig_since(const struct pl_sigmark *m, bool restartable);

#endif
