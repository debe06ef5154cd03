/* SPDX-License-Identifier: MIT */
/*
 * Devices and transmit: the kernel's net_device with its TX queues, XPS,
 * and dev_queue_xmit() (net/core/dev.c), on a pinwheel runtime.
 *
 * What it does.  A device has N TX queues; each queue points at its root
 * qdisc (txq->qdisc): the device's root itself (pfifo_fast, netem, ... one
 * qdisc and one lock for all queues, as the kernel), or under an mq root
 * the queue's own child (a qdisc and a lock per queue: what seed 003 ran).
 * pw_dev_queue_xmit() picks the queue by XPS, locks the queue's root,
 * enqueues, and if no CPU is running that root it runs it now
 * (pw__qdisc_run(), qdisc.c): the calling CPU dequeues and hands packets to
 * the driver, up to a quota, then reschedules the rest on its NET_TX.
 *
 * XPS (get_xps_queue()): per CPU an array of the queues whose mask names it
 * (built from the per-queue masks by pw_netdev_set_xps()); one queue: that
 * one; several: the packet's hash picks (reciprocal scale, as the kernel);
 * none, or a thread that is no CPU: the hash picks among all queues
 * (skb_tx_hash()).  The socket's cached queue (sk_tx_queue_mapping and
 * ooo_okay) comes with the socket layer.  The arrays are swapped whole;
 * an old one is freed after a grace period (below).
 *
 * Grace periods (the part of RCU this needs).  A tc replace or delete
 * changes txq->qdisc while other CPUs transmit.  A transmit holds its CPU's
 * slot (a counter in its own cache line, plus one shared slot for threads
 * that are no CPU) from before it reads txq->qdisc until it has unlocked
 * it; pw__dev_synchronize() flips the slot index and waits for every slot's
 * old-index counter to drain.  Why that is enough: the writer stores the new
 * pointer, then flips, then reads the counters (all seq_cst); a reader that
 * bumped an old-index counter after the writer read it as zero is ordered
 * after the store, so it reads the new pointer.  The retired qdisc is also
 * marked dead under its lock, and a transmit that locks a dead qdisc reloads
 * the pointer, so no packet lands in a qdisc being torn down.
 *
 * Invariants: every packet handed to pw_dev_queue_xmit() leaves through
 * ops.xmit or ops.drop exactly once.  Drops are collected under the lock
 * and handed to ops.drop after it is released.
 *
 * Threads: pw_dev_queue_xmit() on any thread; create/destroy/XPS on any
 * thread under the layer's configuration mutex.  Locks: cfg_lock
 * (configuration), the queue's root lock (enqueue and dequeue), none across
 * a driver callback.  Cost per packet: two uncontended atomic adds on the
 * CPU's own slot, the root lock, the qdisc's enqueue and dequeue.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "accuracy.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- state */

static void net_free(void *p);

struct pw__net *pw__net_get(struct pw_runtime *rt)
{
	struct pw__net *net = pw_runtime_ext(rt, PW_RUNTIME_EXT_NET);
	if (net)
		return net;
	net = calloc(1, sizeof(*net));
	if (!net)
		return NULL;
	net->rt = rt;
	net->ncpus = pw_runtime_ncpus(rt);
	net->watchdog_pinned = 1;
	net->sk_timers_pinned = 1;
	pthread_mutex_init(&net->cfg_lock, NULL);
	net->softnet = aligned_alloc(PW__CACHELINE, net->ncpus * sizeof(*net->softnet));
	if (!net->softnet) {
		free(net);
		return NULL;
	}
	memset(net->softnet, 0, net->ncpus * sizeof(*net->softnet));
	for (unsigned c = 0; c < net->ncpus; c++) {
		struct pw__softnet *sn = &net->softnet[c];
		pthread_mutex_init(&sn->lock, NULL);
		sn->tail = &sn->head;
		sn->btail = &sn->batch;
		sn->net = net;
		sn->cpu = c;
		pw_work_init(&sn->work, pw__net_tx_action);
	}
	if (pw_runtime_ext_set(rt, PW_RUNTIME_EXT_NET, net, net_free) != 0) {
		/* another thread won the race: use its state */
		free(net->softnet);
		free(net);
		net = pw_runtime_ext(rt, PW_RUNTIME_EXT_NET);
	}
	return net;
}

