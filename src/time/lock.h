/* SPDX-License-Identifier: MIT */
/*
 * The per-base lock.  Uncontended: lock is one compare-and-swap (acquire),
 * unlock a plain store (release) and a plain load.  Contended: spin briefly
 * (critical sections are short: one queue operation, never a callback),
 * then sleep in the kernel (futex) instead of burning the CPU the holder
 * may need, which a plain spinlock would do when threads outnumber cores
 * (userspace threads get preempted; kernel spinlock holders do not).
 *
 * Why the unlock is not an atomic exchange, as in the classic three-state
 * futex mutex this lock started as: on x86 an atomic read-modify-write waits
 * for every earlier store to reach the cache, and a re-arm of a big wheel
 * has just written to two or three cold cache lines (list neighbours).  An
 * exchange in unlock made each re-arm wait for those misses one after the
 * other, so what a re-arm cost grew with how many of its lines were cold,
 * that is with the size of the wheel; a plain store lets them overlap with
 * the next operation (pinwheel-bench rearm; the figures are in
 * docs/benchmarks.md, "Figures that were in source comments").
 *
 * The cost of a plain store: unlock reads `waiters` without a store-load
 * fence, so it can miss a sleeper that registered at that very moment.  A
 * sleeper therefore sleeps at most 1 ms at a time before it looks again:
 * mutual exclusion is the compare-and-swap's, and a lost wake-up costs at
 * most a millisecond, on a lock that is per CPU and rarely contended.
 *
 * Never held across a callback.  Not recursive.
 */
#ifndef PW_TIME_LOCK_H
#define PW_TIME_LOCK_H

#include <stdbool.h>
#include <stdint.h>

struct pw__lock {
	uint32_t locked;  /* 0 free, 1 held (futex word) */
	uint32_t waiters; /* threads asleep, or about to sleep, on locked */
	uint64_t waits;   /* acquisitions that had to wait (slow path only) */
	uint64_t wait_ns; /* time they waited */
};

void pw__lock_slow(struct pw__lock *l);
void pw__lock_wake(struct pw__lock *l);

static inline void pw__lock_init(struct pw__lock *l)
{
	l->locked = 0;
	l->waiters = 0;
	l->waits = 0;
	l->wait_ns = 0;
}

/* Context: any thread; the caller must not hold @l. */
static inline void pw__lock(struct pw__lock *l)
{
	uint32_t expect = 0;
	/* acquire: the critical section's reads see the last holder's writes */
	if (__atomic_compare_exchange_n(&l->locked, &expect, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	pw__lock_slow(l);
}

/* Take @l if it is free.  Context: any thread; the caller must not hold
 * @l.  Return: true if taken (acquire). */
static inline bool pw__trylock(struct pw__lock *l)
{
	uint32_t expect = 0;
	return __atomic_compare_exchange_n(&l->locked, &expect, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

/* The first half of pw__unlock(), for a caller that wakes a sleeper itself
 * (pw__lock_wake()) from a colder place.  Context: the holder of @l.
 * Return: true if a waiter must be woken. */
static inline bool pw__unlock_nowake(struct pw__lock *l)
{
	__atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
	return __atomic_load_n(&l->waiters, __ATOMIC_RELAXED) != 0;
}

/* Context: the holder of @l. */
static inline void pw__unlock(struct pw__lock *l)
{
	/* release: publishes the critical section's writes to the next holder */
	if (pw__unlock_nowake(l))
		pw__lock_wake(l);
}

/* One pause of a spin loop. */
static inline void pw__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	__asm__ __volatile__("" ::: "memory");
#endif
}

#endif /* PW_TIME_LOCK_H */
