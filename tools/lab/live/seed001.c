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

#include "gl24.h"
#include "../lab.h"
#include "now.h"

#define HZ 1000
#define DELACK_MS 40
#define KEEPALIVE_S 7200
#define FRAME 1500
#define RING 32      /* frames in a thread's fake NIC ring */
#define BATCH 16     /* packets per poll of the clock for due timers */
#define PROF_HZ 997

enum cfg { CFG_GL, CFG_SLOW, CFG_FAST };

enum { DELACK_NONE, DELACK_ARMED, DELACK_FIRED };

struct rx_thread;

struct rx_sock {
	struct pw_timer delack, keepalive;
	struct rx_thread *th;
	unsigned char delack_state; /* the last event of the delack timer */
	unsigned char ever_armed;
};

struct rx_run;

struct rx_thread {
	pthread_t tid;
	unsigned k;
	int started;
	struct rx_run *run;
	struct rx_sock *socks;      /* (b), (c) */
	unsigned char *ring;        /* RING frames */
	unsigned char *sockbuf;     /* where the frames are copied to */
	unsigned char *hit;         /* (a): sockets that got a packet */
	uint64_t gl_fired_run;      /* (a), thread 0: callbacks before the drain */
	uint64_t rng;
	uint64_t csum;              /* the copies' checksum (kept: the work is real) */
	_Atomic uint64_t packets;   /* written by the thread, read by main */
	uint64_t polls, delack_fired, keepalive_fired, early, fired_cb;
	uint64_t max_late;          /* jiffies a delayed ACK ran after its expiry */
	uint64_t fired_before_drain; /* delack_fired when the drain began */
	int err;
};

struct rx_run {
	enum cfg cfg;
	unsigned nthreads, nsock;
	struct pw_runtime *rt;
	const struct mt_impl *gl;
	atomic_uint ready;
	atomic_int go, stop;
	atomic_uint looping_done;   /* threads past their packet loop */
	atomic_uint nrunning;       /* threads started (set before go) */
	struct rx_thread *th;
};

/* ------------------------------------------------------------ per packet */

/* xorshift64: which socket the next packet is for.  Context: the owner of @s. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* __copy_user: copy one frame to the socket, summing it as it goes (the
 * sum keeps the copy from being a plain memcpy the profile would name
 * after libc).  Context: a receiving thread. */
static __attribute__((noinline)) uint64_t lab_copy_user(unsigned char *dst, const unsigned char *src,
							 size_t len)
{
	uint64_t sum = 0;
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w;
		memcpy(&w, src + i, 8);
		memcpy(dst + i, &w, 8);
		sum += w ^ (sum >> 7);
	}
	return sum;
}

/* 2.6's mod_timer: pinwheel's inline pw_mod_timer() (fast path 1 inline,
 * else pw__mod_timer_lane()) given a frame of its own, so that the profile
 * names its fast path as readprofile named the kernel's mod_timer.
 * Context: a receiving thread. */
static __attribute__((noinline)) int lab_mod_timer(struct pw_timer *t, uint64_t expires)
{
	return pw_mod_timer(t, expires);
}

/* tcp_rcv's timer work, (a): both timers through the 2.4 design.
 * Context: receiving thread @th. */
static __attribute__((noinline)) void rcv_timers_gl(struct rx_thread *th, unsigned s)
{
	static const uint64_t delta[2] = {DELACK_MS, (uint64_t)KEEPALIVE_S * 1000};
	unsigned idx[2] = {2 * s, 2 * s + 1};
	th->run->gl->rearm(th->k, idx, delta, 2);
}

/* tcp_rcv's timer work, (b) and (c).  Context: receiving thread @th. */
static __attribute__((noinline)) void rcv_timers_pw(struct rx_thread *th, unsigned s, int fast)
{
	struct rx_sock *sk = &th->socks[s];
	uint64_t j = pw_jiffies(th->run->rt); /* the packet's time stamp */
	uint64_t d = j + (uint64_t)DELACK_MS * HZ / 1000, ka = j + (uint64_t)KEEPALIVE_S * HZ;
	int e1, e2;
	if (fast) {
		e1 = lab_mod_timer(&sk->delack, d);
		e2 = lab_mod_timer(&sk->keepalive, ka);
	} else {
		e1 = pw__mod_timer_lane(&sk->delack, d);
		e2 = pw__mod_timer_lane(&sk->keepalive, ka);
	}
	if ((e1 < 0 || e2 < 0) && !th->err)
		th->err = e1 < 0 ? e1 : e2;
	sk->delack_state = DELACK_ARMED;
	sk->ever_armed = 1;
}

