/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: libev 4.33 timers (ev_timer_*) in the ops table.  Times
 * in seconds (double) relative to ev_now(), cached per loop iteration;
 * libev keeps timers in a 4-ary heap with cached keys.  Real clock only.
 *
 * libev is loaded with dlopen(RTLD_LOCAL): its library also exports
 * libevent-compatible names (event_add, ...), which would otherwise take
 * the place of libevent's own in this one binary.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include <ev.h>

static struct {
	struct ev_loop *(*loop_new)(unsigned int);
	void (*loop_destroy)(struct ev_loop *);
	void (*timer_start)(struct ev_loop *, ev_timer *);
	void (*timer_stop)(struct ev_loop *, ev_timer *);
	int (*run)(struct ev_loop *, int);
	ev_tstamp (*now)(struct ev_loop *);
	ev_tstamp (*remaining)(struct ev_loop *, ev_timer *);
} lib;
static char why_buf[200];

#include "bench.h"

static struct ev_loop *loop;
static ev_timer *tm;
static unsigned count;

static void cb(struct ev_loop *l, ev_timer *w, int revents)
{
	(void)l;
	(void)w;
	(void)revents;
	bench_count();
}

static void start_ms(ev_timer *w, double ms)
{
	lib.timer_stop(loop, w);
	ev_timer_set(w, ms / 1000.0, 0.);
	lib.timer_start(loop, w);
}

static uint64_t now_j(void)
{
	return (uint64_t)(lib.now(loop) * 1000.0);
}

static int setup(unsigned n, enum pw_clock_id clock)
{
	(void)clock;
	loop = lib.loop_new(EVFLAG_AUTO);
	tm = calloc(n, sizeof(*tm));
	if (!loop || !tm)
		return -ENOMEM;
	count = n;
	for (unsigned i = 0; i < n; i++) {
		ev_timer_init(&tm[i], cb, 0., 0.);
		start_ms(&tm[i], (double)(1000 + bench_rand() % 9000));
	}
	return 0;
}

static uint64_t poll_due(void)
{
	uint64_t before = bench_fired;
	lib.run(loop, EVRUN_NOWAIT);
	return bench_fired - before;
}

static void rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++)
		start_ms(&tm[idx[k]], (double)delta[k]);
}

#define EV_OBJ(k) (&tm[k])
static const void *obj(unsigned k)
{
	return EV_OBJ(k);
}
#define EV_ARM(k, jn, d) start_ms(&tm[k], (double)(d))

static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst)
{
	(void)jn;
	BENCH_REARM_BURST(idx, delta, n, jn, burst, EV_OBJ, sizeof(ev_timer), EV_ARM);
}

static void rearm_same(unsigned first, size_t n)
{
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1)
		start_ms(&tm[first], lib.remaining(loop, &tm[first]) * 1000.0);
}

static void cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++) {
		lib.timer_stop(loop, &tm[idx[k]]);
		ev_timer_set(&tm[idx[k]], (double)delta[k] / 1000.0, 0.);
		lib.timer_start(loop, &tm[idx[k]]);
	}
}

static uint64_t expire_round(unsigned n, uint64_t window_j, double *ns)
{
	(void)window_j;
	uint64_t before = bench_fired;
	for (unsigned i = 0; i < n; i++)
		start_ms(&tm[i], 0.);
	uint64_t t0 = bench_now_ns();
	while (bench_fired - before < n)
		lib.run(loop, EVRUN_NOWAIT);
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void arm(unsigned k, uint64_t expires_j)
{
	double now = lib.now(loop) * 1000.0;
	start_ms(&tm[k], (double)expires_j > now ? (double)expires_j - now : 0.);
}

static void cancel(unsigned k)
{
	lib.timer_stop(loop, &tm[k]);
}

static size_t extra(unsigned n)
{
	(void)n;
	return 16; /* a heap slot: pointer + cached key (EV_HEAP_CACHE_AT) */
}

static void teardown(void)
{
	for (unsigned i = 0; i < count; i++)
		lib.timer_stop(loop, &tm[i]);
	lib.loop_destroy(loop);
	free(tm);
	tm = NULL;
}

static const struct bench_impl impl = {
	"libev", setup, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, sizeof(ev_timer), extra, teardown, rearm_burst, obj,
};

const struct bench_impl *bench_impl_libev(const char **why)
{
	void *h = dlopen("libev.so.4", RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(why_buf, sizeof(why_buf), "dlopen(libev.so.4): %s", dlerror());
		*why = why_buf;
		return NULL;
	}
	*(void **)&lib.loop_new = dlsym(h, "ev_loop_new");
	*(void **)&lib.loop_destroy = dlsym(h, "ev_loop_destroy");
	*(void **)&lib.timer_start = dlsym(h, "ev_timer_start");
	*(void **)&lib.timer_stop = dlsym(h, "ev_timer_stop");
	*(void **)&lib.run = dlsym(h, "ev_run");
	*(void **)&lib.now = dlsym(h, "ev_now");
	*(void **)&lib.remaining = dlsym(h, "ev_timer_remaining");
	if (!lib.loop_new || !lib.loop_destroy || !lib.timer_start || !lib.timer_stop ||
	    !lib.run || !lib.now || !lib.remaining) {
		*why = "libev.so.4 lacks an ev_* function it should have";
		return NULL;
	}
	return &impl;
}
