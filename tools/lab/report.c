/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab's files under --out DIR:
 *   <seed>.csv    the raw interval samples: configuration, t (s), value
 *   <seed>.dat    the same as gnuplot data blocks, <seed>.gp the script,
 *   <seed>.svg    the chart (when gnuplot is installed; skipped otherwise)
 *   model_<seed>_<what>.csv, .dat, .gp, .svg
 *                 the model's charts (lab_model_charts(), model_print.c):
 *                 the numbers as CSV, the gnuplot data and script, the chart
 *   results.json  what --json prints
 *   report.md     one page: first each seed's claims table (the verdicts:
 *                 the seed's claim, the model, the live run's interval),
 *                 then the model's charts, then the experiments side by
 *                 side with the seeds' figures, the tables, profiles, notes,
 *                 the commit and machine, the live charts as images
 *   report.html   the same page with the SVG charts embedded inline
 * Without gnuplot the pages say so and give each model chart's numbers as
 * a table instead.
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


/* ------------------------------------------------------------ the model's charts */

#define MAX_MCHARTS 8

/* @s inside a gnuplot single-quoted string ('' is a quote) */
static void gp_str(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

static double chart_max(const struct lab_model_chart *c)
{
	double max = 0;
	for (unsigned x = 0; x < c->nx; x++) {
		double sum = 0;
		for (unsigned k = 0; k < c->ns; k++) {
			if (isnan(c->v[x][k]))
				continue;
			sum = c->style == LAB_MCHART_STACKED ? sum + c->v[x][k] : c->v[x][k];
			if (sum > max)
				max = sum;
		}
	}
	return max;
}

/* Would the x categories' names run into each other? */
static int long_names(const struct lab_model_chart *c)
{
	size_t len = 0;
	for (unsigned x = 0; x < c->nx; x++)
		len = strlen(c->xname[x]) > len ? strlen(c->xname[x]) : len;
	return c->nx * len > 90;
}

/* <name>.csv, .dat, .gp and, with gnuplot, .svg.  Return: 0 or -errno. */
static int write_mchart(const char *dir, const struct lab_model_chart *c)
{
	FILE *csv = open_in(dir, c->name, ".csv"), *dat = open_in(dir, c->name, ".dat");
	if (!csv || !dat) {
		int err = -errno;
		if (csv)
			fclose(csv);
		if (dat)
			fclose(dat);
		return err;
	}
	fprintf(csv, "%s", c->xkey);
	for (unsigned k = 0; k < c->ns; k++)
		fprintf(csv, ",%s", c->skey[k]);
	fprintf(csv, "\n");
	fprintf(dat, "# %s", c->xkey);
	for (unsigned k = 0; k < c->ns; k++)
		fprintf(dat, " %s", c->skey[k]);
	fprintf(dat, "\n");
	for (unsigned x = 0; x < c->nx; x++) {
		fprintf(csv, "%s", c->xname[x]);
		if (c->style == LAB_MCHART_LINES)
			fprintf(dat, "%g", c->x[x]);
		else
			fprintf(dat, "\"%s\"", c->xname[x]);
		for (unsigned k = 0; k < c->ns; k++) {
			if (isnan(c->v[x][k])) {
				fprintf(csv, ",");
				fprintf(dat, " NaN");
			} else {
				fprintf(csv, fabs(c->v[x][k]) >= 1e5 ? ",%.0f" : ",%.6g", c->v[x][k]);
				fprintf(dat, " %.6g", c->v[x][k]);
			}
		}
		fprintf(csv, "\n");
		fprintf(dat, "\n");
	}
	fclose(csv);
	fclose(dat);
	FILE *gp = open_in(dir, c->name, ".gp");
	if (!gp)
		return -errno;
	char path[1200];
	fprintf(gp, "set terminal svg size 820,400 dynamic noenhanced font 'sans,12'\nset output ");
	snprintf(path, sizeof(path), "%s/%s.svg", dir, c->name);
	gp_str(gp, path);
	fprintf(gp, "\nset title ");
	gp_str(gp, c->title);
	fprintf(gp, "\nset xlabel ");
	gp_str(gp, c->xlabel);
	fprintf(gp, "\nset ylabel ");
	gp_str(gp, c->ylabel);
	fprintf(gp, "\nset grid ytics\nset yrange [0:*]\nset key outside right top vertical "
		    "Left reverse\n");
	if (chart_max(c) >= 1e5)
		fprintf(gp, "set format y '%%.1s%%c'\n");
	snprintf(path, sizeof(path), "%s/%s.dat", dir, c->name);
	if (c->style == LAB_MCHART_LINES) {
		fprintf(gp, "set xtics (");
		for (unsigned x = 0; x < c->nx; x++)
			fprintf(gp, "%s%g", x ? ", " : "", c->x[x]);
		fprintf(gp, ")\nset offsets graph 0.03, graph 0.03, 0, 0\nplot ");
		for (unsigned k = 0; k < c->ns; k++) {
			fprintf(gp, "%s", k ? ", \\\n     " : "");
			gp_str(gp, path);
			/* a point type and dash each: lines that coincide still show */
			static const unsigned pt[] = {7, 5, 9, 11, 13, 15, 4, 6, 8, 10};
			fprintf(gp, " using 1:%u with linespoints lw 2 dt %u pt %u ps %.1f title ", k + 2,
				k % 5 + 1, pt[k % 10], 1.3 - 0.1 * (k % 5));
			gp_str(gp, c->sname[k]);
		}
	} else {
		fprintf(gp, "set style data histograms\nset style histogram %s\n"
			    "set style fill solid 0.85 border rgb '#444444'\nset boxwidth %s\n"
			    "set xtics nomirror scale 0%s\n",
			c->style == LAB_MCHART_STACKED ? "rowstacked" : "clustered gap 1",
			c->style == LAB_MCHART_STACKED ? "0.6" : "0.9",
			long_names(c) ? " rotate by -20 left" : "");
		if (c->ns == 1)
			fprintf(gp, "unset key\n");
		fprintf(gp, "plot ");
		for (unsigned k = 0; k < c->ns; k++) {
			fprintf(gp, "%s", k ? ", \\\n     " : "");
			gp_str(gp, path);
			fprintf(gp, " using %u%s title ", k + 2, k ? "" : ":xtic(1)");
			gp_str(gp, c->sname[k]);
		}
	}
	fprintf(gp, "\n");
	fclose(gp);
	if (!have_gnuplot())
		return 0;
	char cmd[1400];
	snprintf(cmd, sizeof(cmd), "gnuplot '%s/%s.gp' 2>/dev/null", dir, c->name);
	if (system(cmd) != 0)
		fprintf(stderr, "pinwheel-lab: gnuplot failed for %s (chart skipped)\n", c->name);
	return 0;
}

/* A chart's figure, as text: "12.3k", "0.25" */
static void fmt_val(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (fabs(v) >= 100)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* ------------------------------------------------------------ the claims (verdicts) */

/* The claims table as `pinwheel-lab SEED` prints it (lab_claims_print(),
 * verdict.c), malloc'd; NULL when out of memory. */
static char *claims_text(const struct lab_claims *cl)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	lab_claims_print(m, cl, 0);
	if (fclose(m)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static const char verdicts_intro[] =
	"Each seed's claims, as `pinwheel-lab SEED` prints them: the seed's claim, what the "
	"deterministic model gives (the same on every machine), the live run's ratio with its "
	"95% bootstrap interval over interleaved runs on this machine, and the verdict "
	"(docs/lab.md, \"The live run\"). The charts and each experiment's details follow.";

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

static void md_claims(FILE *f, const struct lab_result *r)
{
	fprintf(f, "### %s: %s\n\n", r->id, r->title);
	char *t = claims_text(&r->claims);
	if (!t) {
		fprintf(f, "(the claims table: out of memory)\n\n");
		return;
	}
	int table = 0;
	for (char *line = t, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == '|') {
			fprintf(f, "%s\n", line);
			table = 1;
			continue;
		}
		if (table)
			fputc('\n', f);
		table = 0;
		fprintf(f, "- %s\n", line);
	}
	fputc('\n', f);
	free(t);
}

static void md_chart_table(FILE *f, const struct lab_model_chart *c)
{
	fprintf(f, "| %s ", c->xlabel);
	for (unsigned k = 0; k < c->ns; k++)
		fprintf(f, "| %s ", c->sname[k]);
	fprintf(f, "|\n|---");
	for (unsigned k = 0; k < c->ns; k++)
		fprintf(f, "|---:");
	fprintf(f, "|\n");
	for (unsigned x = 0; x < c->nx; x++) {
		fprintf(f, "| %s ", c->xname[x]);
		for (unsigned k = 0; k < c->ns; k++) {
			char v[32];
			fmt_val(v, sizeof(v), c->v[x][k]);
			fprintf(f, "| %s ", v);
		}
		fprintf(f, "|\n");
	}
	fprintf(f, "\n");
}

static const char no_gnuplot[] =
	"gnuplot is not installed here, so the charts were not drawn: each chart's numbers are "
	"in the table in its place, and in its CSV.";

static void md_charts(FILE *f, const char *dir, const struct lab_model_chart *cs, unsigned nc)
{
	if (!nc)
		return;
	fprintf(f, "## Charts: the model\n\n");
	if (!have_gnuplot())
		fprintf(f, "%s\n\n", no_gnuplot);
	for (unsigned i = 0; i < nc; i++) {
		const struct lab_model_chart *c = &cs[i];
		fprintf(f, "### %s\n\n%s\n\n", c->title, c->caption);
		if (chart_exists(dir, c->name))
			fprintf(f, "![%s](%s.svg)\n\n", c->title, c->name);
		else
			md_chart_table(f, c);
		fprintf(f, "Numbers: `%s.csv`.\n\n", c->name);
	}
}

static const char intro[] =
	"Each experiment re-runs one of the three kernel mailing-list posts this project "
	"comes from (`../shared/seeds/`) on pinwheel: before and after the post's fix, "
	"measured the way the post measured it, with the post's own figures beside ours. "
	"The machine is a small VM: where an effect needs many CPUs, the notes say so "
	"and point at the trend instead.";

static int write_md(const char *dir, const struct lab_result *const *rs, unsigned n,
		    const struct lab_opts *o, const struct lab_model_chart *cs, unsigned nc)
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
	fprintf(f, "## The verdicts\n\n%s\n\n", verdicts_intro);
	for (unsigned k = 0; k < n; k++)
		md_claims(f, rs[k]);
	md_charts(f, dir, cs, nc);
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
		   "`<seed>.csv`, the model charts' numbers in `model_*.csv`, numbers in "
		   "`results.json`.\n", dir);
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

/* A verdict's colour: ok where every half that ran reproduced it, bad
 * where one did not, warn otherwise (direction only, inconclusive, not
 * run). */
static const char *verdict_class(const char *v)
{
	if (strstr(v, "not reproduced"))
		return "bad";
	if (!strncmp(v, "reproduced", 10) || !strcmp(v, "model: reproduced; live: not run"))
		return "ok";
	return "warn";
}

static void html_claims(FILE *f, const struct lab_result *r)
{
	fprintf(f, "<h3>%s: ", r->id);
	html_text(f, r->title);
	fputs("</h3>\n", f);
	char *t = claims_text(&r->claims);
	if (!t) {
		fputs("<p class=\"bad\">(the claims table: out of memory)</p>\n", f);
		return;
	}
	int table = 0, list = 0;
	for (char *line = t, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == '|') {
			if (line[1] == '-')
				continue; /* |---|---| */
			fputs(table ? "<tr>" : "<table class=\"claims\"><tr>", f);
			/* the cells: between the pipes (verdict.c writes none inside one) */
			char *cells[8];
			unsigned nc = 0;
			for (char *p = line + 1, *q; nc < 8 && (q = strchr(p, '|')); p = q + 1) {
				*q = 0;
				while (*p == ' ')
					p++;
				for (char *e = q; e > p && e[-1] == ' ';)
					*--e = 0;
				cells[nc++] = p;
			}
			for (unsigned i = 0; i < nc; i++) {
				if (!table)
					fputs("<th>", f);
				else if (i + 1 == nc)
					fprintf(f, "<td class=\"%s\">", verdict_class(cells[i]));
				else
					fputs("<td>", f);
				html_inline(f, cells[i]);
				fputs(table ? "</td>" : "</th>", f);
			}
			fputs("</tr>\n", f);
			table = 1;
			continue;
		}
		if (!list)
			fputs(table ? "</table>\n<ul class=\"mech\">\n" : "<ul class=\"mech\">\n", f);
		if (!list)
			table = 0;
		list = 1;
		fputs("<li>", f);
		html_inline(f, line);
		fputs("</li>\n", f);
	}
	if (table)
		fputs("</table>\n", f);
	if (list)
		fputs("</ul>\n", f);
	free(t);
}

