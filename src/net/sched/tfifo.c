/* SPDX-License-Identifier: MIT */
/*
 * The time-ordered FIFO netem keeps: its delayed packets, handed out in
 * order of time_to_send and, among equal times, in order of arrival (the
 * kernel's tfifo_enqueue() inserts after equal keys).  netem.c enqueues,
 * peeks, erases the head and, on reset, flushes; nothing else reaches in.
 *
 * Three parts, as the kernel's two plus one:
 *  - the list (head .. tail through pw_next): a packet whose time is not
 *    earlier than the tail's goes to the tail, O(1).  Under a constant
 *    delay or a rate every packet does, and the other parts stay empty.
 *  - the calendar: the packets that arrive earlier than the tail (jitter)
 *    in nb buckets (a power of two, sized once at init from netem's
 *    limit), bucket i holding those with (time_to_send >> shift) mod nb ==
 *    i, through pw_next, pushed at the head in no order; only the current
 *    bucket, the one holding the calendar's earliest packet, is sorted,
 *    when it becomes current (a merge sort of the bucket's few packets),
 *    and a packet that lands in it is inserted at its place.  A two-level
 *    bitmap (a bit per bucket, a bit per 64 buckets) finds the next
 *    non-empty bucket.  The bucket width 2^shift is set by
 *    pw__tfifo_set_span() from the spread of netem's delays, so that the
 *    calendar's nb buckets cover it.  The kernel has an rbtree here.
 *  - the overflow: a pairing heap (pw_left first child, pw_right next
 *    sibling) for what the calendar cannot hold: a packet whose bucket is
 *    nb or more buckets away from the calendar's others (far in the
 *    future, or far enough in the past that lowering the calendar's start
 *    would push its latest out), and the calendar's packets when a change
 *    of the delays changes the width.
 * An out-of-order packet waits in pend until the next one comes (or a
 * flush), while the bucket word it will go to, cold most of the time, is
 * prefetched; it counts as queued (ooo) and pw__tfifo_peek() sees it.
 *
 * Order.  Every packet gets pw_seq, an arrival counter, so keys
 * (time_to_send, pw_seq) are unique and each part yields its first by
 * them: the list is in time order and FIFO by construction, the current
 * bucket is sorted by key and every other calendar packet lies in a later
 * bucket (a later time), the heap's root is its minimum.  pw__tfifo_peek()
 * takes the least of the firsts (and pend), so packets leave in key order
 * whatever part holds them and whatever the bucket width: the width, the
 * sizes and the overflow rule decide speed only.  The kernel's
 * netem_peek() prefers the list's head on an equal time where the key
 * compares arrivals; both choose the same packet, because an out-of-order
 * packet with the list head's time must have arrived after it: it went
 * out of order because the tail was later than its time, while the list
 * head, with the same time, was appended when the tail was not later (the
 * tail's time only grows while the list is non-empty, and the list cannot
 * empty while an out-of-order packet is queued, since all of those are
 * earlier than the tail and leave first).
 *
 * Invariants (pw__tfifo_check()): the list is non-decreasing in time and
 * increasing in pw_seq, tail its last; every out-of-order packet (calendar,
 * heap, pend) is earlier than the tail, so out-of-order packets imply a
 * non-empty list; a calendar packet in bucket i has (time >> shift) mod nb
 * == i and time >> shift in [cur, cur + nb), the current bucket cur mod nb
 * is non-empty when the calendar is, and sorted, its head before every
 * calendar packet; a bucket's bit is set iff it is non-empty, an l1 bit iff
 * its l0 word is non-zero, empty buckets are NULL; cal_count and
 * heap_count count, ooo is their sum plus one for pend, tail_ns is the
 * tail's time, cal_max the calendar's latest (only its minimum ever
 * leaves it, so its maximum changes only by an insert); the heap is
 * heap-ordered by key; a prefetch cursor whose bucket is after the
 * current one is on a queued packet of that bucket.  As every
 * out-of-order packet is earlier than the tail, the tail's time is the
 * latest queued (pw__tfifo_last_ns()).
 *
 * Time going backwards or forwards.  Times are absolute nanoseconds and
 * compared as plain numbers (as netem's dequeue compares them with now);
 * nothing here reads a clock.  The calendar's start follows its earliest
 * packet: a packet in an earlier bucket moves the start down when the
 * latest calendar packet stays within nb buckets of it (its bucket is then
 * necessarily empty), and goes to the heap otherwise; a packet nb or more
 * buckets past the start goes to the heap.  So a time far in the future,
 * a clamped time of 0, or a dequeue that falls behind (a stopped driver, a
 * parent that throttles) costs the heap's O(log n), never the order.
 *
 * Costs.  Enqueue: O(1) to the list (the tail's time is kept in
 * tail_ns, so the tail is not read), O(1) to a calendar bucket that is
 * not the current one, O(k) into the current one (k the packets in it),
 * O(1) to the heap, each a packet late (pend).  Peek: one test when
 * nothing is out of order (ooo), else up to three compares.  Erase of the
 * first: O(1) from the list; from the
 * calendar O(1), plus, when its bucket empties, finding the next one (an
 * l0 word, else a scan of the l1 words: nb / 4096 at most) and sorting it,
 * O(k log k) for its k packets; from the heap O(log n) amortised.  So the
 * cost per out-of-order packet is O(1) amortised while k is bounded, and
 * k is about the packets in flight times the bucket width over the spread
 * of the delays, that is about the packets in flight over nb (the delays'
 * spread covers nb buckets): at most a few when nb is near the limit.  A
 * burst (many packets sent at once, their times within the jitter of one
 * another) fills fewer buckets more: O(log k) a packet for its sort.
 * Memory is what costs: an out-of-order packet arrived a delay ago, so it
 * is cold when its turn comes, and the packets of a bucket, pushed in no
 * order, are found only by following the list, one miss after the other.
 * The prefetch cursors (pf_step()) walk the next buckets' lists, a
 * packet per removal, prefetching each packet and the bucket words
 * ahead, so that a bucket's sort and the dequeues after it find their
 * packets in the cache; pend does the same for enqueue's bucket word.
 * Figures: docs/benchmarks.md ("netem's time-ordered queue").  Memory:
 * 8 bytes and 1 bit a bucket, 64 to 65536 buckets (up to 520 KiB), from
 * init; nothing is allocated afterwards.
 *
 * Why a calendar.  The kernel's rbtree and the pairing heap that was here
 * before cost O(log n) a packet, and each level is a packet that arrived
 * long ago: log n cache misses, one after the other, per departure.  A
 * hierarchical timer wheel would move a packet from level to level as its
 * time nears (a miss each time).  The calendar files a packet once, by
 * its time, touches it again only when its bucket comes due, just before
 * it leaves, and keeps the order exact by sorting each bucket when it
 * becomes the first, the heap catching what its span cannot hold.
 *
 * Threads and locks: no lock here; the caller's lock is netem's, the root
 * lock of the qdisc's TX queue (qlock.c), held around every call but init
 * and destroy: enqueue on the thread sending (pw_dev_queue_xmit(), or a
 * duplicate re-entering the root), peek and erase on whichever thread runs
 * the queue (the sender, NET_TX, or the CPU whose watchdog hrtimer fired),
 * set_span from netem's change() and flush from its reset() on tc's
 * thread (or the device's teardown); init runs before the qdisc is
 * reachable and destroy after, without the lock.  Nothing here blocks,
 * reads a clock or allocates but init.
 */
