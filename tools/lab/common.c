/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's shared helpers: progress lines, the result table and its
 * text/JSON printers, the machine and commit, the OS-side sampler that
 * measures what vmstat showed in the seeds (in, cs, us/sy/id), and the
 * record of each live run: the machine's load, steal and other processes'
 * CPU time around it, and whether they spoil it (lab_run_begin/end).
 *
 * Threads: the main thread only (the sampler reads the runtime's per-CPU
 * counters with pw_stats_read(), which any thread may call).  No locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <pinwheel/pinwheel.h>
#include <pinwheel/stats.h>

#include "lab.h"
#include "now.h"

void lab_progress(const struct lab_result *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "lab %s: ", r ? r->id : "");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void lab_columns(struct lab_result *r, unsigned n, const char *const *nk)
{
	if (n > LAB_MAX_COLS)
		n = LAB_MAX_COLS;
	r->ncols = n;
	for (unsigned c = 0; c < n; c++) {
		snprintf(r->col[c], LAB_CELL, "%s", nk[2 * c]);
		snprintf(r->col_key[c], LAB_CELL, "%s", nk[2 * c + 1]);
	}
}

unsigned lab_row(struct lab_result *r, const char *name, const char *key)
{
	unsigned row = r->nrows < LAB_MAX_ROWS ? r->nrows++ : LAB_MAX_ROWS - 1;
	for (unsigned c = 0; c < LAB_MAX_COLS; c++) {
		r->val[row][c] = NAN;
		r->cell[row][c][0] = 0;
	}
	snprintf(r->cell[row][0], LAB_CELL, "%s", name);
	snprintf(r->row_key[row], LAB_CELL, "%s", key);
	return row;
}

void lab_cellf(struct lab_result *r, unsigned row, unsigned col, double v, const char *fmt)
{
	if (row >= LAB_MAX_ROWS || col >= LAB_MAX_COLS)
		return;
	r->val[row][col] = v;
	snprintf(r->cell[row][col], LAB_CELL, fmt, v);
}

void lab_cells(struct lab_result *r, unsigned row, unsigned col, const char *text)
{
	if (row >= LAB_MAX_ROWS || col >= LAB_MAX_COLS)
		return;
	snprintf(r->cell[row][col], LAB_CELL, "%s", text);
}

void lab_summary(struct lab_result *r, const char *fmt, ...)
{
	if (r->nsummary >= 8)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->summary[r->nsummary++], sizeof(r->summary[0]), fmt, ap);
	va_end(ap);
}

void lab_note(struct lab_result *r, const char *fmt, ...)
{
	if (r->nnotes >= 8)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], sizeof(r->notes[0]), fmt, ap);
	va_end(ap);
}

int lab_check(struct lab_result *r, int ok, const char *fmt, ...)
{
	r->nchecks++;
	if (ok)
		return 1;
	va_list ap;
	va_start(ap, fmt);
	char msg[sizeof(r->failure)];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "lab %s: CHECK FAILED: %s\n", r->id, msg);
	if (!r->failed)
		snprintf(r->failure, sizeof(r->failure), "%s", msg);
	r->failed = 1;
	return 0;
}

void lab_series_add(struct lab_series *s, double t, double v)
{
	if (s->n < LAB_MAX_SAMPLES) {
		s->t[s->n] = t;
		s->v[s->n] = v;
		s->n++;
	}
}

/* ------------------------------------------------------------ printing */

