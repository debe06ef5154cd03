/* SPDX-License-Identifier: MIT */
/* pinwheel-bench overlap (overlap.c): what a random re-arm of a big wheel
 * waits for.  Threads: the main thread. */
#ifndef PW_BENCH_OVERLAP_H
#define PW_BENCH_OVERLAP_H

#include <stdint.h>

/* @which: "chase", "shapes", "rearm" or "all"/NULL; @n timers (objects) in
 * shapes and rearm; @ops operations a repetition.  Return: exit status. */
int overlap_main(const char *which, unsigned reps, uint64_t ops, unsigned n, const char *mach);

#endif /* PW_BENCH_OVERLAP_H */
