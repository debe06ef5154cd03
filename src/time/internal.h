/* SPDX-License-Identifier: MIT */
/*
 * Internal structures of the core: the runtime, its per-CPU data and timer
 * bases, and the calling thread's identity.  Shared by the files of src/time only.
 */
#ifndef PW_CORE_INTERNAL_H
#define PW_CORE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <pinwheel/pinwheel.h>

#include "hrbase.h"
#include "tmigr.h"
#include "worker.h"
#include "lock.h"
#include "runwait.h"
#include "wheel.h"

#define PW_CACHELINE 64

/* A CPU's three wheel bases, as in Linux 6.9: pinned timers (LOCAL: they
 * always run on this CPU), the others (GLOBAL: an idle CPU hands their
 * expiry to the migration hierarchy, src/time/tmigr.c), and deferrable
 * timers (DEF: they never decide when an idle CPU wakes). */
enum pw__base_kind {
	PW_BASE_LOCAL = 0,
	PW_BASE_GLOBAL = 1,
	PW_BASE_DEF = 2,
	PW_NR_BASES = 3,
};

struct pw__base {
	struct pw__lock lock;
	uint32_t cpu;
	uint32_t kind;         /* enum pw__base_kind */
	unsigned n_expiring;   /* lists collected by the current run */
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
} __attribute__((aligned(PW_CACHELINE)));

struct pw_runtime {
	unsigned ncpus;
	unsigned hz;
	uint64_t tick_ns;
	enum pw_clock_id clock;
	int64_t sim_realtime_offset_ns;
	uint64_t sim_now_ns; /* PW_CLOCK_SIM: atomic, written by the sim driver */
	struct pw__cpu *cpus;
	/* Worker threads (src/time/worker.c). */
	struct pw__worker *workers;
	uint32_t workers_on;   /* atomic: workers started */
	uint32_t workers_stop; /* atomic: workers told to stop */
	uint32_t workers_pinned; /* atomic: set by pw_runtime_start() */
	uint32_t migration;        /* enum pw_migration, atomic */
	struct pw__tmigr tmigr;    /* the PULL hierarchy (src/time/tmigr.c) */
	/* The latest jiffies value any thread read (pw_jiffies(), a timer
	 * run): what arming forwards an idle base to, instead of reading the
	 * clock on every arm (the kernel's jiffies variable plays this part).
	 * Atomic; written only when it moves (at most hz times a second), so
	 * the line stays shared among the CPUs that read it. */
	uint64_t jiffies_seen __attribute__((aligned(PW_CACHELINE)));
	char pad_[PW_CACHELINE - sizeof(uint64_t)];
};

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
	pw__jiffies_note(rt, ns / rt->tick_ns);
}

/* What the calling thread is: the CPU it serves (or acts as while running
 * a CPU's timers), and the timer whose callback it is running. */
struct pw__tls {
	struct pw_runtime *rt; /* NULL: no CPU */
	int cpu;
	bool in_run;           /* inside pw_run_timers()/pw_sim_advance() */
	struct pw_timer *running;       /* wheel callback this thread runs */
	struct pw_hrtimer *hr_running;  /* hrtimer callback this thread runs */
};

extern __thread struct pw__tls pw__tls __attribute__((tls_model("initial-exec")));

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

/* Add @v to a counter only the calling thread writes (its own CPU's):
 * relaxed load and store, no read-modify-write; readers are lockless. */
static inline void pw__count_add(uint64_t *c, uint64_t v)
{
	__atomic_store_n(c, __atomic_load_n(c, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

/*
 * The one placement rule for wheel timers and hrtimers: where an arm by
 * CPU @self (-1: a thread that is no CPU) puts a timer that is now on CPU
 * @cur.  No CPU: it stays.  Otherwise the arming CPU (Linux 6.9: enqueue
 * locally), except that under PW_MIGRATION_PUSH a non-@pinned timer armed
 * on an idle CPU goes to a busy one (pw__policy_target() counts the push).
 * Context: the arming thread, before it locks anything.
 */
static inline unsigned pw__arm_target(struct pw_runtime *rt, int self, unsigned cur, bool pinned)
{
	if (self < 0)
		return cur;
	if (!pinned && __atomic_load_n(&rt->migration, __ATOMIC_RELAXED) == PW_MIGRATION_PUSH)
		return pw__policy_target(rt, (unsigned)self);
	return (unsigned)self;
}

/* After making an event for CPU @cpu visible (timer queued, base unlocked):
 * wake its worker if workers run and @cpu is not the caller's own CPU
 * (@self).  The worker.c protocol decides whether a kick is needed.
 * Context: any thread holding no base lock. */
static inline void pw__kick_remote(struct pw_runtime *rt, int self, unsigned cpu,
				   uint64_t event_ns)
{
	if (__atomic_load_n(&rt->workers_on, __ATOMIC_RELAXED) && self != (int)cpu)
		pw__kick(rt, cpu, event_ns);
}

/* After enqueueing a wheel timer on @b for bucket jiffy @bucket_j (and
 * unlocking), by the thread acting as CPU @self.  On @self's own bases
 * there is nothing to do, except in a runtime without workers where @self
 * may be marked idle (pw_cpu_set_busy()) and so be idle in the migration
 * hierarchy; a worker is always active there while it runs.  On another
 * CPU: deferrable timers never wake anybody; pinned ones may kick that
 * CPU's worker; global ones go through the hierarchy, which lowers an idle
 * CPU's handed-up event instead of waking it (pw__tmigr_notify()). */
static inline void pw__maybe_kick(struct pw_runtime *rt, int self, const struct pw__base *b,
				  uint64_t bucket_j)
{
	if (self == (int)b->cpu) {
		/* Not seeing the CPU's idle mark is safe: deactivate sets it
		 * before it reads the base, so the base read then sees this
		 * timer.  Seeing it: ask under the group lock. */
		if (!__atomic_load_n(&rt->workers_on, __ATOMIC_RELAXED) && b->kind == PW_BASE_GLOBAL &&
		    __atomic_load_n(&rt->workers[self].tm_idle, __ATOMIC_RELAXED))
			pw__tmigr_notify(rt, b->cpu, pw_jiffies_to_ns(rt, bucket_j));
		return;
	}
	if (b->kind == PW_BASE_GLOBAL)
		pw__tmigr_notify(rt, b->cpu, pw_jiffies_to_ns(rt, bucket_j));
	else if (b->kind == PW_BASE_LOCAL && __atomic_load_n(&rt->workers_on, __ATOMIC_RELAXED))
		pw__kick(rt, b->cpu, pw_jiffies_to_ns(rt, bucket_j));
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

#endif /* PW_CORE_INTERNAL_H */
