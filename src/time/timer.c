/* SPDX-License-Identifier: MIT */
/*
 * Wheel timers with the kernel's timer_list semantics, per CPU.
 *
 * What it does
 * ------------
 * Each CPU of a runtime owns three timer bases, as Linux 6.9: LOCAL (pinned
 * timers), GLOBAL (the others) and DEF (deferrable timers), each a wheel
 * (wheel.c) behind its own lock.  The split matters to the PULL migration
 * policy (src/time/tmigr.c): an idle CPU hands only its GLOBAL base's
 * first expiry to a migrator.  A timer lives in at most one
 * base at a time; which one is written in its flags word: the CPU number,
 * the DEFERRABLE and PINNED bits (choose the base kind), and the state
 * bits PENDING, MIGRATING and SHUTDOWN; its bucket is in a field of its own
 * (pw_idx), read and written under the base lock only, so that a re-arm
 * stores one halfword and leaves the flags word alone.  There is no lock that two
 * CPUs share on the common path: arming on the local CPU takes the local
 * base's lock only, and the "softirq" (pw__base_run()) takes only the lock
 * of the base it expires.  This is the point of seed 001 (docs/seeds.md):
 * the 2.4 kernel's single timerlist_lock and its slow mod_timer were at the
 * top of a network box's profile; per-CPU bases and the mod_timer fast path
 * took them out.
 *
 * mod_timer, fast first
 * ---------------------
 *  1. Pending and the expiry is unchanged: return 1 with two relaxed loads,
 *     no lock, no atomic read-modify-write (inline in timer.h).  Network
 *     code re-arms the same timer on every packet with the same jiffies
 *     value most of the time, so this is the path that matters.
 *  2. Pending and the new expiry maps to the same bucket: under the base
 *     lock, only t->expires changes.  The timer is not moved, not even to
 *     the arming CPU (the kernel does the same).
 *  3. Otherwise: take it out, choose the target base, put it in.
 * Return values as the kernel: 0 if it was inactive, 1 if it was pending.
 *
 * Paths 2 and 3 come in two versions.  The fast lane (pw__mod_timer_lane(),
 * what the inline pw_mod_timer() calls when path 1 misses) is the arm of a
 * timer already on the calling CPU with no push policy in force, pending
 * (the re-arm a CPU handling a socket's packets does) or not (armed again
 * after it fired or was deleted there; pw_add_timer() enters it by its own
 * door): one compare of the flags word against the thread's own view
 * proves everything the general path tests one by one (set up, not
 * moving, not shut down, of this runtime, on this CPU), one compare of the
 * thread's runtime against the runtime's key proves placement has nothing
 * to decide, the base comes from the thread, and notification has nothing
 * to do but in the rare case placement.h names.  pw_timer_delete() has a
 * lane of the same shape (delete_lane()).  That state is described and set
 * in one place (internal.h, "The fast lane's state").  The lane makes no
 * call except in tail position, so it needs no stack frame, and what is
 * rare (an inactive timer, a base whose clock lags) leaves it by a tail
 * call: on a big wheel a re-arm's cost follows its instruction count
 * (docs/benchmarks.md, "A re-arm at a million timers").  Everything else
 * (another CPU's timer, a thread that is no CPU, the PUSH policy, a
 * contended lock, a base whose next expiry must be recomputed, the
 * variants) takes the general path, mod_timer_opts(); both give the same
 * results (test_diff and test_api run through both).
 *
 * Bursts: pw_mod_timers() re-arms an array of timers, as a receive loop
 * handling a burst of packets does, with exactly the results of one
 * pw_mod_timer() call per entry in order; per entry it runs fast path 1
 * and the lane's tests and steps (anything else: pw__mod_timer_general()),
 * prefetching the timers and list neighbours of entries further on and
 * keeping the lane's base lock from one entry to the next, so that the
 * cache misses of a big wheel overlap (burst.c; the steps it shares with
 * the lanes are in lane.h).
 *
 * Which base (Linux 6.9 rule)
 * ---------------------------
 * A timer is enqueued on the CPU of the thread that arms it.  If that
 * thread is no CPU (pw_this_cpu() == -1), the timer stays on the CPU it was
 * on.  add_timer_on() names the CPU and sets PINNED for good.  PINNED does
 * not change where an arm puts the timer (the kernel's pinned timers also
 * go to the arming CPU); it exempts the timer from the migration policies
 * that come with the runtime (push to a busy CPU, pull by an idle
 * hierarchy).
 *
 * Moving between bases: the MIGRATING protocol
 * ---------------------------------------------
 * Whoever wants to lock a timer's base reads its flags, locks the base the
 * flags name, and checks the flags did not change meanwhile; if they did,
 * it retries (lock_timer_base()).  To move a timer, the holder of the old
 * base's lock (after detaching it) sets MIGRATING, drops the old lock,
 * takes the new one, and publishes the new CPU with MIGRATING cleared.
 * While MIGRATING is set nobody else can lock the timer, so the mover owns
 * it in the gap between the two locks, and no thread ever holds two base
 * locks at once (no lock order to get wrong).  A timer whose callback is
 * running is never moved to another CPU: timer_delete_sync() finds the
 * running callback through the CPU the timer is on (the CPU's running
 * mark, shared by its three bases: one thread at a time runs a CPU's
 * timers), so the timer has to stay on that CPU until the callback
 * returns.  It may change base on that CPU (add_timer_on() pins it).
 *
 * Running callbacks
 * -----------------
 * pw__base_run() collects the due buckets onto lists owned by the base,
 * then for each timer: sets the CPU's running mark to it, detaches it,
 * drops the lock, calls it, retakes the lock, clears the mark.  The running
 * state is in the CPU, never in the timer, so a callback may free its own
 * timer; after the call the runner does not touch the timer again.  A
 * callback may re-arm itself (it goes back on this CPU, since it cannot be
 * moved while running), arm or delete any other timer, or delete its own.
 *
 * timer_delete_sync: waits while the base says the timer's callback runs
 * (runwait.h: polls first, then sleeps on a futex word; the runner wakes
 * sleepers under the same lock after every callback).
 * Called from the timer's own callback it would wait for itself forever:
 * it returns -EDEADLK instead (the thread knows which callback it runs).
 * timer_shutdown_sync sets SHUTDOWN before waiting, so a self-re-arming
 * callback's re-arm is refused and the wait ends.
 *
 * Departures from the kernel (on purpose)
 * ---------------------------------------
 *  - Arming a shut-down timer returns -ESHUTDOWN (the kernel ignores it
 *    silently and returns 0).  Ported code that does "if (!mod_timer(...))
 *    take_reference()" then takes no reference for a timer that will never
 *    fire, which is what it wants.
 *  - add_timer(), add_timer_on() return int: -EBUSY for a pending timer
 *    (the kernel WARNs and returns).  add_timer_on() refuses (-EAGAIN) to
 *    move a timer whose callback is running on another CPU (the kernel
 *    moves it, and a concurrent timer_delete_sync() can then return while
 *    the callback still runs).
 *  - The same-bucket fast path is not taken for a timer that sits on a list
 *    being expired right now: its bucket index is stale, and "same bucket"
 *    would leave it there to fire up to 64 granules early.
 *  - Destroying a runtime drops pending timers without touching them.
 *
 * Costs
 * -----
 * Fast path 1: two loads.  Fast path 2: one lock round trip, one index
 * computation.  Re-arm: lock, unlink, index, link, unlock; no clock read:
 * an idle base is forwarded to the latest jiffies value any thread read
 * (rt->jiffies_seen), as the kernel forwards to its jiffies variable.  The
 * caller computed @expires from pw_jiffies() a moment ago, so that value is
 * fresh; an older one only makes the wheel coarser, never early.  What a
 * random re-arm through the fast lane costs follows the instructions
 * between the inline test and the unlock (the lane's two compares, the
 * index, one unlink, one link, no call): in the cache directly, and on a
 * big wheel through the cache misses of the timer and of its list
 * neighbours, of which only as many overlap as the out-of-order window
 * holds re-arms; figures: docs/benchmarks.md ("A re-arm at a million
 * timers", "The arm path", "Figures that were in source comments").
 * Expiry: per timer one lock round trip and the callback.  Memory: 40
 * bytes a timer (the kernel's timer_list's size: the runtime is a number
 * in the flags word); a CPU's three wheel bases are about 15 KiB
 * (sizeof(struct pw__base) is about 5 KiB: 576 list heads, the bitmap and
 * the index tables).
 *
 * Locking summary: see docs/design/concurrency.md.
 */
