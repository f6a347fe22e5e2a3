/* stack/api/run.c: the engine loop of DESIGN.md on the real clock: one
 * clock read per iteration, RX burst processed to completion, timers, TX
 * flush, with application handlers running inline; an idle engine backs
 * off.  us_run / us_run_engine loop, us_launch runs one function per
 * engine on its lcore. */
#include <errno.h>
#include <stdio.h>
#include <time.h>

#include <rte_launch.h>
#include <rte_lcore.h>

#include "stack/api/api_priv.h"
#include "userstack.h"

/* One loop iteration; an idle engine backs off (stack/engine/idle.h). */
static void api_poll(struct api_engine *ae)
{
	unsigned frames = us_engine_poll(ae->engine, api_now_ns(ae->st));
	uint64_t ns = us_idle_next(&ae->idle, frames);

	if (ns > 0) {
		struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
				       .tv_nsec = (long)(ns % 1000000000u) };
		nanosleep(&ts, NULL);
	}
}

static uint64_t api_drv_now(void *ctx)
{
	const struct api_engine *ae = ctx;

	return api_now_ns(ae->st);
}

static void api_drv_poll(void *ctx)
{
	api_poll(ctx);
}

struct us_sock_driver api_sock_driver(struct api_engine *ae)
{
	return (struct us_sock_driver){ .now_ns = api_drv_now, .poll = api_drv_poll, .ctx = ae };
}

int us_run_engine(struct us_stack *st, unsigned engine, volatile int *stop)
{
	if (st == NULL || engine >= st->n || st->eng[engine].engine == NULL || stop == NULL) {
		errno = EINVAL;
		return -1;
	}
	while (!*stop)
		api_poll(&st->eng[engine]);
	return 0;
}

/* Runs on engine k's lcore: bind the thread's descriptors, then the
 * application's function. */
static int api_engine_main(void *arg)
{
	struct api_engine *ae = arg;

	us_sock_table_bind_thread(ae->socks);
	ae->rc = ae->fn(ae->st, ae->k, ae->arg);
	return ae->rc;
}

int us_launch(struct us_stack *st, int (*fn)(struct us_stack *st, unsigned engine, void *arg),
	      void *arg)
{
	int rc = 0;

	if (st == NULL || fn == NULL || st->n == 0) {
		errno = EINVAL;
		return -1;
	}
	for (unsigned k = 0; k < st->n; k++) {
		st->eng[k].fn = fn;
		st->eng[k].arg = arg;
		st->eng[k].rc = 0;
	}
	for (unsigned k = 1; k < st->n; k++) {
		if (rte_eal_remote_launch(api_engine_main, &st->eng[k], st->eng[k].lcore) != 0) {
			fprintf(stderr, "userstack: cannot launch engine %u on lcore %u\n", k,
				st->eng[k].lcore);
			st->eng[k].rc = -1;
		}
	}
	/* Engine 0 on the calling (main) lcore; then wait for the others. */
	(void)api_engine_main(&st->eng[0]);
	for (unsigned k = 1; k < st->n; k++)
		if (st->eng[k].rc == 0)
			(void)rte_eal_wait_lcore(st->eng[k].lcore);
	us_sock_table_bind_thread(st->eng[0].socks);
	for (unsigned k = 0; k < st->n; k++)
		if (st->eng[k].rc < 0 && rc == 0)
			rc = -1;
	return rc;
}

static int api_run_one(struct us_stack *st, unsigned engine, void *arg)
{
	return us_run_engine(st, engine, arg);
}

int us_run(struct us_stack *st, volatile int *stop)
{
	if (st == NULL || st->n == 0 || st->eng[0].engine == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (st->n == 1)
		return us_run_engine(st, 0, stop);
	return us_launch(st, api_run_one, (void *)stop);
}
