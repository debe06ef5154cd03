/* SPDX-License-Identifier: MIT */
/*
 * tc_print: the output side of pinwheel's tc (see tc_print.h): the
 * text/JSON output builder (iproute2's json_print.c and json_writer.c
 * behaviour) and the printers of rates, sizes, times, percents and
 * handles (tc_util.c's sprint_*), byte for byte as iproute2 6.1.
 *
 * Context: the thread running a tc command.  Every object belongs to its
 * caller; no global state, no lock.
 */
#define _GNU_SOURCE
#include "tc_print.h"
#include "tc_util.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ======================================================== output builder */

/*
 * Makes room for n more bytes plus the NUL.  Context: any.  Return: true
 * when there is room, false (and o->oom set) otherwise.
 */
static bool out_reserve(struct pw__out *o, size_t n)
{
	size_t need, cap;
	char *nb;

	if (o->oom)
		return false;
	need = o->len + n + 1;
	if (need <= o->cap)
		return true;
	cap = o->cap ? o->cap : 256;
	while (cap < need)
		cap *= 2;
	nb = realloc(o->buf, cap);
	if (!nb) {
		o->oom = true;
		return false;
	}
	o->buf = nb;
	o->cap = cap;
	return true;
}

void pw__out_init(struct pw__out *o, bool json)
{
	memset(o, 0, sizeof(*o));
	o->json = json;
	o->sl = "\n";
}

void pw__out_free(struct pw__out *o)
{
	bool json = o->json;

	free(o->buf);
	pw__out_init(o, json);
}

void pw__out_reset(struct pw__out *o)
{
	o->len = 0;
	if (o->buf)
		o->buf[0] = '\0';
	o->sep = '\0';
	o->depth = 0;
	o->bad = false;
}

const char *pw__out_str(const struct pw__out *o)
{
	return o->buf ? o->buf : "";
}

void pw__out_write(struct pw__out *o, const char *s, size_t n)
{
	if (!out_reserve(o, n))
		return;
	memcpy(o->buf + o->len, s, n);
	o->len += n;
	o->buf[o->len] = '\0';
}

static void out_putc(struct pw__out *o, char c)
{
	pw__out_write(o, &c, 1);
}

static void out_puts(struct pw__out *o, const char *s)
{
	pw__out_write(o, s, strlen(s));
}

void pw__out_vprintf(struct pw__out *o, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	if (o->oom)
		return;
	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !out_reserve(o, (size_t)n))
		return;
	vsnprintf(o->buf + o->len, (size_t)n + 1, fmt, ap);
	o->len += (size_t)n;
}

void pw__out_printf(struct pw__out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	pw__out_vprintf(o, fmt, ap);
	va_end(ap);
}

/*
 * Formats one value with a caller's format in text mode.  The format is not
 * a literal, so this wrapper keeps -Wformat-nonliteral (if enabled) in one
 * place.  Context: any.  Return: none.
 */
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#endif
static void out_fmt(struct pw__out *o, const char *fmt, ...)
{
	va_list ap;

	if (!fmt)
		return;
	va_start(ap, fmt);
	pw__out_vprintf(o, fmt, ap);
	va_end(ap);
}
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif

/* Whether a print of type goes to o's output.  Return: bool. */
static bool is_json(const struct pw__out *o, int type)
{
	return o->json && (type & PW_PRINT_JSON);
}

static bool is_fp(const struct pw__out *o, int type)
{
	return !o->json && (type & PW_PRINT_FP);
}

/* ---- json_writer, non-pretty: the exact bytes of iproute2's jsonw_* */

/* jsonw_eor(): a comma before all but the first member.  Return: none. */
static void jw_eor(struct pw__out *o)
{
	if (o->sep != '\0')
		out_putc(o, o->sep);
	o->sep = ',';
}

/*
 * jsonw_puts(): a quoted string with \t \n \r \f \b \\ \" escaped and every
 * other byte (other control bytes and the single quote included) as is.
 */
