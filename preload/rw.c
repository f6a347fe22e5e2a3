/* preload/rw.c: read, write and their socket, vectored and fortified
 * variants.  Vectored calls go through a bounce buffer: one libuserstack
 * call per application call, so a writev of a reply's pieces leaves as one
 * stream write, and a datagram is never split over calls. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "preload/files.h"
#include "preload/io.h"
#include "preload/libc.h"

extern void __chk_fail(void) __attribute__((noreturn));

/* Bytes of iov, and whether it is valid (as readv(2): EINVAL otherwise). */
static bool pl_iov_len(const struct iovec *iov, int n, size_t *total)
{
	*total = 0;
	if (n < 0 || n > 1024)
		return false;
	for (int i = 0; i < n; i++)
		*total += iov[i].iov_len;
	return true;
}

static void pl_scatter(const struct iovec *iov, int n, const char *src, size_t len)
{
	for (int i = 0; i < n && len > 0; i++) {
		size_t k = iov[i].iov_len < len ? iov[i].iov_len : len;

		memcpy(iov[i].iov_base, src, k);
		src += k;
		len -= k;
	}
}

/* Copies up to cap bytes of iov from byte skip on into dst; the count. */
static size_t pl_gather(const struct iovec *iov, int n, size_t skip, char *dst, size_t cap)
{
	size_t got = 0;

	for (int i = 0; i < n && got < cap; i++) {
		size_t l = iov[i].iov_len, k;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		k = l - skip < cap - got ? l - skip : cap - got;
		memcpy(dst + got, (const char *)iov[i].iov_base + skip, k);
		got += k;
		skip = 0;
	}
	return got;
}

static ssize_t pl_readv(struct pl_file *f, const struct iovec *iov, int n, int flags,
			struct sockaddr *addr, socklen_t *alen)
{
	char *b = pl_bounce();
	size_t total;
	ssize_t r;

	if (!pl_iov_len(iov, n, &total))
		return pl_fail(EINVAL);
	if (b == NULL)
		return pl_fail(ENOMEM);
	r = pl_recv_from(f, b, total < PL_BOUNCE_BYTES ? total : PL_BOUNCE_BYTES, flags, addr,
			 alen);
	if (r > 0)
		pl_scatter(iov, n, b, (size_t)r);
	return r;
}

/* A blocking socket takes every byte (chunk after chunk); a non-blocking
 * one what fits, stopping at the first short write. */
static ssize_t pl_writev(struct pl_file *f, const struct iovec *iov, int n, int flags,
			 const struct sockaddr *addr, socklen_t alen)
{
	char *b = pl_bounce();
	size_t total, done = 0;

	if (!pl_iov_len(iov, n, &total))
		return pl_fail(EINVAL);
	if (b == NULL)
		return pl_fail(ENOMEM);
	do {
		size_t k = pl_gather(iov, n, done, b, PL_BOUNCE_BYTES);
		ssize_t w = pl_send_to(f, b, k, flags, addr, alen);

		if (w < 0)
			return done > 0 ? (ssize_t)done : -1;
		done += (size_t)w;
		if ((size_t)w < k)
			break;
	} while (done < total);
	return (ssize_t)done;
}

ssize_t read(int fd, void *buf, size_t len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->read(fd, buf, len) : -1;
	return pl_recv_from(f, buf, len, 0, NULL, NULL);
}

ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	if (len > buflen)
		__chk_fail();
	return read(fd, buf, len);
}

ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->recv(fd, buf, len, flags) : -1;
	return pl_recv_from(f, buf, len, flags, NULL, NULL);
}

ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	if (len > buflen)
		__chk_fail();
	return recv(fd, buf, len, flags);
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr,
		 socklen_t *alen)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->recvfrom(fd, buf, len, flags, addr, alen) : -1;
	return pl_recv_from(f, buf, len, flags, addr, alen);
}

ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
		       struct sockaddr *addr, socklen_t *alen)
{
	if (len > buflen)
		__chk_fail();
	return recvfrom(fd, buf, len, flags, addr, alen);
}

ssize_t readv(int fd, const struct iovec *iov, int n)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->readv(fd, iov, n) : -1;
	return pl_readv(f, iov, n, 0, NULL, NULL);
}

/* No ancillary data comes from userstack: msg_controllen is 0 after. */
ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);
	ssize_t r;

	if (f == NULL)
		return kernel ? pl_libc()->recvmsg(fd, msg, flags) : -1;
	r = pl_readv(f, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
		     msg->msg_name != NULL ? &msg->msg_namelen : NULL);
	if (r >= 0) {
		msg->msg_controllen = 0;
		msg->msg_flags = 0;
	}
	return r;
}

ssize_t write(int fd, const void *buf, size_t len)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->write(fd, buf, len) : -1;
	return pl_send_to(f, buf, len, 0, NULL, 0);
}

ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->send(fd, buf, len, flags) : -1;
	return pl_send_to(f, buf, len, flags, NULL, 0);
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *addr,
	       socklen_t alen)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->sendto(fd, buf, len, flags, addr, alen) : -1;
	return pl_send_to(f, buf, len, flags, addr, alen);
}

ssize_t writev(int fd, const struct iovec *iov, int n)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->writev(fd, iov, n) : -1;
	return pl_writev(f, iov, n, 0, NULL, 0);
}

/* Ancillary data is ignored (nothing userstack would act on). */
ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	bool kernel;
	struct pl_file *f = pl_sock(fd, &kernel);

	if (f == NULL)
		return kernel ? pl_libc()->sendmsg(fd, msg, flags) : -1;
	return pl_writev(f, msg->msg_iov, (int)msg->msg_iovlen, flags, msg->msg_name,
			 msg->msg_namelen);
}
