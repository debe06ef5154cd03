/* SPDX-License-Identifier: MIT */
/*
 * Qdiscs: building, grafting and tearing down the trees, running a queue
 * (__qdisc_run), and the NET_TX pass that runs the queues a CPU scheduled
 * (net_tx_action).  The kernel's sch_generic.c and the tree half of
 * sch_api.c.
 *
 * Running a queue.  A root qdisc (the qdisc a TX queue points at) has a
 * lock and a running mark, both under the lock: at most one CPU dequeues
 * it at a time.  The CPU that enqueues runs it at once if nobody does; it
 * dequeues and hands packets to the driver (the lock dropped around each
 * call) until the qdisc returns nothing (throttled: it armed its watchdog;
 * or empty) or 64 packets went (dev_tx_weight); then the queue goes on its
 * own CPU's NET_TX list, run by that CPU's worker (pw_queue_work_on(): the
 * softirq's place).  A watchdog that fires does the same on the CPU it
 * fired on, which is why the watchdog's CPU is the CPU that dequeues (seed
 * 003).  No wake-up is lost: an enqueuer tests `running` under the lock,
 * and a runner clears it under the lock after its last dequeue.
 *
 * Tearing down (delete, replace, device destroy), with cfg_lock held: the
 * queue pointers are moved first; each retired root is marked dead under
 * its lock (a transmit that locks a dead root reloads the pointer), the
 * runner is waited for, then a grace period (dev.c) passes for transmits
 * that read the old pointer; then its estimator and watchdog are stopped,
 * every packet it holds goes to ops.drop with the reason, it is taken off
 * the NET_TX lists (waiting for a pass that is running it), and freed.
 *
 * The handle hash: the kernel lists a device's qdiscs (tc qdisc show) as
 * the root, then its qdisc_hash: 16 buckets by hash_32(handle, 4), newest
 * first within a bucket.  It is kept here the same way so that show prints
 * in the kernel's order (mq's default children, all handle 0, print from
 * the last queue to the first, as on a real machine).  Departure: handles
 * are allocated per device (8001:, 8002:, ...), where the kernel's counter
 * is global, so that a script prints the same handles every time.
 *
 * Threads: tree changes on the tc thread under cfg_lock; the queue run on
 * any CPU; NET_TX on the CPU's worker (or the simulation, or pw_run_work()).
 * Locks: cfg_lock > root lock > softnet lock.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "accuracy.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define PW__TX_QUOTA 64 /* the kernel's dev_tx_weight */

static const struct pw__qdisc_ops *const kinds[] = {
	&pw__pfifo_fast_ops, &pw__pfifo_ops, &pw__bfifo_ops, &pw__pfifo_head_drop_ops,
	&pw__mq_ops, &pw__netem_ops, &pw__tbf_ops,
	&pw__htb_ops,
	&pw__fq_ops,
	&pw__trace_ops,
};

const struct pw__qdisc_ops *pw__qdisc_lookup_ops(const char *kind)
{
	if (!kind)
		return NULL;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i]->id, kind))
			return kinds[i];
	return NULL;
}

uint64_t pw__net_now(const struct pw__qdisc *q)
{
	struct pw__qlock *l = &q->root->lock;
	if (!l->now)
		l->now = pw_now_ns(q->dev->rt);
	return l->now;
}

struct pw_pkt *pw__qdisc_clone(struct pw__qdisc *q, const struct pw_pkt *p)
{
	struct pw_netdev *dev = q->dev;
	if (!dev->ops.clone)
		return NULL;
	struct pw_pkt *c = dev->ops.clone(dev, p, dev->ctx);
	if (c) {
		c->pw_next = c->pw_left = c->pw_right = NULL;
		c->pw_txq = p->pw_txq;
		c->pw_skq = 0; /* a duplicate is not counted in its socket */
		if (__builtin_expect(q->acc != NULL, 0))
			c->pw_acc_ns = 0; /* accuracy.h: a duplicate is not a sample */
	}
	return c;
}

/* ---------------------------------------------------------------- hash */

static unsigned qhash(uint32_t handle)
{
	return (uint32_t)(handle * 0x61C88647u) >> (32 - PW__QHASH_BITS);
}

