/* SPDX-License-Identifier: MIT */
/*
 * The runtime handle: creating and destroying a runtime, its per-CPU timer
 * bases and their invariant check, and the default runtime the kernel
 * names of <pinwheel/linux.h> act on.
 *
 * A "CPU" is a timer base set (pinned, global, deferrable, and hrtimers)
 * plus a few words (struct pw__cpu, internal.h): the run guard (1 while
 * some thread runs the CPU's timers, so two threads never expire its bases
 * at once: the CPU has one running mark; a PULL migrator takes it to run an
 * idle CPU's global timers), `served` (1 while a thread has entered as the
 * CPU with pw_cpu_enter()), the offline and idle marks and the statistics.
 * All of it is allocated once, by pw_runtime_create(): the only allocation
 * the timer code makes, apart from the hrtimer queues' growth (hrheap.c).
 *
 * The rest of the runtime lives in files named after what they hold:
 * cpu.c (which thread serves which CPU: the thread-local identity and the
 * run guard), softirq.c (the timer pass: pw_run_timers(),
 * pw_next_expiry_ns()), sim.c (the simulation driver: pw_sim_advance()),
 * clock.c (the clocks), and worker.c, policy.c, tmigr.c, hotplug.c,
 * stats.c for the workers, the policies, the PULL hierarchy, hotplug and
 * the statistics.  Here the application brings its own loop: a thread
 * enters as a CPU and calls pw_run_timers() when pw_next_expiry_ns() comes,
 * or a test drives everything with pw_sim_advance() on the simulated clock.
 *
 * Runtimes by number: a wheel timer names its runtime by a number of 10
 * bits in its flags word (PW__TF_RT_MASK), not by a pointer, so that it is
 * 40 bytes, the kernel's size, and so that the re-arm lane's one compare of
 * the flags proves the runtime too.  pw__runtimes[] maps the number back;
 * create takes the lowest free number (1..PW_MAX_RUNTIMES), destroy gives it
 * back.  A timer of a destroyed runtime must be set up again before use
 * (pw_runtime_destroy()'s rule), so a number used again names only the new
 * runtime's timers.
 *
 * Threads: create and destroy run on the thread managing the runtime
 * (destroy when no other thread uses it any more); the getters and the
 * default runtime on any thread.  Locks: ids_lock (a mutex) while create
 * and destroy take and give back a number; none else, except
 * pw_runtime_check(), which takes each base lock (and the hierarchy's
 * group locks) in turn.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The CPU field of both flags words (PW__CPU_BITS, <pinwheel/runtime.h>)
 * is the low bits, and no other flag may reach into it. */
_Static_assert(PW__TF_CPU_MASK == PW_MAX_CPUS - 1 && PW__HF_CPU_MASK == PW_MAX_CPUS - 1,
	       "the CPU fields are the low PW__CPU_BITS bits");
_Static_assert(PW__TF_RT_MASK >> PW__TF_RT_SHIFT == PW_MAX_RUNTIMES &&
		       !(PW__TF_RT_MASK & (PW__TF_CPU_MASK | PW__TF_PENDING | PW__TF_MIGRATING |
					   PW__TF_SHUTDOWN | PW__TF_USER_MASK | PW__TF_MAGIC_MASK)),
	       "pw_timer.pw_flags: the runtime's number has bits of its own for each runtime");
_Static_assert((PW__TF_CPU_MASK & (PW__TF_RT_MASK | PW__TF_PENDING | PW__TF_MIGRATING |
				   PW__TF_SHUTDOWN | PW__TF_USER_MASK | PW__TF_MAGIC_MASK)) == 0,
	       "pw_timer.pw_flags: the CPU field overlaps another field");
_Static_assert((PW__HF_CPU_MASK & (PW__HF_CLOCK_MASK | PW__HF_QUEUED | PW__HF_MIGRATING |
				   PW__HF_MAGIC_MASK)) == 0,
	       "pw_hrtimer.pw_flags: the CPU field overlaps another field");

static struct pw_runtime *default_rt; /* atomic */

struct pw_runtime *pw__runtimes[PW_MAX_RUNTIMES + 1];
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;

/* Give @rt the lowest free number.  Context: create; takes ids_lock.
 * Return: 0; -EMFILE when all are taken. */
