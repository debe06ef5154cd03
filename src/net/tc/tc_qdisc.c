/* SPDX-License-Identifier: MIT */
/*
 * `tc qdisc add|change|replace|link|del|show` (iproute2's tc_qdisc.c and
 * the kernel's tc_modify_qdisc()/tc_get_qdisc()/tc_dump_qdisc(); tc.c's
 * essay explains the decisions).  Threads: the tc thread; a modify or
 * delete holds cfg_lock from its parse to the end (root locks inside it).
 */
#define _GNU_SOURCE
#include "tc.h"
#include "tc_accuracy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----------------------------------------------------- parsed command */

struct qreq {
	const char *devname;
	uint32_t handle, parent;
	bool has_est;
	int8_t est_interval;
	uint8_t est_log;
	const char *kind;                 /* as typed, or NULL */
	const struct pw__qdisc_ops *ops;  /* NULL: no kind or unknown kind */
	const struct pw__qdisc_util *util; /* its tc side (with ops) */
	void *opt;                        /* util->opt_size bytes, parsed */
	bool has_opts;                    /* tc would send TCA_OPTIONS */
};

static void qreq_free(struct qreq *r)
{
	if (r->opt) {
		if (r->util && r->util->opt_free)
			r->util->opt_free(r->opt);
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
				return pw__tc_incomplete(tc);
			argv++;
			if (r->devname)
				return pw__tc_duparg(tc, "dev", *argv);
			if (strlen(*argv) >= PW_IFNAMSIZ) {
				pw__tc_err(tc, "Error: argument \"%s\" is wrong: \"dev\" not a valid ifname",
					   *argv);
				return -EINVAL;
			}
			int rc;
			if (!(r->devname = pw__tc_dev_word(tc, *argv, &rc)))
				return rc;
			/* for a kind's parse that builds on the device (cfg_lock
			 * held); NULL is reported after the options, as tc does */
			tc->ext.dev = pw__tc_dev_lookup(tc->ext.net, r->devname);
		} else if (!strcmp(*argv, "handle")) {
			if (r->handle) /* tc checks before NEXT_ARG() */
				return pw__tc_duparg(tc, "handle", *argv);
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			uint32_t h;
			if (pw__get_qdisc_handle(&h, *argv))
				return pw__tc_invarg(tc, "invalid qdisc ID", *argv);
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
				return pw__tc_incomplete(tc);
			argv++;
			if (r->parent)
				return pw__tc_duparg(tc, "parent", *argv);
			uint32_t h;
			if (pw__get_tc_classid(&h, *argv))
				return pw__tc_invarg(tc, "invalid parent ID", *argv);
			r->parent = h;
		} else if (pw__matches(*argv, "estimator") == 0) {
			if (argc < 3)
				return pw__tc_incomplete(tc);
			if (r->has_est)
				return pw__tc_duparg(tc, "estimator", argv[1]);
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
			r->util = r->ops ? pw__qdisc_util_get(r->ops->id) : NULL;
			if (!r->util)
				r->ops = NULL; /* a kind without a tc side is unknown to tc */
			argc--, argv++;
			break;
		}
		argc--, argv++;
	}
	if (r->ops) {
		r->opt = calloc(1, r->util->opt_size ? r->util->opt_size : 1);
		if (!r->opt)
			return -ENOMEM;
		tc->ext.kind = r->ops->id;
		int rc = r->util->parse ? r->util->parse(tc, argc, argv, r->opt) : 0;
		if (rc)
			return rc;
		/* what iproute2 sends: some kinds always fill their options,
		 * the others only when a word was given */
		r->has_opts = argc > 0 || (r->util->flags & PW__QU_OPTS_ALWAYS);
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
		PW__TC_KERR(tc, "Specified qdisc kind is unknown");
		return -ENOENT;
	}
	unsigned txq = 0;
	if (p)
		txq = (p->ops->flags & PW__QF_MQ) ? PW_TC_H_MIN(r->parent) - 1 : p->txq;
	unsigned long cl = 0;
	if (p && !(p->ops->flags & PW__QF_MQ)) {
		/* qdisc_graft() under a class: the kind must graft */
		if (!(p->ops->cl_ops && p->ops->cl_ops->graft))
			return pw__tc_rtnl_err(tc, -EOPNOTSUPP);
		cl = p->ops->cl_ops->find(p, r->parent);
		if (!cl) {
			PW__TC_KERR(tc, "Specified class not found");
			return -ENOENT;
		}
	}
	uint32_t handle = r->handle;
	if (handle == 0) {
		handle = pw__qdisc_alloc_handle(dev);
		if (handle == 0) {
			PW__TC_KERR(tc, "Maximum number of qdisc handles was exceeded");
			return -ENOSPC;
		}
	}
	if (r->has_est && (r->ops->flags & PW__QF_MQ)) {
		/* the kernel checks after init; nothing is built yet here */
		if (r->parent == PW_TC_H_ROOT && dev->ntxq > 1) {
			PW__TC_KERR(tc, "Cannot attach rate estimator to a multi-queue root qdisc");
			return -EOPNOTSUPP;
		}
	}
	int rc;
	struct pw__qdisc *q = pw__qdisc_alloc(dev, r->ops, txq, r->parent, handle,
					      r->has_opts ? r->opt : NULL, &tc->ext, &rc);
	if (!q)
		return pw__tc_rtnl_err(tc, rc);
	if (r->has_est) {
		rc = pw__est_start(q, r->est_interval, r->est_log);
		if (rc) {
			PW__TC_KERR(tc, "Failed to generate new estimator");
			pw__qdisc_free(q, PW_DROP_FLUSH);
			return rc;
		}
	}
	if (!p)
		rc = pw__qdisc_graft_root(dev, q);
	else if (p->ops->flags & PW__QF_MQ)
		rc = pw__qdisc_graft_txq(dev, txq, q);
	else
		rc = pw__qdisc_graft_class(dev, p, cl, r->parent, q, &tc->ext);
	if (rc) {
		pw__qdisc_free(q, PW_DROP_FLUSH);
		return pw__tc_rtnl_err(tc, rc);
	}
	return 0;
}

