/* SPDX-License-Identifier: MIT */
/*
 * The wall clock stepped under REALTIME hrtimers (clockset.c).
 *
 * On the simulated clock (exact): a REALTIME absolute timer 10 s ahead
 * runs at once when the wall clock is set 20 s forward, and never on the
 * old schedule when it is set an hour back (it runs an hour later, never
 * before its deadline on its own clock); MONOTONIC, BOOTTIME and
 * REALTIME-relative timers (which run on MONOTONIC) do not move;
 * pw_next_expiry_ns() follows the step.
 *
 * On the real clock, with workers: a step of the OS clock must reach the
 * sleeping workers.  Stepping the machine's wall clock for real would
 * disturb everything else on it, so the test sets it to what it reads
 * (root only: a "step" of a few microseconds back, which the kernel
 * reports like any other) and checks that the runtime's watcher noticed
 * (pw_clock_was_set_count()) and that every sleeping worker was woken
 * (its kicks_received), and that a REALTIME timer armed before still runs
 * at its time.  Without the right to set the clock, that part is skipped
 * with a message and pw_clock_was_set() is called directly instead.
 * Properties, not timings.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "check.h"
#include "sim.h"

#define S 1000000000ull

struct probe {
	struct pw_hrtimer t;
	int clock;
	uint64_t deadline; /* on its own clock */
	int fired;
	uint64_t at_mono, at_own;
	struct pw_runtime *rt;
};

static enum pw_hrtimer_restart probe_fn(struct pw_hrtimer *t)
{
	struct probe *p = pw_container_of(t, struct probe, t);
	p->at_mono = pw_clock_now_ns(p->rt, CLOCK_MONOTONIC);
	p->at_own = pw_clock_now_ns(p->rt, p->clock);
	__atomic_fetch_add(&p->fired, 1, __ATOMIC_RELEASE); /* after the times: read with acquire */
	return PW_HRTIMER_NORESTART;
}

static void arm(struct pw_runtime *rt, struct probe *p, int clock, unsigned mode, uint64_t t)
{
	memset(p, 0, sizeof(*p));
	p->rt = rt;
	p->clock = (clock == CLOCK_REALTIME && (mode & PW_HRTIMER_MODE_REL)) ? CLOCK_MONOTONIC
									     : clock;
	CHECK_EQ(pw_hrtimer_setup(rt, &p->t, probe_fn, clock, mode), 0);
	CHECK_EQ(pw_hrtimer_start(&p->t, t, mode), 0);
	p->deadline = pw_hrtimer_get_expires(&p->t);
}

static void test_sim_steps(void)
{
	const int64_t off0 = 1700000000ll * (int64_t)S;
	struct pw_runtime *rt = sim_create(2, 1000, 5 * S, off0);
	struct probe real, mono, boot, real_rel, back;
	uint64_t rnow = pw_clock_now_ns(rt, CLOCK_REALTIME);
	CHECK_EQ(rnow, 5 * S + (uint64_t)off0);
	arm(rt, &real, CLOCK_REALTIME, PW_HRTIMER_MODE_ABS, rnow + 10 * S);
	arm(rt, &mono, CLOCK_MONOTONIC, PW_HRTIMER_MODE_REL, 10 * S);
	arm(rt, &boot, CLOCK_BOOTTIME, PW_HRTIMER_MODE_REL, 10 * S);
	arm(rt, &real_rel, CLOCK_REALTIME, PW_HRTIMER_MODE_REL, 10 * S);
	CHECK_EQ(pw_hrtimer_clock(&real_rel.t), CLOCK_MONOTONIC);
	CHECK_EQ(pw_sim_advance(rt, 1 * S), 0);
	CHECK(!real.fired && !mono.fired && !boot.fired && !real_rel.fired);

	/* forward 20 s: the REALTIME deadline has passed; nothing else moved */
	uint64_t n0 = pw_clock_was_set_count(rt);
	CHECK_EQ(pw_sim_set_realtime_offset(rt, off0 + 20 * (int64_t)S), 0);
	CHECK_EQ(pw_clock_was_set_count(rt), n0 + 1);
	CHECK(pw_next_expiry_ns(rt, 0) <= 6 * S); /* due: in the past */
	CHECK_EQ(pw_sim_advance(rt, 0), 0);
	CHECK_EQ(real.fired, 1);
	CHECK_EQ(real.at_mono, 6 * S);
	CHECK(real.at_own >= real.deadline);
	CHECK(!mono.fired && !boot.fired && !real_rel.fired);
	CHECK_EQ(pw_sim_advance(rt, 9 * S), 0); /* mono 15 s: the others' 10 s from 5 s */
	CHECK(mono.fired == 1 && boot.fired == 1 && real_rel.fired == 1);
	CHECK_EQ(mono.at_mono, 15 * S);
	CHECK_EQ(real_rel.at_mono, 15 * S);

	/* back one hour: a timer 5 s ahead now waits an hour and 5 s */
	int64_t off1 = off0 + 20 * (int64_t)S;
	rnow = pw_clock_now_ns(rt, CLOCK_REALTIME);
	arm(rt, &back, CLOCK_REALTIME, PW_HRTIMER_MODE_ABS, rnow + 5 * S);
	CHECK_EQ(pw_sim_set_realtime_offset(rt, off1 - 3600 * (int64_t)S), 0);
	CHECK_EQ(pw_next_expiry_ns(rt, 0), 15 * S + 3605 * S);
	CHECK_EQ(pw_sim_advance(rt, 6 * S), 0);
	CHECK_EQ(back.fired, 0);
	CHECK_EQ(pw_sim_advance(rt, 3600 * S), 0);
	CHECK_EQ(back.fired, 1);
	CHECK_EQ(back.at_mono, 15 * S + 3605 * S);
	CHECK(back.at_own >= back.deadline);

	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);

	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = 1;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	CHECK_EQ(pw_sim_set_realtime_offset(rt, 0), -EINVAL); /* not simulated */
	CHECK_EQ(pw_sim_set_realtime_offset(NULL, 0), -EINVAL);
	CHECK_EQ(pw_clock_was_set(NULL), -EINVAL);
	pw_runtime_destroy(rt);
}

