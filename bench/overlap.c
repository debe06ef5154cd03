/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench overlap: timed experiments on what a random re-arm of a big
 * wheel waits for (docs/benchmarks.md, "A re-arm at a million timers").
 *
 * The question.  At 1e6 pending timers a random re-arm misses the cache on
 * the timer it is handed.  Whether consecutive re-arms' misses overlap
 * decides what one costs: one miss latency each, or a fraction of it.  Two
 * things can keep them apart: the out-of-order window (the next re-arm's
 * miss is issued only once the window reaches its first load, so a longer
 * re-arm leaves fewer misses in flight), and the locked compare-and-swap of
 * the lock (x86 orders it with every earlier load and store).  A third
 * thing changes how many of them miss at all: how much of the timers fits
 * in the last-level cache.  Callgrind counts instructions and has no
 * timing, and this VM has no hardware counters, so each is tested by time:
 *
 *   chase      dependent loads over a random cycle of 64-byte nodes, by
 *              working-set size (the miss latency at each level, the size
 *              where the last-level cache ends) and with k independent
 *              chains walked together (how many misses overlap).
 *   shapes     the skeleton of a re-arm on N objects of a timer's size visited in
 *              random order, with P extra instructions (nops) after each:
 *              a load; a load and a store; the lock first, then the object
 *              (the 2.4 shape); the object's word first, then the lock (a
 *              shape whose lock waits for the object's miss).  If the window
 *              limits overlap, time per operation grows with P once P plus
 *              the shape's own instructions no longer let two operations
 *              share the window.
 *   rearm      the real re-arms, pinwheel (pw_mod_timer()) and global-lock
 *              (the 2.4 design, tools/common/gl24.c), through the same loop
 *              and the same indirect call: with P nops after each re-arm;
 *              the timers in random and in sequential order (sequential:
 *              the hardware prefetcher hides the misses, what remains is the
 *              instructions); at the same memory footprint (each at the
 *              other's bytes: pinwheel's timers at global-lock's count times
 *              its timer's size over pinwheel's, and the reverse); with the caller touching the timer k re-arms ahead
 *              (k independent re-arms in flight, interleaved by hand).
 *
 * Each figure is the median of --reps repetitions; the repetitions of all
 * variants of an experiment are interleaved (one of each, then again), so
 * that a slow minute of this shared VM falls on all of them alike.
 * A benchmark, not a test: it prints numbers and judges nothing.
 * Threads: the main thread only.  Locks: the implementations' own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "bench.h"
#include "gl24.h"
#include "now.h"
#include "overlap.h"

