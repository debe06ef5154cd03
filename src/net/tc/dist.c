/* SPDX-License-Identifier: MIT */
/*
 * netem delay distribution tables: the `.dist` file loader (iproute2's
 * tc/q_netem.c get_distribution() and tc_util.c get_tc_lib()), the
 * built-in normal / pareto / paretonormal tables (the method of iproute2's
 * netem/normal.c, pareto.c, paretonormal.c, reimplemented).  The
 * kernel's sampling arithmetic (tabledist()) is sched/netem.c's.
 *
 * Threads: pw__dist_load(), pw__dist_builtin() and pw__dist_get() run on
 * the tc parser's thread (any thread may call them: they keep no state
 * between calls and touch only the file and the memory they allocate).
 * Locks: none.
 */
#define _POSIX_C_SOURCE 200809L
#include "dist.h"
#include "tc_util.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where iproute2 was built to look (LIBDIR "/tc"): Debian and Ubuntu use
 * the multiarch directory, Fedora /usr/lib64, older builds /usr/lib, and
 * Arch's FHS patch moves the tables to /usr/share/tc. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define PW_DIST_MULTIARCH "x86_64-linux-gnu"
#elif defined(__aarch64__)
#define PW_DIST_MULTIARCH "aarch64-linux-gnu"
#elif defined(__i386__)
#define PW_DIST_MULTIARCH "i386-linux-gnu"
#elif defined(__arm__) && defined(__ARM_PCS_VFP)
#define PW_DIST_MULTIARCH "arm-linux-gnueabihf"
#elif defined(__riscv) && __riscv_xlen == 64
#define PW_DIST_MULTIARCH "riscv64-linux-gnu"
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define PW_DIST_MULTIARCH "powerpc64le-linux-gnu"
#elif defined(__s390x__)
#define PW_DIST_MULTIARCH "s390x-linux-gnu"
#endif

/* with tc's trailing slash (tc_util.c: LIBDIR "/tc/"), so that the
 * "%s/%s.dist" path in a message reads "tc//normal.dist" as tc's does */
static const char *const lib_dirs[] = {
#ifdef PW_DIST_MULTIARCH
	"/usr/lib/" PW_DIST_MULTIARCH "/tc/",
#endif
	"/usr/lib/tc/",
	"/usr/lib64/tc/",
	"/lib/tc/",
	"/usr/share/tc/",
};

#define PW_DIST_PATH_MAX 4096

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static void set_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static void clear_err(char *err, size_t errlen)
{
	if (err && errlen)
		err[0] = '\0';
}

/* Length of the token at @p: up to whitespace or the end. */
static int token_len(const char *p)
{
	int len = 0;

	while (p[len] && !isspace((unsigned char)p[len]) && len < 64)
		len++;
	return len;
}

