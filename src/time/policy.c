/* SPDX-License-Identifier: MIT */
/*
 * Migration policies: which CPU a non-pinned timer goes to, and the idle
 * mark they read.
 *
 *  - PW_MIGRATION_OFF: always the arming CPU.
 *  - PW_MIGRATION_PUSH (before Linux 6.9, timer_migration=1): an idle
 *    arming CPU pushes the timer to a busy one, get_nohz_timer_target()'s
 *    rule (pw__policy_target()): the nearest by scheduling domain
 *    (pw_config.topo_span[]), the lowest-numbered within one.
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
 * Kick rules: when an enqueue on another CPU's base interrupts that CPU
 * (pw__arm_notify_remote(), below), by the kernel era whose rule it is:
 *
 *  - PW_KICK_LINUX_4_8 (the default; trigger_dyntick_cpu() from 4.8 on):
 *    only an idle target whose first expiry the timer moves earlier.  With
 *    workers, "idle" is the worker asleep and "earlier" is earlier than the
 *    deadline it sleeps to (pw__kick(), worker.c); without, the idle mark
 *    and the target's first expiry: the enqueue base's, read under its lock
 *    before the enqueue (pw__arm_moves_first(), placement.h), then the rest
 *    the CPU wakes for by itself (pw__cpu_next_but_ns(), softirq.c).  The
 *    kernel compares with its one wheel base only; here hrtimers and the
 *    migrator's duty count too, as they do in a worker's deadline, so the
 *    simulation counts the kicks workers would send.
 *  - PW_KICK_LINUX_3_17 (internal_add_timer() -> wake_up_nohz_cpu(), until
 *    4.8): every enqueue, busy target or idle (pw__kick_always()).  The
 *    kernel spared an idle target that polls (its need-resched flag does
 *    the job); PUSH only picks busy CPUs, so that case never arises from a
 *    push, and a kick is a kick here whoever it targets.
 *
 * Both spare deferrable timers.  What a remote enqueue is: an enqueue on a
 * CPU's base by a thread that is not that CPU (a push, add_timer_on(), a
 * re-arm that stays where it is because the arming thread is no CPU or
 * the timer's callback runs there); a same-bucket re-arm (fast path 2)
 * enqueues nothing and kicks nobody, in both eras (3.17's mod_timer had no
 * such path: a model of 3.17 detaches first).  The rule is read only off
 * the fast lane (whose arms are local), so it is no part of rt->lane_key.
 * hrtimers follow one rule in both eras (a push never makes a remote first
 * event; a thread that is no CPU, or a restart while the callback runs
 * elsewhere, can): the 4.8 test on the hrtimer's clock queue.
 *
 * The arm paths reach this file only through placement.h.
 *
 * Context: the setters are for any thread (the runtime's words are
 * atomics); the readers and pw__policy_target() are lock-free and may run
 * on any thread; pw__arm_notify_remote() runs on the arming thread with no
 * lock held and takes the locks its comparisons need, one at a time.
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

/* The first busy online CPU of [@lo, @hi) but @this_cpu, or -1.
 * Context: any thread; lock-free (the marks are atomics). */
static int first_busy(struct pw_runtime *rt, unsigned lo, unsigned hi, unsigned this_cpu)
{
	for (unsigned c = lo; c < hi; c++)
		if (c != this_cpu && !__atomic_load_n(&rt->cpus[c].idle, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_RELAXED))
			return (int)c;
	return -1;
}

/*
 * get_nohz_timer_target() as 3.17 has it: this CPU if it is busy; else,
 * walking this CPU's scheduling domains from the smallest
 * (for_each_domain(): SMT siblings, then the cores sharing a cache or a
 * socket, ..., the whole machine last), the first busy CPU by number of
 * the first domain that has one; else this CPU.  The domains are
 * rt->topo_span[]'s blocks with the whole machine after them (none listed:
 * one flat domain).  The kernel scans each domain whole; the CPUs of the
 * inner domain were idle a moment ago, so here each level scans only what
 * the level below did not (the same answer while the marks stand still).
 * 3.17 has no housekeeping mask (nohz_full CPUs are not skipped).
 */
unsigned pw__policy_target(struct pw_runtime *rt, unsigned this_cpu)
{
	if (!__atomic_load_n(&rt->cpus[this_cpu].idle, __ATOMIC_RELAXED))
		return this_cpu;
	unsigned lo = this_cpu, hi = this_cpu + 1;
	for (unsigned l = 0; l <= rt->topo_levels; l++) {
		unsigned span = l < rt->topo_levels ? rt->topo_span[l] : rt->ncpus;
		unsigned start = this_cpu - this_cpu % span;
		int c = first_busy(rt, start, lo, this_cpu);
		if (c < 0)
			c = first_busy(rt, hi, start + span, this_cpu);
		if (c >= 0) {
			pw__count_add(&rt->cpus[this_cpu].stats.pushed, 1);
			return (unsigned)c;
		}
		lo = start;
		hi = start + span;
	}
	return this_cpu;
}

