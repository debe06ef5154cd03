/* SPDX-License-Identifier: MIT */
/*
 * htb: the hierarchical token bucket (the kernel's net/sched/sch_htb.c),
 * rewritten for pinwheel; its structures in htb.h, its tc side (iproute2
 * 6.1's tc/q_htb.c) in tc/q_htb.c.  This file: the class tree (rows,
 * feeds, wait queues, the class hash) and the data path; htb_class.c: the
 * configuration and the class ops.
 *
 * What it does.  A tree of classes, up to 8 levels: leaves (level 0) hold
 * a qdisc (a pfifo of the device's txqueuelen by default, or whatever the
 * user grafts: `qdisc add dev X parent 1:10 handle 10: netem ...`); inner
 * classes sit at level parent's level - 1, a root class at 7.  Each class
 * has two token buckets in nanoseconds of the layer's clock, tokens
 * against its rate (depth buffer) and ctokens against its ceil (depth
 * cbuffer), with the psched_ratecfg arithmetic tbf uses (psched.h; l2t: length +
 * overhead, at least mpu, ATM cells, times mult >> shift), and a mode:
 * CAN_SEND (tokens >= 0), MAY_BORROW (tokens < 0 <= ctokens: it may send
 * on an ancestor's tokens) or CANT_SEND (ctokens < 0).
 *
 * Enqueue classifies (htb_classify() without filters: pinwheel has no tc
 * filters): pkt->priority equal to htb's handle goes to the direct queue;
 * equal to a leaf's classid, to that leaf; else to the default class
 * MAJ:default if it is a leaf, else direct.  The direct queue (up to
 * direct_qlen packets, default the device's txqueuelen, then drops) is
 * sent first and unshaped; direct_packets_stat counts what entered it.
 * A leaf that gets a packet is activated: for its prio it joins its
 * parent's feed (when it may borrow) or its level's row (when it can
 * send), recursively up the chain of MAY_BORROW ancestors
 * (htb_activate_prios()).
 *
 * Dequeue (htb_dequeue()): the direct queue; then, for each level from 0
 * up, the level's due events (classes whose mode changes by now, from the
 * wait queue of that level ordered by time: htb_do_events()), and for each
 * prio from 0 with an active row, htb_dequeue_tree(): the round-robin
 * pointer of the row, followed down the feeds (htb_lookup_leaf(), with the
 * last_ptr_id recovery), gives a leaf; its qdisc is dequeued; the leaf's
 * deficit for that level goes down by the length and, when negative, gets
 * its quantum and the pointer moves on (DRR).  The packet is then charged
 * to the leaf and every ancestor (htb_charge_class(): ctokens everywhere,
 * tokens at and above the level it was lent from; lends/borrows counted;
 * modes recomputed, wait queue entries moved).  Nothing sendable: the
 * watchdog is armed at the earliest event of any level, at most 5 s (1 s
 * for a level whose queue is empty) ahead, as the kernel does.
 *
 * Classes (class_change/class_delete, the kernel's htb_change_class() and
 * htb_delete()): a new class needs options with rate and ceil, a classid
 * of htb's major that is not taken (-EINVAL), a depth within 8 ("sch_htb:
 * tree is too deep"); a parent that is a leaf becomes inner (its qdisc
 * flushed); a missing parent makes a root class, as the kernel does.  The
 * quantum is rate / r2q clamped to 1000..200000 unless given, with the
 * kernel's warning ("Warning: sch_htb: quantum of class 10010 is small.
 * Consider r2q change.").  Deleting a class with children is -EBUSY ("HTB
 * class in use"); deleting the last child of a parent makes it a leaf
 * again with a fresh pfifo (not hashed, as the kernel's: `qdisc show
 * invisible` does not list it, nor htb_graft()'s default after a `qdisc
 * del` of a leaf's qdisc).  Classes are kept in the kernel's class hash
 * (qdisc_class_hash: 4 buckets, doubled when 3/4 full, newest first in a
 * bucket), so `tc class show` prints in the kernel's order.
 *
 * The tc side parses as q_htb.c does (qdisc: r2q, default (hex), debug,
 * direct_qlen, offload; class: rate, ceil, burst/buffer/maxburst[/cell],
 * cburst/cbuffer/cmaxburst, prio, quantum, mtu (1600), mpu, overhead,
 * linklayer; tc's default burst is rate / HZ + mtu with HZ = 1e9, as tc
 * reads /proc/net/psched on a high-resolution kernel; the buffers in
 * psched ticks through tc_calc_xmittime()).  Show prints what htb_dump()
 * and htb_dump_class() return, through htb_print_opt(); -s adds the
 * class's xstats (lended, borrowed, giants, tokens and ctokens in ticks).
 *
 * Invariants.  Every packet handed to enqueue leaves exactly once: to the
 * drop list (direct queue full, the leaf's drop, a purge when a leaf turns
 * inner or is deleted or replaced, teardown) or out of dequeue.  htb's
 * qlen and backlog are the direct queue's plus every leaf qdisc's.  A
 * class is in at most one row or feed per prio; it is on its level's wait
 * queue exactly when its mode is not CAN_SEND.
 *
 * Locking.  The data path hooks run under the root lock of htb's queue;
 * the leaves share it (leaf->root = htb's root), and so a leaf's watchdog
 * (netem under htb) runs htb's root, whose run calls htb's dequeue.
 * class_change, class_delete and graft run on the tc thread with cfg_lock
 * held: they allocate (classes, leaf pfifos, a bigger hash) first, then
 * take the root lock to change the tree, and free what left after it
 * (pw__qdisc_free() of an old leaf flushes its packets to ops.drop).  The
 * class hash is read under the root lock by classify, and under cfg_lock
 * by the tc dumps; it is changed under both.
 *
 * Costs.  Rows, feeds and wait queues are sorted intrusive lists where the
 * kernel has red-black trees: the same order, so the same schedule, but an
 * insertion is O(active classes at that level/prio) where the kernel's is
 * O(log n): fine for the tens of classes shapers use, and the dequeue's
 * pointer moves are O(1) either way.  Per packet: one classify (a hash
 * lookup), the charge of its chain (depth <= 8), and the mode changes it
 * causes.
 *
 * Departures from the kernel:
 *  - No filters: classification is by pkt->priority and the default class.
 *  - No offload: `offload` is refused with the kernel's message for a
 *    device without hw-tc-offload.
 *  - htb_do_events() has no 2-jiffy budget: every due event is applied.
 *  - No qlen_notify: a leaf emptied other than by htb's dequeue (its qdisc
 *    replaced or purged) is deactivated at htb's next dequeue, the path
 *    htb_dequeue_tree() keeps for it; the counters are right at once
 *    (pw__qdisc_replace()).
 *  - htb has no ops.peek, as the kernel's (qdisc_peek_dequeued()): a
 *    parent that peeks it (tbf) goes through pw__qdisc_peek_dequeued().
 *  - No per-class rate estimators (`tc class add ... est` is parsed and
 *    ignored; htb_rate_est is off in the kernel by default too).
 *  - `rate N%` / `ceil N%` is refused as illegal: pinwheel devices have
 *    no speed.  The print side uses the 64 ns psched of every kernel since
 *    2009, as tbf's.
 */
