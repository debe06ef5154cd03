/* SPDX-License-Identifier: MIT */
/*
 * The net layer's kernel side: its structures and the interface between
 * its core (dev.c, qdisc.c, watchdog.c, estimator.c, extack.c) and the
 * qdiscs' data paths (sched/), as the kernel's sch_generic.h.  For src/net
 * only.  tc's side (tc/: parsing, printing, the commands) builds on this
 * header and is never included by it: the kernel side calls nothing in
 * tc/ (docs/design/layout.md).
 *
 * Locks, outermost first (docs/design/net.md):
 *  1. the layer's configuration mutex (struct pw__net.cfg_lock): tc
 *     commands, device create/destroy, XPS changes, estimator setup.
 *  2. a root qdisc's lock (struct pw__qdisc.lock, taken through
 *     pw__qlock()): its packets, its children's packets and every field
 *     the data path changes.  A root is the qdisc a TX queue points at
 *     (txq->qdisc): mq's children are roots, mq itself is not.
 *  3. a CPU's softnet lock (the NET_TX list).
 * Never two root locks at once.  No lock across ops.xmit or ops.drop.
 */
#ifndef PW_NET_INTERNAL_H
#define PW_NET_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <pinwheel/hrtimer.h>
#include <pinwheel/net.h>
#include <pinwheel/runtime.h>
#include <pinwheel/timer.h>
#include <pinwheel/worker.h>

#include "pkt_sched.h"

#define PW__CACHELINE 64

/* ------------------------------------------------------------ handles */

/* PW_TC_H_ROOT, PW_TC_H_MAJ/MIN/MAKE: pkt_sched.h */

/* --------------------------------------------------------- packet lists */

/* A singly linked FIFO of packets through pkt->pw_next. */
struct pw__pktq {
	struct pw_pkt *head, *tail;
	uint32_t len;
};

static inline void pw__pktq_init(struct pw__pktq *q)
{
	q->head = q->tail = NULL;
	q->len = 0;
}

static inline void pw__pktq_push(struct pw__pktq *q, struct pw_pkt *p)
{
	p->pw_next = NULL;
	if (q->tail)
		q->tail->pw_next = p;
	else
		q->head = p;
	q->tail = p;
	q->len++;
}

static inline void pw__pktq_push_head(struct pw__pktq *q, struct pw_pkt *p)
{
	p->pw_next = q->head;
	q->head = p;
	if (!q->tail)
		q->tail = p;
	q->len++;
}

static inline struct pw_pkt *pw__pktq_pop(struct pw__pktq *q)
{
	struct pw_pkt *p = q->head;
	if (p) {
		q->head = p->pw_next;
		if (!q->head)
			q->tail = NULL;
		p->pw_next = NULL;
		q->len--;
	}
	return p;
}

/*
 * Packets to hand to ops.drop once the lock is released (the kernel's
 * to_free list): each carries its reason in pw_reason.
 */
struct pw__drops {
	struct pw__pktq q;
};

static inline void pw__drop_later(struct pw__drops *d, struct pw_pkt *p,
				  enum pw_drop_reason r)
{
	p->pw_reason = (uint32_t)r;
	pw__pktq_push(&d->q, p);
}

/* ------------------------------------------------------------ the lock */

/* A root qdisc's spinlock, with its contention statistics (the seed 003
 * figure).  Test-and-test-and-set; only a contended acquisition reads the
 * clock.  Statistics are written by the holder (relaxed atomics). */
struct pw__qlock {
	uint32_t word; /* atomic: 0 free, 1 held */
	uint32_t pad_;
	uint64_t acquisitions, contended, wait_ns;
	/* the holder's clock reading (pw__net_now()): read at most once per
	 * acquisition, 0 = not read yet; cleared by every pw__qlock() */
	uint64_t now;
};

void pw__qlock_init(struct pw__qlock *l);
void pw__qlock(struct pw__qlock *l);
void pw__qunlock(struct pw__qlock *l);
bool pw__qtrylock(struct pw__qlock *l);

/* --------------------------------------------------------------- qdisc */

struct pw__qdisc;
struct pw__net;
struct pw__extack;

/* The statistics a qdisc keeps (the kernel's bstats + qstats + q.qlen).
 * Written under the root lock; bytes and packets also read lock-free by the
 * estimator, so they are stored with relaxed atomics. */