void pw__qdisc_hash_add(struct pw_netdev *dev, struct pw__qdisc *q)
{
	if (q->hashed || q->parent == PW_TC_H_ROOT)
		return;
	unsigned b = qhash(q->handle);
	q->hnext = dev->qhash[b];
	dev->qhash[b] = q;
	q->hashed = true;
}

void pw__qdisc_hash_del(struct pw_netdev *dev, struct pw__qdisc *q)
{
	if (!q->hashed)
		return;
	for (struct pw__qdisc **pp = &dev->qhash[qhash(q->handle)]; *pp; pp = &(*pp)->hnext)
		if (*pp == q) {
			*pp = q->hnext;
			break;
		}
	q->hashed = false;
	q->hnext = NULL;
}

struct pw__qdisc *pw__qdisc_find(struct pw_netdev *dev, uint32_t handle)
{
	if (handle == 0)
		return NULL; /* the kernel's qdisc_lookup(): default qdiscs are not found */
	if (dev->qdisc && dev->qdisc->handle == handle)
		return dev->qdisc;
	for (unsigned b = 0; b < (1u << PW__QHASH_BITS); b++)
		for (struct pw__qdisc *q = dev->qhash[b]; q; q = q->hnext)
			if (q->handle == handle)
				return q;
	return NULL;
}

uint32_t pw__qdisc_alloc_handle(struct pw_netdev *dev)
{
	for (int i = 0x8000; i > 0; i--) {
		dev->autohandle += 0x10000u;
		if (dev->autohandle == PW_TC_H_MAKE(PW_TC_H_ROOT, 0))
			dev->autohandle = 0x80000000u;
		if (!pw__qdisc_find(dev, dev->autohandle))
			return dev->autohandle;
	}
	return 0;
}

/* ------------------------------------------------------------ building */

/* pw__qdisc_alloc(), _dflt() and _uncharged(): charged against the
 * budget's limit, past it, or not at all (netmem.c). */
static struct pw__qdisc *qdisc_alloc(struct pw_netdev *dev, const struct pw__qdisc_ops *ops,
				     unsigned txq, uint32_t parent, uint32_t handle, void *opt,
				     struct pw__extack *ext, int *err, enum pw__charge how)
{
	size_t size = pw__qdisc_size(ops);
	struct pw__net *net = dev->net;
	int rc = 0;
	if (how == PW__CHARGE_FORCE)
		pw__mem_charge_force(net, size);
	else if (how == PW__CHARGE_LIMIT)
		rc = pw__mem_charge(net, size, ext);
	struct pw__qdisc *q = rc ? NULL : aligned_alloc(PW__CACHELINE, size);
	if (!q) {
		if (!rc && how != PW__CHARGE_NONE)
			pw__mem_uncharge(net, size);
		if (err)
			*err = rc ? rc : -ENOMEM;
		return NULL;
	}
	memset(q, 0, size);
	pw__qlock_init(&q->lock);
	q->ops = ops;
	q->dev = dev;
	q->root = q;
	q->txq = txq;
	q->parent = parent;
	q->handle = handle;
	q->run_cpu = -1;
	q->limit = dev->txqueuelen;
	/* its accuracy figures with it, when its device keeps them: charged
	 * now, so a tree the budget cannot hold whole is refused whole */
	rc = pw__acc_prepare(q, how, ext);
	if (!rc)
		rc = ops->init ? ops->init(q, opt, ext) : 0;
	if (rc) {
		if (how == PW__CHARGE_NONE) {
			free(q->acc);
			free(q);
		} else {
			pw__qdisc_release(q);
		}
		if (err)
			*err = rc;
		return NULL;
	}
	if (err)
		*err = 0;
	return q;
}

struct pw__qdisc *pw__qdisc_alloc(struct pw_netdev *dev, const struct pw__qdisc_ops *ops,
				  unsigned txq, uint32_t parent, uint32_t handle, void *opt,
				  struct pw__extack *ext, int *err)
{
	/* noop is what a delete leaves (an mq child deleted): never refused */
	return qdisc_alloc(dev, ops, txq, parent, handle, opt, ext, err,
			   (ops->flags & PW__QF_BUILTIN) ? PW__CHARGE_FORCE : PW__CHARGE_LIMIT);
}