#include "htb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- sorted lists */

void pw__htb_list_init(struct htb_link *h)
{
	h->prev = h->next = h;
	h->cl = NULL;
}

static bool list_empty(const struct htb_link *h)
{
	return h->next == h;
}

static void link_insert_before(struct htb_link *pos, struct htb_link *n)
{
	n->prev = pos->prev;
	n->next = pos;
	pos->prev->next = n;
	pos->prev = n;
}

void pw__htb_link_erase(struct htb_link *n)
{
	if (!n->prev)
		return; /* the kernel WARNs on an empty node */
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

/* rb_next(): the next node of @set after @n, NULL at the end. */
static struct htb_link *set_next(const struct htb_link *set, struct htb_link *n)
{
	return n->next == set ? NULL : n->next;
}

static struct htb_link *set_first(struct htb_link *set)
{
	return list_empty(set) ? NULL : set->next;
}

/* htb_add_to_id_tree(): by classid. */
static void set_add(struct htb_link *set, struct htb_class *cl, int prio)
{
	struct htb_link *pos = set->next;
	while (pos != set && pos->cl->classid < cl->classid)
		pos = pos->next;
	cl->node[prio].cl = cl;
	link_insert_before(pos, &cl->node[prio]);
}

/* htb_id_find_next_upper(): the first node with classid >= @id. */
static struct htb_link *set_find_upper(struct htb_link *set, uint32_t id)
{
	for (struct htb_link *n = set->next; n != set; n = n->next)
		if (n->cl->classid >= id)
			return n;
	return NULL;
}

static void next_node(struct htb_link *set, struct htb_link **ptr)
{
	if (*ptr)
		*ptr = set_next(set, *ptr);
}

/* ---------------------------------------------------------- class hash */

static unsigned class_hash(uint32_t id, unsigned mask)
{
	id ^= id >> 8;
	id ^= id >> 4;
	return id & mask;
}

struct htb_class *pw__htb_find(struct htb_priv *h, uint32_t classid)
{
	if (!h->hash)
		return NULL;
	for (struct htb_class *c = h->hash[class_hash(classid, h->hashsize - 1)]; c; c = c->hnext)
		if (c->classid == classid)
			return c;
	return NULL;
}

void pw__htb_hash_insert(struct htb_priv *h, struct htb_class *cl)
{
	unsigned b = class_hash(cl->classid, h->hashsize - 1);
	cl->hnext = h->hash[b];
	h->hash[b] = cl;
	h->hashelems++;
}

void pw__htb_hash_remove(struct htb_priv *h, struct htb_class *cl)
{
	for (struct htb_class **pp = &h->hash[class_hash(cl->classid, h->hashsize - 1)]; *pp;
	     pp = &(*pp)->hnext)
		if (*pp == cl) {
			*pp = cl->hnext;
			h->hashelems--;
			return;
		}
}

/* qdisc_class_hash_grow(): double when more than 3/4 full, each old
 * bucket's classes in order to the head of their new bucket.  The new
 * table is allocated off the lock. */
void pw__htb_hash_grow(struct pw__qdisc *q, struct htb_priv *h)
{
	if (h->hashelems * 4 <= h->hashsize * 3)
		return;
	unsigned nsize = h->hashsize * 2;
	/* a refusal (the budget, or no memory) keeps the table as it is:
	 * longer chains, nothing else */
	struct htb_class **nh = pw__mem_alloc(q->dev->net, nsize * sizeof(*nh), 0, NULL, NULL);
	if (!nh)
		return;
	pw__qlock(&q->root->lock);
	for (unsigned i = 0; i < h->hashsize; i++) {
		struct htb_class *c = h->hash[i];
		while (c) {
			struct htb_class *n = c->hnext;
			unsigned b = class_hash(c->classid, nsize - 1);
			c->hnext = nh[b];
			nh[b] = c;
			c = n;
		}
	}
	struct htb_class **old = h->hash;
	unsigned osize = h->hashsize;
	h->hash = nh;
	h->hashsize = nsize;
	pw__qunlock(&q->root->lock);
	pw__mem_free(q->dev->net, old, osize * sizeof(*old));
}

/* ------------------------------------------------------ feeds and rows */

static void add_to_wait_tree(struct htb_priv *h, struct htb_class *cl, int64_t delay)
{
	struct htb_link *wq = &h->hlevel[cl->level].wait_pq;
	cl->pq_key = h->now + delay;
	if (cl->pq_key == h->now)
		cl->pq_key++;
	if (h->near_ev_cache[cl->level] > cl->pq_key)
		h->near_ev_cache[cl->level] = cl->pq_key;
	struct htb_link *pos = wq->next;
	while (pos != wq && pos->cl->pq_key <= cl->pq_key)
		pos = pos->next; /* equal keys: after the older ones */
	cl->pq_node.cl = cl;
	link_insert_before(pos, &cl->pq_node);
}

static void add_class_to_row(struct htb_priv *h, struct htb_class *cl, int mask)
{
	h->row_mask[cl->level] |= mask;
	while (mask) {
		int prio = __builtin_ctz((unsigned)mask);
		mask &= ~(1 << prio);
		set_add(&h->hlevel[cl->level].hprio[prio].set, cl, prio);
	}
}

static void remove_class_from_row(struct htb_priv *h, struct htb_class *cl, int mask)
{
	int m = 0;
	struct htb_level *hl = &h->hlevel[cl->level];
	while (mask) {
		int prio = __builtin_ctz((unsigned)mask);
		struct htb_prio *hp = &hl->hprio[prio];
		mask &= ~(1 << prio);
		if (hp->ptr == &cl->node[prio])
			next_node(&hp->set, &hp->ptr);
		pw__htb_link_erase(&cl->node[prio]);
		if (list_empty(&hp->set))
			m |= 1 << prio;
	}
	h->row_mask[cl->level] &= ~m;
}

/* htb_activate_prios(): connect @cl (its new mode set) to its ancestors'
 * feeds and/or its row for the prios in prio_activity. */
static void activate_prios(struct htb_priv *h, struct htb_class *cl)
{
	struct htb_class *p = cl->parent;
	int mask = cl->prio_activity;
	while (cl->cmode == HTB_MAY_BORROW && p && mask) {
		int m = mask;
		while (m) {
			int prio = __builtin_ctz((unsigned)m);
			m &= ~(1 << prio);
			if (!list_empty(&p->clprio[prio].set))
				mask &= ~(1 << prio); /* the parent is fed already */
			set_add(&p->clprio[prio].set, cl, prio);
		}
		p->prio_activity |= mask;
		cl = p;
		p = cl->parent;
	}
	if (cl->cmode == HTB_CAN_SEND && mask)
		add_class_to_row(h, cl, mask);
}

/* htb_deactivate_prios(): the reverse (cl->cmode still the old mode). */
static void deactivate_prios(struct htb_priv *h, struct htb_class *cl)
{
	struct htb_class *p = cl->parent;
	int mask = cl->prio_activity;
	while (cl->cmode == HTB_MAY_BORROW && p && mask) {
		int m = mask;
		mask = 0;
		while (m) {
			int prio = __builtin_ctz((unsigned)m);
			m &= ~(1 << prio);
			struct htb_prio *cp = &p->clprio[prio];
			if (cp->ptr == &cl->node[prio]) {
				cp->last_ptr_id = cl->classid;
				cp->ptr = NULL;
			}
			pw__htb_link_erase(&cl->node[prio]);
			if (list_empty(&cp->set))
				mask |= 1 << prio;
		}
		p->prio_activity &= ~mask;
		cl = p;
		p = cl->parent;
	}
	if (cl->cmode == HTB_CAN_SEND && mask)
		remove_class_from_row(h, cl, mask);
}

/* htb_class_mode() without hysteresis (the kernel's default). */
static enum htb_cmode class_mode(const struct htb_class *cl, int64_t *diff)
{
	int64_t toks = cl->ctokens + *diff;
	if (toks < 0) {
		*diff = -toks;
		return HTB_CANT_SEND;
	}
	toks = cl->tokens + *diff;
	if (toks >= 0)
		return HTB_CAN_SEND;
	*diff = -toks;
	return HTB_MAY_BORROW;
}

static void change_class_mode(struct htb_priv *h, struct htb_class *cl, int64_t *diff)
{
	enum htb_cmode nm = class_mode(cl, diff);
	if (nm == cl->cmode)
		return;
	if (nm == HTB_CANT_SEND) {
		cl->overlimits++;
		h->sch->st.overlimits++;
	}
	if (cl->prio_activity) {
		if (cl->cmode != HTB_CANT_SEND)
			deactivate_prios(h, cl);
		cl->cmode = nm;
		if (nm != HTB_CANT_SEND)
			activate_prios(h, cl);
	} else {
		cl->cmode = nm;
	}
}

static void htb_activate(struct htb_priv *h, struct htb_class *cl)
{
	if (!cl->prio_activity) {
		cl->prio_activity = 1 << cl->prio;
		activate_prios(h, cl);
	}
}

void pw__htb_deactivate(struct htb_priv *h, struct htb_class *cl)
{
	if (!cl->prio_activity)
		return;
	deactivate_prios(h, cl);
	cl->prio_activity = 0;
}

/* ------------------------------------------------------------ data path */

#define HTB_DIRECT ((struct htb_class *)-1L)

static struct htb_class *classify(struct pw__qdisc *q, struct htb_priv *h, const struct pw_pkt *p)
{
	if (p->priority == q->handle)
		return HTB_DIRECT;
	struct htb_class *cl = p->priority ? pw__htb_find(h, p->priority) : NULL;
	if (cl && cl->level == 0)
		return cl;
	/* no filters: the default class */
	cl = pw__htb_find(h, PW_TC_H_MAKE(PW_TC_H_MAJ(q->handle), h->defcls));
	if (!cl || cl->level)
		return HTB_DIRECT;
	return cl;
}

static int htb_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	uint32_t len = p->len;
	struct htb_class *cl = classify(q, h, p);
	if (cl == HTB_DIRECT) {
		if (h->direct.len >= (uint32_t)h->direct_qlen)
			return pw__q_drop(q, p, d, PW_DROP_QDISC_LIMIT);
		pw__pktq_push(&h->direct, p);
		h->direct_pkts++;
	} else if (!cl->leafq) { /* noop: noop_enqueue() drops with CN */
		q->st.drops++;
		cl->drops++;
		pw__drop_later(d, p, PW_DROP_NO_QDISC);
		return PW_NET_XMIT_CN;
	} else {
		int rc = cl->leafq->ops->enqueue(p, cl->leafq, d);
		if (rc != PW_NET_XMIT_SUCCESS) {
			if (pw__xmit_drop_count(rc)) {
				q->st.drops++;
				cl->drops++;
			}
			return rc;
		}
		htb_activate(h, cl);
	}
	q->st.backlog += len;
	q->st.qlen++;
	return PW_NET_XMIT_SUCCESS;
}

