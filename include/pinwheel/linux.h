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
 * `struct timer_list` is `struct pw_timer` and `struct hrtimer` is
 * `struct pw_hrtimer` (this header defines the names timer_list, hrtimer and
 * hrtimer_restart as macros), with the kernel's public fields (`expires` and
 * `function`; `function`).  ktime_t is int64_t nanoseconds.  HZ and jiffies read the default runtime, so they are not
 * compile-time constants: `#if HZ > 100` does not work.  Departures from the
 * kernel's return values: the functions the kernel declares void return 0
 * or a negative errno here, and arming a shut-down timer returns
 * -ESHUTDOWN (see src/time/timer.c).  timer_delete is a macro, because POSIX
 * has a function of that name.  DEFINE_TIMER (a static initializer)
 * has no equivalent: a timer needs its runtime.  Sockets: `struct sock`
 * is `struct pw_sock` (a macro, like timer_list), with sock_hold(),
 * sock_put(), __sock_put() and sk_reset_timer()/sk_stop_timer()/
 * sk_stop_timer_sync() on its own runtime; set a socket timer up with
 * pw_sk_timer_setup() so it follows pw_net_set_sk_timers_pinned().
 */
#ifndef PINWHEEL_LINUX_H
#define PINWHEEL_LINUX_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>
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
	return cpu < 0 ? -EINVAL : pw_add_timer_on(timer, (unsigned)cpu);
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


/* ---- hrtimers ------------------------------------------------------------ */

/* Clock ids, for builds where <time.h> hides them (strict ISO C). */
#ifndef CLOCK_REALTIME
#define CLOCK_REALTIME 0
#endif
#ifndef CLOCK_MONOTONIC
#define CLOCK_MONOTONIC 1
#endif
#ifndef CLOCK_BOOTTIME
#define CLOCK_BOOTTIME 7
#endif

#ifndef container_of
#define container_of(ptr, type, member) pw_container_of(ptr, type, member)
#endif

typedef int64_t ktime_t;

#define KTIME_MAX     INT64_MAX
#define KTIME_SEC_MAX (KTIME_MAX / 1000000000LL)
#define NSEC_PER_USEC 1000L
#define NSEC_PER_MSEC 1000000L
#define NSEC_PER_SEC  1000000000LL

#define hrtimer         pw_hrtimer
#define hrtimer_restart pw_hrtimer_restart
#define HRTIMER_NORESTART PW_HRTIMER_NORESTART
#define HRTIMER_RESTART   PW_HRTIMER_RESTART

enum hrtimer_mode {
	HRTIMER_MODE_ABS = PW_HRTIMER_MODE_ABS,
	HRTIMER_MODE_REL = PW_HRTIMER_MODE_REL,
	HRTIMER_MODE_PINNED = PW_HRTIMER_MODE_PINNED,
	HRTIMER_MODE_SOFT = PW_HRTIMER_MODE_SOFT,
	HRTIMER_MODE_HARD = PW_HRTIMER_MODE_HARD,
	HRTIMER_MODE_ABS_PINNED = HRTIMER_MODE_ABS | HRTIMER_MODE_PINNED,
	HRTIMER_MODE_REL_PINNED = HRTIMER_MODE_REL | HRTIMER_MODE_PINNED,
	HRTIMER_MODE_ABS_SOFT = HRTIMER_MODE_ABS | HRTIMER_MODE_SOFT,
	HRTIMER_MODE_REL_SOFT = HRTIMER_MODE_REL | HRTIMER_MODE_SOFT,
	HRTIMER_MODE_ABS_PINNED_SOFT = HRTIMER_MODE_ABS_PINNED | HRTIMER_MODE_SOFT,
	HRTIMER_MODE_REL_PINNED_SOFT = HRTIMER_MODE_REL_PINNED | HRTIMER_MODE_SOFT,
	HRTIMER_MODE_ABS_HARD = HRTIMER_MODE_ABS | HRTIMER_MODE_HARD,
	HRTIMER_MODE_REL_HARD = HRTIMER_MODE_REL | HRTIMER_MODE_HARD,
	HRTIMER_MODE_ABS_PINNED_HARD = HRTIMER_MODE_ABS_PINNED | HRTIMER_MODE_HARD,
	HRTIMER_MODE_REL_PINNED_HARD = HRTIMER_MODE_REL_PINNED | HRTIMER_MODE_HARD,
};

static inline ktime_t ktime_get(void)
{
	return (ktime_t)pw_clock_now_ns(pw_default_runtime(), CLOCK_MONOTONIC);
}
static inline ktime_t ktime_get_real(void)
{
	return (ktime_t)pw_clock_now_ns(pw_default_runtime(), CLOCK_REALTIME);
}
static inline ktime_t ktime_get_boottime(void)
{
	return (ktime_t)pw_clock_now_ns(pw_default_runtime(), CLOCK_BOOTTIME);
}
static inline ktime_t ktime_set(const int64_t secs, const unsigned long nsecs)
{
	if (secs >= KTIME_SEC_MAX)
		return KTIME_MAX;
	return secs * NSEC_PER_SEC + (int64_t)nsecs;
}
static inline ktime_t ktime_add_ns(ktime_t kt, uint64_t nsval)
{
	return kt + (int64_t)nsval;
}
static inline ktime_t ktime_add(ktime_t a, ktime_t b)
{
	return a + b;
}
static inline ktime_t ktime_sub(ktime_t a, ktime_t b)
{
	return a - b;
}
static inline ktime_t ns_to_ktime(uint64_t ns)
{
	return (ktime_t)ns;
}
static inline ktime_t us_to_ktime(uint64_t us)
{
	return (ktime_t)(us * NSEC_PER_USEC);
}
static inline ktime_t ms_to_ktime(uint64_t ms)
{
	return (ktime_t)(ms * NSEC_PER_MSEC);
}
static inline int64_t ktime_to_ns(const ktime_t kt)
{
	return kt;
}
static inline int ktime_compare(const ktime_t a, const ktime_t b)
{
	return (a > b) - (a < b);
}
static inline int ktime_after(const ktime_t a, const ktime_t b)
{
	return a > b;
}
static inline int ktime_before(const ktime_t a, const ktime_t b)
{
	return a < b;
}

