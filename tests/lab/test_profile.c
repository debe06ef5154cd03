/* SPDX-License-Identifier: MIT */
/*
 * test_profile: pinwheel-lab's profiler (tools/lab/live/profile.c) against a
 * workload whose true shares are known.
 *
 * The workload: two threads, each alternating between two functions on the
 * millisecond boundaries of CLOCK_MONOTONIC, 0.25 ms in the first and
 * 0.75 ms in the second of every millisecond (1:3): the pattern the lab's
 * jiffies follow, and the one a sampler that fires on the kernel's tick
 * aliases with.  One thread (prof_phase_a/b) runs before the profile
 * starts; the other (prof_phase_c/d) is started after it, so the perf
 * sampler must pick it up on its own.  The true shares are measured, not
 * assumed: each thread adds up its CPU time (CLOCK_THREAD_CPUTIME_ID) in
 * each function, so preemption on a loaded machine moves the truth and the
 * sampler alike.
 *
 * Asserted, for the perf sampler only: it runs (else SKIP: exit 0 with the
 * reason), it sampled both threads, and each thread's share of its first
 * function, among the samples in its two functions, is within TOL of the
 * measured truth.  The ITIMER_PROF sampler runs the same workload and its
 * error is printed, not asserted: it depends on where the host's tick
 * falls.  Properties, not timings: the shares are ratios of CPU time.
 *
 * Threads: the main thread drives the profiler; two workload threads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lab.h"

#define RUN_NS 1200000000ull /* each profile's workload, 1.2 s */
#define PHASE_NS 250000ull   /* the first function's part of every ms */
#define TOL 0.05             /* the perf sampler's allowed error, in share */

static int failures;

