/* SPDX-License-Identifier: MIT */
/*
 * Real-thread tests of the synchronization rules, one scenario each
 * (properties, never timings):
 *  - timer_delete_sync never returns while the callback runs;
 *  - a timer whose callback runs is never moved by a re-arm from another
 *    CPU, and add_timer_on refuses to move it (-EAGAIN) but may pin it on
 *    its own CPU, after which delete_sync still waits for the callback;
 *  - pw_run_timers refuses a CPU another thread serves (-EPERM);
 *  - timer_shutdown_sync stops a self-re-arming timer for good;
 *  - a callback may free its own timer.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

#include "serve.h"

struct obj {
	struct pw_timer t;
	int in_cb;   /* atomic */
	int done;    /* atomic */
	int release; /* atomic: the callback waits for it */
	int rearm;   /* atomic: the callback re-arms itself */
	int cpu_seen;
};

static struct pw_runtime *rt;

static int ld(int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void st(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static void wait_for(int *p, int v)
{
	while (ld(p) != v)
		sched_yield();
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&ts, NULL);
}

static void slow_fn(struct pw_timer *t)
{
	struct obj *o = pw_container_of(t, struct obj, t);
	o->cpu_seen = pw_this_cpu();
	st(&o->in_cb, 1);
	wait_for(&o->release, 1);
	sleep_ms(20); /* long enough for delete_sync to go to sleep */
	st(&o->in_cb, 0);
	__atomic_fetch_add(&o->done, 1, __ATOMIC_ACQ_REL);
	if (ld(&o->rearm))
		pw_mod_timer(t, pw_jiffies(rt) + 1);
}

static void make_rt(unsigned ncpus)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
}

static void test_delete_sync_waits(void)
{
	struct server s0;
	struct obj o = {0};

	make_rt(1);
	CHECK_EQ(pw_timer_setup(rt, &o.t, slow_fn, 0), 0);
	serve_start(&s0, rt, 0);
	CHECK_EQ(pw_mod_timer(&o.t, pw_jiffies(rt) + 1), 0);
	wait_for(&o.in_cb, 1);
	CHECK_EQ(pw_run_timers(rt, 0), -EPERM); /* served by s0 */
	st(&o.release, 1);
	CHECK_EQ(pw_timer_delete_sync(&o.t), 0); /* not pending, but running */
	CHECK_EQ(ld(&o.in_cb), 0);               /* ...and it waited */
	CHECK_EQ(ld(&o.done), 1);
	serve_stop(&s0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

static void *arm_from_cpu1(void *arg)
{
	struct obj *o = arg;
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	/* t's callback runs on CPU 0: a re-arm from CPU 1 must leave it there */
	CHECK_EQ(pw_mod_timer(&o->t, pw_jiffies(rt) + 5000), 0);
	CHECK_EQ(pw_timer_cpu(&o->t), 0);
	CHECK_EQ(pw_timer_delete(&o->t), 1);
	o->t.expires = pw_jiffies(rt) + 5000;
	CHECK_EQ(pw_add_timer_on(&o->t, 1), -EAGAIN);
	/* the CPU it runs on: fine, though it changes base (global to
	 * pinned) while its callback runs */
	CHECK_EQ(pw_add_timer_on(&o->t, 0), 0);
	CHECK_EQ(pw_timer_delete(&o->t), 1);
	pw_cpu_exit(rt);
	return NULL;
}

static void test_running_never_moves(void)
{
	struct server s0;
	struct obj o = {0};
	pthread_t th;

	make_rt(2);
	CHECK_EQ(pw_timer_setup(rt, &o.t, slow_fn, 0), 0);
	serve_start(&s0, rt, 0);
	CHECK_EQ(pw_mod_timer(&o.t, pw_jiffies(rt) + 1), 0);
	wait_for(&o.in_cb, 1);
	CHECK_EQ(pthread_create(&th, NULL, arm_from_cpu1, &o), 0);
	CHECK_EQ(pthread_join(th, NULL), 0);
	st(&o.release, 1);
	CHECK_EQ(pw_timer_delete_sync(&o.t), 0);
	CHECK_EQ(ld(&o.in_cb), 0); /* found running on its new base, and waited */
	CHECK_EQ(o.cpu_seen, 0);
	/* not running any more: now a re-arm from CPU 1 moves it */
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	CHECK_EQ(pw_mod_timer(&o.t, pw_jiffies(rt) + 5000), 0);
	CHECK_EQ(pw_timer_cpu(&o.t), 1);
	CHECK_EQ(pw_timer_delete(&o.t), 1);
	pw_cpu_exit(rt);
	serve_stop(&s0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

static void test_shutdown_sync_stops_rearming(void)
{
	struct server s0;
	struct obj o = {0};

	make_rt(1);
	CHECK_EQ(pw_timer_setup(rt, &o.t, slow_fn, 0), 0);
	st(&o.rearm, 1);
	st(&o.release, 1);
	serve_start(&s0, rt, 0);
	CHECK_EQ(pw_mod_timer(&o.t, pw_jiffies(rt) + 1), 0);
	while (ld(&o.done) < 2)
		sched_yield();
	int r = pw_timer_shutdown_sync(&o.t);
	CHECK(r == 0 || r == 1);
	CHECK_EQ(ld(&o.in_cb), 0);
	CHECK_EQ(pw_timer_pending(&o.t), 0);
	int done = ld(&o.done);
	sleep_ms(30);
	CHECK_EQ(ld(&o.done), done); /* never again */
	serve_stop(&s0);
	pw_runtime_destroy(rt);
}

struct freer {
	struct pw_timer t;
	int *count;
};

static void free_self_fn(struct pw_timer *t)
{
	struct freer *f = pw_container_of(t, struct freer, t);
	__atomic_fetch_add(f->count, 1, __ATOMIC_ACQ_REL);
	free(f); /* the runner must not touch t after this */
}

static void test_callback_frees_its_timer(void)
{
	struct server s0, s1;
	int count = 0;

	make_rt(2);
	serve_start(&s0, rt, 0);
	serve_start(&s1, rt, 1);
	for (int i = 0; i < 2000; i++) {
		struct freer *f = malloc(sizeof(*f));
		CHECK(f);
		f->count = &count;
		CHECK_EQ(pw_timer_setup(rt, &f->t, free_self_fn, 0), 0);
		f->t.expires = pw_jiffies(rt) + (uint64_t)(i % 7);
		CHECK_EQ(pw_add_timer_on(&f->t, (unsigned)(i & 1)), 0);
	}
	while (ld(&count) < 2000)
		sched_yield();
	serve_stop(&s0);
	serve_stop(&s1);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_delete_sync_waits);
	RUN(test_running_never_moves);
	RUN(test_shutdown_sync_stops_rearming);
	RUN(test_callback_frees_its_timer);
	return 0;
}
