/* SPDX-License-Identifier: MIT */
/*
 * Worker threads: one per CPU, each running its CPU's due timers, its
 * queued work and a user poll hook, then sleeping until its next event
 * (tickless).  Design: src/time/worker.c.
 */
#ifndef PINWHEEL_RUNTIME_H
#define PINWHEEL_RUNTIME_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct pw_runtime;

/* A unit of work for a CPU's worker, embedded by the caller. */
struct pw_work {
	void (*func)(struct pw_work *); /* public: what to run */
	struct pw_work *pw_next;        /* private */
	uint32_t pw_queued;             /* private: 1 while queued */
	uint32_t pw_spare;
};

/* The poll hook (the NAPI-poll analog): called by CPU @cpu's worker on
 * every round.  Return > 0 if it did work (the CPU is busy: the worker
 * goes round again without sleeping), 0 if there was nothing to do. */
typedef int (*pw_poll_fn)(struct pw_runtime *rt, unsigned cpu, void *arg);

/* Where non-pinned timers go (like /proc/sys/kernel/timer_migration). */
enum pw_migration {
	PW_MIGRATION_OFF = 0,  /* always enqueue on the arming CPU */
	PW_MIGRATION_PUSH = 1, /* pre-6.9: an idle arming CPU pushes the timer to
				* a busy CPU (this CPU if busy, else the first
				* busy one); hrtimers stay local when they would
				* be the first timer of that CPU */
	PW_MIGRATION_PULL = 2, /* 6.9, the default: enqueue on the arming CPU;
				* a CPU going idle hands its non-pinned timers'
				* first expiry up a hierarchy of groups of 8, and
				* an active CPU per group (the migrator) expires
				* them; pinned timers and hrtimers stay and wake
				* their CPU; deferrable timers never wake it */
};

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
 * pw_runtime_start() - start one worker thread per CPU.
 * Workers are pinned to cores (CPU i to core i) when the machine has at
 * least as many cores as the runtime has CPUs; otherwise they are left to
 * the scheduler, and pw_runtime_workers_pinned() says so.  Each worker sets
 * its timer slack to 1 ns.
 * Context: any thread that is no CPU; not from a callback.
 * Return: 0; -EINVAL (NULL, or a PW_CLOCK_SIM runtime: workers sleep on the
 * real clock); -EALREADY (started); -EBUSY (a thread serves one of the
 * CPUs: pw_cpu_enter()); -EAGAIN/-ENOMEM (thread creation failed).
 */
int pw_runtime_start(struct pw_runtime *rt);

/**
 * pw_runtime_stop() - stop the workers and wait for them.  Pending timers
 * stay armed and run after the next pw_runtime_start() (or are dropped by
 * pw_runtime_destroy()); queued work stays queued.
 * Context: any thread that is no worker of @rt.
 * Return: 0; -EINVAL; -EDEADLK from a worker (a callback, work or poll hook).
 */
int pw_runtime_stop(struct pw_runtime *rt);

/* 1 if the workers are pinned to cores, 0 if not (or not started). */
int pw_runtime_workers_pinned(const struct pw_runtime *rt);

/**
 * pw_work_init() - prepare @w to run @fn.  Context: the owner of @w.
 * Return: 0; -EINVAL.
 */
int pw_work_init(struct pw_work *w, void (*fn)(struct pw_work *));

/**
 * pw_queue_work_on() - run @w on CPU @cpu's worker, soon.  Items queued
 * from one thread run in the order queued.  @w may be queued again from
 * its own function.  Wakes the worker if it sleeps.
 * Context: any thread, callbacks included.  Lock-free.
 * Return: 0; -EINVAL (NULL, no function, @cpu out of range); -EBUSY (@w is
 * queued already).
 */
int pw_queue_work_on(struct pw_runtime *rt, unsigned cpu, struct pw_work *w);

/**
 * pw_set_poll() - install (or, with NULL, remove) CPU @cpu's poll hook.
 * Context: any thread, while the workers are stopped.
 * Return: 0; -EINVAL; -EBUSY (workers running).
 */
int pw_set_poll(struct pw_runtime *rt, unsigned cpu, pw_poll_fn fn, void *arg);

/**
 * pw_set_migration() - choose the migration policy for non-pinned timers;
 * takes effect for the next arms (PUSH) and the next time a CPU goes idle
 * (PULL).  Default: PW_MIGRATION_PULL.  Without workers, a CPU is idle for
 * PULL while it is marked so with pw_cpu_set_idle(); with workers, while
 * its worker sleeps.  Timers already handed up stay with their migrator
 * until their CPU wakes.
 * Context: any thread.
 * Return: 0; -EINVAL (NULL or unknown).
 */
int pw_set_migration(struct pw_runtime *rt, enum pw_migration policy);

/* The policy in force (PW_MIGRATION_OFF for NULL). */
enum pw_migration pw_get_migration(const struct pw_runtime *rt);

/**
 * pw_cpu_set_idle() - mark CPU @cpu idle (1) or busy (0), as the migration
 * policies see it, for runtimes without workers (the simulation, or a
 * bring-your-own-loop application that sleeps by itself).  With workers
 * running, each worker keeps its CPU's mark: busy while its poll hook
 * reports work, idle otherwise (asleep, or woken only for timers and work:
 * the kernel's "idle CPU serving an interrupt").  CPUs start busy.
 * Context: any thread.  Return: 0; -EINVAL; -EBUSY (workers running);
 * -ENODEV (offline).
 */
int pw_cpu_set_idle(struct pw_runtime *rt, unsigned cpu, int idle);

/* 1 if CPU @cpu is idle as the policies see it (see pw_cpu_set_idle()). */
int pw_cpu_is_idle(const struct pw_runtime *rt, unsigned cpu);

/**
 * pw_cpu_offline() - take CPU @cpu out: stop its worker and move every timer
 * it holds (pinned ones too, as the kernel does on CPU hotplug) to the first
 * online CPU, where each still fires once.  Afterwards nobody may enter it,
 * add_timer_on() it (-ENODEV), or push to it.
 * Context: a thread that is not CPU @cpu's; no thread may serve it (workers
 * are stopped by this call; a bring-your-own-loop thread must exit first).
 * Return: the number of timers moved (>= 0); -EINVAL; -EALREADY (offline);
 * -EBUSY (the last online CPU, or a thread serves it); -EDEADLK (called by
 * the CPU itself); -ENOMEM (an hrtimer queue could not grow: the timers
 * not moved stay on the offline CPU until it comes back).
 */
int pw_cpu_offline(struct pw_runtime *rt, unsigned cpu);

/**
 * pw_cpu_online() - bring CPU @cpu back (and its worker, if workers run).
 * Context: a thread managing the runtime.
 * Return: 0; -EINVAL; -EALREADY (online); thread creation errors.
 */
int pw_cpu_online(struct pw_runtime *rt, unsigned cpu);

/* 1 if CPU @cpu is online (0 for bad input). */
int pw_cpu_is_online(const struct pw_runtime *rt, unsigned cpu);

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
 * time), tim (timer callbacks)/s, kick/s, push/s.  @count lines (0: forever).
 * Context: any thread that is no worker; sleeps between lines.
 * Return: 0; -EINVAL (NULL @rt/@out, zero interval).
 */
int pw_vmstat(struct pw_runtime *rt, FILE *out, unsigned interval_ms, unsigned count);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_RUNTIME_H */
