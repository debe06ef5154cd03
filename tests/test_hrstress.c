/* SPDX-License-Identifier: MIT */
/*
 * Real-thread stress of hrtimers (run under TSan too): threads serve the
 * CPUs while owner threads start and cancel their timers, cancels race
 * running callbacks, callbacks restart themselves, start other timers from
 * their CPU (cross-CPU starts, pinned or not) and free themselves.
 * Properties, never timings:
 *  - owned timers (one owner thread, plus their own callback's restarts):
 *    activations (owner starts + RESTART returns) == callbacks + cancels
 *    that removed it, exactly; never before the start's soft expiry; after
 *    pw_hrtimer_cancel() returns, the callback is not running, the timer is
 *    not queued, and it does not run again until started;
 *  - every callback runs on the CPU the timer is on, never twice at once;
 *  - shared timers: once nobody starts them any more and their deadlines
 *    passed, none is left queued (nothing lost);
 *  - self-freeing timers: each runs once and frees itself.
 * PW_STRESS_MS sets the run time (default 1500 ms).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

#define NCPUS   3
#define NOWNERS 3
#define NOWNED  6
#define NSHARED 48

struct owned {
	struct pw_hrtimer t;
	pthread_mutex_t mu;
	uint64_t soft;   /* soft expiry of the current activation, monotonic */
	int quiesced;
	int in_cb;       /* atomic */
	int restarts;    /* atomic: how many more RESTARTs the callback may do */
	long activations, fires, removals;
};

struct shared {
	struct pw_hrtimer t;
	int in_cb; /* atomic */
	long fires; /* atomic */
};

static struct pw_runtime *rt;
static struct shared shared[NSHARED];
static int quiet;
static long freed, made_freers;

static __thread uint64_t rng = 88172645463325252ull;
static uint64_t xs(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static enum pw_hrtimer_restart shared_fn(struct pw_hrtimer *t)
{
	struct shared *s = pw_container_of(t, struct shared, t);
	CHECK_EQ(__atomic_exchange_n(&s->in_cb, 1, __ATOMIC_ACQ_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(t), pw_this_cpu());
	__atomic_fetch_add(&s->fires, 1, __ATOMIC_RELAXED);
	enum pw_hrtimer_restart r = PW_HRTIMER_NORESTART;
	if (!__atomic_load_n(&quiet, __ATOMIC_ACQUIRE)) {
		uint64_t x = xs();
		struct shared *o = &shared[(x >> 8) % NSHARED];
		unsigned mode = PW_HRTIMER_MODE_REL | ((x >> 20) & 1 ? PW_HRTIMER_MODE_PINNED : 0);
		switch (x % 4) {
		case 0: /* cross-CPU start: o moves here unless its callback runs */
			CHECK_EQ(pw_hrtimer_start(&o->t, (x >> 24) % 300000, mode), 0);
			break;
		case 1:
			CHECK(pw_hrtimer_try_to_cancel(&o->t) >= -1);
			break;
		case 2:
			pw_hrtimer_forward_now(t, 1 + (x >> 30) % 200000);
			r = PW_HRTIMER_RESTART;
			break;
		default:
			break;
		}
	}
	__atomic_store_n(&s->in_cb, 0, __ATOMIC_RELEASE);
	return r;
}

static enum pw_hrtimer_restart owned_fn(struct pw_hrtimer *t)
{
	struct owned *o = pw_container_of(t, struct owned, t);
	enum pw_hrtimer_restart r = PW_HRTIMER_NORESTART;
	CHECK_EQ(__atomic_exchange_n(&o->in_cb, 1, __ATOMIC_ACQ_REL), 0);
	CHECK_EQ(pw_hrtimer_cpu(t), pw_this_cpu());
	pthread_mutex_lock(&o->mu);
	CHECK(!o->quiesced);
	CHECK(pw_clock_now_ns(rt, CLOCK_MONOTONIC) >= o->soft); /* never early */
	o->fires++;
	if (__atomic_load_n(&o->restarts, __ATOMIC_ACQUIRE) > 0) {
		__atomic_fetch_sub(&o->restarts, 1, __ATOMIC_ACQ_REL);
		pw_hrtimer_forward_now(t, 1 + xs() % 100000);
		o->soft = pw_hrtimer_get_softexpires(t);
		o->activations++;
		r = PW_HRTIMER_RESTART;
	}
	if (xs() % 8 == 0) {
		struct timespec nap = {0, 50000}; /* a slow callback: cancels wait */
		nanosleep(&nap, NULL);
	}
	pthread_mutex_unlock(&o->mu);
	__atomic_store_n(&o->in_cb, 0, __ATOMIC_RELEASE);
	return r;
}

static enum pw_hrtimer_restart freer_fn(struct pw_hrtimer *t)
{
	CHECK_EQ(pw_hrtimer_cpu(t), pw_this_cpu());
	free(t);
	__atomic_fetch_add(&freed, 1, __ATOMIC_ACQ_REL);
	return PW_HRTIMER_NORESTART;
}

/* The owner makes @o inactive; returns with the callback not running. */
static void owned_cancel(struct owned *o)
{
	int r = pw_hrtimer_cancel(&o->t);
	CHECK(r == 0 || r == 1);
	CHECK_EQ(__atomic_load_n(&o->in_cb, __ATOMIC_ACQUIRE), 0);
	CHECK_EQ(pw_hrtimer_is_queued(&o->t), 0);
	CHECK_EQ(pw_hrtimer_active(&o->t), 0);
	pthread_mutex_lock(&o->mu);
	o->removals += r;
	o->quiesced = 1;
	pthread_mutex_unlock(&o->mu);
}

struct owner {
	pthread_t th;
	long ms;
	struct owned owned[NOWNED];
};

static void *owner_loop(void *arg)
{
	struct owner *w = arg;
	struct timespec t0, tn;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0;; i++) {
		if ((i & 31) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &tn);
			if ((tn.tv_sec - t0.tv_sec) * 1000 + (tn.tv_nsec - t0.tv_nsec) / 1000000 >= w->ms)
				break;
			struct timespec nap = {0, 20000};
			nanosleep(&nap, NULL);
		}
		uint64_t x = xs();
		struct owned *o = &w->owned[(x >> 8) % NOWNED];
		struct shared *s = &shared[(x >> 16) % NSHARED];
		switch (x % 8) {
		case 0: case 1: case 2: { /* (re)start an owned timer: cancel first */
			owned_cancel(o);
			uint64_t delay = (x >> 24) % 200000, range = (x >> 40) % 3 ? 0 : 50000;
			pthread_mutex_lock(&o->mu);
			o->quiesced = 0;
			o->soft = pw_clock_now_ns(rt, CLOCK_MONOTONIC) + delay; /* a lower bound */
			o->activations++;
			__atomic_store_n(&o->restarts, (int)((x >> 50) % 3), __ATOMIC_RELEASE);
			CHECK_EQ(pw_hrtimer_start_range_ns(&o->t, delay, range, PW_HRTIMER_MODE_REL), 0);
			pthread_mutex_unlock(&o->mu);
			break;
		}
		case 3:
			owned_cancel(o);
			break;
		case 4:
			CHECK_EQ(pw_hrtimer_start(&s->t, (x >> 24) % 500000, PW_HRTIMER_MODE_REL), 0);
			break;
		case 5:
			CHECK(pw_hrtimer_cancel(&s->t) >= 0);
			break;
		case 6: {
			struct pw_hrtimer *f = malloc(sizeof(*f));
			CHECK(f);
			CHECK_EQ(pw_hrtimer_setup(rt, f, freer_fn, CLOCK_MONOTONIC, 0), 0);
			CHECK_EQ(pw_hrtimer_start(f, (x >> 24) % 100000, PW_HRTIMER_MODE_REL), 0);
			__atomic_fetch_add(&made_freers, 1, __ATOMIC_RELAXED);
			break;
		}
		default:
			CHECK(pw_hrtimer_try_to_cancel(&s->t) >= -1);
			break;
		}
	}
	return NULL;
}

