/* SPDX-License-Identifier: MIT */
/*
 * A thread that serves one CPU of a runtime on the real clock: run the due
 * timers, sleep until the next expiry (at most 100 us, so deferrable timers
 * run too), until told to stop.  The bring-your-own-loop pattern.
 */
#ifndef PW_TESTS_SERVE_H
#define PW_TESTS_SERVE_H

#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"

struct server {
	struct pw_runtime *rt;
	unsigned cpu;
	int stop; /* atomic */
	pthread_t th;
};

static void *serve_loop(void *arg)
{
	struct server *s = arg;
	CHECK_EQ(pw_cpu_enter(s->rt, s->cpu), 0);
	while (!__atomic_load_n(&s->stop, __ATOMIC_ACQUIRE)) {
		CHECK(pw_run_timers(s->rt, s->cpu) >= 0);
		uint64_t now = pw_now_ns(s->rt), next = pw_next_expiry_ns(s->rt, s->cpu);
		uint64_t until = now + 100000;
		if (next < until)
			until = next;
		if (until > now) {
			struct timespec ts = {0, (long)(until - now)};
			nanosleep(&ts, NULL);
		}
	}
	pw_cpu_exit(s->rt);
	return NULL;
}

static inline void serve_start(struct server *s, struct pw_runtime *rt, unsigned cpu)
{
	s->rt = rt;
	s->cpu = cpu;
	s->stop = 0;
	CHECK_EQ(pthread_create(&s->th, NULL, serve_loop, s), 0);
}

static inline void serve_stop(struct server *s)
{
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELEASE);
	CHECK_EQ(pthread_join(s->th, NULL), 0);
}

/*
 * Who serves a stress test's CPUs, chosen by its first argument:
 *   (none)  one bring-your-own-loop thread per CPU (serve_loop above), all
 *           busy: every policy then enqueues on the arming CPU;
 *   off     the runtime's worker threads (pw_runtime_start), under
 *           PW_MIGRATION_OFF: each idle worker wakes for its own timers;
 *   push    workers under PW_MIGRATION_PUSH, with CPU 0 kept busy by a
 *           poll hook that always reports work, so arms on the idle CPUs
 *           move non-pinned timers to CPU 0;
 *   pull    workers under PW_MIGRATION_PULL (the default): sleeping
 *           workers hand their global timers to a migrator.
 */
#define SERVE_MAX 16

struct servers {
	struct pw_runtime *rt;
	unsigned n;
	int workers;
	struct server s[SERVE_MAX];
	struct pw_work nudge[SERVE_MAX]; /* servers_drain(): wakes a worker */
};

static void serve_nudge_fn(struct pw_work *w)
{
	(void)w;
}

/* CPU 0's poll hook in "push" mode: always busy, but yields the core. */
static int serve_busy_poll(struct pw_runtime *rt, unsigned cpu, void *arg)
{
	(void)rt;
	(void)cpu;
	(void)arg;
	sched_yield();
	return 1;
}

static inline void servers_start(struct servers *sv, struct pw_runtime *rt, unsigned n,
				 int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	CHECK(n <= SERVE_MAX);
	sv->rt = rt;
	sv->n = n;
	sv->workers = 1;
	for (unsigned c = 0; c < n; c++)
		pw_work_init(&sv->nudge[c], serve_nudge_fn);
	if (!strcmp(mode, "off")) {
		CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_OFF), 0);
	} else if (!strcmp(mode, "push")) {
		CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
		CHECK_EQ(pw_set_poll(rt, 0, serve_busy_poll, NULL), 0);
	} else if (!strcmp(mode, "pull")) {
		CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PULL), 0);
	} else {
		CHECK(!*mode);
		sv->workers = 0;
	}
	if (sv->workers)
		CHECK_EQ(pw_runtime_start(rt), 0);
	else
		for (unsigned c = 0; c < n; c++)
			serve_start(&sv->s[c], rt, c);
}

/*
 * Wait until @pending() says nothing is left to run; failing after 10 s
 * (something was lost).  Deferrable timers never wake an idle worker: they
 * run when the CPU wakes for something else, so each round gives every
 * worker something else (an empty work item).
 */
static inline void servers_drain(struct servers *sv, int (*pending)(void))
{
	for (int waited = 0; pending(); waited++) {
		CHECK(waited < 10000);
		for (unsigned c = 0; sv->workers && c < sv->n; c++)
			pw_queue_work_on(sv->rt, c, &sv->nudge[c]); /* -EBUSY: still queued */
		struct timespec ts = {0, 1000000};
		nanosleep(&ts, NULL);
	}
}

static inline void servers_stop(struct servers *sv)
{
	if (sv->workers)
		CHECK_EQ(pw_runtime_stop(sv->rt), 0);
	else
		for (unsigned c = 0; c < sv->n; c++)
			serve_stop(&sv->s[c]);
}

#endif
