/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the measurement.  The harness's clock, random numbers and
 * callback counter (bench.h), the measured loops (bench_measured) and one
 * cell's repetitions, median and minimum (run_cell).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "measure.h"
#include "now.h"

#define BATCH 256

uint64_t bench_fired;
unsigned bench_prefetch = 8; /* set from --prefetch by run_cell() */
bool bench_burst_calls;      /* --burst-calls */
static __thread uint64_t rng = 0x2545f4914f6cdd1dull; /* per thread: scaling workers */

uint64_t bench_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

uint64_t bench_now_ns(void)
{
	return now_ns();
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void summarize(struct result *r, double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	r->min = v[0];
	r->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	r->reps = n;
}

/* rearm_hot: bring the objects of a batch's timers into the cache, as a
 * stack processing the packets does before it re-arms their sockets'
 * timers: a read of each object's first and last byte (every line of a
 * timer of 64 bytes or less), then a fence, so that every load has
 * completed before the timed re-arms begin.  Return: a sum, so that the
 * loads are not optimized away. */
static uint64_t touch_batch(const struct bench_impl *im, const unsigned *idx, size_t b)
{
	uint64_t sink = 0;
	size_t last = im->timer_bytes ? im->timer_bytes - 1 : 0;
	for (size_t i = 0; i < b; i++) {
		const volatile unsigned char *c = im->obj(idx[i]);
		sink += c[0] + c[last];
	}
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("mfence" ::: "memory"); /* waits for the loads too */
#else
	__sync_synchronize();
#endif
	return sink;
}

/* The measured loops are in this function, so that
 * valgrind --tool=callgrind --toggle-collect=bench_measured counts them
 * alone.  Return: for rearm_hot, the ns its re-arms took (its touches are
 * not timed); 0 for the others, which the caller times whole. */
__attribute__((noinline)) double bench_measured(const struct bench_impl *im, int kind, unsigned n,
						const unsigned *idx, const uint64_t *delta,
						const struct cm_op *seq, uint64_t ops, unsigned burst)
{
	uint64_t hot_ns = 0, sink = 0;
	/* rearm_burst: a batch of whole bursts (burst <= BATCH) */
	size_t batch = kind == 4 ? BATCH / burst * burst : BATCH;
	for (uint64_t k = 0; k < ops;) {
		uint64_t jn = im->now_j();
		size_t b = k + batch < ops ? batch : (size_t)(ops - k);
		switch (kind) {
		case 0:
			im->rearm(idx + k, delta + k, b, jn);
			break;
		case 1:
			im->rearm_same((unsigned)(k % n), b);
			break;
		case 2:
			im->cancel_add(idx + k, delta + k, b, jn);
			break;
		case 4:
			im->rearm_burst(idx + k, delta + k, b, jn, burst);
			break;
		case 5: {
			sink += touch_batch(im, idx + k, b);
			uint64_t t0 = bench_now_ns();
			im->rearm(idx + k, delta + k, b, jn);
			hot_ns += bench_now_ns() - t0;
			break;
		}
		default:
			for (size_t i = 0; i < b; i++) {
				const struct cm_op *o = &seq[k + i];
				if (o->kind == CM_ARM)
					im->arm(o->k, jn + o->delta);
				else
					im->cancel(o->k);
			}
			break;
		}
		k += b;
		if (kind != 3)
			im->poll();
	}
	__asm__ volatile("" : : "r"(sink));
	return (double)hot_ns;
}

static long rss_pages(void)
{
	long size = 0, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res;
}

int run_cell(const struct bench_impl *im, const char *wl, unsigned n, const struct opts *o,
	     struct result *res)
{
	double v[MAX_REPS];
	bool expire = !strcmp(wl, "expire"), memory = !strcmp(wl, "memory");
	int kind = !strcmp(wl, "rearm") ? 0 : !strcmp(wl, "rearm_same") ? 1
				: !strcmp(wl, "cancel_add") ? 2 : !strcmp(wl, "rearm_burst") ? 4
				: !strcmp(wl, "rearm_hot") ? 5 : 3;
	unsigned burst = (unsigned)o->burst;
	uint64_t ops = o->ops;
	unsigned reps = o->callgrind ? 1 : (unsigned)o->reps;
	long rss0 = rss_pages();
	int r = im->setup(n, expire ? PW_CLOCK_SIM : o->clock);

	memset(res, 0, sizeof(*res));
	res->impl = im->name;
	res->workload = wl;
	res->pending = n;
	if (kind == 4) {
		res->burst = burst;
		bench_prefetch = (unsigned)o->prefetch;
		bench_burst_calls = o->burst_calls;
	}
	if (r) {
		fprintf(stderr, "pinwheel-bench: %s: setup of %u timers failed: %s\n", im->name, n,
			strerror(-r));
		return r;
	}
	if (memory) {
		res->median = res->min = (double)(im->timer_bytes + im->extra_bytes(n));
		res->rss_per_1e6 = (double)(rss_pages() - rss0) * (double)sysconf(_SC_PAGESIZE) /
				   n * 1e6;
		res->reps = 1;
		res->ops = n;
		im->teardown();
		return 0;
	}

	unsigned *idx = NULL;
	uint64_t *delta = NULL;
	struct cm_op *seq = NULL;
	if (kind == 3 && !expire) {
		seq = conn_mix_sequence(n, ops, &ops);
		if (!seq)
			return -ENOMEM;
	} else if (!expire) {
		idx = malloc(ops * sizeof(*idx));
		delta = malloc(ops * sizeof(*delta));
		if (!idx || !delta)
			return -ENOMEM;
		for (uint64_t k = 0; k < ops; k++) {
			idx[k] = (unsigned)(bench_rand() % n);
			delta[k] = 1000 + bench_rand() % 9000;
		}
	}
	for (unsigned rep = 0; rep < reps; rep++) {
		if (expire) {
			double total = 0, ns;
			uint64_t fired = 0;
			while (fired < ops) {
				uint64_t f = im->expire_round(n, 1000, &ns);
				if (f != n) {
					fprintf(stderr, "pinwheel-bench: %s: expire ran %llu of %u timers\n",
						im->name, (unsigned long long)f, n);
					return -EIO;
				}
				fired += f;
				total += ns;
			}
			v[rep] = total / (double)fired;
			res->ops = fired;
			continue;
		}
		uint64_t t0 = bench_now_ns();
		double timed = bench_measured(im, kind, n, idx, delta, seq, ops, burst);
		v[rep] = (kind == 5 ? timed : (double)(bench_now_ns() - t0)) / (double)ops;
		res->ops = ops;
	}
	free(idx);
	free(delta);
	free(seq);
	im->teardown();
	summarize(res, v, reps);
	return 0;
}
