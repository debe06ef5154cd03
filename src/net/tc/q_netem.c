/* SPDX-License-Identifier: MIT */
/*
 * netem's tc side: q_netem.c's parsing (every option, its units and its
 * messages; tables loaded here, on the tc thread, so that change() under
 * the root lock neither allocates nor fails) and printing (text and
 * JSON), into and out of the structures of netem_priv.h.  The data path
 * and the essay are in netem.c.  Threads: parse on the tc thread
 * (cfg_lock held, no root lock); print under the root lock (tc show).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "tc.h"
#include "dist.h"
#include "../sched/netem_priv.h"

/* ------------------------------------------------------------ tc parse */

static void explain(struct pw__tc_ctx *tc)
{
	pw__tc_err(tc, "%s",
		   "Usage: ... netem [ limit PACKETS ]\n"
		   "                 [ delay TIME [ JITTER [CORRELATION]]]\n"
		   "                 [ distribution {uniform|normal|pareto|paretonormal} ]\n"
		   "                 [ corrupt PERCENT [CORRELATION]]\n"
		   "                 [ duplicate PERCENT [CORRELATION]]\n"
		   "                 [ loss random PERCENT [CORRELATION]]\n"
		   "                 [ loss state P13 [P31 [P32 [P23 P14]]]\n"
		   "                 [ loss gemodel PERCENT [R [1-H [1-K]]]\n"
		   "                 [ seed SEED \n]"
		   "                 [ ecn ]\n"
		   "                 [ reorder PERCENT [CORRELATION] [ gap DISTANCE ]]\n"
		   "                 [ rate RATE [PACKETOVERHEAD] [CELLSIZE] [CELLOVERHEAD]]\n"
		   "                 [ slot MIN_DELAY [MAX_DELAY] [packets MAX_PACKETS] [bytes MAX_BYTES]]\n"
		   "                 [ slot distribution {uniform|normal|pareto|paretonormal|custom}\n"
		   "                   DELAY JITTER [packets MAX_PACKETS] [bytes MAX_BYTES]]");
}

static void explain1(struct pw__tc_ctx *tc, const char *arg)
{
	pw__tc_err(tc, "Illegal \"%s\"", arg);
}

#if !PW_NETEM_TC_TIME64
/* get_ticks(): a time in psched ticks, through tc's tick arithmetic. */
static int get_ticks(struct pw__tc_ctx *tc, uint32_t *ticks, const char *str)
{
	uint32_t t;
	if (pw__get_time(&t, str))
		return -1;
	if (pw__tc_core_time2big(&tc->core, t)) {
		pw__tc_err(tc, "Illegal %u time (too large)", t);
		return -1;
	}
	*ticks = pw__tc_core_time2tick(&tc->core, t);
	return 0;
}
#endif

static int load_dist(struct pw__tc_ctx *tc, const char *name, int16_t **t, unsigned *n)
{
	char err[512];
	err[0] = '\0';
	free(*t);
	*t = NULL;
	*n = 0;
	int rc;
	if (tc->flags & PW_TC_NO_FILES) {
		/* the built-in tables only (equal to iproute2's, test_dist):
		 * no .dist file is looked up, and a path is refused unread */
		rc = pw__dist_builtin(name, t, n);
		if (rc == -ENOENT) {
			pw__tc_err(tc, "Error: distribution \"%s\": only the built-in tables "
				       "(normal, pareto, paretonormal) here, no file is read.",
				   strchr(name, '/') ? "PATH" : name);
			return -EPERM;
		}
		if (rc)
			return rc;
		return 0;
	}
	rc = pw__dist_get(name, t, n, err, sizeof(err));
	if (rc || !*t || *n == 0) {
		if (err[0])
			pw__tc_err(tc, "%s", err);
		free(*t);
		*t = NULL;
		*n = 0;
		return rc ? rc : -EINVAL;
	}
	return 0;
}

#define NEXT_ARG_OK() (argc - 1 > 0)
#define NEXT_ARG()                                                                          \
	do {                                                                                \
		argv++;                                                                     \
		if (--argc <= 0) {                                                          \
			pw__tc_err(tc, "Command line is not complete. Try option \"help\"");  \
			goto fail;                                                          \
		}                                                                           \
	} while (0)