struct pw__qstats {
	uint64_t bytes, packets;
	uint32_t drops, overlimits, requeues, qlen;
	uint64_t backlog;
};

/* Class information for tc class show. */
struct pw__class_info {
	uint32_t classid, parent, leaf; /* leaf: the attached qdisc's handle or 0 */
	struct pw_qdisc_stats st;
	bool no_stats; /* the kernel dumps no statistics for it (tbf's class) */
};

/*
 * A qdisc kind's kernel side, as the kernel splits it: the data path and
 * lifetime (struct pw__qdisc_ops, the kernel's Qdisc_ops) and, for a
 * classful kind, its classes (struct pw__class_ops, Qdisc_class_ops).
 * Options arrive as a struct the kind's tc side parsed from tc's words
 * (tc/: struct pw__qdisc_util, iproute2's qdisc_util), as the kernel gets
 * netlink attributes from tc; that side also prints.  Nothing here points
 * to tc's side: tc finds a kind's util by its id.
 *
 * Every hook runs under the root lock of the qdisc's queue unless said
 * otherwise.  Errors meant for the user go to the request's extack
 * (pw__extack_msg()), as the kernel's NL_SET_ERR_MSG.
 */
struct pw__class_ops;

struct pw__qdisc_ops {
	const char *id;
	size_t priv_size;
	unsigned flags;
#define PW__QF_MQ 0x1           /* mq: its children are the queues' roots */
#define PW__QF_CLASSFUL 0x2
#define PW__QF_ROOT_ONLY 0x4
#define PW__QF_BUILTIN 0x8     /* noop: not listed, not addable */
	const struct pw__class_ops *cl_ops; /* NULL: classless */
	/* data path (root lock held) */
	int (*enqueue)(struct pw_pkt *pkt, struct pw__qdisc *q, struct pw__drops *d);
	struct pw_pkt *(*dequeue)(struct pw__qdisc *q);
	struct pw_pkt *(*peek)(struct pw__qdisc *q); /* optional (htb's leaves) */
	/* configuration.  init: no lock (the qdisc is not reachable yet);
	 * opt NULL = defaults (a default qdisc).  change: root lock held;
	 * NULL = the kind cannot be changed (-EOPNOTSUPP).  What can fail or
	 * allocate is done by the tc side's parse, before. */
	int (*init)(struct pw__qdisc *q, void *opt, struct pw__extack *ext);
	int (*change)(struct pw__qdisc *q, void *opt, struct pw__extack *ext);
	/* flush every packet to @d with @reason (root lock held); teardown
	 * only.  The qdiscs under its classes (cl_ops->leaf) were flushed and
	 * freed by the core before: a kind flushes only what it holds itself
	 * (htb's direct queue) and zeroes its counters. */
	void (*reset)(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason reason);
	/* free what init allocated (not the cl_ops->leaf children: the core
	 * frees those); no packets left, watchdog stopped; no lock */
	void (*destroy)(struct pw__qdisc *q);
	/* statistics other than the qdisc's own counters (mq: the sum of its
	 * children); optional; no lock held (takes what it needs) */
	void (*stats)(struct pw__qdisc *q, struct pw_qdisc_stats *st);
};

/*
 * A classful kind's classes (the kernel's Qdisc_class_ops).  A class is
 * named by an opaque unsigned long (0: none), as the kernel's.
 */
struct pw__class_ops {
	unsigned long (*find)(struct pw__qdisc *q, uint32_t classid);
	/* attach @newq under class @cl (NULL: a default qdisc); returns the old
	 * one in *old (the caller flushes and destroys it).  cfg_lock held, no
	 * root lock: a kind under which packets flow (tbf, htb) builds what it
	 * needs, then swaps under the root lock with pw__qdisc_replace().
	 * @newq's identity (parent, parent_q, txq, root) is set by the caller. */
	int (*graft)(struct pw__qdisc *q, unsigned long cl, struct pw__qdisc *newq,
		     struct pw__qdisc **old, struct pw__extack *ext);
	struct pw__qdisc *(*leaf)(struct pw__qdisc *q, unsigned long cl);
	/* call @fn for each class in dump order until it returns nonzero */
	void (*walk)(struct pw__qdisc *q,
		     int (*fn)(struct pw__qdisc *q, unsigned long cl, void *arg), void *arg);
	/* what a dump of the class carries (root lock held) */
	void (*info)(struct pw__qdisc *q, unsigned long cl, struct pw__class_info *ci);
	/* tc class add|change|replace|del (optional: -EOPNOTSUPP without).
	 * change: the kernel's cops->change(): create class @classid under
	 * @parentid (*cl == 0) or change *cl; @copt (the tc side's parsed
	 * class options) NULL = no options sent.  delete: cops->delete().
	 * Both run with cfg_lock held and no root lock: they allocate first,
	 * then take the root lock for the tree; packets they flush go to
	 * ops.drop before they return. */
	int (*change)(struct pw__qdisc *q, uint32_t classid, uint32_t parentid, void *copt,
		      unsigned long *cl, struct pw__extack *ext);
	int (*delete)(struct pw__qdisc *q, unsigned long cl, struct pw__extack *ext);
};

