/* SPDX-License-Identifier: MIT */
/*
 * Re-arms in bursts: pw_mod_timers() (<pinwheel/timer.h>), the receive
 * loop's re-arms of a burst of packets, with exactly the results of one
 * pw_mod_timer() call per entry in order.  The design is below; the steps
 * it shares with the fast lane are in lane.h, the lane itself in timer.c.
 * Threads: any thread, as pw_mod_timer().  Locks: each entry's base lock,
 * kept from one entry to the next on the same base (32 entries at most,
 * let go as soon as another thread waits), never two at once; the general
 * path's locks after letting go.
 */
#include "lane.h"
#include "placement.h"

#include <errno.h>
#include <limits.h>

/*
 * Re-arms in bursts: pw_mod_timers() (timer.h).
 *
 * A random re-arm on a big wheel waits for memory: its timer's cache miss,
 * then its list neighbours' (the words unlinking writes).  One call at a
 * time, the next re-arm's miss is issued only once the out-of-order window
 * reaches it, so a re-arm of N instructions overlaps its misses with those
 * of a window's worth of re-arms at most (docs/benchmarks.md, "A re-arm at
 * a million timers", measures it).  A burst knows every address at once.  So the burst is the lane's loop with two changes,
 * neither of which decides anything:
 *  - prefetching ahead: while entry i is re-armed, the timer of entry
 *    i + BURST_PF_TIMER (both its lines when it straddles two) and the
 *    list neighbours of entry i + BURST_PF_LINKS, whose line was asked for
 *    BURST_PF_TIMER - BURST_PF_LINKS entries earlier, read from its links
 *    without the lock as the lane reads them (relaxed, wheel.h); hints
 *    only: a stale address costs a wasted prefetch, never a result;
 *  - the base lock kept from one entry to the next while they are on the
 *    same base (a burst of a CPU's socket timers: all of them), so that no
 *    locked instruction stands between two re-arms and their misses
 *    overlap; let go before anything that must not hold it (the general
 *    path, the hierarchy's notification), after BURST_HOLD entries at
 *    most (a burst of any size delays another thread no longer than that),
 *    and as soon as another thread waits for it, after which the burst
 *    keeps no lock across entries (taking it straight back would beat the
 *    waiter's wake-up every time).  A burst holding the lock is one
 *    schedule the N calls could have had (nobody else took the lock
 *    between them).
 * Each entry is otherwise exactly pw_mod_timer(): fast path 1 inline, then
 * the lane's compares (set up, pending, not migrating, not shut down, on
 * this CPU, placement "stay": pw__tls.lane_tf and rt->lane_key), its clock
 * forward, fast path 2 with the expiring-list test, the requeue, its
 * statistics and its notification; anything else goes to
 * pw__mod_timer_general() as the lane sends it there.  Results, statistics and
 * where each timer ends are those of the N calls in order (test_burst.c
 * runs both on twin runtimes).
 * The destination bucket is prefetched as the lane does, once its index
 * is known under the lock (its head is in the base, a few KiB the burst
 * keeps hot, and its first timer is the last one enqueued there).
 * The distances: far enough ahead that a miss to memory is served while
 * the entries in between are re-armed (how far depends on an entry's cost
 * in cache against a miss's latency: docs/benchmarks.md, "Re-arms in
 * bursts", has both, measured).
 * Context: as pw_mod_timer(), entry by entry; holds at most one base lock
 * at a time, never across a call out of this file but the general path's
 * own locking (after letting go).
 */
#define BURST_PF_TIMER 12 /* entries ahead whose timer is prefetched */
#define BURST_PF_LINKS 4  /* entries ahead whose list neighbours are */
#define BURST_HOLD 32     /* entries at most under one kept lock */
_Static_assert(BURST_PF_LINKS < BURST_PF_TIMER, "links are read after the timer's line was asked for");

/* The lines of @t, for writing: its first, and its last when it straddles.
 * A prefetch never faults: @t may be NULL (the address is computed as an
 * integer, so NULL needs no test either). */
static inline void burst_prefetch_timer(const struct pw_timer *t)
{
	__builtin_prefetch(t, 1);
	__builtin_prefetch((const void *)((uintptr_t)t + sizeof(*t) - 1), 1);
}

/* The words unlinking @t will write; its links read without the lock. */
static inline void burst_prefetch_neighbours(const struct pw_timer *t)
{
	prefetch_link_targets(__atomic_load_n(&t->pw_next, __ATOMIC_RELAXED),
			      __atomic_load_n(&t->pw_pprev, __ATOMIC_RELAXED));
}

/* Let go of @b's lock, kept by a burst: unlock, wake a waiter.  Context:
 * the burst, holding it. */
static inline void burst_release(struct pw__base *b)
{
	if (__builtin_expect(pw__unlock_nowake(&b->lock), 0))
		pw__lock_wake(&b->lock);
}

/* What a burst carries from one entry to the next. */
struct burst {
	struct pw__base *held; /* the base whose lock the burst keeps, or NULL */
	unsigned left;         /* entries it may still keep it for */
	bool keep;             /* false once a waiter showed */
	int pending;           /* entries that returned 1 */
	uint32_t lane_tf;      /* the thread's view (internal.h, "The fast lane's state") */
	uintptr_t self_rt;
	struct pw__base *bases[4]; /* the thread's lane_base[], copied: no store of the
				    * burst can change it, and the compiler knows so */
};

/* Let go of the lock the burst keeps.  Context: the burst, holding it. */
static inline void burst_drop(struct burst *bs)
{
	burst_release(bs->held);
	bs->held = NULL;
}

