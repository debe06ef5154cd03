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

/* One netem delay sample, as the kernel's tabledist() computes it for the
 * random value @rnd (already correlated by the caller): @sigma == 0: @mu;
 * no table (@table NULL or @n 0): (rnd % (2 * (u32)sigma)) + mu - sigma;
 * else t = table[rnd % n], x = (sigma % 8192) * t rounded half away from
 * zero by +-4096, x / 8192 + (sigma / 8192) * t + mu.  Same integer types
 * as a 64-bit kernel (long t = 64 bits); s64 overflow wraps (the kernel
 * builds with -fno-strict-overflow).  The kernel caps jitter to
 * [0, INT_MAX] before calling; for sigma == INT_MIN, where 2 * (u32)sigma
 * is 0 and the kernel would divide by zero, the modulus is taken as 2^32
 * (rnd itself).
 * Context: any thread; pure, no locks.
 * Return: the delay (may be negative: netem then sends at once). */
int64_t pw__netem_tabledist(int64_t mu, int32_t sigma, uint32_t rnd, const int16_t *table,
			   unsigned n);

#endif