/* pw_runtime_destroy(): devices still there are destroyed (their packets
 * dropped with PW_DROP_DEV_DESTROY). */
static void net_free(void *p)
{
	struct pw__net *net = p;
	while (net->devs)
		pw_netdev_destroy(net->devs);
	for (unsigned c = 0; c < net->ncpus; c++)
		pthread_mutex_destroy(&net->softnet[c].lock);
	free(net->softnet);
	pthread_mutex_destroy(&net->cfg_lock);
	free(net);
}

int pw_net_set_watchdog_pinned(struct pw_runtime *rt, int pinned)
{
	if (!rt)
		return -EINVAL;
	struct pw__net *net = pw__net_get(rt);
	if (!net)
		return -ENOMEM;
	__atomic_store_n(&net->watchdog_pinned, pinned ? 1 : 0, __ATOMIC_RELAXED);
	return 0;
}

int pw_net_set_watchdog_net_tx(struct pw_runtime *rt, int net_tx)
{
	if (!rt || net_tx < 0 || net_tx > 1)
		return -EINVAL;
	struct pw__net *net = pw__net_get(rt);
	if (!net)
		return -ENOMEM;
	__atomic_store_n(&net->watchdog_net_tx, net_tx, __ATOMIC_RELAXED);
	return 0;
}

int pw_netdev_set_watchdog_pinned(struct pw_netdev *dev, int pinned)
{
	if (!dev || pinned < -1 || pinned > 1)
		return -EINVAL;
	__atomic_store_n(&dev->watchdog_pinned, pinned, __ATOMIC_RELAXED);
	return 0;
}

const char *pw_drop_reason_name(enum pw_drop_reason r)
{
	switch (r) {
	case PW_DROP_QDISC_LIMIT: return "qdisc_limit";
	case PW_DROP_NETEM_LOSS: return "netem_loss";
	case PW_DROP_FLUSH: return "flush";
	case PW_DROP_DEV_DESTROY: return "dev_destroy";
	case PW_DROP_NO_QDISC: return "no_qdisc";
	case PW_DROP_FLOW_LIMIT: return "flow_limit";
	case PW_DROP_HORIZON: return "horizon";
	case PW_DROP_OVERSIZE: return "oversize";
	case PW_DROP_FQ_BAND_LIMIT: return "fq_band_limit";
	case PW_DROP_REASON_MAX: break;
	}
	return "unknown";
}

void pw_pkt_init(struct pw_pkt *pkt, void *data, uint32_t len)
{
	if (!pkt)
		return;
	memset(pkt, 0, sizeof(*pkt));
	pkt->data = data;
	pkt->len = len;
	pkt->caplen = len;
}

/* ---------------------------------------------------------------- XPS */

/* Rebuild the CPU -> queues arrays from the masks.  cfg_lock held. */
static int xps_rebuild(struct pw_netdev *dev)
{
	unsigned ncpus = dev->net->ncpus;
	for (unsigned c = 0; c < ncpus; c++) {
		unsigned n = 0;
		for (unsigned q = 0; q < dev->ntxq; q++)
			if (dev->xps_masks[q][c / 64] >> (c % 64) & 1)
				n++;
		/* charged past the budget's limit: a few bytes per CPU,
		 * bounded by the device's queues (netmem.c) */
		pw__mem_charge_force(dev->net, (n + 1) * sizeof(uint16_t));
		uint16_t *arr = malloc((n + 1) * sizeof(uint16_t));
		if (!arr) {
			pw__mem_uncharge(dev->net, (n + 1) * sizeof(uint16_t));
			return -ENOMEM;
		}
		arr[0] = (uint16_t)n;
		n = 0;
		for (unsigned q = 0; q < dev->ntxq; q++)
			if (dev->xps_masks[q][c / 64] >> (c % 64) & 1)
				arr[++n] = (uint16_t)q;
		uint16_t *old = __atomic_exchange_n(&dev->xps[c], arr, __ATOMIC_ACQ_REL);
		if (old) {
			/* a transmit may still read it */
			pw__dev_synchronize(dev);
			pw__mem_free(dev->net, old, (old[0] + 1u) * sizeof(uint16_t));
		}
	}
	return 0;
}

