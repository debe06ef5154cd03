/* SPDX-License-Identifier: MIT */
/*
 * Slow paths of the per-base lock (see lock.h) and the futex helpers.
 *
 * The protocol is the classic three-state futex mutex: a waiter marks the
 * word 2 before sleeping, so the unlocker, which swaps in 0, knows whether
 * it must make the wake system call.  A waiter that wins the word back
 * always leaves it at 2, which may cost one needless wake later, never a
 * lost one.
 */
#define _GNU_SOURCE
#include "lock.h"

#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

/* How many times a contended locker polls before it sleeps. */
#define PW_LOCK_SPINS 200

void pw__futex_wait(uint32_t *addr, uint32_t val)
{
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

void pw__futex_wake_all(uint32_t *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

void pw__lock_slow(struct pw__lock *l)
{
	for (int i = 0; i < PW_LOCK_SPINS; i++) {
		uint32_t expect = 0;
		if (__atomic_load_n(&l->state, __ATOMIC_RELAXED) == 0 &&
		    __atomic_compare_exchange_n(&l->state, &expect, 1, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		pw__cpu_relax();
	}
	/* acquire on success, as in pw__lock() */
	while (__atomic_exchange_n(&l->state, 2, __ATOMIC_ACQUIRE) != 0)
		pw__futex_wait(&l->state, 2);
}

void pw__lock_wake(struct pw__lock *l)
{
	syscall(SYS_futex, &l->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}
