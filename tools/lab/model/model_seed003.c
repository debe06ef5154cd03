/* SPDX-License-Identifier: MIT */
/*
 * The model of seed 003: mq + 8 netem on the receiver of a TCP_STREAM
 * test, its ACKs delayed 6-20 ms, and where the netem watchdogs go (model.c:
 * the engine).  Eric Dumazet, 2014-09-20 ("net: sched: use pinned
 * timers"): migrated watchdog hrtimers gathered on one CPU, which did every
 * dequeue and could not keep up: 39.24% of cycles in _raw_spin_lock; with
 * the watchdogs pinned, 4.83%.
 *
 * The configuration (docs/lab.md, fixed before the first run, each input
 * with its source): N CPUs (default 32, seed000's; --full 8, 16, 24, 32,
 * 48), HZ 1000; 8 TX queues (the seed), completion vector q on CPU q;
 * min(N, 16) RX queues (mlx4_en's DEF_RX_RINGS), vector r on CPU r, RSS by
 * flow hash; XPS CPU c -> TX queue c mod 8, so with more CPUs than queues
 * several CPUs enqueue into one netem; mlx4 coalescing (rx 16us/44, tx
 * 16us/16).  The seed's tc script verbatim through pw_tc() on eth1 (its
 * netems' limits and delays are read from it); the packets go through the
 * model's own 3.17 transmit path (model_seed003_tx.c: busylock, root lock
 * dropped around the driver, the TX lock, throttled netem, NET_TX as
 * queued work, ksoftirqd), the watchdog hrtimers placed by the library.
 *
 * The traffic: F TCP_STREAM flows (16: the seed does not count them)
 * share 10 Gbit/s of 1448-byte segments (1538 bytes on the wire), each
 * flow a slot every F segment times from a random phase, closed loop: a
 * flow uses its slot only while it has less than its window (3 MB, 3.17's
 * tcp_rmem[2] / 2 by tcp_adv_win_scale 1) unacknowledged, and an ACK
 * acknowledges its sender when the driver sends it.  Per segment, on its
 * RX queue's CPU in the NAPI poll: the driver and tcp_v4_rcv(); then, in
 * the softirq, or in the reader's context when 3.17 leaves it there (the
 * reader holds the socket: the backlog, done at release_sock(); the
 * reader sleeps in recvmsg(): tcp_prequeue(), which wakes it, until 4.14;
 * reader_rcv()): every second segment of a flow an ACK (3.17's "more than
 * one full frame": ACK now) through XPS of that CPU into netem; every
 * other the delayed-ACK timer is (re)armed (sk_reset_timer(), now +
 * TCP_ATO_MIN = HZ/25) by the row's era as in seed000, and its fire sends
 * an ACK for what is left.  The receiver (netserver, one per flow, on CPU
 * f mod N) is woken when data arrives, runs as a task (its CPU busy),
 * processes what was left to it, copies what is there, and again while
 * more came meanwhile.
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

#include "model_seed003.h"

#define MSS 1448u
#define SEG_WIRE_BITS (1538.0 * 8)
#define LINE_BPS 10e9
#define GEN_NS 100000ull /* the arrival generator's step */
#define WINDOW_BYTES 3145728ull /* tcp_rmem[2] 6 MB >> tcp_adv_win_scale 1 */
#define MAX_RXQ 16u     /* mlx4_en's DEF_RX_RINGS */