struct pw__qdisc *pw__qdisc_alloc_dflt(struct pw_netdev *dev, const struct pw__qdisc_ops *ops,
				       unsigned txq, uint32_t parent, int *err)
{
	return qdisc_alloc(dev, ops, txq, parent, 0, NULL, NULL, err, PW__CHARGE_FORCE);
}

struct pw__qdisc *pw__qdisc_alloc_uncharged(struct pw_netdev *dev,
					    const struct pw__qdisc_ops *ops, unsigned txq,
					    uint32_t parent, int *err)
{
	return qdisc_alloc(dev, ops, txq, parent, 0, NULL, NULL, err, PW__CHARGE_NONE);
}

size_t pw__qdisc_bytes(const struct pw__qdisc *q)
{
	return pw__qdisc_size(q->ops) + (q->acc ? sizeof(*q->acc) : 0);
}

void pw__qdisc_release(struct pw__qdisc *q)
{
	if (!q)
		return;
	struct pw__net *net = q->dev->net;
	size_t size = pw__qdisc_size(q->ops);
	pw__acc_free(q);
	free(q);
	pw__mem_uncharge(net, size);
}

int pw__qdisc_default_root(struct pw_netdev *dev)
{
	int rc;
	struct pw__qdisc *q;
	/* charged past the limit: a new device's (charged with its own
	 * struct) or what a delete of the root leaves */
	if (dev->ntxq == 1)
		q = pw__qdisc_alloc_dflt(dev, &pw__pfifo_fast_ops, 0, PW_TC_H_ROOT, &rc);
	else
		q = pw__qdisc_alloc_dflt(dev, &pw__mq_ops, 0, PW_TC_H_ROOT, &rc);
	if (!q)
		return rc;
	q->is_default = true;
	return pw__qdisc_graft_root(dev, q);
}

/* ------------------------------------------------------------ teardown */

struct walk_arg {
	void (*fn)(struct pw__qdisc *q, void *arg);
	void *arg;
};

static int walk_leaf(struct pw__qdisc *q, unsigned long cl, void *arg)
{
	struct walk_arg *wa = arg;
	struct pw__qdisc *leaf = (q->ops->cl_ops && q->ops->cl_ops->leaf) ? q->ops->cl_ops->leaf(q, cl) : NULL;
	if (leaf)
		wa->fn(leaf, wa->arg);
	return 0;
}

/* Call @fn on each qdisc attached under @q's classes (not @q). */
static void for_each_child(struct pw__qdisc *q, void (*fn)(struct pw__qdisc *, void *),
			   void *arg)
{
	if (!(q->ops->cl_ops && q->ops->cl_ops->walk))
		return;
	struct walk_arg wa = { fn, arg };
	q->ops->cl_ops->walk(q, walk_leaf, &wa);
}

/* Mark every root of the tree dead and wait for its runner. */
static void mark_dead(struct pw__qdisc *q, void *arg)
{
	(void)arg;
	if (q->root == q) {
		pw__qlock(&q->lock);
		q->dead = 1;
		while (q->running) {
			pw__qunlock(&q->lock);
			sched_yield();
			pw__qlock(&q->lock);
		}
		pw__qunlock(&q->lock);
	}
	for_each_child(q, mark_dead, NULL);
}

/* Take @q off every CPU's NET_TX lists and wait for a pass running it. */
static void softnet_forget(struct pw__qdisc *q)
{
	struct pw__net *net = q->dev->net;
	for (unsigned c = 0; c < net->ncpus; c++) {
		struct pw__softnet *sn = &net->softnet[c];
		pthread_mutex_lock(&sn->lock);
		for (int l = 0; l < 2; l++) {
			struct pw__qdisc **head = l ? &sn->batch : &sn->head;
			struct pw__qdisc ***tail = l ? &sn->btail : &sn->tail;
			for (struct pw__qdisc **pp = head; *pp; pp = &(*pp)->next_sched)
				if (*pp == q) {
					*pp = q->next_sched;
					if (*tail == &q->next_sched)
						*tail = pp;
					break;
				}
		}
		while (sn->current == q) {
			pthread_mutex_unlock(&sn->lock);
			sched_yield();
			pthread_mutex_lock(&sn->lock);
		}
		pthread_mutex_unlock(&sn->lock);
	}
	__atomic_store_n(&q->sched, 0, __ATOMIC_RELEASE);
}

