/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: the command line (options.c). */
#ifndef PW_BENCH_OPTIONS_H
#define PW_BENCH_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "registry.h"

#define MAX_SIZES 16
#define MAX_REPS 101

/* The main benchmark's options. */
struct opts {
	unsigned sizes[MAX_SIZES], nsizes;
	const char *wls[NWL];
	unsigned nwl;
	bool use_impl[NREG]; /* by bench_registry index */
	uint64_t reps, ops;
	int format; /* 0 table, 1 json, 2 csv */
	bool callgrind;
	bool quiet; /* no progress lines */
	enum pw_clock_id clock;
	uint64_t burst;    /* rearm_burst: timers a burst (--burst) */
	uint64_t prefetch; /* rearm_burst: the loop's prefetch distance D (--prefetch) */
	bool burst_calls;  /* rearm_burst: pinwheel through pw_mod_timer() calls (--burst-calls) */
};

void usage(FILE *f);

/* The main benchmark's options, defaults filled in; --help prints the usage
 * and exits.  Return: 0, or -1 after a message and the usage on stderr. */
int parse_args(int argc, char **argv, struct opts *o);

/* One numeric option of a subcommand (lateness, scaling, idle, wake). */
struct num_opt {
	const char *name;
	uint64_t lo, hi;
	uint64_t *val;
};

/* Parse the options of subcommand argv[1]: --json (*@format = 1), --csv (2,
 * if @csv_ok), --quiet and the @n numeric ones, then start the progress
 * lines (progress_init(), off with --quiet).  Return: 0, or -1 after a
 * message naming the bad option or value. */
int parse_sub(int argc, char **argv, const struct num_opt *nums, unsigned n, bool csv_ok,
	      int *format);

#endif /* PW_BENCH_OPTIONS_H */