/* The delayed ACK is due: no packet for 40 ms.  Context: the socket's
 * receiving thread, inside pw_run_timers(). */
static void delack_fn(struct pw_timer *t)
{
	struct rx_sock *sk = pw_container_of(t, struct rx_sock, delack);
	struct rx_thread *th = sk->th;
	int64_t late = (int64_t)(pw_jiffies(th->run->rt) - t->expires);
	if (late < 0)
		th->early++;
	else if ((uint64_t)late > th->max_late)
		th->max_late = (uint64_t)late;
	if (pw_this_cpu() != (int)th->k)
		th->err = -EXDEV;
	sk->delack_state = DELACK_FIRED;
	th->delack_fired++;
}

/* A keepalive is due: 7200 s without a packet, never in these runs.
 * Context: as delack_fn(). */
static void keepalive_fn(struct pw_timer *t)
{
	struct rx_sock *sk = pw_container_of(t, struct rx_sock, keepalive);
	struct rx_thread *th = sk->th;
	if ((int64_t)(pw_jiffies(th->run->rt) - t->expires) < 0)
		th->early++;
	th->keepalive_fired++;
}

/* The jiffies of @run's timers.  Context: any thread. */
static uint64_t now_jiffies(const struct rx_run *run)
{
	if (run->cfg == CFG_GL)
		return now_ns() / 1000000; /* the design's own now_j() */
	return pw_jiffies(run->rt);
}

/* Is a delayed ACK of @th's sockets still pending?  Context: @th's thread. */
static int delacks_pending(const struct rx_thread *th)
{
	for (unsigned s = 0; s < th->run->nsock; s++)
		if (pw_timer_pending(&th->socks[s].delack))
			return 1;
	return 0;
}

/* Run what is due on @th's CPU (the tick's timer pass): the one 2.4 wheel
 * or @th's pinwheel base.  On @th's thread.  Return: callbacks run, or a
 * negative errno from pw_run_timers(). */
static int run_due(struct rx_run *run, struct rx_thread *th)
{
	if (run->cfg == CFG_GL) {
		run->gl->poll(th->k);
		return 0;
	}
	int c = pw_run_timers(run->rt, th->k);
	if (c > 0)
		th->fired_cb += (uint64_t)c;
	return c;
}

