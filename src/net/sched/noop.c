/* SPDX-License-Identifier: MIT */
/*
 * noop (the kernel's noop_qdisc): what a TX queue of an mq device is left
 * with when its child qdisc is deleted (`tc qdisc del dev X parent 1:N`),
 * as the kernel leaves it.  It drops every packet (PW_DROP_NO_QDISC,
 * NET_XMIT_CN) and never holds one.  Built in: tc cannot add it, show
 * does not list it, and adding a qdisc on its class replaces it.
 * Threads/locks: the data path under the queue's root lock; nothing else.
 */
#include "../internal.h"

static int noop_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	pw__q_drop(q, p, d, PW_DROP_NO_QDISC);
	return PW_NET_XMIT_CN;
}

static struct pw_pkt *noop_dequeue(struct pw__qdisc *q)
{
	(void)q;
	return NULL;
}

const struct pw__qdisc_ops pw__noop_ops = {
	.id = "noop",
	.flags = PW__QF_BUILTIN,
	.enqueue = noop_enqueue,
	.dequeue = noop_dequeue,
};
