/* SPDX-License-Identifier: MIT */
/*
 * CPU offline and online (the kernel's timer hotplug callbacks).
 *
 * Offline: the CPU's worker (if workers run) is stopped; the offlining
 * thread then takes the CPU's run guard and keeps it while the CPU is
 * offline, so nobody runs (or could still be running) its timers; the CPU
 * is marked offline (no pw_cpu_enter, no add_timer_on, never a push
 * target); every timer it held (wheel, both bases, and hrtimers; pinned
 * ones too, as the kernel does on hotplug) moves to the first online CPU
 * with the MIGRATING protocol, one timer at a time, so no two base locks
 * are ever held together.  The receiving worker is kicked once.  In the
 * migration hierarchy the CPU goes idle with nothing handed up (if it was
 * the waker, the receiving CPU takes that over).
 * Online: the mark is cleared, the guard released, the worker restarted.
 *
 * Context of both: a thread managing the runtime, not the CPU's own thread.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>

#include "internal.h"

int pw_cpu_offline(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (pw__tls.rt == rt && pw__tls.cpu == (int)cpu)
		return -EDEADLK;
	struct pw__cpu *c = &rt->cpus[cpu];
	if (__atomic_load_n(&c->offline, __ATOMIC_ACQUIRE))
		return -EALREADY;
	int to = -1;
	for (unsigned o = 0; o < rt->ncpus && to < 0; o++)
		if (o != cpu && !__atomic_load_n(&rt->cpus[o].offline, __ATOMIC_ACQUIRE))
			to = (int)o;
	if (to < 0)
		return -EBUSY; /* the last online CPU */
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		pw__worker_stop(rt, cpu);
	else if (__atomic_load_n(&c->served, __ATOMIC_ACQUIRE))
		return -EBUSY; /* a thread serves it: it must pw_cpu_exit() first */

	while (!pw__guard_try(c))
		sched_yield();
	__atomic_store_n(&c->idle, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->offline, 1, __ATOMIC_RELEASE);

	int moved = pw__wheel_move_all(rt, cpu, (unsigned)to);
	int hr = pw__hr_move_all(rt, cpu, (unsigned)to);
	pw__tmigr_offline(rt, cpu, (unsigned)to);
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		pw__kick(rt, (unsigned)to, 0, PW__KICK_OTHER);
	if (hr < 0)
		return hr; /* the rest stay on the offline CPU until online */
	return moved + hr;
}

int pw_cpu_online(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	struct pw__cpu *c = &rt->cpus[cpu];
	if (!__atomic_load_n(&c->offline, __ATOMIC_ACQUIRE))
		return -EALREADY;
	__atomic_store_n(&c->offline, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&c->idle, 0, __ATOMIC_RELAXED);
	pw__tmigr_activate(rt, cpu);
	pw__guard_release(c);
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return pw__worker_start(rt, cpu);
	return 0;
}

int pw_cpu_is_online(const struct pw_runtime *rt, unsigned cpu)
{
	return rt && cpu < rt->ncpus && !__atomic_load_n(&rt->cpus[cpu].offline, __ATOMIC_ACQUIRE);
}
