/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the hrtimer operations on the simulated clock: every return
 * value and mode, clocks, FIFO on equal deadlines, slack coalescing,
 * restart and forward overrun accounting, placement, bad input and
 * clamping, and the kernel names of <pinwheel/linux.h>.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/linux.h>

#include "check.h"
#include "sim.h"

#define MS 1000000ull
#define T0 (10 * 1000000000ull) /* the simulation starts at 10 s */
#define REAL_OFF 1700000000000000000ll

struct hprobe {
	struct pw_hrtimer t;
	int fired;
	uint64_t at;       /* monotonic time of the last run */
	int cpu;
	int order;         /* global firing order */
	int ret_in_cb;
	uint64_t overrun;
	uint64_t period;   /* restart with this interval if non-zero */
	int restarts_left;
	int (*then)(struct hprobe *);
};

static struct pw_runtime *rt;
static int fire_seq;

static enum pw_hrtimer_restart hfn(struct pw_hrtimer *t)
{
	struct hprobe *p = pw_container_of(t, struct hprobe, t);
	p->fired++;
	p->at = pw_now_ns(rt);
	p->cpu = pw_this_cpu();
	p->order = fire_seq++;
	if (p->then)
		p->ret_in_cb = p->then(p);
	if (p->period && p->restarts_left-- > 0) {
		p->overrun += pw_hrtimer_forward_now(t, p->period);
		return PW_HRTIMER_RESTART;
	}
	return PW_HRTIMER_NORESTART;
}

static void setup_rt(unsigned ncpus)
{
	rt = sim_create(ncpus, 1000, T0, REAL_OFF);
	pw_set_default_runtime(rt);
	fire_seq = 0;
}

static void teardown_rt(void)
{
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
	rt = NULL;
}

static void hp_init(struct hprobe *p, int clock, unsigned mode)
{
	memset(p, 0, sizeof(*p));
	p->cpu = -2;
	CHECK_EQ(pw_hrtimer_setup(rt, &p->t, hfn, clock, mode), 0);
}

