/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab seed001: one configuration's run (s1_run_config()): the
 * receiving threads, each the "NIC" of one CPU, and what each does per
 * packet (the clock, the copy, the two mod_timers, its own due timers),
 * under the sampling profiler; the figures read back after the join
 * (packets/s, the timer and mod_timer shares of the profile, the library's
 * counts).  The design is seed001.c's head.
 *
 * Threads: s1_run_config() on the main thread; it starts the receiving
 * threads and joins them.  A receiving thread serves one CPU of the
 * runtime ((b), (c)) and runs its own timers with pw_run_timers(), taking
 * (through the library) only its own CPU's base lock; in (a) every thread
 * takes the design's one spin lock.  Shared between main and receivers:
 * the go/stop flags and each thread's packet counter (atomics); the rest
 * is read by main after the join.
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
#include "now.h"
#include "seed001.h"

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

int s1_run_config(const struct lab_opts *o, struct lab_result *r, unsigned row, enum cfg cfg,
		  unsigned nthreads, unsigned nsock, double seconds, double t_off, const char *what,
		  struct rx_figures *fig)
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