static void accnt_tokens(struct htb_class *cl, unsigned bytes, int64_t diff)
{
	int64_t toks = diff + cl->tokens;
	if (toks > cl->buffer)
		toks = cl->buffer;
	toks -= (int64_t)pw__psched_l2t_ns(&cl->rate, bytes);
	if (toks <= -cl->mbuffer)
		toks = 1 - cl->mbuffer;
	cl->tokens = toks;
}

static void accnt_ctokens(struct htb_class *cl, unsigned bytes, int64_t diff)
{
	int64_t toks = diff + cl->ctokens;
	if (toks > cl->cbuffer)
		toks = cl->cbuffer;
	toks -= (int64_t)pw__psched_l2t_ns(&cl->ceil, bytes);
	if (toks <= -cl->mbuffer)
		toks = 1 - cl->mbuffer;
	cl->ctokens = toks;
}

static void charge_class(struct htb_priv *h, struct htb_class *cl, int level, unsigned bytes)
{
	while (cl) {
		int64_t diff = h->now - cl->t_c;
		if (diff > cl->mbuffer)
			diff = cl->mbuffer;
		if (cl->level >= level) {
			if (cl->level == level)
				cl->lends++;
			accnt_tokens(cl, bytes, diff);
		} else {
			cl->borrows++;
			cl->tokens += diff; /* t_c moves: keep tokens' time base */
		}
		accnt_ctokens(cl, bytes, diff);
		cl->t_c = h->now;
		enum htb_cmode old = cl->cmode;
		diff = 0;
		change_class_mode(h, cl, &diff);
		if (old != cl->cmode) {
			if (old != HTB_CAN_SEND)
				pw__htb_link_erase(&cl->pq_node);
			if (cl->cmode != HTB_CAN_SEND)
				add_to_wait_tree(h, cl, diff);
		}
		if (cl->level) {
			cl->bytes += bytes;
			cl->packets++;
		}
		cl = cl->parent;
	}
}

