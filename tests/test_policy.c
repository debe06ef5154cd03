/* SPDX-License-Identifier: MIT */
/*
 * Migration policies, on the simulated clock with CPUs marked busy or idle:
 * each policy puts every timer where it says; pinned timers never move; a
 * running timer never moves; the push of an hrtimer respects the kernel's
 * remote-enqueue rule (not when it would be the remote CPU's first timer).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "check.h"

static struct pw_runtime *rt;

struct probe {
	struct pw_timer t;
	struct pw_hrtimer h;
	int fired, cpu;
	int rearm_self;
};

static void wfn(struct pw_timer *t)
{
	struct probe *p = pw_container_of(t, struct probe, t);
	p->fired++;
	p->cpu = pw_this_cpu();
	if (p->rearm_self) {
		p->rearm_self = 0;
		CHECK_EQ(pw_mod_timer(t, pw_jiffies(rt) + 100), 0);
		CHECK_EQ(pw_timer_cpu(t), p->cpu); /* running: never moved */
	}
}

static enum pw_hrtimer_restart hfn(struct pw_hrtimer *h)
{
	struct probe *p = pw_container_of(h, struct probe, h);
	p->fired++;
	p->cpu = pw_this_cpu();
	return PW_HRTIMER_NORESTART;
}

static void setup(void)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 3;
	cfg.clock = PW_CLOCK_SIM;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
}

static void teardown(void)
{
	pw_cpu_exit(rt);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

static void probe_init(struct probe *p, unsigned tflags)
{
	memset(p, 0, sizeof(*p));
	CHECK_EQ(pw_timer_setup(rt, &p->t, wfn, tflags), 0);
	CHECK_EQ(pw_hrtimer_setup(rt, &p->h, hfn, CLOCK_MONOTONIC, 0), 0);
}

static void test_api(void)
{
	setup();
	CHECK_EQ(pw_get_migration(rt), PW_MIGRATION_OFF);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PULL), -EOPNOTSUPP);
	CHECK_EQ(pw_set_migration(rt, (enum pw_migration)9), -EINVAL);
	CHECK_EQ(pw_set_migration(NULL, PW_MIGRATION_OFF), -EINVAL);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_get_migration(rt), PW_MIGRATION_PUSH);
	CHECK_EQ(pw_cpu_idle(rt, 0), 0); /* CPUs start busy */
	CHECK_EQ(pw_cpu_set_busy(rt, 0, 0), 0);
	CHECK_EQ(pw_cpu_idle(rt, 0), 1);
	CHECK_EQ(pw_cpu_set_busy(rt, 3, 0), -EINVAL);
	teardown();
}

static void test_off_stays_local(void)
{
	struct probe p;
	setup();
	probe_init(&p, 0);
	CHECK_EQ(pw_cpu_set_busy(rt, 0, 0), 0); /* idle, others busy */
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 50), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 0);
	CHECK_EQ(pw_hrtimer_start(&p.h, 1000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.h), 0);
	teardown();
}

static void test_push(void)
{
	struct probe p, pin, q, far;
	struct pw_cpu_stats st;
	setup();
	probe_init(&p, 0);
	probe_init(&pin, PW_TIMER_PINNED);
	probe_init(&q, 0);
	probe_init(&far, 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	/* CPU 0 idle, CPU 1 idle, CPU 2 busy: the first busy CPU is 2 */
	CHECK_EQ(pw_cpu_set_busy(rt, 0, 0), 0);
	CHECK_EQ(pw_cpu_set_busy(rt, 1, 0), 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 50), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 2); /* pushed */
	CHECK_EQ(pw_mod_timer(&pin.t, pw_jiffies(rt) + 100), 0);
	CHECK_EQ(pw_timer_cpu(&pin.t), 0); /* pinned: never pushed */
	CHECK_EQ(pw_mod_timer(&pin.t, pw_jiffies(rt) + 101), 1); /* same 8-jiffy bucket */
	CHECK_EQ(pw_stats_read(rt, 0, &st), 0);
	CHECK_EQ(st.pushed, 1);
	CHECK_EQ(st.armed, 3);
	CHECK_EQ(st.same_bucket, 1);
	CHECK_EQ(st.remote_arms, 1);

	/* hrtimers: CPU 2 has no hrtimer yet, so this one would be its first:
	 * the remote-enqueue rule keeps it local */
	CHECK_EQ(pw_hrtimer_start(&p.h, 5000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.h), 0);
	/* give CPU 2 an earlier hrtimer (armed by CPU 2 itself): now pushed */
	pw_cpu_exit(rt);
	CHECK_EQ(pw_cpu_enter(rt, 2), 0);
	CHECK_EQ(pw_hrtimer_start(&q.h, 1000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&q.h), 2);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_hrtimer_start(&p.h, 5000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.h), 2);
	CHECK_EQ(pw_hrtimer_start(&far.h, 5000000, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED), 0);
	CHECK_EQ(pw_hrtimer_cpu(&far.h), 0); /* pinned */

	/* the arming CPU busy: stays local */
	CHECK_EQ(pw_cpu_set_busy(rt, 0, 1), 0);
	CHECK_EQ(pw_mod_timer(&q.t, pw_jiffies(rt) + 70), 0);
	CHECK_EQ(pw_timer_cpu(&q.t), 0);
	/* nobody busy: stays local */
	CHECK_EQ(pw_cpu_set_busy(rt, 0, 0), 0);
	CHECK_EQ(pw_cpu_set_busy(rt, 2, 0), 0);
	CHECK_EQ(pw_mod_timer(&q.t, pw_jiffies(rt) + 500), 1);
	CHECK_EQ(pw_timer_cpu(&q.t), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);

	/* everything runs where it was placed */
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 1000000000ull), 0);
	CHECK_EQ(p.fired, 2);
	CHECK_EQ(pin.fired, 1);
	CHECK_EQ(pin.cpu, 0);
	CHECK_EQ(far.cpu, 0);
	teardown();
}

static void test_running_never_pushed(void)
{
	struct probe p;
	setup();
	probe_init(&p, 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_cpu_set_busy(rt, 0, 0), 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	/* idle CPU 0 arms: pushed to CPU 1 */
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 5), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 1);
	pw_cpu_exit(rt);
	/* its callback (on CPU 1, now marked idle) re-arms it: a running timer
	 * stays where it runs (checked in wfn) */
	CHECK_EQ(pw_cpu_set_busy(rt, 1, 0), 0);
	CHECK_EQ(pw_cpu_set_busy(rt, 2, 1), 0);
	p.rearm_self = 1;
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.cpu, 1);
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	teardown();
}

int main(void)
{
	RUN(test_api);
	RUN(test_off_stays_local);
	RUN(test_push);
	RUN(test_running_never_pushed);
	return 0;
}