int pw_netdev_set_xps(struct pw_netdev *dev, unsigned txq, const uint64_t *cpus,
		      unsigned ncpus_bits)
{
	if (!dev || txq >= dev->ntxq || (!cpus && ncpus_bits))
		return -EINVAL;
	unsigned ncpus = dev->net->ncpus;
	unsigned words = (ncpus + 63) / 64;
	pthread_mutex_lock(&dev->net->cfg_lock);
	memset(dev->xps_masks[txq], 0, words * sizeof(uint64_t));
	for (unsigned c = 0; c < ncpus_bits && c < ncpus; c++)
		if (cpus[c / 64] >> (c % 64) & 1)
			dev->xps_masks[txq][c / 64] |= 1ull << (c % 64);
	int rc = xps_rebuild(dev);
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return rc;
}

/* The kernel's reciprocal_scale(): hash into [0, n). */
static inline unsigned scale(uint32_t hash, unsigned n)
{
	return (unsigned)(((uint64_t)hash * n) >> 32);
}

static unsigned pick_txq(struct pw_netdev *dev, const struct pw_pkt *pkt, int cpu)
{
	if (dev->ntxq == 1)
		return 0;
	if (cpu >= 0) {
		const uint16_t *arr = __atomic_load_n(&dev->xps[cpu], __ATOMIC_ACQUIRE);
		if (arr && arr[0] == 1)
			return arr[1];
		if (arr && arr[0] > 1)
			return arr[1 + scale(pkt->hash, arr[0])];
	}
	return scale(pkt->hash, dev->ntxq);
}

/* ------------------------------------------------------- grace periods */

static inline unsigned rcu_enter(struct pw_netdev *dev, int cpu, unsigned *idx)
{
	unsigned slot = cpu >= 0 ? (unsigned)cpu : dev->net->ncpus;
	*idx = __atomic_load_n(&dev->rcu_idx, __ATOMIC_SEQ_CST) & 1;
	__atomic_fetch_add(&dev->rcu[slot].n[*idx], 1, __ATOMIC_SEQ_CST);
	return slot;
}

static inline void rcu_exit(struct pw_netdev *dev, unsigned slot, unsigned idx)
{
	__atomic_fetch_sub(&dev->rcu[slot].n[idx], 1, __ATOMIC_RELEASE);
}

void pw__dev_synchronize(struct pw_netdev *dev)
{
	for (int round = 0; round < 2; round++) {
		unsigned old = __atomic_fetch_xor(&dev->rcu_idx, 1, __ATOMIC_SEQ_CST) & 1;
		for (unsigned s = 0; s <= dev->net->ncpus; s++)
			while (__atomic_load_n(&dev->rcu[s].n[old], __ATOMIC_SEQ_CST))
				sched_yield();
	}
}

/* ------------------------------------------------------------ devices */

void pw__dev_drops_flush(struct pw_netdev *dev, struct pw__drops *d)
{
	struct pw_pkt *p;
	while ((p = pw__pktq_pop(&d->q))) {
		pw__pkt_leaves(p);
		dev->ops.drop(dev, p, (enum pw_drop_reason)p->pw_reason, dev->ctx);
	}
}

/* What a device of @ntxq queues costs on @net but its XPS arrays: its
 * struct, the per-CPU and per-queue tables, the grace-period slots and TX
 * queues (charged at create, uncharged at free: netmem.c). */
