/* SPDX-License-Identifier: MIT */
/*
 * `tc class show|add|change|replace|del` (iproute2's tc_class.c and the
 * kernel's tc_ctl_tclass()/tc_dump_tclass()).  Threads: the tc thread;
 * cfg_lock held for the lookups and the dump.
 */
#define _GNU_SOURCE
#include "tc.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------- class */

struct class_walk_arg {
	struct pw__tc_show_arg *sa;
	struct pw_netdev *dev;
};

static int print_class(struct pw__qdisc *q, unsigned long cl, void *arg)
{
	struct class_walk_arg *cw = arg;
	struct pw__tc_show_arg *sa = cw->sa;
	struct pw__out *o = sa->o;
	struct pw__class_info ci;
	memset(&ci, 0, sizeof(ci));
	q->ops->cl_ops->info(q, cl, &ci);
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
	const struct pw__qdisc_util *util = pw__qdisc_util_get(q->ops->id);
	pw__open_json_object(o, "options");
	if (util && util->class_print)
		util->class_print(q, cl, o);
	pw__close_json_object(o);
	pw__print_nl(o);
	if ((sa->tc->flags & PW_TC_STATS) && ci.no_stats) {
		pw__print_nl(o); /* a class dump with empty statistics (tbf's) */
	} else if (sa->tc->flags & PW_TC_STATS) {
		ci.st.has_rate = 0; /* class dumps carry no rate (mq's) */
		pw__tc_print_stats(o, &ci.st);
		pw__print_nl(o);
		if (util && util->class_print_xstats)
			util->class_print_xstats(q, cl, o);
	}
	pw__close_json_object(o);
	return 0;
}

