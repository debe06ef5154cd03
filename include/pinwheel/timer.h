/* SPDX-License-Identifier: MIT */
/*
 * Wheel timers: the kernel's timer_list, per CPU, at jiffy resolution.
 *
 * struct pw_timer is embedded by the caller, so arming never allocates.
 * The two public fields keep the kernel's names (expires, function); the
 * rest is private.  Semantics, return values included, follow
 * kernel/time/timer.c; departures are listed in src/time/timer.c.
 * Lifecycle and locking: docs/design/concurrency.md.
 */
#ifndef PINWHEEL_TIMER_H
#define PINWHEEL_TIMER_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/runtime.h> /* PW__CPU_MASK */

#ifdef __cplusplus
extern "C" {
#endif

struct pw_runtime;

/* Setup flags (pw_timer_setup()). */
#define PW_TIMER_PINNED     (1u << 25) /* never moved by a migration policy */
#define PW_TIMER_DEFERRABLE (1u << 26) /* never wakes an idle CPU */

/* 40 bytes on a 64-bit machine, the size of the kernel's timer_list.  (Up to
 * 0.2, 48: the runtime was a pointer of its own; it is now a number in the
 * flags word, and the bucket a field of its own.  An ABI change.) */
struct pw_timer {
	/* public: the kernel's fields */
	uint64_t expires;                    /* expiry, in jiffies */
	void (*function)(struct pw_timer *); /* callback */
	/* private: pinwheel's, do not touch */
	struct pw_timer *pw_next;            /* bucket list */
	struct pw_timer **pw_pprev;
	uint32_t pw_flags;                   /* runtime, CPU, base, state: see below */
	uint16_t pw_idx;                     /* its bucket in the base's wheel */
	uint16_t pw_spare;
};

/* private: the layout of pw_flags (src/time/timer.c explains it) */
#define PW__TF_CPU_MASK   PW__CPU_MASK /* 0x00000fffu: bits 0..11 */
#define PW__TF_RT_SHIFT   12          /* the runtime's number (1..1023) */
#define PW__TF_RT_MASK    0x003ff000u
#define PW__TF_PENDING    (1u << 22)
#define PW__TF_MIGRATING  (1u << 23)
#define PW__TF_SHUTDOWN   (1u << 24)
#define PW__TF_USER_MASK  (PW_TIMER_PINNED | PW_TIMER_DEFERRABLE)
#define PW__TF_MAGIC_MASK 0xf8000000u
#define PW__TF_MAGIC      0xb0000000u /* "set up" */

/* The struct holding member @member that @ptr points to. */
#define pw_container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

/**
 * pw_timer_setup() - prepare @t for use on @rt (the kernel's timer_setup).
 * @flags: 0 or PW_TIMER_PINNED | PW_TIMER_DEFERRABLE.
 * The timer starts on the calling thread's CPU (CPU 0 if it is no CPU).
 * Setting up again a timer that was shut down makes it usable again.
 * Context: any thread, while @t is not pending and its callback is not
 * running (kernel rule).  Takes no lock.
 * Return: 0; -EINVAL for NULL @rt/@t/@fn or unknown @flags.
 */
int pw_timer_setup(struct pw_runtime *rt, struct pw_timer *t,
		   void (*fn)(struct pw_timer *), unsigned flags);

/* private: pw_mod_timer()'s out-of-line half, the fast lane (and, behind
 * it, the general path); @t is not NULL.  Context: as pw_mod_timer().
 * (0.1.0 called it pw__mod_timer_slow; SOVERSION 1 dropped that name with
 * the 48-byte timer.) */
int pw__mod_timer_lane(struct pw_timer *t, uint64_t expires);

/* private: the calling thread's count of fast-path-1 hits: its CPU's
 * statistics counter while it acts as a CPU, else NULL.  Written by this
 * thread only (relaxed load and store), read by pw_stats_read().  The
 * compiler's default TLS model: an executable reads it at a fixed offset
 * from the thread pointer, code in a shared object through the dynamic
 * loader, so a library built on pinwheel may be dlopen()ed. */
extern __thread uint64_t *pw__fast_hits;

/**
 * pw_mod_timer() - (re)arm @t to expire at jiffy @expires.
 *
 * Fast path 1 (inline, no lock, no atomic read-modify-write): @t is pending
 * and already expires at @expires: return 1.  Fast path 2 (under the base
 * lock): the new expiry maps to the same wheel bucket: only @t->expires
 * changes.  Otherwise @t is taken out and enqueued on the calling thread's
 * CPU (on its current CPU when the caller is no CPU), except while its
 * callback runs: then it stays on the CPU running it.
 * Context: any thread, callbacks included (@t's own too).  Takes @t's base
 * lock (and the target base lock when it moves).
 * Return: 0 if @t was inactive, 1 if it was pending; -EINVAL (NULL, not set
 * up); -ESHUTDOWN after pw_timer_shutdown*() (the kernel silently ignores).
 */
static inline int pw_mod_timer(struct pw_timer *t, uint64_t expires)
{
	if (!t)
		return -EINVAL;
	/* Relaxed loads: a racing change makes this a harmless miss or hit on
	 * a value that was true an instant ago, as in the kernel. */
	if ((__atomic_load_n(&t->pw_flags, __ATOMIC_RELAXED) & PW__TF_PENDING) &&
	    __atomic_load_n(&t->expires, __ATOMIC_RELAXED) == expires) {
		/* pw_cpu_stats.fast_path (docs/benchmarks.md: what it costs) */
		uint64_t *hits = pw__fast_hits;
		if (hits)
			__atomic_store_n(hits, __atomic_load_n(hits, __ATOMIC_RELAXED) + 1,
					 __ATOMIC_RELAXED);
		return 1;
	}
	return pw__mod_timer_lane(t, expires);
}

/**
 * pw_mod_timers() - re-arm a burst: pw_mod_timer(@timers[i], @expires[i])
 * for i = 0 .. @n - 1, in that order.
 *
 * For the receive loop of a userspace stack, which handles packets in
 * bursts (NAPI's budget, DPDK's rx_burst of 32) and re-arms a timer for
 * each.  The result is exactly that of the @n calls in order, return
 * values, statistics and where each timer ends included: a timer named
 * twice is re-armed twice (the second call sees the first), a NULL entry
 * gives -EINVAL for that entry and the burst goes on, a shut-down timer
 * gives -ESHUTDOWN for its entry.  Each entry takes the same path as
 * pw_mod_timer() (fast path 1, the fast lane, the general path); what the
 * burst adds: while it re-arms @timers[i] it starts the cache misses of
 * @timers[i + 12] (the timer) and of @timers[i + 4]'s list neighbours
 * (the words unlinking it writes), and it keeps the base lock from one
 * entry to the next while they are on the same base, so that on a big
 * wheel the misses of a burst overlap instead of coming one after
 * another.  Every non-NULL entry must stay a valid timer for the whole
 * call (the burst reads an entry's links a few entries before re-arming
 * it).
 *
 * @ret: NULL, or an array of @n ints: @ret[i] = what pw_mod_timer()
 * returned for entry i (0, 1, -EINVAL, -ESHUTDOWN).  Per entry because
 * that is what the @n calls give (network code takes a reference when
 * mod_timer() returns 0); optional because the burst's usual case, every
 * timer a pending socket timer, needs only the count below.
 * Context: as pw_mod_timer(): any thread, callbacks included.  Takes each
 * entry's base lock as pw_mod_timer() does (and the target's when a timer
 * moves), keeping it for the next entries on the same base, 32 at most
 * (let go as soon as another thread waits for it, and then not kept
 * again in this burst); never two at once, none on return.
 * Return: how many entries returned 1 (were pending), so @n when all
 * were; -EINVAL, nothing done, if @n > 0 and @timers or @expires is NULL,
 * or @n > INT_MAX.
 */
int pw_mod_timers(struct pw_timer *const timers[], const uint64_t expires[], unsigned n,
		  int ret[]);

/**
 * pw_mod_timer_pending() - like pw_mod_timer(), but only if @t is pending.
 * Context: as pw_mod_timer().
 * Return: 0 (inactive: nothing done), 1 (pending: modified); -EINVAL;
 * -ESHUTDOWN.
 */
int pw_mod_timer_pending(struct pw_timer *t, uint64_t expires);

/**
 * pw_timer_reduce() - arm @t, or move its expiry earlier, never later.
 * A pending @t that expires at or before @expires is left alone.
 * Context: as pw_mod_timer().
 * Return: 0 (was inactive, now armed), 1 (was pending); -EINVAL; -ESHUTDOWN.
 */
int pw_timer_reduce(struct pw_timer *t, uint64_t expires);

/**
 * pw_add_timer() - arm an inactive @t at @t->expires, on the calling CPU.
 * Context: as pw_mod_timer().
 * Return: 0; -EBUSY if @t is pending (the kernel WARNs); -EINVAL; -ESHUTDOWN.
 */
int pw_add_timer(struct pw_timer *t);

/**
 * pw_add_timer_on() - arm an inactive @t at @t->expires on @cpu, and pin it.
 * Sets PW_TIMER_PINNED for good, as Linux 6.9+ does.
 * Context: as pw_mod_timer().
 * Return: 0; -EBUSY if @t is pending; -EAGAIN if @t's callback is running
 * on another CPU right now (moving it then would let a sync delete miss the
 * running callback; the kernel moves it anyway): retry once it returned.
 * Running is known by address, so a new timer placed in the memory of one
 * whose callback freed it and has not yet returned can see -EAGAIN too.
 * -EINVAL (NULL, not set up, @cpu out of range); -ENODEV (@cpu offline);
 * -ESHUTDOWN.
 */
int pw_add_timer_on(struct pw_timer *t, unsigned cpu);

/**
 * pw_timer_delete() - deactivate @t (the kernel's timer_delete/del_timer).
 * Does not wait for a running callback.
 * Context: any thread, callbacks included.  Takes @t's base lock.
 * Return: 0 (was inactive), 1 (was pending); -EINVAL (NULL, not set up).
 */
int pw_timer_delete(struct pw_timer *t);

/**
 * pw_timer_delete_sync() - deactivate @t and wait for its running callback.
 *
 * On return @t is not pending and its callback is not running anywhere
 * (unless another thread re-armed it meanwhile).  The callback may have
 * freed @t only if the caller knows it did not.
 * Context: any thread, but never from @t's own callback (refused) and never
 * while holding a lock @t's callback takes (deadlock, as in the kernel).
 * Return: 0 (was inactive), 1 (was pending); -EDEADLK from @t's own
 * callback (nothing done); -EINVAL.
 */
int pw_timer_delete_sync(struct pw_timer *t);

/**
 * pw_timer_shutdown() - deactivate @t and refuse every later arm.
 * Does not wait for a running callback.  Arms then return -ESHUTDOWN until
 * pw_timer_setup() again.
 * Context: as pw_timer_delete().  Return: as pw_timer_delete().
 */
int pw_timer_shutdown(struct pw_timer *t);

/**
 * pw_timer_shutdown_sync() - pw_timer_shutdown() and wait like
 * pw_timer_delete_sync().  The teardown call.
 * Context: as pw_timer_delete_sync().
 * Return: 0, 1, -EDEADLK (from its own callback: nothing done), -EINVAL.
 */
int pw_timer_shutdown_sync(struct pw_timer *t);

/**
 * pw_timer_pending() - is @t queued?  Lockless, like the kernel's: the
 * answer may be stale by the time the caller looks at it.
 * Context: any thread.  Return: 1 pending, 0 not (or NULL).
 */
static inline int pw_timer_pending(const struct pw_timer *t)
{
	return t && (__atomic_load_n(&t->pw_flags, __ATOMIC_RELAXED) & PW__TF_PENDING) != 0;
}

/**
 * pw_timer_cpu() - the CPU whose base holds (or last held) @t.
 * Context: any thread; lockless, may be stale.
 * Return: the CPU; -EINVAL (NULL or not set up).
 */
int pw_timer_cpu(const struct pw_timer *t);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_TIMER_H */