static size_t dev_bytes(const struct pw__net *net, unsigned ntxq)
{
	unsigned ncpus = net->ncpus, words = (ncpus + 63) / 64;
	return sizeof(struct pw_netdev) + ncpus * sizeof(uint16_t *) +
	       ntxq * sizeof(uint64_t *) + (ncpus + 1) * sizeof(struct pw__rcu_slot) +
	       ntxq * sizeof(struct pw__txq) + (size_t)ntxq * words * sizeof(uint64_t);
}

/* Free a device's memory (built whole or in part; no qdisc left) and
 * uncharge it. */
static void dev_free(struct pw_netdev *dev)
{
	struct pw__net *net = dev->net;
	if (dev->xps)
		for (unsigned c = 0; c < dev->net->ncpus; c++)
			if (dev->xps[c])
				pw__mem_free(net, dev->xps[c], (dev->xps[c][0] + 1u) * sizeof(uint16_t));
	if (dev->xps_masks)
		for (unsigned q = 0; q < dev->ntxq; q++)
			free(dev->xps_masks[q]);
	free(dev->xps);
	free(dev->xps_masks);
	free(dev->rcu);
	free(dev->txq);
	size_t bytes = dev_bytes(net, dev->ntxq);
	free(dev);
	pw__mem_uncharge(net, bytes);
}

int pw_netdev_create(struct pw_runtime *rt, const char *name, unsigned ntxq,
		     const struct pw_netdev_ops *ops, void *ctx, struct pw_netdev **out)
{
	if (out)
		*out = NULL; /* on any failure */
	if (!rt || !name || !ops || !out || !ops->xmit || !ops->drop || ntxq == 0 ||
	    ntxq > PW_MAX_TXQ)
		return -EINVAL;
	size_t nlen = strlen(name);
	if (nlen == 0 || nlen >= PW_IFNAMSIZ || strchr(name, '/') || strchr(name, ' ') ||
	    strchr(name, ':'))
		return -EINVAL;
	struct pw__net *net = pw__net_get(rt);
	if (!net)
		return -ENOMEM;
	unsigned ncpus = net->ncpus, words = (ncpus + 63) / 64;
	int rc = pw__mem_charge(net, dev_bytes(net, ntxq), NULL);
	if (rc)
		return rc;
	struct pw_netdev *dev = calloc(1, sizeof(*dev));
	if (!dev) {
		pw__mem_uncharge(net, dev_bytes(net, ntxq));
		return -ENOMEM;
	}
	memcpy(dev->name, name, nlen + 1);
	dev->net = net;
	dev->rt = rt;
	dev->ops = *ops;
	dev->ctx = ctx;
	dev->ntxq = ntxq;
	dev->txqueuelen = 1000;
	dev->watchdog_pinned = -1;
	dev->autohandle = 0x80000000u;
	dev->xps = calloc(ncpus, sizeof(*dev->xps));
	dev->xps_masks = calloc(ntxq, sizeof(*dev->xps_masks));
	dev->rcu = aligned_alloc(PW__CACHELINE, (ncpus + 1) * sizeof(*dev->rcu));
	dev->txq = aligned_alloc(PW__CACHELINE, ntxq * sizeof(*dev->txq));
	rc = -ENOMEM;
	if (!dev->xps || !dev->xps_masks || !dev->rcu || !dev->txq)
		goto fail;
	memset(dev->rcu, 0, (ncpus + 1) * sizeof(*dev->rcu));
	memset(dev->txq, 0, ntxq * sizeof(*dev->txq));
	for (unsigned q = 0; q < ntxq; q++) {
		dev->txq[q].index = q;
		dev->xps_masks[q] = calloc(words, sizeof(uint64_t));
		if (!dev->xps_masks[q])
			goto fail;
	}
	/* default XPS: CPU c -> queue c mod ntxq */
	for (unsigned c = 0; c < ncpus; c++)
		dev->xps_masks[c % ntxq][c / 64] |= 1ull << (c % 64);

	pthread_mutex_lock(&net->cfg_lock);
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		if (!strcmp(d->name, name)) {
			pthread_mutex_unlock(&net->cfg_lock);
			rc = -EEXIST;
			goto fail;
		}
	rc = xps_rebuild(dev);
	if (rc == 0)
		rc = pw__qdisc_default_root(dev);
	if (rc) {
		pthread_mutex_unlock(&net->cfg_lock);
		goto fail;
	}
	dev->next = net->devs;
	net->devs = dev;
	pthread_mutex_unlock(&net->cfg_lock);
	*out = dev;
	return 0;
fail:
	dev_free(dev);
	return rc;
}

