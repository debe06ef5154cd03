/* SPDX-License-Identifier: MIT */
/*
 * seed003's transmit path as 3.17 ran it (the model's own qdisc: docs/lab.md
 * says why the library's cannot be used here), on the engine's timelines
 * and locks (model.c):
 *
 *  - enqueue (__dev_xmit_skb()): the qdisc running on another CPU means the
 *    busylock first, held until the root lock is dropped; netem's enqueue
 *    under the root lock (a drop at its limit); then, when nobody runs the
 *    queue, this CPU runs it;
 *  - the run (__qdisc_run(), qdisc_restart(), sch_direct_xmit()): up to 64
 *    dequeues, each under the root lock, which is dropped around the driver
 *    while the TX queue's _xmit_lock is held; the quota spent, the queue goes
 *    on this CPU's NET_TX list;
 *  - netem (3.17): its time queue in time_to_send order; dequeue returns
 *    nothing while throttled; a head not yet due arms the watchdog (an
 *    hrtimer, started as the row says: ABS or ABS_PINNED, the library
 *    placing it) and throttles; the watchdog's fire unthrottles and
 *    raises NET_TX on the CPU it fired on (qdisc_watchdog());
 *  - NET_TX (net_tx_action()): queued work on its CPU, a pass when the
 *    CPU gets to it; each queue taken by spin_trylock() (held: back on the
 *    list); work left at the end of a pass restarts it, up to
 *    MAX_SOFTIRQ_RESTART passes and MAX_SOFTIRQ_TIME, then ksoftirqd (a task:
 *    the CPU busy for the library) until a pass leaves nothing.
 *
 * Hold times: a critical section costs its table entry plus one `line` for
 * the qdisc's line when another CPU wrote it last, plus the skb lines it
 * touches as 3.17's code does (model_seed003_lines.c: the tail's first line
 * at enqueue, two dependent steps at dequeue, the inlined header in the
 * driver, the free at completion; `line` from another CPU's cache, `mem`
 * once the queued ACKs pass the cache); a lock taken from another CPU costs
 * the hand-off (3.17's ticket locks: more with more CPUs spinning, the
 * engine's lock_hand()), which (with the wait) perf counts in _raw_spin_lock: the
 * busylock, root and TX locks are spin_lock(), the timer and hrtimer bases
 * spin_lock_irqsave(), apart.
 *
 * Threads: the main thread only (model.c); the watchdog's callback runs
 * inside pw_sim_advance(), acting as the CPU it fired on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model_seed003.h"

/* ------------------------------------------------------------ NET_TX */

/* Raise NET_TX on CPU @c: a pass queued for when it gets to it. */
static void raise_net_tx(struct s3 *s, unsigned c)
{
	struct s3_cpu *n = &s->nc[c];
	if (n->raised)
		return;
	n->raised = 1;
	mdl_at(&s->m, s3_ct(s, c), S3_EV_NET_TX, c, 0);
}

/* __netif_schedule(): @q on CPU @c's NET_TX list (once). */
static void netif_schedule(struct s3 *s, struct s3_txq *q, unsigned c)
{
	if (q->sched)
		return;
	q->sched = 1;
	struct s3_cpu *n = &s->nc[c];
	q->next_sched = S3_NONE;
	if (n->tail == S3_NONE)
		n->head = q->id;
	else
		s->q[n->tail].next_sched = q->id;
	n->tail = q->id;
	raise_net_tx(s, c);
}

/* The line of the qdisc (or of an skb) another CPU wrote last: one
 * transfer.  Context: the caller's CPU @c. */
static double line_of(const struct s3 *s, int writer, unsigned c)
{
	return writer >= 0 && (unsigned)writer != c ? s->m.cost->ns[MC_LINE] : 0;
}

/* qdisc_watchdog(): unthrottle, raise NET_TX here.  Context: a timer
 * callback inside pw_sim_advance(), on the CPU it fired on. */
static enum pw_hrtimer_restart wd_fire(struct pw_hrtimer *t)
{
	struct s3_txq *q = pw_container_of(t, struct s3_txq, wd);
	struct s3 *s = q->s;
	struct mdl *m = &s->m;
	m->now = pw_now_ns(m->rt);
	int w = pw_this_cpu();
	unsigned c = w < 0 ? q->id % s->ncpus : (unsigned)w;
	mdl_locked(m, c, &s->hlock[c], m->cost->ns[MC_HR_RUN], s->c_hr, s->c_spin_irq);
	q->throttled = 0;
	if (mdl_in_window(m))
		q->fires++;
	netif_schedule(s, q, c);
	return PW_HRTIMER_NORESTART;
}

/* qdisc_watchdog_schedule(): arm @q's watchdog for @expires from CPU @c
 * (the root lock held), as the row pins it or not; the library places it.
 * The hrtimer bases' locks: the old base's and the new one's. */
