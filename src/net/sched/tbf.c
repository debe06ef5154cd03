/* SPDX-License-Identifier: MIT */
/*
 * tbf: the token bucket filter (the kernel's net/sched/sch_tbf.c), and the
 * design of its tc side (iproute2 6.1's tc/q_tbf.c, here tc/q_tbf.c),
 * rewritten for pinwheel.  This file is the kernel side; sched/tbf.h holds
 * what the two halves share.
 *
 * What it does.  A packet larger than max_size (the burst, or the smaller
 * of burst and mtu with a peak rate) is dropped at enqueue with
 * PW_DROP_OVERSIZE; any other goes to the child, a bfifo of `limit` bytes
 * (the kernel's fifo_create_dflt(): handle 0, parent MAJ:1).  Dequeue
 * peeks the child's head and computes, in nanoseconds of the layer's
 * clock, toks = min(now - t_c, buffer) + tokens capped at buffer, minus
 * the packet's time at the rate (psched_l2t_ns: length + overhead, at
 * least mpu, ATM: 53 bytes per started 48, times the precomputed mult >>
 * shift); with a peak rate the same for ptokens against mtu.  If both are
 * >= 0 the packet leaves and t_c/tokens/ptokens take the new values; else
 * the watchdog is armed for now + max(-toks, -ptoks) and overlimits counts
 * one.  Over a long busy run the bytes sent by time T are therefore the
 * burst plus rate x T, to the packet, in the kernel's integer arithmetic.
 *
 * The tc side parses as q_tbf.c does (the same keywords, abbreviations
 * and messages, "tbf: ..." verbatim) and computes what tc would send: the
 * rate specs (rate, mpu, overhead, linklayer through pw__tc_calc_rtable),
 * buffer and mtu in psched ticks, limit (or the limit derived from
 * latency), burst and peak burst in bytes.  init/change then interpret
 * it as tbf_change() does: since tc always sends TCA_TBF_BURST (and
 * TCA_TBF_PBURST with a peak rate) the kernel's buffer is l2t(rate,
 * burst) and its mtu l2t(peak, pburst); a peak rate not above the rate is
 * -EINVAL ("RTNETLINK answers: Invalid argument", the kernel gives no
 * extack).  Show prints what tbf_dump() returns, through tbf_print_opt():
 * the times back in ticks (ns >> 6), the sizes through tc_calc_xmitsize(),
 * lat or limit, overhead, linklayer (text and JSON; -d adds the /cell and
 * mpu forms).  tbf has no xstats.
 *
 * Invariants.  Every packet handed to enqueue leaves exactly once: to the
 * drop list (oversize, the child's limit, no child (limit 0, or a grafted
 * child deleted: the kernel's noop), the flush of a replaced child, or
 * the teardown's flush), or out of dequeue.  tbf's qlen
 * and backlog equal the child's.  tokens <= buffer, ptokens <= mtu.
 *
 * The child is class 1:1's leaf, reported to the core (class_leaf), as
 * the kernel's tbf_leaf() does: the core hashes it (the default bfifo
 * invisible, as the kernel's qdisc_hash_add(child, true): `qdisc show`
 * lists it only with `invisible`), flushes it and frees it on teardown
 * before tbf's own reset/destroy, which leave it alone.  A user qdisc can
 * be grafted there (`qdisc add dev X parent 1:1 handle 10: netem ...`,
 * the kernel's tbf_graft(), through pw__qdisc_replace(): the old child's
 * packets leave tbf's counters and are flushed), and deleting it puts
 * the kernel's noop back (no child).  A child without ops.peek is peeked
 * through pw__qdisc_peek_dequeued().  Its limit follows the tbf limit on
 * change when it is a fifo (fifo_set_limit); a change from limit 0 to a
 * limit builds the child in parse (on the tc thread) so change neither
 * allocates nor fails under the lock; an unused one is freed by opt_free.
 *
 * Locking.  Every data path hook, reset and change run under the root
 * lock of tbf's queue (tbf is always its queue's root, or an mq child,
 * which is a root too); the child shares that lock (child->root = tbf's
 * root).  The watchdog's callback runs the queue (pw__qdisc_run() under
 * the root lock), whose dequeue finds the tokens.  init and
 * destroy run with no lock (tbf not reachable).
 *
 * Costs.  O(1) per packet: two multiplies and a shift per bucket per
 * dequeue attempt; one watchdog arm per throttle.
 *
 * Departures from the kernel:
 *  - No GSO: a packet over max_size is always dropped (no tbf_segment()).
 *  - `rate N%` / `peakrate N%` (a share of the link speed) is refused as
 *    an illegal value: pinwheel devices have no speed.
 *  - The "burst is lower than device mtu" kernel warning is not printed
 *    (it goes to the kernel log, not to tc).
 *  - The print side has no tc context: it uses the psched of every kernel
 *    since 2009 (64 ns ticks) as tc reads it from /proc/net/psched.
 */
