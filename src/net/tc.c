/* SPDX-License-Identifier: MIT */
/*
 * pw_tc(): one tc command line against a runtime's devices.  The command
 * half of iproute2's tc_qdisc.c / tc_class.c (the words, their order, the
 * messages tc itself prints) joined to the kernel half of sch_api.c
 * (tc_modify_qdisc, tc_get_qdisc, the dumps: which qdisc a command finds,
 * whether it changes it or builds a new one, and the extack messages), so
 * that a script gets from pinwheel what it gets from `tc` on Linux.
 *
 * What a command does.  `qdisc add|change|replace|link|del` parses like
 * tc: dev, handle, root / parent, estimator, then the kind and the kind's
 * own words (its ops->parse, which fills an option struct and reports its
 * errors as q_KIND.c would).  Only then is the device looked up ("Cannot
 * find device"), and the request goes through the kernel's decision:
 * add = NLM_F_CREATE|NLM_F_EXCL, change = no flag, replace =
 * NLM_F_CREATE|NLM_F_REPLACE, link = NLM_F_REPLACE.  The decision rules
 * follow what the live kernel of these VMs (6.18) does, checked with
 * ../shared/tools/kernel-tc; notably a `change` or `add` naming a kind
 * other than the existing root's, without a handle, builds a new qdisc
 * and grafts it, as that kernel does.  `show` prints the root then the
 * device's handle hash (the kernel's dump order), `class show` the
 * classes of each qdisc in the same order (without dev: none, as the
 * kernel dumps nothing for ifindex 0).  `class add|change|replace|del`
 * parse as tc_class_modify() and make tc_ctl_tclass()'s lookups; no
 * pinwheel class can be created, changed or deleted (mq's are fixed), so
 * they end in that kernel's errors for mq.
 *
 * Errors.  Every failure returns a negative errno with the message tc
 * would print in the error buffer: the kernel's extack messages as
 * "Error: <message>.", iproute2's own ("Unknown qdisc ...", "Illegal ...")
 * verbatim, and "RTNETLINK answers: <strerror>" where the kernel gives no
 * message.  A failed command changes nothing: options are parsed and
 * every check made before the tree is touched, and a qdisc that fails to
 * initialise is freed before it is grafted.  Departure: where tc exits at
 * once (invarg(), duparg(), an incomplete command line), pw_tc returns the
 * error like any other, so a batch run with -force goes on.
 *
 * Threads and locks: any thread.  A command holds the layer's cfg_lock
 * from the device lookup to the end (so commands are serialised against
 * each other and against device create/destroy); the tree code it calls
 * takes root locks inside it (cfg_lock > root lock).  Parsing takes no
 * lock.  Costs: a show walks the device's qdiscs and takes each root lock
 * once for its statistics.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_MAXARGS 512

/* netlink request flags, as tc sends them */
#define F_CREATE  0x1
#define F_EXCL    0x2
#define F_REPLACE 0x4

/* ------------------------------------------------------------- errors */

