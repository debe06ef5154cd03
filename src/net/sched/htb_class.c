/* SPDX-License-Identifier: MIT */
/*
 * htb's classes and configuration (the kernel's htb_init(),
 * htb_change_class(), htb_delete(), htb_graft() and the class ops of
 * net/sched/sch_htb.c): the qdisc's options and its teardown, a class
 * made or changed (rates, buffers, quantum, prio; its parent turned
 * inner), deleted (its parent a leaf again), a leaf's qdisc grafted, the
 * class walk and its statistics for tc.  The design, the rules and the
 * locking are htb.c's head; the data path and the class tree's rows, feeds
 * and hash are htb.c's.
 *
 * Threads and locks: the tc thread with cfg_lock held; the tree changed
 * under the root lock too (htb.c's head, "Locking").
 */
#include "htb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------- configuration */

static void levels_init(struct htb_priv *h)
{
	for (int l = 0; l < HTB_MAXDEPTH; l++) {
		pw__htb_list_init(&h->hlevel[l].wait_pq);
		for (int p = 0; p < HTB_NUMPRIO; p++) {
			pw__htb_list_init(&h->hlevel[l].hprio[p].set);
			h->hlevel[l].hprio[p].ptr = NULL;
			h->hlevel[l].hprio[p].last_ptr_id = 0;
		}
	}
}

static void clprio_init(struct htb_class *cl)
{
	memset(cl->clprio, 0, sizeof(cl->clprio));
	memset(cl->deficit, 0, sizeof(cl->deficit));
	for (int p = 0; p < HTB_NUMPRIO; p++)
		pw__htb_list_init(&cl->clprio[p].set);
}

int pw__htb_init(struct pw__qdisc *q, void *optp, struct pw__extack *ext)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	struct htb_opt *o = optp, def = { .rate2quantum = 10, .version = 3 };
	memset(h, 0, sizeof(*h));
	h->sch = q;
	pw__watchdog_init(&h->wd, q);
	if (!o)
		o = &def; /* tc always sends TCA_HTB_INIT: these are its defaults */
	int rc = 0;
	if (o->version != HTB_VER >> 16) {
		rc = -EINVAL;
	} else if (o->offload) {
		if (q->parent != PW_TC_H_ROOT)
			pw__extack_msg(ext, "Error: HTB must be the root qdisc to use offload.");
		else
			pw__extack_msg(ext, "Error: hw-tc-offload ethtool feature flag must be on.");
		rc = -EOPNOTSUPP;
	}
	if (!rc) {
		h->hashsize = 4;
		h->hash = pw__mem_alloc(q->dev->net, h->hashsize * sizeof(*h->hash), 0, ext, &rc);
	}
	if (rc) {
		pw__watchdog_destroy(&h->wd);
		return rc;
	}
	h->direct_qlen = o->has_direct_qlen ? (int)o->direct_qlen : (int)q->dev->txqueuelen;
	h->rate2quantum = (int)o->rate2quantum < 1 ? 1 : (int)o->rate2quantum;
	h->defcls = o->defcls;
	pw__pktq_init(&h->direct);
	levels_init(h);
	return 0;
}

void pw__htb_destroy(struct pw__qdisc *q)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	pw__watchdog_destroy(&h->wd);
	for (unsigned i = 0; i < h->hashsize; i++) {
		struct htb_class *c = h->hash[i];
		while (c) {
			struct htb_class *n = c->hnext;
			pw__mem_free(q->dev->net, c, sizeof(*c)); /* its leaf: freed by the core */
			c = n;
		}
	}
	pw__mem_free(q->dev->net, h->hash, h->hashsize * sizeof(*h->hash));
	h->hash = NULL;
}

/* A default leaf: pfifo of txqueuelen packets, invisible (qdisc_create_dflt).
 * A new class's is charged against the budget (@ext says a refusal, *@rc
 * its errno); what a delete leaves (@dflt) past it (netmem.c). */
static struct pw__qdisc *leaf_create(struct pw__qdisc *q, uint32_t parent, bool dflt,
				     struct pw__extack *ext, int *rc)
{
	struct pw__qdisc *c = dflt ? pw__qdisc_alloc_dflt(q->dev, &pw__pfifo_ops, q->txq, parent, rc)
				   : pw__qdisc_alloc(q->dev, &pw__pfifo_ops, q->txq, parent, 0, NULL,
						     ext, rc);
	if (c) {
		c->invisible = true;
		c->root = q->root;
		c->parent_q = q;
	}
	return c;
}

/* A leaf leaves the tree with its packets (qdisc_purge_queue()'s counting;
 * the caller frees it, which flushes them).  Root lock held. */
