/* SPDX-License-Identifier: MIT */
/*
 * fq: the fair queue packet scheduler with per-flow pacing (the kernel's
 * net/sched/sch_fq.c as of Linux 6.18), rewritten for pinwheel.  Its tc
 * side (iproute2's tc/q_fq.c) is tc/q_fq.c.
 *
 * What it does.  Every packet belongs to a flow: its socket (pkt->sk), or,
 * without one, the key ((pkt->hash & orphan_mask) << 1) | 1, whose low bit
 * keeps it apart from socket pointers.  Flows live in 2^buckets_log hash
 * chains (hash_ptr() of the key: the 64-bit golden-ratio multiply); each
 * holds its packets in time_to_send order (a FIFO, plus a sorted side list
 * for the rare packet whose EDT stamp goes backwards).  A flow with packets
 * sits on one of its band's two round-robin lists (new, old) or in the
 * throttled set; an empty flow leaves the old list "detached" and stays in
 * its chain, to be garbage-collected (fq_gc: detached for more than 3 s of
 * jiffies, at most 8 per lookup, among the flows the lookup walks past).
 *
 * Enqueue: the band from priomap[priority & 15] (a band at `limit`
 * packets drops: PW_DROP_FQ_BAND_LIMIT, band_drops); time_to_send is the
 * packet's EDT stamp (tstamp_ns) or now; a stamp beyond now + horizon is
 * dropped (PW_DROP_HORIZON) or, with horizon_cap, brought back to the
 * horizon.  The fast path (the kernel's fq_fastpath_check()): a packet due
 * now, when the qdisc is empty or no flow is eligible (and the fast queue
 * holds fewer than 8, and no throttled flow is due), on no paced socket and
 * without maxrate, goes to the "internal" flow, which dequeue serves first.
 * Otherwise the flow (created here, malloc under the root lock as the
 * kernel's GFP_ATOMIC; on failure alloc_errors counts one and the packet
 * takes the internal flow) takes it unless it holds flow_limit packets
 * (PW_DROP_FLOW_LIMIT, flows_plimit); a detached flow joins its band's new
 * list, and gets its credit raised to one quantum if it was idle longer
 * than refill_delay.
 *
 * Dequeue: the internal flow first; then throttled flows whose
 * time_next_packet has come go to the old list (the unthrottle latency
 * EWMA is kept); then a weighted round robin over the 3 bands (each band's
 * credit refilled by its weight when the turn moves to it) and, in a band,
 * DRR: new flows first, a flow with credit <= 0 gets a quantum more and
 * goes to the old list's tail; a flow whose next packet is due later
 * (max(time_to_send, time_next_packet)) is throttled; an empty flow goes
 * from new to old (no starvation) and from old to detached.  A packet
 * sent costs its length to the flow's and the band's credit.  Pacing
 * (unless nopacing): without an EDT stamp the rate is min(the socket's
 * sk_pacing_rate, maxrate); at or below low_rate_threshold every packet is
 * paced (credit set to 0), above it only once the flow's credit is spent
 * and by max(len, quantum) bytes; with an EDT stamp only maxrate paces.
 * The delay is plen * 1e9 / rate, capped at 1 s (pkts_too_long), less
 * min(delay / 2, now - time_next_packet) when the flow is late;
 * time_next_packet = now + delay.  A packet whose sojourn past its
 * due time exceeds ce_threshold gets CE (ecn 3 if ECT; ce_mark counts it
 * either way, as the kernel does).  When nothing is eligible, the one
 * watchdog is armed at the earliest throttled time with timer_slack as the
 * hrtimer range.
 *
 * Throttled flows: fq_throttle.c, a hierarchical wheel of nanosecond
 * slots of fq's own, each flow's entry embedded in it (tn), handing flows
 * back in (time_next_packet, throttle order) order: the kernel's rbtree
 * puts an equal time after those already there, so the order is the same.
 * After each pass that takes the due flows, time_next_delayed_flow is the
 * set's least time, as the kernel takes it from its rbtree's first.
 *
 * Invariants.  Every packet handed to enqueue leaves exactly once: to the
 * drop list with its reason, out of dequeue, or by reset/destroy's flush.
 * qlen = the sum of the flows' qlen (internal included) = st.qlen;
 * band_pkt_count[b] = the packets of band b outside the internal flow;
 * flows = the allocated flows; inactive = those with qlen 0; throttled =
 * the entries of the throttled set, the flows with f->throttled, on no
 * list.  A detached flow has no packets and is on no list (so never
 * throttled, and gc may free it).
 *
 * Locking.  Every data path hook, reset and change run under the root
 * lock of fq's queue (fq is a root or an mq child); the watchdog's
 * callback runs that root (watchdog.c), taking the lock.  init and
 * destroy run with no lock (fq not reachable).  parse (tc/q_fq.c) runs on
 * the tc thread under cfg_lock and allocates what change needs (a new
 * bucket array), so change neither allocates nor fails for memory under
 * the lock; the old array goes back to the option struct and opt_free
 * frees it after.  What a change drops goes to ext->drops, handed to
 * ops.drop by pw__qdisc_change() once the lock is released.  Flows are
 * allocated (malloc) and freed (gc, reset, resize) under the root lock.
 *
 * Costs.  Enqueue: a bucket chain walk (flows / buckets long on average;
 * the kernel's rbtree is log2 of that) and O(1) list work; dequeue: O(1)
 * list work, and per throttle and unthrottle the throttled set's O(1)
 * (amortized: an entry moves down one wheel level per 8 bits of its delay,
 * fq_throttle.c), whatever the number of flows.  What grows with the flows
 * is memory: each packet touches its flow, its socket and its bucket, which
 * stop fitting in the cache.  One watchdog arm per dequeue that finds
 * nothing eligible, coalesced by timer_slack.
 *
 * Departures from the kernel:
 *  - Bucket chains instead of rbtrees: gc collects the detached, aged flows
 *    the chain walk passes before the looked-up flow (the kernel: those on
 *    the rbtree search path), at most 8 a pass, 3 s of age, as the kernel.
 *  - A wheel of nanosecond slots (fq_throttle.c) instead of the q->delayed
 *    rbtree for the throttled flows: the same order, at a cost that does
 *    not grow with the flows.
 *  - pinwheel sockets are full, connected, non-TCP sockets: no listener,
 *    TIME_WAIT or TCP_CLOSE (UDP sendto) classification by hash.  The fast
 *    path is refused for a packet whose socket has a pacing rate or a
 *    SO_MAX_PACING_RATE cap (the kernel: non-TCP sockets with the cap;
 *    its TCP sets EDT stamps itself, pinwheel's callers pace through
 *    sk_pacing_rate, which the fast path would skip).
 *  - No sk_pacing_status (SK_PACING_FQ) write-back: pinwheel has no TCP
 *    internal pacing to turn off.
 *  - No offload_horizon (no NIC launch-time offload): always 0.
 *  - The device MTU is Ethernet's: psched_mtu() = 1500 + 14 = 1514, so
 *    quantum 3028 and initial_quantum 15140 by default.
 *
 * The kernel's behaviour kept on purpose (tests check it):
 *  - Lowering `limit` on change drops from the head as the kernel does
 *    (qdisc_dequeue_internal: the packet the driver refused, then
 *    dequeue): those dequeued count in the sent bytes/packets, none in
 *    drops, and leave with PW_DROP_QDISC_LIMIT; throttled packets stay
 *    (dequeue returns none).
 *  - A new flow joins the lists of band 0 (its zeroed struct's band) and
 *    takes its packet's band only after, as fq_enqueue() orders it; a
 *    detached flow rejoins its previous band's new list.  It moves to its
 *    own band's old list at its first turn's end.
 *  - A change that fails (a bad buckets log) keeps what it applied before
 *    the failure, as fq_change() does.
 *  - Peek is qdisc_peek_dequeued(): the packet is dequeued at peek time.
 *
 * Other departures:
 *  - `tc -s` next_packet_delay: the kernel reports time_next_delayed_flow
 *    + timer_slack - now, about minus its uptime when no flow is
 *    throttled; pinwheel's clock may start near 0, so that case reads -1
 *    (not printed, as in the kernel).
 *  - Jiffies (flow age, refill_delay) are the runtime's clock over its HZ;
 *    refill_delay prints back through jiffies (1500us at HZ 1000: 2ms).
 */