static void advance(uint64_t ns)
{
	CHECK_EQ(pw_sim_advance(rt, ns), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
}

static void test_bad_input(void)
{
	struct pw_hrtimer t, zero;
	setup_rt(2);
	memset(&zero, 0, sizeof(zero));
	CHECK_EQ(sizeof(struct pw_hrtimer), 48);
	CHECK_EQ(pw_hrtimer_setup(NULL, &t, hfn, CLOCK_MONOTONIC, 0), -EINVAL);
	CHECK_EQ(pw_hrtimer_setup(rt, NULL, hfn, CLOCK_MONOTONIC, 0), -EINVAL);
	CHECK_EQ(pw_hrtimer_setup(rt, &t, hfn, 2 /* CLOCK_PROCESS_CPUTIME_ID */, 0), -EINVAL);
	CHECK_EQ(pw_hrtimer_setup(rt, &t, hfn, CLOCK_MONOTONIC, 0x10), -EINVAL);
	CHECK_EQ(pw_hrtimer_setup(rt, &t, NULL, CLOCK_MONOTONIC, 0), 0); /* function later */
	CHECK_EQ(pw_hrtimer_start(&t, T0 + MS, PW_HRTIMER_MODE_ABS), -EINVAL);
	t.function = hfn;
	CHECK_EQ(pw_hrtimer_start(&t, T0 + MS, 0x20), -EINVAL);
	CHECK_EQ(pw_hrtimer_start(&zero, 1, 0), -EINVAL);
	CHECK_EQ(pw_hrtimer_start(NULL, 1, 0), -EINVAL);
	CHECK_EQ(pw_hrtimer_try_to_cancel(&zero), -EINVAL);
	CHECK_EQ(pw_hrtimer_cancel(NULL), -EINVAL);
	CHECK_EQ(pw_hrtimer_forward(&zero, 5, 1), 0);
	CHECK_EQ(pw_hrtimer_active(&zero), 0);
	CHECK_EQ(pw_hrtimer_is_queued(NULL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&zero), -EINVAL);
	CHECK_EQ(pw_hrtimer_clock(&zero), -EINVAL);
	CHECK_EQ(pw_hrtimer_get_remaining(NULL), 0);
	CHECK_EQ(pw_clock_now_ns(rt, 99), 0);
	CHECK_EQ(pw_clock_now_ns(NULL, CLOCK_MONOTONIC), 0);
	teardown_rt();
}

static void test_abs_rel_and_queries(void)
{
	struct hprobe a, r;
	setup_rt(2);
	hp_init(&a, CLOCK_MONOTONIC, PW_HRTIMER_MODE_ABS);
	hp_init(&r, CLOCK_MONOTONIC, PW_HRTIMER_MODE_REL);
	CHECK_EQ(pw_hrtimer_active(&a.t), 0);
	CHECK_EQ(pw_hrtimer_try_to_cancel(&a.t), 0);
	CHECK_EQ(pw_hrtimer_cancel(&a.t), 0);

	CHECK_EQ(pw_hrtimer_start(&a.t, T0 + 5 * MS + 123, PW_HRTIMER_MODE_ABS), 0);
	CHECK_EQ(pw_hrtimer_start(&r.t, 7 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_is_queued(&a.t), 1);
	CHECK_EQ(pw_hrtimer_active(&a.t), 1);
	CHECK_EQ(pw_hrtimer_get_expires(&a.t), T0 + 5 * MS + 123);
	CHECK_EQ(pw_hrtimer_get_softexpires(&a.t), T0 + 5 * MS + 123);
	CHECK_EQ(pw_hrtimer_get_remaining(&r.t), 7 * MS);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), T0 + 5 * MS + 123);
	CHECK_EQ(pw_hrtimer_callback_running(&a.t), 0);

	advance(5 * MS + 122);
	CHECK_EQ(a.fired, 0); /* never early, to the nanosecond */
	advance(1);
	CHECK_EQ(a.fired, 1);
	CHECK_EQ(a.at, T0 + 5 * MS + 123); /* the clock reads the run time */
	CHECK_EQ(a.cpu, 0);
	CHECK_EQ(pw_hrtimer_active(&a.t), 0);
	advance(10 * MS);
	CHECK_EQ(r.fired, 1);
	CHECK_EQ(r.at, T0 + 7 * MS);
	CHECK(pw_hrtimer_get_remaining(&r.t) < 0);

	/* re-start a queued timer: it moves, fires once */
	CHECK_EQ(pw_hrtimer_start(&a.t, 3 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_start(&a.t, 6 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_try_to_cancel(&r.t), 0);
	advance(4 * MS);
	CHECK_EQ(a.fired, 1);
	advance(4 * MS);
	CHECK_EQ(a.fired, 2);
	CHECK_EQ(pw_hrtimer_start(&a.t, 3 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_try_to_cancel(&a.t), 1);
	CHECK_EQ(pw_hrtimer_start(&a.t, 3 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cancel(&a.t), 1);
	advance(10 * MS);
	CHECK_EQ(a.fired, 2);
	teardown_rt();
}

static void test_clocks(void)
{
	struct hprobe real, realrel, boot;
	setup_rt(1);
	CHECK_EQ(pw_clock_now_ns(rt, CLOCK_MONOTONIC), T0);
	CHECK_EQ(pw_clock_now_ns(rt, CLOCK_BOOTTIME), T0);
	CHECK_EQ(pw_clock_now_ns(rt, CLOCK_REALTIME), T0 + REAL_OFF);
	hp_init(&real, CLOCK_REALTIME, PW_HRTIMER_MODE_ABS);
	hp_init(&realrel, CLOCK_REALTIME, PW_HRTIMER_MODE_REL);
	hp_init(&boot, CLOCK_BOOTTIME, PW_HRTIMER_MODE_ABS);
	CHECK_EQ(pw_hrtimer_clock(&real.t), CLOCK_REALTIME);
	CHECK_EQ(pw_hrtimer_clock(&realrel.t), CLOCK_MONOTONIC); /* REALTIME + REL */
	CHECK_EQ(pw_hrtimer_clock(&boot.t), CLOCK_BOOTTIME);
	/* an absolute wall-clock deadline 2 ms from now */
	CHECK_EQ(pw_hrtimer_start(&real.t, T0 + REAL_OFF + 2 * MS, PW_HRTIMER_MODE_ABS), 0);
	CHECK_EQ(pw_hrtimer_start(&boot.t, T0 + 3 * MS, PW_HRTIMER_MODE_ABS), 0);
	CHECK_EQ(pw_hrtimer_start(&realrel.t, 1 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), T0 + 1 * MS);
	advance(1 * MS);
	CHECK_EQ(realrel.fired, 1);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), T0 + 2 * MS); /* converted to monotonic */
	advance(1 * MS);
	CHECK_EQ(real.fired, 1);
	CHECK_EQ(real.at, T0 + 2 * MS);
	advance(1 * MS);
	CHECK_EQ(boot.fired, 1);
	CHECK_EQ(boot.at, T0 + 3 * MS);
	teardown_rt();
}

static void test_fifo_equal_deadlines(void)
{
	struct hprobe p[6];
	setup_rt(1);
	for (int i = 0; i < 6; i++) {
		hp_init(&p[i], CLOCK_MONOTONIC, 0);
		CHECK_EQ(pw_hrtimer_start(&p[i].t, T0 + 4 * MS, PW_HRTIMER_MODE_ABS), 0);
	}
	/* re-starting p[1] puts it last among equals */
	CHECK_EQ(pw_hrtimer_start(&p[1].t, T0 + 4 * MS, PW_HRTIMER_MODE_ABS), 0);
	advance(5 * MS);
	int want[6] = {0, 2, 3, 4, 5, 1};
	for (int k = 0; k < 6; k++)
		CHECK_EQ(p[want[k]].order, k);
	teardown_rt();
}

static int wheel_fired;

static void wheel_fn(struct pw_timer *t)
{
	(void)t;
	wheel_fired++;
}

static void test_slack_coalescing(void)
{
	struct hprobe a, b, c, d, f;
	struct pw_timer w;
	setup_rt(1);
	hp_init(&a, CLOCK_MONOTONIC, 0);
	hp_init(&b, CLOCK_MONOTONIC, 0);
	hp_init(&c, CLOCK_MONOTONIC, 0);
	hp_init(&d, CLOCK_MONOTONIC, 0);
	/* overlapping windows [10, 20] and [15, 25] ms: one wake-up at 20 */
	CHECK_EQ(pw_hrtimer_start_range_ns(&a.t, 10 * MS, 10 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_start_range_ns(&b.t, 15 * MS, 10 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_get_softexpires(&a.t), T0 + 10 * MS);
	CHECK_EQ(pw_hrtimer_get_expires(&a.t), T0 + 20 * MS);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), T0 + 20 * MS); /* wake at the hard end only */
	advance(30 * MS);
	CHECK_EQ(a.fired, 1);
	CHECK_EQ(b.fired, 1);
	CHECK_EQ(a.at, T0 + 20 * MS);
	CHECK_EQ(b.at, T0 + 20 * MS); /* same pass, inside its window */

	/* windows opened when the CPU wakes for another hrtimer: run then */
	uint64_t now = pw_now_ns(rt);
	CHECK_EQ(pw_hrtimer_start_range_ns(&c.t, 100 * MS, 100 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_start_range_ns(&d.t, 120 * MS, 200 * MS, PW_HRTIMER_MODE_REL), 0);
	struct hprobe e;
	hp_init(&e, CLOCK_MONOTONIC, 0);
	CHECK_EQ(pw_hrtimer_start(&e.t, 150 * MS, PW_HRTIMER_MODE_REL), 0);
	advance(170 * MS);
	CHECK_EQ(e.at, now + 150 * MS);
	CHECK_EQ(c.fired, 1);
	CHECK_EQ(c.at, now + 150 * MS); /* coalesced with e's wake-up */
	CHECK_EQ(d.fired, 1);
	CHECK_EQ(d.at, now + 150 * MS);

	/* ...or for a wheel timer */
	wheel_fired = 0;
	CHECK_EQ(pw_timer_setup(rt, &w, wheel_fn, 0), 0);
	now = pw_now_ns(rt);
	CHECK_EQ(pw_mod_timer(&w, pw_jiffies(rt) + 50), 0);
	uint64_t wake = pw_next_expiry_ns(rt, 0);
	hp_init(&f, CLOCK_MONOTONIC, 0);
	CHECK_EQ(pw_hrtimer_start_range_ns(&f.t, 20 * MS, 500 * MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), wake); /* the hrtimer adds no wake-up */
	advance(100 * MS);
	CHECK_EQ(wheel_fired, 1);
	CHECK_EQ(f.fired, 1);
	CHECK_EQ(f.at, wake);
	CHECK(wake < now + 100 * MS);
	teardown_rt();
}

static void test_restart_and_forward(void)
{
	struct hprobe p, q;
	setup_rt(1);
	hp_init(&p, CLOCK_MONOTONIC, 0);
	p.period = 10 * MS;
	p.restarts_left = 4;
	CHECK_EQ(pw_hrtimer_start(&p.t, 10 * MS, PW_HRTIMER_MODE_REL), 0);
	advance(100 * MS);
	CHECK_EQ(p.fired, 5);
	CHECK_EQ(p.overrun, 4); /* one interval each time: never late in the sim */
	CHECK_EQ(p.at, T0 + 50 * MS);

	/* overrun accounting, directly */
	hp_init(&q, CLOCK_MONOTONIC, 0);
	CHECK_EQ(pw_hrtimer_start_range_ns(&q.t, 10, 5, PW_HRTIMER_MODE_ABS), 0);
	CHECK_EQ(pw_hrtimer_forward(&q.t, 100, 10), 0); /* queued: refused */
	CHECK_EQ(pw_hrtimer_try_to_cancel(&q.t), 1);
	CHECK_EQ(pw_hrtimer_forward(&q.t, 14, 10), 0);  /* expiry 15 is after now */
	CHECK_EQ(pw_hrtimer_forward(&q.t, 15, 10), 1);  /* equal: one step */
	CHECK_EQ(pw_hrtimer_get_expires(&q.t), 25);
	CHECK_EQ(pw_hrtimer_get_softexpires(&q.t), 20);
	CHECK_EQ(pw_hrtimer_forward(&q.t, 70, 10), 5);  /* 25 -> 75 */
	CHECK_EQ(pw_hrtimer_get_expires(&q.t), 75);
	CHECK_EQ(pw_hrtimer_get_softexpires(&q.t), 70);
	CHECK_EQ(pw_hrtimer_forward(&q.t, 80, 0), 6);   /* interval 0 acts as 1 ns */
	CHECK_EQ(pw_hrtimer_get_expires(&q.t), 81);
	CHECK_EQ(pw_hrtimer_forward(&q.t, UINT64_MAX, 1ull << 62), 4); /* saturates */
	CHECK_EQ(pw_hrtimer_get_expires(&q.t), 9223372036000000000ll);
	teardown_rt();
}

static int cb_try_self(struct hprobe *p)
{
	return pw_hrtimer_try_to_cancel(&p->t);
}

static int cb_cancel_self(struct hprobe *p)
{
	return pw_hrtimer_cancel(&p->t);
}

static int cb_restart_self(struct hprobe *p)
{
	return pw_hrtimer_start(&p->t, 5 * MS, PW_HRTIMER_MODE_REL);
}

static enum pw_hrtimer_restart free_self(struct pw_hrtimer *t)
{
	free(t);
	return PW_HRTIMER_NORESTART;
}

static void test_callback_rules(void)
{
	struct hprobe p;
	setup_rt(1);
	hp_init(&p, CLOCK_MONOTONIC, 0);
	p.then = cb_try_self;
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL), 0);
	advance(2 * MS);
	CHECK_EQ(p.ret_in_cb, -1); /* its callback is running */
	p.then = cb_cancel_self;
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL), 0);
	advance(2 * MS);
	CHECK_EQ(p.ret_in_cb, -EDEADLK);
	/* restarted from its callback and returning RESTART: queued once */
	p.then = cb_restart_self;
	p.period = 1 * MS;
	p.restarts_left = 1;
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL), 0);
	advance(2 * MS);
	CHECK_EQ(p.fired, 3);
	CHECK_EQ(pw_hrtimer_is_queued(&p.t), 1);
	CHECK_EQ(pw_hrtimer_cancel(&p.t), 1);
	/* a callback may free its own timer */
	for (int i = 0; i < 100; i++) {
		struct pw_hrtimer *t = malloc(sizeof(*t));
		CHECK(t);
		CHECK_EQ(pw_hrtimer_setup(rt, t, free_self, CLOCK_MONOTONIC, 0), 0);
		CHECK_EQ(pw_hrtimer_start(t, (uint64_t)i * 1000, PW_HRTIMER_MODE_REL), 0);
	}
	advance(MS);
	teardown_rt();
}

