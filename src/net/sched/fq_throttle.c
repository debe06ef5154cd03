/* SPDX-License-Identifier: MIT */
/*
 * fq's throttled set: the flows whose next packet may not leave before
 * their time_next_packet, handed back once that time has come, in order
 * of (time, throttle order) -- the order of the kernel's q->delayed rbtree,
 * which puts an equal time after those already there.  fq.c throttles a
 * flow (pw__fqt_add), takes what is due at each dequeue (pw__fqt_take_due,
 * which also gives the next time for the watchdog), and takes a flow out
 * when its socket changes under it (pw__fqt_del).
 *
 * Why not a heap or a tree.  Both cost O(log n) per throttle and
 * unthrottle, n the flows throttled: with every flow paced, n is every
 * flow, and each level of a sift is a compare and, once the flows outgrow
 * the cache, a miss (the binary heap fq had also wrote each moved flow's
 * heap index).  A paced flow is throttled for about one packet time, so a
 * calendar keyed by time can do the same work whatever the flows' number.
 *
 * The structure: a hierarchical wheel of exact nanosecond time.  Level L
 * has 2^BITS slots (BITS 8); an entry of time t sits at the level of the
 * highest 8-bit group in which t differs from the wheel's clock clk, in
 * slot (t >> (L * BITS)) mod 2^BITS: t agrees with clk above that group
 * and is later within it.  So level 0 holds entries of clk's current 256
 * ns, one time per slot; level 1 of its current 65.5 us, 256 ns a slot;
 * level 2 of its current 16.8 ms, 65.5 us a slot; up to level 7, 2^56 ns a
 * slot.  Every entry of a lower level is earlier than every entry of a
 * higher one, and within a level a lower slot's are earlier than a
 * higher's: the first non-empty slot (found by three count-trailing-zeros:
 * the word of non-empty levels, the level's summary word, its bitmap
 * word) holds the earliest entry.  Each slot keeps its least time (min_t):
 * the first slot's is the set's least, the time fq arms its watchdog for.
 * A slot is a FIFO list through its entries (next, and pprev for an O(1)
 * unlink), with its head and its tail's link.
 *
 * Taking what is due (take_due, now): look at the first non-empty slot.
 * If its min_t is later than now, nothing is due: stop, min_t is the next
 * time.  At level 0 (one time), or when it holds one entry, all of it is
 * due and is the earliest there is: append the slot's list to the result
 * and set clk to that time.  Otherwise (above level 0, several entries,
 * some due) cascade: clk moves to the slot's start (clk with the slot's
 * group set to the slot, the lower bits 0; not later than min_t, so not
 * later than now) and the slot's entries, in their order, go to the slots
 * their times now name, all lower (their times share the slot's bits) and
 * all empty before (nothing lower was non-empty).  Repeat.  clk only ever
 * moves to a time not later than now, and an add's time is later than the
 * now it comes with (fq throttles only for a later time), so no entry is
 * earlier than clk.  The clock moves only as far as taking needs: a slot
 * whose entries are not due stays where it is.
 *
 * Order.  Every slot is in increasing seq (insertion order): an add
 * appends the newest there is; a cascade fills empty slots from one slot,
 * in that slot's order; an unlink keeps the order of the rest.  A level-0
 * slot holds one time, so its FIFO order is (t, seq) order; a single
 * entry is trivially in order; and slots are taken in time order: the
 * result is in (t, seq) order, the heap's and the rbtree's.
 *
 * Invariants (pw__fqt_check()): every entry has t >= clk and sits in the
 * slot its t and clk name; each slot's list is consistent (pprev, the
 * tail link) and increasing in seq, all below the next seq; a slot's bit
 * is set iff it is non-empty, a summary bit iff its bitmap word is
 * non-zero, a level's bit iff its summary is; a non-empty slot's min_t is
 * its least t.
 *
 * Costs.  add: O(1) (a count-leading-zeros for the level, an append, three
 * bits).  take_due: O(1) per slot it takes, plus the cascades: an entry
 * moves down at most once per level above 0 it was added at, so its cost
 * is set by how far ahead of clk it was throttled (its pacing delay: under
 * 256 ns it starts at level 0, under 65.5 us at 1, under 16.8 ms at 2,
 * under 4.3 s at 3), and an entry alone in its slot is taken without
 * moving at all; none of it depends on how many flows are throttled.
 * But a cascade moves a whole slot at once: the take_due that cascades a
 * crowded slot does work in proportion to its entries (a burst; the
 * average per entry stays as said).  Each move touches the entry, which
 * lives in its flow: once the flows outgrow the cache, a miss where the
 * flow is cold -- the price of keeping no array beside the flows.  del:
 * O(1), unless it takes a slot's least time above level 0: then a walk of
 * that slot for the next least (fq deletes only when a throttled flow's
 * socket changes).  Memory: the slots and bitmaps (struct pw__fqt, 8
 * levels of 256 slots of 24 bytes, about 49 KB, inside fq's private area),
 * and 32 bytes per entry inside its flow; nothing is allocated, ever.
 *
 * Time going back.  An add earlier than clk (the caller's clock went
 * back; fq's is monotonic, so only the tests do it) rebuilds the wheel:
 * every entry is gathered, merge-sorted by seq and placed again from the
 * new clock, O(n log n).  A take_due with a now earlier than clk finds
 * nothing due, rightly: no entry is earlier than clk.
 *
 * Not the timer wheel (src/time/wheel.c): its buckets are granular by
 * design (an expiry may run a level's granularity late) and fq's
 * departures are exact to the nanosecond; and fq must not reach into
 * src/time's internals.
 *
 * Locking: none of its own; every call under the owner's lock (fq's root
 * lock).
 */
