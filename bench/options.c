/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the command line.  The usage text, the main benchmark's
 * options (parse_args: sizes, workloads, implementations, repetitions,
 * format, clock) and the one parser of the subcommands' options
 * (parse_sub).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"
#include "progress.h"

void usage(FILE *f)
{
	fprintf(f,
		"usage: pinwheel-bench [--json | --csv] [--sizes N,...] [--reps R] [--ops N]\n"
		"                      [--clock mono|sim] [--workloads W,...] [--impls I,...]\n"
		"                      [--burst N] [--prefetch D] [--burst-calls]\n"
		"                      [--callgrind] [--quiet]\n"
		"       pinwheel-bench lateness [--json] [--quiet] [--samples N]\n"
		"       pinwheel-bench scaling [--json | --csv] [--quiet] [--workers N]\n"
		"                              [--timers PER_WORKER] [--ms MS]\n"
		"       pinwheel-bench idle [--json] [--quiet] [--cpus N] [--ms MS]\n"
		"       pinwheel-bench wake [--json] [--quiet] [--rounds N]\n"
		"       pinwheel-bench net [--json] [--quiet] [--packets N] [--inflight N]\n"
		"                          [--batch N] [--reps R] [--config C]\n"
		"                          [--workers W [--ms MS]]\n"
		"       pinwheel-bench overlap [--reps R] [--ops N] [--timers N] [--part K]\n"
		"workloads: rearm rearm_same cancel_add expire conn_mix rearm_burst rearm_hot memory\n"
		"impls: pinwheel pinwheel-hrtimer libevent libuv libev dpdk heap heap4 global-lock\n"
		"defaults: --sizes 1000,10000,100000,1000000 --reps 5 --ops 1000000 --clock mono\n"
		"rearm_burst: rearm's re-arms in bursts of --burst N (1..256, default 32), every\n"
		"  implementation through one loop that prefetches the caller's timer --prefetch D\n"
		"  (0..64, default 8) ahead; pinwheel hands each burst to pw_mod_timers(), or\n"
		"  with --burst-calls makes the loop's pw_mod_timer() calls; ns per timer\n"
		"rearm_hot: rearm's re-arms with the timer's object in the cache: each batch of\n"
		"  256 first reads its timers' objects (untimed), as a stack does processing the\n"
		"  packets, then re-arms them (timed); the bucket neighbours stay cold\n"
		"--callgrind: one repetition, fixed operation counts, nothing timed; run under\n"
		"  valgrind --tool=callgrind --toggle-collect=bench_measured and divide by ops\n"
		"--quiet: no progress lines on stderr (one per measurement or configuration,\n"
		"  redrawn in place when stderr is a terminal); results on stdout either way\n"
		"lateness: --samples 10000 (about a minute)\n"
		"scaling: --workers <online CPUs> --timers 10000 --ms 1000 (per configuration)\n"
		"idle: --cpus <online CPUs, at least 2> --ms 2000 (per migration policy)\n"
		"wake: --rounds 20000 (futex vs eventfd+epoll vs +timerfd ping-pong)\n"
		"net: --packets 1000000 --inflight 1000,50000,100000 --batch 1,32 --reps 3, every\n"
		"  configuration (--config C: one of 1 pfifo, 2 netem delay, 3 netem jitter,\n"
		"  4 netem rate, 5 mq + 8 netem, 6 fq, 7 tbf and htb, 8 a timer per flow);\n"
		"  --workers W: the real clock, a worker per CPU, --inflight 1000,50000 per CPU,\n"
		"  --ms 1000 per run (configurations 1-5)\n"
		"overlap: what a random re-arm of a big wheel waits for (docs/benchmarks.md, \"A\n"
		"  re-arm at a million timers\"): --part 1 pointer chase, 2 re-arm shapes with P\n"
		"  nops, 3 the real re-arms (P nops, order, footprint, touch ahead), 0 all;\n"
		"  --reps 5 --ops 2000000 --timers 1000000\n");
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi) {
		fprintf(stderr, "pinwheel-bench: %s: bad value '%s' (want %llu..%llu)\n", opt, s,
			(unsigned long long)lo, (unsigned long long)hi);
		return -1;
	}
	*out = v;
	return 0;
}

int parse_sub(int argc, char **argv, const struct num_opt *nums, unsigned n, bool csv_ok,
	      int *format)
{
	bool quiet = false;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			*format = 1;
			continue;
		}
		if (csv_ok && !strcmp(argv[i], "--csv")) {
			*format = 2;
			continue;
		}
		if (!strcmp(argv[i], "--quiet")) {
			quiet = true;
			continue;
		}
		unsigned k = 0;
		while (k < n && strcmp(argv[i], nums[k].name))
			k++;
		if (k < n && i + 1 < argc) {
			if (parse_u64(nums[k].name, argv[++i], nums[k].lo, nums[k].hi, nums[k].val))
				return -1;
			continue;
		}
		fprintf(stderr, "pinwheel-bench %s: unknown or incomplete option '%s'\n", argv[1],
			argv[i]);
		usage(stderr);
		return -1;
	}
	progress_init(quiet);
	return 0;
}

