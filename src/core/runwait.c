/* SPDX-License-Identifier: MIT */
/* Waiting for a running callback: see runwait.h for the handshake. */
#include "runwait.h"

#include <stddef.h>

/* Rounds of polling before sleeping, and pauses per round. */
#define PW_RUNWAIT_SPIN_ROUNDS 4
#define PW_RUNWAIT_SPIN_RELAX  256

void pw__runwait_end(struct pw__runwait *rw)
{
	(void)__atomic_exchange_n(&rw->running, NULL, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rw->waiters, __ATOMIC_SEQ_CST)) {
		__atomic_fetch_add(&rw->seq, 1, __ATOMIC_SEQ_CST);
		pw__futex_wake_all(&rw->seq);
	}
}

void pw__runwait_wait(struct pw__runwait *rw, struct pw__lock *lock, const void *obj,
		      unsigned round)
{
	pw__unlock(lock);
	if (round < PW_RUNWAIT_SPIN_ROUNDS) {
		for (unsigned i = 0; i < PW_RUNWAIT_SPIN_RELAX && pw__runwait_running(rw) == obj; i++)
			pw__cpu_relax();
		return;
	}
	__atomic_fetch_add(&rw->waiters, 1, __ATOMIC_SEQ_CST);
	uint32_t seq = __atomic_load_n(&rw->seq, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&rw->running, __ATOMIC_SEQ_CST) == obj)
		pw__futex_wait(&rw->seq, seq);
	__atomic_fetch_sub(&rw->waiters, 1, __ATOMIC_SEQ_CST);
}
