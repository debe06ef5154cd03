/* SPDX-License-Identifier: MIT */
/*
 * The time-ordered FIFO netem keeps (the kernel's tfifo: t_head/t_tail and
 * t_root in sch_netem.c): packets in order of time_to_send, FIFO among
 * equal times.  A pure data structure: no locking (netem calls it under
 * its root lock), no clock reads, no allocation but in init.  Design,
 * invariants and costs: tfifo.c.  For sched/netem.c and the tests.
 */
#ifndef PW_NET_SCHED_TFIFO_H
#define PW_NET_SCHED_TFIFO_H

#include <stdbool.h>
#include <stdint.h>

#include <pinwheel/net.h>

#define PW_TFIFO_MIN_BUCKETS 64u
#define PW_TFIFO_MAX_BUCKETS 65536u
#define PW_TFIFO_CURSORS 4

struct pw__tfifo {
	/* the in-order list: packets not earlier than the tail when they came */
	struct pw_pkt *head, *tail;   /* through pw_next */
	uint64_t tail_ns;             /* the tail's time_to_send (when tail) */
	uint32_t ooo;                 /* the others: cal_count + heap_count,
				       * + 1 with pend */
	struct pw_pkt *pend;          /* the latest of them, not yet filed */
	/* the calendar of the others: bucket i holds the packets with
	 * (time_to_send >> shift) mod nb == i, through pw_next; the current
	 * bucket (cur mod nb) sorted, the others in no order */
	struct pw_pkt **bkt;
	uint64_t *l0;                 /* a bit per non-empty bucket */
	uint64_t *l1;                 /* a bit per non-zero l0 word */
	uint32_t nb;                  /* buckets: a power of two */
	unsigned shift;               /* a bucket spans 2^shift ns */
	uint64_t cur;                 /* time >> shift of the calendar's first */
	uint64_t cal_max;             /* latest time_to_send in the calendar */
	uint32_t cal_count;
	struct {                      /* the prefetch cursors (tfifo.c) */
		struct pw_pkt *p;     /* the last packet prefetched, or NULL */
		uint64_t b;           /* its bucket: valid while b > cur */
	} pf[PW_TFIFO_CURSORS];
	uint64_t pf_front;            /* the last bucket a cursor took */
	unsigned pf_next;             /* the cursor the next step moves */
	/* the overflow: a pairing heap (pw_left: first child, pw_right: next
	 * sibling) of what the calendar's span cannot hold */
	struct pw_pkt *root;
	uint32_t heap_count;
	uint64_t seq;                 /* arrival counter: pw_seq */
};

/*
 * pw__tfifo_init() - an empty tfifo whose calendar has @buckets buckets
 * (rounded up to a power of two, clamped to [PW_TFIFO_MIN_BUCKETS,
 * PW_TFIFO_MAX_BUCKETS]): 8 bytes a bucket plus one bit, allocated here
 * and never again.  Each bucket spans 1 ns until pw__tfifo_set_span().
 * Context: any thread, @tf not yet shared.
 * Return: 0; -ENOMEM (nothing allocated).
 */
int pw__tfifo_init(struct pw__tfifo *tf, uint32_t buckets);

/* The bytes pw__tfifo_init(@buckets) allocates (what netem charges to
 * the runtime's budget before it, src/net/netmem.c).  Any thread. */
size_t pw__tfifo_size(uint32_t buckets);

/* pw__tfifo_destroy() - free what init allocated; @tf must be empty. */
void pw__tfifo_destroy(struct pw__tfifo *tf);

/*
 * pw__tfifo_set_span() - size the calendar's buckets so that it spans at
 * least @span_ns (the spread of the delays netem draws): the bucket width
 * is the least power of two that does.  Only speed depends on it, never
 * the order.  If the width changes, the packets in the calendar move to
 * the overflow heap (O(buckets + packets)).  Context: the owner's lock.
 */
void pw__tfifo_set_span(struct pw__tfifo *tf, uint64_t span_ns);

/* The out-of-order halves of enqueue and erase (tfifo.c). */
void pw__tfifo_enqueue_ooo(struct pw__tfifo *tf, struct pw_pkt *p);
void pw__tfifo_erase_ooo(struct pw__tfifo *tf, struct pw_pkt *p);

