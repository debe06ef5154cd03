/* SPDX-License-Identifier: MIT */
/*
 * Slow paths of the per-base lock (see lock.h: why the unlock is a plain
 * store, and what that costs), and the MIGRATING protocol's wait.
 * Context: any thread.
 */
#define _GNU_SOURCE
#include "lock.h"

#include <sched.h>

#include "osclock.h"
#include "futex.h"
#include "migrating.h"

/* How many times a contended locker polls before it sleeps. */
#define PW_LOCK_SPINS 200

static uint64_t mono_ns(void)
{
	return pw__clock_ns(CLOCK_MONOTONIC);
}

void pw__flags_busy_wait(unsigned spins)
{
	if (spins < 64)
		pw__cpu_relax();
	else
		sched_yield();
}

static void pw__lock_slow_wait(struct pw__lock *l);

/* Contended: count the wait and its length (statistics: lock waits). */
void pw__lock_slow(struct pw__lock *l)
{
	uint64_t t0 = mono_ns();
	pw__lock_slow_wait(l);
	/* under the lock now: plain read-modify-write of the counters is ours,
	 * but readers are lockless: atomic stores */
	__atomic_store_n(&l->waits, l->waits + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&l->wait_ns, l->wait_ns + (mono_ns() - t0), __ATOMIC_RELAXED);
}

static void pw__lock_slow_wait(struct pw__lock *l)
{
	for (int i = 0; i < PW_LOCK_SPINS; i++) {
		uint32_t expect = 0;
		if (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->locked, &expect, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		pw__cpu_relax();
	}
	__atomic_fetch_add(&l->waiters, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		uint32_t expect = 0;
		if (__atomic_compare_exchange_n(&l->locked, &expect, 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		/* at most 1 ms: an unlock may miss us (lock.h) */
		pw__futex_wait(&l->locked, 1, 1000000);
	}
	__atomic_fetch_sub(&l->waiters, 1, __ATOMIC_RELAXED);
}

void pw__lock_wake(struct pw__lock *l)
{
	pw__futex_wake(&l->locked, 1);
}