#include "internal.h"
#include "migrating.h"
#include "lane.h"
#include "placement.h"

#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>

/* The running mark of @b's CPU (shared by its three bases). */
static inline struct pw__runwait *run_of(struct pw_runtime *rt, const struct pw__base *b)
{
	return &rt->cpus[b->cpu].run;
}

/* Is @t's callback running (on @b's CPU: a timer whose callback runs is
 * never moved to another CPU)?  Context: the holder of @b's lock, @t on @b. */
static inline bool is_running(struct pw_runtime *rt, const struct pw__base *b,
			      const struct pw_timer *t)
{
	return pw__runwait_running(run_of(rt, b)) == t;
}

/* Set up by pw_timer_setup() (which refuses NULL runtimes and callbacks):
 * the magic in the flags word is the whole check, one load the arm path
 * needs anyway. */
static inline bool tf_valid(uint32_t tf)
{
	return (tf & PW__TF_MAGIC_MASK) == PW__TF_MAGIC;
}

static inline bool timer_valid(const struct pw_timer *t)
{
	return t && tf_valid(pw__tf_load(t));
}

/* The runtime of a set-up @t (its number in the flags, which never change
 * it after setup).  Context: any thread. */
static inline struct pw_runtime *timer_rt(const struct pw_timer *t)
{
	return pw__tf_runtime(pw__tf_load(t));
}

