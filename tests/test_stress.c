/* SPDX-License-Identifier: MIT */
/*
 * Real-thread stress: threads serve the CPUs (running callbacks) while
 * other threads arm, re-arm, cancel and sync-delete the same timers, and
 * callbacks re-arm themselves, arm and cancel others (cross-CPU), and free
 * their own timers.  Run under TSan too.  Properties, never timings:
 *
 *  shared pool (anyone touches them): exact accounting, per timer,
 *    activations (an arm that found it inactive) == fires + removals
 *    (a delete that found it pending) once everything has drained: each arm
 *    fires exactly once unless cancelled, and nothing is lost;
 *  every callback runs on the CPU the timer is on (pw_this_cpu() ==
 *    pw_timer_cpu()), except that under PW_MIGRATION_PULL a global timer
 *    of an idle CPU runs on its migrator (pinned and deferrable ones
 *    never do); never two at once for one timer;
 *  owned timers (one arming thread + their own callback): never early, and
 *    after timer_delete_sync / timer_shutdown_sync returns the callback is
 *    not running and does not run again until re-armed;
 *  self-freeing timers: every one fires and frees itself.
 *
 * Each arming thread does at least PW_STRESS_OPS operations (default
 * 100000) and runs at least PW_STRESS_MS milliseconds (default 1500).
 * PW_STRESS_CPUS (3) and PW_STRESS_ARMERS (3) set the thread counts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "serve.h"

/* CPUs and arming threads: 3 and 3, or PW_STRESS_CPUS / PW_STRESS_ARMERS
 * (the soak: 8 + 8 threads on a 2-core machine) */
#define MAX_CPUS 16
#define MAX_ARMERS 16
static unsigned NCPUS = 3, NARMERS = 3;
#define NSHARED 64
#define NOWNED  8 /* per arming thread */

struct shared {
	struct pw_timer t;
	long activations, removals, fires; /* atomics */
	int in_cb;                         /* atomic */
};

struct owned {
	struct pw_timer t;
	pthread_mutex_t mu;
	/* Activations (an arm of an inactive timer starts one; its callback
	 * ends it) not yet seen by their callback under mu: 0, 1, or 2 when
	 * the older one's callback has started but not yet taken mu while the
	 * timer was armed again (a callback that started is not early however
	 * the timer was re-armed since).  min_old / min_new: the earliest
	 * expiry armed for each; never early means a callback runs at or
	 * after the one of its activation, the oldest. */
	int acts;
	uint64_t min_old, min_new;
	int quiesced;     /* set after a sync delete until the next arm */
	int in_cb;        /* atomic */
	int self_rearm;   /* atomic */
	long fires;
};

struct freer {
	struct pw_timer t;
};

static struct pw_runtime *rt;
static struct shared shared[NSHARED];
static int quiet;  /* atomic: callbacks stop arming */
static long freed; /* atomic */

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int after_eq(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b) >= 0;
}

static __thread uint64_t cb_rng = 88172645463325252ull;

static void count(long *c, long d)
{
	__atomic_fetch_add(c, d, __ATOMIC_RELAXED);
}

static long pulled_cbs; /* atomic: callbacks a migrator ran */

static void check_cpu(struct pw_timer *t)
{
	int self = pw_this_cpu(), cpu = pw_timer_cpu(t);
	CHECK(self >= 0 && self < (int)NCPUS);
	if (self == cpu)
		return;
	CHECK_EQ(pw_get_migration(rt), PW_MIGRATION_PULL);
	CHECK(!(__atomic_load_n(&t->pw_flags, __ATOMIC_RELAXED) &
		(PW_TIMER_PINNED | PW_TIMER_DEFERRABLE)));
	__atomic_fetch_add(&pulled_cbs, 1, __ATOMIC_RELAXED);
}

static void shared_arm(struct shared *s, uint64_t e)
{
	int r = pw_mod_timer(&s->t, e);
	CHECK(r == 0 || r == 1);
	if (r == 0)
		count(&s->activations, 1);
}

