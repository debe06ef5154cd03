/* SPDX-License-Identifier: MIT */
/*
 * The one ops table every implementation in pinwheel-bench plugs into, and
 * what the harness (measure.c) shares with the implementations.
 *
 * Time unit of the table: ticks of 1 ms ("jiffies" at HZ = 1000), in the
 * implementation's own loop time (now_j()); expiries are absolute ticks.
 * Batches are handed over whole so that each operation is the library's
 * own call (inlined where the library inlines it), not an indirect call of
 * the harness; conn_mix uses the single-operation calls.
 */
#ifndef PW_BENCH_BENCH_H
#define PW_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/pinwheel.h>

#include "burst.h"

struct bench_impl {
	const char *name;
	/* @n timers, each armed at a random expiry 1-10 s out.  @clock: the
	 * clock to run on where the library can simulate one. */
	int (*setup)(unsigned n, enum pw_clock_id clock);
	uint64_t (*now_j)(void);
	uint64_t (*poll)(void); /* one loop iteration: run what is due */
	void (*rearm)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j);
	void (*rearm_same)(unsigned first, size_t n); /* timers first.. (wrapping) */
	void (*cancel_add)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j);
	/* Arm all @n timers due within @window_j ticks, then run them; the
	 * run alone is timed into *@ns.  Return: callbacks run. */
	uint64_t (*expire_round)(unsigned n, uint64_t window_j, double *ns);
	void (*arm)(unsigned k, uint64_t expires_j); /* (re)arm timer k */
	void (*cancel)(unsigned k);
	size_t timer_bytes;                 /* the object the caller holds per timer */
	size_t (*extra_bytes)(unsigned n);  /* what the structure adds for n pending */
	void (*teardown)(void);
	/* rearm's re-arms (timer idx[k] to now_j + delta[k]) in bursts of
	 * @burst, each burst through BENCH_REARM_BURST() (below) */
	void (*rearm_burst)(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t now_j,
			    unsigned burst);
	/* the caller's object of timer k (timer_bytes long): what rearm_hot
	 * touches before the re-arms, and what rearm_burst prefetches */
	const void *(*obj)(unsigned k);
};

/* Implementations.  Weak: one whose library was not found at configure time
 * is not linked, and its getter is NULL.  A getter may also return NULL and
 * say why (DPDK's EAL may refuse to start). */
#define BENCH_IMPL(fn) __attribute__((weak)) const struct bench_impl *fn(const char **why)
BENCH_IMPL(bench_impl_pinwheel);
BENCH_IMPL(bench_impl_pinwheel_hrtimer);
BENCH_IMPL(bench_impl_libevent);
BENCH_IMPL(bench_impl_libuv);
BENCH_IMPL(bench_impl_libev);
BENCH_IMPL(bench_impl_dpdk);
BENCH_IMPL(bench_impl_heap);
BENCH_IMPL(bench_impl_heap4);
BENCH_IMPL(bench_impl_global_lock);

extern uint64_t bench_fired; /* callbacks run, by every implementation but
			      * global-lock (tools/common/gl24.c counts its own) */

/* now_ns() (tools/common/now.h), out of line: what the implementations
 * time with. */
uint64_t bench_now_ns(void);
uint64_t bench_rand(void);

static inline void bench_count(void)
{
	bench_fired++;
}

/*
 * The rearm_burst workload: a receive loop's re-arms, a burst at a time
 * (NAPI's budget, DPDK's rx_burst of 32), each burst's timers known when
 * the burst starts.  Every implementation runs the same loop with the
 * same software prefetch of the caller's timer objects, so that what
 * differs is the library: for each burst, the objects of its first D
 * timers are prefetched, then timer i is re-armed after the object of
 * timer i + D was (D = bench_prefetch, --prefetch; 0: none).  The
 * implementations whose library has a burst call (pinwheel:
 * pw_mod_timers()) hand it the burst instead of the per-timer loop, after
 * the same first D; what the library then prefetches is its own.
 */
#define BENCH_BURST_MAX HARNESS_BURST_MAX
extern unsigned bench_prefetch; /* D, above */
/* --burst-calls: pinwheel runs the per-timer loop too (pw_mod_timer()), for
 * comparison with its burst call */
extern bool bench_burst_calls;

/* The loop itself lives in tools/common/burst.h (the 2.4 design runs it
 * too); here with D = bench_prefetch. */
#define BENCH_BURST_HEAD(bidx, m, OBJ, size) HARNESS_BURST_HEAD(bidx, m, bench_prefetch, OBJ, size)
#define BENCH_REARM_BURST(idx, delta, n, jn, burst, OBJ, size, ARM)                     \
	HARNESS_REARM_BURST(idx, delta, n, jn, burst, bench_prefetch, OBJ, size, ARM)

#endif /* PW_BENCH_BENCH_H */
