/* SPDX-License-Identifier: MIT */
/*
 * test_model_sched: the lab model's scheduler (tools/lab/model/model_sched.c)
 * on its own, on 32 CPUs of 2 sockets x 8 cores x 2 threads, the
 * simulated clock set by hand: deterministic, no threads.
 *
 *   - select_idle_sibling(): a thread woken onto its busy CPU goes to the
 *     first idle core of the LLC after its own; with balancing off it
 *     waits in its CPU's queue;
 *   - wake_affine(): a waker of load 0 takes the thread, even from the
 *     other socket; a loaded waker does not take it from an unloaded CPU;
 *   - idle_balance(): a CPU going idle pulls a waiting, cache-cold thread
 *     from a busier CPU of its domains (its sibling's; the other socket's
 *     when its own has none), one only; none when balancing is off, when
 *     its avg_idle is under sysctl_sched_migration_cost, or when the thread
 *     waiting last ran under 0.5 ms ago.
 *
 * Threads: the main thread only.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>

#include "check.h"
#include "model/model_sched.h"

static struct mdl m;
static struct mdl_costs costs;
static struct mdl_sched s;
static const struct mdl_topo topo = {2, {2, 16}};

static void nop(struct mdl *mm, const struct mdl_ev *ev)
{
	(void)mm;
	(void)ev;
}

static void setup(int balance)
{
	mdl_costs_default(&costs);
	CHECK_EQ(mdl_init_topo(&m, &topo, 32, 1000, 1, &costs, 0, 1000000000ull, nop, NULL), 0);
	CHECK_EQ(mdl_sched_init(&s, &m, &topo, 16, 8, balance, 0), 0);
	m.now = 1000000; /* 1 ms: every thread cache-cold */
}

static void teardown(void)
{
	mdl_sched_fini(&s);
	mdl_fini(&m);
}

/* Wake thread @ti from @waker: its CPU, checking whether it runs at once. */
static unsigned wake(unsigned ti, unsigned waker, int want_run)
{
	int run = -1;
	unsigned c = mdl_sched_wake(&s, ti, waker, &run);
	CHECK_EQ(run, want_run);
	return c;
}

static void test_idle_sibling(void)
{
	setup(1);
	mdl_sched_place(&s, 0, 4);
	mdl_sched_place(&s, 1, 4);
	CHECK_EQ(wake(0, 4, 1), 4);
	uint64_t before = m.cpu[4].charged_ns;
	/* CPU 4 busy: core 2 is CPUs 4-5, the next idle core CPUs 6-7 */
	CHECK_EQ(wake(1, 4, 1), 6);
	CHECK(m.cpu[4].charged_ns > before); /* the placement's reads, on the waker */
	CHECK_EQ(mdl_sched_nr(&s, 4), 1);
	CHECK_EQ(mdl_sched_nr(&s, 6), 1);
	CHECK_EQ(s.moved, 1);
	teardown();

	setup(0);
	mdl_sched_place(&s, 0, 4);
	mdl_sched_place(&s, 1, 4);
	CHECK_EQ(wake(0, 4, 1), 4);
	CHECK_EQ(wake(1, 4, 0), 4); /* waits its turn */
	CHECK_EQ(mdl_sched_nr(&s, 4), 2);
	CHECK_EQ(mdl_sched_sleep(&s, 4), 1); /* first come, first served */
	CHECK_EQ(mdl_sched_sleep(&s, 4), MDL_SCHED_NONE);
	CHECK_EQ(s.moved, 0);
	teardown();
}

static void test_wake_affine(void)
{
	setup(1);
	mdl_sched_place(&s, 0, 20);
	CHECK_EQ(wake(0, 3, 1), 3); /* an idle waker (load 0) takes it across sockets */
	CHECK_EQ(s.affine, 1);
	/* a waker running a thread for 100 ms (PELT load ~0.87 x 1024) does
	 * not take one from an idle CPU: 100 (0.87 + 1) x 1024 > 108 x 0 */
	mdl_sched_place(&s, 1, 5);
	mdl_sched_place(&s, 2, 10);
	CHECK_EQ(wake(1, 5, 1), 5);
	m.now += 100000000;
	double load = mdl_sched_load(&s, 5);
	CHECK(load > 0.8 * 1024 && load < 0.95 * 1024);
	CHECK_EQ(wake(2, 5, 1), 10);
	CHECK_EQ(s.affine, 1);
	teardown();
}

/* Threads 0 and 1 on CPU @busy (0 running, 1 waiting), 2 running on
 * @idler, then 2 sleeps: what @idler runs next. */
static uint32_t pull_case(unsigned busy, unsigned idler, int balance, double avg_idle,
			  uint64_t last_ran_ago)
{
	setup(0); /* the queue built as it stands, then the rule under test */
	mdl_sched_place(&s, 0, busy);
	mdl_sched_place(&s, 1, busy);
	mdl_sched_place(&s, 2, idler);
	CHECK_EQ(wake(0, busy, 1), busy);
	CHECK_EQ(wake(1, busy, 0), busy);
	CHECK_EQ(wake(2, idler, 1), idler);
	s.t[1].last_ran = m.now - last_ran_ago;
	s.rq[idler].avg_idle = avg_idle;
	s.balance = balance;
	return mdl_sched_sleep(&s, idler);
}

static void test_newidle_pull(void)
{
	/* its SMT sibling's waiting thread */
	CHECK_EQ(pull_case(8, 9, 1, 1e6, 1000000), 1);
	CHECK_EQ(s.t[1].cpu, 9);
	CHECK_EQ(mdl_sched_nr(&s, 8), 1);
	CHECK_EQ(s.pulls, 1);
	CHECK_EQ(s.pulls_far, 0);
	CHECK(m.cpu[9].charged_ns > 0); /* the walk's reads, the lock, the entity */
	teardown();
	/* the other socket's, when its own socket has none waiting */
	CHECK_EQ(pull_case(24, 0, 1, 1e6, 1000000), 1);
	CHECK_EQ(s.pulls_far, 1);
	teardown();
	/* none: balancing off, avg_idle under 0.5 ms, the thread cache-hot */
	CHECK_EQ(pull_case(8, 9, 0, 1e6, 1000000), MDL_SCHED_NONE);
	CHECK_EQ(mdl_sched_nr(&s, 8), 2);
	teardown();
	CHECK_EQ(pull_case(8, 9, 1, 400000, 1000000), MDL_SCHED_NONE);
	teardown();
	CHECK_EQ(pull_case(8, 9, 1, 1e6, 100000), MDL_SCHED_NONE);
	CHECK_EQ(s.pulls, 0);
	teardown();
}

int main(void)
{
	RUN(test_idle_sibling);
	RUN(test_wake_affine);
	RUN(test_newidle_pull);
	return 0;
}
