/* SPDX-License-Identifier: MIT */
/*
 * netem's extras beyond struct pw__qdisc_ops (sched/netem.c): what tc shows
 * nowhere but tests and tools want to read.  For src/net and tests only.
 *
 * Context: any thread that may read the qdisc (it is not freed meanwhile);
 * the readers take no lock and read relaxed atomics or values set under
 * the root lock, so a reading taken while packets flow is a snapshot.
 */
#ifndef PW_NET_SCHED_NETEM_H
#define PW_NET_SCHED_NETEM_H

#include <stdbool.h>
#include <stdint.h>

struct pw__qdisc;

/*
 * Duplicates netem decided to make (the duplicate draw fired) but could
 * not, because the device has no clone op or the clone op returned NULL:
 * the kernel's skb_clone() failure, counted nowhere in the kernel.  @q must
 * be a netem qdisc.  Return: the count since the qdisc was created.
 */
uint64_t pw__netem_dup_failed(struct pw__qdisc *q);

/*
 * The PRNG set-up of a netem qdisc, for tests that recompute its draws
 * (read right after init/change, before a packet moves, to see the
 * starting values): the seed in use (given, or drawn at random), whether
 * it was given, and the correlation state of the five correlated sources
 * (rho as configured, last as get_crandom() will use it next).
 */
struct pw__netem_prng_info {
	uint64_t seed;
	bool seed_given;
	uint32_t delay_last, delay_rho;
	uint32_t loss_last, loss_rho;
	uint32_t dup_last, dup_rho;
	uint32_t reorder_last, reorder_rho;
	uint32_t corrupt_last, corrupt_rho;
};
void pw__netem_prng_info(struct pw__qdisc *q, struct pw__netem_prng_info *out);

#endif
