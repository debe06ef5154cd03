/* SPDX-License-Identifier: MIT */
/*
 * mq (the kernel's sch_mq.c): the root of a multi-queue device, with one
 * class per TX queue (1:1 .. 1:N) and a child qdisc per class, pfifo_fast
 * by default.  mq itself never holds a packet: each TX queue points at its
 * child, which is that queue's root (its own lock and running mark), so
 * the queues run independently on the CPUs XPS sends them from.  Its
 * statistics are its children's, summed.  Refused on a single-queue device
 * and anywhere but the root (-EOPNOTSUPP, as the kernel).
 * Threads/locks: built and grafted under cfg_lock; the stats sum takes each
 * child's root lock in turn; the data path never reaches it.
 */
#include "../internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct mq_priv {
	unsigned n;
	struct pw__qdisc **child;
};

static int mq_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	return pw__q_drop(q, p, d, PW_DROP_NO_QDISC); /* unreachable: queues point at children */
}

static struct pw_pkt *mq_dequeue(struct pw__qdisc *q)
{
	(void)q;
	return NULL;
}

static int mq_init(struct pw__qdisc *q, void *opt, struct pw__extack *ext)
{
	struct pw_netdev *dev = q->dev;
	struct mq_priv *m = pw__qdisc_priv(q);
	if (q->parent != PW_TC_H_ROOT || dev->ntxq < 2)
		return -EOPNOTSUPP;
	/* a default mq (no options: a device's, or what a delete of the
	 * root leaves) is charged past the budget's limit with its
	 * children, as its caller charged it (netmem.c) */
	bool dflt = opt == NULL;
	size_t bytes = dev->ntxq * sizeof(*m->child);
	int rc = 0;
	if (dflt)
		pw__mem_charge_force(dev->net, bytes);
	else
		rc = pw__mem_charge(dev->net, bytes, ext);
	if (rc)
		return rc;
	m->child = calloc(dev->ntxq, sizeof(*m->child));
	if (!m->child) {
		pw__mem_uncharge(dev->net, bytes);
		return -ENOMEM;
	}
	m->n = dev->ntxq;
	for (unsigned i = 0; i < m->n; i++) {
		uint32_t parent = PW_TC_H_MAKE(q->handle, i + 1);
		struct pw__qdisc *c =
			dflt ? pw__qdisc_alloc_dflt(dev, &pw__pfifo_fast_ops, i, parent, &rc)
			     : pw__qdisc_alloc(dev, &pw__pfifo_fast_ops, i, parent, 0, NULL, ext, &rc);
		if (!c) {
			for (unsigned j = 0; j < i; j++)
				pw__qdisc_free(m->child[j], PW_DROP_FLUSH);
			pw__mem_free(dev->net, m->child, bytes);
			m->child = NULL;
			return rc;
		}
		c->is_default = true;
		c->parent_q = q;
		m->child[i] = c;
	}
	return 0;
}

static void mq_destroy(struct pw__qdisc *q)
{
	struct mq_priv *m = pw__qdisc_priv(q);
	/* the children were freed by the tree walk */
	pw__mem_free(q->dev->net, m->child, q->dev->ntxq * sizeof(*m->child));
	m->child = NULL;
}

static void mq_stats(struct pw__qdisc *q, struct pw_qdisc_stats *st)
{
	struct mq_priv *m = pw__qdisc_priv(q);
	for (unsigned i = 0; i < m->n; i++) {
		struct pw_qdisc_stats c;
		pw__qdisc_read_stats(m->child[i], &c);
		st->bytes += c.bytes;
		st->packets += c.packets;
		st->drops += c.drops;
		st->overlimits += c.overlimits;
		st->requeues += c.requeues;
		st->qlen += c.qlen;
		st->backlog += c.backlog;
	}
}

static unsigned long mq_find(struct pw__qdisc *q, uint32_t classid)
{
	struct mq_priv *m = pw__qdisc_priv(q);
	unsigned ntx = PW_TC_H_MIN(classid);
	if (ntx == 0 || ntx > m->n)
		return 0;
	return ntx;
}

static int mq_graft(struct pw__qdisc *q, unsigned long cl, struct pw__qdisc *newq,
		    struct pw__qdisc **old, struct pw__extack *ext)
{
	(void)ext;
	struct mq_priv *m = pw__qdisc_priv(q);
	if (cl == 0 || cl > m->n || !newq)
		return -EINVAL;
	*old = m->child[cl - 1];
	m->child[cl - 1] = newq;
	return 0;
}

static struct pw__qdisc *mq_leaf(struct pw__qdisc *q, unsigned long cl)
{
	struct mq_priv *m = pw__qdisc_priv(q);
	return cl && cl <= m->n && m->child ? m->child[cl - 1] : NULL;
}

static void mq_walk(struct pw__qdisc *q, int (*fn)(struct pw__qdisc *, unsigned long, void *),
		    void *arg)
{
	struct mq_priv *m = pw__qdisc_priv(q);
	for (unsigned long cl = 1; cl <= m->n; cl++)
		if (fn(q, cl, arg))
			break;
}

static void mq_class_info(struct pw__qdisc *q, unsigned long cl, struct pw__class_info *ci)
{
	struct pw__qdisc *leaf = mq_leaf(q, cl);
	ci->classid = PW_TC_H_MAKE(q->handle, cl);
	ci->parent = PW_TC_H_ROOT;
	ci->leaf = leaf ? leaf->handle : 0;
	if (leaf)
		pw__qdisc_read_stats(leaf, &ci->st);
}

static const struct pw__class_ops mq_class_ops = {
	.find = mq_find,
	.graft = mq_graft,
	.leaf = mq_leaf,
	.walk = mq_walk,
	.info = mq_class_info,
};

const struct pw__qdisc_ops pw__mq_ops = {
	.id = "mq",
	.priv_size = sizeof(struct mq_priv),
	.flags = PW__QF_MQ | PW__QF_CLASSFUL | PW__QF_ROOT_ONLY,
	.cl_ops = &mq_class_ops,
	.enqueue = mq_enqueue,
	.dequeue = mq_dequeue,
	.init = mq_init,
	.destroy = mq_destroy,
	.stats = mq_stats,
};
