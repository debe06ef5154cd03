/* SPDX-License-Identifier: MIT */
/*
 * htb's tc side: q_htb.c's parsing of the qdisc's options (r2q, default,
 * direct_qlen, debug) and of a class's (rate, ceil, burst, cburst, prio,
 * quantum, mtu, mpu, overhead, linklayer), with its messages and usage,
 * and the printing of both as `tc qdisc show` / `tc class show` do (text
 * and JSON, -d's extra fields).  The qdisc itself: htb.c.
 *
 * Threads and locks: the parsers run under the layer's configuration lock
 * (pw_tc()) and touch no qdisc; the printers read a qdisc or class under
 * the configuration lock, as the kernel's dumps run under RTNL, and the
 * class statistics (tokens, lends, borrows) also take the root lock, which
 * the data path updates them under.
 */
#include "tc.h"
#include "../sched/htb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void explain(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "Usage: ... qdisc add ... htb [default N] [r2q N]\n"
		       "                      [direct_qlen P] [offload]\n"
		       " default  minor id of class to which unclassified packets are sent {0}\n"
		       " r2q      DRR quantums are computed as rate in Bps/r2q {10}\n"
		       " debug    string of 16 numbers each 0-3 {0}\n\n"
		       " direct_qlen  Limit of the direct queue {in packets}\n"
		       " offload  enable hardware offload\n"
		       "... class add ... htb rate R1 [burst B1] [mpu B] [overhead O]\n"
		       "                      [prio P] [slot S] [pslot PS]\n"
		       "                      [ceil R2] [cburst B2] [mtu MTU] [quantum Q]\n"
		       " rate     rate allocated to this class (class can still borrow)\n"
		       " burst    max bytes burst which can be accumulated during idle period {computed}\n"
		       " mpu      minimum packet size used in rate computations\n"
		       " overhead per-packet size overhead used in rate computations\n"
		       " linklay  adapting to a linklayer e.g. atm\n"
		       " ceil     definite upper class rate (no borrows) {rate}\n"
		       " cburst   burst but for ceil {computed}\n"
		       " mtu      max packet size we create rate map for {1600}\n"
		       " prio     priority of leaf; lower are served first {0}\n"
		       " quantum  how much bytes to serve from leaf at once {use r2q}\n"
		       "\nTC HTB version %d.%d", 3, 3);
}

static int explain1(struct pw__tc_ctx *tc, const char *arg)
{
	pw__tc_err(tc, "Illegal \"%s\"", arg);
	explain(tc);
	return -EINVAL;
}

static int incomplete(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
	return -EINVAL;
}

static int htb_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct htb_opt *o = optp;
	memset(o, 0, sizeof(*o));
	o->rate2quantum = 10;
	o->version = 3;
	for (; argc > 0; argc--, argv++) {
		const char *w = argv[0];
		if (pw__matches(w, "r2q") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u32(&o->rate2quantum, argv[0], 10))
				return explain1(tc, "r2q");
		} else if (pw__matches(w, "default") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u32(&o->defcls, argv[0], 16))
				return explain1(tc, "default");
		} else if (pw__matches(w, "debug") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++; /* the kernel ignores it */
		} else if (pw__matches(w, "direct_qlen") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u32(&o->direct_qlen, argv[0], 10))
				return explain1(tc, "direct_qlen");
			o->has_direct_qlen = o->direct_qlen != ~0u;
		} else if (pw__matches(w, "offload") == 0) {
			o->offload = true;
		} else {
			pw__tc_err(tc, "What is \"%s\"?", w);
			explain(tc);
			return -EINVAL;
		}
	}
	return 0;
}

static int get_rate(uint64_t *r, const char *s)
{
	if (strchr(s, '%'))
		return -1; /* a share of the device's speed: none here */
	return pw__get_rate64(r, s);
}