static const struct s3_cfg cfgs[] = {
	{"off", "timer_migration=0 (3.17)", PW_MIGRATION_OFF, PW_KICK_LINUX_3_17, S3_ERA_317, 0},
	{"push-3.17", "timer_migration=1, watchdogs not pinned (the seed's before)",
	 PW_MIGRATION_PUSH, PW_KICK_LINUX_3_17, S3_ERA_317, 0},
	{"push-4.8", "timer_migration=1, 4.8's kick rule and mod_timer, watchdogs not pinned",
	 PW_MIGRATION_PUSH, PW_KICK_LINUX_4_8, S3_ERA_48, 0},
	{"pinned", "the seed's fix: watchdogs ABS_PINNED (3.17)", PW_MIGRATION_PUSH,
	 PW_KICK_LINUX_3_17, S3_ERA_317, 1},
	{"pull", "6.9: the PULL hierarchy, watchdogs not pinned", PW_MIGRATION_PULL,
	 PW_KICK_LINUX_4_8, S3_ERA_69, 0},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

/* the seed's tc script: lab_seed003_script (seed003_script.c, lab.h) */

/* ------------------------------------------------------------ the receiver */

static uint64_t kicks_of(struct mdl *m, unsigned c)
{
	struct pw_kick_stats k;
	pw_kick_stats_read(m->rt, c, &k);
	return k.remote_enqueue + k.idle_earlier + k.hrtimer + k.work + k.tmigr;
}

/* The delayed-ACK timer's re-arm, by the row's era (as seed000's RTO).
 * Context: the main thread entered as @cpu. */
static void rearm_delack(struct s3 *s, struct s3_flow *f, unsigned cpu)
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
	if (s->cf->era == S3_ERA_317 && pending)
		pw_sk_stop_timer(&f->sk, &f->delack);
	int rc = pw_sk_reset_timer(&f->sk, &f->delack, expires);
	mdl_check(m, rc >= 0, "seed003: pw_sk_reset_timer: %d", rc);
	int after = pw_timer_cpu(&f->delack);
	if (before >= 0)
		mdl_locked(m, cpu, &s->wlock[before], m->cost->ns[MC_TIMER_ARM], s->c_timer,
			   s->c_spin_irq);
	if (after >= 0 && after != before)
		mdl_locked(m, cpu, &s->wlock[after], m->cost->ns[MC_TIMER_ARM], s->c_timer,
			   s->c_spin_irq);
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

/* The segments left to the reader's context (the prequeue's or the
 * backlog's: 3.17's tcp_prequeue_process(), release_sock()): received,
 * ACKed every second one and the delayed-ACK timer re-armed otherwise, all
 * from the reader's CPU, as the softirq does them in rx_poll(). */
static void reader_rcv(struct s3 *s, unsigned fi)
{
	struct mdl *m = &s->m;
	struct s3_flow *f = &s->fl[fi];
	if (!f->pq)
		return;
	if (mdl_in_window(m) && f->pq > s->pq_max)
		s->pq_max = f->pq;
	mdl_act(m, (int)f->app_cpu);
	for (; f->pq; f->pq--) {
		f->segs++;
		f->avail += MSS;
		if (f->segs % 2 == 0)
			s3_send_ack(s, fi, f->segs, f->app_cpu);
		else
			rearm_delack(s, f, f->app_cpu);
	}
}

/* The reader of flow @fi runs on its CPU: processes what was left to it,
 * then copies what is queued. */
static void app_run(struct s3 *s, unsigned fi, unsigned from, int woken)
{
	struct mdl *m = &s->m;
	struct s3_flow *f = &s->fl[fi];
	if (woken)
		mdl_wake(m, from, f->app_cpu);
	reader_rcv(s, fi);
	double cost = m->cost->ns[MC_SYSCALL] + m->cost->ns[MC_COPY_KB] * f->avail / 1024.0 +
		      (woken ? m->cost->ns[MC_WAKE] / 2 : 0);
	f->avail = 0;
	f->app_running = 1;
	f->app_waiting = 0;
	uint64_t end = mdl_work(m, f->app_cpu, cost, s->c_copy);
	mdl_task_run(m, f->app_cpu, end + 1);
	mdl_at(m, end, S3_EV_APP_END, fi, 0);
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
		struct s3_flow *f = &s->fl[it.a];
		mdl_work(m, v->cpu, m->cost->ns[MC_DRV_RX] + m->cost->ns[MC_TCP_RCV], s->c_tcp);
		s->segs_all++;
		if (mdl_in_window(m))
			s->segs++;
		/* the reader holds the socket (the backlog) or sleeps in
		 * recvmsg() (the prequeue): its context does the rest */
		if (f->app_running || (f->app_waiting && s->prequeue)) {
			f->pq++;
			if (f->app_waiting) {
				app_run(s, it.a, v->cpu, 1);
				mdl_act(m, (int)v->cpu);
			}
			continue;
		}
		f->segs++;
		f->avail += MSS;
		mdl_act(m, (int)v->cpu);
		if (f->segs % 2 == 0)
			s3_send_ack(s, it.a, f->segs, v->cpu);
		else
			rearm_delack(s, f, v->cpu);
		if (f->app_waiting)
			app_run(s, it.a, v->cpu, 1);
	}
	mdl_vec_end(m, v);
}

/* The segments arriving at RX queue @r in [now, now + GEN_NS), in time
 * order, onto its vector: each flow's slot used while its window allows. */
