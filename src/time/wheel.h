/* SPDX-License-Identifier: MIT */
/*
 * The timer wheel of one base: a pure data structure (no locking, no clock
 * reads).  The caller holds the base lock for every call.  Design: wheel.c.
 */
#ifndef PW_TIME_WHEEL_H
#define PW_TIME_WHEEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/timer.h>

#define PW_WHEEL_CLK_SHIFT 3                      /* each level 8x coarser */
#define PW_WHEEL_LVL_BITS  6
#define PW_WHEEL_LVL_SIZE  (1u << PW_WHEEL_LVL_BITS) /* 64 buckets a level */
#define PW_WHEEL_LVL_MASK  (PW_WHEEL_LVL_SIZE - 1)
#define PW_WHEEL_LVL_MAX   9                      /* levels at HZ > 100 */
#define PW_WHEEL_SIZE      (PW_WHEEL_LVL_SIZE * PW_WHEEL_LVL_MAX)
#define PW_WHEEL_NO_IDX    0xffffffffu

/* Wrap-safe jiffy comparisons (signed difference, as the kernel's). */
static inline bool pw__after(uint64_t a, uint64_t b)
{
	return (int64_t)(b - a) < 0;
}
static inline bool pw__after_eq(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) >= 0;
}

struct pw__wheel {
	uint64_t clk;          /* next jiffy to process; every bucket is >= clk */
	uint64_t next_expiry;  /* earliest bucket expiry; exact unless recalc */
	bool recalc;           /* next_expiry may be too early: recompute */
	uint32_t depth;        /* levels in use: 9 (HZ > 100) or 8 */
	uint64_t cutoff;       /* deltas at or past this are clamped */
	uint64_t timeout_max;  /* ...to clk + timeout_max */
	uint64_t count;        /* pending timers, those being expired included */
	/* the index computation's two tables (pw__wheel_lvl_by_msb and
	 * pw__wheel_lvl_starts, below), copied into each wheel: the arm path
	 * reaches them from the base it holds, with no address to compute */
	uint64_t lvl_starts[PW_WHEEL_LVL_MAX + 1];
	uint8_t lvl_by_msb[64];
	uint64_t pending_map[PW_WHEEL_LVL_MAX];   /* bit per non-empty bucket */
	struct pw_timer *vectors[PW_WHEEL_SIZE];  /* bucket list heads */
};

/* Granularity of @lvl in jiffies: 8^lvl. */
static inline uint64_t pw__wheel_gran(unsigned lvl)
{
	return 1ull << (lvl * PW_WHEEL_CLK_SHIFT);
}

void pw__wheel_init(struct pw__wheel *w, unsigned hz, uint64_t clk);

/* Some timer queued in a bucket, or NULL (for moving them all away). */
static inline struct pw_timer *pw__wheel_any(const struct pw__wheel *w)
{
	for (unsigned l = 0; l < w->depth; l++)
		if (w->pending_map[l])
			return w->vectors[l * PW_WHEEL_LVL_SIZE +
					  (unsigned)__builtin_ctzll(w->pending_map[l])];
	return NULL;
}

/* The earliest bucket expiry, computed from the bitmap (wheel.c). */
uint64_t pw__wheel_scan_next_expiry(const struct pw__wheel *w);

/*
 * The hot operations, inline: the arm path (timer.c) is one function.
 *
 * pw__wheel_calc_index(): the bucket for @expires relative to the wheel
 *   clock, and the jiffy it expires at (rounded up: never early; clamped
 *   beyond the range).
 * pw__wheel_enqueue(): put @t (not pending) in bucket @idx found by
 *   calc_index on this clk; sets @t's bucket (pw_idx) and PENDING bit.
 * pw__wheel_requeue(): move the pending @t to bucket @idx (a re-arm): one
 *   unlink, one link, one store of pw_idx (the flags word is left alone);
 *   @t stays pending throughout, as the
 *   kernel's mod_timer keeps it (detach_if_pending(..., false)).
 * pw__wheel_add(): calc_index + enqueue at @t->expires; returns the bucket's
 *   expiry.
 * pw__wheel_detach(): take the pending @t out (from its bucket or from a
 *   list being expired); clears PENDING; an emptied bucket only marks
 *   next_expiry for recompute.
 * pw__wheel_next_expiry(): the earliest bucket expiry (recomputed if
 *   marked), or clk + 2^62 if no bucket holds a timer.
 * pw__wheel_forward(): after idle, move clk up to @jnow, never past the
 *   next expiry.
 */
