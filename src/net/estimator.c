/* SPDX-License-Identifier: MIT */
/*
 * Rate estimators (the kernel's gen_estimator): `est INTERVAL TIME_CONSTANT`
 * on a qdisc, read by tc -s as `rate XXbit YYpps`.
 *
 * A wheel timer per estimator fires every 2^(interval+2)/4 s (250 ms to
 * 8 s), reads the qdisc's sent bytes and packets, and folds the difference
 * into two EWMAs with the kernel's fixed-point arithmetic: the sample is
 * scaled by 2^(10 - intvl_log), so avg / 2^8 is per second, and
 * avg += (sample >> ewma_log) - (avg >> ewma_log), all in u64 with the
 * kernel's wrap-around.  A late timer skips ahead as the kernel does
 * (next = now + 1 jiffy) rather than firing a burst.
 *
 * Threads: started and stopped under the layer's configuration mutex (ext);
 * the timer runs on whatever CPU it was armed from (not pinned: as the
 * kernel's); readers on any thread.  Locks: none of its own: the counters
 * it reads are relaxed atomics written under the root lock (mq's sum takes
 * its children's root locks); the averages are relaxed atomics.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>

struct pw__estimator {
	struct pw_timer timer;
	struct pw__qdisc *q;
	uint8_t intvl_log, ewma_log;
	uint64_t last_bytes, last_packets; /* the timer's */
	uint64_t avg_bps, avg_pps;         /* atomic: scaled by 2^8 */
	uint64_t next_jiffies;
	uint64_t period_jiffies;
};

static void fetch(struct pw__qdisc *q, uint64_t *bytes, uint64_t *packets)
{
	if (q->ops->stats) {
		struct pw_qdisc_stats st = { 0 };
		q->ops->stats(q, &st);
		*bytes = st.bytes;
		*packets = st.packets;
	} else {
		*bytes = __atomic_load_n(&q->st.bytes, __ATOMIC_RELAXED);
		*packets = __atomic_load_n(&q->st.packets, __ATOMIC_RELAXED);
	}
}

static void est_timer(struct pw_timer *t)
{
	struct pw__estimator *e = pw_container_of(t, struct pw__estimator, timer);
	uint64_t b, p;
	fetch(e->q, &b, &p);
	uint64_t avg_b = __atomic_load_n(&e->avg_bps, __ATOMIC_RELAXED);
	uint64_t avg_p = __atomic_load_n(&e->avg_pps, __ATOMIC_RELAXED);
	uint64_t brate = (b - e->last_bytes) << (10 - e->intvl_log);
	brate = (brate >> e->ewma_log) - (avg_b >> e->ewma_log);
	uint64_t prate = (p - e->last_packets) << (10 - e->intvl_log);
	prate = (prate >> e->ewma_log) - (avg_p >> e->ewma_log);
	__atomic_store_n(&e->avg_bps, avg_b + brate, __ATOMIC_RELAXED);
	__atomic_store_n(&e->avg_pps, avg_p + prate, __ATOMIC_RELAXED);
	e->last_bytes = b;
	e->last_packets = p;
	e->next_jiffies += e->period_jiffies;
	uint64_t now = pw_jiffies(e->q->dev->rt);
	if ((int64_t)(now - e->next_jiffies) >= 0)
		e->next_jiffies = now + 1; /* late: skip ahead */
	pw_mod_timer(&e->timer, e->next_jiffies);
}

int pw__est_start(struct pw__qdisc *q, int8_t interval_code, uint8_t ewma_log)
{
	if (interval_code < -2 || interval_code > 3 || ewma_log == 0 || ewma_log >= 31)
		return -EINVAL;
	int rc;
	struct pw__estimator *e = pw__mem_alloc(q->dev->net, sizeof(*e), 0, NULL, &rc);
	if (!e)
		return rc; /* -ENOBUFS: the runtime's budget refused it (netmem.c) */
	struct pw_runtime *rt = q->dev->rt;
	e->q = q;
	e->intvl_log = (uint8_t)(interval_code + 2);
	e->ewma_log = ewma_log;
	fetch(q, &e->last_bytes, &e->last_packets);
	e->period_jiffies = (uint64_t)(pw_runtime_hz(rt) / 4) << e->intvl_log;
	if (e->period_jiffies == 0)
		e->period_jiffies = 1;
	e->next_jiffies = pw_jiffies(rt) + e->period_jiffies;
	pw_timer_setup(rt, &e->timer, est_timer, 0);
	struct pw__estimator *old = q->est;
	q->est = e;
	if (old) { /* replacing: gen_replace_estimator */
		pw_timer_shutdown_sync(&old->timer);
		pw__mem_free(q->dev->net, old, sizeof(*old));
	}
	pw_mod_timer(&e->timer, e->next_jiffies);
	return 0;
}

void pw__est_stop(struct pw__qdisc *q)
{
	struct pw__estimator *e = q->est;
	if (!e)
		return;
	pw_timer_shutdown_sync(&e->timer);
	q->est = NULL;
	pw__mem_free(q->dev->net, e, sizeof(*e));
}

void pw__est_read(struct pw__qdisc *q, uint64_t *bps, uint64_t *pps)
{
	struct pw__estimator *e = q->est;
	*bps = e ? __atomic_load_n(&e->avg_bps, __ATOMIC_RELAXED) >> 8 : 0;
	*pps = e ? __atomic_load_n(&e->avg_pps, __ATOMIC_RELAXED) >> 8 : 0;
}