struct pw__watchdog {
	struct pw_hrtimer timer;
	struct pw__qdisc *q;
	uint64_t last_expires;
};

struct pw__estimator;
struct pw__acc;

struct pw__qdisc {
	/* the root part: used when this qdisc is a queue's root */
	struct pw__qlock lock;
	uint32_t running;   /* under lock: a CPU is dequeuing (qdisc_run) */
	uint32_t sched;     /* atomic: on a CPU's NET_TX list */
	uint32_t dead;      /* under lock: replaced/deleted, do not enqueue */
	uint32_t stopped;   /* under lock: the driver said busy */
	uint32_t wakes;     /* under lock: pw_netif_wake_queue() calls */
	uint64_t wd_arms;   /* written under lock, read atomically: its tree's
			     * watchdog (re)starts (pw_netdev_watchdog_arms()) */
	struct pw_pkt *requeued; /* under lock: the packet the driver refused */
	struct pw__qdisc *next_sched; /* the softnet list */
	int run_cpu;        /* atomic: the CPU that last dequeued (tests) */
	/* identity (cfg_lock) */
	const struct pw__qdisc_ops *ops;
	struct pw_netdev *dev;
	struct pw__qdisc *root;   /* the root whose lock covers this qdisc */
	struct pw__qdisc *parent_q; /* the parent qdisc or NULL */
	uint32_t handle, parent;  /* parent: PW_TC_H_ROOT or the parent class */
	unsigned txq;             /* the TX queue (roots) */
	bool is_default;          /* created by the layer, handle 0 */
	bool hashed;              /* in the device's handle hash */
	struct pw__qdisc *hnext;  /* the device's handle hash (dump order) */
	uint32_t limit;           /* most queues keep one; the kinds use it */
	bool invisible;           /* a kind's default child: hashed, not shown
				   * by qdisc show (the kernel's TCQ_F_INVISIBLE) */
	struct pw_pkt *peeked;    /* under lock: pw__qdisc_peek_dequeued()'s
				   * stash (the kernel's gso_skb), counted in st */
	struct pw__qstats st;
	struct pw__estimator *est;
	struct pw__acc *acc;      /* accuracy.h: set while its device's accuracy
				   * is on (cfg_lock + root lock), else NULL */
	char priv[] __attribute__((aligned(16)));
};

static inline void *pw__qdisc_priv(struct pw__qdisc *q)
{
	return q->priv;
}

/* Accounting helpers, root lock held. */
static inline void pw__q_backlog_inc(struct pw__qdisc *q, const struct pw_pkt *p)
{
	q->st.qlen++;
	q->st.backlog += p->len;
}
static inline void pw__q_backlog_dec(struct pw__qdisc *q, const struct pw_pkt *p)
{
	q->st.qlen--;
	q->st.backlog -= p->len;
}
static inline void pw__q_bstats(struct pw__qdisc *q, const struct pw_pkt *p)
{
	__atomic_store_n(&q->st.bytes, q->st.bytes + p->len, __ATOMIC_RELAXED);
	__atomic_store_n(&q->st.packets, q->st.packets + 1, __ATOMIC_RELAXED);
}
/*
 * The kernel's private enqueue return bits above NET_XMIT_MASK (0x0f):
 * a child returns SUCCESS | BYPASS for a packet it consumed without
 * queueing it (netem's loss), so its parent counts a drop and no qlen;
 * STOLEN (a packet taken by an action) is not counted as a drop.
 * pw_dev_queue_xmit() masks them off, as dev_qdisc_enqueue() does.
 */