#define NEXT_IS_NUMBER() (NEXT_ARG_OK() && isdigit((unsigned char)argv[1][0]))
#define NEXT_IS_SIGNED_NUMBER() \
	(NEXT_ARG_OK() && (isdigit((unsigned char)argv[1][0]) || argv[1][0] == '-'))
#define ILLEGAL(what)                \
	do {                         \
		explain1(tc, (what)); \
		goto fail;           \
	} while (0)

/* Free the tables an option struct still owns (init/change take them). */
static void netem_opt_free(void *optp)
{
	struct netem_opt *o = optp;
	if (!o)
		return;
	free(o->dist);
	free(o->slot_dist);
	o->dist = o->slot_dist = NULL;
}

/* netem_parse_opt() of q_netem.c, keyword by keyword. */
static int netem_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct netem_opt *o = optp;
	int rc = -EINVAL;

	memset(o, 0, sizeof(*o));
	o->limit = 1000;
	o->loss_type = LOSS_UNSPEC;

	for (; argc > 0; --argc, ++argv) {
		if (pw__matches(*argv, "limit") == 0) {
			NEXT_ARG();
			if (pw__get_size(&o->limit, *argv))
				ILLEGAL("limit");
		} else if (pw__matches(*argv, "latency") == 0 || pw__matches(*argv, "delay") == 0) {
			NEXT_ARG();
#if PW_NETEM_TC_TIME64
			o->has_latency64 = true;
			if (pw__get_time64(&o->latency64, *argv))
				ILLEGAL("latency");
#else
			if (get_ticks(tc, &o->latency, *argv))
				ILLEGAL("latency");
#endif
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
#if PW_NETEM_TC_TIME64
				o->has_jitter64 = true;
				if (pw__get_time64(&o->jitter64, *argv))
					ILLEGAL("latency");
#else
				if (get_ticks(tc, &o->jitter, *argv))
					ILLEGAL("latency");
#endif
				if (NEXT_IS_NUMBER()) {
					NEXT_ARG();
					o->has_corr = true;
					if (pw__get_percent(&o->delay_corr, *argv))
						ILLEGAL("latency");
				}
			}
		} else if (pw__matches(*argv, "loss") == 0 || pw__matches(*argv, "drop") == 0) {
			if (o->loss > 0 || o->loss_type != LOSS_UNSPEC)
				ILLEGAL("duplicate loss argument\n");
			NEXT_ARG();
			bool random_model = isdigit((unsigned char)argv[0][0]);
			if (!random_model && !strcmp(*argv, "random")) {
				NEXT_ARG();
				random_model = true;
			}
			if (random_model) {
				if (pw__get_percent(&o->loss, *argv))
					ILLEGAL("loss percent");
				if (NEXT_IS_NUMBER()) {
					NEXT_ARG();
					o->has_corr = true;
					if (pw__get_percent(&o->loss_corr, *argv))
						ILLEGAL("loss correlation");
				}
			} else if (!strcmp(*argv, "state")) {
				double p13;
				NEXT_ARG();
				if (pw__parse_percent(&p13, *argv))
					ILLEGAL("loss p13");
				o->p13 = pw__percent_to_u32(p13);
				o->p31 = pw__percent_to_u32(1. - p13);
				o->p32 = pw__percent_to_u32(0);
				o->p23 = pw__percent_to_u32(1.);
				o->p14 = pw__percent_to_u32(0);
				o->loss_type = LOSS_GI;
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p31, *argv))
					ILLEGAL("loss p31");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p32, *argv))
					ILLEGAL("loss p32");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p23, *argv))
					ILLEGAL("loss p23");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->p14, *argv))
					ILLEGAL("loss p14");
			} else if (!strcmp(*argv, "gemodel")) {
				double p;
				NEXT_ARG();
				if (pw__parse_percent(&p, *argv))
					ILLEGAL("loss gemodel p");
				o->ge_p = pw__percent_to_u32(p);
				o->ge_r = pw__percent_to_u32(1. - p);
				o->ge_h = pw__percent_to_u32(0);
				o->ge_k1 = pw__percent_to_u32(0);
				o->loss_type = LOSS_GE;
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->ge_r, *argv))
					ILLEGAL("loss gemodel r");
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->ge_h, *argv))
					ILLEGAL("loss gemodel h");
				o->ge_h = UINT32_MAX - o->ge_h; /* tc takes 1-h, the kernel h */
				if (!NEXT_IS_NUMBER())
					continue;
				NEXT_ARG();
				if (pw__get_percent(&o->ge_k1, *argv))
					ILLEGAL("loss gemodel k");
			} else {
				pw__tc_err(tc, "Unknown loss parameter: %s", *argv);
				goto fail;
			}
		} else if (pw__matches(*argv, "seed") == 0) {
			NEXT_ARG();
			o->has_seed = true;
			if (pw__get_u64(&o->seed, *argv, 10))
				ILLEGAL("seed");
		} else if (pw__matches(*argv, "ecn") == 0) {
			o->has_ecn = true;
		} else if (!strcmp(*argv, "inorder")) {
			/* pinwheel's extension (netem.c): whole word only, so
			 * that it takes no abbreviation from iproute2's words */
			o->inorder = true;
		} else if (pw__matches(*argv, "reorder") == 0) {
			NEXT_ARG();
			o->has_reorder = true;
			if (pw__get_percent(&o->reorder_prob, *argv))
				ILLEGAL("reorder");
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				o->has_corr = true;
				if (pw__get_percent(&o->reorder_corr, *argv))
					ILLEGAL("reorder");
			}
		} else if (pw__matches(*argv, "corrupt") == 0) {
			NEXT_ARG();
			o->has_corrupt = true;
			if (pw__get_percent(&o->corrupt_prob, *argv))
				ILLEGAL("corrupt");
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				o->has_corr = true;
				if (pw__get_percent(&o->corrupt_corr, *argv))
					ILLEGAL("corrupt");
			}
		} else if (pw__matches(*argv, "gap") == 0) {
			NEXT_ARG();
			if (pw__get_u32(&o->gap, *argv, 0))
				ILLEGAL("gap");
		} else if (pw__matches(*argv, "duplicate") == 0) {
			NEXT_ARG();
			if (pw__get_percent(&o->duplicate, *argv))
				ILLEGAL("duplicate");
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				/* as iproute2: this correlation alone does not send
				 * TCA_NETEM_CORR */
				if (pw__get_percent(&o->dup_corr, *argv))
					ILLEGAL("duplicate");
			}
		} else if (pw__matches(*argv, "distribution") == 0) {
			NEXT_ARG();
			rc = load_dist(tc, *argv, &o->dist, &o->dist_n);
			if (rc)
				goto fail_rc;
		} else if (pw__matches(*argv, "rate") == 0) {
			o->has_rate = true;
			NEXT_ARG();
			uint64_t r64;
			if (strchr(*argv, '%'))
				ILLEGAL("rate"); /* no link speed here */
			if (pw__get_rate64(&r64, *argv))
				ILLEGAL("rate");
			o->rate64 = r64;
			if (NEXT_IS_SIGNED_NUMBER()) {
				NEXT_ARG();
				if (pw__get_s32(&o->packet_overhead, *argv, 0))
					ILLEGAL("rate");
			}
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				if (pw__get_u32(&o->cell_size, *argv, 0))
					ILLEGAL("rate");
			}
			if (NEXT_IS_SIGNED_NUMBER()) {
				NEXT_ARG();
				if (pw__get_s32(&o->cell_overhead, *argv, 0))
					ILLEGAL("rate");
			}
		} else if (pw__matches(*argv, "slot") == 0) {
			if (NEXT_IS_NUMBER()) {
				NEXT_ARG();
				o->has_slot = true;
				if (pw__get_time64(&o->slot.min_delay, *argv))
					ILLEGAL("slot min_delay");
				if (NEXT_IS_NUMBER()) {
					NEXT_ARG();
					if (pw__get_time64(&o->slot.max_delay, *argv) ||
					    o->slot.max_delay < o->slot.min_delay)
						ILLEGAL("slot max_delay");
				} else {
					o->slot.max_delay = o->slot.min_delay;
				}
			} else {
				NEXT_ARG();
				if (strcmp(*argv, "distribution") == 0) {
					o->has_slot = true;
					NEXT_ARG();
					rc = load_dist(tc, *argv, &o->slot_dist, &o->slot_dist_n);
					if (rc)
						goto fail_rc;
					NEXT_ARG();
					if (pw__get_time64(&o->slot.dist_delay, *argv))
						ILLEGAL("slot delay");
					NEXT_ARG();
					if (pw__get_time64(&o->slot.dist_jitter, *argv))
						ILLEGAL("slot jitter");
					if (o->slot.dist_jitter <= 0) {
						pw__tc_err(tc, "Non-positive jitter");
						goto fail;
					}
				} else {
					pw__tc_err(tc, "Unknown slot parameter: %s", *argv);
					goto fail;
				}
			}
			if (NEXT_ARG_OK() && pw__matches(argv[1], "packets") == 0) {
				NEXT_ARG();
				if (!NEXT_ARG_OK() || pw__get_s32(&o->slot.max_packets, argv[1], 0))
					ILLEGAL("slot packets");
				NEXT_ARG();
			}
			if (NEXT_ARG_OK() && pw__matches(argv[1], "bytes") == 0) {
				uint32_t max_bytes;
				NEXT_ARG();
				if (!NEXT_ARG_OK() || pw__get_size(&max_bytes, argv[1]))
					ILLEGAL("slot bytes");
				o->slot.max_bytes = (int32_t)max_bytes;
				NEXT_ARG();
			}
		} else {
			if (strcmp(*argv, "help") != 0)
				pw__tc_err(tc, "What is \"%s\"?", *argv);
			explain(tc);
			goto fail;
		}
	}

