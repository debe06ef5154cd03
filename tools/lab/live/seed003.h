/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed003's two halves: the experiment (seed003.c: the
 * configurations, their runs round by round, the table, claims and
 * summary) and one configuration's run (seed003_run.c: the packets, the
 * driver, the load, the measurement).  What they share: the device's
 * geometry, a configuration, what a run measured.
 *
 * Threads: the main thread (see seed003.c's head).
 */
#ifndef PW_LAB_SEED003_H
#define PW_LAB_SEED003_H

#include <stdint.h>

#include <pinwheel/pinwheel.h>

#include "../lab.h"

#define NQ 8
#define PKT_LEN 1514u
#define MAX_CPUS 256

/* Each netem's configured delay, ms: lab_seed003_script's (seed003_script.c,
 * shared with the model, model_seed003.c).  Constant. */
extern const unsigned s3_delay_ms[NQ];

struct s3_config {
	const char *name, *key;
	enum pw_migration policy;
	int pinned;
	const char *seed_fig;
	double seed_pct; /* NAN: the seed has no such configuration */
	int trend;         /* a trend row: 8 CPUs, one per queue */
};

/* What one configuration measured (main thread). */
struct s3_out {
	double secs;
	double qwait_share, tlock_share, contended_pct, spin_share;
	int prof_ok;
	double sent_s, offered_s, pushed_s;
	double foreign_pct;
	double cpu_share[MAX_CPUS + 1];
	double worst_err_ms;
	unsigned worst_q;
	double mean_ms[NQ], max_ms[NQ], min_ms[NQ];
	unsigned pps, ncpus;
	double poll_gap_ms, steal_pct, cpu0_ran_pct;
	uint64_t cpu0_vol;
	uint64_t offered, late, pool_empty;
	struct lab_run *run;  /* the run's record (r->run[row][k]) */
};

/* One run of a configuration, on a fresh runtime and device, measured
 * for o->seconds into row @row (its series from @t_off on; @what names the
 * run on the progress line).  Main thread.
 * Return: 0 or -errno (setup failed; the message is on stderr). */
int s3_run_config(const struct lab_opts *o, struct lab_result *r, unsigned row,
		  const struct s3_config *cf, double t_off, const char *what, struct s3_out *out);

#endif