static struct owner owners[NOWNERS];

/* Anything left to run at the end (servers_drain()). */
static int still_pending(void)
{
	int busy = __atomic_load_n(&freed, __ATOMIC_ACQUIRE) != made_freers;
	for (unsigned i = 0; i < NSHARED; i++)
		busy |= pw_hrtimer_active(&shared[i].t);
	for (unsigned w = 0; w < NOWNERS; w++)
		for (unsigned k = 0; k < NOWNED; k++)
			busy |= pw_hrtimer_active(&owners[w].owned[k].t);
	return busy;
}

int main(int argc, char **argv)
{
	/* who serves the CPUs: serve.h (loop threads, or workers under off, push, pull) */
	const char *env_ms = getenv("PW_STRESS_MS");
	long ms = env_ms ? atol(env_ms) : 1500;
	struct servers srv;
	struct pw_config cfg;

	pw_config_init(&cfg);
	cfg.ncpus = NCPUS;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	for (unsigned i = 0; i < NSHARED; i++)
		CHECK_EQ(pw_hrtimer_setup(rt, &shared[i].t, shared_fn,
					  i % 3 == 0 ? CLOCK_BOOTTIME : CLOCK_MONOTONIC, 0), 0);
	for (unsigned w = 0; w < NOWNERS; w++) {
		owners[w].ms = ms;
		for (unsigned k = 0; k < NOWNED; k++) {
			pthread_mutex_init(&owners[w].owned[k].mu, NULL);
			CHECK_EQ(pw_hrtimer_setup(rt, &owners[w].owned[k].t, owned_fn, CLOCK_MONOTONIC, 0), 0);
		}
	}
	servers_start(&srv, rt, NCPUS, argc, argv);
	for (unsigned w = 0; w < NOWNERS; w++)
		CHECK_EQ(pthread_create(&owners[w].th, NULL, owner_loop, &owners[w]), 0);
	for (unsigned w = 0; w < NOWNERS; w++)
		CHECK_EQ(pthread_join(owners[w].th, NULL), 0);

	/* drain: nobody starts shared timers any more; all must run */
	__atomic_store_n(&quiet, 1, __ATOMIC_RELEASE);
	servers_drain(&srv, still_pending);
	long fires = 0, acts = 0;
	for (unsigned w = 0; w < NOWNERS; w++)
		for (unsigned k = 0; k < NOWNED; k++) {
			struct owned *o = &owners[w].owned[k];
			owned_cancel(o);
			if (o->activations != o->fires + o->removals)
				fprintf(stderr, "owned %u/%u: %ld activations, %ld fires, %ld removals\n",
					w, k, o->activations, o->fires, o->removals);
			CHECK_EQ(o->activations, o->fires + o->removals);
			fires += o->fires;
			acts += o->activations;
			pthread_mutex_destroy(&o->mu);
		}
	long sfires = 0;
	for (unsigned i = 0; i < NSHARED; i++)
		sfires += shared[i].fires;
	servers_stop(&srv);
	CHECK_EQ(freed, made_freers);
	CHECK(fires > 0 && sfires > 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
	printf("ok - owned: %ld activations, %ld callbacks; shared callbacks %ld; self-freed %ld\n",
	       acts, fires, sfires, freed);
	return 0;
}
