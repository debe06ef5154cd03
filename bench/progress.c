/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-bench: progress lines on stderr, one per cell of the main
 * benchmark or configuration of a subcommand, so that a run of minutes
 * shows where it is.  stdout (the results) is never touched.  When stderr
 * is not a terminal (CI logs), plain lines, one per item; on a terminal,
 * one line redrawn in place and erased at the end.  --quiet: none.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "progress.h"

static bool quiet = true, tty; /* quiet until progress_init() */
static bool open_line;         /* tty: a progress line is on the screen */
static char line[160];
static int last_pct = -1;

void progress_init(bool q)
{
	quiet = q;
	tty = !q && isatty(STDERR_FILENO);
}

void progress_start(unsigned i, unsigned n, const char *fmt, ...)
{
	if (quiet)
		return;
	int len = snprintf(line, sizeof(line), "pinwheel-bench: [%u/%u] ", i, n);
	va_list ap;
	va_start(ap, fmt);
	if (len >= 0 && (size_t)len < sizeof(line))
		vsnprintf(line + len, sizeof(line) - (size_t)len, fmt, ap);
	va_end(ap);
	last_pct = -1;
	if (!tty) {
		fprintf(stderr, "%s ...\n", line);
		return;
	}
	fflush(stdout); /* the same terminal, maybe: results first */
	fprintf(stderr, "\r\033[K%s ...", line);
	open_line = true;
}

void progress_part(uint64_t done, uint64_t total)
{
	if (!tty || !open_line || !total)
		return;
	int pct = (int)(done * 100 / total);
	if (pct == last_pct)
		return;
	last_pct = pct;
	fprintf(stderr, "\r\033[K%s ... %d%%", line, pct);
}

void progress_end(void)
{
	if (!tty || !open_line)
		return;
	fprintf(stderr, "\r\033[K");
	open_line = false;
}
