/* SPDX-License-Identifier: MIT */
/*
 * Statistics: per-CPU counters (pw_stats_read()) and vmstat-like lines for
 * a runtime's workers (pw_vmstat()).  The only public header that includes
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
