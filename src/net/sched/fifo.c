/* SPDX-License-Identifier: MIT */
/*
 * pfifo, bfifo and pfifo_head_drop (the kernel's sch_fifo.c): one FIFO with
 * a limit in packets (pfifo, pfifo_head_drop) or bytes (bfifo).  Full:
 * pfifo and bfifo drop the arriving packet; pfifo_head_drop drops the
 * oldest and takes the new one (returning NET_XMIT_CN, as the kernel).
 * Default limit: the device's txqueuelen packets, or txqueuelen x
 * (MTU 1500 + 14 header bytes) for bfifo, as the kernel's fifo_init.
 * The tc half: `limit N` (q_fifo.c), printed `limit 1000p` / `limit 1514000b`.
 * Threads/locks: the data path and change under the root lock; parse and
 * print on the tc thread (print under the root lock).  O(1) per packet.
 */
#include "../internal.h"

#include <errno.h>
#include <string.h>

#define PW__PSCHED_MTU 1514 /* ethernet: MTU 1500 + 14 header bytes */

struct fifo_priv {
	struct pw__pktq q;
};

struct fifo_opt {
	uint32_t limit;
	bool has_limit;
};

static bool is_bytes(const struct pw__qdisc *q)
{
	return q->ops == &pw__bfifo_ops;
}

static int fifo_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	struct fifo_priv *f = pw__qdisc_priv(q);
	bool room = is_bytes(q) ? q->st.backlog + p->len <= q->limit : f->q.len < q->limit;
	if (!room) {
		if (q->ops != &pw__pfifo_head_drop_ops || q->limit == 0)
			return pw__q_drop(q, p, d, PW_DROP_QDISC_LIMIT);
		struct pw_pkt *old = pw__pktq_pop(&f->q);
		if (old) {
			pw__q_backlog_dec(q, old);
			q->st.drops++;
			pw__drop_later(d, old, PW_DROP_QDISC_LIMIT);
		}
		pw__pktq_push(&f->q, p);
		pw__q_backlog_inc(q, p);
		return PW_NET_XMIT_CN;
	}
	pw__pktq_push(&f->q, p);
	pw__q_backlog_inc(q, p);
	return PW_NET_XMIT_SUCCESS;
}

static struct pw_pkt *fifo_dequeue(struct pw__qdisc *q)
{
	struct fifo_priv *f = pw__qdisc_priv(q);
	struct pw_pkt *p = pw__pktq_pop(&f->q);
	if (p) {
		pw__q_backlog_dec(q, p);
		pw__q_bstats(q, p);
	}
	return p;
}

static struct pw_pkt *fifo_peek(struct pw__qdisc *q)
{
	return ((struct fifo_priv *)pw__qdisc_priv(q))->q.head;
}

static void fifo_apply(struct pw__qdisc *q, const struct fifo_opt *o)
{
	if (o && o->has_limit) {
		q->limit = o->limit;
	} else {
		uint32_t l = q->dev->txqueuelen ? q->dev->txqueuelen : 1;
		q->limit = is_bytes(q) ? l * PW__PSCHED_MTU : l;
	}
}

static int fifo_init(struct pw__qdisc *q, void *opt, struct pw__tc_ctx *tc)
{
	(void)tc;
	pw__pktq_init(&((struct fifo_priv *)pw__qdisc_priv(q))->q);
	fifo_apply(q, opt);
	return 0;
}

static int fifo_change(struct pw__qdisc *q, void *opt, struct pw__tc_ctx *tc)
{
	(void)tc;
	fifo_apply(q, opt);
	return 0;
}

static void fifo_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason r)
{
	struct fifo_priv *f = pw__qdisc_priv(q);
	struct pw_pkt *p;
	while ((p = pw__pktq_pop(&f->q))) {
		pw__q_backlog_dec(q, p);
		pw__drop_later(d, p, r);
	}
}

static int fifo_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct fifo_opt *o = optp;
	const char *id = tc->kind ? tc->kind : "pfifo";
	while (argc > 0) {
		if (!strcmp(*argv, "limit")) {
			argc--, argv++;
			if (argc <= 0) {
				pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
				return -EINVAL;
			}
			/* q_fifo.c reads every fifo's limit with get_size():
			 * pfifo limit 5k is 5120 packets */
			if (pw__get_size(&o->limit, *argv)) {
				pw__tc_err(tc, "%s: Illegal value for \"limit\": \"%s\"", id, *argv);
				return -EINVAL;
			}
			o->has_limit = true;
		} else if (!strcmp(*argv, "help")) {
			pw__tc_err(tc, "Usage: ... <[p|b]fifo | pfifo_head_drop> [ limit NUMBER ]");
			return -EINVAL;
		} else {
			pw__tc_err(tc, "%s: unknown parameter \"%s\"", id, *argv);
			pw__tc_err(tc, "Usage: ... <[p|b]fifo | pfifo_head_drop> [ limit NUMBER ]");
			return -EINVAL;
		}
		argc--, argv++;
	}
	return 0;
}

static void fifo_print(struct pw__qdisc *q, struct pw__out *o)
{
	if (is_bytes(q))
		pw__print_size(o, PW_PRINT_ANY, "limit", "limit %s", q->limit);
	else
		pw__print_uint(o, PW_PRINT_ANY, "limit", "limit %up", q->limit);
}

#define FIFO_OPS(name, str)                                                  \
	const struct pw__qdisc_ops name = {                                   \
		.id = str,                                                    \
		.priv_size = sizeof(struct fifo_priv),                        \
		.opt_size = sizeof(struct fifo_opt),                          \
		.enqueue = fifo_enqueue,                                      \
		.dequeue = fifo_dequeue,                                      \
		.peek = fifo_peek,                                            \
		.init = fifo_init,                                            \
		.change = fifo_change,                                        \
		.reset = fifo_reset,                                          \
		.parse = fifo_parse,                                          \
		.print = fifo_print,                                          \
	}

FIFO_OPS(pw__pfifo_ops, "pfifo");
FIFO_OPS(pw__bfifo_ops, "bfifo");
FIFO_OPS(pw__pfifo_head_drop_ops, "pfifo_head_drop");