#if PW_NETEM_TC_TIME64
	bool no_latency = o->latency64 == 0, no_jitter = o->jitter64 == 0;
#else
	bool no_latency = o->latency == 0, no_jitter = o->jitter == 0;
#endif
	if (o->inorder && (o->has_reorder || o->gap)) {
		pw__tc_err(tc, "netem: \"inorder\" and \"%s\" exclude each other: inorder never "
			       "lets a packet leave before the one ahead of it",
			   o->has_reorder ? "reorder" : "gap");
		goto fail;
	}
	if (o->reorder_prob) {
		if (no_latency) {
			pw__tc_err(tc, "reordering not possible without specifying some delay");
			explain(tc);
			goto fail;
		}
		if (o->gap == 0)
			o->gap = 1;
	} else if (o->gap > 0) {
		pw__tc_err(tc, "gap specified without reorder probability");
		explain(tc);
		goto fail;
	}
	if (o->has_ecn && o->loss == 0 && o->loss_type == LOSS_UNSPEC) {
		pw__tc_err(tc, "ecn requested without loss model");
		explain(tc);
		goto fail;
	}
	if (o->dist && (no_latency || no_jitter)) {
		pw__tc_err(tc, "distribution specified but no latency and jitter values");
		explain(tc);
		goto fail;
	}
	if (o->has_rate) {
		if (o->rate64 >= (1ull << 32)) {
			o->has_rate64 = true;
			o->rate = ~0u;
		} else {
			o->rate = (uint32_t)o->rate64;
			o->rate64 = 0;
		}
	}
	return 0;

