/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed001: receive-side mod_timer contention (Steve Modica,
 * "simple mod_timer patch": 2.4's global timerlist_lock and a mod_timer
 * without a fast path were second in the readprofile of 8 gigabit NICs
 * receiving; the 2.6 fast path pushed mod_timer into the noise).
 *
 * K receiving threads, each the "NIC" of one CPU, deliver packets to
 * sockets of their own; per packet, what tcp_rcv does: read the clock (the
 * packet's time stamp), copy the 1500-byte frame (__copy_user), and re-arm
 * the socket's delayed-ACK timer (now + 40 ms) and keepalive timer (now +
 * 7200 s) with mod_timer.  Expiries are in jiffies at HZ 1000, so a socket's
 * packets within one jiffy re-arm to the same expiry: the 2.6 fast path.
 * Configurations, the same calls behind each:
 *   (a) the 2.4 design: one wheel behind one global lock, no fast path
 *       (tools/common/gl24.c's multi-thread table);
 *   (b) pinwheel's per-CPU bases, re-armed through pw__mod_timer_lane()
 *       (the locked part: no fast path 1);
 *   (c) pinwheel's per-CPU bases with pw_mod_timer() (2.6);
 * then (a) and (c) again with one thread, for the trend a 2-core VM can
 * show.  Each runs under the sampling profiler (profile.c).  (a), (b) and
 * (c) run R times each (--runs, 5), round by round, --seconds / R a run;
 * the trend rows once each.  The table gives each row's medians; the
 * claims (mod_timer's share under the 2.4 lock against 1%, (a) over (c),
 * (b) over (c), and packets per CPU-second (c) over (a)) the ratio of the
 * means over the valid runs with its bootstrap interval (verdict.c).
 *
 * The files: this one the experiment (the configurations, their runs
 * round by round, the medians, table, claims and summary); seed001_run.c
 * one configuration's run (the receiving threads, the per-packet path,
 * the figures read back); seed001.h what the two share.
 *
 * Threads: lab_seed001() on the main thread; it starts the receiving
 * threads of each configuration and joins them.  A receiving thread serves
 * one CPU of the runtime ((b), (c)) and runs its own timers with
 * pw_run_timers(), taking (through the library) only its own CPU's base
 * lock; in (a) every thread takes the design's one spin lock.
 * Shared between main and receivers: the go/stop flags and each thread's
 * packet counter (atomics); the rest is read by main after the join.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>
#include <pinwheel/timer.h>

#include "seed001.h"

/* ------------------------------------------------------------ the table */

/* Packets per second of the process's CPU time.  Context: main thread. */
static double per_cpu(const struct rx_figures *f)
{
	return f->cpu_s > 0 ? (double)f->packets / f->cpu_s : NAN;
}

enum {
	C_NAME, C_THREADS, C_PPS, C_PPS_T, C_PPS_CPU, C_TIMER, C_MT, C_RANK, C_WAITS, C_FAST, C_RATIO,
	C_CPUS, NCOLS
};

/* Row @row's cells from @f; @base: the 2.4 row it is compared with.
 * Context: main thread. */
