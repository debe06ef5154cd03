/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: the reference d-ary heaps (ref_heap.c) in the ops table.
 * Keys in ns, with the same sub-millisecond salt as pinwheel's hrtimers. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "bench.h"
#include "ref_heap.h"

static struct ref_heap heap;
static struct ref_timer *tm;
static enum pw_clock_id clk;
static uint64_t sim_now;
static unsigned count;

static void cb(struct ref_timer *t)
{
	(void)t;
	bench_count();
}

static uint64_t now(void)
{
	return clk == PW_CLOCK_SIM ? sim_now : bench_now_ns();
}

static int setup_d(unsigned n, enum pw_clock_id clock, unsigned d)
{
	clk = clock;
	sim_now = 10000000000ull;
	if (ref_heap_init(&heap, d, n))
		return -ENOMEM;
	tm = calloc(n, sizeof(*tm));
	if (!tm)
		return -ENOMEM;
	count = n;
	uint64_t t0 = now();
	for (unsigned i = 0; i < n; i++) {
		tm[i].fn = cb;
		tm[i].idx = REF_NOT_QUEUED;
		ref_heap_add(&heap, &tm[i], t0 + (1000 + bench_rand() % 9000) * 1000000ull +
						    bench_rand() % 1000000);
	}
	return 0;
}

static int setup2(unsigned n, enum pw_clock_id clock)
{
	return setup_d(n, clock, 2);
}

static int setup4(unsigned n, enum pw_clock_id clock)
{
	return setup_d(n, clock, 4);
}

static uint64_t now_j(void)
{
	return now() / 1000000;
}

static uint64_t poll_due(void)
{
	return ref_heap_expire(&heap, now());
}

static inline uint64_t key(uint64_t expires_j, uint64_t salt)
{
	return expires_j * 1000000ull + (salt & 0xfffff);
}

static void rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++)
		ref_heap_update(&heap, &tm[idx[k]], key(jn + delta[k], delta[k]));
}

#define HEAP_OBJ(k) (&tm[k])
static const void *obj(unsigned k)
{
	return HEAP_OBJ(k);
}
#define HEAP_ARM(k, jn, d) ref_heap_update(&heap, &tm[k], key((jn) + (d), (d)))

static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst)
{
	BENCH_REARM_BURST(idx, delta, n, jn, burst, HEAP_OBJ, sizeof(struct ref_timer), HEAP_ARM);
}

static void rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1)
		ref_heap_update(&heap, &tm[first], tm[first].key);
}

static void cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++) {
		ref_heap_remove(&heap, &tm[idx[k]]);
		ref_heap_add(&heap, &tm[idx[k]], key(jn + delta[k], delta[k]));
	}
}

static uint64_t expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t before = bench_fired;
	for (unsigned i = 0; i < n; i++)
		ref_heap_update(&heap, &tm[i], sim_now + 1 + bench_rand() % (window_j * 1000000ull));
	uint64_t t0 = bench_now_ns();
	sim_now += (window_j + 1) * 1000000ull;
	ref_heap_expire(&heap, sim_now);
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void arm(unsigned k, uint64_t expires_j)
{
	ref_heap_update(&heap, &tm[k], key(expires_j, k));
}

static void cancel(unsigned k)
{
	ref_heap_remove(&heap, &tm[k]);
}

static size_t extra(unsigned n)
{
	(void)n;
	return sizeof(struct ref_timer *); /* the heap array's slot */
}

static void teardown(void)
{
	ref_heap_free(&heap);
	free(tm);
	tm = NULL;
}

static const struct bench_impl heap2 = {
	"heap", setup2, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, sizeof(struct ref_timer), extra, teardown, rearm_burst, obj,
};

static const struct bench_impl heap4 = {
	"heap4", setup4, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, sizeof(struct ref_timer), extra, teardown, rearm_burst, obj,
};

const struct bench_impl *bench_impl_heap(const char **why)
{
	(void)why;
	return &heap2;
}

const struct bench_impl *bench_impl_heap4(const char **why)
{
	(void)why;
	return &heap4;
}