/* Change @q in place from the request (the kernel's qdisc_change()). */
static int change_qdisc(struct pw__tc_ctx *tc, struct pw__qdisc *q, struct qreq *r)
{
	if (r->has_opts) {
		if (!q->ops->change) {
			PW__TC_KERR(tc, "Change operation not supported by specified qdisc");
			return -EINVAL;
		}
		int rc = pw__qdisc_change(q, r->opt, &tc->ext);
		if (rc)
			return pw__tc_rtnl_err(tc, rc);
	}
	if (r->has_est && !(q->ops->flags & PW__QF_MQ)) {
		int rc = pw__est_start(q, r->est_interval, r->est_log);
		if (rc) {
			PW__TC_KERR(tc, "Failed to replace estimator");
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
		PW__TC_KERR(tc, nomsg);
		return -ENOENT;
	}
	return pw__tc_qdisc_leaf(tc, *pp, clid, qp, NULL);
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
				if (q && !(flags & PW__TC_F_REPLACE)) {
					PW__TC_KERR(tc, "NLM_F_REPLACE needed to override");
					return -EEXIST;
				}
				if (PW_TC_H_MIN(r->handle)) {
					PW__TC_KERR(tc, "Invalid minor handle");
					return -EINVAL;
				}
				q = pw__qdisc_find(dev, r->handle);
				if (!q)
					goto create;
				if (flags & PW__TC_F_EXCL) {
					PW__TC_KERR(tc, "Exclusivity flag on, cannot override");
					return -EEXIST;
				}
				if (kind_differs(r, q)) {
					PW__TC_KERR(tc, "Invalid qdisc name: must match existing qdisc");
					return -EINVAL;
				}
				if (q == p) {
					PW__TC_KERR(tc, "Qdisc parent/child loop detected");
					return -ELOOP;
				}
				/* moving a live qdisc to another place in the tree */
				PW__TC_KERR(tc, "pinwheel cannot graft an existing qdisc elsewhere");
				return -EOPNOTSUPP;
			}
			if (!q)
				goto create;
			/* a kind other than the existing one builds a new qdisc,
			 * except for link (NLM_F_REPLACE alone) */
			if (kind_differs(r, q) && flags != PW__TC_F_REPLACE)
				goto create_any;
		}
	} else {
		if (!r->handle) {
			PW__TC_KERR(tc, "Handle cannot be zero");
			return -EINVAL;
		}
		q = pw__qdisc_find(dev, r->handle);
	}

	if (!q) {
		PW__TC_KERR(tc, "Specified qdisc not found");
		return -ENOENT;
	}
	if (flags & PW__TC_F_EXCL) {
		PW__TC_KERR(tc, "Exclusivity flag on, cannot modify");
		return -EEXIST;
	}
	if (kind_differs(r, q)) {
		PW__TC_KERR(tc, "Invalid qdisc name: must match existing qdisc");
		return -EINVAL;
	}
	return change_qdisc(tc, q, r);