void pw__tc_err(struct pw__tc_ctx *tc, const char *fmt, ...)
{
	if (!tc || !tc->err || tc->errlen == 0)
		return;
	if (tc->errused >= tc->errlen - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	size_t room = tc->errlen - tc->errused;
	int n = vsnprintf(tc->err + tc->errused, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	tc->errused += (size_t)n < room ? (size_t)n : room - 1;
	if (tc->errused < tc->errlen - 1) {
		tc->err[tc->errused++] = '\n';
		tc->err[tc->errused] = '\0';
	}
}

/* The kernel's extack message, as tc prints it. */
#define KERR(tc, msg) pw__tc_err((tc), "Error: %s.", (msg))

static int rtnl_err(struct pw__tc_ctx *tc, int rc)
{
	if (tc->errused == 0)
		pw__tc_err(tc, "RTNETLINK answers: %s", strerror(-rc));
	return rc;
}

static int incomplete(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
	return -EINVAL;
}

static int invarg(struct pw__tc_ctx *tc, const char *msg, const char *arg)
{
	pw__tc_err(tc, "Error: argument \"%s\" is wrong: %s", arg, msg);
	return -EINVAL;
}

static int duparg(struct pw__tc_ctx *tc, const char *key, const char *arg)
{
	pw__tc_err(tc, "Error: duplicate \"%s\": \"%s\" is the second value.", key, arg);
	return -EINVAL;
}

/* ---------------------------------------------------------- estimator */

int pw__est_parse(struct pw__tc_ctx *tc, const char *interval, const char *tconst,
		  int8_t *interval_code, uint8_t *ewma_log)
{
	uint32_t a, tc_us;
	if (pw__get_time(&a, interval))
		return invarg(tc, "estimator", "invalid estimator interval");
	if (pw__get_time(&tc_us, tconst))
		return invarg(tc, "estimator", "invalid estimator time constant");
	/* iproute2's tc_setup_estimator() */
	int i;
	for (i = 0; i <= 5; i++)
		if (a <= (1u << i) * (PW_TIME_UNITS_PER_SEC / 4))
			break;
	if (i > 5)
		goto range;
	int e;
	for (e = 1; e < 32; e++) {
		double w = 1.0 - 1.0 / (double)(1u << e);
		if ((double)a / (-log(w)) > (double)tc_us)
			break;
	}
	e--;
	if (e == 0 || e >= 31)
		goto range;
	*interval_code = (int8_t)(i - 2);
	*ewma_log = (uint8_t)e;
	return 0;
range:
	pw__tc_err(tc, "Error: estimator parameters are out of range.");
	return -EINVAL;
}

/* ----------------------------------------------------- parsed command */

struct qreq {
	const char *devname;
	uint32_t handle, parent;
	bool has_est;
	int8_t est_interval;
	uint8_t est_log;
	const char *kind;                 /* as typed, or NULL */
	const struct pw__qdisc_ops *ops;  /* NULL: no kind or unknown kind */
	void *opt;                        /* ops->opt_size bytes, parsed */
	bool has_opts;                    /* tc would send TCA_OPTIONS */
};

static void qreq_free(struct qreq *r)
{
	if (r->opt) {
		if (r->ops && r->ops->opt_free)
			r->ops->opt_free(r->opt);
		free(r->opt);
		r->opt = NULL;
	}
}

static const char QDISC_USAGE[] =
	"Usage: tc qdisc [ add | del | replace | change | show ] dev STRING\n"
	"       [ handle QHANDLE ] [ root | ingress | clsact | parent CLASSID ]\n"
	"       [ estimator INTERVAL TIME_CONSTANT ]\n"
	"       [ stab [ help | STAB_OPTIONS] ]\n"
	"       [ ingress_block BLOCK_INDEX ] [ egress_block BLOCK_INDEX ]\n"
	"       [ [ QDISC_KIND ] [ help | OPTIONS ] ]\n"
	"\n"
	"       tc qdisc { show | list } [ dev STRING ] [ QDISC_ID ] [ invisible ]\n"
	"Where:\n"
	"QDISC_KIND := { [p|b]fifo | tbf | prio | cbq | red | etc. }\n"
	"OPTIONS := ... try tc qdisc add <desired QDISC_KIND> help\n"
	"STAB_OPTIONS := ... try tc qdisc add stab help\n"
	"QDISC_ID := { root | ingress | handle QHANDLE | parent CLASSID }";

/* iproute2's tc_qdisc_modify() argument loop. */
static int parse_qdisc_req(struct pw__tc_ctx *tc, int argc, char **argv, struct qreq *r)
{
	while (argc > 0) {
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (r->devname)
				return duparg(tc, "dev", *argv);
			if (strlen(*argv) >= PW_IFNAMSIZ) {
				pw__tc_err(tc, "Error: argument \"%s\" is wrong: \"dev\" not a valid ifname",
					   *argv);
				return -EINVAL;
			}
			r->devname = *argv;
		} else if (!strcmp(*argv, "handle")) {
			if (r->handle) /* tc checks before NEXT_ARG() */
				return duparg(tc, "handle", *argv);
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			uint32_t h;
			if (pw__get_qdisc_handle(&h, *argv))
				return invarg(tc, "invalid qdisc ID", *argv);
			r->handle = h;
		} else if (!strcmp(*argv, "root")) {
			if (r->parent) {
				pw__tc_err(tc, "Error: \"root\" is duplicate parent ID");
				return -EINVAL;
			}
			r->parent = PW_TC_H_ROOT;
		} else if (!strcmp(*argv, "ingress") || !strcmp(*argv, "clsact")) {
			pw__tc_err(tc, "Error: pinwheel has no ingress qdiscs (\"%s\").", *argv);
			return -EOPNOTSUPP;
		} else if (!strcmp(*argv, "parent")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (r->parent)
				return duparg(tc, "parent", *argv);
			uint32_t h;
			if (pw__get_tc_classid(&h, *argv))
				return invarg(tc, "invalid parent ID", *argv);
			r->parent = h;
		} else if (pw__matches(*argv, "estimator") == 0) {
			if (argc < 3)
				return incomplete(tc);
			if (r->has_est)
				return duparg(tc, "estimator", argv[1]);
			int rc = pw__est_parse(tc, argv[1], argv[2], &r->est_interval, &r->est_log);
			if (rc)
				return rc;
			r->has_est = true;
			argc -= 2, argv += 2;
		} else if (pw__matches(*argv, "stab") == 0) {
			pw__tc_err(tc, "Error: pinwheel does not implement size tables (\"stab\").");
			return -EOPNOTSUPP;
		} else if (pw__matches(*argv, "help") == 0) {
			pw__tc_err(tc, "%s", QDISC_USAGE); /* tc goes on */
		} else {
			r->kind = *argv;
			r->ops = pw__qdisc_lookup_ops(*argv);
			argc--, argv++;
			break;
		}
		argc--, argv++;
	}
	if (r->ops) {
		r->opt = calloc(1, r->ops->opt_size ? r->ops->opt_size : 1);
		if (!r->opt)
			return -ENOMEM;
		tc->kind = r->ops->id;
		int rc = r->ops->parse ? r->ops->parse(tc, argc, argv, r->opt) : 0;
		if (rc)
			return rc;
		/* what iproute2 sends: netem always fills its options; the
		 * others only when a word was given */
		r->has_opts = argc > 0 || !strcmp(r->ops->id, "netem");
	} else if (r->kind) {
		if (argc > 0) {
			pw__tc_err(tc, "Unknown qdisc \"%s\", hence option \"%s\" is unparsable",
				   r->kind, *argv);
			return -EINVAL;
		}
	} else if (argc > 0) {
		pw__tc_err(tc, "Garbage instead of arguments \"%s ...\". Try \"tc qdisc help\".",
			   *argv);
		return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------- the tree side */

static struct pw_netdev *dev_lookup(struct pw__net *net, const char *name)
{
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

/* The kernel's qdisc_leaf(): the qdisc attached under class @classid of
 * @p, with its errors. */
static int qdisc_leaf(struct pw__tc_ctx *tc, struct pw__qdisc *p, uint32_t classid,
		      struct pw__qdisc **leaf, unsigned long *clp)
{
	if (!p->ops->class_find) {
		KERR(tc, "Parent qdisc is not classful");
		return -EOPNOTSUPP;
	}
	unsigned long cl = p->ops->class_find(p, classid);
	if (!cl) {
		KERR(tc, "Specified class not found");
		return -ENOENT;
	}
	*leaf = p->ops->class_leaf ? p->ops->class_leaf(p, cl) : NULL;
	if (clp)
		*clp = cl;
	return 0;
}

static bool kind_differs(const struct qreq *r, const struct pw__qdisc *q)
{
	return r->kind && strcmp(r->kind, q->ops->id) != 0;
}

/* A new qdisc from the request, grafted at @parent (under @p, or the
 * root); the kernel's qdisc_create() + qdisc_graft(). */
static int create_n_graft(struct pw__tc_ctx *tc, struct pw_netdev *dev, struct qreq *r,
			  struct pw__qdisc *p)
{
	if (!r->ops) {
		KERR(tc, "Specified qdisc kind is unknown");
		return -ENOENT;
	}
	unsigned txq = 0;
	if (p)
		txq = (p->ops->flags & PW__QF_MQ) ? PW_TC_H_MIN(r->parent) - 1 : p->txq;
	if (p && !(p->ops->flags & PW__QF_MQ)) {
		/* classful parents other than mq arrive with htb */
		pw__tc_err(tc, "RTNETLINK answers: %s", strerror(EOPNOTSUPP));
		return -EOPNOTSUPP;
	}
	uint32_t handle = r->handle;
	if (handle == 0) {
		handle = pw__qdisc_alloc_handle(dev);
		if (handle == 0) {
			KERR(tc, "Maximum number of qdisc handles was exceeded");
			return -ENOSPC;
		}
	}
	if (r->has_est && (r->ops->flags & PW__QF_MQ)) {
		/* the kernel checks after init; nothing is built yet here */
		if (r->parent == PW_TC_H_ROOT && dev->ntxq > 1) {
			KERR(tc, "Cannot attach rate estimator to a multi-queue root qdisc");
			return -EOPNOTSUPP;
		}
	}
	int rc;
	struct pw__qdisc *q = pw__qdisc_alloc(dev, r->ops, txq, r->parent, handle,
					      r->has_opts ? r->opt : NULL, tc, &rc);
	if (!q)
		return rtnl_err(tc, rc);
	if (r->has_est) {
		rc = pw__est_start(q, r->est_interval, r->est_log);
		if (rc) {
			KERR(tc, "Failed to generate new estimator");
			pw__qdisc_free(q, PW_DROP_FLUSH);
			return rc;
		}
	}
	if (!p)
		rc = pw__qdisc_graft_root(dev, q);
	else
		rc = pw__qdisc_graft_txq(dev, txq, q);
	if (rc) {
		pw__qdisc_free(q, PW_DROP_FLUSH);
		return rtnl_err(tc, rc);
	}
	return 0;
}

/* Change @q in place from the request (the kernel's qdisc_change()). */
static int change_qdisc(struct pw__tc_ctx *tc, struct pw__qdisc *q, struct qreq *r)
{
	if (r->has_opts) {
		if (!q->ops->change) {
			KERR(tc, "Change operation not supported by specified qdisc");
			return -EINVAL;
		}
		int rc = pw__qdisc_change(q, r->opt, tc);
		if (rc)
			return rtnl_err(tc, rc);
	}
	if (r->has_est && !(q->ops->flags & PW__QF_MQ)) {
		int rc = pw__est_start(q, r->est_interval, r->est_log);
		if (rc) {
			KERR(tc, "Failed to replace estimator");
			return rc;
		}
	}
	return 0;
}

/* The qdisc at parent @clid (the root, or the leaf under class @clid of
 * qdisc MAJ(clid), which goes to *@pp), with the kernel's message
 * @nomsg when that parent qdisc does not exist.  @clid != 0. */
static int lookup_at_parent(struct pw__tc_ctx *tc, struct pw_netdev *dev, uint32_t clid,
			    const char *nomsg, struct pw__qdisc **qp, struct pw__qdisc **pp)
{
	*pp = NULL;
	if (clid == PW_TC_H_ROOT) {
		*qp = dev->qdisc;
		return 0;
	}
	*pp = pw__qdisc_find(dev, PW_TC_H_MAJ(clid));
	if (!*pp) {
		KERR(tc, nomsg);
		return -ENOENT;
	}
	return qdisc_leaf(tc, *pp, clid, qp, NULL);
}

/* tc_modify_qdisc(), cfg_lock held. */
static int qdisc_modify(struct pw__tc_ctx *tc, struct pw_netdev *dev, struct qreq *r,
			unsigned flags)
{
	uint32_t clid = r->parent;
	struct pw__qdisc *q = NULL, *p = NULL;
	int rc;

	if (clid) {
		rc = lookup_at_parent(tc, dev, clid, "Failed to find specified qdisc", &q, &p);
		if (rc)
			return rc;
		/* a default qdisc (handle 0) counts as none */
		if (q && q->handle == 0)
			q = NULL;
		if (!q || !r->handle || q->handle != r->handle) {
			if (r->handle) {
				if (q && !(flags & F_REPLACE)) {
					KERR(tc, "NLM_F_REPLACE needed to override");
					return -EEXIST;
				}
				if (PW_TC_H_MIN(r->handle)) {
					KERR(tc, "Invalid minor handle");
					return -EINVAL;
				}
				q = pw__qdisc_find(dev, r->handle);
				if (!q)
					goto create;
				if (flags & F_EXCL) {
					KERR(tc, "Exclusivity flag on, cannot override");
					return -EEXIST;
				}
				if (kind_differs(r, q)) {
					KERR(tc, "Invalid qdisc name: must match existing qdisc");
					return -EINVAL;
				}
				if (q == p) {
					KERR(tc, "Qdisc parent/child loop detected");
					return -ELOOP;
				}
				/* moving a live qdisc to another place in the tree */
				KERR(tc, "pinwheel cannot graft an existing qdisc elsewhere");
				return -EOPNOTSUPP;
			}
			if (!q)
				goto create;
			/* a kind other than the existing one builds a new qdisc,
			 * except for link (NLM_F_REPLACE alone) */
			if (kind_differs(r, q) && flags != F_REPLACE)
				goto create_any;
		}
	} else {
		if (!r->handle) {
			KERR(tc, "Handle cannot be zero");
			return -EINVAL;
		}
		q = pw__qdisc_find(dev, r->handle);
	}

	if (!q) {
		KERR(tc, "Specified qdisc not found");
		return -ENOENT;
	}
	if (flags & F_EXCL) {
		KERR(tc, "Exclusivity flag on, cannot modify");
		return -EEXIST;
	}
	if (kind_differs(r, q)) {
		KERR(tc, "Invalid qdisc name: must match existing qdisc");
		return -EINVAL;
	}
	return change_qdisc(tc, q, r);

create:
	if (!(flags & F_CREATE)) {
		KERR(tc, "Qdisc not found. To create specify NLM_F_CREATE flag");
		return -ENOENT;
	}
create_any:
	return create_n_graft(tc, dev, r, p);
}

/* tc_get_qdisc() for RTM_DELQDISC, cfg_lock held. */
static int qdisc_delete(struct pw__tc_ctx *tc, struct pw_netdev *dev, struct qreq *r)
{
	uint32_t clid = r->parent;
	struct pw__qdisc *q = NULL, *p = NULL;
	int rc;
	if (clid) {
		rc = lookup_at_parent(tc, dev, clid, "Failed to find qdisc with specified classid", &q,
				      &p);
		if (rc)
			return rc;
		if (!q) {
			KERR(tc, "Cannot find specified qdisc on specified device");
			return -ENOENT;
		}
		if (r->handle && q->handle != r->handle) {
			KERR(tc, "Invalid handle");
			return -EINVAL;
		}
	} else {
		q = pw__qdisc_find(dev, r->handle);
		if (!q) {
			KERR(tc, "Failed to find qdisc with specified handle");
			return -ENOENT;
		}
	}
	if (kind_differs(r, q)) {
		KERR(tc, "Invalid qdisc name: must match existing qdisc");
		return -EINVAL;
	}
	if (!clid) {
		KERR(tc, "Classid cannot be zero");
		return -EINVAL;
	}
	if (q->handle == 0) {
		KERR(tc, "Cannot delete qdisc with handle of zero");
		return -ENOENT;
	}
	if (!p) {
		/* the root goes back to the device's default tree */
		rc = pw__qdisc_default_root(dev);
	} else if (p->ops->flags & PW__QF_MQ) {
		/* the kernel leaves noop on the queue: its packets are dropped */
		unsigned txq = PW_TC_H_MIN(clid) - 1;
		struct pw__qdisc *nq = pw__qdisc_alloc(dev, &pw__noop_ops, txq, clid, 0, NULL,
						       NULL, &rc);
		if (!nq)
			return rtnl_err(tc, rc);
		nq->is_default = true;
		rc = pw__qdisc_graft_txq(dev, txq, nq);
		if (rc)
			pw__qdisc_free(nq, PW_DROP_FLUSH);
	} else {
		rc = -EOPNOTSUPP;
	}
	return rc ? rtnl_err(tc, rc) : 0;
}

/* --------------------------------------------------------------- show */

static void print_stats(struct pw__out *o, const struct pw_qdisc_stats *st)
{
	const char *prefix = " ";
	pw__print_fp(o, "%s", prefix);
	pw__print_u64(o, PW_PRINT_ANY, "bytes", "Sent %llu bytes", st->bytes);
	pw__print_u64(o, PW_PRINT_ANY, "packets", " %llu pkt", st->packets);
	pw__print_uint(o, PW_PRINT_ANY, "drops", " (dropped %u", st->drops);
	pw__print_uint(o, PW_PRINT_ANY, "overlimits", ", overlimits %u", st->overlimits);
	pw__print_uint(o, PW_PRINT_ANY, "requeues", " requeues %u) ", st->requeues);
	pw__print_nl(o);
	if (st->has_rate) {
		pw__print_fp(o, "%s", prefix);
		pw__print_u64(o, PW_PRINT_JSON, "rate", NULL, st->bps);
		pw__print_rate(o, PW_PRINT_FP, NULL, "rate %s", st->bps);
		pw__print_u64(o, PW_PRINT_ANY, "pps", " %llupps", st->pps);
		pw__print_fp(o, " ");
	} else {
		pw__print_fp(o, "%s", prefix);
	}
	/* backlog as a byte count in JSON, a size in text */
	pw__print_u64(o, PW_PRINT_JSON, "backlog", NULL, st->backlog);
	char b[PW__SPRINT_BSIZE];
	pw__print_fp(o, "backlog %s", pw__sprint_size((uint32_t)st->backlog, b, sizeof(b)));
	pw__print_uint(o, PW_PRINT_ANY, "qlen", " %up", st->qlen);
	pw__print_uint(o, PW_PRINT_FP, NULL, " requeues %u", st->requeues);
}

/* The kernel's tcm_info for a qdisc: its reference count. */
static unsigned qdisc_refcnt(const struct pw_netdev *dev, const struct pw__qdisc *q)
{
	if (q->parent == PW_TC_H_ROOT && !(q->ops->flags & PW__QF_MQ))
		return dev->ntxq + 1;
	return 1;
}

struct show_filter {
	uint32_t handle;   /* 0: any */
	uint32_t parent;   /* 0: any (iproute2's filter_parent) */
	bool all_devs;     /* print "dev NAME " */
};

static void print_qdisc(struct pw__tc_ctx *tc, struct pw__out *o, struct pw_netdev *dev,
			struct pw__qdisc *q, const struct show_filter *f)
{
	if (q->ops->flags & PW__QF_BUILTIN)
		return;
	if (f->handle && q->handle != f->handle)
		return;
	if (f->parent && q->parent != f->parent)
		return;
	char b[PW__SPRINT_BSIZE];
	pw__open_json_object(o, NULL);
	pw__print_string(o, PW_PRINT_ANY, "kind", "qdisc %s ", q->ops->id);
	snprintf(b, sizeof(b), "%x:", q->handle >> 16);
	pw__print_string(o, PW_PRINT_ANY, "handle", "%s ", b);
	if (f->all_devs)
		pw__print_string(o, PW_PRINT_ANY, "dev", "dev %s ", dev->name);
	if (q->parent == PW_TC_H_ROOT) {
		pw__print_bool(o, PW_PRINT_ANY, "root", "root ", true);
	} else if (q->parent) {
		pw__print_string(o, PW_PRINT_ANY, "parent", "parent %s ",
				 pw__sprint_tc_classid(q->parent, b, sizeof(b)));
	}
	unsigned ref = qdisc_refcnt(dev, q);
	if (ref != 1)
		pw__print_uint(o, PW_PRINT_ANY, "refcnt", "refcnt %u ", ref);
	pw__open_json_object(o, "options");
	if (q->ops->print) {
		pw__qlock(&q->root->lock);
		q->ops->print(q, o);
		pw__qunlock(&q->root->lock);
	}
	pw__close_json_object(o);
	pw__print_nl(o);
	if (tc->flags & PW_TC_STATS) {
		struct pw_qdisc_stats st;
		pw__qdisc_read_stats(q, &st);
		print_stats(o, &st);
		pw__print_nl(o);
		if (q->ops->print_xstats) {
			pw__qlock(&q->root->lock);
			q->ops->print_xstats(q, o);
			pw__qunlock(&q->root->lock);
			pw__print_nl(o);
		}
	}
	pw__close_json_object(o);
}

/* Every qdisc of @dev in the kernel's dump order: the root, then the
 * handle hash bucket by bucket. */
static void for_each_qdisc(struct pw_netdev *dev,
			   void (*fn)(struct pw_netdev *, struct pw__qdisc *, void *), void *arg)
{
	if (dev->qdisc)
		fn(dev, dev->qdisc, arg);
	for (unsigned b = 0; b < (1u << PW__QHASH_BITS); b++)
		for (struct pw__qdisc *q = dev->qhash[b]; q; q = q->hnext)
			if (q != dev->qdisc)
				fn(dev, q, arg);
}

struct show_arg {
	struct pw__tc_ctx *tc;
	struct pw__out *o;
	const struct show_filter *f;
	uint32_t classid;  /* class show: 0 any */
	uint32_t parent;   /* class show: 0 any */
};

static void show_one(struct pw_netdev *dev, struct pw__qdisc *q, void *arg)
{
	struct show_arg *sa = arg;
	print_qdisc(sa->tc, sa->o, dev, q, sa->f);
}

/* The devices in creation order (the kernel's ifindex order). */
static unsigned devs_in_order(struct pw__net *net, struct pw_netdev ***out)
{
	unsigned n = 0;
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		n++;
	struct pw_netdev **v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return 0;
	unsigned i = n;
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		v[--i] = d;
	*out = v;
	return n;
}

static int qdisc_show(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	const char *devname = NULL;
	struct show_filter f = { 0 };
	while (argc > 0) {
		/* tc_qdisc_list(): a second dev replaces the first; root,
		 * ingress, parent and handle exclude each other */
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			devname = *argv;
		} else if (!strcmp(*argv, "root") || !strcmp(*argv, "ingress") ||
			   !strcmp(*argv, "clsact") || pw__matches(*argv, "parent") == 0 ||
			   pw__matches(*argv, "handle") == 0) {
			if (f.parent)
				return invarg(tc, "parent is already specified", *argv);
			if (f.handle)
				return invarg(tc, "handle is already specified", *argv);
			if (!strcmp(*argv, "root")) {
				f.parent = PW_TC_H_ROOT;
			} else if (!strcmp(*argv, "ingress") || !strcmp(*argv, "clsact")) {
				f.parent = PW_TC_H_INGRESS; /* there are none */
			} else if (pw__matches(*argv, "parent") == 0) {
				if (--argc <= 0)
					return incomplete(tc);
				argv++;
				if (pw__get_tc_classid(&f.parent, *argv))
					return invarg(tc, "invalid parent ID", *argv);
			} else {
				if (--argc <= 0)
					return incomplete(tc);
				argv++;
				if (pw__get_qdisc_handle(&f.handle, *argv))
					return invarg(tc, "invalid handle ID", *argv);
			}
		} else if (pw__matches(*argv, "help") == 0) {
			/* tc prints its usage and goes on with the show */
			pw__tc_err(tc, "%s", QDISC_USAGE);
		} else if (!strcmp(*argv, "invisible")) {
			/* nothing is invisible here */
		} else {
			pw__tc_err(tc, "What is \"%s\"? Try \"tc qdisc help\".", *argv);
			return -EINVAL;
		}
		argc--, argv++;
	}
	struct show_arg sa = { tc, o, &f, 0, 0 };
	if (devname) {
		struct pw_netdev *dev = dev_lookup(tc->net, devname);
		if (!dev) {
			pw__tc_err(tc, "Cannot find device \"%s\"", devname);
			return -ENODEV;
		}
		pw__new_json_obj(o);
		for_each_qdisc(dev, show_one, &sa);
		pw__delete_json_obj(o);
		return 0;
	}
	f.all_devs = true;
	struct pw_netdev **v = NULL;
	unsigned n = devs_in_order(tc->net, &v);
	pw__new_json_obj(o);
	for (unsigned i = 0; i < n; i++)
		for_each_qdisc(v[i], show_one, &sa);
	pw__delete_json_obj(o);
	free(v);
	return 0;
}

/* -------------------------------------------------------------- class */

struct class_walk_arg {
	struct show_arg *sa;
	struct pw_netdev *dev;
};

static int print_class(struct pw__qdisc *q, unsigned long cl, void *arg)
{
	struct class_walk_arg *cw = arg;
	struct show_arg *sa = cw->sa;
	struct pw__out *o = sa->o;
	struct pw__class_info ci;
	memset(&ci, 0, sizeof(ci));
	q->ops->class_info(q, cl, &ci);
	if (sa->f->handle && PW_TC_H_MAJ(ci.classid ^ sa->f->handle))
		return 0;
	if (sa->classid && ci.classid != sa->classid)
		return 0;
	/* with "qdisc X:" tc prints the minors only */
	uint32_t mask = sa->f->handle ? 0xFFFFu : 0xFFFFFFFFu;
	char b[PW__SPRINT_BSIZE];
	pw__open_json_object(o, NULL);
	pw__print_string(o, PW_PRINT_ANY, "class", "class %s ", q->ops->id);
	pw__print_string(o, PW_PRINT_ANY, "handle", "%s ",
			 pw__sprint_tc_classid(ci.classid & mask, b, sizeof(b)));
	if (sa->f->all_devs)
		pw__print_string(o, PW_PRINT_ANY, "dev", "dev %s ", cw->dev->name);
	if (ci.parent == PW_TC_H_ROOT)
		pw__print_bool(o, PW_PRINT_ANY, "root", "root ", true);
	else if (ci.parent)
		pw__print_string(o, PW_PRINT_ANY, "parent", "parent %s ",
				 pw__sprint_tc_classid(ci.parent & mask, b, sizeof(b)));
	if (ci.leaf) {
		snprintf(b, sizeof(b), "%x:", ci.leaf >> 16);
		pw__print_string(o, PW_PRINT_ANY, "leaf", "leaf %s ", b);
	}
	pw__open_json_object(o, "options");
	if (q->ops->class_print)
		q->ops->class_print(q, cl, o);
	pw__close_json_object(o);
	pw__print_nl(o);
	if ((sa->tc->flags & PW_TC_STATS) && ci.no_stats) {
		pw__print_nl(o); /* a class dump with empty statistics (tbf's) */
	} else if (sa->tc->flags & PW_TC_STATS) {
		ci.st.has_rate = 0; /* class dumps carry no rate (mq's) */
		print_stats(o, &ci.st);
		pw__print_nl(o);
	}
	pw__close_json_object(o);
	return 0;
}

static void class_one(struct pw_netdev *dev, struct pw__qdisc *q, void *arg)
{
	struct show_arg *sa = arg;
	if (!q->ops->class_walk || !q->ops->class_info)
		return;
	if (sa->parent && PW_TC_H_MAJ(sa->parent) != q->handle)
		return; /* tc_dump_tclass_qdisc() */
	struct class_walk_arg cw = { arg, dev };
	q->ops->class_walk(q, print_class, &cw);
}

static const char CLASS_USAGE[] =
	"Usage: tc class [ add | del | change | replace | show ] dev STRING\n"
	"       [ classid CLASSID ] [ root | parent CLASSID ]\n"
	"       [ [ QDISC_KIND ] [ help | OPTIONS ] ]\n"
	"\n"
	"       tc class show [ dev STRING ] [ root | parent CLASSID ]\n"
	"Where:\n"
	"QDISC_KIND := { prio | cbq | etc. }\n"
	"OPTIONS := ... try tc class add <desired QDISC_KIND> help";

static int class_show(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	const char *devname = NULL;
	struct show_filter f = { 0 };
	struct show_arg sa = { tc, o, &f, 0, 0 };
	while (argc > 0) {
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (devname)
				return duparg(tc, "dev", *argv);
			devname = *argv;
		} else if (!strcmp(*argv, "qdisc")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (f.handle)
				return duparg(tc, "qdisc", *argv);
			if (pw__get_qdisc_handle(&f.handle, *argv))
				return invarg(tc, "invalid qdisc ID", *argv);
		} else if (!strcmp(*argv, "classid")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (sa.classid)
				return duparg(tc, "classid", *argv);
			if (pw__get_tc_classid(&sa.classid, *argv))
				return invarg(tc, "invalid class ID", *argv);
		} else if (!strcmp(*argv, "root")) {
			if (sa.parent) {
				pw__tc_err(tc, "Error: \"root\" is duplicate parent ID");
				return -EINVAL;
			}
			sa.parent = PW_TC_H_ROOT;
		} else if (!strcmp(*argv, "parent")) {
			if (sa.parent) /* tc checks before NEXT_ARG() */
				return duparg(tc, "parent", *argv);
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (pw__get_tc_classid(&sa.parent, *argv))
				return invarg(tc, "invalid parent ID", *argv);
		} else if (pw__matches(*argv, "help") == 0) {
			pw__tc_err(tc, "%s", CLASS_USAGE); /* and the show goes on */
		} else {
			pw__tc_err(tc, "What is \"%s\"? Try \"tc class help\".", *argv);
			return -EINVAL;
		}
		argc--, argv++;
	}
	/* iproute2 6.1 prints classes as text even under -j */
	bool json = o->json;
	o->json = false;
	int rc = 0;
	if (devname) {
		struct pw_netdev *dev = dev_lookup(tc->net, devname);
		if (!dev) {
			pw__tc_err(tc, "Cannot find device \"%s\"", devname);
			rc = -ENODEV;
		} else {
			for_each_qdisc(dev, class_one, &sa);
		}
	}
	/* without dev tc sends ifindex 0, and the kernel's tc_dump_tclass()
	 * dumps nothing */
	o->json = json;
	return rc;
}

/* ------------------------------------------------------------ commands */

static int do_qdisc_modify(struct pw__tc_ctx *tc, int argc, char **argv, unsigned flags,
			   bool del)
{
	struct qreq r;
	memset(&r, 0, sizeof(r));
	int rc = parse_qdisc_req(tc, argc, argv, &r);
	if (rc)
		goto out;
	/* what parsing said (a "help" usage) stays; the kernel side's
	 * messages follow it as if the buffer were empty (rtnl_err()) */
	size_t said = tc->errused;
	if (said)
		tc->err += said, tc->errlen -= said, tc->errused = 0;
	pthread_mutex_lock(&tc->net->cfg_lock);
	struct pw_netdev *dev = NULL;
	if (!r.devname) {
		rc = -ENODEV;
		pw__tc_err(tc, "RTNETLINK answers: %s", strerror(ENODEV));
	} else if (!(dev = dev_lookup(tc->net, r.devname))) {
		pw__tc_err(tc, "Cannot find device \"%s\"", r.devname);
		rc = -ENODEV;
	} else {
		tc->dev = dev;
		rc = del ? qdisc_delete(tc, dev, &r) : qdisc_modify(tc, dev, &r, flags);
	}
	pthread_mutex_unlock(&tc->net->cfg_lock);
	if (said)
		tc->err -= said, tc->errlen += said, tc->errused += said;
out:
	qreq_free(&r);
	return rc;
}

static int do_qdisc(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	if (argc < 1) {
		pthread_mutex_lock(&tc->net->cfg_lock);
		int rc = qdisc_show(tc, 0, NULL, o);
		pthread_mutex_unlock(&tc->net->cfg_lock);
		return rc;
	}
	const char *cmd = *argv;
	argc--, argv++;
	if (pw__matches(cmd, "add") == 0)
		return do_qdisc_modify(tc, argc, argv, F_CREATE | F_EXCL, false);
	if (pw__matches(cmd, "change") == 0)
		return do_qdisc_modify(tc, argc, argv, 0, false);
	if (pw__matches(cmd, "replace") == 0)
		return do_qdisc_modify(tc, argc, argv, F_CREATE | F_REPLACE, false);
	if (pw__matches(cmd, "link") == 0)
		return do_qdisc_modify(tc, argc, argv, F_REPLACE, false);
	if (pw__matches(cmd, "delete") == 0)
		return do_qdisc_modify(tc, argc, argv, 0, true);
	if (pw__matches(cmd, "list") == 0 || pw__matches(cmd, "show") == 0 ||
	    pw__matches(cmd, "lst") == 0) {
		pthread_mutex_lock(&tc->net->cfg_lock);
		int rc = qdisc_show(tc, argc, argv, o);
		pthread_mutex_unlock(&tc->net->cfg_lock);
		return rc;
	}
	if (pw__matches(cmd, "help") == 0) {
		pw__tc_err(tc, "%s", QDISC_USAGE);
		return 0; /* do_qdisc(): usage(); return 0; */
	}
	pw__tc_err(tc, "Command \"%s\" is unknown, try \"tc qdisc help\".", cmd);
	return -EINVAL;
}

/* iproute2's kinds with class options (a parse_copt); every other kind,
 * known or not, is "classless" to tc class add. */
static bool kind_has_classes(const char *k)
{
	static const char *const kinds[] = { "htb", "hfsc", "cbq", "drr", "qfq", "ets",
					     "atm", "dsmark" };
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(k, kinds[i]))
			return true;
	return false;
}

/* tc_class_modify() of tc_class.c, then the kernel's tc_ctl_tclass(): no
 * pinwheel qdisc has classes that can be created, changed or deleted (mq's
 * are fixed), so a command that gets that far fails as the kernel's does
 * on mq; before that, the same lookups and errors. */
static int class_modify(struct pw__tc_ctx *tc, int argc, char **argv, unsigned flags, bool del)
{
	const char *devname = NULL, *kind = NULL;
	uint32_t clid = 0, portid = 0;
	while (argc > 0) {
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (devname)
				return duparg(tc, "dev", *argv);
			devname = *argv;
		} else if (!strcmp(*argv, "classid")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (clid)
				return duparg(tc, "classid", *argv);
			if (pw__get_tc_classid(&clid, *argv))
				return invarg(tc, "invalid class ID", *argv);
		} else if (!strcmp(*argv, "handle")) {
			pw__tc_err(tc, "Error: try \"classid\" instead of \"handle\"");
			return -EINVAL;
		} else if (!strcmp(*argv, "root")) {
			if (portid) {
				pw__tc_err(tc, "Error: \"root\" is duplicate parent ID.");
				return -EINVAL;
			}
			portid = PW_TC_H_ROOT;
		} else if (!strcmp(*argv, "parent")) {
			if (--argc <= 0)
				return incomplete(tc);
			argv++;
			if (portid)
				return duparg(tc, "parent", *argv);
			if (pw__get_tc_classid(&portid, *argv))
				return invarg(tc, "invalid parent ID", *argv);
		} else if (pw__matches(*argv, "estimator") == 0) {
			int8_t ei;
			uint8_t el;
			if (argc < 3)
				return incomplete(tc);
			int rc = pw__est_parse(tc, argv[1], argv[2], &ei, &el);
			if (rc)
				return rc;
			argc -= 2, argv += 2;
		} else if (pw__matches(*argv, "help") == 0) {
			pw__tc_err(tc, "%s", CLASS_USAGE); /* and goes on */
		} else {
			kind = *argv;
			break;
		}
		argc--, argv++;
	}
	if (kind && !kind_has_classes(kind)) {
		pw__tc_err(tc, "Error: Qdisc \"%s\" is classless.", kind);
		return -EINVAL;
	}
	if (kind) {
		pw__tc_err(tc, "Error: pinwheel has no \"%s\" classes.", kind);
		return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&tc->net->cfg_lock);
	int rc;
	struct pw_netdev *dev = NULL;
	if (devname && !(dev = dev_lookup(tc->net, devname))) {
		pw__tc_err(tc, "Cannot find device \"%s\"", devname);
		rc = -ENODEV;
		goto out;
	}
	rc = -ENODEV;
	if (!dev)
		goto out;
	/* tc_ctl_tclass(), step 1: the qdisc X:0 */
	uint32_t qid = PW_TC_H_MAJ(clid);
	uint32_t root = dev->qdisc ? dev->qdisc->handle : 0;
	if (portid != PW_TC_H_ROOT) {
		uint32_t qid1 = PW_TC_H_MAJ(portid);
		rc = -EINVAL;
		if (qid && qid1 && qid != qid1)
			goto out;
		if (qid1)
			qid = qid1;
		else if (!qid)
			qid = root;
		if (portid)
			portid = PW_TC_H_MAKE(qid, portid);
	} else if (!qid) {
		qid = root;
	}
	rc = -ENOENT;
	struct pw__qdisc *q = pw__qdisc_find(dev, qid);
	if (!q)
		goto out;
	rc = -EINVAL;
	if (!q->ops->class_find)
		goto out;
	if (clid == 0) {
		if (portid == PW_TC_H_ROOT)
			clid = qid;
	} else {
		clid = PW_TC_H_MAKE(qid, clid);
	}
	unsigned long cl = clid ? q->ops->class_find(q, clid) : 0;
	if (!cl) {
		rc = -ENOENT;
		if (del || !(flags & F_CREATE))
			goto out;
	} else if (!del && (flags & F_EXCL)) {
		rc = -EEXIST;
		goto out;
	}
	rc = -EOPNOTSUPP; /* no cops->change / cops->delete */
out:
	pthread_mutex_unlock(&tc->net->cfg_lock);
	if (dev || !devname) /* else "Cannot find device" was said */
		pw__tc_err(tc, "RTNETLINK answers: %s", strerror(-rc));
	return rc;
}

