/* SPDX-License-Identifier: MIT */
/* pinwheel-bench idle: wake-ups per migration policy (see idle.c). */
#ifndef PW_BENCH_IDLE_H
#define PW_BENCH_IDLE_H

/* @ncpus >= 2 runtime CPUs, @ms measured per policy.  Return: exit status. */
int idle_main(unsigned ncpus, unsigned ms, int json, const char *machine);

#endif