int pw_timer_setup(struct pw_runtime *rt, struct pw_timer *t,
		   void (*fn)(struct pw_timer *), unsigned flags)
{
	if (!rt || !t || !fn || (flags & ~PW__TF_USER_MASK))
		return -EINVAL;
	int self = pw__self(rt);
	unsigned cpu = self >= 0 ? (unsigned)self : 0;
	t->function = fn;
	pw__link_store(&t->pw_next, NULL);
	pw__pprev_store(t, NULL);
	t->pw_idx = 0;
	t->pw_spare = 0;
	pw__tf_store(t, PW__TF_MAGIC | rt->id << PW__TF_RT_SHIFT | flags | cpu);
	return 0;
}

int pw_timer_cpu(const struct pw_timer *t)
{
	if (!timer_valid(t))
		return -EINVAL;
	return (int)(pw__tf_load(t) & PW__TF_CPU_MASK);
}

static struct pw__lock *timer_lock_of(struct pw_runtime *rt, uint32_t tf)
{
	return &pw__base_of(rt, tf)->lock;
}

/*
 * Lock the base that holds @t and return it, with @t's flags as they are
 * under that lock in *@tfp, which holds a fresh lockless read on entry.
 * The MIGRATING protocol's lock step (migrating.h).
 * Context: any thread holding no base lock.
 */
static inline struct pw__base *lock_timer_base(struct pw_timer *t, uint32_t *tfp)
{
	struct pw__lock *l = pw__lock_flags_base(pw__tf_runtime(*tfp), &t->pw_flags, tfp,
						 PW__TF_MIGRATING,
						 timer_lock_of);
	return pw_container_of(l, struct pw__base, lock);
}

/* Context: the holder of @b's lock, @t on @b.  Return: 1 if it was pending. */
static inline int detach_if_pending(struct pw__base *b, struct pw_timer *t)
{
	if (!(pw__tf_load(t) & PW__TF_PENDING))
		return 0;
	pw__wheel_detach(&b->wheel, t);
	return 1;
}

/*
 * Move @t (detached) from @b, whose lock the caller holds, to @nb; return
 * with @nb locked and @b unlocked, @nb's wheel forwarded.  The MIGRATING
 * protocol's move step (migrating.h).
 * Context: the holder of @b's lock; @t's callback is not running on @b.
 */
static struct pw__base *migrate(struct pw_runtime *rt, struct pw_timer *t,
				struct pw__base *b, struct pw__base *nb,
				uint32_t extra_flags)
{
	pw__flags_move(&t->pw_flags, PW__TF_MIGRATING, &b->lock, &nb->lock, PW__TF_CPU_MASK,
		       extra_flags | nb->cpu);
	pw__wheel_forward(&nb->wheel, pw__jiffies_seen(rt));
	return nb;
}

/*
 * Enqueue @t (not pending) at its expiry on @b, whose lock the caller
 * holds, for an arm that may not be @b's CPU's own: first ask whether it
 * moves @b's first expiry earlier, into *@earlier (placement.h, for the
 * kick rule).  Return: the bucket's expiry.
 */
static uint64_t add_noting_first(struct pw__base *b, struct pw_timer *t, bool *earlier)
{
	uint64_t bucket_expiry;
	unsigned idx = pw__wheel_calc_index(&b->wheel, exp_load(t), &bucket_expiry);
	*earlier = pw__arm_moves_first(b, bucket_expiry);
	pw__wheel_enqueue(&b->wheel, t, idx, bucket_expiry);
	return bucket_expiry;
}

/*
 * The rare end of an arm, everything pw__arm_here() did not answer "stays
 * here" for (placement.h): a thread that is no CPU, a timer on another CPU
 * than the arming one, PW_MIGRATION_PUSH.  @t (flags @tf under @b's lock,
 * pending if @pending, @b forwarded) goes where pw__arm_target() says,
 * unless its callback runs (then it stays: delete_sync looks for the
 * running callback on the timer's CPU), and is enqueued at @expires (the
 * bucket computed on the base it lands on: its clock may differ); the
 * base's first expiry is noted before, for the kick rule; then @b is
 * unlocked and whoever must hear of it is told.  Out of line, so the
 * common arm carries none of it.
 * Context: the arming thread, holding @b's lock (dropped; the target's
 * taken and dropped when @t moves; then the locks notification takes).
 * Return: @pending, mod_timer's answer.
 */
