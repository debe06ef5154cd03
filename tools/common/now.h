/* SPDX-License-Identifier: MIT */
/*
 * now_ns(): CLOCK_MONOTONIC in nanoseconds, the one wall-clock read the
 * bench and the tools time with (the tests have theirs, tests/now.h).
 * Include it after defining _GNU_SOURCE (or _POSIX_C_SOURCE), as every
 * harness file does before its first system header.
 * Owns nothing; any thread; no locks; one clock_gettime() (the vDSO's:
 * tens of nanoseconds).
 */
#ifndef PW_COMMON_NOW_H
#define PW_COMMON_NOW_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns.  Any thread. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* PW_COMMON_NOW_H */
