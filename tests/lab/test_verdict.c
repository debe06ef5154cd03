/* SPDX-License-Identifier: MIT */
/*
 * test_verdict: pinwheel-lab's verdicts (tools/lab/verdict.c) on known run
 * sets: deterministic, no threads, no clock.
 *
 *   - the same runs give the same interval, bit for bit;
 *   - clearly separated runs: the interval excludes 1.0, "reproduced" on
 *     the seed's side and "not reproduced" on the other; overlapping runs:
 *     "inconclusive at this machine's noise";
 *   - invalid runs are left out (the interval is the one of the valid runs
 *     alone), counted and named; too few valid runs: "inconclusive: the
 *     machine was loaded", or "... not in force";
 *   - seed_dir 0 (a fix said to restore the figure): inside / outside the
 *     band; zero figures (x/0 = inf, 0/0 = 1); a constant denominator;
 *   - the size band: a claim with a seed figure carries its band (the
 *     seed's effect +- a third) and the figure as stored in its words;
 *     inside it "reproduced", on the seed's side outside it "direction
 *     only", for the live interval and the model's ratio alike; a claim
 *     with no seed figure is its direction;
 *   - the model's word and the live one combined, never "reproduced" when
 *     one half is "direction only"; the = band is the same for both; the
 *     model's claims merged by id; the table and JSON carry every field,
 *     the words, the band, an infinite ratio as "inf" and none as null;
 *   - coverage: over 400 simulated experiments of 5+5 runs with a known
 *     true ratio, the interval holds it at least 92% of the time (the
 *     simulation's generator is fixed: the figure is the same every run).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lab.h"

/* A claim whose seed figure is @seed_ratio (NAN: the direction alone). */
static struct lab_claim *new_claim_r(struct lab_claims *cl, int dir, double seed_ratio)
{
	memset(cl, 0, sizeof(*cl));
	cl->seed = "seedT";
	struct lab_claim *c = lab_claim_add(cl, "x_over_y", dir, seed_ratio, "x raises y", "because");
	CHECK(c);
	return c;
}

/* The runs below are about x2 apart: the seed's figure x2 (+1), x0.5 (-1),
 * 1.0 (=), so "reproduced" is in reach. */
static struct lab_claim *new_claim(struct lab_claims *cl, int dir)
{
	return new_claim_r(cl, dir, dir > 0 ? 2.0 : dir < 0 ? 0.5 : 1.0);
}

static void live(struct lab_claim *c, const double *a, const struct lab_run *ra, unsigned na,
		 const double *b, const struct lab_run *rb, unsigned nb)
{
	struct lab_arm num = {.cfg = "x", .n = na, .v = a, .run = ra};
	struct lab_arm den = {.cfg = "y", .n = nb, .v = b, .run = rb};
	lab_claim_live(c, &num, &den, "%.3f");
}

static const double hi5[] = {2.02, 1.97, 2.05, 1.99, 2.01};
static const double lo5[] = {1.01, 0.98, 1.03, 0.99, 1.00};
static const double ov_a[] = {1.00, 1.20, 0.90, 1.10, 1.05};
static const double ov_b[] = {1.05, 0.95, 1.10, 1.00, 1.15};

static void test_same_data_same_interval(void)
{
	struct lab_interval a, b;
	CHECK(!lab_boot_ratio(ov_a, 5, ov_b, 5, 0, &a));
	CHECK(!lab_boot_ratio(ov_a, 5, ov_b, 5, 0, &b));
	CHECK(!memcmp(&a, &b, sizeof(a)));
	/* the point estimate is the ratio of the means */
	CHECK(fabs(a.ratio - (5.25 / 5) / (5.25 / 5)) < 1e-12);
	CHECK(a.lo < a.ratio && a.ratio < a.hi);
	/* 5 runs: the expanded tail, 0.1%, well inside 2.5% */
	CHECK(a.tail > 0.0005 && a.tail < 0.002);
	/* many runs: the tail tends to 2.5% */
	double big_a[30], big_b[30];
	for (unsigned i = 0; i < 30; i++) {
		big_a[i] = 1 + 0.01 * i;
		big_b[i] = 1 + 0.01 * (29 - i);
	}
	CHECK(!lab_boot_ratio(big_a, 30, big_b, 30, 0, &a));
	CHECK(a.tail > 0.015 && a.tail < 0.025);
	/* fewer than 2 runs: no interval */
	CHECK(lab_boot_ratio(ov_a, 1, ov_b, 5, 0, &a) < 0);
	CHECK(isnan(a.lo) && isnan(a.hi));
}