struct destroy_arg {
	enum pw_drop_reason reason;
};

static void destroy_tree(struct pw__qdisc *q, void *arg)
{
	struct destroy_arg *da = arg;
	struct pw_netdev *dev = q->dev;
	for_each_child(q, destroy_tree, arg);
	pw__qdisc_hash_del(dev, q);
	pw__est_stop(q);
	struct pw__drops d;
	pw__pktq_init(&d.q);
	pw__qlock(&q->root->lock);
	if (q->ops->reset)
		q->ops->reset(q, &d, da->reason);
	if (q->peeked) { /* counted in st, which reset cleared */
		pw__drop_later(&d, q->peeked, da->reason);
		q->peeked = NULL;
	}
	if (q->root == q && q->requeued) {
		pw__drop_later(&d, q->requeued, da->reason);
		q->requeued = NULL;
	}
	pw__qunlock(&q->root->lock);
	if (q->ops->destroy)
		q->ops->destroy(q); /* stops its watchdog: nothing schedules it now */
	if (q->root == q)
		softnet_forget(q);
	pw__dev_drops_flush(dev, &d);
	pw__qdisc_release(q);
}

void pw__qdisc_free(struct pw__qdisc *q, enum pw_drop_reason reason)
{
	if (!q)
		return;
	mark_dead(q, NULL);
	pw__dev_synchronize(q->dev);
	struct destroy_arg da = { reason };
	destroy_tree(q, &da);
}

/* ------------------------------------------------------------ grafting */

static void hash_children(struct pw__qdisc *q, void *arg)
{
	pw__qdisc_hash_add(arg, q);
	for_each_child(q, hash_children, arg);
}

int pw__qdisc_graft_root(struct pw_netdev *dev, struct pw__qdisc *q)
{
	struct pw__qdisc *old = dev->qdisc;
	q->parent = PW_TC_H_ROOT;
	q->parent_q = NULL;
	if (q->ops->flags & PW__QF_MQ) {
		for (unsigned i = 0; i < dev->ntxq; i++) {
			unsigned long cl = q->ops->cl_ops->find(q, PW_TC_H_MAKE(q->handle, i + 1));
			struct pw__qdisc *child = q->ops->cl_ops->leaf(q, cl);
			__atomic_store_n(&dev->txq[i].qdisc, child, __ATOMIC_SEQ_CST);
		}
		for_each_child(q, hash_children, dev);
	} else {
		q->root = q;
		for (unsigned i = 0; i < dev->ntxq; i++)
			__atomic_store_n(&dev->txq[i].qdisc, q, __ATOMIC_SEQ_CST);
		for_each_child(q, hash_children, dev);
	}
	dev->qdisc = q;
	if (old)
		pw__qdisc_free(old, PW_DROP_FLUSH);
	return 0;
}

static void set_root(struct pw__qdisc *q, void *arg)
{
	struct pw__qdisc *p = arg;
	q->root = p->root;
	q->txq = p->txq;
	for_each_child(q, set_root, arg);
}

int pw__qdisc_graft_class(struct pw_netdev *dev, struct pw__qdisc *p, unsigned long cl,
			  uint32_t classid, struct pw__qdisc *newq, struct pw__extack *ext)
{
	if (!(p->ops->cl_ops && p->ops->cl_ops->graft))
		return -EOPNOTSUPP;
	if (newq) {
		newq->parent = classid;
		newq->parent_q = p;
		set_root(newq, p);
	}
	struct pw__qdisc *old = NULL;
	int rc = p->ops->cl_ops->graft(p, cl, newq, &old, ext);
	if (rc)
		return rc;
	if (newq)
		hash_children(newq, dev);
	if (old)
		pw__qdisc_free(old, PW_DROP_FLUSH);
	return 0;
}

/* ------------------------------------------------------ child helpers */

