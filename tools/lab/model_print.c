/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's model: its results (struct mdl_seed, one per seed) and
 * their printing, as text tables and as JSON.
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

void mdl_row_set(struct mdl_row *r, const char *key, double v, const char *fmt)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key)) {
			r->val[i] = v;
			r->fmt[i] = fmt;
			return;
		}
	if (r->n == MDL_MAX_VALS)
		return;
	r->key[r->n] = key;
	r->val[r->n] = v;
	r->fmt[r->n] = fmt;
	r->n++;
}

double mdl_row_get(const struct mdl_row *r, const char *key)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->key[i], key))
			return r->val[i];
	return NAN;
}

const struct mdl_row *mdl_find(const struct mdl_seed *s, const char *config, unsigned cpus,
			       unsigned hz)
{
	for (unsigned i = 0; i < s->nrows; i++) {
		const struct mdl_row *r = &s->row[i];
		if (!strcmp(r->config, config) && (!cpus || r->cpus == cpus) &&
		    (!hz || r->hz == hz) && !strcmp(r->cost_name, "table"))
			return r;
	}
	return NULL;
}

void mdl_note(struct mdl_seed *s, const char *fmt, ...)
{
	if (s->nnotes == sizeof(s->notes) / sizeof(s->notes[0]))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->notes[s->nnotes++], sizeof(s->notes[0]), fmt, ap);
	va_end(ap);
}

void mdl_seed_checks(struct mdl_seed *s, const struct mdl *m)
{
	s->nchecks += m->nchecks;
	if (m->nfailed && !s->nfailed)
		snprintf(s->failure, sizeof(s->failure), "%s", m->failure);
	s->nfailed += m->nfailed;
}

/* ------------------------------------------------------------ text */

/* The model's own verdict on a claim (the live run may refine it). */
static void model_verdict(struct lab_claim *c)
{
	if (!c->model_run) {
		snprintf(c->verdict, sizeof(c->verdict), "model not run");
		return;
	}
	double d = c->model_ratio - 1;
	if (isnan(d)) {
		snprintf(c->verdict, sizeof(c->verdict), "model: no figure");
		return;
	}
	int dir = fabs(d) < 0.02 ? 0 : d > 0 ? 1 : -1;
	if (c->seed_dir == 0) {
		snprintf(c->verdict, sizeof(c->verdict), "model: %s",
			 dir == 0 ? "reproduced (within 2%)" : "not reproduced (they differ)");
		return;
	}
	if (dir != c->seed_dir) {
		snprintf(c->verdict, sizeof(c->verdict), "model: not reproduced (%s)",
			 dir ? "opposite direction" : "no effect");
		return;
	}
	if (!isfinite(c->seed_ratio)) {
		snprintf(c->verdict, sizeof(c->verdict), "model: direction reproduced");
		return;
	}
	double rel = d / (c->seed_ratio - 1);
	snprintf(c->verdict, sizeof(c->verdict), "model: direction reproduced, size %s",
		 rel < 0.5 ? "smaller" : rel > 2 ? "larger" : "comparable");
}

void mdl_claims_finish(struct lab_claims *cl)
{
	for (unsigned i = 0; i < cl->n; i++)
		if (!cl->c[i].verdict[0])
			model_verdict(&cl->c[i]);
}

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
			c->verdict);
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
		fprintf(f, "\ncost sweep (irq, ipi, line, handoff scaled):\n");
		fprintf(f, "%-*s %4s %5s %-6s", w, "config", "cpus", "hz", "costs");
		for (unsigned k = 0; k < s->ncols && k < 6; k++)
			fprintf(f, " %10s", s->col_head[k]);
		fprintf(f, "\n");
		for (unsigned i = 0; i < s->nrows; i++) {
			const struct mdl_row *r = &s->row[i];
			if (!strcmp(r->cost_name, "table"))
				continue;
			fprintf(f, "%-*s %4u %5u %-6s", w, r->config, r->cpus, r->hz, r->cost_name);
			for (unsigned k = 0; k < s->ncols && k < 6; k++)
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

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (!isfinite(v))
		fprintf(f, "null");
	else if (v == floor(v) && fabs(v) < 1e15)
		fprintf(f, "%.0f", v);
	else
		fprintf(f, "%.6g", v);
}

void mdl_print_json(FILE *f, const struct mdl_seed *s)
{
	fprintf(f, "{\"title\":");
	json_str(f, s->title);
	fprintf(f, ",\"scale\":");
	json_str(f, s->scale);
	fprintf(f, ",\"claims\":[");
	for (unsigned i = 0; i < s->claims.n; i++) {
		const struct lab_claim *c = &s->claims.c[i];
		fprintf(f, "%s{\"id\":", i ? "," : "");
		json_str(f, c->id);
		fprintf(f, ",\"claim\":");
		json_str(f, c->claim);
		fprintf(f, ",\"mechanism\":");
		json_str(f, c->mechanism);
		fprintf(f, ",\"seed_dir\":%d,\"seed_ratio\":", c->seed_dir);
		json_num(f, c->seed_ratio);
		fprintf(f, ",\"model_ratio\":");
		json_num(f, c->model_run ? c->model_ratio : NAN);
		fprintf(f, ",\"model\":");
		json_str(f, c->model_text);
		fprintf(f, ",\"verdict\":");
		json_str(f, c->verdict);
		fprintf(f, "}");
	}
	fprintf(f, "],\"rows\":[");
	for (unsigned i = 0; i < s->nrows; i++) {
		const struct mdl_row *r = &s->row[i];
		fprintf(f, "%s{\"config\":", i ? "," : "");
		json_str(f, r->config);
		fprintf(f, ",\"label\":");
		json_str(f, r->label);
		fprintf(f, ",\"cpus\":%u,\"hz\":%u,\"costs\":", r->cpus, r->hz);
		json_str(f, r->cost_name);
		for (unsigned k = 0; k < r->n; k++) {
			fprintf(f, ",");
			json_str(f, r->key[k]);
			fprintf(f, ":");
			json_num(f, r->val[k]);
		}
		if (r->profile[0]) {
			fprintf(f, ",\"profile\":");
			json_str(f, r->profile);
		}
		fprintf(f, "}");
	}
	fprintf(f, "],\"notes\":[");
	for (unsigned i = 0; i < s->nnotes; i++) {
		fprintf(f, "%s", i ? "," : "");
		json_str(f, s->notes[i]);
	}
	fprintf(f, "],\"invariants\":{\"checked\":%u,\"failed\":%u,\"failure\":", s->nchecks,
		s->nfailed);
	json_str(f, s->failure);
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
			json_str(f, d->key);
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
			json_str(f, d->what);
			fprintf(f, ",\"source\":");
			json_str(f, d->source);
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
	json_str(f, lm->o.costs.name);
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
	return 0;
}

void lab_model_free(struct lab_model *lm)
{
	free(lm);
}
