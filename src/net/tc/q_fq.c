/* SPDX-License-Identifier: MIT */
/*
 * fq's tc side: iproute2's tc/q_fq.c parsing (every keyword, its units
 * and its messages, verbatim: "Illegal \"orphan_mask\"" reads "Illegal
 * \"initial_quantum\"" there too) and printing (text and JSON) of what
 * the kernel's fq_dump()/fq_dump_stats() return.  The qdisc and the essay
 * are in fq.c.  Threads: parse on the tc thread (cfg_lock held, no root
 * lock: it builds the bucket array a change needs); print and
 * print_xstats under the root lock (tc show).
 *
 * Which iproute2.  iproute2 6.1 (Debian 12) for every keyword and field it
 * has.  6.1 predates the kernel's 3 bands (Linux 6.7), so for those the
 * newest q_fq.c is followed: the `bands 3 priomap P0..P15` and `weights W1
 * W2 W3` keywords with their messages and usage lines, "bands 3 priomap
 * ... weights ..." in the options (always: the kernel always dumps
 * them), and in -s the band0_pkts..band2_pkts counts on the first line,
 * "fastpath N" on the second when nonzero and band0_drops..band2_drops on
 * the third.  offload_horizon (newest only; no NIC offload here) is
 * neither parsed (6.1's "What is") nor printed.  `maxrate N%` is illegal:
 * pinwheel devices have no link speed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tc.h"
#include "../sched/fq.h"

static void explain(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "%s",
		   "Usage: ... fq\t[ limit PACKETS ] [ flow_limit PACKETS ]\n"
		   "\t\t[ quantum BYTES ] [ initial_quantum BYTES ]\n"
		   "\t\t[ maxrate RATE ] [ buckets NUMBER ]\n"
		   "\t\t[ [no]pacing ] [ refill_delay TIME ]\n"
		   "\t\t[ bands 3 priomap P0 P1 ... P14 P15 ]\n"
		   "\t\t[ weights W1 W2 W3 ]\n"
		   "\t\t[ low_rate_threshold RATE ]\n"
		   "\t\t[ orphan_mask MASK]\n"
		   "\t\t[ timer_slack TIME]\n"
		   "\t\t[ ce_threshold TIME ]\n"
		   "\t\t[ horizon TIME ]\n"
		   "\t\t[ horizon_{cap|drop} ]");
}

static int illegal(struct pw__tc_ctx *tc, const char *what)
{
	pw__tc_err(tc, "Illegal \"%s\"", what);
	return -EINVAL;
}

/* q_fq.c's ilog2(): the log of the power of two at or above @v. */
static unsigned fq_ilog2(unsigned v)
{
	unsigned r = 0;
	v--;
	while (v) {
		r++;
		v >>= 1;
	}
	return r;
}

static int get_rate32(uint32_t *r, const char *s)
{
	if (strchr(s, '%'))
		return -1; /* get_percent_rate(): no link speed here */
	return pw__get_rate(r, s);
}

/* tc's incomplete_command() */
static int incomplete(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "Command line is not complete. Try option \"help\"");
	return -EINVAL;
}

#define NEXT_ARG()                                  \
	do {                                        \
		argc--, argv++;                     \
		if (argc <= 0)                      \
			return incomplete(tc);      \
	} while (0)
#define NEXT_ARG_OK() (argc - 1 > 0)

