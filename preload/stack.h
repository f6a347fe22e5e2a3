/* preload/stack.h: the stack's life in an unmodified process.
 *
 * The stack starts lazily, on the first TCP or UDP socket the application
 * makes (USERSTACK_CONFIG names the INI file), so a master process that
 * forks before it has no stack to share.  The thread that started it owns
 * it: the engine runs on that thread, inside the calls it makes (blocking
 * calls become polling waits, epoll_wait polls the engine).  A child forked
 * after the start finds the stack inert: it never touches the engine, its
 * inherited userstack descriptors only close (their placeholders).
 *
 * Calls made by the stack itself (EAL and the PMDs open files, sockets for
 * ioctls, epoll sets) must reach the kernel: pl_enter/pl_leave bracket
 * every call into libuserstack, and inside that bracket nothing is routed.
 */
#ifndef PL_STACK_H
#define PL_STACK_H

#include <stdbool.h>
#include <stdint.h>

/* Types */

enum pl_state {
	PL_IDLE,    /* not started yet */
	PL_RUNNING, /* started: new inet sockets of its thread are userstack's */
	PL_FAILED,  /* the start failed (said once on stderr) */
	PL_INERT,   /* a child forked after the start: hands off */
};

/* Prototypes */

enum pl_state pl_state(void);
/* Whether a new AF_INET/AF_INET6 socket of this thread goes to userstack:
 * not inside the stack, not in an inert child, and on the owning thread
 * (or before any start).  Starting happens in pl_start. */
bool pl_routes(void);
/* Starts the stack if it is not running: 0, or -errno (the reason printed
 * once; later calls fail the same way without a word). */
int pl_start(void);
/* Brackets every call into libuserstack (nestable). */
void pl_enter(void);
void pl_leave(void);
bool pl_inside(void);
/* The monotonic clock in ms, for the timeouts of waits. */
uint64_t pl_now_ms(void);
/* Waits until userstack descriptor usfd has one of events (US_EPOLL*) or
 * timeout_ms passes (-1: no limit), running the engine: 1 ready, 0 timed
 * out, -1/EINTR when an application handler without SA_RESTART ran (with
 * a time limit, any handler). */
int pl_wait(int usfd, uint32_t events, int timeout_ms);

#endif
