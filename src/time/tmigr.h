/* SPDX-License-Identifier: MIT */
/* The timer migration hierarchy (PW_MIGRATION_PULL).  Design: tmigr.c. */
#ifndef PW_TIME_TMIGR_H
#define PW_TIME_TMIGR_H

#include <stdbool.h>
#include <stdint.h>

#include "cacheline.h"
#include "lock.h"

struct pw_runtime;

#define PW_TMIGR_ARITY 8u     /* children per group, as the kernel */
#define PW_TMIGR_NONE  0xffu  /* no migrator: every child is idle */

/* The group state word: active children (a bit per child) and the
 * migrator (a child's slot, or PW_TMIGR_NONE), changed together. */
#define PW_TMIGR_ACTIVE(st)   ((st) & 0xffu)
#define PW_TMIGR_MIGRATOR(st) (((st) >> 8) & 0xffu)
#define PW_TMIGR_STATE(active, migrator) ((uint32_t)(active) | ((uint32_t)(migrator) << 8))

struct pw__tgroup {
	struct pw__lock lock;   /* every change of the fields below */
	uint32_t state;         /* atomic: PW_TMIGR_STATE(); written under lock */
	uint32_t level;
	uint32_t nchildren;
	uint32_t first;         /* first child: a CPU (level 0) or a group index */
	int32_t parent;         /* group index, or -1 for the top */
	uint32_t slot;          /* this group's child slot in its parent */
	int32_t waker;          /* top only, atomic: the CPU that made the whole
				 * hierarchy idle and wakes for its first event; -1 */
	/* atomic, written under lock: the first global event (pw_now_ns()
	 * time) of each idle child, and their minimum; UINT64_MAX for none
	 * (and for every active child) */
	uint64_t next;
	uint64_t child_next[PW_TMIGR_ARITY];
} __attribute__((aligned(PW_CACHELINE)));

struct pw__tmigr {
	struct pw__tgroup *groups; /* level 0 first, the top last */
	unsigned ngroups;
	unsigned levels;
};

/* Build / free the hierarchy of @rt (every CPU active).  Context: the
 * thread creating / destroying the runtime.  Return: 0 or -ENOMEM. */
int pw__tmigr_init(struct pw_runtime *rt);
void pw__tmigr_free(struct pw_runtime *rt);

/* Is @cpu idle in hierarchy @tm (its global timers handed up)?  Lockless
 * snapshot.  Context: any thread.  (Inline: the arm path asks it.) */
static inline bool pw__tmigr_cpu_idle(const struct pw__tmigr *tm, unsigned cpu)
{
	uint32_t st = __atomic_load_n(&tm->groups[cpu / PW_TMIGR_ARITY].state, __ATOMIC_ACQUIRE);
	return !(PW_TMIGR_ACTIVE(st) & (1u << (cpu % PW_TMIGR_ARITY)));
}

/*
 * @cpu goes idle: hand the first event of its global base up the
 * hierarchy; if it was the last active CPU of all, it becomes the waker and
 * must wake for the hierarchy's first event (pw__tmigr_duty() says when).
 * Idempotent: on an idle CPU it refreshes the handed-up event.
 * Context: the thread acting as @cpu before it sleeps (a worker), or the
 * thread managing the runtime for a CPU nobody runs (pw_cpu_set_idle(),
 * CPU offline); holds no base or group lock.
 */
void pw__tmigr_deactivate(struct pw_runtime *rt, unsigned cpu);

/* @cpu is active again (woke): it runs its global timers itself.  Same
 * context as deactivate. */
void pw__tmigr_activate(struct pw_runtime *rt, unsigned cpu);

/* If @cpu is idle: recompute its handed-up event from its global base
 * (after someone ran or changed that base).  Context: any thread holding no
 * base or group lock. */
void pw__tmigr_refresh(struct pw_runtime *rt, unsigned cpu);

/*
 * A global-base event at @event_ns was just queued on CPU @cpu (base
 * unlocked): if @cpu is idle in the hierarchy, lower its handed-up event
 * (and kick the waker if the hierarchy's first event moved earlier)
 * instead of waking @cpu.  Return: true if @cpu runs its global timers
 * itself and may not see this one by itself (active in the hierarchy,
 * and with workers, its worker may be asleep): then the caller's kick
 * rule (policy.c) decides whether to kick it; false if the hierarchy took
 * the event or the awake worker will see it.  Context: any thread holding
 * no lock (the arming CPU itself too: pw__arm_notify_own()).
 */
bool pw__tmigr_notify(struct pw_runtime *rt, unsigned cpu, uint64_t event_ns);

/* The earliest event of other CPUs that @cpu must handle (it is a group's
 * migrator, or the waker), or UINT64_MAX.  Lockless.  Context: any thread. */
uint64_t pw__tmigr_duty(struct pw_runtime *rt, unsigned cpu);

/*
 * Expire the due global timers of the idle CPUs @cpu handles, at clock
 * reading @now, each under that CPU's run guard (taken with a try: a CPU
 * whose guard is busy is skipped and looked at again next time; the
 * simulation holds every guard already: @guards_held).  Callbacks see
 * pw_this_cpu() == @cpu.  Return: callbacks run.
 * Context: the thread running @cpu's timers (it holds @cpu's run guard),
 * no lock held.
 */
int pw__tmigr_handle(struct pw_runtime *rt, unsigned cpu, uint64_t now, bool guards_held);

/* CPU @cpu went offline and its timers moved to @to (online): @cpu goes
 * idle for good with nothing handed up, @to's entry is recomputed (if it is
 * idle), and if @cpu was the waker, @to takes that part over.  Context:
 * pw_cpu_offline(), holding @cpu's run guard and no lock. */
void pw__tmigr_offline(struct pw_runtime *rt, unsigned cpu, unsigned to);

/* Check the hierarchy's invariants under its locks.  Return: 0 or -EFAULT
 * (with a message on stderr). */
int pw__tmigr_check(struct pw_runtime *rt);

#endif /* PW_TIME_TMIGR_H */