/* htb_do_events(): apply the due mode changes of @level; the time of the
 * next one, or 0 when the queue is empty. */
static int64_t do_events(struct htb_priv *h, int level)
{
	struct htb_link *wq = &h->hlevel[level].wait_pq;
	for (;;) {
		struct htb_link *n = set_first(wq);
		if (!n)
			return 0;
		struct htb_class *cl = n->cl;
		if (cl->pq_key > h->now)
			return cl->pq_key;
		pw__htb_link_erase(n);
		int64_t diff = h->now - cl->t_c;
		if (diff > cl->mbuffer)
			diff = cl->mbuffer;
		change_class_mode(h, cl, &diff);
		if (cl->cmode != HTB_CAN_SEND)
			add_to_wait_tree(h, cl, diff);
	}
}

/* htb_lookup_leaf(): the leaf the pointers of @hp lead to, in DRR order. */
static struct htb_class *lookup_leaf(struct htb_prio *hp, int prio)
{
	struct {
		struct htb_link *root;
		struct htb_link **pptr;
		uint32_t *pid;
	} stk[HTB_MAXDEPTH], *sp = stk;
	if (list_empty(&hp->set))
		return NULL;
	sp->root = &hp->set;
	sp->pptr = &hp->ptr;
	sp->pid = &hp->last_ptr_id;
	for (int i = 0; i < 65535; i++) {
		if (!*sp->pptr && *sp->pid) /* recover the pointer from the id */
			*sp->pptr = set_find_upper(sp->root, *sp->pid);
		*sp->pid = 0;
		if (!*sp->pptr) { /* past the end: rewind, and step the level above */
			*sp->pptr = set_first(sp->root);
			if (!*sp->pptr)
				return NULL;
			if (sp > stk) {
				sp--;
				if (!*sp->pptr)
					return NULL;
				next_node(sp->root, sp->pptr);
			}
		} else {
			struct htb_class *cl = (*sp->pptr)->cl;
			if (!cl->level)
				return cl;
			if (sp + 1 >= stk + HTB_MAXDEPTH)
				return NULL;
			struct htb_prio *cp = &cl->clprio[prio];
			(++sp)->root = &cp->set;
			sp->pptr = &cp->ptr;
			sp->pid = &cp->last_ptr_id;
		}
	}
	return NULL;
}