#include "tbf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ data path */

static int tbf_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	if (p->len > t->max_size)
		return pw__q_drop(q, p, d, PW_DROP_OVERSIZE);
	if (!t->child) /* the kernel's noop child: every packet is dropped */
		return pw__q_drop(q, p, d, PW_DROP_QDISC_LIMIT);
	uint32_t len = p->len;
	int rc = t->child->ops->enqueue(p, t->child, d);
	if (rc != PW_NET_XMIT_SUCCESS) {
		if (pw__xmit_drop_count(rc))
			q->st.drops++;
		return rc;
	}
	q->st.qlen++;
	q->st.backlog += len;
	return PW_NET_XMIT_SUCCESS;
}

static struct pw_pkt *tbf_dequeue(struct pw__qdisc *q)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	if (!t->child)
		return NULL;
	struct pw_pkt *p = pw__qdisc_peek(t->child);
	if (!p)
		return NULL;
	int64_t now = (int64_t)pw__net_now(q);
	int64_t toks = now - t->t_c;
	if (toks > t->buffer)
		toks = t->buffer;
	int64_t ptoks = 0;
	if (t->peak.rate_bytes_ps) {
		ptoks = toks + t->ptokens;
		if (ptoks > t->mtu)
			ptoks = t->mtu;
		ptoks -= (int64_t)pw__psched_l2t_ns(&t->peak, p->len);
	}
	toks += t->tokens;
	if (toks > t->buffer)
		toks = t->buffer;
	toks -= (int64_t)pw__psched_l2t_ns(&t->rate, p->len);
	if ((toks | ptoks) >= 0) {
		p = pw__qdisc_dequeue_peeked(t->child);
		if (!p)
			return NULL;
		t->t_c = now;
		t->tokens = toks;
		t->ptokens = ptoks;
		pw__q_backlog_dec(q, p);
		pw__q_bstats(q, p);
		return p;
	}
	int64_t wait = -toks > -ptoks ? -toks : -ptoks;
	pw__watchdog_schedule_ns(&t->wd, (uint64_t)(now + wait));
	q->st.overlimits++;
	return NULL;
}

static struct pw_pkt *tbf_peek(struct pw__qdisc *q)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	return t->child ? pw__qdisc_peek(t->child) : NULL;
}

/* The child (class 1:1's leaf) was flushed by the core before this. */
static void tbf_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason r)
{
	(void)d, (void)r;
	struct tbf_priv *t = pw__qdisc_priv(q);
	q->st.qlen = 0;
	q->st.backlog = 0;
	t->t_c = (int64_t)pw__net_now(q);
	t->tokens = t->buffer;
	t->ptokens = t->mtu;
	pw__watchdog_cancel(&t->wd);
}

/* ------------------------------------------------------- configuration */

/* The child is built uncharged (tc's side builds it ahead of a change,
 * and may drop it) and charged to the runtime's budget when tbf adopts
 * it (adopt_charge()), uncharged with it when the core frees it; one
 * never adopted is freed uncharged (pw__tbf_child_free()).  netmem.c. */