static void html_chart_table(FILE *f, const struct lab_model_chart *c)
{
	fputs("<table><tr><th>", f);
	html_text(f, c->xlabel);
	fputs("</th>", f);
	for (unsigned k = 0; k < c->ns; k++) {
		fputs("<th>", f);
		html_text(f, c->sname[k]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (unsigned x = 0; x < c->nx; x++) {
		fputs("<tr><td>", f);
		html_text(f, c->xname[x]);
		fputs("</td>", f);
		for (unsigned k = 0; k < c->ns; k++) {
			char v[32];
			fmt_val(v, sizeof(v), c->v[x][k]);
			fprintf(f, "<td>%s</td>", v);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void html_charts(FILE *f, const char *dir, const struct lab_model_chart *cs, unsigned nc)
{
	if (!nc)
		return;
	fputs("<h2>Charts: the model</h2>\n", f);
	if (!have_gnuplot()) {
		fputs("<p class=\"warn\">", f);
		html_text(f, no_gnuplot);
		fputs("</p>\n", f);
	}
	for (unsigned i = 0; i < nc; i++) {
		const struct lab_model_chart *c = &cs[i];
		fputs("<h3>", f);
		html_text(f, c->title);
		fputs("</h3>\n<p class=\"meta\">", f);
		html_inline(f, c->caption);
		fputs("</p>\n", f);
		if (chart_exists(dir, c->name)) {
			embed_svg(f, dir, c->name);
			fputs("<details><summary>the numbers</summary>\n", f);
			html_chart_table(f, c);
			fputs("</details>\n", f);
		} else {
			html_chart_table(f, c);
		}
		fprintf(f, "<p class=\"meta\">Numbers: <code>%s.csv</code>.</p>\n", c->name);
	}
}

static int write_html(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o, const struct lab_model_chart *cs, unsigned nc)
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
	      ".meta{color:#555}.ok{color:#186a1a}.bad{color:#a00}.warn{color:#8a5a00}\n"
	      "table.claims td{text-align:left;vertical-align:top}"
	      "table.claims td:last-child{font-weight:600}\n"
	      "ul.mech{font-size:.88em;color:#444}details{margin:0 0 1em}\n"
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
	fputs("<h2>The verdicts</h2>\n<p>", f);
	html_inline(f, verdicts_intro);
	fputs("</p>\n", f);
	for (unsigned k = 0; k < n; k++)
		html_claims(f, rs[k]);
	html_charts(f, dir, cs, nc);
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
	      "the model charts' numbers in <code>model_*.csv</code>, numbers in "
	      "<code>results.json</code>.</p>\n</body></html>\n", f);
	fclose(f);
	return 0;
}

int lab_write_report(const char *dir, const struct lab_result *const *rs, unsigned n,
		     const struct lab_opts *o, const struct lab_model *lm)
{
	int err = mkdir_p(dir);
	if (err)
		return err;
	for (unsigned k = 0; k < n; k++)
		if ((err = write_samples(dir, rs[k])))
			return err;
	struct lab_model_chart *cs = calloc(MAX_MCHARTS, sizeof(*cs));
	if (!cs)
		return -ENOMEM;
	unsigned nc = lab_model_charts(lm, cs, MAX_MCHARTS);
	for (unsigned i = 0; i < nc && !err; i++)
		err = write_mchart(dir, &cs[i]);
	FILE *j = err ? NULL : open_in(dir, "results", ".json");
	if (!err && !j)
		err = -errno;
	if (j) {
		lab_print_json(j, rs, n, o);
		fclose(j);
	}
	if (!err)
		err = write_md(dir, rs, n, o, cs, nc);
	if (!err)
		err = write_html(dir, rs, n, o, cs, nc);
	free(cs);
	return err;
}

int lab_write_outputs(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o)
{
	return lab_write_report(dir, rs, n, o, NULL);
}