static void generate(struct s3 *s, unsigned r)
{
	struct mdl *m = &s->m;
	uint64_t end = m->now + GEN_NS;
	for (;;) {
		uint64_t best = UINT64_MAX;
		unsigned bf = 0;
		for (unsigned i = 0; i < s->nflows; i++) {
			struct s3_flow *f = &s->fl[i];
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
		struct s3_flow *f = &s->fl[bf];
		f->next_k++;
		int room = f->sent - f->acked < s->window;
		if (mdl_in_window(m)) {
			s->slots++;
			s->stalls += !room;
		}
		if (!room)
			continue;
		f->sent++;
		mdl_vec_push(m, &s->rxv[r], best, bf, 0);
	}
	mdl_at(m, end, S3_EV_GEN, r, 0);
}

static void s3_dispatch(struct mdl *m, const struct mdl_ev *ev)
{
	struct s3 *s = s3_of(m);
	switch (ev->type) {
	case S3_EV_RX:
		rx_poll(s, ev);
		break;
	case S3_EV_TX:
		s3_tx_poll(s, ev);
		break;
	case S3_EV_GEN:
		generate(s, ev->a);
		break;
	case S3_EV_NET_TX:
		s3_net_tx_pass(s, ev->a);
		break;
	case S3_EV_DELACK: {
		/* the delayed ACK: what the last ACK left unacknowledged */
		struct s3_flow *f = &s->fl[ev->a];
		mdl_act(m, (int)ev->b);
		if (f->segs > f->acked_rcv)
			s3_send_ack(s, ev->a, f->segs, (unsigned)ev->b);
		break;
	}
	case S3_EV_APP_END: {
		struct s3_flow *f = &s->fl[ev->a];
		f->app_running = 0;
		if (f->avail || f->pq)
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

/* The delayed-ACK timer fired: an ACK for what is left, sent from this CPU
 * at the loop's next step; drops the pending timer's reference.  Context:
 * a timer callback. */
static void delack_fn(struct pw_timer *t)
{
	struct s3_flow *f = pw_container_of(t, struct s3_flow, delack);
	struct s3 *s = f->sk.sk_user;
	int c = pw_this_cpu();
	s->delack_fired++;
	mdl_at(&s->m, pw_now_ns(s->m.rt), S3_EV_DELACK, (uint32_t)(f - s->fl),
	       (uint64_t)(c < 0 ? 0 : c));
	pw_sock_put(&f->sk);
}

static void s3_xmit_none(struct pw_netdev *dev, struct pw_pkt *pp, enum pw_drop_reason why,
			 void *ctx)
{
	(void)dev;
	(void)pp;
	(void)why;
	(void)ctx;
}

static int s3_xmit_dev(struct pw_netdev *dev, unsigned txq, struct pw_pkt *pp, void *ctx)
{
	(void)dev;
	(void)txq;
	(void)pp;
	(void)ctx;
	return PW_NETDEV_TX_OK;
}

/* eth1 carries the seed's script (its configuration); no packet goes
 * through it. */
static const struct pw_netdev_ops s3_ops = {.xmit = s3_xmit_dev, .drop = s3_xmit_none};

static void s3_free(struct s3 *s)
{
	if (s->m.rt) {
		for (unsigned q = 0; q < S3_NQ; q++)
			pw_hrtimer_cancel(&s->q[q].wd);
		pw_netdev_destroy(s->dev);
		mdl_fini(&s->m);
	}
	for (unsigned q = 0; q < S3_NQ; q++)
		s3_txq_fini(&s->q[q]);
	for (unsigned r = 0; s->rxv && r < s->nrxq; r++)
		mdl_vec_fini(&s->rxv[r]);
	free(s->rxv);
	mdl_locks_free(s->wlock, s->ncpus);
	mdl_locks_free(s->hlock, s->ncpus);
	free(s->nc);
	free(s->deq_by_cpu);
	free(s->deq_qc);
	free(s->enq_qc);
	free(s->fl);
	free(s->pool);
	free(s);
}

struct sizes {
	unsigned flows;
	uint64_t warm_ns, run_ns;
	int low_latency; /* tcp_low_latency 1: no prequeue (the backlog stays) */
	enum s3_lines_mode lines; /* the skb lines: 3.17's, or one a skb (before) */
	double line_scale;        /* the skb lines' line and mem costs, scaled */
	uint64_t cache_bytes;     /* the cache the queued ACKs must fit in */
	int no_ticket;            /* the 3.17 rows' hand-offs constant (the model before) */
};

/* netem's limit and delay in script line @i ("... limit 70000 delay 6ms"). */
static void script_netem(unsigned i, uint32_t *limit, uint64_t *delay_ns)
{
	const char *l = strstr(lab_seed003_script[i], "limit ");
	const char *d = strstr(lab_seed003_script[i], "delay ");
	*limit = l ? (uint32_t)strtoul(l + 6, NULL, 10) : 1000;
	*delay_ns = d ? (uint64_t)strtoull(d + 6, NULL, 10) * 1000000ull : 0;
}

/* The window's sums of the locks by how perf names them. */
struct s3_locks {
	uint64_t raw_ns, irqsave_ns, busy_wait, root_wait, xmit_wait, root_acq, root_cont;
	uint64_t root_hold, handoff_ns;
};

static void lock_sums(struct s3 *s, struct s3_locks *k)
{
	memset(k, 0, sizeof(*k));
	for (unsigned q = 0; q < S3_NQ; q++) {
		struct s3_txq *t = &s->q[q];
		k->raw_ns += t->root.wait_ns + t->root.handoff_ns + t->busy.wait_ns +
			     t->busy.handoff_ns + t->xmit.wait_ns + t->xmit.handoff_ns;
		k->busy_wait += t->busy.wait_ns;
		k->root_wait += t->root.wait_ns;
		k->xmit_wait += t->xmit.wait_ns;
		k->root_acq += t->root.acq;
		k->root_cont += t->root.contended;
		k->root_hold += t->root.hold_ns;
		k->handoff_ns += t->root.handoff_ns + t->busy.handoff_ns + t->xmit.handoff_ns;
	}
	for (unsigned c = 0; c < s->ncpus; c++)
		k->irqsave_ns += s->wlock[c].wait_ns + s->hlock[c].wait_ns;
}

static int run_row(const struct mdl_opts *o, const struct sizes *z, const struct s3_cfg *cf,
		   unsigned ncpus, unsigned hz, const struct mdl_costs *costs, struct mdl_seed *sd,
		   struct mdl_row *row)
{
	struct s3 *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cf = cf;
	s->ncpus = ncpus;
	s->nflows = z->flows;
	s->nrxq = ncpus < MAX_RXQ ? ncpus : MAX_RXQ;
	s->window = WINDOW_BYTES / MSS;
	s->prequeue = cf->era != S3_ERA_69 && !z->low_latency;
	s->lines = (struct s3_lines){z->lines, costs->ns[MC_LINE] * z->line_scale,
				     costs->ns[MC_MEM] * z->line_scale, z->cache_bytes,
				     S3_LINES_PER_ACK};
	struct mdl *m = &s->m;
	int err = mdl_init(m, ncpus, hz, o->seed, costs, z->warm_ns, z->run_ns, s3_dispatch, s);
	if (err) {
		free(s);
		return err;
	}
	m->ksoftirqd_on = 0; /* ksoftirqd by __do_softirq()'s budget (model_seed003_tx.c) */
	s->c_tcp = mdl_cat(m, "tcp");
	s->c_qdisc = mdl_cat(m, "netem");
	s->c_drv = mdl_cat(m, "driver");
	s->c_timer = mdl_cat(m, "mod_timer");
	s->c_hr = mdl_cat(m, "hrtimer");
	s->c_spin = mdl_cat(m, "_raw_spin_lock");
	s->c_spin_irq = mdl_cat(m, "_raw_spin_lock_irqsave");
	s->c_copy = mdl_cat(m, "copy_user");
	/* ACKs in flight: at most half of every flow's window, with room */
	s->npool = (uint32_t)(s->nflows * s->window) + 4096;
	s->fl = calloc(s->nflows, sizeof(*s->fl));
	s->pool = calloc(s->npool, sizeof(*s->pool));
	s->wlock = mdl_locks_new(ncpus, "timer base");
	s->hlock = mdl_locks_new(ncpus, "hrtimer base");
	s->nc = calloc(ncpus, sizeof(*s->nc));
	s->rxv = calloc(s->nrxq, sizeof(*s->rxv));
	s->deq_by_cpu = calloc(ncpus, sizeof(*s->deq_by_cpu));
	s->deq_qc = calloc((size_t)S3_NQ * ncpus, sizeof(*s->deq_qc));
	s->enq_qc = calloc((size_t)S3_NQ * ncpus, sizeof(*s->enq_qc));
	if (!s->fl || !s->pool || !s->wlock || !s->hlock || !s->nc || !s->rxv || !s->deq_by_cpu ||
	    !s->deq_qc || !s->enq_qc) {
		s3_free(s);
		return -ENOMEM;
	}
	/* 3.17's spinlocks are ticket locks (the queued spinlock came in 4.2) */
	int ticket = cf->era == S3_ERA_317 && !z->no_ticket;
	for (unsigned c = 0; c < ncpus; c++)
		s->wlock[c].ticket = s->hlock[c].ticket = ticket;
	s->ticket = ticket;
	for (uint32_t i = 0; i < s->npool; i++)
		s->pool[i].next = i + 1 < s->npool ? i + 1 : S3_NONE;
	for (unsigned c = 0; c < ncpus; c++)
		s->nc[c].head = s->nc[c].tail = S3_NONE;
	for (unsigned r = 0; r < s->nrxq; r++)
		mdl_vec_init(&s->rxv[r], r, r, MI_RX, S3_EV_RX, 16000, 44);
	struct pw_runtime *rt = m->rt;
	mdl_check(m, pw_set_migration(rt, cf->policy) == 0, "pw_set_migration");
	mdl_check(m, pw_set_kick_rule(rt, cf->rule) == 0, "pw_set_kick_rule");
	/* socket timers: 3.17's sk_reset_timer(), not pinned (set explicitly:
	 * the layer's default is pinned) */
	mdl_check(m, pw_net_set_sk_timers_pinned(rt, 0) == 0, "sk timers pinned");
	err = pw_netdev_create(rt, "eth1", S3_NQ, &s3_ops, s, &s->dev);
	if (err) {
		s3_free(s);
		return err;
	}
	/* the seed's script: "tc qd del dev eth1 root 2>/dev/null" first; tc
	 * runs on CPU 0 */
	mdl_act(m, 0);
	pw_tc(rt, "qd del dev eth1 root", 0, NULL, 0, NULL, 0);
	unsigned nq = 0;
	for (unsigned i = 0; i < lab_seed003_script_n; i++) {
		mdl_tc(m, "seed003", lab_seed003_script[i]);
		if (strstr(lab_seed003_script[i], "netem") && nq < S3_NQ) {
			uint32_t limit;
			uint64_t delay;
			script_netem(i, &limit, &delay);
			s3_txq_init(s, &s->q[nq], nq, limit, delay);
			nq++;
		}
	}
	mdl_check(m, nq == S3_NQ, "seed003: %u netems in the script, not %u", nq, S3_NQ);
	double seg_ns = SEG_WIRE_BITS * 1e9 / LINE_BPS; /* the wire's segment time */
	for (unsigned i = 0; i < s->nflows; i++) {
		struct s3_flow *f = &s->fl[i];
		pw_sock_init(&f->sk, rt, sk_destruct);
		f->sk.sk_hash = (uint32_t)mdl_rand(m);
		f->sk.sk_user = s;
		f->rxq = f->sk.sk_hash % s->nrxq;
		f->app_cpu = i % ncpus;
		f->interval = (uint64_t)llround(seg_ns * s->nflows);
		f->phase = mdl_rand_below(m, f->interval) + 1000;
		f->app_waiting = 1;
		mdl_act(m, (int)f->rxq);
		pw_sk_timer_setup(&f->sk, &f->delack, delack_fn);
	}
	mdl_act(m, -1);
	for (unsigned r = 0; r < s->nrxq; r++)
		mdl_at(m, 0, S3_EV_GEN, r, 0);
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
	 * dequeues by a CPU that does not send on them */
	unsigned moved = 0;
	for (unsigned q = 0; q < S3_NQ; q++) {
		uint64_t best = 0;
		unsigned bc = 0;
		for (unsigned c = 0; c < ncpus; c++)
			if (s->deq_qc[q * ncpus + c] > best) {
				best = s->deq_qc[q * ncpus + c];
				bc = c;
			}
		moved += best && s3_xps(bc) != q;
	}
	/* the CPUs that put ACKs into each netem (1% of its ACKs or more),
	 * on average over the queues */
	unsigned enqueuers = 0;
	for (unsigned q = 0; q < S3_NQ; q++) {
		uint64_t all = 0;
		for (unsigned c = 0; c < ncpus; c++)
			all += s->enq_qc[q * ncpus + c];
		for (unsigned c = 0; c < ncpus; c++)
			enqueuers += all && s->enq_qc[q * ncpus + c] * 100 >= all;
	}
	struct s3_locks k;
	lock_sums(s, &k);
	uint64_t in_nic = 0, in_qdisc = 0, qdrops = 0, qlen_max = 0, qlen_sum = 0, enq = 0;
	uint64_t fires = 0, arms = 0, passes = 0, restarts = 0, kwakes = 0, kns = 0, tfail = 0;
	uint64_t early = 0;
	for (unsigned q = 0; q < S3_NQ; q++) {
		struct s3_txq *x = &s->q[q];
		in_nic += mdl_vec_pending(&x->txv);
		in_qdisc += x->qlen;
		qdrops += x->drops;
		qlen_sum += x->qlen_sum;
		enq += x->enq;
		fires += x->fires;
		arms += x->arms;
		if (x->qlen_max > qlen_max)
			qlen_max = x->qlen_max;
		mdl_check(m, x->enq_all == x->deq_all + x->qlen + x->drops_all,
			  "seed003 %s: queue %u: %llu enqueued, %llu dequeued, %u queued, %llu "
			  "dropped", cf->key, q, (unsigned long long)x->enq_all,
			  (unsigned long long)x->deq_all, x->qlen, (unsigned long long)x->drops_all);
	}
	for (unsigned c = 0; c < ncpus; c++) {
		struct s3_cpu *n = &s->nc[c];
		passes += n->npasses;
		restarts += n->restarts;
		kwakes += n->ksoftirqd_wakes;
		kns += n->ksoftirqd_ns;
		if (m->cpu[c].ksoftirqd && m->t_end > m->t_measure)
			kns += m->t_end - (n->ksoftirqd_since > m->t_measure ? n->ksoftirqd_since
									     : m->t_measure);
		tfail += n->trylock_fail;
		early += n->early_wakes;
	}

	/* invariants */
	if (cf->policy == PW_MIGRATION_OFF || cf->policy == PW_MIGRATION_PULL)
		mdl_check(m, remote_total == 0, "seed003 %s: %llu remote arms where none may be",
			  cf->key, (unsigned long long)remote_total);
	if (cf->rule == PW_KICK_LINUX_3_17)
		mdl_check(m, rekick_total == remote_total,
			  "seed003 %s: 3.17 rule: %llu timer IPIs for %llu remote enqueues",
			  cf->key, (unsigned long long)rekick_total, (unsigned long long)remote_total);
	if (cf->wd_pinned || cf->policy != PW_MIGRATION_PUSH)
		mdl_check(m, s->remote_deq == 0,
			  "seed003 %s: %llu dequeues by a CPU that does not own the queue", cf->key,
			  (unsigned long long)s->remote_deq);
	mdl_check(m, s->made == s->freed + in_nic + in_qdisc,
		  "seed003 %s: ACKs: %llu made, %llu freed (%llu of them dropped), %llu in the NIC, "
		  "%llu queued", cf->key, (unsigned long long)s->made, (unsigned long long)s->freed,
		  (unsigned long long)s->drops, (unsigned long long)in_nic,
		  (unsigned long long)in_qdisc);
	mdl_check(m, early == 0, "seed003 %s: ksoftirqd woken %llu times inside the budget",
		  cf->key, (unsigned long long)early);
	mdl_check(m, s->deq > 0, "seed003 %s: netem released nothing", cf->key);
	uint64_t rcvd = 0, left = 0;
	for (unsigned i = 0; i < s->nflows; i++) {
		rcvd += s->fl[i].segs;
		left += s->fl[i].pq;
	}
	mdl_check(m, rcvd + left == s->segs_all,
		  "seed003 %s: segments: %llu taken in, %llu received, %llu left to readers",
		  cf->key, (unsigned long long)s->segs_all, (unsigned long long)rcvd,
		  (unsigned long long)left);

	mdl_row_common(row, &t, m);
	/* _raw_spin_lock as the seed's perf counts it: the spin_lock() waits
	 * and hand-offs (busylock, root, TX lock), of all busy cycles */
	mdl_row_set(row, "spin_pct", t.work_ns ? 100.0 * k.raw_ns / t.work_ns : 0, "%.2f");
	mdl_row_set(row, "spin_irqsave_pct", t.work_ns ? 100.0 * k.irqsave_ns / t.work_ns : 0,
		    "%.2f");
	mdl_row_set(row, "spin_pct_of_all", 100.0 * k.raw_ns / (secs * 1e9 * ncpus), "%.2f");
	mdl_row_set(row, "busylock_wait_us_per_s", k.busy_wait / 1e3 / secs, "%.0f");
	mdl_row_set(row, "root_wait_us_per_s", k.root_wait / 1e3 / secs, "%.0f");
	mdl_row_set(row, "xmit_wait_us_per_s", k.xmit_wait / 1e3 / secs, "%.0f");
	mdl_row_set(row, "ticket_locks", s->ticket, "%.0f");
	mdl_row_set(row, "handoff_us_per_s", k.handoff_ns / 1e3 / secs, "%.0f");
	mdl_row_set(row, "root_held_pct", 100.0 * k.root_hold / (secs * 1e9 * S3_NQ), "%.2f");
	mdl_row_set(row, "qdisc_contended_pct", k.root_acq ? 100.0 * k.root_cont / k.root_acq : 0,
		    "%.2f");
	mdl_row_set(row, "enq_cpus_per_q", (double)enqueuers / S3_NQ, "%.2f");
	mdl_row_set(row, "reader_q_max", (double)s->pq_max, "%.0f");
	/* the skb lines (model_seed003_lines.c): charged to a dequeue under
	 * the root lock, the dequeues that found them out of cache, the most
	 * queued ACKs' footprint */
	mdl_row_set(row, "skb_line_ns_per_deq", s->deq ? s->deq_line_ns / s->deq : 0, "%.1f");
	mdl_row_set(row, "skb_cold_pct", s->deq ? 100.0 * s->cold_deq / s->deq : 0, "%.1f");
	mdl_row_set(row, "skb_footprint_mb_max",
		    (double)s->queued_max * S3_LINES_PER_ACK * 64 / (1 << 20), "%.1f");
	mdl_row_set(row, "deq_one_cpu_pct", s->deq ? 100.0 * busiest / s->deq : 0, "%.1f");
	mdl_row_set(row, "deq_cpu", (double)busiest_cpu, "%.0f");
	mdl_row_set(row, "watchdogs_away", (double)moved, "%.0f");
	mdl_row_set(row, "remote_deq_pct", s->deq ? 100.0 * s->remote_deq / s->deq : 0, "%.1f");
	mdl_row_set(row, "busiest_cpu_load_pct", 100.0 * t.busiest_load, "%.1f");
	mdl_row_set(row, "backlog_avg", enq ? (double)qlen_sum / enq : 0, "%.0f");
	mdl_row_set(row, "backlog_max", (double)qlen_max, "%.0f");
	mdl_row_set(row, "drops_per_s", qdrops / secs, "%.0f");
	mdl_row_set(row, "ksoftirqd_cpus", kns / 1e9 / secs, "%.2f");
	mdl_row_set(row, "ksoftirqd_wakes_per_s", kwakes / secs, "%.0f");
	mdl_row_set(row, "net_tx_passes_per_s", passes / secs, "%.0f");
	mdl_row_set(row, "net_tx_restarts_per_s", restarts / secs, "%.0f");
	mdl_row_set(row, "trylock_fail_per_s", tfail / secs, "%.0f");
	mdl_row_set(row, "window_stall_pct", s->slots ? 100.0 * s->stalls / s->slots : 0, "%.1f");
	mdl_row_set(row, "segs_per_s", s->segs / secs, "%.0f");
	mdl_row_set(row, "acks_per_s", s->acks / secs, "%.0f");
	mdl_row_set(row, "deq_per_s", s->deq / secs, "%.0f");
	static const char *const dk[8] = {"deq_cpu0_per_s", "deq_cpu1_per_s", "deq_cpu2_per_s",
					  "deq_cpu3_per_s", "deq_cpu4_per_s", "deq_cpu5_per_s",
					  "deq_cpu6_per_s", "deq_cpu7_per_s"};
	for (unsigned c = 0; c < 8; c++)
		mdl_row_set(row, dk[c], ncpus > c ? s->deq_by_cpu[c] / secs : NAN, "%.0f");
	mdl_row_set(row, "wd_fires_per_s", fires / secs, "%.0f");
	mdl_row_set(row, "wd_arms_per_s", arms / secs, "%.0f");
	mdl_row_set(row, "acks_made", (double)s->made, "%.0f");
	mdl_row_set(row, "acks_freed", (double)s->freed, "%.0f");
	mdl_row_set(row, "acks_dropped", (double)s->drops, "%.0f");
	mdl_row_set(row, "acks_queued", (double)in_qdisc, "%.0f");
	mdl_row_set(row, "acks_in_nic", (double)in_nic, "%.0f");
	mdl_row_set(row, "ksoftirqd_early", (double)early, "%.0f");
	mdl_row_finish(sd, row, m, cf->key, cf->label);
	s3_free(s);
	return err == -EFAULT ? 0 : err; /* a broken invariant is in the checks */
}

static void claims(struct mdl_seed *sd, unsigned c0, unsigned hz)
{
	const struct mdl_row *on = mdl_find(sd, "push-3.17", c0, hz);
	const struct mdl_row *fix = mdl_find(sd, "pinned", c0, hz);
	struct lab_claims *cl = &sd->claims;
	cl->seed = "seed003";
	struct lab_claim *a = lab_claim_add(cl, "deq_one_cpu", 1, NAN,
		 "migrated watchdogs gather on one CPU, which then does all the qdisc dequeues",
		 "the dequeue in an idle CPU's NET_TX re-arms the watchdog, and PUSH sends it to "
		 "the first busy CPU unless it would be that CPU's first event; it fires there, "
		 "and its re-arms go on from there; pinned, it fires on a CPU of its queue");
	a->model_run = on && fix;
	double s_on = on ? mdl_row_get(on, "deq_one_cpu_pct") : NAN;
	double s_fix = fix ? mdl_row_get(fix, "deq_one_cpu_pct") : NAN;
	a->model_ratio = s_on / s_fix;
	double away = on ? mdl_row_get(on, "watchdogs_away") : NAN;
	snprintf(a->model_text, sizeof(a->model_text),
		 "push-3.17: %.0f of 8 watchdogs away from their queue; CPU %.0f did %.1f%% of "
		 "dequeues (%.1f%% not by a CPU of the queue); pinned: %.1f%% at most (%u CPUs)",
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
		 "own CPUs enqueue ACKs into it (busylock, root lock, TX lock: spin_lock())");
	double p_on = on ? mdl_row_get(on, "spin_pct") : NAN;
	double p_fix = fix ? mdl_row_get(fix, "spin_pct") : NAN;
	b->model_run = on && fix;
	b->model_ratio = p_fix > 0 ? p_on / p_fix : p_on > 0 ? INFINITY : 1;
	snprintf(b->model_text, sizeof(b->model_text),
		 "_raw_spin_lock %.2f%% of busy cycles (push-3.17) vs %.2f%% (pinned); target "
		 ">= 15%% and <= 6%%", p_on, p_fix);
	if (b->model_run) {
		/* the level targets (issue 36, fixed before the run) and the
		 * ratio's band together: a ratio of two small shares says nothing */
		char r[24];
		lab_fmt_ratio(r, sizeof(r), b->model_ratio, "x", "");
		if (p_on >= 15 && p_fix <= 6 && b->model_ratio >= b->size_lo &&
		    b->model_ratio <= b->size_hi)
			lab_claim_model_word(b, LAB_W_REP, "%s, in the size band, levels met", r);
		else if (p_on > p_fix)
			lab_claim_model_word(b, LAB_W_DIR, "%s; the levels %.2f%% / %.2f%% against "
					     "the seed's 39.24%% / 4.83%%", r, p_on, p_fix);
		else
			lab_claim_model_word(b, LAB_W_NOT, "%s", r);
	}
	const struct mdl_row *pull = mdl_find(sd, "pull", c0, hz);
	struct lab_claim *f = lab_claim_add(cl, "foreign_on_over_pinned", 1, NAN,
		 "pinning the qdisc timers on the CPU running the qdisc respects XPS: no dequeue "
		 "by a CPU that does not own the queue",
		 "a pinned watchdog fires on the CPU that armed it, one of its queue's");
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
		 "_raw_spin_lock %.2f%% of busy cycles (push-3.17) vs %.2f%% (pull); foreign "
		 "dequeues %.1f%% vs %.1f%%", p_on, w_pull, f_on,
		 pull ? mdl_row_get(pull, "remote_deq_pct") : NAN);
	mdl_claims_finish(cl);
	if (on)
		mdl_note(sd,
			 "push-3.17 at %u CPUs: the busiest CPU worked %.1f%% of the window, its "
			 "work up to %.0f us behind the events that caused it; netem's backlog %.0f "
			 "ACKs a queue on average at an enqueue (%.0f at most), ksoftirqd on %.2f "
			 "CPUs on average, %.1f%% of the senders' slots stalled by their window",
			 c0, mdl_row_get(on, "busiest_cpu_load_pct"), mdl_row_get(on, "max_lag_us"),
			 mdl_row_get(on, "backlog_avg"), mdl_row_get(on, "backlog_max"),
			 mdl_row_get(on, "ksoftirqd_cpus"), mdl_row_get(on, "window_stall_pct"));
	mdl_note(sd, "how they gather: a watchdog's fire raises NET_TX on its CPU (3.17's "
		     "qdisc_watchdog()); that CPU's pass dequeues and re-arms it, and a CPU in "
		     "softirq over its idle task counts as idle, so PUSH sends the re-arm to the "
		     "first busy CPU, where the next fire runs the queue and re-arms it again");
	mdl_note(sd, "spin%% is _raw_spin_lock as perf counts it: the waits and lock hand-offs "
		     "of spin_lock() on the busylocks, root locks and TX locks, of all modelled "
		     "busy cycles; the timer and hrtimer bases' spin_lock_irqsave() apart "
		     "(spin_irqsave_pct)");
}

int mdl_seed003(const struct mdl_opts *o, struct mdl_seed *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->id = "seed003";
	snprintf(sd->title, sizeof(sd->title),
		 "mq + 8 netem (the seed's tc script) on a TCP_STREAM receiver: migrated vs pinned "
		 "watchdogs");
	struct sizes z = {16, 40000000, 50000000, 0, S3_LINES_317, 1, S3_LINES_CACHE, 0};
	unsigned cpus_def[5] = {32}, ncpu = 1, hz = 1000;
	if (o->smoke) {
		z.warm_ns = 25000000;
		z.run_ns = 5000000;
	}
	if (o->full) {
		static const unsigned sweep[4] = {8, 16, 24, 48};
		z.run_ns = 200000000;
		memcpy(cpus_def + 1, sweep, sizeof(sweep));
		ncpu = 5;
	}
	if (o->cpus) {
		cpus_def[0] = o->cpus;
		ncpu = 1;
	}
	if (o->hz)
		hz = o->hz;
	unsigned c0 = cpus_def[0];
	snprintf(sd->scale, sizeof(sd->scale),
		 "scale: the seed's tc script verbatim (mq, 8 netem, delays 6-20 ms, limits "
		 "70000-90000, est 1sec 4sec); 8 TX queues (the seed), %u RX queues; %u CPUs%s "
		 "(the seed: not stated), XPS c -> c mod 8; %u TCP_STREAM flows sharing 10 Gbit/s, "
		 "closed loop (a 3 MB window), one ACK per 2 segments, sent from the reader's CPU "
		 "(3.17's prequeue and backlog; 6.9: the backlog); 3.17's transmit path; mlx4 "
		 "coalescing; HZ %u; %.0f ms simulated after %.0f ms warm-up, per row",
		 c0 < MAX_RXQ ? c0 : MAX_RXQ, c0, ncpu > 1 ? " (--full: 8, 16, 24, 48 too)" : "",
		 z.flows, hz, z.run_ns / 1e6, z.warm_ns / 1e6);
	static const char *cols[] = {"spin_pct", "deq_one_cpu_pct", "remote_deq_pct",
				     "busiest_cpu_load_pct", "max_lag_us", "backlog_avg",
				     "ksoftirqd_cpus", "window_stall_pct", "segs_per_s",
				     "spin_irqsave_pct", "in_per_s", "sys_pct", "enq_cpus_per_q"};
	static const char *heads[] = {"spin%", "deq1cpu%", "rdeq%", "maxload%", "lag_us",
				      "backlog", "ksoftirqd", "stall%", "segs/s", "irqsave%",
				      "in/s", "sys%", "enq/q"};
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
				err = run_row(o, &z, &cfgs[k], c0, hz, &c, sd, &sd->row[sd->nrows]);
				sd->nrows++;
			}
		}
		/* what the prequeue changes, and what more readers a netem do
		 * (push-3.17 and pinned); the cost name says which, so
		 * mdl_find() skips them */
		/* and the skb lines: as before (one a skb, never cold), their
		 * costs x0.5 and x2, the cache at 8 MB and at 0 (every skb line
		 * from memory) */
		struct sizes v[9] = {z, z, z, z, z, z, z, z, z};
		v[0].low_latency = 1;
		v[1].flows = 64;
		v[2].lines = S3_LINES_ONE;
		v[3].line_scale = 0.5;
		v[4].line_scale = 2;
		v[5].cache_bytes = S3_LINES_CACHE / 2;
		v[6].cache_bytes = 0;
		/* and the ticket locks: the constant hand-off, at 16 and 64 flows */
		v[7].no_ticket = 1;
		v[8].no_ticket = 1;
		v[8].flows = 64;
		static const char *const vname[9] = {"no prequeue", "64 flows", "skb lines: one",
						     "skb lines x0.5", "skb lines x2", "cache 8 MB",
						     "cache 0", "no ticket", "64 flows, no ticket"};
		for (unsigned i = 0; i < 9 && !err; i++)
			for (unsigned k = 1; k < 4 && !err && sd->nrows < MDL_MAX_ROWS; k += 2) {
				struct mdl_row *row = &sd->row[sd->nrows];
				err = run_row(o, &v[i], &cfgs[k], c0, hz, &o->costs, sd, row);
				snprintf(row->cost_name, sizeof(row->cost_name), "%s", vname[i]);
				sd->nrows++;
			}
	}
	if (err)
		return err;
	claims(sd, c0, hz);
	return 0;
}