static void jw_puts(struct pw__out *o, const char *s)
{
	out_putc(o, '"');
	for (; *s; s++) {
		switch (*s) {
		case '\t': out_puts(o, "\\t"); break;
		case '\n': out_puts(o, "\\n"); break;
		case '\r': out_puts(o, "\\r"); break;
		case '\f': out_puts(o, "\\f"); break;
		case '\b': out_puts(o, "\\b"); break;
		case '\\': out_puts(o, "\\\\"); break;
		case '"': out_puts(o, "\\\""); break;
		default: out_putc(o, *s); break;
		}
	}
	out_putc(o, '"');
}

static void jw_name(struct pw__out *o, const char *name)
{
	jw_eor(o);
	o->sep = '\0';
	jw_puts(o, name);
	out_putc(o, ':');
}

static void jw_begin(struct pw__out *o, char c)
{
	jw_eor(o);
	out_putc(o, c);
	if (o->depth < PW__OUT_MAX_DEPTH)
		o->stack[o->depth] = c;
	else
		o->bad = true;
	o->depth++;
	o->sep = '\0';
}

static void jw_end(struct pw__out *o, char open, char c)
{
	if (o->depth <= 0 ||
	    (o->depth <= PW__OUT_MAX_DEPTH && o->stack[o->depth - 1] != open)) {
		o->bad = true;
		return;
	}
	o->depth--;
	out_putc(o, c);
	o->sep = ',';
}

/* A value member: "key": (or nothing inside an array), then raw text. */
static void jw_key(struct pw__out *o, const char *key)
{
	if (key)
		jw_name(o, key);
	jw_eor(o);
}

void pw__new_json_obj(struct pw__out *o)
{
	if (o->json)
		jw_begin(o, '[');
}

void pw__delete_json_obj(struct pw__out *o)
{
	if (o->json) {
		jw_end(o, '[', ']');
		out_putc(o, '\n');
	}
}

