/* SPDX-License-Identifier: MIT */
/*
 * Randomized differential test: pinwheel against a deliberately dumb
 * reference, on the simulated clock, several CPUs.
 *
 * The reference is one record per timer slot: armed or not, the expiry it
 * was given, the jiffy and nanosecond it was armed at, the CPU it should
 * fire on, shut down or not.  Random operations (arm, re-arm to the same
 * expiry, to a near one, far, into the past; mod_timer_pending, reduce,
 * add_timer, add_timer_on, delete, delete_sync, shutdown, re-setup),
 * random switches of the CPU the driving thread acts as (cross-CPU arms),
 * and random clock steps, small and huge.  Callbacks re-arm themselves,
 * arm or cancel other timers, free their own timer, or try to sync-delete
 * themselves.  After each step the two must agree:
 *  - every return value is what the kernel semantics give;
 *  - never early: a timer fires at or after its expiry jiffy, and at least
 *    (expires - jiffies at arm) ticks after it was armed;
 *  - never later than the bound: expires + the granularity of the level
 *    its distance selects (<= 8/63 of the distance), at least 1 tick;
 *  - on the CPU it was last placed on, with pw_this_cpu() saying so;
 *  - each arm fires at most once, cancelled timers never fire, and nothing
 *    is lost: once the clock passes a timer's bound, it has fired;
 *  - pw_runtime_check() passes.
 * Then the same seed is run twice more to check the callback trace is
 * identical (determinism).
 *
 * PW_SEED=n replays a seed; PW_DIFF_OPS=n sets the operation count
 * (default 1,000,000 over two configurations).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"
#include "rng.h"

#ifdef PW_FUZZ
#define NSLOTS 48 /* few timers: the fuzzer's operations meet on the same ones */
#else
#define NSLOTS 1500
#endif

enum behaviour { B_NONE, B_REARM, B_OTHER, B_FREE, B_SELF_SYNC, B_COUNT };

struct slot;
struct tmr {
	struct pw_timer t;
	struct slot *slot;
};

struct slot {
	struct tmr *tm;
	int pending;
	int shutdown;
	uint64_t expires;
	uint64_t arm_j;
	uint64_t arm_ns;
	int cpu;
	enum behaviour beh;
	uint64_t fires;
};

static struct pw_runtime *rt;
static struct pw_timer *cur_running; /* the callback running now, if any */
static struct slot slots[NSLOTS];
static unsigned ncpus;
static uint64_t tick_ns;
static uint64_t trace_hash;
static unsigned long long n_fired, n_ops;

/* Distance in jiffies, log-uniform-ish over 0 .. 2^24 (~4.6 h at 1 kHz). */
static uint64_t rnd_delta(void)
{
	unsigned bits = (unsigned)rnd_below(25);
	return rnd_below(1ull << bits) + (bits ? 1ull << (bits - 1) : 0);
}

static unsigned gran_of(uint64_t delta)
{
	/* level by the wheel rule: level n covers from 63 << 3(n-1) */
	unsigned lvl = 0;
	while (lvl < 8 && delta >= (63ull << (3 * lvl)))
		lvl++;
	return 1u << (3 * lvl);
}

/* The latest jiffy slot @s may fire at. */
static uint64_t bound_of(const struct slot *s)
{
	if ((int64_t)(s->expires - s->arm_j) <= 0)
		return s->arm_j + 1;
	return s->expires + gran_of(s->expires - s->arm_j);
}

static void fail_slot(const struct slot *s, const char *what)
{
	fprintf(stderr, "slot %ld: %s (expires %llu arm_j %llu cpu %d pending %d now_j %llu)\n",
		(long)(s - slots), what, (unsigned long long)s->expires,
		(unsigned long long)s->arm_j, s->cpu, s->pending,
		(unsigned long long)pw_jiffies(rt));
	abort();
}

static void timer_fn(struct pw_timer *t);

static void new_timer(struct slot *s)
{
	struct tmr *tm = calloc(1, sizeof(*tm));
	CHECK(tm);
	tm->slot = s;
	CHECK_EQ(pw_timer_setup(rt, &tm->t, timer_fn, rnd_below(8) == 0 ? PW_TIMER_PINNED : 0), 0);
	s->tm = tm;
	s->pending = 0;
	s->shutdown = 0;
}

