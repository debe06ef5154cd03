/* SPDX-License-Identifier: MIT */
/*
 * The runtime: a handle that owns one timer base per "CPU" (a thread that
 * serves that CPU), the clock the timers are measured on, and the calls a
 * thread uses to act as a CPU and run its due timers, or that drive the
 * simulated clock.  Design: src/time/runtime.c (the handle), cpu.c (which
 * thread serves which CPU), softirq.c (the timer pass), sim.c (the
 * simulation), clock.c (the clocks).
 *
 * Conventions: functions return 0 or a negative errno; times are uint64_t
 * nanoseconds on the runtime's clock, or jiffies where the kernel uses
 * jiffies.  Each function says which threads may call it (Context).
 * docs/design/concurrency.md holds the locking rules.
 */
#ifndef PINWHEEL_RUNTIME_H
#define PINWHEEL_RUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* private: the width of the CPU field in a timer's flags word (the low bits
 * of struct pw_timer.pw_flags and struct pw_hrtimer.pw_flags).  The one
 * place it is defined: the masks in <pinwheel/timer.h> and src/time/hrbase.h
 * derive from it, and src/time/runtime.c checks that the other flag bits
 * stay clear of it. */
#define PW__CPU_BITS 12

/* Most CPUs one runtime serves (the CPU number lives in PW__CPU_BITS bits of
 * a timer). */
#define PW_MAX_CPUS (1u << PW__CPU_BITS)

/* private: the CPU field's mask, 0x00000fffu */
#define PW__CPU_MASK (PW_MAX_CPUS - 1)

/* Most runtimes alive at once: a wheel timer names its runtime by a
 * number of 10 bits in its flags word (0 is never one), so that the timer
 * is 40 bytes, as the kernel's. */
#define PW_MAX_RUNTIMES 1023u

/*
 * The clock a runtime measures time on: its clock source.  pw_now_ns(),
 * jiffies, every wheel timer, pw_next_expiry_ns() and the workers' sleeps
 * are on this clock.
 *
 * Not to be confused with the clock ids <pinwheel/hrtimer.h> takes: those
 * are the POSIX ids CLOCK_MONOTONIC, CLOCK_REALTIME and CLOCK_BOOTTIME (an
 * int), and name an hrtimer's clock base, the clock its deadline is kept
 * on.  Every base is read through the runtime's clock source:
 *  - PW_CLOCK_MONOTONIC: each POSIX id reads the OS clock of that id
 *    (clock_gettime()); CLOCK_MONOTONIC is then the same clock as
 *    pw_now_ns().
 *  - PW_CLOCK_SIM: CLOCK_MONOTONIC and CLOCK_BOOTTIME read the simulated
 *    time (pw_now_ns()), CLOCK_REALTIME reads it plus
 *    pw_config.sim_realtime_offset_ns; no OS clock is read.
 * When a CPU must wake for an hrtimer is converted to the runtime's clock
 * (pw_next_expiry_ns() is always on the pw_now_ns() scale).
 */
enum pw_clock_id {
	PW_CLOCK_MONOTONIC = 0, /* CLOCK_MONOTONIC: real time, never jumps back */
	PW_CLOCK_SIM = 1,       /* simulated: moves only by pw_sim_advance() */
};

/* Most scheduling-domain levels below the whole machine (pw_config.topo_span). */
#define PW_TOPO_MAX_LEVELS 4