void pw__print_string(struct pw__out *o, int type, const char *key,
		      const char *fmt, const char *value)
{
	if (is_json(o, type)) {
		if (key && !value) {
			jw_name(o, key);
		} else if (!key && value) {
			jw_eor(o);
			jw_puts(o, value);
		} else if (key) {
			jw_name(o, key);
			jw_eor(o);
			jw_puts(o, value);
		}
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_uint(struct pw__out *o, int type, const char *key,
		    const char *fmt, unsigned int value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		pw__out_printf(o, "%u", value);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_u64(struct pw__out *o, int type, const char *key,
		   const char *fmt, uint64_t value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		pw__out_printf(o, "%" PRIu64, value);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_int(struct pw__out *o, int type, const char *key,
		   const char *fmt, int value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		pw__out_printf(o, "%d", value);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_s64(struct pw__out *o, int type, const char *key,
		   const char *fmt, int64_t value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		pw__out_printf(o, "%" PRId64, value);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_hu(struct pw__out *o, int type, const char *key,
		  const char *fmt, unsigned short value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		pw__out_printf(o, "%hu", value);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_float(struct pw__out *o, int type, const char *key,
		     const char *fmt, double value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		pw__out_printf(o, "%g", value);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_bool(struct pw__out *o, int type, const char *key,
		    const char *fmt, bool value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		out_puts(o, value ? "true" : "false");
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value ? "true" : "false");
	}
}

void pw__print_null(struct pw__out *o, int type, const char *key,
		    const char *fmt, const char *value)
{
	if (is_json(o, type)) {
		jw_key(o, key);
		out_puts(o, "null");
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, value);
	}
}

void pw__print_hex(struct pw__out *o, int type, const char *key,
		   const char *fmt, unsigned int hex)
{
	if (is_json(o, type)) {
		char b[16];

		snprintf(b, sizeof(b), "%x", hex);
		jw_key(o, key);
		jw_puts(o, b);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, hex);
	}
}

void pw__print_0xhex(struct pw__out *o, int type, const char *key,
		     const char *fmt, unsigned int hex)
{
	if (is_json(o, type)) {
		char b[16];

		snprintf(b, sizeof(b), "%#x", hex);
		jw_key(o, key);
		jw_puts(o, b);
	} else if (is_fp(o, type)) {
		out_fmt(o, fmt, hex);
	}
}

void pw__print_nl(struct pw__out *o)
{
	if (!o->json)
		out_puts(o, o->sl ? o->sl : "\n");
}

void pw__print_fp(struct pw__out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->json)
		return;
	va_start(ap, fmt);
	pw__out_vprintf(o, fmt, ap);
	va_end(ap);
}

void pw__open_json_object(struct pw__out *o, const char *key)
{
	if (!o->json)
		return;
	if (key)
		jw_name(o, key);
	jw_begin(o, '{');
}

void pw__close_json_object(struct pw__out *o)
{
	if (o->json)
		jw_end(o, '{', '}');
}

void pw__open_json_array(struct pw__out *o, int type, const char *key)
{
	if (is_json(o, type)) {
		if (key)
			jw_name(o, key);
		jw_begin(o, '[');
	} else if (is_fp(o, type) && key) {
		out_puts(o, key);
	}
}

void pw__close_json_array(struct pw__out *o, int type, const char *str)
{
	if (is_json(o, type))
		jw_end(o, '[', ']');
	else if (is_fp(o, type) && str)
		out_puts(o, str);
}

/* ============================================================== printers */

char *pw__sprint_rate(uint64_t rate, bool iec, char *buf, size_t len)
{
	static const char *const units[] = { "", "K", "M", "G", "T" };
	uint64_t kilo = iec ? 1024 : 1000;
	size_t i;

	rate <<= 3; /* bytes/s to bits/s (wraps as tc's) */
	for (i = 0; i < sizeof(units) / sizeof(units[0]) - 1; i++) {
		if (rate < kilo)
			break;
		if (rate % kilo != 0 && rate < 1000 * kilo)
			break;
		rate /= kilo;
	}
	/* tc 6.1 writes the "i" only after a prefix: -iec 1000000bit */
	snprintf(buf, len, "%.0f%s%sbit", (double)rate, units[i],
		 iec && i > 0 ? "i" : "");
	return buf;
}

void pw__print_rate(struct pw__out *o, int type, const char *key,
		    const char *fmt, uint64_t rate)
{
	char b[PW__SPRINT_BSIZE];

	if (is_json(o, type))
		pw__print_u64(o, PW_PRINT_JSON, key, NULL, rate);
	else if (is_fp(o, type))
		pw__print_string(o, PW_PRINT_FP, NULL, fmt,
				 pw__sprint_rate(rate, o->iec, b, sizeof(b)));
}

char *pw__sprint_size(uint32_t sz, char *buf, size_t len)
{
	double d = sz;

	if (sz >= 1024 * 1024 &&
	    fabs(1024 * 1024 * rint(d / (1024 * 1024)) - d) < 1024)
		snprintf(buf, len, "%gMb", rint(d / (1024 * 1024)));
	else if (sz >= 1024 && fabs(1024 * rint(d / 1024) - d) < 16)
		snprintf(buf, len, "%gKb", rint(d / 1024));
	else
		snprintf(buf, len, "%ub", sz);
	return buf;
}

void pw__print_size(struct pw__out *o, int type, const char *key,
		    const char *fmt, uint32_t size)
{
	char b[PW__SPRINT_BSIZE];

	if (is_json(o, type))
		pw__print_uint(o, PW_PRINT_JSON, key, NULL, size);
	else if (is_fp(o, type))
		pw__print_string(o, PW_PRINT_FP, NULL, fmt,
				 pw__sprint_size(size, b, sizeof(b)));
}

char *pw__sprint_time(uint32_t usec, char *buf, size_t len)
{
	double t = usec;

	if (t >= PW_TIME_UNITS_PER_SEC)
		snprintf(buf, len, "%.3gs", t / PW_TIME_UNITS_PER_SEC);
	else if (t >= PW_TIME_UNITS_PER_SEC / 1000)
		snprintf(buf, len, "%.3gms", t / (PW_TIME_UNITS_PER_SEC / 1000));
	else
		snprintf(buf, len, "%uus", usec);
	return buf;
}

void pw__print_time(struct pw__out *o, int type, const char *key,
		    const char *fmt, uint64_t usec)
{
	char b[PW__SPRINT_BSIZE];

	if (is_json(o, type))
		pw__print_u64(o, PW_PRINT_JSON, key, NULL, usec);
	else if (is_fp(o, type))
		pw__print_string(o, PW_PRINT_FP, NULL, fmt,
				 pw__sprint_time((uint32_t)usec, b, sizeof(b)));
}

char *pw__sprint_time64(int64_t ns, char *buf, size_t len)
{
	double d = (double)ns;

	if (ns >= 1000000000LL)
		snprintf(buf, len, "%.3gs", d / 1000000000.0);
	else if (ns >= 1000000LL)
		snprintf(buf, len, "%.3gms", d / 1000000.0);
	else if (ns >= 1000LL)
		snprintf(buf, len, "%.3gus", d / 1000.0);
	else
		snprintf(buf, len, "%lldns", (long long)ns);
	return buf;
}

void pw__print_time64(struct pw__out *o, int type, const char *key,
		      const char *fmt, int64_t ns)
{
	char b[PW__SPRINT_BSIZE];

	if (is_json(o, type))
		pw__print_float(o, PW_PRINT_JSON, key, NULL, (double)ns / 1000000000.);
	else if (is_fp(o, type))
		pw__print_string(o, PW_PRINT_FP, NULL, fmt,
				 pw__sprint_time64(ns, b, sizeof(b)));
}

char *pw__sprint_percent(uint32_t per, char *buf, size_t len)
{
	snprintf(buf, len, "%g%%", (100. * per) / UINT32_MAX);
	return buf;
}

void pw__print_percent(struct pw__out *o, int type, const char *key,
		       const char *fmt, uint32_t per)
{
	if (is_json(o, type))
		pw__print_float(o, PW_PRINT_JSON, key, NULL, (1. * per) / UINT32_MAX);
	else if (is_fp(o, type))
		pw__print_float(o, PW_PRINT_FP, NULL, fmt, (100. * per) / UINT32_MAX);
}

char *pw__sprint_tc_classid(uint32_t h, char *buf, size_t len)
{
	if (h == PW_TC_H_ROOT)
		snprintf(buf, len, "root");
	else if (h == PW_TC_H_UNSPEC)
		snprintf(buf, len, "none");
	else if (PW_TC_H_MAJ(h) == 0)
		snprintf(buf, len, ":%x", PW_TC_H_MIN(h));
	else if (PW_TC_H_MIN(h) == 0)
		snprintf(buf, len, "%x:", PW_TC_H_MAJ(h) >> 16);
	else
		snprintf(buf, len, "%x:%x", PW_TC_H_MAJ(h) >> 16, PW_TC_H_MIN(h));
	return buf;
}

char *pw__sprint_qdisc_handle(uint32_t h, char *buf, size_t len)
{
	snprintf(buf, len, "%x:", PW_TC_H_MAJ(h) >> 16);
	return buf;
}

char *pw__sprint_linklayer(unsigned int linklayer, char *buf, size_t len)
{
	const char *s;

	switch (linklayer) {
	case PW_LINKLAYER_UNSPEC: s = "unspec"; break;
	case PW_LINKLAYER_ETHERNET: s = "ethernet"; break;
	case PW_LINKLAYER_ATM: s = "atm"; break;
	default: s = "unknown"; break;
	}
	snprintf(buf, len, "%s", s);
	return buf;
}

char *pw__sprint_ticks(const struct pw__tc_core *core, uint32_t ticks,
		       char *buf, size_t len)
{
	return pw__sprint_time(pw__tc_core_tick2time(core, ticks), buf, len);
}
