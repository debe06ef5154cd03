/* SPDX-License-Identifier: MIT */
/*
 * A 4-ary min-heap with the index stored in each timer: the queue of a
 * CPU's hrtimers on one clock.
 *
 * Why a heap and not the kernel's red-black tree: measured.  pinwheel-bench
 * ran both (the tree was this queue's first implementation) on the same
 * workloads: re-starting a random timer to a random deadline cost the tree
 * several times what it costs the heap, and more so the more timers were
 * queued (the figures, with the command: docs/benchmarks.md, "Figures that
 * were in source comments").  Why, and what either cost depends on:
 * a tree re-start is a root-to-leaf descent with a hard-to-predict branch
 * and, on a big queue, a cache miss per level (20 levels at 1e6); a heap
 * entry for a random deadline moves up about one level on insert, and the
 * entry that fills a hole moves a few levels at most, with four children
 * in one cache line.  Equal deadlines keep start order through a sequence
 * number compared on ties (the tree got that from its insert rule).
 *
 * What the heap costs: an array, so a start may have to grow it (doubling;
 * amortized O(1), under the base lock) and can fail with -ENOMEM, which a
 * tree never does.  The base keeps one spare slot at all times, so a
 * callback that returns RESTART can always be re-queued (its timer left the
 * heap before the callback ran; see hrtimer.c).
 *
 * Layout: entries are (deadline, timer), 16 bytes, so comparisons never
 * touch the timers (except on equal deadlines); the array is placed so that
 * the four children of every node share one 64-byte line.
 *
 * Invariants (pw__hheap_check()): each entry is not before its parent by
 * (deadline, start order); each timer's pw_idx is its position; each key
 * is its timer's deadline; cap >= n + 1 (the spare slot).
 * Costs: first O(1); insert and remove O(log4 n) worst, O(1) typical.
 * No locking here.
 */
#include "hrheap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define D 4
#define LINE 64
#define ENTS_PER_LINE (LINE / sizeof(struct pw__hheap_ent))

static inline bool before(const struct pw__hheap_ent *a, const struct pw__hheap_ent *b)
{
	return a->key < b->key || (a->key == b->key && a->t->pw_seq < b->t->pw_seq);
}

static inline void put(struct pw__hheap *h, uint32_t i, struct pw__hheap_ent e)
{
	h->v[i] = e;
	e.t->pw_idx = i;
}

static void sift_up(struct pw__hheap *h, uint32_t i, struct pw__hheap_ent e)
{
	while (i > 0) {
		uint32_t p = (i - 1) / D;
		if (!before(&e, &h->v[p]))
			break;
		put(h, i, h->v[p]);
		i = p;
	}
	put(h, i, e);
}

static void sift_down(struct pw__hheap *h, uint32_t i, struct pw__hheap_ent e)
{
	for (;;) {
		uint32_t c = i * D + 1;
		if (c >= h->n)
			break;
		uint32_t end = c + D < h->n ? c + D : h->n, best = c;
		for (uint32_t k = c + 1; k < end; k++)
			if (before(&h->v[k], &h->v[best]))
				best = k;
		if (!before(&h->v[best], &e))
			break;
		put(h, i, h->v[best]);
		i = best;
	}
	put(h, i, e);
}

int pw__hheap_reserve(struct pw__hheap *h)
{
	if (h->cap >= h->n + 2)
		return 0;
	uint32_t cap = h->cap ? h->cap * 2 : 64;
	if (cap < h->cap)
		return -ENOMEM;
	/* Entry i lives at line offset (i + 3) * 16, so children 4i+1..4i+4
	 * start at (4i + 4) * 16 = 64 (i + 1): one line each group. */
	size_t bytes = ((size_t)cap + ENTS_PER_LINE) * sizeof(struct pw__hheap_ent);
	bytes = (bytes + LINE - 1) / LINE * LINE;
	void *mem = aligned_alloc(LINE, bytes);
	if (!mem)
		return -ENOMEM;
	struct pw__hheap_ent *v = (struct pw__hheap_ent *)mem + (ENTS_PER_LINE - 1);
	if (h->n)
		memcpy(v, h->v, h->n * sizeof(*v));
	free(h->mem);
	h->mem = mem;
	h->v = v;
	h->cap = cap;
	return 0;
}

void pw__hheap_insert(struct pw__hheap *h, struct pw_hrtimer *t)
{
	struct pw__hheap_ent e = {t->pw_expires, t};
	t->pw_seq = h->seq++;
	uint32_t i = h->n;
	__atomic_store_n(&h->n, i + 1, __ATOMIC_RELAXED); /* glanced at lockless */
	sift_up(h, i, e);
}

void pw__hheap_remove(struct pw__hheap *h, struct pw_hrtimer *t)
{
	uint32_t i = t->pw_idx, n = h->n - 1;
	t->pw_idx = PW_HHEAP_NONE;
	__atomic_store_n(&h->n, n, __ATOMIC_RELAXED);
	if (i == n)
		return;
	struct pw__hheap_ent last = h->v[n];
	if (i > 0 && before(&last, &h->v[(i - 1) / D]))
		sift_up(h, i, last);
	else
		sift_down(h, i, last);
}

void pw__hheap_free(struct pw__hheap *h)
{
	free(h->mem);
	memset(h, 0, sizeof(*h));
}

int pw__hheap_check(const struct pw__hheap *h, const char *who)
{
	if (h->n && h->cap < h->n + 1) {
		fprintf(stderr, "pinwheel check %s: heap of %u has capacity %u: no spare slot\n",
			who, h->n, h->cap);
		return -EFAULT;
	}
	for (uint32_t i = 0; i < h->n; i++) {
		const struct pw__hheap_ent *e = &h->v[i];
		if (e->t->pw_idx != i || e->key != e->t->pw_expires) {
			fprintf(stderr, "pinwheel check %s: heap entry %u: timer index %u, key %llu, "
					"deadline %llu\n", who, i, e->t->pw_idx,
				(unsigned long long)e->key, (unsigned long long)e->t->pw_expires);
			return -EFAULT;
		}
		if (i > 0 && before(e, &h->v[(i - 1) / D])) {
			fprintf(stderr, "pinwheel check %s: heap entry %u before its parent\n", who, i);
			return -EFAULT;
		}
	}
	return 0;
}