/* The live runs in one line: how many, and the ones left out and why. */
static void print_runs(FILE *f, const struct lab_result *r)
{
	unsigned most = 0, least = LAB_MAX_RUNS, bad = 0;
	double secs = 0;
	for (unsigned i = 0; i < r->nrows; i++) {
		if (!r->nruns[i])
			continue;
		most = r->nruns[i] > most ? r->nruns[i] : most;
		least = r->nruns[i] < least ? r->nruns[i] : least;
		secs = r->run[i][0].seconds;
		for (unsigned k = 0; k < r->nruns[i]; k++)
			bad += r->run[i][k].invalid != 0;
	}
	if (!most)
		return;
	if (least == most)
		fprintf(f, "   runs: %u of each configuration, interleaved, %.2f s each; ", most, secs);
	else
		fprintf(f, "   runs: %u-%u a configuration, interleaved, %.2f s each; ", least, most,
			secs);
	if (!bad) {
		fprintf(f, "none excluded (steal <= %.0f%%, other processes <= %.0f%% of the CPUs)\n",
			LAB_STEAL_MAX_PCT, LAB_OTHERS_MAX_PCT);
		return;
	}
	fprintf(f, "%u excluded:", bad);
	const char *sep = " ";
	for (unsigned i = 0; i < r->nrows; i++)
		for (unsigned k = 0; k < r->nruns[i]; k++)
			if (r->run[i][k].invalid) {
				fprintf(f, "%s%s run %u (%s)", sep, r->row_key[i], k + 1,
					r->run[i][k].why);
				sep = "; ";
			}
	fputc('\n', f);
}

void lab_print_table(FILE *f, const struct lab_result *r)
{
	unsigned w[LAB_MAX_COLS];
	for (unsigned c = 0; c < r->ncols; c++) {
		w[c] = (unsigned)strlen(r->col[c]);
		for (unsigned i = 0; i < r->nrows; i++)
			if (strlen(r->cell[i][c]) > w[c])
				w[c] = (unsigned)strlen(r->cell[i][c]);
	}
	fprintf(f, "\n== %s: %s\n", r->id, r->title);
	if (r->scale[0])
		fprintf(f, "   scale: %s\n", r->scale);
	for (unsigned c = 0; c < r->ncols; c++)
		fprintf(f, c ? "  %*s" : "%-*s", (int)w[c], r->col[c]);
	fputc('\n', f);
	for (unsigned i = 0; i < r->nrows; i++) {
		for (unsigned c = 0; c < r->ncols; c++)
			fprintf(f, c ? "  %*s" : "%-*s", (int)w[c], r->cell[i][c]);
		fputc('\n', f);
	}
	for (unsigned i = 0; i < r->nsummary; i++)
		fprintf(f, "   %s\n", r->summary[i]);
	print_runs(f, r);
	for (unsigned i = 0; i < r->nrows; i++)
		if (r->profile[i][0])
			fprintf(f, "   profile, %s:\n%s", r->cell[i][0], r->profile[i]);
	for (unsigned i = 0; i < r->nnotes; i++)
		fprintf(f, "   note: %s\n", r->notes[i]);
	fprintf(f, "   checks: %u, %s\n", r->nchecks, r->failed ? r->failure : "all held");
}

/* Row @i's runs as a JSON array. */
static void json_runs(FILE *f, const struct lab_result *r, unsigned i)
{
	fputs(",\"runs\":[", f);
	for (unsigned k = 0; k < r->nruns[i]; k++) {
		const struct lab_run *x = &r->run[i][k];
		fprintf(f, "%s{\"t\":%.3f,\"seconds\":%.3f,\"load1_before\":", k ? "," : "", x->t,
			x->seconds);
		lab_json_num(f, x->load1_before);
		fputs(",\"load1_after\":", f);
		lab_json_num(f, x->load1_after);
		fputs(",\"steal_pct\":", f);
		lab_json_num(f, x->steal_pct);
		fputs(",\"others_pct\":", f);
		lab_json_num(f, x->others_pct);
		fprintf(f, ",\"valid\":%s", x->invalid ? "false" : "true");
		if (x->invalid) {
			fputs(",\"why\":", f);
			lab_json_str(f, x->why);
		}
		fputc('}', f);
	}
	fputc(']', f);
}

