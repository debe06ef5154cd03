/* SPDX-License-Identifier: MIT */
/*
 * hrtimers: nanosecond timers per CPU, with the kernel's hrtimer semantics,
 * on the same CPUs and runtime as the wheel timers.  For deadlines that must
 * be met to the microsecond: pacing, qdisc watchdogs, netem delays.
 *
 * struct pw_hrtimer is embedded by the caller (starting never allocates).
 * The public field keeps the kernel's name (function); the rest is private.
 *
 * Clocks: each hrtimer has a clock base, the clock its times are kept on,
 * named by a POSIX clock id (an int, so that this header needs no POSIX
 * feature macro): CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME.  That
 * is not the runtime's clock source (enum pw_clock_id, <pinwheel/runtime.h>),
 * which every base is read through: on a PW_CLOCK_MONOTONIC runtime each id
 * reads the OS clock of that id; on a PW_CLOCK_SIM runtime CLOCK_MONOTONIC
 * and CLOCK_BOOTTIME read the simulated time (pw_now_ns()) and
 * CLOCK_REALTIME reads it plus pw_config.sim_realtime_offset_ns.
 * pw_clock_now_ns() reads a base; pw_next_expiry_ns() converts an hrtimer's
 * deadline to the runtime's clock.
 *
 * Times are nanoseconds on the timer's clock base.  Sums (a relative start,
 * a range's end, forwarding) saturate, as the kernel's ktime_add_safe()
 * does, at ktime_set(KTIME_SEC_MAX, 0) = 9223372036 s =
 * 9223372036000000000 ns (about 292 years: never, in practice), a little
 * below PW_KTIME_MAX; a larger absolute time is clamped to it too.
 * Semantics and departures: src/time/hrtimer.c.
 */
#ifndef PINWHEEL_HRTIMER_H
#define PINWHEEL_HRTIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pw_runtime;

/* The largest time (the kernel's KTIME_MAX): "never". */
#define PW_KTIME_MAX ((uint64_t)INT64_MAX)

/* What a callback returns. */
enum pw_hrtimer_restart {
	PW_HRTIMER_NORESTART = 0, /* done */
	PW_HRTIMER_RESTART = 1,   /* queue again at its (forwarded) expiry */
};

/* Mode bits (the kernel's values).  ABS or REL, optionally PINNED; SOFT and
 * HARD choose the kernel's execution context and mean nothing in userspace:
 * accepted, and both run in the CPU's timer pass. */
#define PW_HRTIMER_MODE_ABS    0x00u
#define PW_HRTIMER_MODE_REL    0x01u
#define PW_HRTIMER_MODE_PINNED 0x02u
#define PW_HRTIMER_MODE_SOFT   0x04u
#define PW_HRTIMER_MODE_HARD   0x08u

struct pw_hrtimer {
	/* public: the kernel's field */
	enum pw_hrtimer_restart (*function)(struct pw_hrtimer *);
	/* private: pinwheel's, do not touch */
	uint64_t pw_expires;     /* hard deadline: the queue's key */
	uint64_t pw_softexpires; /* earliest run (start of the slack range) */
	uint64_t pw_seq;         /* start order: FIFO among equal deadlines */
	struct pw_runtime *pw_rt;
	uint32_t pw_flags;       /* CPU, clock, state */
	uint32_t pw_idx;         /* position in its CPU's queue */
};

/**
 * pw_clock_now_ns() - read clock @clock (CLOCK_MONOTONIC, CLOCK_REALTIME,
 * CLOCK_BOOTTIME) of @rt.  On the simulated clock, MONOTONIC and BOOTTIME
 * are the simulated time and REALTIME is it plus sim_realtime_offset_ns.
 * Context: any thread.  Return: the time; 0 for NULL or an unknown clock.
 */
uint64_t pw_clock_now_ns(const struct pw_runtime *rt, int clock);

/**
 * pw_clock_was_set() - the wall clock (CLOCK_REALTIME) was stepped: every
 * worker wakes and re-converts its next REALTIME deadline to the monotonic
 * clock it sleeps on (the kernel's clock_was_set()).  Workers started by
 * pw_runtime_start() on the real clock call it themselves when the OS
 * clock is set (a timerfd with TFD_TIMER_CANCEL_ON_SET); on the simulated
 * clock pw_sim_set_realtime_offset() calls it.  Threads that serve CPUs
 * with pw_run_timers() need nothing: each pass reads the offsets anew.
 * Context: any thread.  Return: 0; -EINVAL (NULL).
 */
int pw_clock_was_set(struct pw_runtime *rt);

/* How many times pw_clock_was_set() ran on @rt (0 for NULL). */
uint64_t pw_clock_was_set_count(const struct pw_runtime *rt);

/**
 * pw_sim_set_realtime_offset() - step a simulated runtime's wall clock:
 * CLOCK_REALTIME reads the simulated time plus @offset_ns from now on; then
 * pw_clock_was_set().  REALTIME hrtimers the step made due run at the next
 * pw_sim_advance() (of 0 ns, if need be); those it moved away wait.
 * Context: any thread.  Return: 0; -EINVAL (NULL, or not simulated).
 */
int pw_sim_set_realtime_offset(struct pw_runtime *rt, int64_t offset_ns);

/**
 * pw_hrtimer_setup() - prepare @t (the kernel's hrtimer_setup).
 * @fn: the callback (may be NULL here and set in t->function before the
 *      first start, as with the kernel's older hrtimer_init()).
 * @clock: CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME.  A REALTIME
 *      timer set up with PW_HRTIMER_MODE_REL runs on CLOCK_MONOTONIC (as in
 *      the kernel and POSIX: relative times do not follow wall-clock jumps).
 * @mode: mode bits; PINNED is only considered when starting.
 * The timer starts on the calling thread's CPU (CPU 0 if it is no CPU).
 * Context: any thread, while @t is neither queued nor running.  No lock.
 * Return: 0; -EINVAL for NULL @rt/@t, an unknown clock or mode bits.
 */