static void shared_fn(struct pw_timer *t)
{
	struct shared *s = pw_container_of(t, struct shared, t);
	CHECK_EQ(__atomic_exchange_n(&s->in_cb, 1, __ATOMIC_ACQ_REL), 0);
	check_cpu(t);
	count(&s->fires, 1);
	if (!__atomic_load_n(&quiet, __ATOMIC_ACQUIRE)) {
		uint64_t r = xs(&cb_rng);
		struct shared *o = &shared[(r >> 8) % NSHARED];
		switch (r % 4) {
		case 0:
			shared_arm(s, pw_jiffies(rt) + (r >> 20) % 20);
			break;
		case 1: /* moves o to this CPU unless its callback runs */
			shared_arm(o, pw_jiffies(rt) + (r >> 20) % 20);
			break;
		case 2:
			if (pw_timer_delete(&o->t) == 1)
				count(&o->removals, 1);
			break;
		default:
			break;
		}
	}
	__atomic_store_n(&s->in_cb, 0, __ATOMIC_RELEASE);
}

/* Record an arm of @o at @e that returned @r.  Context: o->mu held. */
static void owned_note_arm(struct owned *o, int r, uint64_t e)
{
	if (r == -ESHUTDOWN) /* a callback re-arming while shutdown_sync waits */
		return;
	CHECK(r == 0 || r == 1);
	if (r == 1) { /* was pending: the newest activation, armed again */
		CHECK(o->acts >= 1);
		if (after_eq(o->min_new, e))
			o->min_new = e;
		return;
	}
	/* a new activation; an older one still counted has fired and its
	 * callback has not reached mu yet (only sync deletes remove one) */
	CHECK(o->acts <= 1);
	if (o->acts == 1)
		o->min_old = o->min_new;
	o->acts++;
	o->min_new = e;
}

static void owned_fn(struct pw_timer *t)
{
	struct owned *o = pw_container_of(t, struct owned, t);
	__atomic_store_n(&o->in_cb, 1, __ATOMIC_RELEASE);
	check_cpu(t);
	pthread_mutex_lock(&o->mu);
	CHECK(!o->quiesced); /* no callback after a sync delete returned */
	CHECK(o->acts >= 1);
	uint64_t due = o->acts == 2 ? o->min_old : o->min_new;
	CHECK(after_eq(pw_jiffies(rt), due)); /* never early */
	o->acts--;
	o->fires++;
	if (__atomic_load_n(&o->self_rearm, __ATOMIC_ACQUIRE) &&
	    !__atomic_load_n(&quiet, __ATOMIC_ACQUIRE)) {
		uint64_t e = pw_jiffies(rt) + 1 + xs(&cb_rng) % 5;
		owned_note_arm(o, pw_mod_timer(t, e), e);
	}
	pthread_mutex_unlock(&o->mu);
	__atomic_store_n(&o->in_cb, 0, __ATOMIC_RELEASE);
}

static void freer_fn(struct pw_timer *t)
{
	check_cpu(t);
	free(pw_container_of(t, struct freer, t));
	count(&freed, 1);
}

static void owned_arm(struct owned *o, uint64_t e)
{
	pthread_mutex_lock(&o->mu);
	o->quiesced = 0;
	owned_note_arm(o, pw_mod_timer(&o->t, e), e);
	pthread_mutex_unlock(&o->mu);
}

static void owned_quiesce(struct owned *o, int shutdown)
{
	int r = shutdown ? pw_timer_shutdown_sync(&o->t) : pw_timer_delete_sync(&o->t);
	CHECK(r == 0 || r == 1);
	CHECK_EQ(__atomic_load_n(&o->in_cb, __ATOMIC_ACQUIRE), 0);
	CHECK_EQ(pw_timer_pending(&o->t), 0);
	pthread_mutex_lock(&o->mu);
	o->quiesced = 1;
	o->acts = 0; /* nothing pending, no callback running */
	pthread_mutex_unlock(&o->mu);
	if (shutdown) {
		CHECK_EQ(pw_mod_timer(&o->t, pw_jiffies(rt) + 1), -ESHUTDOWN);
		CHECK_EQ(pw_timer_setup(rt, &o->t, owned_fn, 0), 0);
	}
}

