/* SPDX-License-Identifier: MIT */
/*
 * Migration policies, on the simulated clock with CPUs marked busy or idle:
 * each policy puts every timer where it says (PUSH by scheduling domain:
 * test_policy_topo.c); pinned timers never move; a
 * running timer never moves; the push of an hrtimer respects the kernel's
 * remote-enqueue rule (not when it would be the remote CPU's first timer);
 * under pull, an idle CPU's global timers run on the migrator the
 * hierarchy names (its group's, a sibling group's, or the last CPU to go
 * idle), never early, while its pinned timers and hrtimers run on it and
 * its deferrable timers wait until it wakes.
 * Kick rules (pw_set_kick_rule()), counted by reason (pw_kick_stats_read()):
 * under Linux 3.17's, every remote enqueue of a non-deferrable wheel timer
 * kicks its target, busy or idle, once (as many kicks as remote arms);
 * under 4.8's, only an idle target whose first expiry the timer moves
 * earlier; local arms and deferrable timers never kick; OFF and PULL make
 * no remote enqueue from a CPU's arms; hrtimers, work and the PULL
 * hierarchy's waker have their own reasons.  With an argument "workers":
 * the same under real worker threads (properties, not timings).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <time.h>
#include <string.h>
#include <stdbool.h>

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

/* ---- kick rules ---- */

static struct pw_kick_stats kicks(unsigned cpu)
{
	struct pw_kick_stats k;
	CHECK_EQ(pw_kick_stats_read(rt, cpu, &k), 0);
	return k;
}

static uint64_t kicks_all(unsigned cpu)
{
	struct pw_kick_stats k = kicks(cpu);
	return k.remote_enqueue + k.idle_earlier + k.hrtimer + k.work + k.tmigr;
}

static struct pw_cpu_stats stats(unsigned cpu)
{
	struct pw_cpu_stats st;
	CHECK_EQ(pw_stats_read(rt, cpu, &st), 0);
	return st;
}

/* Every CPU's kicks_received is the sum of its kicks by reason (no CPU
 * goes offline and the clock is not stepped here), and CPUs sent no more
 * than were received (the rest came from threads that are no CPU). */
static void check_kick_sums(void)
{
	uint64_t sent = 0, received = 0;
	for (unsigned c = 0; c < pw_runtime_ncpus(rt); c++) {
		struct pw_cpu_stats st = stats(c);
		CHECK_EQ(st.kicks_received, kicks_all(c));
		sent += st.kicks_sent;
		received += st.kicks_received;
	}
	CHECK(sent <= received);
}

/* Set @p up as CPU @cpu, so that its timers sit there, not pending. */
static void probe_init_on(struct probe *p, unsigned cpu, unsigned tflags)
{
	CHECK_EQ(pw_cpu_enter(rt, cpu), 0);
	probe_init(p, tflags);
	pw_cpu_exit(rt);
}

static void test_kick_api(void)
{
	struct pw_kick_stats k;
	setup();
	CHECK_EQ(pw_get_kick_rule(rt), PW_KICK_LINUX_4_8); /* the default */
	CHECK_EQ(pw_get_kick_rule(NULL), PW_KICK_LINUX_4_8);
	CHECK_EQ(pw_set_kick_rule(rt, PW_KICK_LINUX_3_17), 0);
	CHECK_EQ(pw_get_kick_rule(rt), PW_KICK_LINUX_3_17);
	CHECK_EQ(pw_set_kick_rule(rt, (enum pw_kick_rule)2), -EINVAL);
	CHECK_EQ(pw_set_kick_rule(rt, (enum pw_kick_rule)-1), -EINVAL);
	CHECK_EQ(pw_set_kick_rule(NULL, PW_KICK_LINUX_4_8), -EINVAL);
	CHECK_EQ(pw_get_kick_rule(rt), PW_KICK_LINUX_3_17); /* refusals change nothing */
	CHECK_EQ(pw_set_kick_rule(rt, PW_KICK_LINUX_4_8), 0);
	CHECK_EQ(pw_get_kick_rule(rt), PW_KICK_LINUX_4_8);
	CHECK_EQ(pw_kick_stats_read(NULL, 0, &k), -EINVAL);
	CHECK_EQ(pw_kick_stats_read(rt, 3, &k), -EINVAL);
	CHECK_EQ(pw_kick_stats_read(rt, 0, NULL), -EINVAL);
	for (unsigned c = 0; c < 3; c++)
		CHECK_EQ(kicks_all(c), 0);
	teardown();
}

