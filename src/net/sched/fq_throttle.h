/* SPDX-License-Identifier: MIT */
/*
 * fq's throttled set: the flows waiting for their time_next_packet, handed
 * back in (time, throttle order) order, the order of the kernel's
 * q->delayed rbtree.  A hierarchical wheel of nanosecond buckets of fq's
 * own (not the timer wheel's); design, invariants and costs: fq_throttle.c.
 * A pure data structure: no locking (fq calls it under its root lock), no
 * clock reads, no allocation.  For sched/fq.c and the tests.
 */
#ifndef PW_NET_SCHED_FQ_THROTTLE_H
#define PW_NET_SCHED_FQ_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

#define PW_FQT_BITS 8u                                  /* slots per level: 2^8 */
#define PW_FQT_SLOTS (1u << PW_FQT_BITS)
#define PW_FQT_WORDS (PW_FQT_SLOTS / 64u)               /* bitmap words per level */
#define PW_FQT_LEVELS ((64u + PW_FQT_BITS - 1) / PW_FQT_BITS)

/* An entry, embedded in what waits (fq's flow).  Private to fq_throttle.c,
 * but the owner may read t, and next on the list pw__fqt_take_due() hands
 * back. */
struct pw__fqt_node {
	struct pw__fqt_node *next;   /* the next of its slot, FIFO */
	struct pw__fqt_node **pprev; /* what points to it */
	uint64_t t;                  /* its time (ns) */
	uint64_t seq;                /* insertion order, unique */
};

struct pw__fqt_slot {
	struct pw__fqt_node *first;
	struct pw__fqt_node **ptail; /* &last->next, or &first when empty */
	uint64_t min_t;              /* least t in the slot (when non-empty) */
};

/* The set.  Embedded in fq's private area; about 50 KB. */
struct pw__fqt {
	uint64_t clk;                /* the wheel's time: no entry is earlier */
	uint64_t seq;                /* the next insertion's */
	uint32_t levels;             /* bit L: level L has an entry */
	uint64_t sum[PW_FQT_LEVELS];                /* bit w: map[L][w] != 0 */
	uint64_t map[PW_FQT_LEVELS][PW_FQT_WORDS];  /* bit s: slot s non-empty */
	struct pw__fqt_slot slot[PW_FQT_LEVELS][PW_FQT_SLOTS];
};

/*
 * pw__fqt_init() - make @w empty, its clock at 0.  Also what reset does:
 * the entries are forgotten, not touched.  O(slots).
 * Context: the owner's lock, or @w not yet shared.
 */
void pw__fqt_init(struct pw__fqt *w);

/*
 * pw__fqt_add() - queue @n at time @t, after every queued entry (its seq
 * is the next).  @now is the caller's clock: when @w is empty the wheel's
 * clock moves to min(@now, @t).  Any @t is accepted; one earlier than the
 * wheel's clock (the caller's clock went back) rebuilds the wheel
 * (O(n log n), n the entries), which fq's monotonic clock never makes happen.
 * Context: the owner's lock.  O(1).
 */
void pw__fqt_add(struct pw__fqt *w, struct pw__fqt_node *n, uint64_t t, uint64_t now);

/*
 * pw__fqt_del() - take out @n, queued in @w.  Context: the owner's lock.
 * O(1), but for a level above 0 whose least time @n held: O(its slot)
 * to find the next least.
 */
void pw__fqt_del(struct pw__fqt *w, struct pw__fqt_node *n);

/*
 * pw__fqt_take_due() - take out every entry whose t <= @now.
 * Context: the owner's lock.  Amortized O(1) per entry (fq_throttle.c:
 * Costs).
 * Return: the first of them, NULL if none; they are linked through next
 * (NULL-terminated) in (t, seq) order and belong to @w no more.  *@next:
 * the least t still queued, UINT64_MAX when none is.
 */
struct pw__fqt_node *pw__fqt_take_due(struct pw__fqt *w, uint64_t now, uint64_t *next);

/*
 * pw__fqt_next() - the least t queued, UINT64_MAX when empty; nothing
 * moves.  Context: the owner's lock.  O(1).
 */
uint64_t pw__fqt_next(const struct pw__fqt *w);

/*
 * pw__fqt_check() - every invariant of fq_throttle.c, walking all
 * entries; *@count (if not NULL) gets their number.
 * Context: the owner's lock.  O(slots + entries).
 * Return: 0; or the (positive) number of the first rule broken.
 */
int pw__fqt_check(const struct pw__fqt *w, uint64_t *count);

/* pw__fqt_empty() - whether @w holds no entry.  Context: the owner's lock. */
static inline bool pw__fqt_empty(const struct pw__fqt *w)
{
	return !w->levels;
}

#endif /* PW_NET_SCHED_FQ_THROTTLE_H */
