/* SPDX-License-Identifier: MIT */
/*
 * htb's structures, shared by its qdisc (htb.c: the classes, the
 * borrowing tree, the data path, class changes) and its tc side (tc/q_htb.c:
 * q_htb.c's parsing and printing).  Design, invariants and locking: htb.c.
 * For src/net/sched only.
 */
#ifndef PW_NET_SCHED_HTB_H
#define PW_NET_SCHED_HTB_H

#include "psched.h"

#include <string.h>

#define HTB_MAXDEPTH 8
#define HTB_NUMPRIO 8
#define HTB_VER 0x30011 /* the kernel's: printed "ver 3.17" */
#define HTB_HZ 1000000000u /* tc's get_hz() on a high-resolution kernel */
#define NSEC_PER_SEC 1000000000ll

#define HTB_NS2TICKS(ns) ((ns) >> 6)
#define HTB_TICKS2NS(t) ((int64_t)((uint64_t)(t) << 6))

enum htb_cmode { HTB_CANT_SEND, HTB_MAY_BORROW, HTB_CAN_SEND };

struct htb_class;

/* A node of a sorted intrusive list (row, feed or wait queue); a list is
 * a sentinel node.  On a list exactly when prev != NULL. */
struct htb_link {
	struct htb_link *prev, *next;
	struct htb_class *cl;
};

/* A row (level) or feed (inner class) for one prio, with its round-robin
 * pointer (NULL: none) and the classid the pointer was on when its class
 * left (the kernel's last_ptr_id). */
struct htb_prio {
	struct htb_link set;
	struct htb_link *ptr;
	uint32_t last_ptr_id;
};

struct htb_class {
	uint32_t classid;
	struct htb_class *hnext;       /* the class hash bucket */
	struct pw__psched_ratecfg rate, ceil;
	int64_t buffer, cbuffer, mbuffer; /* ns */
	uint32_t prio;
	int quantum;
	int level;
	unsigned children;
	struct htb_class *parent;
	uint64_t bytes, packets;       /* bstats */
	uint32_t lends, borrows, giants; /* xstats */
	int64_t tokens, ctokens, t_c;  /* ns */
	int deficit[HTB_MAXDEPTH];     /* leaf */
	struct pw__qdisc *leafq;       /* leaf: its qdisc (NULL: noop) */
	struct htb_prio clprio[HTB_NUMPRIO]; /* inner: the feeds */
	int64_t pq_key;
	int prio_activity;
	enum htb_cmode cmode;
	struct htb_link pq_node;
	struct htb_link node[HTB_NUMPRIO];
	uint32_t drops, overlimits;
};

struct htb_level {
	struct htb_link wait_pq;
	struct htb_prio hprio[HTB_NUMPRIO];
};

struct htb_priv {
	struct htb_class **hash;
	unsigned hashsize, hashelems;
	uint32_t defcls;
	int rate2quantum;
	int direct_qlen;
	struct pw__pktq direct;
	uint32_t direct_pkts;
	struct pw__qdisc *sch;         /* htb itself: its overlimits */
	struct pw__watchdog wd;
	int64_t now;
	int64_t near_ev_cache[HTB_MAXDEPTH];
	int row_mask[HTB_MAXDEPTH];
	struct htb_level hlevel[HTB_MAXDEPTH];
};

/* The qdisc options as tc sends them (TCA_HTB_INIT, TCA_HTB_DIRECT_QLEN). */
struct htb_opt {
	uint32_t rate2quantum, defcls, version;
	uint32_t direct_qlen;
	bool has_direct_qlen, offload;
};

/* A class's options (TCA_HTB_PARMS, RATE64, CEIL64). */
struct htb_copt {
	struct pw__tc_ratespec rate, ceil;
	uint32_t buffer, cbuffer, quantum, prio;
	uint64_t rate64, ceil64;
};

/* ------------------------------------------------------------ htb.c and htb_class.c only */

/* The class tree (htb.c): sorted lists, the class hash (under cfg_lock
 * and the root lock to change it, either to read it), a class taken out
 * of every row and feed (root lock held). */
void pw__htb_list_init(struct htb_link *h);
void pw__htb_link_erase(struct htb_link *n);
struct htb_class *pw__htb_find(struct htb_priv *h, uint32_t classid);
void pw__htb_hash_insert(struct htb_priv *h, struct htb_class *cl);
void pw__htb_hash_remove(struct htb_priv *h, struct htb_class *cl);
void pw__htb_hash_grow(struct pw__qdisc *q, struct htb_priv *h);
void pw__htb_deactivate(struct htb_priv *h, struct htb_class *cl);

/* The configuration (htb_class.c), for htb's ops: init (Return: 0 or a
 * negative errno, @ext says why), destroy, the class ops.  The tc thread,
 * cfg_lock held. */
int pw__htb_init(struct pw__qdisc *q, void *optp, struct pw__extack *ext);
void pw__htb_destroy(struct pw__qdisc *q);
extern const struct pw__class_ops pw__htb_class_ops;

#endif /* PW_NET_SCHED_HTB_H */
