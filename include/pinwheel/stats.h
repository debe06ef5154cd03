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
