/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of every wheel-timer operation and its return values, on the
 * simulated clock (deterministic, single thread).
 */
#include <errno.h>
#include <string.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"

struct probe {
	struct pw_timer t;
	int fired;
	uint64_t fired_jiffies;
	uint64_t fired_ns;
	int fired_cpu;
	int ret_in_cb; /* a return value captured inside the callback */
	void (*then)(struct probe *);
};

static struct pw_runtime *rt;

static void probe_fn(struct pw_timer *t)
{
	struct probe *p = pw_container_of(t, struct probe, t);
	p->fired++;
	p->fired_jiffies = pw_jiffies(rt);
	p->fired_ns = pw_now_ns(rt);
	p->fired_cpu = pw_this_cpu();
	if (p->then)
		p->then(p);
}

static void setup_rt(unsigned ncpus)
{
	rt = sim_create(ncpus, 1000, 5000000000ull, 0); /* 5 s: jiffy 5000 */
}

static void teardown_rt(void)
{
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
	rt = NULL;
}

static void probe_init(struct probe *p, unsigned flags)
{
	memset(p, 0, sizeof(*p));
	p->fired_cpu = -2;
	CHECK_EQ(pw_timer_setup(rt, &p->t, probe_fn, flags), 0);
}

static void test_config_and_create(void)
{
	struct pw_config cfg;
	struct pw_runtime *r;

	pw_config_init(&cfg);
	CHECK_EQ(cfg.ncpus, 0);
	CHECK_EQ(cfg.hz, 1000);
	CHECK_EQ(cfg.clock, PW_CLOCK_MONOTONIC);
	CHECK_EQ(pw_runtime_create(&cfg, NULL), -EINVAL);
	cfg.hz = 5;
	CHECK_EQ(pw_runtime_create(&cfg, &r), -EINVAL);
	CHECK(r == NULL);
	cfg.hz = 1000;
	cfg.ncpus = PW_MAX_CPUS + 1;
	CHECK_EQ(pw_runtime_create(&cfg, &r), -EINVAL);
	cfg.ncpus = 0;
	cfg.clock = (enum pw_clock_id)7;
	CHECK_EQ(pw_runtime_create(&cfg, &r), -EINVAL);
	CHECK_EQ(pw_runtime_create(NULL, &r), 0);
	CHECK(pw_runtime_ncpus(r) >= 1);
	CHECK_EQ(pw_runtime_hz(r), 1000);
	CHECK(pw_now_ns(r) > 0);
	CHECK_EQ(pw_sim_advance(r, 1), -EINVAL); /* not a sim runtime */
	pw_runtime_destroy(r);
	pw_runtime_destroy(NULL);
	CHECK_EQ(sizeof(struct pw_timer), 40); /* the kernel's timer_list */
}

static void test_clock(void)
{
	setup_rt(2);
	CHECK_EQ(pw_now_ns(rt), 5000000000ull);
	CHECK_EQ(pw_jiffies(rt), 5000);
	CHECK_EQ(pw_sim_advance(rt, 1500000), 0);
	CHECK_EQ(pw_now_ns(rt), 5001500000ull);
	CHECK_EQ(pw_jiffies(rt), 5001);
	CHECK_EQ(pw_jiffies_to_ns(rt, 7), 7000000);
	CHECK_EQ(pw_jiffies_to_ns(rt, UINT64_MAX / 2), (long long)UINT64_MAX);
	CHECK_EQ(pw_sim_advance(rt, UINT64_MAX), 0); /* clamps */
	CHECK_EQ(pw_now_ns(rt), (long long)UINT64_MAX);
	teardown_rt();
}