/* A receiving thread: the NIC of CPU th->k.  Context: its own thread. */
static void *rx_main(void *arg)
{
	struct rx_thread *th = arg;
	struct rx_run *run = th->run;
	int fast = run->cfg == CFG_FAST;
	int err = 0;
	if (run->cfg == CFG_GL) {
		err = run->gl->enter(th->k);
	} else {
		err = pw_cpu_enter(run->rt, th->k);
		/* set up here, so that each timer starts on this CPU */
		for (unsigned s = 0; !err && s < run->nsock; s++) {
			struct rx_sock *sk = &th->socks[s];
			sk->th = th;
			err = pw_timer_setup(run->rt, &sk->delack, delack_fn, 0);
			if (!err)
				err = pw_timer_setup(run->rt, &sk->keepalive, keepalive_fn, 0);
		}
	}
	if (err)
		th->err = err;
	atomic_fetch_add(&run->ready, 1);
	while (!atomic_load(&run->go))
		sched_yield();

	uint64_t n = 0, lastj = now_jiffies(run);
	unsigned slot = 0;
	while (!err && !atomic_load_explicit(&run->stop, memory_order_relaxed)) {
		for (unsigned i = 0; i < BATCH; i++) {
			unsigned s = (unsigned)(rng_next(&th->rng) % run->nsock);
			unsigned char *f = th->ring + (size_t)slot * FRAME;
			slot = (slot + 1) % RING;
			f[0] = (unsigned char)n; /* the "DMA" wrote a new frame */
			th->csum += lab_copy_user(th->sockbuf + (s & 1) * FRAME, f, FRAME);
			if (run->cfg == CFG_GL) {
				rcv_timers_gl(th, s);
				th->hit[s] = 1;
			} else {
				rcv_timers_pw(th, s, fast);
			}
			n++;
		}
		atomic_store_explicit(&th->packets, n, memory_order_relaxed);
		uint64_t j = now_jiffies(run);
		if (j != lastj) {
			/* the tick: run what is due */
			lastj = j;
			th->polls++;
			int c = run_due(run, th);
			if (c < 0)
				err = c;
		}
		if (th->err)
			err = th->err;
	}
	atomic_fetch_add(&run->looping_done, 1);
	/* The drain: no more packets, so 40 ms on every delayed ACK is due.
	 * Run the timers until then (and once more at it), as the tick
	 * would.  In (a) thread 0 alone runs the one wheel, once every thread
	 * has stopped arming, so that the design's plain callback counter
	 * has one writer. */
	th->fired_before_drain = th->delack_fired;
	if (!err && (run->cfg != CFG_GL || th->k == 0)) {
		if (run->cfg == CFG_GL) {
			while (atomic_load(&run->looping_done) < atomic_load(&run->nrunning))
				sched_yield();
			th->gl_fired_run = gl24_fired;
		}
		/* (a) steps its wheel jiffy by jiffy: exact.  pinwheel's
		 * wheel, like the kernel's since 4.8, may run a timer late by
		 * its level's granularity (when its base's clock lagged at the
		 * arm): there, run until this thread's delayed ACKs are all
		 * out, within a second past the 40 ms */
		uint64_t until = now_jiffies(run) + (uint64_t)DELACK_MS * HZ / 1000 + 2;
		uint64_t limit = until + HZ;
		uint64_t j;
		do {
			lab_sleep_ms(1);
			j = now_jiffies(run);
			int c = run_due(run, th);
			if (c < 0)
				err = c;
		} while (!err && ((int64_t)(j - until) < 0 ||
				  (run->cfg != CFG_GL && delacks_pending(th) && (int64_t)(j - limit) < 0)));
	}
	if (err && !th->err)
		th->err = err;
	if (run->cfg == CFG_GL)
		run->gl->leave(th->k);
	else
		pw_cpu_exit(run->rt);
	return NULL;
}

/* ------------------------------------------------------------ one run */

struct rx_figures {
	struct lab_run *run;        /* the run's record (r->run[row][k]) */
	double pps, pps_thread, seconds;
	uint64_t packets, armed, fast_path, same_bucket, lock_waits;
	uint64_t delacks, drained, max_late;
	double timer_share, mt_share, cpu_s, copy_share, unknown_share;
	unsigned long mt_ticks;
	int mt_rank;
	char mt_name[64];
	unsigned long ticks;
};

/* mod_timer as readprofile saw it: 2.4 inlined spin_lock_irqsave, so the
 * lock's spinning counted as mod_timer; here the lock is a function of its
 * own (pthread_spin_lock, pw__lock_slow), summed back in */
static const char *const mod_timer_fns[] = {
	/* (a): gl_mod_timer (inlined into the design's mt_rearm), its list
	 * insert and its lock */
	"gl_mod_timer", "mt_rearm", "internal_add", "pthread_spin",
	/* (b), (c): pw__mod_timer_lane, lab_mod_timer (pw_mod_timer's fast
	 * path), their out-of-line parts and the base lock's slow path */
	"mod_timer", "lane_", "arm_elsewhere", "pw__lock",
	NULL,
};

/* all the timer code: mod_timer, the timer pass, the callers' halves */
static const char *const timer_fns[] = {
	"gl_mod_timer", "mt_rearm", "internal_add", "pthread_spin", "mod_timer", "lane_",
	"arm_elsewhere", "pw__lock",
	"cascade", "gl_run", "mt_poll", "pw_run_timers", "pw__run_cpu", "pw__base_run",
	"expire_list", "pw__wheel", "rcv_timers",
	NULL,
};

/* Does @name contain one of @set's substrings?  Context: any thread. */
static int name_in(const char *name, const char *const *set)
{
	for (; *set; set++)
		if (strstr(name, *set))
			return 1;
	return 0;
}

/* From the formatted profile: the ticks of the functions in @set, the rank
 * (1 = top) their sum would have as one entry among the others, and the
 * function of @set with the most ticks into @name.  Rank 0: not sampled.
 * Context: main thread, after lab_prof_stop(). */