/* 3.17 under PUSH: an idle CPU's arms land on the busy CPU, and every one
 * that enqueues there kicks it, once; nothing else does. */
static void test_kick_317_push(void)
{
	enum { N = 10 };
	struct probe p, pin, d, on1, own;
	setup();
	probe_init(&p, 0);
	probe_init(&pin, PW_TIMER_PINNED);
	probe_init(&d, PW_TIMER_DEFERRABLE);
	probe_init(&on1, 0);
	probe_init_on(&own, 2, 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_set_kick_rule(rt, PW_KICK_LINUX_3_17), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0); /* CPU 2 is the busy one */
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);

	/* N arms of one timer, each into another bucket (level 0: a jiffy
	 * each): the first moves it to CPU 2, the others re-arm it there */
	for (unsigned i = 0; i < N; i++) {
		CHECK(arm(&p, 10 + 5 * i) >= 0);
		CHECK_EQ(pw_timer_cpu(&p.t), 2);
	}
	CHECK_EQ(kicks(2).remote_enqueue, N);
	CHECK_EQ(stats(0).remote_arms, N);
	CHECK_EQ(stats(0).kicks_sent, N);
	CHECK_EQ(stats(2).kicks_received, N);
	/* the same expiry (fast path 1) enqueues nothing; nor does a re-arm
	 * into the same bucket (fast path 2: a level-1 bucket is 8 jiffies) */
	CHECK_EQ(pw_mod_timer(&p.t, p.t.expires), 1);
	p.due_j = (pw_jiffies(rt) + 80) & ~7ull;
	CHECK_EQ(pw_mod_timer(&p.t, p.due_j), 1);
	CHECK_EQ(kicks(2).remote_enqueue, N + 1);
	uint64_t sb = stats(0).same_bucket;
	CHECK_EQ(pw_mod_timer(&p.t, p.due_j + 1), 1);
	CHECK_EQ(stats(0).same_bucket, sb + 1);
	CHECK_EQ(kicks(2).remote_enqueue, N + 1);
	CHECK_EQ(stats(0).remote_arms, N + 1);

	/* local arms never kick: a pinned timer is never pushed */
	CHECK(arm(&pin, 30) >= 0);
	CHECK(arm(&pin, 40) >= 0);
	CHECK_EQ(pw_timer_cpu(&pin.t), 0);
	CHECK_EQ(kicks_all(0), 0);
	/* a deferrable timer is pushed (a remote arm) but kicks nobody */
	CHECK(arm(&d, 20) >= 0);
	CHECK_EQ(pw_timer_cpu(&d.t), 2);
	CHECK_EQ(stats(0).remote_arms, N + 2);
	CHECK_EQ(kicks(2).remote_enqueue, N + 1);
	/* add_timer_on() another CPU, idle or not: a kick */
	on1.t.expires = pw_jiffies(rt) + 15;
	on1.due_j = on1.t.expires;
	CHECK_EQ(pw_add_timer_on(&on1.t, 1), 0);
	CHECK_EQ(kicks(1).remote_enqueue, 1);
	CHECK_EQ(stats(0).remote_arms, N + 3);
	CHECK_EQ(stats(0).kicks_sent, N + 2);
	pw_cpu_exit(rt);

	/* the busy CPU's own arms are local */
	CHECK_EQ(pw_cpu_enter(rt, 2), 0);
	CHECK(arm(&own, 12) >= 0);
	CHECK_EQ(pw_timer_cpu(&own.t), 2);
	CHECK_EQ(kicks(2).remote_enqueue, N + 1);
	pw_cpu_exit(rt);
	/* a thread that is no CPU enqueues on CPU 2's base: a kick too (not
	 * a CPU's remote arm) */
	CHECK(arm(&own, 13) >= 0);
	CHECK_EQ(pw_timer_cpu(&own.t), 2);
	CHECK_EQ(kicks(2).remote_enqueue, N + 2);
	CHECK_EQ(stats(0).remote_arms + stats(1).remote_arms + stats(2).remote_arms, N + 3);
	for (unsigned c = 0; c < 3; c++) {
		struct pw_kick_stats k = kicks(c);
		CHECK_EQ(k.idle_earlier + k.hrtimer + k.work + k.tmigr, 0);
	}
	check_kick_sums();

	/* the rule changes nothing about where and when timers run */
	CHECK_EQ(pw_sim_advance(rt, 200000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.cpu, 2);
	CHECK_EQ(on1.fired, 1);
	CHECK_EQ(on1.cpu, 1);
	CHECK_EQ(own.fired, 1);
	CHECK_EQ(pin.fired, 1);
	CHECK_EQ(pin.cpu, 0);
	teardown();
}