#define CHECK(cond, ...)                                                              \
	do {                                                                          \
		if (!(cond)) {                                                        \
			failures++;                                                   \
			fprintf(stderr, "test_profile: FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                                 \
			fputc('\n', stderr);                                          \
		}                                                                     \
	} while (0)

static inline uint64_t ns_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Spin until CLOCK_MONOTONIC reaches @until, a few hundred arithmetic steps
 * between clock reads.  Four functions, each with its own constants so the
 * compiler cannot fold them into one.  Context: a workload thread. */
#define SPIN_BODY(mul, add)                                                     \
	do {                                                                    \
		for (int i = 0; i < 256; i++)                                   \
			x = x * (mul) + (add);                                  \
	} while (ns_of(CLOCK_MONOTONIC) < until);                               \
	return x

__attribute__((noinline)) static uint64_t prof_phase_a(uint64_t until, uint64_t x)
{
	SPIN_BODY(6364136223846793005ull, 1442695040888963407ull);
}

__attribute__((noinline)) static uint64_t prof_phase_b(uint64_t until, uint64_t x)
{
	SPIN_BODY(2862933555777941757ull, 3037000493ull);
}

__attribute__((noinline)) static uint64_t prof_phase_c(uint64_t until, uint64_t x)
{
	SPIN_BODY(3935559000370003845ull, 2691343689449507681ull);
}

__attribute__((noinline)) static uint64_t prof_phase_d(uint64_t until, uint64_t x)
{
	SPIN_BODY(3202034522624059733ull, 4354685564936845319ull);
}

typedef uint64_t (*phase_fn)(uint64_t until, uint64_t x);

struct worker {
	pthread_t th;
	phase_fn fn[2];    /* the first function (PHASE_NS of each ms), the second */
	atomic_int go;     /* set by the main thread once end is */
	uint64_t end;      /* CLOCK_MONOTONIC ns */
	uint64_t cpu[2];   /* CPU time spent in each function, ns */
	uint64_t x;        /* the arithmetic's result, kept */
};

/* Alternate between the two functions on the millisecond boundaries until
 * w->end.  Context: its own thread. */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	while (!atomic_load(&w->go)) {
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	uint64_t x = (uint64_t)(uintptr_t)w | 1, c0 = ns_of(CLOCK_THREAD_CPUTIME_ID);
	for (;;) {
		uint64_t now = ns_of(CLOCK_MONOTONIC);
		if (now >= w->end)
			break;
		uint64_t ms = now - now % 1000000ull;
		int ph = now - ms >= PHASE_NS;
		uint64_t until = ph ? ms + 1000000ull : ms + PHASE_NS;
		if (until > w->end)
			until = w->end;
		x = w->fn[ph](until, x);
		uint64_t c1 = ns_of(CLOCK_THREAD_CPUTIME_ID);
		w->cpu[ph] += c1 - c0;
		c0 = c1;
	}
	w->x = x;
	return NULL;
}

/* One thread's figures: the true share of its first function and the
 * sampler's, among the samples in its two functions. */
struct pair {
	double truth, sampled;
	double n;         /* samples in the two functions */
	double of_all;    /* their share of all the profile's samples */
};

static double count_of(const char *name, unsigned long total)
{
	const char *const set[] = {name, NULL};
	return lab_prof_share(set) * (double)total;
}

static void pair_of(const struct worker *w, const char *first, const char *second,
		    unsigned long total, struct pair *p)
{
	double a = count_of(first, total), b = count_of(second, total);
	uint64_t cpu = w->cpu[0] + w->cpu[1];
	p->truth = cpu ? (double)w->cpu[0] / (double)cpu : 0;
	p->n = a + b;
	p->of_all = total ? (a + b) / (double)total : 0;
	p->sampled = a + b > 0 ? a / (a + b) : 0;
}

/* Profile the workload with sampler @how at @hz.  Return: 0, or
 * lab_prof_start_with()'s error.  Context: main thread. */
static int profile_run(enum lab_prof_sampler how, unsigned hz, struct pair *ab, struct pair *cd,
		       struct lab_prof_info *info, char *text, size_t len)
{
	static struct worker w[2];
	memset(w, 0, sizeof(w));
	w[0].fn[0] = prof_phase_a;
	w[0].fn[1] = prof_phase_b;
	w[1].fn[0] = prof_phase_c;
	w[1].fn[1] = prof_phase_d;
	/* the early thread exists before the profile starts, the late one after */
	int e = pthread_create(&w[0].th, NULL, worker_main, &w[0]);
	if (e) {
		fprintf(stderr, "test_profile: pthread_create: %s\n", strerror(e));
		exit(1);
	}
	int err = lab_prof_start_with(hz, how);
	if (err) {
		w[0].end = 0;
		atomic_store(&w[0].go, 1);
		pthread_join(w[0].th, NULL);
		return err;
	}
	uint64_t end = ns_of(CLOCK_MONOTONIC) + RUN_NS;
	w[0].end = w[1].end = end;
	atomic_store(&w[0].go, 1);
	e = pthread_create(&w[1].th, NULL, worker_main, &w[1]);
	if (e) {
		fprintf(stderr, "test_profile: pthread_create: %s\n", strerror(e));
		exit(1);
	}
	atomic_store(&w[1].go, 1);
	pthread_join(w[0].th, NULL);
	pthread_join(w[1].th, NULL);
	lab_prof_stop();
	unsigned long total = lab_prof_total();
	lab_prof_info(info);
	lab_prof_format(text, len, 8);
	pair_of(&w[0], "prof_phase_a", "prof_phase_b", total, ab);
	pair_of(&w[1], "prof_phase_c", "prof_phase_d", total, cd);
	return 0;
}

static void print_pair(const char *sampler, const char *fns, const struct pair *p)
{
	printf("  %-11s %-22s true %5.1f%%  sampled %5.1f%% of %6.0f samples (%4.1f%% of all)  "
	       "error %+5.1f points\n",
	       sampler, fns, 100 * p->truth, 100 * p->sampled, p->n, 100 * p->of_all,
	       100 * (p->sampled - p->truth));
}

int main(void)
{
	static char text[LAB_PROFILE_LEN];
	struct pair ab, cd, iab, icd;
	struct lab_prof_info info, iinfo;

	/* the environment's choice is honoured by the AUTO sampler only */
	setenv("PW_LAB_PROFILER", "itimer", 1);
	CHECK(lab_prof_start(997) == 0, "lab_prof_start(997) with PW_LAB_PROFILER=itimer");
	lab_prof_info(&info);
	CHECK(info.sampler == LAB_PROF_ITIMER, "PW_LAB_PROFILER=itimer: sampler %d", info.sampler);
	lab_prof_stop();
	unsetenv("PW_LAB_PROFILER");
	CHECK(lab_prof_start_with(0, LAB_PROF_PERF) == -EINVAL, "hz 0 accepted");

	printf("test_profile: two threads, each 0.25 ms then 0.75 ms of every CLOCK_MONOTONIC "
	       "millisecond (1:3), %.1f s per sampler\n", (double)RUN_NS / 1e9);
	int err = profile_run(LAB_PROF_PERF, 4999, &ab, &cd, &info, text, sizeof(text));
	if (err) {
		lab_prof_info(&info);
		printf("test_profile: SKIP: the perf sampler is not allowed here: %s\n",
		       info.fallback[0] ? info.fallback : strerror(-err));
		return failures ? 1 : 0;
	}
	printf("perf profile:\n%s", text);
	CHECK(info.sampler == LAB_PROF_PERF, "sampler %d, not perf", info.sampler);
	CHECK(strstr(text, "# sampler: perf cpu-clock") == text + strspn(text, " "),
	      "the profile's first line does not name the perf sampler");
	/* main, the early and the late workload thread (not the reader) */
	CHECK(info.threads >= 3, "perf sampled %u threads, not >= 3", info.threads);
	CHECK(ab.n >= 200, "the early thread: %.0f samples in its functions", ab.n);
	CHECK(cd.n >= 200, "the late thread (started after the profile): %.0f samples", cd.n);

	err = profile_run(LAB_PROF_ITIMER, 997, &iab, &icd, &iinfo, text, sizeof(text));
	CHECK(!err, "ITIMER_PROF sampler: %s", strerror(-err));
	if (!err)
		printf("ITIMER_PROF profile:\n%s", text);

	printf("test_profile: the first function's share of its thread's two functions (truth: "
	       "the thread's CPU time in each)\n");
	print_pair("perf", "prof_phase_a (early)", &ab);
	print_pair("perf", "prof_phase_c (late)", &cd);
	if (!err) {
		print_pair("ITIMER_PROF", "prof_phase_a (early)", &iab);
		print_pair("ITIMER_PROF", "prof_phase_c (late)", &icd);
	}
	printf("test_profile: perf every %.1f us of thread CPU time, %u threads, %lu lost; "
	       "ITIMER_PROF every %.1f us of process CPU time (its error is the host tick's "
	       "phase, not asserted)\n",
	       (double)info.period_ns / 1e3, info.threads, info.lost,
	       (double)iinfo.period_ns / 1e3);

	CHECK(ab.sampled > ab.truth - TOL && ab.sampled < ab.truth + TOL,
	      "perf: prof_phase_a %.1f%% sampled vs %.1f%% true", 100 * ab.sampled, 100 * ab.truth);
	CHECK(cd.sampled > cd.truth - TOL && cd.sampled < cd.truth + TOL,
	      "perf: prof_phase_c %.1f%% sampled vs %.1f%% true", 100 * cd.sampled, 100 * cd.truth);
	if (failures) {
		fprintf(stderr, "test_profile: %d failure(s)\n", failures);
		return 1;
	}
	printf("test_profile: ok\n");
	return 0;
}
