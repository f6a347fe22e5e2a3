/* libuserstack-preload.so linked into this program (as LD_PRELOAD would
 * put it first): plain socket/epoll/poll/fcntl/dup calls on a userstack
 * UDP socket and a kernel pipe together.  The stack runs on net_ring with
 * --no-huge (hugepages = off), so nothing outside the process is needed.
 *
 * The userstack UDP socket is always writable (EPOLLOUT): a readiness
 * that holds, which level-triggered sets report every time, edge-triggered
 * ones once, one-shot ones once until EPOLL_CTL_MOD.  The pipe is readable
 * once a byte is written. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "preload/fdtable.h"

static char cfg_path[96];
static char prefix[64];

/* The test's own config: net_ring, no hugepages, a prefix of its own. */
static void write_config(void)
{
	FILE *f;
	int fd;

	snprintf(prefix, sizeof(prefix), "ustest-preload-%d", (int)getpid());
	snprintf(cfg_path, sizeof(cfg_path), "/tmp/%s.ini", prefix);
	fd = open(cfg_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fprintf(f,
		"[eal]\nhugepages = off\nno_huge_mem_mb = 128\nfile_prefix = %s\n"
		"log_level = error\n[port]\ndevice = net_ring0\nmbufs = 4095\nrx_desc = 256\n"
		"tx_desc = 256\nlink_wait_ms = 0\n[ip]\naddr = 10.99.0.2/24\n"
		"[engine]\nidle_sleep_max_us = 100\n",
		prefix);
	fclose(f);
	setenv("USERSTACK_CONFIG", cfg_path, 1);
}

static void remove_runtime_dir(void)
{
	char cmd[160];

	unlink(cfg_path);
	snprintf(cmd, sizeof(cmd), "rm -rf /var/run/dpdk/%s", prefix);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove /var/run/dpdk/%s\n", prefix);
}

static int udp_socket(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(5353) };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK, 0);

	assert_true(fd >= 0);
	a.sin_addr.s_addr = htonl(0x0a630002);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Before the stack starts: without a config the first socket fails. */
