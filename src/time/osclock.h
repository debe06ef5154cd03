/* SPDX-License-Identifier: MIT */
/*
 * Reading an OS clock in nanoseconds: the one helper that the runtime's
 * clock (clock.c), the hrtimer clocks, the lock statistics and vmstat use.
 *
 * A leaf: it includes nothing of the subsystem, and it is not clock.c's
 * header (clock.c's functions are public: <pinwheel/runtime.h>).  So the
 * lock (lock.c) times its waits without depending on the runtime's clock,
 * which needs the subsystem's structures (clock.c -> internal.h -> ... ->
 * lock.h).  Includers define _GNU_SOURCE or _POSIX_C_SOURCE, for
 * clock_gettime().
 */
#ifndef PW_TIME_OSCLOCK_H
#define PW_TIME_OSCLOCK_H

#include <stdint.h>
#include <time.h>

/* @id read now, in ns (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME).
 * Context: any thread, no lock; a vDSO call, no system call for these
 * clocks. */
static inline uint64_t pw__clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* PW_TIME_OSCLOCK_H */
