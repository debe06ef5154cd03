/* SPDX-License-Identifier: MIT */
/*
 * The non-cascading hierarchical timer wheel (the Linux 4.8+ design).
 *
 * What it is
 * ----------
 * One wheel per timer base.  It has up to 9 levels of 64 buckets.  Level 0
 * buckets are one jiffy wide; each level up is 8 times coarser.  A timer is
 * put in the bucket of the level that covers its distance from the wheel
 * clock, and there it stays until it expires or is taken out: unlike the
 * classic (2.4-era) cascading wheel, nothing is ever moved down a level.
 * At HZ = 1000:
 *
 *   level  granularity  covers (distance from clk)
 *     0        1 ms        0 ms ..      62 ms
 *     1        8 ms       63 ms ..     503 ms
 *     2       64 ms      504 ms ..    ~4 s
 *     3      512 ms      ~4 s   ..   ~32 s
 *     4       ~4 s      ~32 s   ..    ~4 min
 *     5      ~33 s       ~4 min ..   ~34 min
 *     6      ~4.4 min   ~34 min ..    ~4.5 h
 *     7      ~35 min    ~4.5 h  ..   ~36 h
 *     8      ~4.7 h     ~36 h   ..   ~12 days
 *
 * Level n starts at 63 << 3(n-1) jiffies.  At HZ <= 100 the kernel uses 8
 * levels; so do we.  Past the last level the expiry is clamped to the end
 * of the wheel (the kernel does the same): such a timer fires "early"
 * relative to what was asked, after about 12 days at HZ = 1000.
 *
 * Why no cascading: most timeouts in network code (retransmit, delayed ack,
 * keepalive, connection deadlines) are cancelled or re-armed long before
 * they expire, so paying to cascade them down the levels is wasted work;
 * and a coarse bucket batches expiries for free.  The price is accuracy: a
 * timer is late by up to its level's granularity, which is at most 8/63
 * (12.7%) of the shortest distance the level covers, plus one jiffy.
 *
 * Never early: the bucket index rounds the expiry *up* to the level
 * granularity, and at level 0 one jiffy up, so that a timer armed at the end
 * of a tick still waits its full count of jiffies.  The bucket's "expiry" is
 * that rounded-up jiffy; a bucket is processed when the wheel clock reaches
 * it exactly.
 *
 * Invariants (checked by pw__wheel_check())
 * -----------------------------------------
 *  I1 every timer in bucket i has i in its flags, PENDING set, and the list
 *     links are consistent (pprev points at the pointer that points at it);
 *  I2 bit i of pending_map is set iff bucket i is non-empty;
 *  I3 every bucket expiry is >= clk and less than 64 level-granules past
 *     it, so that a level's 64 buckets never alias (the index and the clock
 *     name the bucket's expiry uniquely);
 *  I4 a timer's bucket expiry is >= its expires (never early), unless it was
 *     clamped (last level) or armed in the past (level 0, bucket = clk then);
 *     and at most one granule past it unless armed in the past;
 *  I5 if !recalc, next_expiry is exactly the earliest bucket expiry;
 *     otherwise it is at or before it (only removals happened since);
 *  I6 count equals the timers in buckets plus those being expired.
 *
 * Next expiry, lazily
 * -------------------
 * Each level's 64 buckets map to one 64-bit word of pending_map, so the
 * earliest non-empty bucket of a level is one rotate and one count of
 * trailing zeros from the level clock; the minimum over the levels is the
 * next expiry.  Adding a timer can only lower it (one compare); removing
 * the last timer of a bucket only sets `recalc`, and the scan runs when
 * someone next asks.
 *
 * Clock jump after idle
 * ---------------------
 * clk is the next jiffy to process.  Processing does not step clk tick by
 * tick: it jumps straight to next_expiry.  When a timer is added to a base
 * whose clk lags behind the current jiffy (the CPU was idle), the caller
 * first forwards clk to the current jiffy, or to next_expiry if that is
 * earlier, so the new timer's level is chosen from its true distance
 * (pw__wheel_forward()).
 *
 * Costs
 * -----
 * add: O(1) (level by a few compares, one list insert, one bit set);
 * detach: O(1); next expiry: O(levels) word operations when recomputed;
 * collect: O(levels).  Memory: 576 list heads, the bitmap, the two index
 * tables and a few words: ~4.8 KiB a wheel.
 * Locking: none here; every function requires the base lock (wheel.h).
 */
#include "wheel.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* (bits - 3) / 3 for a delta of 3..64 significant bits (0 below), by the
 * highest set bit (bits - 1). */
