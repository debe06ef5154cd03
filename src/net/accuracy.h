/* SPDX-License-Identifier: MIT */
/*
 * Accuracy you can see: what a qdisc achieved (sojourn times, rate over
 * windows, random loss, its watchdogs' lateness), kept per qdisc while a
 * device's accuracy is on (pw_netdev_accuracy_enable()).  The kernel side's
 * half (accuracy.c): the counters and the hooks the core calls; tc's half
 * (tc/tc_accuracy.c) reads them beside each kind's configured values,
 * prints them and judges them.  For src/net only (dev.c, qdisc.c,
 * watchdog.c, accuracy.c, tc/tc_accuracy.c, the tests).
 *
 * Every field of struct pw__acc is written under the root lock of the
 * qdisc's queue and read under it (pw__acc_snapshot()).  q->acc itself is
 * set and cleared under cfg_lock and the root lock, so the data path,
 * which holds the root lock, reads it with a plain load.
 */
#ifndef PW_NET_ACCURACY_H
#define PW_NET_ACCURACY_H

#include "internal.h"

/*
 * A log-linear histogram of nanoseconds (HdrHistogram's layout): values
 * below 64 have a bucket each; above, each power of two [2^k, 2^(k+1)) is
 * cut into 64 equal buckets, so a bucket is at most 1/64 (1.6%) of its
 * values wide.  3776 buckets span all of uint64_t.
 */
#define PW__ACC_SUB_BITS 6
#define PW__ACC_SUB (1u << PW__ACC_SUB_BITS)
#define PW__ACC_NBUCKETS (PW__ACC_SUB + (64 - PW__ACC_SUB_BITS) * PW__ACC_SUB)

struct pw__acc_hist {
	uint64_t n;        /* the buckets' sum: kept by pw__acc_snapshot() only */
	uint64_t sum;      /* wraps after 584 years of sojourn: not checked */
	uint64_t min, max; /* UINT64_MAX and 0 while empty */
	uint64_t b[PW__ACC_NBUCKETS];
};

/* The bucket of @v, without a branch: with s = max(0, k - SUB_BITS) for
 * the power of two 2^k <= v (v | SUB makes k >= SUB_BITS, so values
 * below 2 * SUB get s = 0 and a bucket each), the bucket is the s-th run
 * of SUB buckets past the first plus the top SUB_BITS + 1 bits of v:
 * (s << SUB_BITS) + (v >> s).  One clz, two shifts and an add. */
static inline size_t pw__acc_bucket(uint64_t v)
{
	unsigned s = (63u - PW__ACC_SUB_BITS) - (unsigned)__builtin_clzll(v | PW__ACC_SUB);
	return ((size_t)s << PW__ACC_SUB_BITS) + (size_t)(v >> s);
}

/* Count @v in @h (the data path: no branch but min and max). */
static inline void pw__acc_hist_add(struct pw__acc_hist *h, uint64_t v)
{
	if (v < h->min)
		h->min = v;
	if (v > h->max)
		h->max = v;
	h->sum += v;
	h->b[pw__acc_bucket(v)]++;
}

/* The lowest value of bucket @i and its width (both >= 1).
 * Context: any thread; pure.  Return: none (in *@lo, *@width). */
void pw__acc_bucket_range(unsigned i, uint64_t *lo, uint64_t *width);

/* The value at quantile @p (0..1) of @h (n counted: a snapshot): the
 * midpoint of the bucket that holds the ceil(p * n)-th smallest value,
 * clamped to [min, max].  Context: any thread; @h is the caller's copy.
 * Return: ns; 0 when empty. */
uint64_t pw__acc_quantile(const struct pw__acc_hist *h, double p);

/* The rate windows: bytes released per window of window_ns, counted only
 * ("judged") when the qdisc held packets for the whole window and the
 * whole window before it (a shaper's burst leaves in the first), and
 * released something in the one before (a delay line is not a rate). */
struct pw__acc_win {
	uint64_t window_ns;
	uint64_t start;          /* the open window's start */
	uint64_t last;           /* start + window_ns - 1 (the open window's
				  * last ns), or 0 while idle: a release at
				  * now with now - 1 >= last takes the slow
				  * path (past the window, idle, or now 0:
				  * the clock not read yet, now - 1 wraps) */
	uint64_t bytes_base;     /* the qdisc's st.bytes (it counts each
				  * packet it releases) when the open window
				  * began: the window's bytes are the
				  * difference, so a release adds nothing */
	uint64_t busy_from;      /* the current backlog began (an estimate:
				  * the stamp of the first packet released
				  * after the qdisc went empty) */
	bool idle;               /* the last release left the qdisc empty */
	uint64_t prev_bytes;     /* released in the window before the open one */
	uint64_t judged, judged_bytes, min_bytes, max_bytes;
	uint64_t max_pkt;        /* the largest packet the slow path saw (one
				  * a window at least: the rate tolerance's) */
};

