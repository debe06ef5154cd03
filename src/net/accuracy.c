/* SPDX-License-Identifier: MIT */
/*
 * Accuracy you can see, the kernel side: per qdisc, what it achieved, so
 * that tc's side (tc/tc_accuracy.c) can print it beside what was
 * configured and judge it (`pinwheel-tc -A`, `-check`).  Reports of
 * emulated delay 2-5x the configured value go unnoticed because no tool
 * shows the achieved; this keeps, per qdisc of a device whose accuracy is
 * on (pw_netdev_accuracy_enable()):
 *
 *  - sojourn: from the packet's enqueue into the tree (its root's
 *    enqueue: every qdisc of a tree enqueues a packet within that one
 *    call, under one reading of the clock) to its release by this qdisc
 *    (a root's dequeue in the queue run, a child's through
 *    pw__qdisc_dequeue_peeked()), in a log-linear histogram with ns
 *    resolution (accuracy.h);
 *  - rate: bytes released per 100 ms window, judged only in windows in
 *    which the qdisc held packets throughout, and throughout the window
 *    before (a shaper's burst leaves in the first), which released
 *    something (a netem delay line holds packets without releasing);
 *  - loss: the qdisc's own random loss (PW_DROP_NETEM_LOSS drops) and
 *    what was offered to it (released + queued + dropped since counting
 *    began, from its own counters);
 *  - lateness: each watchdog fire's time less the time the qdisc asked
 *    for, counted by the qdisc that owns the watchdog and every ancestor
 *    with accuracy on: the host's share of the difference.
 *
 * Cost.  Off: the core's hooks are one branch each on q->acc (NULL), no
 * allocation, no stamp (pkt->pw_acc_ns is not written).  On: a stamp
 * after the root's enqueue (the clock reading that enqueue took), a walk
 * of the drops it made (when it made some), and per release by each
 * qdisc, inline (accuracy.h): two compares that keep the common case
 * (inside the open window, the clock read, the packet stamped since
 * counting began), the histogram (a branch-free bucket from one clz, the
 * sum, min and max) and a test of the backlog.  The rate windows cost a
 * release nothing: a window's bytes are the difference of the qdisc's
 * own st.bytes (which its kind's dequeue keeps) between the releases
 * that open and close it, taken on the out-of-line path with the rest (a
 * new window, a backlog after idle, the clock not read yet, an unstamped
 * packet).  60 kB of counters per qdisc.  docs/benchmarks.md "Accuracy's
 * cost (issue 25)" has the measured figures and their commands.
 *
 * One consequence of taking bytes from st.bytes: a packet a parent
 * peeked (dequeued from the kind, counted there) and then flushed instead
 * of released (a reset, a teardown) counts in the open window's bytes;
 * the window is closed by a later release, if any.
 *
 * Stamps are the clock plus one (0 = no stamp: a packet enqueued before
 * counting began, or under a root without accuracy), so that the
 * simulated clock's time 0 is a stamp.
 *
 * Threads and locks: the hooks run on the data path with the root lock
 * held; enable/disable and sync under cfg_lock, taking each root lock to
 * set or clear q->acc; the snapshot under the root lock.  Nothing here is
 * touched without the root lock once q->acc is set.
 */
#define _GNU_SOURCE
#include "accuracy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------------- histogram */

void pw__acc_bucket_range(unsigned i, uint64_t *lo, uint64_t *width)
{
	if (i < PW__ACC_SUB) {
		*lo = i;
		*width = 1;
		return;
	}
	unsigned j = i - PW__ACC_SUB;
	unsigned shift = j / PW__ACC_SUB; /* k - SUB_BITS */
	unsigned sub = j % PW__ACC_SUB;
	*lo = (uint64_t)(PW__ACC_SUB + sub) << shift;
	*width = 1ull << shift;
}

static void hist_init(struct pw__acc_hist *h)
{
	h->min = UINT64_MAX;
}

/* n from the buckets (the data path does not keep it). */
static void hist_count(struct pw__acc_hist *h)
{
	h->n = 0;
	for (unsigned i = 0; i < PW__ACC_NBUCKETS; i++)
		h->n += h->b[i];
}

static void hist_merge(struct pw__acc_hist *to, const struct pw__acc_hist *from)
{
	if (from->min < to->min)
		to->min = from->min;
	if (from->max > to->max)
		to->max = from->max;
	to->n += from->n;
	to->sum += from->sum;
	for (unsigned i = 0; i < PW__ACC_NBUCKETS; i++)
		to->b[i] += from->b[i];
}