#include "fq.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kernel's default prio -> band map (sch_default_prio2band). */
static const uint8_t default_prio2band[FQ_PRIO_MAX + 1] = {
	1, 2, 2, 2, 1, 2, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1
};

#define FQ_GC_MAX 8
#define FQ_GC_AGE_S 3
#define FQ_NSEC_PER_SEC 1000000000ull

static inline bool time_after64(uint64_t a, uint64_t b)
{
	return (int64_t)(b - a) < 0;
}

static uint64_t fq_jiffies(const struct fq_priv *q, uint64_t now)
{
	return now / q->ns_per_jiffy;
}

/* hash_ptr(): the 64-bit golden-ratio hash, top @bits. */
static uint32_t fq_hash_key(uintptr_t key, unsigned bits)
{
	return (uint32_t)(((uint64_t)key * 0x61C8864680B583EBull) >> (64 - bits));
}

/* ----------------------------------------------------------- flow lists */

static void flow_add_tail(struct fq_priv *q, struct fq_flow *f, bool new_list)
{
	struct fq_band *b = &q->band[f->band];
	struct fq_flow_head *h = new_list ? &b->new_flows : &b->old_flows;
	if (h->first)
		h->last->next = f;
	else
		h->first = f;
	h->last = f;
	f->next = NULL;
}

