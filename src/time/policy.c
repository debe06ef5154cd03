/* SPDX-License-Identifier: MIT */
/*
 * Migration policies: which CPU a non-pinned timer goes to, and the idle
 * mark they read.
 *
 *  - PW_MIGRATION_OFF: always the arming CPU.
 *  - PW_MIGRATION_PUSH (before Linux 6.9, timer_migration=1): an idle
 *    arming CPU pushes the timer to a busy one, get_nohz_timer_target()'s
 *    rule (pw__policy_target()).
 *  - PW_MIGRATION_PULL (6.9, the default): always the arming CPU; a CPU
 *    that goes idle hands its global timers' first expiry to the hierarchy
 *    (tmigr.c) and an active CPU expires them.
 *
 * The idle mark (struct pw__cpu.idle, atomic) is one state with two
 * writers at different times: a worker sets it each round from its poll
 * hook (idle = reported no work) while workers run; without workers the
 * application sets it (pw_cpu_set_idle()), and under PULL that also makes
 * the CPU idle in the hierarchy (its global base's tmigr_idle, the
 * hierarchy's view, which the arm path reads).  With workers, the
 * hierarchy's view follows the worker's sleep instead (worker.c).
 *
 * The arm paths reach this file only through placement.h.
 *
 * Context: the setters are for the thread managing the runtime; the
 * readers and pw__policy_target() are lock-free and may run on any thread.
 */
#define _GNU_SOURCE
#include <errno.h>

#include "internal.h"
#include "placement.h"

/* Without workers, a CPU is idle in the PULL hierarchy exactly while the
 * policy is PULL and the CPU is marked idle (pw_cpu_set_idle()).  Context:
 * a thread managing a runtime without workers. */
static void sync_idle_mark(struct pw_runtime *rt, unsigned cpu)
{
	if (pw_get_migration(rt) == PW_MIGRATION_PULL &&
	    __atomic_load_n(&rt->cpus[cpu].idle, __ATOMIC_RELAXED))
		pw__tmigr_deactivate(rt, cpu);
	else
		pw__tmigr_activate(rt, cpu);
}

int pw_set_migration(struct pw_runtime *rt, enum pw_migration policy)
{
	if (!rt || (policy != PW_MIGRATION_OFF && policy != PW_MIGRATION_PUSH &&
		    policy != PW_MIGRATION_PULL))
		return -EINVAL;
	__atomic_store_n(&rt->migration, (uint32_t)policy, __ATOMIC_RELAXED);
	pw__lane_key_set(rt);
	/* with workers, each worker goes idle in the hierarchy before it
	 * sleeps, under PULL only */
	if (!__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		for (unsigned c = 0; c < rt->ncpus; c++)
			if (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
				sync_idle_mark(rt, c);
	return 0;
}

enum pw_migration pw_get_migration(const struct pw_runtime *rt)
{
	return rt ? (enum pw_migration)__atomic_load_n(&rt->migration, __ATOMIC_RELAXED)
		  : PW_MIGRATION_OFF;
}

int pw_cpu_set_idle(struct pw_runtime *rt, unsigned cpu, int idle)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return -EBUSY;
	if (__atomic_load_n(&rt->cpus[cpu].offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	__atomic_store_n(&rt->cpus[cpu].idle, idle ? 1u : 0u, __ATOMIC_RELAXED);
	sync_idle_mark(rt, cpu);
	return 0;
}

unsigned pw__policy_target(struct pw_runtime *rt, unsigned this_cpu)
{
	/* get_nohz_timer_target(): this CPU if busy, else the first busy one */
	if (!__atomic_load_n(&rt->cpus[this_cpu].idle, __ATOMIC_RELAXED))
		return this_cpu;
	for (unsigned c = 0; c < rt->ncpus; c++)
		if (c != this_cpu && !__atomic_load_n(&rt->cpus[c].idle, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_RELAXED)) {
			pw__count_add(&rt->cpus[this_cpu].stats.pushed, 1);
			return c;
		}
	return this_cpu;
}

int pw_cpu_is_idle(const struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return 0;
	return __atomic_load_n(&rt->cpus[cpu].idle, __ATOMIC_ACQUIRE) != 0;
}

void pw__arm_notify_remote(struct pw_runtime *rt, int self, unsigned cpu, unsigned kind,
			   uint64_t event_ns)
{
	if (self >= 0 && kind != PW_BASE_HRTIMER)
		pw__count_add(&rt->cpus[self].stats.remote_arms, 1);
	if (kind == PW_BASE_GLOBAL)
		pw__tmigr_notify(rt, cpu, event_ns);
	else if (kind != PW_BASE_DEF && __atomic_load_n(&rt->workers_on, __ATOMIC_RELAXED))
		pw__kick(rt, cpu, event_ns);
}