uint64_t pw__acc_quantile(const struct pw__acc_hist *h, double p)
{
	if (!h->n)
		return 0;
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	double r = p * (double)h->n;
	uint64_t rank = (uint64_t)r;
	if ((double)rank < r)
		rank++;
	if (rank < 1)
		rank = 1;
	if (rank > h->n)
		rank = h->n;
	uint64_t cum = 0;
	for (unsigned i = 0; i < PW__ACC_NBUCKETS; i++) {
		cum += h->b[i];
		if (cum >= rank) {
			uint64_t lo, w;
			pw__acc_bucket_range(i, &lo, &w);
			uint64_t v = lo + (w - 1) / 2;
			if (v < h->min)
				v = h->min;
			if (v > h->max)
				v = h->max;
			return v;
		}
	}
	return h->max;
}

/* -------------------------------------------------------------- windows */

/* Close the window starting at @start with @bytes released in it.  Judged
 * when the qdisc was backlogged through it and the one before, and
 * released something in the one before (a netem delay line holds packets
 * without releasing: that is not a rate). */
static void win_close(struct pw__acc_win *w, uint64_t start, uint64_t bytes)
{
	uint64_t prev = w->prev_bytes;
	w->prev_bytes = bytes;
	if (start < w->busy_from + w->window_ns || !prev)
		return;
	if (w->judged == 0 || bytes < w->min_bytes)
		w->min_bytes = bytes;
	if (bytes > w->max_bytes)
		w->max_bytes = bytes;
	w->judged++;
	w->judged_bytes += bytes;
}

/* A release that the inline path left here: @released is the qdisc's
 * st.bytes before this packet (the bytes of every release since counting
 * began, and before); @len is this packet's. */
static void win_release(struct pw__acc_win *w, uint64_t now, uint64_t stamp, uint64_t released,
			uint32_t len, uint32_t qlen_after)
{
	if (w->idle) {
		/* the backlog began when its first packet came in (its stamp:
		 * packets without one were in before counting began) */
		w->busy_from = stamp ? stamp - 1 : now;
		w->idle = false;
	}
	uint64_t W = w->window_ns;
	if (now - w->start >= W) {
		win_close(w, w->start, released - w->bytes_base);
		uint64_t k = (now - w->start) / W; /* windows that ended */
		/* windows 1..k-1 after the open one released nothing: the
		 * first is judged (at 0 bytes: a backlog that stalled) when the
		 * one before released; the others follow an empty one */
		if (k > 1)
			win_close(w, w->start + W, 0);
		w->start += k * W;
		w->bytes_base = released;
	}
	if (len > w->max_pkt)
		w->max_pkt = len;
	if (qlen_after == 0)
		w->idle = true;
	w->last = w->idle ? 0 : w->start + W - 1;
}

/* ---------------------------------------------------------------- hooks */

/* Call @fn on @q and every qdisc under its classes. */
struct walk {
	void (*fn)(struct pw__qdisc *q, void *arg);
	void *arg;
};

static void walk_tree(struct pw__qdisc *q, struct walk *wk);

static int walk_cl(struct pw__qdisc *q, unsigned long cl, void *arg)
{
	struct pw__qdisc *leaf = q->ops->cl_ops->leaf ? q->ops->cl_ops->leaf(q, cl) : NULL;
	if (leaf)
		walk_tree(leaf, arg);
	return 0;
}

static void walk_tree(struct pw__qdisc *q, struct walk *wk)
{
	wk->fn(q, wk->arg);
	if (q->ops->cl_ops && q->ops->cl_ops->walk)
		q->ops->cl_ops->walk(q, walk_cl, wk);
}

struct netem_find {
	struct pw__qdisc *found;
	unsigned n;
};

static void find_netem(struct pw__qdisc *q, void *arg)
{
	struct netem_find *f = arg;
	if (q->ops == &pw__netem_ops) {
		f->found = q;
		f->n++;
	}
}

/* A random loss in @root's tree: the netem that made it.  Only netem has a
 * random loss of its own; a tree with several netems (an htb with a netem
 * per class) has its losses counted at the root, unsplit. */
