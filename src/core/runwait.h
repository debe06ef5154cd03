/* SPDX-License-Identifier: MIT */
/*
 * "Whose callback runs now", and waiting for it to return: the part of
 * timer_delete_sync() and hrtimer_cancel() that both timer kinds share.
 *
 * One mark per runner: the wheel bases of a CPU share one (one thread at
 * a time runs a CPU's timers: the run guard), and each hrtimer base has
 * one.  The runner sets the mark while it holds the lock of the base the
 * object is on, before dropping that lock for the callback, and clears it
 * afterwards.  A waiter sees the mark while holding the lock of the base
 * the object is on *now*, which may be another base of the same CPU than
 * the one being run (add_timer_on() moves a running timer from the global
 * base to the pinned one): so waking waiters cannot rely on a shared lock.
 *
 * The wake-up handshake is Dekker's, on sequentially consistent
 * read-modify-writes and loads (no fences: GCC's TSan rejects them):
 *   waiter: waiters += 1; s = seq; if (running == obj) futex_wait(seq, s);
 *           waiters -= 1
 *   runner: exchange(running, NULL); if (waiters) { seq += 1; wake all }
 * If the waiter reads running == obj, its read comes before the runner's
 * exchange in the single total order, so its increment of `waiters` does
 * too and the runner sees it; and the waiter read `seq` before the runner
 * bumped it, so its futex_wait returns at once or is woken.  The mark is
 * in the runner's structure, not in the object, so a callback may free its
 * own timer.
 */
#ifndef PW_CORE_RUNWAIT_H
#define PW_CORE_RUNWAIT_H

#include "lock.h"

struct pw__runwait {
	const void *running; /* set under the object's base lock; read lockless */
	uint32_t seq;        /* futex word, bumped when waiters are woken */
	uint32_t waiters;    /* threads between "about to sleep" and "woke" */
};

/* Context: any thread; lockless snapshot.  acquire: pairs with the
 * exchange in pw__runwait_end(), so a waiter that sees "done" sees the
 * callback's writes. */
static inline const void *pw__runwait_running(const struct pw__runwait *rw)
{
	return __atomic_load_n(&rw->running, __ATOMIC_ACQUIRE);
}

/* Context: the runner, holding the lock of the base @obj is on. */
static inline void pw__runwait_begin(struct pw__runwait *rw, const void *obj)
{
	__atomic_store_n(&rw->running, obj, __ATOMIC_RELAXED);
}

/* Context: the runner, after the callback (any lock or none). */
void pw__runwait_end(struct pw__runwait *rw);

/* @obj's callback runs (rw->running == @obj, seen under @lock, which the
 * caller holds).  Waits a while for it to end (round @round of the
 * caller's retry loop: polls first, sleeps later) and returns with @lock
 * released; the caller then retakes the lock and looks again. */
void pw__runwait_wait(struct pw__runwait *rw, struct pw__lock *lock, const void *obj,
		      unsigned round);

#endif /* PW_CORE_RUNWAIT_H */
