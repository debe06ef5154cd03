/* SPDX-License-Identifier: MIT */
/*
 * Kernel names for pinwheel, so that kernel-style timer code ports with few
 * changes.  Every name acts on the default runtime
 * (pw_set_default_runtime()); set it before the first use.
 *
 *   pw_set_default_runtime(rt);
 *   struct timer_list t;
 *   timer_setup(&t, my_fn, 0);
 *   t.expires = jiffies + HZ;
 *   add_timer(&t);
 *
 * `struct timer_list` is `struct pw_timer` (this header defines the name
 * timer_list as a macro), with the kernel's public fields `expires` and
 * `function`.  HZ and jiffies read the default runtime, so they are not
 * compile-time constants: `#if HZ > 100` does not work.  Departures from the
 * kernel's return values: the functions the kernel declares void return 0
 * or a negative errno here, and arming a shut-down timer returns
 * -ESHUTDOWN (see src/core/timer.c).  timer_delete is a macro, because POSIX
 * has a function of that name.  DEFINE_TIMER (a static initializer)
 * has no equivalent: a timer needs its runtime.
 */
#ifndef PINWHEEL_LINUX_H
#define PINWHEEL_LINUX_H

#include <limits.h>
#include <time.h> /* POSIX's timer_delete(timer_t): see below */

#include <pinwheel/pinwheel.h>

#ifdef __cplusplus
extern "C" {
#endif

#define timer_list pw_timer

#define TIMER_PINNED     PW_TIMER_PINNED
#define TIMER_DEFERRABLE PW_TIMER_DEFERRABLE

#define HZ      ((unsigned long)pw_runtime_hz(pw_default_runtime()))
#define jiffies ((unsigned long)pw_jiffies(pw_default_runtime()))

#define MAX_JIFFY_OFFSET ((LONG_MAX >> 1) - 1)

/* Wrap-safe comparisons of jiffies values. */
#define time_after(a, b)     ((long)((unsigned long)(b) - (unsigned long)(a)) < 0)
#define time_before(a, b)    time_after(b, a)
#define time_after_eq(a, b)  ((long)((unsigned long)(a) - (unsigned long)(b)) >= 0)
#define time_before_eq(a, b) time_after_eq(b, a)

/* The struct that holds the timer a callback got: from_timer(p, t, field). */
#define from_timer(var, callback_timer, timer_fieldname) \
	pw_container_of(callback_timer, __typeof__(*(var)), timer_fieldname)

static inline int timer_setup(struct timer_list *timer,
			      void (*callback)(struct timer_list *), unsigned int flags)
{
	return pw_timer_setup(pw_default_runtime(), timer, callback, flags);
}

static inline int mod_timer(struct timer_list *timer, unsigned long expires)
{
	return pw_mod_timer(timer, expires);
}

static inline int mod_timer_pending(struct timer_list *timer, unsigned long expires)
{
	return pw_mod_timer_pending(timer, expires);
}

static inline int timer_reduce(struct timer_list *timer, unsigned long expires)
{
	return pw_timer_reduce(timer, expires);
}

static inline int add_timer(struct timer_list *timer)
{
	return pw_add_timer(timer);
}

static inline int add_timer_on(struct timer_list *timer, int cpu)
{
	return cpu < 0 ? -22 /* EINVAL */ : pw_add_timer_on(timer, (unsigned)cpu);
}

/* POSIX <time.h> declares timer_delete(timer_t) too, so the kernel's
 * timer_delete is a macro, defined after <time.h> has been included (above):
 * the POSIX declaration stays intact and calls reach pinwheel.  POSIX's
 * timer_delete() cannot be called where this header is included. */
#define timer_delete(timer) pw_timer_delete(timer)

static inline int timer_delete_sync(struct timer_list *timer)
{
	return pw_timer_delete_sync(timer);
}

static inline int del_timer(struct timer_list *timer)
{
	return pw_timer_delete(timer);
}

static inline int del_timer_sync(struct timer_list *timer)
{
	return pw_timer_delete_sync(timer);
}

static inline int timer_shutdown(struct timer_list *timer)
{
	return pw_timer_shutdown(timer);
}

static inline int timer_shutdown_sync(struct timer_list *timer)
{
	return pw_timer_shutdown_sync(timer);
}

static inline int timer_pending(const struct timer_list *timer)
{
	return pw_timer_pending(timer);
}

/* Conversions round up to whole jiffies, as the kernel's do. */
static inline unsigned long msecs_to_jiffies(const unsigned int m)
{
	if ((int)m < 0)
		return MAX_JIFFY_OFFSET;
	unsigned long hz = HZ;
	return (unsigned long)(((unsigned long long)m * hz + 999) / 1000);
}

static inline unsigned long usecs_to_jiffies(const unsigned int u)
{
	if ((int)u < 0)
		return MAX_JIFFY_OFFSET;
	unsigned long hz = HZ;
	return (unsigned long)(((unsigned long long)u * hz + 999999) / 1000000);
}

static inline unsigned int jiffies_to_msecs(const unsigned long j)
{
	unsigned long hz = HZ;
	return hz ? (unsigned int)(((unsigned long long)j * 1000 + hz - 1) / hz) : 0;
}

static inline unsigned int jiffies_to_usecs(const unsigned long j)
{
	unsigned long hz = HZ;
	return hz ? (unsigned int)(((unsigned long long)j * 1000000 + hz - 1) / hz) : 0;
}

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_LINUX_H */
