/* SPDX-License-Identifier: MIT */
/*
 * fq's structures, shared by its qdisc (fq.c) and its tc side (tc/q_fq.c).
 * Design, invariants and locking: fq.c.  For src/net/sched only.
 */
#ifndef PW_NET_SCHED_FQ_H
#define PW_NET_SCHED_FQ_H

#include "../internal.h"
#include "fq_throttle.h"

#define FQ_BANDS 3
#define FQ_PRIO_MAX 15          /* TC_PRIO_MAX */
#define FQ_MIN_WEIGHT 16384
#define FQ_PSCHED_MTU 1514      /* psched_mtu() of an Ethernet device */

/* A flow (the kernel's struct fq_flow). */
struct fq_flow {
	struct fq_flow *hnext;      /* its bucket chain */
	uintptr_t key;              /* the socket pointer, or (hash << 1) | 1 */
	struct pw_pkt *head, *tail; /* packets in time_to_send order */
	struct pw_pkt *ooo;         /* earlier-stamped arrivals, sorted (the kernel's t_root) */
	uint64_t age;               /* jiffies when it became detached */
	uint32_t socket_hash;       /* sk_hash when the flow was made */
	int qlen;
	int credit;
	int band;
	bool detached;              /* on no list, no packets */
	bool throttled;             /* in the throttled set */
	struct fq_flow *next;       /* its round-robin list */
	uint64_t time_next_packet;
	struct pw__fqt_node tn;     /* its entry in the throttled set */
};

struct fq_flow_head {
	struct fq_flow *first, *last;
};

struct fq_band {
	struct fq_flow_head new_flows, old_flows;
	int credit;
	int quantum; /* the band's weight */
};

struct fq_priv {
	/* configuration */
	uint32_t quantum, initial_quantum;
	uint64_t flow_refill_delay;   /* jiffies */
	uint32_t flow_plimit;
	uint64_t flow_max_rate;       /* bytes/s, UINT64_MAX none */
	uint64_t ce_threshold, horizon; /* ns */
	uint32_t orphan_mask, low_rate_threshold;
	uint8_t rate_enable, horizon_drop;
	uint8_t prio2band[FQ_PRIO_MAX + 1];
	uint32_t timer_slack;         /* ns */
	unsigned log;                 /* 2^log bucket chains */
	struct fq_flow **root;
	unsigned hz;
	uint64_t ns_per_jiffy;
	/* state */
	unsigned band_nr;
	struct fq_band band[FQ_BANDS];
	struct fq_flow internal;      /* the fast path's queue */
	struct pw_pkt *peeked;        /* taken out by peek, counted in qlen */
	uint64_t time_next_delayed_flow;
	uint64_t unthrottle_latency_ns;
	uint32_t band_pkt_count[FQ_BANDS];
	uint32_t flows, inactive_flows, throttled_flows;
	struct pw__watchdog wd;
	/* statistics */
	uint64_t stat_throttled, stat_gc_flows, stat_fastpath_packets;
	uint64_t stat_band_drops[FQ_BANDS];
	uint64_t stat_ce_mark, stat_horizon_drops, stat_horizon_caps;
	uint64_t stat_flows_plimit, stat_pkts_too_long, stat_allocation_errors;
	/* the throttled flows by (time_next_packet, throttle order) */
	struct pw__fqt throttled;
};

/* What tc sends: the TCA_FQ_* attributes present (set) and their values. */
enum {
	FQ_SET_PLIMIT = 1u << 0,
	FQ_SET_FLOW_PLIMIT = 1u << 1,
	FQ_SET_QUANTUM = 1u << 2,
	FQ_SET_INITIAL_QUANTUM = 1u << 3,
	FQ_SET_PACING = 1u << 4,
	FQ_SET_MAXRATE = 1u << 5,
	FQ_SET_LOW_RATE = 1u << 6,
	FQ_SET_DEFRATE = 1u << 7,
	FQ_SET_REFILL = 1u << 8,
	FQ_SET_ORPHAN_MASK = 1u << 9,
	FQ_SET_CE = 1u << 10,
	FQ_SET_SLACK = 1u << 11,
	FQ_SET_HORIZON = 1u << 12,
	FQ_SET_HORIZON_DROP = 1u << 13,
	FQ_SET_PRIOMAP = 1u << 14,
	FQ_SET_WEIGHTS = 1u << 15,
	FQ_SET_BUCKETS = 1u << 16,
};

struct fq_opt {
	unsigned set;
	uint32_t plimit, flow_plimit, quantum, initial_quantum;
	uint32_t maxrate, low_rate_threshold, defrate;
	uint32_t refill_delay;   /* us */
	uint32_t orphan_mask;
	uint32_t ce_threshold;   /* us */
	uint32_t timer_slack;    /* ns */
	uint32_t horizon;        /* us */
	uint32_t buckets_log;
	uint32_t pacing;
	uint8_t horizon_drop;
	int bands;
	uint8_t priomap[FQ_PRIO_MAX + 1];
	int32_t weights[FQ_BANDS];
	/* the bucket array for buckets_log, built by parse (on change) or
	 * init; after a resize, the old array (opt_free frees either) */
	struct fq_flow **root;
	unsigned root_log;
};

/* The kernel's struct tc_fq_qd_stats. */
struct pw__fq_xstats {
	uint64_t gc_flows, highprio_packets, fastpath_packets, tcp_retrans, throttled;
	uint64_t flows_plimit, pkts_too_long, allocation_errors;
	int64_t time_next_delayed_flow;
	uint32_t flows, inactive_flows, throttled_flows, unthrottle_latency_ns;
	uint64_t ce_mark, horizon_drops, horizon_caps;
	uint64_t band_drops[FQ_BANDS];
	uint32_t band_pkt_count[FQ_BANDS];
};

/* usecs_to_jiffies() / jiffies_to_usecs() at @hz, rounding up as the
 * kernel's do. */
static inline uint64_t fq_usecs_to_jiffies(uint32_t us, unsigned hz)
{
	if ((int32_t)us < 0)
		return (uint64_t)(~0ul >> 1) - 1; /* MAX_JIFFY_OFFSET */
	return ((uint64_t)us * hz + 999999) / 1000000;
}

static inline uint32_t fq_jiffies_to_usecs(uint64_t j, unsigned hz)
{
	return (uint32_t)((j * 1000000 + hz - 1) / hz);
}

/* fq.c */
void pw__fq_xstats(struct pw__qdisc *sch, struct pw__fq_xstats *st);

#endif /* PW_NET_SCHED_FQ_H */
