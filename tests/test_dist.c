/* SPDX-License-Identifier: MIT */
/*
 * Tests of the netem distribution tables (src/net/tc/dist.c): the installed
 * iproute2 tables (skipped, printing SKIP, when absent) against the
 * built-in generators value by value; the loader's error cases and the
 * TC_LIB_DIR override on temporary files; the built-in fallback of
 * pw__dist_get(); the kernel's tabledist() arithmetic on hand-computed
 * cases; and Kolmogorov-Smirnov, mean and standard deviation checks of
 * 1e5 samples against the exact discrete distribution of the kernel's
 * arithmetic (enumerated over the table, or in closed form for uniform).
 * Deterministic: a fixed-seed xorshift64.  Single-threaded, no locks.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sched/netem.h" /* pw__netem_tabledist() */
#include "tc/dist.h"

#define NSAMPLES 100000
#define KS_CRIT (1.95 / sqrt((double)NSAMPLES)) /* 0.1% critical value */

static const char *const builtin_names[] = { "normal", "pareto", "paretonormal" };
static char tmpdir[64];

/* ---- fixed-seed generator -------------------------------------------- */

static uint64_t xs_state;

static void xs_seed(uint64_t s)
{
	xs_state = s ? s : 0x9e3779b97f4a7c15ull;
}

/* xorshift64 (13, 7, 17); the high half is the u32 netem's rnd would be. */
static uint32_t xs_u32(void)
{
	xs_state ^= xs_state << 13;
	xs_state ^= xs_state >> 7;
	xs_state ^= xs_state << 17;
	return (uint32_t)(xs_state >> 32);
}

/* ---- helpers --------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f);
	CHECK(fputs(text, f) >= 0);
	CHECK(fclose(f) == 0);
}

static void tmp_path(char *buf, size_t len, const char *file)
{
	int n = snprintf(buf, len, "%s/%s", tmpdir, file);

	CHECK(n > 0 && (size_t)n < len);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* ---- installed tables vs built-ins ----------------------------------- */

static int have_installed;

