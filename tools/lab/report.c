/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's files under --out DIR:
 *   <seed>.csv    the raw interval samples: configuration, t (s), value
 *   <seed>.dat    the same as gnuplot data blocks, <seed>.gp the script,
 *   <seed>.svg    the chart (when gnuplot is installed; skipped otherwise)
 *   results.json  what --json prints
 *   report.md     one page: the experiments side by side with the seeds'
 *                 figures, the tables, profiles, notes, the commit and
 *                 machine, the charts as images
 *   report.html   the same page with the SVG charts embedded inline
 * Threads: main only.  No locks.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "lab.h"

static int mkdir_p(const char *dir)
{
	char tmp[1024];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0777) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, 0777) && errno != EEXIST)
		return -errno;
	return 0;
}

static FILE *open_in(const char *dir, const char *name, const char *ext)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/%s%s", dir, name, ext);
	return fopen(path, "w");
}

static int have_gnuplot(void)
{
	static int known = -1;
	if (known < 0)
		known = system("command -v gnuplot >/dev/null 2>&1") == 0;
	return known;
}

static int write_samples(const char *dir, const struct lab_result *r)
{
	FILE *csv = open_in(dir, r->id, ".csv"), *dat = open_in(dir, r->id, ".dat");
	if (!csv || !dat) {
		if (csv)
			fclose(csv);
		if (dat)
			fclose(dat);
		return -errno;
	}
	fprintf(csv, "config,t_s,value\n");
	unsigned blocks = 0;
	for (unsigned i = 0; i < r->nrows; i++) {
		const struct lab_series *s = &r->series[i];
		if (!s->n)
			continue;
		fprintf(dat, "%s# %s\n", blocks++ ? "\n\n" : "", r->cell[i][0]);
		for (unsigned k = 0; k < s->n; k++) {
			fprintf(csv, "\"%s\",%.3f,%.6g\n", r->cell[i][0], s->t[k], s->v[k]);
			fprintf(dat, "%.3f %.6g\n", s->t[k], s->v[k]);
		}
	}
	fclose(csv);
	fclose(dat);
	if (!blocks || !have_gnuplot())
		return 0;
	FILE *gp = open_in(dir, r->id, ".gp");
	if (!gp)
		return -errno;
	fprintf(gp, "set terminal svg size 760,340 dynamic noenhanced font 'sans,12'\n");
	fprintf(gp, "set output '%s/%s.svg'\n", dir, r->id);
	fprintf(gp, "set title '%s: %s per interval'\n", r->id, r->series_label);
	fprintf(gp, "set xlabel 'seconds into the measured run'\nset ylabel '%s'\n", r->series_label);
	fprintf(gp, "set key outside bottom center horizontal\nset grid\nset yrange [0:*]\n");
	fprintf(gp, "plot ");
	unsigned b = 0;
	for (unsigned i = 0; i < r->nrows; i++) {
		if (!r->series[i].n)
			continue;
		fprintf(gp, "%s'%s/%s.dat' index %u with linespoints lw 2 title '%s'", b ? ", " : "",
			dir, r->id, b, r->cell[i][0]);
		b++;
	}
	fprintf(gp, "\n");
	fclose(gp);
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "gnuplot '%s/%s.gp' 2>/dev/null", dir, r->id);
	if (system(cmd) != 0)
		fprintf(stderr, "pinwheel-lab: gnuplot failed for %s (chart skipped)\n", r->id);
	return 0;
}

/* ------------------------------------------------------------ markdown */

static void md_table(FILE *f, const struct lab_result *r)
{
	for (unsigned c = 0; c < r->ncols; c++)
		fprintf(f, "| %s ", r->col[c]);
	fprintf(f, "|\n");
	for (unsigned c = 0; c < r->ncols; c++)
		fprintf(f, c ? "|---:" : "|---");
	fprintf(f, "|\n");
	for (unsigned i = 0; i < r->nrows; i++) {
		for (unsigned c = 0; c < r->ncols; c++)
			fprintf(f, "| %s ", r->cell[i][c]);
		fprintf(f, "|\n");
	}
}

static void when(char *buf, size_t len)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M UTC", &tm);
}

static int chart_exists(const char *dir, const char *id)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/%s.svg", dir, id);
	struct stat st;
	return !stat(path, &st) && st.st_size > 0;
}

