/* SPDX-License-Identifier: MIT */
/*
 * The tc command line's shared pieces (tc.c), for tc.c, tc_qdisc.c and
 * tc_class.c only: the request flags, the error helpers with iproute2's
 * and the kernel's messages, device and class lookups, the statistics
 * lines, and the kernel's dump order.  Context: the tc thread; the
 * lookups and walks need the layer's cfg_lock held.
 */
#ifndef PW_NET_TC_H
#define PW_NET_TC_H

#include "internal.h"

/* netlink request flags, as tc sends them */
#define F_CREATE  0x1
#define F_EXCL    0x2
#define F_REPLACE 0x4

/* The kernel's extack message, as tc prints it. */
#define KERR(tc, msg) pw__tc_err((tc), "Error: %s.", (msg))

/* Errors as iproute2 prints them; each returns the errno to return. */
int pw__tc_rtnl_err(struct pw__tc_ctx *tc, int rc); /* "RTNETLINK answers: ..." unless said */
int pw__tc_incomplete(struct pw__tc_ctx *tc);
int pw__tc_invarg(struct pw__tc_ctx *tc, const char *msg, const char *arg);
int pw__tc_duparg(struct pw__tc_ctx *tc, const char *key, const char *arg);

/* The device named @name, or NULL.  cfg_lock held. */
struct pw_netdev *pw__tc_dev_lookup(struct pw__net *net, const char *name);
/* The kernel's qdisc_leaf(): the qdisc under class @classid of @p (and the
 * class in *clp), with its extack errors. */
int pw__tc_qdisc_leaf(struct pw__tc_ctx *tc, struct pw__qdisc *p, uint32_t classid,
		      struct pw__qdisc **leaf, unsigned long *clp);
/* tc -s's lines for @st (without the final newline). */
void pw__tc_print_stats(struct pw__out *o, const struct pw_qdisc_stats *st);
/* Every qdisc of @dev in the kernel's dump order (the root, then the
 * handle hash). */
void pw__tc_for_each_qdisc(struct pw_netdev *dev,
			   void (*fn)(struct pw_netdev *, struct pw__qdisc *, void *), void *arg);
/* The devices in creation order (the kernel's ifindex order), in a fresh
 * array the caller frees; their count (0 also when out of memory). */
/* The devices in creation order in a malloc'd *@out (free it); their count.
 * *@out is NULL if that allocation failed. */
unsigned pw__tc_devs_in_order(struct pw__net *net, struct pw_netdev ***out);

struct show_filter {
	uint32_t handle;   /* 0: any */
	uint32_t parent;   /* 0: any (iproute2's filter_parent) */
	bool all_devs;     /* print "dev NAME " */
	bool invisible;    /* qdisc show ... invisible */
};

struct show_arg {
	struct pw__tc_ctx *tc;
	struct pw__out *o;
	const struct show_filter *f;
	uint32_t classid;  /* class show: 0 any */
	uint32_t parent;   /* class show: 0 any */
};

/* The objects: `tc qdisc ...` (tc_qdisc.c) and `tc class ...` (tc_class.c). */
int pw__tc_do_qdisc(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o);
int pw__tc_do_class(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o);

#endif /* PW_NET_TC_H */
