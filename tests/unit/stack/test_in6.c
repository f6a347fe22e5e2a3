/* stack/base/in6.h's text forms, as the telemetry connection listing and
 * the logs print them: an IPv4 endpoint "a.b.c.d:port", an IPv6 one
 * "[addr]:port" with the address in RFC 5952's form, the longest within
 * US_IN6_EPSTRLEN. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "stack/base/in6.h"

static void expect_endpoint(const struct us_in6 *a, uint16_t port, const char *want)
{
	char buf[US_IN6_EPSTRLEN];

	memset(buf, 'x', sizeof(buf));
	us_in6_endpoint_str(a, port, buf, sizeof(buf));
	assert_string_equal(buf, want);
}

static void test_endpoints(void **state)
{
	const struct us_in6 any = { 0 };
	const struct us_in6 ula = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 } };
	/* RFC 5952 4.2.3: the first of two equal runs of zeros is the one
	 * shortened; 4.2.2: a single zero field is not. */
	const struct us_in6 runs = { .b = { 0x20, 0x01, 0x0d, 0xb8, [9] = 1, [15] = 1 } };
	const struct us_in6 one_zero = { .b = { 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1,
						0, 1, 0, 1 } };
	struct us_in6 all;

	(void)state;
	memset(all.b, 0xff, sizeof(all.b));
	all.b[10] = 0xfe; /* not v4-mapped */
	expect_endpoint(&(struct us_in6){ .b = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 2 } }, 80,
			"10.0.0.2:80");
	expect_endpoint(&(struct us_in6){ .b = { [10] = 0xff, [11] = 0xff } }, 0, "0.0.0.0:0");
	expect_endpoint(&any, 8080, "[::]:8080");
	expect_endpoint(&ula, 443, "[fd00:77::2]:443");
	expect_endpoint(&runs, 1, "[2001:db8::1:0:0:1]:1");
	expect_endpoint(&one_zero, 2, "[2001:db8:0:1:1:1:1:1]:2");
	expect_endpoint(&all, 65535, "[ffff:ffff:ffff:ffff:ffff:feff:ffff:ffff]:65535");
}

/* A short buffer is cut, never overrun. */
static void test_short_buffer(void **state)
{
	const struct us_in6 ula = { .b = { 0xfd, 0x00, 0x00, 0x77, [15] = 2 } };
	char buf[12];

	(void)state;
	memset(buf, 'x', sizeof(buf));
	us_in6_endpoint_str(&ula, 443, buf, 8);
	assert_string_equal(buf, "[fd00:7");
	assert_int_equal(buf[8], 'x');
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_endpoints),
		cmocka_unit_test(test_short_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
