/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: libuv timers (uv_timer_*) in the ops table.  Timeouts are
 * relative to the loop time (uv_now(), cached per loop iteration); libuv
 * keeps timers in a binary min-heap.  Real clock only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include <uv.h>

#include "bench.h"

static uv_loop_t loop;
static uv_timer_t *tm;
static unsigned count;

static void cb(uv_timer_t *t)
{
	(void)t;
	bench_count();
}

static uint64_t now_j(void)
{
	return uv_now(&loop);
}

static uint64_t rel(uint64_t expires_j)
{
	uint64_t now = uv_now(&loop);
	return expires_j > now ? expires_j - now : 0;
}

static int setup(unsigned n, enum pw_clock_id clock)
{
	(void)clock;
	if (uv_loop_init(&loop))
		return -ENOMEM;
	tm = calloc(n, sizeof(*tm));
	if (!tm)
		return -ENOMEM;
	count = n;
	for (unsigned i = 0; i < n; i++) {
		uv_timer_init(&loop, &tm[i]);
		uv_timer_start(&tm[i], cb, 1000 + bench_rand() % 9000, 0);
	}
	return 0;
}

static uint64_t poll_due(void)
{
	uint64_t before = bench_fired;
	uv_run(&loop, UV_RUN_NOWAIT);
	return bench_fired - before;
}

static void rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++)
		uv_timer_start(&tm[idx[k]], cb, delta[k], 0);
}

#define UV_OBJ(k) (&tm[k])
static const void *obj(unsigned k)
{
	return UV_OBJ(k);
}
#define UV_ARM(k, jn, d) uv_timer_start(&tm[k], cb, (d), 0)

static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst)
{
	(void)jn;
	BENCH_REARM_BURST(idx, delta, n, jn, burst, UV_OBJ, sizeof(uv_timer_t), UV_ARM);
}

static void rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1)
		uv_timer_start(&tm[first], cb, uv_timer_get_due_in(&tm[first]), 0);
}

static void cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++) {
		uv_timer_stop(&tm[idx[k]]);
		uv_timer_start(&tm[idx[k]], cb, delta[k], 0);
	}
}

static uint64_t expire_round(unsigned n, uint64_t window_j, double *ns)
{
	(void)window_j;
	uint64_t before = bench_fired;
	for (unsigned i = 0; i < n; i++)
		uv_timer_start(&tm[i], cb, 0, 0);
	uint64_t t0 = bench_now_ns();
	while (bench_fired - before < n)
		uv_run(&loop, UV_RUN_NOWAIT);
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void arm(unsigned k, uint64_t expires_j)
{
	uv_timer_start(&tm[k], cb, rel(expires_j), 0);
}

static void cancel(unsigned k)
{
	uv_timer_stop(&tm[k]);
}

static size_t extra(unsigned n)
{
	(void)n;
	return 0; /* libuv's heap is intrusive: the nodes are in uv_timer_t */
}

static void teardown(void)
{
	for (unsigned i = 0; i < count; i++)
		uv_close((uv_handle_t *)&tm[i], NULL);
	uv_run(&loop, UV_RUN_DEFAULT);
	uv_loop_close(&loop);
	free(tm);
	tm = NULL;
}

static const struct bench_impl impl = {
	"libuv", setup, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, sizeof(uv_timer_t), extra, teardown, rearm_burst, obj,
};

const struct bench_impl *bench_impl_libuv(const char **why)
{
	(void)why;
	return &impl;
}