#include "tfifo.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the heap */

/* Link two heap roots: the later becomes the earlier's first child. */
static struct pw_pkt *ph_link(struct pw_pkt *a, struct pw_pkt *b)
{
	if (pw__tfifo_before(b, a)) {
		struct pw_pkt *t = a;
		a = b;
		b = t;
	}
	b->pw_right = a->pw_left;
	a->pw_left = b;
	return a;
}

/* The root of the tree made of the sibling list starting at @first: pairs
 * linked left to right, then the pairs right to left. */
static struct pw_pkt *ph_merge_pairs(struct pw_pkt *first)
{
	struct pw_pkt *acc = NULL; /* the pairs, last first, through pw_right */
	while (first) {
		struct pw_pkt *a = first, *b = a->pw_right;
		if (!b) {
			a->pw_right = acc;
			acc = a;
			break;
		}
		first = b->pw_right;
		a->pw_right = b->pw_right = NULL;
		a = ph_link(a, b);
		a->pw_right = acc;
		acc = a;
	}
	struct pw_pkt *root = NULL;
	while (acc) {
		struct pw_pkt *next = acc->pw_right;
		acc->pw_right = NULL;
		root = root ? ph_link(root, acc) : acc;
		acc = next;
	}
	return root;
}

static void heap_insert(struct pw__tfifo *tf, struct pw_pkt *p)
{
	p->pw_next = p->pw_left = p->pw_right = NULL;
	tf->root = tf->root ? ph_link(tf->root, p) : p;
	tf->heap_count++;
}