void pw_netdev_destroy(struct pw_netdev *dev)
{
	if (!dev)
		return;
	struct pw__net *net = dev->net;
	pthread_mutex_lock(&net->cfg_lock);
	for (struct pw_netdev **pp = &net->devs; *pp; pp = &(*pp)->next)
		if (*pp == dev) {
			*pp = dev->next;
			break;
		}
	struct pw__qdisc *root = dev->qdisc;
	dev->qdisc = NULL;
	for (unsigned q = 0; q < dev->ntxq; q++)
		__atomic_store_n(&dev->txq[q].qdisc, NULL, __ATOMIC_SEQ_CST);
	if (root)
		pw__qdisc_free(root, PW_DROP_DEV_DESTROY);
	pthread_mutex_unlock(&net->cfg_lock);
	dev_free(dev);
}

struct pw_netdev *pw_netdev_get(struct pw_runtime *rt, const char *name)
{
	if (!rt || !name)
		return NULL;
	struct pw__net *net = pw_runtime_ext(rt, PW_RUNTIME_EXT_NET);
	if (!net)
		return NULL;
	struct pw_netdev *found = NULL;
	pthread_mutex_lock(&net->cfg_lock);
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		if (!strcmp(d->name, name)) {
			found = d;
			break;
		}
	pthread_mutex_unlock(&net->cfg_lock);
	return found;
}

const char *pw_netdev_name(const struct pw_netdev *dev)
{
	return dev ? dev->name : NULL;
}

unsigned pw_netdev_ntxq(const struct pw_netdev *dev)
{
	return dev ? dev->ntxq : 0;
}

struct pw_runtime *pw_netdev_runtime(const struct pw_netdev *dev)
{
	return dev ? dev->rt : NULL;
}

int pw_netdev_set_txqueuelen(struct pw_netdev *dev, uint32_t qlen)
{
	if (!dev)
		return -EINVAL;
	pthread_mutex_lock(&dev->net->cfg_lock);
	dev->txqueuelen = qlen;
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return 0;
}

/* ------------------------------------------------------------ transmit */

int pw_dev_queue_xmit(struct pw_netdev *dev, struct pw_pkt *pkt)
{
	if (!dev || !pkt)
		return -EINVAL;
	int cpu = pw_this_cpu();
	if (cpu >= (int)dev->net->ncpus)
		cpu = -1;
	/* the slot first: the XPS arrays, like txq->qdisc, are freed after a
	 * grace period */
	unsigned idx, slot = rcu_enter(dev, cpu, &idx);
	struct pw_sock *sk = pkt->sk;
	unsigned t;
	if (sk && dev->ntxq > 1) {
		/* the socket's cached queue, changed only when it has nothing
		 * in flight (ooo_okay): its packets cannot be reordered */
		int32_t cq = __atomic_load_n(&sk->pw_tx_queue, __ATOMIC_RELAXED);
		if (cq >= 0 && (unsigned)cq < dev->ntxq &&
		    __atomic_load_n(&sk->pw_inflight, __ATOMIC_ACQUIRE) > 0) {
			t = (unsigned)cq;
		} else {
			t = pick_txq(dev, pkt, cpu);
			__atomic_store_n(&sk->pw_tx_queue, (int32_t)t, __ATOMIC_RELAXED);
		}
	} else {
		t = pick_txq(dev, pkt, cpu);
	}
	pkt->pw_txq = (uint16_t)t;
	pkt->pw_skq = sk != NULL;
	if (sk)
		__atomic_fetch_add(&sk->pw_inflight, 1, __ATOMIC_ACQ_REL);
	struct pw__drops d;
	pw__pktq_init(&d.q);
	int rc;
	struct pw__qdisc *q;
	for (;;) {
		q = __atomic_load_n(&dev->txq[t].qdisc, __ATOMIC_SEQ_CST);
		if (!q) { /* the device is being destroyed */
			pw__drop_later(&d, pkt, PW_DROP_NO_QDISC);
			rc = PW_NET_XMIT_DROP;
			goto out;
		}
		pw__qlock(&q->lock);
		if (!q->dead)
			break;
		pw__qunlock(&q->lock);
	}
	rc = q->ops->enqueue(pkt, q, &d) & PW__NET_XMIT_MASK;
	if (__builtin_expect(q->acc != NULL, 0)) /* accuracy.h: stamp, losses */
		pw__acc_enqueued(q, pkt, &d);
	pw__qdisc_run(q);
	pw__qunlock(&q->lock);
out:
	/* the drops inside the slot: a destroy waits for them, so no drop
	 * callback runs after pw_netdev_destroy() returns */
	pw__dev_drops_flush(dev, &d);
	rcu_exit(dev, slot, idx);
	return rc;
}

