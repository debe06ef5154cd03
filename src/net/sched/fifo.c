/* SPDX-License-Identifier: MIT */
/*
 * pfifo, bfifo and pfifo_head_drop (the kernel's sch_fifo.c): one FIFO with
 * a limit in packets (pfifo, pfifo_head_drop) or bytes (bfifo).  Full:
 * pfifo and bfifo drop the arriving packet; pfifo_head_drop drops the
 * oldest and takes the new one (returning NET_XMIT_CN, as the kernel).
 * Default limit: the device's txqueuelen packets, or txqueuelen x
 * (MTU 1500 + 14 header bytes) for bfifo, as the kernel's fifo_init.
 * tc's side (`limit N`, printed `limit 1000p` / `limit 1514000b`) is
 * tc/q_fifo.c; the options it sends are sched/fifo.h's.
 * Threads/locks: the data path and change under the root lock.  O(1) per
 * packet.
 */
#include "fifo.h"

#include <errno.h>
#include <string.h>

#define PW__PSCHED_MTU 1514 /* ethernet: MTU 1500 + 14 header bytes */

struct fifo_priv {
	struct pw__pktq q;
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

static int fifo_init(struct pw__qdisc *q, void *opt, struct pw__extack *ext)
{
	(void)ext;
	pw__pktq_init(&((struct fifo_priv *)pw__qdisc_priv(q))->q);
	fifo_apply(q, opt);
	return 0;
}

static int fifo_change(struct pw__qdisc *q, void *opt, struct pw__extack *ext)
{
	(void)ext;
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

#define FIFO_OPS(name, str)                                                  \
	const struct pw__qdisc_ops name = {                                   \
		.id = str,                                                    \
		.priv_size = sizeof(struct fifo_priv),                        \
		.enqueue = fifo_enqueue,                                      \
		.dequeue = fifo_dequeue,                                      \
		.peek = fifo_peek,                                            \
		.init = fifo_init,                                            \
		.change = fifo_change,                                        \
		.reset = fifo_reset,                                          \
	}

FIFO_OPS(pw__pfifo_ops, "pfifo");
FIFO_OPS(pw__bfifo_ops, "bfifo");
FIFO_OPS(pw__pfifo_head_drop_ops, "pfifo_head_drop");