static int prof_rank(const char *const *set, unsigned long *sum, char *name, size_t len)
{
	static char buf[64 * 1024];
	static unsigned long other[2048];
	unsigned nother = 0;
	unsigned long best = 0;
	lab_prof_format(buf, sizeof(buf), 1000);
	*sum = 0;
	name[0] = 0;
	for (char *line = buf, *nl; line && *line; line = nl) {
		nl = strchr(line, '\n');
		if (nl)
			*nl++ = 0;
		unsigned long ticks;
		char fn[64];
		if (sscanf(line, "%lu %63s", &ticks, fn) != 2 || !strcmp(fn, "total"))
			continue;
		if (name_in(fn, set)) {
			*sum += ticks;
			if (ticks > best) {
				best = ticks;
				snprintf(name, len, "%s", fn);
			}
		} else if (nother < sizeof(other) / sizeof(other[0])) {
			other[nother++] = ticks;
		}
	}
	if (!*sum)
		return 0;
	int rank = 1;
	for (unsigned i = 0; i < nother; i++)
		rank += other[i] > *sum;
	return rank;
}

/* The arm counters summed over @rt's CPUs.  Context: main thread. */
static void pw_counts(struct pw_runtime *rt, uint64_t *armed, uint64_t *fast, uint64_t *same)
{
	*armed = *fast = *same = 0;
	for (unsigned c = 0; c < pw_runtime_ncpus(rt); c++) {
		struct pw_cpu_stats st;
		if (pw_stats_read(rt, c, &st))
			continue;
		*armed += st.armed;
		*fast += st.fast_path;
		*same += st.same_bucket;
	}
}

/* Packets delivered so far by every thread.  Context: main thread. */
static uint64_t total_packets(const struct rx_run *run)
{
	uint64_t n = 0;
	for (unsigned k = 0; k < run->nthreads; k++)
		n += atomic_load_explicit(&run->th[k].packets, memory_order_relaxed);
	return n;
}

static const char *const cfg_name[] = {"2.4 global lock", "per-CPU, no fast path",
				       "per-CPU + fast path (2.6)"};

/* Run configuration @cfg with @nthreads threads for @seconds into row
 * @row of @r (its series from @t_off on; @what names the run on the
 * progress line).  Context: main thread.  Return: 0 or -errno (setup). */
