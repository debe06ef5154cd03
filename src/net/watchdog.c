/* SPDX-License-Identifier: MIT */
/*
 * The qdisc watchdog (the kernel's qdisc_watchdog_*): an hrtimer a
 * throttled qdisc arms for the time its next packet may leave.  When it
 * fires, the CPU it fired on runs the qdisc's root (where the kernel
 * raises that CPU's NET_TX: see watchdog_fire()), so that CPU does the
 * next dequeue.  That is the
 * whole of seed 003: a watchdog that a migration policy moved to another
 * CPU moves the dequeues with it.
 *
 * Pinned or not: started HRTIMER_MODE_ABS_PINNED (the kernel since seed
 * 003, and the default here) or plain ABS (before it), per device
 * (pw_netdev_set_watchdog_pinned()) or else per runtime
 * (pw_net_set_watchdog_pinned()).  Under PW_MIGRATION_PUSH a plain start
 * from an idle CPU goes to a busy one, as get_nohz_timer_target() did.
 *
 * The range: _range_ns() arms the window [expires, expires + delta]; an
 * armed window that already starts within it is left alone (no re-arm per
 * packet: fq's timer_slack).  A dead (retired) qdisc never arms.
 *
 * Threads: schedule and cancel from the qdisc's dequeue/enqueue (root lock
 * held); the callback on the timer's CPU, taking the root lock (and a
 * softnet lock when the quota runs out, or to raise NET_TX);
 * destroy with no lock held, waiting for a running callback.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "accuracy.h"

#include <time.h>

/*
 * By default the callback runs the queue itself, on the CPU it fired on,
 * where the kernel's raises NET_TX for that CPU and the softirq runs it
 * right after the timer interrupt: the same CPU, the same order, one pass
 * (a work item, two softnet lock round trips) fewer per throttled packet.
 * What the quota leaves still goes through NET_TX.  No packet is stranded
 * when another CPU is running the queue: that runner is between driver
 * calls (the lock is only dropped there), and its next dequeue, under the
 * lock, sees the packet this timer was armed for as due.
 *
 * One thing differs: the dequeue re-arms this timer while its callback
 * runs, and a running hrtimer stays where it is, so a migration policy
 * never moves it at a re-arm.  pw_net_set_watchdog_net_tx(rt, 1) does as
 * the kernel does instead: schedule the root on this CPU's NET_TX and
 * return; the pass re-arms the timer after the callback, where PUSH may
 * move it (the lab's model of seed 003 runs that way).  The root lock is
 * taken only to see the root is not dead (a dead root is off every NET_TX
 * list for good).
 */
static enum pw_hrtimer_restart watchdog_fire(struct pw_hrtimer *t)
{
	struct pw__watchdog *wd = pw_container_of(t, struct pw__watchdog, timer);
	struct pw__qdisc *root = wd->q->root;
	int net_tx = __atomic_load_n(&root->dev->net->watchdog_net_tx, __ATOMIC_RELAXED);
	pw__qlock(&root->lock);
	if (__builtin_expect(wd->q->acc != NULL, 0)) /* accuracy.c: lateness */
		pw__acc_fired(wd);
	if (!net_tx)
		pw__qdisc_run(root);
	else if (!root->dead)
		pw__netif_schedule(root);
	pw__qunlock(&root->lock);
	return PW_HRTIMER_NORESTART;
}

void pw__watchdog_init(struct pw__watchdog *wd, struct pw__qdisc *q)
{
	wd->q = q;
	wd->last_expires = 0;
	pw_hrtimer_setup(q->dev->rt, &wd->timer, watchdog_fire, CLOCK_MONOTONIC,
			 PW_HRTIMER_MODE_ABS);
}

void pw__watchdog_schedule_range_ns(struct pw__watchdog *wd, uint64_t expires,
				    uint64_t delta_ns)
{
	struct pw__qdisc *q = wd->q;
	if (q->root->dead)
		return;
	if (pw_hrtimer_is_queued(&wd->timer)) {
		uint64_t soft = pw_hrtimer_get_softexpires(&wd->timer);
		/* already armed inside [expires, expires + delta]: keep it */
		if (soft - expires <= delta_ns)
			return;
	}
	wd->last_expires = expires;
	/* the root's count: written under its lock, read by
	 * pw_netdev_watchdog_arms() without it */
	__atomic_store_n(&q->root->wd_arms,
			 __atomic_load_n(&q->root->wd_arms, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	struct pw_netdev *dev = q->dev;
	int pinned = __atomic_load_n(&dev->watchdog_pinned, __ATOMIC_RELAXED);
	if (pinned < 0)
		pinned = __atomic_load_n(&dev->net->watchdog_pinned, __ATOMIC_RELAXED);
	unsigned mode = PW_HRTIMER_MODE_ABS | (pinned ? PW_HRTIMER_MODE_PINNED : 0);
	if (pw_hrtimer_start_range_ns(&wd->timer, expires, delta_ns, mode) != 0)
		pw__netif_schedule(q->root); /* -ENOMEM: retry from NET_TX */
}

void pw__watchdog_cancel(struct pw__watchdog *wd)
{
	pw_hrtimer_try_to_cancel(&wd->timer);
}

void pw__watchdog_destroy(struct pw__watchdog *wd)
{
	pw_hrtimer_cancel(&wd->timer);
}
