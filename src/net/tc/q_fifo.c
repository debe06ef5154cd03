/* SPDX-License-Identifier: MIT */
/*
 * The fifos' tc side (iproute2 6.1's tc/q_fifo.c): `limit N` for pfifo,
 * bfifo and pfifo_head_drop (read as a size, as q_fifo.c does: `pfifo
 * limit 5k` is 5120 packets), printed `limit 1000p` (packets) or `limit
 * 1514000b` (bfifo's bytes).  The kernel side is sched/fifo.c.
 * Context: the tc thread; parse with cfg_lock held, print under the root
 * lock.
 */
#include "tc.h"
#include "../sched/fifo.h"

#include <errno.h>
#include <string.h>

#define FIFO_USAGE "Usage: ... <[p|b]fifo | pfifo_head_drop> [ limit NUMBER ]"

static int fifo_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct fifo_opt *o = optp;
	const char *id = tc->ext.kind ? tc->ext.kind : "pfifo";
	while (argc > 0) {
		if (!strcmp(*argv, "limit")) {
			argc--, argv++;
			if (argc <= 0) {
				pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
				return -EINVAL;
			}
			if (pw__get_size(&o->limit, *argv)) {
				pw__tc_err(tc, "%s: Illegal value for \"limit\": \"%s\"", id, *argv);
				return -EINVAL;
			}
			o->has_limit = true;
		} else if (!strcmp(*argv, "help")) {
			pw__tc_err(tc, FIFO_USAGE);
			return -EINVAL;
		} else {
			pw__tc_err(tc, "%s: unknown parameter \"%s\"", id, *argv);
			pw__tc_err(tc, FIFO_USAGE);
			return -EINVAL;
		}
		argc--, argv++;
	}
	return 0;
}

/* pfifo and pfifo_head_drop: a limit in packets */
static void pfifo_print(struct pw__qdisc *q, struct pw__out *o)
{
	pw__print_uint(o, PW_PRINT_ANY, "limit", "limit %up", q->limit);
}

/* bfifo: a limit in bytes */
static void bfifo_print(struct pw__qdisc *q, struct pw__out *o)
{
	pw__print_size(o, PW_PRINT_ANY, "limit", "limit %s", q->limit);
}

const struct pw__qdisc_util pw__pfifo_util = {
	.id = "pfifo",
	.opt_size = sizeof(struct fifo_opt),
	.parse = fifo_parse,
	.print = pfifo_print,
};

const struct pw__qdisc_util pw__pfifo_head_drop_util = {
	.id = "pfifo_head_drop",
	.opt_size = sizeof(struct fifo_opt),
	.parse = fifo_parse,
	.print = pfifo_print,
};

const struct pw__qdisc_util pw__bfifo_util = {
	.id = "bfifo",
	.opt_size = sizeof(struct fifo_opt),
	.parse = fifo_parse,
	.print = bfifo_print,
};