struct armer {
	pthread_t th;
	unsigned id;
	long ops;
	long ms;
	long freers;
	struct owned owned[NOWNED];
};

static void *armer_loop(void *arg)
{
	struct armer *a = arg;
	uint64_t rng = 0x9e3779b97f4a7c15ull * (a->id + 1);

	struct timespec t0, tn;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0;; i++) {
		if ((i & 63) == 0) {
			clock_gettime(CLOCK_MONOTONIC, &tn);
			long ms = (tn.tv_sec - t0.tv_sec) * 1000 + (tn.tv_nsec - t0.tv_nsec) / 1000000;
			if (i >= a->ops && ms >= a->ms)
				break;
			struct timespec nap = {0, 20000}; /* let the CPU threads run */
			nanosleep(&nap, NULL);
		}
		uint64_t r = xs(&rng);
		uint64_t j = pw_jiffies(rt);
		struct shared *s = &shared[(r >> 8) % NSHARED];
		struct owned *o = &a->owned[(r >> 16) % NOWNED];
		int ret;
		switch (r % 16) {
		case 0: case 1: case 2: case 3:
			shared_arm(s, j + (r >> 24) % ((r >> 40) & 1 ? 30 : 2));
			break;
		case 4:
			ret = pw_mod_timer_pending(&s->t, j + (r >> 24) % 30);
			CHECK(ret == 0 || ret == 1);
			break;
		case 5:
			ret = pw_timer_reduce(&s->t, j + (r >> 24) % 30);
			CHECK(ret == 0 || ret == 1);
			if (ret == 0)
				count(&s->activations, 1);
			break;
		case 6: {
			unsigned cpu = (unsigned)((r >> 24) % NCPUS);
			ret = pw_add_timer_on(&s->t, cpu);
			CHECK(ret == 0 || ret == -EBUSY || ret == -EAGAIN);
			if (ret == 0)
				count(&s->activations, 1);
			break;
		}
		case 7:
			if (pw_timer_delete(&s->t) == 1)
				count(&s->removals, 1);
			break;
		case 8:
			ret = pw_timer_delete_sync(&s->t);
			CHECK(ret == 0 || ret == 1);
			if (ret == 1)
				count(&s->removals, 1);
			break;
		case 9: case 10: case 11:
			__atomic_store_n(&o->self_rearm, (int)((r >> 30) & 1), __ATOMIC_RELEASE);
			owned_arm(o, j + (r >> 24) % 10);
			break;
		case 12:
			owned_quiesce(o, (r >> 24) % 4 == 0);
			break;
		case 13: {
			struct freer *f = malloc(sizeof(*f));
			CHECK(f);
			CHECK_EQ(pw_timer_setup(rt, &f->t, freer_fn, (r >> 30) & 1 ? PW_TIMER_DEFERRABLE : 0), 0);
			f->t.expires = j + (r >> 24) % 10;
			/* -EAGAIN: malloc reused the memory of a timer whose
			 * callback (freeing it) has not returned yet; the
			 * base still names that address as running. */
			while ((ret = pw_add_timer_on(&f->t, (unsigned)((r >> 32) % NCPUS))) == -EAGAIN)
				sched_yield();
			CHECK_EQ(ret, 0);
			a->freers++;
			break;
		}
		default:
			CHECK(pw_timer_pending(&s->t) >= 0);
			break;
		}
	}
	return NULL;
}

static struct armer armers[MAX_ARMERS];
static long total_freers;

