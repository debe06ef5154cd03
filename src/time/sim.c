/* SPDX-License-Identifier: MIT */
/*
 * The simulation driver: pw_sim_advance() on a PW_CLOCK_SIM runtime.
 *
 * The simulation driver takes every CPU's run guard, then repeatedly finds
 * the earliest event any CPU must act on (lowest CPU number first on ties),
 * sets the simulated clock to it, and runs that CPU's due timers as that
 * CPU (pw__run_cpu(), softirq.c), then the work queued for it
 * (pw_queue_work_on(): a CPU with queued work is due at once).  It honours the idle marks: a CPU idle in
 * the PULL hierarchy (marked idle with pw_cpu_set_idle() under
 * PW_MIGRATION_PULL) acts on its pinned timers and hrtimers only, and on
 * the other CPUs' events it handles as a migrator or waker; a CPU that is
 * not idle there runs its deferrable timers too (it is awake).  Each step
 * is O(CPUs) lock round trips; the order depends only on the calls made,
 * so runs replay exactly.
 *
 * Threads: any one thread, not from a callback; it acts as each CPU in
 * turn.  Locks: the run guards of every online CPU for the whole call
 * (waiting, with sched_yield(), for a thread inside pw_run_timers()), then
 * each base lock in turn as a pass takes them; an offline CPU's guard
 * stays with pw_cpu_offline().
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <sched.h>

int pw_sim_advance(struct pw_runtime *rt, uint64_t ns)
{
	if (!rt || rt->clock != PW_CLOCK_SIM)
		return -EINVAL;
	if (pw__tls.in_run)
		return -EDEADLK;

	/* An offline CPU's guard stays with pw_cpu_offline(); it has no timers. */
	for (unsigned c = 0; c < rt->ncpus; c++)
		while (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE) &&
		       !pw__guard_try(&rt->cpus[c]))
			sched_yield();

	uint64_t now = __atomic_load_n(&rt->sim_now_ns, __ATOMIC_RELAXED);
	uint64_t target = now + ns < now ? UINT64_MAX : now + ns;
	for (;;) {
		uint64_t best = UINT64_MAX;
		unsigned best_cpu = 0;
		for (unsigned c = 0; c < rt->ncpus; c++) {
			if (__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
				continue;
			/* a CPU that is not idle in the hierarchy is awake: it
			 * runs its deferrable timers when they are due */
			uint64_t e = pw__cpu_next_ns(rt, c, true);
			/* work queued for a CPU (the net layer's NET_TX) is due now */
			if (__atomic_load_n(&rt->workers[c].work_head, __ATOMIC_ACQUIRE))
				e = now;
			if (e < best) {
				best = e;
				best_cpu = c;
			}
		}
		if (best > target || best == UINT64_MAX)
			break;
		if (best > now) {
			now = best;
			pw__sim_set(rt, now);
		}
		pw__run_cpu(rt, best_cpu, now, true);
		pw__run_cpu_work(rt, best_cpu);
	}
	if (target > now)
		pw__sim_set(rt, target);

	for (unsigned c = 0; c < rt->ncpus; c++)
		if (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
			pw__guard_release(&rt->cpus[c]);
	return 0;
}
