/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed001's two halves: the experiment (seed001.c: the
 * configurations, their runs round by round, the table, claims and
 * summary) and one configuration's run (seed001_run.c: the receiving
 * threads and their per-packet path, the profile read back).  What they
 * share: the configurations, the clock's HZ and the profiler's rate, what
 * a run measured.
 *
 * Threads: the main thread (see seed001.c's head).
 */
#ifndef PW_LAB_SEED001_H
#define PW_LAB_SEED001_H

#include <stdint.h>

#include "../lab.h"

#define HZ 1000
#define DELACK_MS 40
#define KEEPALIVE_S 7200
#define FRAME 1500
#define RING 32      /* frames in a thread's fake NIC ring */
#define BATCH 16     /* packets per poll of the clock for due timers */
#define PROF_HZ 997

enum cfg { CFG_GL, CFG_SLOW, CFG_FAST };

/* What one run measured (main thread, after the join). */
struct rx_figures {
	struct lab_run *run;        /* the run's record (r->run[row][k]) */
	double pps, pps_thread, seconds;
	uint64_t packets, armed, fast_path, same_bucket, lock_waits;
	uint64_t delacks, drained, max_late;
	double timer_share, mt_share, cpu_s, copy_share, unknown_share;
	unsigned long mt_ticks;
	int mt_rank;
	char mt_name[64];
	unsigned long ticks;
};

/* Run configuration @cfg with @nthreads threads for @seconds into row
 * @row of @r (its series from @t_off on; @what names the run on the
 * progress line).  Context: main thread.  Return: 0 or -errno (setup). */
int s1_run_config(const struct lab_opts *o, struct lab_result *r, unsigned row, enum cfg cfg,
		  unsigned nthreads, unsigned nsock, double seconds, double t_off, const char *what,
		  struct rx_figures *fig);

#endif