struct pw_pkt *pw__qdisc_peek_dequeued(struct pw__qdisc *q)
{
	if (!q->peeked) {
		struct pw_pkt *p = q->ops->dequeue(q);
		if (p) { /* dequeue uncounted it: it is still q's */
			q->peeked = p;
			pw__q_backlog_inc(q, p);
		}
	}
	return q->peeked;
}

struct pw_pkt *pw__qdisc_dequeue_peeked(struct pw__qdisc *q)
{
	struct pw_pkt *p = q->peeked;
	if (p) {
		q->peeked = NULL;
		pw__q_backlog_dec(q, p);
	} else {
		p = q->ops->dequeue(q);
	}
	if (__builtin_expect(q->acc != NULL, 0) && p) /* a child's release */
		pw__acc_release(q, q->root, p);
	return p;
}

void pw__qdisc_tree_reduce_backlog(struct pw__qdisc *q, uint32_t n, uint64_t len)
{
	if (!n && !len)
		return;
	for (struct pw__qdisc *a = q->parent_q; a && !(a->ops->flags & PW__QF_MQ);
	     a = a->parent_q) {
		a->st.qlen -= n;
		a->st.backlog -= len;
	}
}

struct pw__qdisc *pw__qdisc_replace(struct pw__qdisc *sch, struct pw__qdisc *newq,
				    struct pw__qdisc **slot)
{
	pw__qlock(&sch->root->lock);
	struct pw__qdisc *old = *slot;
	*slot = newq;
	if (old) {
		/* the old child leaves with its packets: sch and above stop
		 * counting them (its own counters stay for the flush) */
		sch->st.qlen -= old->st.qlen;
		sch->st.backlog -= old->st.backlog;
		pw__qdisc_tree_reduce_backlog(sch, old->st.qlen, old->st.backlog);
	}
	pw__qunlock(&sch->root->lock);
	return old;
}

int pw__qdisc_graft_txq(struct pw_netdev *dev, unsigned txq, struct pw__qdisc *newq)
{
	struct pw__qdisc *mq = dev->qdisc;
	if (!mq || !(mq->ops->flags & PW__QF_MQ) || txq >= dev->ntxq)
		return -EINVAL;
	uint32_t classid = PW_TC_H_MAKE(mq->handle, txq + 1);
	unsigned long cl = mq->ops->cl_ops->find(mq, classid);
	if (!cl)
		return -ENOENT;
	int rc;
	if (!newq) {
		newq = pw__qdisc_alloc_dflt(dev, &pw__pfifo_fast_ops, txq, classid, &rc);
		if (!newq)
			return rc;
		newq->is_default = true;
	}
	newq->parent = classid;
	newq->parent_q = mq;
	newq->root = newq;
	newq->txq = txq;
	struct pw__qdisc *old = NULL;
	rc = mq->ops->cl_ops->graft(mq, cl, newq, &old, NULL);
	if (rc)
		return rc;
	__atomic_store_n(&dev->txq[txq].qdisc, newq, __ATOMIC_SEQ_CST);
	hash_children(newq, dev);
	if (old)
		pw__qdisc_free(old, PW_DROP_FLUSH);
	return 0;
}

int pw__qdisc_change(struct pw__qdisc *q, void *opt, struct pw__extack *ext)
{
	if (!q->ops->change)
		return -EOPNOTSUPP;
	pw__qlock(&q->root->lock);
	int rc = q->ops->change(q, opt, ext);
	pw__qunlock(&q->root->lock);
	if (ext && ext->drops.q.head)
		pw__dev_drops_flush(q->dev, &ext->drops);
	return rc;
}

void pw__qdisc_read_stats(struct pw__qdisc *q, struct pw_qdisc_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (q->ops->stats) {
		q->ops->stats(q, st);
	} else {
		pw__qlock(&q->root->lock);
		st->bytes = q->st.bytes;
		st->packets = q->st.packets;
		st->drops = q->st.drops;
		st->overlimits = q->st.overlimits;
		st->requeues = q->st.requeues;
		st->qlen = q->st.qlen;
		st->backlog = q->st.backlog;
		pw__qunlock(&q->root->lock);
	}
	if (q->est) {
		st->has_rate = 1;
		pw__est_read(q, &st->bps, &st->pps);
	}
}