/* Split the comma list @val; call @each for every item.  Return: -1 on a bad
 * item or an empty list (after a message naming it). */
static int for_each_item(const char *opt, const char *val, int (*each)(const char *, void *),
			 void *ctx)
{
	char buf[512];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", val);
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save), n++)
		if (each(tok, ctx))
			return -1;
	if (!n) {
		fprintf(stderr, "pinwheel-bench: %s: empty list\n", opt);
		return -1;
	}
	return 0;
}

static int add_size(const char *tok, void *ctx)
{
	struct opts *o = ctx;
	uint64_t v;
	if (o->nsizes == MAX_SIZES) {
		fprintf(stderr, "pinwheel-bench: --sizes: more than %d sizes\n", MAX_SIZES);
		return -1;
	}
	if (parse_u64("--sizes", tok, 4, 20000000, &v))
		return -1;
	o->sizes[o->nsizes++] = (unsigned)v;
	return 0;
}

static int add_workload(const char *tok, void *ctx)
{
	struct opts *o = ctx;
	for (unsigned k = 0; k < NWL; k++)
		if (!strcmp(tok, bench_workloads[k]) && o->nwl < NWL) {
			o->wls[o->nwl++] = bench_workloads[k];
			return 0;
		}
	fprintf(stderr, "pinwheel-bench: --workloads: unknown workload '%s'\n", tok);
	return -1;
}

static int add_impl(const char *tok, void *ctx)
{
	struct opts *o = ctx;
	for (unsigned k = 0; k < NREG; k++)
		if (!strcmp(tok, bench_registry[k].name)) {
			o->use_impl[k] = true;
			return 0;
		}
	fprintf(stderr, "pinwheel-bench: --impls: unknown implementation '%s'\n", tok);
	return -1;
}

int parse_args(int argc, char **argv, struct opts *o)
{
	bool impls_given = false;
	memset(o, 0, sizeof(*o));
	o->reps = 5;
	o->ops = 1000000;
	o->burst = 32;
	o->prefetch = 8;
	o->clock = PW_CLOCK_MONOTONIC;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;
		if (!strcmp(a, "--json"))
			o->format = 1;
		else if (!strcmp(a, "--csv"))
			o->format = 2;
		else if (!strcmp(a, "--callgrind"))
			o->callgrind = true;
		else if (!strcmp(a, "--quiet"))
			o->quiet = true;
		else if (!strcmp(a, "--burst-calls"))
			o->burst_calls = true;
		else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			exit(0);
		} else if (!val) {
			bad = 1;
		} else if (!strcmp(a, "--reps")) {
			bad = parse_u64(a, val, 1, MAX_REPS, &o->reps), i++;
		} else if (!strcmp(a, "--ops")) {
			bad = parse_u64(a, val, 1000, 1000000000, &o->ops), i++;
		} else if (!strcmp(a, "--burst")) {
			bad = parse_u64(a, val, 1, 256, &o->burst), i++;
		} else if (!strcmp(a, "--prefetch")) {
			bad = parse_u64(a, val, 0, 64, &o->prefetch), i++;
		} else if (!strcmp(a, "--clock")) {
			i++;
			if (!strcmp(val, "mono"))
				o->clock = PW_CLOCK_MONOTONIC;
			else if (!strcmp(val, "sim"))
				o->clock = PW_CLOCK_SIM;
			else {
				fprintf(stderr, "pinwheel-bench: --clock: bad value '%s' (want mono or sim)\n",
					val);
				return -1;
			}
		} else if (!strcmp(a, "--sizes")) {
			bad = for_each_item(a, val, add_size, o), i++;
		} else if (!strcmp(a, "--workloads")) {
			bad = for_each_item(a, val, add_workload, o), i++;
		} else if (!strcmp(a, "--impls")) {
			bad = for_each_item(a, val, add_impl, o), i++, impls_given = true;
		} else {
			bad = 1;
		}
		if (bad) {
			if (bad == 1)
				fprintf(stderr, "pinwheel-bench: unknown or incomplete option '%s'\n", a);
			usage(stderr);
			return -1;
		}
	}
	if (!o->nsizes) {
		unsigned def[] = {1000, 10000, 100000, 1000000};
		memcpy(o->sizes, def, sizeof(def));
		o->nsizes = 4;
	}
	if (!o->nwl)
		for (unsigned k = 0; k < NWL; k++)
			o->wls[o->nwl++] = bench_workloads[k];
	if (!impls_given)
		for (unsigned k = 0; k < NREG; k++)
			o->use_impl[k] = true;
	return 0;
}