static void test_installed(void)
{
	char err[512];
	int16_t *t;
	unsigned n;
	int ret;

	unsetenv("TC_LIB_DIR");
	ret = pw__dist_load("normal", &t, &n, err, sizeof(err));
	if (ret == -ENOENT) {
		printf("SKIP installed tables: %s\n", err);
		return;
	}
	CHECK_EQ(ret, 0);
	free(t);
	have_installed = 1;

	for (size_t k = 0; k < sizeof(builtin_names) / sizeof(builtin_names[0]); k++) {
		int16_t *file, *mine;
		unsigned nf, nm, differ = 0, maxdiff = 0;

		CHECK_EQ(pw__dist_load(builtin_names[k], &file, &nf, err, sizeof(err)), 0);
		CHECK_EQ(err[0], 0);
		CHECK_EQ(pw__dist_builtin(builtin_names[k], &mine, &nm), 0);
		CHECK_EQ(nf, 4096);
		CHECK_EQ(nm, 4096);
		for (unsigned i = 0; i < nf; i++) {
			unsigned d = (unsigned)abs(file[i] - mine[i]);

			if (d) {
				differ++;
				printf("  %s[%u]: installed %d, built-in %d\n", builtin_names[k], i,
				       file[i], mine[i]);
			}
			if (d > maxdiff)
				maxdiff = d;
		}
		printf("  %s: %u values, %u differ from the installed table (max |diff| %u)\n",
		       builtin_names[k], nf, differ, maxdiff);
		/* Only libm rounding may differ: a few values by one unit. */
		CHECK(maxdiff <= 1);
		CHECK(differ <= 16);
		free(file);
		free(mine);
	}
	CHECK_EQ(pw__dist_load("experimental", &t, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 4096);
	free(t);
}

/* ---- built-ins on their own ------------------------------------------ */

static void test_builtin(void)
{
	int16_t *t = (int16_t *)1;
	unsigned n = 1;

	CHECK_EQ(pw__dist_builtin("experimental", &t, &n), -ENOENT);
	CHECK(t == NULL && n == 0);
	CHECK_EQ(pw__dist_builtin("uniform", &t, &n), -ENOENT);
	CHECK_EQ(pw__dist_builtin(NULL, &t, &n), -EINVAL);
	for (size_t k = 0; k < sizeof(builtin_names) / sizeof(builtin_names[0]); k++) {
		double sum = 0, sq = 0;

		CHECK_EQ(pw__dist_builtin(builtin_names[k], &t, &n), 0);
		CHECK_EQ(n, 4096);
		for (unsigned i = 0; i < n; i++) {
			if (i)
				CHECK(t[i] >= t[i - 1]); /* an inverse CDF: nondecreasing */
			sum += t[i];
			sq += (double)t[i] * t[i];
		}
		/* Roughly mean 0 and sd 8192 (the tails are clipped and coarse). */
		double mean = sum / n, sd = sqrt(sq / n - mean * mean);

		printf("  built-in %s: mean %.1f sd %.1f (units of 1/8192 sd)\n", builtin_names[k],
		       mean, sd);
		CHECK(fabs(mean) < 800);
		CHECK(sd > 6500 && sd < 9000);
		free(t);
	}
	/* A few known values of the installed Debian tables. */
	CHECK_EQ(pw__dist_builtin("normal", &t, &n), 0);
	CHECK_EQ(t[0], -32768);
	CHECK_EQ(t[1], -28307);
	CHECK_EQ(t[7], -23937);
	free(t);
	CHECK_EQ(pw__dist_builtin("pareto", &t, &n), 0);
	CHECK_EQ(t[0], -5461); /* u = 1: (1 - 1.5) * 4/3 * 8192 */
	CHECK_EQ(t[4095], 32767);
	free(t);
}

/* ---- loader: format and errors --------------------------------------- */

static void expect_err(const char *file, const char *text, int want, const char *msg_part)
{
	char path[256], err[512];
	int16_t *t = (int16_t *)1;
	unsigned n = 1;
	int ret;

	tmp_path(path, sizeof(path), file);
	write_file(path, text);
	ret = pw__dist_load(path, &t, &n, err, sizeof(err));
	if (ret != want || !strstr(err, msg_part))
		fprintf(stderr, "%s: got %d \"%s\", want %d \"%s\"\n", file, ret, err, want,
			msg_part);
	CHECK_EQ(ret, want);
	CHECK(strstr(err, msg_part));
	CHECK(t == NULL && n == 0);
	unlink(path);
}

static char *numbers_text(unsigned count, int value)
{
	char *text = malloc((size_t)count * 8 + 64), *p = text;

	CHECK(text);
	p += sprintf(p, "# %u values\n", count);
	for (unsigned i = 0; i < count; i++)
		p += sprintf(p, "%d%c", value, (i % 8 == 7) ? '\n' : ' ');
	*p++ = '\n';
	*p = '\0';
	return text;
}

static void test_load_errors(void)
{
	char path[256], err[512], *text;
	int16_t *t;
	unsigned n;

	/* Missing file by path: iproute2's message and -ENOENT. */
	tmp_path(path, sizeof(path), "missing.dist");
	CHECK_EQ(pw__dist_load(path, &t, &n, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "No distribution data for "));
	CHECK(strstr(err, "missing.dist: No such file or directory)"));
	CHECK(t == NULL && n == 0);
	printf("  missing: %s\n", err);

	/* Format: comments, blank lines, hex, octal, signs, trailing '#'. */
	tmp_path(path, sizeof(path), "ok.dist");
	write_file(path, "# comment\n\n 1 0x10 -5 +7 # trailing comment\n"
			  "\t010\n  # indented\n-32768 32767");
	CHECK_EQ(pw__dist_load(path, &t, &n, err, sizeof(err)), 0);
	CHECK_EQ(err[0], 0);
	CHECK_EQ(n, 7);
	CHECK_EQ(t[0], 1);
	CHECK_EQ(t[1], 16);
	CHECK_EQ(t[2], -5);
	CHECK_EQ(t[3], 7);
	CHECK_EQ(t[4], 8);
	CHECK_EQ(t[5], -32768);
	CHECK_EQ(t[6], 32767);
	free(t);
	unlink(path);

	/* Exactly MAX_DIST values load; one more is too much. */
	text = numbers_text(PW_NETEM_DIST_MAX, -3);
	tmp_path(path, sizeof(path), "max.dist");
	write_file(path, text);
	free(text);
	CHECK_EQ(pw__dist_load(path, &t, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, PW_NETEM_DIST_MAX);
	CHECK_EQ(t[PW_NETEM_DIST_MAX - 1], -3);
	free(t);
	unlink(path);
	text = numbers_text(PW_NETEM_DIST_MAX + 1, 4);
	expect_err("big.dist", text, -E2BIG, "big.dist: too much data");
	free(text);

	/* Values must fit s16. */
	expect_err("hi.dist", "1 2\n32768\n", -ERANGE,
		   "hi.dist:2: distribution value 32768 out of range");
	expect_err("lo.dist", "-32769\n", -ERANGE, "out of range");
	expect_err("huge.dist", "99999999999999999999999\n", -ERANGE, "out of range");
	/* Garbage tokens (iproute2 silently dropped the rest of the line). */
	expect_err("junk.dist", "1 2 x 3\n", -EINVAL,
		   "junk.dist:1: invalid distribution value \"x\"");
	expect_err("junk2.dist", "# c\n12abc\n", -EINVAL,
		   "junk2.dist:2: invalid distribution value \"12abc\"");
	expect_err("junk3.dist", "1.5\n", -EINVAL, "invalid distribution value \"1.5\"");
	/* No values at all. */
	expect_err("empty.dist", "# nothing\n\n", -ENODATA, "no distribution data");
	expect_err("empty2.dist", "", -ENODATA, "no distribution data");

	/* Bad arguments. */
	CHECK_EQ(pw__dist_load("", &t, &n, err, sizeof(err)), -EINVAL);
	CHECK_EQ(pw__dist_load(NULL, &t, &n, NULL, 0), -EINVAL);
	/* A NULL error buffer is allowed. */
	tmp_path(path, sizeof(path), "missing.dist");
	CHECK_EQ(pw__dist_load(path, &t, &n, NULL, 0), -ENOENT);
}

/* ---- TC_LIB_DIR and the built-in fallback ----------------------------- */

static void test_tc_lib_dir(void)
{
	char path[256], err[512], want[300];
	int16_t *t, *b;
	unsigned n, nb;

	CHECK_EQ(setenv("TC_LIB_DIR", tmpdir, 1), 0);

	/* A name is looked up only in $TC_LIB_DIR. */
	tmp_path(path, sizeof(path), "normal.dist");
	write_file(path, "# a fake normal\n1 2 3\n");
	CHECK_EQ(pw__dist_load("normal", &t, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 3);
	CHECK_EQ(t[2], 3);
	free(t);
	CHECK_EQ(pw__dist_get("normal", &t, &n, err, sizeof(err)), 0); /* the file wins */
	CHECK_EQ(n, 3);
	free(t);
	tmp_path(path, sizeof(path), "mine.dist");
	write_file(path, "-7 7\n");
	CHECK_EQ(pw__dist_load("mine", &t, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(t[0], -7);
	free(t);
	unlink(path);

	/* A bad file is an error, even for a built-in name. */
	tmp_path(path, sizeof(path), "normal.dist");
	write_file(path, "1 oops\n");
	CHECK_EQ(pw__dist_get("normal", &t, &n, err, sizeof(err)), -EINVAL);
	unlink(path);

	/* Missing in $TC_LIB_DIR: load fails with iproute2's message... */
	CHECK_EQ(pw__dist_load("normal", &t, &n, err, sizeof(err)), -ENOENT);
	snprintf(want, sizeof(want), "No distribution data for normal (%s/normal.dist: ", tmpdir);
	CHECK(strstr(err, want) == err);
	printf("  TC_LIB_DIR missing: %s\n", err);
	/* ...and get falls back to the built-in for the three names only. */
	for (size_t k = 0; k < sizeof(builtin_names) / sizeof(builtin_names[0]); k++) {
		CHECK_EQ(pw__dist_get(builtin_names[k], &t, &n, err, sizeof(err)), 0);
		CHECK_EQ(err[0], 0);
		CHECK_EQ(pw__dist_builtin(builtin_names[k], &b, &nb), 0);
		CHECK_EQ(n, nb);
		CHECK(memcmp(t, b, n * sizeof(*t)) == 0);
		free(t);
		free(b);
	}
	CHECK_EQ(pw__dist_get("experimental", &t, &n, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "No distribution data for experimental"));
	/* A path is a path: no fallback. */
	CHECK_EQ(pw__dist_get("./normal", &t, &n, err, sizeof(err)), -ENOENT);

	/* $TC_LIB_DIR that is not a directory: still "not found". */
	tmp_path(path, sizeof(path), "plainfile");
	write_file(path, "x\n");
	CHECK_EQ(setenv("TC_LIB_DIR", path, 1), 0);
	CHECK_EQ(pw__dist_load("normal", &t, &n, err, sizeof(err)), -ENOENT);
	CHECK_EQ(pw__dist_get("pareto", &t, &n, err, sizeof(err)), 0);
	CHECK_EQ(n, 4096);
	free(t);
	unlink(path);
	unsetenv("TC_LIB_DIR");
}

/* ---- tabledist arithmetic -------------------------------------------- */

static void test_tabledist_cases(void)
{
	const int16_t one[] = { 8192 }, mone[] = { -8192 }, half[] = { 4096 }, mhalf[] = { -4096 },
		      below[] = { 4095 }, hundred[] = { 100 }, three[] = { -8192, 0, 8192 };

	/* sigma == 0: mu, whatever the table. */
	CHECK_EQ(pw__netem_tabledist(123, 0, 99, one, 1), 123);
	CHECK_EQ(pw__netem_tabledist(123, 0, 99, NULL, 0), 123);
	/* Uniform: (rnd % 2 sigma) + mu - sigma. */
	CHECK_EQ(pw__netem_tabledist(100, 10, 25, NULL, 0), 95);
	CHECK_EQ(pw__netem_tabledist(100, 10, UINT32_MAX, NULL, 0), 105); /* 4294967295 % 20 = 15 */
	CHECK_EQ(pw__netem_tabledist(0, 10, 0, NULL, 0), -10);
	CHECK_EQ(pw__netem_tabledist(0, INT32_MAX, UINT32_MAX, NULL, 0), 1 - (int64_t)INT32_MAX);
	/* Negative sigma (the kernel caps jitter first): u32 wrap of 2 * sigma. */
	CHECK_EQ(pw__netem_tabledist(0, -10, 5, NULL, 0), 15);
	CHECK_EQ(pw__netem_tabledist(0, -10, UINT32_MAX, NULL, 0), 19 + 10);
	CHECK_EQ(pw__netem_tabledist(0, INT32_MIN, 7, NULL, 0), 7 + 2147483648ll);
	/* Table: rounding half away from zero on the remainder part. */
	CHECK_EQ(pw__netem_tabledist(0, 1000, 0, one, 1), 1000);
	CHECK_EQ(pw__netem_tabledist(0, 1000, 0, mone, 1), -1000);
	CHECK_EQ(pw__netem_tabledist(0, 1, 0, half, 1), 1);
	CHECK_EQ(pw__netem_tabledist(0, 1, 0, mhalf, 1), -1);
	CHECK_EQ(pw__netem_tabledist(0, 1, 0, below, 1), 0);
	CHECK_EQ(pw__netem_tabledist(50, 3 * 8192 + 5, 0, hundred, 1), 50 + 300);
	CHECK_EQ(pw__netem_tabledist(0, 3 * 8192 + 4096, 0, hundred, 1), 300 + 50);
	CHECK_EQ(pw__netem_tabledist(0, -(3 * 8192 + 4096), 0, hundred, 1), -350);
	/* rnd % n picks the entry. */
	CHECK_EQ(pw__netem_tabledist(0, 8192, 7, three, 3), 0);
	CHECK_EQ(pw__netem_tabledist(0, 8192, 8, three, 3), 8192);
	CHECK_EQ(pw__netem_tabledist(0, 8192, 9, three, 3), -8192);
	/* Largest jitter, extreme table values: no 32-bit overflow. */
	CHECK_EQ(pw__netem_tabledist(0, INT32_MAX, 0, (const int16_t[]){ -32768 }, 1),
		 -8589934588ll); /* -(8191*32768+4096)/8192 = -32764, 262143 * -32768 */
	/* s64 wraps as in the kernel (-fno-strict-overflow). */
	CHECK_EQ(pw__netem_tabledist(INT64_MAX, 8192, 0, one, 1), INT64_MIN + 8191);
	CHECK_EQ(pw__netem_tabledist(INT64_MIN, 10, 0, NULL, 0), INT64_MAX - 9);
}

/* ---- exact distributions and the KS test ------------------------------ */

/* CDF at integer v of the delay, for the KS walk. */
typedef double (*cdf_fn)(const void *ctx, int64_t v);

/* Table case: the enumerated support, sorted, with cumulative mass. */
struct table_dist {
	int64_t *v;
	double *cum;
	unsigned k;
};

static double table_cdf(const void *ctx, int64_t v)
{
	const struct table_dist *d = ctx;
	unsigned lo = 0, hi = d->k; /* first index with d->v[i] > v */

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (d->v[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? d->cum[lo - 1] : 0.0;
}

/* Uniform case: k = v - (mu - sigma) in [0, m), m = 2 sigma, each k taken
 * by floor(2^32 / m) or one more values of rnd. */
struct uniform_dist {
	int64_t base;
	uint64_t m, q, rem;
	int naive; /* the continuous-uniform CDF that ignores the modulo bias */
};

static double uniform_cdf(const void *ctx, int64_t v)
{
	const struct uniform_dist *d = ctx;
	int64_t k = v - d->base;

	if (k < 0)
		return 0.0;
	if ((uint64_t)k >= d->m - 1)
		return 1.0;
	if (d->naive)
		return (double)(k + 1) / (double)d->m;
	uint64_t k1 = (uint64_t)k + 1, c = k1 * d->q + (k1 < d->rem ? k1 : d->rem);

	return (double)c / 4294967296.0;
}

/* D = sup |Fn - F| for integer-valued samples (sorted): between sample
 * values Fn is flat, so the sup is at a sample value x (F(x)) or just
 * below it (F(x - 1) against Fn of the previous sample value). */
static double ks_d(const int64_t *s, unsigned n, cdf_fn cdf, const void *ctx)
{
	double d = 0, prev = 0;

	for (unsigned i = 0; i < n;) {
		unsigned j = i;

		while (j < n && s[j] == s[i])
			j++;
		double below = fabs(prev - cdf(ctx, s[i] - 1));
		double fn = (double)j / n, at = fabs(fn - cdf(ctx, s[i]));

		if (below > d)
			d = below;
		if (at > d)
			d = at;
		prev = fn;
		i = j;
	}
	return d;
}

struct moments {
	double mean, var, m4;
};

static struct moments sample_moments(const int64_t *s, unsigned n, int64_t centre)
{
	struct moments m = { 0, 0, 0 };
	double sum = 0;

	for (unsigned i = 0; i < n; i++)
		sum += (double)(s[i] - centre);
	m.mean = sum / n;
	for (unsigned i = 0; i < n; i++) {
		double e = (double)(s[i] - centre) - m.mean, e2 = e * e;

		m.var += e2;
		m.m4 += e2 * e2;
	}
	m.var /= n;
	m.m4 /= n;
	m.mean += (double)centre;
	return m;
}

/* Sample mean and variance against the exact ones, 5 standard errors. */
static void check_moments(const char *what, const int64_t *s, unsigned n, int64_t centre,
			  double mean, double var)
{
	struct moments m = sample_moments(s, n, centre);
	double se_mean = sqrt(var / n), se_var = sqrt((m.m4 - m.var * m.var) / n);

	printf("  %-26s mean %.1f (exact %.1f, %+.2f se)  sd %.1f (exact %.1f, var %+.2f se)\n",
	       what, m.mean, mean, (m.mean - mean) / se_mean, sqrt(m.var), sqrt(var),
	       (m.var - var) / se_var);
	CHECK(fabs(m.mean - mean) < 5 * se_mean);
	CHECK(fabs(m.var - var) < 5 * se_var);
}

static int64_t *samples;

static void ks_table(const char *what, const int16_t *t, unsigned n, int64_t mu, int32_t sigma,
		     uint64_t seed)
{
	struct table_dist d;
	struct { int64_t v; double p; } *e = malloc(n * sizeof(*e));
	double mean = 0, var = 0, tmean = 0, tsq = 0, D;
	unsigned k = 0;

	CHECK(e);
	/* Enumerate: index i is hit by floor((2^32 - 1 - i) / n) + 1 values of rnd. */
	for (unsigned i = 0; i < n; i++) {
		uint64_t hits = (0xffffffffull - i) / n + 1;

		e[i].v = pw__netem_tabledist(mu, sigma, i, t, n);
		e[i].p = (double)hits / 4294967296.0;
		tmean += e[i].p * t[i];
		tsq += e[i].p * (double)t[i] * t[i];
	}
	/* sort by value (insertion into the support arrays, merging equal values) */
	d.v = malloc(n * sizeof(*d.v));
	d.cum = malloc(n * sizeof(*d.cum));
	CHECK(d.v && d.cum);
	{
		int64_t *vals = malloc(n * sizeof(*vals));

		CHECK(vals);
		for (unsigned i = 0; i < n; i++)
			vals[i] = e[i].v;
		qsort(vals, n, sizeof(*vals), cmp_i64);
		for (unsigned i = 0; i < n; i++)
			if (!k || vals[i] != d.v[k - 1])
				d.v[k++] = vals[i];
		free(vals);
	}
	d.k = k;
	for (unsigned i = 0; i < k; i++)
		d.cum[i] = 0;
	for (unsigned i = 0; i < n; i++) {
		/* mass of each entry to its support point */
		unsigned lo = 0, hi = k - 1;

		while (lo < hi) {
			unsigned mid = (lo + hi) / 2;

			if (d.v[mid] < e[i].v)
				lo = mid + 1;
			else
				hi = mid;
		}
		d.cum[lo] += e[i].p;
		mean += e[i].p * (double)(e[i].v - mu);
	}
	for (unsigned i = 0; i < n; i++) {
		double x = (double)(e[i].v - mu) - mean;

		var += e[i].p * x * x;
	}
	mean += (double)mu;
	for (unsigned i = 1; i < k; i++)
		d.cum[i] += d.cum[i - 1];
	CHECK(fabs(d.cum[k - 1] - 1.0) < 1e-12);

	/* The closed form from the table: mean mu + sigma * mean(t) / 8192,
	 * sd sigma * sd(t) / 8192; the kernel's rounding moves each value by
	 * at most 1/2. */
	double cf_mean = (double)mu + (double)sigma * tmean / 8192.0;
	double cf_sd = fabs((double)sigma) * sqrt(tsq - tmean * tmean) / 8192.0;

	CHECK(fabs(mean - cf_mean) <= 0.5 + 1e-6 * fabs(cf_mean));
	CHECK(fabs(sqrt(var) - cf_sd) <= 0.5 + 1e-9 * cf_sd);

	xs_seed(seed);
	for (unsigned i = 0; i < NSAMPLES; i++)
		samples[i] = pw__netem_tabledist(mu, sigma, xs_u32(), t, n);
	qsort(samples, NSAMPLES, sizeof(*samples), cmp_i64);
	D = ks_d(samples, NSAMPLES, table_cdf, &d);
	printf("  %-26s KS D = %.5f (critical %.5f), %u support points\n", what, D, KS_CRIT, k);
	CHECK(D < KS_CRIT);
	check_moments(what, samples, NSAMPLES, mu, mean, var);
	printf("  %-26s closed form mean %.1f sd %.1f\n", what, cf_mean, cf_sd);
	free(d.v);
	free(d.cum);
	free(e);
}

static void ks_uniform(const char *what, int64_t mu, int32_t sigma, uint64_t seed,
		       int expect_naive_fail)
{
	struct uniform_dist d;
	long double q, rem, m, s1, s2, mean, var;
	double D, Dn;

	d.base = mu - sigma;
	d.m = 2ull * (uint64_t)sigma;
	d.q = (1ull << 32) / d.m;
	d.rem = (1ull << 32) % d.m;
	d.naive = 0;
	/* Exact moments of k: weights (q + [k < rem]) / 2^32. */
	q = (long double)d.q;
	rem = (long double)d.rem;
	m = (long double)d.m;
	s1 = q * m * (m - 1) / 2 + rem * (rem - 1) / 2;
	s2 = q * (m - 1) * m * (2 * m - 1) / 6 + (rem - 1) * rem * (2 * rem - 1) / 6;
	mean = s1 / 4294967296.0L;
	var = s2 / 4294967296.0L - mean * mean;

	xs_seed(seed);
	for (unsigned i = 0; i < NSAMPLES; i++) {
		samples[i] = pw__netem_tabledist(mu, sigma, xs_u32(), NULL, 0);
		CHECK(samples[i] >= mu - sigma && samples[i] < mu + sigma);
	}
	qsort(samples, NSAMPLES, sizeof(*samples), cmp_i64);
	D = ks_d(samples, NSAMPLES, uniform_cdf, &d);
	d.naive = 1;
	Dn = ks_d(samples, NSAMPLES, uniform_cdf, &d);
	printf("  %-26s KS D = %.5f (critical %.5f); against the bias-free uniform %.5f\n", what,
	       D, KS_CRIT, Dn);
	CHECK(D < KS_CRIT);
	if (expect_naive_fail)
		CHECK(Dn > KS_CRIT); /* the test does see the modulo bias */
	check_moments(what, samples, NSAMPLES, mu, (double)((long double)d.base + mean),
		      (double)var);
}

static void test_ks(void)
{
	const int64_t mu = 100000000; /* 100 ms */
	const int32_t sigma = 10000000; /* 10 ms: sigma % 8192 = 5760, rounding matters */
	const int16_t three[] = { -8192, 0, 8192 };
	char name[64], err[512];
	uint64_t seed = 0x0123456789abcdefull;

	samples = malloc(NSAMPLES * sizeof(*samples));
	CHECK(samples);
	for (size_t k = 0; k < sizeof(builtin_names) / sizeof(builtin_names[0]); k++) {
		int16_t *t;
		unsigned n;

		CHECK_EQ(pw__dist_builtin(builtin_names[k], &t, &n), 0);
		snprintf(name, sizeof(name), "built-in %s", builtin_names[k]);
		ks_table(name, t, n, mu, sigma, seed++);
		free(t);
	}
	if (have_installed) {
		const char *const inst[] = { "normal", "pareto", "paretonormal", "experimental" };

		unsetenv("TC_LIB_DIR");
		for (size_t k = 0; k < sizeof(inst) / sizeof(inst[0]); k++) {
			int16_t *t;
			unsigned n;

			CHECK_EQ(pw__dist_load(inst[k], &t, &n, err, sizeof(err)), 0);
			snprintf(name, sizeof(name), "installed %s", inst[k]);
			ks_table(name, t, n, mu, sigma, seed++);
			free(t);
		}
	} else {
		printf("SKIP KS of the installed tables (not installed)\n");
	}
	/* A table whose size does not divide 2^32, and a small odd sigma. */
	ks_table("3-entry table", three, 3, 5000, 1001, seed++);
	/* Uniform (no table). */
	ks_uniform("uniform 100ms +- 10ms", mu, sigma, seed++, 0);
	ks_uniform("uniform 0 +- 1000", 0, 1000, seed++, 0);
	/* 2 sigma = 3e9 does not divide 2^32: the lower 1.29e9 values are twice
	 * as likely; the exact CDF accounts for it, the naive one fails. */
	ks_uniform("uniform 0 +- 1.5e9 (biased)", 0, 1500000000, seed++, 1);
	free(samples);
}

int main(void)
{
	char tmpl[] = "/tmp/pw_test_dist_XXXXXX";

	CHECK(mkdtemp(tmpl));
	snprintf(tmpdir, sizeof(tmpdir), "%s", tmpl);
	RUN(test_installed);
	RUN(test_builtin);
	RUN(test_load_errors);
	RUN(test_tc_lib_dir);
	RUN(test_tabledist_cases);
	RUN(test_ks);
	CHECK(rmdir(tmpdir) == 0);
	return 0;
}