void lab_print_json(FILE *f, const struct lab_result *const *rs, unsigned n,
		    const struct lab_opts *o)
{
	fputs("{\"machine\":", f);
	lab_json_str(f, lab_machine());
	fputs(",\"commit\":", f);
	lab_json_str(f, lab_commit());
	fprintf(f, ",\"seconds\":%g,\"runs\":%u,\"interval_ms\":%u", o->seconds, lab_runs(o),
		o->interval_ms);
	for (unsigned k = 0; k < n; k++) {
		const struct lab_result *r = rs[k];
		fprintf(f, ",\"%s\":{\"title\":", r->id);
		lab_json_str(f, r->title);
		fputs(",\"scale\":", f);
		lab_json_str(f, r->scale);
		fputs(",\"configs\":{", f);
		for (unsigned i = 0; i < r->nrows; i++) {
			fprintf(f, "%s\"%s\":{\"name\":", i ? "," : "", r->row_key[i]);
			lab_json_str(f, r->cell[i][0]);
			for (unsigned c = 1; c < r->ncols; c++) {
				if (isnan(r->val[i][c]) && !r->cell[i][c][0])
					continue;
				fprintf(f, ",\"%s\":", r->col_key[c]);
				if (!isnan(r->val[i][c]))
					fprintf(f, "%.6g", r->val[i][c]);
				else
					lab_json_str(f, r->cell[i][c]);
			}
			if (r->series[i].n) {
				fprintf(f, ",\"series\":{\"label\":");
				lab_json_str(f, r->series_label);
				fputs(",\"t\":[", f);
				for (unsigned s = 0; s < r->series[i].n; s++)
					fprintf(f, "%s%.3f", s ? "," : "", r->series[i].t[s]);
				fputs("],\"v\":[", f);
				for (unsigned s = 0; s < r->series[i].n; s++)
					fprintf(f, "%s%.6g", s ? "," : "", r->series[i].v[s]);
				fputs("]}", f);
			}
			if (r->profile[i][0]) {
				fputs(",\"profile\":", f);
				lab_json_str(f, r->profile[i]);
			}
			if (r->nruns[i])
				json_runs(f, r, i);
			fputc('}', f);
		}
		fputc('}', f);
		if (r->claims.n) {
			fputs(",\"claims\":", f);
			lab_claims_print(f, &r->claims, 1);
		}
		fputs(",\"summary\":[", f);
		for (unsigned i = 0; i < r->nsummary; i++) {
			if (i)
				fputc(',', f);
			lab_json_str(f, r->summary[i]);
		}
		fputs("],\"notes\":[", f);
		for (unsigned i = 0; i < r->nnotes; i++) {
			if (i)
				fputc(',', f);
			lab_json_str(f, r->notes[i]);
		}
		fprintf(f, "],\"checks\":%u,\"failed\":%s", r->nchecks, r->failed ? "true" : "false");
		if (r->failed) {
			fputs(",\"failure\":", f);
			lab_json_str(f, r->failure);
		}
		fputc('}', f);
	}
	fputs("}\n", f);
}

/* ------------------------------------------------------------ machine */

const char *lab_machine(void)
{
	static char m[200];
	if (m[0])
		return m;
	char model[128] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (f) {
		char line[512];
		while (fgets(line, sizeof(line), f)) {
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');
				if (p) {
					p++;
					while (*p == ' ')
						p++;
					p[strcspn(p, "\n")] = 0;
					snprintf(model, sizeof(model), "%s", p);
				}
				break;
			}
		}
		fclose(f);
	}
	snprintf(m, sizeof(m), "%s, %u CPUs", model, lab_online_cpus());
	return m;
}

#ifndef PW_LAB_SOURCE_DIR
#define PW_LAB_SOURCE_DIR "."
#endif

const char *lab_commit(void)
{
	static char c[64];
	if (c[0])
		return c;
	snprintf(c, sizeof(c), "unknown");
	FILE *p = popen("git -C '" PW_LAB_SOURCE_DIR "' describe --always --dirty 2>/dev/null", "r");
	if (p) {
		char line[64];
		if (fgets(line, sizeof(line), p)) {
			line[strcspn(line, "\n")] = 0;
			if (line[0])
				snprintf(c, sizeof(c), "%s", line);
		}
		pclose(p);
	}
	return c;
}

unsigned lab_online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}

/* ------------------------------------------------------------ sampler */

