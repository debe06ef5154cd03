/* SPDX-License-Identifier: MIT */
/*
 * The options of pfifo, bfifo and pfifo_head_drop as tc sends them (the
 * kernel's struct tc_fifo_qopt): shared by sched/fifo.c, which applies
 * them, and tc/q_fifo.c, which parses them.  No functions, no locks.
 */
#ifndef PW_NET_SCHED_FIFO_H
#define PW_NET_SCHED_FIFO_H

#include "../internal.h"

struct fifo_opt {
	uint32_t limit;
	bool has_limit; /* false: the default, from the device's txqueuelen */
};

#endif /* PW_NET_SCHED_FIFO_H */
