/* SPDX-License-Identifier: MIT */
/*
 * The model of seed 000: 500 flows paced at 3,000,000 B/s through fq,
 * and what timer_migration does to the interrupt rate (model.c: the
 * engine).  Eric Dumazet, netdev, 2014-09-18: vmstat in ~1.5M/s with
 * timer_migration=1, ~1.16M/s with 0 (a 3.17 kernel), sys 15% vs 12%.
 *
 * The machine: N CPUs (default 32, swept 16-48 with --full; 2 sockets x
 * N/4 cores x 2 threads, assumed, for PUSH's domain walk), a NIC with a TX
 * queue per CPU (XPS CPU c -> queue c; TX completion interrupt of queue q
 * on CPU q) and min(N, 16) RX queues (RSS; ixgbe's and mlx4's default
 * limit of 16), RX vector r on CPU r; mq with fq on every TX queue, set up
 * through pw_tc() (3.17's fq: no timer_slack).  Coalescing as mlx4_en's
 * defaults: rx-usecs 16 / rx-frames 44, tx-usecs 16 / tx-frames 16
 * (MLX4_EN_RX_COAL_TIME, _TARGET, MLX4_EN_TX_COAL_TIME, _PKTS; adaptive
 * moderation off).  A 40 Gbit/s wire (500 x 24 Mbit/s does not fit 10G);
 * RTT 50 us.
 *
 * A flow: a pw_sock with sk_pacing_rate 3e6 B/s; TSO sends 2 segments of
 * MSS 1448 per skb (tcp_tso_autosize(): rate >> 10 bytes / MSS, at least
 * tcp_min_tso_segs 2), 3028 bytes on the wire; the receiver ACKs every
 * second segment, so one ACK per skb.  TCP Small Queues keeps at most 2
 * skbs of a flow in the qdisc and the NIC (3.17: sk_wmem_alloc limit
 * max(2 truesize, rate >> 10) ~ 2 skbs); a TX completion frees one and,
 * when the flow was throttled, its TSQ tasklet sends the next on the
 * completing CPU.  Each ACK, on its RX queue's CPU: tcp_ack() frees the
 * acked data and re-arms the retransmit timer (tcp_rearm_rto() ->
 * sk_reset_timer(), now + RTO, RTO = TCP_RTO_MIN = HZ/5 here).
 *
 * The application (netperf, one thread per flow, first on CPU f mod N,
 * then where 3.17's scheduler puts it: model_sched.c, which also says when
 * a thread woken onto a busy CPU gets it), its
 * sizes from the seed's own columns, not from in (docs/lab.md): vmstat's
 * cs with timer_migration=0 is two switches per wake-up, which gives the
 * wake-ups per second, so the bytes each writes (the flows' rate over
 * them) and the send buffer (three times that: sk_stream_write_space()
 * wakes the writer when a third is free).  A thread blocks when the buffer
 * is full; woken, it is a task on its CPU (runnable, the CPU busy for
 * idle_cpu()) until it sleeps again: the wake-up, send()'s system call and
 * copy, then its send path in its own context (tcp_sendmsg() ->
 * tcp_push() -> tcp_write_xmit() -> dev_queue_xmit(), as far as TSQ lets
 * it), and every interrupt and softirq that lands on its CPU meanwhile:
 * the timeline queues those after the work in hand, so a task's end is
 * re-read until no other work landed on its CPU since the last look
 * (another task's work queued behind it does not count: each task's own
 * charges are tagged).  runnable_avg is the tasks' residence over the
 * window: vmstat's r.  The flows start with their buffers at random fill,
 * so their wake-ups are spread as a steady state's are.
 *
 * The rows (each a fresh runtime; struct cfg below):
 *   off        timer_migration=0: every timer where it is armed
 *   push-3.17  timer_migration=1 on 3.17: PUSH, the 3.17 kick rule (every
 *              remote enqueue IPIs its target), 3.17's mod_timer (no
 *              same-bucket path: a changed expiry always detaches and
 *              enqueues: modelled as pw_sk_stop_timer() + pw_sk_reset_timer()
 *              after the fast-path check), nothing pinned
 *   push-4.8   the same under 4.8's code: the library's own mod_timer (its
 *              same-bucket path) and 4.8's kick rule (only an idle target
 *              whose first expiry moves earlier); nothing pinned
 *   pinned     the seed's fix on 3.17: socket timers pinned
 *              (mod_timer_pinned in sk_reset_timer); watchdogs as 3.17 had
 *              them (not pinned)
 *   pull       6.9's hierarchy, its rule; nothing pinned
 *
 * Threads: the main thread only (model.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model_sched.h"
#include "model_seed000.h"

#define TSQ_SKBS 2u
#define RTT_NS 50000ull
#define LINE_BPS 40e9
#define MAX_RXQ 16u

enum { EV_TX = 1, EV_RX, EV_APP_END, EV_APP_DONE, EV_START };

enum era { ERA_317, ERA_48, ERA_69 };

struct cfg {
	const char *key, *label;
	enum pw_migration policy;
	enum pw_kick_rule rule;
	enum era era;
	int sk_pinned, wd_pinned;
};

static const struct cfg cfgs[] = {
	{"off", "timer_migration=0 (3.17)", PW_MIGRATION_OFF, PW_KICK_LINUX_3_17, ERA_317, 0, 0},
	{"push-3.17", "timer_migration=1, 3.17's kick rule and mod_timer", PW_MIGRATION_PUSH,
	 PW_KICK_LINUX_3_17, ERA_317, 0, 0},
	{"push-4.8", "timer_migration=1, 4.8's kick rule and mod_timer", PW_MIGRATION_PUSH,
	 PW_KICK_LINUX_4_8, ERA_48, 0, 0},
	{"pinned", "the seed's fix: socket timers pinned (3.17)", PW_MIGRATION_PUSH,
	 PW_KICK_LINUX_3_17, ERA_317, 1, 0},
	{"pull", "6.9: the PULL hierarchy", PW_MIGRATION_PULL, PW_KICK_LINUX_4_8, ERA_69, 0, 0},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

struct pkt {
	struct pw_pkt p;
	uint32_t flow;
	uint32_t next; /* free list */
	uint32_t q;    /* the TX queue XPS is expected to pick */
};