static double mono_s(void)
{
	return (double)now_ns() / 1e9;
}

void lab_sample(struct pw_runtime *rt, struct lab_sample *s)
{
	memset(s, 0, sizeof(*s));
	s->t = mono_s();
	struct rusage ru;
	if (!getrusage(RUSAGE_SELF, &ru)) {
		s->user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
		s->sys_s = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		s->ctxsw = (uint64_t)ru.ru_nvcsw + (uint64_t)ru.ru_nivcsw;
	}
	if (!rt)
		return;
	for (unsigned c = 0; c < pw_runtime_ncpus(rt); c++) {
		struct pw_cpu_stats st;
		if (pw_stats_read(rt, c, &st))
			continue;
		s->wakeups += st.wakeups;
		s->kicks += st.kicks_received;
		s->timers += st.timers_expired;
		s->pushed += st.pushed;
		s->pulled += st.pulled;
		s->remote_arms += st.remote_arms;
		s->armed += st.armed;
		s->lock_waits += st.lock_waits;
		s->lock_wait_ns += st.lock_wait_ns;
		s->busy_ns += st.busy_ns;
		s->idle_ns += st.idle_ns;
	}
}

void lab_rates(const struct lab_sample *a, const struct lab_sample *b, struct lab_rates *out)
{
	memset(out, 0, sizeof(*out));
	double dt = b->t - a->t;
	if (dt <= 0)
		return;
	double cpu = dt * lab_online_cpus();
	out->in_s = (double)((b->wakeups - a->wakeups) + (b->kicks - a->kicks)) / dt;
	out->cs_s = (double)(b->ctxsw - a->ctxsw) / dt;
	out->us = 100.0 * (b->user_s - a->user_s) / cpu;
	out->sy = 100.0 * (b->sys_s - a->sys_s) / cpu;
	out->id = 100.0 - out->us - out->sy;
	if (out->id < 0)
		out->id = 0;
	out->timers_s = (double)(b->timers - a->timers) / dt;
	out->pushed_s = (double)(b->pushed - a->pushed) / dt;
	out->pulled_s = (double)(b->pulled - a->pulled) / dt;
	out->remote_s = (double)(b->remote_arms - a->remote_arms) / dt;
	out->armed_s = (double)(b->armed - a->armed) / dt;
	out->lock_wait_share = (double)(b->lock_wait_ns - a->lock_wait_ns) / 1e9 / cpu;
}

void lab_sleep_ms(unsigned ms)
{
	struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* ------------------------------------------------------------ live runs */

unsigned lab_runs(const struct lab_opts *o)
{
	unsigned n = o->runs ? o->runs : o->smoke ? 2 : 5;
	return n > LAB_MAX_RUNS ? LAB_MAX_RUNS : n;
}

double lab_run_seconds(const struct lab_opts *o, double min_s)
{
	double s = o->seconds / lab_runs(o);
	return s < min_s ? min_s : s;
}

/* The 1-minute load average, NAN if unknown. */
static double load1(void)
{
	double v = NAN;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &v) != 1)
			v = NAN;
		fclose(f);
	}
	return v;
}

/* /proc/stat's "cpu" line: busy = user + nice + system (what processes ran;
 * irq and softirq are left out: much of them is this process's own wake-ups
 * and timers, which getrusage() does not count), steal, and the total of
 * user..steal; in USER_HZ ticks, every CPU.  Return: 1 if read. */
static int stat_ticks(uint64_t *busy, uint64_t *steal, uint64_t *total)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return 0;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		       &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 7)
		return 0;
	*busy = v[0] + v[1] + v[2];
	*steal = n == 8 ? v[7] : 0;
	*total = 0;
	for (int i = 0; i < n; i++)
		*total += v[i];
	return 1;
}

static double self_cpu_s(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru))
		return NAN;
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static double first_run_t = -1;

void lab_run_begin(struct lab_run_mark *m)
{
	memset(m, 0, sizeof(*m));
	m->load1 = load1();
	m->stat_ok = stat_ticks(&m->busy, &m->steal, &m->total);
	m->self_s = self_cpu_s();
	m->t = mono_s();
	if (first_run_t < 0)
		first_run_t = m->t;
}

