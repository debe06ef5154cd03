/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed003: one configuration's run (s3_run_config()): a fresh
 * runtime and 8-queue device with the seed's tc script, the packets and the
 * driver that counts them back (the ledger), the load (CPU 0's busy poll
 * and tick, the other CPUs' senders), the measurement (lock statistics,
 * dequeues per CPU, delays, pushes, the profile) and the invariants.  The
 * design (why PUSH pushes, the invariants, the packets) is seed003.c's
 * head.
 *
 * Threads: s3_run_config() on the main thread (configuration, the ticker,
 * samples, checks); the runtime's workers run the senders (work items),
 * the poll hook, the watchdogs and ops.xmit/ops.drop.  Locks: none of its
 * own; every shared counter is an atomic.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "now.h"
#include "pktpool.h"
#include "seed003.h"

const unsigned s3_delay_ms[NQ] = {6, 8, 10, 12, 14, 16, 18, 20};

struct s3;

/* A packet: the pool's, and when its sender offered it. */
struct s3_pkt {
	struct ppkt h;
	uint64_t t_enq;  /* sender writes, xmit reads */
};

struct s3_cpu {
	struct pw_work send;
	struct s3 *s;
	unsigned cpu;
	uint64_t rng;
	uint64_t base_ns;  /* the sender's clock origin (its worker only) */
	uint64_t done;     /* packets sent since base_ns (its worker only) */
};

struct s3 {
	struct pw_runtime *rt;
	struct pw_netdev *dev;
	unsigned ncpus;
	unsigned pps;
	/* the packets, and the driver that counts sent and dropped ones */
	struct pktpool pool;
	struct pktdrv drv;
	uint32_t npool;
	/* the rest of the ledger (atomics) */
	uint64_t offered, pool_empty, late_sends;
	uint64_t early;       /* packets that left before their netem delay */
	uint64_t deq[MAX_CPUS + 1][NQ]; /* dequeues per CPU (last row: no CPU) and queue */
	uint64_t dn[NQ], dsum[NQ], dmin[NQ], dmax[NQ]; /* measured delays, ns */
	uint64_t xps[NQ][(MAX_CPUS + 63) / 64];
	/* the senders' stop protocol (seq_cst) */
	int stop;
	int inside;
	struct s3_cpu *cpu;
	struct pw_hrtimer tick;
	struct pw_work tick_start;
	/* CPU 0's longest gap between two poll rounds (atomic: its worker
	 * raises it, the main thread clears it at the window's start) */
	uint64_t poll_last;   /* CPU 0's worker only */
	uint64_t poll_maxgap;
};

/* ------------------------------------------------------------ the ledger */

/* The driver's counters summed into *@c; return sent + dropped: the
 * packets that came back.  Any thread (racy while running). */
static uint64_t s3_back(const struct s3 *s, struct pktdrv_count *c)
{
	pktdrv_read(&s->drv, c);
	uint64_t back = c->sent;
	for (unsigned k = 0; k < PW_DROP_REASON_MAX; k++)
		back += c->dropped[k];
	return back;
}