struct flow {
	struct pw_sock sk;
	struct pw_timer rto;
	unsigned app_cpu, rxq, txq;
	uint32_t unsent;     /* bytes written by the application, not sent */
	uint32_t queued;     /* bytes in the socket: unsent + not acked */
	unsigned in_layer;   /* skbs handed to the qdisc, not yet at the driver */
	unsigned in_stack;   /* skbs in the qdisc or the NIC (TSQ's count) */
	int tsq_throttled;
	int app_waiting;
	int task_on;         /* its thread is runnable (woken, not yet asleep) */
	uint64_t task_t0;    /* woken at */
	uint64_t ck_charged, ck_task; /* its CPU's charged and task work at the last look */
	uint64_t acked_skbs;
};

struct s0 {
	struct mdl m;
	const struct cfg *cf;
	unsigned ncpus, nflows, nrxq, ntxq;
	uint64_t rate;
	uint32_t sndbuf;
	struct flow *fl;
	struct mdl_sched sch;     /* the netperf threads' scheduler (flow i is thread i) */
	struct pkt *pool;
	uint32_t npool, free_head, nfree;
	struct pw_netdev *dev;
	struct mdl_vec *txv, *rxv;
	struct mdl_lock *qlock;   /* each TX queue's root lock */
	struct mdl_lock *wlock;   /* each CPU's timer wheel base lock */
	uint64_t *task_ns;        /* each CPU's work charged by tasks, since the start */
	uint64_t task_res_ns;     /* the tasks' residence in the window (vmstat's r x time) */
	uint64_t *res_cpu;        /* of it, by the CPU each task was on */
	uint64_t link_free;
	/* the categories */
	unsigned c_tcp, c_qdisc, c_drv, c_timer, c_spin, c_app, c_hr, c_sched;
	/* counts (window) */
	uint64_t sent, completed, acks, app_runs, dequeues, remote_deq, rearms, rearm_fast,
		rearm_remote, drops, xps_miss, kicks_seen, wd_arms, rto_fired;
	/* counts (whole run) */
	uint64_t alloc_total, free_total, acks_made, acks_done, drops_total;
	uint64_t arms_idle;       /* slow-path re-arms made on a CPU marked idle, in the window */
};

static struct s0 *S0(struct mdl *m)
{
	return m->ctx;
}

/* ------------------------------------------------------------ packets */

static struct pkt *pkt_get(struct s0 *s)
{
	if (s->free_head == UINT32_MAX)
		return NULL;
	struct pkt *p = &s->pool[s->free_head];
	s->free_head = p->next;
	s->nfree--;
	s->alloc_total++;
	return p;
}

static void pkt_put(struct s0 *s, struct pkt *p)
{
	p->next = s->free_head;
	s->free_head = (uint32_t)(p - s->pool);
	s->nfree++;
	s->free_total++;
}

/* ------------------------------------------------------------ the driver */

/* fq released @pp on TX queue @txq: on the wire, then a TX completion and
 * the flow's ACK.  Context: the CPU running the queue (pw_this_cpu()),
 * inside pw_dev_queue_xmit() or a watchdog's callback in pw_sim_advance(). */
static int s0_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pp, void *ctx)
{
	(void)dev;
	struct s0 *s = ctx;
	struct mdl *m = &s->m;
	struct pkt *p = pw_container_of(pp, struct pkt, p);
	struct flow *f = &s->fl[p->flow];
	m->now = pw_now_ns(m->rt);
	int w = pw_this_cpu();
	unsigned cpu = w < 0 ? txq % s->ncpus : (unsigned)w;
	/* the dequeue under the queue's root lock, then the driver */
	mdl_locked(m, cpu, &s->qlock[txq], m->cost->ns[MC_QDISC], s->c_qdisc, s->c_spin);
	mdl_work(m, cpu, m->cost->ns[MC_DRV_TX], s->c_drv);
	if (mdl_in_window(m)) {
		s->dequeues++;
		s->remote_deq += cpu != txq % s->ncpus;
	}
	f->in_layer--;
	if (txq != p->q && s->xps_miss++ == 0)
		mdl_check(m, 0, "seed000: XPS sent flow %u on queue %u, expected %u", p->flow, txq,
			  p->q);
	uint64_t wire = (uint64_t)(pp->len * 8.0 * 1e9 / LINE_BPS);
	uint64_t t = (s->link_free > m->now ? s->link_free : m->now) + wire;
	s->link_free = t;
	mdl_vec_push(m, &s->txv[txq], t, (uint32_t)(p - s->pool), 0);
	mdl_vec_push(m, &s->rxv[f->rxq], t + RTT_NS, p->flow, 0);
	s->acks_made++;
	return PW_NETDEV_TX_OK;
}

static void s0_drop(struct pw_netdev *dev, struct pw_pkt *pp, enum pw_drop_reason why, void *ctx)
{
	(void)dev;
	(void)why;
	struct s0 *s = ctx;
	struct pkt *p = pw_container_of(pp, struct pkt, p);
	struct flow *f = &s->fl[p->flow];
	f->in_layer--;
	f->in_stack--;
	s->drops_total++;
	if (mdl_in_window(&s->m))
		s->drops++;
	pkt_put(s, p);
}

static const struct pw_netdev_ops s0_ops = {.xmit = s0_xmit, .drop = s0_drop};

