/* SPDX-License-Identifier: MIT */
/* A runtime on the simulated clock, for the deterministic tests. */
#ifndef PW_TESTS_SIM_H
#define PW_TESTS_SIM_H

#include <stdint.h>

#include <pinwheel/pinwheel.h>

#include "check.h"

/* @ncpus CPUs at @hz, the clock starting at @start_ns, CLOCK_REALTIME
 * @real_off ns ahead of it; aborts the test if creation fails. */
static inline struct pw_runtime *sim_create(unsigned ncpus, unsigned hz, uint64_t start_ns,
					    int64_t real_off)
{
	struct pw_config cfg;
	struct pw_runtime *rt;
	pw_config_init(&cfg);
	cfg.ncpus = ncpus;
	cfg.hz = hz;
	cfg.clock = PW_CLOCK_SIM;
	cfg.sim_start_ns = start_ns;
	cfg.sim_realtime_offset_ns = real_off;
	CHECK_EQ(pw_runtime_create(&cfg, &rt), 0);
	return rt;
}

#endif
