/* SPDX-License-Identifier: MIT */
/*
 * The model of seed 001: receive-side mod_timer on Linux 2.4's one global
 * timer lock (model.c: the engine).  Steve Modica, SGI, 2004 ("simple
 * mod_timer patch"): 8 gigabit NICs receiving 1500-byte frames on a
 * 64-CPU Altix, interrupts and 8 receive threads on 4 (then 8) CPUs, the 4
 * CPUs pegged; mod_timer was 218033 of 23581672 profile ticks on 4 CPUs
 * (15.7% of the non-idle ones, 3rd) and 550978 on 8; with the 2.6 fast
 * path pulled back ("if the timer is re-modified to the same expiry, just
 * return") and the stack no longer timestamping every packet, "in the
 * noise".
 *
 * The machine: 4 or 8 CPUs (both by default), 8 NICs at 1 Gbit/s line rate
 * (1538 bytes a 1500-byte frame on the wire: 81,274 frames/s each), NIC i's
 * interrupt and receive thread on CPU i mod N; tg3's coalescing
 * (rx-usecs 50, rx-frames 5: LOW_RXCOL_TICKS, LOW_RXMAX_FRAMES) and its
 * 200-entry RX ring (frames that find it full are dropped: the NIC cannot
 * be faster than its CPU); HZ 1024 (ia64).  One TCP connection a NIC.
 *
 * Per frame, in the NAPI poll (tg3_poll): the driver; the timestamp
 * (netif_rx's do_gettimeofday(), sn_gettimeoffset() reading the SHub
 * clock) where the row keeps it; tcp_v4_rcv; two timer re-arms, as the
 * live lab models 2.4's receive path (tools/lab/live/seed001.c): the delayed
 * ACK (jiffies + HZ/25) and the keepalive (jiffies + 7200 s); every second
 * frame an ACK; the reader woken.  The reader (a task) copies what is
 * queued (__copy_user).
 *
 * The timers, by row:
 *   global-2.4                   2.4: the reference design (tools/common/
 *                                gl24.c) behind one simulated global lock,
 *                                no fast path: every re-arm takes the lock
 *   global-2.4-fastpath          the seed's patch alone: the fast path in
 *                                front of the same lock
 *   global-2.4-fastpath-notstamp the seed's "after": the patch, and no
 *                                per-frame timestamp
 *   percpu                       2.6's per-CPU bases (the library), no fast
 *                                path (pw__mod_timer_lane(): every re-arm
 *                                locks its CPU's base)
 *   percpu-fastpath              2.6 with the fast path (pw_mod_timer())
 * The fast path's effect is what the counts say: how many re-arms found
 * the timer pending with the same expiry (the library's fast_path counter
 * for the per-CPU rows; the same test on the reference design's timers),
 * times the cost table, plus what the lock no longer sees.
 *
 * Costs: the table's CPU-path entries are for 2010s x86; this machine's
 * 1.3-1.5 GHz Itanium 2 takes ERA x them (ERA = 3: half the clock and a
 * lower IPC on branchy kernel code; stated, not fitted); cache lines cross
 * NUMAlink (line_numa), so a lock hand-off costs 2 line_numa; the clock
 * read is clock_mmio.
 *
 * Threads: the main thread only (model.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gl24.h"
#include "model.h"

#define NNIC 8u
#define MSS 1448u
#define FRAME_NS 12304ull /* 1538 bytes at 1 Gbit/s */
#define RING 200u
#define GEN_NS 100000ull
#define ERA 3.0
#define HZ24 1024u /* ia64's HZ in 2.4 (--hz changes it) */

enum { EV_RX = 1, EV_GEN, EV_READ_END };

enum tmode { T_GLOBAL, T_GLOBAL_FAST, T_PERCPU, T_PERCPU_FAST };

struct cfg {
	const char *key, *label;
	enum tmode mode;
	int tstamp;
};

static const struct cfg cfgs[] = {
	{"global-2.4", "2.4: one global timer lock, no fast path, per-frame timestamps", T_GLOBAL,
	 1},
	{"global-2.4-fastpath", "the seed's patch alone: the fast path, same lock", T_GLOBAL_FAST,
	 1},
	{"global-2.4-fastpath-notstamp", "the seed's after: the patch and no per-frame timestamp",
	 T_GLOBAL_FAST, 0},
	{"percpu", "2.6: per-CPU bases, no fast path", T_PERCPU, 1},
	{"percpu-fastpath", "2.6: per-CPU bases and the fast path", T_PERCPU_FAST, 1},
};
#define NCFG (sizeof(cfgs) / sizeof(cfgs[0]))

