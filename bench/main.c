/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: main(), the dispatch of the subcommands and the loop over
 * the cells of the main benchmark.  Elsewhere: options.c (the command
 * line), registry.c (implementations and workloads by name), measure.c (one
 * cell), conn_mix.c (its sequence), report.c (table, JSON, CSV), progress.c
 * (the progress lines on stderr), lateness.c, scaling.c, idle.c, wake.c,
 * net.c, overlap.c (the subcommands), impl_*.c (the implementations).
 *
 * The benchmark: the timer operations network code does all day, for
 * pinwheel and its peers side by side, through one ops table (bench.h).
 * A benchmark, not a test: it prints numbers and judges nothing.
 *
 * Implementations: pinwheel (wheel timers), pinwheel-hrtimer, libevent,
 * libuv, libev, dpdk (rte_timer), and two reference designs written here:
 * heap (a binary min-heap: what the event loops use; heap4, its 4-ary
 * variant) and global-lock (the Linux 2.4 design: one cascading wheel
 * behind one lock, no mod_timer fast path).  Peers are found at configure
 * time; a missing one is listed as skipped, with the reason.
 *
 * Workloads, each at every --sizes count of pending timers:
 *   rearm       re-arm a random timer to a random expiry 1-10 s out (the TCP
 *               retransmit pattern).
 *   rearm_same  re-arm a timer to the expiry it already has (the mod_timer
 *               fast path of seed 001); timers visited in order, so this
 *               measures the call, not a cache miss per timer.
 *   cancel_add  cancel + add a random timer, random expiry.
 *   expire      N timers due; run them all; per-timer cost, callback
 *               included.  Libraries that can simulate time (pinwheel, the
 *               reference designs) spread the N over 1 s and step the clock;
 *               the real-clock peers arm all N already due and run one pass.
 *   conn_mix    connections of four timers each: a pace timer re-armed per
 *               message, a deadline pushed later on every response and
 *               cancelled at the end, an idle timer re-armed per message, a
 *               close timer armed at the end; one seeded sequence, replayed
 *               identically against every implementation (nothing is run
 *               during the replay, so every implementation does the same
 *               calls).  ns per timer call.
 *   rearm_burst rearm's re-arms in bursts of --burst (32; NAPI's budget,
 *               DPDK's rx_burst), as a receive loop makes them: every
 *               implementation through the one loop of bench.h, which
 *               prefetches the caller's timer objects --prefetch D ahead;
 *               pinwheel hands each burst to pw_mod_timers().  ns per timer.
 *   rearm_hot   rearm's re-arms of timers whose objects the caller has just
 *               touched, as a stack re-arms a socket's timer after
 *               processing its packet: each batch of 256 reads its timers'
 *               objects first (untimed, then a fence), then re-arms them
 *               (timed); the timer's lines are in the cache, its bucket
 *               neighbours are not.  ns per re-arm.
 *   memory      bytes per pending timer (the caller's object + what the
 *               structure adds), and the resident memory per 1e6 timers.
 * The operations run as an event loop runs them: the loop time is read once
 * per batch of 256 and expiries are computed from it, then what is due runs.
 * Each measurement is repeated (--reps, >= 5 by default): the median and
 * the minimum are printed, so noise is visible.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "idle.h"
#include "lateness.h"
#include "measure.h"
#include "net.h"
#include "options.h"
#include "overlap.h"
#include "progress.h"
#include "registry.h"
#include "report.h"
#include "scaling.h"
#include "wake.h"

#define MAX_RESULTS 1024

static struct result results[MAX_RESULTS];

/* A subcommand (argv[1]), or -1 when argv[1] is none.  Return: the exit
 * status. */