#define LVL_MSB(m) ((m) < 2 ? 0 : ((m) - 2) / 3)
#define LVL_MSB4(m) LVL_MSB(m), LVL_MSB((m) + 1), LVL_MSB((m) + 2), LVL_MSB((m) + 3)
#define LVL_MSB16(m) LVL_MSB4(m), LVL_MSB4((m) + 4), LVL_MSB4((m) + 8), LVL_MSB4((m) + 12)
const uint8_t pw__wheel_lvl_by_msb[64] = {LVL_MSB16(0), LVL_MSB16(16), LVL_MSB16(32),
					  LVL_MSB16(48)};
#define LVL_START(l) ((l) ? (uint64_t)(PW_WHEEL_LVL_SIZE - 1) << (PW_WHEEL_CLK_SHIFT * ((l) ? (l) - 1 : 0)) : 0)
const uint64_t pw__wheel_lvl_starts[PW_WHEEL_LVL_MAX + 1] = {
	LVL_START(0), LVL_START(1), LVL_START(2), LVL_START(3), LVL_START(4),
	LVL_START(5), LVL_START(6), LVL_START(7), LVL_START(8), LVL_START(9),
};

void pw__wheel_init(struct pw__wheel *w, unsigned hz, uint64_t clk)
{
	memset(w, 0, sizeof(*w));
	w->depth = hz > 100 ? 9 : 8;
	w->cutoff = pw__wheel_lvl_start(w->depth);
	w->timeout_max = w->cutoff - pw__wheel_gran(w->depth - 1);
	w->clk = clk;
	w->next_expiry = clk + PW_WHEEL_EMPTY_DELTA;
	memcpy(w->lvl_starts, pw__wheel_lvl_starts, sizeof(w->lvl_starts));
	memcpy(w->lvl_by_msb, pw__wheel_lvl_by_msb, sizeof(w->lvl_by_msb));
}

bool pw__wheel_has_buckets(const struct pw__wheel *w)
{
	for (unsigned l = 0; l < w->depth; l++)
		if (w->pending_map[l])
			return true;
	return false;
}

/* First jiffy >= clk that is a multiple of level @lvl's granularity, in
 * level units (the level clock). */
static inline uint64_t lvl_pos(uint64_t clk, unsigned lvl)
{
	uint64_t s = pw__wheel_lvl_shift(lvl);
	return (clk >> s) + ((clk & (pw__wheel_gran(lvl) - 1)) != 0);
}

/* Expiry of bucket @slot (0..63) of level @lvl, by I3. */
static inline uint64_t slot_expiry(uint64_t clk, unsigned lvl, unsigned slot)
{
	uint64_t pos = lvl_pos(clk, lvl);
	uint64_t d = (slot - pos) & PW_WHEEL_LVL_MASK;
	return (pos + d) << pw__wheel_lvl_shift(lvl);
}

uint64_t pw__wheel_scan_next_expiry(const struct pw__wheel *w)
{
	uint64_t best = PW_WHEEL_EMPTY_DELTA; /* as a distance from clk */

	for (unsigned lvl = 0; lvl < w->depth; lvl++) {
		uint64_t map = w->pending_map[lvl];
		if (!map)
			continue;
		uint64_t pos = lvl_pos(w->clk, lvl);
		unsigned start = (unsigned)(pos & PW_WHEEL_LVL_MASK);
		uint64_t rot = start ? (map >> start) | (map << (PW_WHEEL_LVL_SIZE - start)) : map;
		uint64_t e = (pos + (uint64_t)__builtin_ctzll(rot)) << pw__wheel_lvl_shift(lvl);
		if (e - w->clk < best)
			best = e - w->clk;
	}
	return w->clk + best;
}

unsigned pw__wheel_collect(struct pw__wheel *w, struct pw_timer **heads, unsigned *idxs)
{
	uint64_t clk = pw__wheel_next_expiry(w);
	unsigned n = 0;

	w->clk = clk;
	for (unsigned lvl = 0; lvl < w->depth; lvl++) {
		unsigned idx = lvl * PW_WHEEL_LVL_SIZE + (unsigned)(clk & PW_WHEEL_LVL_MASK);
		if (pw__wheel_map_test(w, idx)) {
			pw__wheel_map_clear(w, idx);
			heads[n] = w->vectors[idx];
			pw__pprev_store(heads[n], &heads[n]);
			w->vectors[idx] = NULL;
			idxs[n++] = idx;
		}
		/* The next level has a bucket here only on its granule edge. */
		if (clk & ((1u << PW_WHEEL_CLK_SHIFT) - 1))
			break;
		clk >>= PW_WHEEL_CLK_SHIFT;
	}
	/* One past: timers re-armed to "now" by callbacks land in the next
	 * jiffy instead of looping forever in this one. */
	w->clk++;
	w->recalc = true;
	return n;
}