/* 4.8 (the default): a busy target is never kicked; an idle one only when
 * the timer moves its first expiry earlier. */
static void test_kick_48(void)
{
	enum { N = 10 };
	struct probe p, a, b, c, tie, busy, g, g2, dd;
	setup();
	probe_init(&p, 0);
	probe_init(&a, 0);
	probe_init(&b, 0);
	probe_init(&c, 0);
	probe_init(&tie, 0);
	probe_init(&busy, 0);
	probe_init_on(&g, 1, 0);
	probe_init_on(&g2, 1, 0);
	probe_init_on(&dd, 1, PW_TIMER_DEFERRABLE);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);

	/* pushed to the busy CPU: remote arms, no kicks, however early */
	for (unsigned i = 0; i < N; i++)
		CHECK(arm(&p, 10 + 5 * i) >= 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 2);
	CHECK_EQ(stats(0).remote_arms, N);
	busy.t.expires = pw_jiffies(rt) + 1;
	CHECK_EQ(pw_add_timer_on(&busy.t, 2), 0);
	CHECK_EQ(kicks_all(2), 0);

	/* idle CPU 1 with nothing armed: any timer is its first */
	a.t.expires = pw_jiffies(rt) + 100;
	CHECK_EQ(pw_add_timer_on(&a.t, 1), 0);
	CHECK_EQ(kicks(1).idle_earlier, 1);
	/* later than its first expiry: no kick */
	b.t.expires = pw_jiffies(rt) + 200;
	CHECK_EQ(pw_add_timer_on(&b.t, 1), 0);
	CHECK_EQ(kicks(1).idle_earlier, 1);
	/* earlier: one kick */
	c.t.expires = pw_jiffies(rt) + 50;
	CHECK_EQ(pw_add_timer_on(&c.t, 1), 0);
	CHECK_EQ(kicks(1).idle_earlier, 2);
	/* the same expiry as its first: not earlier */
	tie.t.expires = c.t.expires;
	CHECK_EQ(pw_add_timer_on(&tie.t, 1), 0);
	CHECK_EQ(kicks(1).idle_earlier, 2);
	CHECK_EQ(stats(0).kicks_sent, 2);
	pw_cpu_exit(rt);

	/* the first expiry spans both wheel bases (pinned and global: the
	 * kernel's one base): a global timer later than the pinned first does
	 * not kick, an earlier one does (armed by a thread that is no CPU,
	 * these stay on CPU 1) */
	CHECK(arm(&g, 70) >= 0);
	CHECK_EQ(pw_timer_cpu(&g.t), 1);
	CHECK_EQ(kicks(1).idle_earlier, 2);
	CHECK(arm(&g2, 30) >= 0);
	CHECK_EQ(kicks(1).idle_earlier, 3);
	/* re-arming the first timer earlier kicks again; later does not */
	CHECK(arm(&g2, 20) >= 0);
	CHECK_EQ(kicks(1).idle_earlier, 4);
	CHECK(arm(&g2, 25) >= 0);
	CHECK_EQ(kicks(1).idle_earlier, 4);
	/* an hrtimer wakes it before: a wheel timer after it is no kick */
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_hrtimer_start(&g.h, 5000000, PW_HRTIMER_MODE_REL), 0);
	pw_cpu_exit(rt);
	CHECK(arm(&g, 10) >= 0);
	CHECK_EQ(kicks(1).idle_earlier, 4);
	/* deferrable: never */
	CHECK(arm(&dd, 1) >= 0);
	CHECK_EQ(pw_timer_cpu(&dd.t), 1);
	CHECK_EQ(kicks(1).idle_earlier, 4);
	/* busy now: no kick however early */
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 0), 0);
	CHECK(arm(&g2, 2) >= 0);
	CHECK_EQ(kicks(1).idle_earlier, 4);
	CHECK_EQ(kicks(1).remote_enqueue + kicks(1).hrtimer, 0);
	CHECK_EQ(kicks_all(0), 0);
	check_kick_sums();

	CHECK_EQ(pw_sim_advance(rt, 300000000ull), 0);
	CHECK_EQ(a.fired + b.fired + c.fired + tie.fired + g2.fired, 5);
	CHECK_EQ(g.fired, 2); /* its wheel timer and its hrtimer */
	CHECK_EQ(a.cpu, 1);
	CHECK_EQ(p.cpu, 2);
	teardown();
}