static void test_separated(void)
{
	struct lab_claims cl;
	struct lab_claim *c = new_claim(&cl, +1);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	printf("separated: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(c->live_lo > 1.8 && c->live_hi < 2.2);
	CHECK(!strcmp(c->live_verdict, "reproduced"));
	CHECK(!strcmp(c->verdict, "model: not run; live: reproduced"));
	CHECK(c->live_runs == 5 && !c->live_excluded && !c->live_invalid);
	/* the same runs, the seed saying the other way */
	c = new_claim(&cl, -1);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "not reproduced"));
	/* and the other way round */
	c = new_claim(&cl, -1);
	live(c, lo5, NULL, 5, hi5, NULL, 5);
	CHECK(c->live_hi < 1 && !strcmp(c->live_verdict, "reproduced"));
}

static void test_overlapping(void)
{
	struct lab_claims cl;
	struct lab_claim *c = new_claim(&cl, +1);
	live(c, ov_a, NULL, 5, ov_b, NULL, 5);
	printf("overlapping: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(c->live_lo < 1 && c->live_hi > 1);
	CHECK(!strcmp(c->live_verdict, "inconclusive at this machine's noise"));
	/* a difference whose runs' ranges overlap, but not its interval: the
	 * rule is the interval, both ways */
	static const double a[] = {1.10, 1.25, 1.18, 1.30, 1.15};
	static const double b[] = {1.00, 1.12, 1.05, 0.98, 1.08};
	c = new_claim(&cl, +1);
	live(c, a, NULL, 5, b, NULL, 5);
	printf("ranges overlap, interval above 1: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(c->live_lo > 1);
	/* above 1.0 but below the seed's x2's band: the direction only */
	CHECK(!strcmp(c->live_verdict, "direction only"));
	/* a claim that is its direction (no seed figure): reproduced */
	c = new_claim_r(&cl, +1, NAN);
	live(c, a, NULL, 5, b, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "reproduced"));
}

static void test_size_band(void)
{
	struct lab_claims cl;
	/* the band as the claim states it, the figure as stored (1.5M / 1.16M
	 * is 1.2931: x1.29, not x1.31) */
	memset(&cl, 0, sizeof(cl));
	struct lab_claim *c = lab_claim_add(&cl, "in_on_over_off", +1, 1.5e6 / 1.16e6, "in rises",
					    "m");
	printf("label: %s\n", c->claim);
	CHECK(!strcmp(c->claim, "in rises (x1.29; size band x1.20-1.39)"));
	CHECK(fabs(c->size_lo - (1 + (1.5e6 / 1.16e6 - 1) * 2 / 3)) < 1e-12);
	CHECK(fabs(c->size_hi - (1 + (1.5e6 / 1.16e6 - 1) * 4 / 3)) < 1e-12);
	c = lab_claim_add(&cl, "pull_eq", 0, 1.0, "the same", "m");
	CHECK(!strcmp(c->claim, "the same (x1.00 +-10%)") && isnan(c->size_lo));
	c = lab_claim_add(&cl, "no_figure", +1, NAN, "more", "m");
	CHECK(!strcmp(c->claim, "more") && isnan(c->size_lo) && isnan(c->size_hi));
	c = lab_claim_add(&cl, "below", -1, 0.7, "less", "m");
	CHECK(fabs(c->size_lo - 0.6) < 1e-12 && fabs(c->size_hi - 0.8) < 1e-12);

	/* the model: x1.12 against x1.29's band is the direction only, x1.31
	 * reproduces, x1.45 (too large) is the direction only again, x0.99
	 * no effect, x0.9 the other way */
	static const struct {
		double r;
		const char *word;
	} m[] = {{1.12, "direction only"}, {1.31, "reproduced"}, {1.45, "direction only"},
		 {0.99, "not reproduced"}, {0.9, "not reproduced"}, {INFINITY, "direction only"}};
	for (unsigned i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
		c->model_run = 1;
		c->model_ratio = m[i].r;
		lab_claim_model_finish(c);
		printf("model x%.2f: %s / %s\n", m[i].r, c->model_verdict, c->verdict);
		CHECK(!strcmp(lab_word_str(c->model_word), m[i].word));
		CHECK(!strncmp(c->model_verdict + 7, m[i].word, strlen(m[i].word)));
	}
	/* a figure just past an edge reads as past it: more decimals while
	 * it would print as the edge; one well inside keeps two */
	c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
	c->model_run = 1;
	c->model_ratio = c->size_hi + 0.0004;
	lab_claim_model_finish(c);
	printf("%s\n", c->model_verdict);
	CHECK(c->model_word == LAB_W_DIR);
	char want[128];
	snprintf(want, sizeof(want), "model: direction only: x%.4f, outside the size band x%.4f-%.4f",
		 c->model_ratio, c->size_lo, c->size_hi);
	CHECK(!strcmp(c->model_verdict, want));
	c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
	c->model_run = 1;
	c->model_ratio = 1.31;
	lab_claim_model_finish(c);
	snprintf(want, sizeof(want), "model: reproduced: x1.31, inside the size band x%.2f-%.2f",
		 c->size_lo, c->size_hi);
	CHECK(!strcmp(c->model_verdict, want));
	/* the = band: the model's is the live run's, LAB_EQUIV_BAND */
	c = new_claim_r(&cl, 0, 1.0);
	c->model_run = 1;
	c->model_ratio = 1.0 + LAB_EQUIV_BAND * 0.9;
	lab_claim_model_finish(c);
	CHECK(c->model_word == LAB_W_REP);
	c = new_claim_r(&cl, 0, 1.0);
	c->model_run = 1;
	c->model_ratio = 1.0 + LAB_EQUIV_BAND * 1.1;
	lab_claim_model_finish(c);
	CHECK(c->model_word == LAB_W_NOT);
	/* live: an interval inside the band reproduces, one across its edge
	 * or beyond it is the direction only */
	static const double a13[] = {1.30, 1.29, 1.31, 1.30, 1.30};
	static const double one[] = {1.00, 1.00, 1.00, 1.00, 1.00};
	c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
	live(c, a13, NULL, 5, one, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "reproduced"));
	c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "direction only"));
	/* the combined verdict never says reproduced when a half says less */
	c->model_run = 1;
	c->model_ratio = 1.31;
	lab_claim_model_finish(c);
	CHECK(!strcmp(c->verdict, "model: reproduced; live: direction only"));
	c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
	live(c, a13, NULL, 5, one, NULL, 5);
	c->model_run = 1;
	lab_claim_model_word(c, LAB_W_DIR, "the level far below the seed's");
	lab_claim_verdict(c);
	CHECK(!strcmp(c->model_verdict, "model: direction only: the level far below the seed's"));
	CHECK(!strcmp(c->verdict, "model: direction only; live: reproduced"));
	CHECK(c->word == LAB_W_NONE && !strcmp(lab_word_str(c->word), "mixed"));
	c = new_claim_r(&cl, +1, 1.5e6 / 1.16e6);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	c->model_run = 1;
	c->model_ratio = 1.12;
	lab_claim_model_finish(c);
	CHECK(!strcmp(c->verdict, "direction only (model and live)") && c->word == LAB_W_DIR);
}