/* Parse the open file @f (named @path in messages) into a new table. */
static int parse_file(FILE *f, const char *path, int16_t **table, unsigned *n, char *err,
		      size_t errlen)
{
	int16_t *data = malloc(PW_NETEM_DIST_MAX * sizeof(*data));
	char *line = NULL;
	size_t cap = 0;
	ssize_t got;
	unsigned count = 0, lineno = 0;
	int ret = 0;

	if (!data) {
		set_err(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	while ((errno = 0, got = getline(&line, &cap, f)) != -1) {
		char *p = line;

		lineno++;
		if (*line == '#' || *line == '\n')
			continue;
		if ((size_t)got != strlen(line)) {
			set_err(err, errlen, "%s:%u: NUL byte in distribution data", path, lineno);
			ret = -EINVAL;
			goto out;
		}
		for (;;) {
			char *end;
			long v;

			while (isspace((unsigned char)*p))
				p++;
			if (*p == '\0' || *p == '#')
				break;
			errno = 0;
			v = strtol(p, &end, 0);
			if (end == p || (*end && !isspace((unsigned char)*end) && *end != '#')) {
				set_err(err, errlen, "%s:%u: invalid distribution value \"%.*s\"",
					path, lineno, token_len(p), p);
				ret = -EINVAL;
				goto out;
			}
			if (errno == ERANGE || v < INT16_MIN || v > INT16_MAX) {
				set_err(err, errlen,
					"%s:%u: distribution value %.*s out of range [-32768, 32767]",
					path, lineno, (int)(end - p), p);
				ret = -ERANGE;
				goto out;
			}
			if (count >= PW_NETEM_DIST_MAX) {
				set_err(err, errlen, "%s: too much data", path);
				ret = -E2BIG;
				goto out;
			}
			data[count++] = (int16_t)v;
			p = end;
		}
	}
	/* getline() also returns -1 when it cannot grow its buffer: that is
	 * not the end of the file (a table cut short would load silently) */
	if (ferror(f) || !feof(f)) {
		ret = errno == ENOMEM ? -ENOMEM : -EIO;
		set_err(err, errlen, ret == -ENOMEM ? "%s: out of memory" : "%s: read error", path);
		goto out;
	}
	if (count == 0) {
		set_err(err, errlen, "%s: no distribution data", path);
		ret = -ENODATA;
		goto out;
	}
out:
	free(line);
	if (ret) {
		free(data);
		return ret;
	}
	{
		int16_t *shrunk = realloc(data, count * sizeof(*data));

		*table = shrunk ? shrunk : data;
	}
	*n = count;
	clear_err(err, errlen);
	return 0;
}

/* Open @path once, a regular file of at most PW_DIST_FILE_MAX bytes (a
 * FIFO or /dev/zero is an error, not a hang); on failure note the -errno
 * (-EINVAL not a regular file, -EFBIG too large). */
static FILE *open_table(const char *path, int *ret)
{
	FILE *f = pw__open_regular(path, PW_DIST_FILE_MAX, NULL, 0);

	*ret = f ? 0 : -errno;
	return f;
}

int pw__dist_load(const char *name, int16_t **table, unsigned *n, char *err, size_t errlen)
{
	char path[PW_DIST_PATH_MAX], first[PW_DIST_PATH_MAX];
	FILE *f = NULL;
	int ret = -ENOENT, saved;

	if (table)
		*table = NULL;
	if (n)
		*n = 0;
	if (!name || !*name || !table || !n) {
		set_err(err, errlen, "No distribution name");
		return -EINVAL;
	}
	if (strchr(name, '/')) {
		if (strlen(name) >= sizeof(path)) {
			set_err(err, errlen, "Distribution path too long");
			return -ENAMETOOLONG;
		}
		strcpy(path, name);
		f = open_table(path, &ret);
		strcpy(first, path);
	} else {
		const char *env = getenv("TC_LIB_DIR");
		size_t ndirs = sizeof(lib_dirs) / sizeof(lib_dirs[0]);

		first[0] = '\0';
		for (size_t i = 0; i < (env ? 1 : ndirs); i++) {
			int len = snprintf(path, sizeof(path), "%s/%s.dist", env ? env : lib_dirs[i],
					   name);

			if (len < 0 || (size_t)len >= sizeof(path)) {
				set_err(err, errlen, "Distribution path too long");
				return -ENAMETOOLONG;
			}
			if (!first[0])
				strcpy(first, path);
			f = open_table(path, &ret);
			if (f)
				break;
			if (ret != -ENOENT && ret != -ENOTDIR) {
				strcpy(first, path); /* report the path that failed oddly */
				break;
			}
		}
	}
	if (!f) {
		saved = ret;
		if (saved == -ENOTDIR)
			saved = -ENOENT;
		set_err(err, errlen, "No distribution data for %s (%s: %s)", name, first,
			ret == -EINVAL ? "not a regular file" :
			ret == -EFBIG ? "larger than a table can be" : strerror(-ret));
		return saved;
	}
	ret = parse_file(f, path, table, n, err, errlen);
	fclose(f);
	return ret;
}

/* ---- built-in tables ------------------------------------------------- */

/* The inverse normal CDF on TABLESIZE + 1 = 16385 points, as netem/normal.c
 * builds it: walk x from -10 in steps of 0.00005 (accumulated in a double,
 * exactly as the original loop does, so that the same x values arise) and
 * keep, for each i = rint(16384 * Phi(x)), the last x that mapped to it.
 * Every index is hit (the step is fine enough), so no entry is left unset. */
#define PW_DIST_TABLESIZE 16384

static void inverse_normal(double *inv)
{
	const double root2 = sqrt(2.0);

	for (int i = 0; i <= PW_DIST_TABLESIZE; i++)
		inv[i] = 0.0;
	for (double x = -10.0; x < 10.05; x += .00005) {
		double cdf = .5 + .5 * erf(x / root2);
		int i = (int)rint(PW_DIST_TABLESIZE * cdf);

		inv[i] = x;
	}
}

static int clamp_s16(int v)
{
	return v < SHRT_MIN ? SHRT_MIN : v > SHRT_MAX ? SHRT_MAX : v;
}

/* The normal table's value at fine index @i (a multiple of 4), unclamped. */
static int normal_value(const double *inv, int i)
{
	return (int)rint(inv[i] * PW_NETEM_DIST_SCALE);
}

/* Pareto with shape a = 3, shifted and scaled to mean 0, sd 1 in units of
 * NETEM_DIST_SCALE: the inverse CDF at u = k / 65536, k = 65536 - 4 * @i
 * (@i the fine index 0, 4, ..., 16380, so k = 65536, 65520, ..., 16). */
static int pareto_value(int i)
{
	const double a = 3.0;
	double d = (double)(65536 - 4 * i) / 65536.0;

	d = 1.0 / pow(d, 1.0 / a);
	d -= 1.5;
	d *= (4.0 / 3.0) * (double)PW_NETEM_DIST_SCALE;
	if (d > 32767)
		d = 32767;
	return (int)rint(d);
}

int pw__dist_builtin(const char *name, int16_t **table, unsigned *n)
{
	enum { NORMAL, PARETO, PARETONORMAL } kind;
	const unsigned count = PW_DIST_TABLESIZE / 4;
	double *inv = NULL;
	int16_t *t;

	if (table)
		*table = NULL;
	if (n)
		*n = 0;
	if (!name || !table || !n)
		return -EINVAL;
	if (!strcmp(name, "normal"))
		kind = NORMAL;
	else if (!strcmp(name, "pareto"))
		kind = PARETO;
	else if (!strcmp(name, "paretonormal"))
		kind = PARETONORMAL;
	else
		return -ENOENT;

	t = malloc(count * sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (kind != PARETO) {
		inv = malloc((PW_DIST_TABLESIZE + 1) * sizeof(*inv));
		if (!inv) {
			free(t);
			return -ENOMEM;
		}
		inverse_normal(inv);
	}
	for (unsigned k = 0; k < count; k++) {
		int i = (int)(4 * k), v;

		switch (kind) {
		case NORMAL:
			v = clamp_s16(normal_value(inv, i));
			break;
		case PARETO:
			v = pareto_value(i); /* >= -5461, capped at 32767 */
			break;
		default:
			/* .25 normal + .75 pareto, C division (toward zero) */
			v = clamp_s16((normal_value(inv, i) + 3 * pareto_value(i)) / 4);
			break;
		}
		t[k] = (int16_t)v;
	}
	free(inv);
	*table = t;
	*n = count;
	return 0;
}

static int is_builtin_name(const char *name)
{
	return !strcmp(name, "normal") || !strcmp(name, "pareto") ||
	       !strcmp(name, "paretonormal");
}

int pw__dist_get(const char *name, int16_t **table, unsigned *n, char *err, size_t errlen)
{
	int ret = pw__dist_load(name, table, n, err, errlen);

	if (ret == -ENOENT && name && table && n && !strchr(name, '/') && is_builtin_name(name)) {
		ret = pw__dist_builtin(name, table, n);
		if (ret == 0)
			clear_err(err, errlen);
		else
			set_err(err, errlen, "Cannot build distribution %s: %s", name,
				strerror(-ret));
	}
	return ret;
}
