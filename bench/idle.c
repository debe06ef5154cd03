/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench idle: who wakes up for an idle CPU's timers, per migration
 * policy (the situation of seeds 000 and 003, on the runtime's workers).
 *
 * CPU 0 is busy: its poll hook always reports work (a NAPI loop that never
 * runs dry).  Every other CPU is idle but for "packets": every millisecond
 * the main thread queues one work item on each of them, which re-arms 4 of
 * that CPU's 256 connection timers (non-pinned wheel timers, random 5–50
 * ms), as a TCP stack re-arms a retransmit timer per packet.  Measured per
 * policy, from pw_stats_read() deltas over the run:
 *   wake/s   wake-ups of the idle CPUs' workers (timeouts and kicks);
 *   fired/s  callbacks run on the idle CPUs themselves;
 *   pulled/s callbacks a migrator ran for them (PULL);
 *   pushed/s timers the idle CPUs' arms put on CPU 0 (PUSH);
 *   remote/s arms that ended on another CPU (each one a foreign lock).
 * OFF: an idle CPU wakes for every timer bucket.  PUSH: its timers go to the
 * busy CPU at arm time (every arm takes CPU 0's lock: seed 003's pile-up).
 * PULL: it arms locally and sleeps; CPU 0 expires its timers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "bench.h"
#include "idle.h"
#include "progress.h"

#define CONNS 256
#define ARMS_PER_PACKET 4

struct idle_cpu {
	struct pw_work packet;
	struct pw_timer conn[CONNS];
	uint64_t rng;
	unsigned cpu;
};

static struct pw_runtime *rt;

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void conn_fn(struct pw_timer *t)
{
	(void)t; /* a retransmit would go here */
}

/* Runs on the idle CPU's worker: one packet re-arms 4 connection timers. */
static void packet_fn(struct pw_work *w)
{
	struct idle_cpu *ic = (struct idle_cpu *)((char *)w - offsetof(struct idle_cpu, packet));
	uint64_t j = pw_jiffies(rt);
	for (unsigned k = 0; k < ARMS_PER_PACKET; k++) {
		uint64_t r = xs(&ic->rng);
		pw_mod_timer(&ic->conn[r % CONNS], j + 5 + (r >> 32) % 46);
	}
}

static int busy_poll(struct pw_runtime *r, unsigned cpu, void *arg)
{
	(void)r;
	(void)cpu;
	(void)arg;
	return 1;
}

struct sums {
	uint64_t wake, fired, pulled, pushed, remote;
};

static void sum(unsigned ncpus, struct sums *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned c = 0; c < ncpus; c++) {
		struct pw_cpu_stats st;
		pw_stats_read(rt, c, &st);
		s->pulled += st.pulled; /* by CPU 0, for the others */
		if (c == 0)
			continue;
		s->wake += st.wakeups;
		s->fired += st.timers_expired;
		s->pushed += st.pushed;
		s->remote += st.remote_arms;
	}
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
	nanosleep(&ts, NULL);
}

/* One policy.  Return: 0, or a negative errno (printed). */
static int run_policy(enum pw_migration policy, const char *name, unsigned ncpus, unsigned ms,
		      int json, const char *machine)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	int r = pw_runtime_create(&cfg, &rt);
	if (r) {
		progress_end();
		fprintf(stderr, "pinwheel-bench idle: pw_runtime_create: %s\n", strerror(-r));
		return r;
	}
	struct idle_cpu *ic = calloc(ncpus, sizeof(*ic));
	if (!ic) {
		pw_runtime_destroy(rt);
		return -ENOMEM;
	}
	for (unsigned c = 1; c < ncpus; c++) {
		ic[c].cpu = c;
		ic[c].rng = 0x9e3779b97f4a7c15ull * (c + 1);
		pw_work_init(&ic[c].packet, packet_fn);
		for (unsigned k = 0; k < CONNS; k++)
			pw_timer_setup(rt, &ic[c].conn[k], conn_fn, 0);
	}
	pw_set_migration(rt, policy);
	pw_set_poll(rt, 0, busy_poll, NULL);
	r = pw_runtime_start(rt);
	if (r) {
		progress_end();
		fprintf(stderr, "pinwheel-bench idle: pw_runtime_start: %s\n", strerror(-r));
		free(ic);
		pw_runtime_destroy(rt);
		return r;
	}

	/* warm up (timers armed, steady state), then measure */
	struct sums a, b;
	uint64_t t0 = 0;
	for (unsigned phase = 0; phase < 2; phase++) {
		unsigned len = phase ? ms : ms / 4 + 50;
		if (phase) {
			sum(ncpus, &a);
			t0 = bench_now_ns();
		}
		uint64_t next = bench_now_ns();
		for (unsigned i = 0; i < len; i++) {
			for (unsigned c = 1; c < ncpus; c++)
				pw_queue_work_on(rt, c, &ic[c].packet); /* -EBUSY: still queued */
			next += 1000000;
			uint64_t now = bench_now_ns();
			if (next > now)
				sleep_ns(next - now);
		}
	}
	sum(ncpus, &b);
	progress_end();
	double secs = (double)(bench_now_ns() - t0) / 1e9;
	double per = 1.0 / secs;
	double wake = (double)(b.wake - a.wake) * per, fired = (double)(b.fired - a.fired) * per;
	double pulled = (double)(b.pulled - a.pulled) * per, pushed = (double)(b.pushed - a.pushed) * per;
	double remote = (double)(b.remote - a.remote) * per;
	if (json)
		printf("{\"impl\":\"pinwheel\",\"workload\":\"idle\",\"policy\":\"%s\",\"cpus\":%u,"
		       "\"wakeups_per_s\":%.0f,\"fired_idle_per_s\":%.0f,\"pulled_per_s\":%.0f,"
		       "\"pushed_per_s\":%.0f,\"remote_arms_per_s\":%.0f,\"machine\":\"%s\"}\n",
		       name, ncpus, wake, fired, pulled, pushed, remote, machine);
	else
		printf("%-6s %10.0f %10.0f %10.0f %10.0f %10.0f\n", name, wake, fired, pulled, pushed,
		       remote);
	pw_runtime_stop(rt);
	pw_runtime_destroy(rt);
	free(ic);
	return 0;
}

int idle_main(unsigned ncpus, unsigned ms, int json, const char *machine)
{
	static const struct {
		enum pw_migration p;
		const char *name;
	} pol[] = {{PW_MIGRATION_OFF, "off"}, {PW_MIGRATION_PUSH, "push"}, {PW_MIGRATION_PULL, "pull"}};
	if (!json) {
		printf("# %s\n# %u CPUs: CPU 0 busy (poll hook), CPUs 1..%u idle, each taking a "
		       "packet a ms that re-arms %u of its %u timers (5-50 ms); rates per second, "
		       "summed over the idle CPUs\n",
		       machine, ncpus, ncpus - 1, ARMS_PER_PACKET, CONNS);
		printf("%-6s %10s %10s %10s %10s %10s\n", "policy", "wake/s", "fired/s", "pulled/s",
		       "pushed/s", "remote/s");
	}
	const unsigned npol = sizeof(pol) / sizeof(pol[0]);
	for (unsigned i = 0; i < npol; i++) {
		progress_start(i + 1, npol, "idle: migration %s, %u CPUs", pol[i].name, ncpus);
		if (run_policy(pol[i].p, pol[i].name, ncpus, ms, json, machine))
			return 1;
	}
	return 0;
}
