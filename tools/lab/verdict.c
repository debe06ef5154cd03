/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's verdicts: what each seed's claim comes to, from the live
 * run's repeats and from the model's deterministic answer.
 *
 * The problem.  A live run on a 2-vCPU VM is one draw from a wide
 * distribution: the same `pinwheel-lab seed000` gave in(on)/in(off) of
 * 1.32x, 1.12x, 1.17x and 0.90x on four tries, and a conclusion read off
 * one such draw (or off two overlapping min..max ranges) changes from run
 * to run.  What holds is a statement about the distribution, made with a
 * rule fixed before the numbers are seen.
 *
 * A claim.  Each claim of a seed is a ratio: a figure (in/s, sys%, a
 * profile share, a lock-wait share) under one configuration over the same
 * figure under another (or over a constant: "above 1% of the profile").
 * The seed says which side of 1.0 the ratio is on (seed_dir +1 or -1), or,
 * for a fix said to undo an effect, that it is 1.0 (seed_dir 0).
 *
 * The runs.  The experiment runs its configurations round by round: round
 * k runs every configuration once, in a fixed order, before round k+1
 * starts (R rounds, 5 by default).  Whatever the machine does slowly (a
 * neighbour's build, a host's busy minute) then falls on every
 * configuration alike instead of on the one that happened to run during
 * it.  Each run gives one figure per configuration.  A run is left out
 * when the machine spoiled it (steal or other processes' CPU time above
 * the thresholds in lab.h, measured around that run: common.c) or when
 * the experiment found its configuration not in force (seed000: a PUSH run
 * that pushed no timer measured nothing about pushing).  Left-out runs are
 * counted and named, never silently averaged in.  A side with fewer than
 * LAB_MIN_VALID valid runs (or fewer than were asked, when fewer than that
 * were asked) gives no interval: the claim is "inconclusive: the machine
 * was loaded".
 *
 * The interval.  The point estimate is mean(num runs) / mean(den runs).
 * Its interval is a bootstrap: LAB_BOOT_B times, draw each side's runs
 * with replacement (as many as it has, each side on its own: the two
 * configurations' runs are separate samples) and take the ratio of the
 * two resampled means; the interval is read off the sorted ratios at a
 * tail percentile and its mirror.  The generator is a splitmix64 from a
 * fixed seed, restarted for every interval, so the same runs always give
 * the same interval, bit for bit.
 *
 * Few runs.  With 5 runs a side, the plain percentile interval (2.5% and
 * 97.5%) is too narrow: resampling sees the spread of the 5 runs, which on
 * average is sqrt(4/5) of the population's, and a mean of 5 has heavier
 * tails than the normal curve the percentiles then amount to.  Such an
 * interval misses the true ratio far more often than 5% of the time
 * (for 5+5 runs of a normal figure, 12% of the time: test_verdict measures it).  So the
 * percentiles are read further out, at the tail the Student t distribution
 * says a 95% interval of n runs needs once the spread's bias is undone:
 * tail = P(Z > sqrt(n/(n-1)) * t(0.975, n-1)), n the smaller side's runs
 * (the "expanded percentile interval").  For n = 5 the tail is 0.1% (the
 * 10th of 10000 sorted ratios), for n = 10 0.8%, for 30 1.9%; it tends to
 * 2.5% as n grows.  Same runs, same method, and it covers 95-96% of the
 * time for 5+5 runs (the test measures that too; with 3+3 runs 90%: the
 * resampled means cannot go beyond the runs' own extremes).  With 2 runs a side (--smoke) the tail is 0:
 * the interval is the whole range of the resampled ratios.
 *
 * Zero figures.  A ratio over a zero mean is +inf (seed003's pinned
 * watchdogs never make a foreign dequeue: "infinitely more" is the honest
 * figure), 0/0 is 1 (a figure that is zero on both sides does not differ).
 * Infinities sort like numbers; an interval wholly at +inf (the
 * denominator 0 in every run, the numerator not) is printed "unbounded"
 * with both means and how many runs' denominators were 0; its verdict is
 * the direction's.
 *
 * The size band.  Where the seed gives a figure (seed000's in, on over
 * off), the claim states with it, when it is made (lab_claim_add(), before
 * anything runs), the band its size must fall in: the seed's effect (ratio
 * - 1) +- LAB_SIZE_BAND of itself (docs/lab.md gives the bands).  A figure
 * on the seed's side of 1.0 outside that band reproduces the direction,
 * not the claim: "direction only".  Where the seed gives no figure ("the
 * fix removes the rise"), the direction is the whole claim.
 *
 * The verdict, fixed before running (docs/lab.md says the same):
 *   seed_dir +1 / -1: the interval lies wholly on the seed's side of 1.0
 *     and, where the claim has a size band, wholly inside it:
 *     "reproduced"; on the seed's side but not inside the band: "direction
 *     only"; wholly on the other side: "not reproduced"; it contains 1.0
 *     (or touches it): "inconclusive at this machine's noise".
 *   seed_dir 0 ("the fix restores it"): the interval lies inside 1.0 +-
 *     LAB_EQUIV_BAND: "reproduced"; wholly outside that band: "not
 *     reproduced"; across its edge: inconclusive.
 *   too few valid runs: "inconclusive: the machine was loaded (...)" (or
 *     "... the configuration was not in force (...)" when that was why).
 * A direction is never read off overlapping ranges: only off an interval
 * that excludes 1.0.  Two runs of the tool give opposite verdicts only if
 * one interval lies wholly above 1.0 and the other wholly below, i.e. both
 * miss the true ratio, on opposite sides: with intervals that cover 95%,
 * a chance below 2.5% x 2.5% x 2.  One of them may well say inconclusive.
 *
 * The model.  The model (model*.c) is deterministic: one figure, no
 * interval.  Its word is its own where it set one (lab_claim_model_word():
 * a rank, a level), else read off its ratio by the same rule as a live
 * interval of one point: on the seed's side of 1.0 by more than
 * LAB_MIN_EFFECT (2%) and inside the size band, "reproduced"; on that side
 * outside it, "direction only"; else "not reproduced" (seed_dir 0: within
 * LAB_EQUIV_BAND, the live run's band too, reproduced).  The table's
 * verdict puts the two together: the same word from both, "reproduced
 * (model and live)", "direction only (model and live)"; else each said
 * apart, "model: direction only; live: reproduced".  So the combined
 * verdict never says "reproduced" when one half says less.  Neither hides
 * the other: a live interval never overrules the model, nor the reverse.
 *
 * Threads: the main thread (one static buffer of resampled ratios).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/json_str.h"
#include "lab.h"

/* ------------------------------------------------------------ JSON pieces */

void lab_json_str(FILE *f, const char *s)
{
	json_put_str(f, s);
}

const char *lab_word_str(enum lab_word w)
{
	switch (w) {
	case LAB_W_REP:
		return "reproduced";
	case LAB_W_DIR:
		return "direction only";
	case LAB_W_NOT:
		return "not reproduced";
	case LAB_W_INC:
		return "inconclusive";
	case LAB_W_NOT_RUN:
		return "not run";
	default:
		return "mixed";
	}
}

void lab_fmt_ratio(char *buf, size_t n, double v, const char *pre, const char *post)
{
	if (isnan(v))
		snprintf(buf, n, "n/a");
	else if (isinf(v))
		snprintf(buf, n, "%sinf", v < 0 ? "-" : "");
	else if (fabs(v) >= 100)
		snprintf(buf, n, "%s%.0f%s", pre, v, post);
	else if (fabs(v) >= 10)
		snprintf(buf, n, "%s%.1f%s", pre, v, post);
	else
		snprintf(buf, n, "%s%.2f%s", pre, v, post);
}

void lab_json_num(FILE *f, double v)
{
	if (isnan(v))
		fputs("null", f);
	else if (isinf(v))
		fputs(v > 0 ? "\"inf\"" : "\"-inf\"", f);
	else
		fprintf(f, "%.6g", v);
}

/* ------------------------------------------------------------ the bootstrap */

/* splitmix64: the resampling's generator, restarted for each interval. */
static uint64_t mix_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A uniform index below @n (n small: the top 32 bits, scaled). */
static unsigned mix_below(uint64_t *s, unsigned n)
{
	return (unsigned)(((mix_next(s) >> 32) * (uint64_t)n) >> 32);
}

/* @a / @b with the conventions above: x/0 = +-inf, 0/0 = 1. */
static double ratio_of(double a, double b)
{
	if (b == 0)
		return a == 0 ? 1.0 : a > 0 ? INFINITY : -INFINITY;
	return a / b;
}

static double mean_of(const double *v, unsigned n)
{
	double s = 0;
	for (unsigned i = 0; i < n; i++)
		s += v[i];
	return s / n;
}

/* Student's t, the 0.975 quantile with @df degrees of freedom. */
static double t975(unsigned df)
{
	static const double t[] = {
		0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
	};
	if (df < sizeof(t) / sizeof(t[0]))
		return t[df];
	return 1.96 + 2.4 / df; /* within 0.002 above 30 */
}

/* The tail at which the expanded percentile interval of @n runs is read. */
static double tail_for(unsigned n)
{
	double z = sqrt((double)n / (n - 1)) * t975(n - 1);
	return 0.5 * erfc(z / sqrt(2.0));
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int lab_boot_ratio(const double *a, unsigned na, const double *b, unsigned nb, double bconst,
		   struct lab_interval *out)
{
	static double rs[LAB_BOOT_B];
	memset(out, 0, sizeof(*out));
	out->ratio = out->lo = out->hi = NAN;
	out->na = na;
	out->nb = nb;
	if (na < 2 || (nb && nb < 2) || na > LAB_MAX_RUNS || nb > LAB_MAX_RUNS) {
		if (na >= 1)
			out->ratio = ratio_of(mean_of(a, na), nb ? mean_of(b, nb) : bconst);
		return -EINVAL;
	}
	out->ratio = ratio_of(mean_of(a, na), nb ? mean_of(b, nb) : bconst);
	uint64_t st = 0x6c61622d626f6f74ull; /* the same stream for every interval */
	for (unsigned k = 0; k < LAB_BOOT_B; k++) {
		double sa = 0, sb = 0;
		for (unsigned i = 0; i < na; i++)
			sa += a[mix_below(&st, na)];
		for (unsigned i = 0; i < nb; i++)
			sb += b[mix_below(&st, nb)];
		rs[k] = ratio_of(sa / na, nb ? sb / nb : bconst);
	}
	qsort(rs, LAB_BOOT_B, sizeof(rs[0]), cmp_dbl);
	unsigned n = nb && nb < na ? nb : na;
	out->tail = tail_for(n);
	unsigned k = (unsigned)floor(out->tail * LAB_BOOT_B);
	if (k >= LAB_BOOT_B / 2)
		k = LAB_BOOT_B / 2 - 1;
	out->lo = rs[k];
	out->hi = rs[LAB_BOOT_B - 1 - k];
	return 0;
}

/* ------------------------------------------------------------ claims */

struct lab_claim *lab_claim_add(struct lab_claims *cl, const char *id, int seed_dir,
				double seed_ratio, const char *claim, const char *mechanism)
{
	if (cl->n >= LAB_MAX_CLAIMS)
		return NULL;
	struct lab_claim *c = &cl->c[cl->n++];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	snprintf(c->claim, sizeof(c->claim), "%s", claim);
	snprintf(c->mechanism, sizeof(c->mechanism), "%s", mechanism);
	c->seed_dir = seed_dir;
	c->seed_ratio = seed_ratio;
	c->size_lo = c->size_hi = NAN;
	c->model_ratio = NAN;
	c->live_ratio = c->live_lo = c->live_hi = NAN;
	/* the figure and its band, as stored, after the claim's words */
	char r[24], lo[24], hi[24];
	size_t len = strlen(c->claim);
	if (seed_dir && isfinite(seed_ratio)) {
		double e = seed_ratio - 1;
		double a = 1 + e * (1 - LAB_SIZE_BAND), b = 1 + e * (1 + LAB_SIZE_BAND);
		c->size_lo = a < b ? a : b;
		c->size_hi = a < b ? b : a;
		lab_fmt_ratio(r, sizeof(r), seed_ratio, "x", "");
		lab_fmt_ratio(lo, sizeof(lo), c->size_lo, "x", "");
		lab_fmt_ratio(hi, sizeof(hi), c->size_hi, "", "");
		snprintf(c->claim + len, sizeof(c->claim) - len, " (%s; size band %s-%s)", r, lo, hi);
	} else if (!seed_dir) {
		lab_fmt_ratio(r, sizeof(r), isfinite(seed_ratio) ? seed_ratio : 1.0, "x", "");
		snprintf(c->claim + len, sizeof(c->claim) - len, " (%s +-%.0f%%)", r,
			 100 * LAB_EQUIV_BAND);
	}
	return c;
}

/* How many of @n figures are 0. */
static unsigned count_zero(const double *v, unsigned n)
{
	unsigned z = 0;
	for (unsigned i = 0; i < n; i++)
		z += v[i] == 0;
	return z;
}

/* A ratio for the tables: "inf", "12.3x", "1.21x"; @x: the "x" or "". */
static void fmt_ratio(char *buf, size_t n, double v, const char *x)
{
	lab_fmt_ratio(buf, n, v, "", x);
}

/* A side's mean by the claim's format ("n/a" when it has no valid run). */
static void fmt_mean(char *buf, size_t n, const char *fmt, double v)
{
	if (isnan(v))
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, fmt, v);
}

/* Append to @buf (size @n) with "; " between entries; quietly truncated. */
static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t n, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 3 >= n)
		return;
	if (len) {
		memcpy(buf + len, "; ", 3);
		len += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, n - len, fmt, ap);
	va_end(ap);
}

/* live_invalid's reason when no run was spoiled, but too few had a figure
 * (a profile that took no sample, say). */
#define NO_FIGURE 0x100

/* Copy one side's runs into the claim; its valid figures into @valid.
 * Return: how many are valid; *@bits gets the excluded runs' reasons. */
static unsigned take_side(struct lab_claim *c, const struct lab_arm *arm, double *vals,
			  unsigned char *ok, double *valid, unsigned *bits)
{
	unsigned n = arm->n > LAB_MAX_RUNS ? LAB_MAX_RUNS : arm->n, m = 0;
	for (unsigned k = 0; k < n; k++) {
		const struct lab_run *run = arm->run ? &arm->run[k] : NULL;
		vals[k] = arm->v[k];
		ok[k] = !isnan(arm->v[k]) && !(run && run->invalid);
		if (ok[k]) {
			valid[m++] = arm->v[k];
			continue;
		}
		c->live_excluded++;
		*bits |= run ? run->invalid : 0;
		append(c->live_why, sizeof(c->live_why), "%s run %u: %s", arm->cfg ? arm->cfg : "?",
		       k + 1, run && run->why[0] ? run->why : "no figure");
	}
	return m;
}

void lab_claim_live(struct lab_claim *c, const struct lab_arm *num, const struct lab_arm *den,
		    const char *fmt)
{
	double va[LAB_MAX_RUNS], vb[LAB_MAX_RUNS];
	unsigned bits = 0;
	c->live_excluded = 0;
	c->live_why[0] = 0;
	c->live_invalid = 0;
	snprintf(c->live_num_cfg, sizeof(c->live_num_cfg), "%s", num->cfg ? num->cfg : "?");
	snprintf(c->live_den_cfg, sizeof(c->live_den_cfg), "%s",
		 den->n ? (den->cfg ? den->cfg : "?") : "constant");
	c->live_nnum = num->n > LAB_MAX_RUNS ? LAB_MAX_RUNS : num->n;
	c->live_nden = den->n > LAB_MAX_RUNS ? LAB_MAX_RUNS : den->n;
	unsigned na = take_side(c, num, c->live_num, c->live_num_ok, va, &bits);
	unsigned nb = take_side(c, den, c->live_den, c->live_den_ok, vb, &bits);
	if (!den->n)
		c->live_den[0] = den->constant; /* what the JSON shows */
	c->live_runs = c->live_nnum > c->live_nden ? c->live_nnum : c->live_nden;

	/* the valid runs a side needs: LAB_MIN_VALID, or all that were asked
	 * when fewer were, and at least 2 for an interval */
	unsigned asked = c->live_nnum, need;
	if (c->live_nden && c->live_nden < asked)
		asked = c->live_nden;
	need = asked < LAB_MIN_VALID ? asked : LAB_MIN_VALID;
	if (need < 2)
		need = 2;
	struct lab_interval iv;
	int err = lab_boot_ratio(va, na, vb, nb, den->constant, &iv);
	c->live_ratio = iv.ratio;
	c->live_lo = iv.lo;
	c->live_hi = iv.hi;
	if (err || na < need || (c->live_nden && nb < need)) {
		c->live_invalid = bits ? (int)bits : NO_FIGURE;
		c->live_lo = c->live_hi = NAN;
	}

	char r[24], lo[24], hi[24], ma[48], mb[48];
	fmt_ratio(r, sizeof(r), c->live_ratio, "x");
	fmt_ratio(lo, sizeof(lo), c->live_lo, "");
	fmt_ratio(hi, sizeof(hi), c->live_hi, "");
	fmt_mean(ma, sizeof(ma), fmt, na ? mean_of(va, na) : NAN);
	fmt_mean(mb, sizeof(mb), fmt, c->live_nden ? (nb ? mean_of(vb, nb) : NAN) : den->constant);
	int n;
	if (c->live_invalid)
		n = snprintf(c->live_text, sizeof(c->live_text), "%s/%s %s, no interval (%u and %u "
			     "valid runs); %s vs %s", c->live_num_cfg, c->live_den_cfg, r, na, nb, ma,
			     mb);
	else if (c->live_nden && isinf(c->live_lo) && c->live_lo > 0)
		/* every resample's denominator was 0 and its numerator not:
		 * no finite ratio to print, and none needed */
		n = snprintf(c->live_text, sizeof(c->live_text), "%s/%s unbounded: %s vs %s "
			     "(%s 0 in %u of %u runs); %u+%u runs", c->live_num_cfg, c->live_den_cfg,
			     ma, mb, c->live_den_cfg, count_zero(vb, nb), nb, na, nb);
	else if (c->live_nden)
		n = snprintf(c->live_text, sizeof(c->live_text), "%s/%s %s [%s, %s]; %s vs %s; %u+%u runs",
			     c->live_num_cfg, c->live_den_cfg, r, lo, hi, ma, mb, na, nb);
	else
		n = snprintf(c->live_text, sizeof(c->live_text), "%s %s over %s: %s [%s, %s]; %u runs",
			     c->live_num_cfg, ma, mb, r, lo, hi, na);
	if (c->live_excluded && n > 0 && (size_t)n < sizeof(c->live_text))
		snprintf(c->live_text + n, sizeof(c->live_text) - (size_t)n, " (%u excluded)",
			 c->live_excluded);
	lab_claim_verdict(c);
}

/* ------------------------------------------------------------ verdicts */

/* The word for @lo..@hi (a live interval, or the model's one point) on
 * @c's claim: which side of 1.0 (or of the = band, seed_dir 0) it lies on,
 * and, on the seed's side, whether it lies inside the claim's size band. */
static enum lab_word side_word(const struct lab_claim *c, double lo, double hi)
{
	if (isnan(lo) || isnan(hi))
		return LAB_W_INC;
	if (c->seed_dir == 0) {
		double bl = 1.0 / (1.0 + LAB_EQUIV_BAND), bh = 1.0 + LAB_EQUIV_BAND;
		if (lo >= bl && hi <= bh)
			return LAB_W_REP;
		if (hi < bl || lo > bh)
			return LAB_W_NOT;
		return LAB_W_INC;
	}
	int side = lo > 1.0 ? 1 : hi < 1.0 ? -1 : 0;
	if (!side)
		return LAB_W_INC;
	if (side != (c->seed_dir > 0 ? 1 : -1))
		return LAB_W_NOT;
	if (isnan(c->size_lo))
		return LAB_W_REP; /* the seed gives no size: the direction is the claim */
	return lo >= c->size_lo && hi <= c->size_hi ? LAB_W_REP : LAB_W_DIR;
}

/* The word a model's ratio @r gives: one point, an effect under
 * LAB_MIN_EFFECT none. */
static enum lab_word ratio_word(const struct lab_claim *c, double r)
{
	if (isnan(r))
		return LAB_W_INC;
	if (c->seed_dir && fabs(r - 1) < LAB_MIN_EFFECT)
		return LAB_W_NOT;
	return side_word(c, r, r);
}

/* The model's word: its own (set, or named in its verdict's text), else
 * its ratio's. */
static enum lab_word model_word(const struct lab_claim *c)
{
	if (!c->model_run)
		return LAB_W_NOT_RUN;
	if (c->model_word != LAB_W_NONE)
		return c->model_word;
	const char *v = c->model_verdict;
	if (v[0]) {
		if (strstr(v, "direction only"))
			return LAB_W_DIR;
		if (strstr(v, "not reproduced"))
			return LAB_W_NOT;
		if (strstr(v, "inconclusive"))
			return LAB_W_INC;
		if (strstr(v, "reproduced"))
			return LAB_W_REP;
		if (strstr(v, "not run"))
			return LAB_W_NOT_RUN;
	}
	return ratio_word(c, c->model_ratio);
}

void lab_claim_model_word(struct lab_claim *c, enum lab_word w, const char *fmt, ...)
{
	c->model_word = w;
	int n = snprintf(c->model_verdict, sizeof(c->model_verdict), "model: %s", lab_word_str(w));
	if (fmt && n > 0 && (size_t)n + 2 < sizeof(c->model_verdict)) {
		memcpy(c->model_verdict + n, ": ", 3);
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(c->model_verdict + n + 2, sizeof(c->model_verdict) - (size_t)n - 2, fmt, ap);
		va_end(ap);
	}
}

/* @v and the band @lo-@hi as lab_fmt_ratio() writes them, with more
 * decimals (up to 4) while @v's text equals an edge's that @v is not: a
 * figure just outside the band must not read as its edge ("x1.39,
 * outside x1.20-1.39").  Context: any thread. */
static void fmt_against_band(double v, double lo, double hi, char r[24], char slo[24],
			     char shi[24])
{
	lab_fmt_ratio(r, 24, v, "x", "");
	lab_fmt_ratio(slo, 24, lo, "x", "");
	lab_fmt_ratio(shi, 24, hi, "", "");
	if (!isfinite(v) || !isfinite(lo) || !isfinite(hi) || fabs(v) >= 10)
		return;
	for (int d = 3; d <= 4; d++) {
		if ((strcmp(r + 1, slo + 1) || v == lo) && (strcmp(r + 1, shi) || v == hi))
			return;
		snprintf(r, 24, "x%.*f", d, v);
		snprintf(slo, 24, "x%.*f", d, lo);
		snprintf(shi, 24, "%.*f", d, hi);
	}
}

void lab_claim_model_finish(struct lab_claim *c)
{
	if (c->model_run && c->model_word == LAB_W_NONE && !c->model_verdict[0]) {
		enum lab_word w = ratio_word(c, c->model_ratio);
		char r[24], lo[24], hi[24];
		fmt_against_band(c->model_ratio, c->size_lo, c->size_hi, r, lo, hi);
		int dir = isnan(c->model_ratio) || fabs(c->model_ratio - 1) < LAB_MIN_EFFECT ? 0
			  : c->model_ratio > 1 ? 1 : -1;
		if (w == LAB_W_INC)
			lab_claim_model_word(c, w, "no figure");
		else if (!c->seed_dir)
			lab_claim_model_word(c, w, "%s, %s 1.0 +-%.0f%%", r,
					     w == LAB_W_REP ? "within" : "outside",
					     100 * LAB_EQUIV_BAND);
		else if (w == LAB_W_NOT)
			lab_claim_model_word(c, w, "%s, %s", r,
					     dir ? "the opposite direction" : "no effect (under 2%)");
		else if (isnan(c->size_lo))
			lab_claim_model_word(c, w, "%s, the direction (the seed gives no size)", r);
		else
			lab_claim_model_word(c, w, "%s, %s the size band %s-%s", r,
					     w == LAB_W_REP ? "inside" : "outside", lo, hi);
	}
	lab_claim_verdict(c);
}

void lab_claim_verdict(struct lab_claim *c)
{
	/* the live run's word */
	enum lab_word lw;
	const char *lshort;
	if (!c->live_runs) {
		lw = LAB_W_NOT_RUN;
		lshort = "not run";
		snprintf(c->live_verdict, sizeof(c->live_verdict), "not run");
	} else if (c->live_invalid) {
		lw = LAB_W_INC;
		if (c->live_invalid & LAB_RUN_LOADED)
			lshort = "inconclusive: the machine was loaded";
		else if (c->live_invalid & LAB_RUN_NOT_IN_FORCE)
			lshort = "inconclusive: the configuration was not in force";
		else
			lshort = "inconclusive: too few runs with a figure";
		unsigned asked = c->live_nnum + c->live_nden;
		snprintf(c->live_verdict, sizeof(c->live_verdict), "%s (%u of %u runs excluded)",
			 lshort, c->live_excluded, asked);
	} else {
		lw = side_word(c, c->live_lo, c->live_hi);
		lshort = lw == LAB_W_INC ? "inconclusive at this machine's noise" : lab_word_str(lw);
		snprintf(c->live_verdict, sizeof(c->live_verdict), "%s", lshort);
	}
	c->live_word = lw;
	/* the model's, and the two together */
	enum lab_word mw = model_word(c);
	/* one word for both where they agree, or where only one half ran */
	c->word = mw == lw || lw == LAB_W_NOT_RUN ? mw : mw == LAB_W_NOT_RUN ? lw : LAB_W_NONE;
	if (mw == LAB_W_NOT_RUN && lw == LAB_W_NOT_RUN)
		snprintf(c->verdict, sizeof(c->verdict), "not run");
	else if (mw == lw && (mw == LAB_W_REP || mw == LAB_W_NOT || mw == LAB_W_DIR))
		snprintf(c->verdict, sizeof(c->verdict), "%s (model and live)", lab_word_str(mw));
	else
		snprintf(c->verdict, sizeof(c->verdict), "model: %s; live: %s", lab_word_str(mw),
			 lshort);
}

void lab_claims_verdicts(struct lab_claims *cl)
{
	for (unsigned i = 0; i < cl->n; i++)
		lab_claim_verdict(&cl->c[i]);
}

/* Clear @c's live half (a claim only the model has). */
static void live_clear(struct lab_claim *c)
{
	c->live_runs = c->live_nnum = c->live_nden = c->live_excluded = 0;
	c->live_ratio = c->live_lo = c->live_hi = NAN;
	c->live_text[0] = c->live_why[0] = c->live_verdict[0] = 0;
	c->live_invalid = 0;
	c->live_word = LAB_W_NOT_RUN;
	c->live_num_cfg[0] = c->live_den_cfg[0] = 0;
}

void lab_claims_merge(struct lab_claims *into, const struct lab_claims *model)
{
	if (model) {
		if (!into->seed)
			into->seed = model->seed;
		for (unsigned i = 0; i < model->n; i++) {
			const struct lab_claim *m = &model->c[i];
			struct lab_claim *c = NULL;
			for (unsigned k = 0; k < into->n && !c; k++)
				if (!strcmp(into->c[k].id, m->id))
					c = &into->c[k];
			if (!c) {
				if (into->n >= LAB_MAX_CLAIMS)
					continue;
				c = &into->c[into->n++];
				*c = *m;
				live_clear(c);
			}
			c->model_run = m->model_run;
			c->model_ratio = m->model_ratio;
			c->model_word = m->model_word;
			snprintf(c->model_text, sizeof(c->model_text), "%s", m->model_text);
			/* the model's own verdict: its model_verdict, or (a
			 * model-only claims table) its verdict */
			snprintf(c->model_verdict, sizeof(c->model_verdict), "%s",
				 m->model_verdict[0] ? m->model_verdict : m->verdict);
		}
	}
	lab_claims_verdicts(into);
}

/* ------------------------------------------------------------ printing */

/* Markdown cell text: '|' would end the cell. */
static void cell(FILE *f, const char *s)
{
	fputs("| ", f);
	for (; *s; s++)
		fputc(*s == '|' ? '/' : *s, f);
	fputc(' ', f);
}

static void print_text(FILE *f, const struct lab_claims *cl)
{
	fputs("| the seed's claim | the model (deterministic) | the live run (ratio [95% interval]) "
	      "| verdict |\n|---|---|---|---|\n", f);
	unsigned runs = 0;
	for (unsigned i = 0; i < cl->n; i++) {
		const struct lab_claim *c = &cl->c[i];
		char m[400];
		if (!c->model_run)
			snprintf(m, sizeof(m), "not run");
		else if (c->model_verdict[0])
			snprintf(m, sizeof(m), "%s (%s)", c->model_text, c->model_verdict);
		else
			snprintf(m, sizeof(m), "%s", c->model_text);
		cell(f, c->claim);
		cell(f, m);
		cell(f, c->live_runs ? c->live_text : "not run");
		cell(f, c->verdict[0] ? c->verdict : "not run");
		fputs("|\n", f);
		if (c->live_runs > runs)
			runs = c->live_runs;
	}
	for (unsigned i = 0; i < cl->n; i++) {
		const struct lab_claim *c = &cl->c[i];
		fprintf(f, "mechanism (%s): %s\n", c->id, c->mechanism);
		if (c->live_excluded)
			fprintf(f, "excluded from the live interval (%s): %s\n", c->id, c->live_why);
	}
	if (runs)
		fprintf(f, "live: the ratio of the configurations' means over up to %u interleaved runs "
			"each, its 95%% interval a bootstrap over the runs; reproduced only when the "
			"interval lies wholly inside the claim's size band (on the seed's side of 1.0 "
			"where the seed gives no size), direction only when on that side but not inside "
			"it, not reproduced when wholly on the other (docs/lab.md, \"The live run\")\n",
			runs);
}

static void json_side(FILE *f, const char *cfg, const double *v, const unsigned char *ok,
		      unsigned n)
{
	fputs("{\"config\":", f);
	lab_json_str(f, cfg);
	fputs(",\"v\":[", f);
	for (unsigned k = 0; k < n; k++) {
		if (k)
			fputc(',', f);
		lab_json_num(f, v[k]);
	}
	fputs("],\"valid\":[", f);
	for (unsigned k = 0; k < n; k++)
		fprintf(f, "%s%s", k ? "," : "", ok[k] ? "true" : "false");
	fputs("]}", f);
}

static void print_json(FILE *f, const struct lab_claims *cl)
{
	fputs("{\"seed\":", f);
	lab_json_str(f, cl->seed ? cl->seed : "");
	fprintf(f, ",\"boot_resamples\":%u,\"min_valid_runs\":%u,\"equiv_band\":%g,"
		   "\"size_band\":%.4g,\"min_effect\":%g,\"steal_max_pct\":%g,"
		   "\"others_max_pct\":%g,\"claims\":[",
		LAB_BOOT_B, LAB_MIN_VALID, LAB_EQUIV_BAND, LAB_SIZE_BAND, LAB_MIN_EFFECT,
		LAB_STEAL_MAX_PCT, LAB_OTHERS_MAX_PCT);
	for (unsigned i = 0; i < cl->n; i++) {
		const struct lab_claim *c = &cl->c[i];
		fputs(i ? ",{\"id\":" : "{\"id\":", f);
		lab_json_str(f, c->id);
		fputs(",\"claim\":", f);
		lab_json_str(f, c->claim);
		fputs(",\"mechanism\":", f);
		lab_json_str(f, c->mechanism);
		fprintf(f, ",\"seed_dir\":%d,\"seed_ratio\":", c->seed_dir);
		lab_json_num(f, c->seed_ratio);
		fputs(",\"size_band\":", f);
		if (isnan(c->size_lo))
			fputs("null", f);
		else {
			fputc('[', f);
			lab_json_num(f, c->size_lo);
			fputc(',', f);
			lab_json_num(f, c->size_hi);
			fputc(']', f);
		}
		fprintf(f, ",\"model\":{\"run\":%s,\"ratio\":", c->model_run ? "true" : "false");
		lab_json_num(f, c->model_run ? c->model_ratio : NAN);
		fputs(",\"text\":", f);
		lab_json_str(f, c->model_text);
		fputs(",\"verdict\":", f);
		lab_json_str(f, c->model_verdict);
		fputs(",\"word\":", f);
		lab_json_str(f, lab_word_str(model_word(c)));
		fprintf(f, "},\"live\":{\"runs\":%u", c->live_runs);
		if (c->live_runs) {
			fputs(",\"num\":", f);
			json_side(f, c->live_num_cfg, c->live_num, c->live_num_ok, c->live_nnum);
			fputs(",\"den\":", f);
			if (c->live_nden)
				json_side(f, c->live_den_cfg, c->live_den, c->live_den_ok, c->live_nden);
			else {
				fputs("{\"constant\":", f);
				lab_json_num(f, c->live_den[0]);
				fputc('}', f);
			}
		}
		fputs(",\"ratio\":", f);
		lab_json_num(f, c->live_ratio);
		fputs(",\"lo\":", f);
		lab_json_num(f, c->live_lo);
		fputs(",\"hi\":", f);
		lab_json_num(f, c->live_hi);
		fprintf(f, ",\"excluded\":%u,\"invalid\":%s,\"why\":", c->live_excluded,
			c->live_invalid ? "true" : "false");
		lab_json_str(f, c->live_why);
		fputs(",\"text\":", f);
		lab_json_str(f, c->live_text);
		fputs(",\"verdict\":", f);
		lab_json_str(f, c->live_verdict[0] ? c->live_verdict : "not run");
		fputs(",\"word\":", f);
		lab_json_str(f, lab_word_str(c->live_runs ? c->live_word : LAB_W_NOT_RUN));
		fputs("},\"verdict\":", f);
		lab_json_str(f, c->verdict);
		fputs(",\"word\":", f);
		lab_json_str(f, lab_word_str(c->word));
		fputc('}', f);
	}
	fputs("]}", f);
}

void lab_claims_print(FILE *f, const struct lab_claims *cl, int json)
{
	if (json)
		print_json(f, cl);
	else
		print_text(f, cl);
}