static __attribute__((noinline)) int arm_away(struct pw_timer *t, struct pw__base *b, int self,
					      uint32_t tf, uint64_t expires, int pending)
{
	struct pw_runtime *rt = pw__tf_runtime(tf);
	unsigned cur = tf & PW__TF_CPU_MASK;
	unsigned to = pw__arm_target(rt, self, cur, tf & PW_TIMER_PINNED);
	uint64_t bucket_expiry;
	bool earlier;

	if (to != cur && !is_running(rt, b, t)) {
		if (pending)
			pw__wheel_detach(&b->wheel, t);
		b = migrate(rt, t, b, &rt->cpus[to].base[b->kind], 0);
		exp_store(t, expires);
		bucket_expiry = add_noting_first(b, t, &earlier);
	} else {
		/* stays on @b: another CPU's, or this one's under PUSH */
		struct pw__wheel *w = &b->wheel;
		unsigned idx = pw__wheel_calc_index(w, expires, &bucket_expiry);
		earlier = pw__arm_moves_first(b, bucket_expiry);
		exp_store(t, expires);
		if (pending)
			pw__wheel_requeue(w, t, idx, bucket_expiry);
		else
			pw__wheel_enqueue(w, t, idx, bucket_expiry);
	}
	pw__unlock(&b->lock);
	/* @t may run and be freed from here on: only @b's fields are used */
	pw__arm_notify(rt, self, b, bucket_expiry, earlier);
	return pending;
}

/* The variants of the general path. */
enum {
	MOD_PENDING_ONLY = 1, /* mod_timer_pending(): only touch a pending timer */
	MOD_REDUCE = 2,       /* timer_reduce(): only move the expiry earlier */
	MOD_PATH1_MISSED = 8, /* from the lane: fast path 1 already missed inline */
};

/* The general path of every arm.  Inlined into each caller with a constant
 * @opts, so each variant carries none of the others' branches.  Context:
 * as pw_mod_timer(); takes @t's base lock, and the target's when it moves
 * (one at a time). */
static inline __attribute__((always_inline)) int mod_timer_opts(struct pw_timer *t,
								 uint64_t expires, unsigned opts)
{
	uint64_t bucket_expiry;
	unsigned idx;
	uint32_t tf;
	int ret;

	if (!t)
		return -EINVAL;
	tf = pw__tf_load(t);
	if (__builtin_expect(!tf_valid(tf), 0))
		return -EINVAL;
	struct pw_runtime *rt = pw__tf_runtime(tf);
	int self = pw__self(rt);
	struct pw__stats *st = pw__stats_mine(rt);

	if (!(opts & MOD_PATH1_MISSED) && (tf & PW__TF_PENDING)) {
		int64_t diff = (int64_t)(exp_load(t) - expires);
		/* Unlocked, like the kernel's: a racing change is the same as
		 * this call coming a moment earlier or later. */
		if (!diff || ((opts & MOD_REDUCE) && diff <= 0)) {
			pw__count_add(&st->fast_hits, 1);
			return 1;
		}
	}
	pw__count_add(&st->armed, 1);

	struct pw__base *b = lock_timer_base(t, &tf);
	struct pw__wheel *w = &b->wheel;
	/* Shut down: refused.  (Pending and shut down at once only while a
	 * shutdown_sync waits for the callback that had re-armed it.) */
	if (__builtin_expect(tf & PW__TF_SHUTDOWN, 0)) {
		ret = -ESHUTDOWN;
		goto out;
	}
	pw__wheel_forward(w, pw__jiffies_seen(rt));
	if (tf & PW__TF_PENDING) {
		if ((opts & MOD_REDUCE) && !pw__after(exp_load(t), expires)) {
			ret = 1;
			goto out;
		}
		prefetch_neighbours(t);
		idx = pw__wheel_calc_index(w, expires, &bucket_expiry);
		__builtin_prefetch(w->vectors[idx], 1);
		/* Fast path 2: same bucket, only the expiry changes. */
		if (idx == t->pw_idx &&
		    !(b->n_expiring && idx_expiring(b, idx))) {
			exp_store(t, expires);
			pw__count_add(&st->same_bucket, 1);
			ret = 1;
			goto out;
		}
		ret = 1;
	} else {
		if (opts & MOD_PENDING_ONLY) {
			ret = 0;
			goto out;
		}
		idx = pw__wheel_calc_index(w, expires, &bucket_expiry);
		ret = 0;
	}

	/* Stays on the arming CPU, its own base (the common case), or the
	 * rare end decides where it goes and whom to tell. */
	if (__builtin_expect(!pw__arm_here(rt, self, tf & PW__TF_CPU_MASK, tf & PW_TIMER_PINNED),
			     0))
		return arm_away(t, b, self, tf, expires, ret);
	exp_store(t, expires);
	if (ret)
		pw__wheel_requeue(w, t, idx, bucket_expiry);
	else
		pw__wheel_enqueue(w, t, idx, bucket_expiry);
	pw__unlock(&b->lock);
	/* @t may run and be freed from here on: only @b's fields are used */
	pw__arm_notify_own(rt, b, bucket_expiry);
	return ret;
out:
	pw__unlock(&b->lock);
	return ret;
}

/* Every re-arm the fast lane does not take: the whole of mod_timer but fast
 * path 1, which pw_mod_timer() tried inline.  Context: as pw_mod_timer(). */
__attribute__((noinline)) int pw__mod_timer_general(struct pw_timer *t, uint64_t expires)
{
	return mod_timer_opts(t, expires, MOD_PATH1_MISSED);
}

/* The fast lane's rare ends, out of line so that the lane itself makes no
 * call but tail calls (and so saves no register). */