/* ---------------------------------------------------- the calendar */

static void bm_set(struct pw__tfifo *tf, uint32_t i)
{
	tf->l0[i >> 6] |= 1ull << (i & 63);
	tf->l1[i >> 12] |= 1ull << ((i >> 6) & 63);
}

static void bm_clear(struct pw__tfifo *tf, uint32_t i)
{
	if (!(tf->l0[i >> 6] &= ~(1ull << (i & 63))))
		tf->l1[i >> 12] &= ~(1ull << ((i >> 6) & 63));
}

/* The first non-empty bucket at or after @i (< nb), or nb. */
static uint32_t bm_find(const struct pw__tfifo *tf, uint32_t i)
{
	uint32_t nw = tf->nb >> 6, w = i >> 6;
	uint64_t m = tf->l0[w] & (~0ull << (i & 63));
	if (m)
		return (w << 6) | (uint32_t)__builtin_ctzll(m);
	for (uint32_t j = w + 1; j < nw; j = ((j >> 6) + 1) << 6) {
		uint64_t m1 = tf->l1[j >> 6] & (~0ull << (j & 63));
		if (m1) {
			uint32_t k = (j & ~63u) | (uint32_t)__builtin_ctzll(m1);
			return (k << 6) | (uint32_t)__builtin_ctzll(tf->l0[k]);
		}
	}
	return tf->nb;
}

/* Merge two lists sorted by key. */
static struct pw_pkt *merge(struct pw_pkt *a, struct pw_pkt *b)
{
	struct pw_pkt *head, **pp = &head;
	while (a && b) {
		if (pw__tfifo_before(b, a)) {
			*pp = b;
			pp = &b->pw_next;
			b = b->pw_next;
		} else {
			*pp = a;
			pp = &a->pw_next;
			a = a->pw_next;
		}
	}
	*pp = a ? a : b;
	return head;
}

/* Sort a bucket by key: bottom-up merge sort, bins[i] a sorted run of 2^i
 * packets (or NULL).  A single packet costs one test. */
static struct pw_pkt *sort_bucket(struct pw_pkt *l)
{
	if (!l->pw_next)
		return l;
	struct pw_pkt *bins[32];
	unsigned used = 0;
	while (l) {
		struct pw_pkt *run = l;
		l = l->pw_next;
		run->pw_next = NULL;
		unsigned i = 0;
		for (; i < used && bins[i]; i++) {
			run = merge(bins[i], run);
			bins[i] = NULL;
		}
		if (i == used)
			used++;
		bins[i] = run;
	}
	struct pw_pkt *out = NULL;
	for (unsigned i = 0; i < used; i++)
		if (bins[i])
			out = out ? merge(bins[i], out) : bins[i];
	return out;
}

/* The prefetch cursors start again from the start (pf_step()). */
static void pf_reset(struct pw__tfifo *tf)
{
	for (unsigned k = 0; k < PW_TFIFO_CURSORS; k++)
		tf->pf[k].p = NULL;
	tf->pf_front = tf->cur;
}

/* Put @p in the calendar.  Return: false when its span cannot hold it. */
static bool cal_insert(struct pw__tfifo *tf, struct pw_pkt *p)
{
	uint64_t t = p->pw_time_to_send, b = t >> tf->shift;
	uint32_t mask = tf->nb - 1;
	if (!tf->cal_count) {
		tf->cur = b;
		tf->cal_max = t;
		pf_reset(tf);
	} else if (b == tf->cur) {
		/* the current bucket is sorted: after every key not later */
		struct pw_pkt **pp = &tf->bkt[b & mask];
		while (*pp && (*pp)->pw_time_to_send <= t)
			pp = &(*pp)->pw_next;
		p->pw_next = *pp;
		*pp = p;
		tf->cal_count++;
		if (t > tf->cal_max)
			tf->cal_max = t;
		return true;
	} else if (b > tf->cur) {
		if (b - tf->cur >= tf->nb)
			return false;
		if (t > tf->cal_max)
			tf->cal_max = t;
	} else {
		/* earlier than the first: the new start, if the latest stays
		 * within nb buckets (then bucket b mod nb is empty) */
		if ((tf->cal_max >> tf->shift) - b >= tf->nb)
			return false;
		tf->cur = b;
		pf_reset(tf); /* their buckets may be behind the old start */
	}
	uint32_t i = (uint32_t)(b & mask);
	p->pw_next = tf->bkt[i];
	tf->bkt[i] = p;
	bm_set(tf, i);
	tf->cal_count++;
	return true;
}