static inline int hrtimer_setup(struct hrtimer *timer, enum hrtimer_restart (*function)(struct hrtimer *),
				int clock_id, enum hrtimer_mode mode)
{
	return pw_hrtimer_setup(pw_default_runtime(), timer, function, clock_id, (unsigned)mode);
}

/* Older kernels: init, then set timer->function before the first start. */
static inline int hrtimer_init(struct hrtimer *timer, int clock_id, enum hrtimer_mode mode)
{
	return pw_hrtimer_setup(pw_default_runtime(), timer, NULL, clock_id, (unsigned)mode);
}

/* ktime_t is signed.  A negative absolute time is in the past (runs at
 * once); a negative relative one saturates as the kernel's ktime_add_safe()
 * does (to KTIME_SEC_MAX seconds: never, in practice). */
static inline int hrtimer_start_range_ns(struct hrtimer *timer, ktime_t tim, uint64_t delta_ns,
					 enum hrtimer_mode mode)
{
	uint64_t t;
	unsigned m = (unsigned)mode;
	if (tim >= 0) {
		t = (uint64_t)tim;
	} else if (m & HRTIMER_MODE_REL) {
		t = (uint64_t)KTIME_SEC_MAX * 1000000000ull;
		m &= ~(unsigned)HRTIMER_MODE_REL;
	} else {
		t = 0;
	}
	return pw_hrtimer_start_range_ns(timer, t, delta_ns, m);
}

static inline int hrtimer_start(struct hrtimer *timer, ktime_t tim, enum hrtimer_mode mode)
{
	return hrtimer_start_range_ns(timer, tim, 0, mode);
}

static inline uint64_t hrtimer_forward(struct hrtimer *timer, ktime_t now, ktime_t interval)
{
	if (now < 0)
		return 0;
	return pw_hrtimer_forward(timer, (uint64_t)now, interval > 0 ? (uint64_t)interval : 1);
}

static inline uint64_t hrtimer_forward_now(struct hrtimer *timer, ktime_t interval)
{
	return pw_hrtimer_forward_now(timer, interval > 0 ? (uint64_t)interval : 1);
}

static inline int hrtimer_cancel(struct hrtimer *timer)
{
	return pw_hrtimer_cancel(timer);
}

/* As the kernel's: 0 (inactive), 1 (dequeued), -1 when the timer is
 * currently executing the callback function and cannot be stopped.  -1 is
 * not an errno, even though it equals -EPERM: the kernel's value, kept for
 * fidelity.  -EINVAL for a timer not set up (pinwheel's). */
static inline int hrtimer_try_to_cancel(struct hrtimer *timer)
{
	return pw_hrtimer_try_to_cancel(timer);
}

static inline int hrtimer_active(const struct hrtimer *timer)
{
	return pw_hrtimer_active(timer);
}

static inline int hrtimer_is_queued(const struct hrtimer *timer)
{
	return pw_hrtimer_is_queued(timer);
}

static inline int hrtimer_callback_running(const struct hrtimer *timer)
{
	return pw_hrtimer_callback_running(timer);
}

static inline ktime_t hrtimer_get_expires(const struct hrtimer *timer)
{
	return (ktime_t)pw_hrtimer_get_expires(timer);
}

static inline ktime_t hrtimer_get_softexpires(const struct hrtimer *timer)
{
	return (ktime_t)pw_hrtimer_get_softexpires(timer);
}

static inline ktime_t hrtimer_get_remaining(const struct hrtimer *timer)
{
	return (ktime_t)pw_hrtimer_get_remaining(timer);
}

/* ------------------------------------------------ sockets (net/core/sock.c) */

#define sock pw_sock

static inline void sock_hold(struct sock *sk)
{
	pw_sock_hold(sk);
}

static inline void sock_put(struct sock *sk)
{
	pw_sock_put(sk);
}

/* The kernel's __sock_put() drops a reference it knows is not the last. */
static inline void __sock_put(struct sock *sk)
{
	pw_sock_put(sk);
}

static inline void sk_reset_timer(struct sock *sk, struct timer_list *timer,
				  unsigned long expires)
{
	(void)pw_sk_reset_timer(sk, timer, expires);
}

static inline void sk_stop_timer(struct sock *sk, struct timer_list *timer)
{
	(void)pw_sk_stop_timer(sk, timer);
}

static inline void sk_stop_timer_sync(struct sock *sk, struct timer_list *timer)
{
	(void)pw_sk_stop_timer_sync(sk, timer);
}

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_LINUX_H */