fail:
	rc = -EINVAL;
fail_rc:
	netem_opt_free(o);
	return rc;
}

#undef NEXT_ARG_OK
#undef NEXT_ARG
#undef NEXT_IS_NUMBER
#undef NEXT_IS_SIGNED_NUMBER
#undef ILLEGAL

/* ------------------------------------------------------------ tc print */

/* print_corr(): text only when present, JSON always. */
static void print_corr(struct pw__out *o, bool present, uint32_t value)
{
	if (!o->json) {
		if (present)
			pw__print_percent(o, PW_PRINT_FP, NULL, " %g%%", value);
	} else {
		pw__print_percent(o, PW_PRINT_JSON, "correlation", NULL, value);
	}
}

/* PRINT_INT_OPT(): JSON always, text when nonzero. */
static void print_int_opt(struct pw__out *o, const char *label, const char *fmt, int val)
{
	pw__print_int(o, PW_PRINT_JSON, label, NULL, val);
	if (val != 0)
		pw__print_int(o, PW_PRINT_FP, NULL, fmt, val);
}

/* netem_print_opt() on what the kernel's netem_dump() would send. */
static void netem_print(struct pw__qdisc *q, struct pw__out *o)
{
	struct netem_priv *nd = pw__qdisc_priv(q);

	pw__print_uint(o, PW_PRINT_ANY, "limit", "limit %d", nd->limit);

#if PW_NETEM_TC_TIME64
	if (nd->latency != 0) {
		pw__open_json_object(o, "delay");
		if (o->json) {
			pw__print_float(o, PW_PRINT_JSON, "delay", NULL,
					(double)nd->latency / 1000000000.);
			pw__print_float(o, PW_PRINT_JSON, "jitter", NULL,
					(double)nd->jitter / 1000000000.);
		} else {
			char b[PW__SPRINT_BSIZE];
			pw__print_string(o, PW_PRINT_FP, NULL, " delay %s",
					 pw__sprint_time64(nd->latency, b, sizeof(b)));
			if (nd->jitter != 0)
				pw__print_string(o, PW_PRINT_FP, NULL, "  %s",
						 pw__sprint_time64(nd->jitter, b, sizeof(b)));
		}
		print_corr(o, nd->jitter && nd->delay_cor.rho, nd->delay_cor.rho);
		pw__close_json_object(o);
	}
#else
	{
		/* the dump's 32-bit ticks: min(ns >> 6, UINT_MAX) */
		uint64_t lt = (uint64_t)(nd->latency >> 6), jt = (uint64_t)(nd->jitter >> 6);
		uint32_t lat = lt > UINT32_MAX ? UINT32_MAX : (uint32_t)lt;
		uint32_t jit = jt > UINT32_MAX ? UINT32_MAX : (uint32_t)jt;
		if (lat) {
			struct pw__tc_core core;
			pw__tc_core_set(&core, 1000, 64, 1000000);
			pw__open_json_object(o, "delay");
			if (!o->json) {
				char b[PW__SPRINT_BSIZE];
				pw__print_string(o, PW_PRINT_FP, NULL, " delay %s",
						 pw__sprint_ticks(&core, lat, b, sizeof(b)));
				if (jit)
					pw__print_string(o, PW_PRINT_FP, NULL, "  %s",
							 pw__sprint_ticks(&core, jit, b, sizeof(b)));
			} else {
				pw__print_float(o, PW_PRINT_JSON, "delay", NULL,
						pw__tc_core_tick2time(&core, lat) / 1000000.);
				pw__print_float(o, PW_PRINT_JSON, "jitter", NULL,
						pw__tc_core_tick2time(&core, jit) / 1000000.);
			}
			print_corr(o, jit && nd->delay_cor.rho, nd->delay_cor.rho);
			pw__close_json_object(o);
		}
	}
#endif

	if (nd->loss) {
		pw__open_json_object(o, "loss-random");
		pw__print_percent(o, PW_PRINT_ANY, "loss", " loss %g%%", nd->loss);
		print_corr(o, nd->loss_cor.rho != 0, nd->loss_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->loss_model == CLG_4_STATES) {
		pw__open_json_object(o, "loss-state");
		pw__print_percent(o, PW_PRINT_ANY, "p13", " loss state p13 %g%%", nd->clg.a1);
		pw__print_percent(o, PW_PRINT_ANY, "p31", " p31 %g%%", nd->clg.a2);
		pw__print_percent(o, PW_PRINT_ANY, "p32", " p32 %g%%", nd->clg.a3);
		pw__print_percent(o, PW_PRINT_ANY, "p23", " p23 %g%%", nd->clg.a5);
		pw__print_percent(o, PW_PRINT_ANY, "p14", " p14 %g%%", nd->clg.a4);
		pw__close_json_object(o);
	}

	if (nd->loss_model == CLG_GILB_ELL) {
		pw__open_json_object(o, "loss-gemodel");
		pw__print_percent(o, PW_PRINT_ANY, "p", " loss gemodel p %g%%", nd->clg.a1);
		pw__print_percent(o, PW_PRINT_ANY, "r", " r %g%%", nd->clg.a2);
		pw__print_percent(o, PW_PRINT_ANY, "1-h", " 1-h %g%%", UINT32_MAX - nd->clg.a3);
		pw__print_percent(o, PW_PRINT_ANY, "1-k", " 1-k %g%%", nd->clg.a4);
		pw__close_json_object(o);
	}

	if (nd->duplicate) {
		pw__open_json_object(o, "duplicate");
		pw__print_percent(o, PW_PRINT_ANY, "duplicate", " duplicate %g%%", nd->duplicate);
		print_corr(o, nd->dup_cor.rho != 0, nd->dup_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->reorder) {
		pw__open_json_object(o, "reorder");
		pw__print_percent(o, PW_PRINT_ANY, "reorder", " reorder %g%%", nd->reorder);
		print_corr(o, nd->reorder_cor.rho != 0, nd->reorder_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->corrupt) {
		pw__open_json_object(o, "corrupt");
		pw__print_percent(o, PW_PRINT_ANY, "corrupt", " corrupt %g%%", nd->corrupt);
		print_corr(o, nd->corrupt_cor.rho != 0, nd->corrupt_cor.rho);
		pw__close_json_object(o);
	}

	if (nd->seed_given)
		pw__print_u64(o, PW_PRINT_ANY, "seed", " seed %llu", nd->seed);

	if (nd->rate) {
		pw__open_json_object(o, "rate");
		pw__print_rate(o, PW_PRINT_ANY, "rate", " rate %s", nd->rate);
		print_int_opt(o, "packetoverhead", " packetoverhead %d", nd->packet_overhead);
		pw__print_uint(o, PW_PRINT_JSON, "cellsize", NULL, nd->cell_size);
		if (nd->cell_size)
			pw__print_uint(o, PW_PRINT_FP, NULL, " cellsize %u", nd->cell_size);
		print_int_opt(o, "celloverhead", " celloverhead %d", nd->cell_overhead);
		pw__close_json_object(o);
	}

	if (nd->slot_config.min_delay | nd->slot_config.max_delay | nd->slot_config.dist_jitter) {
		struct netem_slot_cfg s = nd->slot_config;
		if (s.max_packets == INT_MAX)
			s.max_packets = 0;
		if (s.max_bytes == INT_MAX)
			s.max_bytes = 0;
		pw__open_json_object(o, "slot");
		if (s.dist_jitter > 0) {
			pw__print_time64(o, PW_PRINT_ANY, "distribution", " slot distribution %s",
					 s.dist_delay);
			pw__print_time64(o, PW_PRINT_ANY, "jitter", " %s", s.dist_jitter);
		} else {
			pw__print_time64(o, PW_PRINT_ANY, "min-delay", " slot %s", s.min_delay);
			pw__print_time64(o, PW_PRINT_ANY, "max-delay", " %s", s.max_delay);
		}
		print_int_opt(o, "packets", " packets %d", s.max_packets);
		print_int_opt(o, "bytes", " bytes %d", s.max_bytes);
		pw__close_json_object(o);
	}

	pw__print_bool(o, PW_PRINT_JSON, "ecn", NULL, nd->ecn != 0);
	if (nd->ecn)
		pw__print_bool(o, PW_PRINT_FP, NULL, " ecn ", true);

	pw__print_u64(o, PW_PRINT_JSON, "gap", NULL, nd->gap);
	if (nd->gap)
		pw__print_u64(o, PW_PRINT_FP, NULL, " gap %lu", nd->gap);

	/* pinwheel's extension, printed only when on (so that every other
	 * netem prints as iproute2 does); -d adds the packets it held back */
	if (nd->inorder) {
		pw__print_bool(o, PW_PRINT_ANY, "inorder", " inorder", true);
		if (o->details)
			pw__print_u64(o, PW_PRINT_ANY, "inorder_held", " held %llu",
				      __atomic_load_n(&nd->inorder_held, __ATOMIC_RELAXED));
	}
}


const struct pw__qdisc_util pw__netem_util = {
	.id = "netem",
	.opt_size = sizeof(struct netem_opt),
	.flags = PW__QU_OPTS_ALWAYS,
	.parse = netem_parse,
	.opt_free = netem_opt_free,
	.print = netem_print,
};