/* Anything left to run at the end (servers_drain()). */
static int still_pending(void)
{
	int busy = __atomic_load_n(&freed, __ATOMIC_ACQUIRE) != total_freers;
	for (unsigned i = 0; i < NSHARED; i++)
		busy |= pw_timer_pending(&shared[i].t) ||
			__atomic_load_n(&shared[i].in_cb, __ATOMIC_ACQUIRE);
	for (unsigned a = 0; a < NARMERS; a++)
		for (unsigned k = 0; k < NOWNED; k++)
			busy |= pw_timer_pending(&armers[a].owned[k].t);
	return busy;
}

int main(int argc, char **argv)
{
	/* who serves the CPUs: serve.h (loop threads, or workers under off, push, pull) */
	const char *env = getenv("PW_STRESS_OPS");
	long ops = env ? atol(env) : 100000;
	const char *env_ms = getenv("PW_STRESS_MS");
	long ms = env_ms ? atol(env_ms) : 1500;
	const char *env_cpus = getenv("PW_STRESS_CPUS"), *env_armers = getenv("PW_STRESS_ARMERS");
	if (env_cpus)
		NCPUS = (unsigned)atoi(env_cpus);
	if (env_armers)
		NARMERS = (unsigned)atoi(env_armers);
	CHECK(NCPUS >= 1 && NCPUS <= MAX_CPUS && NARMERS >= 1 && NARMERS <= MAX_ARMERS);
	struct servers srv;
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = NCPUS;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	for (unsigned i = 0; i < NSHARED; i++)
		CHECK_EQ(pw_timer_setup(rt, &shared[i].t, shared_fn, i % 5 == 0 ? PW_TIMER_DEFERRABLE : 0), 0);
	for (unsigned a = 0; a < NARMERS; a++) {
		armers[a].id = a;
		armers[a].ops = ops;
		armers[a].ms = ms;
		for (unsigned k = 0; k < NOWNED; k++) {
			pthread_mutex_init(&armers[a].owned[k].mu, NULL);
			CHECK_EQ(pw_timer_setup(rt, &armers[a].owned[k].t, owned_fn, 0), 0);
		}
	}
	servers_start(&srv, rt, NCPUS, argc, argv);
	for (unsigned a = 0; a < NARMERS; a++)
		CHECK_EQ(pthread_create(&armers[a].th, NULL, armer_loop, &armers[a]), 0);
	for (unsigned a = 0; a < NARMERS; a++)
		CHECK_EQ(pthread_join(armers[a].th, NULL), 0);

	/* Drain: callbacks stop arming; everything pending must fire. */
	__atomic_store_n(&quiet, 1, __ATOMIC_RELEASE);
	for (unsigned a = 0; a < NARMERS; a++)
		for (unsigned k = 0; k < NOWNED; k++)
			__atomic_store_n(&armers[a].owned[k].self_rearm, 0, __ATOMIC_RELEASE);
	for (unsigned a = 0; a < NARMERS; a++)
		total_freers += armers[a].freers;
	servers_drain(&srv, still_pending);
	servers_stop(&srv);

	long acts = 0, fires = 0, rems = 0;
	for (unsigned i = 0; i < NSHARED; i++) {
		struct shared *s = &shared[i];
		if (s->activations != s->fires + s->removals)
			fprintf(stderr, "timer %u: %ld activations, %ld fires, %ld removals\n", i,
				s->activations, s->fires, s->removals);
		CHECK_EQ(s->activations, s->fires + s->removals);
		acts += s->activations;
		fires += s->fires;
		rems += s->removals;
	}
	long ofires = 0;
	for (unsigned a = 0; a < NARMERS; a++)
		for (unsigned k = 0; k < NOWNED; k++)
			ofires += armers[a].owned[k].fires;
	CHECK_EQ(freed, total_freers);
	CHECK(fires > 0 && ofires > 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
	for (unsigned a = 0; a < NARMERS; a++)
		for (unsigned k = 0; k < NOWNED; k++)
			pthread_mutex_destroy(&armers[a].owned[k].mu);
	printf("ok - shared: %ld activations = %ld fires + %ld removals; owned fires %ld; "
	       "self-freed %ld; run by a migrator %ld\n", acts, fires, rems, ofires, freed,
	       pulled_cbs);
	return 0;
}
