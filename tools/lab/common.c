/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's shared helpers: progress lines, the result table and its
 * text/JSON printers, the machine and commit, and the OS-side sampler that
 * measures what vmstat showed in the seeds (in, cs, us/sy/id).
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
	for (unsigned i = 0; i < r->nrows; i++)
		if (r->profile[i][0])
			fprintf(f, "   profile, %s:\n%s", r->cell[i][0], r->profile[i]);
	for (unsigned i = 0; i < r->nnotes; i++)
		fprintf(f, "   note: %s\n", r->notes[i]);
	fprintf(f, "   checks: %u, %s\n", r->nchecks, r->failed ? r->failure : "all held");
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch == '\n')
			fputs("\\n", f);
		else if (ch == '\t')
			fputs("\\t", f);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

void lab_print_json(FILE *f, const struct lab_result *const *rs, unsigned n,
		    const struct lab_opts *o)
{
	fputs("{\"machine\":", f);
	json_str(f, lab_machine());
	fputs(",\"commit\":", f);
	json_str(f, lab_commit());
	fprintf(f, ",\"seconds\":%g,\"interval_ms\":%u", o->seconds, o->interval_ms);
	for (unsigned k = 0; k < n; k++) {
		const struct lab_result *r = rs[k];
		fprintf(f, ",\"%s\":{\"title\":", r->id);
		json_str(f, r->title);
		fputs(",\"scale\":", f);
		json_str(f, r->scale);
		fputs(",\"configs\":{", f);
		for (unsigned i = 0; i < r->nrows; i++) {
			fprintf(f, "%s\"%s\":{\"name\":", i ? "," : "", r->row_key[i]);
			json_str(f, r->cell[i][0]);
			for (unsigned c = 1; c < r->ncols; c++) {
				if (isnan(r->val[i][c]) && !r->cell[i][c][0])
					continue;
				fprintf(f, ",\"%s\":", r->col_key[c]);
				if (!isnan(r->val[i][c]))
					fprintf(f, "%.6g", r->val[i][c]);
				else
					json_str(f, r->cell[i][c]);
			}
			if (r->series[i].n) {
				fprintf(f, ",\"series\":{\"label\":");
				json_str(f, r->series_label);
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
				json_str(f, r->profile[i]);
			}
			fputc('}', f);
		}
		fputs("},\"summary\":[", f);
		for (unsigned i = 0; i < r->nsummary; i++) {
			if (i)
				fputc(',', f);
			json_str(f, r->summary[i]);
		}
		fputs("],\"notes\":[", f);
		for (unsigned i = 0; i < r->nnotes; i++) {
			if (i)
				fputc(',', f);
			json_str(f, r->notes[i]);
		}
		fprintf(f, "],\"checks\":%u,\"failed\":%s", r->nchecks, r->failed ? "true" : "false");
		if (r->failed) {
			fputs(",\"failure\":", f);
			json_str(f, r->failure);
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
