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
 * own words (its tc side's parse, struct pw__qdisc_util, which fills an option struct and reports its
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
 * parse as tc_class_modify() (the kind's words through its tc side's
 * class_parse), make tc_ctl_tclass()'s lookups and end in the kind's
 * class ops' change/delete (htb's), or in that kernel's -EOPNOTSUPP for a
 * kind without them (mq's classes are fixed).
 *
 * Errors.  Every failure returns a negative errno with the message tc
 * would print in the error buffer: the kernel's extack messages as
 * "Error: <message>.", iproute2's own ("Unknown qdisc ...", "Illegal ...")
 * verbatim, and "RTNETLINK answers: <strerror>" where the kernel gives no
 * message.  A failed command changes nothing: options are parsed and
 * every check made before the tree is touched, and a qdisc that fails to
 * initialise is freed before it is grafted.  Departure: where tc exits at
 * once (pw__tc_invarg(), pw__tc_duparg(), an incomplete command line),
 * pw_tc returns the error like any other, so a batch run with -force goes
 * on.
 *
 * Files: tc.c (this: the entry point, errors, estimators, the kinds' tc
 * sides by name, the shared lookups and printers; tc.h declares them),
 * tc_qdisc.c (`tc qdisc`), tc_class.c (`tc class`), q_KIND.c (each kind's
 * words and text, as iproute2's), tc_print.c and tc_util.c (output and
 * units), dist.c (netem's tables).  Layering: this side calls the kernel
 * side (../internal.h) and is never called by it.
 *
 * Threads and locks: any thread.  A qdisc command holds the layer's
 * cfg_lock from before it parses to the end (so commands are serialised
 * against each other and against device create/destroy, and a kind's
 * parse may build on the device: tbf's child); a show from its device
 * lookup.  The tree code takes root locks inside it (cfg_lock > root
 * lock).  Costs: a show walks the device's qdiscs and takes each root lock
 * once for its statistics.
 */
#define _GNU_SOURCE
#include "tc.h"
#include "../accuracy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TC_MAXARGS 512

/* ------------------------------------------------------------- errors */

void pw__tc_err(struct pw__tc_ctx *tc, const char *fmt, ...)
{
	if (!tc)
		return;
	va_list ap;
	va_start(ap, fmt);
	pw__extack_vmsg(&tc->ext, fmt, ap);
	va_end(ap);
}

int pw__tc_rtnl_err(struct pw__tc_ctx *tc, int rc)
{
	if (tc->ext.msgused == 0)
		pw__tc_err(tc, "RTNETLINK answers: %s", strerror(-rc));
	return rc;
}

int pw__tc_incomplete(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
	return -EINVAL;
}

int pw__tc_invarg(struct pw__tc_ctx *tc, const char *msg, const char *arg)
{
	pw__tc_err(tc, "Error: argument \"%s\" is wrong: %s", arg, msg);
	return -EINVAL;
}

int pw__tc_duparg(struct pw__tc_ctx *tc, const char *key, const char *arg)
{
	pw__tc_err(tc, "Error: duplicate \"%s\": \"%s\" is the second value.", key, arg);
	return -EINVAL;
}

int pw__tc_no_files(struct pw__tc_ctx *tc, const char *what)
{
	if (!(tc->flags & PW_TC_NO_FILES))
		return 0;
	/* the word itself is not repeated: where it names a path, whether
	 * that path exists is no business of the caller's */
	pw__tc_err(tc, "Error: %s would read a file, and this command may read none.", what);
	return -EPERM;
}

/* ---------------------------------------------------------- estimator */

int pw__est_parse(struct pw__tc_ctx *tc, const char *interval, const char *tconst,
		  int8_t *interval_code, uint8_t *ewma_log)
{
	uint32_t a, tc_us;
	if (pw__get_time(&a, interval))
		return pw__tc_invarg(tc, "estimator", "invalid estimator interval");
	if (pw__get_time(&tc_us, tconst))
		return pw__tc_invarg(tc, "estimator", "invalid estimator time constant");
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

/* ------------------------------------------------------- the kinds */

/* Every kind's tc side, as iproute2 finds a qdisc_util by name. */
static const struct pw__qdisc_util *const qdisc_utils[] = {
	&pw__pfifo_util, &pw__bfifo_util, &pw__pfifo_head_drop_util, &pw__pfifo_fast_util,
	&pw__mq_util,    &pw__netem_util, &pw__tbf_util,             &pw__htb_util,
	&pw__fq_util,
	&pw__trace_util,
};

const struct pw__qdisc_util *pw__qdisc_util_get(const char *id)
{
	for (size_t i = 0; i < sizeof(qdisc_utils) / sizeof(qdisc_utils[0]); i++)
		if (!strcmp(qdisc_utils[i]->id, id))
			return qdisc_utils[i];
	return NULL;
}

bool pw__qdisc_util_has_classes(const char *id)
{
	/* iproute2's kinds with a parse_copt that pinwheel has no kernel
	 * side for: tc class add names them differently from a classless
	 * kind ("pinwheel has no ... classes", not "classless") */
	static const char *const foreign[] = { "hfsc", "cbq", "drr", "qfq", "ets", "atm",
					       "dsmark" };
	const struct pw__qdisc_util *u = pw__qdisc_util_get(id);
	if (u)
		return u->class_parse != NULL;
	for (size_t i = 0; i < sizeof(foreign) / sizeof(foreign[0]); i++)
		if (!strcmp(foreign[i], id))
			return true;
	return false;
}

/* ------------------------------------------------------- the tree side */

struct pw_netdev *pw__tc_dev_lookup(struct pw__net *net, const char *name)
{
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		if (!strcmp(d->name, name))
			return d;
	return NULL;
}

/* The kernel's pw__tc_qdisc_leaf(): the qdisc attached under class @classid of
 * @p, with its errors. */
int pw__tc_qdisc_leaf(struct pw__tc_ctx *tc, struct pw__qdisc *p, uint32_t classid,
		      struct pw__qdisc **leaf, unsigned long *clp)
{
	if (!(p->ops->cl_ops && p->ops->cl_ops->find)) {
		PW__TC_KERR(tc, "Parent qdisc is not classful");
		return -EOPNOTSUPP;
	}
	unsigned long cl = p->ops->cl_ops->find(p, classid);
	if (!cl) {
		PW__TC_KERR(tc, "Specified class not found");
		return -ENOENT;
	}
	*leaf = (p->ops->cl_ops && p->ops->cl_ops->leaf) ? p->ops->cl_ops->leaf(p, cl) : NULL;
	if (clp)
		*clp = cl;
	return 0;
}

/* --------------------------------------------------------------- show */

void pw__tc_print_stats(struct pw__out *o, const struct pw_qdisc_stats *st)
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

/* Every qdisc of @dev in the kernel's dump order: the root, then the
 * handle hash bucket by bucket. */
void pw__tc_for_each_qdisc(struct pw_netdev *dev,
			   void (*fn)(struct pw_netdev *, struct pw__qdisc *, void *), void *arg)
{
	if (dev->qdisc)
		fn(dev, dev->qdisc, arg);
	for (unsigned b = 0; b < (1u << PW__QHASH_BITS); b++)
		for (struct pw__qdisc *q = dev->qhash[b]; q; q = q->hnext)
			if (q != dev->qdisc)
				fn(dev, q, arg);
}

/* The devices in creation order (the kernel's ifindex order). */
unsigned pw__tc_devs_in_order(struct pw__net *net, struct pw_netdev ***out)
{
	unsigned n = 0;
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		n++;
	struct pw_netdev **v = calloc(n ? n : 1, sizeof(*v));
	*out = v;
	if (!v)
		return 0;
	unsigned i = n;
	for (struct pw_netdev *d = net->devs; d; d = d->next)
		v[--i] = d;
	*out = v;
	return n;
}

/* ------------------------------------------------------------ confinement */

const char *pw__tc_dev_word(struct pw__tc_ctx *tc, const char *word, int *rc)
{
	*rc = 0;
	if (!tc->confine || !strcmp(word, tc->confine))
		return word;
	if (pw__tc_dev_lookup(tc->ext.net, word)) {
		pw__tc_err(tc, "Error: dev \"%s\" is another device: this command acts on %s only.",
			   word, tc->confine);
		*rc = -EPERM;
		return NULL;
	}
	return tc->confine;
}

/* pw_tc() and pw_tc_dev(): @confine NULL or the one device the command
 * may act on. */
static int tc_run(struct pw_runtime *rt, const char *confine, const char *cmd, unsigned flags,
		  char *out, size_t outlen, char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
	if (out && outlen)
		out[0] = '\0';
	if (!rt || !cmd)
		return -EINVAL;
	struct pw__tc_ctx tc;
	memset(&tc, 0, sizeof(tc));
	tc.ext.msg = err;
	tc.ext.msglen = errlen;
	tc.flags = flags;
	tc.confine = confine;
	/* psched's constants since Linux 2.6.x (tick = 1/64 us); fixed so a
	 * script parses the same on every machine */
	pw__tc_core_set(&tc.core, 1000, 64, 1000000);
	tc.ext.net = pw__net_get(rt);
	if (!tc.ext.net)
		return pw__tc_rtnl_err(&tc, -ENOMEM);

	char *line = strdup(cmd);
	char **argv = calloc(TC_MAXARGS, sizeof(*argv));
	if (!line || !argv) {
		free(line);
		free(argv);
		return pw__tc_rtnl_err(&tc, -ENOMEM);
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
		rc = pw__tc_do_qdisc(&tc, argc - 1, argv + 1, &o);
	} else if (pw__matches(obj, "class") == 0) {
		rc = pw__tc_do_class(&tc, argc - 1, argv + 1, &o);
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
	pw__acc_sync(tc.ext.net); /* qdiscs it created count too (accuracy.c) */
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
	if (rc == -ENOMEM) /* an allocation failed: say so if nothing else did */
		pw__tc_rtnl_err(&tc, rc);
	free(argv);
	free(line);
	return rc;
}

int pw_tc(struct pw_runtime *rt, const char *cmd, unsigned flags, char *out, size_t outlen,
	  char *err, size_t errlen)
{
	return tc_run(rt, NULL, cmd, flags, out, outlen, err, errlen);
}

int pw_tc_dev(struct pw_runtime *rt, const char *dev, const char *cmd, unsigned flags, char *out,
	      size_t outlen, char *err, size_t errlen)
{
	if (!dev || !*dev) {
		if (err && errlen)
			snprintf(err, errlen, "No device to confine the command to");
		return -EINVAL;
	}
	return tc_run(rt, dev, cmd, flags, out, outlen, err, errlen);
}