#define PW_WHEEL_EMPTY_DELTA (1ull << 62) /* next_expiry of an empty wheel */

/* The index computation's two tables (wheel.c): the level guess by the
 * highest set bit of a delta, and each level's first delta. */
extern const uint8_t pw__wheel_lvl_by_msb[64];
extern const uint64_t pw__wheel_lvl_starts[PW_WHEEL_LVL_MAX + 1];

static inline unsigned pw__wheel_lvl_shift(unsigned lvl)
{
	return lvl * PW_WHEEL_CLK_SHIFT;
}

/* First distance from clk that level @lvl covers (level 0: 0). */
static inline uint64_t pw__wheel_lvl_start(unsigned lvl)
{
	return lvl ? (uint64_t)(PW_WHEEL_LVL_SIZE - 1) << pw__wheel_lvl_shift(lvl - 1) : 0;
}

/* A wheel timer's flags word (its CPU, base, bucket and state: timer.h):
 * the one load and the one store for it, for the wheel (bucket, PENDING)
 * and timer.c (the rest) alike; only the MIGRATING protocol's own steps
 * (migrating.h, on a bare flags word of either timer kind) do their own.
 * Relaxed atomics: the word is read without the lock (pending tests, the
 * protocol's lock step); the base lock orders the rest.
 * pw__tf_load(): Context: any thread.
 * pw__tf_store(): Context: the holder of the lock of the base the flags
 * name (or the timer's owner, at setup). */
static inline uint32_t pw__tf_load(const struct pw_timer *t)
{
	return __atomic_load_n(&t->pw_flags, __ATOMIC_RELAXED);
}

static inline void pw__tf_store(struct pw_timer *t, uint32_t tf)
{
	__atomic_store_n(&t->pw_flags, tf, __ATOMIC_RELAXED);
}

/* Bucket of @expires at @lvl, rounded up; its expiry in *@bucket_expiry. */
static inline unsigned pw__wheel_calc_lvl(uint64_t expires, unsigned lvl, uint64_t *bucket_expiry)
{
	uint64_t e = (expires >> pw__wheel_lvl_shift(lvl)) + 1;
	*bucket_expiry = e << pw__wheel_lvl_shift(lvl);
	return lvl * PW_WHEEL_LVL_SIZE + (unsigned)(e & PW_WHEEL_LVL_MASK);
}

/* Deltas calc_index does not place by level: in the past (the current
 * bucket, processed at the next run) or at/past the cutoff (clamped to the
 * last level's end). */
static inline unsigned pw__wheel_calc_far(const struct pw__wheel *w, uint64_t expires,
					  uint64_t *bucket_expiry)
{
	if ((int64_t)(expires - w->clk) < 0) {
		*bucket_expiry = w->clk;
		return (unsigned)(w->clk & PW_WHEEL_LVL_MASK);
	}
	return pw__wheel_calc_lvl(w->clk + w->timeout_max, w->depth - 1, bucket_expiry);
}

static inline unsigned pw__wheel_calc_index(const struct pw__wheel *w, uint64_t expires,
					     uint64_t *bucket_expiry)
{
	uint64_t delta = expires - w->clk;

	/* one unsigned compare catches both the past (a "negative" delta is
	 * huge) and the clamp */
	if (__builtin_expect(delta >= w->cutoff, 0))
		return pw__wheel_calc_far(w, expires, bucket_expiry);
	/* Level n covers [63 << 3(n-1), 63 << 3n): such a delta has 3n+3 to
	 * 3n+6 significant bits, so the table's (bits - 3) / 3 is n, or n + 1
	 * for the top of the range, which one compare with the level's start
	 * corrects.  Level 0 falls out of the same two steps.  No loop, no
	 * branch; below the cutoff the level is below the wheel's depth. */
	unsigned msb = 63 ^ (unsigned)__builtin_clzll(delta | 1); /* bits - 1 */
	unsigned lvl = w->lvl_by_msb[msb];
	lvl -= delta < w->lvl_starts[lvl];
	return pw__wheel_calc_lvl(expires, lvl, bucket_expiry);
}