/* Record an arm that pw reported as effective. */
static void ref_armed(struct slot *s, uint64_t e)
{
	s->pending = 1;
	s->expires = e;
	s->arm_j = pw_jiffies(rt);
	s->arm_ns = pw_now_ns(rt);
	s->cpu = pw_timer_cpu(&s->tm->t);
	s->beh = (enum behaviour)rnd_below(B_COUNT);
}

static uint64_t pick_expiry(struct slot *s)
{
	uint64_t j = pw_jiffies(rt);
	switch (rnd_below(8)) {
	case 0: /* same as now (mod_timer fast path 1 when pending) */
		return s->pending ? s->expires : j + rnd_delta();
	case 1: /* near the current one (often the same bucket) */
		return s->pending ? s->expires + rnd_below(5) - 2 : j + rnd_delta();
	case 2: /* in the past or now */
		return j - rnd_below(100);
	default:
		return j + rnd_delta();
	}
}

static void check_placed(struct slot *s, int old_cpu, int was_pending, int same_exp)
{
	int cpu = pw_timer_cpu(&s->tm->t);
	int me = pw_this_cpu();
	if (was_pending && same_exp && cpu != old_cpu)
		fail_slot(s, "fast path 1 moved the timer");
	if (cpu != old_cpu && cpu != me)
		fail_slot(s, "timer moved to a CPU that is neither its own nor the arming one");
}

/* One random operation on slot @s.  May run inside a callback. */
static void op_on(struct slot *s)
{
	struct pw_timer *t = &s->tm->t;
	int old_cpu = pw_timer_cpu(t);
	int ret;
	uint64_t e;

	n_ops++;
	switch (rnd_below(12)) {
	case 0: case 1: case 2: case 3: { /* mod_timer */
		e = pick_expiry(s);
		int same = s->pending && e == s->expires;
		ret = pw_mod_timer(t, e);
		if (s->shutdown) {
			CHECK_EQ(ret, -ESHUTDOWN);
			break;
		}
		CHECK_EQ(ret, s->pending);
		check_placed(s, old_cpu, s->pending, same);
		if (!same)
			ref_armed(s, e);
		else
			s->cpu = pw_timer_cpu(t);
		break;
	}
	case 4: /* mod_timer_pending */
		e = pick_expiry(s);
		ret = pw_mod_timer_pending(t, e);
		if (s->shutdown) {
			CHECK_EQ(ret, -ESHUTDOWN);
			break;
		}
		CHECK_EQ(ret, s->pending);
		CHECK_EQ(pw_timer_pending(t), s->pending);
		if (s->pending && e != s->expires)
			ref_armed(s, e);
		break;
	case 5: /* timer_reduce */
		e = pick_expiry(s);
		ret = pw_timer_reduce(t, e);
		if (s->shutdown) {
			CHECK_EQ(ret, -ESHUTDOWN);
			break;
		}
		CHECK_EQ(ret, s->pending);
		if (!s->pending || (int64_t)(e - s->expires) < 0)
			ref_armed(s, e);
		CHECK_EQ(t->expires, s->expires);
		break;
	case 6: /* add_timer */
		e = pick_expiry(s);
		if (s->pending) {
			CHECK_EQ(pw_add_timer(t), -EBUSY);
			break;
		}
		t->expires = e;
		ret = pw_add_timer(t);
		CHECK_EQ(ret, s->shutdown ? -ESHUTDOWN : 0);
		if (!ret)
			ref_armed(s, e);
		break;
	case 7: { /* add_timer_on */
		unsigned cpu = (unsigned)rnd_below(ncpus + 1); /* ncpus: bad input */
		e = pick_expiry(s);
		if (!s->pending)
			t->expires = e;
		ret = pw_add_timer_on(t, cpu);
		if (cpu >= ncpus) {
			CHECK_EQ(ret, -EINVAL);
		} else if (s->pending) {
			CHECK_EQ(ret, -EBUSY);
		} else if (s->shutdown) {
			CHECK_EQ(ret, -ESHUTDOWN);
		} else if (t == cur_running && (int)cpu != old_cpu) {
			CHECK_EQ(ret, -EAGAIN); /* never moved while its callback runs */
		} else {
			CHECK_EQ(ret, 0);
			CHECK_EQ(pw_timer_cpu(t), cpu);
			ref_armed(s, e);
		}
		break;
	}
	case 8: /* delete */
		CHECK_EQ(pw_timer_delete(t), s->pending);
		s->pending = 0;
		break;
	case 9: /* delete_sync (in the sim nothing runs concurrently) */
		ret = pw_timer_delete_sync(t);
		if (t == cur_running) {
			CHECK_EQ(ret, -EDEADLK); /* from its own callback */
			break;
		}
		CHECK_EQ(ret, s->pending);
		s->pending = 0;
		break;
	case 10: /* shutdown, or set up again */
		if (t == cur_running) {
			CHECK_EQ(pw_timer_shutdown_sync(t), -EDEADLK);
			break;
		}
		if (s->shutdown || rnd_below(4)) {
			if (s->pending)
				break;
			CHECK_EQ(pw_timer_setup(rt, t, timer_fn, 0), 0);
			s->shutdown = 0;
		} else {
			CHECK_EQ(pw_timer_shutdown_sync(t), s->pending);
			s->pending = 0;
			s->shutdown = 1;
		}
		break;
	default: /* pending query */
		CHECK_EQ(pw_timer_pending(t), s->pending);
		break;
	}
}

