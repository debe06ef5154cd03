/* SPDX-License-Identifier: MIT */
/*
 * The trace kind's tc side (pinwheel's own kind: iproute2 has no
 * q_trace.c):
 *
 *   trace { file PATH | text TEXT [ name LABEL ] } [ limit PACKETS ]
 *
 * The trace, a Mahimahi packet-delivery trace, is parsed here, on the tc
 * thread, from a buffer (parse_trace(): the text, its length, where it
 * came from for messages), by two thin front ends:
 *  - `file PATH`: the file read whole (read_file()), then parsed as
 *    Mahimahi writes it: one number a line, blank lines skipped, blanks
 *    around a number allowed, anything else on a line (a sign, a fraction,
 *    a second number) refused, messages naming the file and the line;
 *  - `text TEXT`: the trace given inline, one word (quoted when it holds
 *    blanks), for callers that must not name a path the process would
 *    read (pinwheel-netem's API, a schedule's step, a relay's spec): the
 *    numbers separated by any run of blanks, newlines and commas (so a
 *    file's contents pass unchanged and `1,1,3` needs no quotes), messages
 *    naming the number's position; `name LABEL` is the label show prints.
 *    iproute2's precedent: bpf's `bytecode '...'` beside `bytecode-file`.
 * Either way: milliseconds from the trace's start of a delivery
 * opportunity of 1504 bytes, nondecreasing, at least one, the last above 0
 * (the period the trace loops with), at most PW_TRACE_LINES_MAX numbers and
 * TRACE_TEXT_MAX bytes of text.  What goes to the kernel side
 * (sched/trace.c, which carries the packets) is the parsed numbers and a
 * label to show (the path, or the text's name), never a path to open.
 * Show prints `file PATH limit N`, or `[name LABEL] lines N limit N` for
 * a trace given as text.
 * Context: the tc thread; parse with cfg_lock held and no root lock (it
 * reads the file and allocates; O(bytes of text)), print under the root
 * lock.
 */
#define _GNU_SOURCE
#include "tc.h"
#include "../sched/trace.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACE_USAGE                                                                      \
	"Usage: ... trace { file PATH | text TEXT [ name LABEL ] } [ limit PACKETS ]\n" \
	"TEXT: the trace's numbers (ms) separated by blanks, newlines or commas"

#define TRACE_TEXT_MAX (1u << 28) /* bytes of a trace's text, file or word */
#define TRACE_NAME_MAX 64u        /* bytes of a text trace's label */
#define TRACE_SHOW_MAX 64         /* bytes of a bad line a message shows */

static void trace_opt_free(void *optp)
{
	struct trace_opt *o = optp;
	if (!o)
		return;
	free(o->ms);
	free(o->name);
	o->ms = NULL;
	o->name = NULL;
	o->n = 0;
}

/* ------------------------------------------------------------ the parser */

/* Where a text came from, for messages: a file ("PATH" line N) or the
 * `text` word (text number N), which also fixes the grammar. */
struct trace_src {
	const char *name; /* the path; NULL: the text word */
};

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == ',';
}

/* One item (a line of a file, without its newline; a word of a text): blank
 * (1), a number of ms (0, *v set), or not a number (-1). */
static int parse_item(const char *s, size_t len, uint32_t *v)
{
	size_t i = 0;
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (i == len)
		return 1;
	uint64_t x = 0;
	size_t d = i;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		x = x * 10 + (uint64_t)(s[i] - '0');
		if (x > UINT32_MAX)
			return -1;
		i++;
	}
	if (i == d)
		return -1;
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
		i++;
	if (i != len)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/* Where @src's item @no is, for a message: `"PATH" line N` or `text
 * number N`; @no 0: the text as a whole (`"PATH"` or `text`). */
static const char *where(char *buf, size_t len, const struct trace_src *src, size_t no)
{
	int w = src->name ? snprintf(buf, len, "\"%s\"", src->name) : snprintf(buf, len, "text");
	if (no && w >= 0 && (size_t)w < len)
		snprintf(buf + w, len - (size_t)w, " %s %zu", src->name ? "line" : "number", no);
	return buf;
}

/* The item as a message shows it: up to its first CR, at most
 * TRACE_SHOW_MAX bytes (then "..."). */
static int shown_len(const char *s, size_t len)
{
	size_t n = 0;
	while (n < len && s[n] != '\r')
		n++;
	return (int)(n > TRACE_SHOW_MAX ? TRACE_SHOW_MAX : n);
}

/*
 * Parse the trace @text (@len bytes, NUL not needed; a NUL inside is
 * refused) from @src into o->ms / o->n.  Context: the tc thread.
 * Return: 0; -EINVAL, -EFBIG (a message naming the item printed); -ENOMEM.
 */
