/* SPDX-License-Identifier: MIT */
/*
 * tc's half of "accuracy you can see" (tc_accuracy.c): a qdisc's achieved
 * figures (accuracy.c) beside its configured ones, judged, and printed by
 * `qdisc show` under PW_TC_ACCURACY (pinwheel-tc -A).  For tc_qdisc.c,
 * tc.c and the tests.  Context: the tc thread, cfg_lock held (each
 * function says which root lock it takes).
 */
#ifndef PW_NET_TC_TC_ACCURACY_H
#define PW_NET_TC_TC_ACCURACY_H

#include "tc.h"

/* Fill @out for @q: the achieved, the configured, the verdict.  Takes
 * @q's root lock (its children's for mq).  cfg_lock held.
 * Return: 0; -ENOENT (accuracy off for @q); -ENOMEM. */
int pw__tc_accuracy_fill(struct pw__qdisc *q, struct pw_qdisc_accuracy *out);

/* The lines (text) or the "accuracy" object (JSON) of @q in a qdisc show,
 * after its -s lines; "accuracy off" when it is off.  cfg_lock held.
 * Return: none. */
void pw__tc_print_accuracy(struct pw__out *o, struct pw__qdisc *q);

#endif /* PW_NET_TC_TC_ACCURACY_H */