/* @t's flags changed between the lane's read and its lock, or @b's clock
 * must be forwarded past a next expiry that needs recomputing: unlock @b,
 * do it the long way.  Context: the lane, holding @b's lock; drops it,
 * then takes the locks the general path takes. */
static __attribute__((noinline, cold)) int lane_retry(struct pw_timer *t, uint64_t expires,
						       struct pw__base *b)
{
	pw__unlock(&b->lock);
	return pw__mod_timer_general(t, expires);
}

/* After the lane unlocked @b: wake a thread waiting for the lock
 * (@wake), then tell whom an arm on the CPU's own base must tell about the
 * event at @bucket_j (placement.h: the hierarchy, if this CPU is idle in
 * it).  The runtime is the thread's own: the lane runs only when it is
 * (rt->lane_key).  Context: the lane, holding no lock (the hierarchy's
 * notify takes group locks).  Return: @ret, the lane's result. */
static __attribute__((noinline)) int lane_tail(struct pw__base *b, bool wake, uint64_t bucket_j,
					       int ret)
{
	if (wake)
		pw__lock_wake(&b->lock);
	pw__arm_notify_own(pw__tls.rt, b, bucket_j);
	return ret;
}

/* The lane's unlock: wake a waiter, tell the hierarchy (lane_tail()) if
 * this CPU is idle in it.  Context: the lane, holding @b's lock; drops it.
 * Return: @ret. */
static inline __attribute__((always_inline)) int lane_unlock(struct pw__base *b,
							      uint64_t bucket_expiry, int ret)
{
	/* read under the lock; a stale 0 is safe (pw__arm_notify()) */
	bool idle = __atomic_load_n(&b->tmigr_idle, __ATOMIC_RELAXED) != 0;
	bool wake = pw__unlock_nowake(&b->lock);
	/* the timer may run and be freed from here on */
	if (__builtin_expect(wake | idle, 0))
		return lane_tail(b, wake, bucket_expiry, ret);
	return ret;
}

/*
 * The lane's steps for a pending @t once its tests passed, @b (the
 * thread's own base for @t) is locked and its clock current: the index,
 * fast path 2 or the requeue, the unlock.  Nothing here reads the runtime,
 * and the rare ends are tail calls, so that the lane keeps few values live
 * and needs no stack frame: on a big wheel what a random re-arm costs
 * follows the instructions it runs, since the next re-arm's cache miss is
 * issued only once the out-of-order window reaches it (docs/benchmarks.md,
 * "A re-arm at a million timers").
 * Context: the lane, holding @b's lock; drops it.  Return: 1.
 */
static inline __attribute__((always_inline)) int lane_arm(struct pw_timer *t, uint64_t expires,
							   struct pw__base *b)
{
	uint64_t bucket_expiry;
	unsigned idx = lane_place(t, expires, b, &bucket_expiry);
	/* Fast path 2: same bucket, only the expiry changes. */
	if (lane_same_bucket(b, t, idx)) {
		pw__count_add(&b->stats->same_bucket, 1);
		if (__builtin_expect(pw__unlock_nowake(&b->lock), 0))
			return lane_tail(b, true, bucket_expiry, 1);
		return 1;
	}
	pw__wheel_requeue(&b->wheel, t, idx, bucket_expiry);
	return lane_unlock(b, bucket_expiry, 1);
}

/* The lane found @b's clock behind @jnow (once a jiffy on a busy CPU):
 * forward it, then go on as the lane; a base whose next expiry must be
 * recomputed first goes the long way.  Out of line, so that the lane
 * carries only the compare.  Context: the lane, holding @b's lock. */
static __attribute__((noinline)) int lane_forward(struct pw_timer *t, uint64_t expires,
						  struct pw__base *b, uint64_t jnow)
{
	if (__builtin_expect(!pw__wheel_forward_cached(&b->wheel, jnow), 0))
		return lane_retry(t, expires, b);
	return lane_arm(t, expires, b);
}

/* The lane's arm of an inactive @t (pw_add_timer(), or a mod_timer after
 * it fired or was deleted): forward @b's clock to @jnow, enqueue, unlock.
 * Out of line, so that the re-arm carries only the branch.  Context: the
 * lane, holding @b's lock; drops it.  Return: 0 (it was not pending). */
static __attribute__((noinline)) int lane_add(struct pw_timer *t, uint64_t expires,
					      struct pw__base *b, uint64_t jnow)
{
	struct pw__wheel *w = &b->wheel;
	if (__builtin_expect(!pw__wheel_forward_cached(w, jnow), 0))
		return lane_retry(t, expires, b);
	uint64_t bucket_expiry;
	unsigned idx = lane_place(t, expires, b, &bucket_expiry);
	pw__wheel_enqueue(w, t, idx, bucket_expiry);
	return lane_unlock(b, bucket_expiry, 0);
}