static void timer_fn(struct pw_timer *t)
{
	struct tmr *tm = pw_container_of(t, struct tmr, t);
	struct slot *s = tm->slot;
	uint64_t j = pw_jiffies(rt), ns = pw_now_ns(rt);

	if (!s->pending)
		fail_slot(s, "fired while not armed (cancelled, or a second time)");
	if ((int64_t)(j - s->expires) < 0)
		fail_slot(s, "fired early (jiffies)");
	if ((int64_t)(s->expires - s->arm_j) > 0 &&
	    ns - s->arm_ns < (s->expires - s->arm_j) * tick_ns)
		fail_slot(s, "fired early (less time than asked since the arm)");
	if ((int64_t)(j - bound_of(s)) > 0)
		fail_slot(s, "fired later than the bound");
	if (pw_this_cpu() != s->cpu || pw_timer_cpu(t) != s->cpu)
		fail_slot(s, "fired on the wrong CPU");
	if (t->expires != s->expires)
		fail_slot(s, "expires field changed");
	s->pending = 0;
	s->fires++;
	n_fired++;
	trace_hash = trace_mix(trace_hash, (uint64_t)(s - slots));
	trace_hash = trace_mix(trace_hash, j);
	trace_hash = trace_mix(trace_hash, (uint64_t)s->cpu);

	struct pw_timer *outer = cur_running;
	cur_running = t;
	switch (s->beh) {
	case B_REARM:
		op_on(s);
		break;
	case B_OTHER:
		op_on(&slots[rnd_below(NSLOTS)]);
		break;
	case B_FREE:
		free(tm); /* the library must not touch it again */
		new_timer(s);
		break;
	case B_SELF_SYNC:
		CHECK_EQ(pw_timer_delete_sync(t), -EDEADLK);
		break;
	default:
		break;
	}
	cur_running = outer;
}

static void check_nothing_lost(void)
{
	uint64_t j = pw_jiffies(rt);
	for (unsigned i = 0; i < NSLOTS; i++) {
		struct slot *s = &slots[i];
		CHECK_EQ(pw_timer_pending(&s->tm->t), s->pending);
		if (s->pending && (int64_t)(j - bound_of(s)) > 0)
			fail_slot(s, "lost: its bound has passed and it did not fire");
	}
}

static void advance(void)
{
	uint64_t ns;
	switch (rnd_below(10)) {
	case 0: /* log-uniform up to 2^44 ns (~4.9 h): far levels fire too */
		ns = rnd_below(1ull << (20 + rnd_below(25)));
		break;
	case 1: case 2:
		ns = rnd_below(1000) * tick_ns; /* whole ticks */
		break;
	default:
		ns = rnd_below(20 * tick_ns); /* small, not tick aligned */
		break;
	}
	CHECK_EQ(pw_sim_advance(rt, ns), 0);
}

/* jiffies at clock 0 for the next run() (0, or near the 64-bit wrap) */
static uint64_t initial_jiffies;

