/* SPDX-License-Identifier: MIT */
/*
 * The model of seed 003: mq + 8 netem on the receiver of a TCP_STREAM
 * test, its ACKs delayed 6-20 ms, and where the netem watchdogs go (model.c:
 * the engine).  Eric Dumazet, 2014-09-20 ("net: sched: use pinned
 * timers"): migrated watchdog hrtimers gathered on one CPU, which did every
 * dequeue and could not keep up: 39.24% of cycles in _raw_spin_lock; with
 * the watchdogs pinned, 4.83%.
 *
 * The machine: N CPUs (default 8: one per TX queue, the seed's NIC has 8;
 * --full adds 16 and 32), a NIC with 8 TX and 8 RX queues; XPS CPU c ->
 * TX queue c mod 8 (with fewer CPUs than queues the rest carry nothing),
 * TX completion vector q on CPU q mod N, RX vector r on CPU r mod N; mlx4
 * coalescing (rx 16us/44, tx
 * 16us/16).  The seed's tc script verbatim through pw_tc() (ETH=eth1,
 * EST="est 1sec 4sec").
 *
 * The traffic: F TCP_STREAM flows (default 16: the seed says "a TCP_STREAM
 * test" and does not count them; 16 spread over the 8 RX queues by a
 * seeded RSS hash) share 10 Gbit/s of 1448-byte segments (1538 bytes on
 * the wire: 812,744 segments/s), each flow's evenly spaced from a random
 * phase (the sender is not modelled: open loop).  Per segment, on its RX
 * queue's CPU in the NAPI poll: the driver and tcp_v4_rcv(); every second
 * segment of a flow an ACK (3.17's "more than one full frame": ACK now),
 * sent from that CPU (tcp_send_ack -> dev_queue_xmit: XPS, then netem's
 * enqueue through the library); every other segment the delayed-ACK timer
 * is (re)armed (sk_reset_timer(), now + TCP_ATO_MIN = HZ/25), by the row's
 * era as in seed000.  The receiver (netserver, one per flow, on CPU f
 * mod N) is woken when data arrives, runs as a task (its CPU busy), copies
 * what is there, and again while more came meanwhile.  netem releases each
 * ACK when due: a watchdog fire on whichever CPU holds the watchdog raises
 * NET_TX there, as the kernel's qdisc_watchdog() does
 * (pw_net_set_watchdog_net_tx()), and that CPU's NET_TX pass dequeues
 * (under the queue's root lock, against the enqueueing CPU), re-arms the
 * watchdog (where PUSH may move it) and the driver sends; the TX
 * completion frees it on the queue's vector.
 * A CPU whose softirq work lags by more than 2 ms hands it to ksoftirqd and
 * counts as busy (model.c).
 *
 * Rows: off, push-3.17 (watchdogs not pinned: the seed's before), push-4.8
 * (the same with 4.8's kick rule and mod_timer: the hrtimer rule is the
 * same in both eras), pinned (the seed's fix: watchdogs ABS_PINNED, on
 * 3.17), pull (6.9, watchdogs not pinned: hrtimers stay local there).
 *
 * Threads: the main thread only (model.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define NQ 8u
#define MSS 1448u
#define SEG_WIRE_BITS (1538.0 * 8)
#define ACK_LEN 66u
#define LINE_BPS 10e9
#define GEN_NS 100000ull /* the arrival generator's step */

enum { EV_RX = 1, EV_TX, EV_GEN, EV_APP_END };

enum era { ERA_317, ERA_48, ERA_69 };

struct cfg {
	const char *key, *label;
	enum pw_migration policy;
	enum pw_kick_rule rule;
	enum era era;
	int wd_pinned;
};

