/* SPDX-License-Identifier: MIT */
/*
 * Randomized differential test of hrtimers against a dumb reference, on the
 * simulated clock, several CPUs and all three clocks.
 *
 * Random starts (absolute, relative, with and without slack, onto a few
 * shared deadlines so ties happen), cancels, try-to-cancels, re-setups,
 * switches of the CPU the driver acts as, and clock steps.  Callbacks
 * restart with hrtimer_forward_now() (the overrun count and new window are
 * checked against a loop that adds the interval until past now), start
 * and cancel other timers, try to cancel themselves, free themselves.
 * The properties:
 *  - never before the soft expiry, on the timer's own clock;
 *  - never after the hard deadline (or the start, if that was later): the
 *    CPU wakes for the hard deadline, and the simulation is exact;
 *  - FIFO among equal deadlines, and deadline order in general: when a
 *    timer runs, no timer of its CPU and clock that comes before it in
 *    (deadline, start order) is still queued;
 *  - on the CPU it was placed on (the starting CPU, unless its callback was
 *    running), each start runs at most once, cancelled timers never run,
 *    nothing is lost; pw_runtime_check() passes.
 * PW_SEED=n replays; PW_HRDIFF_OPS=n sets the operation count (300000).
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <pinwheel/pinwheel.h>

#include "check.h"
#include "sim.h"
#include "rng.h"

#ifdef PW_FUZZ
#define NSLOTS 32 /* few timers: the fuzzer's operations meet on the same ones */
#else
#define NSLOTS 600
#endif
#define NCPUS 3
#define REAL_OFF 1700000000000000000ll

static const int clocks[3] = {CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME};

enum beh { B_NONE, B_RESTART, B_OTHER, B_TRYSELF, B_FREE, B_COUNT };

struct slot;
struct htm {
	struct pw_hrtimer t;
	struct slot *slot;
};

struct slot {
	struct htm *h;
	int clock;        /* the clock it runs on */
	int queued;
	uint64_t soft, hard, start_now; /* on its clock */
	uint64_t seq;
	int cpu;
	enum beh beh;
	uint64_t period;
};

static struct pw_runtime *rt;
static struct slot slots[NSLOTS];
static uint64_t seq_counter;
static struct pw_hrtimer *cur_running;
static unsigned long long n_fired, n_ops;
static uint64_t trace_hash;

static uint64_t now_on(int clock)
{
	return pw_clock_now_ns(rt, clock);
}

static void fail(const struct slot *s, const char *what)
{
	fprintf(stderr, "slot %ld: %s (clock %d soft %llu hard %llu start %llu now %llu cpu %d)\n",
		(long)(s - slots), what, s->clock, (unsigned long long)s->soft,
		(unsigned long long)s->hard, (unsigned long long)s->start_now,
		(unsigned long long)now_on(s->clock), s->cpu);
	abort();
}

static enum pw_hrtimer_restart hfn(struct pw_hrtimer *t);

static void new_timer(struct slot *s)
{
	struct htm *h = calloc(1, sizeof(*h));
	CHECK(h);
	h->slot = s;
	int clock = clocks[rnd_below(3)];
	unsigned mode = rnd_below(4) == 0 ? PW_HRTIMER_MODE_REL : PW_HRTIMER_MODE_ABS;
	CHECK_EQ(pw_hrtimer_setup(rt, &h->t, hfn, clock, mode), 0);
	s->h = h;
	s->clock = pw_hrtimer_clock(&h->t);
	CHECK(s->clock == clock || (clock == CLOCK_REALTIME && s->clock == CLOCK_MONOTONIC));
	s->queued = 0;
}

static uint64_t rnd_delay(void)
{
	switch (rnd_below(6)) {
	case 0:
		return 0;
	case 1:
		return rnd_below(1000);                    /* sub-microsecond */
	case 2:
		return 1000000 * (1 + rnd_below(4));      /* shared deadlines: ties */
	default:
		return rnd_below(1ull << (10 + rnd_below(25))); /* up to ~17 s */
	}
}

