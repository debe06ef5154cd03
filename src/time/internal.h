/* SPDX-License-Identifier: MIT */
/*
 * The timer subsystem's structures: the runtime, its per-CPU data and timer
 * bases, and the calling thread's identity.  For the files of src/time only;
 * the rest of the library (and its users) go through the public headers (include/pinwheel).
 */
#ifndef PW_TIME_INTERNAL_H
#define PW_TIME_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <pinwheel/pinwheel.h>

#include "hrbase.h"
#include "lock.h"
#include "runwait.h"
#include "stats.h"
#include "tmigr.h"
#include "wheel.h"
#include "worker.h"

/* A CPU's three wheel bases, as in Linux 6.9: pinned timers (LOCAL: they
 * always run on this CPU), the others (GLOBAL: an idle CPU hands their
 * expiry to the migration hierarchy, src/time/tmigr.c), and deferrable
 * timers (DEF: they never decide when an idle CPU wakes). */
enum pw__base_kind {
	PW_BASE_LOCAL = 0,
	PW_BASE_GLOBAL = 1,
	PW_BASE_DEF = 2,
	PW_NR_BASES = 3,
	PW_BASE_HRTIMER = 3, /* not a wheel base: an hrtimer's, for pw__arm_notify_remote() */
};

struct pw__base {
	struct pw__lock lock;
	uint32_t cpu;
	uint32_t kind;         /* enum pw__base_kind */
	/* GLOBAL base only: 1 while the CPU is idle in the migration
	 * hierarchy (tmigr.c): set before deactivate reads this base, cleared
	 * by activate; atomic.  Here, on the lock's line, because an arm on
	 * the CPU's own global base reads it (pw__arm_notify()). */
	uint32_t tmigr_idle;
	unsigned n_expiring;   /* lists collected by the current run */
	/* the CPU's statistics (&cpu->stats), for the re-arm lane, which
	 * has the base at hand and not the CPU */
	struct pw__stats *stats;
	unsigned expiring_idx[PW_WHEEL_LVL_MAX];
	struct pw_timer *expiring[PW_WHEEL_LVL_MAX];
	struct pw__wheel wheel;
} __attribute__((aligned(PW_CACHELINE)));

struct pw__cpu {
	struct pw__base base[PW_NR_BASES];
	/* The wheel timer whose callback runs now, on whichever of the bases
	 * (runwait.h); one for all three: one thread at a time runs a CPU's
	 * timers (run_guard). */
	struct pw__runwait run;
	struct pw__hrbase hr;
	uint32_t run_guard; /* 1 while a thread runs this CPU's timers */
	uint32_t served;    /* 1 while a thread has entered as this CPU */
	uint32_t offline;   /* 1 after pw_cpu_offline(): no timers, no thread */
	/* The policies' idle mark (policy.c), atomic: written by the CPU's
	 * worker each round, or by pw_cpu_set_idle()/hotplug while no worker
	 * runs; read by PUSH placement on any CPU. */
	uint32_t idle;
	struct pw__stats stats; /* written by the thread acting as this CPU */
} __attribute__((aligned(PW_CACHELINE)));

