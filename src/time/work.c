/* SPDX-License-Identifier: MIT */
/*
 * Work queued for a CPU's worker (the kernel's queue_work_on(), and the
 * NET_TX softirq's place for the net layer): a lock-free stack per CPU
 * that any thread pushes onto and the CPU's worker empties, oldest first,
 * once a round (pw__work_run()).  An item is queued at most once at a time
 * (its pw_queued word); it may queue itself again from its own function.
 * Pushing kicks the worker if it sleeps (worker.c's protocol); without
 * workers, work queued by another thread for a CPU marked idle
 * (pw_cpu_set_idle()) counts the kick it would have been (pw_kick_stats).
 * Context: pw_work_init(), pw_queue_work_on(): any thread, callbacks too.
 */
#include <errno.h>

#include "internal.h"

int pw_work_init(struct pw_work *w, void (*fn)(struct pw_work *))
{
	if (!w || !fn)
		return -EINVAL;
	w->func = fn;
	w->pw_next = NULL;
	w->pw_queued = 0;
	w->pw_spare = 0;
	return 0;
}


int pw_queue_work_on(struct pw_runtime *rt, unsigned cpu, struct pw_work *w)
{
	if (!rt || !w || !w->func || cpu >= rt->ncpus)
		return -EINVAL;
	uint32_t expect = 0;
	if (!__atomic_compare_exchange_n(&w->pw_queued, &expect, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	struct pw__worker *wk = &rt->workers[cpu];
	struct pw_work *old = __atomic_load_n(&wk->work_head, __ATOMIC_RELAXED);
	do
		w->pw_next = old;
	while (!__atomic_compare_exchange_n(&wk->work_head, &old, w, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED)); /* release: w's fields */
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		pw__kick(rt, cpu, PW_KICK_WORK, PW__KICK_WORK);
	else if (pw__self(rt) != (int)cpu && __atomic_load_n(&rt->cpus[cpu].idle, __ATOMIC_RELAXED))
		pw__kick_count(rt, cpu, PW__KICK_WORK); /* the same rule, on the idle mark */
	return 0;
}


unsigned pw__work_run(struct pw__worker *wk)
{
	/* acquire: pairs with the pushers' release */
	struct pw_work *list = __atomic_exchange_n(&wk->work_head, NULL, __ATOMIC_ACQUIRE);
	struct pw_work *fifo = NULL;
	unsigned n = 0;
	while (list) { /* the stack is newest first: reverse it */
		struct pw_work *next = list->pw_next;
		list->pw_next = fifo;
		fifo = list;
		list = next;
	}
	while (fifo) {
		struct pw_work *w = fifo;
		fifo = w->pw_next;
		w->pw_next = NULL;
		/* release: it may be queued again, even from its own function */
		__atomic_store_n(&w->pw_queued, 0, __ATOMIC_RELEASE);
		w->func(w);
		n++;
	}
	return n;
}
