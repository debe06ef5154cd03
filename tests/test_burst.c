/* SPDX-License-Identifier: MIT */
/*
 * pw_mod_timers() against the same re-arms made one pw_mod_timer() call at
 * a time.
 *
 * The twin runs (default): one seeded random workload runs twice on
 * identical runtimes on the simulated clock, once re-arming through
 * pw_mod_timers() and once through the loop of pw_mod_timer() calls the
 * burst stands for; everything observable is folded into a hash per step,
 * and the two runs must agree step by step: every return value (the
 * burst's count and each entry's), every callback (which timer, at which
 * jiffy, on which CPU), each timer's state (pending, CPU, expiry), every
 * CPU's statistics (arms, fast paths 1 and 2, remote arms, pushes, kicks,
 * timers run) and pw_runtime_check().  The workload: bursts of 0-69
 * entries over a small pool (so a burst names a timer twice, and many
 * share buckets), with NULL entries, expiries unchanged (fast path 1),
 * near (fast path 2), in the past, far and huge; bursts from inside
 * callbacks, naming the running timer itself; deletes, shutdowns (-ESHUTDOWN
 * entries) and set-ups again, add_timer_on(), the thread switching CPU or
 * acting as none, the three migration policies with idle marks, and clock
 * steps.  Coverage counters check that each of those happened.  Then the
 * edge cases one by one.
 *
 * "threads" (ctest test_burst_threads, label concurrent: TSan too): two
 * threads serve a CPU each and re-arm a shared pool in bursts while the
 * other one deletes and re-arms the same timers (moving them between the
 * CPUs) and callbacks re-arm in bursts; every arm that found its timer
 * inactive fires or is deleted exactly once (accounted per timer), and the
 * runtime checks clean.
 *
 * PW_SEED=n replays a seed; PW_BURST_OPS=n sets the steps per configuration
 * (default 100000).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "check.h"
#include "rng.h"
#include "sim.h"

#define NT 48       /* timers in the pool: bursts name the same ones often */
#define MAXBURST 70 /* entries of a burst: 0..69, past the prefetch distances */

enum mode { SINGLE, BURST };

struct tmr {
	struct pw_timer t;
	unsigned id;
	bool shut; /* shut down (arms refused) until set up again */
};

static struct pw_runtime *rt;
static enum mode mode;
static struct tmr pool[NT];
static unsigned ncpus;
static uint64_t step_hash; /* what this step showed, folded */
static unsigned depth;     /* callback nesting: bursts from callbacks */

/* What the workload reached (summed over both runs' BURST halves). */
static struct {
	unsigned long long bursts, entries, nulls, dups, shut_entries, running_entries, fast1,
		inactive, past, in_callback, no_cpu, fires;
} cov;

static void note(uint64_t v)
{
	step_hash = trace_mix(step_hash, v);
}

/* Distance in jiffies, log-uniform-ish over 0 .. 2^26. */
static uint64_t rnd_delta(void)
{
	unsigned bits = (unsigned)rnd_below(27);
	return rnd_below(1ull << bits) + (bits ? 1ull << (bits - 1) : 0);
}

static uint64_t pick_expiry(struct tmr *m, bool *past)
{
	uint64_t j = pw_jiffies(rt);
	*past = false;
	switch (rnd_below(8)) {
	case 0: /* unchanged: fast path 1 when pending */
		return m->t.expires;
	case 1: /* near: often the same bucket (fast path 2) */
		return m->t.expires + rnd_below(5) - 2;
	case 2: /* in the past, or now */
		*past = true;
		return j - rnd_below(100);
	case 3: /* soon: fires within the next steps */
		return j + rnd_below(40);
	default:
		return j + rnd_delta();
	}
}

/* One burst over the pool, through pw_mod_timers() (BURST) or the calls it
 * stands for (SINGLE), everything it returned folded into the step hash.
 * @running: the timer whose callback calls this, or NULL; @max: entries
 * at most, less one. */