static void test_setup_bad_input(void)
{
	struct probe p;
	struct pw_timer zero;

	setup_rt(2);
	memset(&zero, 0, sizeof(zero));
	CHECK_EQ(pw_timer_setup(NULL, &p.t, probe_fn, 0), -EINVAL);
	CHECK_EQ(pw_timer_setup(rt, NULL, probe_fn, 0), -EINVAL);
	CHECK_EQ(pw_timer_setup(rt, &p.t, NULL, 0), -EINVAL);
	CHECK_EQ(pw_timer_setup(rt, &p.t, probe_fn, 0x1), -EINVAL);
	/* NULL and never-set-up timers: errors, never crashes */
	CHECK_EQ(pw_mod_timer(NULL, 1), -EINVAL);
	CHECK_EQ(pw_mod_timer(&zero, 1), -EINVAL);
	CHECK_EQ(pw_mod_timer_pending(&zero, 1), -EINVAL);
	CHECK_EQ(pw_timer_reduce(&zero, 1), -EINVAL);
	CHECK_EQ(pw_add_timer(&zero), -EINVAL);
	CHECK_EQ(pw_add_timer_on(&zero, 0), -EINVAL);
	CHECK_EQ(pw_timer_delete(&zero), -EINVAL);
	CHECK_EQ(pw_timer_delete_sync(&zero), -EINVAL);
	CHECK_EQ(pw_timer_shutdown(&zero), -EINVAL);
	CHECK_EQ(pw_timer_shutdown_sync(NULL), -EINVAL);
	CHECK_EQ(pw_timer_pending(NULL), 0);
	CHECK_EQ(pw_timer_pending(&zero), 0);
	CHECK_EQ(pw_timer_cpu(&zero), -EINVAL);
	/* runtime calls */
	CHECK_EQ(pw_run_timers(NULL, 0), -EINVAL);
	CHECK_EQ(pw_run_timers(rt, 2), -EINVAL);
	CHECK_EQ(pw_cpu_enter(NULL, 0), -EINVAL);
	CHECK_EQ(pw_cpu_enter(rt, 2), -EINVAL);
	CHECK_EQ(pw_next_expiry_ns(rt, 9), (long long)UINT64_MAX);
	CHECK_EQ(pw_next_expiry_ns(NULL, 0), (long long)UINT64_MAX);
	CHECK_EQ(pw_sim_advance(NULL, 1), -EINVAL);
	CHECK_EQ(pw_runtime_check(NULL), -EINVAL);
	pw_cpu_exit(NULL);
	CHECK_EQ(pw_this_cpu(), -1);
	teardown_rt();
}

static void test_mod_timer(void)
{
	struct probe p;

	setup_rt(2);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_timer_pending(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 10), 0); /* was inactive */
	CHECK_EQ(pw_timer_pending(&p.t), 1);
	CHECK_EQ(pw_mod_timer(&p.t, j + 10), 1); /* fast path 1 */
	CHECK_EQ(pw_mod_timer(&p.t, j + 20), 1); /* re-arm, was pending */
	CHECK_EQ(p.t.expires, j + 20);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_sim_advance(rt, 19 * 1000000ull), 0);
	CHECK_EQ(p.fired, 0);                 /* never early */
	CHECK_EQ(pw_sim_advance(rt, 2 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK(p.fired_jiffies >= j + 20 && p.fired_jiffies <= j + 21);
	CHECK_EQ(p.fired_cpu, 0);
	CHECK_EQ(pw_timer_pending(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 100), 0); /* inactive again */
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	CHECK_EQ(pw_sim_advance(rt, 200 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	teardown_rt();
}

static void test_same_bucket_fast_path(void)
{
	struct probe p;

	setup_rt(1);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt); /* 5000, a multiple of 8 */
	CHECK_EQ(pw_mod_timer(&p.t, j + 100), 0); /* level 1: 8-jiffy buckets */
	uint64_t before = pw_next_expiry_ns(rt, 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 101), 1); /* same bucket: expires only */
	CHECK_EQ(p.t.expires, j + 101);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), (long long)before);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_sim_advance(rt, 200 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK(p.fired_jiffies >= j + 101 && p.fired_jiffies <= j + 101 + 8);
	teardown_rt();
}