static int subcommand(int argc, char **argv, const char *mach)
{
	int format = 0;
	if (!strcmp(argv[1], "lateness")) {
		uint64_t samples = 10000;
		const struct num_opt nums[] = {{"--samples", 10, 10000000, &samples}};
		if (parse_sub(argc, argv, nums, 1, false, &format))
			return 2;
		return lateness_main((unsigned)samples, format == 1, mach);
	}
	if (!strcmp(argv[1], "scaling")) {
		uint64_t workers = (uint64_t)sysconf(_SC_NPROCESSORS_ONLN), per = 10000, ms = 1000;
		const struct num_opt nums[] = {{"--workers", 1, 1024, &workers},
					       {"--timers", 1, 10000000, &per},
					       {"--ms", 10, 600000, &ms}};
		if (parse_sub(argc, argv, nums, 3, true, &format))
			return 2;
		return scaling_main((unsigned)workers, (double)ms / 1000.0, (unsigned)per, format, mach);
	}
	if (!strcmp(argv[1], "wake")) {
		uint64_t rounds = 20000;
		const struct num_opt nums[] = {{"--rounds", 1, 100000000, &rounds}};
		if (parse_sub(argc, argv, nums, 1, false, &format))
			return 2;
		return wake_main((unsigned)rounds, format == 1, mach);
	}
	if (!strcmp(argv[1], "idle")) {
		long online = sysconf(_SC_NPROCESSORS_ONLN);
		uint64_t cpus = online > 2 ? (uint64_t)online : 2, ms = 2000;
		const struct num_opt nums[] = {{"--cpus", 2, 4096, &cpus}, {"--ms", 10, 600000, &ms}};
		if (parse_sub(argc, argv, nums, 2, false, &format))
			return 2;
		return idle_main((unsigned)cpus, (unsigned)ms, format == 1, mach);
	}
	if (!strcmp(argv[1], "overlap")) {
		uint64_t reps = 5, ops = 2000000, timers = 1000000, part = 0;
		const struct num_opt nums[] = {{"--reps", 1, 32, &reps},
					       {"--ops", 1000, 100000000, &ops},
					       {"--timers", 1000, 20000000, &timers},
					       {"--part", 0, 3, &part}};
		if (parse_sub(argc, argv, nums, 4, false, &format))
			return 2;
		static const char *const parts[] = {"all", "chase", "shapes", "rearm"};
		return overlap_main(parts[part], (unsigned)reps, ops, (unsigned)timers, mach);
	}
	if (!strcmp(argv[1], "net")) {
		uint64_t packets = 1000000, inflight = 0, batch = 0, reps = 3, only = 0;
		uint64_t workers = 0, ms = 1000;
		const struct num_opt nums[] = {{"--packets", 1000, 1000000000, &packets},
					       {"--inflight", 0, 1000000, &inflight},
					       {"--batch", 0, 1024, &batch},
					       {"--reps", 1, 64, &reps},
					       {"--config", 0, 8, &only},
					       {"--workers", 0, 64, &workers},
					       {"--ms", 10, 600000, &ms}};
		if (parse_sub(argc, argv, nums, 7, false, &format))
			return 2;
		if (workers) {
			const unsigned w_in[] = {1000, 50000};
			unsigned in1 = (unsigned)inflight;
			return net_workers_main((unsigned)workers, (unsigned)ms, inflight ? &in1 : w_in,
						inflight ? 1 : 2, (unsigned)reps, (unsigned)only,
						format == 1, mach);
		}
		/* 0: the defaults, 1e3, 5e4 (the target's) and 1e5 in flight;
		 * one packet per clock step and 32 (a NAPI-sized burst) */
		const unsigned dflt_in[] = {1000, 50000, 100000}, dflt_b[] = {1, 32};
		unsigned in1 = (unsigned)inflight, b1 = (unsigned)batch;
		return net_main((unsigned)packets, inflight ? &in1 : dflt_in, inflight ? 1 : 3,
				batch ? &b1 : dflt_b, batch ? 1 : 2, (unsigned)reps, (unsigned)only,
				format == 1, mach);
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct opts o;
	char mach[256];
	unsigned nresults = 0;

	machine(mach, sizeof(mach));
	/* A fixed mmap threshold: big arrays are mapped and unmapped, never kept
	 * resident by malloc for the next implementation, so the memory
	 * workload's resident-set deltas are each implementation's own. */
	mallopt(M_MMAP_THRESHOLD, 1 << 20);
	if (argc > 1) {
		int r = subcommand(argc, argv, mach);
		if (r >= 0)
			return r;
	}
	if (parse_args(argc, argv, &o))
		return 2;
	progress_init(o.quiet);

	/* Cells to run, for the progress lines: those of the implementations
	 * built; one that cannot start (its getter says why) is taken off. */
	unsigned ncells = 0, per_impl = o.nwl * o.nsizes;
	for (unsigned k = 0; k < NREG; k++)
		if (o.use_impl[k] && bench_registry[k].get)
			ncells += per_impl;
	if (ncells > MAX_RESULTS)
		ncells = MAX_RESULTS;
	for (unsigned k = 0; k < NREG; k++) {
		if (!o.use_impl[k])
			continue;
		const char *why = "not built: its development package was not found when "
				  "configuring (see bench/CMakeLists.txt)";
		const struct bench_impl *im =
			bench_registry[k].get ? bench_registry[k].get(&why) : NULL;
		if (!im) {
			fprintf(stderr, "pinwheel-bench: skipping %s: %s\n", bench_registry[k].name,
				why);
			if (bench_registry[k].get)
				ncells -= ncells - nresults < per_impl ? ncells - nresults : per_impl;
			continue;
		}
		for (unsigned w = 0; w < o.nwl; w++)
			for (unsigned s = 0; s < o.nsizes; s++) {
				if (nresults == MAX_RESULTS)
					break;
				progress_start(nresults + 1, ncells, "%s %s %u", im->name, o.wls[w],
					       o.sizes[s]);
				int r = run_cell(im, o.wls[w], o.sizes[s], &o, &results[nresults]);
				progress_end();
				if (r)
					return 1;
				if (o.callgrind)
					fprintf(stderr, "pinwheel-bench: %s %s %u: %llu operations\n",
						im->name, o.wls[w], o.sizes[s],
						(unsigned long long)results[nresults].ops);
				nresults++;
			}
	}
	if (!o.callgrind)
		print_results(&o, mach, results, nresults);
	return 0;
}