/* Runtime configuration.  Fill with pw_config_init(), then change fields. */
struct pw_config {
	unsigned ncpus;          /* CPUs (timer bases); 0 = online CPUs */
	unsigned hz;             /* wheel tick rate, jiffies per second (10..100000) */
	enum pw_clock_id clock;  /* PW_CLOCK_MONOTONIC (default) or PW_CLOCK_SIM */
	uint64_t sim_start_ns;   /* PW_CLOCK_SIM only: the clock's first reading */
	int64_t sim_realtime_offset_ns; /* PW_CLOCK_SIM only: CLOCK_REALTIME minus
					 * the simulated monotonic clock */
	uint64_t initial_jiffies; /* jiffies at clock 0 (the kernel's
				   * INITIAL_JIFFIES is -300 * HZ, so jiffies
				   * wrap 5 minutes after boot); default 0 */
	/* The scheduling domains PW_MIGRATION_PUSH walks (the kernel's
	 * for_each_domain(): SMT siblings, the cores sharing a cache or a
	 * socket, ...), innermost first; the whole machine is always the
	 * last domain and is not listed.  A domain of level l is a block of
	 * topo_span[l] CPUs with consecutive numbers: CPU c's is
	 * [c - c % span, c - c % span + span).  So 2 sockets x 8 cores x 2
	 * threads (32 CPUs) is topo_levels 2, topo_span {2, 16}: CPUs 2k and
	 * 2k+1 are siblings, 0-15 one socket.  Default topo_levels 0: one
	 * flat domain, every CPU in number order.  See pw_runtime_create()
	 * for the rules. */
	unsigned topo_levels;
	unsigned topo_span[PW_TOPO_MAX_LEVELS];
};

struct pw_runtime; /* opaque */

/**
 * pw_config_init() - fill @cfg with the defaults.
 * Defaults: ncpus 0 (online CPUs), hz 1000, PW_CLOCK_MONOTONIC, sim_start_ns 0,
 * sim_realtime_offset_ns 0, initial_jiffies 0, topo_levels 0 (one flat
 * scheduling domain).
 * Context: any thread.
 */
void pw_config_init(struct pw_config *cfg);

/**
 * pw_runtime_create() - make a runtime with one timer base per CPU.
 * @cfg: configuration (NULL = defaults).
 * @out: receives the handle.
 * Context: any thread.  Allocates; the only allocation the timer code makes.
 * The topology (pw_config.topo_levels, topo_span[]) must nest: topo_levels
 * at most PW_TOPO_MAX_LEVELS, topo_span[0] at least 2, each span a proper
 * multiple of the one before, and the CPU count (ncpus, or the online CPUs
 * for 0) a multiple of the last span and larger than it.
 * Return: 0; -EINVAL for a NULL @out, hz out of range, ncpus above
 * PW_MAX_CPUS, an unknown clock or a topology that breaks those rules;
 * -EMFILE with PW_MAX_RUNTIMES runtimes alive; -ENOMEM.
 */
int pw_runtime_create(const struct pw_config *cfg, struct pw_runtime **out);

/**
 * pw_runtime_destroy() - free a runtime.  NULL is a no-op.
 *
 * Timers still pending are dropped: no callback runs, and because timers are
 * the caller's memory and arming never allocates, nothing leaks.  Destroy
 * does not touch the timers themselves (the caller may already have freed
 * them); a timer that was armed on @rt must be set up again
 * (pw_timer_setup()) before any other use.
 * Workers still running are stopped first (pw_runtime_stop()).
 * Context: one thread, when no other thread uses @rt any more and no thread
 * is inside pw_run_timers() or a callback of @rt.  If it is the default
 * runtime, the default is cleared.
 */
void pw_runtime_destroy(struct pw_runtime *rt);

/* Extension slots: where a subsystem built on a runtime keeps its state. */
#define PW_RUNTIME_EXT_SLOTS 4
#define PW_RUNTIME_EXT_NET 0 /* the net layer (<pinwheel/net.h>) */

/**
 * pw_runtime_ext_set() - attach @p to @rt's extension slot @slot, once.
 * pw_runtime_destroy() calls @free_fn(@p) before it frees anything else
 * (the subsystem's timers are still valid then).
 * Context: any thread.  Race-free: of two threads setting one slot, one
 * wins.  Return: 0; -EINVAL (NULL, slot out of range); -EEXIST (set).
 */
int pw_runtime_ext_set(struct pw_runtime *rt, unsigned slot, void *p, void (*free_fn)(void *));

/**
 * pw_runtime_ext() - what extension slot @slot holds, or NULL.
 * Context: any thread; lock-free.
 */