/* ------------------------------------------------------------ TCP */

/* tcp_write_xmit() of flow @fi on CPU @cpu: send while there is data and
 * TSQ allows.  Context: the main thread, entered as @cpu. */
static void write_xmit(struct s0 *s, unsigned fi, unsigned cpu)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	while (f->unsent >= PAYLOAD) {
		if (f->in_stack >= TSQ_SKBS) {
			f->tsq_throttled = 1;
			return;
		}
		struct pkt *p = pkt_get(s);
		if (!p) {
			mdl_check(m, 0, "seed000: packet pool empty");
			return;
		}
		pw_pkt_init(&p->p, NULL, WIRE_LEN);
		p->p.sk = &f->sk;
		p->p.hash = f->sk.sk_hash;
		p->flow = fi;
		f->unsent -= PAYLOAD;
		f->in_stack++;
		/* XPS (dev.c): the socket's queue while it has packets in the
		 * layer, else this CPU's */
		unsigned q = f->in_layer ? f->txq : cpu % s->ntxq;
		f->txq = q;
		p->q = q;
		f->in_layer++;
		mdl_work(m, cpu, m->cost->ns[MC_TCP_XMIT], s->c_tcp);
		mdl_locked(m, cpu, &s->qlock[q], m->cost->ns[MC_QDISC], s->c_qdisc, s->c_spin);
		uint64_t arms = pw_netdev_watchdog_arms(s->dev, q);
		mdl_act(m, (int)cpu);
		int rc = pw_dev_queue_xmit(s->dev, &p->p);
		if (pw_netdev_watchdog_arms(s->dev, q) != arms) {
			mdl_work(m, cpu, m->cost->ns[MC_HR_OP], s->c_hr);
			if (mdl_in_window(m))
				s->wd_arms++;
		}
		if (rc < 0) {
			mdl_check(m, 0, "seed000: pw_dev_queue_xmit: %d", rc);
			return;
		}
		if (mdl_in_window(m))
			s->sent++;
	}
	f->tsq_throttled = 0;
}

/* tcp_rearm_rto() -> sk_reset_timer(): now + RTO, on CPU @cpu, by the
 * row's era.  Context: the main thread, entered as @cpu. */
static void rearm_rto(struct s0 *s, struct flow *f, unsigned cpu)
{
	struct mdl *m = &s->m;
	uint64_t expires = pw_jiffies(m->rt) + m->hz / 5;
	int pending = pw_timer_pending(&f->rto);
	int before = pw_timer_cpu(&f->rto);
	if (pending && f->rto.expires == expires) {
		/* fast path 1, every era: no lock */
		pw_sk_reset_timer(&f->sk, &f->rto, expires);
		mdl_work(m, cpu, m->cost->ns[MC_TIMER_FAST], s->c_timer);
		if (mdl_in_window(m))
			s->rearm_fast++;
		return;
	}
	/* the kicks this CPU sends in the call (the library's count: to
	 * wherever PUSH's domain walk, or the timer's old base, put it) */
	struct pw_cpu_stats st;
	pw_stats_read(m->rt, cpu, &st);
	uint64_t sent0 = st.kicks_sent;
	if (mdl_in_window(m))
		s->arms_idle += !m->cpu[cpu].busy;
	if (s->cf->era == ERA_317 && pending)
		pw_sk_stop_timer(&f->sk, &f->rto); /* 3.17: detach, then enqueue */
	int rc = pw_sk_reset_timer(&f->sk, &f->rto, expires);
	mdl_check(m, rc >= 0, "seed000: pw_sk_reset_timer: %d", rc);
	int after = pw_timer_cpu(&f->rto);
	/* the detach under the old base's lock, the enqueue under the new */
	if (before >= 0)
		mdl_locked(m, cpu, &s->wlock[before], m->cost->ns[MC_TIMER_ARM], s->c_timer,
			   s->c_spin);
	if (after >= 0 && after != before)
		mdl_locked(m, cpu, &s->wlock[after], m->cost->ns[MC_TIMER_ARM], s->c_timer,
			   s->c_spin);
	if (mdl_in_window(m)) {
		s->rearms++;
		s->rearm_remote += after >= 0 && (unsigned)after != cpu;
	}
	if (after < 0 || (unsigned)after == cpu)
		return;
	pw_stats_read(m->rt, cpu, &st);
	if (st.kicks_sent > sent0) {
		/* the kick: sent here, taken there (counted from the library's
		 * pw_kick_stats, not here) */
		mdl_work(m, cpu, m->cost->ns[MC_IPI_SEND], m->cat_ipi);
		mdl_work(m, (unsigned)after, m->cost->ns[MC_IPI_RECV], m->cat_ipi);
		if (mdl_in_window(m))
			s->kicks_seen += st.kicks_sent - sent0;
	}
}

/* Charge @ns of flow @f's task work on CPU @c (tagged: not work that
 * lands on the task).  Return: its end. */
static uint64_t task_work(struct s0 *s, unsigned c, double ns)
{
	uint64_t before = s->m.cpu[c].charged_ns;
	uint64_t end = mdl_work(&s->m, c, ns, s->c_app);
	s->task_ns[c] += s->m.cpu[c].charged_ns - before;
	return end;
}

/* Flow @fi's thread gets CPU @c (woken onto an idle CPU, or its turn in
 * the queue came): runnable since its wake-up; now the switch in, send()'s
 * system call and its copy. */
static void app_start(struct s0 *s, unsigned fi, unsigned c)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	f->app_cpu = c;
	uint32_t write = s->sndbuf - f->queued;
	double cost = m->cost->ns[MC_WAKE] / 2 + m->cost->ns[MC_SYSCALL] +
		      m->cost->ns[MC_COPY_KB] * write / 1024.0;
	uint64_t end = task_work(s, c, cost);
	/* runnable from now (idle_cpu() is false with a task queued) */
	mdl_task_run(m, c, end + 1);
	mdl_at(m, end, EV_APP_END, fi, 0);
}

