/* SPDX-License-Identifier: MIT */
/* Worker threads: internal state and the kick hook the arm paths call.
 * Design: worker.c. */
#ifndef PW_TIME_WORKER_H
#define PW_TIME_WORKER_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "cacheline.h"

#include <pinwheel/stats.h>  /* PW_LATENESS_BUCKETS */
#include <pinwheel/worker.h> /* struct pw_work, pw_poll_fn */

struct pw_runtime;

#define PW_KICK_WORK UINT64_MAX /* "new work", not a timer event */

/* Why a CPU was kicked: the public struct pw_kick_stats, field by field
 * (stats.c copies them in this order), and kicks with no reason there
 * (a CPU going offline hands its timers over, the wall clock was stepped),
 * which count in kicks_received only. */
enum pw__kick_why {
	PW__KICK_REMOTE_ENQUEUE = 0, /* PW_KICK_LINUX_3_17: any remote enqueue */
	PW__KICK_IDLE_EARLIER,       /* PW_KICK_LINUX_4_8: idle, and its first expiry moved */
	PW__KICK_HRTIMER,            /* a remote hrtimer became its first event */
	PW__KICK_WORK,               /* work queued for it by another thread */
	PW__KICK_TMIGR,              /* the PULL hierarchy needs it */
	PW__KICK_REASONS,
	PW__KICK_OTHER = PW__KICK_REASONS,
};

struct pw__worker {
	/* the sleep/kick protocol (worker.c): written by the worker and by
	 * kickers, all atomics */
	uint32_t kick_seq;        /* futex word the worker sleeps on */
	uint32_t sleeping;        /* 1 from "about to sleep" to "woke" */
	uint32_t sync;            /* the protocol's fence word */
	uint64_t sleep_until_ns;  /* when it wakes by itself; 0 while computing */
	struct pw_work *work_head; /* lock-free stack: any thread pushes */
	uint64_t kicks_received;  /* any kicker adds (atomic read-modify-write) */
	uint64_t kicks_why[PW__KICK_REASONS]; /* the same kicks by reason (same way) */
	uint64_t slept_at_ns;     /* when the current sleep began (statistics) */
	pid_t tid;                /* the worker thread, for /proc (atomic) */
	/* set by the thread managing the runtime (start/stop/hotplug), while
	 * this worker is not running, except stop (atomic, read by it) */
	pthread_t th;
	unsigned cpu;
	int started;
	uint32_t stop;            /* this worker alone must stop (CPU offline) */
	pw_poll_fn poll;
	void *poll_arg;
	/* wake-up lateness (pw_wake_lateness_read()): written by the worker
	 * only (pw__count_add()), read with relaxed loads; on lines of their
	 * own, away from the kickers' words */
	struct {
		uint64_t sum_ns, max_ns;
		uint64_t bucket[PW_LATENESS_BUCKETS];
	} late __attribute__((aligned(PW_CACHELINE)));
} __attribute__((aligned(PW_CACHELINE)));

/* Start / stop (and join) CPU @c's worker.  Context: the thread managing
 * the runtime (pw_runtime_start/stop, CPU hotplug).  Return: 0 or -errno. */
int pw__worker_start(struct pw_runtime *rt, unsigned c);
void pw__worker_stop(struct pw_runtime *rt, unsigned c);

/* Run the work queued for @wk, oldest first (work.c).  Context: @wk's
 * worker.  Return: items run. */
unsigned pw__work_run(struct pw__worker *wk);

/* Allocate/free the per-CPU worker state (pw_runtime_create/destroy). */
int pw__workers_init(struct pw_runtime *rt);
void pw__workers_free(struct pw_runtime *rt);

/*
 * Kicks: one thread interrupting another CPU, the kernel's reschedule or
 * call-function IPI (worker.c, "Sleeping and kicks").  Each counts once in
 * the target's kicks_received, once under @why (pw_kick_stats_read()) and
 * once in the sender's kicks_sent (a thread that is no CPU: nowhere).
 * Context of all three: any thread holding no lock, after making the
 * event visible (timer enqueued and base unlocked, work pushed).
 * Lock-free.
 *
 * pw__kick(): with workers running, the rule of the idle loop: wake CPU
 * @cpu's worker if it sleeps (or is about to) and @event_ns (a pw_now_ns()
 * time; PW_KICK_WORK for new work, 0 for "now") is earlier than it will
 * wake by itself; counted only then.  Callers check that workers run.
 * pw__kick_always(): kick whether it sleeps or not (PW_KICK_LINUX_3_17's
 * IPI to a busy CPU): always counted; with workers running, bump the
 * worker's kick sequence and FUTEX_WAKE it, so an awake worker runs one
 * more round before it sleeps.
 * pw__kick_count(): only count it: a kick the rule decided on in a runtime
 * without workers (the simulation), where there is nothing to wake.
 */
void pw__kick(struct pw_runtime *rt, unsigned cpu, uint64_t event_ns, enum pw__kick_why why);
void pw__kick_always(struct pw_runtime *rt, unsigned cpu, enum pw__kick_why why);
void pw__kick_count(struct pw_runtime *rt, unsigned cpu, enum pw__kick_why why);

/*
 * Might CPU @cpu's worker be asleep, or about to sleep, without having
 * seen an event made visible before this call?  0 means it is awake and
 * will see it (the kick protocol's fence, then a look at `sleeping`).
 * Context: any thread, after making the event visible.  Lock-free.
 */
int pw__worker_may_sleep(struct pw_runtime *rt, unsigned cpu);

/*
 * Where a non-pinned timer armed by CPU @this goes under the policy in
 * force: @this, or (PUSH, @this idle) the first busy CPU (policy.c).
 * Counts a push.  Context: the thread acting as CPU @this.
 */
unsigned pw__policy_target(struct pw_runtime *rt, unsigned this_cpu);

#endif /* PW_TIME_WORKER_H */
