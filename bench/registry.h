/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: the implementations and the workloads, by name. */
#ifndef PW_BENCH_REGISTRY_H
#define PW_BENCH_REGISTRY_H

#include "bench.h"

struct bench_reg {
	const char *name;
	const struct bench_impl *(*get)(const char **why); /* NULL: not built */
};

#define NREG 9 /* entries of bench_registry */
#define NWL 8  /* entries of bench_workloads */

extern const struct bench_reg bench_registry[NREG];
extern const char *const bench_workloads[NWL];

#endif /* PW_BENCH_REGISTRY_H */