static int do_class(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	if (argc < 1) {
		pthread_mutex_lock(&tc->net->cfg_lock);
		int rc = class_show(tc, 0, NULL, o);
		pthread_mutex_unlock(&tc->net->cfg_lock);
		return rc;
	}
	const char *cmd = *argv;
	argc--, argv++;
	if (pw__matches(cmd, "list") == 0 || pw__matches(cmd, "show") == 0 ||
	    pw__matches(cmd, "lst") == 0) {
		pthread_mutex_lock(&tc->net->cfg_lock);
		int rc = class_show(tc, argc, argv, o);
		pthread_mutex_unlock(&tc->net->cfg_lock);
		return rc;
	}
	if (pw__matches(cmd, "add") == 0)
		return class_modify(tc, argc, argv, F_CREATE | F_EXCL, false);
	if (pw__matches(cmd, "change") == 0)
		return class_modify(tc, argc, argv, 0, false);
	if (pw__matches(cmd, "replace") == 0)
		return class_modify(tc, argc, argv, F_CREATE, false);
	if (pw__matches(cmd, "delete") == 0)
		return class_modify(tc, argc, argv, 0, true);
	if (pw__matches(cmd, "help") == 0) {
		pw__tc_err(tc, "%s", CLASS_USAGE);
		return 0; /* do_class(): usage(); return 0; */
	}
	pw__tc_err(tc, "Command \"%s\" is unknown, try \"tc class help\".", cmd);
	return -EINVAL;
}