static inline void pw__wheel_map_set(struct pw__wheel *w, unsigned idx)
{
	w->pending_map[idx / PW_WHEEL_LVL_SIZE] |= 1ull << (idx % PW_WHEEL_LVL_SIZE);
}

static inline void pw__wheel_map_clear(struct pw__wheel *w, unsigned idx)
{
	w->pending_map[idx / PW_WHEEL_LVL_SIZE] &= ~(1ull << (idx % PW_WHEEL_LVL_SIZE));
}

static inline bool pw__wheel_map_test(const struct pw__wheel *w, unsigned idx)
{
	return (w->pending_map[idx / PW_WHEEL_LVL_SIZE] >> (idx % PW_WHEEL_LVL_SIZE)) & 1;
}

/* A timer's links are read without the lock by one reader: the re-arm fast
 * lane (timer.c), which only prefetches what they point to.  So every store
 * to them is a relaxed atomic (a plain store on x86-64 and arm64): a racing
 * read gets an untorn, maybe stale, address.  Reads under the lock are
 * plain.  Context: the holder of the base lock (or the owner, at setup). */
static inline void pw__link_store(struct pw_timer **slot, struct pw_timer *v)
{
	__atomic_store_n(slot, v, __ATOMIC_RELAXED);
}

static inline void pw__pprev_store(struct pw_timer *t, struct pw_timer **v)
{
	__atomic_store_n(&t->pw_pprev, v, __ATOMIC_RELAXED);
}

/* Start the cache misses of unlinking a timer whose links are @next and
 * @pprev: the two words pw__wheel_unlink() writes, *@pprev and
 * @next->pw_pprev (not in @next's first cache line when @next straddles
 * two, as a 40-byte timer does more than half the time).  The re-arm paths call it
 * before they need the lines (timer.c: the lane, and a burst a few entries
 * ahead), with links read without the lock (relaxed, above): a stale
 * address costs a useless prefetch, and a prefetch never faults, so NULL
 * needs no test. */
static inline void pw__wheel_prefetch_unlink(const struct pw_timer *next, struct pw_timer **pprev)
{
	__builtin_prefetch(pprev, 1);
	__builtin_prefetch((const void *)((uintptr_t)next + offsetof(struct pw_timer, pw_pprev)), 1);
}

/* Unlink the pending @t from its bucket (or a list being expired); the
 * links of @t itself are left for the caller to overwrite. */
static inline void pw__wheel_unlink(struct pw__wheel *w, struct pw_timer *t)
{
	unsigned idx = t->pw_idx;
	struct pw_timer *next = t->pw_next, **pprev = t->pw_pprev;

	/* Last timer of its bucket?  (A timer on a list being expired is not
	 * in vectors[idx], so this leaves the bucket's bit alone then.) */
	if (__builtin_expect(w->vectors[idx] == t && !next, 0)) {
		pw__wheel_map_clear(w, idx);
		w->recalc = true;
	}
	pw__link_store(pprev, next);
	if (__builtin_expect(next != NULL, 1))
		pw__pprev_store(next, pprev);
}

