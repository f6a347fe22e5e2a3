/* preload/libc.h: the C library's own socket, file and epoll calls, found
 * with dlsym(RTLD_NEXT), for everything that is not a userstack socket (and
 * for the placeholder descriptors that stand for the ones that are).
 *
 * Resolved once, by a constructor; a call made before that (another
 * library's constructor) resolves on the spot.
 */
#ifndef PL_LIBC_H
#define PL_LIBC_H

#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* Types */

/* X(name, return type, parameter list) for every call we pass through. */
#define PL_LIBC_CALLS(X)                                                                     \
	X(socket, int, (int, int, int))                                                      \
	X(bind, int, (int, const struct sockaddr *, socklen_t))                              \
	X(listen, int, (int, int))                                                           \
	X(accept, int, (int, struct sockaddr *, socklen_t *))                                \
	X(accept4, int, (int, struct sockaddr *, socklen_t *, int))                          \
	X(connect, int, (int, const struct sockaddr *, socklen_t))                           \
	X(read, ssize_t, (int, void *, size_t))                                              \
	X(readv, ssize_t, (int, const struct iovec *, int))                                  \
	X(recv, ssize_t, (int, void *, size_t, int))                                         \
	X(recvfrom, ssize_t, (int, void *, size_t, int, struct sockaddr *, socklen_t *))     \
	X(recvmsg, ssize_t, (int, struct msghdr *, int))                                     \
	X(write, ssize_t, (int, const void *, size_t))                                       \
	X(writev, ssize_t, (int, const struct iovec *, int))                                 \
	X(send, ssize_t, (int, const void *, size_t, int))                                   \
	X(sendto, ssize_t, (int, const void *, size_t, int, const struct sockaddr *,         \
			    socklen_t))                                                      \
	X(sendmsg, ssize_t, (int, const struct msghdr *, int))                               \
	X(close, int, (int))                                                                 \
	X(close_range, int, (unsigned int, unsigned int, int))                               \
	X(closefrom, void, (int))                                                            \
	X(shutdown, int, (int, int))                                                         \
	X(getsockopt, int, (int, int, int, void *, socklen_t *))                             \
	X(setsockopt, int, (int, int, int, const void *, socklen_t))                         \
	X(getsockname, int, (int, struct sockaddr *, socklen_t *))                           \
	X(getpeername, int, (int, struct sockaddr *, socklen_t *))                           \
	X(fcntl, int, (int, int, ...))                                                       \
	X(ioctl, int, (int, unsigned long, ...))                                             \
	X(poll, int, (struct pollfd *, nfds_t, int))                                         \
	X(ppoll, int, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))  \
	X(select, int, (int, fd_set *, fd_set *, fd_set *, struct timeval *))               \
	X(pselect, int, (int, fd_set *, fd_set *, fd_set *, const struct timespec *,         \
			 const sigset_t *))                                                  \
	X(epoll_create, int, (int))                                                          \
	X(epoll_create1, int, (int))                                                         \
	X(epoll_ctl, int, (int, int, int, struct epoll_event *))                             \
	X(epoll_wait, int, (int, struct epoll_event *, int, int))                            \
	X(epoll_pwait, int, (int, struct epoll_event *, int, int, const sigset_t *))         \
	X(dup2, int, (int, int))                                                             \
	X(dup3, int, (int, int, int))                                                        \
	X(epoll_pwait2, int, (int, struct epoll_event *, int, const struct timespec *,       \
			      const sigset_t *))                                             \
	X(dup, int, (int))                                                                   \
	X(sendfile, ssize_t, (int, int, off_t *, size_t))                                    \
	X(pread, ssize_t, (int, void *, size_t, off_t))                                      \
	X(open, int, (const char *, int, ...))                                               \
	X(sigaction, int, (int, const struct sigaction *, struct sigaction *))

#define PL_LIBC_FIELD(name, ret, params) ret(*name) params;
struct pl_libc {
	PL_LIBC_CALLS(PL_LIBC_FIELD)
};
#undef PL_LIBC_FIELD

/* Prototypes */

/* The real calls (resolved on first use). */
const struct pl_libc *pl_libc(void);

#endif