static void flow_set_detached(struct fq_priv *q, struct fq_flow *f, uint64_t now)
{
	f->detached = true;
	f->age = fq_jiffies(q, now) | 1; /* the kernel marks detached by the low bit */
}

/* @f, out of the throttled set (by pw__fqt_take_due() or _del()), to the tail
 * of its band's old list. */
static void flow_unthrottled(struct fq_priv *q, struct fq_flow *f)
{
	f->throttled = false;
	q->throttled_flows--;
	flow_add_tail(q, f, false);
}

static void flow_unset_throttled(struct fq_priv *q, struct fq_flow *f)
{
	pw__fqt_del(&q->throttled, &f->tn);
	flow_unthrottled(q, f);
}

static void flow_set_throttled(struct fq_priv *q, struct fq_flow *f, uint64_t now)
{
	f->throttled = true;
	pw__fqt_add(&q->throttled, &f->tn, f->time_next_packet, now);
	q->throttled_flows++;
	q->stat_throttled++;
	if (q->time_next_delayed_flow > f->time_next_packet)
		q->time_next_delayed_flow = f->time_next_packet;
}

/* ------------------------------------------------------- flow packets */

static struct pw_pkt *flow_peek(const struct fq_flow *f)
{
	struct pw_pkt *o = f->ooo, *h = f->head;
	if (!o)
		return h;
	if (!h)
		return o;
	return o->pw_time_to_send < h->pw_time_to_send ? o : h;
}

static void flow_erase(struct fq_flow *f, struct pw_pkt *p)
{
	if (p == f->head) {
		f->head = p->pw_next;
		if (!f->head)
			f->tail = NULL;
	} else {
		f->ooo = p->pw_next; /* the side list's first */
	}
	p->pw_next = NULL;
}

static void flow_queue_add(struct fq_flow *f, struct pw_pkt *p)
{
	if (!f->head || p->pw_time_to_send >= f->tail->pw_time_to_send) {
		p->pw_next = NULL;
		if (f->head)
			f->tail->pw_next = p;
		else
			f->head = p;
		f->tail = p;
		f->detached = false; /* the kernel's tail overwrites its age */
		return;
	}
	/* earlier than the tail: the sorted side list, after equal times */
	struct pw_pkt **pp = &f->ooo;
	while (*pp && (*pp)->pw_time_to_send <= p->pw_time_to_send)
		pp = &(*pp)->pw_next;
	p->pw_next = *pp;
	*pp = p;
}

static void flow_purge(struct fq_flow *f, struct pw__drops *d, enum pw_drop_reason r)
{
	struct pw_pkt *p;
	while ((p = f->ooo)) {
		f->ooo = p->pw_next;
		pw__drop_later(d, p, r);
	}
	while ((p = f->head)) {
		f->head = p->pw_next;
		pw__drop_later(d, p, r);
	}
	f->tail = NULL;
	f->qlen = 0;
}

/* ------------------------------------------------------ classification */

static bool gc_candidate(const struct fq_priv *q, const struct fq_flow *f, uint64_t jif)
{
	return f->detached && time_after64(jif, f->age + (uint64_t)FQ_GC_AGE_S * q->hz);
}

/* fq_gc(): free up to FQ_GC_MAX detached, aged flows the walk to @key
 * passes. */
static void fq_gc(struct pw__net *net, struct fq_priv *q, struct fq_flow **root, uintptr_t key,
		  uint64_t now)
{
	uint64_t jif = fq_jiffies(q, now);
	struct fq_flow **pp = root;
	unsigned n = 0;
	while (*pp) {
		struct fq_flow *f = *pp;
		if (f->key == key)
			break;
		if (gc_candidate(q, f, jif)) {
			*pp = f->hnext;
			pw__mem_free(net, f, sizeof(*f));
			if (++n == FQ_GC_MAX)
				break;
			continue;
		}
		pp = &f->hnext;
	}
	q->flows -= n;
	q->inactive_flows -= n;
	q->stat_gc_flows += n;
}