/* How far past the start (cur) the first non-empty bucket after absolute
 * bucket @b (cur <= b < cur + nb) is; nb when none is. */
static uint64_t next_bucket(const struct pw__tfifo *tf, uint64_t b)
{
	uint32_t mask = tf->nb - 1, i = (uint32_t)(b & mask);
	uint32_t j = i + 1 < tf->nb ? bm_find(tf, i + 1) : tf->nb;
	if (j == tf->nb)
		j = bm_find(tf, 0); /* wrapped: the span is [cur, cur + nb) */
	if (j == tf->nb)
		return tf->nb;
	uint64_t d = b - tf->cur + ((j - i - 1) & mask) + 1;
	return d < tf->nb ? d : tf->nb;
}

/* Every cache line of @p, however it is aligned (addresses less than a
 * line apart, first and last byte included: three for its 96 bytes): the
 * sort reads its links and key, dequeue its length. */
static void prefetch_pkt(const struct pw_pkt *p)
{
	const char *c = (const char *)p;
	for (size_t off = 0; off < sizeof(*p); off += 48)
		__builtin_prefetch(c + off);
	__builtin_prefetch(c + sizeof(*p) - 1);
}

/*
 * One step of the prefetch cursors, after each removal from the calendar,
 * so that when a bucket becomes current its packets (cold: they came a
 * delay ago) are in the cache for its sort and the dequeues after it.  A
 * bucket's packets are found only by following its list, and a cursor can
 * read a packet's link only once the prefetch of that packet has landed;
 * so PW_TFIFO_CURSORS cursors walk as many buckets' lists at once, in
 * turn, a step each, which leaves each prefetch that many removals to
 * land, and together they go a packet per removal, as fast as packets
 * leave.  A cursor that finishes its bucket takes the next non-empty one
 * after the front (the last taken), at most PF_AHEAD buckets ahead of the
 * current one.  A cursor stays in a bucket after the current one, whose
 * list changes only at its head, so its packet is queued; one whose
 * bucket has become current (sorted, then emptied) is not read, but takes
 * a new bucket.  A packet that moves the start down, or comes to an empty
 * calendar, sends them all back to the start (pf_reset()): a cursor's
 * bucket that became current and emptied would be after the new start.
 */
#define PF_AHEAD 64
#define PF_BKT_AHEAD 16

static void pf_step(struct pw__tfifo *tf)
{
	unsigned k = tf->pf_next;
	tf->pf_next = (k + 1) % PW_TFIFO_CURSORS;
	struct pw_pkt *p = NULL;
	if (tf->pf[k].p && tf->pf[k].b > tf->cur)
		p = tf->pf[k].p->pw_next;
	if (!p) {
		if (tf->pf_front < tf->cur)
			tf->pf_front = tf->cur;
		uint64_t d = next_bucket(tf, tf->pf_front);
		if (d > PF_AHEAD || d >= tf->nb) {
			tf->pf[k].p = NULL; /* nothing near: try again later */
			return;
		}
		tf->pf_front = tf->cur + d;
		tf->pf[k].b = tf->pf_front;
		p = tf->bkt[tf->pf_front & (tf->nb - 1)];
		/* and the bucket words two lines on: the cursors read them
		 * too slowly for the hardware's stream prefetch */
		__builtin_prefetch(&tf->bkt[(tf->pf_front + PF_BKT_AHEAD) & (tf->nb - 1)]);
	}
	prefetch_pkt(p);
	tf->pf[k].p = p;
}

/* Remove the calendar's first; if its bucket empties, the next non-empty
 * one becomes current and is sorted. */
