/* Epoll-shaped readiness (us_epoll_*) between two engines in virtual time:
 * us_epoll_ctl's errors, level- vs edge-triggered reporting, one-shot, RDHUP
 * on half-close, readiness at ADD, and registrations dropped at close. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 8080

/* A connected pair: *c on A, *s on B (listener *l on B). */
static void pair(int *l, int *c, int *s)
{
	struct sockaddr_in any = sp_addr(0, PORT), to = sp_addr(SP_B_IP, PORT);

	sp_on(&sp.b);
	*l = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_bind(*l, SA(any), sizeof(any)), 0);
	assert_int_equal(us_listen(*l, 16), 0);
	sp_on(&sp.a);
	*c = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_connect(*c, SA(to), sizeof(to)), EINPROGRESS);
	sp_run(10);
	*s = us_accept(*l, NULL, NULL);
	assert_true(*s > 0);
}

static int ep_new(struct sp_side *side)
{
	int ep;

	sp_on(side);
	ep = us_epoll_create1(US_SOCK_CLOEXEC);
	assert_true(ep > 0);
	sp_on(&sp.a);
	return ep;
}

static void ep_add(int ep, int fd, uint32_t events)
{
	struct us_epoll_event ev = { .events = events, .data.fd = fd };

	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev), 0);
}

/* One poll (timeout 0); the single event's mask, 0 if none. */
static uint32_t ep_once(int ep, int fd)
{
	struct us_epoll_event out[4];
	int n = us_epoll_wait(ep, out, 4, 0);

	assert_true(n == 0 || n == 1);
	if (n == 0)
		return 0;
	assert_int_equal(out[0].data.fd, fd);
	return out[0].events;
}

static void test_ctl_errors(void **state)
{
	struct us_epoll_event ev = { .events = US_EPOLLIN };
	int ep, ep2, fd, other;

	(void)state;
	ep = ep_new(&sp.a);
	ep2 = ep_new(&sp.a);
	fd = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, 999, &ev), EBADF);
	assert_fails(us_epoll_ctl(999, US_EPOLL_CTL_ADD, fd, &ev), EBADF);
	assert_fails(us_epoll_ctl(fd, US_EPOLL_CTL_ADD, fd, &ev), EINVAL); /* not epoll */
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, ep, &ev), EINVAL);   /* itself */
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, ep2, &ev), EPERM);   /* nesting */
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_MOD, fd, &ev), ENOENT);
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_DEL, fd, NULL), ENOENT);
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, NULL), EFAULT);
	assert_fails(us_epoll_ctl(ep, 9, fd, &ev), EINVAL);
	ev.events = 0x40000; /* unknown bit */
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev), EINVAL);
	ev.events = US_EPOLLIN;
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev), 0);
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev), EEXIST);
	/* A socket of another engine cannot join this engine's epoll. */
	sp_on(&sp.b);
	other = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, other, &ev), EINVAL);
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_DEL, fd, NULL), 0);
	assert_fails(us_epoll_ctl(ep, US_EPOLL_CTL_DEL, fd, NULL), ENOENT);
	/* ERR and HUP are always reported: a fresh socket has HUP (and OUT). */
	ev.data.fd = fd;
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, fd, &ev), 0);
	assert_int_equal(ep_once(ep, fd), US_EPOLLHUP);
	us_close(other);
	us_close(fd);
	us_close(ep);
	us_close(ep2);
}

static void test_level_vs_edge(void **state)
{
	char buf[16];
	int l, c, s, lt, et;

	(void)state;
	pair(&l, &c, &s);
	lt = ep_new(&sp.b);
	et = ep_new(&sp.b);
	ep_add(lt, s, US_EPOLLIN);
	ep_add(et, s, US_EPOLLIN | US_EPOLLET);
	assert_int_equal(ep_once(lt, s), 0);
	assert_int_equal(ep_once(et, s), 0);
	assert_int_equal(us_send(c, "abcd", 4, 0), 4);
	sp_run(5);
	/* Level: reported while data is there; edge: once per arrival. */
	assert_int_equal(ep_once(lt, s), US_EPOLLIN);
	assert_int_equal(ep_once(et, s), US_EPOLLIN);
	assert_int_equal(ep_once(lt, s), US_EPOLLIN);
	assert_int_equal(ep_once(et, s), 0);
	assert_int_equal(us_recv(s, buf, 2, 0), 2);
	assert_int_equal(ep_once(lt, s), US_EPOLLIN);
	assert_int_equal(ep_once(et, s), 0);
	assert_int_equal(us_send(c, "ef", 2, 0), 2);
	sp_run(5);
	assert_int_equal(ep_once(et, s), US_EPOLLIN); /* new data: new edge */
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 4);
	assert_int_equal(ep_once(lt, s), 0); /* drained: level drops too */
	assert_int_equal(ep_once(et, s), 0);
	/* Writable: level every time, edge once since registration. */
	int wlt = ep_new(&sp.a), wet = ep_new(&sp.a);
	ep_add(wlt, c, US_EPOLLOUT);
	ep_add(wet, c, US_EPOLLOUT | US_EPOLLET);
	assert_int_equal(ep_once(wlt, c), US_EPOLLOUT);
	assert_int_equal(ep_once(wet, c), US_EPOLLOUT);
	assert_int_equal(ep_once(wlt, c), US_EPOLLOUT);
	assert_int_equal(ep_once(wet, c), 0);
	/* Closing a socket drops its registrations. */
	us_close(c);
	assert_int_equal(ep_once(wlt, c), 0);
	struct us_epoll_event ev = { .events = US_EPOLLIN };
	assert_fails(us_epoll_ctl(wlt, US_EPOLL_CTL_DEL, c, &ev), EBADF);
	us_close(wlt);
	us_close(wet);
	us_close(lt);
	us_close(et);
	us_close(s);
	us_close(l);
}