static bool fastpath_check(const struct fq_priv *q, const struct pw__qdisc *sch,
			   const struct pw_pkt *p, uint64_t now)
{
	if (p->pw_time_to_send > now)
		return false;
	if (sch->st.qlen != 0) {
		if (q->flows != q->inactive_flows + q->throttled_flows)
			return false;
		if (q->internal.qlen >= 8)
			return false;
		if (q->time_next_delayed_flow <= now)
			return false;
	}
	const struct pw_sock *sk = p->sk;
	if (sk && (__atomic_load_n(&sk->sk_max_pacing_rate, __ATOMIC_RELAXED) != UINT64_MAX ||
		   __atomic_load_n(&sk->sk_pacing_rate, __ATOMIC_RELAXED) != UINT64_MAX))
		return false;
	if (q->flow_max_rate != UINT64_MAX)
		return false;
	return true;
}

static struct fq_flow *fq_classify(struct fq_priv *q, struct pw__qdisc *sch, struct pw_pkt *p,
				   uint64_t now)
{
	uintptr_t key;
	struct pw_sock *sk = p->sk;
	if (!sk)
		key = ((uintptr_t)(p->hash & q->orphan_mask) << 1) | 1u;
	else
		key = (uintptr_t)sk;

	if (fastpath_check(q, sch, p, now)) {
		q->stat_fastpath_packets++;
		return &q->internal;
	}

	struct fq_flow **root = &q->root[fq_hash_key(key, q->log)];
	fq_gc(sch->dev->net, q, root, key, now);
	for (struct fq_flow *f = *root; f; f = f->hnext) {
		if (f->key != key)
			continue;
		/* the socket may be a new one at the same address */
		if (sk && f->socket_hash != sk->sk_hash) {
			f->credit = (int)q->initial_quantum;
			f->socket_hash = sk->sk_hash;
			if (f->throttled)
				flow_unset_throttled(q, f);
			f->time_next_packet = 0;
		}
		return f;
	}

	/* charged to the runtime's budget (netmem.c): a refusal is an
	 * allocation error like a failed malloc, the packet takes the
	 * internal flow */
	struct fq_flow *f = pw__mem_alloc(sch->dev->net, sizeof(*f), 0, NULL, NULL);
	if (!f) {
		q->stat_allocation_errors++;
		return &q->internal;
	}
	flow_set_detached(q, f, now);
	f->key = key;
	if (sk)
		f->socket_hash = sk->sk_hash;
	f->credit = (int)q->initial_quantum;
	f->hnext = *root;
	*root = f;
	q->flows++;
	q->inactive_flows++;
	return f;
}

/* ------------------------------------------------------------ data path */

static int fq_enqueue(struct pw_pkt *p, struct pw__qdisc *sch, struct pw__drops *d)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	unsigned band = q->prio2band[p->priority & FQ_PRIO_MAX];
	if (q->band_pkt_count[band] >= sch->limit) {
		q->stat_band_drops[band]++;
		return pw__q_drop(sch, p, d, PW_DROP_FQ_BAND_LIMIT);
	}
	uint64_t now = pw__net_now(sch);
	if (!p->tstamp_ns) {
		p->pw_time_to_send = now;
	} else {
		if ((int64_t)p->tstamp_ns > (int64_t)(now + q->horizon)) {
			if (q->horizon_drop) {
				q->stat_horizon_drops++;
				return pw__q_drop(sch, p, d, PW_DROP_HORIZON);
			}
			q->stat_horizon_caps++;
			p->tstamp_ns = now + q->horizon;
		}
		p->pw_time_to_send = p->tstamp_ns;
	}

	struct fq_flow *f = fq_classify(q, sch, p, now);
	if (f != &q->internal) {
		if ((uint32_t)f->qlen >= q->flow_plimit) {
			q->stat_flows_plimit++;
			return pw__q_drop(sch, p, d, PW_DROP_FLOW_LIMIT);
		}
		if (f->detached) {
			flow_add_tail(q, f, true);
			/* max_t(u32, ...): a negative credit stays as it is */
			if (time_after64(fq_jiffies(q, now), f->age + q->flow_refill_delay) &&
			    (uint32_t)f->credit < q->quantum)
				f->credit = (int)q->quantum;
		}
		f->band = (int)band;
		q->band_pkt_count[band]++;
		p->pw_cb = band;
		if (f->qlen == 0)
			q->inactive_flows--;
	}
	f->qlen++;
	flow_queue_add(f, p);
	pw__q_backlog_inc(sch, p);
	return PW_NET_XMIT_SUCCESS;
}