#define PW__NET_XMIT_MASK   0x0f
#define PW__NET_XMIT_STOLEN 0x10000
#define PW__NET_XMIT_BYPASS 0x20000
/* net_xmit_drop_count(): does a parent count this child's return as a drop? */
static inline int pw__xmit_drop_count(int rc)
{
	return !(rc & PW__NET_XMIT_STOLEN);
}

/* Dropped on enqueue (never queued): counted, to the drop list. */
static inline int pw__q_drop(struct pw__qdisc *q, struct pw_pkt *p, struct pw__drops *d,
			     enum pw_drop_reason r)
{
	q->st.drops++;
	pw__drop_later(d, p, r);
	return PW_NET_XMIT_DROP;
}

/* A packet leaves the layer (just before ops.xmit or ops.drop): its
 * socket's in-flight count, which XPS's ooo_okay reads, goes down. */
static inline void pw__pkt_leaves(struct pw_pkt *p)
{
	if (p->pw_skq) {
		p->pw_skq = 0;
		__atomic_fetch_sub(&p->sk->pw_inflight, 1, __ATOMIC_ACQ_REL);
	}
}

/*
 * Peeking and the parent's view of a child (root lock held).  A kind
 * without ops.peek is peeked by dequeuing its head and keeping it in
 * q->peeked (the kernel's qdisc_peek_dequeued()): it stays counted in the
 * child's qlen/backlog until pw__qdisc_dequeue_peeked() hands it out, so
 * a parent sees the same counters either way.  A parent that peeks a
 * child dequeues it through pw__qdisc_dequeue_peeked(); teardown flushes
 * the stash with the child's own packets (qdisc.c).
 */
struct pw_pkt *pw__qdisc_peek_dequeued(struct pw__qdisc *q);
static inline struct pw_pkt *pw__qdisc_peek(struct pw__qdisc *q)
{
	return q->ops->peek ? q->ops->peek(q) : pw__qdisc_peek_dequeued(q);
}
struct pw_pkt *pw__qdisc_dequeue_peeked(struct pw__qdisc *q);
/* @n packets of @len bytes left @q other than through its parents'
 * dequeue (a purge, a graft): every ancestor's qlen/backlog goes down by
 * as much (the kernel's qdisc_tree_reduce_backlog(), without qlen_notify:
 * htb skips an emptied leaf at its next dequeue).  Root lock held. */
void pw__qdisc_tree_reduce_backlog(struct pw__qdisc *q, uint32_t n, uint64_t len);
/* The kernel's qdisc_replace(): under @sch's root lock, put @newq in
 * *@slot and take the old one out of @sch's (and its ancestors')
 * counters; returns the old one (the caller frees it, which flushes its
 * packets).  cfg_lock held, no root lock. */
struct pw__qdisc *pw__qdisc_replace(struct pw__qdisc *sch, struct pw__qdisc *newq,
				    struct pw__qdisc **slot);

/* The qdisc at the root of this qdisc's queue (for netem's duplicate). */
static inline struct pw__qdisc *pw__qdisc_root(struct pw__qdisc *q)
{
	return q->root;
}

/* The runtime's clock (the layer's "now", ktime_get_ns()), read at most
 * once per hold of the root lock: an enqueue and the dequeue that follows
 * it under the same hold share one reading (a clock_gettime() through the
 * vDSO is a large share of a packet's cost; docs/benchmarks.md).  Root
 * lock held. */
uint64_t pw__net_now(const struct pw__qdisc *q);

/* The driver's clone op for @q's device, or NULL. */
struct pw_pkt *pw__qdisc_clone(struct pw__qdisc *q, const struct pw_pkt *p);

/* Watchdogs (watchdog.c): the kernel's qdisc_watchdog_*.  Init when the
 * qdisc is built; schedule/cancel under the root lock; destroy with no
 * lock (waits for a running callback). */
void pw__watchdog_init(struct pw__watchdog *wd, struct pw__qdisc *q);
void pw__watchdog_schedule_range_ns(struct pw__watchdog *wd, uint64_t expires,
				    uint64_t delta_ns);
static inline void pw__watchdog_schedule_ns(struct pw__watchdog *wd, uint64_t expires)
{
	pw__watchdog_schedule_range_ns(wd, expires, 0);
}
void pw__watchdog_cancel(struct pw__watchdog *wd);
void pw__watchdog_destroy(struct pw__watchdog *wd);