/*
 * The fast lane, pw_mod_timer()'s out-of-line half (timer.h calls it when
 * fast path 1 missed inline) and pw_add_timer()'s: the arm network code
 * does all day, of a timer that is already on the calling CPU, pending (a
 * socket's timer, re-armed from the CPU that handles its packets) or not
 * (armed again after it fired or was deleted there), with no push policy
 * in force (under PW_MIGRATION_PUSH every arm takes the long way, pinned
 * ones too).  It is mod_timer_opts() for exactly that case, nothing left
 * out but the tests that cannot fail there:
 *  - one compare of the flags with the thread's view (pw__tls.lane_tf,
 *    PENDING left out) proves set up, not migrating, not shut down, of
 *    the thread's runtime, on this CPU;
 *  - one compare of the thread's runtime with the runtime's lane key
 *    proves that placement is "stay" (Linux 6.9: enqueue locally; it is
 *    local);
 *  - the base is the thread's own (pw__tls.lane_base), no CPU arithmetic;
 *  - the clock to forward to (rt->jiffies_seen) is read before the lock,
 *    which forwards to a value at most as fresh: never early (the
 *    general path's rule, "Costs" above);
 *  - nobody needs a kick for a timer on the arming CPU's own base, except
 *    the hierarchy when this CPU is idle in it (placement.h,
 *    pw__arm_notify_own(), from the rare end lane_tail());
 *  - a contended lock is left to the long way, which waits for it.
 * What those three fields hold and where they are set: internal.h, "The
 * fast lane's state".  Anything else goes to pw__mod_timer_general().  The
 * lane calls nothing but in tail position, so it needs no stack frame: the
 * instructions it runs are the arm's own.
 * Context: as pw_mod_timer(): any thread; tries @t's base lock (the
 * general path takes it, and the target's when the timer moves, one at a
 * time).  Return: as pw_mod_timer().
 */
int pw__mod_timer_lane(struct pw_timer *t, uint64_t expires)
{
	struct pw__tls *me = &pw__tls; /* @t is not NULL: the inline half tested it */
	uint32_t tf = pw__tf_load(t);
	/* lane_tf is 0 in a thread that is no CPU, and no runtime is number 0:
	 * then no timer passes.  Once the flags match, @t's runtime is the
	 * thread's. */
	if (__builtin_expect(((tf ^ me->lane_tf) & PW__TF_LANE_ARM_MASK) != PW__TF_MAGIC, 0))
		return pw__mod_timer_general(t, expires);
	struct pw_runtime *rt = me->rt;
	if (__builtin_expect((uintptr_t)rt != __atomic_load_n(&rt->lane_key, __ATOMIC_RELAXED), 0))
		return pw__mod_timer_general(t, expires);
	uint64_t jnow = pw__jiffies_seen(rt);
	struct pw__base *b = me->lane_base[(tf / PW_TIMER_PINNED) & 3];
	/* Start the neighbours' cache misses now, so that they overlap the
	 * lock's wait (a locked instruction waits for every earlier load and
	 * store; prefetches are not held back by it).  The links are read
	 * without the lock, as relaxed atomics (wheel.h): only prefetch
	 * addresses, a stale one (or an inactive timer's NULL) costs a useless
	 * prefetch, never a fault. */
	prefetch_link_targets(__atomic_load_n(&t->pw_next, __ATOMIC_RELAXED),
			      __atomic_load_n(&t->pw_pprev, __ATOMIC_RELAXED));
	if (__builtin_expect(!pw__trylock(&b->lock), 0))
		return pw__mod_timer_general(t, expires);
	if (__builtin_expect(pw__tf_load(t) != tf, 0)) /* changed before we locked */
		return lane_retry(t, expires, b);
	if (__builtin_expect(!(tf & PW__TF_PENDING), 0))
		return lane_add(t, expires, b, jnow);
	if (__builtin_expect(pw__after(jnow, b->wheel.clk), 0))
		return lane_forward(t, expires, b, jnow);
	return lane_arm(t, expires, b);
}

/*
 * The delete lane: pw_timer_delete() of a pending timer on the calling
 * thread's CPU, as the lane arms it: one compare of the flags (set up,
 * pending, not migrating, not shut down, of this runtime, on this CPU:
 * PW__TF_LANE_MASK), the thread's own base, a lock that is free; anything
 * else, and a timer whose flags changed before the lock, the long way.
 * Context: as pw_timer_delete(); tries @t's base lock.  Return: 1 (it was
 * pending and is not now), or -EAGAIN: take the long way (nothing done).
 */
static inline int delete_lane(struct pw_timer *t, uint32_t tf)
{
	struct pw__tls *me = &pw__tls;
	if (__builtin_expect(((tf ^ me->lane_tf) & PW__TF_LANE_MASK) != PW__TF_MAGIC, 0))
		return -EAGAIN;
	struct pw__base *b = me->lane_base[(tf / PW_TIMER_PINNED) & 3];
	prefetch_link_targets(__atomic_load_n(&t->pw_next, __ATOMIC_RELAXED),
			      __atomic_load_n(&t->pw_pprev, __ATOMIC_RELAXED));
	if (__builtin_expect(!pw__trylock(&b->lock), 0))
		return -EAGAIN;
	if (__builtin_expect(pw__tf_load(t) != tf, 0)) {
		pw__unlock(&b->lock);
		return -EAGAIN;
	}
	pw__wheel_detach(&b->wheel, t);
	pw__unlock(&b->lock);
	return 1;
}