static void leaf_detach(struct pw__qdisc *q, struct pw__qdisc *leaf)
{
	if (!leaf)
		return;
	q->st.qlen -= leaf->st.qlen;
	q->st.backlog -= leaf->st.backlog;
	pw__qdisc_tree_reduce_backlog(q, leaf->st.qlen, leaf->st.backlog);
}

static int htb_class_change(struct pw__qdisc *q, uint32_t classid, uint32_t parentid, void *coptp,
			    unsigned long *arg, struct pw__extack *ext)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	struct htb_class *cl = (struct htb_class *)*arg, *parent;
	struct htb_copt *o = coptp;
	struct pw__qdisc *parent_qdisc = NULL, *new_q = NULL;
	if (!o)
		return -EINVAL;
	parent = parentid == PW_TC_H_ROOT ? NULL : pw__htb_find(h, parentid);
	if (!o->rate.rate || !o->ceil.rate)
		return -EINVAL;
	if (!cl) {
		if (!classid || PW_TC_H_MAJ(classid ^ q->handle) || pw__htb_find(h, classid))
			return -EINVAL;
		if (parent && parent->parent && parent->parent->level < 2) {
			pw__extack_msg(ext, "Error: sch_htb: tree is too deep.");
			return -EINVAL;
		}
		int rc;
		cl = pw__mem_alloc(q->dev->net, sizeof(*cl), 0, ext, &rc);
		if (!cl)
			return rc == -ENOMEM ? -ENOBUFS : rc; /* the kernel's -ENOBUFS */
		cl->classid = classid;
		clprio_init(cl);
		new_q = leaf_create(q, classid, false, ext, &rc);
		if (!new_q && rc == -ENOBUFS) {
			/* the budget refused its leaf: no class rather than
			 * one that drops everything (the kernel's noop, kept
			 * for a failed malloc) */
			pw__mem_free(q->dev->net, cl, sizeof(*cl));
			return rc;
		}
		pw__qlock(&q->root->lock);
		if (parent && !parent->level) {
			/* the parent turns inner: its qdisc goes with its packets */
			leaf_detach(q, parent->leafq);
			parent_qdisc = parent->leafq;
			pw__htb_deactivate(h, parent);
			if (parent->cmode != HTB_CAN_SEND) {
				pw__htb_link_erase(&parent->pq_node);
				parent->cmode = HTB_CAN_SEND;
			}
			parent->level = (parent->parent ? parent->parent->level : HTB_MAXDEPTH) - 1;
			clprio_init(parent);
			parent->leafq = NULL;
		}
		cl->leafq = new_q; /* NULL: the kernel's noop */
		cl->parent = parent;
		cl->tokens = HTB_TICKS2NS(o->buffer);
		cl->ctokens = HTB_TICKS2NS(o->cbuffer);
		cl->mbuffer = 60 * NSEC_PER_SEC;
		cl->t_c = (int64_t)pw_now_ns(q->dev->rt);
		cl->cmode = HTB_CAN_SEND;
		pw__htb_hash_insert(h, cl);
		if (parent)
			parent->children++;
	} else {
		pw__qlock(&q->root->lock);
	}
	pw__psched_precompute(&cl->rate, &o->rate, o->rate64);
	pw__psched_precompute(&cl->ceil, &o->ceil, o->ceil64);
	int warn = 0;
	if (!cl->level) {
		uint64_t quantum = cl->rate.rate_bytes_ps / (uint64_t)h->rate2quantum;
		cl->quantum = quantum > 0x7FFFFFFF ? 0x7FFFFFFF : (int)quantum;
		if (!o->quantum && cl->quantum < 1000) {
			warn = -1;
			cl->quantum = 1000;
		}
		if (!o->quantum && cl->quantum > 200000) {
			warn = 1;
			cl->quantum = 200000;
		}
		if (o->quantum)
			cl->quantum = (int)o->quantum;
		cl->prio = o->prio >= HTB_NUMPRIO ? HTB_NUMPRIO - 1 : o->prio;
	}
	cl->buffer = HTB_TICKS2NS(o->buffer);
	cl->cbuffer = HTB_TICKS2NS(o->cbuffer);
	pw__qunlock(&q->root->lock);
	if (new_q)
		pw__qdisc_hash_add(q->dev, new_q);
	if (parent_qdisc)
		pw__qdisc_free(parent_qdisc, PW_DROP_FLUSH);
	if (warn)
		pw__extack_msg(ext, "Warning: sch_htb: quantum of class %X is %s. Consider r2q change.",
			   cl->classid, warn == -1 ? "small" : "big");
	pw__htb_hash_grow(q, h);
	*arg = (unsigned long)cl;
	return 0;
}