/* *@p = min(*@p, @v), atomically.  Any thread. */
static void atomic_min(uint64_t *p, uint64_t v)
{
	uint64_t o = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (v < o && !__atomic_compare_exchange_n(p, &o, v, 1, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
}

/* *@p = max(*@p, @v), atomically.  Any thread. */
static void atomic_max(uint64_t *p, uint64_t v)
{
	uint64_t o = __atomic_load_n(p, __ATOMIC_RELAXED);
	while (v > o && !__atomic_compare_exchange_n(p, &o, v, 1, __ATOMIC_RELAXED,
						     __ATOMIC_RELAXED))
		;
}

/* ------------------------------------------------------------ the driver */

/* The driver's xmit hook: the CPU running queue @txq (a watchdog's, a
 * sender's, NET_TX), @self its slot; the driver then counts the packet
 * sent and puts it back. */
static int s3_xmit(struct pktdrv *drv, unsigned txq, struct ppkt *pp, int self)
{
	struct s3 *s = drv->arg;
	const struct s3_pkt *p = (const struct s3_pkt *)pp;
	uint64_t now = pw_now_ns(s->rt);
	if (txq < NQ) {
		uint64_t d = now - p->t_enq;
		__atomic_add_fetch(&s->dn[txq], 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->dsum[txq], d, __ATOMIC_RELAXED);
		atomic_min(&s->dmin[txq], d);
		atomic_max(&s->dmax[txq], d);
		if (d < (uint64_t)s3_delay_ms[txq] * 1000000u)
			__atomic_add_fetch(&s->early, 1, __ATOMIC_RELAXED);
		unsigned row = self >= 0 ? (unsigned)self : MAX_CPUS;
		__atomic_add_fetch(&s->deq[row][txq], 1, __ATOMIC_RELAXED);
	}
	return PKTDRV_DONE;
}

/* ------------------------------------------------------------ the load */

/* xorshift64 on the caller's state.  Its owner's thread. */
static uint64_t xs(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* The sender: CPU c's worker, each time the ticker queues it; sends what
 * the clock says is due since the last run (at most 5 ms worth: a sender
 * that fell further behind skips, counted in late_sends). */
static void s3_send(struct pw_work *w)
{
	struct s3_cpu *c = (struct s3_cpu *)((char *)w - offsetof(struct s3_cpu, send));
	struct s3 *s = c->s;
	__atomic_add_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&s->stop, __ATOMIC_SEQ_CST))
		goto out;
	uint64_t now = pw_now_ns(s->rt);
	if (!c->base_ns) {
		c->base_ns = now;
		c->done = 0;
	}
	uint64_t want = (uint64_t)((double)(now - c->base_ns) * s->pps / 1e9);
	uint64_t due = want > c->done ? want - c->done : 0;
	uint64_t cap = s->pps / 200 + 1;
	if (due > cap) {
		__atomic_add_fetch(&s->late_sends, due - cap, __ATOMIC_RELAXED);
		c->done += due - cap;
		due = cap;
	}
	int self = pktdrv_self(&s->drv); /* CPU c's slot */
	for (uint64_t k = 0; k < due; k++) {
		struct s3_pkt *p = (struct s3_pkt *)pktpool_get(&s->pool, self);
		if (!p) {
			__atomic_add_fetch(&s->pool_empty, 1, __ATOMIC_RELAXED);
			continue;
		}
		pw_pkt_init(&p->h.pkt, NULL, PKT_LEN);
		p->h.pkt.hash = (uint32_t)(xs(&c->rng) >> 16);
		p->t_enq = pw_now_ns(s->rt);
		__atomic_add_fetch(&s->offered, 1, __ATOMIC_RELAXED);
		int rc = pw_dev_queue_xmit(s->dev, &p->h.pkt);
		if (rc < 0) { /* not taken: still ours */
			__atomic_sub_fetch(&s->offered, 1, __ATOMIC_RELAXED);
			pktpool_put(&s->pool, &p->h, self);
		}
	}
	c->done += due;
out:
	__atomic_sub_fetch(&s->inside, 1, __ATOMIC_SEQ_CST);
}

/* CPU 0's poll hook: always work (the busy CPU: a receive loop that never
 * runs dry), a few microseconds of it per round, so that the profile can
 * tell CPU 0's own work (ticks in this function) from everything else.
 * CPU 0's worker. */
static int s3_busy_poll(struct pw_runtime *rt, unsigned cpu, void *arg)
{
	struct s3 *s = arg;
	(void)cpu;
	uint64_t now = pw_now_ns(rt);
	if (s->poll_last)
		atomic_max(&s->poll_maxgap, now - s->poll_last);
	s->poll_last = now;
	volatile uint64_t x = 0x9e3779b97f4a7c15ull;
	for (unsigned i = 0; i < 4096; i++)
		x = x ^ (x << 13) ^ (x >> 7);
	return 1;
}

/* CPU 0's tick (pinned, 1 ms).  CPU 0's worker. */
static enum pw_hrtimer_restart s3_tick(struct pw_hrtimer *t)
{
	pw_hrtimer_forward_now(t, 1000000);
	return PW_HRTIMER_RESTART;
}

/* Starts the tick on CPU 0 itself.  CPU 0's worker. */
static void s3_tick_start(struct pw_work *w)
{
	struct s3 *s = (struct s3 *)((char *)w - offsetof(struct s3, tick_start));
	pw_hrtimer_start(&s->tick, 1000000, PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED);
}

struct lock_sum {
	uint64_t acq, cont, wait_ns;
};

/* The root locks' statistics summed over the 8 queues.  Any thread (main). */
static void lock_sum_read(struct pw_netdev *dev, struct lock_sum *ls)
{
	memset(ls, 0, sizeof(*ls));
	for (unsigned q = 0; q < NQ; q++) {
		struct pw_txq_lock_stats lk;
		if (pw_netdev_txq_stats(dev, q, NULL, &lk))
			continue;
		ls->acq += lk.acquisitions;
		ls->cont += lk.contended;
		ls->wait_ns += lk.wait_ns;
	}
}

/* 1 if @cpu sends on queue @q by XPS.  Any thread (the map is fixed). */
static int cpu_owns(const struct s3 *s, unsigned cpu, unsigned q)
{
	return (s->xps[q][cpu / 64] >> (cpu % 64)) & 1;
}

/* The machine's stolen CPU time so far (/proc/stat, USER_HZ ticks), 0 if
 * unknown: a VM's host running something else.  Main thread. */
static uint64_t steal_ticks(void)
{
	uint64_t v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	int n = fscanf(f, "cpu %lu %lu %lu %lu %lu %lu %lu %lu", (unsigned long *)&v[0],
		       (unsigned long *)&v[1], (unsigned long *)&v[2], (unsigned long *)&v[3],
		       (unsigned long *)&v[4], (unsigned long *)&v[5], (unsigned long *)&v[6],
		       (unsigned long *)&v[7]);
	fclose(f);
	return n == 8 ? v[7] : 0;
}

/* Sleep until now_ns() reaches @t (a signal may end it early).  Main thread. */
static void sleep_until(uint64_t t)
{
	uint64_t now = now_ns();
	if (t > now) {
		struct timespec ts = {(time_t)((t - now) / 1000000000u),
				      (long)((t - now) % 1000000000u)};
		nanosleep(&ts, NULL);
	}
}

/* The ticker: every ms a send on every CPU; every interval a series point.
 * Main thread. */
static void run_for(struct s3 *s, double secs, unsigned interval_ms, struct lab_series *ser,
		    double t_origin)
{
	uint64_t t0 = now_ns(), end = t0 + (uint64_t)(secs * 1e9), next = t0;
	uint64_t next_sample = t0 + (uint64_t)interval_ms * 1000000u;
	struct lock_sum la;
	if (ser)
		lock_sum_read(s->dev, &la);
	uint64_t ta = t0;
	while (now_ns() < end) {
		for (unsigned c = 0; c < s->ncpus; c++)
			pw_queue_work_on(s->rt, c, &s->cpu[c].send); /* -EBUSY: still queued */
		next += 1000000;
		sleep_until(next);
		uint64_t now = now_ns();
		if (ser && now >= next_sample) {
			struct lock_sum lb;
			lock_sum_read(s->dev, &lb);
			double dt = (double)(now - ta) / 1e9;
			lab_series_add(ser, t_origin + (double)(now - t0) / 1e9,
				       100.0 * (double)(lb.wait_ns - la.wait_ns) / 1e9 / (dt * s->ncpus));
			la = lb;
			ta = now;
			next_sample += (uint64_t)interval_ms * 1000000u;
		}
	}
}

/* Free the pool and @s (its runtime and device are gone).  Main thread. */
static void s3_free(struct s3 *s)
{
	pktdrv_destroy(&s->drv);
	pktpool_destroy(&s->pool);
	free(s->cpu);
	free(s);
}

/* One run of a configuration, on a fresh runtime and device, measured
 * for o->seconds into row @row (its series from @t_off on; @what names the
 * run on the progress line).  Main thread.
 * Return: 0 or -errno (setup failed; the message is on stderr). */
int s3_run_config(const struct lab_opts *o, struct lab_result *r, unsigned row,
		  const struct s3_config *cf, double t_off, const char *what, struct s3_out *out)
{
	unsigned ncpus = o->cpus ? o->cpus : lab_online_cpus();
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	struct s3 *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->ncpus = ncpus;
	s->pps = o->pps ? o->pps : 20000;
	double inflight = (double)s->pps * ncpus * 0.060; /* 60 ms of traffic */
	uint32_t npool = inflight < 4096 ? 4096 : inflight > 4e6 ? 4000000u : (uint32_t)inflight;
	unsigned per_slot = (npool + ncpus - 1) / ncpus; /* each CPU's slot */
	s->npool = per_slot * ncpus;
	const struct pktpool_cfg pc = {
		.nslots = ncpus, .pkt_size = sizeof(struct s3_pkt), .prealloc = per_slot,
		.max = per_slot, .flags = PKTPOOL_CHECK,
	};
	const struct pktdrv_cfg dc = { .pool = &s->pool, .xmit = s3_xmit, .arg = s };
	s->cpu = calloc(ncpus, sizeof(*s->cpu));
	if (!s->cpu || pktpool_init(&s->pool, &pc) || pktdrv_init(&s->drv, &dc)) {
		s3_free(s);
		return -ENOMEM;
	}
	for (unsigned q = 0; q < NQ; q++)
		s->dmin[q] = UINT64_MAX;

	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	int err = pw_runtime_create(&cfg, &s->rt);
	if (err) {
		fprintf(stderr, "lab seed003: pw_runtime_create: %s\n", strerror(-err));
		s3_free(s);
		return err;
	}
	struct pw_runtime *rt = s->rt;
	char msg[256] = "";
	if ((err = pw_set_migration(rt, cf->policy)) ||
	    (err = pw_net_set_watchdog_pinned(rt, cf->pinned))) {
		fprintf(stderr, "lab seed003: policy: %s\n", strerror(-err));
		goto fail_rt;
	}
	err = pw_netdev_create(rt, "eth1", NQ, &pktdrv_ops, &s->drv, &s->dev);
	if (err) {
		fprintf(stderr, "lab seed003: pw_netdev_create: %s\n", strerror(-err));
		goto fail_rt;
	}
	/* the script: "tc qd del dev eth1 root 2>/dev/null" first, as the seed */
	pw_tc(rt, "qd del dev eth1 root", 0, NULL, 0, NULL, 0);
	for (unsigned i = 0; i < lab_seed003_script_n; i++) {
		err = pw_tc(rt, lab_seed003_script[i], 0, NULL, 0, msg, sizeof(msg));
		if (err) {
			fprintf(stderr, "lab seed003: tc %s: %s\n", lab_seed003_script[i], msg);
			goto fail_dev;
		}
	}
	/* XPS: queue q to CPU q mod ncpus (or, above 8 CPUs, to every CPU
	 * c with c mod 8 == q): each CPU sends on its own queues */
	for (unsigned q = 0; q < NQ; q++) {
		for (unsigned c = 0; c < ncpus; c++)
			if (ncpus <= NQ ? q % ncpus == c : c % NQ == q)
				s->xps[q][c / 64] |= 1ull << (c % 64);
		err = pw_netdev_set_xps(s->dev, q, s->xps[q], ncpus);
		if (err) {
			fprintf(stderr, "lab seed003: pw_netdev_set_xps: %s\n", strerror(-err));
			goto fail_dev;
		}
	}
	for (unsigned c = 0; c < ncpus; c++) {
		s->cpu[c].s = s;
		s->cpu[c].cpu = c;
		s->cpu[c].rng = 0x9e3779b97f4a7c15ull * (c + 1) ^ (o->seed * 0xbf58476d1ce4e5b9ull);
		if (!s->cpu[c].rng)
			s->cpu[c].rng = 1;
		pw_work_init(&s->cpu[c].send, s3_send);
	}
	pw_hrtimer_setup(rt, &s->tick, s3_tick, CLOCK_MONOTONIC,
			 PW_HRTIMER_MODE_REL | PW_HRTIMER_MODE_PINNED);
	pw_work_init(&s->tick_start, s3_tick_start);
	err = pw_set_poll(rt, 0, s3_busy_poll, s);
	if (err) {
		fprintf(stderr, "lab seed003: pw_set_poll: %s\n", strerror(-err));
		goto fail_dev;
	}
	err = pw_runtime_start(rt);
	if (err) {
		fprintf(stderr, "lab seed003: pw_runtime_start: %s\n", strerror(-err));
		goto fail_dev;
	}
	pw_queue_work_on(rt, 0, &s->tick_start);

	/* warm up: queues filled, watchdogs where the policy puts them */
	run_for(s, o->smoke ? 0.1 : 0.25, o->interval_ms, NULL, 0);

	/* measure */
	struct lock_sum la, lb;
	struct lab_sample sa, sb;
	uint64_t deq0[MAX_CPUS + 1][NQ];
	uint64_t sent0 = pktdrv_sent(&s->drv);
	uint64_t off0 = __atomic_load_n(&s->offered, __ATOMIC_RELAXED);
	for (unsigned c = 0; c <= MAX_CPUS; c++)
		for (unsigned q = 0; q < NQ; q++)
			deq0[c][q] = __atomic_load_n(&s->deq[c][q], __ATOMIC_RELAXED);
	struct pw_cpu_stats c0a, c0b;
	pw_stats_read(rt, 0, &c0a);
	uint64_t steal0 = steal_ticks();
	__atomic_store_n(&s->poll_maxgap, 0, __ATOMIC_RELAXED);
	int perr = lab_prof_start(997);
	lock_sum_read(s->dev, &la);
	struct lab_run_mark mark;
	lab_run_begin(&mark);
	lab_sample(rt, &sa);
	run_for(s, o->seconds, o->interval_ms, &r->series[row], t_off);
	lab_sample(rt, &sb);
	out->run = lab_run_end(r, row, &mark, what);
	lock_sum_read(s->dev, &lb);
	if (!perr)
		lab_prof_stop();
	out->poll_gap_ms = (double)__atomic_load_n(&s->poll_maxgap, __ATOMIC_RELAXED) / 1e6;
	pw_stats_read(rt, 0, &c0b);
	out->cpu0_ran_pct = 100.0 * (double)((c0b.user_ns + c0b.sys_ns) - (c0a.user_ns + c0a.sys_ns)) /
			    1e9 / (sb.t - sa.t);
	out->cpu0_vol = c0b.voluntary_ctxsw - c0a.voluntary_ctxsw;
	long hz = sysconf(_SC_CLK_TCK);
	out->steal_pct = 100.0 * (double)(steal_ticks() - steal0) / (double)(hz > 0 ? hz : 100) /
			 ((sb.t - sa.t) * lab_online_cpus());
	uint64_t sent1 = pktdrv_sent(&s->drv);
	uint64_t off1 = __atomic_load_n(&s->offered, __ATOMIC_RELAXED);

	double secs = sb.t - sa.t;
	out->secs = secs;
	double cpu_s = secs * ncpus;
	out->qwait_share = 100.0 * (double)(lb.wait_ns - la.wait_ns) / 1e9 / cpu_s;
	out->tlock_share = 100.0 * (double)(sb.lock_wait_ns - sa.lock_wait_ns) / 1e9 / cpu_s;
	out->contended_pct = lb.acq > la.acq ? 100.0 * (double)(lb.cont - la.cont) /
						       (double)(lb.acq - la.acq)
					     : 0;
	out->sent_s = (double)(sent1 - sent0) / secs;
	out->offered_s = (double)(off1 - off0) / secs;
	out->pushed_s = (double)(sb.pushed - sa.pushed) / secs;
	out->prof_ok = 0;
	out->spin_share = NAN;
	if (!perr && lab_prof_total() > 0) {
		static const char *const spin[] = {"qlock", "lock_slow", "flags_busy_wait",
						   "futex", "sched_yield", NULL};
		static const char *const loop[] = {"s3_busy_poll", NULL};
		/* of the ticks outside CPU 0's receive loop (the poll hook) */
		double rest = 1.0 - lab_prof_share(loop);
		out->prof_ok = 1;
		out->spin_share = rest > 0 ? 100.0 * lab_prof_share(spin) / rest : 0;
		lab_prof_format(r->profile[row], LAB_PROFILE_LEN, 8);
	}
	uint64_t tot = 0, foreign = 0, per_cpu[MAX_CPUS + 1] = {0};
	for (unsigned c = 0; c <= MAX_CPUS; c++)
		for (unsigned q = 0; q < NQ; q++) {
			uint64_t d = __atomic_load_n(&s->deq[c][q], __ATOMIC_RELAXED) - deq0[c][q];
			per_cpu[c] += d;
			tot += d;
			if (c == MAX_CPUS || !cpu_owns(s, c, q))
				foreign += d;
		}
	for (unsigned c = 0; c <= MAX_CPUS; c++)
		out->cpu_share[c] = tot ? 100.0 * (double)per_cpu[c] / (double)tot : 0;
	out->foreign_pct = tot ? 100.0 * (double)foreign / (double)tot : 0;

	/* stop the senders, drain (netem holds at most 20 ms; the limits are for
	 * a machine that stops running us for seconds, and a stranded packet
	 * never drains) */
	__atomic_store_n(&s->stop, 1, __ATOMIC_SEQ_CST);
	uint64_t give_up = now_ns() + 10000000000ull;
	while (__atomic_load_n(&s->inside, __ATOMIC_SEQ_CST) && now_ns() < give_up)
		lab_sleep_ms(1);
	int senders_out = __atomic_load_n(&s->inside, __ATOMIC_SEQ_CST) == 0;
	give_up = now_ns() + 10000000000ull;
	uint64_t back;
	struct pktdrv_count cnt;
	for (;;) {
		back = s3_back(s, &cnt);
		if (back == __atomic_load_n(&s->offered, __ATOMIC_ACQUIRE) || now_ns() > give_up)
			break;
		lab_sleep_ms(5);
	}
	int drained = back == __atomic_load_n(&s->offered, __ATOMIC_ACQUIRE);

	/* the qdiscs' own view, once drained: nothing queued, their sent and
	 * drop counts equal the driver's, the estimators running */
	struct pw_qdisc_stats root;
	int root_ok = pw_netdev_qdisc_stats(s->dev, 0, &root) == 0;
	unsigned est_on = 0;
	for (unsigned q = 0; q < NQ; q++) {
		struct pw_qdisc_stats st;
		if (!pw_netdev_txq_stats(s->dev, q, &st, NULL) && st.has_rate)
			est_on++;
	}
	uint64_t dropped_before = s3_back(s, &cnt);
	dropped_before -= cnt.sent;

	if (senders_out) {
		pw_netdev_destroy(s->dev); /* the rest to ops.drop, DEV_DESTROY */
		s->dev = NULL;
	}
	pw_hrtimer_cancel(&s->tick);
	pw_runtime_stop(rt);

	/* per-queue delays */
	out->worst_err_ms = 0;
	out->worst_q = 0;
	uint64_t early = __atomic_load_n(&s->early, __ATOMIC_RELAXED);
	for (unsigned q = 0; q < NQ; q++) {
		uint64_t n = s->dn[q];
		out->mean_ms[q] = n ? (double)s->dsum[q] / (double)n / 1e6 : NAN;
		out->max_ms[q] = n ? (double)s->dmax[q] / 1e6 : NAN;
		out->min_ms[q] = n ? (double)s->dmin[q] / 1e6 : NAN;
		double e = n ? fabs(out->mean_ms[q] - s3_delay_ms[q]) : 0;
		if (e > out->worst_err_ms) {
			out->worst_err_ms = e;
			out->worst_q = q;
		}
	}

	/* the invariants */
	uint64_t dropped = s3_back(s, &cnt);
	uint64_t sent = cnt.sent;
	dropped -= sent;
	const char *nm = cf->key;
	lab_check(r, pw_get_migration(rt) == cf->policy, "%s: migration policy in force", nm);
	lab_check(r, senders_out, "%s: the senders stopped", nm);
	lab_check(r, sent + dropped == s->offered,
		  "%s: every packet came back: offered %llu, sent %llu, dropped %llu", nm,
		  (unsigned long long)s->offered, (unsigned long long)sent,
		  (unsigned long long)dropped);
	lab_check(r, pktdrv_twice(&s->drv) == 0, "%s: no packet came back twice (%llu did)", nm,
		  (unsigned long long)pktdrv_twice(&s->drv));
	uint32_t nfree = (uint32_t)pktpool_count_free(&s->pool);
	lab_check(r, nfree == s->npool, "%s: the pool is whole after destroy (%u of %u)", nm,
		  nfree, s->npool);
	lab_check(r, cnt.dropped[0] == 0, "%s: no drop with an unknown reason", nm);
	lab_check(r, drained, "%s: drained within 10 s of the senders stopping", nm);
	if (drained && root_ok) {
		lab_check(r, root.qlen == 0 && root.backlog == 0,
			  "%s: backlog 0 once drained (qlen %u, %llu bytes)", nm, root.qlen,
			  (unsigned long long)root.backlog);
		lab_check(r, root.packets == sent,
			  "%s: the qdiscs' sent count equals the driver's (%llu vs %llu)", nm,
			  (unsigned long long)root.packets, (unsigned long long)sent);
		lab_check(r, root.drops == dropped_before,
			  "%s: the qdiscs' drop count equals the driver's (%u vs %llu)", nm,
			  root.drops, (unsigned long long)dropped_before);
	} else {
		lab_check(r, root_ok, "%s: root qdisc statistics readable", nm);
	}
	lab_check(r, est_on == NQ, "%s: an estimator on every netem (%u of %u)", nm, est_on, NQ);
	lab_check(r, early == 0, "%s: no packet left before its netem delay (%llu did)", nm,
		  (unsigned long long)early);
	unsigned fed = 0;
	for (unsigned q = 0; q < NQ; q++)
		fed += s->dn[q] > 0;
	lab_check(r, fed == NQ, "%s: every queue sent packets (%u of %u)", nm, fed, NQ);
	if (ncpus >= 2) {
		if (cf->policy == PW_MIGRATION_PUSH && !cf->pinned) {
			/* PUSH moves a watchdog only when the arming CPU looks
			 * idle and another busy (seed000.c says when): a run
			 * whose re-arms never found that pushed nothing and
			 * measured "pinned" under another name.  Not counted
			 * for the claims, as seed000 does; not a failure (the
			 * scheduling decides it, and the model and the
			 * library's tests check the mechanism itself). */
			if (sb.pushed == sa.pushed)
				lab_run_invalidate(r, out->run, LAB_RUN_NOT_IN_FORCE,
						   "PUSH pushed no timer (not in force)");
			else
				lab_check(r, out->foreign_pct > 0,
					  "%s: watchdogs fired on a CPU not owning their queue", nm);
		} else {
			/* pinned: each watchdog fires where its queue's owner
			 * armed it; PULL: hrtimers stay local anyway */
			lab_check(r, out->foreign_pct == 0,
				  "%s: every dequeue by its queue's own CPU (%.3f%% were not)", nm,
				  out->foreign_pct);
		}
	}
	out->pps = s->pps;
	out->ncpus = ncpus;
	out->offered = s->offered;
	out->late = s->late_sends;
	out->pool_empty = s->pool_empty;
	if (s->late_sends || s->pool_empty)
		lab_progress(r, "%s: senders skipped %llu packets (behind), pool dry %llu times", nm,
			     (unsigned long long)s->late_sends, (unsigned long long)s->pool_empty);
	pw_netdev_destroy(s->dev); /* NULL unless the senders hung */
	pw_runtime_destroy(rt);
	s3_free(s);
	return 0;

fail_dev:
	pw_netdev_destroy(s->dev);
fail_rt:
	pw_runtime_destroy(rt);
	s3_free(s);
	return err;
}
