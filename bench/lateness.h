/* SPDX-License-Identifier: MIT */
#ifndef PW_BENCH_LATENESS_H
#define PW_BENCH_LATENESS_H

/* pinwheel-bench lateness (see lateness.c).  Return: the exit status. */
int lateness_main(unsigned samples, int json, const char *machine);

#endif