int pw_hrtimer_setup(struct pw_runtime *rt, struct pw_hrtimer *t,
		     enum pw_hrtimer_restart (*fn)(struct pw_hrtimer *), int clock,
		     unsigned mode);

/**
 * pw_hrtimer_start_range_ns() - (re)start @t to run within a window.
 * @tim: the earliest time (ABS), or the delay from now (REL).
 * @range_ns: slack: the timer may run any time in [tim, tim + range_ns];
 *      the CPU only has to wake at the end, and runs it earlier if it wakes
 *      for something else once the window is open (coalescing).
 * @mode: ABS or REL, PINNED, SOFT/HARD (ignored).
 * A queued @t is taken out first.  It is enqueued on the calling thread's
 * CPU (its current CPU when the caller is no CPU), except while its
 * callback runs: then it stays on the CPU running it.  PINNED exempts it
 * from migration policies.
 * Context: any thread, callbacks included.  Takes @t's base lock (and the
 * target's when it moves).
 * Return: 0; -EINVAL (NULL, not set up, no function, unknown mode bits);
 * -ENOMEM when the CPU's queue had to grow and could not (the timer is then
 * not queued; the kernel's tree never allocates, pinwheel's heap does:
 * src/time/hrheap.c says why).
 */
int pw_hrtimer_start_range_ns(struct pw_hrtimer *t, uint64_t tim, uint64_t range_ns,
			      unsigned mode);

/**
 * pw_hrtimer_start() - pw_hrtimer_start_range_ns() with no slack.
 */
int pw_hrtimer_start(struct pw_hrtimer *t, uint64_t tim, unsigned mode);

/**
 * pw_hrtimer_forward() - move @t's expiry forward by whole @interval steps
 * until it is after @now (both the window's start and end move).
 * For periodic timers, from the callback, before returning RESTART.
 * Context: any thread, typically @t's callback.  Takes @t's base lock, so a
 * concurrent start cannot be corrupted; a queued @t is left alone.
 * Return: the number of intervals added (the overrun count; 0 if the expiry
 * already is after @now, or if @t is queued: the kernel WARNs).
 */
uint64_t pw_hrtimer_forward(struct pw_hrtimer *t, uint64_t now, uint64_t interval);

/**
 * pw_hrtimer_forward_now() - pw_hrtimer_forward() to the timer clock's now.
 */
uint64_t pw_hrtimer_forward_now(struct pw_hrtimer *t, uint64_t interval);

/**
 * pw_hrtimer_try_to_cancel() - dequeue @t if its callback is not running.
 * Context: any thread, callbacks included.  Takes @t's base lock.
 * Return: 0 (inactive), 1 (was queued, now removed), -1 (its callback is
 * running: nothing done), -EINVAL.  -1 is the kernel's value ("the timer is
 * currently executing the callback function and cannot be stopped"), kept
 * for fidelity: it is not an errno, even though it equals -EPERM.
 */
int pw_hrtimer_try_to_cancel(struct pw_hrtimer *t);

/**
 * pw_hrtimer_cancel() - dequeue @t and wait for its running callback.
 * On return @t is neither queued nor running (unless re-started by another
 * thread meanwhile); a callback that restarts itself is dequeued after it
 * returns.
 * Context: any thread, but not @t's own callback (refused) and not while
 * holding a lock its callback takes.
 * Return: 0 (was inactive), 1 (was active), -EDEADLK (from @t's own
 * callback: nothing done), -EINVAL.
 */
int pw_hrtimer_cancel(struct pw_hrtimer *t);

/**
 * pw_hrtimer_is_queued() - is @t queued?  Lockless, may be stale.
 * Context: any thread.  Return: 1 or 0.
 */
int pw_hrtimer_is_queued(const struct pw_hrtimer *t);

/**
 * pw_hrtimer_callback_running() - is @t's callback running right now?
 * Context: any thread; a snapshot.  Return: 1 or 0.
 */
int pw_hrtimer_callback_running(const struct pw_hrtimer *t);

/**
 * pw_hrtimer_active() - queued or its callback running.
 * Context: any thread; takes the base lock unless queued.  Return: 1 or 0.
 */
int pw_hrtimer_active(const struct pw_hrtimer *t);

/**
 * pw_hrtimer_get_expires() - the hard deadline (end of the window).
 * pw_hrtimer_get_softexpires() - the earliest run (start of the window).
 * Context: any thread; lockless.  Return: ns on the timer's clock; 0 for NULL.
 */
uint64_t pw_hrtimer_get_expires(const struct pw_hrtimer *t);
uint64_t pw_hrtimer_get_softexpires(const struct pw_hrtimer *t);

/**
 * pw_hrtimer_get_remaining() - hard deadline minus the clock's now.
 * Context: any thread.  Return: ns, negative when past; 0 for NULL.
 */
int64_t pw_hrtimer_get_remaining(const struct pw_hrtimer *t);

/**
 * pw_hrtimer_cpu() - the CPU whose base holds (or last held) @t.
 * Context: any thread; lockless.  Return: the CPU, or -EINVAL.
 */
int pw_hrtimer_cpu(const struct pw_hrtimer *t);

/**
 * pw_hrtimer_clock() - the clock @t runs on (after the REALTIME+REL rule).
 * Return: CLOCK_MONOTONIC, CLOCK_REALTIME or CLOCK_BOOTTIME; -EINVAL.
 */
int pw_hrtimer_clock(const struct pw_hrtimer *t);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_HRTIMER_H */
