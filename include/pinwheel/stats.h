/* SPDX-License-Identifier: MIT */
/*
 * Statistics: per-CPU counters (pw_stats_read(), pw_kick_stats_read()),
 * the timers pending (pw_pending_read()), the workers' wake-up lateness
 * (pw_wake_lateness_read()) and vmstat-like lines for a runtime's workers
 * (pw_vmstat()).  The only public header that includes
 * <stdio.h> (pw_vmstat() writes to a FILE), so <pinwheel/pinwheel.h> leaves
 * it out: include it explicitly.
 * Design: src/time/stats.h and stats.c (the counters), src/time/vmstat.c.
 */
#ifndef PINWHEEL_STATS_H
#define PINWHEEL_STATS_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pw_runtime;

/* Per-CPU statistics (pw_stats_read()).  Counters since pw_runtime_create(). */
struct pw_cpu_stats {
	uint64_t wakeups;         /* the worker woke from sleep (timeout or kick) */
	uint64_t kicks_received;  /* wake-ups other threads asked for */
	uint64_t kicks_sent;      /* kicks this CPU's thread sent to others */
	uint64_t timers_expired;  /* callbacks run by the worker (wheel + hrtimer) */
	uint64_t work_done;       /* work items run */
	uint64_t polls_busy;      /* poll hook calls that reported work */
	uint64_t pushed;          /* timers this CPU armed that the policy put on another */
	uint64_t pulled;          /* idle CPUs' timers this CPU expired as their migrator */
	/* wheel-timer arms (mod_timer and friends, add_timer*) made by this
	 * CPU's thread or by callbacks it ran (threads that are no CPU are
	 * not counted) */
	uint64_t armed;           /* every arm */
	uint64_t fast_path;       /* of those, fast path 1: pending, same expiry, no lock */
	uint64_t same_bucket;     /* of those, fast path 2: same bucket, under the lock */
	uint64_t remote_arms;     /* of those, the timer ended on another CPU */
	uint64_t lock_waits;      /* acquisitions of this CPU's base locks that waited */
	uint64_t lock_wait_ns;    /* and how long */
	uint64_t idle_ns;         /* time asleep */
	uint64_t busy_ns;         /* time awake, while the worker ran */
	/* from the OS, for the worker thread (0 when no worker ran) */
	uint64_t voluntary_ctxsw, involuntary_ctxsw;
	uint64_t user_ns, sys_ns;
};

/**
 * pw_stats_read() - a snapshot of CPU @cpu's statistics.
 * Context: any thread.  Cheap counters (relaxed loads) plus one read of the
 * worker thread's /proc entries.
 * Return: 0; -EINVAL.
 */
int pw_stats_read(struct pw_runtime *rt, unsigned cpu, struct pw_cpu_stats *out);

/*
 * Kicks received by a CPU, by reason (pw_kick_stats_read()): the
 * interrupts other CPUs (or threads that are no CPU) sent it, as the
 * kernel's RES/CAL IPIs.  Counted whether or not workers run (on the
 * simulated clock too), at the moment the rule says the target must be
 * interrupted.  Each also counts once in the target's
 * pw_cpu_stats.kicks_received and the sender's kicks_sent (a thread that
 * is no CPU: nowhere); kicks_received also holds kicks no reason here
 * names (a CPU going offline hands its timers to this one, a step of the
 * wall clock), so with neither it is the sum of these five.
 */
struct pw_kick_stats {
	uint64_t remote_enqueue; /* PW_KICK_LINUX_3_17: a timer enqueued on its base by another CPU */
	uint64_t idle_earlier;   /* PW_KICK_LINUX_4_8: it was idle and the timer became its first expiry */
	uint64_t hrtimer;        /* an hrtimer enqueued by another CPU that became its first event
				  * (either rule; it was idle) */
	uint64_t work;           /* work queued for it by another thread (it was idle) */
	uint64_t tmigr;          /* the PULL hierarchy woke it to expire timers (it is the waker
				  * and the hierarchy's first event moved earlier, or it took
				  * that part over from a CPU going offline) */
};

/**
 * pw_kick_stats_read() - the kicks CPU @cpu received, by reason, since
 * pw_runtime_create().
 * Context: any thread (relaxed loads).
 * Return: 0; -EINVAL.
 */
int pw_kick_stats_read(struct pw_runtime *rt, unsigned cpu, struct pw_kick_stats *out);

/*
 * Timers pending on a CPU (pw_pending_read()): what its timer bases hold
 * now, counted (the kernel's /proc/timer_list lists a CPU's hrtimers; its
 * wheel timers have no such list).  Wheel timers
 * on any of its three bases (pinned, global, deferrable), those whose
 * callbacks are being collected for a run included; hrtimers queued on
 * its hrtimer base (not one whose callback runs now).
 */