static void leaf_next(struct htb_priv *h, struct htb_class *cl, int prio, int level)
{
	if (level) {
		struct htb_prio *cp = &cl->parent->clprio[prio];
		next_node(&cp->set, &cp->ptr);
	} else {
		struct htb_prio *hp = &h->hlevel[0].hprio[prio];
		next_node(&hp->set, &hp->ptr);
	}
}

static uint32_t leaf_qlen(const struct htb_class *cl)
{
	return cl->leafq ? cl->leafq->st.qlen : 0;
}

static struct pw_pkt *dequeue_tree(struct htb_priv *h, int prio, int level)
{
	struct pw_pkt *p = NULL;
	struct htb_prio *hp = &h->hlevel[level].hprio[prio];
	struct htb_class *start, *cl;
	start = cl = lookup_leaf(hp, prio);
	do {
next:
		if (!cl)
			return NULL;
		if (leaf_qlen(cl) == 0) { /* emptied behind our back: skip it */
			pw__htb_deactivate(h, cl);
			if (!(h->row_mask[level] & (1 << prio)))
				return NULL;
			struct htb_class *n = lookup_leaf(hp, prio);
			if (cl == start)
				start = n;
			cl = n;
			goto next;
		}
		p = pw__qdisc_dequeue_peeked(cl->leafq);
		if (p)
			break;
		/* a non-work-conserving leaf (netem waiting): the next one */
		leaf_next(h, cl, prio, level);
		cl = lookup_leaf(hp, prio);
	} while (cl != start);
	if (p) {
		cl->bytes += p->len;
		cl->packets++;
		cl->deficit[level] -= (int)p->len;
		if (cl->deficit[level] < 0) {
			cl->deficit[level] += cl->quantum;
			leaf_next(h, cl, prio, level);
		}
		if (!leaf_qlen(cl))
			pw__htb_deactivate(h, cl);
		charge_class(h, cl, level, p->len);
	}
	return p;
}

