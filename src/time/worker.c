/* SPDX-License-Identifier: MIT */
/*
 * Worker threads: one per CPU, tickless.
 *
 * What a worker does
 * ------------------
 * It enters as its CPU (pw_cpu_enter) and loops: run the CPU's due timers
 * (pw_run_timers: hrtimers, then the wheel), run the work queued for it,
 * call the poll hook; if any of the three did something, go round again;
 * otherwise sleep until the CPU's next non-deferrable event
 * (pw_next_expiry_ns).  With nothing armed it sleeps with no timeout at all:
 * an idle runtime makes 0 wake-ups a second.
 *
 * Sleeping and kicks
 * ------------------
 * The worker sleeps on a futex word of its own (kick_seq) with a timeout to
 * its next event.  Another thread that makes the worker's next event earlier
 * (arms a timer on that CPU that ends up first) or queues work for it must
 * wake it: a kick (bump kick_seq, FUTEX_WAKE), pw__kick().  Kicks are sent
 * only when they change what the worker must do next, with one exception:
 * the kick rule PW_KICK_LINUX_3_17 (policy.c) interrupts the target of
 * every remote enqueue, asleep or not, as Linux 3.17's
 * internal_add_timer() sent an IPI to a busy CPU (pw__kick_always(): bump
 * and FUTEX_WAKE without looking).  An awake worker notices such a kick
 * by itself: it reads kick_seq at the top of every round, and if the
 * sequence moved by the time it would sleep, it runs one more round
 * instead (what an IPI costs a busy CPU: one more pass over its timers,
 * its work and its poll hook).  Each kick is counted on the target, by
 * reason (worker.h, pw_kick_stats_read()), and on the sender.
 *
 * The protocol, so that no event is missed and no kick is wasted:
 *   worker: seq = kick_seq; sleep_until = 0 ("computing"); sleeping = 1;
 *           fence; next = pw_next_expiry_ns(); sleep_until = next;
 *           if work is queued or next has come: do not sleep;
 *           futex_wait(kick_seq, seq, next - now)
 *   kicker: (event made visible: base unlocked, or work pushed); fence;
 *           if sleeping and (sleep_until == 0 or event < sleep_until):
 *           kick_seq++, FUTEX_WAKE
 * The two fences order "sleeping = 1" before the worker reads the queues,
 * and the kicker's event before its read of "sleeping": either the worker
 * sees the event when it computes next, or the kicker sees it asleep (or
 * computing) and kicks.  The fences are sequentially consistent
 * read-modify-writes of one word both sides touch (wk->sync): they are
 * totally ordered, the later one synchronizes with the earlier, and TSan
 * understands them (it does not support atomic_thread_fence).  A kick between reading seq and sleeping makes the
 * futex wait return at once (seq changed).  sleep_until is reset to 0 at
 * the start of every cycle, so a kicker never compares with the previous
 * cycle's value.
 *
 * Why a futex and not eventfd + epoll/timerfd: measured with
 * `pinwheel-bench wake` (two threads ping-pong, each sleeping with a
 * timeout and woken by the other; figures: docs/benchmarks.md, "Sleep and
 * kick"), the three ways cost the same within the noise, because a round
 * trip is made of the kernel's wake-up latency, not of the calls around
 * it; so the choice rests on what the measurement does not show: the
 * futex needs 2 system calls a wake-up (wake, wait with a nanosecond
 * timeout) where eventfd+epoll needs 3 (write, epoll_wait, read) and 4
 * with a timerfd for a deadline finer than epoll_wait's millisecond, and
 * no descriptors; the wake-up is skipped entirely when the worker is
 * not asleep (checked in user space).
 * A poll hook that wants to wait on descriptors itself can return 0 and
 * let timers wake the worker; an epoll integration can come later.
 *
 * Idle: for PUSH, a CPU is idle unless its poll hook reports work
 * (policy.c).  For PULL, a CPU is idle in the migration hierarchy
 * (tmigr.c) from just before it sleeps to just after it wakes: it hands
 * its global timers up before computing its sleep deadline (which is then
 * its pinned timers and hrtimers, plus the hierarchy's first event if it
 * is the last CPU awake) and takes them back when it wakes.  Every round
 * of an awake worker asks the hierarchy whether it must expire idle CPUs'
 * timers as their migrator (inside pw_run_timers()).
 *
 * Lateness: a sleep that ends at or after its deadline (a timed wake-up;
 * a kick that came later counts as one) is counted by how late the worker
 * runs again, in a histogram of its own (worker.h, pw_wake_lateness_read()):
 * a bucket search and three adds per such wake-up, nothing on the kicked
 * ones.  A loop of the caller's (pw_cpu_enter()) reports its own wake-ups
 * into the same histogram (pw_wake_lateness_note()): the thread serving a
 * CPU, worker or not, is its one writer.
 *
 * Statistics: the CPU's counters (stats.h), written by the worker itself,
 * except kicks received (in all and by reason), which the kicker counts
 * with relaxed atomic adds here (pw__kick_count(), also for runtimes
 * without workers); pw_stats_read() is in stats.c, the work queue in work.c, the
 * policies in policy.c.
 */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futex.h"
