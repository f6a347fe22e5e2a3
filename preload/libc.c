/* preload/libc.c: the next definition of each call we interpose, the C
 * library's, looked up once. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload/libc.h"

static struct pl_libc pl_real;
static volatile int pl_resolved;

/* A call we need and cannot find makes every later call meaningless: say
 * which and stop (this is at load time, before the application ran). */
static void *pl_sym(const char *name)
{
	void *p = dlsym(RTLD_NEXT, name);

	if (p == NULL) {
		fprintf(stderr, "userstack-preload: the C library has no %s: cannot run\n", name);
		abort();
	}
	return p;
}

static void pl_resolve(void)
{
#define PL_LIBC_LOOKUP(name, ret, params) pl_real.name = (ret(*) params)pl_sym(#name);
	PL_LIBC_CALLS(PL_LIBC_LOOKUP)
#undef PL_LIBC_LOOKUP
	__atomic_store_n(&pl_resolved, 1, __ATOMIC_RELEASE);
}

__attribute__((constructor)) static void pl_libc_init(void)
{
	pl_resolve();
}

const struct pl_libc *pl_libc(void)
{
	if (!__atomic_load_n(&pl_resolved, __ATOMIC_ACQUIRE))
		pl_resolve();
	return &pl_real;
}
