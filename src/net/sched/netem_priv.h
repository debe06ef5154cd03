/* SPDX-License-Identifier: MIT */
/*
 * netem's state and option structures, shared by its data path (netem.c)
 * and its tc side (tc/q_netem.c: iproute2 q_netem.c's parsing and printing); for
 * those two files only.  Every field of struct netem_priv is under the
 * root lock of the qdisc's queue (netem.c's essay).
 */
#ifndef PW_NET_SCHED_NETEM_PRIV_H
#define PW_NET_SCHED_NETEM_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "../internal.h"
#include "netem.h"
#include "tfifo.h"

#ifndef PW_NETEM_TC_TIME64
#define PW_NETEM_TC_TIME64 0
#endif

/* The kernel's struct rnd_state: L'Ecuyer's LFSR113 (lib/random32.c). */
struct netem_rnd {
	uint32_t s1, s2, s3, s4;
};

/* --------------------------------------------------------------- state */

struct crnd {
	uint32_t last, rho;
};

enum { CLG_RANDOM, CLG_4_STATES, CLG_GILB_ELL };
enum { TX_IN_GAP_PERIOD = 1, TX_IN_BURST_PERIOD, LOST_IN_GAP_PERIOD, LOST_IN_BURST_PERIOD };
enum { GOOD_STATE = 1, BAD_STATE };

/* struct tc_netem_slot */
struct netem_slot_cfg {
	int64_t min_delay, max_delay;
	int32_t max_packets, max_bytes;
	int64_t dist_delay, dist_jitter;
};

struct netem_priv {
	struct pw__watchdog wd;
	/* the queue */
	struct pw__pktq rq;              /* reordered: the kernel's sch->q */
	struct pw__tfifo tf;             /* the time-ordered queue (tfifo.c) */
	/* parameters, as the kernel's netem_sched_data */
	int64_t latency, jitter;
	uint32_t loss, ecn, limit, counter, gap, duplicate, reorder, corrupt;
	uint64_t rate;
	int32_t packet_overhead;
	uint32_t cell_size;
	int32_t cell_overhead;
	struct crnd delay_cor, loss_cor, dup_cor, reorder_cor, corrupt_cor;
	uint64_t seed;
	bool seed_given;
	struct netem_rnd prng;  /* the seeded prandom_u32_state() stream */
	struct netem_rnd aux;   /* get_random_u32() (see the departures) */
	int16_t *delay_dist;
	unsigned delay_dist_n;
	int16_t *slot_dist;
	unsigned slot_dist_n;
	int loss_model;
	struct {
		uint8_t state;
		uint32_t a1, a2, a3, a4, a5;
	} clg;
	struct netem_slot_cfg slot_config;
	struct {
		uint64_t slot_next;
		int32_t packets_left, bytes_left;
	} slot;
	uint64_t dup_failed; /* relaxed atomic */
	/* `inorder` (pinwheel's extension, netem.c's essay): a packet's
	 * time_to_send is at least the previous one's (inorder_last); held
	 * counts the packets that rule delayed (relaxed atomic: tc reads it) */
	bool inorder;
	uint64_t inorder_last;
	uint64_t inorder_held;
};

/* ------------------------------------------------------- the options */

enum { LOSS_UNSPEC, LOSS_GI, LOSS_GE };

/* What tc sends: the netlink attributes of a netem qdisc, parsed. */
struct netem_opt {
	/* struct tc_netem_qopt */
	uint32_t latency, limit, loss, gap, duplicate, jitter;
	bool has_latency64, has_jitter64;
	int64_t latency64, jitter64;
	bool has_corr;
	uint32_t delay_corr, loss_corr, dup_corr;
	bool has_reorder;
	uint32_t reorder_prob, reorder_corr;
	bool has_corrupt;
	uint32_t corrupt_prob, corrupt_corr;
	bool has_ecn;
	int loss_type;
	uint32_t p13, p31, p32, p23, p14; /* gimodel */
	uint32_t ge_p, ge_r, ge_h, ge_k1; /* gemodel (h as the kernel wants it) */
	bool has_rate, has_rate64;
	uint32_t rate;
	uint64_t rate64;
	int32_t packet_overhead;
	uint32_t cell_size;
	int32_t cell_overhead;
	bool has_slot;
	struct netem_slot_cfg slot;
	bool has_seed;
	uint64_t seed;
	int16_t *dist;
	unsigned dist_n;
	int16_t *slot_dist;
	unsigned slot_dist_n;
	bool inorder; /* pinwheel's `inorder` (sent always: absent = off) */
};


#endif
