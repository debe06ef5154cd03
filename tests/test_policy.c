/* SPDX-License-Identifier: MIT */
/*
 * Migration policies, on the simulated clock with CPUs marked busy or idle:
 * each policy puts every timer where it says; pinned timers never move; a
 * running timer never moves; the push of an hrtimer respects the kernel's
 * remote-enqueue rule (not when it would be the remote CPU's first timer);
 * under pull, an idle CPU's global timers run on the migrator the
 * hierarchy names (its group's, a sibling group's, or the last CPU to go
 * idle), never early, while its pinned timers and hrtimers run on it and
 * its deferrable timers wait until it wakes.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "check.h"
#include "sim.h"

static struct pw_runtime *rt;

struct probe {
	struct pw_timer t;
	struct pw_hrtimer h;
	int fired, cpu, timer_cpu;
	uint64_t at_j, due_j; /* jiffy it ran at; the expiry it was armed for */
	int rearm_self;
};

static void wfn(struct pw_timer *t)
{
	struct probe *p = pw_container_of(t, struct probe, t);
	p->fired++;
	p->cpu = pw_this_cpu();
	p->timer_cpu = pw_timer_cpu(t);
	p->at_j = pw_jiffies(rt);
	CHECK(p->at_j - p->due_j < (1ull << 63)); /* never early */
	if (p->rearm_self) {
		p->rearm_self--;
		p->due_j = pw_jiffies(rt) + 100;
		CHECK_EQ(pw_mod_timer(t, p->due_j), 0);
		CHECK_EQ(pw_timer_cpu(t), p->timer_cpu); /* running: never moved */
	}
}

/* Arm @p's wheel timer for @delta jiffies from now. */
static int arm(struct probe *p, uint64_t delta)
{
	p->due_j = pw_jiffies(rt) + delta;
	return pw_mod_timer(&p->t, p->due_j);
}

static enum pw_hrtimer_restart hfn(struct pw_hrtimer *h)
{
	struct probe *p = pw_container_of(h, struct probe, h);
	p->fired++;
	p->cpu = pw_this_cpu();
	return PW_HRTIMER_NORESTART;
}

static void setup_n(unsigned ncpus)
{
	rt = sim_create(ncpus, 1000, 0, 0);
}

static void setup(void)
{
	setup_n(3);
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
	CHECK_EQ(pw_get_migration(rt), PW_MIGRATION_PULL); /* the default */
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_OFF), 0);
	CHECK_EQ(pw_get_migration(rt), PW_MIGRATION_OFF);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PULL), 0);
	CHECK_EQ(pw_set_migration(rt, (enum pw_migration)9), -EINVAL);
	CHECK_EQ(pw_set_migration(NULL, PW_MIGRATION_OFF), -EINVAL);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_get_migration(rt), PW_MIGRATION_PUSH);
	CHECK_EQ(pw_cpu_is_idle(rt, 0), 0); /* CPUs start busy */
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_cpu_is_idle(rt, 0), 1);
	CHECK_EQ(pw_cpu_set_idle(rt, 3, 1), -EINVAL);
	teardown();
}

static void test_off_stays_local(void)
{
	struct probe p;
	setup();
	probe_init(&p, 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_OFF), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0); /* idle, others busy */
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(arm(&p, 50), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 0);
	CHECK_EQ(pw_hrtimer_start(&p.h, 1000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.h), 0);
	pw_cpu_exit(rt);
	/* the idle CPU wakes for its own timers */
	CHECK_EQ(pw_sim_advance(rt, 100000000ull), 0);
	CHECK_EQ(p.fired, 2);
	CHECK_EQ(p.cpu, 0);
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
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 50), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 2); /* pushed */
	CHECK_EQ(pw_mod_timer(&pin.t, pw_jiffies(rt) + 100), 0);
	CHECK_EQ(pw_timer_cpu(&pin.t), 0); /* pinned: never pushed */
	CHECK_EQ(pw_mod_timer(&pin.t, pw_jiffies(rt) + 101), 1); /* same 8-jiffy bucket */
	CHECK_EQ(pw_mod_timer(&pin.t, pin.t.expires), 1);        /* same expiry */
	CHECK_EQ(pw_mod_timer_pending(&pin.t, pin.t.expires), 1);
	CHECK_EQ(pw_stats_read(rt, 0, &st), 0);
	CHECK_EQ(st.pushed, 1);
	CHECK_EQ(st.armed, 5);
	CHECK_EQ(st.fast_path, 2);
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
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 0), 0);
	CHECK_EQ(pw_mod_timer(&q.t, pw_jiffies(rt) + 70), 0);
	CHECK_EQ(pw_timer_cpu(&q.t), 0);
	/* nobody busy: stays local */
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 2, 1), 0);
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
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	/* idle CPU 0 arms: pushed to CPU 1 */
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 5), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 1);
	pw_cpu_exit(rt);
	/* its callback (on CPU 1, now marked idle) re-arms it: a running timer
	 * stays where it runs (checked in wfn) */
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 2, 0), 0);
	p.rearm_self = 1;
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.cpu, 1);
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	teardown();
}