static void wd_arm(struct s3 *s, struct s3_txq *q, unsigned c, uint64_t expires)
{
	struct mdl *m = &s->m;
	int before = pw_hrtimer_is_queued(&q->wd) ? pw_hrtimer_cpu(&q->wd) : -1;
	unsigned mode = PW_HRTIMER_MODE_ABS | (s->cf->wd_pinned ? PW_HRTIMER_MODE_PINNED : 0);
	mdl_act(m, (int)c);
	int rc = pw_hrtimer_start(&q->wd, expires, mode);
	mdl_check(m, rc == 0, "seed003: watchdog start: %d", rc);
	int after = pw_hrtimer_cpu(&q->wd);
	if (before >= 0)
		mdl_locked(m, c, &s->hlock[before], m->cost->ns[MC_HR_OP], s->c_hr, s->c_spin_irq);
	if (after >= 0 && after != before)
		mdl_locked(m, c, &s->hlock[after], m->cost->ns[MC_HR_OP], s->c_hr, s->c_spin_irq);
	q->throttled = 1;
	if (mdl_in_window(m))
		q->arms++;
}

/* ------------------------------------------------------------ the queue */

/* __skb_unlink() of the head by CPU @c: it writes the next skb's prev. */
static void pkt_unlink_head(struct s3 *s, struct s3_txq *q, unsigned c)
{
	struct s3_pkt *p = &s->pool[q->head];
	q->head = p->next;
	if (q->head == S3_NONE) {
		q->tail = S3_NONE;
	} else {
		s->pool[q->head].prev = S3_NONE;
		s->pool[q->head].l0 = (int)c;
	}
	p->l0 = (int)c;
	q->qlen--;
	s->queued--;
}

/* Are the queued ACKs out of cache now? */
static int skbs_cold(const struct s3 *s)
{
	return s3_lines_cold(&s->lines, s->queued);
}

/* netem's tfifo_enqueue(): in time_to_send order from the tail.  A CPU's
 * enqueues stamp its own time, and the engine runs lagging CPUs' work in
 * event order, so a stamp may fall before the tail's: the walk keeps the
 * order (its cost is not charged: in the kernel, stamps taken under the
 * lock arrive in order at a constant delay and the append is at the tail). */
static void pkt_insert(struct s3 *s, struct s3_txq *q, uint32_t pi)
{
	struct s3_pkt *p = &s->pool[pi];
	uint32_t at = q->tail;
	while (at != S3_NONE && s->pool[at].tts > p->tts)
		at = s->pool[at].prev;
	p->prev = at;
	p->next = at == S3_NONE ? q->head : s->pool[at].next;
	if (p->next == S3_NONE)
		q->tail = pi;
	else
		s->pool[p->next].prev = pi;
	if (at == S3_NONE)
		q->head = pi;
	else
		s->pool[at].next = pi;
	/* the neighbours' pointers written by the enqueuer */
	if (at != S3_NONE)
		s->pool[at].l0 = (int)p->cpu;
	if (p->next != S3_NONE)
		s->pool[p->next].l0 = (int)p->cpu;
	q->qlen++;
	s->queued++;
	if (mdl_in_window(&s->m) && s->queued > s->queued_max)
		s->queued_max = s->queued;
}

/* The driver sends @pi on queue @q from CPU @c: the wire, the TX
 * completion, and the sender acknowledged (the ACK's cumulative count). */
static void driver_xmit(struct s3 *s, struct s3_txq *q, uint32_t pi, unsigned c)
{
	struct mdl *m = &s->m;
	struct s3_pkt *p = &s->pool[pi];
	double hdr = s3_lines_drv(&s->lines, (int)p->cpu, c, skbs_cold(s));
	mdl_locked(m, c, &q->xmit, m->cost->ns[MC_DRV_TX] + hdr, s->c_drv, s->c_spin);
	struct s3_flow *f = &s->fl[p->flow];
	if (p->cum > f->acked)
		f->acked = p->cum;
	if (mdl_in_window(m)) {
		s->deq++;
		q->deq++;
		s->deq_by_cpu[c]++;
		s->deq_qc[q->id * s->ncpus + c]++;
		s->remote_deq += s3_xps(c) != q->id;
	}
	q->deq_all++;
	s->sent_total++;
	uint64_t t0 = s3_ct(s, c);
	uint64_t t = (s->link_free > t0 ? s->link_free : t0) + 53; /* 66 B at 10 Gbit/s */
	s->link_free = t;
	mdl_vec_push(m, &q->txv, t, pi, 0);
}

/*
 * __qdisc_run() on CPU @c: dequeue under the root lock, the driver outside
 * it, up to the quota.  The caller has checked that nobody else runs @q.
 */