static void test_mod_timer_pending_and_reduce(void)
{
	struct probe p;

	setup_rt(1);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_mod_timer_pending(&p.t, j + 5), 0); /* inactive: nothing */
	CHECK_EQ(pw_timer_pending(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 50), 0);
	CHECK_EQ(pw_mod_timer_pending(&p.t, j + 30), 1);
	CHECK_EQ(p.t.expires, j + 30);

	CHECK_EQ(pw_timer_reduce(&p.t, j + 40), 1); /* later: left alone */
	CHECK_EQ(p.t.expires, j + 30);
	CHECK_EQ(pw_timer_reduce(&p.t, j + 30), 1);
	CHECK_EQ(p.t.expires, j + 30);
	CHECK_EQ(pw_timer_reduce(&p.t, j + 10), 1); /* earlier: moved */
	CHECK_EQ(p.t.expires, j + 10);
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	CHECK_EQ(pw_timer_reduce(&p.t, j + 7), 0); /* inactive: armed */
	CHECK_EQ(pw_timer_pending(&p.t), 1);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_sim_advance(rt, 100 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK(p.fired_jiffies >= j + 7 && p.fired_jiffies <= j + 8);
	teardown_rt();
}

static void test_add_timer_and_on(void)
{
	struct probe p, q;

	setup_rt(3);
	probe_init(&p, 0);
	probe_init(&q, 0);
	uint64_t j = pw_jiffies(rt);
	p.t.expires = j + 3;
	CHECK_EQ(pw_add_timer(&p.t), 0);
	CHECK_EQ(pw_add_timer(&p.t), -EBUSY);
	CHECK_EQ(pw_timer_cpu(&p.t), 0);

	q.t.expires = j + 4;
	CHECK_EQ(pw_add_timer_on(&q.t, 3), -EINVAL);
	CHECK_EQ(pw_add_timer_on(&q.t, 2), 0);
	CHECK_EQ(pw_add_timer_on(&q.t, 1), -EBUSY);
	CHECK_EQ(pw_timer_cpu(&q.t), 2);
	CHECK(q.t.pw_flags & PW_TIMER_PINNED);
	CHECK_EQ(pw_runtime_check(rt), 0);
	CHECK_EQ(pw_sim_advance(rt, 10 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.fired_cpu, 0);
	CHECK_EQ(q.fired, 1);
	CHECK_EQ(q.fired_cpu, 2);
	/* add_timer_on to the CPU it is already on */
	q.t.expires = pw_jiffies(rt) + 2;
	CHECK_EQ(pw_add_timer_on(&q.t, 2), 0);
	CHECK_EQ(pw_sim_advance(rt, 10 * 1000000ull), 0);
	CHECK_EQ(q.fired, 2);
	CHECK_EQ(q.fired_cpu, 2);
	teardown_rt();
}

static void self_delete_sync(struct probe *p)
{
	p->ret_in_cb = pw_timer_delete_sync(&p->t);
}

static void self_shutdown_sync(struct probe *p)
{
	p->ret_in_cb = pw_timer_shutdown_sync(&p->t);
}

static void test_delete(void)
{
	struct probe p;

	setup_rt(2);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_timer_delete(&p.t), 0);
	CHECK_EQ(pw_timer_delete_sync(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 5), 0);
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	CHECK_EQ(pw_timer_delete(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 5), 0);
	CHECK_EQ(pw_timer_delete_sync(&p.t), 1);
	CHECK_EQ(pw_timer_delete_sync(&p.t), 0);
	CHECK_EQ(pw_sim_advance(rt, 50 * 1000000ull), 0);
	CHECK_EQ(p.fired, 0);

	/* from its own callback: refused, not a deadlock */
	p.then = self_delete_sync;
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 1), 0);
	CHECK_EQ(pw_sim_advance(rt, 5 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.ret_in_cb, -EDEADLK);
	p.then = self_shutdown_sync;
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 1), 0);
	CHECK_EQ(pw_sim_advance(rt, 5 * 1000000ull), 0);
	CHECK_EQ(p.fired, 2);
	CHECK_EQ(p.ret_in_cb, -EDEADLK);
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 1), 0); /* not shut down */
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	teardown_rt();
}