/* Link @t at the head of bucket @idx and mark the bucket. */
static inline void pw__wheel_link(struct pw__wheel *w, struct pw_timer *t, unsigned idx,
				  uint64_t bucket_expiry)
{
	struct pw_timer **head = &w->vectors[idx];
	struct pw_timer *first = *head;

	pw__link_store(&t->pw_next, first);
	/* the bucket's bit is set exactly while it holds a timer (I2) */
	if (__builtin_expect(first != NULL, 1))
		pw__pprev_store(first, &t->pw_next);
	else
		pw__wheel_map_set(w, idx);
	*head = t;
	pw__pprev_store(t, head);
	/* Adding can only lower the next expiry; a stale (early) value that
	 * is still marked recalc stays marked unless this bucket is earlier. */
	if (pw__after(w->next_expiry, bucket_expiry)) {
		w->next_expiry = bucket_expiry;
		w->recalc = false;
	}
}

static inline void pw__wheel_requeue(struct pw__wheel *w, struct pw_timer *t, unsigned idx,
				     uint64_t bucket_expiry)
{
	pw__wheel_unlink(w, t);
	pw__wheel_link(w, t, idx, bucket_expiry);
	t->pw_idx = (uint16_t)idx;
}

static inline void pw__wheel_enqueue(struct pw__wheel *w, struct pw_timer *t, unsigned idx,
				     uint64_t bucket_expiry)
{
	pw__wheel_link(w, t, idx, bucket_expiry);
	t->pw_idx = (uint16_t)idx;
	pw__tf_store(t, pw__tf_load(t) | PW__TF_PENDING);
	w->count++;
}

static inline uint64_t pw__wheel_add(struct pw__wheel *w, struct pw_timer *t)
{
	uint64_t bucket_expiry;
	unsigned idx = pw__wheel_calc_index(w, __atomic_load_n(&t->expires, __ATOMIC_RELAXED),
					    &bucket_expiry);
	pw__wheel_enqueue(w, t, idx, bucket_expiry);
	return bucket_expiry;
}

static inline void pw__wheel_detach(struct pw__wheel *w, struct pw_timer *t)
{
	uint32_t tf = pw__tf_load(t);

	pw__wheel_unlink(w, t);
	pw__link_store(&t->pw_next, NULL);
	pw__pprev_store(t, NULL);
	pw__tf_store(t, tf & ~PW__TF_PENDING);
	w->count--;
}

static inline uint64_t pw__wheel_next_expiry(struct pw__wheel *w)
{
	if (w->recalc) {
		w->next_expiry = pw__wheel_scan_next_expiry(w);
		w->recalc = false;
	}
	return w->next_expiry;
}

/* pw__wheel_forward() without the rescan: false, and nothing changed, if
 * the next expiry must be recomputed first (the re-arm fast lane leaves
 * that to the general path). */
static inline bool pw__wheel_forward_cached(struct pw__wheel *w, uint64_t jnow)
{
	if (!pw__after(jnow, w->clk))
		return true;
	if (w->recalc)
		return false;
	w->clk = pw__after(w->next_expiry, jnow) ? jnow : w->next_expiry;
	return true;
}

static inline void pw__wheel_forward(struct pw__wheel *w, uint64_t jnow)
{
	if (!pw__wheel_forward_cached(w, jnow)) {
		pw__wheel_next_expiry(w); /* the rescan clears recalc */
		pw__wheel_forward_cached(w, jnow);
	}
}
/* Is any bucket non-empty? */
bool pw__wheel_has_buckets(const struct pw__wheel *w);


/* Jump clk to the next expiry (which must be due), move every bucket due
 * then onto @heads (one list per level, lists keep their links so the
 * timers stay pending and detachable), record their indexes in @idxs, and
 * step clk one past.  Return: the number of lists. */
unsigned pw__wheel_collect(struct pw__wheel *w, struct pw_timer **heads,
			   unsigned *idxs);

/* Verify the invariants (see wheel.c); the @extra lists (being expired,
 * collected from buckets @extra_idx) count as pending too; every timer's
 * flags must satisfy (flags & @tf_mask) == @tf_val (its CPU and base).  Return: 0, or -EFAULT with a message on stderr. */
int pw__wheel_check(const struct pw__wheel *w, struct pw_timer *const *extra,
		    const unsigned *extra_idx, unsigned nextra, uint32_t tf_mask,
		    uint32_t tf_val, const char *who);

#endif /* PW_TIME_WHEEL_H */