static void burst(struct tmr *running, unsigned max)
{
	struct pw_timer *ts[MAXBURST];
	uint64_t es[MAXBURST];
	int ret[MAXBURST];
	unsigned n = (unsigned)rnd_below(max);
	bool want_ret = rnd_below(4) != 0;

	for (unsigned i = 0; i < n; i++) {
		unsigned r = (unsigned)rnd_below(40);
		struct tmr *m;
		if (r == 0) { /* a NULL entry */
			ts[i] = NULL;
			es[i] = pw_jiffies(rt) + 1;
			continue;
		}
		if (r <= 6 && i) { /* a timer named earlier in the burst */
			struct pw_timer *prev = ts[rnd_below(i)];
			m = prev ? pw_container_of(prev, struct tmr, t) : &pool[0];
		} else if (r <= 9 && running) { /* the timer whose callback runs */
			m = running;
		} else if (r <= 16 && running) { /* one due in this run too, maybe on a
						  * list being expired (where fast path 2
						  * must not keep it) */
			unsigned k0 = (unsigned)rnd_below(NT), k = 0;
			while (k < NT && !(pw_timer_pending(&pool[(k0 + k) % NT].t) &&
					   (int64_t)(pool[(k0 + k) % NT].t.expires - pw_jiffies(rt)) <= 0))
				k++;
			m = &pool[(k0 + k) % NT];
		} else {
			m = &pool[rnd_below(NT)];
		}
		bool past;
		ts[i] = &m->t;
		es[i] = pick_expiry(m, &past);
		if (mode == BURST) {
			for (unsigned k = 0; k < i; k++)
				if (ts[k] == ts[i]) {
					cov.dups++;
					break;
				}
			cov.shut_entries += m->shut;
			cov.running_entries += m == running;
			cov.past += past;
			cov.fast1 += pw_timer_pending(&m->t) && es[i] == m->t.expires;
		}
	}
	int count;
	if (mode == BURST) {
		count = pw_mod_timers(ts, es, n, want_ret ? ret : NULL);
		cov.bursts++;
		cov.entries += n;
		cov.in_callback += running != NULL;
		cov.no_cpu += pw_this_cpu() < 0;
	} else {
		count = 0;
		for (unsigned i = 0; i < n; i++) {
			ret[i] = pw_mod_timer(ts[i], es[i]);
			count += ret[i] == 1;
		}
	}
	note(0xb0 + n);
	note((uint64_t)count);
	if (want_ret || mode == SINGLE) {
		unsigned ones = 0;
		for (unsigned i = 0; i < n; i++) {
			int want = !ts[i] ? -EINVAL
				   : pw_container_of(ts[i], struct tmr, t)->shut ? -ESHUTDOWN
										 : ret[i];
			CHECK_EQ(ret[i], want); /* NULL: -EINVAL; shut down: -ESHUTDOWN */
			CHECK(ret[i] == 0 || ret[i] == 1 || ret[i] == -EINVAL || ret[i] == -ESHUTDOWN);
			ones += ret[i] == 1;
			if (want_ret)
				note((uint64_t)(int64_t)ret[i]);
			if (mode == BURST) {
				cov.nulls += ret[i] == -EINVAL;
				cov.inactive += ret[i] == 0;
			}
		}
		CHECK_EQ(count, ones);
	}
	/* a duplicate's last arm wins: expiry of each entry's timer as set */
	for (unsigned i = 0; i < n; i++)
		if (ts[i] && !pw_container_of(ts[i], struct tmr, t)->shut) {
			unsigned last = i;
			for (unsigned k = i + 1; k < n; k++)
				if (ts[k] == ts[i])
					last = k;
			CHECK_EQ(ts[i]->expires, es[last]);
		}
}

