/* SPDX-License-Identifier: MIT */
/* pinwheel-bench scaling: its implementations of the multi-thread ops table
 * (struct mt_impl, tools/common/mt_impl.h) and its entry (see scaling.c). */
#ifndef PW_BENCH_SCALING_H
#define PW_BENCH_SCALING_H

#include "mt_impl.h" /* struct mt_impl: tools/common, shared with pinwheel-lab */

const struct mt_impl *mt_impl_pinwheel(void);
const struct mt_impl *mt_impl_global_lock(void);
const struct mt_impl *mt_impl_push(void);

/* @format: 0 table, 1 JSON, 2 CSV.  Return: the exit status. */
int scaling_main(unsigned max_workers, double seconds, unsigned per_worker, int format,
		 const char *machine);

#endif
