/* SPDX-License-Identifier: MIT */
/*
 * What pfifo_fast's two halves share (sched/pfifo_fast.c, tc/q_pfifo_fast.c):
 * its bands and the fixed priomap show prints.  Constants: no locks.
 */
#ifndef PW_NET_SCHED_PFIFO_FAST_H
#define PW_NET_SCHED_PFIFO_FAST_H

#include "../internal.h"

#define PW__PFIFO_FAST_BANDS 3
#define PW__TC_PRIO_MAX 15

/* TC_PRIO_* -> band, the kernel's sch_generic.c prio2band */
extern const uint8_t pw__pfifo_fast_prio2band[PW__TC_PRIO_MAX + 1];

#endif /* PW_NET_SCHED_PFIFO_FAST_H */
