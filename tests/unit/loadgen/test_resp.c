/* apps/loadgen/resp.c: where a response head ends (also split at every
 * byte), its status, Content-Length and Connection: close, and the heads
 * it refuses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "apps/loadgen/resp.h"

/* us-httpecho's own head (apps/httpecho/http.c http_echo_head). */
static const char echo_head[] = "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"
				"Content-Length: 64\r\n\r\n";

static void test_head_end(void **state)
{
	struct lg_resp_head h;
	char buf[256];
	size_t len = strlen(echo_head);

	(void)state;
	assert_int_equal(lg_head_scan(echo_head, len, &h), len);
	/* Body bytes after it, even a CRLF CRLF in the body, change nothing. */
	memcpy(buf, echo_head, len);
	memcpy(buf + len, "ab\r\n\r\n", 6);
	assert_int_equal(lg_head_scan(buf, len + 6, &h), len);
	/* A bare LF LF or CR CR is no end (only CRLF CRLF). */
	assert_int_equal(lg_head_scan("HTTP/1.1 200 OK\n\n", 17, &h), 0);
	assert_int_equal(lg_head_scan("HTTP/1.1 200 OK\r\r\r\r", 19, &h), 0);
	assert_int_equal(lg_head_scan("HTTP/1.1 200 OK\r\nContent-Length: 1\n\r\n", 37, &h), 0);
	assert_int_equal(lg_head_scan("\r\n\r\n", 4, &h), -1);
}

/* Every proper prefix is incomplete (the head arriving in two pieces split
 * at any byte is walked again whole), and none is called malformed. */
static void test_head_end_split(void **state)
{
	struct lg_resp_head h;
	size_t len = strlen(echo_head);

	(void)state;
	for (size_t k = 0; k < len; k++)
		assert_int_equal(lg_head_scan(echo_head, k, &h), 0);
	assert_int_equal(lg_head_scan(echo_head, len, &h), len);
	assert_int_equal(h.clen, 64);
}

static void test_parse_echo(void **state)
{
	struct lg_resp_head h;
	static const char closing[] = "HTTP/1.1 201 Created\r\ncontent-length:\t 1048576 \r\n"
				      "X-Other: c\r\nCONNECTION: Close\r\n\r\n";

	(void)state;
	assert_int_equal(lg_head_scan(echo_head, strlen(echo_head), &h), (long)strlen(echo_head));
	assert_int_equal(h.status, 200);
	assert_int_equal(h.clen, 64);
	assert_false(h.close);
	assert_int_equal(lg_head_scan(closing, strlen(closing), &h), (long)strlen(closing));
	assert_int_equal(h.status, 201);
	assert_int_equal(h.clen, 1048576);
	assert_true(h.close);
}

static void test_parse_status(void **state)
{
	struct lg_resp_head h;
	static const struct {
		const char *head;
		int rc, status;
	} cases[] = {
		{ "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 0, 404 },
		{ "HTTP/1.0 999 \r\nContent-Length: 0\r\n\r\n", 0, 999 },
		{ "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", 0, 200 },
		{ "HTTP/1.1 099 x\r\nContent-Length: 0\r\n\r\n", -1, 0 },
		{ "HTTP/1.1 2000 x\r\nContent-Length: 0\r\n\r\n", -1, 0 },
		{ "HTTP/1.1 abc x\r\nContent-Length: 0\r\n\r\n", -1, 0 },
		{ "HTTP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", -1, 0 },
		{ "HTTP/1.1-200 OK\r\nContent-Length: 0\r\n\r\n", -1, 0 },
		{ "HTTP/1.1 2\r\n\r\n", -1, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		h.status = 0;
		long want = cases[i].rc == 0 ? (long)strlen(cases[i].head) : -1;

		assert_int_equal(lg_head_scan(cases[i].head, strlen(cases[i].head), &h), want);
		if (cases[i].rc == 0)
			assert_int_equal(h.status, cases[i].status);
	}
}

static void test_parse_length(void **state)
{
	struct lg_resp_head h;
	static const char *bad[] = {
		"HTTP/1.1 200 OK\r\n\r\n",                               /* none */
		"HTTP/1.1 200 OK\r\nContent-Type: x\r\n\r\n",            /* none */
		"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",          /* no digits */
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",         /* sign */
		"HTTP/1.1 200 OK\r\nContent-Length: 12345678901234567890\r\n\r\n", /* 20 digits */
		"HTTP/1.1 200 OK\r\nX-Content-Length: 5\r\n\r\n",        /* another field */
		"HTTP/1.1 200 OK\r\nContent_Length: 5\r\n\r\n",          /* '_' is no '-' */
		"HTTP/1.1 200 OK\r\nContent-Lengt: 5\r\n\r\n",           /* near miss */
		"HTTP/1.1 200 OK\r\nContent-Length\r: 5\r\n\r\n",       /* CR is no ':' */
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(lg_head_scan(bad[i], strlen(bad[i]), &h), -1);
	assert_int_equal(lg_head_scan("HTTP/1.1 200 OK\r\nContent-Length: 9223372036854775807"
				       "\r\n\r\n", 56, &h), 56);
	assert_true(h.clen == 9223372036854775807ull);
	/* Field names in any case (RFC 9110 5.1). */
	assert_int_equal(lg_head_scan("HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: 7\r\n"
				       "cONNECTION: CLOSE\r\n\r\n", 57, &h), 57);
	assert_int_equal(h.clen, 7);
	assert_true(h.close);
	/* Connection: keep-alive is no close. */
	assert_int_equal(lg_head_scan("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n"
				       "Content-Length: 3\r\n\r\n", 62, &h), 62);
	assert_false(h.close);
	assert_int_equal(h.clen, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_head_end),
		cmocka_unit_test(test_head_end_split),
		cmocka_unit_test(test_parse_echo),
		cmocka_unit_test(test_parse_status),
		cmocka_unit_test(test_parse_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