struct pw__qdisc *pw__tbf_child_create(struct pw_netdev *dev, unsigned txq, uint32_t parent,
				       uint32_t limit)
{
	int rc;
	struct pw__qdisc *c = pw__qdisc_alloc_uncharged(dev, &pw__bfifo_ops, txq, parent, &rc);
	if (c) {
		c->limit = limit;
		c->invisible = true; /* qdisc_hash_add(child, true) */
	}
	return c;
}

void pw__tbf_child_free(struct pw__qdisc *c)
{
	if (!c)
		return;
	if (c->ops->destroy)
		c->ops->destroy(c);
	free(c->acc); /* never adopted: never charged */
	free(c);
}

/* fifo_set_limit() applies to the fifos only (a grafted netem keeps its own). */
static bool is_fifo(const struct pw__qdisc *c)
{
	return c->ops == &pw__bfifo_ops || c->ops == &pw__pfifo_ops ||
	       c->ops == &pw__pfifo_head_drop_ops;
}

/* tbf_change()'s checks and values, without touching @q. */
static int tbf_compute(const struct tbf_opt *o, struct pw__psched_ratecfg *rate,
		       struct pw__psched_ratecfg *peak, int64_t *buffer, int64_t *mtu,
		       uint32_t *max_size)
{
	pw__psched_precompute(rate, &o->rate, o->rate64);
	*max_size = o->burst;
	*buffer = (int64_t)pw__psched_l2t_ns(rate, o->burst);
	uint64_t m = TBF_TICKS2NS(o->mtu);
	*mtu = (int64_t)(m > 0xFFFFFFFFull ? 0xFFFFFFFFull : m);
	if (o->peakrate.rate) {
		pw__psched_precompute(peak, &o->peakrate, o->prate64);
		if (peak->rate_bytes_ps <= rate->rate_bytes_ps)
			return -EINVAL;
		if (o->pburst < *max_size)
			*max_size = o->pburst;
		*mtu = (int64_t)pw__psched_l2t_ns(peak, o->pburst);
	} else {
		memset(peak, 0, sizeof(*peak));
	}
	if (!*max_size)
		return -EINVAL;
	return 0;
}

static void tbf_apply(struct pw__qdisc *q, struct tbf_priv *t, const struct tbf_opt *o,
		      const struct pw__psched_ratecfg *rate, const struct pw__psched_ratecfg *peak,
		      int64_t buffer, int64_t mtu, uint32_t max_size)
{
	q->limit = t->limit = o->limit;
	t->mtu = mtu;
	t->max_size = max_size;
	t->buffer = buffer;
	t->tokens = buffer;
	t->ptokens = mtu;
	t->rate = *rate;
	t->peak = *peak;
}

static int tbf_init(struct pw__qdisc *q, void *optp, struct pw__extack *ext)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	struct tbf_opt *o = optp;
	memset(t, 0, sizeof(*t));
	pw__watchdog_init(&t->wd, q);
	if (!o) {
		pw__watchdog_destroy(&t->wd);
		return -EINVAL; /* tbf_init(): no options */
	}
	struct pw__psched_ratecfg rate, peak;
	int64_t buffer, mtu;
	uint32_t max_size;
	int rc = tbf_compute(o, &rate, &peak, &buffer, &mtu, &max_size);
	if (rc) {
		pw__watchdog_destroy(&t->wd);
		return rc;
	}
	if (o->limit > 0) {
		struct pw__qdisc *c = o->child;
		if (!c)
			c = pw__tbf_child_create(q->dev, q->txq, PW_TC_H_MAKE(q->handle, 1), o->limit);
		rc = c ? pw__mem_charge(q->dev->net, pw__qdisc_bytes(c), ext) : -ENOMEM;
		if (rc) {
			if (c && c != o->child)
				pw__tbf_child_free(c);
			pw__watchdog_destroy(&t->wd);
			return rc;
		}
		if (c == o->child) {
			o->child = NULL;
			c->parent = PW_TC_H_MAKE(q->handle, 1);
			c->txq = q->txq;
			c->limit = o->limit;
		}
		t->child = c;
		t->child->root = q;
		t->child->parent_q = q;
	}
	tbf_apply(q, t, o, &rate, &peak, buffer, mtu, max_size);
	t->t_c = (int64_t)pw_now_ns(q->dev->rt);
	return 0;
}

