/* SPDX-License-Identifier: MIT */
/*
 * pw_vmstat(): vmstat-like lines for a runtime's workers, every interval:
 *   in     wake-ups + kicks received per second (vmstat's interrupts column,
 *          the one seed 000's post compares with migration on and off:
 *          docs/seeds.md)
 *   cs     context switches of the worker threads per second (from /proc)
 *   us sy id  user, system and idle time of the workers, % of their CPUs
 *   tim    timer callbacks per second;  kick  kicks per second;
 *   push   timers pushed to another CPU per second (PW_MIGRATION_PUSH)
 *   pull   idle CPUs' timers expired by a migrator per second (PULL)
 * Everything is the difference of two pw_stats_read() snapshots per CPU.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pinwheel/stats.h>

#include "osclock.h"
#include "internal.h"

struct totals {
	uint64_t in, cs, user, sys, idle, tim, kick, push, pull, now;
};

static void sum(struct pw_runtime *rt, struct totals *t)
{
	memset(t, 0, sizeof(*t));
	for (unsigned c = 0; c < rt->ncpus; c++) {
		struct pw_cpu_stats s;
		pw_stats_read(rt, c, &s);
		t->in += s.wakeups + s.kicks_received;
		t->cs += s.voluntary_ctxsw + s.involuntary_ctxsw;
		t->user += s.user_ns;
		t->sys += s.sys_ns;
		t->idle += s.idle_ns;
		t->tim += s.timers_expired;
		t->kick += s.kicks_received;
		t->push += s.pushed;
		t->pull += s.pulled;
	}
	t->now = pw__clock_ns(CLOCK_MONOTONIC);
}

static double pct(uint64_t part, double whole)
{
	double p = whole > 0 ? 100.0 * (double)part / whole : 0;
	return p > 100 ? 100 : p;
}

int pw_vmstat(struct pw_runtime *rt, FILE *out, unsigned interval_ms, unsigned count)
{
	if (!rt || !out || !interval_ms)
		return -EINVAL;
	struct totals a, b;
	fprintf(out, "%10s %9s %4s %4s %4s %10s %9s %9s %9s\n", "in", "cs", "us", "sy", "id", "tim",
		"kick", "push", "pull");
	sum(rt, &a);
	for (unsigned i = 0; !count || i < count; i++) {
		struct timespec ts = {(time_t)(interval_ms / 1000), (long)(interval_ms % 1000) * 1000000};
		nanosleep(&ts, NULL);
		sum(rt, &b);
		double secs = (double)(b.now - a.now) / 1e9;
		double cpu_ns = (double)(b.now - a.now) * rt->ncpus;
		fprintf(out, "%10.0f %9.0f %4.0f %4.0f %4.0f %10.0f %9.0f %9.0f %9.0f\n",
			(double)(b.in - a.in) / secs, (double)(b.cs - a.cs) / secs,
			pct(b.user - a.user, cpu_ns), pct(b.sys - a.sys, cpu_ns),
			pct(b.idle - a.idle, cpu_ns), (double)(b.tim - a.tim) / secs,
			(double)(b.kick - a.kick) / secs, (double)(b.push - a.push) / secs,
			(double)(b.pull - a.pull) / secs);
		fflush(out);
		a = b;
	}
	return 0;
}
