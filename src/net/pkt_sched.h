/* SPDX-License-Identifier: MIT */
/*
 * What the kernel side and tc's side of the net layer agree on, as the
 * kernel's include/uapi/linux/pkt_sched.h: handle arithmetic, the link
 * layers, struct tc_ratespec and tc's time unit.  Constants and one plain
 * structure: no functions, no locks, any thread.  Included by internal.h
 * (the kernel side) and tc/ (the command side).
 */
#ifndef PW_NET_PKT_SCHED_H
#define PW_NET_PKT_SCHED_H

#include <stdint.h>

/* --------------------------------------------------------- handles */

#define PW_TC_H_MAJ_MASK 0xFFFF0000U
#define PW_TC_H_MIN_MASK 0x0000FFFFU
#define PW_TC_H_MAJ(h) ((uint32_t)(h) & PW_TC_H_MAJ_MASK)
#define PW_TC_H_MIN(h) ((uint32_t)(h) & PW_TC_H_MIN_MASK)
#define PW_TC_H_MAKE(maj, min) (((uint32_t)(maj) & PW_TC_H_MAJ_MASK) | ((uint32_t)(min) & PW_TC_H_MIN_MASK))
#define PW_TC_H_UNSPEC 0U
#define PW_TC_H_ROOT 0xFFFFFFFFU
#define PW_TC_H_INGRESS 0xFFFFFFF1U
#define PW_TC_H_CLSACT PW_TC_H_INGRESS

#define PW_TIME_UNITS_PER_SEC 1000000 /* tc's time unit: the microsecond */

enum pw__linklayer {
	PW_LINKLAYER_UNSPEC = 0,
	PW_LINKLAYER_ETHERNET = 1,
	PW_LINKLAYER_ATM = 2,
};
#define PW_TC_LINKLAYER_MASK 0x0F

/* linux's struct tc_ratespec, as tc fills it. */
struct pw__tc_ratespec {
	unsigned char cell_log;
	uint8_t linklayer;
	unsigned short overhead;
	short cell_align;
	unsigned short mpu;
	uint32_t rate; /* bytes/s, ~0U when the rate needs 64 bits */
};

/* netem's distribution tables: values are scaled by this (the kernel's
 * NETEM_DIST_SCALE); a table holds at most PW_NETEM_DIST_MAX values. */
#define PW_NETEM_DIST_SCALE 8192

#endif /* PW_NET_PKT_SCHED_H */
