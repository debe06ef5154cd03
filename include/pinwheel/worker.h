/* SPDX-License-Identifier: MIT */
/*
 * Worker threads: one per CPU, each running its CPU's due timers, its
 * queued work and a user poll hook, then sleeping until its next event
 * (tickless).  Work items (struct pw_work) and the poll hook are here too.
 * Design: src/time/worker.c (workers), src/time/work.c (work).
 */
#ifndef PINWHEEL_WORKER_H
#define PINWHEEL_WORKER_H

#include <stdint.h>

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

/**
 * pw_runtime_start() - start one worker thread per CPU.
 * Workers are pinned to cores (CPU i to core i) when the machine has at
 * least as many cores as the runtime has CPUs; otherwise they are left to
 * the scheduler, and pw_runtime_workers_pinned() says so (as it does once a
 * worker fails to pin itself: that worker runs unpinned).  Each worker sets
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
 * pw_run_work() - run the work queued for @cpu now, as that CPU: for an
 * application that serves its CPUs with its own loop instead of workers
 * (pw_sim_advance() runs queued work by itself).
 * Context: the thread serving @cpu, or any thread while none does; not
 * while the workers run.  Return: items run (>= 0); -EINVAL; -EBUSY
 * (workers running, or @cpu's timers or work are being run); -EPERM
 * (another thread serves @cpu).
 */
int pw_run_work(struct pw_runtime *rt, unsigned cpu);

/**
 * pw_set_poll() - install (or, with NULL, remove) CPU @cpu's poll hook.
 * Context: any thread, while the workers are stopped.
 * Return: 0; -EINVAL; -EBUSY (workers running).
 */
int pw_set_poll(struct pw_runtime *rt, unsigned cpu, pw_poll_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_WORKER_H */
