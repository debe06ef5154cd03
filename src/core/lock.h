/* SPDX-License-Identifier: MIT */
/*
 * The per-base lock: a three-state futex mutex (0 free, 1 held, 2 held with
 * sleepers).  Uncontended, lock is one compare-and-swap (acquire) and unlock
 * one exchange (release): the kernel's raw spinlock costs the same two
 * atomics.  Contended, it spins briefly (the holders' critical sections are
 * a few dozen instructions), then sleeps in the kernel instead of burning
 * the CPU the holder may need, which a plain spinlock would do when threads
 * outnumber cores (userspace threads get preempted; kernel spinlock holders
 * do not).
 *
 * Never held across a callback.  Not recursive.
 */
#ifndef PW_CORE_LOCK_H
#define PW_CORE_LOCK_H

#include <stdbool.h>
#include <stdint.h>

struct pw__lock {
	uint32_t state; /* 0 free, 1 held, 2 held and someone may sleep on it */
};

void pw__lock_slow(struct pw__lock *l);
void pw__lock_wake(struct pw__lock *l);

static inline void pw__lock_init(struct pw__lock *l)
{
	l->state = 0;
}

/* Context: any thread; the caller must not hold @l. */
static inline void pw__lock(struct pw__lock *l)
{
	uint32_t expect = 0;
	/* acquire: the critical section's reads see the last holder's writes */
	if (__atomic_compare_exchange_n(&l->state, &expect, 1, false,
					__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	pw__lock_slow(l);
}

/* Context: the holder of @l. */
static inline void pw__unlock(struct pw__lock *l)
{
	/* release: publishes the critical section's writes to the next holder */
	if (__atomic_exchange_n(&l->state, 0, __ATOMIC_RELEASE) == 2)
		pw__lock_wake(l);
}

/* Wait on a 32-bit word while it holds @val (futex); spurious returns allowed. */
void pw__futex_wait(uint32_t *addr, uint32_t val);
/* Wake every thread waiting on @addr. */
void pw__futex_wake_all(uint32_t *addr);

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

#endif /* PW_CORE_LOCK_H */