static void timer_fn(struct pw_timer *t)
{
	struct tmr *m = pw_container_of(t, struct tmr, t);
	note(0xf1);
	note(m->id);
	note(pw_jiffies(rt));
	note((uint64_t)(int64_t)pw_this_cpu());
	if (mode == BURST)
		cov.fires++;
	if (depth)
		return;
	depth++;
	switch (rnd_below(6)) {
	case 0: /* a burst naming itself, often */
		burst(m, 10);
		break;
	case 2: /* delete another */
		note((uint64_t)(int64_t)pw_timer_delete(&pool[rnd_below(NT)].t));
		break;
	default:
		break;
	}
	depth--;
}

/* Each timer's state and each CPU's statistics, folded. */
static void note_state(void)
{
	for (unsigned i = 0; i < NT; i++) {
		struct pw_timer *t = &pool[i].t;
		note((uint64_t)pw_timer_pending(t) << 32 | (uint32_t)pw_timer_cpu(t));
		if (pw_timer_pending(t))
			note(t->expires);
	}
	for (unsigned c = 0; c < ncpus; c++) {
		struct pw_cpu_stats s;
		struct pw_kick_stats k;
		CHECK_EQ(pw_stats_read(rt, c, &s), 0);
		CHECK_EQ(pw_kick_stats_read(rt, c, &k), 0);
		const uint64_t v[] = {s.armed, s.fast_path, s.same_bucket, s.remote_arms,
				      s.pushed, s.pulled, s.kicks_sent, s.kicks_received,
				      s.timers_expired, k.remote_enqueue, k.idle_earlier, k.tmigr};
		for (unsigned i = 0; i < sizeof(v) / sizeof(v[0]); i++)
			note(v[i]);
	}
}

static void set_up(struct tmr *m, unsigned id)
{
	unsigned r = (unsigned)rnd_below(8);
	unsigned flags = r == 0 ? PW_TIMER_PINNED : r == 1 ? PW_TIMER_DEFERRABLE : 0;
	m->id = id;
	m->shut = false;
	CHECK_EQ(pw_timer_setup(rt, &m->t, timer_fn, flags), 0);
}

/* One run of @steps steps from @seed in @m; the hash of each step into
 * @out.  Configuration @cfg: 0 = 3 CPUs at HZ 1000, 1 = 2 CPUs at HZ 100
 * (a wheel of 8 levels). */
static void run(enum mode m, uint64_t seed, unsigned cfg, uint64_t steps, uint64_t *out)
{
	mode = m;
	rng_state = seed;
	ncpus = cfg ? 2 : 3;
	rt = sim_create(ncpus, cfg ? 100 : 1000, 7000000000ull, 0);
	int me = 0;
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	memset(pool, 0, sizeof(pool));
	for (unsigned i = 0; i < NT; i++)
		set_up(&pool[i], i);

	for (uint64_t s = 0; s < steps; s++) {
		step_hash = 0xcbf29ce484222325ull;
		unsigned r = (unsigned)rnd_below(100);
		struct tmr *x = &pool[rnd_below(NT)];
		if (r < 55) {
			burst(NULL, MAXBURST);
		} else if (r < 62) { /* act as another CPU, or as none */
			pw_cpu_exit(rt);
			me = (int)rnd_below(ncpus + 1) - 1;
			if (me >= 0)
				CHECK_EQ(pw_cpu_enter(rt, (unsigned)me), 0);
		} else if (r < 66) {
			note((uint64_t)(int64_t)pw_timer_delete(&x->t));
		} else if (r < 68) {
			note((uint64_t)(int64_t)pw_timer_delete_sync(&x->t));
		} else if (r < 70) {
			note((uint64_t)(int64_t)pw_timer_shutdown(&x->t));
			x->shut = true;
		} else if (r < 73) { /* set up again whatever was shut down */
			for (unsigned i = 0; i < NT; i++)
				if (pool[i].shut && !pw_timer_pending(&pool[i].t))
					set_up(&pool[i], i);
		} else if (r < 76) {
			unsigned cpu = (unsigned)rnd_below(ncpus);
			if (!pw_timer_pending(&x->t))
				x->t.expires = pw_jiffies(rt) + rnd_delta();
			note((uint64_t)(int64_t)pw_add_timer_on(&x->t, cpu));
		} else if (r < 79) {
			static const enum pw_migration pol[] = {PW_MIGRATION_OFF, PW_MIGRATION_PUSH,
								PW_MIGRATION_PULL};
			CHECK_EQ(pw_set_migration(rt, pol[rnd_below(3)]), 0);
			for (unsigned c = 0; c < ncpus; c++)
				CHECK_EQ(pw_cpu_set_idle(rt, c, rnd_below(3) == 0), 0);
		} else { /* the clock moves: a jiffy or two, often; far, rarely */
			uint64_t tick = 1000000000ull / (cfg ? 100 : 1000);
			uint64_t ns = rnd_below(16) ? rnd_below(3 * tick)
				      : rnd_below(8) ? rnd_below(5000 * tick)
						     : rnd_below(1ull << 40);
			int was = pw_this_cpu();
			pw_cpu_exit(rt); /* pw_sim_advance() acts as each CPU in turn */
			CHECK_EQ(pw_sim_advance(rt, ns), 0);
			if (was >= 0)
				CHECK_EQ(pw_cpu_enter(rt, (unsigned)was), 0);
		}
		note_state();
		if (s % 256 == 0)
			CHECK_EQ(pw_runtime_check(rt), 0);
		out[s] = step_hash;
	}
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_cpu_exit(rt);
	pw_runtime_destroy(rt);
	rt = NULL;
}