static int tbf_change(struct pw__qdisc *q, void *optp, struct pw__extack *ext)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	struct tbf_opt *o = optp;
	if (!o)
		return -EINVAL;
	struct pw__psched_ratecfg rate, peak;
	int64_t buffer, mtu;
	uint32_t max_size;
	int rc = tbf_compute(o, &rate, &peak, &buffer, &mtu, &max_size);
	if (rc)
		return rc;
	if (t->child) {
		if (is_fifo(t->child))
			t->child->limit = o->limit; /* fifo_set_limit() */
	} else if (o->limit > 0) {
		if (!o->child)
			return -ENOMEM; /* parse could not build it */
		rc = pw__mem_charge(q->dev->net, pw__qdisc_bytes(o->child), ext);
		if (rc)
			return rc; /* nothing changed yet */
		t->child = o->child;
		o->child = NULL;
		t->child->parent = PW_TC_H_MAKE(q->handle, 1);
		t->child->txq = q->txq;
		t->child->limit = o->limit;
		t->child->root = q->root;
		t->child->parent_q = q;
		pw__qdisc_hash_add(q->dev, t->child); /* cfg_lock held (ext) */
	}
	tbf_apply(q, t, o, &rate, &peak, buffer, mtu, max_size);
	return 0;
}

static void tbf_destroy(struct pw__qdisc *q)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	pw__watchdog_destroy(&t->wd);
	t->child = NULL; /* the core flushed and freed it (class_leaf) */
}

/* --------------------------------------------------------------- classes */

static unsigned long tbf_find(struct pw__qdisc *q, uint32_t classid)
{
	(void)q;
	(void)classid;
	return 1; /* tbf_find(): every minor is the one class */
}

static struct pw__qdisc *tbf_leaf(struct pw__qdisc *q, unsigned long cl)
{
	(void)cl;
	struct tbf_priv *t = pw__qdisc_priv(q);
	return t->child;
}

/* tbf_graft(): NULL puts the kernel's noop back (no child: every packet
 * is dropped), not a bfifo. */
static int tbf_graft(struct pw__qdisc *q, unsigned long cl, struct pw__qdisc *newq,
		     struct pw__qdisc **old, struct pw__extack *ext)
{
	(void)cl, (void)ext;
	struct tbf_priv *t = pw__qdisc_priv(q);
	*old = pw__qdisc_replace(q, newq, &t->child);
	return 0;
}

static void tbf_walk(struct pw__qdisc *q, int (*fn)(struct pw__qdisc *, unsigned long, void *),
		     void *arg)
{
	fn(q, 1, arg);
}

static void tbf_class_info(struct pw__qdisc *q, unsigned long cl, struct pw__class_info *ci)
{
	(void)cl;
	struct tbf_priv *t = pw__qdisc_priv(q);
	ci->classid = PW_TC_H_MAKE(q->handle, 1);
	ci->parent = q->handle;
	ci->leaf = t->child ? t->child->handle : 0; /* 0: the default child */
	ci->no_stats = true;
}

static const struct pw__class_ops tbf_class_ops = {
	.find = tbf_find,
	.leaf = tbf_leaf,
	.graft = tbf_graft,
	.walk = tbf_walk,
	.info = tbf_class_info,
};

const struct pw__qdisc_ops pw__tbf_ops = {
	.id = "tbf",
	.priv_size = sizeof(struct tbf_priv),
	.flags = PW__QF_CLASSFUL,
	.cl_ops = &tbf_class_ops,
	.enqueue = tbf_enqueue,
	.dequeue = tbf_dequeue,
	.peek = tbf_peek,
	.init = tbf_init,
	.change = tbf_change,
	.reset = tbf_reset,
	.destroy = tbf_destroy,
};