int pw_tc(struct pw_runtime *rt, const char *cmd, unsigned flags, char *out, size_t outlen,
	  char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (out && outlen)
		out[0] = '\0';
	if (!rt || !cmd)
		return -EINVAL;
	struct pw__tc_ctx tc;
	memset(&tc, 0, sizeof(tc));
	tc.err = err;
	tc.errlen = errlen;
	tc.flags = flags;
	/* psched's constants since Linux 2.6.x (tick = 1/64 us); fixed so a
	 * script parses the same on every machine */
	pw__tc_core_set(&tc.core, 1000, 64, 1000000);
	tc.net = pw__net_get(rt);
	if (!tc.net)
		return -ENOMEM;

	char *line = strdup(cmd);
	char **argv = calloc(TC_MAXARGS, sizeof(*argv));
	if (!line || !argv) {
		free(line);
		free(argv);
		return -ENOMEM;
	}
	int argc = pw__makeargs(line, argv, TC_MAXARGS);
	int rc;
	if (argc < 0) {
		pw__tc_err(&tc, argc == -E2BIG ? "Too many arguments" : "Unterminated quote");
		rc = argc;
		goto done;
	}
	if (argc > 0 && !strcmp(argv[0], "tc"))
		argc--, memmove(argv, argv + 1, (size_t)argc * sizeof(*argv));
	if (argc == 0) {
		rc = 0;
		goto done;
	}
	struct pw__out o;
	pw__out_init(&o, (flags & PW_TC_JSON) != 0);
	o.details = (flags & PW_TC_DETAILS) != 0;
	const char *obj = argv[0];
	if (pw__matches(obj, "qdisc") == 0) {
		rc = do_qdisc(&tc, argc - 1, argv + 1, &o);
	} else if (pw__matches(obj, "class") == 0) {
		rc = do_class(&tc, argc - 1, argv + 1, &o);
	} else if (pw__matches(obj, "help") == 0) {
		/* tc.c's usage(), as do_cmd() prints it, returning 0 */
		pw__tc_err(&tc, "Usage:\ttc [ OPTIONS ] OBJECT { COMMAND | help }\n"
				"\ttc [-force] -batch filename\n"
				"where  OBJECT := { qdisc | class | filter | chain |\n"
				"\t\t    action | monitor | exec }\n"
				"       OPTIONS := { -V[ersion] | -s[tatistics] | -d[etails] | -r[aw] |\n"
				"\t\t    -o[neline] | -j[son] | -p[retty] | -c[olor]\n"
				"\t\t    -b[atch] [filename] | -n[etns] name | -N[umeric] |\n"
				"\t\t     -nm | -nam[es] | { -cf | -conf } path\n"
				"\t\t     -br[ief] }");
		rc = 0;
	} else {
		pw__tc_err(&tc, "Object \"%s\" is unknown, try \"tc help\".", obj);
		rc = -EINVAL;
	}
	if (o.oom && rc == 0)
		rc = -ENOMEM;
	if (out && outlen && rc == 0) {
		const char *s = pw__out_str(&o);
		size_t n = strlen(s);
		if (n >= outlen) {
			rc = -ENOSPC;
			n = outlen - 1;
		}
		memcpy(out, s, n);
		out[n] = '\0';
	}
	pw__out_free(&o);
done:
	free(argv);
	free(line);
	return rc;
}