static void count_loss(struct pw__qdisc *root)
{
	struct pw__qdisc *nq = NULL;
	if (root->ops == &pw__netem_ops) {
		nq = root;
	} else {
		struct netem_find f = { NULL, 0 };
		struct walk wk = { find_netem, &f };
		walk_tree(root, &wk);
		if (f.n == 1)
			nq = f.found;
	}
	if (nq && nq->acc)
		nq->acc->lost++;
	else
		root->acc->lost_unattributed++;
}

void pw__acc_drops(struct pw__qdisc *q, const struct pw__drops *d)
{
	for (const struct pw_pkt *p = d->q.head; p; p = p->pw_next)
		if (p->pw_reason == PW_DROP_NETEM_LOSS)
			count_loss(q);
}

void pw__acc_release_slow(struct pw__qdisc *q, const struct pw_pkt *p, uint64_t now)
{
	struct pw__acc *a = q->acc;
	if (!now)
		now = pw__net_now(q);
	uint64_t stamp = p->pw_acc_ns;
	if (stamp && stamp - 1 >= a->since_ns && now >= stamp - 1)
		pw__acc_hist_add(&a->sojourn, now - (stamp - 1));
	else
		stamp = 0; /* enqueued before counting began */
	/* st.bytes counts @p already: its kind's dequeue (or a peek, which
	 * dequeued it from the kind: then q->peeked was @p and is clear) */
	win_release(&a->win, now, stamp, q->st.bytes - p->len, p->len, q->st.qlen);
}

void pw__acc_fired(struct pw__watchdog *wd)
{
	uint64_t now = pw__net_now(wd->q);
	uint64_t asked = wd->last_expires;
	uint64_t late = now > asked ? now - asked : 0;
	for (struct pw__qdisc *a = wd->q; a; a = a->parent_q)
		if (a->acc)
			pw__acc_hist_add(&a->acc->late, late);
}

/* ------------------------------------------------------ state per qdisc */

/* (Re)start counting on @q, root lock held. */
static void acc_begin(struct pw__qdisc *q, struct pw__acc *a)
{
	uint64_t now = pw__net_now(q);
	memset(a, 0, sizeof(*a));
	a->since_ns = now;
	hist_init(&a->sojourn);
	hist_init(&a->late);
	a->win.window_ns = PW__ACC_WINDOW_NS;
	a->win.start = now;
	a->win.busy_from = now;
	a->win.idle = q->st.qlen == 0;
	a->win.last = a->win.idle ? 0 : now + PW__ACC_WINDOW_NS - 1;
	/* a packet a parent peeked is in st.bytes but not released yet */
	a->win.bytes_base = q->st.bytes - (q->peeked ? q->peeked->len : 0);
	a->base_packets = q->st.packets;
	a->base_drops = q->st.drops;
	a->base_qlen = q->st.qlen;
}

static bool acc_wanted(const struct pw__qdisc *q)
{
	/* mq is no queue's root (its children are): it shows their sum */
	return !(q->ops->flags & (PW__QF_MQ | PW__QF_BUILTIN));
}

struct attach_arg {
	bool restart; /* counting starts again where it runs */
	int rc;
};

static void attach_one(struct pw__qdisc *q, void *arg)
{
	struct attach_arg *aa = arg;
	if (!acc_wanted(q) || (q->acc && !aa->restart))
		return;
	struct pw__acc *fresh = NULL;
	if (!q->acc) {
		int rc;
		fresh = pw__mem_alloc(q->dev->net, sizeof(*fresh), 0, NULL, &rc);
		if (!fresh) {
			aa->rc = rc;
			return;
		}
	}
	pw__qlock(&q->root->lock);
	struct pw__acc *a = q->acc ? q->acc : fresh;
	acc_begin(q, a);
	q->acc = a;
	pw__qunlock(&q->root->lock);
}

static void detach_one(struct pw__qdisc *q, void *arg)
{
	(void)arg;
	if (!q->acc)
		return;
	pw__qlock(&q->root->lock);
	struct pw__acc *a = q->acc;
	q->acc = NULL;
	pw__qunlock(&q->root->lock);
	pw__mem_free(q->dev->net, a, sizeof(*a));
}

void pw__acc_free(struct pw__qdisc *q)
{
	pw__mem_free(q->dev->net, q->acc, sizeof(*q->acc));
	q->acc = NULL;
}

