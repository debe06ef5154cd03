/* SPDX-License-Identifier: MIT */
/*
 * The timer wheel of one base: a pure data structure (no locking, no clock
 * reads).  The caller holds the base lock for every call.  Design: wheel.c.
 */
#ifndef PW_CORE_WHEEL_H
#define PW_CORE_WHEEL_H

#include <stdbool.h>
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
	uint64_t pending_map[PW_WHEEL_LVL_MAX];   /* bit per non-empty bucket */
	struct pw_timer *vectors[PW_WHEEL_SIZE];  /* bucket list heads */
};

/* Granularity of @lvl in jiffies: 8^lvl. */
static inline uint64_t pw__wheel_gran(unsigned lvl)
{
	return 1ull << (lvl * PW_WHEEL_CLK_SHIFT);
}

void pw__wheel_init(struct pw__wheel *w, unsigned hz, uint64_t clk);

/* The bucket for @expires relative to the wheel clock, and the jiffy that
 * bucket expires at (rounded up: never early; clamped beyond the range). */
unsigned pw__wheel_calc_index(const struct pw__wheel *w, uint64_t expires,
			      uint64_t *bucket_expiry);

/* Put @t (not pending) in bucket @idx found by calc_index on this clk.
 * Sets @t's bucket and PENDING bits. */
void pw__wheel_enqueue(struct pw__wheel *w, struct pw_timer *t, unsigned idx,
		       uint64_t bucket_expiry);

/* calc_index + enqueue at @t->expires. */
void pw__wheel_add(struct pw__wheel *w, struct pw_timer *t);

/* Take the pending @t out (from its bucket or from a list being expired).
 * Clears PENDING.  An emptied bucket only marks next_expiry for recompute. */
void pw__wheel_detach(struct pw__wheel *w, struct pw_timer *t);

/* The earliest bucket expiry (recomputed if marked), or clk + 2^62 if no
 * bucket holds a timer. */
uint64_t pw__wheel_next_expiry(struct pw__wheel *w);

/* Is any bucket non-empty? */
bool pw__wheel_has_buckets(const struct pw__wheel *w);

/* After idle: move clk up to @jnow, but never past the next expiry. */
void pw__wheel_forward(struct pw__wheel *w, uint64_t jnow);

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

#endif /* PW_CORE_WHEEL_H */