static uint64_t pulled(unsigned cpu)
{
	struct pw_cpu_stats st;
	CHECK_EQ(pw_stats_read(rt, cpu, &st), 0);
	return st.pulled;
}

/* Is @ns the wake-up time of a level-0 timer due at jiffy @due_j?  (The
 * wheel rounds up: a level-0 timer fires at most one jiffy after.) */
static int at_bucket(uint64_t ns, uint64_t due_j)
{
	return ns >= pw_jiffies_to_ns(rt, due_j) && ns <= pw_jiffies_to_ns(rt, due_j + 1);
}

/* Arm @p for @delta jiffies as CPU @cpu (enqueued there: PULL never moves
 * a timer at arm time). */
static void arm_on(struct probe *p, unsigned cpu, uint64_t delta)
{
	CHECK_EQ(pw_cpu_enter(rt, cpu), 0);
	CHECK(arm(p, delta) >= 0);
	CHECK_EQ(pw_timer_cpu(&p->t), (int)cpu);
	pw_cpu_exit(rt);
}

static void test_pull_one_group(void)
{
	struct probe g, pin, d, h;
	setup(); /* 3 CPUs, one group; PULL is the default */
	probe_init(&g, 0);
	probe_init(&pin, PW_TIMER_PINNED);
	probe_init(&d, PW_TIMER_DEFERRABLE);
	probe_init(&h, 0);
	arm_on(&g, 0, 20);
	arm_on(&pin, 0, 100);
	arm_on(&d, 0, 10);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_hrtimer_start(&h.h, 50000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&h.h), 0);
	pw_cpu_exit(rt);
	g.rearm_self = 1;

	/* CPU 0 goes idle: its global timer is handed up; it wakes only for
	 * its hrtimer and pinned timer; CPU 1 (the group's first active CPU)
	 * now migrates and must wake for the global timer */
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), 50000000u);
	CHECK(at_bucket(pw_next_expiry_ns(rt, 1), g.due_j));
	CHECK_EQ(pw_next_expiry_ns(rt, 2), UINT64_MAX);

	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0);
	CHECK_EQ(g.fired, 1);
	CHECK_EQ(g.cpu, 1);       /* run by the migrator... */
	CHECK_EQ(g.timer_cpu, 0); /* ...and still CPU 0's timer */
	CHECK_EQ(d.fired, 0);     /* deferrable: does not wake idle CPU 0 */
	CHECK_EQ(pw_timer_cpu(&g.t), 0); /* re-armed from its callback: stays */
	CHECK_EQ(pw_runtime_check(rt), 0);

	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0); /* 60 ms */
	CHECK_EQ(h.fired, 1);
	CHECK_EQ(h.cpu, 0); /* the hrtimer woke CPU 0... */
	CHECK_EQ(d.fired, 1);
	CHECK_EQ(d.cpu, 0); /* ...which ran its deferrable timer then */
	CHECK_EQ(pw_sim_advance(rt, 70000000ull), 0); /* 130 ms */
	CHECK_EQ(pin.fired, 1);
	CHECK_EQ(pin.cpu, 0); /* pinned: on its CPU */
	CHECK_EQ(g.fired, 2);
	CHECK_EQ(g.cpu, 1);
	CHECK_EQ(pulled(1), 2);
	CHECK_EQ(pulled(0) + pulled(2), 0);

	/* switching to OFF (no workers): every CPU runs its own timers again */
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_OFF), 0);
	arm_on(&g, 0, 5);
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(g.fired, 3);
	CHECK_EQ(g.cpu, 0);
	teardown();
}

/* An idle CPU (PULL, no workers) re-arming its own pending global timer
 * earlier: the re-arm fast lane (timer.c) must lower the entry it handed
 * up, or the migrator would run the timer at the old, later time. */
static void test_pull_idle_rearm_earlier(void)
{
	struct probe g;
	struct pw_cpu_stats st0, st1;
	setup();
	probe_init(&g, 0);
	arm_on(&g, 0, 200);
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	uint64_t old = pw_next_expiry_ns(rt, 1); /* CPU 1 migrates */
	CHECK(old >= pw_jiffies_to_ns(rt, g.due_j) && old <= pw_jiffies_to_ns(rt, g.due_j + 8));
	CHECK_EQ(pw_stats_read(rt, 0, &st0), 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(arm(&g, 20), 1); /* pending, on this CPU: the lane */
	CHECK_EQ(pw_timer_cpu(&g.t), 0);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_stats_read(rt, 0, &st1), 0);
	CHECK_EQ(st1.armed - st0.armed, 1);
	CHECK_EQ(st1.remote_arms, st0.remote_arms);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK(at_bucket(pw_next_expiry_ns(rt, 1), g.due_j)); /* lowered */
	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0);
	CHECK_EQ(g.fired, 1);
	CHECK_EQ(g.cpu, 1);
	CHECK(g.at_j <= g.due_j + 1); /* on time, not at the old entry */
	teardown();
}

