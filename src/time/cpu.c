/* SPDX-License-Identifier: MIT */
/*
 * Thread identity: which thread serves which CPU, and the run guard.
 *
 * The calling thread's identity is thread-local (pw__tls, internal.h): the
 * runtime and CPU it acts as, whether it is inside a timer pass, its CPU's
 * statistics, and the callback it is running.  pw__fast_hits is the inline
 * arm fast path's counter (<pinwheel/timer.h>), pw__stats_sink what a
 * thread that is no CPU counts into.  A thread acts as a CPU in two ways:
 * it enters as one (pw_cpu_enter(): `served` is set, the CPU is its own),
 * or it runs a CPU's timers (softirq.c, sim.c: pw__tls names that CPU for
 * the run, then is restored).
 *
 * The run guard (struct pw__cpu.run_guard): one thread at a time runs a
 * CPU's timers.  pw_run_timers() takes it with a try, the simulation takes
 * every CPU's, a PULL migrator an idle CPU's, pw_cpu_offline() keeps an
 * offline CPU's.
 *
 * Threads: every function acts on the calling thread's own identity, or
 * (the guard) on any CPU with one atomic.  Locks: none.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>

__thread struct pw__tls pw__tls;
__thread uint64_t *pw__fast_hits;
__thread struct pw__stats pw__stats_sink;

void pw__tls_set(struct pw_runtime *rt, int cpu)
{
	pw__tls.rt = rt;
	pw__tls.cpu = rt ? cpu : 0;
	pw__tls.stats = rt ? &rt->cpus[cpu].stats : NULL;
	pw__fast_hits = rt ? &rt->cpus[cpu].stats.fast_hits : NULL;
	pw__lane_cpu_set(rt, cpu);
}

int pw_cpu_enter(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (pw__tls.rt)
		return -EBUSY;
	if (__atomic_load_n(&rt->cpus[cpu].offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	uint32_t expect = 0;
	if (!__atomic_compare_exchange_n(&rt->cpus[cpu].served, &expect, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return -EBUSY;
	pw__tls_set(rt, (int)cpu);
	return 0;
}

void pw_cpu_exit(struct pw_runtime *rt)
{
	/* From inside a run, pw__tls names the CPU being run, not the one
	 * entered: leave it alone (documented no-op). */
	if (!rt || pw__tls.rt != rt || pw__tls.in_run)
		return;
	__atomic_store_n(&rt->cpus[pw__tls.cpu].served, 0, __ATOMIC_RELEASE);
	pw__tls_set(NULL, 0);
}

int pw_this_cpu(void)
{
	return pw__tls.rt ? pw__tls.cpu : -1;
}

bool pw__guard_try(struct pw__cpu *c)
{
	uint32_t expect = 0;
	/* acquire/release: the next runner sees the last runner's writes to
	 * the base that were made outside the lock (none today; cheap). */
	return __atomic_compare_exchange_n(&c->run_guard, &expect, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void pw__guard_release(struct pw__cpu *c)
{
	__atomic_store_n(&c->run_guard, 0, __ATOMIC_RELEASE);
}
