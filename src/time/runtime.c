/* SPDX-License-Identifier: MIT */
/*
 * The runtime handle: per-CPU timer bases, which thread serves which CPU,
 * running a CPU's due timers, and the deterministic simulation driver.
 *
 * A "CPU" is a timer base set (pinned, global, deferrable, and hrtimers)
 * plus two words: the run guard (1 while some thread runs the CPU's
 * timers, so two threads never expire its bases at once: the CPU has one
 * running mark; a PULL migrator takes it to run an idle CPU's global
 * timers) and
 * `served` (1 while a thread has entered as the CPU with pw_cpu_enter()).
 * The calling thread's identity (which runtime and CPU it acts as, and
 * which callback it is running) is thread-local: pw__tls.
 *
 * Worker threads, tickless sleep and migration policies are in
 * src/time/; here the application brings its own loop: a thread enters
 * as a CPU and calls pw_run_timers() when pw_next_expiry_ns() comes, or a
 * test drives everything with pw_sim_advance() on the simulated clock.
 *
 * The simulation driver (pw_sim_advance()) takes every CPU's run guard,
 * then repeatedly finds the earliest event any CPU must act on (lowest CPU
 * number first on ties), sets the simulated clock to it, and runs that
 * CPU's due timers as that CPU.  A CPU idle in the PULL hierarchy (marked
 * idle with pw_cpu_set_idle()) acts on its pinned timers and hrtimers only,
 * and on the other CPUs' events it handles as a migrator; a CPU that is
 * not idle there runs its deferrable timers too (it is awake).  Each step
 * is O(CPUs) lock round trips; the order depends only on the calls made,
 * so runs replay exactly.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__thread struct pw__tls pw__tls;
__thread uint64_t *pw__fast_hits;
__thread struct pw__stats pw__stats_sink;

void pw__tls_set(struct pw_runtime *rt, int cpu)
{
	pw__tls.rt = rt;
	pw__tls.cpu = rt ? cpu : 0;
	pw__tls.stats = rt ? &rt->cpus[cpu].stats : NULL;
	pw__fast_hits = rt ? &rt->cpus[cpu].stats.fast_hits : NULL;
}

static struct pw_runtime *default_rt; /* atomic */

void pw_config_init(struct pw_config *cfg)
{
	if (!cfg)
		return;
	memset(cfg, 0, sizeof(*cfg));
	cfg->ncpus = 0;
	cfg->hz = 1000;
	cfg->clock = PW_CLOCK_MONOTONIC;
	cfg->sim_start_ns = 0;
}

int pw_runtime_create(const struct pw_config *cfg, struct pw_runtime **out)
{
	struct pw_config def;
	struct pw_runtime *rt;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!cfg) {
		pw_config_init(&def);
		cfg = &def;
	}
	if (cfg->hz < 10 || cfg->hz > 100000)
		return -EINVAL;
	if (cfg->clock != PW_CLOCK_MONOTONIC && cfg->clock != PW_CLOCK_SIM)
		return -EINVAL;
	unsigned ncpus = cfg->ncpus;
	if (!ncpus) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		ncpus = n > 0 ? (unsigned)n : 1;
		if (ncpus > PW_MAX_CPUS)
			ncpus = PW_MAX_CPUS;
	}
	if (ncpus > PW_MAX_CPUS)
		return -EINVAL;

	rt = calloc(1, sizeof(*rt));
	if (!rt)
		return -ENOMEM;
	rt->cpus = aligned_alloc(PW_CACHELINE, ncpus * sizeof(struct pw__cpu));
	if (!rt->cpus) {
		free(rt);
		return -ENOMEM;
	}
	memset(rt->cpus, 0, ncpus * sizeof(struct pw__cpu));
	rt->ncpus = ncpus;
	if (pw__workers_init(rt)) {
		free(rt->cpus);
		free(rt);
		return -ENOMEM;
	}
	if (pw__tmigr_init(rt)) {
		pw__workers_free(rt);
		free(rt->cpus);
		free(rt);
		return -ENOMEM;
	}
	rt->migration = PW_MIGRATION_PULL;
	rt->hz = cfg->hz;
	rt->tick_ns = 1000000000ull / cfg->hz;
	rt->clock = cfg->clock;
	rt->sim_now_ns = cfg->sim_start_ns;
	rt->sim_realtime_offset_ns = cfg->sim_realtime_offset_ns;

	uint64_t jnow = pw_jiffies(rt);
	rt->jiffies_seen = jnow;
	for (unsigned c = 0; c < ncpus; c++) {
		for (unsigned k = 0; k < PW_NR_BASES; k++) {
			struct pw__base *b = &rt->cpus[c].base[k];
			pw__lock_init(&b->lock);
			b->cpu = c;
			b->kind = k;
			pw__wheel_init(&b->wheel, cfg->hz, jnow);
		}
		pw__hrbase_init(&rt->cpus[c].hr, c);
	}
	*out = rt;
	return 0;
}