int pw_netif_wake_queue(struct pw_netdev *dev, unsigned txq)
{
	if (!dev || txq >= dev->ntxq)
		return -EINVAL;
	int cpu = pw_this_cpu();
	if (cpu >= (int)dev->net->ncpus)
		cpu = -1;
	unsigned idx, slot = rcu_enter(dev, cpu, &idx);
	struct pw__qdisc *q = __atomic_load_n(&dev->txq[txq].qdisc, __ATOMIC_SEQ_CST);
	if (q) {
		pw__qlock(&q->lock);
		bool was = q->stopped;
		q->stopped = 0;
		q->wakes++; /* a runner whose driver call is answering BUSY sees it */
		pw__qunlock(&q->lock);
		if (was)
			pw__netif_schedule(q);
	}
	rcu_exit(dev, slot, idx);
	return 0;
}

/* ---------------------------------------------------------- statistics */

int pw_netdev_qdisc_stats(struct pw_netdev *dev, uint32_t handle, struct pw_qdisc_stats *st)
{
	if (!dev || !st)
		return -EINVAL;
	pthread_mutex_lock(&dev->net->cfg_lock);
	struct pw__qdisc *q = handle ? pw__qdisc_find(dev, handle) : dev->qdisc;
	if (q)
		pw__qdisc_read_stats(q, st);
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return q ? 0 : -ENOENT;
}

int pw_netdev_txq_stats(struct pw_netdev *dev, unsigned txq, struct pw_qdisc_stats *st,
			struct pw_txq_lock_stats *lk)
{
	if (!dev || txq >= dev->ntxq)
		return -EINVAL;
	pthread_mutex_lock(&dev->net->cfg_lock);
	struct pw__qdisc *q = dev->txq[txq].qdisc;
	if (q && st)
		pw__qdisc_read_stats(q, st);
	if (q && lk) {
		lk->acquisitions = __atomic_load_n(&q->lock.acquisitions, __ATOMIC_RELAXED);
		lk->contended = __atomic_load_n(&q->lock.contended, __ATOMIC_RELAXED);
		lk->wait_ns = __atomic_load_n(&q->lock.wait_ns, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return q ? 0 : -ENOENT;
}

uint64_t pw_netdev_watchdog_arms(struct pw_netdev *dev, unsigned txq)
{
	if (!dev || txq >= dev->ntxq)
		return 0;
	pthread_mutex_lock(&dev->net->cfg_lock);
	struct pw__qdisc *q = dev->txq[txq].qdisc;
	uint64_t n = q ? __atomic_load_n(&q->wd_arms, __ATOMIC_RELAXED) : 0;
	pthread_mutex_unlock(&dev->net->cfg_lock);
	return n;
}