static void cal_erase_first(struct pw__tfifo *tf, struct pw_pkt *p)
{
	uint32_t i = (uint32_t)(tf->cur & (tf->nb - 1));
	tf->bkt[i] = p->pw_next;
	tf->cal_count--;
	if (!tf->bkt[i]) {
		bm_clear(tf, i);
		if (!tf->cal_count)
			return;
		tf->cur += next_bucket(tf, tf->cur);
		i = (uint32_t)(tf->cur & (tf->nb - 1));
		tf->bkt[i] = sort_bucket(tf->bkt[i]);
	}
	pf_step(tf);
}

/* -------------------------------------------------------- the tfifo */

/* The calendar's buckets for @buckets asked, and its bitmap's words. */
static uint32_t cal_buckets(uint32_t buckets, uint32_t *n0, uint32_t *n1)
{
	uint32_t nb = PW_TFIFO_MIN_BUCKETS;
	while (nb < buckets && nb < PW_TFIFO_MAX_BUCKETS)
		nb <<= 1;
	*n0 = nb >> 6;
	*n1 = (*n0 + 63) >> 6;
	return nb;
}

size_t pw__tfifo_size(uint32_t buckets)
{
	uint32_t n0, n1, nb = cal_buckets(buckets, &n0, &n1);
	return (size_t)nb * sizeof(((struct pw__tfifo *)0)->bkt[0]) +
	       (size_t)(n0 + n1) * sizeof(uint64_t);
}

int pw__tfifo_init(struct pw__tfifo *tf, uint32_t buckets)
{
	memset(tf, 0, sizeof(*tf));
	uint32_t n0, n1, nb = cal_buckets(buckets, &n0, &n1);
	tf->bkt = calloc(nb, sizeof(*tf->bkt));
	tf->l0 = calloc(n0 + n1, sizeof(uint64_t));
	if (!tf->bkt || !tf->l0) {
		free(tf->bkt);
		free(tf->l0);
		tf->bkt = NULL;
		tf->l0 = NULL;
		return -ENOMEM;
	}
	tf->l1 = tf->l0 + n0;
	tf->nb = nb;
	return 0;
}

void pw__tfifo_destroy(struct pw__tfifo *tf)
{
	free(tf->bkt);
	free(tf->l0);
	tf->bkt = NULL;
	tf->l0 = tf->l1 = NULL;
	tf->nb = 0;
}

void pw__tfifo_set_span(struct pw__tfifo *tf, uint64_t span_ns)
{
	uint64_t width = span_ns / tf->nb + (span_ns % tf->nb != 0);
	unsigned shift = width <= 1 ? 0 : 64u - (unsigned)__builtin_clzll(width - 1);
	if (shift == tf->shift)
		return;
	/* the buckets no longer say where a packet is: the heap takes them */
	for (uint32_t i = tf->cal_count ? bm_find(tf, 0) : tf->nb; i < tf->nb;
	     i = i + 1 < tf->nb ? bm_find(tf, i + 1) : tf->nb) {
		struct pw_pkt *p = tf->bkt[i];
		tf->bkt[i] = NULL;
		while (p) {
			struct pw_pkt *next = p->pw_next;
			heap_insert(tf, p);
			p = next;
		}
	}
	memset(tf->l0, 0, ((tf->nb >> 6) + ((tf->nb >> 6) + 63) / 64) * sizeof(uint64_t));
	tf->cal_count = 0;
	tf->shift = shift;
}

static void file(struct pw__tfifo *tf, struct pw_pkt *p)
{
	if (!cal_insert(tf, p))
		heap_insert(tf, p);
}

/* The packet waits in pend until the next one comes, while its bucket
 * word, cold most of the time, is prefetched. */
void pw__tfifo_enqueue_ooo(struct pw__tfifo *tf, struct pw_pkt *p)
{
	__builtin_prefetch(&tf->bkt[(p->pw_time_to_send >> tf->shift) & (tf->nb - 1)], 1);
	if (tf->pend)
		file(tf, tf->pend);
	tf->pend = p;
	tf->ooo++;
}

void pw__tfifo_erase_ooo(struct pw__tfifo *tf, struct pw_pkt *p)
{
	if (p == tf->pend) {
		tf->pend = NULL;
	} else if (p == tf->root) {
		tf->root = ph_merge_pairs(p->pw_left);
		tf->heap_count--;
	} else {
		cal_erase_first(tf, p);
	}
	tf->ooo--;
	p->pw_next = p->pw_left = p->pw_right = NULL;
}

