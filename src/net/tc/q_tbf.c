/* SPDX-License-Identifier: MIT */
/*
 * tbf's tc side (iproute2 6.1's tc/q_tbf.c): `rate`, `burst`/`buffer`/
 * `maxburst`, `limit` or `latency`, `mpu`, `peakrate`, `mtu`/`minburst`,
 * `overhead`, `linklayer` parsed into what tc sends (sched/tbf.h), with
 * q_tbf.c's keywords, abbreviations and messages; and tbf's show text
 * (tbf_print_opt()).  The kernel side, and what it does with these
 * options, is sched/tbf.c.
 * Context: the tc thread; parse with cfg_lock held and no root lock (it
 * may build the child a change needs), print under the root lock.
 */
#include "tc.h"
#include "../sched/tbf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void explain(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "Usage: ... tbf limit BYTES burst BYTES[/BYTES] rate KBPS [ mtu BYTES[/BYTES] ]\n"
		       "\t[ peakrate KBPS ] [ latency TIME ] [ overhead BYTES ] [ linklayer TYPE ]");
}

static int illegal(struct pw__tc_ctx *tc, const char *name, const char *val)
{
	pw__tc_err(tc, "tbf: illegal value for \"%s\": \"%s\"", name, val);
	return -EINVAL;
}

static int dup(struct pw__tc_ctx *tc, const char *name)
{
	pw__tc_err(tc, "tbf: duplicate \"%s\" specification", name);
	return -EINVAL;
}

static int get_rate(uint64_t *r, const char *s)
{
	if (strchr(s, '%'))
		return -1; /* a share of the device's speed: none here */
	return pw__get_rate64(r, s);
}