static void qdisc_run(struct s3 *s, struct s3_txq *q, unsigned c)
{
	struct mdl *m = &s->m;
	double qd = m->cost->ns[MC_QDISC];
	q->run_cpu = (int)c;
	q->run_until = UINT64_MAX;
	unsigned quota = S3_QUOTA;
	for (;;) {
		uint64_t ct = s3_ct(s, c);
		double hold = qd + line_of(s, q->line_cpu, c);
		if (q->throttled || q->head == S3_NONE) {
			mdl_locked(m, c, &q->root, hold, s->c_qdisc, s->c_spin);
			q->line_cpu = (int)c;
			break;
		}
		struct s3_pkt *p = &s->pool[q->head];
		int cold = skbs_cold(s);
		if (p->tts > ct) {
			/* not due (its time_to_send read): arm the watchdog
			 * for it, throttled */
			hold += s3_lines_peek(&s->lines, p->l0, c, cold);
			mdl_locked(m, c, &q->root, hold + m->cost->ns[MC_HR_OP], s->c_qdisc, s->c_spin);
			q->line_cpu = (int)c;
			wd_arm(s, q, c, p->tts);
			break;
		}
		uint32_t pi = q->head;
		int next_l0 = p->next == S3_NONE ? -1 : s->pool[p->next].l0;
		double lines = s3_lines_deq(&s->lines, p->l0, (int)p->cpu, next_l0, c, cold);
		if (mdl_in_window(m)) {
			s->deq_line_ns += lines;
			s->cold_deq += cold;
		}
		hold += lines;
		mdl_locked(m, c, &q->root, hold, s->c_qdisc, s->c_spin);
		q->line_cpu = (int)c;
		pkt_unlink_head(s, q, c);
		driver_xmit(s, q, pi, c);
		if (--quota == 0) {
			netif_schedule(s, q, c);
			break;
		}
	}
	q->run_until = s3_ct(s, c);
}

/* Does another CPU than @c run @q at @t? */
static int running_other(const struct s3_txq *q, unsigned c, uint64_t t)
{
	return t < q->run_until && q->run_cpu != (int)c;
}

void s3_send_ack(struct s3 *s, unsigned fi, uint64_t cum, unsigned cpu)
{
	struct mdl *m = &s->m;
	if (s->free_head == S3_NONE) {
		mdl_check(m, 0, "seed003: packet pool empty");
		return;
	}
	uint32_t pi = s->free_head;
	struct s3_pkt *p = &s->pool[pi];
	s->free_head = p->next;
	s->made++;
	p->flow = fi;
	p->cum = (uint32_t)cum;
	p->cpu = cpu;
	p->l0 = (int)cpu;
	s->fl[fi].acked_rcv = cum;
	struct s3_txq *q = &s->q[s3_xps(cpu)];
	mdl_work(m, cpu, m->cost->ns[MC_TCP_XMIT], s->c_tcp);
	uint64_t ct = s3_ct(s, cpu);
	double hold = m->cost->ns[MC_QDISC] + line_of(s, q->line_cpu, cpu);
	if (q->tail != S3_NONE)
		hold += s3_lines_enq(&s->lines, s->pool[q->tail].l0, (int)s->pool[q->tail].cpu, cpu,
				     skbs_cold(s));
	if (running_other(q, cpu, ct))
		mdl_locked_nested(m, cpu, &q->busy, &q->root, hold, s->c_qdisc, s->c_spin);
	else
		mdl_locked(m, cpu, &q->root, hold, s->c_qdisc, s->c_spin);
	q->line_cpu = (int)cpu;
	s->acks_total++;
	q->enq_all++;
	if (mdl_in_window(m)) {
		s->acks++;
		s->enq_qc[q->id * s->ncpus + cpu]++;
		q->enq++;
		q->qlen_sum += q->qlen;
	}
	if (q->qlen >= q->limit) {
		/* qdisc_reshape_fail(): dropped at netem's limit */
		q->drops_all++;
		if (mdl_in_window(m))
			q->drops++;
		s->drops++;
		p->next = s->free_head;
		s->free_head = pi;
		s->freed++;
	} else {
		p->tts = ct + q->delay_ns;
		pkt_insert(s, q, pi);
		if (mdl_in_window(m) && q->qlen > q->qlen_max)
			q->qlen_max = q->qlen;
	}
	ct = s3_ct(s, cpu);
	if (ct >= q->run_until || q->run_cpu == (int)cpu)
		qdisc_run(s, q, cpu); /* qdisc_run_begin() succeeded */
}