/* OFF and PULL keep a CPU's arms on it: no remote enqueue, so no kick,
 * under either rule. */
static void test_kick_off_pull(void)
{
	const enum pw_migration pols[] = {PW_MIGRATION_OFF, PW_MIGRATION_PULL};
	const enum pw_kick_rule rules[] = {PW_KICK_LINUX_3_17, PW_KICK_LINUX_4_8};
	for (unsigned i = 0; i < 2; i++)
		for (unsigned r = 0; r < 2; r++) {
			struct probe p[4];
			setup();
			for (unsigned k = 0; k < 4; k++)
				probe_init(&p[k], k == 3 ? PW_TIMER_PINNED : 0);
			CHECK_EQ(pw_set_migration(rt, pols[i]), 0);
			CHECK_EQ(pw_set_kick_rule(rt, rules[r]), 0);
			CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
			CHECK_EQ(pw_cpu_enter(rt, 0), 0);
			for (unsigned k = 0; k < 4; k++) {
				for (unsigned n = 0; n < 5; n++)
					CHECK(arm(&p[k], 10 + 7 * n + k) >= 0);
				CHECK_EQ(pw_timer_cpu(&p[k].t), 0);
			}
			pw_cpu_exit(rt);
			for (unsigned c = 0; c < 3; c++) {
				CHECK_EQ(stats(c).remote_arms, 0);
				CHECK_EQ(stats(c).kicks_received, 0);
				CHECK_EQ(kicks_all(c), 0);
			}
			CHECK_EQ(pw_sim_advance(rt, 100000000ull), 0);
			for (unsigned k = 0; k < 4; k++)
				CHECK_EQ(p[k].fired, 1);
			teardown();
		}
}

static int work_ran;
static void work_fn(struct pw_work *w)
{
	(void)w;
	work_ran++;
}

/* The other reasons: hrtimers (the same under either rule), work, and
 * the PULL hierarchy waking its waker. */
