/* SPDX-License-Identifier: MIT */
/*
 * Placement: the one seam between the arm paths (timer.c, hrtimer.c) and
 * the machinery that decides where timers go and who must hear of them
 * (the migration policies in policy.c and tmigr.c, the workers' kicks in
 * worker.c).  An arm asks two questions, both inline so that the common
 * answer ("here, and nobody") costs a few instructions and no call:
 *
 *   pw__arm_target()  before locking: which CPU the timer goes to;
 *   pw__arm_notify()  after unlocking: whom to tell about the new event.
 *
 * Only the rare answers leave this file: a push under PW_MIGRATION_PUSH
 * (pw__policy_target()), an idle CPU's hierarchy entry to lower
 * (pw__tmigr_notify()), a sleeping worker to kick (pw__kick()).
 */
#ifndef PW_TIME_PLACEMENT_H
#define PW_TIME_PLACEMENT_H

#include "internal.h"

/*
 * Where an arm by CPU @self (-1: a thread that is no CPU) puts a timer that
 * is now on CPU @cur.  No CPU: it stays.  Otherwise the arming CPU (Linux
 * 6.9: enqueue locally), except that under PW_MIGRATION_PUSH a non-@pinned
 * timer armed on an idle CPU goes to a busy one (pw__policy_target()
 * counts the push).  Context: the arming thread, before it locks anything.
 * The re-arm fast lane (timer.c) does not ask: rt->lane_key holds this
 * rule's answer for a thread that is a CPU of @rt ("here" unless PUSH), so
 * a change to the rule is a change to pw__lane_key_set() (internal.h) too.
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

/* The rare half of pw__arm_notify(): an event at @event_ns (pw_now_ns()
 * scale) on base @kind (PW_BASE_HRTIMER for an hrtimer) of CPU @cpu, armed
 * by another CPU @self or by no CPU (-1).  Counts a remote wheel arm for
 * @self.  Context: any thread holding no base lock. */
void pw__arm_notify_remote(struct pw_runtime *rt, int self, unsigned cpu, unsigned kind,
			   uint64_t event_ns);

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
 *  - On another CPU: deferrable timers never wake anybody; pinned timers
 *    may kick its worker; global timers go through the hierarchy, which
 *    lowers an idle CPU's event instead of waking it.
 * Context: any thread holding no base lock.  Only @b's fields are read,
 * never the timer's (it may have run and been freed).  A stale 0 idle mark
 * is the safe case above; a stale 1 costs a group-lock round trip.
 * pw__arm_notify_own() is the first case alone, for an arm path that knows
 * @b is the arming CPU's own (the fast lane's rare end, timer.c).
 */
static inline void pw__arm_notify_own(struct pw_runtime *rt, const struct pw__base *b,
				      uint64_t bucket_j)
{
	if (__builtin_expect(__atomic_load_n(&b->tmigr_idle, __ATOMIC_RELAXED) != 0, 0))
		pw__tmigr_notify(rt, b->cpu, pw_jiffies_to_ns(rt, bucket_j));
}

static inline void pw__arm_notify(struct pw_runtime *rt, int self, const struct pw__base *b,
				  uint64_t bucket_j)
{
	if (__builtin_expect(self == (int)b->cpu, 1)) {
		pw__arm_notify_own(rt, b, bucket_j);
		return;
	}
	pw__arm_notify_remote(rt, self, b->cpu, b->kind, pw_jiffies_to_ns(rt, bucket_j));
}

#endif /* PW_TIME_PLACEMENT_H */