static struct pw_pkt *htb_dequeue(struct pw__qdisc *q)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	struct pw_pkt *p = pw__pktq_pop(&h->direct);
	if (p)
		goto ok;
	if (!q->st.qlen)
		return NULL;
	h->now = (int64_t)pw__net_now(q);
	int64_t next_event = h->now + 5 * NSEC_PER_SEC;
	for (int level = 0; level < HTB_MAXDEPTH; level++) {
		int64_t event = h->near_ev_cache[level];
		if (h->now >= event) {
			event = do_events(h, level);
			if (!event)
				event = h->now + NSEC_PER_SEC;
			h->near_ev_cache[level] = event;
		}
		if (next_event > event)
			next_event = event;
		int m = ~h->row_mask[level];
		while (m != -1) {
			int prio = __builtin_ctz(~(unsigned)m);
			m |= 1 << prio;
			p = dequeue_tree(h, prio, level);
			if (p)
				goto ok;
		}
	}
	if (next_event > h->now)
		pw__watchdog_schedule_ns(&h->wd, (uint64_t)next_event);
	else
		pw__netif_schedule(q->root); /* the kernel's htb_work_func() */
	return NULL;
ok:
	pw__q_bstats(q, p);
	pw__q_backlog_dec(q, p);
	return p;
}