static void fq_check_throttled(struct fq_priv *q, uint64_t now)
{
	if (q->time_next_delayed_flow > now)
		return;
	uint64_t sample = now - q->time_next_delayed_flow;
	if ((int64_t)sample > 0) {
		q->unthrottle_latency_ns -= q->unthrottle_latency_ns >> 3;
		q->unthrottle_latency_ns += sample >> 3;
	}
	struct pw__fqt_node *n = pw__fqt_take_due(&q->throttled, now, &q->time_next_delayed_flow);
	while (n) {
		struct fq_flow *f = pw_container_of(n, struct fq_flow, tn);
		n = n->next;
		flow_unthrottled(q, f);
	}
}

static struct fq_flow_head *band_head_select(struct fq_band *b)
{
	if (b->credit <= 0)
		return NULL;
	if (b->new_flows.first)
		return &b->new_flows;
	return b->old_flows.first ? &b->old_flows : NULL;
}

static void dequeue_pkt(struct pw__qdisc *sch, struct fq_flow *f, struct pw_pkt *p)
{
	flow_erase(f, p);
	pw__q_backlog_dec(sch, p);
	pw__q_bstats(sch, p);
}

static struct pw_pkt *fq_dequeue(struct pw__qdisc *sch)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	struct pw_pkt *p = q->peeked;
	if (p) { /* qdisc_dequeue_peeked(): what peek took out */
		q->peeked = NULL;
		pw__q_backlog_dec(sch, p);
		return p;
	}
	if (!sch->st.qlen)
		return NULL;
	p = flow_peek(&q->internal);
	if (p) {
		q->internal.qlen--;
		dequeue_pkt(sch, &q->internal, p);
		return p;
	}

	uint64_t now = pw__net_now(sch);
	fq_check_throttled(q, now);
	int retry = 0;
	struct fq_band *pb = &q->band[q->band_nr];
	struct fq_flow_head *head;
	struct fq_flow *f;
	for (;;) {
		head = band_head_select(pb);
		if (!head) {
			bool again = false;
			while (++retry <= FQ_BANDS) {
				if (++q->band_nr == FQ_BANDS)
					q->band_nr = 0;
				pb = &q->band[q->band_nr];
				int c = pb->credit + pb->quantum;
				pb->credit = c < pb->quantum ? c : pb->quantum;
				if (pb->credit > 0) {
					again = true;
					break;
				}
				retry = 0;
			}
			if (again)
				continue;
			if (q->time_next_delayed_flow != UINT64_MAX)
				pw__watchdog_schedule_range_ns(&q->wd, q->time_next_delayed_flow,
							       q->timer_slack);
			return NULL;
		}
		f = head->first;
		retry = 0;
		if (f->credit <= 0) {
			f->credit += (int)q->quantum;
			head->first = f->next;
			flow_add_tail(q, f, false);
			continue;
		}
		p = flow_peek(f);
		if (p) {
			uint64_t tnp = p->pw_time_to_send > f->time_next_packet ? p->pw_time_to_send
										  : f->time_next_packet;
			if (now < tnp) {
				head->first = f->next;
				f->time_next_packet = tnp;
				flow_set_throttled(q, f, now);
				continue;
			}
			dequeue_pkt(sch, f, p);
			if ((int64_t)(now - tnp - q->ce_threshold) > 0) {
				if (p->ecn == 1 || p->ecn == 2)
					p->ecn = 3; /* INET_ECN_set_ce(): ECT only */
				q->stat_ce_mark++;
			}
			if (--f->qlen == 0)
				q->inactive_flows++;
			q->band_pkt_count[p->pw_cb]--;
			break;
		}
		head->first = f->next;
		/* a pass through old_flows, so new flows cannot starve them */
		if (head == &pb->new_flows)
			flow_add_tail(q, f, false);
		else
			flow_set_detached(q, f, now);
	}

	uint32_t plen = p->len;
	f->credit -= (int)plen;
	pb->credit -= (int)plen;
	if (!q->rate_enable)
		return p;
	uint64_t rate = q->flow_max_rate;
	/* an EDT stamp: only maxrate moves time_next_packet */
	if (!p->tstamp_ns) {
		if (p->sk) {
			uint64_t r = __atomic_load_n(&p->sk->sk_pacing_rate, __ATOMIC_RELAXED);
			if (r < rate)
				rate = r;
		}
		if (rate <= q->low_rate_threshold) {
			f->credit = 0;
		} else {
			if (plen < q->quantum)
				plen = q->quantum;
			if (f->credit > 0)
				return p;
		}
	}
	if (rate != UINT64_MAX) {
		uint64_t len = (uint64_t)plen * FQ_NSEC_PER_SEC;
		if (rate)
			len /= rate;
		if (len > FQ_NSEC_PER_SEC) {
			len = FQ_NSEC_PER_SEC;
			q->stat_pkts_too_long++;
		}
		/* the timer, or the caller, came late: absorb up to half */
		if (f->time_next_packet) {
			int64_t drift = (int64_t)(now - f->time_next_packet);
			if (drift > 0) {
				uint64_t half = len / 2;
				len -= (uint64_t)drift < half ? (uint64_t)drift : half;
			}
		}
		f->time_next_packet = now + len;
	}
	return p;
}

