/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench lateness: how late hrtimers run on the real clock, beside
 * what the OS gives a thread that just sleeps.
 *
 * One thread acts as CPU 0: it starts one hrtimer at a random deadline
 * 50 us - 5 ms out, sleeps until pw_next_expiry_ns() with
 * clock_nanosleep(TIMER_ABSTIME), runs the CPU's timers, and the callback
 * records how late it ran (its clock reading minus the deadline).  The
 * baseline, in the same run and on the same thread, alternating sample by
 * sample so both see the same noise: clock_nanosleep(TIMER_ABSTIME) to a
 * random deadline from the same distribution, lateness = wake-up minus
 * deadline.  The thread's timer slack is set to 1 ns (prctl) for both, as
 * a timer thread should (Linux adds 50 us to every sleep otherwise).
 * The target (hrtimer issue): pinwheel's p99 within the baseline's + 5 us.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "lateness.h"
#include "now.h"
#include "progress.h"

static void sleep_until(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static struct pw_runtime *lrt;
static uint64_t *late_pw;
static unsigned n_pw;
static int fired;

static enum pw_hrtimer_restart late_cb(struct pw_hrtimer *t)
{
	uint64_t now = pw_now_ns(lrt), exp = pw_hrtimer_get_expires(t);
	late_pw[n_pw++] = now > exp ? now - exp : 0;
	fired = 1;
	return PW_HRTIMER_NORESTART;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static uint64_t pct(const uint64_t *v, unsigned n, double p)
{
	unsigned i = (unsigned)(p * (n - 1) + 0.5);
	return v[i < n ? i : n - 1];
}

static void report(const char *impl, uint64_t *v, unsigned n, int json, int first)
{
	qsort(v, n, sizeof(*v), cmp_u64);
	if (json)
		printf("%s\n  {\"impl\": \"%s\", \"workload\": \"lateness\", \"samples\": %u, "
		       "\"p50_ns\": %llu, \"p99_ns\": %llu, \"p999_ns\": %llu, \"max_ns\": %llu}",
		       first ? "" : ",", impl, n, (unsigned long long)pct(v, n, 0.5),
		       (unsigned long long)pct(v, n, 0.99), (unsigned long long)pct(v, n, 0.999),
		       (unsigned long long)v[n - 1]);
	else
		printf("%-18s %8u %10.1f %10.1f %10.1f %10.1f\n", impl, n, pct(v, n, 0.5) / 1e3,
		       pct(v, n, 0.99) / 1e3, pct(v, n, 0.999) / 1e3, v[n - 1] / 1e3);
}

int lateness_main(unsigned samples, int json, const char *machine)
{
	struct pw_config cfg;
	struct pw_hrtimer t;
	uint64_t rng = 0x9e3779b97f4a7c15ull;

	if (prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0))
		fprintf(stderr, "pinwheel-bench: prctl(PR_SET_TIMERSLACK) failed: %s\n", strerror(errno));
	late_pw = calloc(samples, sizeof(*late_pw));
	uint64_t *late_os = calloc(samples, sizeof(*late_os));
	if (!late_pw || !late_os) {
		fprintf(stderr, "pinwheel-bench: out of memory\n");
		return 1;
	}
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	if (pw_runtime_create(&cfg, &lrt) || pw_cpu_enter(lrt, 0) ||
	    pw_hrtimer_setup(lrt, &t, late_cb, CLOCK_MONOTONIC, PW_HRTIMER_MODE_REL)) {
		fprintf(stderr, "pinwheel-bench: cannot set up the runtime\n");
		return 1;
	}
	progress_start(1, 1, "lateness: %u samples, pinwheel-hrtimer and clock_nanosleep",
		       samples);
	for (unsigned i = 0; i < samples; i++) {
		progress_part(i, samples);
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		uint64_t delay = 50000 + rng % 4950000;
		/* pinwheel: start, sleep until the CPU's next expiry, run */
		fired = 0;
		pw_hrtimer_start(&t, delay, PW_HRTIMER_MODE_REL);
		while (!fired) {
			uint64_t next = pw_next_expiry_ns(lrt, 0);
			if (next > now_ns())
				sleep_until(next);
			pw_run_timers(lrt, 0);
		}
		/* baseline: the same thread sleeping to a deadline itself */
		uint64_t deadline = now_ns() + delay;
		sleep_until(deadline);
		uint64_t now = now_ns();
		late_os[i] = now > deadline ? now - deadline : 0;
	}
	progress_end();
	pw_cpu_exit(lrt);
	pw_runtime_destroy(lrt);

	if (json) {
		printf("[");
		report("pinwheel-hrtimer", late_pw, samples, 1, 1);
		report("clock_nanosleep", late_os, samples, 1, 0);
		printf("\n]\n");
	} else {
		printf("# pinwheel-bench lateness on %s\n# %u timers at random 50 us - 5 ms "
		       "deadlines, timer slack 1 ns; microseconds late\n"
		       "%-18s %8s %10s %10s %10s %10s\n",
		       machine, samples, "impl", "samples", "p50", "p99", "p99.9", "max");
		report("pinwheel-hrtimer", late_pw, samples, 0, 1);
		report("clock_nanosleep", late_os, samples, 0, 0);
	}
	free(late_pw);
	free(late_os);
	return 0;
}
