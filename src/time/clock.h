/* SPDX-License-Identifier: MIT */
/* Reading an OS clock in nanoseconds: the one helper (clock.c) that the
 * runtime's clock, the hrtimer clocks, the lock statistics and vmstat use. */
#ifndef PW_TIME_CLOCK_H
#define PW_TIME_CLOCK_H

#include <stdint.h>
#include <time.h>

/* @id read now, in ns (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME).
 * Context: any thread; a vDSO call, no system call for these clocks. */
uint64_t pw__clock_ns(clockid_t id);

#endif /* PW_TIME_CLOCK_H */