/* qdisc_peek_dequeued(): the next packet is dequeued (its time comes
 * now, and dequeue's side effects happen now, as in the kernel) and kept
 * aside, still counted in qlen and backlog, for the dequeue that follows. */
static struct pw_pkt *fq_peek(struct pw__qdisc *sch)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	if (!q->peeked) {
		struct pw_pkt *p = fq_dequeue(sch);
		if (p) {
			q->peeked = p;
			pw__q_backlog_inc(sch, p);
		}
	}
	return q->peeked;
}

/* --------------------------------------------------------------- reset */

static void fq_reset(struct pw__qdisc *sch, struct pw__drops *d, enum pw_drop_reason r)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	sch->st.qlen = 0;
	sch->st.backlog = 0;
	if (q->peeked) {
		pw__drop_later(d, q->peeked, r);
		q->peeked = NULL;
	}
	flow_purge(&q->internal, d, r);
	if (q->root) {
		for (uint32_t i = 0; i < (1u << q->log); i++) {
			struct fq_flow *f;
			while ((f = q->root[i])) {
				q->root[i] = f->hnext;
				flow_purge(f, d, r);
				pw__mem_free(sch->dev->net, f, sizeof(*f));
			}
		}
	}
	for (unsigned b = 0; b < FQ_BANDS; b++) {
		q->band[b].new_flows.first = NULL;
		q->band[b].old_flows.first = NULL;
		q->band_pkt_count[b] = 0;
	}
	pw__fqt_init(&q->throttled); /* the flows are gone */
	q->flows = 0;
	q->inactive_flows = 0;
	q->throttled_flows = 0;
}

/* ------------------------------------------------------- configuration */

/* Move every flow of the current chains into @nroot (2^@nlog chains),
 * freeing the gc candidates (fq_rehash()). */
static void fq_rehash(struct pw__net *net, struct fq_priv *q, struct fq_flow **nroot,
		      unsigned nlog, uint64_t now)
{
	uint64_t jif = fq_jiffies(q, now);
	unsigned n = 0;
	for (uint32_t i = 0; i < (1u << q->log); i++) {
		struct fq_flow *f;
		while ((f = q->root[i])) {
			q->root[i] = f->hnext;
			if (gc_candidate(q, f, jif)) {
				n++;
				pw__mem_free(net, f, sizeof(*f));
				continue;
			}
			struct fq_flow **r = &nroot[fq_hash_key(f->key, nlog)];
			f->hnext = *r;
			*r = f;
		}
	}
	q->flows -= n;
	q->inactive_flows -= n;
	q->stat_gc_flows += n;
}

/*
 * fq_change(): the options in the order the kernel applies them.  Bad
 * buckets, pacing, priomap or weights make it return -EINVAL, but what
 * was applied before stays (the kernel's behaviour); the resize happens
 * only without an error.  Packets above a lowered limit go to @d.
 */