/* The application of flow @fi is woken from CPU @from: the scheduler
 * places it (model_sched.c); it runs at once on an idle CPU, else waits
 * its turn there (its CPU already busy). */
static void app_wake(struct s0 *s, unsigned fi, unsigned from)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	int run;
	unsigned c = mdl_sched_wake(&s->sch, fi, from, &run);
	mdl_wake(m, from, c);
	f->task_on = 1;
	f->task_t0 = m->now;
	if (mdl_in_window(m))
		s->app_runs++;
	if (run)
		app_start(s, fi, c);
}

/* The task's residence in the window, when it ends at @t. */
static void task_account(struct s0 *s, struct flow *f, uint64_t t)
{
	struct mdl *m = &s->m;
	uint64_t a = f->task_t0 > m->t_measure ? f->task_t0 : m->t_measure;
	uint64_t b = t < m->t_end ? t : m->t_end;
	if (b > a) {
		s->task_res_ns += b - a;
		s->res_cpu[f->app_cpu] += b - a;
	}
}

/* Flow @fi's task looks again at @now: work that landed on its CPU since
 * the last look (interrupts, softirqs, not tasks') delayed it that much;
 * none, and it sleeps. */
static void app_done(struct s0 *s, unsigned fi)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	unsigned c = f->app_cpu;
	uint64_t landed = (m->cpu[c].charged_ns - f->ck_charged) - (s->task_ns[c] - f->ck_task);
	if (landed) {
		f->ck_charged = m->cpu[c].charged_ns;
		f->ck_task = s->task_ns[c];
		mdl_task_run(m, c, m->now + landed + 1);
		mdl_at(m, m->now + landed, EV_APP_DONE, fi, 0);
		return;
	}
	task_account(s, f, m->now);
	f->task_on = 0;
	/* the next waiting thread, or one the idle CPU pulls */
	uint32_t next = mdl_sched_sleep(&s->sch, c);
	if (next != MDL_SCHED_NONE)
		app_start(s, next, c);
}

/* ------------------------------------------------------------ events */

static void tx_poll(struct s0 *s, const struct mdl_ev *ev)
{
	struct mdl *m = &s->m;
	struct mdl_vec *v = &s->txv[ev->a];
	if (!mdl_vec_begin(m, v, ev))
		return;
	struct mdl_item it;
	while (mdl_vec_next(m, v, &it)) {
		struct pkt *p = &s->pool[it.a];
		unsigned fi = p->flow; /* read before pkt_put() gives @p back */
		struct flow *f = &s->fl[fi];
		mdl_work(m, v->cpu, m->cost->ns[MC_TX_CLEAN], s->c_drv);
		f->in_stack--;
		pkt_put(s, p);
		if (mdl_in_window(m))
			s->completed++;
		if (f->tsq_throttled) {
			/* the TSQ tasklet, on this CPU */
			mdl_act(m, (int)v->cpu);
			write_xmit(s, fi, v->cpu);
		}
	}
	mdl_vec_end(m, v);
}

static void rx_poll(struct s0 *s, const struct mdl_ev *ev)
{
	struct mdl *m = &s->m;
	struct mdl_vec *v = &s->rxv[ev->a];
	if (!mdl_vec_begin(m, v, ev))
		return;
	struct mdl_item it;
	mdl_act(m, (int)v->cpu);
	while (mdl_vec_next(m, v, &it)) {
		struct flow *f = &s->fl[it.a];
		mdl_work(m, v->cpu, m->cost->ns[MC_DRV_RX] + m->cost->ns[MC_TCP_ACK], s->c_tcp);
		s->acks_done++;
		if (mdl_in_window(m))
			s->acks++;
		f->queued -= PAYLOAD;
		f->acked_skbs++;
		mdl_act(m, (int)v->cpu);
		rearm_rto(s, f, v->cpu);
		/* a thread still running (not yet asleep) needs no wake-up:
		 * the next ACK after it sleeps wakes it */
		if (f->app_waiting && !f->task_on && s->sndbuf - f->queued >= s->sndbuf / 3) {
			f->app_waiting = 0;
			app_wake(s, it.a, v->cpu);
		}
		mdl_act(m, (int)v->cpu);
		write_xmit(s, it.a, v->cpu);
	}
	mdl_vec_end(m, v);
}

/* The copy done: the data is in the socket; tcp_push() sends what TSQ
 * lets it, in the task's context; then the task looks at what landed. */
static void app_end(struct s0 *s, unsigned fi)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	unsigned c = f->app_cpu;
	uint32_t write = s->sndbuf - f->queued;
	write -= write % PAYLOAD;
	f->unsent += write;
	f->queued += write;
	f->app_waiting = 1; /* the buffer is full: it blocks again */
	/* the work that landed during the copy is queued after it: the send
	 * path's charges come after that, so its end includes it */
	uint64_t before = m->cpu[c].charged_ns;
	mdl_act(m, (int)c);
	write_xmit(s, fi, c);
	s->task_ns[c] += m->cpu[c].charged_ns - before;
	f->ck_charged = m->cpu[c].charged_ns;
	f->ck_task = s->task_ns[c];
	uint64_t end = m->cpu[c].free_at > m->now ? m->cpu[c].free_at : m->now;
	mdl_task_run(m, c, end + 1);
	mdl_at(m, end, EV_APP_DONE, fi, 0);
}

/* Flow @fi starts (netperf's first millisecond): its buffer at a random
 * fill between the wake-up's mark and full, so that its first wake-up
 * falls anywhere in a wake-up's period, and sending. */
