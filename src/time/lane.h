/* SPDX-License-Identifier: MIT */
/*
 * The arm paths' shared steps: what the fast lanes of timer.c and the
 * burst of burst.c (pw_mod_timers()) both do, and the general path they
 * both fall back on.  timer.c explains the lanes ("mod_timer, fast
 * first"), burst.c the bursts.  All of it runs on the arming thread; each
 * function says which lock it needs.
 */
#ifndef PW_TIME_LANE_H
#define PW_TIME_LANE_H

#include "internal.h"

/* A timer's expiry.  Relaxed: read locklessly by mod_timer fast path 1,
 * written under the base lock. */
static inline uint64_t exp_load(const struct pw_timer *t)
{
	return __atomic_load_n(&t->expires, __ATOMIC_RELAXED);
}

static inline void exp_store(struct pw_timer *t, uint64_t e)
{
	__atomic_store_n(&t->expires, e, __ATOMIC_RELAXED);
}

/*
 * Start the cache misses a re-arm of a big wheel is made of (the list
 * neighbours detach writes to) before they are needed, so they overlap with
 * each other and with the index computation instead of stalling one after
 * the other.  Context: the holder of @t's base lock (the links are stable).
 */
static inline void prefetch_link_targets(const struct pw_timer *next, struct pw_timer **pprev)
{
	/* The words unlinking writes (wheel.h) */
	pw__wheel_prefetch_unlink(next, pprev);
}

static inline void prefetch_neighbours(const struct pw_timer *t)
{
	prefetch_link_targets(t->pw_next, t->pw_pprev);
}

/* Is bucket @idx on a list the current run of @b collected?  Context: the
 * holder of @b's lock. */
static inline __attribute__((always_inline)) bool idx_expiring(const struct pw__base *b,
								 unsigned idx)
{
	for (unsigned i = 0; i < b->n_expiring; i++)
		if (b->expiring_idx[i] == idx && b->expiring[i])
			return true;
	return false;
}

/* The first steps of an arm on the lane and in a burst, @b locked and its
 * clock current: the bucket of @expires (its expiry in *@bucket_expiry),
 * the prefetch of that bucket's first timer (the requeue writes it), the
 * statistics, the new expiry.  Return: the bucket.  Context: the holder of
 * @b's lock, on the lane. */
static inline __attribute__((always_inline)) unsigned lane_place(struct pw_timer *t,
								  uint64_t expires,
								  struct pw__base *b,
								  uint64_t *bucket_expiry)
{
	struct pw__wheel *w = &b->wheel;
	unsigned idx = pw__wheel_calc_index(w, expires, bucket_expiry);
	__builtin_prefetch(w->vectors[idx], 1);
	pw__count_add(&b->stats->armed, 1);
	exp_store(t, expires);
	return idx;
}

/* Fast path 2's test: the pending @t stays in bucket @idx, which is not on
 * a list the current run of @b collected.  Context: the holder of @b's
 * lock. */
static inline __attribute__((always_inline)) bool lane_same_bucket(const struct pw__base *b,
								    const struct pw_timer *t,
								    unsigned idx)
{
	return idx == t->pw_idx && !(b->n_expiring && idx_expiring(b, idx));
}

/* Every arm the fast lanes do not take: the whole of mod_timer but fast
 * path 1, which pw_mod_timer() tried inline (timer.c).  Context: as
 * pw_mod_timer(); takes the locks mod_timer takes.  Return: as
 * pw_mod_timer(). */
int pw__mod_timer_general(struct pw_timer *t, uint64_t expires);

#endif /* PW_TIME_LANE_H */
