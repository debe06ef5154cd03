/* SPDX-License-Identifier: MIT */
/*
 * The model's task scheduler (model_sched.c): run queues, PELT loads,
 * 3.17's wake-up placement and newly-idle balancing, for a seed whose
 * application threads sleep and wake (seed000's netperf threads).  The
 * seed says when a thread wakes, from which CPU, and when it sleeps; the
 * scheduler says where it runs and when it gets the CPU.
 *
 * Threads: the main thread only (model.c).
 */
#ifndef PW_LAB_MODEL_SCHED_H
#define PW_LAB_MODEL_SCHED_H

#include "model.h"

#define MDL_SCHED_NONE UINT32_MAX
#define MDL_SCHED_MIGRATION_NS 500000ull /* sysctl_sched_migration_cost */

enum mdl_task_state { MDL_T_SLEEP, MDL_T_QUEUED, MDL_T_RUNNING };

struct mdl_task {
	unsigned cpu;        /* where it runs, waits, or last ran */
	enum mdl_task_state state;
	uint32_t next;       /* its queue's link */
	uint64_t last_ran;   /* when it last left a CPU (task_hot()) */
	uint64_t avg_t;      /* the time of avg */
	double avg;          /* PELT's runnable average, 0..1 */
};

struct mdl_rq {
	uint32_t curr;       /* the thread running, MDL_SCHED_NONE */
	uint32_t head, tail; /* the threads waiting, first come first served */
	unsigned nq;
	uint64_t idle_stamp; /* went idle at (0: not idle since) */
	double avg_idle;     /* ns */
};

struct mdl_sched {
	struct mdl *m;
	unsigned ncpus, ntasks;
	int balance;         /* 3.17's placement and newly-idle pulls; 0: threads stay */
	unsigned cat;        /* the category of the scheduler's own work */
	unsigned nlev;       /* the domains, lowest first; the last spans the machine */
	unsigned span[PW_TOPO_MAX_LEVELS + 1];
	unsigned llc;        /* the CPUs sharing a last-level cache */
	struct mdl_task *t;
	struct mdl_rq *rq;
	/* in the measured window */
	uint64_t wakes, affine, moved, newidle, pulls, pulls_far;
};

/* Set up @ntasks sleeping threads on @m's CPUs over @topo's domains
 * (NULL: one flat domain) with a last-level cache of @llc CPUs (0: the
 * machine); @balance 0 keeps each thread where mdl_sched_place() put it.
 * Context: main thread.  Return: 0 or -ENOMEM. */
int mdl_sched_init(struct mdl_sched *s, struct mdl *m, const struct mdl_topo *topo, unsigned llc,
		   unsigned ntasks, int balance, unsigned cat);
void mdl_sched_fini(struct mdl_sched *s);
/* Thread @ti, asleep, last ran on @cpu.  Context: main thread, before the run. */
void mdl_sched_place(struct mdl_sched *s, unsigned ti, unsigned cpu);
/* Thread @ti is woken from CPU @waker (3.17's try_to_wake_up()): the CPU
 * it is queued on (select_task_rq_fair() where balancing is on, charging
 * the placement's reads to @waker); *@run is 1 when it runs at once (the
 * CPU had no thread).  Context: main thread. */
unsigned mdl_sched_wake(struct mdl_sched *s, unsigned ti, unsigned waker, int *run);
/* The thread running on @cpu sleeps: the next to run there (the first
 * waiting; with none, a thread idle_balance() pulled, its costs charged to
 * @cpu), or MDL_SCHED_NONE.  Context: main thread. */
uint32_t mdl_sched_sleep(struct mdl_sched *s, unsigned cpu);
/* The threads queued or running on @cpu. */
unsigned mdl_sched_nr(const struct mdl_sched *s, unsigned cpu);
/* @cpu's load now: the runnable averages of its threads x 1024. */
double mdl_sched_load(struct mdl_sched *s, unsigned cpu);

#endif /* PW_LAB_MODEL_SCHED_H */
