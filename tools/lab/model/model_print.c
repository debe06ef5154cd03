/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's model: the way in from lab.h (lab_model_run() runs the
 * seeds' files) and the results' printing (struct mdl_seed, one per
 * seed), as text tables and as JSON.  The results' helpers the seeds fill
 * them with (mdl_row_set(), mdl_find(), ...) are model_row.c's, so the
 * seeds' files call only down, into the engine's files, and this file only
 * calls them.
 *
 * A seed's section opens with its claims table (the seed's claim | the
 * model | the live run | verdict, and one line on the mechanism), then the
 * scale, the rows (one per configuration, CPU count and HZ) and the notes.
 * The model run alone prints its own claims table, the live column "not
 * run"; a seed's run (pinwheel-lab SEED) merges the model's half of each
 * claim into the live run's (lab_claims_merge(), verdict.c) and prints
 * that table instead, before the model's section.
 *
 * Deterministic: fixed formats, no machine or time in the output, so two
 * runs with the same --seed print the same bytes (the test compares them).
 * Threads: main thread only.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

/* ------------------------------------------------------------ text */

/* The model's claims table, for the model run alone (a seed's run prints
 * the claims merged with the live run's, lab_claims_print()). */
static void print_claims(FILE *f, const struct lab_claims *cl)
{
	fprintf(f, "| the seed's claim | the model (deterministic) | the live run | verdict |\n");
	fprintf(f, "|---|---|---|---|\n");
	for (unsigned i = 0; i < cl->n; i++) {
		const struct lab_claim *c = &cl->c[i];
		fprintf(f, "| %s | %s | %s | %s |\n", c->claim, c->model_text,
			"not run (pinwheel-lab SEED runs it)",
			c->model_run ? c->model_verdict : "model not run");
	}
	for (unsigned i = 0; i < cl->n; i++)
		fprintf(f, "mechanism (%s): %s\n", cl->c[i].id, cl->c[i].mechanism);
}

static void cell(FILE *f, const struct mdl_row *r, const char *key)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key)) {
			char buf[48];
			if (isnan(r->val[i]))
				snprintf(buf, sizeof(buf), "-");
			else
				snprintf(buf, sizeof(buf), r->fmt[i], r->val[i]);
			fprintf(f, " %10s", buf);
			return;
		}
	fprintf(f, " %10s", "-");
}

void mdl_print_text(FILE *f, const struct mdl_seed *s, int with_claims)
{
	fprintf(f, "\n== %s, the model: %s ==\n\n", s->id, s->title);
	if (with_claims) {
		print_claims(f, &s->claims);
		fprintf(f, "\n");
	}
	fprintf(f, "%s\n\n", s->scale);
	int w = 6;
	for (unsigned i = 0; i < s->nrows; i++)
		if ((int)strlen(s->row[i].config) > w)
			w = (int)strlen(s->row[i].config);
	fprintf(f, "%-*s %4s %5s", w, "config", "cpus", "hz");
	for (unsigned k = 0; k < s->ncols; k++)
		fprintf(f, " %10s", s->col_head[k]);
	fprintf(f, "\n");
	for (unsigned i = 0; i < s->nrows; i++) {
		const struct mdl_row *r = &s->row[i];
		if (strcmp(r->cost_name, "table"))
			continue;
		fprintf(f, "%-*s %4u %5u", w, r->config, r->cpus, r->hz);
		for (unsigned k = 0; k < s->ncols; k++)
			cell(f, r, s->col[k]);
		fprintf(f, "\n");
	}
	int sweep = 0;
	for (unsigned i = 0; i < s->nrows; i++)
		sweep |= strcmp(s->row[i].cost_name, "table") != 0;
	if (sweep) {
		fprintf(f, "\ncost sweep (x0.5, x2: irq, ipi, line, handoff scaled; task x0.5, task "
			   "x2: wake, syscall, copy_kb scaled, where the seed has them):\n");
		fprintf(f, "%-*s %4s %5s %-9s", w, "config", "cpus", "hz", "costs");
		for (unsigned k = 0; k < s->ncols; k++)
			fprintf(f, " %10s", s->col_head[k]);
		fprintf(f, "\n");
		for (unsigned i = 0; i < s->nrows; i++) {
			const struct mdl_row *r = &s->row[i];
			if (!strcmp(r->cost_name, "table"))
				continue;
			fprintf(f, "%-*s %4u %5u %-9s", w, r->config, r->cpus, r->hz, r->cost_name);
			for (unsigned k = 0; k < s->ncols; k++)
				cell(f, r, s->col[k]);
			fprintf(f, "\n");
		}
	}
	for (unsigned i = 0; i < s->nrows; i++)
		if (s->row[i].profile[0] && !strcmp(s->row[i].cost_name, "table"))
			fprintf(f, "\nprofile, %s %u CPUs (modelled CPU time by function):\n%s",
				s->row[i].config, s->row[i].cpus, s->row[i].profile);
	if (s->nnotes)
		fprintf(f, "\n");
	for (unsigned i = 0; i < s->nnotes; i++)
		fprintf(f, "- %s\n", s->notes[i]);
	fprintf(f, "\ninvariants: %u checked, %u failed%s%s\n", s->nchecks, s->nfailed,
		s->nfailed ? ": " : "", s->nfailed ? s->failure : "");
}