static void test_shutdown(void)
{
	struct probe p;

	setup_rt(2);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_mod_timer(&p.t, j + 5), 0);
	CHECK_EQ(pw_timer_shutdown_sync(&p.t), 1);
	CHECK_EQ(pw_timer_pending(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 5), -ESHUTDOWN);
	CHECK_EQ(pw_timer_reduce(&p.t, j + 5), -ESHUTDOWN);
	CHECK_EQ(pw_mod_timer_pending(&p.t, j + 5), -ESHUTDOWN);
	p.t.expires = j + 5;
	CHECK_EQ(pw_add_timer(&p.t), -ESHUTDOWN);
	CHECK_EQ(pw_add_timer_on(&p.t, 1), -ESHUTDOWN);
	CHECK_EQ(pw_timer_pending(&p.t), 0);
	CHECK_EQ(pw_timer_shutdown_sync(&p.t), 0);
	CHECK_EQ(pw_timer_delete(&p.t), 0);
	CHECK_EQ(pw_sim_advance(rt, 50 * 1000000ull), 0);
	CHECK_EQ(p.fired, 0);
	/* set up again: usable */
	CHECK_EQ(pw_timer_setup(rt, &p.t, probe_fn, 0), 0);
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 5), 0);
	CHECK_EQ(pw_timer_shutdown(&p.t), 1); /* the non-waiting one */
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 5), -ESHUTDOWN);
	CHECK_EQ(pw_sim_advance(rt, 50 * 1000000ull), 0);
	CHECK_EQ(p.fired, 0);
	teardown_rt();
}

static void test_enqueue_locally(void)
{
	struct probe p;

	setup_rt(2);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_timer_cpu(&p.t), 0); /* set up by a thread that is no CPU */
	CHECK_EQ(pw_mod_timer(&p.t, j + 1000), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 0); /* armed by no CPU: stays */

	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_this_cpu(), 1);
	CHECK_EQ(pw_cpu_enter(rt, 0), -EBUSY); /* this thread serves a CPU already */
	CHECK_EQ(pw_mod_timer(&p.t, j + 1000), 1); /* fast path 1: stays */
	CHECK_EQ(pw_timer_cpu(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 1001), 1); /* same bucket: stays */
	CHECK_EQ(pw_timer_cpu(&p.t), 0);
	CHECK_EQ(pw_mod_timer(&p.t, j + 3000), 1); /* new bucket: moves here */
	CHECK_EQ(pw_timer_cpu(&p.t), 1);
	CHECK_EQ(pw_runtime_check(rt), 0);
	/* PINNED does not stop an arm from enqueueing locally (kernel rule) */
	pw_cpu_exit(rt);
	CHECK_EQ(pw_this_cpu(), -1);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	CHECK_EQ(pw_run_timers(rt, 1), 0);   /* CPU 1 is not served: allowed */
	CHECK_EQ(pw_mod_timer(&p.t, j + 6000), 1);
	CHECK_EQ(pw_timer_cpu(&p.t), 0);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 10000 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.fired_cpu, 0);
	CHECK(p.fired_jiffies >= j + 6000);
	teardown_rt();
}

static void test_next_expiry_and_deferrable(void)
{
	struct probe p, d;

	setup_rt(1);
	probe_init(&p, 0);
	probe_init(&d, PW_TIMER_DEFERRABLE);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), (long long)UINT64_MAX);
	CHECK_EQ(pw_mod_timer(&d.t, j + 10), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), (long long)UINT64_MAX); /* deferrable never wakes */
	CHECK_EQ(pw_mod_timer(&p.t, j + 20), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), (long long)pw_jiffies_to_ns(rt, j + 21));
	CHECK_EQ(pw_timer_delete(&p.t), 1);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), (long long)UINT64_MAX);
	/* The simulation treats CPUs as busy: the deferrable timer runs on time. */
	CHECK_EQ(pw_sim_advance(rt, 30 * 1000000ull), 0);
	CHECK_EQ(d.fired, 1);
	CHECK(d.fired_jiffies >= j + 10 && d.fired_jiffies <= j + 11);
	teardown_rt();
}

