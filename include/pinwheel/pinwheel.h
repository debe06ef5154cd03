/* SPDX-License-Identifier: MIT */
/*
 * pinwheel: the Linux kernel's timer subsystem in userspace.
 *
 * The umbrella header: it includes the common public headers, one per
 * topic:
 *   <pinwheel/runtime.h>  the handle, its CPUs and clocks: create/destroy,
 *                         cpu enter/exit, pw_now_ns(), jiffies,
 *                         pw_run_timers(), pw_next_expiry_ns(),
 *                         pw_sim_advance(), the default runtime
 *   <pinwheel/timer.h>    wheel timers (the kernel's timer_list)
 *   <pinwheel/hrtimer.h>  hrtimers (nanosecond timers, the kernel's hrtimer)
 *   <pinwheel/worker.h>   worker threads, work items, the poll hook
 *   <pinwheel/policy.h>   migration policies, idle marks, CPU hotplug
 *   <pinwheel/net.h>      the packet-scheduling layer: devices, qdiscs, pw_tc()
 *   <pinwheel/link.h>     a link: qdiscs from tc's words on a simulated clock,
 *                         packets in, departures and drops out (docs/link.md)
 * Not included here, include them explicitly:
 *   <pinwheel/stats.h>    per-CPU statistics and pw_vmstat(); the only
 *                         public header that includes <stdio.h>
 *   <pinwheel/linux.h>    the kernel's names (timer_setup, mod_timer,
 *                         hrtimer_start, jiffies, HZ...); includes this one
 *
 * Conventions: functions return 0 or a negative errno; times are uint64_t
 * nanoseconds on the runtime's clock, or jiffies where the kernel uses
 * jiffies.  Each function says which threads may call it (Context).
 * docs/design/concurrency.md holds the locking rules.
 */
#ifndef PINWHEEL_PINWHEEL_H
#define PINWHEEL_PINWHEEL_H

#define PW_VERSION_MAJOR 0
#define PW_VERSION_MINOR 1
#define PW_VERSION_PATCH 0

#include <pinwheel/runtime.h>
#include <pinwheel/timer.h>
#include <pinwheel/hrtimer.h>
#include <pinwheel/worker.h>
#include <pinwheel/policy.h>
#include <pinwheel/net.h>
#include <pinwheel/link.h>

#endif /* PINWHEEL_PINWHEEL_H */