struct pw_pending {
	uint64_t timers;   /* wheel timers (struct pw_timer) */
	uint64_t hrtimers; /* hrtimers (struct pw_hrtimer) */
};

/**
 * pw_pending_read() - the timers pending on CPU @cpu now.
 * Context: any thread holding none of @rt's locks (a timer callback, work
 * or poll hook of @rt may call it); takes each of the CPU's four base
 * locks in turn, briefly (a count is read, nothing is walked).
 * Return: 0; -EINVAL.
 */
int pw_pending_read(struct pw_runtime *rt, unsigned cpu, struct pw_pending *out);

/*
 * Worker wake-up lateness (pw_wake_lateness_read()): each time a CPU's
 * worker sleeps until its next event and wakes at or after that time (a
 * timed wake-up, not a kick that came earlier), how late it woke: the
 * clock read when it is running again minus the time it slept until.
 * What the OS's timer slack (the library sets 1 ns), its scheduling
 * latency and the futex wake-up add before a timer can run; a timer's
 * own lateness adds the wheel's granularity on top (docs/accuracy.md).
 * Counted by the worker itself in power-of-two buckets: bucket i < the
 * last holds wake-ups at most pw_wake_lateness_bound_ns(i) late (and
 * more than bucket i - 1's bound); the last, every later one.  Runtimes
 * without workers (the simulated clock, a loop of the caller's) count
 * nothing by themselves: a loop of the caller's counts its own wake-ups
 * with pw_wake_lateness_note().
 */
#define PW_LATENESS_BUCKETS 22 /* 1 us, 2 us, ... 2^20 us (about 1.05 s), then beyond */

struct pw_wake_lateness {
	uint64_t count;  /* timed wake-ups measured: the buckets' sum */
	uint64_t sum_ns; /* their lateness added up */
	uint64_t max_ns; /* the latest */
	uint64_t bucket[PW_LATENESS_BUCKETS];
};

/**
 * pw_wake_lateness_bound_ns() - the upper bound of bucket @i: 1000 << @i
 * ns for @i below PW_LATENESS_BUCKETS - 1; UINT64_MAX for the last (and
 * for any @i beyond).  Context: any thread.
 */
uint64_t pw_wake_lateness_bound_ns(unsigned i);

/**
 * pw_wake_lateness_read() - CPU @cpu's worker wake-up lateness since
 * pw_runtime_create() (worker restarts included).
 * Context: any thread (relaxed loads: each counter untorn, the set a
 * moment apart, so count is the buckets' sum as read and sum_ns may be a
 * wake-up ahead or behind).
 * Return: 0; -EINVAL.
 */
int pw_wake_lateness_read(struct pw_runtime *rt, unsigned cpu, struct pw_wake_lateness *out);

/**
 * pw_wake_lateness_note() - for a loop of the caller's own (a thread that
 * serves a CPU of @rt through pw_cpu_enter(), sleeping on its own
 * descriptors and its next event): it slept until @deadline_ns and runs
 * again at @now_ns (both on @rt's clock, pw_now_ns()).  At or after the
 * deadline, a timed wake-up: counted in that CPU's histogram as the
 * runtime's workers count theirs; earlier (something else woke it), not.
 * Report only sleeps whose deadline is the CPU's next event
 * (pw_next_expiry_ns()): a bound of the loop's own (an idle poll
 * interval shorter than that) is no event, and the workers count none
 * (they sleep with no timeout when nothing is armed).
 * Context: the thread serving the CPU, in its loop (not inside
 * pw_run_timers(): a migrator runs other CPUs' timers there); it is the
 * histogram's one writer, as the worker is.
 * Return: 1 counted; 0 not (early); -EINVAL (not serving a CPU of @rt,
 * or inside a run).
 */
int pw_wake_lateness_note(struct pw_runtime *rt, uint64_t deadline_ns, uint64_t now_ns);

/**
 * pw_vmstat() - print vmstat-like lines for @rt's workers to @out: a header,
 * then every @interval_ms one line of rates since the line before: in
 * (wake-ups + kicks)/s, cs (context switches)/s, us sy id (% of the CPUs'
 * time), tim (timer callbacks)/s, kick/s, push/s, pull (timers expired by a
 * migrator)/s.  @count lines (0: forever).
 * Context: any thread that is no worker; sleeps between lines.
 * Return: 0; -EINVAL (NULL @rt/@out, zero interval).
 */
int pw_vmstat(struct pw_runtime *rt, FILE *out, unsigned interval_ms, unsigned count);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_STATS_H */