static int parse_trace(struct pw__tc_ctx *tc, const char *text, size_t len,
		       const struct trace_src *src, struct trace_opt *o)
{
	const char *unit = src->name ? "line" : "number";
	char at_buf[PATH_MAX + 64];
	if (len > TRACE_TEXT_MAX) {
		pw__tc_err(tc, "trace: %s is larger than %u bytes", where(at_buf, sizeof(at_buf), src, 0),
			   TRACE_TEXT_MAX);
		return -EFBIG;
	}
	uint32_t *ms = NULL, n = 0, room = 0;
	size_t at = 0, no = 0;
	int rc = 0;
	while (at < len) {
		size_t b, e;
		if (src->name) { /* a line, up to its newline */
			const char *nl = memchr(text + at, '\n', len - at);
			b = at;
			e = nl ? (size_t)(nl - text) : len;
			at = nl ? e + 1 : len;
		} else { /* a word, between runs of separators */
			while (at < len && is_sep(text[at]))
				at++;
			if (at == len)
				break;
			b = at;
			while (at < len && !is_sep(text[at]))
				at++;
			e = at;
		}
		no++;
		const char *item = text + b;
		size_t ilen = e - b;
		if (memchr(item, '\0', ilen)) {
			pw__tc_err(tc, "trace: %s: not text", where(at_buf, sizeof(at_buf), src, no));
			rc = -EINVAL;
			break;
		}
		uint32_t v;
		int r = parse_item(item, ilen, &v);
		if (r > 0)
			continue;
		int sl = shown_len(item, ilen);
		const char *more = (size_t)sl < ilen && item[sl] != '\r' ? "..." : "";
		if (r < 0) {
			pw__tc_err(tc, "trace: %s: \"%.*s%s\" is not a time in milliseconds",
				   where(at_buf, sizeof(at_buf), src, no), sl, item, more);
			rc = -EINVAL;
			break;
		}
		if (n && v < ms[n - 1]) {
			pw__tc_err(tc, "trace: %s: \"%.*s%s\" goes back in time (the %s before is %u)",
				   where(at_buf, sizeof(at_buf), src, no), sl, item, more, unit, ms[n - 1]);
			rc = -EINVAL;
			break;
		}
		if (n == PW_TRACE_LINES_MAX) {
			pw__tc_err(tc, "trace: %s holds more than %u %ss",
				   where(at_buf, sizeof(at_buf), src, 0), PW_TRACE_LINES_MAX, unit);
			rc = -EFBIG;
			break;
		}
		if (n == room) {
			uint32_t nr = room ? room * 2 : 1024;
			if (nr > PW_TRACE_LINES_MAX)
				nr = PW_TRACE_LINES_MAX;
			uint32_t *m2 = realloc(ms, (size_t)nr * sizeof(*ms));
			if (!m2) {
				rc = -ENOMEM;
				break;
			}
			ms = m2;
			room = nr;
		}
		ms[n++] = v;
	}
	if (!rc && n == 0) {
		pw__tc_err(tc, "trace: %s holds no %s (a trace needs at least one)",
			   where(at_buf, sizeof(at_buf), src, 0), unit);
		rc = -EINVAL;
	}
	if (!rc && ms[n - 1] == 0) {
		pw__tc_err(tc, "trace: %s ends at 0 ms: the last %s is the period the trace loops "
			       "with, and must be above 0", where(at_buf, sizeof(at_buf), src, 0), unit);
		rc = -EINVAL;
	}
	if (rc) {
		free(ms);
		return rc;
	}
	o->ms = ms;
	o->n = n;
	return 0;
}

/* ------------------------------------------------------- the front ends */

/* The file @path, whole, into *@buf (*@len bytes; free() it).
 * Return: 0, -errno (printed), -EFBIG (above TRACE_TEXT_MAX). */
static int read_file(struct pw__tc_ctx *tc, const char *path, char **buf, size_t *len)
{
	/* opened once, a regular file only (a FIFO or a device would block
	 * or never end), its size checked before it is read */
	char why[128];
	FILE *f = pw__open_regular(path, TRACE_TEXT_MAX, why, sizeof(why));
	if (!f) {
		int e = errno;
		pw__tc_err(tc, "trace: cannot open \"%s\": %s", path, why);
		return e == EFBIG ? -EFBIG : -e;
	}
	char *b = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		if (n > TRACE_TEXT_MAX) {
			pw__tc_err(tc, "trace: \"%s\" is larger than %u bytes", path, TRACE_TEXT_MAX);
			rc = -EFBIG;
			break;
		}
		if (n == cap) { /* room for one byte past the most, to tell */
			size_t nc = cap ? cap * 2 : 65536;
			if (nc > (size_t)TRACE_TEXT_MAX + 1)
				nc = (size_t)TRACE_TEXT_MAX + 1;
			char *b2 = realloc(b, nc);
			if (!b2) {
				rc = -ENOMEM;
				break;
			}
			b = b2;
			cap = nc;
		}
		errno = 0;
		size_t got = fread(b + n, 1, cap - n, f);
		n += got;
		if (got == 0) {
			if (ferror(f)) {
				rc = errno ? -errno : -EIO;
				pw__tc_err(tc, "trace: cannot read \"%s\": %s", path, strerror(-rc));
			}
			break;
		}
	}
	fclose(f);
	if (rc) {
		free(b);
		return rc;
	}
	*buf = b;
	*len = n;
	return 0;
}