#include "internal.h"


int pw__workers_init(struct pw_runtime *rt)
{
	rt->workers = aligned_alloc(PW_CACHELINE, rt->ncpus * sizeof(struct pw__worker));
	if (!rt->workers)
		return -ENOMEM;
	memset(rt->workers, 0, rt->ncpus * sizeof(struct pw__worker));
	for (unsigned c = 0; c < rt->ncpus; c++)
		rt->workers[c].cpu = c;
	return 0;
}

void pw__workers_free(struct pw_runtime *rt)
{
	free(rt->workers);
	rt->workers = NULL;
}

int pw__worker_may_sleep(struct pw_runtime *rt, unsigned cpu)
{
	struct pw__worker *wk = &rt->workers[cpu];
	__atomic_fetch_add(&wk->sync, 0, __ATOMIC_SEQ_CST); /* the protocol's fence */
	return __atomic_load_n(&wk->sleeping, __ATOMIC_RELAXED) != 0;
}

void pw__kick_count(struct pw_runtime *rt, unsigned cpu, enum pw__kick_why why)
{
	struct pw__worker *wk = &rt->workers[cpu];
	__atomic_fetch_add(&wk->kicks_received, 1, __ATOMIC_RELAXED);
	if (why < PW__KICK_REASONS)
		__atomic_fetch_add(&wk->kicks_why[why], 1, __ATOMIC_RELAXED);
	/* kicks by threads that are no CPU: received only (the sink) */
	pw__count_add(&pw__stats_mine(rt)->kicks_sent, 1);
}

/* Interrupt @wk: whatever it does, its next look at kick_seq differs from
 * its last.  The release orders the kicker's event before the bump: a
 * worker that reads the new sequence (acquire) sees the event. */
static void kick_seq_bump(struct pw__worker *wk)
{
	__atomic_fetch_add(&wk->kick_seq, 1, __ATOMIC_RELEASE);
	pw__futex_wake(&wk->kick_seq, 1);
}

void pw__kick(struct pw_runtime *rt, unsigned cpu, uint64_t event_ns, enum pw__kick_why why)
{
	struct pw__worker *wk = &rt->workers[cpu];

	if (!pw__worker_may_sleep(rt, cpu))
		return;
	uint64_t until = __atomic_load_n(&wk->sleep_until_ns, __ATOMIC_RELAXED);
	if (event_ns != PW_KICK_WORK && until != 0 && event_ns >= until)
		return; /* it wakes in time by itself */
	kick_seq_bump(wk);
	pw__kick_count(rt, cpu, why);
}

void pw__kick_always(struct pw_runtime *rt, unsigned cpu, enum pw__kick_why why)
{
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		kick_seq_bump(&rt->workers[cpu]);
	pw__kick_count(rt, cpu, why);
}

static void sleep_until(struct pw__worker *wk, uint32_t seq, uint64_t now, uint64_t next)
{
	pw__futex_wait(&wk->kick_seq, seq, next == UINT64_MAX ? PW_FUTEX_FOREVER : next - now);
}

/* A timed wake-up @late ns after its deadline, into the worker's
 * histogram (pw_wake_lateness_read()).  Context: @wk's worker, the only
 * writer.  Bucket: the smallest i with late <= 1000 << i, or the last. */