#define CHECK(cond, ...)                                                  \
	do {                                                              \
		if (!(cond)) {                                            \
			fprintf(stderr, "pinwheel check %s: ", who);      \
			fprintf(stderr, __VA_ARGS__);                     \
			fputc('\n', stderr);                              \
			return -EFAULT;                                   \
		}                                                         \
	} while (0)

static int check_list(struct pw_timer *const *head, unsigned idx, uint64_t *count,
		      uint32_t tf_mask, uint32_t tf_val, const char *who)
{
	struct pw_timer *const *pprev = head;
	for (struct pw_timer *t = *head; t; pprev = &t->pw_next, t = t->pw_next) {
		uint32_t tf = pw__tf_load(t);
		CHECK(t->pw_pprev == pprev, "timer %p: broken pprev link (I1)", (void *)t);
		CHECK(tf & PW__TF_PENDING, "timer %p queued without PENDING (I1)", (void *)t);
		CHECK(t->pw_idx == idx, "timer %p in bucket %u but its index says %u (I1)",
		      (void *)t, idx, t->pw_idx);
		CHECK(!(tf & PW__TF_MIGRATING), "timer %p queued while MIGRATING", (void *)t);
		CHECK((tf & tf_mask) == tf_val, "timer %p: flags %#x name another base (want %#x)",
		      (void *)t, tf & tf_mask, tf_val);
		CHECK(++*count < (1ull << 40), "bucket %u: list loops", idx);
	}
	return 0;
}

int pw__wheel_check(const struct pw__wheel *w, struct pw_timer *const *extra,
		    const unsigned *extra_idx, unsigned nextra, uint32_t tf_mask,
		    uint32_t tf_val, const char *who)
{
	uint64_t count = 0, earliest = PW_WHEEL_EMPTY_DELTA;

	CHECK(w->depth == 8 || w->depth == 9, "depth %u", w->depth);
	for (unsigned lvl = w->depth; lvl < PW_WHEEL_LVL_MAX; lvl++)
		CHECK(!w->pending_map[lvl], "bits set on unused level %u", lvl);
	for (unsigned idx = 0; idx < w->depth * PW_WHEEL_LVL_SIZE; idx++) {
		unsigned lvl = idx / PW_WHEEL_LVL_SIZE, slot = idx % PW_WHEEL_LVL_SIZE;
		CHECK(pw__wheel_map_test(w, idx) == (w->vectors[idx] != NULL),
		      "bucket %u: bitmap bit %d but list %s (I2)", idx, pw__wheel_map_test(w, idx),
		      w->vectors[idx] ? "non-empty" : "empty");
		if (!w->vectors[idx])
			continue;
		if (check_list(&w->vectors[idx], idx, &count, tf_mask, tf_val, who))
			return -EFAULT;
		uint64_t be = slot_expiry(w->clk, lvl, slot);
		uint64_t gran = pw__wheel_gran(lvl);
		CHECK(pw__after_eq(be, w->clk) && be - w->clk < PW_WHEEL_LVL_SIZE * gran,
		      "bucket %u expiry %llu outside the window of clk %llu (I3)", idx,
		      (unsigned long long)be, (unsigned long long)w->clk);
		if (be - w->clk < earliest)
			earliest = be - w->clk;
		for (const struct pw_timer *t = w->vectors[idx]; t; t = t->pw_next) {
			uint64_t e = __atomic_load_n(&t->expires, __ATOMIC_RELAXED);
			bool early = pw__after(e, be);
			CHECK(!early || lvl == w->depth - 1,
			      "timer %p expires %llu but sits in bucket %u expiring %llu: early (I4)",
			      (void *)t, (unsigned long long)e, idx, (unsigned long long)be);
			CHECK(early || be - e <= gran || lvl == 0,
			      "timer %p expires %llu, bucket %u expires %llu: later than a granule (I4)",
			      (void *)t, (unsigned long long)e, idx, (unsigned long long)be);
		}
	}
	for (unsigned i = 0; i < nextra; i++)
		if (extra[i] && check_list(&extra[i], extra_idx[i], &count, tf_mask, tf_val, who))
			return -EFAULT;
	CHECK(count == w->count, "%llu timers queued but %llu counted (I6)",
	      (unsigned long long)count, (unsigned long long)w->count);
	if (earliest != PW_WHEEL_EMPTY_DELTA) {
		uint64_t next_d = w->next_expiry - w->clk;
		if (w->recalc)
			CHECK(!pw__after(w->next_expiry, w->clk + earliest), "stale next_expiry %llu past the earliest bucket %llu (I5)",
			      (unsigned long long)w->next_expiry,
			      (unsigned long long)(w->clk + earliest));
		else
			CHECK(next_d == earliest, "next_expiry %llu but earliest bucket %llu (I5)",
			      (unsigned long long)w->next_expiry,
			      (unsigned long long)(w->clk + earliest));
	}
	return 0;
}