/* 20 CPUs: groups {0..7} {8..15} {16..19} under one top group. */
static void test_pull_hierarchy(void)
{
	enum { N = 20 };
	struct probe p[N], pin;
	setup_n(N);
	for (unsigned c = 0; c < N; c++)
		probe_init(&p[c], 0);
	probe_init(&pin, PW_TIMER_PINNED);

	/* the whole first group idle: a CPU of another group handles it (the
	 * top's migrator is group 1, whose migrator is CPU 8) */
	for (unsigned c = 0; c < 8; c++)
		arm_on(&p[c], c, 10 + c);
	arm_on(&pin, 3, 12);
	for (unsigned c = 0; c < 8; c++)
		CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0);
	for (unsigned c = 0; c < 8; c++) {
		CHECK_EQ(p[c].fired, 1);
		CHECK_EQ(p[c].cpu, 8);
		CHECK_EQ(p[c].timer_cpu, (int)c);
	}
	CHECK_EQ(pin.cpu, 3);
	CHECK_EQ(pulled(8), 8);

	/* CPU 8 idle too: group 1's next active CPU (9) takes over */
	for (unsigned c = 0; c < 9; c++)
		arm_on(&p[c], c, 10);
	for (unsigned c = 0; c < 9; c++)
		CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0);
	for (unsigned c = 0; c < 9; c++)
		CHECK_EQ(p[c].cpu, 9);

	/* only CPU 19 active: it handles all 19 others */
	for (unsigned c = 0; c < 19; c++)
		arm_on(&p[c], c, 10 + c % 3);
	for (unsigned c = 0; c < 19; c++)
		CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0);
	for (unsigned c = 0; c < 19; c++) {
		CHECK_EQ(p[c].fired, c < 8 ? 3 : c == 8 ? 2 : 1);
		CHECK_EQ(p[c].cpu, 19);
	}

	/* everyone idle: the last CPU to go idle (19, then 5) wakes for all */
	for (unsigned c = 0; c < N; c++)
		arm_on(&p[c], c, 10 + c % 4);
	CHECK_EQ(pw_cpu_set_idle(rt, 19, 1), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 5, 0), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 5, 1), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	for (unsigned c = 0; c < N; c++)
		CHECK(c == 5 || pw_next_expiry_ns(rt, c) == UINT64_MAX);
	CHECK(at_bucket(pw_next_expiry_ns(rt, 5), p[0].due_j));
	CHECK_EQ(pw_sim_advance(rt, 30000000ull), 0);
	for (unsigned c = 0; c < N; c++)
		CHECK_EQ(p[c].cpu, 5);
	CHECK_EQ(pw_runtime_check(rt), 0);
	teardown();
}

/* A thread that is no CPU arms a timer that stays on idle CPU 0: the
 * hierarchy learns of it without waking CPU 0. */
static void test_pull_remote_arm(void)
{
	struct probe p;
	setup();
	probe_init(&p, 0); /* set up by no CPU: on CPU 0 */
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(arm(&p, 7), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), UINT64_MAX);
	CHECK(at_bucket(pw_next_expiry_ns(rt, 1), p.due_j));
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.cpu, 1);
	/* a deleted timer leaves an early entry behind: harmless */
	CHECK_EQ(arm(&p, 7), 0);
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(pw_runtime_check(rt), 0);
	teardown();
}

/* The waker goes offline: the CPU that takes its timers takes that part. */
static void test_pull_offline_waker(void)
{
	struct probe p, q;
	setup();
	probe_init(&p, 0);
	probe_init(&q, 0);
	arm_on(&p, 1, 30);
	arm_on(&q, 2, 40);
	for (unsigned c = 0; c < 3; c++)
		CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0); /* CPU 2 went idle last */
	CHECK(at_bucket(pw_next_expiry_ns(rt, 2), p.due_j));
	CHECK_EQ(pw_cpu_offline(rt, 2), 1);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_timer_cpu(&q.t), 0);
	CHECK(at_bucket(pw_next_expiry_ns(rt, 0), p.due_j));
	CHECK_EQ(pw_sim_advance(rt, 50000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.cpu, 0);
	CHECK_EQ(q.fired, 1);
	CHECK_EQ(q.cpu, 0);
	CHECK_EQ(pw_cpu_online(rt, 2), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	teardown();
}

int main(void)
{
	RUN(test_api);
	RUN(test_off_stays_local);
	RUN(test_push);
	RUN(test_running_never_pushed);
	RUN(test_pull_one_group);
	RUN(test_pull_idle_rearm_earlier);
	RUN(test_pull_hierarchy);
	RUN(test_pull_remote_arm);
	RUN(test_pull_offline_waker);
	return 0;
}