static void flow_start(struct s0 *s, unsigned fi)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	uint32_t lo = s->sndbuf - s->sndbuf / 3;
	uint32_t fill = lo + (uint32_t)mdl_rand_below(m, s->sndbuf - lo + 1);
	fill -= fill % PAYLOAD;
	f->unsent = f->queued = fill;
	f->app_waiting = 1;
	mdl_act(m, (int)f->app_cpu);
	write_xmit(s, fi, f->app_cpu);
}

static void s0_dispatch(struct mdl *m, const struct mdl_ev *ev)
{
	struct s0 *s = S0(m);
	switch (ev->type) {
	case EV_TX:
		tx_poll(s, ev);
		break;
	case EV_RX:
		rx_poll(s, ev);
		break;
	case EV_APP_END:
		app_end(s, ev->a);
		break;
	case EV_APP_DONE:
		app_done(s, ev->a);
		break;
	case EV_START:
		flow_start(s, ev->a);
		break;
	}
}

/* ------------------------------------------------------------ one row */

/* The retransmit timer fired: a flow stalled for an RTO (never, while
 * ACKs flow).  Drops the pending timer's reference, as tcp_write_timer()
 * does when it does not re-arm.  Context: a timer callback. */
static void rto_fn(struct pw_timer *t)
{
	struct flow *f = pw_container_of(t, struct flow, rto);
	struct s0 *s = f->sk.sk_user;
	s->rto_fired++;
	pw_sock_put(&f->sk);
}

static int tc(struct s0 *s, const char *fmt, unsigned a)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), fmt, a);
	return mdl_tc(&s->m, "seed000", cmd);
}

static void s0_free(struct s0 *s)
{
	if (s->m.rt) {
		pw_netdev_destroy(s->dev);
		mdl_fini(&s->m);
	}
	for (unsigned i = 0; s->txv && i < s->ntxq; i++)
		mdl_vec_fini(&s->txv[i]);
	for (unsigned i = 0; s->rxv && i < s->nrxq; i++)
		mdl_vec_fini(&s->rxv[i]);
	free(s->txv);
	free(s->rxv);
	mdl_locks_free(s->qlock, s->ntxq);
	mdl_locks_free(s->wlock, s->ncpus);
	mdl_sched_fini(&s->sch);
	free(s->task_ns);
	free(s->res_cpu);
	free(s->fl);
	free(s->pool);
	free(s);
}

/* A row's sizes and variants: the scheduler's balancing (3.17's, or
 * threads that stay on CPU f mod N), the RX vectors' numbering (socket 0's
 * CPUs, mlx4's local-first, or Linux's x86 order: vector r on Linux CPU r). */
struct sizes {
	unsigned flows;
	uint64_t warm_ns, run_ns;
	int no_balance, rx_linux;
};

/* The machine (docs/lab.md, fixed before the run): 2 sockets x N/4 cores x
 * 2 threads, CPUs 2k and 2k+1 siblings, each socket's CPUs consecutive;
 * a count not a multiple of 4 (or under 8): one flat domain. */
static struct mdl_topo topo_of(unsigned ncpus)
{
	struct mdl_topo t = {0, {0}};
	if (ncpus >= 8 && ncpus % 4 == 0)
		t = (struct mdl_topo){2, {2, ncpus / 2}};
	return t;
}

/* The CPU of RX vector @r: CPU r, or Linux's x86 CPU r (the first threads
 * of every core, socket by socket, then the second threads) in the
 * library's numbering (a socket's CPUs consecutive, siblings 2k, 2k+1). */
static unsigned rx_cpu(unsigned r, unsigned ncpus, int linux_order)
{
	if (!linux_order || ncpus < 8 || ncpus % 4)
		return r % ncpus;
	unsigned cores = ncpus / 4, t = r / (2 * cores), rem = r % (2 * cores);
	return (rem / cores) * 2 * cores + (rem % cores) * 2 + t;
}

/* The CPUs sharing a last-level cache in @t: the socket (the level above
 * SMT), or the machine. */
static unsigned llc_of(const struct mdl_topo *t, unsigned ncpus)
{
	if (t && t->levels == 2)
		return t->span[1];
	if (t && t->levels == 1 && t->span[0] > 2)
		return t->span[0];
	return ncpus;
}