/* Reschedule @root on this CPU's NET_TX (the kernel's __netif_schedule()).
 * Context: any thread; no lock needed. */
void pw__netif_schedule(struct pw__qdisc *root);

/* ------------------------------------------------------------- devices */

/* The per-CPU NET_TX state (the kernel's softnet_data.output_queue). */
struct pw__softnet {
	pthread_mutex_t lock;
	struct pw__qdisc *head, **tail;   /* scheduled */
	struct pw__qdisc *batch, **btail; /* taken by the running NET_TX pass */
	struct pw__qdisc *current; /* the qdisc being run (destroy waits) */
	struct pw_work work;
	struct pw__net *net;
	unsigned cpu;
} __attribute__((aligned(PW__CACHELINE)));

/* The layer's state per runtime (its extension slot). */
struct pw__net {
	struct pw_runtime *rt;
	pthread_mutex_t cfg_lock;
	struct pw_netdev *devs;       /* cfg_lock */
	int watchdog_pinned;          /* atomic */
	int watchdog_net_tx;          /* atomic: pw_net_set_watchdog_net_tx() */
	int sk_timers_pinned;         /* atomic (sockets) */
	unsigned ncpus;
	struct pw__softnet *softnet;  /* [ncpus] */
	uint64_t mem;                 /* atomic: tc state's bytes (netmem.c) */
	struct pw_mem_budget *budget; /* atomic: charged with mem, or NULL */
	/* cfg_lock: where a netem given no `seed` draws its seeds: the OS's
	 * random source (0), or this splitmix64 state (1: a link's seed,
	 * tc/link.c), so that a whole run replays */
	int seeded;
	uint64_t seed_state;
};

/* The layer's state of @rt, created on first use.  NULL on -ENOMEM. */
struct pw__net *pw__net_get(struct pw_runtime *rt);

/* A grace-period counter slot per CPU (plus one for threads that are no
 * CPU): transmits hold it while they read txq->qdisc. */
struct pw__rcu_slot {
	uint64_t n[2]; /* atomic */
} __attribute__((aligned(PW__CACHELINE)));

struct pw__txq {
	struct pw__qdisc *qdisc; /* atomic: this queue's root qdisc */
	unsigned index;
} __attribute__((aligned(PW__CACHELINE)));

#define PW__QHASH_BITS 4
struct pw_netdev {
	char name[PW_IFNAMSIZ];
	struct pw__net *net;
	struct pw_runtime *rt;
	struct pw_netdev_ops ops;
	void *ctx;
	struct pw_netdev *next;    /* net->devs */
	unsigned ntxq;
	uint32_t txqueuelen;
	int watchdog_pinned;       /* -1 follow the runtime */
	struct pw__qdisc *qdisc;   /* cfg_lock: the root (mq or a queue's root) */
	struct pw__qdisc *qhash[1u << PW__QHASH_BITS]; /* cfg_lock */
	uint32_t autohandle;       /* cfg_lock */
	int acc_on;                /* cfg_lock: pw_netdev_accuracy_enable() */
	/* XPS: per CPU, the queues it may use (atomic pointer to an array:
	 * [0] = count, then the queues); replaced whole by set_xps */
	uint16_t **xps;            /* [ncpus] */
	uint64_t **xps_masks;      /* [ntxq] (cfg_lock) */
	unsigned rcu_idx;          /* atomic */
	struct pw__rcu_slot *rcu;  /* [ncpus + 1] */
	struct pw__txq *txq;       /* [ntxq] */
};

/* Wait until every transmit that could have read an old txq->qdisc is
 * done.  cfg_lock held. */
void pw__dev_synchronize(struct pw_netdev *dev);

/* Hand the packets on @d to ops.drop (no lock held). */
void pw__dev_drops_flush(struct pw_netdev *dev, struct pw__drops *d);

/* The qdisc kinds. */
const struct pw__qdisc_ops *pw__qdisc_lookup_ops(const char *kind);
extern const struct pw__qdisc_ops pw__pfifo_ops, pw__bfifo_ops, pw__pfifo_head_drop_ops,
	pw__pfifo_fast_ops, pw__mq_ops, pw__netem_ops, pw__noop_ops,
	pw__tbf_ops, pw__htb_ops;
extern const struct pw__qdisc_ops pw__fq_ops;
extern const struct pw__qdisc_ops pw__trace_ops;

