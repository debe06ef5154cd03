/* SPDX-License-Identifier: MIT */
/* A d-ary min-heap reference design for pinwheel-bench (see ref_heap.c). */
#ifndef PW_BENCH_REF_HEAP_H
#define PW_BENCH_REF_HEAP_H

#include <stdint.h>

#define REF_NOT_QUEUED 0xffffffffu

struct ref_timer {
	uint64_t key;
	uint64_t seq;
	unsigned idx; /* position in the heap, or REF_NOT_QUEUED */
	void (*fn)(struct ref_timer *);
};

struct ref_heap {
	struct ref_timer **v;
	unsigned n, cap, d;
	uint64_t seq;
};

int ref_heap_init(struct ref_heap *h, unsigned d, unsigned cap);
void ref_heap_free(struct ref_heap *h);
void ref_heap_add(struct ref_heap *h, struct ref_timer *t, uint64_t key);
void ref_heap_remove(struct ref_heap *h, struct ref_timer *t);
void ref_heap_update(struct ref_heap *h, struct ref_timer *t, uint64_t key);
/* Run (and remove) every timer with key <= @now; return how many. */
unsigned ref_heap_expire(struct ref_heap *h, uint64_t now);

#endif