static int fq_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct fq_opt *o = optp;
	memset(o, 0, sizeof(*o));
	unsigned buckets = 0;
	for (; argc > 0; argc--, argv++) {
		const char *w = *argv;
		if (!strcmp(w, "limit")) {
			NEXT_ARG();
			if (pw__get_unsigned(&o->plimit, *argv, 0))
				return illegal(tc, "limit");
			o->set |= FQ_SET_PLIMIT;
		} else if (!strcmp(w, "flow_limit")) {
			NEXT_ARG();
			if (pw__get_unsigned(&o->flow_plimit, *argv, 0))
				return illegal(tc, "flow_limit");
			o->set |= FQ_SET_FLOW_PLIMIT;
		} else if (!strcmp(w, "buckets")) {
			NEXT_ARG();
			if (pw__get_unsigned(&buckets, *argv, 0))
				return illegal(tc, "buckets");
		} else if (!strcmp(w, "maxrate")) {
			NEXT_ARG();
			if (get_rate32(&o->maxrate, *argv))
				return illegal(tc, "maxrate");
			o->set |= FQ_SET_MAXRATE;
		} else if (!strcmp(w, "low_rate_threshold")) {
			NEXT_ARG();
			if (pw__get_rate(&o->low_rate_threshold, *argv))
				return illegal(tc, "low_rate_threshold");
			o->set |= FQ_SET_LOW_RATE;
		} else if (!strcmp(w, "ce_threshold")) {
			NEXT_ARG();
			if (pw__get_time(&o->ce_threshold, *argv))
				return illegal(tc, "ce_threshold");
			o->set |= FQ_SET_CE;
		} else if (!strcmp(w, "timer_slack")) {
			int64_t t64;
			NEXT_ARG();
			if (pw__get_time64(&t64, *argv))
				return illegal(tc, "timer_slack");
			o->timer_slack = (uint32_t)t64;
			if ((int64_t)o->timer_slack != t64) {
				pw__tc_err(tc, "Illegal (out of range) \"timer_slack\"");
				return -EINVAL;
			}
			o->set |= FQ_SET_SLACK;
		} else if (!strcmp(w, "horizon_drop")) {
			o->horizon_drop = 1;
			o->set |= FQ_SET_HORIZON_DROP;
		} else if (!strcmp(w, "horizon_cap")) {
			o->horizon_drop = 0;
			o->set |= FQ_SET_HORIZON_DROP;
		} else if (!strcmp(w, "horizon")) {
			NEXT_ARG();
			if (pw__get_time(&o->horizon, *argv))
				return illegal(tc, "horizon");
			o->set |= FQ_SET_HORIZON;
		} else if (!strcmp(w, "defrate")) {
			NEXT_ARG();
			if (get_rate32(&o->defrate, *argv))
				return illegal(tc, "defrate");
			o->set |= FQ_SET_DEFRATE;
		} else if (!strcmp(w, "quantum")) {
			NEXT_ARG();
			if (pw__get_unsigned(&o->quantum, *argv, 0))
				return illegal(tc, "quantum");
			o->set |= FQ_SET_QUANTUM;
		} else if (!strcmp(w, "initial_quantum")) {
			NEXT_ARG();
			if (pw__get_unsigned(&o->initial_quantum, *argv, 0))
				return illegal(tc, "initial_quantum");
			o->set |= FQ_SET_INITIAL_QUANTUM;
		} else if (!strcmp(w, "orphan_mask")) {
			NEXT_ARG();
			if (pw__get_unsigned(&o->orphan_mask, *argv, 0))
				return illegal(tc, "initial_quantum"); /* sic, q_fq.c */
			o->set |= FQ_SET_ORPHAN_MASK;
		} else if (!strcmp(w, "refill_delay")) {
			NEXT_ARG();
			if (pw__get_time(&o->refill_delay, *argv))
				return illegal(tc, "refill_delay");
			o->set |= FQ_SET_REFILL;
		} else if (!strcmp(w, "pacing")) {
			o->pacing = 1;
			o->set |= FQ_SET_PACING;
		} else if (!strcmp(w, "nopacing")) {
			o->pacing = 0;
			o->set |= FQ_SET_PACING;
		} else if (!strcmp(w, "bands")) {
			if (o->set & FQ_SET_PRIOMAP) {
				pw__tc_err(tc, "Duplicate \"bands\"");
				return -EINVAL;
			}
			o->bands = 0;
			memset(o->priomap, 0, sizeof(o->priomap));
			NEXT_ARG();
			if (pw__get_integer(&o->bands, *argv, 10))
				return illegal(tc, "bands");
			if (o->bands != 3) {
				pw__tc_err(tc, "\"bands\" must be 3");
				return -EINVAL;
			}
			NEXT_ARG();
			if (strcmp(*argv, "priomap")) {
				pw__tc_err(tc, "\"priomap\" expected");
				return -EINVAL;
			}
			for (unsigned i = 0; i <= FQ_PRIO_MAX; i++) {
				unsigned band;
				if (!NEXT_ARG_OK()) {
					pw__tc_err(tc, "Not enough elements in priomap");
					return -EINVAL;
				}
				NEXT_ARG();
				if (pw__get_unsigned(&band, *argv, 10)) {
					pw__tc_err(tc, "Illegal \"priomap\" element, number in [0..%u] expected",
						   (unsigned)o->bands - 1);
					return -EINVAL;
				}
				if (band >= (unsigned)o->bands) {
					pw__tc_err(tc, "\"priomap\" element %u too big", band);
					return -EINVAL;
				}
				o->priomap[i] = (uint8_t)band;
			}
			o->set |= FQ_SET_PRIOMAP;
		} else if (!strcmp(w, "weights")) {
			if (o->set & FQ_SET_WEIGHTS) {
				pw__tc_err(tc, "Duplicate \"weights\"");
				return -EINVAL;
			}
			for (unsigned i = 0; i < FQ_BANDS; i++) {
				int val;
				if (!NEXT_ARG_OK()) {
					pw__tc_err(tc, "Not enough elements in weights");
					return -EINVAL;
				}
				NEXT_ARG();
				if (pw__get_integer(&val, *argv, 10)) {
					pw__tc_err(tc, "Illegal \"weights\" element, positive number expected");
					return -EINVAL;
				}
				if (val < FQ_MIN_WEIGHT) {
					pw__tc_err(tc, "\"weight\" element %d too small", val);
					return -EINVAL;
				}
				o->weights[i] = val;
			}
			o->set |= FQ_SET_WEIGHTS;
		} else if (!strcmp(w, "help")) {
			explain(tc);
			return -EINVAL;
		} else {
			pw__tc_err(tc, "What is \"%s\"?", w);
			explain(tc);
			return -EINVAL;
		}
	}
	if (buckets) {
		o->buckets_log = fq_ilog2(buckets);
		o->set |= FQ_SET_BUCKETS;
		/* the array a resize needs, built here, off the root lock */
		if (o->buckets_log >= 1 && o->buckets_log <= 18) {
			o->root = calloc((size_t)1 << o->buckets_log, sizeof(*o->root));
			if (!o->root)
				return -ENOMEM;
			o->root_log = o->buckets_log;
		}
	}
	return 0;
}

