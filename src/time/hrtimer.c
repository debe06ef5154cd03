/* SPDX-License-Identifier: MIT */
/*
 * hrtimers: nanosecond timers per CPU, with the kernel's hrtimer semantics.
 *
 * What it does
 * ------------
 * Each CPU has one hrtimer base: a lock, a running mark, and one queue per
 * clock (MONOTONIC, REALTIME, BOOTTIME), each a 4-ary min-heap ordered by
 * the hard deadline (hrheap.c: why a heap and not the kernel's red-black
 * tree, measured).  Equal deadlines keep start order.  The CPU's timer pass
 * (pw_run_timers(), or pw_sim_advance()) runs, per clock, the first timers
 * whose window has opened, hrtimers before wheel timers, as the kernel's
 * hrtimer interrupt comes before its timer softirq.  pw_next_expiry_ns()
 * is the earliest of the wheel's next bucket and the hrtimers' first hard
 * deadline: the time the CPU must wake.
 *
 * Slack and coalescing
 * --------------------
 * A timer started with a range runs at the earliest at `softexpires` (the
 * range's start) and should run by `expires` (its end).  The queue is
 * ordered by `expires`, so the CPU only has to wake for the end of the
 * first window; whenever it runs its timer pass, every timer at the head of
 * a queue whose window has opened runs, so timers with overlapping windows
 * share one wake-up.  As in the kernel, the pass stops at the first timer
 * (in deadline order) whose window is still closed.
 *
 * Clocks
 * ------
 * Deadlines are kept on the timer's own clock.  The pass reads the offsets
 * of REALTIME and BOOTTIME from the runtime's monotonic clock once and
 * compares each queue against its own clock's now; a CPU's wake-up time is
 * converted back to the monotonic scale with the offsets of that moment.
 * A REALTIME timer set up relative runs on MONOTONIC (kernel and POSIX
 * rule).  If the wall clock is stepped while a worker sleeps towards a
 * REALTIME deadline, clockset.c's watcher (a timerfd that the kernel
 * cancels on every clock set) calls pw_clock_was_set(), the kernel's
 * clock_was_set(): every worker wakes and re-converts its deadline.  On the simulated clock,
 * MONOTONIC and BOOTTIME are the simulated time and REALTIME is it plus
 * the configured offset.
 *
 * Placement and moving
 * --------------------
 * A start enqueues the timer on the calling thread's CPU (its current CPU
 * if the caller is no CPU), never moving a timer whose callback runs: the
 * same rule and the same MIGRATING protocol as wheel timers (see timer.c
 * and docs/design/concurrency.md): flags name the CPU, MIGRATING blocks
 * others while the mover holds no lock, no thread ever holds two base
 * locks.  PINNED is only read at start time and only matters to migration
 * policies: under PW_MIGRATION_PUSH a non-pinned timer started on an idle
 * CPU goes to a busy one, except (the kernel's remote-enqueue rule) when it
 * would become that CPU's first timer: then it stays local.
 *
 * Callbacks, restart, cancel
 * --------------------------
 * The runner marks the timer running in the base (runwait.h), dequeues it,
 * drops the lock, calls it; a RESTART return re-queues it at its
 * (forwarded) expiry on this CPU unless it was started meanwhile.  The mark
 * lives in the base, so a callback returning NORESTART may free its timer.
 * try_to_cancel answers 0 / 1 / -1 (running) like the kernel; cancel loops
 * on it, waiting for the callback between tries, and refuses -EDEADLK from
 * the timer's own callback, which would wait for itself forever.
 *
 * Times
 * -----
 * uint64_t ns.  Sums saturate where the kernel's ktime_add_safe() does, at
 * KTIME_SEC_MAX seconds (about 292 years): a timer started that far out is
 * effectively never.  A callback that returns RESTART without moving its
 * expiry past now runs again in the same pass, forever, as in the kernel:
 * forward it.
 *
 * Costs
 * -----
 * start / cancel: one lock round trip and O(log n) heap work (O(1)
 * typical); first timer: O(1); the pass: one lock round trip per callback.
 * 48 bytes a timer, plus 16 bytes of queue entry while queued.
 */
