/* SPDX-License-Identifier: MIT */
/* pinwheel-bench: the conn_mix workload's operation sequence (conn_mix.c). */
#ifndef PW_BENCH_CONN_MIX_H
#define PW_BENCH_CONN_MIX_H

#include <stdint.h>

enum { CM_ARM, CM_CANCEL };
struct cm_op {
	uint32_t k;
	uint8_t kind;
	uint32_t delta; /* ms from the batch's loop time */
};

/* The seeded sequence for @n pending timers: at least @ops calls, their
 * count in *@ncalls.  Return: an array to free(), or NULL (out of memory). */
struct cm_op *conn_mix_sequence(unsigned n, uint64_t ops, uint64_t *ncalls);

#endif /* PW_BENCH_CONN_MIX_H */