static void test_clamp_beyond_range(void)
{
	struct probe p;

	setup_rt(1);
	probe_init(&p, 0);
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_mod_timer(&p.t, j + (1ull << 40)), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	uint64_t ns = pw_next_expiry_ns(rt, 0);
	/* clamped to the end of the wheel: about 12 days at HZ = 1000 */
	CHECK(ns > pw_jiffies_to_ns(rt, j + 11ull * 24 * 3600 * 1000));
	CHECK(ns < pw_jiffies_to_ns(rt, j + 14ull * 24 * 3600 * 1000));
	CHECK_EQ(pw_sim_advance(rt, 15ull * 24 * 3600 * 1000000000ull), 0);
	CHECK_EQ(p.fired, 1);
	teardown_rt();
}

static void cb_run_own_cpu(struct probe *p)
{
	p->ret_in_cb = pw_run_timers(rt, (unsigned)pw_this_cpu());
}

static void cb_sim_advance(struct probe *p)
{
	p->ret_in_cb = pw_sim_advance(rt, 1);
}

static void test_run_timers_rules(void)
{
	struct probe p, q;

	/* From a callback: no re-entry. */
	setup_rt(2);
	probe_init(&p, 0);
	probe_init(&q, 0);
	p.then = cb_run_own_cpu;
	q.then = cb_sim_advance;
	CHECK_EQ(pw_mod_timer(&p.t, pw_jiffies(rt) + 2), 0);
	CHECK_EQ(pw_add_timer_on(&q.t, 1), 0);
	CHECK_EQ(pw_sim_advance(rt, 10 * 1000000ull), 0);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.ret_in_cb, -EBUSY);
	CHECK_EQ(q.fired, 1);
	CHECK_EQ(q.ret_in_cb, -EDEADLK);
	teardown_rt();

	/* Bring-your-own-loop on the real clock: enter, arm, sleep, run. */
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	probe_init(&p, 0);
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_timer_setup(rt, &q.t, probe_fn, 0), 0);
	CHECK_EQ(pw_timer_cpu(&q.t), 1); /* set up on CPU 1 */
	uint64_t j = pw_jiffies(rt);
	CHECK_EQ(pw_mod_timer(&p.t, j + 2), 0);
	CHECK_EQ(pw_timer_cpu(&p.t), 1);
	uint64_t wake = pw_next_expiry_ns(rt, 1);
	CHECK(wake >= pw_jiffies_to_ns(rt, j + 2));
	while (pw_now_ns(rt) < wake)
		;
	CHECK_EQ(pw_run_timers(rt, 1), 1);
	CHECK_EQ(p.fired, 1);
	CHECK_EQ(p.fired_cpu, 1);
	CHECK(p.fired_jiffies >= j + 2);
	CHECK_EQ(pw_run_timers(rt, 1), 0);
	pw_cpu_exit(rt);
	teardown_rt();
}

static void destroy_pending(void)
{
	static struct probe many[1000];

	setup_rt(2);
	for (int i = 0; i < 1000; i++) {
		probe_init(&many[i], i % 3 ? 0 : PW_TIMER_DEFERRABLE);
		if (i & 1)
			CHECK_EQ(pw_add_timer_on(&many[i].t, 1), 0);
		else
			CHECK_EQ(pw_mod_timer(&many[i].t, pw_jiffies(rt) + (uint64_t)i * 37), 0);
	}
	CHECK_EQ(pw_runtime_check(rt), 0);
	teardown_rt(); /* nothing runs, nothing leaks (ASan checks) */
	for (int i = 0; i < 1000; i++)
		CHECK_EQ(many[i].fired, 0);
}