static void test_oneshot_and_mod(void **state)
{
	int l, c, s, ep;
	struct us_epoll_event ev = { .events = US_EPOLLIN | US_EPOLLONESHOT, .data.u32 = 5 }, out[2];

	(void)state;
	pair(&l, &c, &s);
	ep = ep_new(&sp.b);
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_ADD, s, &ev), 0);
	assert_int_equal(us_send(c, "x", 1, 0), 1);
	sp_run(5);
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 1);
	assert_int_equal(out[0].data.u32, 5);
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 0); /* disabled */
	assert_int_equal(us_send(c, "y", 1, 0), 1);
	sp_run(5);
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 0); /* still disabled */
	/* MOD re-arms, with new data and interest. */
	ev = (struct us_epoll_event){ .events = US_EPOLLIN | US_EPOLLOUT, .data.u32 = 6 };
	assert_int_equal(us_epoll_ctl(ep, US_EPOLL_CTL_MOD, s, &ev), 0);
	assert_int_equal(us_epoll_wait(ep, out, 2, 0), 1);
	assert_int_equal(out[0].events, US_EPOLLIN | US_EPOLLOUT);
	assert_int_equal(out[0].data.u32, 6);
	us_close(ep);
	us_close(c);
	us_close(s);
	us_close(l);
}

static void test_rdhup_half_close(void **state)
{
	char buf[4];
	int l, c, s, ep;

	(void)state;
	pair(&l, &c, &s);
	ep = ep_new(&sp.b);
	ep_add(ep, s, US_EPOLLRDHUP | US_EPOLLET);
	assert_int_equal(ep_once(ep, s), 0);
	assert_int_equal(us_shutdown(c, US_SHUT_WR), 0);
	sp_run(5);
	assert_int_equal(ep_once(ep, s), US_EPOLLRDHUP);
	assert_int_equal(ep_once(ep, s), 0);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 0);
	/* Both halves closed: HUP, always reported. */
	assert_int_equal(us_shutdown(s, US_SHUT_WR), 0);
	assert_int_equal(ep_once(ep, s), US_EPOLLRDHUP | US_EPOLLHUP);
	us_close(ep);
	us_close(c);
	us_close(s);
	us_close(l);
}

/* Accepting: the listener is readable while connections wait; maxevents
 * bounds one call and the rest come in the next one. */
static void test_listener_and_maxevents(void **state)
{
	struct sockaddr_in any = sp_addr(0, PORT), to = sp_addr(SP_B_IP, PORT);
	struct us_epoll_event out[8];
	int l, ep, c[3], s;

	(void)state;
	sp_on(&sp.b);
	l = us_socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(us_bind(l, SA(any), sizeof(any)), 0);
	assert_int_equal(us_listen(l, 16), 0);
	ep = ep_new(&sp.b);
	ep_add(ep, l, US_EPOLLIN);
	assert_int_equal(us_epoll_wait(ep, out, 8, 20), 0);
	int aep = ep_new(&sp.a);
	for (int i = 0; i < 3; i++) {
		c[i] = us_socket(AF_INET, SOCK_STREAM, 0);
		assert_fails(us_connect(c[i], SA(to), sizeof(to)), EINPROGRESS);
		ep_add(aep, c[i], US_EPOLLOUT);
	}
	assert_int_equal(us_epoll_wait(ep, out, 8, 100), 1);
	assert_int_equal(out[0].data.fd, l);
	sp_run(10);
	assert_int_equal(us_epoll_wait(aep, out, 2, 0), 2);
	assert_int_equal(us_epoll_wait(aep, out, 8, 0), 3); /* level: all three */
	for (int i = 0; i < 3; i++) {
		s = us_accept(l, NULL, NULL);
		assert_true(s > 0);
		us_close(s);
	}
	assert_int_equal(us_epoll_wait(ep, out, 8, 0), 0);
	us_close(aep);
	us_close(ep);
	for (int i = 0; i < 3; i++)
		us_close(c[i]);
	us_close(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_ctl_errors),
		sp_unit_test(test_level_vs_edge),
		sp_unit_test(test_oneshot_and_mod),
		sp_unit_test(test_rdhup_half_close),
		sp_unit_test(test_listener_and_maxevents),
	};

	h_eal_init("pkt_epoll");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
