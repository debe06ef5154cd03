/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed003: mq + 8 netem (the seed's tc script verbatim, with
 * its estimators) on an 8-queue device "eth1", traffic from every CPU
 * through XPS; the qdisc watchdogs not pinned under PUSH (the seed's
 * before: pre-6.9 timer_migration=1), pinned (the seed's fix), and not
 * pinned under PULL (Linux 6.9); then, below 8 CPUs and not in --smoke,
 * two trend rows with the seed's geometry (8 CPUs, a CPU per TX queue,
 * oversubscribed on a smaller machine), migrated and pinned.  Each
 * configuration gets a fresh runtime and device; the pinning switch is
 * read at every watchdog arm, set here before the qdiscs exist.  Measured per configuration: the
 * share of CPU time spent waiting for locks (the qdisc root locks'
 * statistics, pw_netdev_txq_stats(); the timer base locks',
 * pw_stats_read()), the share of contended acquisitions, the profile's
 * spin share (profile.c, when it works), who did the dequeues (per CPU,
 * and how many by a CPU that does not own the queue by XPS), the packets/s
 * sent, each netem's measured delay against its configured one, and the
 * timers pushed per second.
 *
 * Runs and claims: the three main configurations run R times each
 * (--runs, 5), round by round, --seconds / R a run after a 250 ms warm-up;
 * the trend rows once each, after them.  The table gives each row's
 * medians; the claims (lock-wait share and the busiest CPU's and foreign
 * CPUs' dequeue shares, migrated over pinned; lock waits migrated over
 * PULL) the ratio of the means over the valid runs with its bootstrap
 * interval (verdict.c).  A migrated run that pushed nothing fails its
 * invariant and is left out of the claims too.
 *
 * The load (why PUSH pushes): CPU 0 is the busy CPU, its poll hook always
 * reporting work (a NAPI loop that never runs dry, as bench/idle.c), with
 * a pinned 1 ms hrtimer (its scheduler tick: what lets PUSH put another
 * CPU's hrtimer there, since a pushed hrtimer may not become the target's
 * first one).  The other CPUs are idle as the policy sees them but for
 * packets: the main thread queues a work item on every CPU each
 * millisecond, which sends that CPU's share of o->pps packets/s (by the
 * clock, so a late tick sends more), spread over its XPS queues by hash.
 * A netem whose next packet is not due arms its watchdog from the CPU that
 * ran the queue; an idle CPU's plain (not pinned) start goes to CPU 0 under
 * PUSH, the watchdog fires there, CPU 0 dequeues and re-arms it locally:
 * every queue ends up dequeued by CPU 0 while its owner keeps enqueueing,
 * two CPUs on one root lock -- the seed's pile-up.
 *
 * Invariants (lab_check): every packet offered came back exactly once
 * (sent + dropped == offered, none twice, the pool whole after destroy);
 * once drained the qdiscs hold nothing and their sent/drop counts equal
 * the driver's; every netem runs an estimator; no packet left before its
 * netem delay; every queue carried traffic; and the configuration was in
 * force: migrated (2+ CPUs), timers were pushed and some watchdogs fired
 * on a CPU that does not own their queue; pinned or PULL, every dequeue
 * was done by the queue's own CPU (a pinned watchdog fires where its
 * queue's owner armed it; PULL leaves hrtimers local).
 *
 * Packets: the harnesses' pool and driver (tools/common/pktpool.h): a
 * slot per CPU, preallocated (60 ms of the offered traffic in all), popped
 * by that CPU's sender; the driver counts what ops.xmit and ops.drop get
 * (sent, dropped by reason) and puts each packet back in its sender's slot
 * from any CPU (the main thread at device destroy), checking that none
 * comes back twice.  Each packet carries its enqueue time (struct s3_pkt).
 *
 * The files: this one the experiment (the configurations, their runs
 * round by round, the medians, table, claims and summary); seed003_run.c
 * one configuration's run (the pool, driver, load and measurement above);
 * seed003.h what the two share.
 *
 * Threads: lab_seed003() on the main thread (configuration, the ticker,
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

#include "seed003.h"

/* ------------------------------------------------------------ the configurations */

static const struct s3_config configs[] = {
	{"migrated (PUSH, not pinned)", "push_unpinned", PW_MIGRATION_PUSH, 0,
	 "39.24% _raw_spin_lock", 39.24, 0},
	{"pinned (the fix)", "pinned", PW_MIGRATION_PUSH, 1, "4.83% _raw_spin_lock", 4.83, 0},
	{"not pinned, PULL (6.9)", "pull_unpinned", PW_MIGRATION_PULL, 0, "-", NAN, 0},
	/* the trend (not in --smoke, and only below 8 CPUs): the seed's
	 * geometry, a CPU per TX queue, all feeding the one busy CPU */
	{"trend: migrated, 8 CPUs", "push_unpinned_8cpus", PW_MIGRATION_PUSH, 0, "-", NAN, 1},
	{"trend: pinned, 8 CPUs", "pinned_8cpus", PW_MIGRATION_PUSH, 1, "-", NAN, 1},
};
#define TREND_CPUS 8
#define NMAIN 3
#define NCONF (sizeof(configs) / sizeof(configs[0]))

/* ------------------------------------------------------------ the experiment */

/* What the scale line says of the trend rows.  Main thread. */
static const char *nconf_note(const struct lab_opts *o, unsigned ncpus)
{
	static char b[120];
	if (o->smoke || ncpus >= TREND_CPUS)
		return "";
	snprintf(b, sizeof(b), " (the trend rows: %u CPUs%s, one run)", TREND_CPUS,
		 TREND_CPUS > lab_online_cpus() ? ", more than the machine's cores" : "");
	return b;
}

/* "a/b" as a ratio, or why there is none.  Main thread. */
static void fmt_ratio(char *buf, size_t n, double a, double b)
{
	if (b > 0)
		snprintf(buf, n, "%.2fx", a / b);
	else if (a > 0)
		snprintf(buf, n, "no waits at all after");
	else
		snprintf(buf, n, "no waits either way");
}

/* The experiment: every configuration, then the summary.  Main thread.
 * Return: 0 (invariants in r->failed), or -errno when a run could not be set up. */
int lab_seed003(const struct lab_opts *o, struct lab_result *r)
{
	unsigned ncpus = o->cpus ? o->cpus : lab_online_cpus();
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	unsigned pps = o->pps ? o->pps : 20000;
	struct lab_opts oo = *o;
	if (o->smoke && pps > 2000)
		pps = 2000;
	oo.pps = pps;
	snprintf(r->title, sizeof(r->title),
		 "mq + 8 netem (the seed's tc script), qdisc watchdogs migrated vs pinned");
	snprintf(r->scale, sizeof(r->scale),
		 "%u CPUs (CPU 0 busy), %u pkt/s per CPU of %u bytes, 8 TX queues by XPS, %u "
		 "interleaved runs of %.2f s per configuration%s; the seed: a receiver with 8 TX "
		 "queues, many CPUs, TCP_STREAM",
		 ncpus, pps, PKT_LEN, lab_runs(o), lab_run_seconds(o, 0.15),
		 nconf_note(o, ncpus));
	static const char *const cols[] = {
		"configuration", "config",
		"qdisc lock wait", "qdisc_lock_wait_pct",
		"contended", "contended_pct",
		"timer lock wait", "timer_lock_wait_pct",
		"spin (profile)", "profile_spin_pct",
		"dequeues by CPU", "cpu0_dequeue_pct",
		"foreign deq", "foreign_dequeue_pct",
		"sent pkt/s", "sent_pps",
		"delay err worst", "delay_err_worst_ms",
		"pushed/s", "pushed_per_s",
		"seed", "seed_raw_spin_lock_pct",
	};
	lab_columns(r, 11, cols);
	snprintf(r->series_label, sizeof(r->series_label), "qdisc lock-wait share %%, per interval");

	/*
	 * The three main configurations run R times each (--runs, 5; --smoke
	 * 2), round by round, seconds / R each; the trend rows once each,
	 * after them, for the table only.  A row's figures are the medians of
	 * its valid runs (per-queue delays: the median of the means, the
	 * largest max); the profile shown is its last run's.
	 */
	static struct s3_out runs[NCONF][LAB_MAX_RUNS];
	static struct s3_out out[NCONF]; /* the medians */
	unsigned nconf = o->smoke || ncpus >= TREND_CPUS ? NMAIN : NCONF;
	unsigned reps = lab_runs(o), nrun[NCONF] = {0}, row_of[NCONF];
	double per = lab_run_seconds(o, 0.15);
	for (unsigned i = 0; i < nconf; i++)
		row_of[i] = lab_row(r, configs[i].name, configs[i].key);
	for (unsigned k = 0; k <= reps; k++)
		for (unsigned i = 0; i < nconf; i++) {
			const struct s3_config *cf = &configs[i];
			if ((k == reps) != (cf->trend != 0))
				continue;
			struct lab_opts oc = oo;
			oc.cpus = cf->trend ? TREND_CPUS : ncpus;
			oc.seconds = per;
			char what[160];
			if (cf->trend)
				snprintf(what, sizeof(what), "%s (%u CPUs, %u pkt/s each), one run", cf->name,
					 oc.cpus, oc.pps);
			else
				snprintf(what, sizeof(what), "%s (%u CPUs, %u pkt/s each), run %u of %u",
					 cf->name, oc.cpus, oc.pps, k + 1, reps);
			struct s3_out *x = &runs[i][nrun[i]];
			memset(x, 0, sizeof(*x));
			int err = s3_run_config(&oc, r, row_of[i], cf, (cf->trend ? 0 : k) * per, what, x);
			if (err)
				return err;
			nrun[i]++;
		}
	/* the medians, field by field, of each row's valid runs */
	static double v_wait[NCONF][LAB_MAX_RUNS], v_one[NCONF][LAB_MAX_RUNS],
		v_foreign[NCONF][LAB_MAX_RUNS];
	double fgn_lo[NCONF], fgn_hi[NCONF];
	for (unsigned i = 0; i < nconf; i++) {
		unsigned n = nrun[i];
		const struct lab_run *rr = r->run[row_of[i]];
		struct s3_out *m = &out[i];
		double v[LAB_MAX_RUNS];
		*m = runs[i][n - 1];
#define MED(dst, expr)                                                             \
	do {                                                                       \
		for (unsigned j = 0; j < n; j++) {                                 \
			const struct s3_out *y = &runs[i][j];                      \
			v[j] = (double)(expr);                                     \
		}                                                                  \
		dst = lab_median(v, rr, n, NULL, NULL);                            \
	} while (0)
		MED(m->qwait_share, y->qwait_share);
		MED(m->tlock_share, y->tlock_share);
		MED(m->contended_pct, y->contended_pct);
		MED(m->sent_s, y->sent_s);
		MED(m->offered_s, y->offered_s);
		MED(m->pushed_s, y->pushed_s);
		MED(m->foreign_pct, y->foreign_pct);
		MED(m->worst_err_ms, y->worst_err_ms);
		MED(m->poll_gap_ms, y->poll_gap_ms);
		MED(m->steal_pct, y->steal_pct);
		MED(m->cpu0_ran_pct, y->cpu0_ran_pct);
		double vol;
		MED(vol, y->cpu0_vol);
		m->cpu0_vol = (uint64_t)vol;
		for (unsigned c = 0; c < m->ncpus && c <= MAX_CPUS; c++)
			MED(m->cpu_share[c], y->cpu_share[c]);
		for (unsigned q = 0; q < NQ; q++) {
			MED(m->mean_ms[q], y->mean_ms[q]);
			m->max_ms[q] = 0;
			for (unsigned j = 0; j < n; j++)
				if (runs[i][j].max_ms[q] > m->max_ms[q])
					m->max_ms[q] = runs[i][j].max_ms[q];
		}
		MED(m->spin_share, y->prof_ok ? y->spin_share : NAN);
#undef MED
		m->offered = m->late = m->pool_empty = 0;
		m->prof_ok = 0;
		for (unsigned j = 0; j < n; j++) {
			const struct s3_out *y = &runs[i][j];
			m->offered += y->offered;
			m->late += y->late;
			m->pool_empty += y->pool_empty;
			m->prof_ok |= y->prof_ok;
			v_wait[i][j] = y->qwait_share + y->tlock_share;
			v_foreign[i][j] = y->foreign_pct;
			double one = 0;
			for (unsigned c = 0; c < y->ncpus && c <= MAX_CPUS; c++)
				one = y->cpu_share[c] > one ? y->cpu_share[c] : one;
			v_one[i][j] = one;
		}
		lab_median(v_foreign[i], rr, n, &fgn_lo[i], &fgn_hi[i]);
	}
	for (unsigned i = 0; i < nconf; i++) {
		const struct s3_config *cf = &configs[i];
		unsigned row = row_of[i];
		struct s3_out *x = &out[i];
		lab_cellf(r, row, 1, x->qwait_share, "%.2f%%");
		lab_cellf(r, row, 2, x->contended_pct, "%.2f%%");
		lab_cellf(r, row, 3, x->tlock_share, "%.3f%%");
		if (x->prof_ok)
			lab_cellf(r, row, 4, x->spin_share, "%.2f%%");
		else
			lab_cells(r, row, 4, "n/a");
		char cell[400]; /* lab_cells() keeps LAB_CELL of it */
		if (x->ncpus <= 3) {
			size_t n = 0;
			cell[0] = 0;
			for (unsigned c = 0; c < x->ncpus && n < sizeof(cell); c++)
				n += (size_t)snprintf(cell + n, sizeof(cell) - n, "%scpu%u %.0f%%",
						      c ? " / " : "", c, x->cpu_share[c]);
		} else {
			unsigned best = 0;
			for (unsigned c = 1; c < x->ncpus; c++)
				if (x->cpu_share[c] > x->cpu_share[best])
					best = c;
			snprintf(cell, sizeof(cell), "cpu%u %.0f%% (busiest of %u)", best,
				 x->cpu_share[best], x->ncpus);
		}
		lab_cells(r, row, 5, cell);
		r->val[row][5] = x->cpu_share[0];
		lab_cellf(r, row, 6, x->foreign_pct, "%.1f%%");
		lab_cellf(r, row, 7, x->sent_s, "%.0f");
		if (nrun[i] > 1) {
			double v[LAB_MAX_RUNS], lo, hi;
			char rg[LAB_CELL];
			for (unsigned j = 0; j < nrun[i]; j++)
				v[j] = runs[i][j].qwait_share;
			lab_median(v, r->run[row], nrun[i], &lo, &hi);
			snprintf(rg, sizeof(rg), "%.2f%% [%.2f-%.2f]", x->qwait_share, lo, hi);
			lab_cells(r, row, 1, rg);
			snprintf(rg, sizeof(rg), "%.1f%% [%.0f-%.0f]", x->foreign_pct, fgn_lo[i],
				 fgn_hi[i]);
			lab_cells(r, row, 6, rg);
		}
		char e[LAB_CELL];
		snprintf(e, sizeof(e), "%.3f ms (q%u)", x->worst_err_ms, x->worst_q + 1);
		lab_cells(r, row, 8, e);
		r->val[row][8] = x->worst_err_ms;
		lab_cellf(r, row, 9, x->pushed_s, "%.0f");
		lab_cells(r, row, 10, cf->seed_fig);
		r->val[row][10] = cf->seed_pct;
		if (i >= NMAIN)
			continue;
		char d[600];
		size_t n = (size_t)snprintf(d, sizeof(d),
					    "%s: delay per netem, configured -> measured mean/max ms:",
					    cf->key);
		for (unsigned q = 0; q < NQ && n < sizeof(d); q++)
			n += (size_t)snprintf(d + n, sizeof(d) - n, " 1:%u %u->%.2f/%.2f", q + 1,
					      s3_delay_ms[q], x->mean_ms[q], x->max_ms[q]);
		lab_note(r, "%s", d);
	}

	/* the claims, each a ratio of two configurations over their runs */
	struct lab_claims *cl = &r->claims;
	cl->seed = r->id;
#define ARM(i, vals) {.cfg = configs[i].key, .n = nrun[i], .v = vals[i], .run = r->run[row_of[i]]}
	const struct lab_arm push_w = ARM(0, v_wait), pin_w = ARM(1, v_wait), pull_w = ARM(2, v_wait);
	const struct lab_arm push_1 = ARM(0, v_one), pin_1 = ARM(1, v_one);
	const struct lab_arm push_f = ARM(0, v_foreign), pin_f = ARM(1, v_foreign);
#undef ARM
	struct lab_claim *c;
	if ((c = lab_claim_add(cl, "spin_on_over_pinned", +1, 39.24 / 4.83,
			       "migrated watchdogs make the qdisc locks the top of the profile: "
			       "_raw_spin_lock 39.24% of cycles vs 4.83% pinned",
			       "the CPU the watchdogs gathered on dequeues every queue under its root "
			       "lock while each queue's own CPU enqueues into it: two CPUs a lock")))
		lab_claim_live(c, &push_w, &pin_w, "%.3f%% of CPU waiting");
	if ((c = lab_claim_add(cl, "deq_one_cpu", +1, NAN,
			       "the timers get migrated into a single CPU, and then all qdisc "
			       "dequeues run from this CPU",
			       "a watchdog armed on an idle CPU goes to a busy one (PUSH) and, re-armed "
			       "where it fires, stays there")))
		lab_claim_live(c, &push_1, &pin_1, "%.0f%% of dequeues by one CPU");
	if ((c = lab_claim_add(cl, "foreign_on_over_pinned", +1, NAN,
			       "pinning the qdisc timers on the CPU running the qdisc respects XPS: "
			       "no dequeue by a CPU that does not own the queue",
			       "a pinned watchdog fires on the CPU that armed it, the queue's own")))
		lab_claim_live(c, &push_f, &pin_f, "%.1f%% foreign dequeues");
	if ((c = lab_claim_add(cl, "wait_push_over_pull", +1, NAN,
			       "6.9's PULL, with the watchdogs not pinned, avoids the pile-up too: "
			       "lock waits above PULL's under PUSH (the post predates 6.9)",
			       "hrtimers are never pulled: under PULL a watchdog stays on the CPU that "
			       "armed it")))
		lab_claim_live(c, &push_w, &pull_w, "%.3f%% of CPU waiting");

	char ratio[64], seedratio[64];
	fmt_ratio(seedratio, sizeof(seedratio), 39.24, 4.83);
	fmt_ratio(ratio, sizeof(ratio), out[0].qwait_share, out[1].qwait_share);
	lab_summary(r, "seed: _raw_spin_lock 39.24%% of cycles before vs 4.83%% pinned (%s); ours, "
		    "qdisc lock-wait share: %.2f%% migrated vs %.2f%% pinned (%s)",
		    seedratio, out[0].qwait_share, out[1].qwait_share, ratio);
	fmt_ratio(ratio, sizeof(ratio), out[0].qwait_share + out[0].tlock_share,
		  out[1].qwait_share + out[1].tlock_share);
	lab_summary(r, "every lock wait (qdisc root locks + timer base locks, as _raw_spin_lock "
		    "counted both): %.2f%% migrated vs %.2f%% pinned (%s); PULL %.2f%%",
		    out[0].qwait_share + out[0].tlock_share, out[1].qwait_share + out[1].tlock_share,
		    ratio, out[2].qwait_share + out[2].tlock_share);
	fmt_ratio(ratio, sizeof(ratio), out[0].contended_pct, out[1].contended_pct);
	lab_summary(r, "contended acquisitions: %.2f%% migrated vs %.2f%% pinned (%s); PULL: %.2f%%",
		    out[0].contended_pct, out[1].contended_pct, ratio, out[2].contended_pct);
	lab_summary(r, "dequeues by a CPU not owning the queue (XPS): %.1f%% migrated, %.1f%% "
		    "pinned, %.1f%% PULL; cpu0 did %.0f%% / %.0f%% / %.0f%%",
		    out[0].foreign_pct, out[1].foreign_pct, out[2].foreign_pct, out[0].cpu_share[0],
		    out[1].cpu_share[0], out[2].cpu_share[0]);
	if (out[0].prof_ok && out[1].prof_ok) {
		fmt_ratio(ratio, sizeof(ratio), out[0].spin_share, out[1].spin_share);
		lab_summary(r, "profile spin share (qlock, lock_slow, flags_busy_wait, futex, "
			    "sched_yield): %.2f%% vs %.2f%% (%s), of the ticks outside CPU 0's "
			    "receive loop (s3_busy_poll)",
			    out[0].spin_share, out[1].spin_share, ratio);
	}
	lab_note(r, "the reading for %u CPUs: in the seed many CPUs fed 8 TX queues and every "
		 "watchdog piled onto one CPU, which fought all the others for each root lock. "
		 "Here CPU 0 takes the watchdogs of %u other CPU(s): two CPUs per lock, at rates "
		 "one CPU handles, so the shares stay far below the seed's and vary run to run. "
		 "What carries over is the direction: migrated, CPU 0 does most dequeues and the "
		 "locks are contended; pinned (and PULL), no two CPUs share a queue and the waits "
		 "are zero at any size.%s",
		 ncpus, ncpus > 1 ? ncpus - 1 : 0,
		 nconf > NMAIN ? " The trend rows add senders (8 CPUs; on fewer cores a preempted "
				 "lock holder makes few but long waits)." : "");
	if (nconf > NMAIN) {
		fmt_ratio(ratio, sizeof(ratio), out[3].qwait_share, out[0].qwait_share);
		lab_summary(r, "trend, %u CPUs (a CPU per queue as the seed's NIC%s): migrated "
			    "qdisc lock wait %.2f%% (%s the %u-CPU figure), contended %.2f%%, %.0f%% of "
			    "dequeues by a foreign CPU; pinned %.2f%%, %.2f%%, %.0f%%",
			    TREND_CPUS, TREND_CPUS > lab_online_cpus() ? ", oversubscribed here" : "",
			    out[3].qwait_share, ratio, ncpus, out[3].contended_pct, out[3].foreign_pct,
			    out[4].qwait_share, out[4].contended_pct, out[4].foreign_pct);
	}
	{
		char l[600];
		size_t n = 0;
		l[0] = 0;
		for (unsigned i = 0; i < nconf && n < sizeof(l); i++)
			if (out[i].late * 100 > out[i].offered || out[i].pool_empty)
				n += (size_t)snprintf(l + n, sizeof(l) - n, "%s%s: %.1f%% skipped, "
						      "pool dry %llu times", n ? "; " : "",
						      configs[i].key,
						      out[i].offered ? 100.0 * (double)out[i].late /
									       (double)out[i].offered
								     : 0,
						      (unsigned long long)out[i].pool_empty);
		if (n)
			lab_note(r, "load: the senders fell more than 5 ms behind and skipped packets "
				 "(a loaded machine: see the sent column): %s", l);
	}
	{
		char l[600];
		size_t n = 0;
		for (unsigned i = 0; i < nconf && n < sizeof(l); i++)
			n += (size_t)snprintf(l + n, sizeof(l) - n, "%s%s %.1f ms, %.0f%%, %llu, %.1f%%",
					      i ? "; " : "", configs[i].key, out[i].poll_gap_ms,
					      out[i].cpu0_ran_pct,
					      (unsigned long long)out[i].cpu0_vol, out[i].steal_pct);
		lab_note(r, "stalls (CPU 0's longest gap between poll rounds, the share of the "
			 "window its worker was on a core, its voluntary switches, VM steal): %s. "
			 "CPU 0's worker never sleeps (a voluntary switch is a lock wait that "
			 "blocked), so a long gap is the OS running something else on its core; it "
			 "shows as the max delays of CPU 0's queues (1:1, 1:3, ...)", l);
	}
	if (!out[0].prof_ok)
		lab_note(r, "profile: unavailable in this build (lab_prof_start failed); the lock "
			 "figures come from the lock statistics only");
	return 0;
}