struct pw_runtime {
	unsigned id;   /* 1..PW_MAX_RUNTIMES: its number in its timers' flags */
	unsigned ncpus;
	unsigned hz;
	uint64_t tick_ns;
	uint64_t jiffies_base;   /* jiffies at clock 0 (pw_config.initial_jiffies) */
	enum pw_clock_id clock;
	int64_t sim_realtime_offset_ns;
	uint64_t sim_now_ns; /* PW_CLOCK_SIM: atomic, written by the sim driver */
	struct pw__cpu *cpus;
	/* Worker threads (src/time/worker.c). */
	struct pw__worker *workers;
	uint32_t workers_on;   /* atomic: workers started */
	uint32_t workers_stop; /* atomic: workers told to stop */
	uint32_t workers_pinned; /* atomic: set by pw_runtime_start() */
	/* The wall clock's watcher (clockset.c): started and stopped with the
	 * workers; fd -1 when not running. */
	int clockwatch_fd;
	uint32_t clockwatch_stop;  /* atomic */
	pthread_t clockwatch_th;
	uint64_t clock_was_set_seq; /* atomic: pw_clock_was_set() calls */
	uint32_t migration;        /* enum pw_migration, atomic */
	/* enum pw_kick_rule, atomic (relaxed): read only by an arm that
	 * enqueues on another CPU's base (pw__arm_notify_remote(), policy.c),
	 * never by the fast lane, whose arms are local: so it is no part of
	 * lane_key */
	uint32_t kick_rule;
	/* PUSH's scheduling domains below the whole machine (pw_config's
	 * topo_levels, topo_span[]): set by create, read-only after */
	unsigned topo_levels;
	unsigned topo_span[PW_TOPO_MAX_LEVELS];
	uintptr_t lane_key; /* the re-arm fast lane's: see "The fast lane's state" */
	struct pw__tmigr tmigr;    /* the PULL hierarchy (src/time/tmigr.c) */
	/* Extension slots (pw_runtime_ext_set()): state of a subsystem built
	 * on the runtime (the net layer), freed by pw_runtime_destroy() first.
	 * Atomic pointers. */
	void *ext[PW_RUNTIME_EXT_SLOTS];
	void (*ext_free[PW_RUNTIME_EXT_SLOTS])(void *);
	/* The latest jiffies value any thread read (pw_jiffies(), a timer
	 * run): what arming forwards an idle base to, instead of reading the
	 * clock on every arm (the kernel's jiffies variable plays this part).
	 * Atomic; written only when it moves (at most hz times a second), so
	 * the line stays shared among the CPUs that read it. */
	uint64_t jiffies_seen __attribute__((aligned(PW_CACHELINE)));
	char pad_[PW_CACHELINE - sizeof(uint64_t)];
};

/* The runtimes alive, by number (runtime.c): what a wheel timer's flags
 * name (PW__TF_RT_MASK); entry 0 is always NULL.  Written by
 * pw_runtime_create() before the runtime is returned and cleared by
 * pw_runtime_destroy(); read locklessly (relaxed: whoever holds a timer of
 * a runtime got the runtime after its create returned). */
extern struct pw_runtime *pw__runtimes[PW_MAX_RUNTIMES + 1];

/* The runtime a set-up wheel timer with flags @tf belongs to.
 * Context: any thread. */
static inline struct pw_runtime *pw__tf_runtime(uint32_t tf)
{
	return __atomic_load_n(&pw__runtimes[(tf & PW__TF_RT_MASK) >> PW__TF_RT_SHIFT],
			       __ATOMIC_RELAXED);
}

/* The jiffy clock time @ns falls in (jiffy j begins at (j - base) * tick;
 * jiffies are modulo 2^64 and may wrap: compare with pw__after()). */
static inline uint64_t pw__ns_to_jiffies(const struct pw_runtime *rt, uint64_t ns)
{
	return ns / rt->tick_ns + rt->jiffies_base;
}

static inline uint64_t pw__jiffies_seen(const struct pw_runtime *rt)
{
	return __atomic_load_n(&rt->jiffies_seen, __ATOMIC_RELAXED);
}

/* Note that jiffy @j was read.  Racing writers may leave an older value by a
 * tick; forwarding to a slightly older jiffy is always safe (never early). */
static inline void pw__jiffies_note(struct pw_runtime *rt, uint64_t j)
{
	if (pw__after(j, pw__jiffies_seen(rt)))
		__atomic_store_n(&rt->jiffies_seen, j, __ATOMIC_RELAXED);
}

/* PW_CLOCK_SIM: set the simulated clock. */
static inline void pw__sim_set(struct pw_runtime *rt, uint64_t ns)
{
	__atomic_store_n(&rt->sim_now_ns, ns, __ATOMIC_RELAXED);
	pw__jiffies_note(rt, pw__ns_to_jiffies(rt, ns));
}

/* What the calling thread is: the CPU it serves (or acts as while running
 * a CPU's timers), and the timer whose callback it is running.
 * The TLS model is the compiler's default: initial-exec would make the
 * library fail to dlopen() once the static TLS surplus is used up; the
 * x86-64 build uses TLS descriptors instead (CMakeLists.txt), which cost
 * about as little for a library loaded at start. */
struct pw__tls {
	struct pw_runtime *rt; /* NULL: no CPU */
	int cpu;
	bool in_run;           /* inside pw_run_timers()/pw_sim_advance() */
	struct pw__stats *stats;        /* &rt->cpus[cpu].stats while rt is set */
	/* the re-arm fast lane's: see "The fast lane's state" below */
	uint32_t lane_tf;
	struct pw__base *lane_base[4];
	struct pw_timer *running;       /* wheel callback this thread runs */
	struct pw_hrtimer *hr_running;  /* hrtimer callback this thread runs */
};

