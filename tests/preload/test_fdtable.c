/* preload/fdtable: numbers to userstack files, dup counting, bounds. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>

#include <cmocka.h>

#include "preload/fdtable.h"

static void test_attach_get_detach(void **state)
{
	struct pl_file *f = pl_file_new(PL_SOCK, 7);

	(void)state;
	assert_non_null(f);
	assert_null(pl_fd_get(10));
	assert_int_equal(pl_fd_attach(10, f), 0);
	assert_ptr_equal(pl_fd_get(10), f);
	assert_int_equal(f->refs, 1);
	assert_int_equal(f->usfd, 7);
	assert_false(f->nonblock);
	assert_int_equal(pl_fd_count(), 1);
	assert_ptr_equal(pl_fd_detach(10), f);
	assert_int_equal(f->refs, 0);
	assert_null(pl_fd_get(10));
	assert_null(pl_fd_detach(10));
	assert_int_equal(pl_fd_count(), 0);
	free(f);
}

/* dup: two numbers, one file; the file outlives the first close. */
static void test_two_numbers_one_file(void **state)
{
	struct pl_file *f = pl_file_new(PL_SOCK, 3);

	(void)state;
	assert_int_equal(pl_fd_attach(20, f), 0);
	assert_int_equal(pl_fd_attach(21, f), 0);
	assert_int_equal(f->refs, 2);
	f->nonblock = true; /* O_NONBLOCK is the file's: both numbers see it */
	assert_true(pl_fd_get(21)->nonblock);
	assert_ptr_equal(pl_fd_detach(20), f);
	assert_int_equal(f->refs, 1);
	assert_ptr_equal(pl_fd_get(21), f);
	assert_ptr_equal(pl_fd_detach(21), f);
	assert_int_equal(f->refs, 0);
	assert_int_equal(pl_fd_count(), 0);
	free(f);
}

static void test_bounds_and_taken(void **state)
{
	struct pl_file *f = pl_file_new(PL_EPOLL, -1), *g = pl_file_new(PL_SOCK, 1);

	(void)state;
	assert_int_equal(pl_fd_attach(-1, f), -EBADF);
	assert_int_equal(pl_fd_attach(PL_FD_MAX, f), -EBADF);
	assert_null(pl_fd_get(-5));
	assert_null(pl_fd_get(PL_FD_MAX + 3));
	assert_int_equal(pl_fd_attach(PL_FD_MAX - 1, f), 0);
	assert_int_equal(pl_fd_attach(PL_FD_MAX - 1, g), -EEXIST);
	assert_int_equal(g->refs, 0);
	assert_ptr_equal(pl_fd_get(PL_FD_MAX - 1), f);
	assert_int_equal(pl_fd_get(PL_FD_MAX - 1)->kind, PL_EPOLL);
	assert_ptr_equal(pl_fd_detach(PL_FD_MAX - 1), f);
	assert_int_equal(pl_fd_count(), 0);
	free(f);
	free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_attach_get_detach),
		cmocka_unit_test(test_two_numbers_one_file),
		cmocka_unit_test(test_bounds_and_taken),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