static void test_invalid_runs_excluded(void)
{
	/* runs 2 and 4 of x spoiled (and wild): the interval is the one of
	 * the other three runs of x against all of y */
	double a[] = {2.02, 50.0, 2.05, -9.0, 2.01};
	struct lab_run ra[5];
	memset(ra, 0, sizeof(ra));
	ra[1].invalid = LAB_RUN_LOADED;
	snprintf(ra[1].why, sizeof(ra[1].why), "other processes used 60%% of the CPUs (> 25%%)");
	ra[3].invalid = LAB_RUN_NOT_IN_FORCE;
	snprintf(ra[3].why, sizeof(ra[3].why), "PUSH pushed no timer");
	struct lab_claims cl;
	struct lab_claim *c = new_claim(&cl, +1);
	live(c, a, ra, 5, lo5, NULL, 5);
	printf("excluded: %s; %s -> %s\n", c->live_text, c->live_why, c->live_verdict);
	double valid[] = {2.02, 2.05, 2.01};
	struct lab_interval iv;
	CHECK(!lab_boot_ratio(valid, 3, lo5, 5, 0, &iv));
	CHECK(c->live_ratio == iv.ratio && c->live_lo == iv.lo && c->live_hi == iv.hi);
	CHECK(c->live_excluded == 2 && !c->live_invalid);
	CHECK(strstr(c->live_why, "x run 2: other processes used 60%"));
	CHECK(strstr(c->live_why, "x run 4: PUSH pushed no timer"));
	CHECK(strstr(c->live_text, "(2 excluded)"));
	CHECK(!c->live_num_ok[1] && !c->live_num_ok[3] && c->live_num_ok[0]);
	CHECK(!strcmp(c->live_verdict, "reproduced"));

	/* three of five spoiled by the machine: too few to say anything */
	ra[3].invalid = LAB_RUN_LOADED;
	ra[0].invalid = LAB_RUN_LOADED;
	c = new_claim(&cl, +1);
	live(c, a, ra, 5, lo5, NULL, 5);
	printf("loaded: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(c->live_invalid && isnan(c->live_lo));
	CHECK(!strncmp(c->live_verdict, "inconclusive: the machine was loaded (3 of 10 runs excluded)",
		       60));
	CHECK(!strcmp(c->verdict, "model: not run; live: inconclusive: the machine was loaded"));

	/* spoiled only by the configuration (PUSH pushing nothing) */
	for (unsigned k = 0; k < 5; k++)
		ra[k].invalid = k < 3 ? LAB_RUN_NOT_IN_FORCE : 0;
	c = new_claim(&cl, +1);
	live(c, a, ra, 5, lo5, NULL, 5);
	CHECK(!strncmp(c->live_verdict, "inconclusive: the configuration was not in force", 47));

	/* no run spoiled, but three without a figure (NAN: a profile that took
	 * no sample) */
	double nofig[] = {NAN, 2.0, NAN, NAN, 2.1};
	c = new_claim(&cl, +1);
	live(c, nofig, NULL, 5, lo5, NULL, 5);
	CHECK(c->live_invalid && c->live_excluded == 3);
	CHECK(!strncmp(c->live_verdict, "inconclusive: too few runs with a figure", 40));
	CHECK(strstr(c->live_why, "x run 1: no figure"));

	/* --smoke: 2 runs asked, 2 valid: an interval (the whole range) */
	c = new_claim(&cl, +1);
	live(c, hi5, NULL, 2, lo5, NULL, 2);
	CHECK(!c->live_invalid && c->live_lo > 1);
}

static void test_equivalence(void)
{
	static const double same_a[] = {1.00, 1.01, 0.99, 1.00, 1.02};
	static const double same_b[] = {1.01, 1.00, 0.99, 1.01, 1.00};
	struct lab_claims cl;
	struct lab_claim *c = new_claim(&cl, 0);
	live(c, same_a, NULL, 5, same_b, NULL, 5);
	printf("fix restores: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(!strcmp(c->live_verdict, "reproduced"));
	c = new_claim(&cl, 0);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "not reproduced"));
	c = new_claim(&cl, 0);
	live(c, ov_a, NULL, 5, ov_b, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "inconclusive at this machine's noise"));
}

