/* SPDX-License-Identifier: MIT */
/* Waiting for a running callback: see runwait.h. */
#include "runwait.h"

#include <stddef.h>

/* Rounds of polling before sleeping, and pauses per round. */
#define PW_RUNWAIT_SPIN_ROUNDS 4
#define PW_RUNWAIT_SPIN_RELAX  256

void pw__runwait_end(struct pw__runwait *rw)
{
	__atomic_store_n(&rw->running, NULL, __ATOMIC_RELEASE);
	if (rw->waiters) {
		rw->waiters = 0;
		__atomic_store_n(&rw->seq, rw->seq + 1, __ATOMIC_RELEASE);
		pw__futex_wake_all(&rw->seq);
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
	rw->waiters = 1;
	uint32_t seq = __atomic_load_n(&rw->seq, __ATOMIC_RELAXED);
	pw__unlock(lock);
	pw__futex_wait(&rw->seq, seq);
}