create:
	if (!(flags & PW__TC_F_CREATE)) {
		PW__TC_KERR(tc, "Qdisc not found. To create specify NLM_F_CREATE flag");
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
			PW__TC_KERR(tc, "Cannot find specified qdisc on specified device");
			return -ENOENT;
		}
		if (r->handle && q->handle != r->handle) {
			PW__TC_KERR(tc, "Invalid handle");
			return -EINVAL;
		}
	} else {
		q = pw__qdisc_find(dev, r->handle);
		if (!q) {
			PW__TC_KERR(tc, "Failed to find qdisc with specified handle");
			return -ENOENT;
		}
	}
	if (kind_differs(r, q)) {
		PW__TC_KERR(tc, "Invalid qdisc name: must match existing qdisc");
		return -EINVAL;
	}
	if (!clid) {
		PW__TC_KERR(tc, "Classid cannot be zero");
		return -EINVAL;
	}
	if (q->handle == 0) {
		PW__TC_KERR(tc, "Cannot delete qdisc with handle of zero");
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
			return pw__tc_rtnl_err(tc, rc);
		nq->is_default = true;
		rc = pw__qdisc_graft_txq(dev, txq, nq);
		if (rc)
			pw__qdisc_free(nq, PW_DROP_FLUSH);
	} else {
		/* qdisc_graft(new = NULL): the kind puts its default back */
		unsigned long cl = (p->ops->cl_ops && p->ops->cl_ops->find) ? p->ops->cl_ops->find(p, clid) : 0;
		rc = cl ? pw__qdisc_graft_class(dev, p, cl, clid, NULL, &tc->ext) : -ENOENT;
	}
	return rc ? pw__tc_rtnl_err(tc, rc) : 0;
}

/* The kernel's tcm_info for a qdisc: its reference count. */
static unsigned qdisc_refcnt(const struct pw_netdev *dev, const struct pw__qdisc *q)
{
	if (q->parent == PW_TC_H_ROOT && !(q->ops->flags & PW__QF_MQ))
		return dev->ntxq + 1;
	return 1;
}