static void fill_row(struct lab_result *r, unsigned row, enum cfg cfg, unsigned nthreads,
		     const struct rx_figures *f, const struct rx_figures *base)
{
	lab_cellf(r, row, C_THREADS, nthreads, "%.0f");
	lab_cellf(r, row, C_PPS, f->pps, "%.0f");
	lab_cellf(r, row, C_PPS_T, f->pps_thread, "%.0f");
	if (f->cpu_s > 0)
		lab_cellf(r, row, C_PPS_CPU, (double)f->packets / f->cpu_s, "%.0f");
	if (f->ticks) {
		lab_cellf(r, row, C_TIMER, 100 * f->timer_share, "%.1f%%");
		lab_cellf(r, row, C_MT, 100 * f->mt_share, "%.1f%%");
		if (f->mt_rank)
			lab_cellf(r, row, C_RANK, f->mt_rank, "%.0f");
		else
			lab_cells(r, row, C_RANK, "not sampled");
	} else {
		lab_cells(r, row, C_TIMER, "n/a");
		lab_cells(r, row, C_MT, "n/a");
		lab_cells(r, row, C_RANK, "n/a");
	}
	if (f->seconds > 0)
		lab_cellf(r, row, C_CPUS, f->cpu_s / f->seconds, "%.2f");
	if (cfg == CFG_GL) {
		lab_cells(r, row, C_WAITS, "n/a");
		lab_cells(r, row, C_FAST, "none");
	} else {
		lab_cellf(r, row, C_WAITS, (double)f->lock_waits, "%.0f");
		lab_cellf(r, row, C_FAST, f->armed ? 100.0 * (double)f->fast_path / (double)f->armed : 0,
			  "%.1f%%");
	}
	if (base && per_cpu(base) > 0 && per_cpu(f) > 0)
		lab_cellf(r, row, C_RATIO, per_cpu(f) / per_cpu(base), "%.2fx");
}