#include "fq_throttle.h"

#include <stddef.h>

/* ------------------------------------------------------------ helpers */

static inline unsigned level_of(uint64_t t, uint64_t clk)
{
	uint64_t x = t ^ clk;
	return x ? (unsigned)(63 - __builtin_clzll(x)) / PW_FQT_BITS : 0;
}

static inline unsigned slot_index(uint64_t t, unsigned level)
{
	return (unsigned)(t >> (level * PW_FQT_BITS)) & (PW_FQT_SLOTS - 1);
}

/* The bits of a time above level @level's group. */
static inline uint64_t above_mask(unsigned level)
{
	return level + 1 < PW_FQT_LEVELS ? ~0ull << ((level + 1) * PW_FQT_BITS) : 0;
}

static inline void bit_set(struct pw__fqt *w, unsigned level, unsigned s)
{
	w->map[level][s / 64] |= 1ull << (s % 64);
	w->sum[level] |= 1ull << (s / 64);
	w->levels |= 1u << level;
}

static inline void bit_clear(struct pw__fqt *w, unsigned level, unsigned s)
{
	uint64_t *m = &w->map[level][s / 64];
	*m &= ~(1ull << (s % 64));
	if (*m)
		return;
	w->sum[level] &= ~(1ull << (s / 64));
	if (!w->sum[level])
		w->levels &= ~(1u << level);
}

/* Append @n to the slot its time and the clock name. */
static inline void place(struct pw__fqt *w, struct pw__fqt_node *n)
{
	unsigned level = level_of(n->t, w->clk), s = slot_index(n->t, level);
	struct pw__fqt_slot *sl = &w->slot[level][s];
	n->next = NULL;
	n->pprev = sl->ptail;
	if (!sl->first) {
		sl->min_t = n->t;
		bit_set(w, level, s);
	} else if (n->t < sl->min_t) {
		sl->min_t = n->t;
	}
	*sl->ptail = n;
	sl->ptail = &n->next;
}