/* ------------------------------------------------------------- running */

/* __qdisc_run(): the caller holds q->lock and set q->running. */
static void qdisc_run_locked(struct pw__qdisc *q)
{
	struct pw_netdev *dev = q->dev;
	int quota = PW__TX_QUOTA;
	__atomic_store_n(&q->run_cpu, pw_this_cpu(), __ATOMIC_RELAXED);
	for (;;) {
		struct pw_pkt *p = q->requeued;
		if (p) {
			q->requeued = NULL;
			pw__q_backlog_dec(q, p);
		} else {
			p = q->ops->dequeue(q);
			if (!p)
				break;
			if (__builtin_expect(q->acc != NULL, 0)) /* a root's release */
				pw__acc_release(q, q, p);
		}
		if (!p)
			break;
		unsigned txq = dev->ntxq == 1 ? 0 : q->parent_q ? q->txq : p->pw_txq;
		struct pw_sock *sk = p->pw_skq ? p->sk : NULL;
		pw__pkt_leaves(p); /* after xmit the packet is the driver's */
		uint32_t wakes = q->wakes;
		pw__qunlock(&q->lock);
		int rc = dev->ops.xmit(dev, txq, p, dev->ctx);
		pw__qlock(&q->lock);
		if (rc == PW_NETDEV_TX_BUSY) {
			if (sk) { /* still ours: it counts again */
				p->pw_skq = 1;
				__atomic_fetch_add(&sk->pw_inflight, 1, __ATOMIC_ACQ_REL);
			}
			q->requeued = p;
			pw__q_backlog_inc(q, p);
			q->st.requeues++;
			if (q->wakes == wakes) {
				q->stopped = 1;
			} else if (!q->dead) {
				/* the driver woke the queue while it was refusing
				 * this packet: try again from NET_TX, not stop */
				pw__netif_schedule(q);
			}
			break;
		}
		if (--quota == 0) {
			if (!q->dead)
				pw__netif_schedule(q);
			break;
		}
	}
}

void pw__qdisc_run(struct pw__qdisc *q)
{
	if (pw__qdisc_run_begin(q)) {
		qdisc_run_locked(q);
		pw__qdisc_run_end(q);
	}
}

void pw__netif_schedule(struct pw__qdisc *q)
{
	if (__atomic_exchange_n(&q->sched, 1, __ATOMIC_ACQ_REL))
		return; /* on a NET_TX list already */
	struct pw__net *net = q->dev->net;
	int cpu = pw_this_cpu();
	if (cpu < 0 || cpu >= (int)net->ncpus)
		cpu = (int)(q->txq % net->ncpus);
	struct pw__softnet *sn = &net->softnet[cpu];
	pthread_mutex_lock(&sn->lock);
	q->next_sched = NULL;
	*sn->tail = q;
	sn->tail = &q->next_sched;
	pthread_mutex_unlock(&sn->lock);
	pw_queue_work_on(net->rt, (unsigned)cpu, &sn->work); /* -EBUSY: queued already */
}

void pw__net_tx_action(struct pw_work *w)
{
	struct pw__softnet *sn = pw_container_of(w, struct pw__softnet, work);
	pthread_mutex_lock(&sn->lock);
	if (sn->head) { /* this pass runs what was scheduled before it began */
		*sn->btail = sn->head;
		sn->btail = sn->tail;
		sn->head = NULL;
		sn->tail = &sn->head;
	}
	for (;;) {
		struct pw__qdisc *q = sn->batch;
		if (!q)
			break;
		sn->batch = q->next_sched;
		if (!sn->batch)
			sn->btail = &sn->batch;
		q->next_sched = NULL;
		sn->current = q;
		pthread_mutex_unlock(&sn->lock);
		__atomic_store_n(&q->sched, 0, __ATOMIC_RELEASE);
		pw__qlock(&q->lock);
		pw__qdisc_run(q);
		pw__qunlock(&q->lock);
		pthread_mutex_lock(&sn->lock);
		sn->current = NULL;
	}
	pthread_mutex_unlock(&sn->lock);
}