static void start(struct slot *s)
{
	struct pw_hrtimer *t = &s->h->t;
	uint64_t now = now_on(s->clock);
	uint64_t delay = rnd_delay();
	uint64_t range = rnd_below(3) ? 0 : rnd_below(1ull << (rnd_below(24)));
	int rel = (int)rnd_below(2);
	int old_cpu = pw_hrtimer_cpu(t), me = pw_this_cpu();
	uint64_t abs = now + delay;
	if (!rel && rnd_below(10) == 0)
		abs = now - rnd_below(now < 5000000 ? now : 5000000); /* in the past */
	CHECK_EQ(pw_hrtimer_start_range_ns(t, rel ? delay : abs, range,
					   rel ? PW_HRTIMER_MODE_REL : PW_HRTIMER_MODE_ABS),
		 0);
	int cpu = pw_hrtimer_cpu(t);
	if (t == cur_running)
		CHECK_EQ(cpu, old_cpu); /* never moved while its callback runs */
	else
		CHECK_EQ(cpu, me >= 0 ? me : old_cpu);
	s->queued = 1;
	s->soft = rel ? now + delay : abs;
	s->hard = s->soft + range;
	s->start_now = now;
	s->seq = ++seq_counter;
	s->cpu = cpu;
	s->beh = (enum beh)rnd_below(B_COUNT);
	s->period = 1 + rnd_below(20000000);
	CHECK_EQ(pw_hrtimer_get_softexpires(t), s->soft);
	CHECK_EQ(pw_hrtimer_get_expires(t), s->hard);
	CHECK_EQ(pw_hrtimer_is_queued(t), 1);
}

static void op_on(struct slot *s)
{
	struct pw_hrtimer *t = &s->h->t;
	int ret;

	n_ops++;
	switch (rnd_below(10)) {
	case 0: case 1: case 2: case 3: case 4:
		start(s);
		break;
	case 5:
		ret = pw_hrtimer_try_to_cancel(t);
		if (t == cur_running) {
			CHECK_EQ(ret, -1);
			break;
		}
		CHECK_EQ(ret, s->queued);
		s->queued = 0;
		break;
	case 6:
		ret = pw_hrtimer_cancel(t);
		if (t == cur_running) {
			CHECK_EQ(ret, -EDEADLK);
			break;
		}
		CHECK_EQ(ret, s->queued);
		s->queued = 0;
		break;
	case 7:
		if (!s->queued && t != cur_running) {
			free(s->h);
			new_timer(s);
		}
		break;
	default:
		CHECK_EQ(pw_hrtimer_is_queued(t), s->queued);
		CHECK_EQ(pw_hrtimer_active(t), s->queued || t == cur_running);
		break;
	}
}

static void check_order(const struct slot *x)
{
	for (unsigned i = 0; i < NSLOTS; i++) {
		const struct slot *y = &slots[i];
		if (y == x || !y->queued || y->cpu != x->cpu || y->clock != x->clock)
			continue;
		if (y->hard < x->hard || (y->hard == x->hard && y->seq < x->seq))
			fail(x, "ran while an earlier timer of its queue was still queued (order/FIFO)");
	}
}

static enum pw_hrtimer_restart hfn(struct pw_hrtimer *t)
{
	struct htm *h = pw_container_of(t, struct htm, t);
	struct slot *s = h->slot;
	uint64_t now = now_on(s->clock);

	if (!s->queued)
		fail(s, "ran while not queued (cancelled, or twice)");
	if (now < s->soft)
		fail(s, "ran before its soft expiry");
	if (now > (s->hard > s->start_now ? s->hard : s->start_now))
		fail(s, "ran after its hard deadline");
	if (pw_this_cpu() != s->cpu || pw_hrtimer_cpu(t) != s->cpu)
		fail(s, "ran on the wrong CPU");
	CHECK_EQ(pw_hrtimer_is_queued(t), 0);
	CHECK_EQ(pw_hrtimer_callback_running(t), 1);
	s->queued = 0;
	check_order(s);
	n_fired++;
	trace_hash = trace_mix(trace_hash, (uint64_t)(s - slots));
	trace_hash = trace_mix(trace_hash, now);
	trace_hash = trace_mix(trace_hash, (uint64_t)s->cpu);