static int htb_class_delete(struct pw__qdisc *q, unsigned long arg, struct pw__extack *ext)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	struct htb_class *cl = (struct htb_class *)arg;
	if (cl->children) {
		pw__extack_msg(ext, "Error: HTB class in use.");
		return -EBUSY;
	}
	bool last_child = !cl->level && cl->parent && cl->parent->children == 1;
	int rc;
	struct pw__qdisc *new_q = last_child ? leaf_create(q, cl->parent->classid, true, NULL, &rc) : NULL;
	struct pw__qdisc *old_q = NULL;
	pw__qlock(&q->root->lock);
	if (!cl->level) {
		leaf_detach(q, cl->leafq);
		old_q = cl->leafq;
		cl->leafq = NULL;
	}
	pw__htb_hash_remove(h, cl);
	if (cl->parent)
		cl->parent->children--;
	pw__htb_deactivate(h, cl);
	if (cl->cmode != HTB_CAN_SEND)
		pw__htb_link_erase(&cl->pq_node);
	if (last_child) { /* htb_parent_to_leaf() */
		struct htb_class *p = cl->parent;
		if (p->cmode != HTB_CAN_SEND)
			pw__htb_link_erase(&p->pq_node);
		p->level = 0;
		clprio_init(p);
		p->leafq = new_q;
		p->tokens = p->buffer;
		p->ctokens = p->cbuffer;
		p->t_c = (int64_t)pw_now_ns(q->dev->rt);
		p->cmode = HTB_CAN_SEND;
	}
	pw__qunlock(&q->root->lock);
	/* new_q is not hashed: the kernel's htb_delete() does not */
	if (old_q)
		pw__qdisc_free(old_q, PW_DROP_FLUSH);
	pw__mem_free(q->dev->net, cl, sizeof(*cl));
	return 0;
}

/* --------------------------------------------------------------- classes */

static unsigned long htb_search(struct pw__qdisc *q, uint32_t classid)
{
	return (unsigned long)pw__htb_find(pw__qdisc_priv(q), classid);
}

static struct pw__qdisc *htb_leaf(struct pw__qdisc *q, unsigned long arg)
{
	(void)q;
	struct htb_class *cl = (struct htb_class *)arg;
	return !cl->level ? cl->leafq : NULL;
}

/* htb_graft(): leaves only; NULL builds a default pfifo. */
static int htb_graft(struct pw__qdisc *q, unsigned long arg, struct pw__qdisc *newq,
		     struct pw__qdisc **old, struct pw__extack *ext)
{
	(void)ext;
	struct htb_class *cl = (struct htb_class *)arg;
	if (cl->level)
		return -EINVAL;
	if (!newq) { /* not hashed: the kernel's htb_graft() does not */
		int rc; /* a delete's: charged past the budget */
		newq = leaf_create(q, cl->classid, true, NULL, &rc);
		if (!newq)
			return -ENOBUFS;
	}
	*old = pw__qdisc_replace(q, newq, &cl->leafq);
	return 0;
}

static void htb_walk(struct pw__qdisc *q, int (*fn)(struct pw__qdisc *, unsigned long, void *),
		     void *arg)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	for (unsigned i = 0; i < h->hashsize; i++)
		for (struct htb_class *c = h->hash[i]; c; c = c->hnext)
			if (fn(q, (unsigned long)c, arg))
				return;
}

static void htb_class_info(struct pw__qdisc *q, unsigned long arg, struct pw__class_info *ci)
{
	struct htb_class *cl = (struct htb_class *)arg;
	ci->classid = cl->classid;
	ci->parent = cl->parent ? cl->parent->classid : PW_TC_H_ROOT;
	ci->leaf = !cl->level && cl->leafq ? cl->leafq->handle : 0;
	pw__qlock(&q->root->lock);
	ci->st.bytes = cl->bytes;
	ci->st.packets = cl->packets;
	ci->st.drops = cl->drops;
	ci->st.overlimits = cl->overlimits;
	if (!cl->level && cl->leafq) {
		ci->st.qlen = cl->leafq->st.qlen;
		ci->st.backlog = cl->leafq->st.backlog;
	}
	pw__qunlock(&q->root->lock);
}

const struct pw__class_ops pw__htb_class_ops = {
	.find = htb_search,
	.graft = htb_graft,
	.leaf = htb_leaf,
	.walk = htb_walk,
	.info = htb_class_info,
	.change = htb_class_change,
	.delete = htb_class_delete,
};