static void lateness_count(struct pw__worker *wk, uint64_t late)
{
	unsigned i = 0;
	if (late > 1000) {
		uint64_t us = (late - 1) / 1000; /* late <= 1000 << i  <=>  us < 1 << i */
		i = 64u - (unsigned)__builtin_clzll(us);
		if (i > PW_LATENESS_BUCKETS - 1)
			i = PW_LATENESS_BUCKETS - 1;
	}
	pw__count_add(&wk->late.bucket[i], 1);
	pw__count_add(&wk->late.sum_ns, late);
	if (late > pw__ld64(&wk->late.max_ns))
		__atomic_store_n(&wk->late.max_ns, late, __ATOMIC_RELAXED);
}

int pw_wake_lateness_note(struct pw_runtime *rt, uint64_t deadline_ns, uint64_t now_ns)
{
	if (!rt || pw__tls.rt != rt || pw__tls.cpu < 0 || pw__tls.in_run)
		return -EINVAL;
	if (now_ns < deadline_ns)
		return 0;
	lateness_count(&rt->workers[pw__tls.cpu], now_ns - deadline_ns);
	return 1;
}

struct worker_arg {
	struct pw_runtime *rt;
	struct pw__worker *wk;
	int pin_core;
};

static void *worker_main(void *arg)
{
	struct worker_arg *wa = arg;
	struct pw_runtime *rt = wa->rt;
	struct pw__worker *wk = wa->wk;
	unsigned cpu = wk->cpu;
	struct pw__stats *st = &rt->cpus[cpu].stats;

	if (wa->pin_core >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(wa->pin_core, &set);
		/* a worker that cannot pin itself runs unpinned, and
		 * pw_runtime_workers_pinned() says 0 from then on */
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0)
			__atomic_store_n(&rt->workers_pinned, 0u, __ATOMIC_RELAXED);
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	__atomic_store_n(&wk->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	free(wa);
	if (pw_cpu_enter(rt, cpu)) /* start checked that nobody serves it */
		return NULL;

	uint64_t t_awake = pw_now_ns(rt);
	while (!__atomic_load_n(&rt->workers_stop, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&wk->stop, __ATOMIC_ACQUIRE)) {
		/* kicks up to here: this round sees their events (acquire) */
		uint32_t seen = __atomic_load_n(&wk->kick_seq, __ATOMIC_ACQUIRE);
		int n = pw_run_timers(rt, cpu);
		if (n == -EBUSY) {
			/* a migrator runs this CPU's global timers right now
			 * (it went idle, then woke): let it finish */
			sched_yield();
			continue;
		}
		unsigned w = pw__work_run(wk);
		int busy = wk->poll ? wk->poll(rt, cpu, wk->poll_arg) : 0;
		__atomic_store_n(&rt->cpus[cpu].idle, busy > 0 ? 0u : 1u, __ATOMIC_RELAXED);
		if (n > 0)
			pw__count_add(&st->timers_expired, (uint64_t)n);
		if (w)
			pw__count_add(&st->work_done, w);
		if (busy > 0)
			pw__count_add(&st->polls_busy, 1);
		if (n > 0 || w || busy > 0)
			continue;

		uint32_t seq = __atomic_load_n(&wk->kick_seq, __ATOMIC_ACQUIRE);
		if (seq != seen)
			continue; /* kicked while awake (pw__kick_always()): one more round */
		__atomic_store_n(&wk->sleep_until_ns, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&wk->sleeping, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&wk->sync, 0, __ATOMIC_SEQ_CST); /* the protocol's fence */
		/* PULL: hand the global timers to the hierarchy; then the
		 * deadline is this CPU's own pinned timers and hrtimers, plus
		 * the hierarchy's first event if it is the last CPU to sleep */
		bool pull = pw_get_migration(rt) == PW_MIGRATION_PULL;
		if (pull)
			pw__tmigr_deactivate(rt, cpu);
		uint64_t next = pw_next_expiry_ns(rt, cpu);
		__atomic_store_n(&wk->sleep_until_ns, next, __ATOMIC_RELAXED);
		uint64_t now = pw_now_ns(rt);
		if (next > now && !__atomic_load_n(&wk->work_head, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&rt->workers_stop, __ATOMIC_ACQUIRE) &&
		    !__atomic_load_n(&wk->stop, __ATOMIC_ACQUIRE)) {
			pw__count_add(&st->busy_ns, now - t_awake);
			__atomic_store_n(&wk->slept_at_ns, now, __ATOMIC_RELAXED);
			sleep_until(wk, seq, now, next);
			t_awake = pw_now_ns(rt);
			pw__count_add(&st->idle_ns, t_awake - now);
			pw__count_add(&st->wakeups, 1);
			if (next != UINT64_MAX && t_awake >= next)
				lateness_count(wk, t_awake - next);
		}
		__atomic_store_n(&wk->sleeping, 0, __ATOMIC_RELAXED);
		if (pull)
			pw__tmigr_activate(rt, cpu);
	}
	pw__count_add(&st->busy_ns, pw_now_ns(rt) - t_awake);
	__atomic_store_n(&rt->cpus[cpu].idle, 0u, __ATOMIC_RELAXED); /* stopped: busy again, as at start */
	pw_cpu_exit(rt);
	return NULL;
}

int pw__worker_start(struct pw_runtime *rt, unsigned c)
{
	struct pw__worker *wk = &rt->workers[c];
	struct worker_arg *wa = malloc(sizeof(*wa));
	if (!wa)
		return -ENOMEM;
	*wa = (struct worker_arg){rt, wk,
				  __atomic_load_n(&rt->workers_pinned, __ATOMIC_RELAXED) ? (int)c : -1};
	__atomic_store_n(&wk->stop, 0, __ATOMIC_RELEASE);
	int r = pthread_create(&wk->th, NULL, worker_main, wa);
	if (r) {
		free(wa);
		return -r;
	}
	wk->started = 1;
	return 0;
}

void pw__worker_stop(struct pw_runtime *rt, unsigned c)
{
	struct pw__worker *wk = &rt->workers[c];
	if (!wk->started)
		return;
	__atomic_store_n(&wk->stop, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&wk->kick_seq, 1, __ATOMIC_RELEASE);
	pw__futex_wake(&wk->kick_seq, UINT32_MAX);
	pthread_join(wk->th, NULL);
	wk->started = 0;
}

int pw_runtime_start(struct pw_runtime *rt)
{
	if (!rt || rt->clock == PW_CLOCK_SIM || pw__tls.rt == rt)
		return -EINVAL;
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return -EALREADY;
	for (unsigned c = 0; c < rt->ncpus; c++)
		if (__atomic_load_n(&rt->cpus[c].served, __ATOMIC_ACQUIRE))
			return -EBUSY;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	__atomic_store_n(&rt->workers_pinned, cores > 0 && (long)rt->ncpus <= cores, __ATOMIC_RELAXED);
	__atomic_store_n(&rt->workers_stop, 0, __ATOMIC_RELEASE);
	/* workers start awake: active in the hierarchy (whatever the busy
	 * marks said before), until each goes to sleep */
	for (unsigned c = 0; c < rt->ncpus; c++)
		if (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
			pw__tmigr_activate(rt, c);
	__atomic_store_n(&rt->workers_on, 1, __ATOMIC_RELEASE);
	for (unsigned c = 0; c < rt->ncpus; c++) {
		if (__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
			continue; /* no worker for an offline CPU */
		int r = pw__worker_start(rt, c);
		if (r) {
			pw_runtime_stop(rt);
			return r;
		}
	}
	int r = pw__clockwatch_start(rt); /* steps of the wall clock (clockset.c) */
	if (r) {
		pw_runtime_stop(rt);
		return r;
	}
	return 0;
}

int pw_runtime_stop(struct pw_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	if (pw__tls.rt == rt) /* a worker (callback, work, poll hook) cannot join itself */
		return -EDEADLK;
	if (!__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return 0;
	pw__clockwatch_stop(rt);
	__atomic_store_n(&rt->workers_stop, 1, __ATOMIC_RELEASE);
	for (unsigned c = 0; c < rt->ncpus; c++)
		pw__worker_stop(rt, c);
	__atomic_store_n(&rt->workers_on, 0, __ATOMIC_RELEASE);
	return 0;
}

int pw_runtime_workers_pinned(const struct pw_runtime *rt)
{
	return rt && __atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&rt->workers_pinned, __ATOMIC_RELAXED);
}

int pw_set_poll(struct pw_runtime *rt, unsigned cpu, pw_poll_fn fn, void *arg)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return -EBUSY;
	rt->workers[cpu].poll = fn;
	rt->workers[cpu].poll_arg = arg;
	return 0;
}

