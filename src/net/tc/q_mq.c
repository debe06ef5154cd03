/* SPDX-License-Identifier: MIT */
/*
 * mq's tc side.  iproute2 has no q_mq.c: tc treats mq as a kind it knows
 * nothing of, so any word after `mq` is refused with its generic parser's
 * message, and show prints no options.  The kernel side is sched/mq.c.
 * Context: the tc thread, cfg_lock held.
 */
#include "tc.h"

#include <errno.h>

static int mq_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *opt)
{
	(void)opt;
	if (argc > 0) {
		pw__tc_err(tc, "Unknown qdisc \"mq\", hence option \"%s\" is unparsable", *argv);
		return -EINVAL;
	}
	return 0;
}

const struct pw__qdisc_util pw__mq_util = {
	.id = "mq",
	.parse = mq_parse,
};
