/* SPDX-License-Identifier: MIT */
/*
 * The Linux 2.4 timer design, the reference pinwheel-bench compares with
 * (implementation "global-lock", and the scaling run's) and pinwheel-lab
 * seed001 runs as its configuration (a): one cascading wheel behind one
 * global lock (timerlist_lock), no mod_timer fast path.  gl24.c owns it;
 * the bench adapts it to its ops table (bench/impl_global_lock.c).
 *
 * Threads: the single-thread calls (gl24_ops) on one thread at a time;
 * the multi-thread table (gl24_mt_impl()) as struct mt_impl says, every
 * worker through the one spin lock.  gl24_set_rand() before setup.
 */
#ifndef PW_COMMON_GL24_H
#define PW_COMMON_GL24_H

#include <stddef.h>
#include <stdint.h>

#include <pinwheel/pinwheel.h>

#include "mt_impl.h"

/* Callbacks the design ran (a plain counter: the runs that read it have
 * one thread running the wheel at a time). */
extern uint64_t gl24_fired;

/* The random numbers of the initial arms (setup) and of expire_round's:
 * @rand, or, with NULL (the default), the design's own xorshift64*
 * stream.  Context: the thread that then calls setup. */
void gl24_set_rand(uint64_t (*rand)(void));

/* The single-thread calls, in the shapes of pinwheel-bench's ops table
 * (bench/bench.h, struct bench_impl, which says what each does); time in
 * ticks of 1 ms. */
struct gl24_ops {
	int (*setup)(unsigned n, enum pw_clock_id clock);
	uint64_t (*now_j)(void);
	uint64_t (*poll)(void);
	void (*rearm)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j);
	void (*rearm_same)(unsigned first, size_t n);
	void (*cancel_add)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j);
	uint64_t (*expire_round)(unsigned n, uint64_t window_j, double *ns);
	void (*arm)(unsigned k, uint64_t expires_j);
	void (*cancel)(unsigned k);
	size_t timer_bytes;
	size_t (*extra_bytes)(unsigned n);
	void (*teardown)(void);
	/* rearm's re-arms in bursts of @burst through the shared loop
	 * (burst.h), prefetching @prefetch timers ahead */
	void (*rearm_burst)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j,
			    unsigned burst, unsigned prefetch);
	const void *(*obj)(unsigned k); /* timer k, timer_bytes long */
};
extern const struct gl24_ops gl24_ops;

/* The multi-thread table: every worker's timers in the one wheel. */
const struct mt_impl *gl24_mt_impl(void);

#endif /* PW_COMMON_GL24_H */