static void test_twins(void)
{
	uint64_t steps;
	uint64_t seed = rng_seed_and_ops("PW_BURST_OPS", 100000, &steps);
	uint64_t *a = calloc(steps, sizeof(*a)), *b = calloc(steps, sizeof(*b));
	CHECK(a && b);
	for (unsigned cfg = 0; cfg < 2; cfg++) {
		uint64_t s0 = rng_mix(seed + cfg);
		run(SINGLE, s0, cfg, steps, a);
		run(BURST, s0, cfg, steps, b);
		for (uint64_t s = 0; s < steps; s++)
			if (a[s] != b[s]) {
				fprintf(stderr,
					"configuration %u: step %llu differs between pw_mod_timers() and "
					"pw_mod_timer() calls (replay: PW_SEED=%llu)\n",
					cfg, (unsigned long long)s, (unsigned long long)seed);
				abort();
			}
	}
	free(a);
	free(b);
	printf("bursts %llu, entries %llu: NULL %llu, named twice %llu, shut down %llu, "
	       "callback running %llu, fast path 1 %llu, inactive %llu, in the past %llu; "
	       "bursts from callbacks %llu, by no CPU %llu; callbacks %llu\n",
	       cov.bursts, cov.entries, cov.nulls, cov.dups, cov.shut_entries,
	       cov.running_entries, cov.fast1, cov.inactive, cov.past, cov.in_callback,
	       cov.no_cpu, cov.fires);
	if (steps >= 5000) { /* the workload reached what it is for */
		CHECK(cov.nulls && cov.dups && cov.shut_entries && cov.running_entries);
		CHECK(cov.fast1 && cov.inactive && cov.past && cov.in_callback && cov.no_cpu);
	}
}

/* ---- the edge cases, one by one ------------------------------------------ */

static int fired;
static void count_fn(struct pw_timer *t)
{
	(void)t;
	fired++;
}