/* ------------------------------------------------------------ JSON */

/* A number; NAN (no figure, not run) is null, an infinity the string
 * "inf" / "-inf" as lab_json_num() writes it. */
static void json_num(FILE *f, double v)
{
	if (isnan(v))
		fprintf(f, "null");
	else if (isinf(v))
		fprintf(f, "%s", v > 0 ? "\"inf\"" : "\"-inf\"");
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

void mdl_print_json(FILE *f, const struct mdl_seed *s)
{
	fprintf(f, "{\"title\":");
	lab_json_str(f, s->title);
	fprintf(f, ",\"scale\":");
	lab_json_str(f, s->scale);
	fprintf(f, ",\"claims\":[");
	for (unsigned i = 0; i < s->claims.n; i++) {
		const struct lab_claim *c = &s->claims.c[i];
		fprintf(f, "%s{\"id\":", i ? "," : "");
		lab_json_str(f, c->id);
		fprintf(f, ",\"claim\":");
		lab_json_str(f, c->claim);
		fprintf(f, ",\"mechanism\":");
		lab_json_str(f, c->mechanism);
		fprintf(f, ",\"seed_dir\":%d,\"seed_ratio\":", c->seed_dir);
		json_num(f, c->seed_ratio);
		fprintf(f, ",\"size_band\":");
		if (isnan(c->size_lo))
			fprintf(f, "null");
		else {
			fprintf(f, "[");
			json_num(f, round(c->size_lo * 1e4) / 1e4);
			fprintf(f, ",");
			json_num(f, round(c->size_hi * 1e4) / 1e4);
			fprintf(f, "]");
		}
		fprintf(f, ",\"model_ratio\":");
		json_num(f, c->model_run ? c->model_ratio : NAN);
		fprintf(f, ",\"model\":");
		lab_json_str(f, c->model_text);
		fprintf(f, ",\"verdict\":");
		lab_json_str(f, c->model_run ? c->model_verdict : "model not run");
		fprintf(f, ",\"word\":");
		lab_json_str(f, lab_word_str(c->model_run ? c->model_word : LAB_W_NOT_RUN));
		fprintf(f, "}");
	}
	fprintf(f, "],\"rows\":[");
	for (unsigned i = 0; i < s->nrows; i++) {
		const struct mdl_row *r = &s->row[i];
		fprintf(f, "%s{\"config\":", i ? "," : "");
		lab_json_str(f, r->config);
		fprintf(f, ",\"label\":");
		lab_json_str(f, r->label);
		fprintf(f, ",\"cpus\":%u,\"hz\":%u,\"costs\":", r->cpus, r->hz);
		lab_json_str(f, r->cost_name);
		for (unsigned k = 0; k < r->n; k++) {
			fprintf(f, ",");
			lab_json_str(f, r->key[k]);
			fprintf(f, ":");
			json_num(f, r->val[k]);
		}
		if (r->profile[0]) {
			fprintf(f, ",\"profile\":");
			lab_json_str(f, r->profile);
		}
		fprintf(f, "}");
	}
	fprintf(f, "],\"notes\":[");
	for (unsigned i = 0; i < s->nnotes; i++) {
		fprintf(f, "%s", i ? "," : "");
		lab_json_str(f, s->notes[i]);
	}
	fprintf(f, "],\"invariants\":{\"checked\":%u,\"failed\":%u,\"failure\":", s->nchecks,
		s->nfailed);
	lab_json_str(f, s->failure);
	fprintf(f, "},\"simulated_s\":");
	json_num(f, round(s->runtime_sim_s * 1e6) / 1e6);
	fprintf(f, "}");
}

/* ------------------------------------------------------------ the cost table */

void mdl_print_costs(FILE *f, const struct mdl_opts *o, int json)
{
	if (json) {
		fprintf(f, "[");
		for (unsigned i = 0; i < MC_N; i++) {
			const struct mdl_cost_def *d = &mdl_cost_table[i];
			fprintf(f, "%s{\"key\":", i ? "," : "");
			lab_json_str(f, d->key);
			fprintf(f, ",\"ns\":");
			json_num(f, o->costs.ns[i]);
			fprintf(f, ",\"table_ns\":");
			json_num(f, d->ns);
			if (o->costs_measured) {
				fprintf(f, ",\"measured_ns\":");
				double v = o->measured[i];
				json_num(f, v > 0 ? round(v * 10) / 10 : NAN);
			}
			fprintf(f, ",\"what\":");
			lab_json_str(f, d->what);
			fprintf(f, ",\"source\":");
			lab_json_str(f, d->source);
			fprintf(f, "}");
		}
		fprintf(f, "]");
		return;
	}
	fprintf(f, "\nthe model's cost table (ns; %s%s):\n", o->costs.name,
		o->costs_measured ? ", measured here beside it" : "");
	for (unsigned i = 0; i < MC_N; i++) {
		const struct mdl_cost_def *d = &mdl_cost_table[i];
		fprintf(f, "  %-11s %7.0f", d->key, o->costs.ns[i]);
		if (o->costs_measured) {
			if (o->measured[i] > 0)
				fprintf(f, "  (here: %7.1f)", o->measured[i]);
			else
				fprintf(f, "  %15s", "");
		}
		fprintf(f, "  %s\n", d->what);
	}
	fprintf(f, "  (sources: docs/lab.md, \"The cost table\"; --json prints them)\n");
}

/* ------------------------------------------------------------ lab.h's way in */

struct lab_model {
	struct mdl_opts o;
	unsigned n;
	struct mdl_seed seed[3];
	struct mdl_seed *sweep; /* lab_model_report_sweep(): seed000's extra CPU counts */
};

int lab_model_run(const struct lab_opts *lo, const struct lab_model_opts *mo, const char *what,
		  struct lab_model **out)
{
	static const struct {
		const char *id;
		int (*fn)(const struct mdl_opts *, struct mdl_seed *);
	} all[3] = {{"seed000", mdl_seed000}, {"seed001", mdl_seed001}, {"seed003", mdl_seed003}};
	int every = !strcmp(what, "all");
	int known = every;
	for (unsigned k = 0; k < 3; k++)
		known |= !strcmp(what, all[k].id);
	if (!known)
		return -EINVAL;
	struct lab_model *lm = calloc(1, sizeof(*lm));
	if (!lm)
		return -ENOMEM;
	lm->o.cpus = mo->cpus;
	lm->o.hz = mo->hz;
	lm->o.seed = lo->seed;
	lm->o.smoke = lo->smoke;
	lm->o.full = mo->full;
	mdl_costs_default(&lm->o.costs);
	if (mo->costs_measured) {
		int err = mdl_costs_measure(lm->o.measured);
		if (err) {
			free(lm);
			return err;
		}
		lm->o.costs_measured = 1;
		for (unsigned i = 0; i < MC_N; i++)
			if (lm->o.measured[i] > 0)
				lm->o.costs.ns[i] = lm->o.measured[i];
		lm->o.costs.name = "measured";
	}
	for (unsigned k = 0; k < 3; k++) {
		if (!every && strcmp(what, all[k].id))
			continue;
		struct mdl_seed *s = &lm->seed[lm->n++];
		int err = all[k].fn(&lm->o, s);
		if (err < 0 && err != -EFAULT) {
			free(lm);
			return err;
		}
	}
	*out = lm;
	return 0;
}

struct lab_claims *lab_model_claims(struct lab_model *lm, const char *seed)
{
	for (unsigned k = 0; lm && k < lm->n; k++)
		if (!strcmp(lm->seed[k].id, seed))
			return &lm->seed[k].claims;
	return NULL;
}

void lab_model_print(FILE *f, const struct lab_model *lm, const char *seed, int claims)
{
	for (unsigned k = 0; k < lm->n; k++)
		if (!seed || !strcmp(lm->seed[k].id, seed))
			mdl_print_text(f, &lm->seed[k], claims);
	if (!seed)
		mdl_print_costs(f, &lm->o, 0);
}

void lab_model_json(FILE *f, const struct lab_model *lm)
{
	fprintf(f, "{\"seed\":%llu,\"smoke\":%d,\"full\":%d,\"costs_name\":",
		(unsigned long long)lm->o.seed, lm->o.smoke, lm->o.full);
	lab_json_str(f, lm->o.costs.name);
	fprintf(f, ",\"costs\":");
	mdl_print_costs(f, &lm->o, 1);
	for (unsigned k = 0; k < lm->n; k++) {
		fprintf(f, ",\"%s\":", lm->seed[k].id);
		mdl_print_json(f, &lm->seed[k]);
	}
	fprintf(f, "}");
}

int lab_model_failed(const struct lab_model *lm)
{
	for (unsigned k = 0; lm && k < lm->n; k++)
		if (lm->seed[k].nfailed)
			return 1;
	return lm && lm->sweep && lm->sweep->nfailed;
}

void lab_model_free(struct lab_model *lm)
{
	if (lm)
		free(lm->sweep);
	free(lm);
}


/* ------------------------------------------------------------ the report's charts */

static const struct mdl_seed *seed_of(const struct lab_model *lm, const char *id)
{
	for (unsigned k = 0; k < lm->n; k++)
		if (!strcmp(lm->seed[k].id, id))
			return &lm->seed[k];
	return NULL;
}

/* The row of @config at @cpus and @hz with the run's costs, in @s or else
 * in @more (may be NULL). */
static const struct mdl_row *row_at(const struct mdl_seed *s, const struct mdl_seed *more,
				    const char *config, unsigned cpus, unsigned hz, const char *costs)
{
	const struct mdl_seed *in[2] = {s, more};
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; in[k] && i < in[k]->nrows; i++) {
			const struct mdl_row *r = &in[k]->row[i];
			if (r->cpus == cpus && r->hz == hz && !strcmp(r->config, config) &&
			    !strcmp(r->cost_name, costs))
				return r;
		}
	return NULL;
}

