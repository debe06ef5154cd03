/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: the output of the main benchmark (report.c). */
#ifndef PW_BENCH_REPORT_H
#define PW_BENCH_REPORT_H

#include <stddef.h>

#include "measure.h"
#include "options.h"

/* "CPU model, N cores, Linux release" into @buf: every format names it. */
void machine(char *buf, size_t len);

/* The @n results on stdout, as @o->format says (table, JSON or CSV). */
void print_results(const struct opts *o, const char *mach, const struct result *results,
		   unsigned n);

#endif /* PW_BENCH_REPORT_H */
