/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: progress lines on stderr (progress.c). */
#ifndef PW_BENCH_PROGRESS_H
#define PW_BENCH_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* Before the first line: @quiet (--quiet) turns them all off. */
void progress_init(bool quiet);

/* Item @i (1-based) of @n starts: "pinwheel-bench: [i/n] <fmt> ...".  One
 * line each when stderr is not a terminal; on a terminal, one line redrawn
 * in place. */
__attribute__((format(printf, 3, 4))) void progress_start(unsigned i, unsigned n,
							   const char *fmt, ...);

/* On a terminal only: @done of @total of the current item, as a percentage
 * after the line (redrawn when it changes). */
void progress_part(uint64_t done, uint64_t total);

/* The current item is over (or failed: call it before the message).  On a
 * terminal the line is erased, so that what is printed next starts on a
 * clean line. */
void progress_end(void);

#endif /* PW_BENCH_PROGRESS_H */
