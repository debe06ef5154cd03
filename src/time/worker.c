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
 * wake it: a kick (bump kick_seq, FUTEX_WAKE).  Kicks are sent only when
 * they change what the worker must do next; each is counted.
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
 * timeout and woken by the other), on the project's 2-core VM the three
 * ways cost the same within noise, 72-78 us a round trip (the VM's wake-up
 * latency is all of it); so the choice rests on what the measurement does
 * not show: the futex needs 2 system calls a wake-up (wake, wait with a
 * nanosecond timeout) where eventfd+epoll needs 3 (write, epoll_wait, read)
 * and 4 with a timerfd for a deadline finer than epoll_wait's millisecond,
 * and no descriptors; the wake-up is skipped entirely when the worker is
 * not asleep (checked in user space).
 * A poll hook that wants to wait on descriptors itself can return 0 and
 * let timers wake the worker; an epoll integration can come later.
 *
 * Busy/idle: for PUSH, a CPU is busy while its poll hook reports work
 * (pw_cpu_idle()).  For PULL, a CPU is idle in the migration hierarchy
 * (tmigr.c) from just before it sleeps to just after it wakes: it hands
 * its global timers up before computing its sleep deadline (which is then
 * its pinned timers and hrtimers, plus the hierarchy's first event if it
 * is the last CPU awake) and takes them back when it wakes.  Every round
 * of an awake worker asks the hierarchy whether it must expire idle CPUs'
 * timers as their migrator (inside pw_run_timers()).
 *
 * Statistics: counters written by the worker itself (no shared cache
 * lines) except kicks, which the kicker counts with a relaxed atomic add;
 * OS figures (context switches, user/system time) are read from
 * /proc/self/task/<tid>/ when asked.
 */
#define _GNU_SOURCE
#include "worker.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static inline uint64_t ld64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void add64(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}


int pw__workers_init(struct pw_runtime *rt)
{
	rt->workers = aligned_alloc(64, rt->ncpus * sizeof(struct pw__worker));
	if (!rt->workers)
		return -ENOMEM;
	memset(rt->workers, 0, rt->ncpus * sizeof(struct pw__worker));
	for (unsigned c = 0; c < rt->ncpus; c++) {
		rt->workers[c].cpu = c;
		rt->workers[c].busy = 1;
	}
	return 0;
}

/* Without workers, a CPU is idle in the PULL hierarchy exactly while the
 * policy is PULL and the CPU is marked idle (pw_cpu_set_busy()).  Context:
 * a thread managing a runtime without workers. */
static void sync_idle_mark(struct pw_runtime *rt, unsigned cpu)
{
	if (pw_get_migration(rt) == PW_MIGRATION_PULL &&
	    !__atomic_load_n(&rt->workers[cpu].busy, __ATOMIC_RELAXED))
		pw__tmigr_deactivate(rt, cpu);
	else
		pw__tmigr_activate(rt, cpu);
}

