/* SPDX-License-Identifier: MIT */
/*
 * "Whose callback runs now", and waiting for it to return: the part of
 * timer_delete_sync() and hrtimer_cancel() that both timer kinds share.
 *
 * One mark per runner: the wheel bases of a CPU share one (one thread at
 * a time runs a CPU's timers: the run guard), and each hrtimer base has
 * one.  The runner sets the mark, and records the lock of the base it runs,
 * while holding that lock, before dropping it for the callback; it clears
 * the mark after retaking the same lock.  A waiter sees the mark while
 * holding the lock of the base the object is on *now*, which may be
 * another base of the same CPU than the one being run (add_timer_on()
 * pins a running timer: global base to pinned base).
 *
 * Waiting: for a few rounds the waiter drops its lock and polls (callbacks
 * are usually short).  Then it goes to the runner's lock (the one recorded
 * with the mark: it drops its own first, never holding two), and, if under
 * that lock the mark still names the object *and* that lock, raises
 * `waiters`, reads the futex word `seq`, drops the lock and sleeps.  The
 * runner clears the mark under the same lock and, seeing `waiters`, bumps
 * `seq` and wakes everyone: both act under one lock, so no wake-up is
 * lost, and the runner's path is plain stores (no read-modify-write: it
 * runs once per callback).  The mark is in the runner's structure, not in
 * the object, so a callback may free its own timer.
 */
#ifndef PW_TIME_RUNWAIT_H
#define PW_TIME_RUNWAIT_H

#include "lock.h"

struct pw__runwait {
	const void *running;   /* set and cleared under *lock; read lockless */
	struct pw__lock *lock; /* the lock the runner holds around begin/end */
	uint32_t seq;          /* futex word, bumped when waiters are woken */
	uint32_t waiters;      /* under *lock: someone sleeps on seq */
};

/* Context: any thread; lockless snapshot.  acquire: pairs with the release
 * stores of begin and end, so a waiter that sees the mark sees its lock,
 * and one that sees "done" sees the callback's writes. */
static inline const void *pw__runwait_running(const struct pw__runwait *rw)
{
	return __atomic_load_n(&rw->running, __ATOMIC_ACQUIRE);
}

/* Context: the runner, holding @lock, the lock of the base @obj is on. */
static inline void pw__runwait_begin(struct pw__runwait *rw, const void *obj,
				     struct pw__lock *lock)
{
	__atomic_store_n(&rw->lock, lock, __ATOMIC_RELAXED);
	__atomic_store_n(&rw->running, obj, __ATOMIC_RELEASE);
}

/* Context: the runner, after the callback, holding the lock it held at
 * pw__runwait_begin() again. */
void pw__runwait_end(struct pw__runwait *rw);

/* @obj's callback runs (rw->running == @obj, seen under @lock, which the
 * caller holds).  Waits a while for it to end (round @round of the
 * caller's retry loop: polls first, sleeps later) and returns with @lock
 * released; the caller then retakes the lock and looks again. */
void pw__runwait_wait(struct pw__runwait *rw, struct pw__lock *lock, const void *obj,
		      unsigned round);

#endif /* PW_TIME_RUNWAIT_H */