extern __thread struct pw__tls pw__tls;

/* Make the calling thread act as CPU @cpu of @rt (NULL: no CPU), for
 * pw__self(), the statistics, the inline fast path's counter and the fast
 * lane's view (pw__lane_cpu_set()).  Context: the calling thread, about
 * itself; no lock. */
void pw__tls_set(struct pw_runtime *rt, int cpu);

/* The base a timer with flags @tf is on: its CPU's DEF base if deferrable,
 * else LOCAL if pinned, else GLOBAL. */
static inline unsigned pw__base_kind(uint32_t tf)
{
	/* branch-free: the two flag bits index a table of nibbles */
	_Static_assert(PW_TIMER_DEFERRABLE == 2 * PW_TIMER_PINNED, "adjacent flag bits");
	unsigned bits = (tf / PW_TIMER_PINNED) & 3; /* DEFERRABLE:PINNED */
	const unsigned map = PW_BASE_GLOBAL | PW_BASE_LOCAL << 4 | PW_BASE_DEF << 8 | PW_BASE_DEF << 12;
	return (map >> (4 * bits)) & 0xf;
}

static inline struct pw__base *pw__base_of(struct pw_runtime *rt, uint32_t tf)
{
	return &rt->cpus[tf & PW__TF_CPU_MASK].base[pw__base_kind(tf)];
}

/*
 * The fast lane's state: all of it, and the only two places that write it.
 * Its readers are the fast lanes of timer.c: the arm lane,
 * pw__mod_timer_lane() (re-arms, and arms of an inactive timer: the
 * compare leaves PENDING out, PW__TF_LANE_ARM_MASK), the burst's copy of
 * it and the delete lane; two compares prove what the general path tests
 * one by one.
 *
 *  - pw__tls.lane_tf: what the flags word of a pending timer on the calling
 *    thread's CPU holds besides its magic and its base bits: PENDING, the
 *    runtime's number and the CPU.  0 in a thread that is no CPU (no
 *    runtime is number 0).  A timer's flags XOR it, under
 *    PW__TF_LANE_MASK (below), equal the magic exactly when the timer is
 *    set up, pending, not migrating, not shut down, of this runtime and on
 *    this CPU.
 *  - pw__tls.lane_base[]: the CPU's wheel bases, indexed by the flags'
 *    DEFERRABLE:PINNED bits (pw__base_of() worked out once).  NULL in a
 *    thread that is no CPU.
 *  - rt->lane_key: @rt's address while the policy lets an arm stay on the
 *    arming CPU (OFF, PULL: pw__arm_target() answers "here", placement.h),
 *    the address ^ 1 under PW_MIGRATION_PUSH (which may move the timer).
 *    Once the flags matched, the timer's runtime is the thread's: the lane
 *    reads it as pw__tls.rt, and rt->lane_key equals it exactly when
 *    placement has nothing to decide.  Atomic (relaxed): a lane racing a
 *    policy change sees the old policy or the new one, as an arm racing it
 *    on the general path does.
 *
 * pw__lane_cpu_set(): the thread's part, set with the rest of its identity
 * (pw__tls_set()).  Context: the calling thread, about itself; no lock.
 * pw__lane_key_set(): the runtime's part, after every write of
 * @rt->migration (pw_runtime_create(), pw_set_migration()).  Context:
 * whoever sets the policy; no lock.
 * PW__TF_LANE_MASK: the flags bits the lanes compare at once (a pending
 * timer); PW__TF_LANE_ARM_MASK: the same but PENDING (a timer pending or
 * not).
 */
#define PW__TF_LANE_MASK                                                                  \
	(PW__TF_MAGIC_MASK | PW__TF_PENDING | PW__TF_MIGRATING | PW__TF_SHUTDOWN | PW__TF_RT_MASK | \
	 PW__TF_CPU_MASK)
#define PW__TF_LANE_ARM_MASK (PW__TF_LANE_MASK & ~PW__TF_PENDING)

static inline void pw__lane_cpu_set(struct pw_runtime *rt, int cpu)
{
	pw__tls.lane_tf =
		rt ? PW__TF_PENDING | rt->id << PW__TF_RT_SHIFT | (uint32_t)cpu : 0;
	for (unsigned k = 0; k < 4; k++)
		pw__tls.lane_base[k] =
			rt ? pw__base_of(rt, (uint32_t)cpu | k * PW_TIMER_PINNED) : NULL;
}

