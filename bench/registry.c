/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: the implementations (their getters, in bench.h) and the
 * workloads, by name, in the order they are run and printed.  The
 * workloads are described in main.c.
 */
#include "registry.h"

const struct bench_reg bench_registry[] = { /* the size in registry.h: a mismatch does not compile */
	{"pinwheel", bench_impl_pinwheel},
	{"pinwheel-hrtimer", bench_impl_pinwheel_hrtimer},
	{"libevent", bench_impl_libevent},
	{"libuv", bench_impl_libuv},
	{"libev", bench_impl_libev},
	{"dpdk", bench_impl_dpdk},
	{"heap", bench_impl_heap},
	{"heap4", bench_impl_heap4},
	{"global-lock", bench_impl_global_lock},
};

const char *const bench_workloads[] = {"rearm",    "rearm_same", "cancel_add", "expire",
					  "conn_mix", "rearm_burst", "rearm_hot", "memory"};