static int fq_apply(struct pw__qdisc *sch, struct fq_opt *o, struct pw__extack *ext,
		    struct pw__drops *d)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	if ((o->set & FQ_SET_INITIAL_QUANTUM) && o->initial_quantum > INT32_MAX) {
		/* the netlink policy (iq_range, max INT_MAX), before anything is
		 * applied; fq parses its options without an extack: no message */
		return -ERANGE;
	}
	int err = 0;
	unsigned log = q->log;
	if (o->set & FQ_SET_BUCKETS) {
		if (o->buckets_log >= 1 && o->buckets_log <= 18)
			log = o->buckets_log;
		else
			err = -EINVAL;
	}
	/* the bucket array a resize adopts from @o is charged to the
	 * runtime's budget (netmem.c) before anything is applied */
	size_t nbytes = 0;
	if (!err && (!q->root || log != q->log)) {
		nbytes = ((size_t)1 << log) * sizeof(*q->root);
		int rc = pw__mem_charge(sch->dev->net, nbytes, ext);
		if (rc)
			return rc;
	}
	if (o->set & FQ_SET_PLIMIT)
		sch->limit = o->plimit;
	if (o->set & FQ_SET_FLOW_PLIMIT)
		q->flow_plimit = o->flow_plimit;
	if (o->set & FQ_SET_QUANTUM) {
		uint32_t v = o->quantum;
		q->quantum = v < 256 ? 256 : v > (1u << 20) ? (1u << 20) : v;
	}
	if (o->set & FQ_SET_INITIAL_QUANTUM)
		q->initial_quantum = o->initial_quantum;
	/* defrate: the kernel logs "defrate ignored" and keeps nothing */
	if (o->set & FQ_SET_MAXRATE)
		q->flow_max_rate = o->maxrate == ~0u ? UINT64_MAX : o->maxrate;
	if (o->set & FQ_SET_LOW_RATE)
		q->low_rate_threshold = o->low_rate_threshold;
	if (o->set & FQ_SET_PACING) {
		if (o->pacing <= 1)
			q->rate_enable = (uint8_t)o->pacing;
		else
			err = -EINVAL;
	}
	if (o->set & FQ_SET_REFILL)
		q->flow_refill_delay = fq_usecs_to_jiffies(o->refill_delay, q->hz);
	if (!err && (o->set & FQ_SET_PRIOMAP)) {
		if (o->bands != FQ_BANDS) {
			pw__extack_msg(ext, "Error: FQ only supports 3 bands.");
			err = -EINVAL;
		} else {
			for (unsigned i = 0; i <= FQ_PRIO_MAX && !err; i++)
				if (o->priomap[i] >= FQ_BANDS) {
					pw__extack_msg(ext, "Error: FQ priomap field %u maps to a too high band %u.",
						   i, o->priomap[i]);
					err = -EINVAL;
				}
			if (!err)
				memcpy(q->prio2band, o->priomap, sizeof(q->prio2band));
		}
	}
	if (!err && (o->set & FQ_SET_WEIGHTS)) {
		for (unsigned i = 0; i < FQ_BANDS && !err; i++)
			if (o->weights[i] < FQ_MIN_WEIGHT) {
				pw__extack_msg(ext, "Error: Weight %d less that minimum allowed %d.",
					   o->weights[i], FQ_MIN_WEIGHT);
				err = -EINVAL;
			}
		if (!err)
			for (unsigned i = 0; i < FQ_BANDS; i++)
				q->band[i].quantum = o->weights[i];
	}
	if (o->set & FQ_SET_ORPHAN_MASK)
		q->orphan_mask = o->orphan_mask;
	if (o->set & FQ_SET_CE)
		q->ce_threshold = 1000ull * o->ce_threshold;
	if (o->set & FQ_SET_SLACK)
		q->timer_slack = o->timer_slack;
	if (o->set & FQ_SET_HORIZON)
		q->horizon = 1000ull * o->horizon;
	if (o->set & FQ_SET_HORIZON_DROP)
		q->horizon_drop = o->horizon_drop;
	if (!err && (!q->root || log != q->log)) {
		/* fq_resize(): parse built the array for the log it asked */
		if (!o->root || o->root_log != log) {
			pw__mem_uncharge(sch->dev->net, nbytes);
			return -ENOMEM;
		}
		struct fq_flow **nroot = o->root;
		if (q->root) {
			fq_rehash(sch->dev->net, q, nroot, log, pw__net_now(sch));
			pw__mem_uncharge(sch->dev->net, ((size_t)1 << q->log) * sizeof(*q->root));
		}
		o->root = q->root; /* the old one: opt_free frees it */
		o->root_log = q->log;
		q->root = nroot;
		q->log = log;
	} else {
		pw__mem_uncharge(sch->dev->net, nbytes); /* an error: no resize */
	}
	while (sch->st.qlen > sch->limit) {
		/* qdisc_dequeue_internal(): the packet the driver refused first */
		struct pw_pkt *p = sch->root == sch ? sch->requeued : NULL;
		if (p) {
			sch->requeued = NULL;
			pw__q_backlog_dec(sch, p);
		} else {
			p = fq_dequeue(sch);
		}
		if (!p)
			break;
		pw__drop_later(d, p, PW_DROP_QDISC_LIMIT);
	}
	return err;
}

static void fq_defaults(struct pw__qdisc *sch, struct fq_priv *q)
{
	uint32_t mtu = FQ_PSCHED_MTU;
	sch->limit = 10000;
	q->flow_plimit = 100;
	q->quantum = 2 * mtu;
	q->initial_quantum = 10 * mtu;
	q->flow_refill_delay = fq_usecs_to_jiffies(40000, q->hz);
	q->flow_max_rate = UINT64_MAX;
	q->time_next_delayed_flow = UINT64_MAX;
	q->rate_enable = 1;
	q->band[0].quantum = 9 << 16;
	q->band[1].quantum = 3 << 16;
	q->band[2].quantum = 1 << 16;
	q->log = 10;
	q->orphan_mask = 1024 - 1;
	q->low_rate_threshold = 550000 / 8;
	q->timer_slack = 10000;
	q->horizon = 10ull * FQ_NSEC_PER_SEC;
	q->horizon_drop = 1;
	q->ce_threshold = 1000ull * ~0u;
	memcpy(q->prio2band, default_prio2band, sizeof(q->prio2band));
}

