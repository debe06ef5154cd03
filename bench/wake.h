/* SPDX-License-Identifier: MIT */
/* pinwheel-bench wake: sleep/kick mechanisms compared (see wake.c). */
#ifndef PW_BENCH_WAKE_H
#define PW_BENCH_WAKE_H

/* @rounds ping-pong round trips per mechanism.  Return: exit status. */
int wake_main(unsigned rounds, int json, const char *machine);

#endif
