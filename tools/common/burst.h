/* SPDX-License-Identifier: MIT */
/*
 * The rearm_burst loop: a receive loop's re-arms a burst at a time (NAPI's
 * budget, DPDK's rx_burst of 32), each burst's timers known when it starts,
 * with the caller's software prefetch of its timer objects.  One home for
 * the loop, so that every design pinwheel-bench compares runs the same
 * one: the bench's implementations (bench/bench.h wraps it with --prefetch)
 * and the 2.4 reference design (gl24.c), whose timers are its own.
 *
 * For each burst, the objects of its first D timers are prefetched, then
 * timer i is re-armed after the object of timer i + D was (D 0: none).
 * A library with a burst call (pw_mod_timers()) takes the burst after the
 * same first D (HARNESS_BURST_HEAD) instead of the per-timer loop.
 *
 * Threads: whatever thread runs the loop; no state of its own.
 */
#ifndef PW_COMMON_BURST_H
#define PW_COMMON_BURST_H

#include <stddef.h>
#include <stdint.h>

#define HARNESS_BURST_MAX 256

/* Prefetch the timer object at @p, @size bytes: every line it spans, for
 * writing (a re-arm writes it). */
static inline void harness_prefetch_obj(const void *p, size_t size)
{
	const char *c = p;
	for (size_t o = 0; o < size; o += 64)
		__builtin_prefetch(c + o, 1);
	__builtin_prefetch(c + size - 1, 1);
}

/* The first @D objects of a burst of @m timers @bidx.  OBJ(k): the address
 * of timer k's object; @size: its bytes. */
#define HARNESS_BURST_HEAD(bidx, m, D, OBJ, size)                                       \
	do {                                                                            \
		for (size_t h_ = 0; h_ < (m) && h_ < (D); h_++)                         \
			harness_prefetch_obj(OBJ((bidx)[h_]), (size));                  \
	} while (0)

/* The loop: @n re-arms (timer idx[k], to @jn + delta[k]) in bursts of
 * @burst, prefetching @D ahead.  ARM(k, jn, d): the design's re-arm of
 * timer k to jn + d (some libraries take the relative d). */
#define HARNESS_REARM_BURST(idx, delta, n, jn, burst, D, OBJ, size, ARM)                \
	do {                                                                            \
		for (size_t k_ = 0; k_ < (n); k_ += (burst)) {                          \
			const unsigned *bi_ = (idx) + k_;                               \
			const uint64_t *bd_ = (delta) + k_;                             \
			size_t m_ = (n) - k_ < (burst) ? (n) - k_ : (burst);            \
			HARNESS_BURST_HEAD(bi_, m_, (D), OBJ, size);                    \
			for (size_t i_ = 0; i_ < m_; i_++) {                            \
				if (i_ + (D) < m_)                                      \
					harness_prefetch_obj(OBJ(bi_[i_ + (D)]), (size)); \
				ARM(bi_[i_], (jn), bd_[i_]);                            \
			}                                                               \
		}                                                                       \
	} while (0)

#endif /* PW_COMMON_BURST_H */