static const char intro[] =
	"Each experiment re-runs one of the three kernel mailing-list posts this project "
	"comes from (`../shared/seeds/`) on pinwheel: before and after the post's fix, "
	"measured the way the post measured it, with the post's own figures beside ours. "
	"The machine is a small VM: where an effect needs many CPUs, the notes say so "
	"and point at the trend instead.";

static int write_md(const char *dir, const struct lab_result *const *rs, unsigned n,
		    const struct lab_opts *o)
{
	FILE *f = open_in(dir, "report", ".md");
	if (!f)
		return -errno;
	char ts[64];
	when(ts, sizeof(ts));
	fprintf(f, "# pinwheel-lab: the seed experiments\n\n%s\n\n", intro);
	fprintf(f, "- commit `%s`, %s\n- machine: %s\n- %.1f s per configuration, samples every "
		   "%u ms%s\n\n", lab_commit(), ts, lab_machine(), o->seconds, o->interval_ms,
		o->smoke ? " (smoke sizes)" : "");
	fprintf(f, "## Side by side\n\n| experiment | the seed's figure and ours |\n|---|---|\n");
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < rs[k]->nsummary; i++)
			fprintf(f, "| %s | %s |\n", i ? "" : rs[k]->id, rs[k]->summary[i]);
	fprintf(f, "\n");
	for (unsigned k = 0; k < n; k++) {
		const struct lab_result *r = rs[k];
		fprintf(f, "## %s: %s\n\nScale: %s\n\n", r->id, r->title, r->scale);
		md_table(f, r);
		fprintf(f, "\n");
		for (unsigned i = 0; i < r->nsummary; i++)
			fprintf(f, "- %s\n", r->summary[i]);
		if (chart_exists(dir, r->id))
			fprintf(f, "\n![%s](%s.svg)\n", r->series_label, r->id);
		for (unsigned i = 0; i < r->nrows; i++)
			if (r->profile[i][0])
				fprintf(f, "\nProfile, %s:\n\n```\n%s```\n", r->cell[i][0], r->profile[i]);
		if (r->nnotes)
			fprintf(f, "\nReading:\n\n");
		for (unsigned i = 0; i < r->nnotes; i++)
			fprintf(f, "- %s\n", r->notes[i]);
		fprintf(f, "\nInvariants checked: %u, %s.\n\n", r->nchecks,
			r->failed ? r->failure : "all held");
	}
	fprintf(f, "Reproduce: `pinwheel-lab report --out %s` (or `make report`); raw samples in "
		   "`<seed>.csv`, numbers in `results.json`.\n", dir);
	fclose(f);
	return 0;
}

/* ------------------------------------------------------------ html */

static void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

/* @s with `code` spans, as the Markdown page has them */
static void html_inline(FILE *f, const char *s)
{
	int code = 0;
	char one[2] = {0, 0};
	for (; *s; s++) {
		if (*s == '`') {
			fputs(code ? "</code>" : "<code>", f);
			code = !code;
			continue;
		}
		one[0] = *s;
		html_text(f, one);
	}
	if (code)
		fputs("</code>", f);
}

static void embed_svg(FILE *f, const char *dir, const char *id)
{
	char path[1200];
	snprintf(path, sizeof(path), "%s/%s.svg", dir, id);
	FILE *s = fopen(path, "r");
	if (!s)
		return;
	char line[4096];
	int body = 0;
	fputs("<figure>", f);
	while (fgets(line, sizeof(line), s)) {
		if (!body && strstr(line, "<svg"))
			body = 1;
		if (body)
			fputs(line, f);
	}
	fputs("</figure>\n", f);
	fclose(s);
}

