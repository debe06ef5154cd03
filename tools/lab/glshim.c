/* SPDX-License-Identifier: MIT */
/*
 * What bench/impl_global_lock.c (the 2.4 global-lock timer design that
 * seed001 runs as its first configuration) takes from pinwheel-bench's
 * harness, which pinwheel-lab does not link: the callback counter, the
 * clock and the random numbers of its initial arms.
 *
 * Threads: bench_now_ns() any thread; bench_rand() is called by the
 * design's setup only (main thread); bench_fired is incremented by the
 * design's callbacks, whichever thread runs them (a plain counter, as in
 * the bench: seed001 reads it only as an upper bound).  No locks.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <time.h>

#include "../../bench/bench.h"

uint64_t bench_fired;

static uint64_t shim_rng = 0x9e3779b97f4a7c15ull;

/* Context: main thread (the design's setup). */
uint64_t bench_rand(void)
{
	/* xorshift64* */
	shim_rng ^= shim_rng >> 12;
	shim_rng ^= shim_rng << 25;
	shim_rng ^= shim_rng >> 27;
	return shim_rng * 0x2545f4914f6cdd1dull;
}

/* Context: any thread.  CLOCK_MONOTONIC, as the bench's. */
uint64_t bench_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