static inline void pw__lane_key_set(struct pw_runtime *rt)
{
	uintptr_t key = (uintptr_t)rt;
	if (__atomic_load_n(&rt->migration, __ATOMIC_RELAXED) == PW_MIGRATION_PUSH)
		key ^= 1;
	__atomic_store_n(&rt->lane_key, key, __ATOMIC_RELAXED);
}

/* Run every due timer of base @b at jiffy @jnow.  Context: the thread
 * holding the run guard of @b's CPU, no lock held.  Return: callbacks run. */
int pw__base_run(struct pw_runtime *rt, struct pw__base *b, uint64_t jnow);

/* Earliest bucket of @b as a pw_now_ns() time, or UINT64_MAX.  Context:
 * any thread holding no base lock; takes @b's. */
uint64_t pw__base_next_ns(struct pw_runtime *rt, struct pw__base *b);

/* The CPU the calling thread acts as on @rt, or -1.  Read once per arm:
 * placement, statistics and kicks all ask it. */
static inline int pw__self(const struct pw_runtime *rt)
{
	return pw__tls.rt == rt ? pw__tls.cpu : -1;
}

/* The statistics the calling thread, acting as CPU pw__self(@rt), keeps;
 * a thread that is no CPU of @rt gets a thread-local sink nobody reads, so
 * the arm path counts without a branch. */
extern __thread struct pw__stats pw__stats_sink;
static inline struct pw__stats *pw__stats_mine(const struct pw_runtime *rt)
{
	return pw__tls.rt == rt ? pw__tls.stats : &pw__stats_sink;
}

/* The run guard of a CPU: one thread at a time runs its timers.
 * pw__guard_try(): take it if free (acquire).  pw__guard_release(): give it
 * back (release). */
bool pw__guard_try(struct pw__cpu *c);
void pw__guard_release(struct pw__cpu *c);

/* CPU hotplug (src/time/hotplug.c): move every timer of CPU @from to CPU
 * @to, pinned ones too.  Context: the holder of @from's run guard, holding
 * no base lock.  Return: timers moved, or -ENOMEM (hrtimer queue full). */
int pw__wheel_move_all(struct pw_runtime *rt, unsigned from, unsigned to);
int pw__hr_move_all(struct pw_runtime *rt, unsigned from, unsigned to);

/* Check one base under its lock.  Return: 0 or -EFAULT. */
int pw__base_check(struct pw_runtime *rt, struct pw__base *b);

/* The timer pass (src/time/softirq.c), shared with the simulation (sim.c).
 * pw__run_cpu(): run @cpu's due timers at clock reading @now as that CPU:
 * hrtimers first, then the wheel (the kernel's interrupt, then softirq),
 * then the idle CPUs' global timers it handles as a migrator (tmigr.c).
 * Context: the holder of @cpu's run guard (the simulation: of every guard,
 * @guards_held); no lock held.  Return: callbacks run.
 * pw__cpu_next_ns(): the earliest event @cpu must act on, in ns: its
 * hrtimers and pinned timers; its global timers unless it is idle in the
 * migration hierarchy (then a migrator runs them); its deferrable timers
 * if @def and it is not idle there; and the other CPUs' events it handles
 * as a migrator or waker.  Context: any thread holding no base lock; takes
 * @cpu's base locks in turn.  Return: the time, or UINT64_MAX. */
int pw__run_cpu(struct pw_runtime *rt, unsigned cpu, uint64_t now, bool guards_held);

/* Run the work queued for @cpu, as that CPU (the simulation, pw_run_work()).
 * Context: the holder of @cpu's run guard.  Return: items run. */
unsigned pw__run_cpu_work(struct pw_runtime *rt, unsigned cpu);
uint64_t pw__cpu_next_ns(struct pw_runtime *rt, unsigned cpu, bool def);

/* pw__cpu_next_ns(@rt, @cpu, false) without the events of one base: @skip
 * is a wheel base kind or PW_BASE_HRTIMER (all its hrtimers).  For the kick
 * rules (policy.c): what an idle CPU wakes for besides the queue an event
 * was just added to.  Context: as pw__cpu_next_ns(). */
uint64_t pw__cpu_next_but_ns(struct pw_runtime *rt, unsigned cpu, unsigned skip);

/* clockset.c: the wall clock's watcher, with the workers (worker.c). */
int pw__clockwatch_start(struct pw_runtime *rt);
void pw__clockwatch_stop(struct pw_runtime *rt);

#endif /* PW_TIME_INTERNAL_H */