static void print_qdisc(struct pw__tc_ctx *tc, struct pw__out *o, struct pw_netdev *dev,
			struct pw__qdisc *q, const struct pw__tc_show_filter *f)
{
	if (q->ops->flags & PW__QF_BUILTIN)
		return;
	if (q->invisible && !f->invisible)
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
	const struct pw__qdisc_util *util = pw__qdisc_util_get(q->ops->id);
	pw__open_json_object(o, "options");
	if (util && util->print) {
		pw__qlock(&q->root->lock);
		util->print(q, o);
		pw__qunlock(&q->root->lock);
	}
	pw__close_json_object(o);
	pw__print_nl(o);
	if (tc->flags & PW_TC_STATS) {
		struct pw_qdisc_stats st;
		pw__qdisc_read_stats(q, &st);
		pw__tc_print_stats(o, &st);
		pw__print_nl(o);
		if (util && util->print_xstats) {
			pw__qlock(&q->root->lock);
			util->print_xstats(q, o);
			pw__qunlock(&q->root->lock);
			pw__print_nl(o);
		}
	}
	if (tc->flags & PW_TC_ACCURACY) /* not iproute2's: pinwheel-tc -A */
		pw__tc_print_accuracy(o, q);
	pw__close_json_object(o);
}

static void show_one(struct pw_netdev *dev, struct pw__qdisc *q, void *arg)
{
	struct pw__tc_show_arg *sa = arg;
	print_qdisc(sa->tc, sa->o, dev, q, sa->f);
}

static int qdisc_show(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	const char *devname = NULL;
	struct pw__tc_show_filter f = { 0 };
	while (argc > 0) {
		/* tc_qdisc_list(): a second dev replaces the first; root,
		 * ingress, parent and handle exclude each other */
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			int rc;
			if (!(devname = pw__tc_dev_word(tc, *argv, &rc)))
				return rc;
		} else if (!strcmp(*argv, "root") || !strcmp(*argv, "ingress") ||
			   !strcmp(*argv, "clsact") || pw__matches(*argv, "parent") == 0 ||
			   pw__matches(*argv, "handle") == 0) {
			if (f.parent)
				return pw__tc_invarg(tc, "parent is already specified", *argv);
			if (f.handle)
				return pw__tc_invarg(tc, "handle is already specified", *argv);
			if (!strcmp(*argv, "root")) {
				f.parent = PW_TC_H_ROOT;
			} else if (!strcmp(*argv, "ingress") || !strcmp(*argv, "clsact")) {
				f.parent = PW_TC_H_INGRESS; /* there are none */
			} else if (pw__matches(*argv, "parent") == 0) {
				if (--argc <= 0)
					return pw__tc_incomplete(tc);
				argv++;
				if (pw__get_tc_classid(&f.parent, *argv))
					return pw__tc_invarg(tc, "invalid parent ID", *argv);
			} else {
				if (--argc <= 0)
					return pw__tc_incomplete(tc);
				argv++;
				if (pw__get_qdisc_handle(&f.handle, *argv))
					return pw__tc_invarg(tc, "invalid handle ID", *argv);
			}
		} else if (pw__matches(*argv, "help") == 0) {
			/* tc prints its usage and goes on with the show */
			pw__tc_err(tc, "%s", QDISC_USAGE);
		} else if (!strcmp(*argv, "invisible")) {
			f.invisible = true; /* the kinds' default children too */
		} else {
			pw__tc_err(tc, "What is \"%s\"? Try \"tc qdisc help\".", *argv);
			return -EINVAL;
		}
		argc--, argv++;
	}
	struct pw__tc_show_arg sa = { tc, o, &f, 0, 0 };
	if (!devname)
		devname = tc->confine; /* confined: its own device, not all */
	if (devname) {
		struct pw_netdev *dev = pw__tc_dev_lookup(tc->ext.net, devname);
		if (!dev) {
			pw__tc_err(tc, "Cannot find device \"%s\"", devname);
			return -ENODEV;
		}
		pw__new_json_obj(o);
		pw__tc_for_each_qdisc(dev, show_one, &sa);
		pw__delete_json_obj(o);
		return 0;
	}
	f.all_devs = true;
	struct pw_netdev **v = NULL;
	unsigned n = pw__tc_devs_in_order(tc->ext.net, &v);
	if (!v)
		return -ENOMEM; /* not an empty list: pw_tc() says why */
	pw__new_json_obj(o);
	for (unsigned i = 0; i < n; i++)
		pw__tc_for_each_qdisc(v[i], show_one, &sa);
	pw__delete_json_obj(o);
	free(v);
	return 0;
}