/* (time_to_send, arrival) order: keys are unique. */
static inline bool pw__tfifo_before(const struct pw_pkt *a, const struct pw_pkt *b)
{
	return a->pw_time_to_send < b->pw_time_to_send ||
	       (a->pw_time_to_send == b->pw_time_to_send && a->pw_seq < b->pw_seq);
}

/*
 * pw__tfifo_enqueue() - queue @p by its pw_time_to_send, after every
 * queued packet with an equal time (sets its pw_seq).  Context: the
 * owner's lock.  O(1) amortised (tfifo.c's Costs).
 */
static inline void pw__tfifo_enqueue(struct pw__tfifo *tf, struct pw_pkt *p)
{
	p->pw_seq = tf->seq++;
	if (!tf->tail || p->pw_time_to_send >= tf->tail_ns) {
		p->pw_next = NULL;
		if (tf->tail)
			tf->tail->pw_next = p;
		else
			tf->head = p;
		tf->tail = p;
		tf->tail_ns = p->pw_time_to_send;
	} else {
		pw__tfifo_enqueue_ooo(tf, p);
	}
}

/* The calendar's first packet (cal_count > 0). */
static inline struct pw_pkt *pw__tfifo_cal_first(const struct pw__tfifo *tf)
{
	return tf->bkt[tf->cur & (tf->nb - 1)];
}

/*
 * pw__tfifo_peek() - the first packet: the earliest time_to_send, the
 * earliest to arrive among equal times; NULL when empty.  (The kernel's
 * netem_peek(), which takes the list's head on a tie with the tree's
 * first: the list's is then always the earlier to arrive, tfifo.c.)
 * Context: the owner's lock.
 */
static inline struct pw_pkt *pw__tfifo_peek(const struct pw__tfifo *tf)
{
	struct pw_pkt *m = tf->head;
	if (!tf->ooo)
		return m; /* constant delay, rate: only the list */
	if (tf->cal_count) { /* out of order ones imply a list: m is set */
		struct pw_pkt *c = pw__tfifo_cal_first(tf);
		if (pw__tfifo_before(c, m))
			m = c;
	}
	if (tf->root && pw__tfifo_before(tf->root, m))
		m = tf->root;
	if (tf->pend && pw__tfifo_before(tf->pend, m))
		m = tf->pend;
	return m;
}

/*
 * pw__tfifo_erase_head() - remove @p, which pw__tfifo_peek() just
 * returned; its pw_next, pw_left and pw_right are left NULL.  Context:
 * the owner's lock.
 */
static inline void pw__tfifo_erase_head(struct pw__tfifo *tf, struct pw_pkt *p)
{
	if (p == tf->head) {
		tf->head = p->pw_next;
		if (!tf->head)
			tf->tail = NULL;
		p->pw_next = NULL;
	} else {
		pw__tfifo_erase_ooo(tf, p);
	}
}

/*
 * pw__tfifo_last_ns() - the latest time_to_send queued, in *@t (what the
 * kernel's rate code reads as the later of skb_rb_last() and t_tail: the
 * tail's, as every out-of-order packet is earlier).  O(1).
 * Context: the owner's lock.
 * Return: true; false when empty (*@t untouched).
 */
bool pw__tfifo_last_ns(const struct pw__tfifo *tf, uint64_t *t);

/*
 * pw__tfifo_flush_one() - remove and return the next packet in the order
 * the kernel's tfifo_reset() frees them: those out of order (its rbtree)
 * by time, then the list from its head; NULL when empty.  Context: the
 * owner's lock.
 */
struct pw_pkt *pw__tfifo_flush_one(struct pw__tfifo *tf);

/* Packets queued: O(1) for the calendar and heap, O(list) for the list
 * (tests). */
uint64_t pw__tfifo_count(const struct pw__tfifo *tf);

/*
 * pw__tfifo_check() - verify every invariant of tfifo.c's essay (O(n +
 * buckets); tests).  Context: the owner's lock.
 * Return: 0; -EFAULT with a message on stderr naming @who.
 */
int pw__tfifo_check(const struct pw__tfifo *tf, const char *who);

#endif /* PW_NET_SCHED_TFIFO_H */