static int fq_init(struct pw__qdisc *sch, void *optp, struct pw__extack *ext)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	struct fq_opt *o = optp, dflt;
	memset(q, 0, sizeof(*q));
	pw__fqt_init(&q->throttled);
	q->hz = pw_runtime_hz(sch->dev->rt);
	if (!q->hz)
		q->hz = 1000;
	q->ns_per_jiffy = FQ_NSEC_PER_SEC / q->hz;
	fq_defaults(sch, q);
	pw__watchdog_init(&q->wd, sch);
	if (!o) {
		memset(&dflt, 0, sizeof(dflt));
		o = &dflt;
	}
	/* the array for the log init ends with, unless parse built it */
	unsigned log = (o->set & FQ_SET_BUCKETS) && o->buckets_log >= 1 && o->buckets_log <= 18
			       ? o->buckets_log : q->log;
	if (!o->root || o->root_log != log) {
		free(o->root);
		o->root = calloc((size_t)1 << log, sizeof(*o->root));
		o->root_log = log;
		if (!o->root) {
			pw__watchdog_destroy(&q->wd);
			return -ENOMEM;
		}
	}
	struct pw__drops d;
	pw__pktq_init(&d.q);
	int rc = fq_apply(sch, o, ext, &d); /* empty: nothing to drop */
	if (o == &dflt)
		free(dflt.root);
	if (rc) {
		pw__watchdog_destroy(&q->wd);
		if (q->root)
			pw__mem_free(sch->dev->net, q->root, ((size_t)1 << q->log) * sizeof(*q->root));
		q->root = NULL;
		return rc;
	}
	return 0;
}

static int fq_change(struct pw__qdisc *sch, void *optp, struct pw__extack *ext)
{
	struct fq_opt *o = optp;
	if (!o)
		return -EINVAL;
	return fq_apply(sch, o, ext, &ext->drops);
}

static void fq_destroy(struct pw__qdisc *sch)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	pw__watchdog_destroy(&q->wd);
	struct pw__drops d;
	pw__pktq_init(&d.q);
	fq_reset(sch, &d, PW_DROP_FLUSH); /* frees the flows; no packets are left */
	if (q->root)
		pw__mem_free(sch->dev->net, q->root, ((size_t)1 << q->log) * sizeof(*q->root));
	q->root = NULL;
}

/* fq_dump_stats(): the tc_fq_qd_stats values (root lock held). */
void pw__fq_xstats(struct pw__qdisc *sch, struct pw__fq_xstats *st)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	memset(st, 0, sizeof(*st));
	st->gc_flows = q->stat_gc_flows;
	st->fastpath_packets = q->stat_fastpath_packets;
	st->throttled = q->stat_throttled;
	st->flows_plimit = q->stat_flows_plimit;
	st->pkts_too_long = q->stat_pkts_too_long;
	st->allocation_errors = q->stat_allocation_errors;
	/* none throttled: the kernel's ~0 + slack - now is minus its uptime,
	 * negative; pinwheel's clock may start near 0, so say -1 */
	if (q->time_next_delayed_flow == UINT64_MAX)
		st->time_next_delayed_flow = -1;
	else
		st->time_next_delayed_flow =
			(int64_t)(q->time_next_delayed_flow + q->timer_slack - pw__net_now(sch));
	st->flows = q->flows;
	st->inactive_flows = q->inactive_flows;
	st->throttled_flows = q->throttled_flows;
	st->unthrottle_latency_ns =
		q->unthrottle_latency_ns > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)q->unthrottle_latency_ns;
	st->ce_mark = q->stat_ce_mark;
	st->horizon_drops = q->stat_horizon_drops;
	st->horizon_caps = q->stat_horizon_caps;
	for (unsigned i = 0; i < FQ_BANDS; i++) {
		st->band_drops[i] = q->stat_band_drops[i];
		st->band_pkt_count[i] = q->band_pkt_count[i];
	}
}

const struct pw__qdisc_ops pw__fq_ops = {
	.id = "fq",
	.priv_size = sizeof(struct fq_priv),
	.enqueue = fq_enqueue,
	.dequeue = fq_dequeue,
	.peek = fq_peek,
	.init = fq_init,
	.change = fq_change,
	.reset = fq_reset,
	.destroy = fq_destroy,
};
