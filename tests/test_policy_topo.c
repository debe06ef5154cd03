/* SPDX-License-Identifier: MIT */
/*
 * PUSH by scheduling domain (pw_config.topo_levels, topo_span[]), on the
 * simulated clock with CPUs marked busy or idle: 3.17's
 * get_nohz_timer_target() walk (this CPU if busy, else a busy SMT sibling,
 * then the lowest-numbered busy CPU of the socket or shared cache, then of
 * the machine; offline CPUs never); one flat domain by default (the
 * lowest-numbered busy CPU, whatever the arming CPU's neighbours); the
 * topology's rules at pw_runtime_create() (-EINVAL when the domains do not
 * nest).  Single-threaded.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <string.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "check.h"

static struct pw_runtime *rt;

static void nop(struct pw_timer *t)
{
	(void)t;
}

static void teardown(void)
{
	CHECK_EQ(pw_runtime_check(rt), 0);
	pw_runtime_destroy(rt);
}

/* Where PUSH puts a timer armed by CPU @from: a fresh arm, the timer's CPU. */
static unsigned push_from(unsigned from)
{
	struct pw_timer t;
	CHECK_EQ(pw_timer_setup(rt, &t, nop, 0), 0);
	CHECK_EQ(pw_cpu_enter(rt, from), 0);
	CHECK_EQ(pw_mod_timer(&t, pw_jiffies(rt) + 50), 0);
	unsigned cpu = pw_timer_cpu(&t);
	CHECK_EQ(pw_timer_delete(&t), 1);
	pw_cpu_exit(rt);
	return cpu;
}

/* @n CPUs, all idle but @busy[0..nb), PUSH; topology @span[0..levels). */
static void setup_topo(unsigned n, unsigned levels, const unsigned *span, const unsigned *busy,
		       unsigned nb)
{
	struct pw_config cfg;
	pw_config_init(&cfg);
	cfg.ncpus = n;
	cfg.clock = PW_CLOCK_SIM;
	cfg.topo_levels = levels;
	for (unsigned l = 0; l < levels; l++)
		cfg.topo_span[l] = span[l];
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	CHECK_EQ(pw_set_migration(rt, PW_MIGRATION_PUSH), 0);
	for (unsigned c = 0; c < n; c++)
		CHECK_EQ(pw_cpu_set_idle(rt, c, 1), 0);
	for (unsigned i = 0; i < nb; i++)
		CHECK_EQ(pw_cpu_set_idle(rt, busy[i], 0), 0);
}

/* The topology's rules: nested spans, the CPU count a multiple of the last. */
static void test_topology_api(void)
{
	static const struct {
		unsigned ncpus, levels, span[PW_TOPO_MAX_LEVELS + 1];
		int want;
	} cases[] = {
		{32, 2, {2, 16}, 0},	 {32, 1, {2}, 0},	  {9, 1, {3}, 0},
		{32, 3, {2, 4, 16}, 0},	 {64, 4, {2, 4, 8, 16}, 0}, {32, 0, {0}, 0},
		{32, 5, {2, 4, 8, 16}, -EINVAL}, /* too many levels */
		{32, 1, {1}, -EINVAL},		 /* a domain of one CPU */
		{32, 1, {0}, -EINVAL},
		{32, 2, {2, 2}, -EINVAL},	 /* not larger than the level below */
		{48, 2, {4, 6}, -EINVAL},	 /* not a multiple of it */
		{24, 2, {2, 16}, -EINVAL},	 /* the CPUs not a multiple of it */
		{32, 2, {2, 32}, -EINVAL},	 /* the whole machine is implied */
		{2, 1, {4}, -EINVAL},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pw_config cfg;
		struct pw_runtime *r = NULL;
		pw_config_init(&cfg);
		CHECK_EQ(cfg.topo_levels, 0); /* the default: one flat domain */
		cfg.ncpus = cases[i].ncpus;
		cfg.clock = PW_CLOCK_SIM;
		cfg.topo_levels = cases[i].levels;
		for (unsigned l = 0; l < cases[i].levels && l < PW_TOPO_MAX_LEVELS; l++)
			cfg.topo_span[l] = cases[i].span[l];
		CHECK_EQ(pw_runtime_create(&cfg, &r), cases[i].want);
		CHECK_EQ(!r, cases[i].want != 0);
		pw_runtime_destroy(r);
	}
}