struct nic {
	unsigned cpu;
	uint64_t next_t;     /* the next frame's arrival */
	uint64_t frames, dropped;
	uint64_t avail;      /* bytes queued for the reader */
	int reader_waiting;
	struct pw_timer t[2];  /* delayed ACK, keepalive (per-CPU rows) */
	uint64_t gexp[2];      /* the reference design's timers' expiries */
	int gpending[2];
};

struct s1 {
	struct mdl m;
	struct mdl_costs cost;   /* the era's */
	const struct cfg *cf;
	unsigned ncpus;
	struct nic nic[NNIC];
	struct mdl_vec rxv[NNIC];
	struct mdl_lock glock;   /* timerlist_lock */
	struct mdl_lock *wlock;  /* per-CPU base locks */
	unsigned c_drv, c_clock, c_tcp, c_ack, c_timer, c_copy, c_wake;
	/* window */
	uint64_t frames, drops, arms, fast_hits, reads;
	/* whole run */
	uint64_t gen_total, done_total, drop_total;
};

static struct s1 *S1(struct mdl *m)
{
	return m->ctx;
}

/* The reference design's random stream for its initial arms: a fixed
 * seed per row, so that every run arms the same.  Context: main thread. */
static uint64_t gl_rng;
static uint64_t gl_rand(void)
{
	gl_rng ^= gl_rng >> 12;
	gl_rng ^= gl_rng << 25;
	gl_rng ^= gl_rng >> 27;
	return gl_rng * 0x2545f4914f6cdd1dull;
}

static void tm_fn(struct pw_timer *t)
{
	(void)t; /* never: re-armed 40+ jiffies ahead every frame */
}

/* One re-arm of NIC @n's timer @k to @expires, on CPU @c, by the row. */
static void rearm(struct s1 *s, struct nic *n, unsigned k, uint64_t expires, unsigned c)
{
	struct mdl *m = &s->m;
	const double *ns = s->cost.ns;
	int win = mdl_in_window(m);
	if (win)
		s->arms++;
	switch (s->cf->mode) {
	case T_GLOBAL_FAST:
		if (n->gpending[k] && n->gexp[k] == expires) {
			mdl_work(m, c, ns[MC_TIMER_FAST], s->c_timer);
			if (win)
				s->fast_hits++;
			return;
		}
		__attribute__((fallthrough)); /* the locked path */
	case T_GLOBAL: {
		unsigned idx = (unsigned)(n - s->nic) * 2 + k;
		/* the reference design's wheel: its clock starts at jiffy
		 * 10000 and is never run here (no timer comes due) */
		gl24_ops.arm(idx, 10000 + expires);
		n->gexp[k] = expires;
		n->gpending[k] = 1;
		mdl_locked(m, c, &s->glock, ns[MC_TIMER_ARM], s->c_timer, s->c_timer);
		return;
	}
	case T_PERCPU:
	case T_PERCPU_FAST: {
		struct pw_timer *t = &n->t[k];
		int hit = pw_timer_pending(t) && t->expires == expires;
		int rc;
		if (s->cf->mode == T_PERCPU_FAST)
			rc = pw_mod_timer(t, expires);
		else
			rc = pw__mod_timer_lane(t, expires); /* 2.6 before the fast path */
		mdl_check(m, rc >= 0, "seed001: mod_timer: %d", rc);
		if (hit && s->cf->mode == T_PERCPU_FAST) {
			mdl_work(m, c, ns[MC_TIMER_FAST], s->c_timer);
			if (win)
				s->fast_hits++;
		} else {
			mdl_locked(m, c, &s->wlock[c], ns[MC_TIMER_ARM], s->c_timer, s->c_timer);
		}
		return;
	}
	}
}