#define MAXREP 32

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, unsigned n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* A random permutation of 0..n-1 (Fisher-Yates on the bench's stream). */
static unsigned *perm(unsigned n)
{
	unsigned *p = malloc((size_t)n * sizeof(*p));
	if (!p)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		p[i] = i;
	for (unsigned i = n - 1; i > 0; i--) {
		unsigned j = (unsigned)(bench_rand() % (i + 1));
		unsigned t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

/* ---- chase ---------------------------------------------------------------- */

struct node {
	struct node *next;
	char pad[56];
};

/* ns per dependent load walking @k chains that share @n nodes (each chain a
 * random cycle through its n/k of them), @loads loads in all. */
static double chase_once(struct node *nodes, unsigned n, unsigned k, uint64_t loads)
{
	struct node *cur[64];
	unsigned per = n / k;
	for (unsigned c = 0; c < k; c++)
		cur[c] = &nodes[(size_t)c * per];
	uint64_t steps = loads / k, t0 = now_ns();
	for (uint64_t s = 0; s < steps; s++)
		for (unsigned c = 0; c < k; c++)
			cur[c] = cur[c]->next;
	uint64_t t1 = now_ns();
	uintptr_t sink = 0;
	for (unsigned c = 0; c < k; c++)
		sink ^= (uintptr_t)cur[c];
	__asm__ volatile("" : : "r"(sink));
	return (double)(t1 - t0) / (double)(steps * k);
}

/* @bytes, 2 MiB aligned; with @huge, asked to be backed by transparent
 * huge pages (madvise: this kernel's default mode), so that a random walk
 * misses the cache but not the TLB. */
static void *big_alloc(size_t bytes, bool huge)
{
	size_t sz = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
	void *p = aligned_alloc(2u << 20, sz);
	if (p && huge)
		(void)madvise(p, sz, MADV_HUGEPAGE);
	return p;
}

static struct node *chase_build(unsigned n, unsigned k, bool huge)
{
	struct node *nodes = big_alloc((size_t)n * sizeof(*nodes), huge);
	if (!nodes)
		return NULL;
	unsigned per = n / k;
	for (unsigned c = 0; c < k; c++) {
		unsigned *p = perm(per);
		if (!p) {
			free(nodes);
			return NULL;
		}
		/* the cycle starts at the chain's first node (p rotated so) */
		struct node *base = &nodes[(size_t)c * per];
		unsigned z = 0;
		while (p[z])
			z++;
		for (unsigned i = 0; i < per; i++)
			base[p[(z + i) % per]].next = &base[p[(z + i + 1) % per]];
		free(p);
	}
	return nodes;
}

static int chase(unsigned reps)
{
	static const unsigned mb[] = {1, 4, 8, 16, 24, 32, 40, 48, 64, 128, 256};
	static const unsigned ks[] = {1, 2, 4, 8, 16};
	const unsigned nmb = sizeof(mb) / sizeof(mb[0]), nk = sizeof(ks) / sizeof(ks[0]);
	printf("## chase: ns per dependent load, random cycle of 64-byte nodes, on 4 KiB pages"
	       " and on 2 MiB pages (transparent huge pages, madvise)\n");
	printf("%-12s %10s %10s\n", "working set", "4 KiB", "2 MiB");
	for (unsigned s = 0; s < nmb; s++) {
		unsigned n = mb[s] * (1u << 20) / 64;
		struct node *nodes[2] = {chase_build(n, 1, false), chase_build(n, 1, true)};
		if (!nodes[0] || !nodes[1])
			return -ENOMEM;
		double v[2][MAXREP];
		for (unsigned h = 0; h < 2; h++)
			chase_once(nodes[h], n, 1, n); /* warm: one lap */
		for (unsigned r = 0; r < reps; r++)
			for (unsigned h = 0; h < 2; h++)
				v[h][r] = chase_once(nodes[h], n, 1, 2000000);
		printf("%9u MB %10.1f %10.1f\n", mb[s], median(v[0], reps), median(v[1], reps));
		fflush(stdout);
		free(nodes[0]);
		free(nodes[1]);
	}
	unsigned n = 256u * (1u << 20) / 64;
	printf("\n## chase: k chains walked together, 256 MB; ns per load (and per step of all k)\n");
	printf("%-6s %10s %12s\n", "k", "ns/load", "ns/step");
	double v[sizeof(ks) / sizeof(ks[0])][MAXREP];
	struct node *nodes[sizeof(ks) / sizeof(ks[0])];
	for (unsigned i = 0; i < nk; i++) {
		nodes[i] = chase_build(n, ks[i], false);
		if (!nodes[i])
			return -ENOMEM;
	}
	for (unsigned r = 0; r < reps; r++)
		for (unsigned i = 0; i < nk; i++)
			v[i][r] = chase_once(nodes[i], n, ks[i], 2000000);
	for (unsigned i = 0; i < nk; i++) {
		double m = median(v[i], reps);
		printf("%-6u %10.1f %12.1f\n", ks[i], m, m * ks[i]);
		free(nodes[i]);
	}
	return 0;
}

/* ---- shapes --------------------------------------------------------------- */

struct obj {
	uint64_t w[5]; /* 40 bytes, as struct pw_timer */
};
_Static_assert(sizeof(struct obj) == sizeof(struct pw_timer), "the shapes' object is a timer's size");

static uint32_t shape_lock;

#define NOPS(P) __asm__ volatile(".rept " #P "\n\tnop\n\t.endr")

static inline void lk(void)
{
	uint32_t e = 0;
	while (!__atomic_compare_exchange_n(&shape_lock, &e, 1, false, __ATOMIC_ACQUIRE,
					    __ATOMIC_RELAXED))
		e = 0;
}

static inline void ulk(void)
{
	__atomic_store_n(&shape_lock, 0, __ATOMIC_RELEASE);
}

/* The four shapes, each with P nops after every operation.
 * load:      sink += o->w[0]
 * store:     o->w[0]++ (load and store the object)
 * lockfirst: lock; o->w[0]++; unlock (2.4: the lock, then the timer)
 * loadlock:  if (o->w[4] == magic) { lock; o->w[0]++; unlock } (the object's
 *            word first, and the lock behind a branch on it) */
#define SHAPES(P)                                                                      \
	static uint64_t s_load_##P(struct obj *o, const unsigned *ix, size_t n)        \
	{                                                                              \
		uint64_t sink = 0;                                                     \
		for (size_t k = 0; k < n; k++) {                                       \
			sink += __atomic_load_n(&o[ix[k]].w[0], __ATOMIC_RELAXED);     \
			NOPS(P);                                                       \
		}                                                                      \
		return sink;                                                           \
	}                                                                              \
	static uint64_t s_store_##P(struct obj *o, const unsigned *ix, size_t n)       \
	{                                                                              \
		for (size_t k = 0; k < n; k++) {                                       \
			o[ix[k]].w[0]++;                                               \
			NOPS(P);                                                       \
		}                                                                      \
		return 0;                                                              \
	}                                                                              \
	static uint64_t s_lockfirst_##P(struct obj *o, const unsigned *ix, size_t n)   \
	{                                                                              \
		for (size_t k = 0; k < n; k++) {                                       \
			lk();                                                          \
			o[ix[k]].w[0]++;                                               \
			ulk();                                                         \
			NOPS(P);                                                       \
		}                                                                      \
		return 0;                                                              \
	}                                                                              \
	static uint64_t s_loadlock_##P(struct obj *o, const unsigned *ix, size_t n)    \
	{                                                                              \
		for (size_t k = 0; k < n; k++) {                                       \
			struct obj *x = &o[ix[k]];                                     \
			if (__atomic_load_n(&x->w[4], __ATOMIC_RELAXED) == 0xb0) {     \
				lk();                                                  \
				x->w[0]++;                                             \
				ulk();                                                 \
			}                                                              \
			NOPS(P);                                                       \
		}                                                                      \
		return 0;                                                              \
	}

SHAPES(0)
SHAPES(16)
SHAPES(32)
SHAPES(64)
SHAPES(128)
SHAPES(256)

typedef uint64_t (*shape_fn)(struct obj *, const unsigned *, size_t);
struct shape_row {
	unsigned pad;
	shape_fn f[4];
};
static const struct shape_row shape_rows[] = {
	{0, {s_load_0, s_store_0, s_lockfirst_0, s_loadlock_0}},
	{16, {s_load_16, s_store_16, s_lockfirst_16, s_loadlock_16}},
	{32, {s_load_32, s_store_32, s_lockfirst_32, s_loadlock_32}},
	{64, {s_load_64, s_store_64, s_lockfirst_64, s_loadlock_64}},
	{128, {s_load_128, s_store_128, s_lockfirst_128, s_loadlock_128}},
	{256, {s_load_256, s_store_256, s_lockfirst_256, s_loadlock_256}},
};
#define NSHAPE_ROWS (sizeof(shape_rows) / sizeof(shape_rows[0]))
static const char *const shape_names[4] = {"load", "store", "lockfirst", "loadlock"};

static int shapes(unsigned n, unsigned reps, uint64_t ops)
{
	struct obj *o = big_alloc((size_t)n * sizeof(*o), false);
	unsigned *ix = malloc(ops * sizeof(*ix));
	if (!o || !ix) {
		free(o);
		free(ix);
		return -ENOMEM;
	}
	for (unsigned i = 0; i < n; i++)
		o[i] = (struct obj){{0, 0, 0, 0, 0xb0}};
	for (uint64_t k = 0; k < ops; k++)
		ix[k] = (unsigned)(bench_rand() % n);
	static double v[NSHAPE_ROWS][4][MAXREP];
	for (unsigned r = 0; r < reps; r++)
		for (unsigned p = 0; p < NSHAPE_ROWS; p++)
			for (unsigned s = 0; s < 4; s++) {
				uint64_t t0 = now_ns();
				uint64_t sink = shape_rows[p].f[s](o, ix, ops);
				v[p][s][r] = (double)(now_ns() - t0) / (double)ops;
				__asm__ volatile("" : : "r"(sink));
			}
	printf("\n## shapes: ns per operation on %u objects of %zu bytes (%.0f MB), random order,"
	       " P nops after each\n", n, sizeof(struct obj), (double)n * sizeof(struct obj) / 1e6);
	printf("%-6s", "P");
	for (unsigned s = 0; s < 4; s++)
		printf(" %10s", shape_names[s]);
	printf("\n");
	for (unsigned p = 0; p < NSHAPE_ROWS; p++) {
		printf("%-6u", shape_rows[p].pad);
		for (unsigned s = 0; s < 4; s++)
			printf(" %10.1f", median(v[p][s], reps));
		printf("\n");
	}
	free(o);
	free(ix);
	return 0;
}

/* ---- rearm: the real ones --------------------------------------------------- */

static struct pw_runtime *ov_rt;
static struct pw_timer *ov_wt;

static void ov_cb(struct pw_timer *t)
{
	(void)t;
}

static int pw_setup(unsigned n)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	int r = pw_runtime_create(&cfg, &ov_rt);
	if (r)
		return r;
	if ((r = pw_cpu_enter(ov_rt, 0)))
		return r;
	ov_wt = calloc(n, sizeof(*ov_wt));
	if (!ov_wt)
		return -ENOMEM;
	uint64_t j = pw_jiffies(ov_rt);
	for (unsigned i = 0; i < n; i++) {
		pw_timer_setup(ov_rt, &ov_wt[i], ov_cb, 0);
		pw_mod_timer(&ov_wt[i], j + 1000 + bench_rand() % 9000);
	}
	return 0;
}

static void pw_teardown(void)
{
	pw_cpu_exit(ov_rt);
	pw_runtime_destroy(ov_rt);
	free(ov_wt);
	ov_wt = NULL;
}

static void pw_arm1(unsigned k, uint64_t e)
{
	pw_mod_timer(&ov_wt[k], e);
}

static const char *const impl_names[2] = {"pinwheel", "global-lock"};

static int gl_setup(unsigned n)
{
	gl24_set_rand(bench_rand);
	return gl24_ops.setup(n, PW_CLOCK_SIM);
}

/* The loop every implementation runs: a re-arm through a pointer, then P
 * nops; a simulated clock, so nothing expires and every re-arm is one. */
#define RLOOP(P)                                                                       \
	static void r_loop_##P(void (*arm)(unsigned, uint64_t), const unsigned *ix,    \
			       const uint64_t *d, size_t n, uint64_t jn)               \
	{                                                                              \
		for (size_t k = 0; k < n; k++) {                                       \
			arm(ix[k], jn + d[k]);                                         \
			NOPS(P);                                                       \
		}                                                                      \
	}
RLOOP(0)
RLOOP(32)
RLOOP(64)
RLOOP(128)
typedef void (*rloop_fn)(void (*)(unsigned, uint64_t), const unsigned *, const uint64_t *, size_t,
			 uint64_t);
static const struct {
	unsigned pad;
	rloop_fn f;
} rloops[] = {{0, r_loop_0}, {32, r_loop_32}, {64, r_loop_64}, {128, r_loop_128}};
#define NRLOOPS (sizeof(rloops) / sizeof(rloops[0]))

/* pinwheel with the caller touching (prefetching for write) the timer @ahead
 * re-arms before it re-arms it: @ahead misses in flight, by hand. */
static void r_ahead(void (*arm)(unsigned, uint64_t), const unsigned *ix, const uint64_t *d,
		    size_t n, uint64_t jn, unsigned ahead)
{
	for (size_t k = 0; k < n; k++) {
		if (k + ahead < n)
			__builtin_prefetch(&ov_wt[ix[k + ahead]], 1);
		arm(ix[k], jn + d[k]);
	}
}

/* One variant of the rearm experiment: implementation, count of timers,
 * order, pad, ahead. */
struct rvar {
	const char *label;
	unsigned impl; /* 0 pinwheel, 1 global-lock */
	unsigned n;
	bool seq;
	unsigned loop;  /* index into rloops */
	unsigned ahead; /* >0: pinwheel's touch-ahead loop */
	double v[MAXREP];
};

static int rearm_run(struct rvar *rv, unsigned nv, unsigned reps, uint64_t ops)
{
	uint64_t *d = malloc(ops * sizeof(*d));
	unsigned *ix = malloc(ops * sizeof(*ix));
	if (!d || !ix) {
		free(d);
		free(ix);
		return -ENOMEM;
	}
	for (uint64_t k = 0; k < ops; k++)
		d[k] = 1000 + bench_rand() % 9000;
	for (unsigned r = 0; r < reps; r++)
		for (unsigned i = 0; i < nv; i++) {
			struct rvar *x = &rv[i];
			int e = x->impl ? gl_setup(x->n) : pw_setup(x->n);
			if (e)
				return e;
			for (uint64_t k = 0; k < ops; k++)
				ix[k] = x->seq ? (unsigned)(k % x->n) : (unsigned)(bench_rand() % x->n);
			void (*arm)(unsigned, uint64_t) = x->impl ? gl24_ops.arm : pw_arm1;
			uint64_t jn = x->impl ? gl24_ops.now_j() : pw_jiffies(ov_rt);
			/* warm: the same re-arms once, untimed */
			rloops[0].f(arm, ix, d, ops < x->n ? ops : x->n, jn);
			uint64_t t0 = now_ns();
			if (x->ahead)
				r_ahead(arm, ix, d, ops, jn, x->ahead);
			else
				rloops[x->loop].f(arm, ix, d, ops, jn);
			x->v[r] = (double)(now_ns() - t0) / (double)ops;
			if (x->impl)
				gl24_ops.teardown();
			else
				pw_teardown();
		}
	free(d);
	free(ix);
	return 0;
}

static void rearm_print(const char *title, struct rvar *rv, unsigned nv, unsigned reps)
{
	printf("\n## rearm: %s\n", title);
	printf("%-44s %10s\n", "variant", "ns/re-arm");
	for (unsigned i = 0; i < nv; i++)
		printf("%-44s %10.1f\n", rv[i].label, median(rv[i].v, reps));
	fflush(stdout);
}

static int rearm(unsigned reps, uint64_t ops, unsigned n)
{
	char lab[64][48];
	struct rvar rv[64];
	unsigned nv = 0;
	int e;
	/* pad, random order, both */
	for (unsigned impl = 0; impl < 2; impl++)
		for (unsigned l = 0; l < NRLOOPS; l++) {
			snprintf(lab[nv], sizeof(lab[nv]), "%s, P=%u", impl_names[impl],
				 rloops[l].pad);
			rv[nv] = (struct rvar){lab[nv], impl, n, false, l, 0, {0}};
			nv++;
		}
	if ((e = rearm_run(rv, nv, reps, ops)))
		return e;
	rearm_print("random order, P nops after each re-arm", rv, nv, reps);

	/* order and footprint */
	nv = 0;
	const size_t pw_b = sizeof(struct pw_timer), gl_b = gl24_ops.timer_bytes;
	const unsigned pw_same = (unsigned)((uint64_t)n * gl_b / pw_b); /* gl's bytes */
	const unsigned gl_same = (unsigned)((uint64_t)n * pw_b / gl_b); /* pw's bytes */
	struct {
		unsigned impl, n;
		bool seq;
		const char *what;
	} fv[] = {
		{0, n, false, "random"},
		{1, n, false, "random"},
		{0, n, true, "sequential"},
		{1, n, true, "sequential"},
		{0, pw_same, false, "random, global-lock's bytes"},
		{1, gl_same, false, "random, pinwheel's bytes"},
	};
	for (unsigned i = 0; i < sizeof(fv) / sizeof(fv[0]); i++) {
		snprintf(lab[nv], sizeof(lab[nv]), "%s %u, %s", impl_names[fv[i].impl], fv[i].n,
			 fv[i].what);
		rv[nv] = (struct rvar){lab[nv], fv[i].impl, fv[i].n, fv[i].seq, 0, 0, {0}};
		nv++;
	}
	if ((e = rearm_run(rv, nv, reps, ops)))
		return e;
	char title[96];
	snprintf(title, sizeof(title), "order and footprint (pinwheel %zu B a timer, global-lock %zu B)",
		 pw_b, gl_b);
	rearm_print(title, rv, nv, reps);

	/* touch ahead, pinwheel */
	nv = 0;
	static const unsigned ahead[] = {1, 2, 4, 8, 16};
	snprintf(lab[nv], sizeof(lab[nv]), "pinwheel, none");
	rv[nv] = (struct rvar){lab[nv], 0, n, false, 0, 0, {0}};
	nv++;
	for (unsigned a = 0; a < sizeof(ahead) / sizeof(ahead[0]); a++) {
		snprintf(lab[nv], sizeof(lab[nv]), "pinwheel, the timer %u ahead", ahead[a]);
		rv[nv] = (struct rvar){lab[nv], 0, n, false, 0, ahead[a], {0}};
		nv++;
	}
	if ((e = rearm_run(rv, nv, reps, ops)))
		return e;
	rearm_print("pinwheel with the caller prefetching the timer k re-arms ahead", rv, nv,
		    reps);
	return 0;
}

int overlap_main(const char *which, unsigned reps, uint64_t ops, unsigned n, const char *mach)
{
	if (reps > MAXREP)
		reps = MAXREP;
	printf("# pinwheel-bench overlap: %s; median of %u interleaved repetitions\n", mach, reps);
	int r = 0;
	bool all = !which || !strcmp(which, "all");
	if (!r && (all || !strcmp(which, "chase")))
		r = chase(reps);
	if (!r && (all || !strcmp(which, "shapes")))
		r = shapes(n, reps, ops);
	if (!r && (all || !strcmp(which, "rearm")))
		r = rearm(reps, ops, n);
	if (r) {
		fprintf(stderr, "pinwheel-bench overlap: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}