static int id_take(struct pw_runtime *rt)
{
	int r = -EMFILE;
	pthread_mutex_lock(&ids_lock);
	for (unsigned i = 1; i <= PW_MAX_RUNTIMES; i++)
		if (!pw__runtimes[i]) {
			rt->id = i;
			__atomic_store_n(&pw__runtimes[i], rt, __ATOMIC_RELEASE);
			r = 0;
			break;
		}
	pthread_mutex_unlock(&ids_lock);
	return r;
}

/* Context: destroy; takes ids_lock. */
static void id_give_back(struct pw_runtime *rt)
{
	pthread_mutex_lock(&ids_lock);
	__atomic_store_n(&pw__runtimes[rt->id], NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&ids_lock);
}

/* The scheduling domains nest (pw_runtime_create()'s rules).  Context: create.
 * Return: 0, or -EINVAL. */
static int topo_check(const struct pw_config *cfg, unsigned ncpus)
{
	if (cfg->topo_levels > PW_TOPO_MAX_LEVELS)
		return -EINVAL;
	unsigned below = 1;
	for (unsigned l = 0; l < cfg->topo_levels; l++) {
		unsigned span = cfg->topo_span[l];
		if (span < 2 || span <= below || span % below)
			return -EINVAL;
		below = span;
	}
	return below > 1 && (ncpus <= below || ncpus % below) ? -EINVAL : 0;
}

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
	if (ncpus > PW_MAX_CPUS || topo_check(cfg, ncpus))
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
	int r = id_take(rt);
	if (r) {
		pw__tmigr_free(rt);
		pw__workers_free(rt);
		free(rt->cpus);
		free(rt);
		return r;
	}
	rt->migration = PW_MIGRATION_PULL;
	pw__lane_key_set(rt);
	rt->kick_rule = PW_KICK_LINUX_4_8;
	rt->topo_levels = cfg->topo_levels;
	for (unsigned l = 0; l < cfg->topo_levels; l++)
		rt->topo_span[l] = cfg->topo_span[l];
	rt->hz = cfg->hz;
	rt->tick_ns = 1000000000ull / cfg->hz;
	rt->jiffies_base = cfg->initial_jiffies;
	rt->clockwatch_fd = -1;
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
			b->stats = &rt->cpus[c].stats;
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
	/* subsystems built on the runtime go first: they own timers on it */
	for (unsigned i = 0; i < PW_RUNTIME_EXT_SLOTS; i++) {
		void *p = __atomic_exchange_n(&rt->ext[i], NULL, __ATOMIC_ACQ_REL);
		if (p && rt->ext_free[i])
			rt->ext_free[i](p);
	}
	struct pw_runtime *expect = rt;
	__atomic_compare_exchange_n(&default_rt, &expect, NULL, false, __ATOMIC_ACQ_REL,
				    __ATOMIC_RELAXED);
	if (pw__tls.rt == rt)
		pw__tls_set(NULL, 0);
	for (unsigned c = 0; c < rt->ncpus; c++)
		pw__hrbase_destroy(&rt->cpus[c].hr);
	pw__tmigr_free(rt);
	pw__workers_free(rt);
	id_give_back(rt);
	free(rt->cpus);
	free(rt);
}

int pw_runtime_ext_set(struct pw_runtime *rt, unsigned slot, void *p, void (*free_fn)(void *))
{
	if (!rt || slot >= PW_RUNTIME_EXT_SLOTS || !p)
		return -EINVAL;
	void *expect = NULL;
	if (!__atomic_compare_exchange_n(&rt->ext[slot], &expect, p, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return -EEXIST;
	/* read only by pw_runtime_destroy(), when no other thread uses @rt */
	__atomic_store_n(&rt->ext_free[slot], free_fn, __ATOMIC_RELEASE);
	return 0;
}

void *pw_runtime_ext(const struct pw_runtime *rt, unsigned slot)
{
	if (!rt || slot >= PW_RUNTIME_EXT_SLOTS)
		return NULL;
	return __atomic_load_n(&rt->ext[slot], __ATOMIC_ACQUIRE);
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

void pw_set_default_runtime(struct pw_runtime *rt)
{
	__atomic_store_n(&default_rt, rt, __ATOMIC_RELEASE);
}

struct pw_runtime *pw_default_runtime(void)
{
	return __atomic_load_n(&default_rt, __ATOMIC_ACQUIRE);
}