/* ----------------------------------------------------------- printing */

static void fq_print(struct pw__qdisc *sch, struct pw__out *o)
{
	struct fq_priv *q = pw__qdisc_priv(sch);
	char b1[PW__SPRINT_BSIZE];
	/* fq_dump()'s values */
	uint32_t maxrate = q->flow_max_rate > 0xFFFFFFFFull ? ~0u : (uint32_t)q->flow_max_rate;
	uint32_t refill = fq_jiffies_to_usecs(q->flow_refill_delay, q->hz);
	uint32_t ce = (uint32_t)(q->ce_threshold / 1000);
	uint32_t horizon = (uint32_t)(q->horizon / 1000);

	pw__print_uint(o, PW_PRINT_ANY, "limit", "limit %up ", sch->limit);
	pw__print_uint(o, PW_PRINT_ANY, "flow_limit", "flow_limit %up ", q->flow_plimit);
	pw__print_uint(o, PW_PRINT_ANY, "buckets", "buckets %u ", 1u << q->log);
	pw__print_uint(o, PW_PRINT_ANY, "orphan_mask", "orphan_mask %u ", q->orphan_mask);
	if (q->rate_enable == 0)
		pw__print_bool(o, PW_PRINT_ANY, "pacing", "nopacing ", false);
	pw__print_uint(o, PW_PRINT_ANY, "bands", "bands %u ", FQ_BANDS);
	pw__open_json_array(o, PW_PRINT_ANY, "priomap ");
	for (unsigned i = 0; i <= FQ_PRIO_MAX; i++)
		pw__print_uint(o, PW_PRINT_ANY, NULL, "%d ", q->prio2band[i]);
	pw__close_json_array(o, PW_PRINT_ANY, "");
	pw__open_json_array(o, PW_PRINT_ANY, "weights ");
	for (unsigned i = 0; i < FQ_BANDS; i++)
		pw__print_uint(o, PW_PRINT_ANY, NULL, "%d ", (unsigned)q->band[i].quantum);
	pw__close_json_array(o, PW_PRINT_ANY, "");
	pw__print_size(o, PW_PRINT_ANY, "quantum", "quantum %s ", q->quantum);
	pw__print_size(o, PW_PRINT_ANY, "initial_quantum", "initial_quantum %s ",
		       q->initial_quantum);
	if (maxrate != ~0u)
		pw__print_rate(o, PW_PRINT_ANY, "maxrate", "maxrate %s ", maxrate);
	if (q->low_rate_threshold != 0)
		pw__print_rate(o, PW_PRINT_ANY, "low_rate_threshold", "low_rate_threshold %s ",
			       q->low_rate_threshold);
	pw__print_uint(o, PW_PRINT_JSON, "refill_delay", NULL, refill);
	pw__print_string(o, PW_PRINT_FP, NULL, "refill_delay %s ",
			 pw__sprint_time(refill, b1, sizeof(b1)));
	if (ce != ~0u) {
		pw__print_uint(o, PW_PRINT_JSON, "ce_threshold", NULL, ce);
		pw__print_string(o, PW_PRINT_FP, NULL, "ce_threshold %s ",
				 pw__sprint_time(ce, b1, sizeof(b1)));
	}
	pw__print_uint(o, PW_PRINT_JSON, "timer_slack", NULL, q->timer_slack);
	pw__print_string(o, PW_PRINT_FP, NULL, "timer_slack %s ",
			 pw__sprint_time64(q->timer_slack, b1, sizeof(b1)));
	pw__print_uint(o, PW_PRINT_JSON, "horizon", NULL, horizon);
	pw__print_string(o, PW_PRINT_FP, NULL, "horizon %s ",
			 pw__sprint_time(horizon, b1, sizeof(b1)));
	if (!q->horizon_drop)
		pw__print_null(o, PW_PRINT_ANY, "horizon_cap", "horizon_cap ", NULL);
	else
		pw__print_null(o, PW_PRINT_ANY, "horizon_drop", "horizon_drop ", NULL);
}