#define _GNU_SOURCE
#include "hrbase.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include "osclock.h"
#include "internal.h"
#include "migrating.h"
#include "placement.h"

_Static_assert(CLOCK_REALTIME == 0 && CLOCK_MONOTONIC == 1 && CLOCK_BOOTTIME == 7,
	       "linux.h defines the clock ids with these values when <time.h> hides them");

/* The kernel's saturation value: ktime_set(KTIME_SEC_MAX, 0). */
#define PW_KTIME_SAT 9223372036000000000ull

static inline uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > PW_KTIME_SAT || b > PW_KTIME_SAT - a ? PW_KTIME_SAT : a + b;
}

static inline uint32_t hf_load(const struct pw_hrtimer *t)
{
	return pw__flags_load(&t->pw_flags);
}

/* Context: the holder of the timer's base lock (or the owner at setup). */
static inline void hf_store(struct pw_hrtimer *t, uint32_t f)
{
	pw__flags_store(&t->pw_flags, f);
}

static inline unsigned hf_clock(uint32_t f)
{
	return (f & PW__HF_CLOCK_MASK) >> PW__HF_CLOCK_SHIFT;
}

static inline bool hr_valid(const struct pw_hrtimer *t)
{
	return t && t->pw_rt && (hf_load(t) & PW__HF_MAGIC_MASK) == PW__HF_MAGIC;
}

static int clock_index(int clock)
{
	switch (clock) {
	case CLOCK_MONOTONIC:
		return PW_HR_MONO;
	case CLOCK_REALTIME:
		return PW_HR_REAL;
	case CLOCK_BOOTTIME:
		return PW_HR_BOOT;
	default:
		return -1;
	}
}

static const clockid_t clock_ids[PW_HR_NCLOCKS] = {CLOCK_MONOTONIC, CLOCK_REALTIME,
						    CLOCK_BOOTTIME};


/* The OS clocks' offsets from MONOTONIC, read around one midpoint: four
 * clock reads, out of line because most passes need none (the frame their
 * results need would otherwise be set up on every pass).  Context: any
 * thread, no lock. */
static __attribute__((noinline)) void hr_offsets_read(int64_t off[PW_HR_NCLOCKS])
{
	uint64_t m1 = pw__clock_ns(CLOCK_MONOTONIC);
	uint64_t r = pw__clock_ns(CLOCK_REALTIME), b = pw__clock_ns(CLOCK_BOOTTIME);
	uint64_t m2 = pw__clock_ns(CLOCK_MONOTONIC);
	uint64_t m = m1 + (m2 - m1) / 2;
	off[PW_HR_REAL] = (int64_t)(r - m);
	off[PW_HR_BOOT] = (int64_t)(b - m);
}

void pw__hr_offsets(const struct pw_runtime *rt, int64_t off[PW_HR_NCLOCKS], unsigned need)
{
	off[PW_HR_MONO] = off[PW_HR_REAL] = off[PW_HR_BOOT] = 0;
	if (rt->clock == PW_CLOCK_SIM) {
		off[PW_HR_REAL] = __atomic_load_n(&rt->sim_realtime_offset_ns, __ATOMIC_RELAXED);
		return;
	}
	if (!(need & ((1u << PW_HR_REAL) | (1u << PW_HR_BOOT))))
		return; /* four clock reads saved: only MONOTONIC timers queued */
	hr_offsets_read(off);
}

/* Which clocks have queued timers, at a lockless glance.  A clock missed
 * here gets offset 0 for this pass: REALTIME and BOOTTIME are never behind
 * MONOTONIC, so that only makes its timers wait for the next pass. */
static unsigned clocks_in_use(const struct pw__hrbase *hb)
{
	unsigned need = 0;
	for (unsigned c = 0; c < PW_HR_NCLOCKS; c++)
		if (__atomic_load_n(&hb->queue[c].n, __ATOMIC_RELAXED))
			need |= 1u << c;
	return need;
}

/* Clock @idx's now: @mono plus its offset, never below 0. */
static inline uint64_t shift(uint64_t mono, int64_t off)
{
	return off < 0 && (uint64_t)-off > mono ? 0 : mono + (uint64_t)off;
}

