/* SPDX-License-Identifier: MIT */
/*
 * Clocks: the real monotonic clock and the simulated one.  (The OS clock
 * read itself is osclock.h's, a leaf header.)
 *
 * PW_CLOCK_MONOTONIC reads CLOCK_MONOTONIC (vDSO, no system call): never
 * wall-clock time, which can jump.  PW_CLOCK_SIM reads a 64-bit word that
 * only pw_sim_advance() moves, so tests replay exactly.  Jiffies are the
 * clock divided by the tick (1e9 / hz ns), plus pw_config.initial_jiffies:
 * jiffy j begins at (j - initial) * tick.  Jiffies are modulo 2^64; with
 * initial_jiffies near 2^64 (the kernel's INITIAL_JIFFIES idea) they wrap,
 * and everything compares them wrap-safely.
 * Every pw_jiffies() also notes the value in rt->jiffies_seen, which is what
 * arming forwards an idle base to (see internal.h).
 *
 * Context: every function here may be called from any thread; none takes
 * a lock.
 */
#define _POSIX_C_SOURCE 200809L
#include "osclock.h"
#include "internal.h"

uint64_t pw_now_ns(const struct pw_runtime *rt)
{
	if (!rt)
		return 0;
	if (rt->clock == PW_CLOCK_SIM)
		return __atomic_load_n(&rt->sim_now_ns, __ATOMIC_RELAXED);
	return pw__clock_ns(CLOCK_MONOTONIC);
}

uint64_t pw_jiffies(const struct pw_runtime *rt)
{
	if (!rt)
		return 0;
	uint64_t j = pw__ns_to_jiffies(rt, pw_now_ns(rt));
	/* The cache is internal state, not part of what callers see: casting
	 * away const here keeps the public signature honest about that. */
	pw__jiffies_note((struct pw_runtime *)rt, j);
	return j;
}

uint64_t pw_jiffies_to_ns(const struct pw_runtime *rt, uint64_t j)
{
	if (!rt)
		return 0;
	/* jiffies since clock 0, modulo 2^64: a jiffy "before" the base (by
	 * less than 2^63) is in the past, time 0 */
	uint64_t d = j - rt->jiffies_base;
	if ((int64_t)d < 0)
		return 0;
	if (d > UINT64_MAX / rt->tick_ns)
		return UINT64_MAX;
	return d * rt->tick_ns;
}
