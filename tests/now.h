/* SPDX-License-Identifier: MIT */
/*
 * now_ns(): CLOCK_MONOTONIC in nanoseconds, for the tests that time
 * against the real clock (the bench and the tools have theirs,
 * tools/common/now.h).  Include it after defining _GNU_SOURCE, as every
 * test does before its first system header.  Any thread; no locks.
 */
#ifndef PW_TESTS_NOW_H
#define PW_TESTS_NOW_H

#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC in ns.  Any thread. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* PW_TESTS_NOW_H */