static int htb_class_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *coptp)
{
	struct htb_copt *o = coptp;
	memset(o, 0, sizeof(*o));
	uint32_t buffer = 0, cbuffer = 0, mtu = 1600;
	int cell_log = -1, ccell_log = -1;
	uint16_t mpu = 0, overhead = 0;
	unsigned linklayer = PW_LINKLAYER_ETHERNET;
	uint64_t ceil64 = 0, rate64 = 0;
	for (; argc > 0; argc--, argv++) {
		const char *w = argv[0];
		if (pw__matches(w, "prio") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u32(&o->prio, argv[0], 10))
				return explain1(tc, "prio");
		} else if (pw__matches(w, "mtu") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u32(&mtu, argv[0], 10))
				return explain1(tc, "mtu");
		} else if (pw__matches(w, "mpu") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u16(&mpu, argv[0], 10))
				return explain1(tc, "mpu");
		} else if (pw__matches(w, "overhead") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u16(&overhead, argv[0], 10))
				return explain1(tc, "overhead");
		} else if (pw__matches(w, "linklayer") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_linklayer(&linklayer, argv[0]))
				return explain1(tc, "linklayer");
		} else if (pw__matches(w, "quantum") == 0) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_u32(&o->quantum, argv[0], 10))
				return explain1(tc, "quantum");
		} else if (pw__matches(w, "burst") == 0 || !strcmp(w, "buffer") ||
			   !strcmp(w, "maxburst")) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_size_and_cell(&buffer, &cell_log, argv[0]) < 0)
				return explain1(tc, w);
		} else if (pw__matches(w, "cburst") == 0 || !strcmp(w, "cbuffer") ||
			   !strcmp(w, "cmaxburst")) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (pw__get_size_and_cell(&cbuffer, &ccell_log, argv[0]) < 0)
				return explain1(tc, w);
		} else if (!strcmp(w, "ceil")) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (ceil64) {
				pw__tc_err(tc, "Double \"ceil\" spec");
				return -EINVAL;
			}
			if (get_rate(&ceil64, argv[0]))
				return explain1(tc, "ceil");
		} else if (!strcmp(w, "rate")) {
			if (argc < 2)
				return incomplete(tc);
			argc--, argv++;
			if (rate64) {
				pw__tc_err(tc, "Double \"rate\" spec");
				return -EINVAL;
			}
			if (get_rate(&rate64, argv[0]))
				return explain1(tc, "rate");
		} else if (!strcmp(w, "help")) {
			explain(tc);
			return -EINVAL;
		} else {
			pw__tc_err(tc, "What is \"%s\"?", w);
			explain(tc);
			return -EINVAL;
		}
	}
	if (!rate64) {
		pw__tc_err(tc, "\"rate\" is required.");
		return -EINVAL;
	}
	if (!ceil64)
		ceil64 = rate64;
	o->rate.rate = rate64 >= (1ull << 32) ? ~0u : (uint32_t)rate64;
	o->ceil.rate = ceil64 >= (1ull << 32) ? ~0u : (uint32_t)ceil64;
	if (!buffer)
		buffer = (uint32_t)(rate64 / HTB_HZ + mtu);
	if (!cbuffer)
		cbuffer = (uint32_t)(ceil64 / HTB_HZ + mtu);
	o->rate.overhead = o->ceil.overhead = overhead;
	o->rate.mpu = o->ceil.mpu = mpu;
	uint32_t tab[256];
	pw__tc_calc_rtable(&tc->core, &o->rate, tab, cell_log, mtu, linklayer, o->rate.rate);
	o->buffer = pw__tc_calc_xmittime(&tc->core, rate64, buffer);
	pw__tc_calc_rtable(&tc->core, &o->ceil, tab, ccell_log, mtu, linklayer, o->ceil.rate);
	o->cbuffer = pw__tc_calc_xmittime(&tc->core, ceil64, cbuffer);
	o->rate64 = rate64 >= (1ull << 32) ? rate64 : 0;
	o->ceil64 = ceil64 >= (1ull << 32) ? ceil64 : 0;
	return 0;
}

/* The psched tc reads on every kernel since 2009: 64 ns ticks. */
static const struct pw__tc_core htb_core = { 15.625, 1 };

static void htb_print(struct pw__qdisc *q, struct pw__out *o)
{
	struct htb_priv *h = pw__qdisc_priv(q);
	char b[32];
	pw__print_int(o, PW_PRINT_ANY, "r2q", "r2q %d", h->rate2quantum);
	pw__print_0xhex(o, PW_PRINT_ANY, "default", " default %#x", h->defcls);
	pw__print_uint(o, PW_PRINT_ANY, "direct_packets_stat", " direct_packets_stat %u",
		       h->direct_pkts);
	if (o->details) {
		snprintf(b, sizeof(b), "%d.%d", HTB_VER >> 16, HTB_VER & 0xffff);
		pw__print_string(o, PW_PRINT_ANY, "ver", " ver %s", b);
	}
	pw__print_uint(o, PW_PRINT_ANY, "direct_qlen", " direct_qlen %u", (unsigned)h->direct_qlen);
}

