/* SPDX-License-Identifier: MIT */
/*
 * The root qdisc lock (the kernel's qdisc root spinlock), with the
 * contention statistics seed 003 is about: acquisitions, how many had to
 * wait, and how long they waited.
 *
 * Test-and-test-and-set on one word; a contended acquisition reads the
 * clock twice (CLOCK_MONOTONIC, whatever the runtime's clock is: the wait
 * is real time) and spins with a pause, yielding after a while so that two
 * threads on one core do not spin against each other for a time slice.
 * The statistics are written by the holder only, with relaxed atomic
 * stores, so readers (pw_netdev_txq_stats) may read them at any time.
 * Each acquisition also forgets the holder's cached clock reading
 * (pw__net_now(), qdisc.c).
 * Context: any thread.  Locks: this one; never held across a callback.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <sched.h>
#include <time.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void pw__qlock_init(struct pw__qlock *l)
{
	l->word = 0;
	l->acquisitions = l->contended = l->wait_ns = 0;
	l->now = 0;
}

static inline void count(struct pw__qlock *l, uint64_t waited, bool contended)
{
	__atomic_store_n(&l->acquisitions, l->acquisitions + 1, __ATOMIC_RELAXED);
	if (contended) {
		__atomic_store_n(&l->contended, l->contended + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&l->wait_ns, l->wait_ns + waited, __ATOMIC_RELAXED);
	}
}

bool pw__qtrylock(struct pw__qlock *l)
{
	if (__atomic_load_n(&l->word, __ATOMIC_RELAXED) ||
	    __atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
		return false;
	count(l, 0, false);
	l->now = 0;
	return true;
}

void pw__qlock(struct pw__qlock *l)
{
	if (!__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE)) {
		count(l, 0, false);
		l->now = 0;
		return;
	}
	uint64_t t0 = mono_ns();
	unsigned spins = 0;
	for (;;) {
		while (__atomic_load_n(&l->word, __ATOMIC_RELAXED)) {
			if (++spins < 256)
				cpu_relax();
			else
				sched_yield();
		}
		if (!__atomic_exchange_n(&l->word, 1, __ATOMIC_ACQUIRE))
			break;
	}
	count(l, mono_ns() - t0, true);
	l->now = 0;
}

void pw__qunlock(struct pw__qlock *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
}
