/* SPDX-License-Identifier: MIT */
/*
 * Placement: the one seam between the arm paths (timer.c, hrtimer.c) and
 * the machinery that decides where timers go and who must hear of them
 * (the migration policies in policy.c and tmigr.c, the kick rules in
 * policy.c, the workers' kicks in worker.c).  An arm asks two questions,
 * both inline so that the common answer ("here, and nobody") costs a few
 * instructions and no call:
 *
 *   pw__arm_here(), pw__arm_target()  under the timer's base lock: does
 *       the timer stay on the arming CPU, and if not, which CPU it goes to;
 *   pw__arm_notify(), pw__arm_notify_own()  after unlocking: whom to tell
 *       about the new event.
 *
 * An arm that may end on another CPU's base also reads, under that base's
 * lock before it enqueues, what the kick rule needs from the base
 * (pw__arm_moves_first()).
 *
 * Only the rare answers leave this file: a push under PW_MIGRATION_PUSH
 * (pw__policy_target()), an idle CPU's hierarchy entry to lower
 * (pw__tmigr_notify()), an enqueue on another CPU, whose target the kick
 * rule in force may interrupt (pw__arm_notify_remote(): pw__kick() and
 * friends, worker.h).
 */
#ifndef PW_TIME_PLACEMENT_H
#define PW_TIME_PLACEMENT_H

#include "internal.h"

/*
 * Where an arm by CPU @self (-1: a thread that is no CPU) puts a timer that
 * is now on CPU @cur.  No CPU: it stays.  Otherwise the arming CPU (Linux
 * 6.9: enqueue locally), except that under PW_MIGRATION_PUSH a non-@pinned
 * timer armed on an idle CPU goes to a busy one (pw__policy_target()
 * counts the push).  Context: the arming thread, holding the timer's base
 * lock (the push rule only reads the idle marks, locklessly); for wheel
 * timers on the rare path only (pw__arm_here() said no).
 * The re-arm fast lane (timer.c) does not ask: rt->lane_key holds this
 * rule's answer for a thread that is a CPU of @rt ("here" unless PUSH), so
 * a change to the rule is a change to pw__lane_key_set() (internal.h) and
 * to pw__arm_here() too.
 */
static inline unsigned pw__arm_target(struct pw_runtime *rt, int self, unsigned cur, bool pinned)
{
	if (self < 0)
		return cur;
	if (__builtin_expect(!pinned && __atomic_load_n(&rt->migration, __ATOMIC_RELAXED) ==
					    PW_MIGRATION_PUSH, 0))
		return pw__policy_target(rt, (unsigned)self);
	return (unsigned)self;
}

/*
 * The common answer of pw__arm_target(), found without asking it: an arm
 * by CPU @self of a timer now on CPU @cur (@pinned: the timer is pinned)
 * stays there, on the arming CPU, with no policy to consult; its event is
 * then nobody's business but the hierarchy's (pw__arm_notify_own()), and
 * no kick rule applies.  False for all the rest, which a wheel arm hands
 * to its out-of-line end: a thread that is no CPU, a timer on another CPU
 * (it moves here, or stays there while its callback runs), every
 * non-pinned arm under PW_MIGRATION_PUSH.  Two compares and a load, fewer
 * than pw__arm_target() and the compare of its answer.  Context: the
 * arming thread, holding the timer's base lock (the flags it read are
 * stable).
 */
static inline bool pw__arm_here(struct pw_runtime *rt, int self, unsigned cur, bool pinned)
{
	return self == (int)cur &&
	       (pinned || __atomic_load_n(&rt->migration, __ATOMIC_RELAXED) != PW_MIGRATION_PUSH);
}

/*
 * Before an arm that did not stay here (pw__arm_here()) enqueues its timer
 * on base @b at jiffy @bucket_j: does the timer move @b's first expiry
 * earlier?  What the kick rule PW_KICK_LINUX_4_8 asks of the target's base
 * (the kernel's trigger_dyntick_cpu(): time_before(expires,
 * base->next_expiry)), read here because only the lock holder sees the
 * base as it was before the enqueue.  The first expiry is exact (wheel.h
 * recomputes one that a removal left early); a pending timer re-armed on
 * @b still counts with its old bucket (the target set its wake-up with
 * it); an empty base (deferrable timers live on their own base and never
 * count) has none, so any timer moves it.  Context: the holder of @b's
 * lock, before the enqueue.
 */
static inline bool pw__arm_moves_first(struct pw__base *b, uint64_t bucket_j)
{
	return pw__after(pw__wheel_next_expiry(&b->wheel), bucket_j);
}

/*
 * The rare half of pw__arm_notify(): an event at @event_ns (pw_now_ns()
 * scale; 0: "now", compare with nothing) was enqueued on base @kind
 * (PW_BASE_HRTIMER for an hrtimer) of CPU @cpu by another CPU @self or by
 * no CPU (-1); @earlier: it moved the first event of that base (wheel:
 * pw__arm_moves_first(); hrtimer: of its clock's queue) earlier.  Counts
 * a remote wheel arm for @self, tells the PULL hierarchy of a global
 * timer, and applies the kick rule in force (policy.c).  Context: any
 * thread holding no lock.
 */
void pw__arm_notify_remote(struct pw_runtime *rt, int self, unsigned cpu, unsigned kind,
			   uint64_t event_ns, bool earlier);

/*
 * After an arm by CPU @self (-1: no CPU) made a wheel event at jiffy
 * @bucket_j visible on base @b (queued, @b unlocked): tell whoever must
 * know.
 *  - On @self's own bases: nobody, except on the global base while @self
 *    is idle in the migration hierarchy (a runtime without workers where
 *    pw_cpu_set_idle() marked it idle): then its handed-up event is
 *    lowered (pw__tmigr_notify()).  Not seeing the idle mark is safe:
 *    deactivate sets it before it reads the base, so that read sees this
 *    timer.  The mark is @b->tmigr_idle (always 0 on the other bases).
 *    No kick rule kicks the arming CPU itself.
 *  - On another CPU (pw__arm_notify_remote()): deferrable timers never
 *    wake anybody; global timers go through the hierarchy, which lowers an
 *    idle CPU's event instead of waking it; then the kick rule in force
 *    (pw_set_kick_rule()) decides whether the target is kicked, from the
 *    target's state and @earlier (pw__arm_moves_first(), read under @b's
 *    lock before the enqueue).
 * Context: any thread holding no base lock.  Only @b's fields are read,
 * never the timer's (it may have run and been freed).  A stale 0 idle mark
 * is the safe case above; a stale 1 costs a group-lock round trip.
 * pw__arm_notify_own() is the first case alone, for an arm path that knows
 * @b is the arming CPU's own (the general path's local end and the fast
 * lane's rare end, timer.c).
 */
static inline void pw__arm_notify_own(struct pw_runtime *rt, const struct pw__base *b,
				      uint64_t bucket_j)
{
	if (__builtin_expect(__atomic_load_n(&b->tmigr_idle, __ATOMIC_RELAXED) != 0, 0))
		(void)pw__tmigr_notify(rt, b->cpu, pw_jiffies_to_ns(rt, bucket_j));
}

static inline void pw__arm_notify(struct pw_runtime *rt, int self, const struct pw__base *b,
				  uint64_t bucket_j, bool earlier)
{
	if (self == (int)b->cpu) {
		pw__arm_notify_own(rt, b, bucket_j);
		return;
	}
	pw__arm_notify_remote(rt, self, b->cpu, b->kind, pw_jiffies_to_ns(rt, bucket_j), earlier);
}

#endif /* PW_TIME_PLACEMENT_H */
