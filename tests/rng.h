/* SPDX-License-Identifier: MIT */
/* The randomized tests' generator (splitmix64): seeded, replayable. */
#ifndef PW_TESTS_RNG_H
#define PW_TESTS_RNG_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng_state;

static inline uint64_t rng_mix(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#ifdef PW_FUZZ
/*
 * Built as a fuzz target (fuzz/CMakeLists.txt): the "random" choices come
 * from the fuzzer's input, 3 bytes a draw (mixed, so that rnd_below() of
 * any bound sees every value), and the operation loops stop when the input
 * is used up (rng_done()); after that every draw is the mix of 0.
 */
static const uint8_t *rng_in;
static size_t rng_left;

static inline void rng_from_bytes(const uint8_t *d, size_t n)
{
	rng_in = d;
	rng_left = n;
}

static inline int rng_done(void)
{
	return rng_left == 0;
}

static inline uint64_t rnd(void)
{
	uint64_t w = 0;
	for (int i = 0; i < 3 && rng_left; i++, rng_left--)
		w = w << 8 | *rng_in++;
	return rng_mix(w * 0x9e3779b97f4a7c15ull);
}
#else
static inline int rng_done(void)
{
	return 0;
}

static inline uint64_t rnd(void)
{
	return rng_mix(rng_state += 0x9e3779b97f4a7c15ull);
}
#endif

/* Uniform in [0, n); 0 for n == 0. */
static inline uint64_t rnd_below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* The seed (PW_SEED, or from the clock) and the operation count (the
 * environment variable @ops_env, or @def_ops), printed so that a failure
 * can be replayed. */
static inline uint64_t rng_seed_and_ops(const char *ops_env, uint64_t def_ops, uint64_t *ops)
{
	const char *env_seed = getenv("PW_SEED"), *env_ops = getenv(ops_env);
	uint64_t seed = env_seed ? strtoull(env_seed, NULL, 0)
				 : (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
	*ops = env_ops ? strtoull(env_ops, NULL, 0) : def_ops;
	printf("seed %llu (replay: PW_SEED=%llu), %llu operations\n", (unsigned long long)seed,
	       (unsigned long long)seed, (unsigned long long)*ops);
	fflush(stdout);
	return seed;
}

/* Fold @v into the running trace hash @h (FNV-1a style, 64-bit words):
 * the randomized tests compare two runs' callback traces with it. */
static inline uint64_t trace_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull;
}

#endif
