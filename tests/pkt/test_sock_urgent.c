/* Urgent data through the socket API between two engines in virtual time
 * (sock_pair.c), as Linux's sockets show it (tcp(7) "Urgent data",
 * RFC 9293 3.8.5): send(MSG_OOB) makes its last byte urgent; the receiver
 * learns of it asynchronously (EPOLLPRI, MUST-32), reads up to the mark
 * (SIOCATMARK) and the byte with recv(MSG_OOB); SO_OOBINLINE leaves it in
 * the stream. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "tests/pkt/sock_pair.h"
#include "tests/unit/stack/harness.h"

#define PORT 80
#define TH_URG 0x20

static int at_mark(int fd)
{
	int v = -1;

	assert_int_equal(us_ioctl(fd, US_SIOCATMARK, &v), 0);
	return v;
}

/* MSG_OOB out, EPOLLPRI, SIOCATMARK and MSG_OOB in (MUST-30..33). */
static void test_oob_byte(void **state)
{
	int l, c, s;
	char buf[16];

	(void)state;
	l = sp_listen_b(PORT, NULL);
	sp_pair(l, PORT, NULL, &c, &s);
	sp_log_clear(&sp.a);
	assert_int_equal(us_send(c, "ab", 2, 0), 2);
	assert_int_equal(us_send(c, "c", 1, US_MSG_OOB), 1);
	assert_int_equal(us_send(c, "de", 2, 0), 2);
	assert_true(sp_wait_events(&sp.b, s, US_EPOLLPRI, 50) & US_EPOLLPRI);
	sp_run(50);
	assert_true(sp_log_count(&sp.a, TH_URG, 0) >= 1);
	sp_on(&sp.b);
	assert_int_equal(at_mark(s), 0);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 2); /* stops at the mark */
	assert_memory_equal(buf, "ab", 2);
	assert_int_equal(at_mark(s), 1);
	assert_int_equal(us_recv(s, buf, 1, US_MSG_OOB), 1);
	assert_int_equal(buf[0], 'c');
	assert_fails(us_recv(s, buf, 1, US_MSG_OOB), EINVAL); /* read already */
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 2);
	assert_memory_equal(buf, "de", 2);
	assert_int_equal(at_mark(s), 0);
	assert_fails(us_recv(s, buf, 1, US_MSG_OOB), EINVAL); /* none */
	sp_on(&sp.a);
	sp_close3(c, s, l);
}

static void oobinline(int fd)
{
	sp_set_int(fd, US_SOL_SOCKET, US_SO_OOBINLINE, 1);
}

/* SO_OOBINLINE (inherited from the listener): the byte stays in the
 * stream, MSG_OOB is EINVAL; EPOLLPRI still says it came.  UDP has no
 * urgent data (EOPNOTSUPP), a listener no mark (EINVAL). */
static void test_oobinline_and_errors(void **state)
{
	int l, c, s, u;
	char buf[16];

	(void)state;
	l = sp_listen_b(PORT, oobinline);
	sp_pair(l, PORT, NULL, &c, &s);
	assert_int_equal(us_send(c, "xy", 2, US_MSG_OOB), 2);
	assert_true(sp_wait_events(&sp.b, s, US_EPOLLPRI, 50) & US_EPOLLPRI);
	sp_run(50);
	sp_on(&sp.b);
	assert_int_equal(sp_get_int(s, US_SOL_SOCKET, US_SO_OOBINLINE), 1);
	assert_fails(us_recv(s, buf, 1, US_MSG_OOB), EINVAL);
	assert_int_equal(us_recv(s, buf, sizeof(buf), 0), 1);
	assert_int_equal(at_mark(s), 1);
	assert_int_equal(us_recv(s, buf + 1, sizeof(buf) - 1, 0), 1);
	assert_memory_equal(buf, "xy", 2);
	assert_fails(us_ioctl(l, US_SIOCATMARK, &u), EINVAL);
	sp_on(&sp.a);
	assert_int_equal(sp_get_int(c, US_SOL_SOCKET, US_SO_OOBINLINE), 0);
	u = us_socket(AF_INET, SOCK_DGRAM, 0);
	assert_fails(us_send(u, "z", 1, US_MSG_OOB), EOPNOTSUPP);
	us_close(u);
	sp_close3(c, s, l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		sp_unit_test(test_oob_byte),
		sp_unit_test(test_oobinline_and_errors),
	};

	h_eal_init("pkt_sock_urgent");
	return cmocka_run_group_tests(tests, NULL, NULL);
}