void pw_runtime_destroy(struct pw_runtime *rt)
{
	if (!rt)
		return;
	pw_runtime_stop(rt);
	struct pw_runtime *expect = rt;
	__atomic_compare_exchange_n(&default_rt, &expect, NULL, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
	if (pw__tls.rt == rt)
		pw__tls_set(NULL, 0);
	for (unsigned c = 0; c < rt->ncpus; c++)
		pw__hrbase_destroy(&rt->cpus[c].hr);
	pw__tmigr_free(rt);
	pw__workers_free(rt);
	free(rt->cpus);
	free(rt);
}

unsigned pw_runtime_ncpus(const struct pw_runtime *rt)
{
	return rt ? rt->ncpus : 0;
}

unsigned pw_runtime_hz(const struct pw_runtime *rt)
{
	return rt ? rt->hz : 0;
}

int pw_runtime_check(struct pw_runtime *rt)
{
	if (!rt)
		return -EINVAL;
	for (unsigned c = 0; c < rt->ncpus; c++) {
		for (unsigned k = 0; k < PW_NR_BASES; k++)
			if (pw__base_check(rt, &rt->cpus[c].base[k]))
				return -EFAULT;
		if (pw__hrbase_check(&rt->cpus[c].hr))
			return -EFAULT;
	}
	return pw__tmigr_check(rt) ? -EFAULT : 0;
}

int pw_cpu_enter(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	if (pw__tls.rt)
		return -EBUSY;
	if (__atomic_load_n(&rt->cpus[cpu].offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	uint32_t expect = 0;
	if (!__atomic_compare_exchange_n(&rt->cpus[cpu].served, &expect, 1, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return -EBUSY;
	pw__tls_set(rt, (int)cpu);
	return 0;
}

void pw_cpu_exit(struct pw_runtime *rt)
{
	/* From inside a run, pw__tls names the CPU being run, not the one
	 * entered: leave it alone (documented no-op). */
	if (!rt || pw__tls.rt != rt || pw__tls.in_run)
		return;
	__atomic_store_n(&rt->cpus[pw__tls.cpu].served, 0, __ATOMIC_RELEASE);
	pw__tls_set(NULL, 0);
}

int pw_this_cpu(void)
{
	return pw__tls.rt ? pw__tls.cpu : -1;
}

/* Run @cpu's due timers at clock reading @now as that CPU: hrtimers
 * first, then the wheel (the kernel's interrupt, then softirq), then the
 * idle CPUs' global timers it handles as a migrator (tmigr.c).
 * Context: the holder of @cpu's run guard (the simulation: of every
 * guard, @guards_held). */
static int run_cpu(struct pw_runtime *rt, unsigned cpu, uint64_t now, bool guards_held)
{
	struct pw__tls saved = pw__tls;
	uint64_t *saved_hits = pw__fast_hits;
	uint64_t jnow = now / rt->tick_ns;
	int n;

	pw__jiffies_note(rt, jnow);
	pw__tls_set(rt, (int)cpu);
	pw__tls.in_run = true;
	n = pw__hrbase_run(rt, &rt->cpus[cpu].hr, now);
	for (unsigned k = 0; k < PW_NR_BASES; k++)
		n += pw__base_run(rt, &rt->cpus[cpu].base[k], jnow);
	n += pw__tmigr_handle(rt, cpu, now, guards_held);
	/* an idle CPU woken for a pinned timer ran its global ones too */
	if (pw__tmigr_cpu_idle(&rt->tmigr, cpu))
		pw__tmigr_refresh(rt, cpu);
	pw__tls = saved;
	pw__fast_hits = saved_hits;
	return n;
}

bool pw__guard_try(struct pw__cpu *c)
{
	uint32_t expect = 0;
	/* acquire/release: the next runner sees the last runner's writes to
	 * the base that were made outside the lock (none today; cheap). */
	return __atomic_compare_exchange_n(&c->run_guard, &expect, 1, false, __ATOMIC_ACQUIRE,
					   __ATOMIC_RELAXED);
}

void pw__guard_release(struct pw__cpu *c)
{
	__atomic_store_n(&c->run_guard, 0, __ATOMIC_RELEASE);
}

int pw_run_timers(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return -EINVAL;
	struct pw__cpu *c = &rt->cpus[cpu];
	if (__atomic_load_n(&c->offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	/* From one of @cpu's own callbacks this is "mine" and the guard says -EBUSY. */
	bool mine = pw__tls.rt == rt && pw__tls.cpu == (int)cpu;
	if (!mine && __atomic_load_n(&c->served, __ATOMIC_ACQUIRE))
		return -EPERM;
	if (!pw__guard_try(c))
		return -EBUSY;
	int n = run_cpu(rt, cpu, pw_now_ns(rt), false);
	pw__guard_release(c);
	return n;
}

uint64_t pw__base_next_ns(struct pw_runtime *rt, struct pw__base *b)
{
	uint64_t ns = UINT64_MAX;
	pw__lock(&b->lock);
	if (pw__wheel_has_buckets(&b->wheel))
		ns = pw_jiffies_to_ns(rt, pw__wheel_next_expiry(&b->wheel));
	pw__unlock(&b->lock);
	return ns;
}

static inline void take_min(uint64_t *best, uint64_t v)
{
	if (v < *best)
		*best = v;
}

/* Earliest event @cpu must act on, in ns: its hrtimers and pinned timers;
 * its global timers unless it is idle in the migration hierarchy (then a
 * migrator runs them); its deferrable timers if @def and it is not idle
 * there; and the other CPUs' events it handles as a migrator or waker. */
static uint64_t cpu_next_ns(struct pw_runtime *rt, unsigned cpu, bool def)
{
	struct pw__cpu *c = &rt->cpus[cpu];
	uint64_t best = pw__hrbase_next_ns(rt, &c->hr);
	take_min(&best, pw__base_next_ns(rt, &c->base[PW_BASE_LOCAL]));
	if (!pw__tmigr_cpu_idle(&rt->tmigr, cpu)) {
		take_min(&best, pw__base_next_ns(rt, &c->base[PW_BASE_GLOBAL]));
		if (def)
			take_min(&best, pw__base_next_ns(rt, &c->base[PW_BASE_DEF]));
	}
	take_min(&best, pw__tmigr_duty(rt, cpu));
	return best;
}

uint64_t pw_next_expiry_ns(struct pw_runtime *rt, unsigned cpu)
{
	if (!rt || cpu >= rt->ncpus)
		return UINT64_MAX;
	return cpu_next_ns(rt, cpu, false); /* deferrable timers never wake */
}

int pw_sim_advance(struct pw_runtime *rt, uint64_t ns)
{
	if (!rt || rt->clock != PW_CLOCK_SIM)
		return -EINVAL;
	if (pw__tls.in_run)
		return -EDEADLK;

	/* An offline CPU's guard stays with pw_cpu_offline(); it has no timers. */
	for (unsigned c = 0; c < rt->ncpus; c++)
		while (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE) &&
		       !pw__guard_try(&rt->cpus[c]))
			sched_yield();

	uint64_t now = __atomic_load_n(&rt->sim_now_ns, __ATOMIC_RELAXED);
	uint64_t target = now + ns < now ? UINT64_MAX : now + ns;
	for (;;) {
		uint64_t best = UINT64_MAX;
		unsigned best_cpu = 0;
		for (unsigned c = 0; c < rt->ncpus; c++) {
			if (__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
				continue;
			/* a CPU that is not idle in the hierarchy is awake: it
			 * runs its deferrable timers when they are due */
			uint64_t e = cpu_next_ns(rt, c, true);
			if (e < best) {
				best = e;
				best_cpu = c;
			}
		}
		if (best > target || best == UINT64_MAX)
			break;
		if (best > now) {
			now = best;
			pw__sim_set(rt, now);
		}
		run_cpu(rt, best_cpu, now, true);
	}
	if (target > now)
		pw__sim_set(rt, target);

	for (unsigned c = 0; c < rt->ncpus; c++)
		if (!__atomic_load_n(&rt->cpus[c].offline, __ATOMIC_ACQUIRE))
			pw__guard_release(&rt->cpus[c]);
	return 0;
}

void pw_set_default_runtime(struct pw_runtime *rt)
{
	__atomic_store_n(&default_rt, rt, __ATOMIC_RELEASE);
}

struct pw_runtime *pw_default_runtime(void)
{
	return __atomic_load_n(&default_rt, __ATOMIC_ACQUIRE);
}