int pw_mod_timer_pending(struct pw_timer *t, uint64_t expires)
{
	return mod_timer_opts(t, expires, MOD_PENDING_ONLY);
}

int pw_timer_reduce(struct pw_timer *t, uint64_t expires)
{
	return mod_timer_opts(t, expires, MOD_REDUCE);
}

int pw_add_timer(struct pw_timer *t)
{
	if (!t)
		return -EINVAL;
	/* The add lane: one compare proves set up, not pending, not
	 * migrating, not shut down, of the thread's runtime, on its CPU (the
	 * thread's view has PENDING set, the timer not); then as the arm lane
	 * (lane_add()).  Otherwise the checks one by one and the arm lane,
	 * which takes the long way.  If another thread armed @t meanwhile,
	 * this arm moves it, as mod_timer would. */
	struct pw__tls *me = &pw__tls;
	uint32_t tf = pw__tf_load(t);
	int ret;
	if (__builtin_expect(((tf ^ me->lane_tf) & PW__TF_LANE_MASK) ==
				     (PW__TF_MAGIC | PW__TF_PENDING), 1)) {
		struct pw_runtime *rt = me->rt;
		struct pw__base *b = me->lane_base[(tf / PW_TIMER_PINNED) & 3];
		if ((uintptr_t)rt == __atomic_load_n(&rt->lane_key, __ATOMIC_RELAXED) &&
		    pw__trylock(&b->lock)) {
			if (__builtin_expect(pw__tf_load(t) == tf, 1))
				ret = lane_add(t, exp_load(t), b, pw__jiffies_seen(rt));
			else
				ret = lane_retry(t, exp_load(t), b);
			return ret < 0 ? ret : 0;
		}
	}
	if (!tf_valid(tf))
		return -EINVAL;
	if (tf & PW__TF_PENDING)
		return -EBUSY;
	ret = pw__mod_timer_lane(t, exp_load(t));
	return ret < 0 ? ret : 0;
}

int pw_add_timer_on(struct pw_timer *t, unsigned cpu)
{
	struct pw__base *b;
	uint32_t tf;
	int ret = 0;

	if (!timer_valid(t) || cpu >= timer_rt(t)->ncpus)
		return -EINVAL;
	struct pw_runtime *rt = timer_rt(t); /* t may be run and freed once unlocked */
	if (__atomic_load_n(&rt->cpus[cpu].offline, __ATOMIC_ACQUIRE))
		return -ENODEV;
	if (pw_timer_pending(t))
		return -EBUSY;

	int self = pw__self(rt);
	pw__count_add(&pw__stats_mine(rt)->armed, 1);
	tf = pw__tf_load(t);
	b = lock_timer_base(t, &tf);
	if (tf & PW__TF_SHUTDOWN) {
		ret = -ESHUTDOWN;
		goto out;
	}
	if (tf & PW__TF_PENDING) { /* armed by another thread meanwhile */
		ret = -EBUSY;
		goto out;
	}
	struct pw__base *nb = pw__base_of(rt, (tf & ~PW__TF_CPU_MASK) | cpu | PW_TIMER_PINNED);
	if (nb->cpu != b->cpu && is_running(rt, b, t)) {
		ret = -EAGAIN;
		goto out;
	}
	if (nb != b) {
		/* another CPU, or the pinned base of this one (the running mark
		 * is per CPU, so a running timer may change base on its CPU) */
		b = migrate(rt, t, b, nb, PW_TIMER_PINNED);
	} else {
		pw__tf_store(t, tf | PW_TIMER_PINNED);
		pw__wheel_forward(&b->wheel, pw__jiffies_seen(rt));
	}
	bool earlier = false;
	uint64_t bucket_expiry;
	if (__builtin_expect(self != (int)b->cpu, 0)) /* another CPU's: for the kick rule */
		bucket_expiry = add_noting_first(b, t, &earlier);
	else
		bucket_expiry = pw__wheel_add(&b->wheel, t);
	pw__unlock(&b->lock);
	pw__arm_notify(rt, self, b, bucket_expiry, earlier);
	return 0;
out:
	pw__unlock(&b->lock);
	return ret;
}

static __attribute__((noinline)) int delete_common(struct pw_timer *t, bool shutdown)
{
	struct pw__base *b;
	uint32_t tf;
	int ret;

	if (!timer_valid(t))
		return -EINVAL;
	if (!shutdown && !pw_timer_pending(t)) /* the kernel's lockless shortcut */
		return 0;
	tf = pw__tf_load(t);
	b = lock_timer_base(t, &tf);
	ret = detach_if_pending(b, t);
	if (shutdown)
		pw__tf_store(t, pw__tf_load(t) | PW__TF_SHUTDOWN);
	pw__unlock(&b->lock);
	return ret;
}

