/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench's "global-lock": the Linux 2.4 reference design
 * (tools/common/gl24.c, which pinwheel-lab seed001 shares) through the
 * bench's ops table, and its multi-thread table for the scaling run.  The
 * design's random arms draw from the bench's stream (bench_rand()), as the
 * other implementations' do; its callbacks count in gl24_fired (its
 * expire_round reports them).
 * Threads: the getters on the main thread, before the runs.  No locks.
 */
#define _GNU_SOURCE
#include "bench.h"
#include "gl24.h"
#include "scaling.h"

static struct bench_impl global_lock;

/* rearm_burst: the same loop as every design's (tools/common/burst.h),
 * run inside gl24.c, which keeps its timers, with the bench's prefetch. */
static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst)
{
	gl24_ops.rearm_burst(idx, delta, n, jn, burst, bench_prefetch);
}

const struct bench_impl *bench_impl_global_lock(const char **why)
{
	(void)why;
	const struct gl24_ops *o = &gl24_ops;
	gl24_set_rand(bench_rand);
	global_lock = (struct bench_impl){
		"global-lock", o->setup, o->now_j, o->poll, o->rearm, o->rearm_same,
		o->cancel_add, o->expire_round, o->arm, o->cancel, o->timer_bytes,
		o->extra_bytes, o->teardown, rearm_burst, o->obj,
	};
	return &global_lock;
}

const struct mt_impl *mt_impl_global_lock(void)
{
	gl24_set_rand(bench_rand);
	return gl24_mt_impl();
}
