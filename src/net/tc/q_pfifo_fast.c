/* SPDX-License-Identifier: MIT */
/*
 * pfifo_fast's tc side.  It has no options: iproute2 parses no words for
 * it ("does not support option parsing"), and show prints its fixed bands
 * and priomap as iproute2's prio printer does: `bands 3 priomap 1 2 2 2 1
 * 2 0 0 1 1 1 1 1 1 1 1`.  The kernel side is sched/pfifo_fast.c.
 * Context: the tc thread; print under the root lock.
 */
#include "tc.h"
#include "../sched/pfifo_fast.h"

#include <errno.h>

static int pff_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *opt)
{
	(void)opt, (void)argv;
	if (argc > 0) {
		pw__tc_err(tc, "qdisc 'pfifo_fast' does not support option parsing");
		return -EINVAL;
	}
	return 0;
}

static void pff_print(struct pw__qdisc *q, struct pw__out *o)
{
	(void)q;
	pw__print_uint(o, PW_PRINT_ANY, "bands", "bands %u ", PW__PFIFO_FAST_BANDS);
	pw__open_json_array(o, PW_PRINT_ANY, "priomap");
	for (int i = 0; i <= PW__TC_PRIO_MAX; i++)
		pw__print_uint(o, PW_PRINT_ANY, NULL, " %d", pw__pfifo_fast_prio2band[i]);
	pw__close_json_array(o, PW_PRINT_ANY, "");
	pw__print_bool(o, PW_PRINT_JSON, "multiqueue", NULL, false);
}

const struct pw__qdisc_util pw__pfifo_fast_util = {
	.id = "pfifo_fast",
	.parse = pff_parse,
	.print = pff_print,
};