static void reader_run(struct s1 *s, unsigned ni, unsigned from, int woken)
{
	struct mdl *m = &s->m;
	struct nic *n = &s->nic[ni];
	const double *ns = s->cost.ns;
	if (woken) {
		mdl_work(m, from, ns[MC_WAKE] / 2, s->c_wake);
		mdl_work(m, n->cpu, ns[MC_WAKE] / 2, s->c_wake);
	}
	double cost = ns[MC_SYSCALL] + ns[MC_COPY_KB] * n->avail / 1024.0;
	n->avail = 0;
	n->reader_waiting = 0;
	uint64_t end = mdl_work(m, n->cpu, cost, s->c_copy);
	mdl_task_run(m, n->cpu, end + 1);
	mdl_at(m, end, EV_READ_END, ni, 0);
	if (mdl_in_window(m))
		s->reads++;
}

static void rx_poll(struct s1 *s, const struct mdl_ev *ev)
{
	struct mdl *m = &s->m;
	struct mdl_vec *v = &s->rxv[ev->a];
	struct nic *n = &s->nic[ev->a];
	const double *ns = s->cost.ns;
	if (!mdl_vec_begin(m, v, ev))
		return;
	struct mdl_item it;
	mdl_act(m, (int)v->cpu);
	while (mdl_vec_next(m, v, &it)) {
		mdl_work(m, v->cpu, ns[MC_DRV_RX], s->c_drv);
		if (s->cf->tstamp)
			mdl_work(m, v->cpu, ns[MC_CLOCK_MMIO], s->c_clock);
		mdl_work(m, v->cpu, ns[MC_TCP_RCV], s->c_tcp);
		uint64_t j = pw_jiffies(m->rt);
		rearm(s, n, 0, j + (m->hz / 25 ? m->hz / 25 : 1), v->cpu);
		rearm(s, n, 1, j + 7200ull * m->hz, v->cpu);
		n->frames++;
		s->done_total++;
		if (mdl_in_window(m))
			s->frames++;
		if (n->frames % 2 == 0)
			mdl_work(m, v->cpu, ns[MC_TCP_XMIT] + ns[MC_DRV_TX], s->c_ack);
		n->avail += MSS;
		if (n->reader_waiting)
			reader_run(s, ev->a, v->cpu, 1);
	}
	mdl_vec_end(m, v);
}

/* NIC @ni's frames of the next GEN_NS, those the ring has room for. */
static void generate(struct s1 *s, unsigned ni)
{
	struct mdl *m = &s->m;
	struct nic *n = &s->nic[ni];
	uint64_t end = m->now + GEN_NS;
	for (; n->next_t < end; n->next_t += FRAME_NS) {
		s->gen_total++;
		if (mdl_vec_pending(&s->rxv[ni]) >= RING) {
			n->dropped++;
			s->drop_total++;
			if (mdl_in_window(m))
				s->drops++;
			continue;
		}
		mdl_vec_push(m, &s->rxv[ni], n->next_t, ni, 0);
	}
	mdl_at(m, end, EV_GEN, ni, 0);
}

static void s1_dispatch(struct mdl *m, const struct mdl_ev *ev)
{
	struct s1 *s = S1(m);
	switch (ev->type) {
	case EV_RX:
		rx_poll(s, ev);
		break;
	case EV_GEN:
		generate(s, ev->a);
		break;
	case EV_READ_END: {
		struct nic *n = &s->nic[ev->a];
		if (n->avail)
			reader_run(s, ev->a, n->cpu, 0);
		else
			n->reader_waiting = 1;
		break;
	}
	}
}

/* The top of the modelled profile, readprofile-like, into @row. */
static void profile(struct s1 *s, struct mdl_row *row, double *timer_share, unsigned *timer_rank)
{
	struct mdl *m = &s->m;
	double tot = 0, by[MDL_MAX_CAT] = {0};
	for (unsigned c = 0; c < s->ncpus; c++)
		for (unsigned k = 0; k < m->ncat; k++) {
			by[k] += (double)m->cpu[c].cat_ns[k];
			tot += (double)m->cpu[c].cat_ns[k];
		}
	unsigned order[MDL_MAX_CAT];
	for (unsigned k = 0; k < m->ncat; k++)
		order[k] = k;
	for (unsigned i = 0; i < m->ncat; i++)
		for (unsigned j = i + 1; j < m->ncat; j++)
			if (by[order[j]] > by[order[i]] ||
			    (by[order[j]] == by[order[i]] && order[j] < order[i])) {
				unsigned t = order[i];
				order[i] = order[j];
				order[j] = t;
			}
	size_t used = 0;
	*timer_share = 0;
	*timer_rank = 0;
	for (unsigned i = 0; i < m->ncat; i++) {
		unsigned k = order[i];
		double share = tot > 0 ? by[k] / tot : 0;
		if (k == s->c_timer) {
			*timer_share = share;
			*timer_rank = i + 1;
		}
		if (share <= 0)
			continue;
		used += (size_t)snprintf(row->profile + used, sizeof(row->profile) - used,
					 "  %6.2f%%  %s\n", 100 * share, m->cat_name[k]);
		if (used >= sizeof(row->profile))
			break;
	}
}

