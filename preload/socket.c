/* preload/socket.c: the socket calls that are not I/O: socket, bind,
 * listen, accept, connect, shutdown, options and names.  A TCP or UDP
 * socket of the stack's thread is userstack's; every other socket (Unix,
 * netlink, raw, another thread's) is the kernel's. */
#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>

#include "preload/files.h"
#include "preload/libc.h"
#include "preload/stack.h"
#include "preload/timeo.h"
#include "userstack.h"

#define PL_TYPE_MASK 0xf

static bool pl_inet_kind(int domain, int type, int protocol)
{
	int t = type & PL_TYPE_MASK;

	if (domain != AF_INET && domain != AF_INET6)
		return false;
	if (t == SOCK_STREAM)
		return protocol == 0 || protocol == IPPROTO_TCP;
	if (t == SOCK_DGRAM)
		return protocol == 0 || protocol == IPPROTO_UDP;
	return false;
}

int socket(int domain, int type, int protocol)
{
	int rc, usfd;

	if (!pl_inet_kind(domain, type, protocol) || !pl_routes())
		return pl_libc()->socket(domain, type, protocol);
	rc = pl_start();
	if (rc < 0)
		return pl_fail(-rc);
	PL_US(us_socket(domain, type & PL_TYPE_MASK, protocol));
	if (rc < 0)
		return -1;
	usfd = rc;
	rc = pl_publish(usfd, PL_SOCK, type & SOCK_NONBLOCK, type & SOCK_CLOEXEC);
	return rc < 0 ? pl_fail(-rc) : rc;
}

int bind(int fd, const struct sockaddr *addr, socklen_t len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->bind(fd, addr, len) : -1;
	PL_US(us_bind(f->usfd, addr, len));
	return rc;
}

int listen(int fd, int backlog)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->listen(fd, backlog) : -1;
	/* listen(2) takes any backlog and caps it at somaxconn */
	PL_US(us_listen(f->usfd, backlog <= 0 ? 1 : backlog > 65535 ? 65535 : backlog));
	return rc;
}

static int pl_accept(struct pl_file *f, struct sockaddr *addr, socklen_t *len, int flags)
{
	struct pl_deadline d = { 0 };
	int rc;

	for (;;) {
		PL_US(us_accept(f->usfd, addr, len));
		if (rc >= 0 || errno != EAGAIN || f->nonblock)
			break;
		rc = pl_wait_timed(f, US_EPOLLIN, false, &d);
		if (rc <= 0)
			return rc < 0 ? -1 : pl_fail(EAGAIN); /* EINTR, SO_RCVTIMEO */
	}
	if (rc < 0)
		return -1;
	rc = pl_publish(rc, PL_SOCK, flags & SOCK_NONBLOCK, flags & SOCK_CLOEXEC);
	if (rc < 0)
		return pl_fail(-rc);
	pl_timeo_inherit(pl_fd_get(rc), f); /* the kernel's child is the listener's clone */
	return rc;
}

int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->accept(fd, addr, len) : -1;
	return pl_accept(f, addr, len, 0);
}

int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->accept4(fd, addr, len, flags) : -1;
	if (flags & ~(SOCK_NONBLOCK | SOCK_CLOEXEC))
		return pl_fail(EINVAL);
	return pl_accept(f, addr, len, flags);
}

/* A blocking connect waits for the handshake (SO_SNDTIMEO bounds the
 * wait: EINPROGRESS, as Linux) and reports its outcome. */
int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	struct pl_deadline d = { 0 };
	int rc, err = 0;
	socklen_t elen = sizeof(err);

	if (f == NULL)
		return kernel ? pl_libc()->connect(fd, addr, len) : -1;
	PL_US(us_connect(f->usfd, addr, len));
	if (rc == 0 || errno != EINPROGRESS || f->nonblock)
		return rc;
	rc = pl_wait_timed(f, US_EPOLLOUT, true, &d);
	if (rc == 0)
		return pl_fail(EINPROGRESS);
	if (rc < 0)
		return -1; /* EINTR: the handshake goes on, as connect(2) says */
	PL_US(us_getsockopt(f->usfd, US_SOL_SOCKET, US_SO_ERROR, &err, &elen));
	if (rc < 0)
		return -1;
	return err != 0 ? pl_fail(err) : 0;
}

int shutdown(int fd, int how)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->shutdown(fd, how) : -1;
	PL_US(us_shutdown(f->usfd, how));
	return rc;
}

int getsockopt(int fd, int level, int name, void *val, socklen_t *len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->getsockopt(fd, level, name, val, len) : -1;
	if (pl_timeo_opt(level, name))
		return pl_timeo_get(f, name, val, len);
	PL_US(us_getsockopt(f->usfd, level, name, val, len));
	return rc;
}

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->setsockopt(fd, level, name, val, len) : -1;
	if (pl_timeo_opt(level, name))
		return pl_timeo_set(f, name, val, len);
	PL_US(us_setsockopt(f->usfd, level, name, val, len));
	return rc;
}

int getsockname(int fd, struct sockaddr *addr, socklen_t *len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->getsockname(fd, addr, len) : -1;
	PL_US(us_getsockname(f->usfd, addr, len));
	return rc;
}

int getpeername(int fd, struct sockaddr *addr, socklen_t *len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	int rc;

	if (f == NULL)
		return kernel ? pl_libc()->getpeername(fd, addr, len) : -1;
	PL_US(us_getpeername(f->usfd, addr, len));
	return rc;
}