/* The first non-empty slot (@w not empty). */
static inline void first_slot(const struct pw__fqt *w, unsigned *level, unsigned *s)
{
	unsigned l = (unsigned)__builtin_ctz(w->levels);
	unsigned wd = (unsigned)__builtin_ctzll(w->sum[l]);
	*level = l;
	*s = wd * 64 + (unsigned)__builtin_ctzll(w->map[l][wd]);
}

static void slot_reset(struct pw__fqt_slot *sl)
{
	sl->first = NULL;
	sl->ptail = &sl->first;
}

/* Move every entry of slot (@level, @s) to the slots the clock, just
 * set to the slot's start, now names for them: all below @level. */
static void cascade(struct pw__fqt *w, unsigned level, unsigned s)
{
	struct pw__fqt_slot *sl = &w->slot[level][s];
	struct pw__fqt_node *n = sl->first;
	slot_reset(sl);
	bit_clear(w, level, s);
	while (n) {
		struct pw__fqt_node *nx = n->next;
		place(w, n);
		n = nx;
	}
}

/* ----------------------------------------------- the rebuild (time back) */

static struct pw__fqt_node *merge_by_seq(struct pw__fqt_node *a, struct pw__fqt_node *b)
{
	struct pw__fqt_node *head = NULL, **pp = &head;
	while (a && b) {
		struct pw__fqt_node **m = a->seq < b->seq ? &a : &b;
		*pp = *m;
		pp = &(*m)->next;
		*m = (*m)->next;
	}
	*pp = a ? a : b;
	return head;
}

/* Bottom-up merge sort of a list through next, by seq. */
static struct pw__fqt_node *sort_by_seq(struct pw__fqt_node *list)
{
	struct pw__fqt_node *bin[64] = { NULL };
	while (list) {
		struct pw__fqt_node *n = list;
		list = n->next;
		n->next = NULL;
		unsigned k = 0;
		for (; k < 63 && bin[k]; k++) {
			n = merge_by_seq(bin[k], n);
			bin[k] = NULL;
		}
		bin[k] = merge_by_seq(bin[k], n);
	}
	struct pw__fqt_node *r = NULL;
	for (unsigned k = 0; k < 64; k++)
		r = merge_by_seq(bin[k], r);
	return r;
}

/* Every entry placed again from clock @clk, in seq order. */
static void rebuild(struct pw__fqt *w, uint64_t clk)
{
	struct pw__fqt_node *all = NULL, **tail = &all;
	while (w->levels) {
		unsigned level, s;
		first_slot(w, &level, &s);
		struct pw__fqt_slot *sl = &w->slot[level][s];
		*tail = sl->first;
		tail = sl->ptail;
		slot_reset(sl);
		bit_clear(w, level, s);
	}
	*tail = NULL;
	w->clk = clk;
	struct pw__fqt_node *n = sort_by_seq(all);
	while (n) {
		struct pw__fqt_node *nx = n->next;
		place(w, n);
		n = nx;
	}
}

/* ------------------------------------------------------------- the API */

void pw__fqt_init(struct pw__fqt *w)
{
	w->clk = 0;
	w->seq = 0;
	w->levels = 0;
	for (unsigned l = 0; l < PW_FQT_LEVELS; l++) {
		w->sum[l] = 0;
		for (unsigned k = 0; k < PW_FQT_WORDS; k++)
			w->map[l][k] = 0;
		for (unsigned s = 0; s < PW_FQT_SLOTS; s++) {
			slot_reset(&w->slot[l][s]);
			w->slot[l][s].min_t = 0;
		}
	}
}

void pw__fqt_add(struct pw__fqt *w, struct pw__fqt_node *n, uint64_t t, uint64_t now)
{
	n->t = t;
	n->seq = w->seq++;
	if (!w->levels)
		w->clk = t < now ? t : now;
	else if (t < w->clk)
		rebuild(w, t);
	place(w, n);
}

