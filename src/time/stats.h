/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU statistics: the counters the thread acting as a CPU keeps (the
 * worker, a bring-your-own-loop thread, or a callback run as that CPU), and
 * the one way to bump and read them.  Public view: struct pw_cpu_stats,
 * filled by pw_stats_read() (stats.c).
 *
 * One writer per counter set: only the thread acting as the CPU writes it
 * (pw__stats_mine()), so a bump is a relaxed load and store, no atomic
 * read-modify-write; readers (pw_stats_read(), any thread) load locklessly
 * and may see a value a moment old.  Counters that several threads bump
 * (kicks received, lock waits) live next to what they count, with atomic
 * adds.  The set lives in struct pw__cpu whether or not workers run.
 */
#ifndef PW_TIME_STATS_H
#define PW_TIME_STATS_H

#include <stdint.h>

#include "cacheline.h"

struct pw__stats {
	uint64_t armed;          /* wheel arms past fast path 1 (slow path) */
	uint64_t fast_hits;      /* mod_timer fast path 1 (pw__fast_hits points here) */
	uint64_t same_bucket;    /* fast path 2 */
	uint64_t remote_arms;    /* arms that left the timer on another CPU */
	uint64_t kicks_sent, pushed, pulled;
	uint64_t wakeups, timers_expired, work_done, polls_busy, idle_ns, busy_ns;
} __attribute__((aligned(PW_CACHELINE)));

/* A 64-bit counter or time written by another thread: relaxed load. */
static inline uint64_t pw__ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* Add @v to a counter only the calling thread writes: a load and a store,
 * no atomic read-modify-write; readers are lockless.  On x86-64 one `add`
 * to memory (no lock prefix), which is that load and that store in one
 * instruction: the re-arm lane counts every arm, and on a big wheel what a
 * re-arm costs follows its instruction count (docs/benchmarks.md, "A
 * re-arm at a million timers").  An aligned 8-byte store is atomic there,
 * so a reader sees the old or the new value, as with the relaxed pair,
 * which every other build (ThreadSanitizer's included, which must see the
 * accesses) uses. */
static inline void pw__count_add(uint64_t *c, uint64_t v)
{
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
	__asm__("addq %1, %0" : "+m"(*c) : "er"(v));
#else
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
#endif
}

#endif /* PW_TIME_STATS_H */
