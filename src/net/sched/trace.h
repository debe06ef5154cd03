/* SPDX-License-Identifier: MIT */
/*
 * What the trace kind's two halves share (sched/trace.c, the kernel side;
 * tc/q_trace.c, tc's side): the options tc sends (the parsed trace, as a
 * netlink attribute would carry it, never a path the kernel side would
 * open), the limits both check, and the qdisc's private state that show
 * prints.  Threads and locks: as trace.c's essay says.
 */
#ifndef PW_NET_SCHED_TRACE_H
#define PW_NET_SCHED_TRACE_H

#include <stdint.h>

#include "../internal.h"

#define PW_TRACE_OPP_BYTES 1504u          /* one delivery opportunity (Mahimahi's) */
#define PW_TRACE_LIMIT_DEFAULT 1000u      /* packets, when `limit` is not given */
#define PW_TRACE_LIMIT_MAX 1000000u       /* the largest `limit` accepted */
#define PW_TRACE_LINES_MAX (1u << 24)     /* the most lines a trace may hold */

/* What tc sends: the trace's lines (milliseconds from the trace's start,
 * nondecreasing, at least one, the last > 0: the period), the limit, and
 * the label show prints (a file as the user wrote its path, or the `name`
 * of a trace given as text: a label only, never opened).  @ms NULL: no
 * trace sent (a change of the limit alone).  The kernel side takes @ms and
 * @name over (init/change swap them with its own; what is left here is
 * freed by the tc side's opt_free). */
struct trace_opt {
	uint32_t *ms;
	uint32_t n;
	uint32_t limit;      /* 0: not given */
	char *name;          /* NULL: none (a text without `name`) */
	int text;            /* given inline (`text`), not as a file */
};

struct trace_priv {
	struct pw__pktq q;             /* FIFO; time_to_send nondecreasing */
	struct pw__watchdog wd;
	uint32_t *ms;                  /* the trace's lines */
	uint32_t n;
	uint64_t period_ns;            /* the last line, in ns */
	char *name;                    /* the label show prints (NULL: none) */
	int text;                      /* the trace was given as text */
	uint64_t epoch_ns;             /* the trace's time 0: creation or change */
	/* the link's position: the opportunity that carried the last byte
	 * of the last packet accepted, and its bytes still unused */
	uint64_t cur_k;
	uint32_t cur_left;
	int have_cur;
};

/*
 * The time of delivery opportunity @k (0-based, counted through the
 * trace's loops) of a trace of @n lines @ms with period @period_ns that
 * started at @epoch_ns; PW_KTIME_MAX, the layer's "never" (hrtimers clamp
 * there), for one beyond it (a long period with a deep backlog:
 * 4,294,967,295 ms lines reach it after some 2,100 loops).
 * Context: any thread; pure.  Return: ns, at most PW_KTIME_MAX.
 */
static inline uint64_t pw__trace_opp_ns(const uint32_t *ms, uint32_t n, uint64_t period_ns,
					uint64_t epoch_ns, uint64_t k)
{
	uint64_t loops = k / n, off = (uint64_t)ms[k % n] * 1000000u, t;
	if (epoch_ns >= PW_KTIME_MAX || (loops && period_ns > PW_KTIME_MAX / loops))
		return PW_KTIME_MAX;
	t = loops * period_ns;
	if (t > PW_KTIME_MAX - off || t + off > PW_KTIME_MAX - epoch_ns)
		return PW_KTIME_MAX;
	return epoch_ns + t + off;
}

#endif /* PW_NET_SCHED_TRACE_H */