static int write_html(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o)
{
	FILE *f = open_in(dir, "report", ".html");
	if (!f)
		return -errno;
	char ts[64];
	when(ts, sizeof(ts));
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>pinwheel-lab: the seed experiments</title>\n<style>\n"
	      "body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;"
	      "color:#222;line-height:1.45}\n"
	      "table{border-collapse:collapse;margin:.8em 0;font-size:.92em}\n"
	      "th,td{border:1px solid #ccc;padding:.25em .6em}td{text-align:right}"
	      "td:first-child,th:first-child{text-align:left}\n"
	      "th{background:#f0f0f0}tr:nth-child(even) td{background:#fafafa}\n"
	      "pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.85em}\n"
	      "code{background:#f2f2f2;padding:0 .2em}\n"
	      ".meta{color:#555}.ok{color:#186a1a}.bad{color:#a00}\n"
	      "figure{margin:1em 0}figure svg{max-width:100%;height:auto}\n"
	      "</style></head><body>\n", f);
	fputs("<h1>pinwheel-lab: the seed experiments</h1>\n<p>", f);
	html_inline(f, intro);
	fputs("</p>\n<p class=\"meta\">commit <code>", f);
	html_text(f, lab_commit());
	fprintf(f, "</code>, %s<br>machine: ", ts);
	html_text(f, lab_machine());
	fprintf(f, "<br>%.1f s per configuration, samples every %u ms%s</p>\n", o->seconds,
		o->interval_ms, o->smoke ? " (smoke sizes)" : "");
	fputs("<h2>Side by side</h2>\n<table><tr><th>experiment</th><th>the seed's figure and "
	      "ours</th></tr>\n", f);
	for (unsigned k = 0; k < n; k++)
		for (unsigned i = 0; i < rs[k]->nsummary; i++) {
			fprintf(f, "<tr><td>%s</td><td style=\"text-align:left\">", i ? "" : rs[k]->id);
			html_inline(f, rs[k]->summary[i]);
			fputs("</td></tr>\n", f);
		}
	fputs("</table>\n", f);
	for (unsigned k = 0; k < n; k++) {
		const struct lab_result *r = rs[k];
		fprintf(f, "<h2>%s: ", r->id);
		html_text(f, r->title);
		fputs("</h2>\n<p class=\"meta\">Scale: ", f);
		html_inline(f, r->scale);
		fputs("</p>\n<table><tr>", f);
		for (unsigned c = 0; c < r->ncols; c++) {
			fputs("<th>", f);
			html_text(f, r->col[c]);
			fputs("</th>", f);
		}
		fputs("</tr>\n", f);
		for (unsigned i = 0; i < r->nrows; i++) {
			fputs("<tr>", f);
			for (unsigned c = 0; c < r->ncols; c++) {
				fputs("<td>", f);
				html_text(f, r->cell[i][c]);
				fputs("</td>", f);
			}
			fputs("</tr>\n", f);
		}
		fputs("</table>\n<ul>\n", f);
		for (unsigned i = 0; i < r->nsummary; i++) {
			fputs("<li>", f);
			html_inline(f, r->summary[i]);
			fputs("</li>\n", f);
		}
		fputs("</ul>\n", f);
		embed_svg(f, dir, r->id);
		for (unsigned i = 0; i < r->nrows; i++)
			if (r->profile[i][0]) {
				fputs("<p>Profile, ", f);
				html_text(f, r->cell[i][0]);
				fputs(":</p>\n<pre>", f);
				html_text(f, r->profile[i]);
				fputs("</pre>\n", f);
			}
		if (r->nnotes) {
			fputs("<p>Reading:</p>\n<ul>\n", f);
			for (unsigned i = 0; i < r->nnotes; i++) {
				fputs("<li>", f);
				html_inline(f, r->notes[i]);
				fputs("</li>\n", f);
			}
			fputs("</ul>\n", f);
		}
		fprintf(f, "<p class=\"%s\">Invariants checked: %u, ", r->failed ? "bad" : "ok",
			r->nchecks);
		html_text(f, r->failed ? r->failure : "all held");
		fputs(".</p>\n", f);
	}
	fputs("<p class=\"meta\">Reproduce: <code>pinwheel-lab report --out ", f);
	html_text(f, dir);
	fputs("</code> (or <code>make report</code>); raw samples in <code>&lt;seed&gt;.csv</code>, "
	      "numbers in <code>results.json</code>.</p>\n</body></html>\n", f);
	fclose(f);
	return 0;
}

int lab_write_outputs(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o)
{
	int err = mkdir_p(dir);
	if (err)
		return err;
	for (unsigned k = 0; k < n; k++)
		if ((err = write_samples(dir, rs[k])))
			return err;
	FILE *j = open_in(dir, "results", ".json");
	if (!j)
		return -errno;
	lab_print_json(j, rs, n, o);
	fclose(j);
	if ((err = write_md(dir, rs, n, o)))
		return err;
	return write_html(dir, rs, n, o);
}