/* Runtimes by number (a wheel timer names its runtime by a 10-bit number
 * in its flags): PW_MAX_RUNTIMES alive at once, then -EMFILE; a number
 * given back by destroy is used again, and the new runtime's timers work;
 * two runtimes' timers never mix, even re-armed from the other's CPU (the
 * re-arm lane's one compare must tell them apart). */
static void test_runtime_numbers(void)
{
	static struct pw_runtime *many[PW_MAX_RUNTIMES + 1];
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	cfg.clock = PW_CLOCK_SIM;
	unsigned n = 0;
	int r;
	while ((r = pw_runtime_create(&cfg, &many[n])) == 0 && n < PW_MAX_RUNTIMES)
		n++;
	CHECK_EQ(r, -EMFILE);
	CHECK_EQ(n, PW_MAX_RUNTIMES);
	CHECK(many[n] == NULL);

	/* give one number back, take it again */
	pw_runtime_destroy(many[500]);
	CHECK_EQ(pw_runtime_create(&cfg, &many[500]), 0);
	CHECK_EQ(pw_runtime_create(&cfg, &many[n]), -EMFILE);

	/* a timer of the new runtime (500) and one of another (7), both
	 * armed and re-armed from CPU 0 of runtime 500 */
	struct probe a, b;
	rt = many[500];
	probe_init(&a, 0);
	rt = many[7];
	probe_init(&b, 0);
	CHECK_EQ(pw_cpu_enter(many[500], 0), 0);
	uint64_t j500 = pw_jiffies(many[500]), j7 = pw_jiffies(many[7]);
	CHECK_EQ(pw_mod_timer(&a.t, j500 + 10), 0);
	CHECK_EQ(pw_mod_timer(&b.t, j7 + 10), 0);
	CHECK_EQ(pw_mod_timer(&a.t, j500 + 5000), 1); /* another bucket: the lane */
	CHECK_EQ(pw_mod_timer(&b.t, j7 + 5000), 1);   /* another runtime: not the lane */
	CHECK_EQ(pw_mod_timer(&a.t, j500 + 20), 1);
	CHECK_EQ(pw_mod_timer(&b.t, j7 + 30), 1);
	pw_cpu_exit(many[500]);
	CHECK_EQ(pw_runtime_check(many[500]), 0);
	CHECK_EQ(pw_runtime_check(many[7]), 0);
	CHECK_EQ(pw_timer_cpu(&a.t), 0);
	CHECK_EQ(pw_timer_cpu(&b.t), 0);
	rt = many[500];
	CHECK_EQ(pw_sim_advance(many[500], 25 * 1000000ull), 0);
	CHECK_EQ(a.fired, 1);
	CHECK_EQ(b.fired, 0); /* runtime 7's clock has not moved */
	rt = many[7];
	CHECK_EQ(pw_sim_advance(many[7], 35 * 1000000ull), 0);
	CHECK_EQ(b.fired, 1);
	rt = NULL;
	for (unsigned i = 0; i < n; i++)
		pw_runtime_destroy(many[i]);
	/* all given back: as many again */
	for (unsigned i = 0; i < 3; i++)
		CHECK_EQ(pw_runtime_create(&cfg, &many[i]), 0);
	for (unsigned i = 0; i < 3; i++)
		pw_runtime_destroy(many[i]);
}

int main(void)
{
	RUN(test_config_and_create);
	RUN(test_clock);
	RUN(test_setup_bad_input);
	RUN(test_mod_timer);
	RUN(test_same_bucket_fast_path);
	RUN(test_mod_timer_pending_and_reduce);
	RUN(test_add_timer_and_on);
	RUN(test_delete);
	RUN(test_shutdown);
	RUN(test_enqueue_locally);
	RUN(test_next_expiry_and_deferrable);
	RUN(test_clamp_beyond_range);
	RUN(test_run_timers_rules);
	RUN(destroy_pending);
	RUN(test_runtime_numbers);
	return 0;
}