static uint64_t kicks(struct pw_runtime *rt, unsigned cpu)
{
	struct pw_cpu_stats st;
	CHECK_EQ(pw_stats_read(rt, cpu, &st), 0);
	return st.kicks_received;
}

static void test_real_watcher(void)
{
	struct pw_config cfg;
	struct pw_runtime *rt;
	pw_config_init(&cfg);
	cfg.ncpus = 2;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	/* a far REALTIME timer on each CPU, and a near one that must still run
	 * (placed before the workers start: then no other thread may act as
	 * their CPUs) */
	struct probe far[2], near;
	for (unsigned c = 0; c < 2; c++) {
		CHECK_EQ(pw_cpu_enter(rt, c), 0); /* placed on CPU c */
		arm(rt, &far[c], CLOCK_REALTIME, PW_HRTIMER_MODE_ABS | PW_HRTIMER_MODE_PINNED,
		    pw_clock_now_ns(rt, CLOCK_REALTIME) + 600 * S);
		pw_cpu_exit(rt);
	}
	arm(rt, &near, CLOCK_REALTIME, PW_HRTIMER_MODE_ABS,
	    pw_clock_now_ns(rt, CLOCK_REALTIME) + S / 5);
	CHECK_EQ(pw_runtime_start(rt), 0);
	usleep(50000); /* let the workers go to sleep */
	uint64_t n0 = pw_clock_was_set_count(rt), k0 = kicks(rt, 0), k1 = kicks(rt, 1);

	struct timespec ts;
	CHECK_EQ(clock_gettime(CLOCK_REALTIME, &ts), 0);
	if (clock_settime(CLOCK_REALTIME, &ts) == 0) {
		/* the watcher must notice (a property: wait as long as it takes, up to 20 s) */
		for (int i = 0; i < 20000 && pw_clock_was_set_count(rt) == n0; i++)
			usleep(1000);
		CHECK(pw_clock_was_set_count(rt) > n0);
		printf("# the OS clock was set (to itself): the watcher noticed\n");
	} else {
		printf("# SKIP setting the OS clock (%s): pw_clock_was_set() called directly\n",
		       strerror(errno));
		CHECK_EQ(pw_clock_was_set(rt), 0);
		CHECK_EQ(pw_clock_was_set_count(rt), n0 + 1);
	}
	/* every worker was asked to wake (it was asleep, or busy and saw it) */
	for (int i = 0; i < 20000 && (kicks(rt, 0) == k0 || kicks(rt, 1) == k1); i++)
		usleep(1000);
	CHECK(kicks(rt, 0) > k0 && kicks(rt, 1) > k1);
	for (int i = 0; i < 20000 && !__atomic_load_n(&near.fired, __ATOMIC_ACQUIRE); i++)
		usleep(1000);
	CHECK_EQ(__atomic_load_n(&near.fired, __ATOMIC_ACQUIRE), 1);
	CHECK(near.at_own >= near.deadline);
	CHECK(!__atomic_load_n(&far[0].fired, __ATOMIC_ACQUIRE) &&
	      !__atomic_load_n(&far[1].fired, __ATOMIC_ACQUIRE));
	for (unsigned c = 0; c < 2; c++)
		CHECK_EQ(pw_hrtimer_cancel(&far[c].t), 1);
	CHECK_EQ(pw_runtime_stop(rt), 0); /* the watcher stops with the workers */
	CHECK_EQ(pw_runtime_start(rt), 0); /* and starts again */
	CHECK_EQ(pw_clock_was_set(rt), 0);
	pw_runtime_destroy(rt);
}

int main(void)
{
	RUN(test_sim_steps);
	RUN(test_real_watcher);
	return 0;
}