static uint64_t now_on(const struct pw_runtime *rt, unsigned idx)
{
	if (rt->clock == PW_CLOCK_SIM || idx == PW_HR_MONO) {
		int64_t off[PW_HR_NCLOCKS];
		pw__hr_offsets(rt, off, 1u << idx);
		return shift(pw_now_ns(rt), off[idx]);
	}
	return pw__clock_ns(clock_ids[idx]);
}

uint64_t pw_clock_now_ns(const struct pw_runtime *rt, int clock)
{
	int idx = clock_index(clock);
	if (!rt || idx < 0)
		return 0;
	return now_on(rt, (unsigned)idx);
}

static inline uint64_t exp_load(const struct pw_hrtimer *t)
{
	return __atomic_load_n(&t->pw_expires, __ATOMIC_RELAXED);
}

/* Context: the base lock holder, or the owner of a timer not queued.
 * Relaxed: read locklessly by the getters. */
static inline void set_window(struct pw_hrtimer *t, uint64_t soft, uint64_t hard)
{
	__atomic_store_n(&t->pw_softexpires, soft, __ATOMIC_RELAXED);
	__atomic_store_n(&t->pw_expires, hard, __ATOMIC_RELAXED);
}

void pw__hrbase_init(struct pw__hrbase *hb, unsigned cpu)
{
	pw__lock_init(&hb->lock);
	hb->cpu = cpu;
}

void pw__hrbase_destroy(struct pw__hrbase *hb)
{
	for (unsigned c = 0; c < PW_HR_NCLOCKS; c++)
		pw__hheap_free(&hb->queue[c]);
}

/* Make room on @hb for @t (not queued).  Context: @hb's lock holder.
 * Return: 0 or -ENOMEM. */
static int reserve(struct pw__hrbase *hb, const struct pw_hrtimer *t)
{
	return pw__hheap_reserve(&hb->queue[hf_clock(hf_load(t))]);
}

/* Queue @t (not queued; room reserved, or the spare slot of a restart).
 * Context: the holder of @hb's lock. */
static void enqueue(struct pw__hrbase *hb, struct pw_hrtimer *t)
{
	uint32_t f = hf_load(t);
	pw__hheap_insert(&hb->queue[hf_clock(f)], t);
	hf_store(t, f | PW__HF_QUEUED);
	hb->count++;
}

/* Context: the holder of @hb's lock; @t queued on @hb. */
static void dequeue(struct pw__hrbase *hb, struct pw_hrtimer *t)
{
	uint32_t f = hf_load(t);
	pw__hheap_remove(&hb->queue[hf_clock(f)], t);
	hf_store(t, f & ~PW__HF_QUEUED);
	hb->count--;
}

static inline struct pw__hrbase *hrbase_of(struct pw_runtime *rt, uint32_t f)
{
	return &rt->cpus[f & PW__HF_CPU_MASK].hr;
}

static struct pw__lock *hr_lock_of(struct pw_runtime *rt, uint32_t f)
{
	return &hrbase_of(rt, f)->lock;
}

/* Lock the base holding @t; its flags, stable under that lock, in *@fp.
 * The MIGRATING protocol's lock step (migrating.h).
 * Context: any thread holding no base lock. */
static struct pw__hrbase *lock_hrtimer_base(struct pw_hrtimer *t, uint32_t *fp)
{
	*fp = hf_load(t);
	struct pw__lock *l =
		pw__lock_flags_base(t->pw_rt, &t->pw_flags, fp, PW__HF_MIGRATING, hr_lock_of);
	return pw_container_of(l, struct pw__hrbase, lock);
}

int pw_hrtimer_setup(struct pw_runtime *rt, struct pw_hrtimer *t,
		     enum pw_hrtimer_restart (*fn)(struct pw_hrtimer *), int clock,
		     unsigned mode)
{
	int idx = clock_index(clock);
	if (!rt || !t || idx < 0 || (mode & ~0x0fu))
		return -EINVAL;
	if (idx == PW_HR_REAL && (mode & PW_HRTIMER_MODE_REL))
		idx = PW_HR_MONO;
	int self = pw__self(rt);
	unsigned cpu = self >= 0 ? (unsigned)self : 0;
	t->function = fn;
	t->pw_rt = rt;
	t->pw_idx = PW_HHEAP_NONE;
	t->pw_seq = 0;
	set_window(t, 0, 0);
	hf_store(t, PW__HF_MAGIC | ((uint32_t)idx << PW__HF_CLOCK_SHIFT) | cpu);
	return 0;
}

