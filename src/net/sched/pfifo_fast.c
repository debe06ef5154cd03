/* SPDX-License-Identifier: MIT */
/*
 * pfifo_fast (the kernel's default qdisc, sch_generic.c): three FIFO bands
 * chosen by the packet's priority through the priomap (TC_PRIO_* -> band),
 * dequeued strictly band 0 first.  Each band holds up to the device's
 * txqueuelen packets (the kernel's per-band ring since 4.16); a packet
 * arriving at a full band is dropped (PW_DROP_QDISC_LIMIT).
 * The tc half: it has no options of its own (iproute2 parses prio's syntax
 * for it and the kernel ignores it; so do we: bands and priomap are
 * accepted and checked, not applied); printed as `bands 3 priomap 1 2 2 2
 * 1 2 0 0 1 1 1 1 1 1 1 1`.
 * Threads/locks: data path under the root lock.  O(1) per packet.
 */
#include "../internal.h"

#include <errno.h>
#include <string.h>

#define BANDS 3
#define TC_PRIO_MAX 15

static const uint8_t prio2band[TC_PRIO_MAX + 1] = { 1, 2, 2, 2, 1, 2, 0, 0,
						    1, 1, 1, 1, 1, 1, 1, 1 };

struct pff_priv {
	struct pw__pktq band[BANDS];
};

struct pff_opt {
	int unused;
};

static int pff_enqueue(struct pw_pkt *p, struct pw__qdisc *q, struct pw__drops *d)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	struct pw__pktq *b = &f->band[prio2band[p->priority & TC_PRIO_MAX]];
	if (b->len >= q->limit)
		return pw__q_drop(q, p, d, PW_DROP_QDISC_LIMIT);
	pw__pktq_push(b, p);
	pw__q_backlog_inc(q, p);
	return PW_NET_XMIT_SUCCESS;
}

static struct pw_pkt *pff_dequeue(struct pw__qdisc *q)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < BANDS; i++) {
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
	for (int i = 0; i < BANDS; i++)
		if (f->band[i].head)
			return f->band[i].head;
	return NULL;
}

static int pff_init(struct pw__qdisc *q, void *opt, struct pw__tc_ctx *tc)
{
	(void)opt, (void)tc;
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < BANDS; i++)
		pw__pktq_init(&f->band[i]);
	q->limit = q->dev->txqueuelen ? q->dev->txqueuelen : 1;
	return 0;
}

static void pff_reset(struct pw__qdisc *q, struct pw__drops *d, enum pw_drop_reason r)
{
	struct pff_priv *f = pw__qdisc_priv(q);
	for (int i = 0; i < BANDS; i++) {
		struct pw_pkt *p;
		while ((p = pw__pktq_pop(&f->band[i]))) {
			pw__q_backlog_dec(q, p);
			pw__drop_later(d, p, r);
		}
	}
}

/* iproute2 has a printer for pfifo_fast (q_prio.c's) but no parser: any
 * option is refused by tc itself, and the kernel's pfifo_fast takes none. */
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
	pw__print_uint(o, PW_PRINT_ANY, "bands", "bands %u ", BANDS);
	pw__open_json_array(o, PW_PRINT_ANY, "priomap");
	for (int i = 0; i <= TC_PRIO_MAX; i++)
		pw__print_uint(o, PW_PRINT_ANY, NULL, " %d", prio2band[i]);
	pw__close_json_array(o, PW_PRINT_ANY, "");
	pw__print_bool(o, PW_PRINT_JSON, "multiqueue", NULL, false);
}

const struct pw__qdisc_ops pw__pfifo_fast_ops = {
	.id = "pfifo_fast",
	.priv_size = sizeof(struct pff_priv),
	.opt_size = sizeof(struct pff_opt),
	.enqueue = pff_enqueue,
	.dequeue = pff_dequeue,
	.peek = pff_peek,
	.init = pff_init,
	.reset = pff_reset,
	.parse = pff_parse,
	.print = pff_print,
};