static void test_placement_and_clamps(void)
{
	struct hprobe p;
	setup_rt(3);
	hp_init(&p, CLOCK_MONOTONIC, 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.t), 0);
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.t), 0); /* started by no CPU: stays */
	CHECK_EQ(pw_cpu_enter(rt, 2), 0);
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.t), 2); /* enqueued locally */
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.t), 2);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED), 0);
	CHECK_EQ(pw_hrtimer_cpu(&p.t), 1); /* pinned: the starting CPU, as the kernel */
	pw_cpu_exit(rt);
	advance(2 * MS);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.cpu, 1);

	/* clamps: absolute beyond the range, relative overflow, range overflow */
	CHECK_EQ(pw_hrtimer_start(&p.t, UINT64_MAX, PW_HRTIMER_MODE_ABS), 0);
	CHECK_EQ(pw_hrtimer_get_expires(&p.t), 9223372036000000000ll);
	CHECK_EQ(pw_hrtimer_start(&p.t, UINT64_MAX - 5, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_get_expires(&p.t), 9223372036000000000ll);
	CHECK_EQ(pw_hrtimer_start_range_ns(&p.t, MS, UINT64_MAX, PW_HRTIMER_MODE_REL), 0);
	CHECK_EQ(pw_hrtimer_get_softexpires(&p.t), pw_now_ns(rt) + MS);
	CHECK_EQ(pw_hrtimer_get_expires(&p.t), 9223372036000000000ll);
	CHECK_EQ(pw_hrtimer_cancel(&p.t), 1);
	/* soft and hard modes are accepted and behave alike */
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_SOFT), 0);
	CHECK_EQ(pw_hrtimer_start(&p.t, MS, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_HARD), 0);
	advance(2 * MS);
	CHECK_EQ(p.fired, 2);
	teardown_rt();
}