static void test_edges(void)
{
	rt = sim_create(2, 1000, 5000000000ull, 0);
	CHECK_EQ(pw_cpu_enter(rt, 0), 0);
	struct pw_timer a, b, c;
	CHECK_EQ(pw_timer_setup(rt, &a, count_fn, 0), 0);
	CHECK_EQ(pw_timer_setup(rt, &b, count_fn, 0), 0);
	CHECK_EQ(pw_timer_setup(rt, &c, count_fn, 0), 0);
	uint64_t j = pw_jiffies(rt);
	struct pw_timer *ts[4] = {&a, &b, &a, NULL};
	uint64_t es[4] = {j + 10, j + 200, j + 3000, j + 1};
	int ret[4];

	/* the call's own arguments */
	CHECK_EQ(pw_mod_timers(NULL, es, 1, NULL), -EINVAL);
	CHECK_EQ(pw_mod_timers(ts, NULL, 1, ret), -EINVAL);
	CHECK_EQ(pw_mod_timers(ts, es, (unsigned)INT_MAX + 1u, ret), -EINVAL); /* nothing read */
	CHECK_EQ(pw_mod_timers(NULL, NULL, 0, NULL), 0);
	CHECK(!pw_timer_pending(&a) && !pw_timer_pending(&b));

	/* a twice (the second sees the first), NULL -> -EINVAL, the rest go on */
	CHECK_EQ(pw_mod_timers(ts, es, 4, ret), 1);
	CHECK_EQ(ret[0], 0);
	CHECK_EQ(ret[1], 0);
	CHECK_EQ(ret[2], 1);
	CHECK_EQ(ret[3], -EINVAL);
	CHECK_EQ(a.expires, j + 3000);
	CHECK_EQ(b.expires, j + 200);

	/* all pending: the count is n; fast path 1 and 2 counted as one call's */
	struct pw_cpu_stats s0, s1;
	CHECK_EQ(pw_stats_read(rt, 0, &s0), 0);
	struct pw_timer *ts2[2] = {&a, &b};
	uint64_t es2[2] = {j + 3000, j + 201}; /* a: unchanged; b: its bucket (8 jiffies) */
	CHECK_EQ(pw_mod_timers(ts2, es2, 2, NULL), 2);
	CHECK_EQ(pw_stats_read(rt, 0, &s1), 0);
	CHECK_EQ(s1.fast_path - s0.fast_path, 1);
	CHECK_EQ(s1.armed - s0.armed, 2); /* every arm, fast path 1 included */
	CHECK_EQ(s1.same_bucket - s0.same_bucket, 1);

	/* shut down: -ESHUTDOWN for its entry; a thread that is no CPU */
	CHECK_EQ(pw_timer_shutdown(&b), 1);
	struct pw_timer *ts3[3] = {&b, &c, &b};
	uint64_t es3[3] = {j + 5, j + 5, j + 6};
	pw_cpu_exit(rt);
	CHECK_EQ(pw_mod_timers(ts3, es3, 3, ret), 0);
	CHECK_EQ(ret[0], -ESHUTDOWN);
	CHECK_EQ(ret[1], 0);
	CHECK_EQ(ret[2], -ESHUTDOWN);
	CHECK_EQ(pw_timer_cpu(&c), 0); /* no CPU: it stays where it was */
	CHECK_EQ(pw_cpu_enter(rt, 1), 0);
	/* from CPU 1: a and c move here (Linux 6.9: enqueue locally) */
	struct pw_timer *ts4[2] = {&a, &c};
	uint64_t es4[2] = {j + 7, j + 8};
	CHECK_EQ(pw_mod_timers(ts4, es4, 2, ret), 2);
	CHECK_EQ(pw_timer_cpu(&a), 1);
	CHECK_EQ(pw_timer_cpu(&c), 1);
	/* no lock was left held: the check takes every base lock */
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_cpu_exit(rt);
	CHECK_EQ(pw_sim_advance(rt, 10000000ull), 0);
	CHECK_EQ(fired, 2);
	pw_runtime_destroy(rt);
	rt = NULL;
}

/* ---- real threads ---------------------------------------------------------- */

#define TT 64
static struct {
	struct pw_timer t;
	uint64_t activations, removals, fires; /* atomics */
} tpool[TT];
static uint32_t stop_flag;
static uint64_t thread_seed;

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static void add_atomic(uint64_t *p)
{
	__atomic_fetch_add(p, 1, __ATOMIC_RELAXED);
}

/* Re-arm @n random timers of the pool in one burst, soon; account the arms
 * that found their timer inactive. */