static int tbf_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct tbf_opt *o = optp;
	memset(o, 0, sizeof(*o));
	uint32_t buffer = 0, mtu = 0, mpu = 0, latency = 0, limit = 0;
	uint16_t overhead = 0;
	int rcell = -1, pcell = -1;
	unsigned linklayer = PW_LINKLAYER_ETHERNET;
	uint64_t rate64 = 0, prate64 = 0;

	for (; argc > 0; argc--, argv++) {
		const char *w = argv[0];
		if (pw__matches(w, "limit") == 0) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (latency) {
				pw__tc_err(tc, "tbf: specifying both \"latency\" and \"limit\" is not allowed");
				return -EINVAL;
			}
			if (limit)
				return dup(tc, "limit");
			if (pw__get_size(&limit, argv[0]))
				return illegal(tc, "limit", argv[0]);
		} else if (pw__matches(w, "latency") == 0) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (limit) {
				pw__tc_err(tc, "tbf: specifying both \"limit\" and \"/latency\" is not allowed");
				return -EINVAL;
			}
			if (latency)
				return dup(tc, "latency");
			if (pw__get_time(&latency, argv[0]))
				return illegal(tc, "latency", argv[0]);
		} else if (pw__matches(w, "burst") == 0 || !strcmp(w, "buffer") ||
			   !strcmp(w, "maxburst")) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (buffer)
				return dup(tc, "buffer/burst/maxburst");
			if (pw__get_size_and_cell(&buffer, &rcell, argv[0]))
				return illegal(tc, w, argv[0]);
		} else if (!strcmp(w, "mtu") || !strcmp(w, "minburst")) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (mtu)
				return dup(tc, "mtu/minburst");
			if (pw__get_size_and_cell(&mtu, &pcell, argv[0]))
				return illegal(tc, w, argv[0]);
		} else if (!strcmp(w, "mpu")) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (mpu)
				return dup(tc, "mpu");
			if (pw__get_size(&mpu, argv[0]))
				return illegal(tc, "mpu", argv[0]);
		} else if (!strcmp(w, "rate")) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (rate64)
				return dup(tc, "rate");
			if (get_rate(&rate64, argv[0]))
				return illegal(tc, "rate", argv[0]);
		} else if (pw__matches(w, "peakrate") == 0) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (prate64)
				return dup(tc, "peakrate");
			if (get_rate(&prate64, argv[0]))
				return illegal(tc, "peakrate", argv[0]);
		} else if (pw__matches(w, "overhead") == 0) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (overhead)
				return dup(tc, "overhead");
			if (pw__get_u16(&overhead, argv[0], 10))
				return illegal(tc, "overhead", argv[0]);
		} else if (pw__matches(w, "linklayer") == 0) {
			if (argc < 2)
				goto incomplete;
			argc--, argv++;
			if (pw__get_linklayer(&linklayer, argv[0]))
				return illegal(tc, "linklayer", argv[0]);
		} else if (!strcmp(w, "help")) {
			explain(tc);
			return -EINVAL;
		} else {
			pw__tc_err(tc, "tbf: unknown parameter \"%s\"", w);
			explain(tc);
			return -EINVAL;
		}
	}

	int ok = 1;
	if (!rate64) {
		pw__tc_err(tc, "tbf: the \"rate\" parameter is mandatory.");
		ok = 0;
	}
	if (!buffer) {
		pw__tc_err(tc, "tbf: the \"burst\" parameter is mandatory.");
		ok = 0;
	}
	if (prate64 && !mtu) {
		pw__tc_err(tc, "tbf: when \"peakrate\" is specified, \"mtu\" must also be specified.");
		ok = 0;
	}
	if (!limit && !latency) {
		pw__tc_err(tc, "tbf: either \"limit\" or \"latency\" is required.");
		ok = 0;
	}
	if (!ok) {
		explain(tc);
		return -EINVAL;
	}

	if (!limit) {
		double lim = (double)rate64 * (double)latency / PW_TIME_UNITS_PER_SEC + buffer;
		if (prate64) {
			double lim2 = (double)prate64 * (double)latency / PW_TIME_UNITS_PER_SEC + mtu;
			if (lim2 < lim)
				lim = lim2;
		}
		limit = pw__tc_d2u32(lim);
	}
	o->limit = limit;
	o->rate.rate = rate64 >= (1ull << 32) ? ~0u : (uint32_t)rate64;
	o->peakrate.rate = prate64 >= (1ull << 32) ? ~0u : (uint32_t)prate64;
	o->rate.mpu = (unsigned short)mpu;
	o->rate.overhead = overhead;
	uint32_t rtab[256];
	pw__tc_calc_rtable(&tc->core, &o->rate, rtab, rcell, mtu, linklayer, rate64);
	o->buffer = pw__tc_calc_xmittime(&tc->core, rate64, buffer);
	if (o->peakrate.rate) {
		o->peakrate.mpu = (unsigned short)mpu;
		o->peakrate.overhead = overhead;
		pw__tc_calc_rtable(&tc->core, &o->peakrate, rtab, pcell, mtu, linklayer, prate64);
		o->mtu = pw__tc_calc_xmittime(&tc->core, prate64, mtu);
		o->pburst = mtu;
	}
	o->burst = buffer;
	o->rate64 = rate64 >= (1ull << 32) ? rate64 : 0;
	o->prate64 = prate64 >= (1ull << 32) ? prate64 : 0;
	/* a change that gives a child to a tbf that has none (limit 0 before)
	 * takes this one: built here, off the lock */
	if (tc->ext.dev && limit > 0) {
		o->child = pw__tbf_child_create(tc->ext.dev, 0, 0, limit);
		if (!o->child)
			return -ENOMEM;
	}
	return 0;

incomplete: /* tc's incomplete_command() */
	pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
	return -EINVAL;
}

/* The psched tc reads on every kernel since 2009: 64 ns ticks. */
static const struct pw__tc_core tbf_core = { 15.625, 1 };

