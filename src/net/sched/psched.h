/* SPDX-License-Identifier: MIT */
/*
 * The kernel's psched_ratecfg (sch_generic.c): a rate precomputed as
 * mult/shift so that a packet's transmission time is one multiply and one
 * shift, with the rate spec's overhead, mpu and linklayer; shared by the
 * shapers (tbf.c, htb.c).  Pure arithmetic: no locks, any thread; a
 * ratecfg is written at configuration time and read under the qdisc's
 * root lock.
 */
#ifndef PW_NET_SCHED_PSCHED_H
#define PW_NET_SCHED_PSCHED_H

#include "../internal.h"

#include <string.h>

struct pw__psched_ratecfg {
	uint64_t rate_bytes_ps;
	uint32_t mult;
	uint16_t overhead;
	uint16_t mpu;
	uint8_t linklayer;
	uint8_t shift;
};

/* psched_ratecfg_precompute(): the larger of the spec's 32-bit rate and
 * @rate64; mult/shift the largest factor = 1e9 << shift whose quotient by
 * the rate still fits 31 bits (or the factor 63). */
static inline void pw__psched_precompute(struct pw__psched_ratecfg *r,
					 const struct pw__tc_ratespec *conf, uint64_t rate64)
{
	memset(r, 0, sizeof(*r));
	r->overhead = conf->overhead;
	r->mpu = conf->mpu;
	r->rate_bytes_ps = conf->rate > rate64 ? conf->rate : rate64;
	r->linklayer = conf->linklayer & PW_TC_LINKLAYER_MASK;
	r->mult = 1;
	if (r->rate_bytes_ps) {
		uint64_t factor = 1000000000ull;
		for (;;) {
			uint64_t m = factor / r->rate_bytes_ps;
			r->mult = (uint32_t)m;
			if ((m & (1u << 31)) || (factor & (1ull << 63)))
				break;
			factor <<= 1;
			r->shift++;
		}
	}
}

/* psched_l2t_ns(): @len bytes (plus overhead, at least mpu, in ATM cells
 * when the link layer is ATM) at the rate, in ns. */
static inline uint64_t pw__psched_l2t_ns(const struct pw__psched_ratecfg *r, unsigned len)
{
	uint64_t l = (uint64_t)len + r->overhead;
	if (l < r->mpu)
		l = r->mpu;
	if (r->linklayer == PW_LINKLAYER_ATM)
		l = (l + 47) / 48 * 53;
	return (l * r->mult) >> r->shift;
}

/* psched_ratecfg_getrate(): the rate spec a dump gives back. */
static inline void pw__psched_getrate(struct pw__tc_ratespec *res,
				      const struct pw__psched_ratecfg *r)
{
	memset(res, 0, sizeof(*res));
	res->rate = r->rate_bytes_ps > 0xFFFFFFFFull ? 0xFFFFFFFFu : (uint32_t)r->rate_bytes_ps;
	res->overhead = r->overhead;
	res->mpu = r->mpu;
	res->linklayer = r->linklayer;
}

#endif /* PW_NET_SCHED_PSCHED_H */
