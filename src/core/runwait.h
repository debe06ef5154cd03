/* SPDX-License-Identifier: MIT */
/*
 * "Whose callback runs on this base now", and waiting for it to return:
 * the part of timer_delete_sync() and hrtimer_cancel() that both timer
 * kinds share.
 *
 * The runner marks the object before dropping the base lock for the
 * callback and clears the mark after retaking it.  A waiter holds the same
 * lock when it sees the mark: for a few rounds it drops the lock and polls
 * (callbacks are usually short); after that it raises `waiters` under the
 * lock, reads the futex word `seq`, drops the lock and sleeps.  The runner
 * checks `waiters` under the lock when it clears the mark, bumps `seq` and
 * wakes everyone: both sides act under one lock, so no wake-up is lost.
 * The mark lives in the base, not in the object, so a callback may free
 * its own timer.
 */
#ifndef PW_CORE_RUNWAIT_H
#define PW_CORE_RUNWAIT_H

#include "lock.h"

struct pw__runwait {
	const void *running; /* written under the base lock; polled lockless */
	uint32_t seq;        /* futex word, bumped when waiters are woken */
	uint32_t waiters;    /* under the base lock: someone sleeps on seq */
};

/* Context: any thread; lockless snapshot.  acquire: pairs with the release
 * in pw__runwait_end(), so a waiter that sees "done" sees the callback's
 * writes. */
static inline const void *pw__runwait_running(const struct pw__runwait *rw)
{
	return __atomic_load_n(&rw->running, __ATOMIC_ACQUIRE);
}

/* Context: the runner, holding the base lock. */
static inline void pw__runwait_begin(struct pw__runwait *rw, const void *obj)
{
	__atomic_store_n(&rw->running, obj, __ATOMIC_RELAXED);
}

/* Context: the runner, holding the base lock, after the callback. */
void pw__runwait_end(struct pw__runwait *rw);

/* @obj's callback runs (rw->running == @obj, seen under @lock, which the
 * caller holds).  Waits a while for it to end (round @round of the
 * caller's retry loop: polls first, sleeps later) and returns with @lock
 * released; the caller then retakes the lock and looks again. */
void pw__runwait_wait(struct pw__runwait *rw, struct pw__lock *lock, const void *obj,
		      unsigned round);

#endif /* PW_CORE_RUNWAIT_H */