static void tbf_print(struct pw__qdisc *q, struct pw__out *o)
{
	struct tbf_priv *t = pw__qdisc_priv(q);
	struct pw__tc_ratespec rate, peak;
	char b1[PW__SPRINT_BSIZE], b2[PW__SPRINT_BSIZE], b3[PW__SPRINT_BSIZE];
	/* tbf_dump() */
	pw__psched_getrate(&rate, &t->rate);
	if (t->peak.rate_bytes_ps)
		pw__psched_getrate(&peak, &t->peak);
	else
		memset(&peak, 0, sizeof(peak));
	uint32_t qbuffer = (uint32_t)TBF_NS2TICKS((uint64_t)t->buffer);
	uint32_t qmtu = (uint32_t)TBF_NS2TICKS((uint64_t)t->mtu);
	uint64_t rate64 = t->rate.rate_bytes_ps, prate64 = t->peak.rate_bytes_ps;

	/* tbf_print_opt() */
	pw__print_rate(o, PW_PRINT_ANY, "rate", "rate %s ", rate64);
	uint32_t buffer = pw__tc_calc_xmitsize(&tbf_core, rate64, qbuffer);
	if (o->details) {
		snprintf(b1, sizeof(b1), "%s/%u", pw__sprint_size(buffer, b2, sizeof(b2)),
			 1u << rate.cell_log);
		pw__print_string(o, PW_PRINT_ANY, "burst", "burst %s ", b1);
		pw__print_size(o, PW_PRINT_ANY, "mpu", "mpu %s ", rate.mpu);
	} else {
		pw__print_size(o, PW_PRINT_ANY, "burst", "burst %s ", buffer);
	}
	if (prate64) {
		pw__print_rate(o, PW_PRINT_FP, "peakrate", "peakrate %s ", prate64);
		if (qmtu || peak.mpu) {
			uint32_t mtu = pw__tc_calc_xmitsize(&tbf_core, prate64, qmtu);
			if (o->details) {
				snprintf(b1, sizeof(b1), "%s/%u",
					 pw__sprint_size(mtu, b2, sizeof(b2)), 1u << peak.cell_log);
				pw__print_string(o, PW_PRINT_ANY, "mtu", "mtu %s ", b1);
				pw__print_size(o, PW_PRINT_ANY, "mpu", "mpu %s ", peak.mpu);
			} else {
				pw__print_size(o, PW_PRINT_ANY, "minburst", "minburst %s ", mtu);
			}
		}
	}
	double latency = PW_TIME_UNITS_PER_SEC * (t->limit / (double)rate64) -
			 pw__tc_core_tick2time(&tbf_core, qbuffer);
	if (prate64) {
		double lat2 = PW_TIME_UNITS_PER_SEC * (t->limit / (double)prate64) -
			      pw__tc_core_tick2time(&tbf_core, qmtu);
		if (lat2 > latency)
			latency = lat2;
	}
	if (latency >= 0.0)
		pw__print_time(o, PW_PRINT_ANY, "lat", "lat %s ", pw__tc_d2u64(latency));
	else
		pw__print_size(o, PW_PRINT_ANY, "limit", "limit %s ", t->limit);
	if (rate.overhead)
		pw__print_int(o, PW_PRINT_ANY, "overhead", "overhead %d ", rate.overhead);
	unsigned ll = rate.linklayer & PW_TC_LINKLAYER_MASK;
	if (ll > PW_LINKLAYER_ETHERNET || o->details)
		pw__print_string(o, PW_PRINT_ANY, "linklayer", "linklayer %s ",
				 pw__sprint_linklayer(ll, b3, sizeof(b3)));
}

static void tbf_opt_free(void *optp)
{
	struct tbf_opt *o = optp;
	pw__tbf_child_free(o->child);
	o->child = NULL;
}

const struct pw__qdisc_util pw__tbf_util = {
	.id = "tbf",
	.opt_size = sizeof(struct tbf_opt),
	.parse = tbf_parse,
	.opt_free = tbf_opt_free,
	.print = tbf_print,
};