static void run(uint64_t seed, unsigned cpus, unsigned hz, uint64_t start_ns, uint64_t ops)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = cpus;
	cfg.hz = hz;
	cfg.clock = PW_CLOCK_SIM;
	cfg.sim_start_ns = start_ns;
	cfg.initial_jiffies = initial_jiffies;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	ncpus = cpus;
	tick_ns = 1000000000ull / hz;
	rng_state = seed;
	trace_hash = 0xcbf29ce484222325ull;
	memset(slots, 0, sizeof(slots));
	for (unsigned i = 0; i < NSLOTS; i++)
		new_timer(&slots[i]);

	uint64_t n = 0;
	while (n < ops && !rng_done()) {
		uint64_t r = rnd_below(100);
		if (r < 8) {
			advance();
			n++;
		} else if (r < 10) {
			/* act as another CPU, or as none */
			pw_cpu_exit(rt);
			unsigned c = (unsigned)rnd_below(ncpus + 1);
			if (c < ncpus)
				CHECK_EQ(pw_cpu_enter(rt, c), 0);
			CHECK_EQ(pw_this_cpu(), c < ncpus ? (int)c : -1);
			n++;
		} else {
			op_on(&slots[rnd_below(NSLOTS)]);
			n++;
		}
		if (n % 509 == 0) {
			CHECK_EQ(pw_runtime_check(rt), 0);
			check_nothing_lost();
		}
	}
	/* flush: everything armed must fire within its bound */
	pw_cpu_exit(rt);
	for (unsigned i = 0; i < NSLOTS; i++)
		slots[i].beh = B_NONE; /* no new arms while flushing */
	CHECK_EQ(pw_sim_advance(rt, 1ull << 50), 0); /* 13 days */
	CHECK_EQ(pw_runtime_check(rt), 0);
	for (unsigned i = 0; i < NSLOTS; i++)
		if (slots[i].pending && slots[i].expires - slots[i].arm_j < (1ull << 30))
			fail_slot(&slots[i], "lost at the final flush");
	for (unsigned i = 0; i < NSLOTS; i++)
		free(slots[i].tm);
	pw_runtime_destroy(rt);
	rt = NULL;
}

#ifdef PW_FUZZ
/* fuzz/: the first byte picks the configuration (CPUs, HZ, start), the
 * rest drives the operations (rng.h). */
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static const unsigned hzs[4] = {100, 250, 1000, 1000};
	if (n < 1)
		return 0;
	unsigned cpus = 1 + (d[0] & 3), hz = hzs[(d[0] >> 2) & 3];
	uint64_t start = (d[0] & 0x10) ? 123456789012345ull : 1000000000ull;
	/* jiffies that wrap a few seconds in (the kernel's INITIAL_JIFFIES idea) */
	initial_jiffies = (d[0] & 0x20) ? 0 - (uint64_t)hz * (start / 1000000000ull + 5) : 0;
	rng_from_bytes(d + 1, n - 1);
	run(0, cpus, hz, start, UINT64_MAX);
	return 0;
}
#else
int main(void)
{
	uint64_t ops, seed = rng_seed_and_ops("PW_DIFF_OPS", 1000000, &ops);

	run(seed, 4, 1000, 1000000000ull, ops * 7 / 10);
	printf("ok - 4 CPUs, HZ=1000: %llu ops, %llu fired\n", n_ops, n_fired);
	n_ops = n_fired = 0;
	run(seed + 1, 3, 100, 123456789012345ull, ops * 3 / 10);
	printf("ok - 3 CPUs, HZ=100 (8 levels): %llu ops, %llu fired\n", n_ops, n_fired);
	/* jiffies wrap 300 s in (the kernel's INITIAL_JIFFIES, -300 * HZ) */
	n_ops = n_fired = 0;
	initial_jiffies = 0 - 300ull * 250;
	run(seed + 3, 2, 250, 299000000000ull, ops / 10);
	initial_jiffies = 0;
	printf("ok - 2 CPUs, HZ=250, jiffies wrapping 1 s in: %llu ops, %llu fired\n", n_ops,
	       n_fired);

	/* determinism: the same seed gives the same callbacks in the same order */
	n_fired = 0;
	run(seed + 2, 4, 1000, 0, 50000);
	uint64_t h1 = trace_hash;
	unsigned long long f1 = n_fired;
	n_fired = 0;
	run(seed + 2, 4, 1000, 0, 50000);
	CHECK(h1 == trace_hash);
	CHECK_EQ(f1, n_fired);
	CHECK(f1 > 0);
	printf("ok - determinism: trace %016llx twice\n", (unsigned long long)h1);
	return 0;
}
#endif