/* Append @fmt's reason to @run's. */
static void add_why(struct lab_run *run, const char *fmt, va_list ap)
{
	size_t n = strlen(run->why);
	if (n && n + 2 < sizeof(run->why)) {
		memcpy(run->why + n, "; ", 3);
		n += 2;
	}
	if (n < sizeof(run->why))
		vsnprintf(run->why + n, sizeof(run->why) - n, fmt, ap);
}

static void invalidate(struct lab_run *run, unsigned bit, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void invalidate(struct lab_run *run, unsigned bit, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	run->invalid |= bit;
	add_why(run, fmt, ap);
	va_end(ap);
}

struct lab_run *lab_run_end(struct lab_result *r, unsigned row, const struct lab_run_mark *m,
			    const char *what)
{
	double t = mono_s(), self = self_cpu_s();
	uint64_t busy = 0, steal = 0, total = 0;
	int ok = m->stat_ok && stat_ticks(&busy, &steal, &total);
	static struct lab_run spare;
	struct lab_run *run = &spare;
	if (row < LAB_MAX_ROWS && r->nruns[row] < LAB_MAX_RUNS)
		run = &r->run[row][r->nruns[row]++];
	memset(run, 0, sizeof(*run));
	run->t = m->t - first_run_t;
	run->seconds = t - m->t;
	run->load1_before = m->load1;
	run->load1_after = load1();
	run->steal_pct = run->others_pct = NAN;
	long hz = sysconf(_SC_CLK_TCK);
	if (ok && total > m->total && hz > 0) {
		double all = (double)(total - m->total);
		run->steal_pct = 100.0 * (double)(steal - m->steal) / all;
		double others = (double)(busy - m->busy) / (double)hz - (self - m->self_s);
		run->others_pct = 100.0 * (others > 0 ? others : 0) / (all / (double)hz);
	}
	if (run->steal_pct > LAB_STEAL_MAX_PCT)
		invalidate(run, LAB_RUN_LOADED, "steal %.1f%% of the CPUs (> %.0f%%)", run->steal_pct,
			   LAB_STEAL_MAX_PCT);
	if (run->others_pct > LAB_OTHERS_MAX_PCT)
		invalidate(run, LAB_RUN_LOADED, "other processes used %.0f%% of the CPUs (> %.0f%%)",
			   run->others_pct, LAB_OTHERS_MAX_PCT);
	lab_progress(r, "%s: %.2f s, load %.2f -> %.2f, steal %.1f%%, others %.0f%% of the CPUs: %s%s",
		     what, run->seconds, run->load1_before, run->load1_after, run->steal_pct,
		     run->others_pct, run->invalid ? "INVALID, " : "valid", run->why);
	return run;
}

void lab_run_invalidate(struct lab_result *r, struct lab_run *run, unsigned why_bit,
			const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	run->invalid |= why_bit;
	size_t n0 = strlen(run->why);
	add_why(run, fmt, ap);
	va_end(ap);
	lab_progress(r, "  that run is INVALID for the claims: %s", run->why + (n0 ? n0 + 2 : 0));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double lab_median(const double *v, const struct lab_run *runs, unsigned n, double *lo, double *hi)
{
	double w[LAB_MAX_RUNS];
	unsigned m = 0;
	for (int all = 0; all < 2 && !m; all++)
		for (unsigned i = 0; i < n && i < LAB_MAX_RUNS; i++)
			if (!isnan(v[i]) && (all || !runs || !runs[i].invalid))
				w[m++] = v[i];
	if (lo)
		*lo = NAN;
	if (hi)
		*hi = NAN;
	if (!m)
		return NAN;
	qsort(w, m, sizeof(w[0]), cmp_double);
	if (lo)
		*lo = w[0];
	if (hi)
		*hi = w[m - 1];
	return m % 2 ? w[m / 2] : (w[m / 2 - 1] + w[m / 2]) / 2;
}