/* The experiment (lab.h).  Context: main thread.  Return: 0 or -errno. */
int lab_seed001(const struct lab_opts *o, struct lab_result *r)
{
	unsigned k = o->threads ? o->threads : (o->cpus ? o->cpus : lab_online_cpus());
	unsigned nsock = o->sockets ? o->sockets : 256;
	if (o->smoke) {
		/* 8 sockets: a batch of 16 packets hits one twice (fast path) */
		nsock = nsock < 8 ? nsock : 8;
		if (k > 4)
			k = 4;
	}
	if (k > PW_MAX_CPUS || (uint64_t)k * nsock > 32u * 1024 * 1024) {
		lab_progress(r, "bad size: %u threads x %u sockets (at most %u threads, 32M sockets "
				"in all)", k, nsock, PW_MAX_CPUS);
		return -EINVAL;
	}
	unsigned k1 = k > 1 ? 1 : 2; /* the trend rows: 1 thread (2 where K is 1) */

	snprintf(r->title, sizeof(r->title),
		 "receive-side mod_timer: one global timer lock (2.4) vs per-CPU bases, without "
		 "and with the fast path (2.6)");
	snprintf(r->scale, sizeof(r->scale),
		 "%u receiving threads x %u sockets, 2 timers each (delack 40 ms, keepalive "
		 "7200 s) re-armed per packet with a 1500 B copy, HZ %u, %u interleaved runs of %.2f s "
		 "per configuration (the trend rows: one), profiler %u Hz of CPU time; the seed: 4 "
		 "and 8 CPUs receiving from 8 tg3 gigabit NICs, 1500 B frames, 64p SGI",
		 k, nsock, HZ, lab_runs(o), lab_run_seconds(o, 0.15), PROF_HZ);
	static const char *const cols[] = {
		"configuration", "config",
		"threads", "threads",
		"packets/s", "pps",
		"per thread", "pps_per_thread",
		"per CPU-s", "packets_per_cpu_s",
		"timer share", "timer_share_pct",
		"mod_timer+lock", "mod_timer_share_pct",
		"mod_timer rank", "mod_timer_rank",
		"lock waits", "lock_waits",
		"fast-path hits", "fast_path_pct",
		"vs 2.4 per CPU-s", "per_cpu_s_vs_global_lock",
		"CPUs busy", "cpus_busy",
	};
	lab_columns(r, NCOLS, cols);
	snprintf(r->series_label, sizeof(r->series_label), "packets/s");

	struct {
		enum cfg cfg;
		unsigned threads;
		const char *name, *key;
	} rows[] = {
		{CFG_GL, k, "2.4 global lock", "global_lock"},
		{CFG_SLOW, k, "per-CPU, no fast path", "percpu_slow"},
		{CFG_FAST, k, "per-CPU + fast path (2.6)", "percpu_fast"},
		{CFG_GL, k1, NULL, "global_lock_1"},
		{CFG_FAST, k1, NULL, "percpu_fast_1"},
	};
	char name3[LAB_CELL], name4[LAB_CELL];
	snprintf(name3, sizeof(name3), "2.4 global lock, %u thread%s", k1, k1 == 1 ? "" : "s");
	snprintf(name4, sizeof(name4), "per-CPU + fast path, %u thread%s", k1, k1 == 1 ? "" : "s");
	rows[3].name = name3;
	rows[4].name = name4;
	if (k1 == 2) {
		rows[3].key = "global_lock_2";
		rows[4].key = "percpu_fast_2";
	}
	/*
	 * The three configurations run R times each (--runs, 5; --smoke 2),
	 * round by round, seconds / R each; the two trend rows (the other
	 * thread count) once each, after them, for the table only.  The
	 * figures of a row are the medians of its valid runs; the profile
	 * shown is its last run's.
	 */
	unsigned reps = lab_runs(o);
	double per = lab_run_seconds(o, 0.15);
	static struct rx_figures runs[5][LAB_MAX_RUNS];
	unsigned nrun[5] = {0}, row_of[5];
	for (unsigned i = 0; i < 5; i++)
		row_of[i] = lab_row(r, rows[i].name, rows[i].key);
	for (unsigned kk = 0; kk < reps + 1; kk++)
		for (unsigned i = 0; i < 5; i++) {
			int trend = i >= 3;
			if (trend != (kk == reps))
				continue;
			char what[64];
			if (trend)
				snprintf(what, sizeof(what), "one run, %.2f s", per);
			else
				snprintf(what, sizeof(what), "run %u of %u, %.2f s", kk + 1, reps, per);
			int err = s1_run_config(o, r, row_of[i], rows[i].cfg, rows[i].threads, nsock, per,
					     (trend ? 0 : kk) * per, what, &runs[i][nrun[i]]);
			if (err) {
				lab_progress(r, "%s: %s", rows[i].name, strerror(-err));
				return err;
			}
			nrun[i]++;
		}
	/* each row's figures: the medians of its valid runs (one run: its own) */
	struct rx_figures fig[5];
	static double v_pcpu[5][LAB_MAX_RUNS], v_mt[5][LAB_MAX_RUNS];
	double pcpu_lo[5], pcpu_hi[5], mt_lo[5], mt_hi[5];
	for (unsigned i = 0; i < 5; i++) {
		const struct lab_run *rr = r->run[row_of[i]];
		unsigned n = nrun[i];
		double v[LAB_MAX_RUNS];
		fig[i] = runs[i][n - 1]; /* the last run: the profile's names, its counts */
		for (unsigned j = 0; j < n; j++) {
			v_pcpu[i][j] = per_cpu(&runs[i][j]);
			v_mt[i][j] = runs[i][j].ticks ? 100 * runs[i][j].mt_share : NAN;
		}
#define MED(field)                                                                 \
	do {                                                                       \
		for (unsigned j = 0; j < n; j++)                                   \
			v[j] = (double)runs[i][j].field;                           \
		fig[i].field = lab_median(v, rr, n, NULL, NULL);                   \
	} while (0)
		MED(pps);
		MED(pps_thread);
		MED(timer_share);
		MED(mt_share);
		MED(seconds);
		MED(cpu_s);
		MED(mt_rank);
#undef MED
		/* the counts whose ratios the table shows, as medians too */
		for (unsigned j = 0; j < n; j++)
			v[j] = runs[i][j].armed ? (double)runs[i][j].fast_path / (double)runs[i][j].armed
						: 0;
		double fast = lab_median(v, rr, n, NULL, NULL);
		for (unsigned j = 0; j < n; j++)
			v[j] = (double)runs[i][j].lock_waits;
		fig[i].lock_waits = (uint64_t)lab_median(v, rr, n, NULL, NULL);
		fig[i].armed = 1000000;
		fig[i].fast_path = (uint64_t)(fast * 1e6);
		/* per CPU-s = packets / cpu_s: its median, carried by packets */
		double pc = lab_median(v_pcpu[i], rr, n, &pcpu_lo[i], &pcpu_hi[i]);
		fig[i].packets = (uint64_t)(pc * fig[i].cpu_s);
		lab_median(v_mt[i], rr, n, &mt_lo[i], &mt_hi[i]);
	}
	for (unsigned i = 0; i < 5; i++) {
		const struct rx_figures *base = i < 3 ? &fig[0] : &fig[3];
		fill_row(r, row_of[i], rows[i].cfg, rows[i].threads, &fig[i], base);
		if (nrun[i] > 1) {
			char cell[LAB_CELL];
			snprintf(cell, sizeof(cell), "%.0f [%.0f-%.0f]", per_cpu(&fig[i]), pcpu_lo[i],
				 pcpu_hi[i]);
			lab_cells(r, row_of[i], C_PPS_CPU, cell);
			if (fig[i].ticks) {
				snprintf(cell, sizeof(cell), "%.1f%% [%.1f-%.1f]", 100 * fig[i].mt_share,
					 mt_lo[i], mt_hi[i]);
				lab_cells(r, row_of[i], C_MT, cell);
			}
		}
	}

	/* the claims */
	struct lab_claims *cl = &r->claims;
	cl->seed = r->id;
#define ARM(i, vals) {.cfg = rows[i].key, .n = nrun[i], .v = vals[i], .run = r->run[row_of[i]]}
	const struct lab_arm gl_mt = ARM(0, v_mt), slow_mt = ARM(1, v_mt), fast_mt = ARM(2, v_mt);
	const struct lab_arm gl_pc = ARM(0, v_pcpu), fast_pc = ARM(2, v_pcpu);
#undef ARM
	const struct lab_arm noise = {.constant = 1.0}; /* 1% of busy ticks: "the noise" */
	struct lab_claim *c;
	if ((c = lab_claim_add(cl, "mod_timer_top", +1, NAN,
			       "with 2.4's global timerlist_lock mod_timer is near the top of the "
			       "profile: 3rd on 4 CPUs (15.7% of the busy ticks), 2nd on 8",
			       "two re-arms a packet, each through the one lock the other receiving "
			       "CPUs take too: the wait is spent inside mod_timer (2.4 inlined the "
			       "spin)")))
		lab_claim_live(c, &gl_mt, &noise, "%.1f%%");
	if ((c = lab_claim_add(cl, "mod_timer_before_after", +1, NAN,
			       "with the 2.6 code mod_timer \"dropped way down into the noise\": its "
			       "share before over after is large",
			       "per-CPU bases take no shared lock, and the fast path returns without "
			       "any lock when a timer is re-armed to the expiry it has")))
		lab_claim_live(c, &gl_mt, &fast_mt, "%.2f%%");
	if ((c = lab_claim_add(cl, "fast_path_alone", +1, NAN,
			       "the patch (the fast path: pending with the same expiry, return) is "
			       "what took mod_timer out",
			       "a socket's packets within one jiffy re-arm to the same expiry: all but "
			       "the first skip the lock and the wheel")))
		lab_claim_live(c, &slow_mt, &fast_mt, "%.2f%%");
	if ((c = lab_claim_add(cl, "pps_cpu_fast_over_gl", +1, NAN,
			       "the lock's cost is CPU: with per-CPU bases and the fast path each CPU "
			       "receives more packets per second of its time (the post gives no "
			       "figure)",
			       "the global lock's cache line moves between the receiving CPUs on "
			       "every re-arm, and a waiter spins")))
		lab_claim_live(c, &fast_pc, &gl_pc, "%.0f pkt/CPU-s");

	/* the profiler: it sampled, and named a static function (lab_copy_user,
	 * in no dynamic symbol table: found through .symtab) */
	double ticks = 0, cpu = 0, copy = 0, unknown = 0;
	for (unsigned i = 0; i < 5; i++)
		for (unsigned j = 0; j < nrun[i]; j++) {
			const struct rx_figures *x = &runs[i][j];
			ticks += (double)x->ticks;
			cpu += x->cpu_s;
			copy += x->copy_share * (double)x->ticks;
			unknown += x->unknown_share * (double)x->ticks;
		}
	lab_check(r, ticks > 0, "the profiler took no sample");
#if defined(__SANITIZE_THREAD__)
	/* TSan runs a signal handler later, from its own runtime: the
	 * interrupted PC is then in libtsan, never the program's */
	lab_note(r, "built with ThreadSanitizer: the profile names TSan's runtime, not the program");
#else
	lab_check(r, copy > 0, "no sample was resolved to lab_copy_user (.symtab)");
	lab_check(r, unknown <= ticks / 2, "%.0f of %.0f samples unresolved", unknown, ticks);
#endif

	/* the seed's figures beside ours */
	lab_summary(r, "seed, 2.4, 4 CPUs: mod_timer 218033 ticks = 0.92%% of 23.58M (idle "
		       "included), 3rd of the list after cpu_idle and tg3_poll; 8 CPUs: 550978 "
		       "ticks, 2nd; after the fix: not in the top 10 (\"into the noise\")");
	for (unsigned i = 0; i < 3; i++) {
		if (!fig[i].ticks)
			lab_summary(r, "ours, %s: no profile", rows[i].name);
		else if (fig[i].mt_rank)
			lab_summary(r, "ours, %s: mod_timer with its lock %.1f%% of the busy ticks "
				    "(median of %u runs; mostly %s), rank %d; all timer code %.1f%%",
				    rows[i].name, 100 * fig[i].mt_share, nrun[i], fig[i].mt_name,
				    fig[i].mt_rank, 100 * fig[i].timer_share);
		else
			lab_summary(r, "ours, %s: mod_timer not sampled (median of %u runs: in the "
				    "noise); all timer code %.1f%%",
				    rows[i].name, nrun[i], 100 * fig[i].timer_share);
	}
	lab_summary(r, "ours, %u thread%s: mod_timer with its lock %.1f%% (rank %d) under the 2.4 "
		       "lock, %.1f%% (rank %d) per-CPU with the fast path",
		    k1, k1 == 1 ? "" : "s", 100 * fig[3].mt_share, fig[3].mt_rank,
		    100 * fig[4].mt_share, fig[4].mt_rank);
	if (fig[0].pps > 0 && fig[3].pps > 0)
		lab_summary(r, "(c)/(a): packets/s %.2fx with %u threads (medians), %.2fx with %u (one "
			       "run); per CPU-s %.2fx and %.2fx",
			    fig[2].pps / fig[0].pps, k, fig[4].pps / fig[3].pps, k1,
			    per_cpu(&fig[2]) / per_cpu(&fig[0]), per_cpu(&fig[4]) / per_cpu(&fig[3]));
	{
		/* more threads over fewer: rows 0 and 2 have K, 3 and 4 the other count */
		int more = k > k1;
		const struct rx_figures *gl_hi = &fig[more ? 0 : 3], *gl_lo = &fig[more ? 3 : 0];
		const struct rx_figures *fa_hi = &fig[more ? 2 : 4], *fa_lo = &fig[more ? 4 : 2];
		lab_summary(r, "the trend, packets per CPU-s with %u threads / with %u (1.00x: adding "
			       "threads costs nothing): 2.4 global lock %.2fx, per-CPU + fast path %.2fx",
			    more ? k : k1, more ? k1 : k, per_cpu(gl_hi) / per_cpu(gl_lo),
			    per_cpu(fa_hi) / per_cpu(fa_lo));
	}
	lab_summary(r, "delayed ACKs in (b)/(c): %llu/%llu during the runs (a socket 40 ms "
		       "without a packet: its thread was off CPU), %llu/%llu in the drain (one per "
		       "socket), none early, the latest %llu jiffies after its expiry",
		    (unsigned long long)(fig[1].delacks - fig[1].drained),
		    (unsigned long long)(fig[2].delacks - fig[2].drained),
		    (unsigned long long)fig[1].drained, (unsigned long long)fig[2].drained,
		    (unsigned long long)(fig[1].max_late > fig[2].max_late ? fig[1].max_late
									   : fig[2].max_late));

	/* the honest reading */
	struct lab_prof_info pi;
	lab_prof_info(&pi);
	lab_note(r, "the profiler asked for %u Hz of CPU time and got %.0f ticks per CPU-s: %s%s; "
		    "per CPU-s (packets per second of this process's CPU time) corrects for a VM "
		    "whose CPUs other work shares",
		 PROF_HZ, cpu > 0 ? ticks / cpu : 0,
		 pi.sampler == LAB_PROF_PERF
			 ? "perf cpu-clock per thread, its period moved off the millisecond grid "
			   "so as not to alias with the jiffies (docs/lab.md)"
			 : "ITIMER_PROF is checked on the kernel's tick, and its samples alias "
			   "with the jiffies",
		 pi.sampler != LAB_PROF_PERF && pi.fallback[0] ? " (perf was not allowed)" : "");
	lab_note(r, "the profile counts CPU time only, so shares are of busy "
		    "time; the seed's 0.92%% was of all ticks, 94%% of them cpu_idle: of its busy "
		    "ticks mod_timer was about %.0f%%",
		 100.0 * 218033 / (23581672.0 - 22193477.0));
	double busy = fig[0].seconds > 0 ? fig[0].cpu_s / fig[0].seconds : 0;
	unsigned kmax = k > k1 ? k : k1, kmin = k > k1 ? k1 : k;
	lab_note(r, "what contention on one lock costs grows with the CPUs taking it: %u "
		    "threads on this %u-CPU machine%s can show the start of it (the trend line, and "
		    "mod_timer's share, %u vs %u thread%s), not the seed's 4-8 NICs, where the 2.4 "
		    "lock's cache line bounced between more CPUs",
		 kmax, lab_online_cpus(), kmax > lab_online_cpus() ? " (oversubscribed)" : "",
		 kmax, kmin, kmin == 1 ? "" : "s");
	if (k > 1 && busy < 0.8 * k)
		lab_note(r, "the %u threads of the 2.4 row kept only %.2f CPUs busy: this machine's "
			    "CPUs were shared with other work, so a thread holding the 2.4 spin lock "
			    "was at times preempted while the other spun (a kernel spinlock holder is "
			    "not preempted): packets/s depends on that load, per CPU-s less so",
			 k, busy);
	lab_note(r, "ranks are of a short list (the lab's receive path has ~10 functions where "
		    "the seed's kernel had hundreds), so mod_timer's share is the figure to read; "
		    "the seed's \"into the noise\" is its share falling to the level of the "
		    "profiler's sampling error");
	lab_note(r, "lab_mod_timer is pw_mod_timer() (inline in the library) given a frame of its "
		    "own so that its fast path is named; in (a) gl_mod_timer is inlined into the "
		    "design's mt_rearm; every packet also reads the clock once (the seed's "
		    "do_gettimeofday/sn_gettimeoffset) and copies 1500 B (lab_copy_user)");
	lab_note(r, "lock waits: pinwheel's per-CPU base locks that had to wait; each thread "
		    "re-arms only its own sockets' timers, so they stay near 0; the 2.4 design's "
		    "spin lock has no counter (its cost is the pthread_spin_lock ticks)");
	return 0;
}
