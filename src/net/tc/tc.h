/* SPDX-License-Identifier: MIT */
/*
 * tc's side of the net layer (src/net/tc/, as iproute2's tc/): what its
 * files share.  The command context (a request's extack, the flags, the
 * psched tick arithmetic), the error helpers with iproute2's and the
 * kernel's messages, a qdisc kind's tc side (struct pw__qdisc_util, as
 * iproute2's qdisc_util) and their registry, the lookups and printers the
 * commands share, and the two objects (`tc qdisc`, `tc class`).
 *
 * Layering: tc's side calls the kernel side (internal.h: devices, the
 * qdisc core, the kinds' structures) and never the other way round.
 * Context: the thread running a tc command; the lookups and walks need
 * the layer's cfg_lock held (tc.c takes it per command).
 */
#ifndef PW_NET_TC_TC_H
#define PW_NET_TC_TC_H

#include "../internal.h"
#include "tc_print.h"
#include "tc_util.h"

/* ------------------------------------------------------------ context */

/* The context a tc command runs in.  @ext is what the kernel side sees of
 * the request (device, kind, messages, dropped packets); errors are
 * collected in its buffer as iproute2 prints them (one per line). */
struct pw__tc_ctx {
	struct pw__extack ext;
	unsigned flags;            /* PW_TC_* */
	struct pw__tc_core core;   /* psched tick arithmetic */
	const char *confine;       /* pw_tc_dev(): the one device it may act on */
};

/* The device a command's `dev WORD` names, the word as tc's quoting left
 * it: WORD itself, or under pw_tc_dev() the confining device, unless WORD
 * is another device of the runtime (then NULL, -EPERM in *@rc, said).
 * Context: the command's thread, cfg_lock held for a modification.
 * Return: the name to look up; NULL on refusal. */
const char *pw__tc_dev_word(struct pw__tc_ctx *tc, const char *word, int *rc);

/* A word that would open a file (netem's `distribution PATH`, trace's
 * `file`), refused under PW_TC_NO_FILES: said naming @what, -EPERM.
 * Return: 0 when files may be read; -EPERM. */
int pw__tc_no_files(struct pw__tc_ctx *tc, const char *what);

/* netlink request flags, as tc sends them (NLM_F_CREATE, _EXCL, _REPLACE) */
#define PW__TC_F_CREATE  0x1
#define PW__TC_F_EXCL    0x2
#define PW__TC_F_REPLACE 0x4

/* Append a line to the command's error text.  Return: none. */
void pw__tc_err(struct pw__tc_ctx *tc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The kernel's extack message, as tc prints it. */
#define PW__TC_KERR(tc, msg) pw__tc_err((tc), "Error: %s.", (msg))

/* Errors as iproute2 prints them; each returns the errno to return. */
int pw__tc_rtnl_err(struct pw__tc_ctx *tc, int rc); /* "RTNETLINK answers: ..." unless said */
int pw__tc_incomplete(struct pw__tc_ctx *tc);
int pw__tc_invarg(struct pw__tc_ctx *tc, const char *msg, const char *arg);
int pw__tc_duparg(struct pw__tc_ctx *tc, const char *key, const char *arg);

/* "estimator INTERVAL TIME_CONSTANT" as iproute2's tc_setup_estimator():
 * the kernel's interval code and ewma_log (pw__est_start()).
 * Return: 0, -EINVAL (with the error printed). */
int pw__est_parse(struct pw__tc_ctx *tc, const char *interval, const char *tconst,
		  int8_t *interval_code, uint8_t *ewma_log);

/* ------------------------------------------------------ a kind's tc side */

/*
 * A qdisc kind's tc side (iproute2's struct qdisc_util): its words parsed
 * into the options struct its kernel side's init/change take, and its
 * show/-s/-d text.  Found by the kind's id (pw__qdisc_util_get()).
 * parse: the words after KIND into a zeroed opt_size struct (defaults
 * set); errors through pw__tc_err(); tc thread, cfg_lock held, no root
 * lock; tc->ext.dev is the named device or NULL.  opt_free: what the opt
 * struct still owns (tables).  print: the options after "qdisc KIND H:
 * root|parent P: [refcnt N] " (root lock held); print_xstats: tc -s's
 * kind-specific lines (optional).  The class_* members are the same for
 * tc class (iproute2's parse_copt / print_copt, and htb's class xstats).
 */
struct pw__qdisc_util {
	const char *id;
	size_t opt_size;
	unsigned flags;
#define PW__QU_OPTS_ALWAYS 0x1 /* tc sends the options even with no words
				 * (netem, htb): change() gets them */
	int (*parse)(struct pw__tc_ctx *tc, int argc, char **argv, void *opt);
	void (*opt_free)(void *opt);
	void (*print)(struct pw__qdisc *q, struct pw__out *o);
	void (*print_xstats)(struct pw__qdisc *q, struct pw__out *o);
	size_t class_opt_size;
	int (*class_parse)(struct pw__tc_ctx *tc, int argc, char **argv, void *copt);
	void (*class_print)(struct pw__qdisc *q, unsigned long cl, struct pw__out *o);
	void (*class_print_xstats)(struct pw__qdisc *q, unsigned long cl, struct pw__out *o);
};

extern const struct pw__qdisc_util pw__pfifo_util, pw__bfifo_util, pw__pfifo_head_drop_util,
	pw__pfifo_fast_util, pw__mq_util, pw__netem_util, pw__tbf_util, pw__htb_util,
	pw__fq_util;
extern const struct pw__qdisc_util pw__trace_util;

/* The tc side of kind @id, or NULL (tc.c).  Return: the util or NULL. */
const struct pw__qdisc_util *pw__qdisc_util_get(const char *id);
/* Whether iproute2 has class options (a parse_copt) for kind @id, also
 * for kinds pinwheel has no kernel side for (tc class add's message
 * differs).  Return: true or false. */
bool pw__qdisc_util_has_classes(const char *id);

/* ------------------------------------------------- the commands' pieces */

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
/* The devices in creation order (the kernel's ifindex order) in a malloc'd
 * *@out (free it); their count.  *@out is NULL if that allocation failed. */
unsigned pw__tc_devs_in_order(struct pw__net *net, struct pw_netdev ***out);

/* What a show command selects (iproute2's filter_* variables). */
struct pw__tc_show_filter {
	uint32_t handle;   /* 0: any */
	uint32_t parent;   /* 0: any (iproute2's filter_parent) */
	bool all_devs;     /* print "dev NAME " */
	bool invisible;    /* qdisc show ... invisible */
};

struct pw__tc_show_arg {
	struct pw__tc_ctx *tc;
	struct pw__out *o;
	const struct pw__tc_show_filter *f;
	uint32_t classid;  /* class show: 0 any */
	uint32_t parent;   /* class show: 0 any */
};

/* The objects: `tc qdisc ...` (tc_qdisc.c) and `tc class ...` (tc_class.c). */
int pw__tc_do_qdisc(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o);
int pw__tc_do_class(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o);

#endif /* PW_NET_TC_TC_H */