static const struct cfg cfgs[] = {
	{"off", "timer_migration=0 (3.17)", PW_MIGRATION_OFF, PW_KICK_LINUX_3_17, ERA_317, 0},
	{"push-3.17", "timer_migration=1, watchdogs not pinned (the seed's before)",
	 PW_MIGRATION_PUSH, PW_KICK_LINUX_3_17, ERA_317, 0},
	{"push-4.8", "timer_migration=1, 4.8's kick rule and mod_timer, watchdogs not pinned",
	 PW_MIGRATION_PUSH, PW_KICK_LINUX_4_8, ERA_48, 0},
	{"pinned", "the seed's fix: watchdogs ABS_PINNED (3.17)", PW_MIGRATION_PUSH,
	 PW_KICK_LINUX_3_17, ERA_317, 1},
	{"pull", "6.9: the PULL hierarchy, watchdogs not pinned", PW_MIGRATION_PULL,
	 PW_KICK_LINUX_4_8, ERA_69, 0},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

/* the seed's tc script: lab_seed003_script (seed003_script.c, lab.h) */

struct pkt {
	struct pw_pkt p;
	uint32_t next;
	uint32_t q;
};

struct flow {
	struct pw_sock sk;
	struct pw_timer delack;
	unsigned rxq, app_cpu;
	uint64_t phase, interval; /* its segments arrive at phase + k * interval */
	uint64_t next_k;          /* the next segment not yet generated */
	uint64_t segs;            /* segments processed */
	uint64_t avail;           /* bytes queued for the reader */
	int app_waiting, app_running;
};

struct s3 {
	struct mdl m;
	const struct cfg *cf;
	unsigned ncpus, nflows;
	struct flow *fl;
	struct pkt *pool;
	uint32_t npool, free_head;
	struct pw_netdev *dev;
	struct mdl_vec txv[NQ], rxv[NQ];
	struct mdl_lock qlock[NQ];
	struct mdl_lock *wlock;
	uint64_t link_free;
	unsigned c_tcp, c_qdisc, c_drv, c_timer, c_spin, c_app, c_hr, c_copy;
	/* window */
	uint64_t segs, acks, deq, remote_deq, app_runs, kicks_seen, wd_arms;
	uint64_t *deq_by_cpu;
	uint64_t *deq_qc;          /* dequeues of queue q by CPU c: [q * ncpus + c] */
	/* whole run */
	uint64_t made, freed, drops, acks_total, sent_total, delack_fired;
};

static struct s3 *S3(struct mdl *m)
{
	return m->ctx;
}

static unsigned xps_queue(unsigned cpu)
{
	return cpu % NQ;
}

/* ------------------------------------------------------------ the driver */

/* netem released an ACK on @txq: its dequeue, the driver, the wire.
 * Context: the CPU running the queue (a watchdog's callback, or the
 * enqueueing CPU's qdisc run). */
static int s3_xmit(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pp, void *ctx)
{
	(void)dev;
	struct s3 *s = ctx;
	struct mdl *m = &s->m;
	struct pkt *p = pw_container_of(pp, struct pkt, p);
	m->now = pw_now_ns(m->rt);
	int w = pw_this_cpu();
	unsigned cpu = w < 0 ? txq % s->ncpus : (unsigned)w;
	mdl_locked(m, cpu, &s->qlock[txq], m->cost->ns[MC_QDISC], s->c_qdisc, s->c_spin);
	mdl_work(m, cpu, m->cost->ns[MC_DRV_TX], s->c_drv);
	if (mdl_in_window(m)) {
		s->deq++;
		s->deq_by_cpu[cpu]++;
		s->deq_qc[txq * s->ncpus + cpu]++;
		/* the queue's own CPUs: those XPS sends on it */
		s->remote_deq += xps_queue(cpu) != txq;
	}
	s->sent_total++;
	uint64_t t = (s->link_free > m->now ? s->link_free : m->now) +
		     (uint64_t)(ACK_LEN * 8.0 * 1e9 / LINE_BPS);
	s->link_free = t;
	mdl_vec_push(m, &s->txv[txq], t, (uint32_t)(p - s->pool), 0);
	return PW_NETDEV_TX_OK;
}

static void pkt_put(struct s3 *s, struct pkt *p)
{
	p->next = s->free_head;
	s->free_head = (uint32_t)(p - s->pool);
	s->freed++;
}

static void s3_drop(struct pw_netdev *dev, struct pw_pkt *pp, enum pw_drop_reason why, void *ctx)
{
	(void)dev;
	(void)why;
	struct s3 *s = ctx;
	s->drops++;
	pkt_put(s, pw_container_of(pp, struct pkt, p));
}

static const struct pw_netdev_ops s3_ops = {.xmit = s3_xmit, .drop = s3_drop};

/* ------------------------------------------------------------ the receiver */

static uint64_t kicks_of(struct mdl *m, unsigned c)
{
	struct pw_kick_stats k;
	pw_kick_stats_read(m->rt, c, &k);
	return k.remote_enqueue + k.idle_earlier + k.hrtimer + k.work + k.tmigr;
}

/* The delayed-ACK timer's re-arm, by the row's era (as seed000's RTO).
 * Context: the main thread entered as @cpu. */
static void rearm_delack(struct s3 *s, struct flow *f, unsigned cpu)
{
	struct mdl *m = &s->m;
	uint64_t expires = pw_jiffies(m->rt) + (m->hz / 25 ? m->hz / 25 : 1);
	int pending = pw_timer_pending(&f->delack);
	int before = pw_timer_cpu(&f->delack);
	if (pending && f->delack.expires == expires) {
		pw_sk_reset_timer(&f->sk, &f->delack, expires);
		mdl_work(m, cpu, m->cost->ns[MC_TIMER_FAST], s->c_timer);
		return;
	}
	int cand = -1;
	for (unsigned c = 0; c < s->ncpus; c++)
		if (m->cpu[c].busy) {
			cand = (int)c;
			break;
		}
	uint64_t kb = cand >= 0 ? kicks_of(m, (unsigned)cand) : 0;
	uint64_t kb2 = before >= 0 ? kicks_of(m, (unsigned)before) : 0;
	if (s->cf->era == ERA_317 && pending)
		pw_sk_stop_timer(&f->sk, &f->delack);
	int rc = pw_sk_reset_timer(&f->sk, &f->delack, expires);
	mdl_check(m, rc >= 0, "seed003: pw_sk_reset_timer: %d", rc);
	int after = pw_timer_cpu(&f->delack);
	if (before >= 0)
		mdl_locked(m, cpu, &s->wlock[before], m->cost->ns[MC_TIMER_ARM], s->c_timer,
			   s->c_spin);
	if (after >= 0 && after != before)
		mdl_locked(m, cpu, &s->wlock[after], m->cost->ns[MC_TIMER_ARM], s->c_timer,
			   s->c_spin);
	if (after < 0 || (unsigned)after == cpu)
		return;
	uint64_t k0 = after == cand ? kb : after == before ? kb2 : UINT64_MAX;
	uint64_t k = kicks_of(m, (unsigned)after);
	if (k0 != UINT64_MAX && k > k0) {
		mdl_work(m, cpu, m->cost->ns[MC_IPI_SEND], m->cat_ipi);
		mdl_work(m, (unsigned)after, m->cost->ns[MC_IPI_RECV], m->cat_ipi);
		if (mdl_in_window(m))
			s->kicks_seen += k - k0;
	}
}

/* tcp_send_ack() on @cpu: an ACK through XPS into netem. */
static void send_ack(struct s3 *s, struct flow *f, unsigned cpu)
{
	struct mdl *m = &s->m;
	if (s->free_head == UINT32_MAX) {
		mdl_check(m, 0, "seed003: packet pool empty");
		return;
	}
	struct pkt *p = &s->pool[s->free_head];
	s->free_head = p->next;
	s->made++;
	pw_pkt_init(&p->p, NULL, ACK_LEN);
	p->p.sk = &f->sk;
	p->p.hash = f->sk.sk_hash;
	unsigned q = xps_queue(cpu);
	p->q = q;
	mdl_work(m, cpu, m->cost->ns[MC_TCP_XMIT], s->c_tcp);
	mdl_locked(m, cpu, &s->qlock[q], m->cost->ns[MC_QDISC], s->c_qdisc, s->c_spin);
	uint64_t arms = pw_netdev_watchdog_arms(s->dev, q);
	mdl_act(m, (int)cpu);
	int rc = pw_dev_queue_xmit(s->dev, &p->p);
	mdl_check(m, rc >= 0, "seed003: pw_dev_queue_xmit: %d", rc);
	if (pw_netdev_watchdog_arms(s->dev, q) != arms) {
		mdl_work(m, cpu, m->cost->ns[MC_HR_OP], s->c_hr);
		if (mdl_in_window(m))
			s->wd_arms++;
	}
	s->acks_total++;
	if (mdl_in_window(m))
		s->acks++;
}

/* The reader of flow @fi runs on its CPU: copies what is queued. */
static void app_run(struct s3 *s, unsigned fi, unsigned from, int woken)
{
	struct mdl *m = &s->m;
	struct flow *f = &s->fl[fi];
	if (woken)
		mdl_wake(m, from, f->app_cpu);
	double cost = m->cost->ns[MC_SYSCALL] + m->cost->ns[MC_COPY_KB] * f->avail / 1024.0 +
		      (woken ? m->cost->ns[MC_WAKE] / 2 : 0);
	f->avail = 0;
	f->app_running = 1;
	f->app_waiting = 0;
	uint64_t end = mdl_work(m, f->app_cpu, cost, s->c_copy);
	mdl_task_run(m, f->app_cpu, end + 1);
	mdl_at(m, end, EV_APP_END, fi, 0);
	if (mdl_in_window(m))
		s->app_runs++;
}

static void rx_poll(struct s3 *s, const struct mdl_ev *ev)
{
	struct mdl *m = &s->m;
	struct mdl_vec *v = &s->rxv[ev->a];
	if (!mdl_vec_begin(m, v, ev))
		return;
	struct mdl_item it;
	while (mdl_vec_next(m, v, &it)) {
		struct flow *f = &s->fl[it.a];
		mdl_work(m, v->cpu, m->cost->ns[MC_DRV_RX] + m->cost->ns[MC_TCP_RCV], s->c_tcp);
		f->segs++;
		f->avail += MSS;
		if (mdl_in_window(m))
			s->segs++;
		mdl_act(m, (int)v->cpu);
		if (f->segs % 2 == 0)
			send_ack(s, f, v->cpu);
		else
			rearm_delack(s, f, v->cpu);
		if (f->app_waiting)
			app_run(s, it.a, v->cpu, 1);
	}
	mdl_vec_end(m, v);
}

static void tx_poll(struct s3 *s, const struct mdl_ev *ev)
{
	struct mdl *m = &s->m;
	struct mdl_vec *v = &s->txv[ev->a];
	if (!mdl_vec_begin(m, v, ev))
		return;
	struct mdl_item it;
	while (mdl_vec_next(m, v, &it)) {
		mdl_work(m, v->cpu, m->cost->ns[MC_TX_CLEAN], s->c_drv);
		pkt_put(s, &s->pool[it.a]);
	}
	mdl_vec_end(m, v);
}

/* The segments arriving at RX queue @r in [now, now + GEN_NS), in time
 * order, onto its vector. */
static void generate(struct s3 *s, unsigned r)
{
	struct mdl *m = &s->m;
	uint64_t end = m->now + GEN_NS;
	for (;;) {
		uint64_t best = UINT64_MAX;
		unsigned bf = 0;
		for (unsigned i = 0; i < s->nflows; i++) {
			struct flow *f = &s->fl[i];
			if (f->rxq != r)
				continue;
			uint64_t t = f->phase + f->next_k * f->interval;
			if (t < best) {
				best = t;
				bf = i;
			}
		}
		if (best >= end)
			break;
		mdl_vec_push(m, &s->rxv[r], best, bf, 0);
		s->fl[bf].next_k++;
	}
	mdl_at(m, end, EV_GEN, r, 0);
}

static void s3_dispatch(struct mdl *m, const struct mdl_ev *ev)
{
	struct s3 *s = S3(m);
	switch (ev->type) {
	case EV_RX:
		rx_poll(s, ev);
		break;
	case EV_TX:
		tx_poll(s, ev);
		break;
	case EV_GEN:
		generate(s, ev->a);
		break;
	case EV_APP_END: {
		struct flow *f = &s->fl[ev->a];
		f->app_running = 0;
		if (f->avail)
			app_run(s, ev->a, f->app_cpu, 0);
		else
			f->app_waiting = 1;
		break;
	}
	}
}

/* ------------------------------------------------------------ one row */

static void sk_destruct(struct pw_sock *sk)
{
	(void)sk;
}

/* The delayed-ACK timer fired: nothing to ACK (every second segment was
 * ACKed at once); drops the pending timer's reference.  Context: a timer
 * callback. */
static void delack_fn(struct pw_timer *t)
{
	struct flow *f = pw_container_of(t, struct flow, delack);
	struct s3 *s = f->sk.sk_user;
	s->delack_fired++;
	pw_sock_put(&f->sk);
}

static void s3_free(struct s3 *s)
{
	if (s->m.rt) {
		pw_netdev_destroy(s->dev);
		mdl_fini(&s->m);
	}
	for (unsigned q = 0; q < NQ; q++) {
		mdl_vec_fini(&s->txv[q]);
		mdl_vec_fini(&s->rxv[q]);
		mdl_lock_fini(&s->qlock[q]);
	}
	mdl_locks_free(s->wlock, s->ncpus);
	free(s->deq_by_cpu);
	free(s->deq_qc);
	free(s->fl);
	free(s->pool);
	free(s);
}

struct sizes {
	unsigned flows;
	uint64_t warm_ns, run_ns;
};

static int run_row(const struct mdl_opts *o, const struct sizes *z, const struct cfg *cf,
		   unsigned ncpus, unsigned hz, const struct mdl_costs *costs, struct mdl_seed *sd,
		   struct mdl_row *row)
{
	struct s3 *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cf = cf;
	s->ncpus = ncpus;
	s->nflows = z->flows;
	struct mdl *m = &s->m;
	int err = mdl_init(m, ncpus, hz, o->seed, costs, z->warm_ns, z->run_ns, s3_dispatch, s);
	if (err) {
		free(s);
		return err;
	}
	m->ksoftirqd_on = 1;
	s->c_tcp = mdl_cat(m, "tcp");
	s->c_qdisc = mdl_cat(m, "netem");
	s->c_drv = mdl_cat(m, "driver");
	s->c_timer = mdl_cat(m, "mod_timer");
	s->c_hr = mdl_cat(m, "hrtimer");
	s->c_spin = mdl_cat(m, "_raw_spin_lock");
	s->c_copy = mdl_cat(m, "copy_user");
	/* ACKs in flight: 406k/s x the longest delay (20 ms), with room */
	s->npool = 200000;
	s->fl = calloc(s->nflows, sizeof(*s->fl));
	s->pool = calloc(s->npool, sizeof(*s->pool));
	s->wlock = mdl_locks_new(ncpus, "timer base");
	s->deq_by_cpu = calloc(ncpus, sizeof(*s->deq_by_cpu));
	s->deq_qc = calloc((size_t)NQ * ncpus, sizeof(*s->deq_qc));
	if (!s->fl || !s->pool || !s->wlock || !s->deq_by_cpu || !s->deq_qc) {
		s3_free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < s->npool; i++)
		s->pool[i].next = i + 1 < s->npool ? i + 1 : UINT32_MAX;
	for (unsigned q = 0; q < NQ; q++) {
		mdl_vec_init(&s->txv[q], q, q % ncpus, MI_TX, EV_TX, 16000, 16);
		mdl_vec_init(&s->rxv[q], q, q % ncpus, MI_RX, EV_RX, 16000, 44);
		mdl_lock_init(&s->qlock[q], "qdisc root");
	}
	struct pw_runtime *rt = m->rt;
	mdl_check(m, pw_set_migration(rt, cf->policy) == 0, "pw_set_migration");
	mdl_check(m, pw_set_kick_rule(rt, cf->rule) == 0, "pw_set_kick_rule");
	mdl_check(m, pw_net_set_watchdog_pinned(rt, cf->wd_pinned) == 0, "watchdog pinned");
	/* the kernel's qdisc_watchdog(): raise NET_TX, the dequeue re-arms the
	 * watchdog after the callback (every era) */
	mdl_check(m, pw_net_set_watchdog_net_tx(rt, 1) == 0, "watchdog net_tx");
	/* socket timers: 3.17's sk_reset_timer(), not pinned (set explicitly:
	 * the layer's default is pinned) */
	mdl_check(m, pw_net_set_sk_timers_pinned(rt, 0) == 0, "sk timers pinned");
	err = pw_netdev_create(rt, "eth1", NQ, &s3_ops, s, &s->dev);
	if (err) {
		s3_free(s);
		return err;
	}
	/* the seed's script: "tc qd del dev eth1 root 2>/dev/null" first; tc
	 * runs on CPU 0 (its estimators' timers start there, armed locally) */
	mdl_act(m, 0);
	pw_tc(rt, "qd del dev eth1 root", 0, NULL, 0, NULL, 0);
	for (unsigned i = 0; i < lab_seed003_script_n; i++) {
		char msg[256] = "";
		int rc = pw_tc(rt, lab_seed003_script[i], 0, NULL, 0, msg, sizeof(msg));
		mdl_check(m, rc == 0, "seed003: tc %s: %s", lab_seed003_script[i], msg);
	}
	for (unsigned q = 0; q < NQ; q++) {
		uint64_t mask[PW_MAX_CPUS / 64] = {0};
		for (unsigned c = 0; c < ncpus; c++)
			if (xps_queue(c) == q)
				mask[c / 64] |= 1ull << (c % 64);
		pw_netdev_set_xps(s->dev, q, mask, ncpus);
	}
	double seg_ns = SEG_WIRE_BITS * 1e9 / LINE_BPS; /* the wire's segment time */
	for (unsigned i = 0; i < s->nflows; i++) {
		struct flow *f = &s->fl[i];
		pw_sock_init(&f->sk, rt, sk_destruct);
		f->sk.sk_hash = (uint32_t)mdl_rand(m);
		f->sk.sk_user = s;
		f->rxq = f->sk.sk_hash % NQ;
		f->app_cpu = i % ncpus;
		f->interval = (uint64_t)llround(seg_ns * s->nflows);
		f->phase = mdl_rand_below(m, f->interval) + 1000;
		f->app_waiting = 1;
		mdl_act(m, (int)f->rxq % (int)ncpus);
		pw_sk_timer_setup(&f->sk, &f->delack, delack_fn);
	}
	mdl_act(m, -1);
	for (unsigned r = 0; r < NQ; r++)
		mdl_at(m, 0, EV_GEN, r, 0);
	if (!m->nfailed)
		err = mdl_run(m);

	struct mdl_totals t;
	mdl_totals(m, s->kicks_seen, &t);
	double secs = t.secs;
	uint64_t remote_total = t.remote_total, rekick_total = t.rekick_total, busiest = 0;
	unsigned busiest_cpu = 0;
	for (unsigned c = 0; c < ncpus; c++)
		if (s->deq_by_cpu[c] > busiest) {
			busiest = s->deq_by_cpu[c];
			busiest_cpu = c;
		}
	/* the queues whose watchdog lives away from them: most of their
	 * dequeues by a CPU that does not own them */
	unsigned moved = 0;
	for (unsigned q = 0; q < NQ; q++) {
		uint64_t best = 0;
		unsigned bc = 0;
		for (unsigned c = 0; c < ncpus; c++)
			if (s->deq_qc[q * ncpus + c] > best) {
				best = s->deq_qc[q * ncpus + c];
				bc = c;
			}
		moved += best && xps_queue(bc) != q;
	}
	uint64_t qdisc_wait = 0, qdisc_acq = 0, qdisc_cont = 0;
	for (unsigned q = 0; q < NQ; q++) {
		qdisc_wait += s->qlock[q].wait_ns;
		qdisc_acq += s->qlock[q].acq;
		qdisc_cont += s->qlock[q].contended;
	}

	/* invariants */
	if (cf->policy == PW_MIGRATION_OFF || cf->policy == PW_MIGRATION_PULL)
		mdl_check(m, remote_total == 0, "seed003 %s: %llu remote arms where none may be",
			  cf->key, (unsigned long long)remote_total);
	if (cf->rule == PW_KICK_LINUX_3_17)
		mdl_check(m, rekick_total == remote_total,
			  "seed003 %s: 3.17 rule: %llu timer IPIs for %llu remote enqueues",
			  cf->key,
			  (unsigned long long)rekick_total, (unsigned long long)remote_total);
	if (cf->wd_pinned || cf->policy != PW_MIGRATION_PUSH)
		mdl_check(m, s->remote_deq == 0,
			  "seed003 %s: %llu dequeues by a CPU that does not own the queue", cf->key,
			  (unsigned long long)s->remote_deq);
	uint64_t in_nic = 0, in_qdisc = 0;
	for (unsigned q = 0; q < NQ; q++) {
		in_nic += mdl_vec_pending(&s->txv[q]);
		struct pw_qdisc_stats qs;
		if (pw_netdev_txq_stats(s->dev, q, &qs, NULL) == 0)
			in_qdisc += qs.qlen;
	}
	mdl_check(m, s->made == s->freed + in_nic + in_qdisc,
		  "seed003 %s: ACKs: %llu made, %llu freed, %llu in the NIC, %llu queued", cf->key,
		  (unsigned long long)s->made, (unsigned long long)s->freed,
		  (unsigned long long)in_nic, (unsigned long long)in_qdisc);
	mdl_check(m, s->drops == 0, "seed003 %s: %llu ACKs dropped", cf->key,
		  (unsigned long long)s->drops);
	mdl_check(m, s->deq > 0, "seed003 %s: netem released nothing", cf->key);

	mdl_row_common(row, &t, m);
	mdl_row_set(row, "spin_pct_of_all", 100.0 * t.spin_ns / (secs * 1e9 * ncpus), "%.2f");
	mdl_row_set(row, "deq_one_cpu_pct", s->deq ? 100.0 * busiest / s->deq : 0, "%.1f");
	mdl_row_set(row, "deq_cpu", (double)busiest_cpu, "%.0f");
	mdl_row_set(row, "watchdogs_away", (double)moved, "%.0f");
	mdl_row_set(row, "remote_deq_pct", s->deq ? 100.0 * s->remote_deq / s->deq : 0, "%.1f");
	mdl_row_set(row, "busiest_cpu_load_pct", 100.0 * t.busiest_load, "%.1f");
	mdl_row_set(row, "qdisc_contended_pct", qdisc_acq ? 100.0 * qdisc_cont / qdisc_acq : 0,
		    "%.2f");
	mdl_row_set(row, "qdisc_wait_us_per_s", qdisc_wait / 1e3 / secs, "%.0f");
	mdl_row_set(row, "segs_per_s", s->segs / secs, "%.0f");
	mdl_row_set(row, "acks_per_s", s->acks / secs, "%.0f");
	mdl_row_set(row, "deq_per_s", s->deq / secs, "%.0f");
	mdl_row_set(row, "deq_cpu0_per_s", ncpus > 0 ? s->deq_by_cpu[0] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu1_per_s", ncpus > 1 ? s->deq_by_cpu[1] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu2_per_s", ncpus > 2 ? s->deq_by_cpu[2] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu3_per_s", ncpus > 3 ? s->deq_by_cpu[3] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu4_per_s", ncpus > 4 ? s->deq_by_cpu[4] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu5_per_s", ncpus > 5 ? s->deq_by_cpu[5] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu6_per_s", ncpus > 6 ? s->deq_by_cpu[6] / secs : NAN, "%.0f");
	mdl_row_set(row, "deq_cpu7_per_s", ncpus > 7 ? s->deq_by_cpu[7] / secs : NAN, "%.0f");
	mdl_row_set(row, "wd_arms_per_s", s->wd_arms / secs, "%.0f");
	mdl_row_finish(sd, row, m, cf->key, cf->label);
	s3_free(s);
	return err == -EFAULT ? 0 : err; /* a broken invariant is in the checks */
}

int mdl_seed003(const struct mdl_opts *o, struct mdl_seed *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->id = "seed003";
	snprintf(sd->title, sizeof(sd->title),
		 "mq + 8 netem (the seed's tc script) on a TCP_STREAM receiver: migrated vs pinned "
		 "watchdogs");
	struct sizes z = {16, 40000000, 50000000};
	unsigned cpus_def[3] = {8}, ncpu = 1, hz = 1000;
	if (o->smoke)
		z = (struct sizes){16, 25000000, 5000000};
	if (o->full) {
		z.run_ns = 200000000;
		cpus_def[1] = 16;
		cpus_def[2] = 32;
		ncpu = 3;
	}
	if (o->cpus) {
		cpus_def[0] = o->cpus;
		ncpu = 1;
	}
	if (o->hz)
		hz = o->hz;
	snprintf(sd->scale, sizeof(sd->scale),
		 "scale: the seed's tc script verbatim (mq, 8 netem, delays 6-20 ms, est 1sec "
		 "4sec); 8 TX and 8 RX queues (the seed: 8 TX queues); %u CPUs%s (the seed: not "
		 "stated); %u TCP_STREAM flows at 10 Gbit/s in all, one ACK per 2 segments (406k "
		 "ACKs/s); mlx4 coalescing; HZ %u; %.0f ms simulated after %.0f ms warm-up, per "
		 "row",
		 cpus_def[0], ncpu > 1 ? ", 16, 32" : "", z.flows, hz, z.run_ns / 1e6,
		 z.warm_ns / 1e6);
	if (cpus_def[0] < NQ) {
		size_t l = strlen(sd->scale);
		snprintf(sd->scale + l, sizeof(sd->scale) - l,
			 "; XPS maps CPU c to queue c: queues %u-7 carry nothing", cpus_def[0]);
	}
	static const char *cols[] = {"spin_pct", "deq_one_cpu_pct", "remote_deq_pct",
				     "busiest_cpu_load_pct", "max_lag_us", "qdisc_contended_pct",
				     "in_per_s", "loc_per_s", "res_per_s", "sys_pct"};
	static const char *heads[] = {"spin%", "deq1cpu%", "rdeq%", "maxload%", "lag_us",
				      "qcont%", "in/s", "loc/s", "res/s", "sys%"};
	sd->ncols = sizeof(cols) / sizeof(cols[0]);
	memcpy(sd->col, cols, sizeof(cols));
	memcpy(sd->col_head, heads, sizeof(heads));
	int err = 0;
	for (unsigned ci = 0; ci < ncpu && !err; ci++)
		for (unsigned k = 0; k < NCFG && !err; k++) {
			if (sd->nrows == MDL_MAX_ROWS)
				break;
			err = run_row(o, &z, &cfgs[k], cpus_def[ci], hz, &o->costs, sd,
				      &sd->row[sd->nrows]);
			sd->nrows++;
		}
	if (o->full && !err) {
		for (unsigned i = 0; i < MDL_SWEEP_N && !err; i++) {
			struct mdl_costs c;
			mdl_cost_sweep(&o->costs, 0, i, &c);
			for (unsigned k = 1; k < 4 && !err && sd->nrows < MDL_MAX_ROWS; k += 2) {
				err = run_row(o, &z, &cfgs[k], cpus_def[0], hz, &c, sd,
					      &sd->row[sd->nrows]);
				sd->nrows++;
			}
		}
	}
	if (err)
		return err;

	unsigned c0 = cpus_def[0];
	const struct mdl_row *on = mdl_find(sd, "push-3.17", c0, hz);
	const struct mdl_row *fix = mdl_find(sd, "pinned", c0, hz);
	struct lab_claims *cl = &sd->claims;
	cl->seed = "seed003";
	struct lab_claim *a = lab_claim_add(cl, "deq_one_cpu", 1, NAN,
		 "migrated watchdogs gather on one CPU, which then does all the qdisc dequeues",
		 "the dequeue in an idle CPU's NET_TX re-arms the watchdog, and PUSH sends it to "
		 "the first busy CPU unless it would be that CPU's first event; it fires there, "
		 "and its re-arms go on from there; pinned, it fires on its queue's CPU");
	a->model_run = on && fix;
	double s_on = on ? mdl_row_get(on, "deq_one_cpu_pct") : NAN;
	double s_fix = fix ? mdl_row_get(fix, "deq_one_cpu_pct") : NAN;
	a->model_ratio = s_on / s_fix;
	double away = on ? mdl_row_get(on, "watchdogs_away") : NAN;
	snprintf(a->model_text, sizeof(a->model_text),
		 "push-3.17: %.0f of 8 watchdogs away from their queue; CPU %.0f did %.1f%% of "
		 "dequeues (%.1f%% not by the queue's CPU); pinned: %.1f%% at most (%u CPUs)",
		 away, on ? mdl_row_get(on, "deq_cpu") : NAN, s_on,
		 on ? mdl_row_get(on, "remote_deq_pct") : NAN, s_fix, c0);
	if (a->model_run) {
		if (s_on >= 90)
			lab_claim_model_word(a, LAB_W_REP, "one CPU did %.1f%% of the dequeues", s_on);
		else if (away > 0)
			lab_claim_model_word(a, LAB_W_DIR, "some watchdogs gather, not all (see the "
					     "notes)");
		else
			lab_claim_model_word(a, LAB_W_NOT, NULL);
	}
	struct lab_claim *b = lab_claim_add(cl, "spin_on_over_pinned", 1, 39.24 / 4.83,
		 "_raw_spin_lock: 39.24% of cycles migrated vs 4.83% pinned",
		 "the gathering CPU dequeues every queue under its root lock while each queue's "
		 "own CPU enqueues ACKs into it: two CPUs per lock, and a saturated one");
	double p_on = on ? mdl_row_get(on, "spin_pct") : NAN;
	double p_fix = fix ? mdl_row_get(fix, "spin_pct") : NAN;
	b->model_run = on && fix;
	b->model_ratio = p_fix > 0 ? p_on / p_fix : p_on > 0 ? INFINITY : 1;
	snprintf(b->model_text, sizeof(b->model_text),
		 "spin %.2f%% of busy cycles (push-3.17) vs %.2f%% (pinned)", p_on, p_fix);
	if (b->model_run) {
		/* the ratio in its band is not enough where the level is far
		 * below the seed's (a ratio of two near-zero shares) */
		char r[24];
		lab_fmt_ratio(r, sizeof(r), b->model_ratio, "x", "");
		if (p_on > p_fix && p_on >= 10 && b->model_ratio >= b->size_lo &&
		    b->model_ratio <= b->size_hi)
			lab_claim_model_word(b, LAB_W_REP, "%s, in the size band", r);
		else if (p_on > p_fix)
			lab_claim_model_word(b, LAB_W_DIR, "%s; the level (%.2f%%) far below the "
					     "seed's 39.24%%", r, p_on);
		else
			lab_claim_model_word(b, LAB_W_NOT, "%s", r);
	}
	const struct mdl_row *pull = mdl_find(sd, "pull", c0, hz);
	struct lab_claim *f = lab_claim_add(cl, "foreign_on_over_pinned", 1, NAN,
		 "pinning the qdisc timers on the CPU running the qdisc respects XPS: no dequeue "
		 "by a CPU that does not own the queue",
		 "a pinned watchdog fires on the CPU that armed it, the queue's own");
	f->model_run = on && fix;
	double f_on = on ? mdl_row_get(on, "remote_deq_pct") : NAN;
	double f_fix = fix ? mdl_row_get(fix, "remote_deq_pct") : NAN;
	f->model_ratio = f_fix > 0 ? f_on / f_fix : f_on > 0 ? INFINITY : 1;
	snprintf(f->model_text, sizeof(f->model_text),
		 "%.1f%% of dequeues by a foreign CPU (push-3.17) vs %.1f%% (pinned)", f_on, f_fix);
	struct lab_claim *w = lab_claim_add(cl, "wait_push_over_pull", 1, NAN,
		 "6.9's PULL, with the watchdogs not pinned, avoids the pile-up too: lock waits "
		 "above PULL's under PUSH (the post predates 6.9)",
		 "under PULL a timer is queued on the CPU that arms it: the watchdogs stay with "
		 "their queues as pinned ones do");
	w->model_run = on && pull;
	double w_pull = pull ? mdl_row_get(pull, "spin_pct") : NAN;
	w->model_ratio = w_pull > 0 ? p_on / w_pull : p_on > 0 ? INFINITY : 1;
	snprintf(w->model_text, sizeof(w->model_text),
		 "spin %.2f%% of busy cycles (push-3.17) vs %.2f%% (pull); foreign dequeues "
		 "%.1f%% vs %.1f%%", p_on, w_pull, f_on,
		 pull ? mdl_row_get(pull, "remote_deq_pct") : NAN);
	mdl_claims_finish(cl);
	if (on)
		mdl_note(sd,
			 "push-3.17 at %u CPUs: the busiest CPU worked %.1f%% of the window (work "
			 "done cannot exceed 100%%: what it could not do in time shows as lag, "
			 "its work running up to %.0f us behind the events that caused it; a real "
			 "CPU in that state falls behind, the seed's 'cannot dequeue fast enough', "
			 "while the model's library still dequeues at each expiry)",
			 c0, mdl_row_get(on, "busiest_cpu_load_pct"),
			 mdl_row_get(on, "max_lag_us"));
	mdl_note(sd, "how they gather: a watchdog's fire raises NET_TX on its CPU, as the "
		     "kernel's qdisc_watchdog() does (pw_net_set_watchdog_net_tx(rt, 1)); the "
		     "NET_TX pass dequeues and re-arms it after the callback has returned, and a "
		     "CPU in softirq over its idle task counts as idle, so PUSH sends the re-arm "
		     "to the first busy CPU, where the next fire runs the queue and re-arms it "
		     "again.  Run in the callback instead (the library's default), a watchdog "
		     "is re-armed while it runs, which never moves it: then only a fresh arm "
		     "(an empty netem's first packet) moves, and 2 of 8 gathered");
	mdl_note(sd, "spin%% is the share of modelled busy cycles spent waiting for a lock (the "
		     "qdisc root locks, the timer bases); the seed's profile counts every sample "
		     "of a loaded receiver, so compare the direction and the ratio, not the level");
	return 0;
}
