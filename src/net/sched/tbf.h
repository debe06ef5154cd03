/* SPDX-License-Identifier: MIT */
/*
 * What tbf's two halves share (sched/tbf.c, the kernel side; tc/q_tbf.c,
 * tc's side): the options tc sends, the qdisc's private state that show
 * prints, and the child the tc side builds ahead of a change (tbf.c's
 * essay).  Threads and locks: as tbf.c says.
 */
#ifndef PW_NET_SCHED_TBF_H
#define PW_NET_SCHED_TBF_H

#include "psched.h"

#define TBF_NS2TICKS(ns) ((ns) >> 6)   /* PSCHED_SHIFT 6 */
#define TBF_TICKS2NS(t) ((uint64_t)(t) << 6)

struct tbf_opt {
	struct pw__tc_ratespec rate, peakrate;
	uint64_t rate64, prate64;
	uint32_t limit, buffer, mtu;  /* buffer, mtu: psched ticks, as tc sends */
	uint32_t burst, pburst;        /* TCA_TBF_BURST / TCA_TBF_PBURST, bytes */
	struct pw__qdisc *child;       /* built by parse when change may need one */
};

struct tbf_priv {
	uint32_t limit, max_size;
	int64_t buffer, mtu;           /* ns */
	struct pw__psched_ratecfg rate, peak;
	int64_t tokens, ptokens;       /* ns */
	int64_t t_c;                   /* the last dequeue's clock, ns */
	struct pw__qdisc *child;       /* the bfifo, or NULL (limit 0) */
	struct pw__watchdog wd;
};

/* A bfifo of @limit bytes for queue @txq under @parent (the kernel's
 * fifo_create_dflt()), hashed invisible.  Context: the tc thread, cfg_lock
 * held, no root lock.  Return: the qdisc, or NULL on -ENOMEM. */
struct pw__qdisc *pw__tbf_child_create(struct pw_netdev *dev, unsigned txq, uint32_t parent,
				       uint32_t limit);
/* Free a child that was never attached (NULL: nothing).  Context: as
 * pw__tbf_child_create().  Return: none. */
void pw__tbf_child_free(struct pw__qdisc *c);

#endif /* PW_NET_SCHED_TBF_H */