int pw_set_migration(struct pw_runtime *rt, enum pw_migration policy)
{
	if (!rt || (policy != PW_MIGRATION_OFF && policy != PW_MIGRATION_PUSH &&
		    policy != PW_MIGRATION_PULL))
		return -EINVAL;
	__atomic_store_n(&rt->migration, (uint32_t)policy, __ATOMIC_RELAXED);
	/* with workers, each worker goes idle in the hierarchy before it
	 * sleeps, under PULL only */
	if (!__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		for (unsigned c = 0; c < rt->ncpus; c++)
			if (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
				sync_idle_mark(rt, c);
	return 0;
}

enum pw_migration pw_get_migration(const struct pw_runtime *rt)
{
	return rt ? (enum pw_migration)__atomic_load_n(&rt->migration, __ATOMIC_RELAXED)
		  : PW_MIGRATION_OFF;
}

int pw_cpu_set_busy(struct pw_runtime *rt, unsigned cpu, int busy)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		return -EBUSY;
	if (__atomic_load_n(&rt->cpus[cpu].offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	__atomic_store_n(&rt->workers[cpu].busy, busy ? 1u : 0u, __ATOMIC_RELAXED);
	sync_idle_mark(rt, cpu);
	return 0;
}

unsigned pw__policy_target(struct pw_runtime *rt, unsigned this_cpu)
{
	/* get_nohz_timer_target(): this CPU if busy, else the first busy one */
	if (__atomic_load_n(&rt->workers[this_cpu].busy, __ATOMIC_RELAXED))
		return this_cpu;
	for (unsigned c = 0; c < rt->ncpus; c++)
		if (c != this_cpu && __atomic_load_n(&rt->workers[c].busy, __ATOMIC_RELAXED) &&
		    !__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_RELAXED)) {
			pw__count_add(&rt->workers[this_cpu].pushed, 1);
			return c;
		}
	return this_cpu;
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

void pw__kick(struct pw_runtime *rt, unsigned cpu, uint64_t event_ns)
{
	struct pw__worker *wk = &rt->workers[cpu];

	if (!pw__worker_may_sleep(rt, cpu))
		return;
	uint64_t until = __atomic_load_n(&wk->sleep_until_ns, __ATOMIC_RELAXED);
	if (event_ns != PW_KICK_WORK && until != 0 && event_ns >= until)
		return; /* it wakes in time by itself */
	__atomic_fetch_add(&wk->kick_seq, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &wk->kick_seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	add64(&wk->kicks_received, 1);
	if (pw__tls.rt == rt) /* kicks by threads that are no CPU: received only */
		pw__count_add(&rt->workers[pw__tls.cpu].kicks_sent, 1);
}

int pw_work_init(struct pw_work *w, void (*fn)(struct pw_work *))
{
	if (!w || !fn)
		return -EINVAL;
	w->func = fn;
	w->pw_next = NULL;
	w->pw_queued = 0;
	w->pw_spare = 0;
	return 0;
}

int pw_queue_work_on(struct pw_runtime *rt, unsigned cpu, struct pw_work *w)
{
	if (!rt || !w || !w->func || cpu >= rt->ncpus)
		return -EINVAL;
	uint32_t expect = 0;
	if (!__atomic_compare_exchange_n(&w->pw_queued, &expect, 1, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_RELAXED))
		return -EBUSY;
	struct pw__worker *wk = &rt->workers[cpu];
	struct pw_work *old = __atomic_load_n(&wk->work_head, __ATOMIC_RELAXED);
	do
		w->pw_next = old;
	while (!__atomic_compare_exchange_n(&wk->work_head, &old, w, true, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED)); /* release: w's fields */
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		pw__kick(rt, cpu, PW_KICK_WORK);
	return 0;
}

/* Run the work queued for @wk, oldest first.  Return: items run. */
static unsigned run_work(struct pw__worker *wk)
{
	/* acquire: pairs with the pushers' release */
	struct pw_work *list = __atomic_exchange_n(&wk->work_head, NULL, __ATOMIC_ACQUIRE);
	struct pw_work *fifo = NULL;
	unsigned n = 0;
	while (list) { /* the stack is newest first: reverse it */
		struct pw_work *next = list->pw_next;
		list->pw_next = fifo;
		fifo = list;
		list = next;
	}
	while (fifo) {
		struct pw_work *w = fifo;
		fifo = w->pw_next;
		w->pw_next = NULL;
		/* release: it may be queued again, even from its own function */
		__atomic_store_n(&w->pw_queued, 0, __ATOMIC_RELEASE);
		w->func(w);
		n++;
	}
	return n;
}

static void sleep_until(struct pw__worker *wk, uint32_t seq, uint64_t now, uint64_t next)
{
	struct timespec ts, *tp = NULL;
	if (next != UINT64_MAX) {
		uint64_t d = next - now;
		ts.tv_sec = (time_t)(d / 1000000000u);
		ts.tv_nsec = (long)(d % 1000000000u);
		tp = &ts;
	}
	syscall(SYS_futex, &wk->kick_seq, FUTEX_WAIT_PRIVATE, seq, tp, NULL, 0);
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

	if (wa->pin_core >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(wa->pin_core, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	__atomic_store_n(&wk->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELAXED);
	free(wa);
	if (pw_cpu_enter(rt, cpu)) /* start checked that nobody serves it */
		return NULL;

	uint64_t t_awake = pw_now_ns(rt);
	while (!__atomic_load_n(&rt->workers_stop, __ATOMIC_ACQUIRE) &&
	       !__atomic_load_n(&wk->stop, __ATOMIC_ACQUIRE)) {
		int n = pw_run_timers(rt, cpu);
		if (n == -EBUSY) {
			/* a migrator runs this CPU's global timers right now
			 * (it went idle, then woke): let it finish */
			sched_yield();
			continue;
		}
		unsigned w = run_work(wk);
		int busy = wk->poll ? wk->poll(rt, cpu, wk->poll_arg) : 0;
		__atomic_store_n(&wk->busy, busy > 0 ? 1u : 0u, __ATOMIC_RELAXED);
		if (n > 0)
			pw__count_add(&wk->timers_expired, (uint64_t)n);
		if (w)
			pw__count_add(&wk->work_done, w);
		if (busy > 0)
			pw__count_add(&wk->polls_busy, 1);
		if (n > 0 || w || busy > 0)
			continue;

		uint32_t seq = __atomic_load_n(&wk->kick_seq, __ATOMIC_ACQUIRE);
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
			pw__count_add(&wk->busy_ns, now - t_awake);
			__atomic_store_n(&wk->slept_at_ns, now, __ATOMIC_RELAXED);
			sleep_until(wk, seq, now, next);
			t_awake = pw_now_ns(rt);
			pw__count_add(&wk->idle_ns, t_awake - now);
			pw__count_add(&wk->wakeups, 1);
		}
		__atomic_store_n(&wk->sleeping, 0, __ATOMIC_RELAXED);
		if (pull)
			pw__tmigr_activate(rt, cpu);
	}
	pw__count_add(&wk->busy_ns, pw_now_ns(rt) - t_awake);
	__atomic_store_n(&wk->busy, 1u, __ATOMIC_RELAXED); /* stopped: busy again, as at start */
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
	syscall(SYS_futex, &wk->kick_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
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

int pw_cpu_idle(const struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return 0;
	return __atomic_load_n(&rt->workers[cpu].busy, __ATOMIC_ACQUIRE) == 0;
}

/* utime, stime (ticks) from /proc/self/task/<tid>/stat; ctx switches from
 * .../status. */
static void os_figures(pid_t tid, struct pw_cpu_stats *s)
{
	char path[64], buf[1024];
	long tck = sysconf(_SC_CLK_TCK);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			char *p = strrchr(buf, ')'); /* the name may hold spaces */
			unsigned long ut = 0, st = 0;
			if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
					&ut, &st) == 2 && tck > 0) {
				s->user_ns = (uint64_t)ut * (1000000000u / (uint64_t)tck);
				s->sys_ns = (uint64_t)st * (1000000000u / (uint64_t)tck);
			}
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	if (f) {
		while (fgets(buf, sizeof(buf), f)) {
			unsigned long long v;
			if (sscanf(buf, "voluntary_ctxt_switches: %llu", &v) == 1)
				s->voluntary_ctxsw = v;
			else if (sscanf(buf, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				s->involuntary_ctxsw = v;
		}
		fclose(f);
	}
}

int pw_stats_read(struct pw_runtime *rt, unsigned cpu, struct pw_cpu_stats *out)
{
	if (!rt || !out || cpu >= rt->ncpus)
		return -EINVAL;
	struct pw__worker *wk = &rt->workers[cpu];
	memset(out, 0, sizeof(*out));
	out->wakeups = ld64(&wk->wakeups);
	out->kicks_received = ld64(&wk->kicks_received);
	out->kicks_sent = ld64(&wk->kicks_sent);
	out->timers_expired = ld64(&wk->timers_expired);
	out->work_done = ld64(&wk->work_done);
	out->polls_busy = ld64(&wk->polls_busy);
	out->pushed = ld64(&wk->pushed);
	out->pulled = ld64(&wk->pulled);
	out->fast_path = ld64(&wk->fast_hits);
	out->armed = ld64(&wk->armed) + out->fast_path;
	out->same_bucket = ld64(&wk->same_bucket);
	out->remote_arms = ld64(&wk->remote_arms);
	struct pw__lock *locks[] = {&rt->cpus[cpu].base[PW_BASE_LOCAL].lock,
				    &rt->cpus[cpu].base[PW_BASE_GLOBAL].lock,
				    &rt->cpus[cpu].base[PW_BASE_DEF].lock, &rt->cpus[cpu].hr.lock};
	for (unsigned i = 0; i < sizeof(locks) / sizeof(locks[0]); i++) {
		out->lock_waits += ld64(&locks[i]->waits);
		out->lock_wait_ns += ld64(&locks[i]->wait_ns);
	}
	out->idle_ns = ld64(&wk->idle_ns);
	if (__atomic_load_n(&wk->sleeping, __ATOMIC_ACQUIRE)) {
		/* asleep now: count the sleep so far (it is added for good at
		 * wake-up; this read may come a moment before that) */
		uint64_t at = ld64(&wk->slept_at_ns), now = pw_now_ns(rt);
		if (at && now > at)
			out->idle_ns += now - at;
	}
	out->busy_ns = ld64(&wk->busy_ns);
	pid_t tid = __atomic_load_n(&wk->tid, __ATOMIC_RELAXED);
	if (tid && __atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		os_figures(tid, out);
	return 0;
}
