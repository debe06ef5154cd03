/* SPDX-License-Identifier: MIT */
/*
 * The MIGRATING protocol, shared by wheel timers (timer.c) and hrtimers
 * (hrtimer.c): how a thread finds and locks the base a timer is on, and how
 * a timer moves from one base to another, with one 32-bit flags word per
 * timer that names its CPU (and base) and a MIGRATING bit.
 *
 *  - Flags change only under the lock of the base they name.  So: read the
 *    flags, lock the base they name, read them again: equal means they are
 *    stable until unlock (pw__lock_flags_base()).
 *  - To move a timer, the holder of the old base's lock sets MIGRATING and
 *    drops that lock (pw__flags_leave()); nobody else can lock the timer
 *    while the bit is set (they spin), so the mover owns it with no lock
 *    held; it takes the new base's lock and publishes the new CPU with the
 *    bit cleared (pw__flags_land()).  No thread ever holds two base locks,
 *    so there is no lock order between bases to get wrong.
 *
 * The flags word is read locklessly (pending tests, the lock step), so
 * every access is a relaxed atomic: the base lock orders the rest.
 */
#ifndef PW_TIME_MIGRATING_H
#define PW_TIME_MIGRATING_H

#include <sched.h>
#include <stdint.h>

#include "lock.h"

struct pw_runtime;

/* Context: any thread (lockless readers need an untorn value). */
static inline uint32_t pw__flags_load(const uint32_t *f)
{
	return __atomic_load_n(f, __ATOMIC_RELAXED);
}

/* Context: the holder of the lock of the base the flags name (or the
 * object's owner, at setup). */
static inline void pw__flags_store(uint32_t *f, uint32_t v)
{
	__atomic_store_n(f, v, __ATOMIC_RELAXED);
}

/* The lock of the base that flags @f name. */
typedef struct pw__lock *(*pw__lock_of_fn)(struct pw_runtime *rt, uint32_t f);

/* The wait of one failed attempt (another thread moves the timer): a
 * pause, a yield after a while.  Out of line: it is the rare case. */
void pw__flags_busy_wait(unsigned spins);

/*
 * Lock the base holding the object whose flags are *@flags and return its
 * lock, with the flags as they are under it in *@fp, which holds a fresh
 * lockless read on entry (callers have just validated it).  Inline, with
 * @lock_of a constant, so the common case is one compare, one lock and one
 * reload.  Spins while MIGRATING (@migrating) is set.
 * Context: any thread holding no base lock.
 */
static inline __attribute__((always_inline)) struct pw__lock *
pw__lock_flags_base(struct pw_runtime *rt, const uint32_t *flags, uint32_t *fp,
		    uint32_t migrating, pw__lock_of_fn lock_of)
{
	uint32_t f = *fp;
	for (unsigned spins = 0;; spins++) {
		if (__builtin_expect(!(f & migrating), 1)) {
			struct pw__lock *l = lock_of(rt, f);
			pw__lock(l);
			if (__builtin_expect(pw__flags_load(flags) == f, 1)) {
				*fp = f;
				return l;
			}
			pw__unlock(l);
		}
		pw__flags_busy_wait(spins);
		f = pw__flags_load(flags);
	}
}

/* Start a move: set MIGRATING and drop @from.  Context: the holder of
 * @from, the lock of the base the flags name; returns holding no lock. */
static inline void pw__flags_leave(uint32_t *flags, uint32_t migrating, struct pw__lock *from)
{
	pw__flags_store(flags, pw__flags_load(flags) | migrating);
	pw__unlock(from);
}

/* End a move: the object is now on the base whose lock the caller holds:
 * the CPU field (@cpu_mask) becomes @bits' (which may carry more flags to
 * set), MIGRATING is cleared.  Context: the mover, holding the new lock. */
static inline void pw__flags_land(uint32_t *flags, uint32_t migrating, uint32_t cpu_mask,
				  uint32_t bits)
{
	pw__flags_store(flags, (pw__flags_load(flags) & ~(cpu_mask | migrating)) | bits);
}

/* A whole move from @from (held) to @to (held on return). */
static inline void pw__flags_move(uint32_t *flags, uint32_t migrating, struct pw__lock *from,
				  struct pw__lock *to, uint32_t cpu_mask, uint32_t bits)
{
	pw__flags_leave(flags, migrating, from);
	pw__lock(to);
	pw__flags_land(flags, migrating, cpu_mask, bits);
}

#endif /* PW_TIME_MIGRATING_H */
