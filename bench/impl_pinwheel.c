/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: pinwheel's wheel timers and hrtimers in the ops table. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "bench.h"
#include "scaling.h"

static struct pw_runtime *rt;
static struct pw_timer *wt;
static struct pw_hrtimer *ht;
static unsigned count;

static int runtime(enum pw_clock_id clock)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = clock;
	int r = pw_runtime_create(&cfg, &rt);
	return r ? r : pw_cpu_enter(rt, 0);
}

static uint64_t now_j(void)
{
	return pw_jiffies(rt);
}

static uint64_t poll_cpu(void)
{
	int n = pw_run_timers(rt, 0);
	return n > 0 ? (uint64_t)n : 0;
}

static void teardown(void)
{
	pw_cpu_exit(rt);
	pw_runtime_destroy(rt);
	free(wt);
	free(ht);
	rt = NULL;
	wt = NULL;
	ht = NULL;
}

/* ---- wheel timers -------------------------------------------------------- */

static void w_cb(struct pw_timer *t)
{
	(void)t;
	bench_count();
}

static int w_setup(unsigned n, enum pw_clock_id clock)
{
	int r = runtime(clock);
	if (r)
		return r;
	wt = calloc(n, sizeof(*wt));
	if (!wt)
		return -ENOMEM;
	count = n;
	uint64_t j = pw_jiffies(rt);
	for (unsigned i = 0; i < n; i++) {
		pw_timer_setup(rt, &wt[i], w_cb, 0);
		pw_mod_timer(&wt[i], j + 1000 + bench_rand() % 9000);
	}
	return 0;
}

static void w_rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++)
		pw_mod_timer(&wt[idx[k]], jn + delta[k]);
}

static void w_rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1)
		pw_mod_timer(&wt[first], wt[first].expires);
}

static void w_cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++) {
		struct pw_timer *t = &wt[idx[k]];
		pw_timer_delete(t);
		t->expires = jn + delta[k];
		pw_add_timer(t);
	}
}

/* rearm_burst: each burst through pw_mod_timers(), after the loop's first
 * D prefetches (bench.h); with --burst-calls, the peers' loop of
 * pw_mod_timer() calls instead, for comparison. */
#define W_OBJ(k) (&wt[k])
static const void *w_obj(unsigned k)
{
	return W_OBJ(k);
}
#define W_ARM(k, jn, d) pw_mod_timer(&wt[k], (jn) + (d))

static void w_rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			  unsigned burst)
{
	if (bench_burst_calls) {
		BENCH_REARM_BURST(idx, delta, n, jn, burst, W_OBJ, sizeof(struct pw_timer), W_ARM);
		return;
	}
	struct pw_timer *p[BENCH_BURST_MAX];
	uint64_t e[BENCH_BURST_MAX];
	for (size_t k = 0; k < n; k += burst) {
		const unsigned *bi = idx + k;
		size_t m = n - k < burst ? n - k : burst;
		BENCH_BURST_HEAD(bi, m, W_OBJ, sizeof(struct pw_timer));
		for (size_t i = 0; i < m; i++) {
			p[i] = &wt[bi[i]];
			e[i] = jn + delta[k + i];
		}
		pw_mod_timers(p, e, (unsigned)m, NULL);
	}
}

static uint64_t w_expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t j = pw_jiffies(rt), before = bench_fired;
	for (unsigned i = 0; i < n; i++)
		pw_mod_timer(&wt[i], j + 1 + bench_rand() % window_j);
	uint64_t t0 = bench_now_ns();
	pw_sim_advance(rt, pw_jiffies_to_ns(rt, window_j + 64));
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void w_arm(unsigned k, uint64_t expires_j)
{
	pw_mod_timer(&wt[k], expires_j);
}

static void w_cancel(unsigned k)
{
	pw_timer_delete(&wt[k]);
}

static size_t w_extra(unsigned n)
{
	(void)n;
	return 0; /* intrusive lists: the timer is all (plus ~9 KiB a CPU) */
}

static const struct bench_impl wheel = {
	"pinwheel", w_setup, now_j, poll_cpu, w_rearm, w_rearm_same, w_cancel_add,
	w_expire_round, w_arm, w_cancel, sizeof(struct pw_timer), w_extra, teardown,
	w_rearm_burst, w_obj,
};

const struct bench_impl *bench_impl_pinwheel(const char **why)
{
	(void)why;
	return &wheel;
}

/* ---- hrtimers: ticks of 1 ms plus a random sub-millisecond part, as real
 * nanosecond deadlines have ---------------------------------------------- */

static enum pw_hrtimer_restart h_cb(struct pw_hrtimer *t)
{
	(void)t;
	bench_count();
	return PW_HRTIMER_NORESTART;
}

static inline uint64_t h_ns(uint64_t expires_j, uint64_t salt)
{
	return expires_j * 1000000ull + (salt & 0xfffff);
}

static int h_setup(unsigned n, enum pw_clock_id clock)
{
	int r = runtime(clock);
	if (r)
		return r;
	ht = calloc(n, sizeof(*ht));
	if (!ht)
		return -ENOMEM;
	count = n;
	uint64_t now = pw_now_ns(rt);
	for (unsigned i = 0; i < n; i++) {
		pw_hrtimer_setup(rt, &ht[i], h_cb, CLOCK_MONOTONIC, 0);
		pw_hrtimer_start(&ht[i], now + (1000 + bench_rand() % 9000) * 1000000ull +
						 bench_rand() % 1000000,
				 PW_HRTIMER_MODE_ABS);
	}
	return 0;
}

static uint64_t h_now_j(void)
{
	return pw_now_ns(rt) / 1000000;
}