bool pw__tfifo_last_ns(const struct pw__tfifo *tf, uint64_t *t)
{
	/* every out-of-order packet is earlier than the tail (the essay) */
	if (!tf->tail)
		return false;
	*t = tf->tail_ns;
	return true;
}

struct pw_pkt *pw__tfifo_flush_one(struct pw__tfifo *tf)
{
	if (tf->pend) {
		file(tf, tf->pend);
		tf->pend = NULL;
	}
	struct pw_pkt *c = tf->cal_count ? pw__tfifo_cal_first(tf) : NULL, *h = tf->root, *p;
	if (c || h) {
		p = !h || (c && pw__tfifo_before(c, h)) ? c : h;
		pw__tfifo_erase_ooo(tf, p);
		return p;
	}
	p = tf->head;
	if (p)
		pw__tfifo_erase_head(tf, p);
	return p;
}

uint64_t pw__tfifo_count(const struct pw__tfifo *tf)
{
	uint64_t n = tf->ooo;
	for (const struct pw_pkt *p = tf->head; p; p = p->pw_next)
		n++;
	return n;
}

/* ------------------------------------------------------------ checks */

static int fail(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(const char *who, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "pinwheel check %s: tfifo: ", who);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return -EFAULT;
}

static bool bit(const uint64_t *m, uint32_t i)
{
	return (m[i >> 6] >> (i & 63)) & 1;
}

/* What every out-of-order packet must satisfy. */
static int check_ooo(const struct pw__tfifo *tf, const struct pw_pkt *p, const char *who)
{
	if (p->pw_time_to_send >= tf->tail_ns)
		return fail(who, "out-of-order time %llu not before the tail's %llu",
			    (unsigned long long)p->pw_time_to_send, (unsigned long long)tf->tail_ns);
	if (p->pw_seq >= tf->seq)
		return fail(who, "out-of-order packet with seq %llu, next seq %llu",
			    (unsigned long long)p->pw_seq, (unsigned long long)tf->seq);
	return 0;
}

static int check_list(const struct pw__tfifo *tf, const char *who)
{
	if (!tf->head != !tf->tail)
		return fail(who, "head %p, tail %p", (void *)tf->head, (void *)tf->tail);
	if (tf->tail && tf->tail_ns != tf->tail->pw_time_to_send)
		return fail(who, "tail_ns %llu, the tail's time %llu", (unsigned long long)tf->tail_ns,
			    (unsigned long long)tf->tail->pw_time_to_send);
	for (const struct pw_pkt *p = tf->head; p; p = p->pw_next) {
		if (p->pw_seq >= tf->seq)
			return fail(who, "list packet with seq %llu, next seq %llu",
				    (unsigned long long)p->pw_seq, (unsigned long long)tf->seq);
		if (!p->pw_next && p != tf->tail)
			return fail(who, "the list ends before its tail");
		if (p->pw_next && (p->pw_next->pw_time_to_send < p->pw_time_to_send ||
				   p->pw_next->pw_seq <= p->pw_seq))
			return fail(who, "list out of order at time %llu",
				    (unsigned long long)p->pw_time_to_send);
	}
	if (tf->ooo != tf->cal_count + tf->heap_count + (tf->pend != NULL))
		return fail(who, "ooo %u, %u in the calendar, %u in the heap, pend %p", tf->ooo,
			    tf->cal_count, tf->heap_count, (void *)tf->pend);
	if (tf->ooo && !tf->tail)
		return fail(who, "%u out-of-order packets with an empty list", tf->ooo);
	if (tf->pend)
		return check_ooo(tf, tf->pend, who);
	return 0;
}

