/* SPDX-License-Identifier: MIT */
/* pinwheel-bench scaling: the multi-thread ops table (see scaling.c). */
#ifndef PW_BENCH_SCALING_H
#define PW_BENCH_SCALING_H

#include <stddef.h>
#include <stdint.h>

struct mt_impl {
	const char *name;
	/* @workers threads, each with @per_worker timers of its own. */
	int (*setup)(unsigned workers, unsigned per_worker);
	int (*enter)(unsigned w);  /* on worker @w's thread, first */
	/* re-arm worker @w's timers idx[] (0..per_worker-1) to now + delta[] ms */
	void (*rearm)(unsigned w, const unsigned *idx, const uint64_t *delta, size_t n);
	void (*poll)(unsigned w);  /* run what is due, as worker @w */
	void (*leave)(unsigned w); /* on worker @w's thread, last */
	void (*teardown)(void);
};

const struct mt_impl *mt_impl_pinwheel(void);
const struct mt_impl *mt_impl_global_lock(void);
const struct mt_impl *mt_impl_push(void);

/* @format: 0 table, 1 JSON, 2 CSV.  Return: the exit status. */
int scaling_main(unsigned max_workers, double seconds, unsigned per_worker, int format,
		 const char *machine);

#endif