static void thread_burst(uint64_t *s, unsigned n)
{
	struct pw_timer *ts[40];
	uint64_t es[40];
	unsigned id[40];
	int ret[40];
	uint64_t j = pw_jiffies(rt);
	for (unsigned i = 0; i < n; i++) {
		id[i] = (unsigned)(xs(s) % TT);
		ts[i] = &tpool[id[i]].t;
		es[i] = j + xs(s) % 6;
	}
	int count = pw_mod_timers(ts, es, n, ret);
	int ones = 0;
	for (unsigned i = 0; i < n; i++) {
		CHECK(ret[i] == 0 || ret[i] == 1);
		ones += ret[i];
		if (ret[i] == 0)
			add_atomic(&tpool[id[i]].activations);
	}
	CHECK_EQ(count, ones);
}

static void thread_fn_cb(struct pw_timer *t)
{
	unsigned i = (unsigned)(pw_container_of(t, __typeof__(tpool[0]), t) - tpool);
	add_atomic(&tpool[i].fires);
	uint64_t s = (uint64_t)pw_now_ns(rt) | 1;
	if (xs(&s) % 4 == 0)
		thread_burst(&s, 1 + (unsigned)(xs(&s) % 8)); /* may name itself */
}

static void *thread_main(void *arg)
{
	unsigned cpu = (unsigned)(uintptr_t)arg;
	uint64_t s = thread_seed + cpu * 0x9e3779b97f4a7c15ull;
	CHECK_EQ(pw_cpu_enter(rt, cpu), 0);
	while (!__atomic_load_n(&stop_flag, __ATOMIC_RELAXED)) {
		thread_burst(&s, 1 + (unsigned)(xs(&s) % 40));
		unsigned k = (unsigned)(xs(&s) % TT);
		if (xs(&s) % 4 == 0 && pw_timer_delete(&tpool[k].t) == 1)
			add_atomic(&tpool[k].removals);
		CHECK(pw_run_timers(rt, cpu) >= 0);
	}
	pw_cpu_exit(rt);
	return NULL;
}

static void test_threads(void)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	for (unsigned i = 0; i < TT; i++)
		CHECK_EQ(pw_timer_setup(rt, &tpool[i].t, thread_fn_cb, i % 8 == 0 ? PW_TIMER_PINNED : 0),
			 0);
	thread_seed = (uint64_t)time(NULL) | 1;
	printf("thread seed %llu\n", (unsigned long long)thread_seed);
	pthread_t th[2];
	for (unsigned c = 0; c < 2; c++)
		CHECK_EQ(pthread_create(&th[c], NULL, thread_main, (void *)(uintptr_t)c), 0);
	struct timespec d = {0, 400 * 1000 * 1000};
	nanosleep(&d, NULL);
	__atomic_store_n(&stop_flag, 1, __ATOMIC_RELAXED);
	for (unsigned c = 0; c < 2; c++)
		CHECK_EQ(pthread_join(th[c], NULL), 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	/* drain: run the CPUs until nothing is pending (expiries are <= 6
	 * jiffies out; callbacks may re-arm, but only 1 in 4) */
	for (unsigned round = 0;; round++) {
		unsigned left = 0;
		for (unsigned i = 0; i < TT; i++)
			left += pw_timer_pending(&tpool[i].t);
		if (!left)
			break;
		CHECK(round < 100000);
		for (unsigned c = 0; c < 2; c++)
			CHECK(pw_run_timers(rt, c) >= 0);
		struct timespec ms = {0, 1000 * 1000};
		nanosleep(&ms, NULL);
	}
	uint64_t act = 0, fires = 0;
	for (unsigned i = 0; i < TT; i++) {
		CHECK_EQ(tpool[i].activations, tpool[i].fires + tpool[i].removals);
		act += tpool[i].activations;
		fires += tpool[i].fires;
	}
	printf("activations %llu, fires %llu\n", (unsigned long long)act,
	       (unsigned long long)fires);
	CHECK(fires > 0);
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
	rt = NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "threads")) {
		RUN(test_threads);
		return 0;
	}
	RUN(test_edges);
	RUN(test_twins);
	return 0;
}
