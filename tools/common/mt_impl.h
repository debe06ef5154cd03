/* SPDX-License-Identifier: MIT */
/*
 * The multi-thread timer ops table: what pinwheel-bench scaling
 * (bench/scaling.c) and pinwheel-lab seed001 drive a timer design through,
 * one worker thread per index.  Implemented by the bench for pinwheel
 * (bench/impl_pinwheel.c) and by the 2.4 reference design (gl24.c), which
 * the lab shares.  Threads: setup and teardown on the thread that runs the
 * configuration; enter, rearm, poll and leave on worker @w's own thread.
 */
#ifndef PW_COMMON_MT_IMPL_H
#define PW_COMMON_MT_IMPL_H

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

#endif /* PW_COMMON_MT_IMPL_H */