/* Teardown only: the leaves were flushed and freed by the core. */
static void htb_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason r)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	for (unsigned i = 0; i < h->hashsize; i++)
		for (struct htb_class *c = h->hash[i]; c; c = c->hnext) {
			if (c->level)
				memset(c->clprio, 0, sizeof(c->clprio));
			c->leafq = NULL;
			c->prio_activity = 0;
			c->cmode = HTB_CAN_SEND;
			for (int k = 0; k < HTB_NUMPRIO; k++)
				c->node[k].prev = c->node[k].next = NULL;
			c->pq_node.prev = c->pq_node.next = NULL;
		}
	pw__watchdog_cancel(&h->wd);
	struct pw_pkt *p;
	while ((p = pw__pktq_pop(&h->direct)))
		pw__drop_later(d, p, r);
	q->st.qlen = 0;
	q->st.backlog = 0;
}

const struct pw__qdisc_ops pw__htb_ops = {
	.id = "htb",
	.priv_size = sizeof(struct htb_priv),
	.flags = PW__QF_CLASSFUL,
	.cl_ops = &pw__htb_class_ops,
	.enqueue = htb_enqueue,
	.dequeue = htb_dequeue,
	.init = pw__htb_init,
	.reset = htb_reset,
	.destroy = pw__htb_destroy,
};
