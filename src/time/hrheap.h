/* SPDX-License-Identifier: MIT */
/*
 * The ordered queue of a CPU's hrtimers on one clock: a 4-ary min-heap of
 * (deadline, timer) entries, each timer holding its own index.  Design and
 * the measurement that chose it: heap.c.  No locking: the caller holds its
 * base lock for every call.
 */
#ifndef PW_TIME_HRHEAP_H
#define PW_TIME_HRHEAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/hrtimer.h>

#define PW_HHEAP_NONE 0xffffffffu /* pw_hrtimer.pw_idx of a timer not queued */

struct pw__hheap_ent {
	uint64_t key;          /* the timer's hard deadline, copied: compares stay in the array */
	struct pw_hrtimer *t;
};

struct pw__hheap {
	struct pw__hheap_ent *v; /* v[0] is the first; children of i: 4i+1 .. 4i+4 */
	void *mem;               /* the allocation v lives in (aligned, see heap.c) */
	uint32_t n, cap;
	uint64_t seq;            /* start order, for FIFO among equal deadlines */
};

/* Make room for one more entry.  Return: 0, or -ENOMEM (nothing changed). */
int pw__hheap_reserve(struct pw__hheap *h);

/* Insert @t (not queued) keyed by its pw_expires; room must be reserved. */
void pw__hheap_insert(struct pw__hheap *h, struct pw_hrtimer *t);

/* Remove the queued @t. */
void pw__hheap_remove(struct pw__hheap *h, struct pw_hrtimer *t);

static inline struct pw_hrtimer *pw__hheap_first(const struct pw__hheap *h)
{
	return h->n ? h->v[0].t : NULL;
}

void pw__hheap_free(struct pw__hheap *h);

/* Verify: heap order by (deadline, start order), each timer's index, keys
 * equal to the timers' deadlines.  Return: 0, or -EFAULT with a message. */
int pw__hheap_check(const struct pw__hheap *h, const char *who);

#endif /* PW_TIME_HRHEAP_H */