	struct pw_hrtimer *outer = cur_running;
	cur_running = t;
	enum pw_hrtimer_restart r = PW_HRTIMER_NORESTART;
	switch (s->beh) {
	case B_RESTART: {
		/* the dumb way: add the interval until past now */
		uint64_t hard = s->hard, soft = s->soft, n = 0;
		if (now >= hard) {
			do {
				hard += s->period;
				soft += s->period;
				n++;
			} while (hard <= now);
		}
		uint64_t orun = pw_hrtimer_forward_now(t, s->period);
		CHECK_EQ(orun, n);
		CHECK_EQ(pw_hrtimer_get_expires(t), hard);
		CHECK_EQ(pw_hrtimer_get_softexpires(t), soft);
		if (rnd_below(4) == 0)
			op_on(&slots[rnd_below(NSLOTS)]); /* may start this one too */
		if (!s->queued) {
			s->queued = 1;
			s->soft = soft;
			s->hard = hard;
			s->start_now = now;
			s->seq = ++seq_counter; /* re-queued after the callback */
		}
		s->beh = (enum beh)rnd_below(B_COUNT);
		r = PW_HRTIMER_RESTART;
		break;
	}
	case B_OTHER:
		op_on(&slots[rnd_below(NSLOTS)]);
		break;
	case B_TRYSELF:
		CHECK_EQ(pw_hrtimer_try_to_cancel(t), -1);
		CHECK_EQ(pw_hrtimer_cancel(t), -EDEADLK);
		break;
	case B_FREE:
		cur_running = outer;
		free(h);
		new_timer(s);
		return PW_HRTIMER_NORESTART;
	default:
		break;
	}
	cur_running = outer;
	return r;
}

static void check_nothing_lost(void)
{
	for (unsigned i = 0; i < NSLOTS; i++) {
		struct slot *s = &slots[i];
		CHECK_EQ(pw_hrtimer_is_queued(&s->h->t), s->queued);
		uint64_t due = s->hard > s->start_now ? s->hard : s->start_now;
		if (s->queued && now_on(s->clock) > due)
			fail(s, "lost: its deadline passed and it did not run");
	}
}

static void run(uint64_t seed, uint64_t ops)
{
	rt = sim_create(NCPUS, 1000, 1000000000ull, REAL_OFF);
	rng_state = seed;
	seq_counter = 0;
	trace_hash = 0xcbf29ce484222325ull;
	memset(slots, 0, sizeof(slots));
	for (unsigned i = 0; i < NSLOTS; i++)
		new_timer(&slots[i]);

	for (uint64_t n = 1; n <= ops && !rng_done(); n++) {
		uint64_t r = rnd_below(100);
		if (r < 10) {
			uint64_t ns = rnd_below(4) ? rnd_below(2000000) : rnd_below(1ull << (20 + rnd_below(15)));
			CHECK_EQ(pw_sim_advance(rt, ns), 0);
		} else if (r < 13) {
			pw_cpu_exit(rt);
			unsigned c = (unsigned)rnd_below(NCPUS + 1);
			if (c < NCPUS)
				CHECK_EQ(pw_cpu_enter(rt, c), 0);
		} else {
			op_on(&slots[rnd_below(NSLOTS)]);
		}
		if (n % 401 == 0) {
			CHECK_EQ(pw_runtime_check(rt), 0);
			check_nothing_lost();
		}
	}
	pw_cpu_exit(rt);
	for (unsigned i = 0; i < NSLOTS; i++)
		if (slots[i].beh == B_RESTART || slots[i].beh == B_OTHER)
			slots[i].beh = B_NONE;
	CHECK_EQ(pw_sim_advance(rt, 1ull << 36), 0); /* 68 s: past every deadline */
	CHECK_EQ(pw_runtime_check(rt), 0);
	for (unsigned i = 0; i < NSLOTS; i++) {
		if (slots[i].queued && slots[i].hard < (1ull << 62))
			fail(&slots[i], "lost at the final flush");
		free(slots[i].h);
	}
	pw_runtime_destroy(rt);
}

#ifdef PW_FUZZ
/* fuzz/: the input drives the operations (rng.h). */
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);
int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	rng_from_bytes(d, n);
	run(0, UINT64_MAX);
	return 0;
}
#else
int main(void)
{
	uint64_t ops, seed = rng_seed_and_ops("PW_HRDIFF_OPS", 300000, &ops);
	run(seed, ops);
	printf("ok - %llu ops, %llu callbacks\n", n_ops, n_fired);

	/* determinism: the same seed gives the same callbacks in the same order */
	run(seed + 1, 30000);
	uint64_t h1 = trace_hash;
	run(seed + 1, 30000);
	CHECK(h1 == trace_hash);
	printf("ok - determinism: trace %016llx twice\n", (unsigned long long)h1);
	return 0;
}
#endif