static void h_rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++)
		pw_hrtimer_start(&ht[idx[k]], h_ns(jn + delta[k], delta[k]), PW_HRTIMER_MODE_ABS);
}

static void h_rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1)
		pw_hrtimer_start(&ht[first], pw_hrtimer_get_expires(&ht[first]), PW_HRTIMER_MODE_ABS);
}

static void h_cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	for (size_t k = 0; k < n; k++) {
		pw_hrtimer_try_to_cancel(&ht[idx[k]]);
		pw_hrtimer_start(&ht[idx[k]], h_ns(jn + delta[k], delta[k]), PW_HRTIMER_MODE_ABS);
	}
}

#define H_OBJ(k) (&ht[k])
static const void *h_obj(unsigned k)
{
	return H_OBJ(k);
}
#define H_ARM(k, jn, d) pw_hrtimer_start(&ht[k], h_ns((jn) + (d), (d)), PW_HRTIMER_MODE_ABS)

static void h_rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			  unsigned burst)
{
	BENCH_REARM_BURST(idx, delta, n, jn, burst, H_OBJ, sizeof(struct pw_hrtimer), H_ARM);
}

static uint64_t h_expire_round(unsigned n, uint64_t window_j, double *ns)
{
	uint64_t now = pw_now_ns(rt), before = bench_fired;
	for (unsigned i = 0; i < n; i++)
		pw_hrtimer_start(&ht[i], now + 1 + bench_rand() % (window_j * 1000000ull),
				 PW_HRTIMER_MODE_ABS);
	uint64_t t0 = bench_now_ns();
	pw_sim_advance(rt, (window_j + 1) * 1000000ull);
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void h_arm(unsigned k, uint64_t expires_j)
{
	pw_hrtimer_start(&ht[k], h_ns(expires_j, k), PW_HRTIMER_MODE_ABS);
}

static void h_cancel(unsigned k)
{
	pw_hrtimer_try_to_cancel(&ht[k]);
}

static size_t h_extra(unsigned n)
{
	/* one 16-byte heap entry per queued timer; the array doubles from 64
	 * and keeps one spare slot */
	size_t cap = 64;
	while (cap < (size_t)n + 2)
		cap *= 2;
	return n ? cap * 16 / n : 0;
}

static const struct bench_impl hrtimer = {
	"pinwheel-hrtimer", h_setup, h_now_j, poll_cpu, h_rearm, h_rearm_same, h_cancel_add,
	h_expire_round, h_arm, h_cancel, sizeof(struct pw_hrtimer), h_extra, teardown,
	h_rearm_burst, h_obj,
};

const struct bench_impl *bench_impl_pinwheel_hrtimer(const char **why)
{
	(void)why;
	return &hrtimer;
}

/* ---- the multi-thread table (scaling): one CPU per worker, each worker's
 * timers pinned to its CPU -------------------------------------------------- */

static unsigned mt_per;
static unsigned mt_flags; /* PW_TIMER_PINNED, or 0 under the push policy */

static int mt_setup_common(unsigned workers, unsigned per_worker)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = workers;
	mt_per = per_worker;
	int r = pw_runtime_create(&cfg, &rt);
	if (r)
		return r;
	wt = calloc((size_t)workers * per_worker, sizeof(*wt));
	return wt ? 0 : -ENOMEM;
}

static int mt_setup(unsigned workers, unsigned per_worker)
{
	mt_flags = PW_TIMER_PINNED;
	return mt_setup_common(workers, per_worker);
}

/* The seeds' situation: the pre-6.9 push policy, CPU 0 busy (say, with a
 * NIC's traffic) and the others idle as far as the policy can tell: every
 * timer an idle CPU arms goes to CPU 0. */
static int mt_setup_push(unsigned workers, unsigned per_worker)
{
	mt_flags = 0;
	int r = mt_setup_common(workers, per_worker);
	if (r)
		return r;
	pw_set_migration(rt, PW_MIGRATION_PUSH);
	for (unsigned c = 1; c < workers; c++)
		pw_cpu_set_idle(rt, c, 1);
	return 0;
}

static int mt_enter(unsigned w)
{
	int r = pw_cpu_enter(rt, w);
	if (r)
		return r;
	struct pw_timer *mine = &wt[(size_t)w * mt_per];
	uint64_t j = pw_jiffies(rt);
	for (unsigned i = 0; i < mt_per; i++) {
		pw_timer_setup(rt, &mine[i], w_cb, mt_flags);
		pw_mod_timer(&mine[i], j + 1000 + bench_rand() % 9000);
	}
	return 0;
}

static void mt_rearm(unsigned w, const unsigned *idx, const uint64_t *delta, size_t n)
{
	uint64_t jn = pw_jiffies(rt);
	struct pw_timer *mine = &wt[(size_t)w * mt_per];
	for (size_t k = 0; k < n; k++)
		pw_mod_timer(&mine[idx[k]], jn + delta[k]);
}

static void mt_poll(unsigned w)
{
	pw_run_timers(rt, w);
}

static void mt_leave(unsigned w)
{
	(void)w;
	pw_cpu_exit(rt);
}

static void mt_teardown(void)
{
	pw_runtime_destroy(rt);
	free(wt);
	rt = NULL;
	wt = NULL;
}

static const struct mt_impl mt_pinwheel = {
	"pinwheel", mt_setup, mt_enter, mt_rearm, mt_poll, mt_leave, mt_teardown,
};

static const struct mt_impl mt_push = {
	"push", mt_setup_push, mt_enter, mt_rearm, mt_poll, mt_leave, mt_teardown,
};

const struct mt_impl *mt_impl_pinwheel(void)
{
	return &mt_pinwheel;
}

const struct mt_impl *mt_impl_push(void)
{
	return &mt_push;
}