/*
 * qdisc.c: building and tearing down (cfg_lock held for all of these).
 * pw__qdisc_alloc(): a qdisc of @ops for @dev's queue @txq, parent @parent,
 * handle @handle, initialised with @opt (NULL = defaults).
 * pw__qdisc_graft_root(): make @q the device root (mq: its children become
 * the queue roots), returning the previous tree flushed (PW_DROP_FLUSH) and
 * freed.  pw__qdisc_free(): flush what it holds with @reason, stop its
 * watchdog and estimator (through ops->destroy), free it and its children.
 */
struct pw__qdisc *pw__qdisc_alloc(struct pw_netdev *dev, const struct pw__qdisc_ops *ops,
				  unsigned txq, uint32_t parent, uint32_t handle, void *opt,
				  struct pw__extack *ext, int *err);
int pw__qdisc_graft_root(struct pw_netdev *dev, struct pw__qdisc *q);
void pw__qdisc_free(struct pw__qdisc *q, enum pw_drop_reason reason);
/* A default qdisc (no options, handle 0) charged past the budget's limit
 * (netmem.c): what a delete leaves, a new device's.  *@err as above. */
struct pw__qdisc *pw__qdisc_alloc_dflt(struct pw_netdev *dev, const struct pw__qdisc_ops *ops,
				       unsigned txq, uint32_t parent, int *err);
/* A default qdisc charged to nothing: a child tc's side builds ahead of a
 * change (tbf's), charged by the kind that adopts it (pw__qdisc_bytes()),
 * or freed uncharged (its memory and q->acc's: plain free()). */
struct pw__qdisc *pw__qdisc_alloc_uncharged(struct pw_netdev *dev,
					    const struct pw__qdisc_ops *ops, unsigned txq,
					    uint32_t parent, int *err);
/* What @q's allocation cost: its struct and private area, its accuracy
 * state (what pw__qdisc_release() uncharges). */
size_t pw__qdisc_bytes(const struct pw__qdisc *q);
/* Free @q's memory alone (its accuracy state too) and uncharge it: the
 * last step of pw__qdisc_free(), and the whole of freeing a qdisc that
 * was never grafted and holds nothing (ops->destroy already called). */
void pw__qdisc_release(struct pw__qdisc *q);
/* Attach @newq (NULL: the kind's default) under class @cl (@classid) of
 * @p, a classful qdisc other than mq, through p->ops->graft; the old one
 * is flushed (PW_DROP_FLUSH) and freed.  @newq and its subtree take p's
 * root, queue and lock. */
int pw__qdisc_graft_class(struct pw_netdev *dev, struct pw__qdisc *p, unsigned long cl,
			  uint32_t classid, struct pw__qdisc *newq, struct pw__extack *ext);
/* Replace the root of queue @txq (an mq child): @newq NULL = a default. */
int pw__qdisc_graft_txq(struct pw_netdev *dev, unsigned txq, struct pw__qdisc *newq);
/* The device's default root tree. */
int pw__qdisc_default_root(struct pw_netdev *dev);
/* Find by handle (MAJ:0) among the device's qdiscs; NULL if none. */
struct pw__qdisc *pw__qdisc_find(struct pw_netdev *dev, uint32_t handle);
/* The device's handle hash (the kernel's dev->qdisc_hash: dump order). */
void pw__qdisc_hash_add(struct pw_netdev *dev, struct pw__qdisc *q);
void pw__qdisc_hash_del(struct pw_netdev *dev, struct pw__qdisc *q);
/* A fresh handle (the kernel's qdisc_alloc_handle: 8001:, 8002:, ...). */
uint32_t pw__qdisc_alloc_handle(struct pw_netdev *dev);
/* Statistics snapshot (takes the root lock). */
void pw__qdisc_read_stats(struct pw__qdisc *q, struct pw_qdisc_stats *st);
/* Change a qdisc's options under its root lock. */
int pw__qdisc_change(struct pw__qdisc *q, void *opt, struct pw__extack *ext);

/*
 * Running a root qdisc, as the kernel's qdisc_run_begin() / __qdisc_run()
 * / qdisc_run_end(): at most one CPU dequeues a root at a time, and a root
 * that is dead (replaced or deleted) or stopped (the driver said busy) is
 * not run.  The callers (a transmit, a watchdog, NET_TX) hold root->lock.
 */
