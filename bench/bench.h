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

#include <stddef.h>
#include <stdint.h>

#include <pinwheel/pinwheel.h>

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

#endif /* PW_BENCH_BENCH_H */