/*
 * The end of a start that leaves @t (not queued, room reserved; its flags
 * were @f when the start locked it) on another CPU's base @hb than the
 * arming thread's (a thread that is no CPU, a timer whose callback runs
 * there, a push): note whether the window [@soft, @hard] moves the first
 * deadline of its clock's queue there earlier (the kernel's
 * enqueue_hrtimer() answer; a timer that was queued there before still
 * counts with its old deadline, which the target set its wake-up with),
 * set the window, enqueue, unlock, and tell the target (placement.h: a
 * sleeping worker must wake for it if it is now its first event).  Other
 * clocks than MONOTONIC: notified without comparing (0 = now).  Out of
 * line: a local start carries none of it.  Context: the arming thread,
 * holding @hb's lock (dropped; then the locks notification takes).
 * Return: 0.
 */
static __attribute__((noinline)) int enqueue_away(struct pw_runtime *rt, struct pw__hrbase *hb,
						  struct pw_hrtimer *t, int self, uint32_t f,
						  uint64_t soft, uint64_t hard)
{
	unsigned clk = hf_clock(f), cpu = hb->cpu;
	struct pw_hrtimer *first = pw__hheap_first(&hb->queue[clk]);
	uint64_t before = first ? first->pw_expires : UINT64_MAX;
	if ((f & PW__HF_QUEUED) && (f & PW__HF_CPU_MASK) == cpu && exp_load(t) < before)
		before = exp_load(t);
	bool earlier = hard < before; /* ties keep start order: not first */
	set_window(t, soft, hard);
	enqueue(hb, t);
	pw__unlock(&hb->lock);
	/* @t may run and be freed from here on */
	pw__arm_notify_remote(rt, self, cpu, PW_BASE_HRTIMER, clk == PW_HR_MONO ? hard : 0, earlier);
	return 0;
}

int pw_hrtimer_start_range_ns(struct pw_hrtimer *t, uint64_t tim, uint64_t range_ns,
			      unsigned mode)
{
	if (!hr_valid(t) || !t->function || (mode & ~0x0fu))
		return -EINVAL;
	struct pw_runtime *rt = t->pw_rt;
	uint32_t f;
	struct pw__hrbase *hb = lock_hrtimer_base(t, &f);

	uint64_t soft = (mode & PW_HRTIMER_MODE_REL) ? sat_add(now_on(rt, hf_clock(f)), tim)
						      : (tim > PW_KTIME_SAT ? PW_KTIME_SAT : tim);
	uint64_t hard = sat_add(soft, range_ns);

	/* Where it should go: pw__arm_target(), the rule wheel timers use;
	 * "local" is where it goes if the push target refuses it. */
	int self = pw__self(rt);
	uint32_t local = self >= 0 ? (uint32_t)self : (f & PW__HF_CPU_MASK);
	uint32_t want = pw__arm_target(rt, self, f & PW__HF_CPU_MASK,
				       mode & PW_HRTIMER_MODE_PINNED);
	struct pw__hrbase *nb = &rt->cpus[want].hr;
	bool move = nb != hb && pw__runwait_running(&hb->run) != t;

	/* Staying and not queued here: make room first, so that a failure
	 * changes nothing. */
	if (!move && !(f & PW__HF_QUEUED) && reserve(hb, t)) {
		pw__unlock(&hb->lock);
		return -ENOMEM;
	}
	if (f & PW__HF_QUEUED)
		dequeue(hb, t);
	if (move) {
		/* MIGRATING protocol (see timer.c): while it is set, the timer
		 * is ours with no lock held, and we look for a base to land in:
		 * the wanted one (unless pushed there and it would be that
		 * CPU's first timer: the kernel's remote-enqueue rule, since a
		 * remote CPU cannot be reprogrammed for free), then the local
		 * one, then the one it came from (room permitting). */
		struct pw__hrbase *old = hb;
		struct pw__hrbase *cand[3] = {nb, &rt->cpus[local].hr, old};
		pw__flags_leave(&t->pw_flags, PW__HF_MIGRATING, &old->lock);
		hb = NULL;
		for (unsigned i = 0; i < 3 && !hb; i++) {
			struct pw__hrbase *b = cand[i];
			if (i && b == cand[i - 1])
				continue;
			pw__lock(&b->lock);
			bool refused = reserve(b, t) != 0;
			if (!refused && i == 0 && want != local) {
				struct pw_hrtimer *first = pw__hheap_first(&b->queue[hf_clock(f)]);
				refused = !first || hard < first->pw_expires;
			}
			if (refused)
				pw__unlock(&b->lock);
			else
				hb = b;
		}
		if (!hb) { /* no room anywhere: stays where it was, not queued */
			pw__lock(&old->lock);
			hf_store(t, hf_load(t) & ~PW__HF_MIGRATING);
			pw__unlock(&old->lock);
			return -ENOMEM;
		}
		pw__flags_land(&t->pw_flags, PW__HF_MIGRATING, PW__HF_CPU_MASK, hb->cpu);
	}
	if (__builtin_expect(self != (int)hb->cpu, 0))
		return enqueue_away(rt, hb, t, self, f, soft, hard);
	set_window(t, soft, hard);
	enqueue(hb, t);
	pw__unlock(&hb->lock);
	return 0;
}

