/* SPDX-License-Identifier: MIT */
/*
 * Reference design for the benchmark: a d-ary min-heap of timer pointers
 * with the index stored in each timer (what event loops such as libevent
 * and libuv use, with d = 2), single-threaded, no locking.  d = 4 is the
 * variant the hrtimer issue asked to weigh against the red-black tree.
 * Not part of the library.
 */
#define _GNU_SOURCE
#include "ref_heap.h"

#include <stdlib.h>

static inline int before(const struct ref_heap *h, unsigned a, unsigned b)
{
	/* ties by sequence: FIFO among equal keys, like pinwheel's hrtimers */
	const struct ref_timer *x = h->v[a], *y = h->v[b];
	return x->key < y->key || (x->key == y->key && x->seq < y->seq);
}

static inline void place(struct ref_heap *h, unsigned i, struct ref_timer *t)
{
	h->v[i] = t;
	t->idx = i;
}

static void sift_up(struct ref_heap *h, unsigned i)
{
	struct ref_timer *t = h->v[i];
	while (i > 0) {
		unsigned p = (i - 1) / h->d;
		h->v[i] = t; /* compare t against the parent in place */
		if (!before(h, i, p))
			break;
		place(h, i, h->v[p]);
		i = p;
	}
	place(h, i, t);
}

static void sift_down(struct ref_heap *h, unsigned i)
{
	struct ref_timer *t = h->v[i];
	for (;;) {
		unsigned c = i * h->d + 1, best = i;
		if (c >= h->n)
			break;
		unsigned end = c + h->d < h->n ? c + h->d : h->n;
		h->v[i] = t;
		for (unsigned k = c; k < end; k++)
			if (before(h, k, best))
				best = k;
		if (best == i)
			break;
		place(h, i, h->v[best]);
		i = best;
		h->v[i] = t;
	}
	place(h, i, t);
}

int ref_heap_init(struct ref_heap *h, unsigned d, unsigned cap)
{
	h->d = d;
	h->n = 0;
	h->cap = cap;
	h->seq = 0;
	h->v = malloc((size_t)cap * sizeof(*h->v));
	return h->v ? 0 : -1;
}

void ref_heap_free(struct ref_heap *h)
{
	free(h->v);
	h->v = NULL;
}

void ref_heap_remove(struct ref_heap *h, struct ref_timer *t)
{
	if (t->idx == REF_NOT_QUEUED)
		return;
	unsigned i = t->idx;
	struct ref_timer *last = h->v[--h->n];
	t->idx = REF_NOT_QUEUED;
	if (i == h->n)
		return;
	place(h, i, last);
	if (i > 0 && before(h, i, (i - 1) / h->d))
		sift_up(h, i);
	else
		sift_down(h, i);
}

void ref_heap_add(struct ref_heap *h, struct ref_timer *t, uint64_t key)
{
	t->key = key;
	t->seq = h->seq++;
	place(h, h->n++, t);
	sift_up(h, t->idx);
}

void ref_heap_update(struct ref_heap *h, struct ref_timer *t, uint64_t key)
{
	ref_heap_remove(h, t);
	ref_heap_add(h, t, key);
}

unsigned ref_heap_expire(struct ref_heap *h, uint64_t now)
{
	unsigned n = 0;
	while (h->n && h->v[0]->key <= now) {
		struct ref_timer *t = h->v[0];
		ref_heap_remove(h, t);
		t->fn(t);
		n++;
	}
	return n;
}