int lab_model_report_sweep(struct lab_model *lm)
{
	static const unsigned cpus[] = {16, 24, 32, 48};
	const struct mdl_seed *s0 = seed_of(lm, "seed000");
	if (!s0 || !s0->nrows || lm->sweep)
		return 0;
	const struct mdl_row *r0 = &s0->row[0];
	struct mdl_seed *sw = calloc(1, sizeof(*sw)), *one = malloc(sizeof(*one));
	if (!sw || !one) {
		free(sw);
		free(one);
		return -ENOMEM;
	}
	sw->id = s0->id;
	int err = 0;
	for (unsigned i = 0; i < sizeof(cpus) / sizeof(cpus[0]) && !err; i++) {
		if (row_at(s0, NULL, r0->config, cpus[i], r0->hz, r0->cost_name))
			continue; /* the run has it (--full) */
		struct mdl_opts o = lm->o;
		o.cpus = cpus[i];
		o.hz = r0->hz;
		o.full = 0;
		err = mdl_seed000(&o, one);
		if (err)
			break;
		for (unsigned r = 0; r < one->nrows && sw->nrows < MDL_MAX_ROWS; r++)
			if (!strcmp(one->row[r].cost_name, r0->cost_name))
				sw->row[sw->nrows++] = one->row[r];
		sw->nchecks += one->nchecks;
		if (one->nfailed && !sw->nfailed)
			snprintf(sw->failure, sizeof(sw->failure), "%s", one->failure);
		sw->nfailed += one->nfailed;
		sw->runtime_sim_s += one->runtime_sim_s;
	}
	free(one);
	if (err) {
		free(sw);
		return err;
	}
	lm->sweep = sw;
	return 0;
}