static inline bool pw__qdisc_run_begin(struct pw__qdisc *root)
{
	if (root->dead || root->running || root->stopped)
		return false;
	root->running = 1;
	return true;
}
static inline void pw__qdisc_run_end(struct pw__qdisc *root)
{
	root->running = 0;
}
/* If no CPU is running @root and it may run: dequeue and hand to the
 * driver up to the quota (the kernel's qdisc_run()).  Context: a CPU's
 * thread or any thread; root->lock held, which is dropped around each
 * driver call and held again on return. */
void pw__qdisc_run(struct pw__qdisc *root);

/* The NET_TX work of a CPU (the kernel's net_tx_action()). */
void pw__net_tx_action(struct pw_work *w);

/* --------------------------------------------------------- estimators */

/* gen_estimator on a pinwheel wheel timer (estimator.c).  Parameters as tc
 * sends them (tc/tc.c parses them): interval code -2..3 (period
 * 2^(i+2)/4 s), ewma_log 1..31. */
int pw__est_start(struct pw__qdisc *q, int8_t interval_code, uint8_t ewma_log);
void pw__est_stop(struct pw__qdisc *q); /* no lock held; waits for the timer */
void pw__est_read(struct pw__qdisc *q, uint64_t *bps, uint64_t *pps);

/* ------------------------------------------------------ tc state's memory */

/*
 * netmem.c: the bytes of tc state, counted in net->mem and charged to
 * net->budget (the design is there).  pw__mem_charge(): 0, or -ENOBUFS
 * when the budget refuses (tc's message to @ext, which may be NULL);
 * nothing counted then.  pw__mem_charge_force(): charged past the limit
 * (what a delete builds, a new device's defaults).  pw__mem_uncharge():
 * give back.  pw__mem_alloc(): charge then allocate @bytes zeroed
 * (@align 0: malloc; else aligned_alloc, @bytes a multiple of it); NULL
 * with *@err -ENOBUFS or -ENOMEM.  pw__mem_free(): free what
 * pw__mem_alloc() gave, of @bytes.  Context: any thread (atomics only).
 */
enum pw__charge {
	PW__CHARGE_LIMIT, /* against the budget's limit */
	PW__CHARGE_FORCE, /* past it */
	PW__CHARGE_NONE,  /* not charged (the adopter charges) */
};
int pw__mem_charge(struct pw__net *net, size_t bytes, struct pw__extack *ext);
void pw__mem_charge_force(struct pw__net *net, size_t bytes);
void pw__mem_uncharge(struct pw__net *net, size_t bytes);
void *pw__mem_alloc(struct pw__net *net, size_t bytes, size_t align, struct pw__extack *ext,
		    int *err);
void pw__mem_free(struct pw__net *net, void *p, size_t bytes);

/* The bytes pw__qdisc_alloc() allocates for a qdisc of @ops (the struct
 * and private area, rounded to the cache line). */
static inline size_t pw__qdisc_size(const struct pw__qdisc_ops *ops)
{
	size_t size = sizeof(struct pw__qdisc) + ops->priv_size;
	return (size + PW__CACHELINE - 1) & ~(size_t)(PW__CACHELINE - 1);
}

/* ------------------------------------------------------- requests */

/*
 * A configuration request as the kernel side sees it: the kernel's
 * netlink_ext_ack and what it knows of the message.  tc's side fills it
 * (tc/tc.h embeds it in its command context) and hands it to the core's
 * building calls and to the kinds' init/change/graft/class hooks, which
 * add the messages the kernel would give back and the packets a change
 * dropped.  Context: the tc thread, cfg_lock held; never shared.
 */
struct pw__extack {
	struct pw__net *net;
	struct pw_netdev *dev;     /* the named device or NULL */
	const char *kind;          /* the qdisc kind being configured (its id) */
	char *msg;                 /* the messages, one per line, NUL-terminated */
	size_t msglen, msgused;
	struct pw__drops drops;    /* packets a kind's change() dropped (fq's
				    * lowered limit): to ops.drop after the lock */
};

/* Append a line to @ext's messages, as given (the kernel's extack text
 * with tc's "Error: " prefix, or a warning): dropped when @ext is NULL or
 * full.  Context: the tc thread (cfg_lock held, any root lock).
 * Return: none. */
void pw__extack_msg(struct pw__extack *ext, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The same with a va_list. */
void pw__extack_vmsg(struct pw__extack *ext, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

#endif /* PW_NET_INTERNAL_H */
