/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: libevent 2.1 timers (evtimer_*) in the ops table.
 * Relative timeouts from the loop's clock; libevent keeps timers in a
 * binary min-heap.  Outside a callback libevent reads the clock on every
 * evtimer_add (its time cache is only valid inside the loop): that is part
 * of its cost as measured here.  Real clock only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>

#include <event2/event.h>

#include "bench.h"

static struct bench_impl impl; /* below; its timer_bytes: the object a burst prefetches */
static struct event_base *base;
static struct event **ev;
static unsigned count;
static uint64_t loop_ms; /* the loop time of the current batch */

static void cb(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	(void)arg;
	bench_count();
}

static void add_ms(struct event *e, uint64_t ms)
{
	struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
	evtimer_add(e, &tv);
}

static uint64_t now_j(void)
{
	struct timeval tv;
	event_base_gettimeofday_cached(base, &tv);
	loop_ms = (uint64_t)tv.tv_sec * 1000 + (uint64_t)tv.tv_usec / 1000;
	return loop_ms;
}

static uint64_t rel(uint64_t expires_j)
{
	return expires_j > loop_ms ? expires_j - loop_ms : 0;
}

static int setup(unsigned n, enum pw_clock_id clock)
{
	(void)clock;
	base = event_base_new();
	ev = calloc(n, sizeof(*ev));
	if (!base || !ev)
		return -ENOMEM;
	count = n;
	for (unsigned i = 0; i < n; i++) {
		ev[i] = evtimer_new(base, cb, NULL);
		if (!ev[i])
			return -ENOMEM;
		add_ms(ev[i], 1000 + bench_rand() % 9000);
	}
	return 0;
}

static uint64_t poll_due(void)
{
	uint64_t before = bench_fired;
	event_base_loop(base, EVLOOP_NONBLOCK);
	return bench_fired - before;
}

static void rearm(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++)
		add_ms(ev[idx[k]], delta[k]);
}

#define EV_OBJ(k) ((const void *)ev[k])
static const void *obj(unsigned k)
{
	return EV_OBJ(k);
}
#define EV_ARM(k, jn, d) add_ms(ev[k], (d))

static void rearm_burst(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn,
			unsigned burst)
{
	(void)jn;
	BENCH_REARM_BURST(idx, delta, n, jn, burst, EV_OBJ, impl.timer_bytes, EV_ARM);
}

static void rearm_same(unsigned first, size_t n)
{
	/* libevent has no "same expiry" notion: re-adding with the remaining
	 * time is what a caller would do */
	for (size_t k = 0; k < n; k++, first = first + 1 == count ? 0 : first + 1) {
		struct timeval when;
		evtimer_pending(ev[first], &when);
		struct timeval now, left;
		event_base_gettimeofday_cached(base, &now);
		evutil_timersub(&when, &now, &left);
		evtimer_add(ev[first], &left);
	}
}

static void cancel_add(const unsigned *idx, const uint64_t *delta, size_t n, uint64_t jn)
{
	(void)jn;
	for (size_t k = 0; k < n; k++) {
		evtimer_del(ev[idx[k]]);
		add_ms(ev[idx[k]], delta[k]);
	}
}

static uint64_t expire_round(unsigned n, uint64_t window_j, double *ns)
{
	(void)window_j;
	/* Real clock: arm every timer already due, then one loop pass. */
	uint64_t before = bench_fired;
	struct timeval zero = {0, 0};
	for (unsigned i = 0; i < n; i++)
		evtimer_add(ev[i], &zero);
	uint64_t t0 = bench_now_ns();
	while (bench_fired - before < n)
		event_base_loop(base, EVLOOP_NONBLOCK);
	*ns = (double)(bench_now_ns() - t0);
	return bench_fired - before;
}

static void arm(unsigned k, uint64_t expires_j)
{
	add_ms(ev[k], rel(expires_j));
}

static void cancel(unsigned k)
{
	evtimer_del(ev[k]);
}

static size_t extra(unsigned n)
{
	(void)n;
	return sizeof(struct event *); /* the min-heap slot */
}

static void teardown(void)
{
	for (unsigned i = 0; i < count; i++)
		event_free(ev[i]);
	free(ev);
	event_base_free(base);
	ev = NULL;
	base = NULL;
}

static struct bench_impl impl = {
	"libevent", setup, now_j, poll_due, rearm, rearm_same, cancel_add, expire_round,
	arm, cancel, 0, extra, teardown, rearm_burst, obj,
};

const struct bench_impl *bench_impl_libevent(const char **why)
{
	(void)why;
	impl.timer_bytes = event_get_struct_event_size(); /* evtimer_new allocates this */
	return &impl;
}