static int run_row(const struct mdl_opts *o, const struct sizes *z, const struct cfg *cf,
		   unsigned ncpus, unsigned hz, const struct mdl_costs *costs,
		   const struct mdl_topo *topo, struct mdl_seed *sd, struct mdl_row *row)
{
	struct s0 *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cf = cf;
	s->ncpus = ncpus;
	s->nflows = z->flows;
	s->ntxq = ncpus > PW_MAX_TXQ ? PW_MAX_TXQ : ncpus;
	s->nrxq = ncpus < MAX_RXQ ? ncpus : MAX_RXQ;
	s->rate = (uint64_t)SEED_RATE;
	s->sndbuf = (uint32_t)(3 * WAKE_BYTES);
	struct mdl *m = &s->m;
	int err = mdl_init_topo(m, topo, ncpus, hz, o->seed, costs, z->warm_ns, z->run_ns,
				s0_dispatch, s);
	if (err) {
		free(s);
		return err;
	}
	s->c_tcp = mdl_cat(m, "tcp");
	s->c_qdisc = mdl_cat(m, "qdisc");
	s->c_drv = mdl_cat(m, "driver");
	s->c_timer = mdl_cat(m, "mod_timer");
	s->c_hr = mdl_cat(m, "hrtimer");
	s->c_spin = mdl_cat(m, "spin");
	s->c_app = mdl_cat(m, "app");
	s->c_sched = mdl_cat(m, "sched");
	s->npool = s->nflows * (TSQ_SKBS + 1) + 64;
	s->fl = calloc(s->nflows, sizeof(*s->fl));
	s->pool = calloc(s->npool, sizeof(*s->pool));
	s->txv = calloc(s->ntxq, sizeof(*s->txv));
	s->rxv = calloc(s->nrxq, sizeof(*s->rxv));
	s->qlock = mdl_locks_new(s->ntxq, "qdisc root");
	s->wlock = mdl_locks_new(ncpus, "timer base");
	s->task_ns = calloc(ncpus, sizeof(*s->task_ns));
	s->res_cpu = calloc(ncpus, sizeof(*s->res_cpu));
	err = mdl_sched_init(&s->sch, m, topo, llc_of(topo, ncpus), s->nflows, !z->no_balance,
			     s->c_sched);
	if (err || !s->fl || !s->pool || !s->txv || !s->rxv || !s->qlock || !s->wlock ||
	    !s->task_ns || !s->res_cpu) {
		s0_free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->npool; i++)
		s->pool[i].next = i + 1 < s->npool ? i + 1 : UINT32_MAX;
	s->free_head = 0;
	s->nfree = s->npool;
	for (unsigned q = 0; q < s->ntxq; q++)
		mdl_vec_init(&s->txv[q], q, q % ncpus, MI_TX, EV_TX, 16000, 16);
	for (unsigned r = 0; r < s->nrxq; r++)
		mdl_vec_init(&s->rxv[r], r, rx_cpu(r, ncpus, z->rx_linux), MI_RX, EV_RX, 16000, 44);

	struct pw_runtime *rt = m->rt;
	mdl_check(m, pw_set_migration(rt, cf->policy) == 0, "pw_set_migration");
	mdl_check(m, pw_set_kick_rule(rt, cf->rule) == 0, "pw_set_kick_rule");
	mdl_check(m, pw_net_set_sk_timers_pinned(rt, cf->sk_pinned) == 0, "sk timers pinned");
	mdl_check(m, pw_net_set_watchdog_pinned(rt, cf->wd_pinned) == 0, "watchdog pinned");
	/* the kernel's qdisc_watchdog(): raise NET_TX (model_seed003.c) */
	mdl_check(m, pw_net_set_watchdog_net_tx(rt, 1) == 0, "watchdog net_tx");
	err = pw_netdev_create(rt, "eth0", s->ntxq < 2 ? 2 : s->ntxq, &s0_ops, s, &s->dev);
	if (err) {
		s0_free(s);
		return err;
	}
	for (unsigned q = 0; q < s->ntxq; q++) {
		uint64_t mask[PW_MAX_CPUS / 64] = {0};
		mask[q / 64] |= 1ull << (q % 64);
		pw_netdev_set_xps(s->dev, q, mask, ncpus);
	}
	mdl_act(m, 0); /* tc runs on CPU 0 */
	tc(s, "qdisc add dev eth0 root handle 1: mq", 0);
	for (unsigned q = 0; q < s->ntxq; q++)
		tc(s, "qdisc add dev eth0 parent 1:%x fq timer_slack 0", q + 1);
	for (unsigned i = 0; i < s->nflows; i++) {
		struct flow *f = &s->fl[i];
		pw_sock_init(&f->sk, rt, NULL); /* the flows are freed with the row */
		f->sk.sk_hash = (uint32_t)mdl_rand(m);
		pw_sock_set_pacing_rate(&f->sk, s->rate);
		f->app_cpu = i % ncpus;
		mdl_sched_place(&s->sch, i, f->app_cpu);
		f->rxq = (uint32_t)(f->sk.sk_hash % s->nrxq);
		f->txq = f->app_cpu % s->ntxq;
		mdl_act(m, (int)f->app_cpu);
		f->sk.sk_user = s;
		pw_sk_timer_setup(&f->sk, &f->rto, rto_fn);
		/* netperf starts its flows within the first millisecond */
		mdl_at(m, mdl_rand_below(m, 1000000), EV_START, i, 0);
	}
	mdl_act(m, -1);
	if (!m->nfailed)
		err = mdl_run(m);

	/* the row */
	struct mdl_totals t;
	mdl_totals(m, s->kicks_seen, &t);
	double secs = t.secs;
	uint64_t remote_total = t.remote_total, rekick_total = t.rekick_total;
	for (unsigned i = 0; i < s->nflows; i++)
		if (s->fl[i].task_on) /* runnable at the window's end */
			task_account(s, &s->fl[i], m->t_end);

	/* invariants */
	if (cf->policy == PW_MIGRATION_OFF || cf->sk_pinned || cf->policy == PW_MIGRATION_PULL)
		mdl_check(m, remote_total == 0, "seed000 %s: %llu remote arms where none may be",
			  cf->key, (unsigned long long)remote_total);
	if (cf->rule == PW_KICK_LINUX_3_17)
		mdl_check(m, rekick_total == remote_total,
			  "seed000 %s: 3.17 rule: %llu timer IPIs for %llu remote enqueues",
			  cf->key,
			  (unsigned long long)rekick_total, (unsigned long long)remote_total);
	/* PUSH moves a re-arm made on an idle CPU (to a busy one): with none
	 * made in the window (every CPU busy, as 500 flows keep 2 CPUs) or one
	 * CPU, none is pushed */
	if (cf->policy == PW_MIGRATION_PUSH && !cf->sk_pinned && !o->smoke && ncpus > 1 &&
	    s->arms_idle > 0)
		mdl_check(m, t.remote_arms > 0,
			  "seed000 %s: PUSH pushed no socket timer of %llu re-armed on idle CPUs",
			  cf->key, (unsigned long long)s->arms_idle);
	uint64_t in_nic = 0, in_qdisc = 0;
	for (unsigned q = 0; q < s->ntxq; q++) {
		in_nic += mdl_vec_pending(&s->txv[q]);
		struct pw_qdisc_stats qs;
		if (pw_netdev_txq_stats(s->dev, q, &qs, NULL) == 0)
			in_qdisc += qs.qlen;
	}
	mdl_check(m, s->alloc_total == s->free_total + in_nic + in_qdisc,
		  "seed000 %s: packets: %llu made, %llu freed, %llu in the NIC, %llu queued",
		  cf->key,
		  (unsigned long long)s->alloc_total, (unsigned long long)s->free_total,
		  (unsigned long long)in_nic, (unsigned long long)in_qdisc);
	mdl_check(m, s->drops_total == 0, "seed000 %s: %llu packets dropped", cf->key,
		  (unsigned long long)s->drops_total);
	uint64_t ack_pending = 0;
	for (unsigned r = 0; r < s->nrxq; r++)
		ack_pending += mdl_vec_pending(&s->rxv[r]);
	mdl_check(m, s->acks_made == s->acks_done + ack_pending,
		  "seed000 %s: ACKs: %llu sent back, %llu processed, %llu pending", cf->key,
		  (unsigned long long)s->acks_made, (unsigned long long)s->acks_done,
		  (unsigned long long)ack_pending);
	mdl_check(m, s->completed > 0 && s->acks > 0, "seed000 %s: no traffic", cf->key);
	mdl_check(m, s->rto_fired == 0, "seed000 %s: %llu retransmit timers fired", cf->key,
		  (unsigned long long)s->rto_fired);

	mdl_row_common(row, &t, m);
	mdl_row_set(row, "cs_per_s", 2.0 * s->app_runs / secs, "%.0f");
	mdl_row_set(row, "runnable_avg", s->task_res_ns / (secs * 1e9), "%.2f");
	/* the seed's own columns beside, where it has the configuration */
	int seed_on = !strcmp(cf->key, "push-3.17"), seed_off = !strcmp(cf->key, "off");
	mdl_row_set(row, "seed_r", seed_off ? SEED_R_OFF : seed_on ? SEED_R_ON : NAN, "%.2f");
	mdl_row_set(row, "seed_cs_per_s", seed_off ? SEED_CS_OFF : seed_on ? SEED_CS_ON : NAN,
		    "%.0f");
	mdl_row_set(row, "pkts_per_s", s->completed / secs, "%.0f");
	mdl_row_set(row, "acks_per_s", s->acks / secs, "%.0f");
	mdl_row_set(row, "rearms_per_s", s->rearms / secs, "%.0f");
	mdl_row_set(row, "rearm_fast_per_s", s->rearm_fast / secs, "%.0f");
	mdl_row_set(row, "remote_deq_pct", s->dequeues ? 100.0 * s->remote_deq / s->dequeues : 0,
		    "%.2f");
	mdl_row_set(row, "wd_arms_per_s", s->wd_arms / secs, "%.0f");
	/* the scheduler: wake-ups placed elsewhere, wake_affine() won,
	 * newly-idle pulls (across LLCs of them); the timer IPIs' busiest
	 * receiver (the pushes' target) */
	const struct mdl_sched *sc = &s->sch;
	mdl_row_set(row, "sched_moved_pct", sc->wakes ? 100.0 * sc->moved / sc->wakes : 0, "%.1f");
	mdl_row_set(row, "sched_affine_pct", sc->wakes ? 100.0 * sc->affine / sc->wakes : 0,
		    "%.1f");
	mdl_row_set(row, "sched_newidle_per_s", sc->newidle / secs, "%.0f");
	mdl_row_set(row, "sched_pulls_per_s", sc->pulls / secs, "%.0f");
	mdl_row_set(row, "sched_pulls_far_per_s", sc->pulls_far / secs, "%.0f");
	uint64_t tipi_max = 0;
	unsigned busiest = 0, used = 0;
	for (unsigned c = 0; c < ncpus; c++) {
		struct pw_cpu_stats st;
		struct pw_kick_stats ks;
		mdl_stats_window(m, c, &st, &ks);
		if (ks.remote_enqueue > tipi_max) {
			tipi_max = ks.remote_enqueue;
			busiest = c;
		}
		used += mdl_sched_nr(sc, c) > 0 || m->cpu[c].cat_ns[s->c_app] > 0;
	}
	mdl_row_set(row, "tipi_top_pct", t.kick[0] ? 100.0 * tipi_max / t.kick[0] : 0, "%.1f");
	mdl_row_set(row, "tipi_top_cpu", busiest, "%.0f");
	mdl_row_set(row, "r_top_cpu", s->res_cpu[busiest] / (secs * 1e9), "%.2f");
	mdl_row_set(row, "app_cpus", used, "%.0f");
	mdl_row_finish(sd, row, m, cf->key, cf->label);
	s0_free(s);
	return err == -EFAULT ? 0 : err; /* a broken invariant is in the checks */
}
/* ------------------------------------------------------------ the seed */
int mdl_seed000(const struct mdl_opts *o, struct mdl_seed *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->id = "seed000";
	snprintf(sd->title, sizeof(sd->title),
		 "500 flows paced through fq, the RTO re-armed per ACK, timer_migration on/off");
	/* 100 ms before the window: three half-lives of PELT's averages */
	struct sizes z = {500, 100000000, 50000000, 0, 0};
	unsigned cpus_def[4] = {32}, ncpu = 1, hz_def[2] = {1000, 250}, nhz = 2;
	if (o->smoke) {
		z = (struct sizes){40, 3000000, 7000000, 0, 0};
		cpus_def[0] = 8;
		nhz = 1;
	}
	if (o->full) {
		z.run_ns = 200000000;
		unsigned sweep[4] = {16, 24, 32, 48};
		memcpy(cpus_def, sweep, sizeof(sweep));
		ncpu = 4;
	}
	if (o->cpus) {
		cpus_def[0] = o->cpus;
		ncpu = 1;
	}
	if (o->hz) {
		hz_def[0] = o->hz;
		nhz = 1;
	}
	snprintf(sd->scale, sizeof(sd->scale),
		 "scale: %u flows x 3,000,000 B/s (the seed: 500), MSS 1448, 2 segments an skb, "
		 "one ACK an skb; CPUs %u%s (the seed's host: not stated, 16-48 plausible), 2 "
		 "sockets x CPUs/4 cores x 2 threads (assumed); a TX queue per CPU, min(CPUs, 16) RX queues; mlx4 coalescing rx 16us/44, tx 16us/16; "
		 "40 Gbit/s, RTT 50us; HZ %u%s; netperf woken %.0f times a second a flow, %.0f KB "
		 "a wake-up (the seed's cs with timer_migration=0: two switches a wake-up), placed "
		 "and pulled as 3.17's CFS does (model_sched.c); %.0f ms "
		 "simulated after %.0f ms warm-up, per row",
		 z.flows, cpus_def[0], ncpu > 1 ? "-48" : "", hz_def[0], nhz > 1 ? " and 250" : "",
		 SEED_CS_OFF / 2 / SEED_FLOWS, WAKE_BYTES / 1024, z.run_ns / 1e6, z.warm_ns / 1e6);
	static const char *cols[] = {"in_per_s", "rx_per_s", "tx_per_s", "loc_per_s", "res_per_s",
				     "remote_arms_per_s", "timer_ipis_per_s", "runnable_avg",
				     "seed_r", "cs_per_s", "seed_cs_per_s", "remote_deq_pct",
				     "sched_moved_pct", "sched_pulls_per_s", "sys_pct", "spin_pct"};
	static const char *heads[] = {"in/s", "rx/s", "tx/s", "loc/s", "res/s", "remote/s",
				      "tIPI/s", "r", "seed r", "cs/s", "seed cs/s", "rdeq%",
				      "mv%", "pull/s", "sys%", "spin%"};
	sd->ncols = sizeof(cols) / sizeof(cols[0]);
	memcpy(sd->col, cols, sizeof(cols));
	memcpy(sd->col_head, heads, sizeof(heads));
	int err = 0;
	for (unsigned ci = 0; ci < ncpu && !err; ci++)
		for (unsigned hi = 0; hi < nhz && !err; hi++)
			for (unsigned k = 0; k < NCFG && !err; k++) {
				if (sd->nrows == MDL_MAX_ROWS)
					break;
				struct mdl_topo tp = topo_of(cpus_def[ci]);
				err = run_row(o, &z, &cfgs[k], cpus_def[ci], hz_def[hi], &o->costs,
					      &tp, sd, &sd->row[sd->nrows]);
				sd->nrows++;
			}
	/* the cost sweeps (--full): irq, ipi, line, handoff x0.5 and x2; the
	 * task's costs (wake, syscall, copy: what decides how long a CPU runs
	 * a task, so how many re-arms are pushed) x0.5 and x2 */
	if (o->full && !err) {
		for (unsigned i = 0; i < 2 * MDL_SWEEP_N && !err; i++) {
			struct mdl_costs c;
			mdl_cost_sweep(&o->costs, i / MDL_SWEEP_N, i % MDL_SWEEP_N, &c);
			for (unsigned k = 0; k < 2 && !err && sd->nrows < MDL_MAX_ROWS; k++) {
				struct mdl_topo tp = topo_of(32);
				err = run_row(o, &z, &cfgs[k], 32, 1000, &c, &tp, sd,
					      &sd->row[sd->nrows]);
				sd->nrows++;
			}
		}
		/* the machine's other shapes (--full): one flat domain (the
		 * placement before the domain walk), no SMT, one socket; the
		 * rows' cost name says which, so mdl_find() skips them */
		static const struct {
			const char *name;
			struct mdl_topo t;
		} shapes[] = {
			{"topo flat", {0, {0}}},
			{"topo 2x16x1", {1, {16}}},
			{"topo 1x16x2", {1, {2}}},
		};
		for (unsigned i = 0; i < 3 && !err; i++)
			for (unsigned k = 0; k < 2 && !err && sd->nrows < MDL_MAX_ROWS; k++) {
				struct mdl_row *row = &sd->row[sd->nrows];
				err = run_row(o, &z, &cfgs[k], 32, 1000, &o->costs, &shapes[i].t,
					      sd, row);
				snprintf(row->cost_name, sizeof(row->cost_name), "%s",
					 shapes[i].name);
				sd->nrows++;
			}
		/* the scheduler's variants (--full): balancing off (threads stay
		 * on CPU f mod N), the RX vectors in Linux's x86 numbering */
		static const struct {
			const char *name;
			int no_balance, rx_linux;
		} vars[] = {{"sched off", 1, 0}, {"rx linux", 0, 1}, {"rx linux, sched off", 1, 1}};
		for (unsigned i = 0; i < 3 && !err; i++)
			for (unsigned k = 0; k < 2 && !err && sd->nrows < MDL_MAX_ROWS; k++) {
				struct mdl_row *row = &sd->row[sd->nrows];
				struct sizes zv = z;
				struct mdl_topo tp = topo_of(32);
				zv.no_balance = vars[i].no_balance;
				zv.rx_linux = vars[i].rx_linux;
				err = run_row(o, &zv, &cfgs[k], 32, 1000, &o->costs, &tp, sd, row);
				snprintf(row->cost_name, sizeof(row->cost_name), "%s", vars[i].name);
				sd->nrows++;
			}
	}
	if (err)
		return err;
	mdl_seed000_claims(sd, cpus_def, ncpu, hz_def, nhz);
	return 0;
}