static int check_calendar(const struct pw__tfifo *tf, const char *who)
{
	if (!tf->bkt)
		return tf->cal_count || tf->nb
			       ? fail(who, "no buckets, nb %u, %u packets", tf->nb, tf->cal_count)
			       : 0;
	uint32_t mask = tf->nb - 1, n = 0, n0 = tf->nb >> 6;
	uint64_t max = 0;
	if (tf->nb < PW_TFIFO_MIN_BUCKETS || tf->nb > PW_TFIFO_MAX_BUCKETS || (tf->nb & mask))
		return fail(who, "%u buckets", tf->nb);
	for (uint32_t w = 0; w < ((n0 + 63) & ~63u); w++)
		if (bit(tf->l1, w) != (w < n0 && tf->l0[w] != 0))
			return fail(who, "l1 bit %u", w);
	const struct pw_pkt *first = tf->cal_count ? pw__tfifo_cal_first(tf) : NULL;
	if (tf->cal_count && !first)
		return fail(who, "%u packets, the current bucket empty", tf->cal_count);
	for (uint32_t i = 0; i < tf->nb; i++) {
		if (bit(tf->l0, i) != (tf->bkt[i] != NULL))
			return fail(who, "bucket %u: bit %d, list %p", i, bit(tf->l0, i),
				    (void *)tf->bkt[i]);
		bool current = first && i == (uint32_t)(tf->cur & mask);
		for (const struct pw_pkt *p = tf->bkt[i]; p; p = p->pw_next) {
			uint64_t t = p->pw_time_to_send, b = t >> tf->shift;
			if (++n > tf->cal_count)
				return fail(who, "more packets than cal_count %u", tf->cal_count);
			if ((uint32_t)(b & mask) != i || b < tf->cur || b - tf->cur >= tf->nb)
				return fail(who, "time %llu in bucket %u, start %llu, shift %u",
					    (unsigned long long)t, i, (unsigned long long)tf->cur,
					    tf->shift);
			int rc = check_ooo(tf, p, who);
			if (rc)
				return rc;
			if (current && p->pw_next && !pw__tfifo_before(p, p->pw_next))
				return fail(who, "current bucket %u not sorted", i);
			if (!current && pw__tfifo_before(p, first))
				return fail(who, "time %llu before the current bucket's first",
					    (unsigned long long)t);
			if (t > max)
				max = t;
		}
	}
	if (n != tf->cal_count)
		return fail(who, "%u packets in the buckets, cal_count %u", n, tf->cal_count);
	if (n && max != tf->cal_max)
		return fail(who, "calendar latest %llu, cal_max %llu", (unsigned long long)max,
			    (unsigned long long)tf->cal_max);
	for (unsigned k = 0; n && k < PW_TFIFO_CURSORS; k++) {
		if (!tf->pf[k].p || tf->pf[k].b <= tf->cur)
			continue; /* none, or stale: not read again */
		/* a queued packet in its bucket (a packet that lowered the
		 * start may have put it more than PF_AHEAD on) */
		const struct pw_pkt *p = tf->pf[k].b - tf->cur < tf->nb
						 ? tf->bkt[tf->pf[k].b & mask]
						 : NULL;
		while (p && p != tf->pf[k].p)
			p = p->pw_next;
		if (!p)
			return fail(who, "prefetch cursor %u is not in its bucket %llu (start %llu)", k,
				    (unsigned long long)tf->pf[k].b, (unsigned long long)tf->cur);
	}
	return 0;
}

/* Each child not before its parent; an explicit stack (a pairing heap
 * can be a chain as deep as it is large). */
static int check_heap(const struct pw__tfifo *tf, const char *who)
{
	if (!tf->root)
		return tf->heap_count ? fail(who, "no heap, heap_count %u", tf->heap_count) : 0;
	if (tf->root->pw_right)
		return fail(who, "the heap's root has a sibling");
	const struct pw_pkt **stack = malloc(sizeof(*stack) * ((size_t)tf->heap_count + 1));
	if (!stack)
		return fail(who, "no memory for the check");
	uint32_t n = 0, top = 0;
	int rc = 0;
	stack[top++] = tf->root;
	while (top && !rc) {
		const struct pw_pkt *p = stack[--top];
		if (++n > tf->heap_count) {
			rc = fail(who, "more packets in the heap than heap_count %u", tf->heap_count);
			break;
		}
		rc = check_ooo(tf, p, who);
		for (const struct pw_pkt *c = p->pw_left; c && !rc; c = c->pw_right) {
			if (pw__tfifo_before(c, p))
				rc = fail(who, "heap child before its parent");
			else if (top >= tf->heap_count)
				rc = fail(who, "heap larger than heap_count %u", tf->heap_count);
			else
				stack[top++] = c;
		}
	}
	free(stack);
	if (rc)
		return rc;
	if (n != tf->heap_count)
		return fail(who, "%u packets in the heap, heap_count %u", n, tf->heap_count);
	return 0;
}

int pw__tfifo_check(const struct pw__tfifo *tf, const char *who)
{
	int rc = check_list(tf, who);
	if (!rc)
		rc = check_calendar(tf, who);
	if (!rc)
		rc = check_heap(tf, who);
	return rc;
}
