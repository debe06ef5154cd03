/* SPDX-License-Identifier: MIT */
/*
 * The timer pass, as the kernel's run_timer_softirq(): running a CPU's due
 * timers, and when it next has to.
 *
 * A pass (pw__run_cpu()) runs as the CPU: the calling thread's identity
 * (cpu.c) names the CPU for the pass and is restored after it.  Order:
 * the CPU's hrtimers whose window has opened (the kernel's hrtimer
 * interrupt), then its three wheel bases at the current jiffy (the
 * softirq), then, under PW_MIGRATION_PULL, the idle CPUs' global timers
 * it expires as their migrator or waker (tmigr.c); an idle CPU woken for a
 * pinned timer or an hrtimer ran its global ones too, so it refreshes what
 * it handed up.
 *
 * When a CPU must next act (pw__cpu_next_ns()): its hrtimers' and pinned
 * timers' first deadlines; its global timers' unless it is idle in the
 * PULL hierarchy (a migrator runs them then); its deferrable timers only
 * when asked (the simulation, for a CPU that is awake: they never wake a
 * CPU); and the other CPUs' events it handles as a migrator or waker.
 *
 * Threads: pw_run_timers() on the thread serving the CPU (or any thread
 * while none does), under the CPU's run guard; pw_next_expiry_ns() on any
 * thread.  Locks: each base lock in turn, never two at once, none across a
 * callback.  Cost: O(1) lock round trips per CPU for the next expiry, plus
 * one per level the CPU migrates for (lockless loads).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>

/* The calling thread acts as @cpu for a pass (its timers or its work);
 * most often it already is (a worker, a loop thread): then only in_run
 * changes.  act_as_end() restores what the thread was. */
struct act_as {
	bool other;
	struct pw__tls saved;
	uint64_t *saved_hits;
};

static inline void act_as_begin(struct act_as *a, struct pw_runtime *rt, unsigned cpu)
{
	a->other = pw__tls.rt != rt || pw__tls.cpu != (int)cpu;
	a->saved_hits = pw__fast_hits;
	if (a->other) {
		a->saved = pw__tls;
		pw__tls_set(rt, (int)cpu);
	} else {
		a->saved.in_run = pw__tls.in_run;
	}
	pw__tls.in_run = true;
}

static inline void act_as_end(struct act_as *a)
{
	if (a->other) {
		pw__tls = a->saved;
		pw__fast_hits = a->saved_hits;
	} else {
		pw__tls.in_run = a->saved.in_run;
	}
}

int pw__run_cpu(struct pw_runtime *rt, unsigned cpu, uint64_t now, bool guards_held)
{
	uint64_t jnow = pw__ns_to_jiffies(rt, now);
	int n;

	struct act_as a;
	pw__jiffies_note(rt, jnow);
	act_as_begin(&a, rt, cpu);
	n = pw__hrbase_run(rt, &rt->cpus[cpu].hr, now);
	for (unsigned k = 0; k < PW_NR_BASES; k++)
		n += pw__base_run(rt, &rt->cpus[cpu].base[k], jnow);
	n += pw__tmigr_handle(rt, cpu, now, guards_held);
	/* an idle CPU woken for a pinned timer ran its global ones too */
	if (pw__tmigr_cpu_idle(&rt->tmigr, cpu))
		pw__tmigr_refresh(rt, cpu);
	act_as_end(&a);
	return n;
}

unsigned pw__run_cpu_work(struct pw_runtime *rt, unsigned cpu)
{
	if (!__atomic_load_n(&rt->workers[cpu].work_head, __ATOMIC_ACQUIRE))
		return 0;
	struct act_as a;
	act_as_begin(&a, rt, cpu);
	unsigned n = pw__work_run(&rt->workers[cpu]);
	act_as_end(&a);
	return n;
}

int pw_run_work(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return -EBUSY; /* the worker runs it */
	struct pw__cpu *c = &rt->cpus[cpu];
	bool mine = pw__tls.rt == rt && pw__tls.cpu == (int)cpu;
	if (!mine && __atomic_load_n(&c->served, __ATOMIC_ACQUIRE))
		return -EPERM;
	if (!pw__guard_try(c))
		return -EBUSY;
	int n = (int)pw__run_cpu_work(rt, cpu);
	pw__guard_release(c);
	return n;
}

int pw_run_timers(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	struct pw__cpu *c = &rt->cpus[cpu];
	if (__atomic_load_n(&c->offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	/* From one of @cpu's own callbacks this is "mine" and the guard says -EBUSY. */
	bool mine = pw__tls.rt == rt && pw__tls.cpu == (int)cpu;
	if (!mine && __atomic_load_n(&c->served, __ATOMIC_ACQUIRE))
		return -EPERM;
	if (!pw__guard_try(c))
		return -EBUSY;
	int n = pw__run_cpu(rt, cpu, pw_now_ns(rt), false);
	pw__guard_release(c);
	return n;
}

uint64_t pw__base_next_ns(struct pw_runtime *rt, struct pw__base *b)
{
	uint64_t ns = UINT64_MAX;
	pw__lock(&b->lock);
	if (pw__wheel_has_buckets(&b->wheel))
		ns = pw_jiffies_to_ns(rt, pw__wheel_next_expiry(&b->wheel));
	pw__unlock(&b->lock);
	return ns;
}

static inline void take_min(uint64_t *best, uint64_t v)
{
	if (v < *best)
		*best = v;
}

#define SKIP_NONE 0xffu /* no base: not a base kind, nor PW_BASE_HRTIMER */

/* pw__cpu_next_ns(), leaving out the events of base @skip (a wheel base
 * kind, PW_BASE_HRTIMER, or SKIP_NONE).  Inlined into both callers. */
static inline __attribute__((always_inline)) uint64_t cpu_next(struct pw_runtime *rt,
								unsigned cpu, bool def,
								unsigned skip)
{
	struct pw__cpu *c = &rt->cpus[cpu];
	uint64_t best = skip == PW_BASE_HRTIMER ? UINT64_MAX : pw__hrbase_next_ns(rt, &c->hr);
	if (skip != PW_BASE_LOCAL)
		take_min(&best, pw__base_next_ns(rt, &c->base[PW_BASE_LOCAL]));
	if (!pw__tmigr_cpu_idle(&rt->tmigr, cpu)) {
		if (skip != PW_BASE_GLOBAL)
			take_min(&best, pw__base_next_ns(rt, &c->base[PW_BASE_GLOBAL]));
		if (def)
			take_min(&best, pw__base_next_ns(rt, &c->base[PW_BASE_DEF]));
	}
	take_min(&best, pw__tmigr_duty(rt, cpu));
	return best;
}

uint64_t pw__cpu_next_ns(struct pw_runtime *rt, unsigned cpu, bool def)
{
	return cpu_next(rt, cpu, def, SKIP_NONE);
}

uint64_t pw__cpu_next_but_ns(struct pw_runtime *rt, unsigned cpu, unsigned skip)
{
	return cpu_next(rt, cpu, false, skip);
}

uint64_t pw_next_expiry_ns(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return UINT64_MAX;
	return pw__cpu_next_ns(rt, cpu, false); /* deferrable timers never wake */
}