int pw__acc_prepare(struct pw__qdisc *q, enum pw__charge how, struct pw__extack *ext)
{
	if (!q->dev->acc_on || !acc_wanted(q))
		return 0;
	struct pw__net *net = q->dev->net;
	int rc = 0;
	struct pw__acc *a;
	if (how == PW__CHARGE_LIMIT) {
		a = pw__mem_alloc(net, sizeof(*a), 0, ext, &rc);
	} else {
		if (how == PW__CHARGE_FORCE)
			pw__mem_charge_force(net, sizeof(*a));
		a = malloc(sizeof(*a));
		if (!a && how == PW__CHARGE_FORCE)
			pw__mem_uncharge(net, sizeof(*a));
	}
	if (!a)
		return rc ? rc : -ENOMEM;
	acc_begin(q, a); /* @q is unreachable: no lock to take */
	q->acc = a;
	return 0;
}

void pw__acc_sync(struct pw__net *net)
{
	if (!net)
		return;
	pthread_mutex_lock(&net->cfg_lock);
	for (struct pw_netdev *dev = net->devs; dev; dev = dev->next) {
		if (!dev->acc_on || !dev->qdisc)
			continue;
		struct attach_arg aa = { false, 0 };
		struct walk wk = { attach_one, &aa };
		walk_tree(dev->qdisc, &wk);
	}
	pthread_mutex_unlock(&net->cfg_lock);
}

int pw_netdev_accuracy_enable(struct pw_netdev *dev, int on)
{
	if (!dev || on < 0 || on > 1)
		return -EINVAL;
	struct pw__net *net = dev->net;
	pthread_mutex_lock(&net->cfg_lock);
	int rc = 0;
	if (on && dev->qdisc) {
		struct attach_arg aa = { true, 0 };
		struct walk wk = { attach_one, &aa };
		walk_tree(dev->qdisc, &wk);
		rc = aa.rc;
	}
	if (!on || rc) {
		if (dev->qdisc) {
			struct walk wk = { detach_one, NULL };
			walk_tree(dev->qdisc, &wk);
		}
		on = 0;
	}
	dev->acc_on = on;
	pthread_mutex_unlock(&net->cfg_lock);
	return rc;
}

/* ------------------------------------------------------------- reading */

static void snap_one(struct pw__qdisc *q, struct pw__acc *out)
{
	pw__qlock(&q->root->lock);
	const struct pw__acc *a = q->acc;
	memcpy(out, a, sizeof(*out));
	hist_count(&out->sojourn);
	hist_count(&out->late);
	out->offered = (q->st.packets - a->base_packets) +
		       (uint32_t)(q->st.drops - (uint32_t)a->base_drops) +
		       ((uint64_t)q->st.qlen - a->base_qlen);
	pw__qunlock(&q->root->lock);
}

struct snap_sum {
	struct pw__acc *sum, *one;
	unsigned n;
	bool first;
};

static int snap_child(struct pw__qdisc *q, unsigned long cl, void *arg)
{
	struct snap_sum *s = arg;
	struct pw__qdisc *c = q->ops->cl_ops->leaf ? q->ops->cl_ops->leaf(q, cl) : NULL;
	if (!c || !c->acc)
		return 0;
	snap_one(c, s->one);
	struct pw__acc *a = s->sum, *b = s->one;
	if (s->n++ == 0) {
		a->since_ns = b->since_ns;
		a->win.window_ns = b->win.window_ns;
	}
	if (b->since_ns < a->since_ns)
		a->since_ns = b->since_ns;
	hist_merge(&a->sojourn, &b->sojourn);
	hist_merge(&a->late, &b->late);
	a->lost += b->lost;
	a->lost_unattributed += b->lost_unattributed;
	a->offered += b->offered;
	if (b->win.max_pkt > a->win.max_pkt)
		a->win.max_pkt = b->win.max_pkt;
	return 0;
}

int pw__acc_snapshot(struct pw__qdisc *q, struct pw__acc *out)
{
	if (q->ops->flags & PW__QF_MQ) {
		memset(out, 0, sizeof(*out));
		hist_init(&out->sojourn);
		hist_init(&out->late);
		struct pw__acc *one = malloc(sizeof(*one));
		if (!one)
			return -ENOMEM;
		struct snap_sum s = { out, one, 0, true };
		if (q->ops->cl_ops && q->ops->cl_ops->walk)
			q->ops->cl_ops->walk(q, snap_child, &s);
		free(one);
		/* rates are per queue: its children's windows are not summed */
		return s.n ? 0 : -ENOENT;
	}
	if (!q->acc)
		return -ENOENT;
	snap_one(q, out);
	return 0;
}