static void class_one(struct pw_netdev *dev, struct pw__qdisc *q, void *arg)
{
	struct pw__tc_show_arg *sa = arg;
	const struct pw__class_ops *cops = q->ops->cl_ops;
	if (!cops || !cops->walk || !cops->info)
		return;
	if (sa->parent && PW_TC_H_MAJ(sa->parent) != q->handle)
		return; /* tc_dump_tclass_qdisc() */
	struct class_walk_arg cw = { arg, dev };
	q->ops->cl_ops->walk(q, print_class, &cw);
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
	struct pw__tc_show_filter f = { 0 };
	struct pw__tc_show_arg sa = { tc, o, &f, 0, 0 };
	while (argc > 0) {
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			if (devname)
				return pw__tc_duparg(tc, "dev", *argv);
			int rc;
			if (!(devname = pw__tc_dev_word(tc, *argv, &rc)))
				return rc;
		} else if (!strcmp(*argv, "qdisc")) {
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			if (f.handle)
				return pw__tc_duparg(tc, "qdisc", *argv);
			if (pw__get_qdisc_handle(&f.handle, *argv))
				return pw__tc_invarg(tc, "invalid qdisc ID", *argv);
		} else if (!strcmp(*argv, "classid")) {
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			if (sa.classid)
				return pw__tc_duparg(tc, "classid", *argv);
			if (pw__get_tc_classid(&sa.classid, *argv))
				return pw__tc_invarg(tc, "invalid class ID", *argv);
		} else if (!strcmp(*argv, "root")) {
			if (sa.parent) {
				pw__tc_err(tc, "Error: \"root\" is duplicate parent ID");
				return -EINVAL;
			}
			sa.parent = PW_TC_H_ROOT;
		} else if (!strcmp(*argv, "parent")) {
			if (sa.parent) /* tc checks before NEXT_ARG() */
				return pw__tc_duparg(tc, "parent", *argv);
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			if (pw__get_tc_classid(&sa.parent, *argv))
				return pw__tc_invarg(tc, "invalid parent ID", *argv);
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
	if (!devname)
		devname = tc->confine; /* confined: its own device */
	if (devname) {
		struct pw_netdev *dev = pw__tc_dev_lookup(tc->ext.net, devname);
		if (!dev) {
			pw__tc_err(tc, "Cannot find device \"%s\"", devname);
			rc = -ENODEV;
		} else {
			pw__tc_for_each_qdisc(dev, class_one, &sa);
		}
	}
	/* without dev tc sends ifindex 0, and the kernel's tc_dump_tclass()
	 * dumps nothing */
	o->json = json;
	return rc;
}


/* tc_class_modify() of tc_class.c (the kind's words parsed by its tc
 * side's class_parse, cfg_lock held, before the device is looked up, as
 * tc does), then the kernel's tc_ctl_tclass(): the same lookups and
 * errors, then the class ops' change / delete, or -EOPNOTSUPP for a kind
 * without them (mq). */
static int class_modify(struct pw__tc_ctx *tc, int argc, char **argv, unsigned flags, bool del)
{
	const char *devname = NULL, *kind = NULL;
	uint32_t clid = 0, portid = 0;
	while (argc > 0) {
		if (!strcmp(*argv, "dev")) {
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			if (devname)
				return pw__tc_duparg(tc, "dev", *argv);
			int rc;
			if (!(devname = pw__tc_dev_word(tc, *argv, &rc)))
				return rc;
		} else if (!strcmp(*argv, "classid")) {
			if (--argc <= 0)
				return pw__tc_incomplete(tc);
			argv++;
			if (clid)
				return pw__tc_duparg(tc, "classid", *argv);
			if (pw__get_tc_classid(&clid, *argv))
				return pw__tc_invarg(tc, "invalid class ID", *argv);
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
				return pw__tc_incomplete(tc);
			argv++;
			if (portid)
				return pw__tc_duparg(tc, "parent", *argv);
			if (pw__get_tc_classid(&portid, *argv))
				return pw__tc_invarg(tc, "invalid parent ID", *argv);
		} else if (pw__matches(*argv, "estimator") == 0) {
			int8_t ei;
			uint8_t el;
			if (argc < 3)
				return pw__tc_incomplete(tc);
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
	if (kind && !pw__qdisc_util_has_classes(kind)) {
		pw__tc_err(tc, "Error: Qdisc \"%s\" is classless.", kind);
		return -EINVAL;
	}
	const struct pw__qdisc_ops *kops = kind ? pw__qdisc_lookup_ops(kind) : NULL;
	const struct pw__qdisc_util *kutil = kops ? pw__qdisc_util_get(kops->id) : NULL;
	if (kind && (!kutil || !kutil->class_parse)) {
		pw__tc_err(tc, "Error: pinwheel has no \"%s\" classes.", kind);
		return -EOPNOTSUPP;
	}
	int rc;
	void *copt = NULL; /* the kind's class options (TCA_OPTIONS), or none */
	pthread_mutex_lock(&tc->ext.net->cfg_lock);
	if (kops) {
		copt = calloc(1, kutil->class_opt_size ? kutil->class_opt_size : 1);
		if (!copt) {
			pthread_mutex_unlock(&tc->ext.net->cfg_lock);
			return -ENOMEM;
		}
		tc->ext.kind = kops->id;
		rc = kutil->class_parse(tc, argc - 1, argv + 1, copt);
		if (rc) {
			pthread_mutex_unlock(&tc->ext.net->cfg_lock);
			free(copt);
			return rc;
		}
	}
	/* what the kind's parse said (a warning) stays; the kernel side's
	 * messages follow it as if the buffer were empty */
	size_t said = tc->ext.msgused;
	if (said)
		tc->ext.msg += said, tc->ext.msglen -= said, tc->ext.msgused = 0;
	struct pw_netdev *dev = NULL;
	if (devname && !(dev = pw__tc_dev_lookup(tc->ext.net, devname))) {
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
	if (!(q->ops->cl_ops && q->ops->cl_ops->find))
		goto out;
	if (clid == 0) {
		if (portid == PW_TC_H_ROOT)
			clid = qid;
	} else {
		clid = PW_TC_H_MAKE(qid, clid);
	}
	unsigned long cl = clid ? q->ops->cl_ops->find(q, clid) : 0;
	if (!cl) {
		rc = -ENOENT;
		if (del || !(flags & PW__TC_F_CREATE))
			goto out;
	} else if (!del && (flags & PW__TC_F_EXCL)) {
		rc = -EEXIST;
		goto out;
	}
	if (del) {
		rc = (q->ops->cl_ops && q->ops->cl_ops->delete) ? q->ops->cl_ops->delete(q, cl, &tc->ext) : -EOPNOTSUPP;
		goto out;
	}
	if (clid == PW_TC_H_ROOT) {
		PW__TC_KERR(tc, "Cannot create traffic class with classid TC_H_ROOT");
		rc = -EINVAL;
		goto out;
	}
	rc = -EOPNOTSUPP; /* no cops->change */
	if ((q->ops->cl_ops && q->ops->cl_ops->change)) {
		/* another kind's words mean nothing to this one: as if no
		 * options were sent */
		unsigned long ncl = cl;
		rc = q->ops->cl_ops->change(q, clid, portid, kops == q->ops ? copt : NULL, &ncl, &tc->ext);
	}
out:
	pthread_mutex_unlock(&tc->ext.net->cfg_lock);
	if (rc && (dev || !devname)) /* else "Cannot find device" was said */
		pw__tc_rtnl_err(tc, rc);
	if (said)
		tc->ext.msg -= said, tc->ext.msglen += said, tc->ext.msgused += said;
	if (kops && copt)
		free(copt);
	return rc;
}

int pw__tc_do_class(struct pw__tc_ctx *tc, int argc, char **argv, struct pw__out *o)
{
	if (argc < 1) {
		pthread_mutex_lock(&tc->ext.net->cfg_lock);
		int rc = class_show(tc, 0, NULL, o);
		pthread_mutex_unlock(&tc->ext.net->cfg_lock);
		return rc;
	}
	const char *cmd = *argv;
	argc--, argv++;
	if (pw__matches(cmd, "list") == 0 || pw__matches(cmd, "show") == 0 ||
	    pw__matches(cmd, "lst") == 0) {
		pthread_mutex_lock(&tc->ext.net->cfg_lock);
		int rc = class_show(tc, argc, argv, o);
		pthread_mutex_unlock(&tc->ext.net->cfg_lock);
		return rc;
	}
	if (pw__matches(cmd, "add") == 0)
		return class_modify(tc, argc, argv, PW__TC_F_CREATE | PW__TC_F_EXCL, false);
	if (pw__matches(cmd, "change") == 0)
		return class_modify(tc, argc, argv, 0, false);
	if (pw__matches(cmd, "replace") == 0)
		return class_modify(tc, argc, argv, PW__TC_F_CREATE, false);
	if (pw__matches(cmd, "delete") == 0)
		return class_modify(tc, argc, argv, 0, true);
	if (pw__matches(cmd, "help") == 0) {
		pw__tc_err(tc, "%s", CLASS_USAGE);
		return 0; /* pw__tc_do_class(): usage(); return 0; */
	}
	pw__tc_err(tc, "Command \"%s\" is unknown, try \"tc class help\".", cmd);
	return -EINVAL;
}