/* @s's configurations in the order its rows first show them. */
static unsigned configs_of(const struct mdl_seed *s, const char **names, unsigned max)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->nrows; i++) {
		unsigned k = 0;
		while (k < n && strcmp(names[k], s->row[i].config))
			k++;
		if (k == n && n < max)
			names[n++] = s->row[i].config;
	}
	return n;
}

static struct lab_model_chart *chart_new(struct lab_model_chart *out, unsigned max, unsigned *n,
					 const char *seed, const char *name,
					 enum lab_mchart_style style)
{
	if (*n >= max)
		return NULL;
	struct lab_model_chart *c = &out[(*n)++];
	memset(c, 0, sizeof(*c));
	c->seed = seed;
	c->style = style;
	snprintf(c->name, sizeof(c->name), "model_%s_%s", seed, name);
	snprintf(c->xkey, sizeof(c->xkey), "config");
	snprintf(c->xlabel, sizeof(c->xlabel), "configuration");
	for (unsigned x = 0; x < LAB_MCHART_X; x++)
		for (unsigned k = 0; k < LAB_MCHART_S; k++)
			c->v[x][k] = NAN;
	return c;
}

static void chart_series(struct lab_model_chart *c, const char *key, const char *name)
{
	if (c->ns == LAB_MCHART_S)
		return;
	snprintf(c->skey[c->ns], sizeof(c->skey[0]), "%s", key);
	snprintf(c->sname[c->ns], sizeof(c->sname[0]), "%s", name);
	c->ns++;
}