static void test_zero_and_constant(void)
{
	static const double zero[] = {0, 0, 0, 0, 0};
	static const double some[] = {0.8, 0.9, 0.7, 0.85, 0.95};
	struct lab_claims cl;
	struct lab_claim *c = new_claim(&cl, +1);
	live(c, some, NULL, 5, zero, NULL, 5);
	printf("over zero: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(isinf(c->live_ratio) && isinf(c->live_lo));
	/* inf is outside any size band: the direction only */
	CHECK(!strcmp(c->live_verdict, "direction only"));
	CHECK(strstr(c->live_text, "unbounded") && strstr(c->live_text, "0 in 5 of 5 runs"));
	c = new_claim_r(&cl, +1, NAN);
	live(c, some, NULL, 5, zero, NULL, 5);
	CHECK(!strcmp(c->live_verdict, "reproduced"));
	/* zero both sides: ratio 1 in every resample */
	c = new_claim(&cl, +1);
	live(c, zero, NULL, 5, zero, NULL, 5);
	CHECK(c->live_ratio == 1 && c->live_lo == 1 && c->live_hi == 1);
	CHECK(!strcmp(c->live_verdict, "inconclusive at this machine's noise"));
	/* one zero run among the numerator's: the interval reaches down */
	static const double one_zero[] = {0.8, 0.0, 0.7, 0.85, 0.95};
	c = new_claim(&cl, +1);
	live(c, one_zero, NULL, 5, zero, NULL, 5);
	CHECK(c->live_lo >= 1 && isinf(c->live_hi));
	/* a constant denominator: a share against 1% */
	static const double share[] = {12.0, 15.0, 11.0, 14.0, 13.0};
	c = new_claim_r(&cl, +1, NAN);
	struct lab_arm num = {.cfg = "global_lock", .n = 5, .v = share};
	struct lab_arm den = {.constant = 1.0};
	lab_claim_live(c, &num, &den, "%.1f%%");
	printf("constant: %s -> %s\n", c->live_text, c->live_verdict);
	CHECK(fabs(c->live_ratio - 13.0) < 1e-9 && c->live_lo > 10 && c->live_hi < 16);
	CHECK(!strcmp(c->live_verdict, "reproduced"));
	CHECK(c->live_nden == 0 && c->live_den[0] == 1.0);
}

static void test_model_combined(void)
{
	struct lab_claims cl;
	struct lab_claim *c = new_claim(&cl, +1);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	c->model_run = 1;
	c->model_ratio = 2.1;
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "reproduced (model and live)"));
	c->model_ratio = 1.12; /* the seed's side, far below its x2 */
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "model: direction only; live: reproduced"));
	c->model_ratio = 0.9;
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "model: not reproduced; live: reproduced"));
	c->model_ratio = 1.01; /* within 2%: no effect */
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "model: not reproduced; live: reproduced"));
	/* the model's own verdict wins over its ratio */
	snprintf(c->model_verdict, sizeof(c->model_verdict), "model: reproduced (rank 3)");
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "reproduced (model and live)"));
	snprintf(c->model_verdict, sizeof(c->model_verdict), "model: direction only: the level");
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "model: direction only; live: reproduced"));
	c->model_verdict[0] = 0;
	lab_claim_model_word(c, LAB_W_REP, "top 3");
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "reproduced (model and live)"));
	/* live inconclusive */
	c = new_claim(&cl, +1);
	live(c, ov_a, NULL, 5, ov_b, NULL, 5);
	c->model_run = 1;
	c->model_ratio = 1.9;
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "model: reproduced; live: inconclusive at this machine's noise"));
	/* both not reproduced */
	c = new_claim(&cl, -1);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	c->model_run = 1;
	c->model_ratio = 1.3;
	lab_claim_verdict(c);
	CHECK(!strcmp(c->verdict, "not reproduced (model and live)"));
}

