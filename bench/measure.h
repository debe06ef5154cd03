/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: the measurement of one cell (measure.c). */
#ifndef PW_BENCH_MEASURE_H
#define PW_BENCH_MEASURE_H

#include "bench.h"
#include "conn_mix.h"
#include "options.h"

/* One cell: an implementation, a workload, a number of pending timers. */
struct result {
	const char *impl, *workload;
	unsigned pending;
	double median, min; /* ns per op, or bytes per timer for memory */
	double rss_per_1e6; /* memory: resident bytes per 1e6 timers */
	unsigned reps;
	uint64_t ops;
	unsigned burst; /* rearm_burst: timers a burst (0 for the others) */
};

/* Measure workload @wl of @im at @n pending timers, as @o says, into *@res.
 * Return: 0, or a negative errno (after a message). */
int run_cell(const struct bench_impl *im, const char *wl, unsigned n, const struct opts *o,
	     struct result *res);

/* The measured loops: @ops operations of workload @kind (0 rearm,
 * 1 rearm_same, 2 cancel_add, 3 conn_mix, from @seq, 4 rearm_burst, in
 * bursts of @burst, 5 rearm_hot).  Not inlined, and by this name: valgrind
 * --tool=callgrind --toggle-collect=bench_measured counts it alone.
 * Return: rearm_hot's timed ns (its re-arms only); 0 for the others. */
__attribute__((noinline)) double bench_measured(const struct bench_impl *im, int kind, unsigned n,
						const unsigned *idx, const uint64_t *delta,
						const struct cm_op *seq, uint64_t ops, unsigned burst);

#endif /* PW_BENCH_MEASURE_H */