static int run_row(const struct mdl_opts *o, const struct cfg *cf, unsigned ncpus,
		   uint64_t warm_ns, uint64_t run_ns, struct mdl_seed *sd, struct mdl_row *row)
{
	struct s1 *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->cf = cf;
	s->ncpus = ncpus;
	s->cost = o->costs;
	static const int era[] = {MC_IRQ, MC_TIMER_ARM, MC_TIMER_FAST, MC_HR_OP, MC_HR_RUN, MC_TICK,
				  MC_WAKE, MC_SYSCALL, MC_COPY_KB, MC_TCP_ACK, MC_TCP_XMIT,
				  MC_TCP_RCV, MC_DRV_RX, MC_DRV_TX, MC_TX_CLEAN, MC_QDISC};
	for (unsigned i = 0; i < sizeof(era) / sizeof(era[0]); i++)
		s->cost.ns[era[i]] *= ERA;
	s->cost.ns[MC_HANDOFF] = 2 * s->cost.ns[MC_LINE_NUMA];
	struct mdl *m = &s->m;
	int err = mdl_init(m, ncpus, o->hz ? o->hz : HZ24, o->seed, &s->cost, warm_ns, run_ns,
			   s1_dispatch, s);
	if (err) {
		free(s);
		return err;
	}
	s->c_drv = mdl_cat(m, "tg3_poll");
	s->c_clock = mdl_cat(m, "sn_gettimeoffset");
	s->c_tcp = mdl_cat(m, "tcp_v4_rcv");
	s->c_ack = mdl_cat(m, "tcp_send_ack");
	s->c_timer = mdl_cat(m, "mod_timer");
	s->c_copy = mdl_cat(m, "__copy_user");
	s->c_wake = mdl_cat(m, "__wake_up");
	m->cat_name[m->cat_irq] = "irq";
	s->wlock = mdl_locks_new(ncpus, "timer base");
	if (!s->wlock) {
		mdl_fini(m);
		free(s);
		return -ENOMEM;
	}
	mdl_lock_init(&s->glock, "timerlist_lock");
	int gl = cf->mode == T_GLOBAL || cf->mode == T_GLOBAL_FAST;
	if (gl) {
		gl_rng = 0x9e3779b97f4a7c15ull ^ o->seed;
		gl24_set_rand(gl_rand);
		err = gl24_ops.setup(NNIC * 2, PW_CLOCK_SIM);
		mdl_check(m, err == 0, "seed001: the 2.4 design's setup: %d", err);
	}
	for (unsigned i = 0; i < NNIC; i++) {
		struct nic *n = &s->nic[i];
		n->cpu = i % ncpus;
		n->next_t = 1000 + mdl_rand_below(m, FRAME_NS);
		n->reader_waiting = 1;
		mdl_vec_init(&s->rxv[i], i, n->cpu, MI_RX, EV_RX, 50000, 5);
		mdl_act(m, (int)n->cpu);
		pw_timer_setup(m->rt, &n->t[0], tm_fn, 0);
		pw_timer_setup(m->rt, &n->t[1], tm_fn, 0);
		mdl_at(m, 0, EV_GEN, i, 0);
	}
	mdl_act(m, -1);
	pw_set_migration(m->rt, PW_MIGRATION_OFF); /* 2.6 had no push */
	if (!m->nfailed)
		err = mdl_run(m);

	struct mdl_totals t;
	mdl_totals(m, 0, &t); /* no kicks: migration is off */
	double secs = t.secs;
	uint64_t work = t.work_ns, spin = t.spin_ns, lib_fast = 0, lib_armed = 0, pending = 0;
	for (unsigned c = 0; c < ncpus; c++) {
		struct pw_cpu_stats st;
		struct pw_kick_stats ks;
		mdl_stats_window(m, c, &st, &ks);
		lib_fast += st.fast_path;
		lib_armed += st.armed;
	}
	for (unsigned i = 0; i < NNIC; i++)
		pending += mdl_vec_pending(&s->rxv[i]);
	/* invariants: every frame received or dropped; fast-path hits only
	 * where the fast path is, and the library agrees on them */
	mdl_check(m, s->gen_total == s->done_total + s->drop_total + pending,
		  "seed001 %s: frames: %llu arrived, %llu processed, %llu dropped, %llu in rings",
		  cf->key, (unsigned long long)s->gen_total, (unsigned long long)s->done_total,
		  (unsigned long long)s->drop_total, (unsigned long long)pending);
	if (cf->mode == T_PERCPU)
		mdl_check(m, lib_fast == 0, "seed001 percpu: %llu fast-path hits without the fast "
					    "path",
			  (unsigned long long)lib_fast);
	if (cf->mode == T_PERCPU_FAST)
		mdl_check(m, lib_fast == s->fast_hits,
			  "seed001 percpu-fastpath: the library counted %llu fast-path hits, the "
			  "model %llu",
			  (unsigned long long)lib_fast, (unsigned long long)s->fast_hits);
	if (cf->mode == T_PERCPU || cf->mode == T_PERCPU_FAST)
		mdl_check(m, lib_armed == s->arms, /* armed counts fast-path hits too */
			  "seed001 %s: %llu arms counted by the library, %llu made", cf->key,
			  (unsigned long long)lib_armed, (unsigned long long)s->arms);
	if (gl)
		gl24_ops.teardown();

	double tshare;
	unsigned trank;
	profile(s, row, &tshare, &trank);
	mdl_row_set(row, "mod_timer_pct", 100 * tshare, "%.2f");
	mdl_row_set(row, "mod_timer_rank", (double)trank, "%.0f");
	mdl_row_set(row, "frames_per_s", s->frames / secs, "%.0f");
	mdl_row_set(row, "drops_per_s", s->drops / secs, "%.0f");
	mdl_row_set(row, "fast_path_pct", s->arms ? 100.0 * s->fast_hits / s->arms : 0, "%.1f");
	mdl_row_set(row, "lock_wait_pct", work ? 100.0 * spin / work : 0, "%.2f");
	mdl_row_set(row, "lock_contended_pct",
		    s->glock.acq ? 100.0 * s->glock.contended / s->glock.acq : 0, "%.1f");
	mdl_row_set(row, "busy_pct", 100.0 * work / (secs * 1e9 * ncpus), "%.1f");
	mdl_row_set(row, "arms_per_s", s->arms / secs, "%.0f");
	mdl_row_set(row, "in_per_s", t.in / secs, "%.0f");
	mdl_row_set(row, "rx_per_s", t.irq[MI_RX] / secs, "%.0f");
	mdl_row_set(row, "tx_per_s", t.irq[MI_TX] / secs, "%.0f");
	mdl_row_set(row, "loc_per_s", t.irq[MI_LOC] / secs, "%.0f");
	mdl_row_set(row, "res_per_s", t.res / secs, "%.0f");
	mdl_row_set(row, "cal_per_s", t.cal / secs, "%.0f");
	mdl_row_set(row, "remote_arms", (double)t.remote_arms, "%.0f");
	mdl_row_set(row, "timer_ipis", (double)(t.kick[0] + t.kick[1]), "%.0f");
	mdl_row_finish(sd, row, m, cf->key, cf->label);
	mdl_lock_fini(&s->glock);
	for (unsigned i = 0; i < NNIC; i++)
		mdl_vec_fini(&s->rxv[i]);
	mdl_locks_free(s->wlock, ncpus);
	mdl_fini(m);
	free(s);
	return err == -EFAULT ? 0 : err; /* a broken invariant is in the checks */
}