static int run_config(const struct lab_opts *o, struct lab_result *r, unsigned row, enum cfg cfg,
		      unsigned nthreads, unsigned nsock, double seconds, double t_off,
		      const char *what, struct rx_figures *fig)
{
	struct rx_run run;
	memset(&run, 0, sizeof(run));
	memset(fig, 0, sizeof(*fig));
	run.cfg = cfg;
	run.nthreads = nthreads;
	run.nsock = nsock;
	int err = 0;
	run.th = calloc(nthreads, sizeof(*run.th));
	if (!run.th)
		return -ENOMEM;
	for (unsigned k = 0; k < nthreads && !err; k++) {
		struct rx_thread *th = &run.th[k];
		th->k = k;
		th->run = &run;
		th->rng = o->seed * 0x9e3779b97f4a7c15ull + k * 0x632be59bd9b4e019ull + 1;
		th->ring = calloc(RING, FRAME);
		th->sockbuf = calloc(2, FRAME);
		if (cfg != CFG_GL)
			th->socks = calloc(nsock, sizeof(*th->socks));
		else
			th->hit = calloc(nsock, 1);
		if (!th->ring || !th->sockbuf || (cfg != CFG_GL ? !th->socks : !th->hit))
			err = -ENOMEM;
	}
	if (!err && cfg == CFG_GL) {
		gl24_fired = 0;
		run.gl = gl24_mt_impl();
		err = run.gl->setup(nthreads, 2 * nsock);
		if (err)
			run.gl = NULL;
	} else if (!err) {
		struct pw_config cfgp;
		pw_config_init(&cfgp);
		cfgp.ncpus = nthreads;
		cfgp.hz = HZ;
		cfgp.clock = PW_CLOCK_MONOTONIC;
		err = pw_runtime_create(&cfgp, &run.rt);
	}
	unsigned started = 0;
	for (unsigned k = 0; k < nthreads && !err; k++) {
		int e = pthread_create(&run.th[k].tid, NULL, rx_main, &run.th[k]);
		if (e) {
			err = -e;
			break;
		}
		run.th[k].started = 1;
		started++;
	}
	atomic_store(&run.nrunning, started);
	while (atomic_load(&run.ready) < started)
		lab_sleep_ms(1);
	for (unsigned k = 0; k < started; k++)
		if (run.th[k].err && !err)
			err = run.th[k].err;

	struct lab_sample s0, s1;
	struct lab_run_mark mark;
	uint64_t a0 = 0, f0 = 0, b0 = 0, a1 = 0, f1 = 0, b1 = 0;
	int prof = -1;
	if (!err) {
		lab_run_begin(&mark);
		prof = lab_prof_start(PROF_HZ);
		if (prof)
			lab_progress(r, "profiler: %s (no profile)", strerror(-prof));
		lab_sample(run.rt, &s0);
		if (run.rt)
			pw_counts(run.rt, &a0, &f0, &b0);
		atomic_store(&run.go, 1);
		/* the series: packets/s per interval */
		double t0 = s0.t, last_t = s0.t;
		uint64_t last_n = 0;
		for (;;) {
			struct lab_sample now;
			lab_sample(NULL, &now);
			double left = seconds - (now.t - t0);
			if (left <= 0)
				break;
			double ms = left * 1000 < o->interval_ms ? left * 1000 : o->interval_ms;
			lab_sleep_ms(ms < 1 ? 1 : (unsigned)ms);
			lab_sample(NULL, &now);
			uint64_t n = total_packets(&run);
			if (now.t > last_t)
				lab_series_add(&r->series[row], t_off + now.t - t0,
					       (double)(n - last_n) / (now.t - last_t));
			last_t = now.t;
			last_n = n;
		}
		lab_sample(run.rt, &s1);
		fig->packets = total_packets(&run);
		char w[160];
		snprintf(w, sizeof(w), "%s, %u thread%s x %u sockets, %s", cfg_name[cfg], nthreads,
			 nthreads == 1 ? "" : "s", nsock, what);
		fig->run = lab_run_end(r, row, &mark, w);
	}
	/* stop: the threads finish their batch, drain, and leave */
	atomic_store(&run.stop, 1);
	if (!err && !prof)
		lab_prof_stop();
	atomic_store(&run.go, 1);
	for (unsigned k = 0; k < started; k++)
		pthread_join(run.th[k].tid, NULL);
	if (!err) {
		if (run.rt)
			pw_counts(run.rt, &a1, &f1, &b1);
		fig->seconds = s1.t - s0.t;
		fig->pps = fig->seconds > 0 ? (double)fig->packets / fig->seconds : 0;
		fig->pps_thread = fig->pps / nthreads;
		fig->cpu_s = (s1.user_s - s0.user_s) + (s1.sys_s - s0.sys_s);
		fig->armed = a1 - a0;
		fig->fast_path = f1 - f0;
		fig->same_bucket = b1 - b0;
		fig->lock_waits = s1.lock_waits - s0.lock_waits;
		if (!prof) {
			fig->ticks = lab_prof_total();
			fig->timer_share = lab_prof_share(timer_fns);
			fig->mt_share = lab_prof_share(mod_timer_fns);
			static const char *const copy[] = {"lab_copy_user", NULL};
			static const char *const unknown[] = {"[unknown]", NULL};
			fig->copy_share = lab_prof_share(copy);
			fig->unknown_share = lab_prof_share(unknown);
			fig->mt_rank = prof_rank(mod_timer_fns, &fig->mt_ticks, fig->mt_name,
						 sizeof(fig->mt_name));
			lab_prof_format(r->profile[row], sizeof(r->profile[row]), 10);
		}

		/* invariants, after the drain (40 ms without packets) */
		const char *cn = r->cell[row][0];
		uint64_t arms = 0, kfired = 0, early = 0, hit = 0;
		for (unsigned k = 0; k < nthreads; k++) {
			struct rx_thread *th = &run.th[k];
			lab_check(r, !th->err, "%s: thread %u failed: %s", cn, k, strerror(-th->err));
			lab_check(r, th->packets > 0, "%s: thread %u delivered no packet", cn, k);
			arms += 2 * th->packets;
			kfired += th->keepalive_fired;
			early += th->early;
			fig->delacks += th->delack_fired;
			fig->drained += th->delack_fired - th->fired_before_drain;
			if (th->max_late > fig->max_late)
				fig->max_late = th->max_late;
			if (cfg == CFG_GL) {
				for (unsigned s = 0; s < nsock; s++)
					hit += th->hit[s];
				continue;
			}
			unsigned bad_ka = 0, bad_da = 0, armed_socks = 0;
			for (unsigned s = 0; s < nsock; s++) {
				const struct rx_sock *sk = &th->socks[s];
				armed_socks += sk->ever_armed;
				/* keepalive: armed by every packet, never due */
				if (pw_timer_pending(&sk->keepalive) != sk->ever_armed)
					bad_ka++;
				/* delack: every armed one went out in the drain */
				if (pw_timer_pending(&sk->delack) ||
				    (sk->delack_state == DELACK_FIRED) != sk->ever_armed)
					bad_da++;
			}
			lab_check(r, !bad_ka, "%s: thread %u: %u keepalive timers not pending after their arm",
				  cn, k, bad_ka);
			lab_check(r, !bad_da,
				  "%s: thread %u: %u delayed ACKs still pending or never sent 40 ms after the last packet",
				  cn, k, bad_da);
			lab_check(r, th->delack_fired >= armed_socks,
				  "%s: thread %u: %llu delayed ACKs for %u sockets", cn, k,
				  (unsigned long long)th->delack_fired, armed_socks);
			lab_check(r, th->fired_cb == th->delack_fired + th->keepalive_fired,
				  "%s: thread %u: pw_run_timers ran %llu callbacks, the callbacks saw %llu",
				  cn, k, (unsigned long long)th->fired_cb,
				  (unsigned long long)(th->delack_fired + th->keepalive_fired));
		}
		lab_check(r, fig->packets <= arms / 2, "%s: more packets measured than delivered", cn);
		if (cfg == CFG_GL) {
			/* the drain ran the delayed ACK of every socket that got
			 * a packet (its keepalive and never-hit sockets' first
			 * arms, 1-10 s out, stay); exact when none fired before */
			uint64_t before = run.th[0].gl_fired_run, drained = gl24_fired - before;
			if (!before)
				lab_check(r, drained == hit,
					  "%s: the drain ran %llu callbacks for %llu sockets hit", cn,
					  (unsigned long long)drained, (unsigned long long)hit);
			else
				lab_check(r, drained <= hit,
					  "%s: the drain ran %llu callbacks for %llu sockets hit", cn,
					  (unsigned long long)drained, (unsigned long long)hit);
		} else {
			lab_check(r, !early, "%s: %llu timers fired before their expiry", cn,
				  (unsigned long long)early);
			lab_check(r, !kfired, "%s: %llu keepalive timers (7200 s) fired", cn,
				  (unsigned long long)kfired);
			/* every packet re-armed two timers on this CPU */
			lab_check(r, fig->armed == arms, "%s: %llu arms counted for %llu re-arms", cn,
				  (unsigned long long)fig->armed, (unsigned long long)arms);
			if (cfg == CFG_SLOW)
				lab_check(r, fig->fast_path == 0,
					  "%s: %llu fast-path hits without the fast path", cn,
					  (unsigned long long)fig->fast_path);
			else
				lab_check(r, fig->fast_path > 0, "%s: the fast path never hit", cn);
		}
	}

	/* teardown */
	for (unsigned k = 0; k < nthreads; k++) {
		struct rx_thread *th = &run.th[k];
		if (th->socks && run.rt && th->started)
			for (unsigned s = 0; s < nsock; s++) {
				pw_timer_shutdown_sync(&th->socks[s].delack);
				pw_timer_shutdown_sync(&th->socks[s].keepalive);
			}
		free(th->socks);
		free(th->ring);
		free(th->sockbuf);
		free(th->hit);
	}
	if (run.rt)
		pw_runtime_destroy(run.rt);
	if (run.gl)
		run.gl->teardown();
	free(run.th);
	return err;
}

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
			int err = run_config(o, r, row_of[i], rows[i].cfg, rows[i].threads, nsock, per,
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