void pw__fqt_del(struct pw__fqt *w, struct pw__fqt_node *n)
{
	unsigned level = level_of(n->t, w->clk), s = slot_index(n->t, level);
	struct pw__fqt_slot *sl = &w->slot[level][s];
	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	else
		sl->ptail = n->pprev;
	n->next = NULL;
	n->pprev = NULL;
	if (!sl->first) {
		bit_clear(w, level, s);
	} else if (level && n->t == sl->min_t) {
		uint64_t m = UINT64_MAX;
		for (const struct pw__fqt_node *e = sl->first; e; e = e->next)
			if (e->t < m)
				m = e->t;
		sl->min_t = m;
	}
}

struct pw__fqt_node *pw__fqt_take_due(struct pw__fqt *w, uint64_t now, uint64_t *next)
{
	struct pw__fqt_node *due = NULL, **tail = &due;
	for (;;) {
		if (!w->levels) {
			*next = UINT64_MAX;
			break;
		}
		unsigned level, s;
		first_slot(w, &level, &s);
		struct pw__fqt_slot *sl = &w->slot[level][s];
		/* the first slot holds the earliest entry: none of it due, none due */
		if (sl->min_t > now) {
			*next = sl->min_t;
			break;
		}
		if (level == 0 || !sl->first->next) {
			/* one time (in seq order), or one entry: all of it goes */
			w->clk = sl->min_t;
			*tail = sl->first;
			tail = sl->ptail;
			slot_reset(sl);
			bit_clear(w, level, s);
			continue;
		}
		w->clk = (w->clk & above_mask(level)) | (uint64_t)s << (level * PW_FQT_BITS);
		cascade(w, level, s);
	}
	*tail = NULL;
	return due;
}

uint64_t pw__fqt_next(const struct pw__fqt *w)
{
	if (!w->levels)
		return UINT64_MAX;
	unsigned level, s;
	first_slot(w, &level, &s);
	return w->slot[level][s].min_t;
}

/* ------------------------------------------------------------- checker */

int pw__fqt_check(const struct pw__fqt *w, uint64_t *count)
{
	uint64_t n = 0;
	uint32_t levels = 0;
	for (unsigned l = 0; l < PW_FQT_LEVELS; l++) {
		uint64_t sum = 0;
		for (unsigned k = 0; k < PW_FQT_WORDS; k++)
			if (w->map[l][k])
				sum |= 1ull << k;
		if (sum != w->sum[l])
			return 1; /* a summary bit iff its word is non-zero */
		if (sum)
			levels |= 1u << l;
		for (unsigned s = 0; s < PW_FQT_SLOTS; s++) {
			const struct pw__fqt_slot *sl = &w->slot[l][s];
			bool bit = (w->map[l][s / 64] >> (s % 64)) & 1;
			if (bit != (sl->first != NULL))
				return 2; /* a slot's bit iff it is non-empty */
			struct pw__fqt_node *const *pp = &sl->first;
			uint64_t min_t = UINT64_MAX;
			for (const struct pw__fqt_node *e = sl->first; e; e = e->next) {
				if (e->pprev != pp)
					return 3; /* the back links */
				if (e->t < w->clk)
					return 4; /* nothing earlier than the clock */
				if (level_of(e->t, w->clk) != l || slot_index(e->t, l) != s)
					return 5; /* the slot its time names */
				if (e->next && e->next->seq <= e->seq)
					return 6; /* FIFO: increasing seq */
				if (e->seq >= w->seq)
					return 7;
				if (e->t < min_t)
					min_t = e->t;
				pp = &e->next;
				if (++n > w->seq)
					return 8; /* a cycle */
			}
			if (sl->ptail != pp)
				return 9; /* the tail link */
			if (sl->first && sl->min_t != min_t)
				return 10; /* the slot's least time */
		}
	}
	if (levels != w->levels)
		return 11; /* a level's bit iff its summary is non-zero */
	if (count)
		*count = n;
	return 0;
}