/* One x category per configuration of @s, each series' value the row's
 * figure of the series' key, at @cpus/@hz. */
static void chart_by_config(struct lab_model_chart *c, const struct mdl_seed *s, unsigned cpus,
			    unsigned hz, const char *costs)
{
	const char *cfg[LAB_MCHART_X];
	unsigned ncfg = configs_of(s, cfg, LAB_MCHART_X);
	for (unsigned i = 0; i < ncfg; i++) {
		const struct mdl_row *r = row_at(s, NULL, cfg[i], cpus, hz, costs);
		if (!r)
			continue;
		snprintf(c->xname[c->nx], sizeof(c->xname[0]), "%s", cfg[i]);
		for (unsigned k = 0; k < c->ns; k++)
			c->v[c->nx][k] = mdl_row_get(r, c->skey[k]);
		c->nx++;
	}
}

static int cmp_unsigned(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : x > y;
}

/* The distinct CPU counts of @s's (and @more's) rows at @hz, ascending. */
static unsigned cpus_of(const struct mdl_seed *s, const struct mdl_seed *more, unsigned hz,
			const char *costs, unsigned *out, unsigned max)
{
	const struct mdl_seed *in[2] = {s, more};
	unsigned n = 0;
	for (unsigned k = 0; k < 2; k++)
		for (unsigned i = 0; in[k] && i < in[k]->nrows; i++) {
			const struct mdl_row *r = &in[k]->row[i];
			if (r->hz != hz || strcmp(r->cost_name, costs))
				continue;
			unsigned j = 0;
			while (j < n && out[j] != r->cpus)
				j++;
			if (j == n && n < max)
				out[n++] = r->cpus;
		}
	qsort(out, n, sizeof(*out), cmp_unsigned);
	return n;
}