static void test_kick_reasons(void)
{
	struct probe h1, h2, h3, g, late;
	struct pw_work w;
	setup();
	probe_init_on(&h1, 1, 0);
	probe_init_on(&h2, 1, 0);
	probe_init_on(&h3, 2, 0);
	probe_init(&g, 0);
	probe_init(&late, 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_OFF), 0);
	CHECK_EQ(pw_set_kick_rule(rt, PW_KICK_LINUX_3_17), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	/* a thread that is no CPU starts hrtimers that stay on their CPU: a
	 * new first event of the idle CPU kicks it, a later one does not; a
	 * busy CPU is not kicked */
	CHECK_EQ(pw_hrtimer_start(&h1.h, 3000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&h1.h), 1);
	CHECK_EQ(kicks(1).hrtimer, 1);
	CHECK_EQ(pw_hrtimer_start(&h2.h, 4000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(kicks(1).hrtimer, 1);
	CHECK_EQ(pw_hrtimer_start(&h2.h, 2000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(kicks(1).hrtimer, 2);
	/* the first event restarted later: the CPU wakes at the old time
	 * anyway (as for wheel timers), no kick; earlier again: a kick */
	CHECK_EQ(pw_hrtimer_start(&h2.h, 2500000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(kicks(1).hrtimer, 2);
	CHECK_EQ(pw_hrtimer_start(&h2.h, 1500000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(kicks(1).hrtimer, 3);
	CHECK_EQ(pw_hrtimer_start(&h3.h, 1000000, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&h3.h), 2);
	CHECK_EQ(kicks(2).hrtimer, 0);
	CHECK_EQ(kicks(1).remote_enqueue + kicks(2).remote_enqueue, 0);

	/* work for an idle CPU from another thread: a kick; for a busy CPU,
	 * or queued by the CPU for itself: none */
	CHECK_EQ(pw_work_init(&w, work_fn), 0);
	CHECK_EQ(pw_queue_work_on(rt, 1, &w), 0);
	CHECK_EQ(kicks(1).work, 1);
	CHECK_EQ(pw_run_work(rt, 1), 1);
	CHECK_EQ(pw_queue_work_on(rt, 2, &w), 0);
	CHECK_EQ(pw_run_work(rt, 2), 1);
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_queue_work_on(rt, 1, &w), 0);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_run_work(rt, 1), 1);
	CHECK_EQ(work_ran, 3);
	CHECK_EQ(kicks(1).work, 1);
	CHECK_EQ(kicks(2).work, 0);
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);

	/* PULL, every CPU idle: the last to go idle (2) is the waker; a timer
	 * that makes the hierarchy's first event earlier kicks it, a later
	 * one does not, and the CPU it is on is not kicked (the hierarchy
	 * took it) */
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PULL), 0);
	CHECK_EQ(pw_set_kick_rule(rt, PW_KICK_LINUX_4_8), 0);
	for (unsigned c = 0; c < 3; c++)
		CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
	CHECK(arm(&g, 20) >= 0); /* no CPU: stays on CPU 0 */
	CHECK_EQ(pw_timer_cpu(&g.t), 0);
	CHECK_EQ(kicks(2).tmigr, 1);
	CHECK(arm(&late, 40) >= 0);
	CHECK_EQ(kicks(2).tmigr, 1);
	CHECK_EQ(kicks_all(0), 0);
	check_kick_sums();
	CHECK_EQ(pw_sim_advance(rt, 50000000ull), 0);
	CHECK_EQ(g.fired, 1);
	CHECK_EQ(g.cpu, 2);
	CHECK_EQ(h1.fired + h2.fired + h3.fired, 3);
	teardown();
}


/* ---- kick rules under real worker threads (argument "workers") ---- */

enum { WK_TIMERS = 4, WK_ARMS = 200 };
static struct pw_timer wk_t[WK_TIMERS];
static struct pw_hrtimer wk_driver;
static unsigned wk_n; /* CPU 0's callbacks only */

/* They seldom run: the driver pushes them back every millisecond. */
static void wk_fn(struct pw_timer *t)
{
	(void)t;
}

/* Every millisecond on CPU 0 (pinned; its worker is idle: no poll hook),
 * arm the wheel timers: PUSH puts them on CPU 1, the busy one. */
static enum pw_hrtimer_restart wk_drive(struct pw_hrtimer *h)
{
	uint64_t j = pw_jiffies(rt);
	for (unsigned i = 0; i < WK_TIMERS; i++)
		pw_mod_timer(&wk_t[i], j + 3 + (wk_n++ % 7));
	pw_hrtimer_forward_now(h, 1000000);
	return PW_HRTIMER_RESTART;
}

/* CPU 1 runs a task all the time: it reports work on every round, so its
 * worker never sleeps. */
static int wk_busy(struct pw_runtime *r, unsigned cpu, void *arg)
{
	(void)r;
	(void)cpu;
	(void)arg;
	struct timespec ts = {0, 20000};
	nanosleep(&ts, NULL);
	return 1;
}

/* PUSH with CPU 0 idle and CPU 1 busy under rule @rule; returns when CPU 0
 * has made WK_ARMS remote arms and the workers are stopped. */
static void wk_run(enum pw_kick_rule rule)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	wk_n = 0;
	for (unsigned i = 0; i < WK_TIMERS; i++)
		CHECK_EQ(pw_timer_setup(rt, &wk_t[i], wk_fn, 0), 0); /* on CPU 0 */
	CHECK_EQ(pw_hrtimer_setup(rt, &wk_driver, wk_drive, CLOCK_MONOTONIC, 0), 0);
	CHECK_EQ(pw_hrtimer_start(&wk_driver, 1000000,
				  PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED), 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	CHECK_EQ(pw_set_kick_rule(rt, rule), 0);
	CHECK_EQ(pw_cpu_set_idle(rt, 0, 1), 0);
	CHECK_EQ(pw_set_poll(rt, 1, wk_busy, NULL), 0);
	CHECK_EQ(pw_runtime_start(rt), 0);
	for (unsigned ms = 0; stats(0).remote_arms < WK_ARMS; ms++) {
		CHECK(ms < 60000);
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
	CHECK_EQ(pw_runtime_stop(rt), 0);
}

static void wk_done(void)
{
	CHECK_EQ(pw_hrtimer_cancel(&wk_driver), 1);
	for (unsigned i = 0; i < WK_TIMERS; i++)
		pw_timer_delete(&wk_t[i]);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

/* 3.17: every remote enqueue kicked the busy CPU, whose worker never
 * slept: as many kicks as remote arms, on both sides; the idle CPU slept
 * and woke for its own timer.  4.8: the busy CPU is never kicked. */
static void test_kick_workers(void)
{
	wk_run(PW_KICK_LINUX_3_17);
	struct pw_cpu_stats s0 = stats(0), s1 = stats(1);
	struct pw_kick_stats k0 = kicks(0), k1 = kicks(1);
	CHECK(s0.remote_arms >= WK_ARMS);
	CHECK_EQ(s1.remote_arms, 0);
	CHECK_EQ(k1.remote_enqueue, s0.remote_arms);
	CHECK_EQ(s0.kicks_sent, s0.remote_arms);
	/* kicks with no reason (a step of the wall clock) would add here */
	CHECK(s1.kicks_received >= k1.remote_enqueue);
	CHECK_EQ(k1.idle_earlier + k1.hrtimer + k1.work + k1.tmigr, 0);
	CHECK_EQ(k0.remote_enqueue + k0.idle_earlier + k0.hrtimer + k0.work + k0.tmigr, 0);
	CHECK_EQ(s1.wakeups, 0); /* kicked, never asleep */
	CHECK(s0.wakeups > 0);
	printf("# 3.17: %llu remote arms, %llu kicks received by the busy CPU, "
	       "%llu wake-ups of the idle one\n",
	       (unsigned long long)s0.remote_arms, (unsigned long long)s1.kicks_received,
	       (unsigned long long)s0.wakeups);
	wk_done();

	wk_run(PW_KICK_LINUX_4_8);
	s0 = stats(0);
	s1 = stats(1);
	k1 = kicks(1);
	CHECK(s0.remote_arms >= WK_ARMS);
	CHECK_EQ(k1.remote_enqueue + k1.idle_earlier + k1.hrtimer + k1.work + k1.tmigr, 0);
	CHECK_EQ(s0.kicks_sent, 0);
	CHECK_EQ(s1.wakeups, 0);
	CHECK(s0.wakeups > 0);
	wk_done();
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "workers")) {
		RUN(test_kick_workers);
		return 0;
	}
	RUN(test_api);
	RUN(test_off_stays_local);
	RUN(test_push);
	RUN(test_running_never_pushed);
	RUN(test_pull_one_group);
	RUN(test_pull_idle_rearm_earlier);
	RUN(test_pull_hierarchy);
	RUN(test_pull_remote_arm);
	RUN(test_pull_offline_waker);
	RUN(test_kick_api);
	RUN(test_kick_317_push);
	RUN(test_kick_48);
	RUN(test_kick_off_pull);
	RUN(test_kick_reasons);
	return 0;
}
