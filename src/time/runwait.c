/* SPDX-License-Identifier: MIT */
/* Waiting for a running callback: see runwait.h for the protocol. */
#include "runwait.h"

#include "futex.h"

#include <stddef.h>

/* Rounds of polling before sleeping, and pauses per round. */
#define PW_RUNWAIT_SPIN_ROUNDS 4
#define PW_RUNWAIT_SPIN_RELAX  256

void pw__runwait_end(struct pw__runwait *rw)
{
	__atomic_store_n(&rw->running, NULL, __ATOMIC_RELEASE);
	if (__atomic_load_n(&rw->waiters, __ATOMIC_RELAXED)) {
		__atomic_store_n(&rw->waiters, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&rw->seq, __atomic_load_n(&rw->seq, __ATOMIC_RELAXED) + 1,
				 __ATOMIC_RELEASE);
		pw__futex_wake(&rw->seq, UINT32_MAX);
	}
}

void pw__runwait_wait(struct pw__runwait *rw, struct pw__lock *lock, const void *obj,
		      unsigned round)
{
	if (round < PW_RUNWAIT_SPIN_ROUNDS) {
		pw__unlock(lock);
		for (unsigned i = 0; i < PW_RUNWAIT_SPIN_RELAX && pw__runwait_running(rw) == obj; i++)
			pw__cpu_relax();
		return;
	}
	/* the runner's lock, seen with the mark (acquire: begin's release) */
	struct pw__lock *rl = __atomic_load_n(&rw->lock, __ATOMIC_RELAXED);
	if (rl != lock) {
		pw__unlock(lock);
		pw__lock(rl);
	}
	/* under rl: if the mark names @obj and rl, the runner is inside that
	 * callback and will clear the mark under rl; otherwise it moved on
	 * (or began @obj again under another lock): look again */
	if (__atomic_load_n(&rw->running, __ATOMIC_RELAXED) != obj ||
	    __atomic_load_n(&rw->lock, __ATOMIC_RELAXED) != rl) {
		pw__unlock(rl);
		return;
	}
	__atomic_store_n(&rw->waiters, 1, __ATOMIC_RELAXED);
	uint32_t seq = __atomic_load_n(&rw->seq, __ATOMIC_RELAXED);
	pw__unlock(rl);
	pw__futex_wait(&rw->seq, seq, PW_FUTEX_FOREVER);
}