int pw_hrtimer_start(struct pw_hrtimer *t, uint64_t tim, unsigned mode)
{
	return pw_hrtimer_start_range_ns(t, tim, 0, mode);
}

/* The kernel's forward arithmetic.  Context: the holder of @t's base lock. */
static uint64_t forward_locked(struct pw_hrtimer *t, uint64_t now, uint64_t interval)
{
	uint64_t exp = t->pw_expires, soft = t->pw_softexpires;
	if (now < exp)
		return 0;
	if (interval < 1)
		interval = 1; /* the resolution: 1 ns */
	uint64_t orun = 1, delta = now - exp;
	if (delta >= interval) {
		orun = delta / interval;
		uint64_t incr = interval * orun; /* <= delta: no overflow */
		exp = sat_add(exp, incr);
		soft = sat_add(soft, incr);
		if (exp > now) {
			set_window(t, soft, exp);
			return orun;
		}
		orun++;
	}
	set_window(t, sat_add(soft, interval), sat_add(exp, interval));
	return orun;
}

uint64_t pw_hrtimer_forward(struct pw_hrtimer *t, uint64_t now, uint64_t interval)
{
	if (!hr_valid(t))
		return 0;
	/* Under the base lock, unlike the kernel (which leaves it to the
	 * caller): a callback forwarding its timer while another thread
	 * starts it would otherwise change the key of a queued timer.  A
	 * queued timer is left alone (the kernel WARNs and returns 0). */
	uint32_t f;
	struct pw__hrbase *hb = lock_hrtimer_base(t, &f);
	uint64_t orun = (f & PW__HF_QUEUED) ? 0 : forward_locked(t, now, interval);
	pw__unlock(&hb->lock);
	return orun;
}

uint64_t pw_hrtimer_forward_now(struct pw_hrtimer *t, uint64_t interval)
{
	if (!hr_valid(t))
		return 0;
	return pw_hrtimer_forward(t, now_on(t->pw_rt, hf_clock(hf_load(t))), interval);
}

int pw_hrtimer_try_to_cancel(struct pw_hrtimer *t)
{
	if (!hr_valid(t))
		return -EINVAL;
	uint32_t f;
	struct pw__hrbase *hb = lock_hrtimer_base(t, &f);
	int ret = 0;
	if (pw__runwait_running(&hb->run) == t) {
		ret = -1;
	} else if (f & PW__HF_QUEUED) {
		dequeue(hb, t);
		ret = 1;
	}
	pw__unlock(&hb->lock);
	return ret;
}

