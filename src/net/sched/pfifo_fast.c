/* SPDX-License-Identifier: MIT */
/*
 * pfifo_fast (the kernel's default qdisc, sch_generic.c): three FIFO bands
 * chosen by the packet's priority through the priomap (TC_PRIO_* -> band),
 * dequeued strictly band 0 first.  Each band holds up to the device's
 * txqueuelen packets (the kernel's per-band ring since 4.16); a packet
 * arriving at a full band is dropped (PW_DROP_QDISC_LIMIT).
 * tc's side (no options; printed as `bands 3 priomap 1 2 2 2 1 2 0 0 1 1
 * 1 1 1 1 1 1`) is tc/q_pfifo_fast.c.
 * Threads/locks: data path under the root lock.  O(1) per packet.
 */
#include "pfifo_fast.h"

#include <errno.h>
#include <string.h>

const uint8_t pw__pfifo_fast_prio2band[PW__TC_PRIO_MAX + 1] = { 1, 2, 2, 2, 1, 2, 0, 0,
								1, 1, 1, 1, 1, 1, 1, 1 };

struct pff_priv {
	struct pw__pktq band[PW__PFIFO_FAST_BANDS];
};

static int pff_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	struct pw__pktq *b = &f->band[pw__pfifo_fast_prio2band[p->priority & PW__TC_PRIO_MAX]];
	if (b->len >= q->limit)
		return pw__q_drop(q, p, d, PW_DROP_QDISC_LIMIT);
	pw__pktq_push(b, p);
	pw__q_backlog_inc(q, p);
	return PW_NET_XMIT_SUCCESS;
}

static struct pw_pkt *pff_dequeue(struct pw__qdisc *q)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < PW__PFIFO_FAST_BANDS; i++) {
		struct pw_pkt *p = pw__pktq_pop(&f->band[i]);
		if (p) {
			pw__q_backlog_dec(q, p);
			pw__q_bstats(q, p);
			return p;
		}
	}
	return NULL;
}

static struct pw_pkt *pff_peek(struct pw__qdisc *q)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < PW__PFIFO_FAST_BANDS; i++)
		if (f->band[i].head)
			return f->band[i].head;
	return NULL;
}

static int pff_init(struct pw__qdisc *q, void *opt, struct pw__extack *ext)
{
	(void)opt, (void)ext;
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < PW__PFIFO_FAST_BANDS; i++)
		pw__pktq_init(&f->band[i]);
	q->limit = q->dev->txqueuelen ? q->dev->txqueuelen : 1;
	return 0;
}

static void pff_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason r)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < PW__PFIFO_FAST_BANDS; i++) {
		struct pw_pkt *p;
		while ((p = pw__pktq_pop(&f->band[i]))) {
			pw__q_backlog_dec(q, p);
			pw__drop_later(d, p, r);
		}
	}
}

/* iproute2 has a printer for pfifo_fast (q_prio.c's) but no parser: any
 * option is refused by tc itself, and the kernel's pfifo_fast takes none. */
const struct pw__qdisc_ops pw__pfifo_fast_ops = {
	.id = "pfifo_fast",
	.priv_size = sizeof(struct pff_priv),
	.enqueue = pff_enqueue,
	.dequeue = pff_dequeue,
	.peek = pff_peek,
	.init = pff_init,
	.reset = pff_reset,
};