/* ------------------------------------------------------------ commands */

static int do_qdisc_modify(struct pw__tc_ctx *tc, int argc, char **argv, unsigned flags,
			   bool del)
{
	struct qreq r;
	memset(&r, 0, sizeof(r));
	/* cfg_lock for the whole command: a kind's parse may build objects
	 * on the device (tbf's bfifo child, as tbf_change() does before it
	 * locks), and freeing them needs it too */
	pthread_mutex_lock(&tc->ext.net->cfg_lock);
	int rc = parse_qdisc_req(tc, argc, argv, &r);
	if (rc)
		goto out;
	/* what parsing said (a "help" usage) stays; the kernel side's
	 * messages follow it as if the buffer were empty (pw__tc_rtnl_err()) */
	size_t said = tc->ext.msgused;
	if (said)
		tc->ext.msg += said, tc->ext.msglen -= said, tc->ext.msgused = 0;
	struct pw_netdev *dev = NULL;
	if (!r.devname) {
		rc = -ENODEV;
		pw__tc_err(tc, "RTNETLINK answers: %s", strerror(ENODEV));
	} else if (!(dev = pw__tc_dev_lookup(tc->ext.net, r.devname))) {
		pw__tc_err(tc, "Cannot find device \"%s\"", r.devname);
		rc = -ENODEV;
	} else {
		tc->ext.dev = dev;
		rc = del ? qdisc_delete(tc, dev, &r) : qdisc_modify(tc, dev, &r, flags);
	}
	if (said)
		tc->ext.msg -= said, tc->ext.msglen += said, tc->ext.msgused += said;
out:
	qreq_free(&r);
	pthread_mutex_unlock(&tc->ext.net->cfg_lock);
	return rc;
}

int pw__tc_do_qdisc(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	if (argc < 1) {
		pthread_mutex_lock(&tc->ext.net->cfg_lock);
		int rc = qdisc_show(tc, 0, NULL, o);
		pthread_mutex_unlock(&tc->ext.net->cfg_lock);
		return rc;
	}
	const char *cmd = *argv;
	argc--, argv++;
	if (pw__matches(cmd, "add") == 0)
		return do_qdisc_modify(tc, argc, argv, PW__TC_F_CREATE | PW__TC_F_EXCL, false);
	if (pw__matches(cmd, "change") == 0)
		return do_qdisc_modify(tc, argc, argv, 0, false);
	if (pw__matches(cmd, "replace") == 0)
		return do_qdisc_modify(tc, argc, argv, PW__TC_F_CREATE | PW__TC_F_REPLACE, false);
	if (pw__matches(cmd, "link") == 0)
		return do_qdisc_modify(tc, argc, argv, PW__TC_F_REPLACE, false);
	if (pw__matches(cmd, "delete") == 0)
		return do_qdisc_modify(tc, argc, argv, 0, true);
	if (pw__matches(cmd, "list") == 0 || pw__matches(cmd, "show") == 0 ||
	    pw__matches(cmd, "lst") == 0) {
		pthread_mutex_lock(&tc->ext.net->cfg_lock);
		int rc = qdisc_show(tc, argc, argv, o);
		pthread_mutex_unlock(&tc->ext.net->cfg_lock);
		return rc;
	}
	if (pw__matches(cmd, "help") == 0) {
		pw__tc_err(tc, "%s", QDISC_USAGE);
		return 0; /* pw__tc_do_qdisc(): usage(); return 0; */
	}
	pw__tc_err(tc, "Command \"%s\" is unknown, try \"tc qdisc help\".", cmd);
	return -EINVAL;
}