struct kqdisc {
	int dequeues;
	struct hrtimer watchdog;
};

static enum hrtimer_restart kwatchdog(struct hrtimer *t)
{
	struct kqdisc *q = container_of(t, struct kqdisc, watchdog);
	q->dequeues++;
	if (q->dequeues < 3) {
		hrtimer_forward_now(t, ms_to_ktime(6));
		return HRTIMER_RESTART;
	}
	return HRTIMER_NORESTART;
}

static int old_fired;

static enum hrtimer_restart old_fn(struct hrtimer *t)
{
	(void)t;
	old_fired++;
	return HRTIMER_NORESTART;
}

static void test_kernel_names(void)
{
	struct kqdisc q = {0};
	struct hrtimer old;
	setup_rt(1);
	CHECK_EQ(hrtimer_setup(&q.watchdog, kwatchdog, CLOCK_MONOTONIC, HRTIMER_MODE_ABS_PINNED), 0);
	ktime_t now = ktime_get();
	CHECK_EQ(now, (ktime_t)T0);
	hrtimer_start(&q.watchdog, ktime_add_ns(now, 6 * NSEC_PER_MSEC), HRTIMER_MODE_ABS_PINNED);
	CHECK(hrtimer_active(&q.watchdog));
	CHECK(hrtimer_is_queued(&q.watchdog));
	CHECK_EQ(hrtimer_get_expires(&q.watchdog), now + 6 * NSEC_PER_MSEC);
	CHECK_EQ(ktime_to_ns(hrtimer_get_remaining(&q.watchdog)), 6 * NSEC_PER_MSEC);
	advance(30 * MS);
	CHECK_EQ(q.dequeues, 3);
	CHECK(!hrtimer_active(&q.watchdog));
	CHECK_EQ(ktime_sub(ms_to_ktime(5), ns_to_ktime(1000000)), 4000000);
	CHECK_EQ(ktime_set(1, 5), 1000000005);
	CHECK(ktime_before(1, 2) && ktime_after(2, 1) && ktime_compare(3, 3) == 0);
	CHECK_EQ(ktime_get_real(), (ktime_t)pw_now_ns(rt) + REAL_OFF);

	/* older kernels: init, then .function */
	CHECK_EQ(hrtimer_init(&old, CLOCK_MONOTONIC, HRTIMER_MODE_REL), 0);
	old.function = old_fn;
	/* negative times: absolute runs at once, relative saturates */
	CHECK_EQ(hrtimer_start(&old, -5, HRTIMER_MODE_REL), 0);
	CHECK_EQ(hrtimer_get_expires(&old), KTIME_SEC_MAX * NSEC_PER_SEC);
	CHECK_EQ(hrtimer_try_to_cancel(&old), 1);
	CHECK_EQ(hrtimer_start(&old, -5, HRTIMER_MODE_ABS), 0);
	advance(1);
	CHECK_EQ(old_fired, 1);
	CHECK(!hrtimer_active(&old));
	CHECK_EQ(hrtimer_cancel(&old), 0);
	teardown_rt();
}

int main(void)
{
	RUN(test_bad_input);
	RUN(test_abs_rel_and_queries);
	RUN(test_clocks);
	RUN(test_fifo_equal_deadlines);
	RUN(test_slack_coalescing);
	RUN(test_restart_and_forward);
	RUN(test_callback_rules);
	RUN(test_placement_and_clamps);
	RUN(test_kernel_names);
	return 0;
}