static void test_merge_and_print(void)
{
	struct lab_claims live_cl, model;
	struct lab_claim *c = new_claim(&live_cl, +1);
	live(c, hi5, NULL, 5, lo5, NULL, 5);
	struct lab_claim *c2 = lab_claim_add(&live_cl, "live_only", +1, NAN, "only live", "m2");
	live(c2, ov_a, NULL, 5, ov_b, NULL, 5);
	memset(&model, 0, sizeof(model));
	model.seed = "seedT";
	static const double zero[] = {0, 0, 0, 0, 0};
	struct lab_claim *c3 = lab_claim_add(&live_cl, "over_zero", +1, NAN, "x over nothing", "m4");
	live(c3, hi5, NULL, 5, zero, NULL, 5);
	struct lab_claim *m = lab_claim_add(&model, "x_over_y", +1, 2.0, "the model's words", "mm");
	m->model_run = 1;
	m->model_ratio = 1.9;
	snprintf(m->model_text, sizeof(m->model_text), "x1.90 at 32 CPUs");
	lab_claim_model_finish(m);
	m = lab_claim_add(&model, "model_only", -1, NAN, "only the model", "m3");
	m->model_run = 1;
	m->model_ratio = 0.5;
	snprintf(m->model_text, sizeof(m->model_text), "x0.50");
	lab_claim_model_finish(m);
	m = lab_claim_add(&model, "model_dir", +1, 2.0, "the model's direction", "m5");
	m->model_run = 1;
	m->model_ratio = 1.2;
	lab_claim_model_finish(m);
	lab_claims_merge(&live_cl, &model);
	CHECK(live_cl.n == 5);
	c = &live_cl.c[0];
	CHECK(!strcmp(c->claim, "x raises y (x2.00; size band x1.67-2.33)")); /* the live claim's words kept */
	CHECK(c->model_run && c->model_ratio == 1.9);
	CHECK(!strcmp(c->model_verdict, "model: reproduced: x1.90, inside the size band x1.67-2.33"));
	CHECK(!strcmp(c->verdict, "reproduced (model and live)"));
	c = &live_cl.c[4];
	CHECK(!strcmp(c->id, "model_dir") && c->model_word == LAB_W_DIR);
	CHECK(!strcmp(c->verdict, "model: direction only; live: not run"));
	CHECK(!strcmp(live_cl.c[1].verdict, "model: not run; live: inconclusive at this machine's noise"));
	c = &live_cl.c[3];
	CHECK(!strcmp(c->id, "model_only") && !c->live_runs);
	CHECK(!strcmp(c->verdict, "model: reproduced; live: not run"));
	lab_claims_merge(&live_cl, NULL); /* no model: the verdicts again, unchanged */
	CHECK(!strcmp(live_cl.c[0].verdict, "reproduced (model and live)"));

	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	CHECK(f);
	lab_claims_print(f, &live_cl, 0);
	fclose(f);
	fputs(buf, stdout);
	CHECK(strstr(buf, "| the seed's claim | the model (deterministic) | the live run"));
	CHECK(strstr(buf, "| x raises y (x2.00; size band x1.67-2.33) | x1.90 at 32 CPUs (model: "
			  "reproduced: x1.90, inside the size band x1.67-2.33) | x/y 2.00x ["));
	CHECK(strstr(buf, "| reproduced (model and live) |"));
	CHECK(strstr(buf, "mechanism (x_over_y): because"));
	free(buf);

	buf = NULL;
	f = open_memstream(&buf, &len);
	CHECK(f);
	lab_claims_print(f, &live_cl, 1);
	fclose(f);
	puts(buf);
	CHECK(!strncmp(buf, "{\"seed\":\"seedT\",", 16));
	static const char *const keys[] = {
		"\"id\":\"x_over_y\"", "\"claim\":", "\"mechanism\":", "\"seed_dir\":1",
		"\"seed_ratio\":2,\"size_band\":[1.66667,2.33333]", "\"size_band\":null",
		"\"model\":{\"run\":true,\"ratio\":1.9", "\"live\":{\"runs\":5",
		"\"word\":\"reproduced\"}", "\"word\":\"direction only\"",
		"\"verdict\":\"model: direction only; live: not run\",\"word\":\"direction only\"",
		"\"verdict\":\"model: not run; live: inconclusive at this machine's noise\",\"word\":"
		"\"inconclusive\"",
		/* an infinite ratio is "inf"; a ratio not run is null */
		"\"ratio\":\"inf\",\"lo\":\"inf\"", "\"model\":{\"run\":false,\"ratio\":null",
		"\"num\":{\"config\":\"x\",\"v\":[2.02,1.97,2.05,1.99,2.01],\"valid\":[true,",
		"\"lo\":", "\"hi\":", "\"excluded\":0", "\"invalid\":false",
		"\"verdict\":\"reproduced (model and live)\"", "\"model\":{\"run\":true,\"ratio\":0.5",
		"\"live\":{\"runs\":0",
	};
	for (unsigned i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strstr(buf, keys[i])) {
			fprintf(stderr, "JSON lacks %s\n", keys[i]);
			CHECK(0);
		}
	int depth = 0;
	for (const char *p = buf; *p; p++) /* braces balance (no braces in the strings here) */
		depth += (*p == '{' || *p == '[') - (*p == '}' || *p == ']');
	CHECK(depth == 0);
	free(buf);
}