int pw_hrtimer_cancel(struct pw_hrtimer *t)
{
	if (!hr_valid(t))
		return -EINVAL;
	if (pw__tls.hr_running == t)
		return -EDEADLK;
	for (unsigned round = 0;; round++) {
		uint32_t f;
		struct pw__hrbase *hb = lock_hrtimer_base(t, &f);
		if (pw__runwait_running(&hb->run) != t) {
			int ret = 0;
			if (f & PW__HF_QUEUED) {
				dequeue(hb, t);
				ret = 1;
			}
			pw__unlock(&hb->lock);
			return ret;
		}
		pw__runwait_wait(&hb->run, &hb->lock, t, round); /* drops the lock */
	}
}

int pw_hrtimer_is_queued(const struct pw_hrtimer *t)
{
	return hr_valid(t) && (hf_load(t) & PW__HF_QUEUED);
}

int pw_hrtimer_callback_running(const struct pw_hrtimer *t)
{
	if (!hr_valid(t))
		return 0;
	return pw__runwait_running(&hrbase_of(t->pw_rt, hf_load(t))->run) == t;
}

int pw_hrtimer_active(const struct pw_hrtimer *t)
{
	if (!hr_valid(t))
		return 0;
	if (hf_load(t) & PW__HF_QUEUED)
		return 1;
	/* Under the lock: the runner's "running -> re-queued" step is atomic
	 * there, so a timer in the middle of it is never seen as inactive. */
	uint32_t f;
	struct pw_hrtimer *mt = (struct pw_hrtimer *)t; /* the lock, not the timer, changes */
	struct pw__hrbase *hb = lock_hrtimer_base(mt, &f);
	int ret = (f & PW__HF_QUEUED) || pw__runwait_running(&hb->run) == t;
	pw__unlock(&hb->lock);
	return ret;
}

uint64_t pw_hrtimer_get_expires(const struct pw_hrtimer *t)
{
	return t ? exp_load(t) : 0;
}

uint64_t pw_hrtimer_get_softexpires(const struct pw_hrtimer *t)
{
	return t ? __atomic_load_n(&t->pw_softexpires, __ATOMIC_RELAXED) : 0;
}

int64_t pw_hrtimer_get_remaining(const struct pw_hrtimer *t)
{
	if (!hr_valid(t))
		return 0;
	return (int64_t)(exp_load(t) - now_on(t->pw_rt, hf_clock(hf_load(t))));
}

int pw_hrtimer_cpu(const struct pw_hrtimer *t)
{
	return hr_valid(t) ? (int)(hf_load(t) & PW__HF_CPU_MASK) : -EINVAL;
}

int pw_hrtimer_clock(const struct pw_hrtimer *t)
{
	return hr_valid(t) ? (int)clock_ids[hf_clock(hf_load(t))] : -EINVAL;
}

uint64_t pw__hrbase_next_ns(const struct pw_runtime *rt, struct pw__hrbase *hb)
{
	int64_t off[PW_HR_NCLOCKS];
	uint64_t best = UINT64_MAX;

	pw__hr_offsets(rt, off, clocks_in_use(hb));
	pw__lock(&hb->lock);
	for (unsigned c = 0; c < PW_HR_NCLOCKS; c++) {
		struct pw_hrtimer *first = pw__hheap_first(&hb->queue[c]);
		if (!first)
			continue;
		uint64_t e = shift(first->pw_expires, -off[c]);
		if (e < best)
			best = e;
	}
	pw__unlock(&hb->lock);
	return best;
}

/* Run @t, first in its queue and due.  Context: the runner, @hb locked;
 * returns with @hb locked, having dropped it for the callback. */
static void run_one(struct pw__hrbase *hb, struct pw_hrtimer *t)
{
	pw__runwait_begin(&hb->run, t, &hb->lock);
	dequeue(hb, t);
	enum pw_hrtimer_restart (*fn)(struct pw_hrtimer *) = t->function;
	pw__unlock(&hb->lock);

	struct pw_hrtimer *outer = pw__tls.hr_running;
	pw__tls.hr_running = t;
	enum pw_hrtimer_restart r = fn(t); /* NORESTART: may have freed t */
	pw__tls.hr_running = outer;

	pw__lock(&hb->lock);
	/* Started again by the callback or another thread: already queued.
	 * It cannot have moved: a running timer is never moved.  Room: the
	 * heap's spare slot (heap.c), which every start restores. */
	if (r != PW_HRTIMER_NORESTART && !(hf_load(t) & PW__HF_QUEUED))
		enqueue(hb, t);
	pw__runwait_end(&hb->run);
}