/* One entry of a burst: @t to @e, exactly as pw_mod_timer(@t, @e) (fast
 * path 1, the lane's tests and steps, or the general path), keeping the
 * base's lock for the next entries unless someone waits or BURST_HOLD
 * entries were done under it.  Context: the burst.  Return: what
 * pw_mod_timer() returns. */
static inline __attribute__((always_inline)) int burst_entry(struct burst *bs,
							      struct pw_timer *t, uint64_t e)
{
	int r;
	if (__builtin_expect(!t, 0)) {
		r = -EINVAL;
		goto done;
	}
	/* fast path 1, as pw_mod_timer() inline (timer.h) */
	uint32_t tf = pw__tf_load(t);
	if ((tf & PW__TF_PENDING) && exp_load(t) == e) {
		uint64_t *hits = pw__fast_hits;
		if (hits)
			pw__count_add(hits, 1);
		r = 1;
		goto done;
	}
	/* the lane (pw__mod_timer_lane(): the same tests, the same order; once
	 * the flags match, @t's runtime is the thread's) */
	struct pw_runtime *rt = (struct pw_runtime *)bs->self_rt;
	if (__builtin_expect(((tf ^ bs->lane_tf) & PW__TF_LANE_MASK) != PW__TF_MAGIC ||
				     bs->self_rt != __atomic_load_n(&rt->lane_key, __ATOMIC_RELAXED),
			     0))
		goto general;
	struct pw__base *b = bs->bases[(tf / PW_TIMER_PINNED) & 3];
	if (bs->held != b) {
		if (bs->held)
			burst_drop(bs);
		if (__builtin_expect(!pw__trylock(&b->lock), 0))
			goto general;
		bs->held = b;
		bs->left = bs->keep ? BURST_HOLD : 1;
		if (__builtin_expect(pw__tf_load(t) != tf, 0)) /* changed before we locked */
			goto general;
	} /* else @tf was read under @b's lock: it holds */
	struct pw__wheel *w = &b->wheel;
	if (__builtin_expect(!pw__wheel_forward_cached(w, pw__jiffies_seen(rt)), 0))
		goto general;
	uint64_t bucket_expiry;
	unsigned idx = lane_place(t, e, b, &bucket_expiry);
	r = 1;
	if (lane_same_bucket(b, t, idx)) {
		pw__count_add(&b->stats->same_bucket, 1); /* fast path 2 */
	} else {
		pw__wheel_requeue(w, t, idx, bucket_expiry);
		/* read under the lock; a stale 0 is safe (pw__arm_notify()) */
		if (__builtin_expect(__atomic_load_n(&b->tmigr_idle, __ATOMIC_RELAXED) != 0, 0)) {
			burst_drop(bs);
			pw__arm_notify_own(rt, b, bucket_expiry);
		}
	}
	goto done;
general:
	if (bs->held)
		burst_drop(bs);
	r = pw__mod_timer_general(t, e);
done:
	bs->pending += r == 1;
	/* After every entry, whichever way it went (fast path 1 and a NULL
	 * entry take no lock but may keep one): never keep a lock over more
	 * than BURST_HOLD entries, so a burst of any size delays another
	 * thread no longer than that many re-arms; and if somebody waits for
	 * it, let them in, and keep no lock across entries for the rest of the
	 * burst (taking it straight back would beat the waiter's wake-up every
	 * time). */
	if (bs->held) {
		if (__builtin_expect(!--bs->left, 0)) {
			burst_drop(bs);
		} else if (__builtin_expect(__atomic_load_n(&bs->held->lock.waiters,
							    __ATOMIC_RELAXED) != 0, 0)) {
			bs->keep = false;
			burst_drop(bs);
		}
	}
	return r;
}

int pw_mod_timers(struct pw_timer *const timers[], const uint64_t expires[], unsigned n,
		  int ret[])
{
	if (!n)
		return 0;
	if (!timers || !expires || n > INT_MAX)
		return -EINVAL;
	/* The thread's view, as the lane reads it: it does not change during
	 * an arm. */
	struct pw__tls *me = &pw__tls;
	struct burst bs = {NULL, 0, true, 0, me->lane_tf, (uintptr_t)me->rt,
			   {me->lane_base[0], me->lane_base[1], me->lane_base[2], me->lane_base[3]}};
	unsigned i = 0;
	int r;

	/* the first entries: nothing asked for them earlier */
	for (unsigned k = 0; k < n && k < BURST_PF_TIMER; k++)
		burst_prefetch_timer(timers[k]);
	/* entries with BURST_PF_TIMER more after them, then the last ones:
	 * two loops, so that the first tests no bounds for its prefetches */
	for (; i + BURST_PF_TIMER < n; i++) {
		struct pw_timer *ahead = timers[i + BURST_PF_LINKS];
		burst_prefetch_timer(timers[i + BURST_PF_TIMER]);
		if (ahead)
			burst_prefetch_neighbours(ahead);
		r = burst_entry(&bs, timers[i], expires[i]);
		if (ret)
			ret[i] = r;
	}
	for (; i < n; i++) {
		struct pw_timer *ahead;
		if (i + BURST_PF_LINKS < n && (ahead = timers[i + BURST_PF_LINKS]))
			burst_prefetch_neighbours(ahead);
		r = burst_entry(&bs, timers[i], expires[i]);
		if (ret)
			ret[i] = r;
	}
	if (bs.held)
		burst_drop(&bs);
	return bs.pending;
}