/* The test's own generator: xorshift64 and Box-Muller. */
static uint64_t rng = 0x1234567887654321ull;
static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}

static void test_coverage(void)
{
	/* figures with a 20% spread, true ratio 1.2, 5 runs a side */
	unsigned held = 0, above = 0, below = 0, M = 400;
	for (unsigned m = 0; m < M; m++) {
		double a[5], b[5];
		for (unsigned i = 0; i < 5; i++) {
			a[i] = 1.2 * (1 + 0.2 * gauss());
			b[i] = 1.0 * (1 + 0.2 * gauss());
		}
		struct lab_interval iv;
		CHECK(!lab_boot_ratio(a, 5, b, 5, 0, &iv));
		held += iv.lo <= 1.2 && 1.2 <= iv.hi;
		above += iv.lo > 1.0;
		below += iv.hi < 1.0;
	}
	printf("coverage, 5+5 runs, 20%% spread: the interval held the true ratio 1.2 in %u of %u; "
	       "above 1.0 (reproduced) %u, below (opposite) %u\n", held, M, above, below);
	CHECK(held >= M * 92 / 100);
	CHECK(below == 0);
}

int main(void)
{
	RUN(test_same_data_same_interval);
	RUN(test_separated);
	RUN(test_overlapping);
	RUN(test_size_band);
	RUN(test_invalid_runs_excluded);
	RUN(test_equivalence);
	RUN(test_zero_and_constant);
	RUN(test_model_combined);
	RUN(test_merge_and_print);
	RUN(test_coverage);
	return 0;
}