int mdl_seed001(const struct mdl_opts *o, struct mdl_seed *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->id = "seed001";
	snprintf(sd->title, sizeof(sd->title),
		 "receive-side mod_timer: 2.4's global timer lock vs per-CPU bases and the fast "
		 "path");
	uint64_t warm = 5000000, run = 50000000;
	unsigned cpus[2] = {4, 8}, ncpu = 2;
	if (o->smoke) {
		warm = 2000000;
		run = 5000000;
	}
	if (o->full)
		run = 200000000;
	if (o->cpus) {
		cpus[0] = o->cpus;
		ncpu = 1;
	}
	snprintf(sd->scale, sizeof(sd->scale),
		 "scale: 8 NICs at 1 Gbit/s, 1500-byte frames (81,274/s each), a connection and a "
		 "reader per NIC, NIC i on CPU i mod N; N = %u%s CPUs (the seed: 4 and 8); tg3 "
		 "coalescing 50us/5, a 200-frame ring; HZ %u (ia64's: 1024); two re-arms a frame "
		 "(delayed ACK, keepalive); CPU-path costs x%.0f for 2004's Itanium 2, hand-offs "
		 "across NUMAlink; %.0f ms simulated after %.0f ms, per row",
		 cpus[0], ncpu > 1 ? " and 8" : "", o->hz ? o->hz : HZ24, ERA, run / 1e6,
		 warm / 1e6);
	static const char *cols[] = {"mod_timer_pct", "mod_timer_rank", "lock_wait_pct",
				     "fast_path_pct", "frames_per_s", "drops_per_s", "busy_pct",
				     "lock_contended_pct"};
	static const char *heads[] = {"mod_timer%", "rank", "lockwait%", "fastpath%", "frames/s",
				      "drops/s", "busy%", "contended%"};
	sd->ncols = sizeof(cols) / sizeof(cols[0]);
	memcpy(sd->col, cols, sizeof(cols));
	memcpy(sd->col_head, heads, sizeof(heads));
	int err = 0;
	for (unsigned ci = 0; ci < ncpu && !err; ci++)
		for (unsigned k = 0; k < NCFG && !err; k++) {
			err = run_row(o, &cfgs[k], cpus[ci], warm, run, sd, &sd->row[sd->nrows]);
			sd->nrows++;
		}
	if (err)
		return err;

	unsigned c0 = cpus[0];
	const struct mdl_row *g = mdl_find(sd, "global-2.4", c0, 0);
	const struct mdl_row *gf = mdl_find(sd, "global-2.4-fastpath", c0, 0);
	const struct mdl_row *ga = mdl_find(sd, "global-2.4-fastpath-notstamp", c0, 0);
	const struct mdl_row *pf = mdl_find(sd, "percpu-fastpath", c0, 0);
	const struct mdl_row *p = mdl_find(sd, "percpu", c0, 0);
	const struct mdl_row *g8 = ncpu > 1 ? mdl_find(sd, "global-2.4", cpus[1], 0) : NULL;
	struct lab_claims *cl = &sd->claims;
	cl->seed = "seed001";
	double gs = g ? mdl_row_get(g, "mod_timer_pct") : NAN;
	double fs = gf ? mdl_row_get(gf, "mod_timer_pct") : NAN;
	double as = ga ? mdl_row_get(ga, "mod_timer_pct") : NAN;
	struct lab_claim *a = lab_claim_add(cl, "mod_timer_before_after", 1, NAN,
		 "2.4's mod_timer is near the top of the profile (3rd, 15.7% of non-idle ticks on "
		 "4 CPUs; 2nd on 8) and in the noise after the patch and the timestamp change",
		 "two re-arms a frame, every one through timerlist_lock, whose line crosses "
		 "NUMAlink at each hand-off (2.4's inline spin shows as mod_timer); the fast path "
		 "skips the lock");
	a->model_run = g && ga;
	a->model_ratio = as > 0 ? gs / as : NAN;
	snprintf(a->model_text, sizeof(a->model_text),
		 "%.1f%% of busy time, rank %.0f (%u CPUs; %.1f%%, rank %.0f on %u) -> %.2f%% "
		 "after",
		 gs, g ? mdl_row_get(g, "mod_timer_rank") : NAN, c0,
		 g8 ? mdl_row_get(g8, "mod_timer_pct") : NAN,
		 g8 ? mdl_row_get(g8, "mod_timer_rank") : NAN, g8 ? g8->cpus : 0, as);
	int top3 = g && mdl_row_get(g, "mod_timer_rank") <= 3;
	if (top3 && as < 1.0)
		lab_claim_model_word(a, LAB_W_REP, "the rank and the drop into the noise (under 1%%)");
	else if (top3)
		lab_claim_model_word(a, LAB_W_DIR, "the top of the profile, not the drop into the "
				     "noise");
	else
		lab_claim_model_word(a, LAB_W_NOT, "not in the top 3");
	struct lab_claim *b = lab_claim_add(cl, "fast_path_alone", 1, NAN,
		 "the patch (the 2.6 fast path) is what took mod_timer out (the after run also "
		 "stopped timestamping every frame: the post credits both at once)",
		 "at 81k frames/s a connection re-arms its timers ~80 times a jiffy to the same "
		 "expiry: the fast path returns without the lock; the timestamp only costs other "
		 "functions");
	b->model_run = g && gf;
	b->model_ratio = fs > 0 ? gs / fs : NAN;
	snprintf(b->model_text, sizeof(b->model_text),
		 "fast path alone: %.1f%% -> %.2f%% (%.0f%% of re-arms hit it); both: %.2f%%; "
		 "per-CPU + fast path %.2f%%",
		 gs, fs, gf ? mdl_row_get(gf, "fast_path_pct") : NAN, as,
		 pf ? mdl_row_get(pf, "mod_timer_pct") : NAN);
	struct lab_claim *t = lab_claim_add(cl, "mod_timer_top", 1, NAN,
		 "with 2.4's global timerlist_lock mod_timer is near the top of the profile: 3rd on "
		 "4 CPUs (15.7% of the busy ticks), 2nd on 8",
		 "every receiving CPU re-arms two timers a frame through the one lock; the wait "
		 "and the line's trips across NUMAlink are spent inside mod_timer");
	t->model_run = g != NULL;
	t->model_ratio = gs / 1.0; /* its share over 1% of the profile, as the live claim */
	snprintf(t->model_text, sizeof(t->model_text),
		 "%.1f%% of busy time, rank %.0f (%u CPUs); %.1f%%, rank %.0f (%u CPUs)", gs,
		 g ? mdl_row_get(g, "mod_timer_rank") : NAN, c0,
		 g8 ? mdl_row_get(g8, "mod_timer_pct") : NAN,
		 g8 ? mdl_row_get(g8, "mod_timer_rank") : NAN, g8 ? g8->cpus : 0);
	if (t->model_run) {
		if (mdl_row_get(g, "mod_timer_rank") <= 3)
			lab_claim_model_word(t, LAB_W_REP, "top 3");
		else
			lab_claim_model_word(t, LAB_W_NOT, "below 3rd");
	}
	const struct mdl_row *pf8 = ncpu > 1 ? mdl_find(sd, "percpu-fastpath", cpus[1], 0) : NULL;
	struct lab_claim *u = lab_claim_add(cl, "pps_cpu_fast_over_gl", 1, NAN,
		 "the lock's cost is CPU: with per-CPU bases and the fast path each CPU receives "
		 "more packets per second of its time (the post gives no figure)",
		 "the time 2.4's CPUs spent waiting for timerlist_lock and moving its line goes "
		 "to receiving frames instead");
	{
		const struct mdl_row *x = pf8 ? pf8 : pf, *y = pf8 ? g8 : g;
		double px = x ? mdl_row_get(x, "frames_per_s") /
				       (mdl_row_get(x, "busy_pct") / 100 * x->cpus) : NAN;
		double py = y ? mdl_row_get(y, "frames_per_s") /
				       (mdl_row_get(y, "busy_pct") / 100 * y->cpus) : NAN;
		u->model_run = x && y;
		u->model_ratio = px / py;
		snprintf(u->model_text, sizeof(u->model_text),
			 "x%.2f (percpu-fastpath/global-2.4: %.0f vs %.0f frames per CPU-second, "
			 "%u CPUs)", u->model_ratio, px, py, x ? x->cpus : 0);
	}
	mdl_claims_finish(cl);
	if (g && p && pf)
		mdl_note(sd,
			 "the two changes apart (%u CPUs): the fast path alone takes mod_timer "
			 "from %.1f%% to %.2f%% of busy time; dropping the per-frame timestamp "
			 "then only rescales the other functions (%.2f%%).  Per-CPU bases without "
			 "the fast path: %.1f%% (no lock waits: each NIC's timers stay on its "
			 "CPU); with it %.2f%%",
			 c0, gs, fs, as, mdl_row_get(p, "mod_timer_pct"),
			 mdl_row_get(pf, "mod_timer_pct"));
	mdl_note(sd, "the profile is the model's CPU time by function, of busy time (the seed's "
		     "ticks include 60 idle CPUs' cpu_idle: its 218033 of 23581672 is 15.7%% of "
		     "the non-idle ticks)");
	return 0;
}
