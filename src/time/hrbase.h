/* SPDX-License-Identifier: MIT */
/*
 * A CPU's hrtimer base: one ordered queue per clock behind one lock, and
 * the running mark.  Internal; the design is in hrtimer.c.
 */
#ifndef PW_TIME_HRBASE_H
#define PW_TIME_HRBASE_H

#include <stdint.h>

#include <pinwheel/hrtimer.h>
#include <pinwheel/runtime.h>

#include "cacheline.h"
#include "lock.h"
#include "runwait.h"
#include "hrheap.h"

/* Clocks, as indexes of the per-CPU queues. */
enum pw__hr_clock {
	PW_HR_MONO = 0,
	PW_HR_REAL = 1,
	PW_HR_BOOT = 2,
	PW_HR_NCLOCKS = 3,
};

/* pw_hrtimer.pw_flags */
#define PW__HF_CPU_MASK    PW__CPU_MASK /* 0x00000fffu: bits 0..11 */
#define PW__HF_CLOCK_SHIFT 12
#define PW__HF_CLOCK_MASK  0x00003000u
#define PW__HF_QUEUED      (1u << 14)
#define PW__HF_MIGRATING   (1u << 15)
#define PW__HF_MAGIC_MASK  0xf8000000u
#define PW__HF_MAGIC       0xa8000000u

struct pw_runtime;

struct pw__hrbase {
	struct pw__lock lock;
	uint32_t cpu;
	struct pw__runwait run;                 /* the hrtimer whose callback runs */
	struct pw__hheap queue[PW_HR_NCLOCKS];  /* by hard expiry, FIFO on ties */
	uint64_t count;                         /* queued timers */
} __attribute__((aligned(PW_CACHELINE)));

void pw__hrbase_init(struct pw__hrbase *hb, unsigned cpu);
void pw__hrbase_destroy(struct pw__hrbase *hb);

/* Offsets of the clocks from the runtime's monotonic clock, now; on the
 * real clock only for the clocks in the bit mask @need (others: 0). */
void pw__hr_offsets(const struct pw_runtime *rt, int64_t off[PW_HR_NCLOCKS], unsigned need);

/* Earliest hard expiry on @hb, as a monotonic-clock time (pw_now_ns()
 * scale), or UINT64_MAX.  Context: any thread; takes @hb's lock. */
uint64_t pw__hrbase_next_ns(const struct pw_runtime *rt, struct pw__hrbase *hb);

/* Run @hb's timers whose window has opened at monotonic time @now.
 * Context: the holder of the CPU's run guard.  Return: callbacks run. */
int pw__hrbase_run(struct pw_runtime *rt, struct pw__hrbase *hb, uint64_t now);

/* Invariants of @hb, under its lock.  Return: 0 or -EFAULT. */
int pw__hrbase_check(struct pw__hrbase *hb);

#endif /* PW_TIME_HRBASE_H */
