/* SPDX-License-Identifier: MIT */
/*
 * CPU offline/online: every timer of the offlined CPU (wheel, both bases,
 * pinned or not, and hrtimers) moves to an online CPU and still fires
 * exactly once there; nothing can target the offline CPU; it comes back.
 * On the simulated clock, then with real worker threads (under TSan too).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"

#define N 40

static struct pw_runtime *rt;

struct probe {
	struct pw_timer t;
	struct pw_hrtimer h;
	int fired; /* atomic */
	int cpu;
};

static void wfn(struct pw_timer *t)
{
	struct probe *p = pw_container_of(t, struct probe, t);
	p->cpu = pw_this_cpu();
	__atomic_fetch_add(&p->fired, 1, __ATOMIC_RELEASE);
}

static enum pw_hrtimer_restart hfn(struct pw_hrtimer *h)
{
	struct probe *p = pw_container_of(h, struct probe, h);
	p->cpu = pw_this_cpu();
	__atomic_fetch_add(&p->fired, 1, __ATOMIC_RELEASE);
	return PW_HRTIMER_NORESTART;
}

static struct probe pr[N];

/* Arm N timers on CPU 1: wheel (a third pinned, a third deferrable) and
 * hrtimers, due within @ms milliseconds. */
static void arm_on_cpu1(uint64_t ms)
{
	memset(pr, 0, sizeof(pr));
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	for (int i = 0; i < N; i++) {
		unsigned fl = i % 3 == 1 ? PW_TIMER_DEFERRABLE : 0;
		CHECK_EQ(pw_timer_setup(rt, &pr[i].t, wfn, fl), 0);
		CHECK_EQ(pw_hrtimer_setup(rt, &pr[i].h, hfn, CLOCK_MONOTONIC, 0), 0);
		if (i % 2 == 0) {
			if (i % 3 == 0) {
				pr[i].t.expires = pw_jiffies(rt) + 1 + (uint64_t)i % ms;
				CHECK_EQ(pw_add_timer_on(&pr[i].t, 1), 0); /* pinned */
			} else {
				CHECK_EQ(pw_mod_timer(&pr[i].t, pw_jiffies(rt) + 1 + (uint64_t)i % ms), 0);
			}
		} else {
			CHECK_EQ(pw_hrtimer_start(&pr[i].h, (1 + (uint64_t)i % ms) * 1000000,
						  PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED), 0);
		}
	}
	pw_cpu_exit(rt);
	for (int i = 0; i < N; i++)
		CHECK_EQ(i % 2 ? pw_hrtimer_cpu(&pr[i].h) : pw_timer_cpu(&pr[i].t), 1);
}

static void check_all_moved(int to)
{
	for (int i = 0; i < N; i++)
		CHECK_EQ(i % 2 ? pw_hrtimer_cpu(&pr[i].h) : pw_timer_cpu(&pr[i].t), to);
}

static void test_sim(void)
{
	struct pw_timer x;
	rt = sim_create(3, 1000, 0, 0);
	arm_on_cpu1(30);
	CHECK_EQ(pw_cpu_offline(rt, 1), N);
	CHECK_EQ(pw_cpu_is_online(rt, 1), 0);
	check_all_moved(0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_cpu_offline(rt, 1), -EALREADY);
	CHECK_EQ(pw_cpu_enter(rt, 1), -ENODEV);
	CHECK_EQ(pw_run_timers(rt, 1), -ENODEV);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 0), -ENODEV);
	CHECK_EQ(pw_timer_setup(rt, &x, wfn, 0), 0);
	x.expires = pw_jiffies(rt) + 5;
	CHECK_EQ(pw_add_timer_on(&x, 1), -ENODEV);
	CHECK_EQ(pw_sim_advance(rt, 100000000ull), 0);
	for (int i = 0; i < N; i++) {
		CHECK_EQ(pr[i].fired, 1);
		CHECK_EQ(pr[i].cpu, 0);
	}
	/* the last online CPU cannot go */
	CHECK_EQ(pw_cpu_offline(rt, 2), 0);
	CHECK_EQ(pw_cpu_offline(rt, 0), -EBUSY);
	CHECK_EQ(pw_cpu_online(rt, 2), 0);
	CHECK_EQ(pw_cpu_online(rt, 1), 0);
	CHECK_EQ(pw_cpu_online(rt, 1), -EALREADY);
	CHECK_EQ(pw_add_timer_on(&x, 1), 0);
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(pw_timer_pending(&x), 0);
	/* served by a thread: refused */
	CHECK_EQ(pw_cpu_enter(rt, 2), 0);
	CHECK_EQ(pw_cpu_offline(rt, 2), -EDEADLK);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_cpu_offline(NULL, 0), -EINVAL);
	CHECK_EQ(pw_cpu_offline(rt, 3), -EINVAL);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

static void nudge_fn(struct pw_work *w)
{
	(void)w;
}

static void test_workers(void)
{
	static struct pw_work nudge;
	struct pw_config cfg;
	pw_work_init(&nudge, nudge_fn);
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	arm_on_cpu1(50);
	CHECK_EQ(pw_runtime_start(rt), 0);
	CHECK_EQ(pw_cpu_offline(rt, 1) >= 0, 1); /* some may have fired already */
	for (int i = 0; i < N; i++) /* the ones still armed are on CPU 0 now */
		if (i % 2 ? pw_hrtimer_is_queued(&pr[i].h) : pw_timer_pending(&pr[i].t))
			CHECK_EQ(i % 2 ? pw_hrtimer_cpu(&pr[i].h) : pw_timer_cpu(&pr[i].t), 0);
	/* each fires exactly once; those that fired before the move ran on 1 */
	for (int waited = 0;; waited++) {
		int done = 1;
		for (int i = 0; i < N; i++)
			done &= __atomic_load_n(&pr[i].fired, __ATOMIC_ACQUIRE) == 1;
		if (done)
			break;
		CHECK(waited < 5000);
		pw_queue_work_on(rt, 0, &nudge); /* deferrable ones need a wake-up */
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(pw_cpu_online(rt, 1), 0);
	struct probe q = {0};
	CHECK_EQ(pw_timer_setup(rt, &q.t, wfn, 0), 0);
	q.t.expires = pw_jiffies(rt) + 2;
	CHECK_EQ(pw_add_timer_on(&q.t, 1), 0);
	for (int waited = 0; !__atomic_load_n(&q.fired, __ATOMIC_ACQUIRE); waited++) {
		CHECK(waited < 5000);
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(q.cpu, 1);
	CHECK_EQ(pw_runtime_stop(rt), 0);
	for (int i = 0; i < N; i++)
		CHECK_EQ(pr[i].fired, 1);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_sim);
	RUN(test_workers);
	return 0;
}