void s3_net_tx_pass(struct s3 *s, unsigned c)
{
	struct mdl *m = &s->m;
	struct s3_cpu *n = &s->nc[c];
	n->raised = 0;
	uint64_t ct = s3_ct(s, c);
	if (!n->in_session) {
		n->in_session = 1;
		n->sess_start = ct;
		n->passes = 0;
	}
	n->passes++;
	if (mdl_in_window(m))
		n->npasses++;
	uint32_t qi = n->head;
	n->head = n->tail = S3_NONE;
	while (qi != S3_NONE) {
		struct s3_txq *q = &s->q[qi];
		qi = q->next_sched;
		ct = s3_ct(s, c);
		if (mdl_lock_held_at(&q->root, ct)) {
			/* spin_trylock() failed (reading the lock's line):
			 * __netif_reschedule() */
			mdl_work(m, c, m->cost->ns[MC_LINE], s->c_spin);
			if (mdl_in_window(m))
				n->trylock_fail++;
			q->sched = 0;
			netif_schedule(s, q, c);
			continue;
		}
		q->sched = 0;
		if (!running_other(q, c, ct))
			qdisc_run(s, q, c);
	}
	ct = s3_ct(s, c);
	struct mdl_cpu *cpu = &m->cpu[c];
	if (n->head != S3_NONE) {
		/* pending again: __do_softirq() restarts while it may */
		if (!cpu->ksoftirqd && n->passes < S3_MAX_RESTART && ct - n->sess_start < S3_SOFTIRQ_NS) {
			if (mdl_in_window(m))
				n->restarts++;
			return; /* raised already: the next pass at ct */
		}
		if (!cpu->ksoftirqd) {
			/* wakeup_softirqd(): a task from now, the CPU busy */
			if (mdl_in_window(m)) {
				n->ksoftirqd_wakes++;
				n->early_wakes += n->passes < S3_MAX_RESTART &&
						  ct - n->sess_start < S3_SOFTIRQ_NS;
			}
			mdl_work(m, c, m->cost->ns[MC_WAKE] / 2, m->cat_ipi);
			cpu->ksoftirqd = 1;
			n->ksoftirqd_since = m->now;
			mdl_cpu_update(m, c);
		}
		return;
	}
	n->in_session = 0;
	if (cpu->ksoftirqd) {
		/* nothing pending: ksoftirqd sleeps */
		if (m->now > m->t_measure)
			n->ksoftirqd_ns += m->now - (n->ksoftirqd_since > m->t_measure
							     ? n->ksoftirqd_since
							     : m->t_measure);
		cpu->ksoftirqd = 0;
		mdl_cpu_update(m, c);
	}
}

void s3_tx_poll(struct s3 *s, const struct mdl_ev *ev)
{
	struct mdl *m = &s->m;
	struct mdl_vec *v = &s->q[ev->a].txv;
	if (!mdl_vec_begin(m, v, ev))
		return;
	struct mdl_item it;
	while (mdl_vec_next(m, v, &it)) {
		struct s3_pkt *p = &s->pool[it.a];
		/* freed microseconds after the dequeue: its lines are the
		 * dequeuer's, not cold */
		mdl_work(m, v->cpu,
			 m->cost->ns[MC_TX_CLEAN] +
				 s3_lines_free(&s->lines, p->l0, (int)p->cpu, v->cpu, 0),
			 s->c_drv);
		p->next = s->free_head;
		s->free_head = it.a;
		s->freed++;
	}
	mdl_vec_end(m, v);
}

/* ------------------------------------------------------------ setup */

void s3_txq_init(struct s3 *s, struct s3_txq *q, unsigned id, uint32_t limit, uint64_t delay_ns)
{
	memset(q, 0, sizeof(*q));
	q->s = s;
	q->id = id;
	q->limit = limit;
	q->delay_ns = delay_ns;
	q->head = q->tail = S3_NONE;
	q->next_sched = S3_NONE;
	q->run_cpu = -1;
	q->line_cpu = -1;
	mdl_lock_init(&q->root, "qdisc root");
	mdl_lock_init(&q->busy, "qdisc busylock");
	mdl_lock_init(&q->xmit, "txq _xmit_lock");
	q->root.handoff_spin = q->busy.handoff_spin = q->xmit.handoff_spin = 1;
	q->root.ticket = q->busy.ticket = q->xmit.ticket = s->ticket;
	mdl_vec_init(&q->txv, id, id % s->ncpus, MI_TX, S3_EV_TX, 16000, 16);
	pw_hrtimer_setup(s->m.rt, &q->wd, wd_fire, CLOCK_MONOTONIC, PW_HRTIMER_MODE_ABS);
}

void s3_txq_fini(struct s3_txq *q)
{
	mdl_lock_fini(&q->root);
	mdl_lock_fini(&q->busy);
	mdl_lock_fini(&q->xmit);
	mdl_vec_fini(&q->txv);
}