int pw_cpu_is_idle(const struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return 0;
	return __atomic_load_n(&rt->cpus[cpu].idle, __ATOMIC_ACQUIRE) != 0;
}

int pw_set_kick_rule(struct pw_runtime *rt, enum pw_kick_rule rule)
{
	if (!rt || (rule != PW_KICK_LINUX_4_8 && rule != PW_KICK_LINUX_3_17))
		return -EINVAL;
	/* no lane key to update: the rule is read only off the fast lane */
	__atomic_store_n(&rt->kick_rule, (uint32_t)rule, __ATOMIC_RELAXED);
	return 0;
}

enum pw_kick_rule pw_get_kick_rule(const struct pw_runtime *rt)
{
	return rt ? (enum pw_kick_rule)__atomic_load_n(&rt->kick_rule, __ATOMIC_RELAXED)
		  : PW_KICK_LINUX_4_8;
}

/*
 * Without workers: is CPU @cpu idle (its mark) and is @event_ns earlier
 * than everything it would wake for by itself besides the queue the event
 * went to, whose first event @earlier already compared it with (under that
 * queue's lock, before the enqueue)?  The rest: pw__cpu_next_but_ns(); for
 * an hrtimer, also its base's first event on the other clocks (taken with
 * the new timer in it, so "not after", and a tie with another clock counts
 * as earlier).  What a worker asleep until that time would be kicked for.
 * Context: any thread holding no lock; takes the target's locks in turn.
 */
static bool idle_and_earlier(struct pw_runtime *rt, unsigned cpu, unsigned kind,
			     uint64_t event_ns, bool earlier)
{
	if (!earlier || !__atomic_load_n(&rt->cpus[cpu].idle, __ATOMIC_RELAXED))
		return false;
	if (event_ns >= pw__cpu_next_but_ns(rt, cpu, kind))
		return false;
	return kind != PW_BASE_HRTIMER || event_ns <= pw__hrbase_next_ns(rt, &rt->cpus[cpu].hr);
}

/*
 * The kick rules (pw_set_kick_rule()), for an event enqueued on another
 * CPU's base:
 *  - deferrable timers: nothing, in every era (the kernel spares them);
 *  - hrtimers, the same in both eras: with workers, the kick protocol
 *    (asleep, and earlier than it wakes by itself); without, the idle mark
 *    and the same comparison (idle_and_earlier()).  Count: hrtimer.
 *  - wheel timers under PW_KICK_LINUX_3_17: every enqueue kicks, busy or
 *    idle (pw__kick_always()); a global timer also goes to the PULL
 *    hierarchy, which lowers an idle target's entry (and may kick the
 *    waker), as the worker's own round would.  Count: remote_enqueue.
 *  - wheel timers under PW_KICK_LINUX_4_8: a global timer the hierarchy
 *    took (the target is idle in it) or an awake worker will see kicks
 *    nobody but maybe the waker; otherwise, with workers, the kick
 *    protocol; without, the idle mark and "first expiry moved earlier"
 *    (idle_and_earlier()).  Count: idle_earlier.
 * Remote arms (not hrtimers) are counted for @self.
 */
void pw__arm_notify_remote(struct pw_runtime *rt, int self, unsigned cpu, unsigned kind,
			   uint64_t event_ns, bool earlier)
{
	bool workers = __atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE);
	if (kind == PW_BASE_HRTIMER) {
		if (workers)
			pw__kick(rt, cpu, event_ns, PW__KICK_HRTIMER);
		else if (idle_and_earlier(rt, cpu, kind, event_ns, earlier))
			pw__kick_count(rt, cpu, PW__KICK_HRTIMER);
		return;
	}
	if (self >= 0)
		pw__count_add(&rt->cpus[self].stats.remote_arms, 1);
	if (kind == PW_BASE_DEF)
		return;
	if (__atomic_load_n(&rt->kick_rule, __ATOMIC_RELAXED) == PW_KICK_LINUX_3_17) {
		if (kind == PW_BASE_GLOBAL)
			(void)pw__tmigr_notify(rt, cpu, event_ns);
		pw__kick_always(rt, cpu, PW__KICK_REMOTE_ENQUEUE);
		return;
	}
	if (kind == PW_BASE_GLOBAL && !pw__tmigr_notify(rt, cpu, event_ns))
		return;
	if (workers)
		pw__kick(rt, cpu, event_ns, PW__KICK_IDLE_EARLIER);
	else if (idle_and_earlier(rt, cpu, kind, event_ns, earlier))
		pw__kick_count(rt, cpu, PW__KICK_IDLE_EARLIER);
}
