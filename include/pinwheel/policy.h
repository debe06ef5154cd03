/* SPDX-License-Identifier: MIT */
/*
 * Where timers run: the migration policy for non-pinned timers (like
 * /proc/sys/kernel/timer_migration), the idle marks the policies read, and
 * CPU hotplug (taking a CPU out and bringing it back).
 * Design: src/time/policy.c (the policies and the idle mark),
 * src/time/tmigr.c (the PULL hierarchy), src/time/hotplug.c (hotplug).
 */
#ifndef PINWHEEL_POLICY_H
#define PINWHEEL_POLICY_H

#ifdef __cplusplus
extern "C" {
#endif

struct pw_runtime;

/* Where non-pinned timers go (like /proc/sys/kernel/timer_migration). */
enum pw_migration {
	PW_MIGRATION_OFF = 0,  /* always enqueue on the arming CPU */
	PW_MIGRATION_PUSH = 1, /* pre-6.9: an idle arming CPU pushes the timer to
				* a busy CPU (this CPU if busy, else the
				* lowest-numbered busy CPU of its smallest
				* scheduling domain that has one: its SMT
				* sibling, then its socket, then anywhere, as
				* pw_config.topo_span[] describes them; one flat
				* domain by default); hrtimers stay local when
				* they would be the first timer of that CPU */
	PW_MIGRATION_PULL = 2, /* 6.9, the default: enqueue on the arming CPU;
				* a CPU going idle hands its non-pinned timers'
				* first expiry up a hierarchy of groups of 8, and
				* an active CPU per group (the migrator) expires
				* them; pinned timers and hrtimers stay and wake
				* their CPU; deferrable timers never wake it */
};

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

/*
 * When enqueueing a wheel timer on another CPU's base interrupts ("kicks")
 * that CPU, by the kernel era whose rule it is.  A kick wakes the target's
 * worker (a futex wake; a worker that is awake runs one more round before
 * it sleeps), as the kernel's IPI makes the target re-evaluate its timers.
 * Kicks are counted on the target by reason (pw_kick_stats_read()), with
 * or without workers (without, nothing is woken: the simulation counts
 * what the rule decided).  An enqueue on another CPU's base: a push, an
 * add_timer_on() of another CPU, a re-arm that leaves the timer on
 * another CPU (armed by a thread that is no CPU, or while its callback
 * runs there).  A re-arm into the same bucket enqueues nothing.
 */
enum pw_kick_rule {
	PW_KICK_LINUX_4_8 = 0,  /* the default; Linux 4.8 on (trigger_dyntick_cpu()):
				 * only a target whose base is idle (the CPU is
				 * idle: its worker asleep, or marked idle) and
				 * whose first expiry the new timer moves earlier
				 * (strictly: before every timer of its pinned and
				 * global bases, and of whatever else it wakes for:
				 * hrtimers, its duty as a PULL migrator) */
	PW_KICK_LINUX_3_17 = 1, /* Linux 3.17 (internal_add_timer() ->
				 * wake_up_nohz_cpu(), until 4.8): every enqueue
				 * onto another CPU's base, busy or idle (the
				 * kernel spares only an idle target that polls,
				 * which a CPU PUSH picks, running a task, never
				 * is); deferrable timers never kick */
};

/**
 * pw_set_kick_rule() - choose the era whose kick rule remote enqueues
 * follow; takes effect for the next arms.  Default: PW_KICK_LINUX_4_8.
 * hrtimers follow one rule in both eras: a push never makes one the
 * target's first event (it stays on the arming CPU instead, so no kick is
 * needed); one started on another CPU otherwise (by a thread that is no
 * CPU, or while its callback runs there) kicks that CPU if it is idle and
 * the timer becomes its first event.  The rule costs a local arm nothing.
 * Context: any thread.
 * Return: 0; -EINVAL (NULL or unknown).
 */
int pw_set_kick_rule(struct pw_runtime *rt, enum pw_kick_rule rule);

/* The kick rule in force (PW_KICK_LINUX_4_8 for NULL). */
enum pw_kick_rule pw_get_kick_rule(const struct pw_runtime *rt);

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

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_POLICY_H */