int pw__hrbase_run(struct pw_runtime *rt, struct pw__hrbase *hb, uint64_t now)
{
	int64_t off[PW_HR_NCLOCKS];
	int n = 0;

	pw__hr_offsets(rt, off, clocks_in_use(hb));
	pw__lock(&hb->lock);
	for (unsigned c = 0; c < PW_HR_NCLOCKS; c++) {
		uint64_t basenow = shift(now, off[c]);
		struct pw_hrtimer *t;
		while ((t = pw__hheap_first(&hb->queue[c]))) {
			if (t->pw_softexpires > basenow)
				break; /* window still closed: stop, as the kernel */
			run_one(hb, t);
			n++;
		}
	}
	pw__unlock(&hb->lock);
	return n;
}

int pw__hrbase_check(struct pw__hrbase *hb)
{
	char who[32];
	uint64_t total = 0;
	int ret = 0;

	snprintf(who, sizeof(who), "cpu %u hrtimers", hb->cpu);
	pw__lock(&hb->lock);
	for (unsigned c = 0; c < PW_HR_NCLOCKS && !ret; c++) {
		if (pw__hheap_check(&hb->queue[c], who)) {
			ret = -EFAULT;
			break;
		}
		total += hb->queue[c].n;
		for (uint32_t i = 0; i < hb->queue[c].n; i++) {
			struct pw_hrtimer *t = hb->queue[c].v[i].t;
			uint32_t f = hf_load(t);
			if ((f & PW__HF_MAGIC_MASK) != PW__HF_MAGIC || !(f & PW__HF_QUEUED) ||
			    (f & PW__HF_MIGRATING) || (f & PW__HF_CPU_MASK) != hb->cpu ||
			    hf_clock(f) != c || t->pw_softexpires > t->pw_expires) {
				fprintf(stderr,
					"pinwheel check %s: hrtimer %p: flags %#x, window [%llu, %llu] "
					"do not fit queue %u\n",
					who, (void *)t, f, (unsigned long long)t->pw_softexpires,
					(unsigned long long)t->pw_expires, c);
				ret = -EFAULT;
				break;
			}
		}
	}
	if (!ret && total != hb->count) {
		fprintf(stderr, "pinwheel check %s: %llu queued but %llu counted\n", who,
			(unsigned long long)total, (unsigned long long)hb->count);
		ret = -EFAULT;
	}
	pw__unlock(&hb->lock);
	return ret;
}

int pw__hr_move_all(struct pw_runtime *rt, unsigned from, unsigned to)
{
	struct pw__hrbase *src = &rt->cpus[from].hr, *dst = &rt->cpus[to].hr;
	int moved = 0;
	for (unsigned c = 0; c < PW_HR_NCLOCKS; c++) {
		for (;;) {
			pw__lock(&src->lock);
			struct pw_hrtimer *t = pw__hheap_first(&src->queue[c]);
			if (!t) {
				pw__unlock(&src->lock);
				break;
			}
			dequeue(src, t);
			pw__flags_leave(&t->pw_flags, PW__HF_MIGRATING, &src->lock);
			pw__lock(&dst->lock);
			if (reserve(dst, t)) {
				/* no room: back where it came from, which has
				 * the slot it just left */
				pw__unlock(&dst->lock);
				pw__lock(&src->lock);
				hf_store(t, hf_load(t) & ~PW__HF_MIGRATING);
				enqueue(src, t);
				pw__unlock(&src->lock);
				return -ENOMEM;
			}
			pw__flags_land(&t->pw_flags, PW__HF_MIGRATING, PW__HF_CPU_MASK, to);
			enqueue(dst, t);
			pw__unlock(&dst->lock);
			moved++;
		}
	}
	return moved;
}
