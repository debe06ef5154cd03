/* SPDX-License-Identifier: MIT */
/* The randomized tests' generator (splitmix64): seeded, replayable. */
#ifndef PW_TESTS_RNG_H
#define PW_TESTS_RNG_H

#include <stdint.h>

static uint64_t rng_state;

static inline uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 for n == 0. */
static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

#endif