static void fq_print_xstats(struct pw__qdisc *sch, struct pw__out *o)
{
	struct pw__fq_xstats st;
	char b1[PW__SPRINT_BSIZE];
	pw__fq_xstats(sch, &st);

	pw__print_uint(o, PW_PRINT_ANY, "flows", "  flows %u", st.flows);
	pw__print_uint(o, PW_PRINT_ANY, "inactive", " (inactive %u", st.inactive_flows);
	pw__print_uint(o, PW_PRINT_ANY, "throttled", " throttled %u)", st.throttled_flows);
	pw__print_uint(o, PW_PRINT_ANY, "band0_pkts", " band0_pkts %u", st.band_pkt_count[0]);
	pw__print_uint(o, PW_PRINT_ANY, "band1_pkts", " band1_pkts %u", st.band_pkt_count[1]);
	pw__print_uint(o, PW_PRINT_ANY, "band2_pkts", " band2_pkts %u", st.band_pkt_count[2]);
	if (st.time_next_delayed_flow > 0) {
		pw__print_u64(o, PW_PRINT_JSON, "next_packet_delay", NULL,
			      (uint64_t)st.time_next_delayed_flow);
		pw__print_string(o, PW_PRINT_FP, NULL, " next_packet_delay %s",
				 pw__sprint_time64(st.time_next_delayed_flow, b1, sizeof(b1)));
	}
	pw__print_nl(o);
	pw__print_u64(o, PW_PRINT_ANY, "gc", "  gc %llu", st.gc_flows);
	pw__print_u64(o, PW_PRINT_ANY, "highprio", " highprio %llu", st.highprio_packets);
	if (st.fastpath_packets)
		pw__print_u64(o, PW_PRINT_ANY, "fastpath", " fastpath %llu", st.fastpath_packets);
	pw__print_u64(o, PW_PRINT_ANY, "throttled", " throttled %llu", st.throttled);
	if (st.unthrottle_latency_ns) {
		pw__print_uint(o, PW_PRINT_JSON, "latency", NULL, st.unthrottle_latency_ns);
		pw__print_string(o, PW_PRINT_FP, NULL, " latency %s",
				 pw__sprint_time64(st.unthrottle_latency_ns, b1, sizeof(b1)));
	}
	if (st.ce_mark)
		pw__print_u64(o, PW_PRINT_ANY, "ce_mark", " ce_mark %llu", st.ce_mark);
	if (st.flows_plimit)
		pw__print_u64(o, PW_PRINT_ANY, "flows_plimit", " flows_plimit %llu", st.flows_plimit);
	if (st.pkts_too_long || st.allocation_errors || st.horizon_drops || st.horizon_caps ||
	    st.band_drops[0] || st.band_drops[1] || st.band_drops[2]) {
		pw__print_nl(o);
		if (st.pkts_too_long)
			pw__print_u64(o, PW_PRINT_ANY, "pkts_too_long", " pkts_too_long %llu",
				      st.pkts_too_long);
		if (st.allocation_errors)
			pw__print_u64(o, PW_PRINT_ANY, "alloc_errors", " alloc_errors %llu",
				      st.allocation_errors);
		if (st.horizon_drops)
			pw__print_u64(o, PW_PRINT_ANY, "horizon_drops", " horizon_drops %llu",
				      st.horizon_drops);
		if (st.horizon_caps)
			pw__print_u64(o, PW_PRINT_ANY, "horizon_caps", "  horizon_caps %llu",
				      st.horizon_caps);
		static const char *const key[FQ_BANDS] = { "band0_drops", "band1_drops",
							   "band2_drops" };
		static const char *const fmt[FQ_BANDS] = { " band0_drops %llu", " band1_drops %llu",
							   " band2_drops %llu" };
		for (unsigned i = 0; i < FQ_BANDS; i++)
			if (st.band_drops[i])
				pw__print_u64(o, PW_PRINT_ANY, key[i], fmt[i], st.band_drops[i]);
	}
}

static void fq_opt_free(void *optp)
{
	struct fq_opt *o = optp;
	free(o->root);
	o->root = NULL;
}

const struct pw__qdisc_util pw__fq_util = {
	.id = "fq",
	.opt_size = sizeof(struct fq_opt),
	.parse = fq_parse,
	.opt_free = fq_opt_free,
	.print = fq_print,
	.print_xstats = fq_print_xstats,
};