struct pw__acc {
	uint64_t since_ns;       /* counting since (enable, or the qdisc's
				  * first sync after its creation) */
	struct pw__acc_hist sojourn; /* enqueue into the tree -> release here */
	struct pw__acc_hist late;    /* watchdog fires: fired - requested */
	struct pw__acc_win win;
	uint64_t lost;           /* PW_DROP_NETEM_LOSS drops of this qdisc */
	uint64_t lost_unattributed; /* a root: losses of a tree with several
				     * netems (not split between them) */
	/* the qdisc's counters when counting began: offered = what was
	 * released, queued or dropped since */
	uint64_t base_packets, base_drops, base_qlen;
	uint64_t offered;        /* filled by pw__acc_snapshot() only */
};

/* Window length of the rate windows. */
#define PW__ACC_WINDOW_NS 100000000ull

/*
 * The hooks (the core calls them only when q->acc is set; root lock held).
 * pw__acc_enqueued(): after the root's enqueue of @pkt (dev.c), before
 * the queue runs: stamp @pkt with the clock reading that enqueue used,
 * plus one, and count the random losses among the drops of that one
 * enqueue (dev.c's list starts empty).  A netem duplicate, cloned inside
 * the enqueue, carries no stamp: it is not a sojourn sample.
 * pw__acc_release(): @p leaves @q (a root's
 * dequeue, or a child's through pw__qdisc_dequeue_peeked()).
 * pw__acc_fired(): @wd's timer fired (its qdisc and every ancestor with
 * accuracy on count the lateness).
 * Context: the data path (a transmit, a queue run, a watchdog callback),
 * the root lock held.  Return: none.
 */
void pw__acc_drops(struct pw__qdisc *q, const struct pw__drops *d);
static inline void pw__acc_enqueued(struct pw__qdisc *q, struct pw_pkt *pkt,
				    const struct pw__drops *d)
{
	uint64_t now = q->lock.now; /* most enqueues read the clock */
	pkt->pw_acc_ns = (now ? now : pw__net_now(q)) + 1;
	if (__builtin_expect(d->q.head != NULL, 0))
		pw__acc_drops(q, d);
}
/* @now: the root lock's reading, 0 when not read yet (read here). */
void pw__acc_release_slow(struct pw__qdisc *q, const struct pw_pkt *p, uint64_t now);
void pw__acc_fired(struct pw__watchdog *wd);

/* The common release (inline: it is most of accuracy's cost): inside the
 * open window, the qdisc busy, the clock read by this lock hold, the
 * packet stamped since counting began; else the slow path.  Per packet:
 * the sojourn's histogram (a bucket, the sum, min and max) and a test of
 * the backlog; the window's bytes come from the qdisc's own st.bytes
 * when a window closes (the slow path).  @root is @q's root (the caller
 * knows it: a root's own release passes @q).  A stamp is never from the
 * future: the stamp and @now are the one clock's readings under @root's
 * lock, the release's later (the slow path still checks). */
static inline void pw__acc_release(struct pw__qdisc *q, struct pw__qdisc *root,
				   const struct pw_pkt *p)
{
	struct pw__acc *a = q->acc;
	uint64_t now = root->lock.now; /* the dequeue read it, mostly */
	uint64_t stamp = p->pw_acc_ns;
	/* stamp <= since: no stamp (0), or one from before counting began */
	if (__builtin_expect(now - 1 >= a->win.last || stamp <= a->since_ns, 0)) {
		pw__acc_release_slow(q, p, now);
		return;
	}
	pw__acc_hist_add(&a->sojourn, now + 1 - stamp);
	if (q->st.qlen == 0) {
		a->win.idle = true;
		a->win.last = 0;
	}
}

/* @q's accuracy state made with @q (pw__qdisc_alloc(), before its init)
 * when its device keeps accuracy and its kind has figures: charged to the
 * runtime's budget as @how says (netmem.c), so a command
 * whose qdiscs the budget cannot hold with their figures fails whole.
 * Context: the tc thread, cfg_lock held, @q unreachable.
 * Return: 0 (made, or none wanted); -ENOBUFS (said to @ext); -ENOMEM. */
int pw__acc_prepare(struct pw__qdisc *q, enum pw__charge how, struct pw__extack *ext);

/* Free @q's accuracy state (teardown: @q is unreachable).
 * Context: the tc thread, cfg_lock held, no root lock.  Return: none. */
void pw__acc_free(struct pw__qdisc *q);

/* Give every qdisc of every device whose accuracy is on its state (after
 * a tc command that may have created some).  Takes cfg_lock and root
 * locks.  Context: any thread but a driver callback, neither held.
 * Return: none (a qdisc whose allocation failed stays without: shown
 * "off"). */
void pw__acc_sync(struct pw__net *net);

/* A copy of @q's state with the histograms' n counted (root lock taken
 * inside), or of the sum of its children for mq (no rate windows).
 * Context: any thread but a driver callback, cfg_lock held (the tree
 * stays).  Return: 0; -ENOENT when accuracy is off for @q; -ENOMEM. */
int pw__acc_snapshot(struct pw__qdisc *q, struct pw__acc *out);

#endif /* PW_NET_ACCURACY_H */