int pw_timer_delete(struct pw_timer *t)
{
	if (!t)
		return -EINVAL;
	/* the delete lane (a pending timer of this CPU), else the checks one
	 * by one (an inactive timer: the kernel's lockless shortcut) and the
	 * long way */
	int ret = delete_lane(t, pw__tf_load(t));
	return ret >= 0 ? ret : delete_common(t, false);
}

int pw_timer_shutdown(struct pw_timer *t)
{
	return delete_common(t, true);
}

static int delete_sync_common(struct pw_timer *t, bool shutdown)
{
	if (!timer_valid(t))
		return -EINVAL;
	if (pw__tls.running == t)
		return -EDEADLK; /* from its own callback: it would wait for itself */

	for (unsigned round = 0;; round++) {
		uint32_t tf = pw__tf_load(t);
		struct pw__base *b = lock_timer_base(t, &tf);

		if (shutdown)
			pw__tf_store(t, pw__tf_load(t) | PW__TF_SHUTDOWN);
		if (!is_running(pw__tf_runtime(tf), b, t)) {
			int ret = detach_if_pending(b, t);
			pw__unlock(&b->lock);
			return ret;
		}
		pw__runwait_wait(run_of(pw__tf_runtime(tf), b), &b->lock, t, round); /* drops the lock */
	}
}

int pw_timer_delete_sync(struct pw_timer *t)
{
	return delete_sync_common(t, false);
}

int pw_timer_shutdown_sync(struct pw_timer *t)
{
	return delete_sync_common(t, true);
}

/* Run the collected list *@head.  Context: the runner, @b locked; returns
 * with @b locked, having dropped it around each callback. */
static int expire_list(struct pw_runtime *rt, struct pw__base *b, struct pw_timer **head)
{
	struct pw__runwait *run = run_of(rt, b);
	struct pw_timer *t;
	int n = 0;

	while ((t = *head)) {
		void (*fn)(struct pw_timer *) = t->function;

		pw__runwait_begin(run, t, &b->lock);
		pw__wheel_detach(&b->wheel, t);
		pw__unlock(&b->lock);

		struct pw_timer *outer = pw__tls.running;
		pw__tls.running = t;
		fn(t); /* may free t: not touched after this */
		pw__tls.running = outer;
		n++;

		pw__lock(&b->lock);
		pw__runwait_end(run);
	}
	return n;
}

int pw__base_run(struct pw_runtime *rt, struct pw__base *b, uint64_t jnow)
{
	struct pw__wheel *w = &b->wheel;
	int n = 0;

	pw__lock(&b->lock);
	while (pw__after_eq(jnow, w->clk) && pw__after_eq(jnow, pw__wheel_next_expiry(w))) {
		unsigned lists = pw__wheel_collect(w, b->expiring, b->expiring_idx);
		b->n_expiring = lists;
		/* Coarsest level first, as the kernel. */
		while (lists--)
			n += expire_list(rt, b, &b->expiring[lists]);
		b->n_expiring = 0;
	}
	pw__unlock(&b->lock);
	return n;
}

int pw__base_check(struct pw_runtime *rt, struct pw__base *b)
{
	static const char *const names[PW_NR_BASES] = {"local", "global", "def"};
	char who[48];
	unsigned kind = (unsigned)(b - rt->cpus[b->cpu].base);
	/* what every timer on this base has in its flags */
	uint32_t mask = PW__TF_CPU_MASK | PW_TIMER_DEFERRABLE | PW__TF_MAGIC_MASK;
	uint32_t want = b->cpu | PW__TF_MAGIC;
	if (kind == PW_BASE_DEF)
		want |= PW_TIMER_DEFERRABLE;
	else
		mask |= PW_TIMER_PINNED;
	if (kind == PW_BASE_LOCAL)
		want |= PW_TIMER_PINNED;
	snprintf(who, sizeof(who), "cpu %u base %s", b->cpu, names[kind]);

	pw__lock(&b->lock);
	int ret = pw__wheel_check(&b->wheel, b->expiring, b->expiring_idx, b->n_expiring, mask,
				  want, who);
	pw__unlock(&b->lock);
	return ret;
}

int pw__wheel_move_all(struct pw_runtime *rt, unsigned from, unsigned to)
{
	int moved = 0;
	for (unsigned k = 0; k < PW_NR_BASES; k++) {
		struct pw__base *src = &rt->cpus[from].base[k], *dst = &rt->cpus[to].base[k];
		for (;;) {
			pw__lock(&src->lock);
			struct pw_timer *t = pw__wheel_any(&src->wheel);
			if (!t) {
				pw__unlock(&src->lock);
				break;
			}
			/* pinned timers move too, as on the kernel's CPU hotplug;
			 * nothing runs: the caller holds the CPU's run guard */
			pw__wheel_detach(&src->wheel, t);
			migrate(rt, t, src, dst, 0); /* returns with dst locked */
			pw__wheel_add(&dst->wheel, t);
			pw__unlock(&dst->lock);
			moved++;
		}
	}
	return moved;
}
