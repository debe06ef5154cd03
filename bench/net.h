/* SPDX-License-Identifier: MIT */
/* pinwheel-bench net: packets/s through the packet-scheduling layer (see net.c). */
#ifndef PW_BENCH_NET_H
#define PW_BENCH_NET_H

/* @packets timed per run at each of the @ninflight in-flight counts and
 * @nbatch batch sizes (packets per clock step), the median of @reps runs;
 * @only: 0 every configuration, else the one numbered so (1 = pfifo).  Return: exit status. */
int net_main(unsigned packets, const unsigned *inflight, unsigned ninflight,
	     const unsigned *batch, unsigned nbatch, unsigned reps, unsigned only, int json,
	     const char *machine);

/* The real clock with @workers workers, @ms per run (see net.c). */
int net_workers_main(unsigned workers, unsigned ms, const unsigned *inflight,
		     unsigned ninflight, unsigned reps, unsigned only, int json,
		     const char *machine);

#endif