/* 3.17's get_nohz_timer_target() walks the arming CPU's domains from the
 * smallest: its busy SMT sibling first, then the lowest-numbered busy CPU
 * of its socket, then of the machine; offline CPUs never; nobody busy or
 * the arming CPU busy: stays.  2 sockets x 8 cores x 2 threads. */
static void test_push_domains(void)
{
	static const unsigned span[] = {2, 16}, busy[] = {1, 4, 9, 20};
	struct pw_cpu_stats st;
	setup_topo(32, 2, span, busy, 4);
	CHECK_EQ(push_from(5), 4);   /* the sibling, though 1 is lower */
	CHECK_EQ(push_from(7), 1);   /* the socket: the lowest busy of 0-15 */
	CHECK_EQ(push_from(0), 1);   /* the sibling */
	CHECK_EQ(push_from(21), 20); /* the sibling, on the other socket */
	CHECK_EQ(push_from(31), 20); /* the socket: 16-31 */
	CHECK_EQ(push_from(4), 4);   /* busy itself: stays */
	CHECK_EQ(pw_cpu_set_idle(rt, 20, 1), 0);
	CHECK_EQ(push_from(31), 1);  /* nobody on its socket: the machine's first */
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	CHECK_EQ(push_from(5), 4);
	CHECK_EQ(pw_cpu_offline(rt, 4), 0); /* busy, but offline: never a target */
	CHECK_EQ(push_from(5), 9);
	CHECK_EQ(pw_cpu_set_idle(rt, 9, 1), 0);
	CHECK_EQ(push_from(5), 5);   /* nobody busy: stays */
	CHECK_EQ(pw_cpu_set_idle(rt, 30, 0), 0);
	CHECK_EQ(push_from(5), 30);
	CHECK_EQ(pw_stats_read(rt, 5, &st), 0); /* four pushes from 5, one stay */
	CHECK_EQ(st.pushed, 4);
	teardown();

	/* three levels, the middle one a shared cache of 4 CPUs */
	static const unsigned span3[] = {2, 4, 16}, busy3[] = {8, 3, 12};
	setup_topo(32, 3, span3, busy3, 3);
	CHECK_EQ(push_from(0), 3);   /* its cache (0-3) before its socket's 8 */
	CHECK_EQ(push_from(2), 3);   /* the sibling */
	CHECK_EQ(push_from(13), 12); /* the sibling */
	CHECK_EQ(push_from(14), 12); /* the cache 12-15 */
	CHECK_EQ(push_from(10), 8);  /* the cache 8-11 */
	CHECK_EQ(push_from(5), 3);   /* the socket: 3 before 8 */
	CHECK_EQ(push_from(16), 3);  /* the other socket idle: the machine's first */
	teardown();
}

/* No topology: one flat domain, the lowest-numbered busy CPU whatever the
 * arming CPU's neighbours (today's behaviour, unchanged). */
static void test_push_flat(void)
{
	static const unsigned busy[] = {1, 4, 9, 20};
	setup_topo(32, 0, NULL, busy, 4);
	CHECK_EQ(push_from(5), 1);
	CHECK_EQ(push_from(21), 1);
	CHECK_EQ(push_from(31), 1);
	CHECK_EQ(pw_cpu_set_idle(rt, 1, 1), 0);
	CHECK_EQ(push_from(21), 4);
	CHECK_EQ(push_from(0), 4);
	teardown();
}

int main(void)
{
	RUN(test_topology_api);
	RUN(test_push_domains);
	RUN(test_push_flat);
	return 0;
}