void *pw_runtime_ext(const struct pw_runtime *rt, unsigned slot);

/**
 * pw_runtime_ncpus() - how many CPUs @rt serves.
 * Context: any thread.  Return: the count (>= 1).
 */
unsigned pw_runtime_ncpus(const struct pw_runtime *rt);

/**
 * pw_runtime_hz() - the tick rate of @rt in jiffies per second.
 * Context: any thread.
 */
unsigned pw_runtime_hz(const struct pw_runtime *rt);

/**
 * pw_runtime_check() - verify every invariant of every timer base of @rt.
 *
 * Walks each of the three wheel bases of every CPU under its lock (list
 * links, each timer's bucket, CPU, base and PENDING bit, the pending
 * bitmap, the bucket windows relative to the base clock, the cached next
 * expiry, the pending count), each CPU's hrtimer queues (heap order, each
 * timer's index, CPU and clock, the count), and the PULL hierarchy (each
 * group's active mask, migrator and idle children's first events).  Tests
 * call it after every step.  O(pending timers).
 * Context: any thread, callbacks included (takes each base lock in turn).
 * Return: 0 when all hold; -EINVAL for NULL; -EFAULT (and a message on
 * stderr naming the broken invariant) when one is broken.
 */
int pw_runtime_check(struct pw_runtime *rt);

/**
 * pw_cpu_enter() - the calling thread serves @cpu of @rt from now on.
 *
 * While entered, timers the thread arms are enqueued on @cpu (the kernel's
 * "local CPU"), pw_this_cpu() returns @cpu, and the thread is the one that
 * runs @cpu's callbacks through pw_run_timers().
 * Context: any thread that serves no CPU yet.
 * Return: 0; -EINVAL (NULL or @cpu out of range); -EBUSY if this thread
 * already serves a CPU or another thread serves @cpu; -ENODEV (@cpu is
 * offline: pw_cpu_offline()).
 */
int pw_cpu_enter(struct pw_runtime *rt, unsigned cpu);

/**
 * pw_cpu_exit() - the calling thread stops serving its CPU of @rt.
 * Context: the thread that entered.  A no-op for a thread that serves no
 * CPU of @rt.
 */
void pw_cpu_exit(struct pw_runtime *rt);

/**
 * pw_this_cpu() - the CPU the calling thread acts as.
 * Inside a callback it is the CPU running it: the timer's CPU, or (under
 * PW_MIGRATION_PULL) the migrator expiring an idle CPU's global timer.
 * Context: any thread.  Return: the CPU number, or -1 if the thread is no CPU.
 */
int pw_this_cpu(void);

/**
 * pw_now_ns() - the runtime's clock, in nanoseconds.
 * Monotonic clock: CLOCK_MONOTONIC.  Sim clock: the simulated time; inside a
 * callback run by pw_sim_advance() it reads the time that timer runs at.
 * Context: any thread.
 */
uint64_t pw_now_ns(const struct pw_runtime *rt);

/**
 * pw_jiffies() - the runtime's clock in ticks: pw_now_ns() / (1e9 / hz) +
 * pw_config.initial_jiffies, modulo 2^64 (compare wrap-safely, as the
 * kernel's time_after()).
 * Context: any thread.
 */
uint64_t pw_jiffies(const struct pw_runtime *rt);

/**
 * pw_jiffies_to_ns() - the clock reading at which jiffy @j begins.
 * Context: any thread.  Sums that overflow clamp to UINT64_MAX; a jiffy
 * before initial_jiffies (by less than 2^63) gives 0.
 */
uint64_t pw_jiffies_to_ns(const struct pw_runtime *rt, uint64_t j);

