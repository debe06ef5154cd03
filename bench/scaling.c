/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench scaling: 1..N worker threads, each re-arming its own
 * timers at full speed and running what is due, for
 *   pinwheel     one CPU (timer base) per worker, the worker's timers pinned
 *                to it: no lock two workers share;
 *   global-lock  the Linux 2.4 design: every worker's timers in one wheel
 *                behind one lock (seed 001's timerlist_lock);
 *   push         pinwheel under the pre-6.9 push policy with CPU 0 busy and
 *                the others idle (as the policy sees them): every timer an
 *                idle CPU arms lands on CPU 0 (seeds 000 and 003).
 * Prints ops/s per configuration and the ratio to 1 worker (the target for
 * pinned pinwheel: >= 0.9 x N).  Workers are pinned to cores (affinity)
 * while there are enough cores, else left to the scheduler, and the output
 * says which.  Takes the worker count as an argument, for bigger machines.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"
#include "progress.h"
#include "scaling.h"

#define STREAM 65536 /* pre-drawn random indexes and delays per worker */
#define BATCH 256

struct worker {
	pthread_t th;
	const struct mt_impl *im;
	unsigned w, per;
	int pin_core;           /* -1: unpinned */
	uint64_t ops;
	int err;
	int *go, *stop;         /* atomics */
	pthread_barrier_t *ready;
};

static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	unsigned *idx = malloc(STREAM * sizeof(*idx));
	uint64_t *delta = malloc(STREAM * sizeof(*delta));

	if (wk->pin_core >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(wk->pin_core, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	wk->err = (!idx || !delta) ? -ENOMEM : wk->im->enter(wk->w);
	for (unsigned k = 0; idx && delta && k < STREAM; k++) {
		idx[k] = (unsigned)(bench_rand() % wk->per);
		delta[k] = 1000 + bench_rand() % 9000;
	}
	pthread_barrier_wait(wk->ready);
	while (!__atomic_load_n(wk->go, __ATOMIC_ACQUIRE))
		;
	uint64_t ops = 0;
	for (unsigned k = 0; !wk->err && !__atomic_load_n(wk->stop, __ATOMIC_RELAXED);) {
		wk->im->rearm(wk->w, idx + k, delta + k, BATCH);
		wk->im->poll(wk->w);
		ops += BATCH;
		k = (k + BATCH) % STREAM;
	}
	wk->ops = ops;
	if (!wk->err)
		wk->im->leave(wk->w);
	free(idx);
	free(delta);
	return NULL;
}

static double run(const struct mt_impl *im, unsigned workers, unsigned per, double seconds,
		  int pinned)
{
	struct worker *wk = calloc(workers, sizeof(*wk));
	pthread_barrier_t ready;
	int go = 0, stop = 0;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);

	if (!wk || im->setup(workers, per))
		return -1;
	pthread_barrier_init(&ready, NULL, workers + 1);
	for (unsigned w = 0; w < workers; w++) {
		wk[w] = (struct worker){.im = im, .w = w, .per = per, .go = &go, .stop = &stop,
					.ready = &ready, .pin_core = pinned ? (int)(w % cores) : -1};
		pthread_create(&wk[w].th, NULL, worker_main, &wk[w]);
	}
	pthread_barrier_wait(&ready);
	uint64_t t0 = bench_now_ns();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
	nanosleep(&ts, NULL);
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	uint64_t total = 0;
	int err = 0;
	for (unsigned w = 0; w < workers; w++) {
		pthread_join(wk[w].th, NULL);
		total += wk[w].ops;
		err |= wk[w].err;
	}
	double elapsed = (double)(bench_now_ns() - t0) / 1e9;
	pthread_barrier_destroy(&ready);
	im->teardown();
	free(wk);
	return err ? -1 : (double)total / elapsed;
}

int scaling_main(unsigned max_workers, double seconds, unsigned per_worker, int format,
		 const char *machine)
{
	const struct mt_impl *impls[] = {mt_impl_pinwheel(), mt_impl_global_lock(), mt_impl_push()};
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	int pinned = (long)max_workers <= cores;

	int json = format == 1, csv = format == 2;
	/* Every piece of the output ends a line (the JSON's separators too),
	 * so that a progress line on the same terminal erases none of it. */
	if (json)
		printf("[\n");
	else if (csv)
		printf("impl,workload,workers,ops_per_s,ratio_to_1,pinned,machine\n");
	else
		printf("# pinwheel-bench scaling on %s\n# %u timers per worker, %.1f s per "
		       "configuration, workers %s\n%-12s %8s %14s %12s\n",
		       machine, per_worker, seconds,
		       pinned ? "pinned to cores" : "not pinned (more workers than cores)", "impl",
		       "workers", "ops/s", "x 1 worker");
	const unsigned nimpls = sizeof(impls) / sizeof(impls[0]);
	for (unsigned i = 0; i < nimpls; i++) {
		double base = 0;
		for (unsigned w = 1; w <= max_workers; w++) {
			progress_start(i * max_workers + w, nimpls * max_workers,
				       "scaling: %s, %u worker%s", impls[i]->name, w, w == 1 ? "" : "s");
			double ops = run(impls[i], w, per_worker, seconds, pinned);
			progress_end();
			if (ops < 0) {
				fprintf(stderr, "pinwheel-bench scaling: %s with %u workers failed\n",
					impls[i]->name, w);
				return 1;
			}
			if (w == 1)
				base = ops;
			if (csv)
				printf("%s,scaling,%u,%.0f,%.3f,%s,\"%s\"\n", impls[i]->name, w, ops,
				       ops / base, pinned ? "yes" : "no", machine);
			else if (json)
				printf("  {\"impl\": \"%s\", \"workload\": \"scaling\", \"workers\": %u, "
				       "\"ops_per_s\": %.0f, \"ratio_to_1\": %.3f, \"pinned\": %s, "
				       "\"machine\": \"%s\"}%s\n",
				       impls[i]->name, w, ops, ops / base, pinned ? "true" : "false",
				       machine, i + 1 == nimpls && w == max_workers ? "" : ",");
			else
				printf("%-12s %8u %14.0f %12.2f\n", impls[i]->name, w, ops, ops / base);
		}
	}
	if (json)
		printf("]\n");

	return 0;
}
