/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: DPDK 22.11 rte_timer in the ops table.  The EAL starts in
 * process (--no-huge --no-pci, one lcore); if it cannot, the row says why.
 * rte_timer keeps each lcore's pending timers in a skip list; expiries are
 * TSC ticks relative to now.  Real clock only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_timer.h>

#include "bench.h"

static struct rte_timer *tm;
static unsigned count;
static uint64_t ticks_per_ms;
static int eal_state; /* 0 not tried, 1 up, -1 failed */
static char eal_why[160];

static void cb(struct rte_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	bench_count();
}

static void reset_ms(struct rte_timer *t, uint64_t ms)
{
	rte_timer_reset(t, ms * ticks_per_ms, SINGLE, rte_lcore_id(), cb, NULL);
}

static uint64_t now_j(void)
{
	return rte_get_timer_cycles() / ticks_per_ms;
}

static int setup(unsigned n, enum pw_clock_id clock)
{
	(void)clock;
	tm = calloc(n, sizeof(*tm));
	if (!tm)
		return -ENOMEM;
	count = n;
	for (unsigned i = 0; i < n; i++) {
		rte_timer_init(&tm[i]);
		reset_ms(&tm[i], 1000 + bench_rand() % 9000);
	}
	return 0;
}

static uint64_t poll_due(void)
{
	uint64_t before = bench_fired;
	rte_timer_manage();
	return bench_fired - before;
}

static void rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++)
		reset_ms(&tm[idx[k]], delta[k]);
}

#define RTE_OBJ(k) (&tm[k])
static const void *obj(unsigned k)
{
	return RTE_OBJ(k);
}
#define RTE_ARM(k, jn, d) reset_ms(&tm[k], (d))

static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst)
{
	(void)jn;
	BENCH_REARM_BURST(idx, delta, n, jn, burst, RTE_OBJ, sizeof(struct rte_timer), RTE_ARM);
}

static void rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1) {
		uint64_t now = rte_get_timer_cycles(), exp = tm[first].expire;
		rte_timer_reset(&tm[first], exp > now ? exp - now : 0, SINGLE, rte_lcore_id(), cb,
				NULL);
	}
}

static void cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++) {
		rte_timer_stop(&tm[idx[k]]);
		reset_ms(&tm[idx[k]], delta[k]);
	}
}

static uint64_t expire_round(unsigned n, uint64_t window_j, double *ns)
{
	(void)window_j;
	uint64_t before = bench_fired;
	for (unsigned i = 0; i < n; i++)
		rte_timer_reset(&tm[i], 0, SINGLE, rte_lcore_id(), cb, NULL);
	uint64_t t0 = bench_now_ns();
	while (bench_fired - before < n)
		rte_timer_manage();
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void arm(unsigned k, uint64_t expires_j)
{
	uint64_t now = now_j();
	reset_ms(&tm[k], expires_j > now ? expires_j - now : 0);
}

static void cancel(unsigned k)
{
	rte_timer_stop(&tm[k]);
}

static size_t extra(unsigned n)
{
	(void)n;
	return 0; /* the skip list links are inside struct rte_timer */
}

static void teardown(void)
{
	for (unsigned i = 0; i < count; i++)
		rte_timer_stop(&tm[i]);
	free(tm);
	tm = NULL;
}

static const struct bench_impl impl = {
	"dpdk", setup, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, sizeof(struct rte_timer), extra, teardown, rearm_burst, obj,
};

const struct bench_impl *bench_impl_dpdk(const char **why)
{
	if (!eal_state) {
		char *argv[] = {"pinwheel-bench", "--no-huge", "--no-pci", "--no-telemetry", "--no-shconf",
				"-l", "0", "-m", "128", "--log-level=1", NULL};
		if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
			snprintf(eal_why, sizeof(eal_why), "rte_eal_init failed: %s",
				 rte_strerror(rte_errno));
			eal_state = -1;
		} else if (rte_timer_subsystem_init() < 0 && rte_errno != EALREADY) {
			snprintf(eal_why, sizeof(eal_why), "rte_timer_subsystem_init failed: %s",
				 rte_strerror(rte_errno));
			eal_state = -1;
		} else {
			ticks_per_ms = rte_get_timer_hz() / 1000;
			eal_state = 1;
		}
	}
	if (eal_state < 0) {
		*why = eal_why;
		return NULL;
	}
	return &impl;
}