static unsigned charts_seed000(const struct lab_model *lm, const struct mdl_seed *s,
			       struct lab_model_chart *out, unsigned max, unsigned n)
{
	const struct mdl_row *r0 = &s->row[0];
	unsigned hz = r0->hz, cpus = r0->cpus;
	const char *costs = r0->cost_name;
	if (cpus != 32 && row_at(s, NULL, r0->config, 32, hz, costs))
		cpus = 32; /* the claims' size (--full sweeps from 16) */
	struct lab_model_chart *c = chart_new(out, max, &n, s->id, "irq", LAB_MCHART_STACKED);
	if (c) {
		static const char *const kinds[][2] = {
			{"rx_per_s", "rx: NIC receive"},       {"tx_per_s", "tx: NIC completion"},
			{"loc_per_s", "loc: local timer"},     {"res_per_s", "res: reschedule IPI"},
			{"cal_per_s", "cal: function-call IPI"},
		};
		for (unsigned k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			chart_series(c, kinds[k][0], kinds[k][1]);
		chart_by_config(c, s, cpus, hz, costs);
		snprintf(c->title, sizeof(c->title),
			 "seed000, the model: interrupts by kind, %u CPUs, HZ %u", cpus, hz);
		snprintf(c->ylabel, sizeof(c->ylabel), "interrupts/s (stacked: vmstat's in)");
		snprintf(c->caption, sizeof(c->caption),
			 "The model's interrupts per second by kind (/proc/interrupts' RX/TX vectors, "
			 "LOC, RES, CAL) for each configuration at %u CPUs, HZ %u; the stack's height "
			 "is vmstat's `in`.", cpus, hz);
	}
	unsigned cpu[LAB_MCHART_X];
	unsigned ncpu = cpus_of(s, lm->sweep, hz, costs, cpu, LAB_MCHART_X);
	if (ncpu < 2 || !(c = chart_new(out, max, &n, s->id, "in_cpus", LAB_MCHART_LINES)))
		return n;
	const char *cfg[LAB_MCHART_S];
	unsigned ncfg = configs_of(s, cfg, LAB_MCHART_S);
	for (unsigned k = 0; k < ncfg; k++)
		chart_series(c, cfg[k], cfg[k]);
	snprintf(c->xkey, sizeof(c->xkey), "cpus");
	snprintf(c->xlabel, sizeof(c->xlabel), "CPUs");
	snprintf(c->ylabel, sizeof(c->ylabel), "in (interrupts/s)");
	for (unsigned i = 0; i < ncpu; i++) {
		snprintf(c->xname[c->nx], sizeof(c->xname[0]), "%u", cpu[i]);
		c->x[c->nx] = cpu[i];
		for (unsigned k = 0; k < c->ns; k++) {
			const struct mdl_row *r = row_at(s, lm->sweep, cfg[k], cpu[i], hz, costs);
			c->v[c->nx][k] = r ? mdl_row_get(r, "in_per_s") : NAN;
		}
		c->nx++;
	}
	snprintf(c->title, sizeof(c->title), "seed000, the model: vmstat's in against CPUs, HZ %u",
		 hz);
	snprintf(c->caption, sizeof(c->caption),
		 "The model's `in` (interrupts/s) for each configuration at %u to %u CPUs, HZ %u "
		 "(a model run per CPU count); lines that coincide overlap (the numbers show "
		 "each).", cpu[0], cpu[ncpu - 1], hz);
	return n;
}

static unsigned charts_seed003(const struct mdl_seed *s, struct lab_model_chart *out,
			       unsigned max, unsigned n)
{
	const struct mdl_row *r0 = &s->row[0];
	unsigned hz = r0->hz, cpus = r0->cpus;
	const char *costs = r0->cost_name;
	struct lab_model_chart *c;
	if (!isnan(mdl_row_get(r0, "deq_cpu0_per_s")) &&
	    (c = chart_new(out, max, &n, s->id, "deq_cpu", LAB_MCHART_STACKED))) {
		static const char *const keys[8] = {
			"deq_cpu0_per_s", "deq_cpu1_per_s", "deq_cpu2_per_s", "deq_cpu3_per_s",
			"deq_cpu4_per_s", "deq_cpu5_per_s", "deq_cpu6_per_s", "deq_cpu7_per_s",
		};
		for (unsigned k = 0; k < 8 && k < cpus; k++) {
			char name[16];
			snprintf(name, sizeof(name), "CPU %u", k);
			chart_series(c, keys[k], name);
		}
		chart_by_config(c, s, cpus, hz, costs);
		snprintf(c->title, sizeof(c->title), "seed003, the model: dequeues per CPU, %u CPUs",
			 cpus);
		snprintf(c->ylabel, sizeof(c->ylabel), "netem dequeues/s (stacked by CPU)");
		snprintf(c->caption, sizeof(c->caption),
			 "Which CPUs run the 8 netem queues' dequeues (the watchdogs' NET_TX) for each "
			 "configuration, %u CPUs, HZ %u%s: one colour filling a bar is one CPU doing "
			 "them all.", cpus, hz, cpus > 8 ? " (CPUs 0-7 shown)" : "");
	}
	if ((c = chart_new(out, max, &n, s->id, "lockwait", LAB_MCHART_CLUSTERED))) {
		chart_series(c, "spin_pct", "_raw_spin_lock");
		chart_by_config(c, s, cpus, hz, costs);
		snprintf(c->title, sizeof(c->title), "seed003, the model: lock-wait share, %u CPUs",
			 cpus);
		snprintf(c->ylabel, sizeof(c->ylabel), "_raw_spin_lock, %% of busy CPU time");
		snprintf(c->caption, sizeof(c->caption),
			 "The share of the CPUs' modelled work in _raw_spin_lock as the seed's perf "
			 "counts it (the waits and hand-offs of spin_lock() on the busylocks, root "
			 "locks and TX locks; the irqsave timer bases apart) per configuration, %u "
			 "CPUs, HZ %u.", cpus, hz);
	}
	return n;
}

static unsigned charts_seed001(const struct mdl_seed *s, struct lab_model_chart *out,
			       unsigned max, unsigned n)
{
	const struct mdl_row *r0 = &s->row[0];
	unsigned cpu[LAB_MCHART_S];
	unsigned ncpu = cpus_of(s, NULL, r0->hz, r0->cost_name, cpu, LAB_MCHART_S);
	struct lab_model_chart *c = chart_new(out, max, &n, s->id, "mod_timer",
					      LAB_MCHART_CLUSTERED);
	if (!c)
		return n;
	const char *cfg[LAB_MCHART_X];
	unsigned ncfg = configs_of(s, cfg, LAB_MCHART_X);
	char list[64] = "";
	for (unsigned k = 0; k < ncpu; k++) {
		char key[40], name[40];
		snprintf(key, sizeof(key), "mod_timer_pct_%ucpus", cpu[k]);
		snprintf(name, sizeof(name), "%u CPUs", cpu[k]);
		chart_series(c, key, name);
		size_t used = strlen(list);
		snprintf(list + used, sizeof(list) - used, "%s%u", k ? (k + 1 == ncpu ? " and " : ", ")
								  : "", cpu[k]);
	}
	for (unsigned i = 0; i < ncfg; i++) {
		snprintf(c->xname[c->nx], sizeof(c->xname[0]), "%s", cfg[i]);
		for (unsigned k = 0; k < c->ns; k++) {
			const struct mdl_row *r = row_at(s, NULL, cfg[i], cpu[k], r0->hz, r0->cost_name);
			c->v[c->nx][k] = r ? mdl_row_get(r, "mod_timer_pct") : NAN;
		}
		c->nx++;
	}
	snprintf(c->title, sizeof(c->title),
		 "seed001, the model: mod_timer's share of the profile");
	snprintf(c->ylabel, sizeof(c->ylabel), "mod_timer, %% of the modelled profile");
	snprintf(c->caption, sizeof(c->caption),
		 "mod_timer's share of the modelled profile (readprofile's view) per configuration, "
		 "with and without the fast path, at %s CPUs, HZ %u.", list, r0->hz);
	return n;
}

unsigned lab_model_charts(const struct lab_model *lm, struct lab_model_chart *out, unsigned max)
{
	unsigned n = 0;
	const struct mdl_seed *s;
	if (!lm)
		return 0;
	if ((s = seed_of(lm, "seed000")) && s->nrows)
		n = charts_seed000(lm, s, out, max, n);
	if ((s = seed_of(lm, "seed001")) && s->nrows)
		n = charts_seed001(s, out, max, n);
	if ((s = seed_of(lm, "seed003")) && s->nrows)
		n = charts_seed003(s, out, max, n);
	return n;
}