/**
 * pw_run_timers() - run @cpu's due timers (the kernel's hrtimer interrupt
 * and timer softirq).
 *
 * Runs every hrtimer of @cpu whose window has opened, then every wheel
 * timer whose bucket is due at the current jiffy, then (PW_MIGRATION_PULL)
 * the due global timers of the idle CPUs @cpu expires as their migrator or
 * waker, each callback with pw_this_cpu() == @cpu and no pinwheel lock held.
 * Context: the thread serving @cpu (pw_cpu_enter()), or any thread while no
 * thread serves @cpu.  Only one thread runs a CPU's timers at a time.
 * Return: the number of callbacks run (>= 0); -EINVAL (NULL, @cpu out of
 * range); -EPERM (another thread serves @cpu); -EBUSY (the CPU's timers are
 * being run already, e.g. when called from one of its callbacks); -ENODEV
 * (@cpu is offline).
 */
int pw_run_timers(struct pw_runtime *rt, unsigned cpu);

/**
 * pw_next_expiry_ns() - when @cpu next has to run its timers.
 *
 * The clock reading (pw_now_ns() scale) at which @cpu must run: the
 * earliest of its first non-deferrable wheel timer's bucket and its first
 * hrtimer's hard deadline (the end of its slack window).  It may be in the
 * past (timers are due now).  Deferrable wheel timers are left out: they
 * never wake a CPU (they run when it runs for something else).
 *
 * Under PW_MIGRATION_PULL, while @cpu is idle in the migration hierarchy
 * (marked idle with pw_cpu_set_idle() in a runtime without workers; with
 * workers, while its worker sleeps), its own global timers (neither pinned
 * nor deferrable) are left out too: a migrator expires them.  Its pinned
 * timers and hrtimers still count.  Counted in any state are the other
 * CPUs' events @cpu handles: as the migrator of a group (the first global
 * event of the group's idle CPUs), or, when every CPU is idle and @cpu went
 * idle last, as the waker (the hierarchy's first event, which includes
 * @cpu's own global timers).
 * Context: any thread; takes @cpu's base locks.
 * Return: the time, or UINT64_MAX when nothing is pending (or bad input).
 */
uint64_t pw_next_expiry_ns(struct pw_runtime *rt, unsigned cpu);

/**
 * pw_sim_advance() - move simulated time forward by @ns, running timers.
 *
 * Every CPU's due timers run in time order: the clock steps to the earliest
 * event any CPU must act on, that CPU's due timers run (CPUs with equal
 * times in CPU order), and so on until @ns have passed.  A CPU acts on what
 * pw_next_expiry_ns() counts, plus its deferrable timers unless it is idle
 * in the PULL hierarchy: the simulation honours pw_cpu_set_idle().  A CPU
 * not marked idle (or any CPU under PW_MIGRATION_OFF or PUSH) is awake, so
 * its deferrable timers run on time too; one marked idle under
 * PW_MIGRATION_PULL runs its pinned timers and hrtimers, and what it
 * handles as migrator or waker, while a migrator runs its global timers and
 * its deferrable ones wait until it runs for something else.  Each callback
 * sees pw_this_cpu() equal to its timer's CPU (the migrator's, for a timer
 * it expires) and pw_now_ns()/pw_jiffies() at the time it runs.
 * Deterministic: the same calls give the same callbacks in the same order.
 * A sum past UINT64_MAX clamps.
 * Context: any one thread; it acts as each CPU in turn, so it waits while
 * another thread is inside pw_run_timers() of @rt.
 * Return: 0; -EINVAL (NULL or not a PW_CLOCK_SIM runtime); -EDEADLK when
 * called from inside a callback (nothing done).
 */
int pw_sim_advance(struct pw_runtime *rt, uint64_t ns);

/**
 * pw_set_default_runtime() - the runtime <pinwheel/linux.h> names act on.
 * NULL clears it.  Context: any thread, before the kernel names are used.
 */
void pw_set_default_runtime(struct pw_runtime *rt);

/**
 * pw_default_runtime() - the runtime set by pw_set_default_runtime(), or NULL.
 * Context: any thread.
 */
struct pw_runtime *pw_default_runtime(void);

#ifdef __cplusplus
}
#endif

#endif /* PINWHEEL_RUNTIME_H */