static void test_no_config_fails_cleanly(void **state)
{
	pid_t pid;
	int st;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd;

		unsetenv("USERSTACK_CONFIG");
		fd = socket(AF_INET, SOCK_STREAM, 0);
		_exit(fd == -1 && errno == EAFNOSUPPORT ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

/* A userstack socket has a kernel number of its own (a placeholder), in
 * the table; dup gives a second number for the same socket, and the
 * socket lives until the last one closes. */
static void test_descriptors(void **state)
{
	int fd = udp_socket(), d, d2, fl, on = 1;
	struct stat st;
	struct sockaddr_in a;
	socklen_t alen = sizeof(a);

	(void)state;
	assert_non_null(pl_fd_get(fd));
	assert_int_equal(fstat(fd, &st), 0); /* a live kernel number */
	fl = fcntl(fd, F_GETFL);
	assert_true(fl & O_NONBLOCK);
	assert_int_equal(fcntl(fd, F_SETFL, fl & ~O_NONBLOCK), 0);
	assert_false(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(ioctl(fd, FIONBIO, &on), 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	assert_int_equal(fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	assert_int_equal(fcntl(fd, F_GETFD), FD_CLOEXEC);
	d = dup(fd);
	assert_true(d >= 0 && d != fd);
	assert_ptr_equal(pl_fd_get(d), pl_fd_get(fd));
	d2 = fcntl(fd, F_DUPFD, 100);
	assert_true(d2 >= 100);
	assert_ptr_equal(pl_fd_get(d2), pl_fd_get(fd));
	assert_int_equal(close(fd), 0);
	assert_null(pl_fd_get(fd));
	assert_int_equal(getsockname(d, (struct sockaddr *)&a, &alen), 0);
	assert_int_equal(ntohs(a.sin_port), 5353);
	/* dup2 onto a userstack number drops that number's socket */
	assert_int_equal(dup2(STDERR_FILENO, d2), d2);
	assert_null(pl_fd_get(d2));
	assert_int_equal(close(d2), 0);
	assert_int_equal(close(d), 0);
	assert_int_equal(pl_fd_count(), 0);
	/* the port is free again: the socket was closed with its last number */
	fd = udp_socket();
	assert_int_equal(close(fd), 0);
	/* a kernel socket stays the kernel's */
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	assert_null(pl_fd_get(fd));
	close(fd);
}

/* close_range and closefrom close userstack numbers as close does (the
 * socket goes with its last number: its port is free again); with
 * CLOSE_RANGE_CLOEXEC they only mark them. */
static void test_close_range(void **state)
{
	int a = udp_socket(), x, y;

	(void)state;
	x = fcntl(a, F_DUPFD, 900);
	assert_int_equal(x, 900);
	close(a);
	a = socket(AF_INET, SOCK_DGRAM, 0); /* a second, unbound */
	y = fcntl(a, F_DUPFD, 901);
	assert_int_equal(y, 901);
	close(a);
	assert_int_equal(close_range(900, 901, CLOSE_RANGE_CLOEXEC), 0);
	assert_int_equal(fcntl(900, F_GETFD), FD_CLOEXEC);
	assert_int_equal(pl_fd_count(), 2);
	assert_int_equal(close_range(901, 900, 0), -1); /* a bad range closes nothing */
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pl_fd_count(), 2);
	assert_int_equal(close_range(900, 901, 0), 0);
	assert_int_equal(pl_fd_count(), 0);
	assert_int_equal(fcntl(900, F_GETFD), -1);
	a = udp_socket(); /* port 5353 again: the first socket is gone */
	x = fcntl(a, F_DUPFD, 1000);
	assert_int_equal(x, 1000);
	close(a);
	closefrom(1000);
	assert_int_equal(pl_fd_count(), 0);
	close(udp_socket());
}

/* How many times events carries data fd, and the events it carries. */
static int count_fd(const struct epoll_event *ev, int n, int fd, uint32_t *got)
{
	int c = 0;

	for (int i = 0; i < n; i++)
		if (ev[i].data.fd == fd) {
			c++;
			*got = ev[i].events;
		}
	return c;
}

struct mixed {
	int ep, sock, pipe[2];
};

static void mixed_open(struct mixed *m, uint32_t flags)
{
	struct epoll_event ev = { .events = EPOLLIN | flags };

	m->sock = udp_socket();
	assert_int_equal(pipe(m->pipe), 0);
	m->ep = epoll_create1(EPOLL_CLOEXEC);
	assert_true(m->ep >= 0);
	ev.data.fd = m->pipe[0];
	assert_int_equal(epoll_ctl(m->ep, EPOLL_CTL_ADD, m->pipe[0], &ev), 0);
	ev.events = EPOLLOUT | flags;
	ev.data.fd = m->sock;
	assert_int_equal(epoll_ctl(m->ep, EPOLL_CTL_ADD, m->sock, &ev), 0);
	assert_int_equal(write(m->pipe[1], "x", 1), 1);
}

static void mixed_close(struct mixed *m)
{
	close(m->ep);
	close(m->sock);
	close(m->pipe[0]);
	close(m->pipe[1]);
	assert_int_equal(pl_fd_count(), 0);
}

/* Waits (up to 200 ms) and checks each member is there `times` times. */
static void expect_both(struct mixed *m, int times_pipe, int times_sock)
{
	struct epoll_event ev[8];
	uint32_t got = 0;
	int n = epoll_wait(m->ep, ev, 8, 200);

	assert_int_equal(n, times_pipe + times_sock);
	assert_int_equal(count_fd(ev, n, m->pipe[0], &got), times_pipe);
	if (times_pipe)
		assert_int_equal(got, EPOLLIN);
	assert_int_equal(count_fd(ev, n, m->sock, &got), times_sock);
	if (times_sock)
		assert_int_equal(got, EPOLLOUT);
}

static void test_mixed_level(void **state)
{
	struct mixed m;
	char c;

	(void)state;
	mixed_open(&m, 0);
	expect_both(&m, 1, 1);
	expect_both(&m, 1, 1); /* still true: reported again */
	assert_int_equal(read(m.pipe[0], &c, 1), 1);
	expect_both(&m, 0, 1);
	mixed_close(&m);
}

static void test_mixed_edge(void **state)
{
	struct mixed m;

	(void)state;
	mixed_open(&m, EPOLLET);
	expect_both(&m, 1, 1);
	expect_both(&m, 0, 0); /* nothing new: nothing, after the timeout */
	assert_int_equal(write(m.pipe[1], "y", 1), 1);
	expect_both(&m, 1, 0);
	mixed_close(&m);
}

static void test_mixed_oneshot(void **state)
{
	struct mixed m;
	struct epoll_event ev = { .events = EPOLLOUT | EPOLLONESHOT };

	(void)state;
	mixed_open(&m, EPOLLONESHOT);
	expect_both(&m, 1, 1);
	expect_both(&m, 0, 0);
	ev.data.fd = m.sock;
	assert_int_equal(epoll_ctl(m.ep, EPOLL_CTL_MOD, m.sock, &ev), 0);
	expect_both(&m, 0, 1);
	ev.events = EPOLLIN | EPOLLONESHOT;
	ev.data.fd = m.pipe[0];
	assert_int_equal(epoll_ctl(m.ep, EPOLL_CTL_MOD, m.pipe[0], &ev), 0);
	expect_both(&m, 1, 0);
	assert_int_equal(epoll_ctl(m.ep, EPOLL_CTL_DEL, m.sock, NULL), 0);
	assert_int_equal(epoll_ctl(m.ep, EPOLL_CTL_DEL, m.sock, NULL), -1);
	assert_int_equal(errno, ENOENT);
	mixed_close(&m);
}

static void test_poll_mixed(void **state)
{
	int sock = udp_socket(), p[2];
	struct pollfd fds[2];
	char c;

	(void)state;
	assert_int_equal(pipe(p), 0);
	fds[0] = (struct pollfd){ .fd = p[0], .events = POLLIN };
	fds[1] = (struct pollfd){ .fd = sock, .events = POLLIN };
	assert_int_equal(poll(fds, 2, 50), 0); /* neither: the timeout */
	assert_int_equal(write(p[1], "z", 1), 1);
	fds[1].events = POLLIN | POLLOUT;
	assert_int_equal(poll(fds, 2, 200), 2);
	assert_int_equal(fds[0].revents, POLLIN);
	assert_int_equal(fds[1].revents, POLLOUT);
	assert_int_equal(read(sock, &c, 1), -1); /* nothing queued, non-blocking */
	assert_int_equal(errno, EAGAIN);
	close(p[0]);
	close(p[1]);
	close(sock);
	assert_int_equal(pl_fd_count(), 0);
}

/* select and pselect over both kinds: each set keeps only the numbers
 * ready in it, the count is the bits set, the timeval the time left. */
static void test_select_mixed(void **state)
{
	int sock = udp_socket(), p[2], nfds;
	fd_set rd, wr, ex;
	struct timeval tv = { .tv_usec = 50000 };
	struct timespec ts = { .tv_nsec = 20000000 };
	sigset_t none;
	char c;

	(void)state;
	assert_int_equal(pipe(p), 0);
	nfds = (p[0] > sock ? p[0] : sock) + 1;
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	FD_SET(sock, &rd);
	assert_int_equal(select(nfds, &rd, NULL, NULL, &tv), 0); /* the timeout */
	assert_false(FD_ISSET(p[0], &rd) || FD_ISSET(sock, &rd));
	assert_int_equal(tv.tv_sec, 0);
	assert_int_equal(tv.tv_usec, 0);
	assert_int_equal(write(p[1], "s", 1), 1);
	FD_ZERO(&rd);
	FD_ZERO(&wr);
	FD_ZERO(&ex);
	FD_SET(p[0], &rd);
	FD_SET(sock, &rd);
	FD_SET(sock, &wr);
	FD_SET(p[0], &wr); /* the read end of a pipe is never writable */
	FD_SET(sock, &ex);
	tv = (struct timeval){ .tv_sec = 5 };
	assert_int_equal(select(nfds, &rd, &wr, &ex, &tv), 2);
	assert_true(FD_ISSET(p[0], &rd));
	assert_false(FD_ISSET(sock, &rd));
	assert_true(FD_ISSET(sock, &wr));
	assert_false(FD_ISSET(p[0], &wr));
	assert_false(FD_ISSET(sock, &ex));
	assert_true(tv.tv_sec == 4 || tv.tv_sec == 5); /* time left, not 0 */
	assert_int_equal(read(p[0], &c, 1), 1);
	/* pselect: the same wait with a mask; the timespec is not written */
	sigemptyset(&none);
	FD_ZERO(&rd);
	FD_SET(sock, &rd);
	FD_SET(p[0], &rd);
	assert_int_equal(pselect(nfds, &rd, NULL, NULL, &ts, &none), 0);
	assert_int_equal(ts.tv_nsec, 20000000);
	FD_ZERO(&wr);
	FD_SET(sock, &wr);
	assert_int_equal(pselect(nfds, NULL, &wr, NULL, NULL, &none), 1);
	assert_true(FD_ISSET(sock, &wr));
	/* a closed number in a set: EBADF, as the kernel */
	close(p[1]);
	FD_ZERO(&wr);
	FD_SET(sock, &wr);
	FD_SET(p[1], &wr);
	assert_int_equal(select(nfds > p[1] ? nfds : p[1] + 1, NULL, &wr, NULL, NULL), -1);
	assert_int_equal(errno, EBADF);
	tv = (struct timeval){ .tv_sec = -1 };
	assert_int_equal(select(nfds, NULL, &wr, NULL, &tv), -1);
	assert_int_equal(errno, EINVAL);
	close(p[0]);
	close(sock);
	assert_int_equal(pl_fd_count(), 0);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* SO_RCVTIMEO and SO_SNDTIMEO bound the blocking calls as in the kernel:
 * recv and accept fail EAGAIN, connect EINPROGRESS (nobody answers for
 * 10.99.0.1 on the ring); the values read back as set; Linux's errors. */
static void test_socket_timeouts(void **state)
{
	struct timeval tv = { .tv_usec = 100000 }, got;
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(5354) };
	socklen_t len = sizeof(got);
	int sock = udp_socket(), l, c, d;
	uint64_t t0;
	char buf[8];

	(void)state;
	assert_int_equal(fcntl(sock, F_SETFL, 0), 0); /* blocking */
	assert_int_equal(setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(getsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &got, &len), 0);
	assert_int_equal(len, sizeof(got));
	assert_int_equal(got.tv_sec, 0);
	assert_int_equal(got.tv_usec, 100000);
	t0 = now_ms();
	assert_int_equal(recv(sock, buf, sizeof(buf), 0), -1);
	assert_int_equal(errno, EAGAIN);
	assert_true(now_ms() - t0 >= 100);
	d = dup(sock); /* one open file: the dup has the timeout too */
	assert_int_equal(read(d, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EAGAIN);
	close(d);
	assert_int_equal(setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, 4), -1);
	assert_int_equal(errno, EINVAL);
	tv.tv_usec = 1000000;
	assert_int_equal(setsockopt(sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), -1);
	assert_int_equal(errno, EDOM);
	close(sock);

	/* a listener: accept; a connection: connect (the send timeout) */
	a.sin_addr.s_addr = htonl(0x0a630002);
	l = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(l >= 0);
	assert_int_equal(bind(l, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(l, 4), 0);
	tv = (struct timeval){ .tv_usec = 50000 };
	assert_int_equal(setsockopt(l, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
	assert_int_equal(accept(l, NULL, NULL), -1);
	assert_int_equal(errno, EAGAIN);
	close(l);
	c = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(c >= 0);
	assert_int_equal(setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)), 0);
	a.sin_addr.s_addr = htonl(0x0a630001);
	a.sin_port = htons(9);
	t0 = now_ms();
	assert_int_equal(connect(c, (struct sockaddr *)&a, sizeof(a)), -1);
	assert_int_equal(errno, EINPROGRESS);
	assert_true(now_ms() - t0 >= 50);
	close(c);
	assert_int_equal(pl_fd_count(), 0);
}

static volatile sig_atomic_t alarms;

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

/* A handler cuts a wait without a timeout short (epoll_wait, poll,
 * select, and a socket call under a socket timeout), as in the kernel:
 * the way nginx learns of SIGTERM while nothing else happens. */
static void test_signal_interrupts_wait(void **state)
{
	struct sigaction act = { .sa_handler = on_alarm }, old;
	struct itimerval t = { .it_value = { .tv_usec = 100000 } };
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct pollfd pfd;
	struct timeval tmo = { .tv_sec = 10 };
	fd_set rd;
	int sock = udp_socket(), ep = epoll_create1(0);
	char c;

	(void)state;
	sigemptyset(&act.sa_mask);
	act.sa_flags = SA_RESTART; /* epoll_wait and poll are never restarted */
	assert_int_equal(sigaction(SIGALRM, &act, NULL), 0);
	assert_int_equal(sigaction(SIGALRM, NULL, &old), 0);
	assert_ptr_equal(old.sa_handler, on_alarm); /* the application's, not ours */
	ev.data.fd = sock;
	assert_int_equal(epoll_ctl(ep, EPOLL_CTL_ADD, sock, &ev), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &t, NULL), 0);
	assert_int_equal(epoll_wait(ep, &out, 1, -1), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(alarms, 1);
	pfd = (struct pollfd){ .fd = sock, .events = POLLIN };
	assert_int_equal(setitimer(ITIMER_REAL, &t, NULL), 0);
	assert_int_equal(poll(&pfd, 1, -1), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(alarms, 2);
	FD_ZERO(&rd);
	FD_SET(sock, &rd);
	assert_int_equal(setitimer(ITIMER_REAL, &t, NULL), 0);
	assert_int_equal(select(sock + 1, &rd, NULL, NULL, NULL), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(alarms, 3);
	/* a blocking recv under SO_RCVTIMEO is never restarted (signal(7)) */
	assert_int_equal(fcntl(sock, F_SETFL, 0), 0);
	assert_int_equal(setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo)), 0);
	assert_int_equal(setitimer(ITIMER_REAL, &t, NULL), 0);
	assert_int_equal(recv(sock, &c, 1, 0), -1);
	assert_int_equal(errno, EINTR);
	assert_int_equal(alarms, 4);
	signal(SIGALRM, SIG_DFL);
	close(ep);
	close(sock);
	assert_int_equal(pl_fd_count(), 0);
}

/* A child forked after the start leaves the stack alone: its userstack
 * numbers only close, new sockets are the kernel's. */
static void test_fork_child_inert(void **state)
{
	int sock = udp_socket(), st;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int ok = 1, k;
		char c;

		ok &= read(sock, &c, 1) == -1 && errno == EBADF;
		ok &= close(sock) == 0;
		k = socket(AF_INET, SOCK_DGRAM, 0);
		ok &= k >= 0 && pl_fd_get(k) == NULL;
		_exit(ok ? 0 : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	/* the parent's socket is untouched */
	assert_non_null(pl_fd_get(sock));
	assert_int_equal(send(sock, "q", 1, 0), -1);
	assert_int_equal(errno, EDESTADDRREQ);
	close(sock);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_config_fails_cleanly),
		cmocka_unit_test(test_descriptors),
		cmocka_unit_test(test_close_range),
		cmocka_unit_test(test_mixed_level),
		cmocka_unit_test(test_mixed_edge),
		cmocka_unit_test(test_mixed_oneshot),
		cmocka_unit_test(test_poll_mixed),
		cmocka_unit_test(test_select_mixed),
		cmocka_unit_test(test_socket_timeouts),
		cmocka_unit_test(test_signal_interrupts_wait),
		cmocka_unit_test(test_fork_child_inert),
	};

	write_config();
	atexit(remove_runtime_dir);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