static void htb_class_print(struct pw__qdisc *q, unsigned long arg, struct pw__out *o)
{
	(void)q;
	struct htb_class *cl = (struct htb_class *)arg;
	struct pw__tc_ratespec rate, ceil;
	char b1[PW__SPRINT_BSIZE], b2[PW__SPRINT_BSIZE];
	pw__psched_getrate(&rate, &cl->rate);
	pw__psched_getrate(&ceil, &cl->ceil);
	uint32_t qbuffer = (uint32_t)HTB_NS2TICKS(cl->buffer);
	uint32_t qcbuffer = (uint32_t)HTB_NS2TICKS(cl->cbuffer);
	uint64_t rate64 = cl->rate.rate_bytes_ps, ceil64 = cl->ceil.rate_bytes_ps;
	if (!cl->level) {
		pw__print_int(o, PW_PRINT_ANY, "prio", "prio %d ", (int)cl->prio);
		if (o->details)
			pw__print_int(o, PW_PRINT_ANY, "quantum", "quantum %d ", cl->quantum);
	}
	pw__print_rate(o, PW_PRINT_ANY, "rate", "rate %s ", rate64);
	if (rate.overhead)
		pw__print_uint(o, PW_PRINT_ANY, "overhead", "overhead %u ", rate.overhead);
	uint32_t buffer = pw__tc_calc_xmitsize(&htb_core, rate64, qbuffer);
	pw__print_rate(o, PW_PRINT_ANY, "ceil", "ceil %s ", ceil64);
	uint32_t cbuffer = pw__tc_calc_xmitsize(&htb_core, ceil64, qcbuffer);
	unsigned ll = rate.linklayer & PW_TC_LINKLAYER_MASK;
	if (ll > PW_LINKLAYER_ETHERNET || o->details)
		pw__print_string(o, PW_PRINT_ANY, "linklayer", "linklayer %s ",
				 pw__sprint_linklayer(ll, b1, sizeof(b1)));
	if (o->details) {
		/* psched_ratecfg_getrate() returns no cell_log: tc prints 1 << 0 */
		snprintf(b2, sizeof(b2), "%s/%u", pw__sprint_size(buffer, b1, sizeof(b1)), 1u);
		pw__print_string(o, PW_PRINT_ANY, "burst", "burst %s ", b2);
		pw__print_size(o, PW_PRINT_ANY, "mpu_rate", "mpu %s ", rate.mpu);
		snprintf(b2, sizeof(b2), "%s/%u", pw__sprint_size(cbuffer, b1, sizeof(b1)), 1u);
		pw__print_string(o, PW_PRINT_ANY, "cburst", "cburst %s ", b2);
		pw__print_size(o, PW_PRINT_ANY, "mpu_ceil", "mpu %s ", ceil.mpu);
		pw__print_int(o, PW_PRINT_ANY, "level", "level %d ", cl->level);
	} else {
		pw__print_size(o, PW_PRINT_ANY, "burst", "burst %s ", buffer);
		pw__print_size(o, PW_PRINT_ANY, "cburst", "cburst %s ", cbuffer);
	}
}

/* The class statistics htb_dump_class_stats() adds (tokens in psched
 * ticks, clamped to 32 bits as its xstats are).  Takes the root lock. */
static int32_t clamp_ticks(int64_t ns)
{
	int64_t t = ns >> 6; /* PSCHED_NS2TICKS of a signed value */
	if (t < INT32_MIN)
		return INT32_MIN;
	if (t > INT32_MAX)
		return INT32_MAX;
	return (int32_t)t;
}

static void htb_class_print_xstats(struct pw__qdisc *q, unsigned long arg, struct pw__out *o)
{
	struct htb_class *cl = (struct htb_class *)arg;
	pw__qlock(&q->root->lock);
	uint32_t lends = cl->lends, borrows = cl->borrows, giants = cl->giants;
	int32_t tokens = clamp_ticks(cl->tokens), ctokens = clamp_ticks(cl->ctokens);
	pw__qunlock(&q->root->lock);
	pw__print_uint(o, PW_PRINT_ANY, "lended", " lended: %u ", lends);
	pw__print_uint(o, PW_PRINT_ANY, "borrowed", "borrowed: %u ", borrows);
	pw__print_uint(o, PW_PRINT_ANY, "giants", "giants: %u", giants);
	pw__print_nl(o);
	pw__print_int(o, PW_PRINT_ANY, "tokens", " tokens: %d ", tokens);
	pw__print_int(o, PW_PRINT_ANY, "ctokens", "ctokens: %d", ctokens);
	pw__print_nl(o);
	pw__print_nl(o);
}

const struct pw__qdisc_util pw__htb_util = {
	.id = "htb",
	.opt_size = sizeof(struct htb_opt),
	.flags = PW__QU_OPTS_ALWAYS,
	.parse = htb_parse,
	.print = htb_print,
	.class_opt_size = sizeof(struct htb_copt),
	.class_parse = htb_class_parse,
	.class_print = htb_class_print,
	.class_print_xstats = htb_class_print_xstats,
};
