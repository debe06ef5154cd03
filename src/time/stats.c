/* SPDX-License-Identifier: MIT */
/*
 * pw_stats_read(): a CPU's counters (stats.h), its base locks' waits, and
 * the OS's figures for its worker thread (context switches, user and
 * system time, from /proc/self/task/<tid>/ when asked).
 * pw_kick_stats_read(): the kicks a CPU received, by reason (worker.h).
 * pw_wake_lateness_read(): its worker's wake-up lateness (worker.c).
 * Context: any thread; lock-free reads (each counter untorn, the set not a
 * snapshot).
 * pw_pending_read(): the timers its bases hold, each base's count read
 * under that base's lock (the counts are plain fields the arm paths
 * change under it); any thread holding none of the runtime's locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pinwheel/stats.h>

#include "internal.h"

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
	const struct pw__stats *st = &rt->cpus[cpu].stats;
	memset(out, 0, sizeof(*out));
	out->wakeups = pw__ld64(&st->wakeups);
	out->kicks_received = pw__ld64(&wk->kicks_received);
	out->kicks_sent = pw__ld64(&st->kicks_sent);
	out->timers_expired = pw__ld64(&st->timers_expired);
	out->work_done = pw__ld64(&st->work_done);
	out->polls_busy = pw__ld64(&st->polls_busy);
	out->pushed = pw__ld64(&st->pushed);
	out->pulled = pw__ld64(&st->pulled);
	out->fast_path = pw__ld64(&st->fast_hits);
	out->armed = pw__ld64(&st->armed) + out->fast_path;
	out->same_bucket = pw__ld64(&st->same_bucket);
	out->remote_arms = pw__ld64(&st->remote_arms);
	struct pw__lock *locks[] = {&rt->cpus[cpu].base[PW_BASE_LOCAL].lock,
				    &rt->cpus[cpu].base[PW_BASE_GLOBAL].lock,
				    &rt->cpus[cpu].base[PW_BASE_DEF].lock, &rt->cpus[cpu].hr.lock};
	for (unsigned i = 0; i < sizeof(locks) / sizeof(locks[0]); i++) {
		out->lock_waits += pw__ld64(&locks[i]->waits);
		out->lock_wait_ns += pw__ld64(&locks[i]->wait_ns);
	}
	out->idle_ns = pw__ld64(&st->idle_ns);
	if (__atomic_load_n(&wk->sleeping, __ATOMIC_ACQUIRE)) {
		/* asleep now: count the sleep so far (it is added for good at
		 * wake-up; this read may come a moment before that) */
		uint64_t at = pw__ld64(&wk->slept_at_ns), now = pw_now_ns(rt);
		if (at && now > at)
			out->idle_ns += now - at;
	}
	out->busy_ns = pw__ld64(&st->busy_ns);
	pid_t tid = __atomic_load_n(&wk->tid, __ATOMIC_RELAXED);
	if (tid && __atomic_load_n(&rt->workers_on, __ATOMIC_ACQUIRE))
		os_figures(tid, out);
	return 0;
}

int pw_kick_stats_read(struct pw_runtime *rt, unsigned cpu, struct pw_kick_stats *out)
{
	if (!rt || !out || cpu >= rt->ncpus)
		return -EINVAL;
	const uint64_t *why = rt->workers[cpu].kicks_why; /* kickers add (worker.c) */
	out->remote_enqueue = pw__ld64(&why[PW__KICK_REMOTE_ENQUEUE]);
	out->idle_earlier = pw__ld64(&why[PW__KICK_IDLE_EARLIER]);
	out->hrtimer = pw__ld64(&why[PW__KICK_HRTIMER]);
	out->work = pw__ld64(&why[PW__KICK_WORK]);
	out->tmigr = pw__ld64(&why[PW__KICK_TMIGR]);
	return 0;
}

int pw_pending_read(struct pw_runtime *rt, unsigned cpu, struct pw_pending *out)
{
	if (!rt || !out || cpu >= rt->ncpus)
		return -EINVAL;
	struct pw__cpu *c = &rt->cpus[cpu];
	out->timers = 0;
	for (unsigned k = 0; k < PW_NR_BASES; k++) {
		pw__lock(&c->base[k].lock);
		out->timers += c->base[k].wheel.count;
		pw__unlock(&c->base[k].lock);
	}
	pw__lock(&c->hr.lock);
	out->hrtimers = c->hr.count;
	pw__unlock(&c->hr.lock);
	return 0;
}

uint64_t pw_wake_lateness_bound_ns(unsigned i)
{
	return i < PW_LATENESS_BUCKETS - 1 ? 1000ull << i : UINT64_MAX;
}

int pw_wake_lateness_read(struct pw_runtime *rt, unsigned cpu, struct pw_wake_lateness *out)
{
	if (!rt || !out || cpu >= rt->ncpus)
		return -EINVAL;
	const struct pw__worker *wk = &rt->workers[cpu]; /* its worker writes (worker.c) */
	out->count = 0;
	for (unsigned i = 0; i < PW_LATENESS_BUCKETS; i++) {
		out->bucket[i] = pw__ld64(&wk->late.bucket[i]);
		out->count += out->bucket[i];
	}
	out->sum_ns = pw__ld64(&wk->late.sum_ns);
	out->max_ns = pw__ld64(&wk->late.max_ns);
	return 0;
}