static int read_trace_file(struct pw__tc_ctx *tc, const char *path, struct trace_opt *o)
{
	char *buf = NULL;
	size_t len = 0;
	int rc = read_file(tc, path, &buf, &len);
	if (rc)
		return rc;
	const struct trace_src src = { .name = path };
	rc = parse_trace(tc, buf, len, &src, o);
	free(buf);
	return rc;
}

/* A text trace's label: 1 to TRACE_NAME_MAX visible characters, no quote,
 * backslash or '#' (show's line stays one word a value). */
static bool good_label(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > TRACE_NAME_MAX)
		return false;
	for (; *s; s++)
		if (*s <= ' ' || *s > '~' || *s == '"' || *s == '\'' || *s == '\\' || *s == '#')
			return false;
	return true;
}

static int trace_parse(struct pw__tc_ctx *tc, int argc, char **argv, void *optp)
{
	struct trace_opt *o = optp;
	memset(o, 0, sizeof(*o));
	const char *file = NULL, *text = NULL, *label = NULL;
	int rc;
	for (; argc > 0; argc--, argv++) {
		const char *w = *argv;
		if (!strcmp(w, "file") || !strcmp(w, "text") || !strcmp(w, "name")) {
			if (argc < 2)
				return pw__tc_incomplete(tc);
			argc--, argv++;
			const char **slot = w[0] == 'f' ? &file : w[0] == 't' ? &text : &label;
			if (*slot) {
				pw__tc_err(tc, "trace: duplicate \"%s\" specification", w);
				return -EINVAL;
			}
			*slot = *argv;
		} else if (!strcmp(w, "limit")) {
			if (argc < 2)
				return pw__tc_incomplete(tc);
			argc--, argv++;
			if (o->limit) {
				pw__tc_err(tc, "trace: duplicate \"limit\" specification");
				return -EINVAL;
			}
			uint32_t l;
			if (pw__get_u32(&l, *argv, 10) || l == 0 || l > PW_TRACE_LIMIT_MAX) {
				pw__tc_err(tc, "trace: illegal value for \"limit\": \"%s\" (1 to %u packets)",
					   *argv, PW_TRACE_LIMIT_MAX);
				return -EINVAL;
			}
			o->limit = l;
		} else if (!strcmp(w, "help")) {
			pw__tc_err(tc, TRACE_USAGE);
			return -EINVAL;
		} else {
			pw__tc_err(tc, "trace: unknown parameter \"%s\"", w);
			pw__tc_err(tc, TRACE_USAGE);
			return -EINVAL;
		}
	}
	if (file && text) {
		pw__tc_err(tc, "trace: \"file\" and \"text\" are exclusive (one trace)");
		return -EINVAL;
	}
	if (label && !text) {
		pw__tc_err(tc, "trace: \"name\" labels a \"text\" trace (a file's label is its path)");
		return -EINVAL;
	}
	if (label && !good_label(label)) {
		pw__tc_err(tc, "trace: illegal value for \"name\": \"%s\" (1 to %u visible "
			       "characters, no quote, backslash or '#')", label, TRACE_NAME_MAX);
		return -EINVAL;
	}
	if (!file && !text)
		return 0; /* a change of the limit alone; add needs a trace (init) */
	if (file) {
		if ((rc = pw__tc_no_files(tc, "trace's \"file\" (give the trace as \"text\")")))
			return rc;
		rc = read_trace_file(tc, file, o);
	} else {
		const struct trace_src src = { .name = NULL };
		rc = parse_trace(tc, text, strlen(text), &src, o);
	}
	if (rc)
		return rc;
	o->text = text != NULL;
	const char *lbl = file ? file : label;
	if (lbl) {
		o->name = strdup(lbl);
		if (!o->name) {
			trace_opt_free(o);
			return -ENOMEM;
		}
	}
	return 0;
}

static void trace_print(struct pw__qdisc *q, struct pw__out *o)
{
	struct trace_priv *t = pw__qdisc_priv(q);
	if (t->text) {
		if (t->name)
			pw__print_string(o, PW_PRINT_ANY, "name", "name %s ", t->name);
		pw__print_uint(o, PW_PRINT_ANY, "lines", "lines %u ", t->n);
	} else {
		pw__print_string(o, PW_PRINT_ANY, "file", "file %s ", t->name ? t->name : "");
	}
	pw__print_uint(o, PW_PRINT_ANY, "limit", "limit %u", q->limit);
}

const struct pw__qdisc_util pw__trace_util = {
	.id = "trace",
	.opt_size = sizeof(struct trace_opt),
	.flags = PW__QU_OPTS_ALWAYS, /* init says what is missing */
	.parse = trace_parse,
	.opt_free = trace_opt_free,
	.print = trace_print,
};
