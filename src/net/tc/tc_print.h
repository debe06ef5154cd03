/* SPDX-License-Identifier: MIT */
/*
 * tc_print: tc's output, as iproute2's lib/json_print.c, lib/json_writer.c
 * and the sprint_* printers of tc/tc_util.c (tc_print.c): an output builder
 * that writes text or JSON through one call, and the printers of rates,
 * sizes, times, percents and handles, byte-for-byte those of iproute2 6.1.
 *
 * Context: the thread running a tc command.  An output builder belongs to
 * its caller; there are no globals and no locks.  The sprint functions
 * return their buffer.
 */
#ifndef PW_NET_TC_PRINT_H
#define PW_NET_TC_PRINT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tc_util.h" /* struct pw__tc_core (pw__sprint_ticks) */

/* ---------------------------------------------------------------- output */

/*
 * Where a print call goes.  iproute2 has PRINT_FP = 1, PRINT_JSON = 2,
 * PRINT_ANY = 4; here ANY is the union of the other two bits, which selects
 * exactly the same outputs (text for FP and ANY, JSON for JSON and ANY).
 */
enum pw__print_type {
	PW_PRINT_FP = 1,   /* text output only */
	PW_PRINT_JSON = 2, /* JSON output only */
	PW_PRINT_ANY = 3,  /* both */
};

#define PW__OUT_MAX_DEPTH 32

/*
 * An output builder: a growable NUL-terminated buffer that print calls
 * append to, in text mode or (json set) in JSON mode as iproute2's
 * json_writer without pretty printing: no spaces, "," between members.
 * The nesting stack records '{' or '[' per open level; closes that do not
 * match are ignored and set `bad`.  A failed allocation sets `oom` and
 * drops output from then on.
 */
struct pw__out {
	char *buf;        /* NUL-terminated text; NULL until the first append */
	size_t len;       /* bytes in buf, not counting the NUL */
	size_t cap;       /* bytes allocated */
	bool json;        /* JSON mode (tc -j) */
	bool iec;         /* tc -iec: rates in Kibit/Mibit... */
	bool details;     /* tc -d: the kinds' detailed option text (tbf) */
	bool oom;         /* an allocation failed: output is incomplete */
	bool bad;         /* a close did not match an open */
	const char *sl;   /* line separator of pw__print_nl(): "\n" (tc -oneline: "\\") */
	char sep;         /* json_writer's separator: '\0' or ',' */
	int depth;        /* open JSON levels */
	char stack[PW__OUT_MAX_DEPTH]; /* '{' or '[' per open level */
};

/* Output builder setup.  Context: any.  Return: none. */
void pw__out_init(struct pw__out *o, bool json);
/* Frees the buffer and reinitialises o in the same mode.  Return: none. */
void pw__out_free(struct pw__out *o);
/* Empties the buffer (keeps mode and memory).  Return: none. */
void pw__out_reset(struct pw__out *o);
/* The text built so far (never NULL: "" when empty).  Return: o's buffer. */
const char *pw__out_str(const struct pw__out *o);
/* Appends raw bytes in any mode.  Return: none. */
void pw__out_write(struct pw__out *o, const char *s, size_t n);
/* Appends printf output in any mode.  Return: none. */
void pw__out_printf(struct pw__out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* pw__out_printf() with a va_list.  Return: none. */
void pw__out_vprintf(struct pw__out *o, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * new_json_obj() / delete_json_obj(): in JSON mode open the top-level array
 * of a show command / close it and end the line ("]\n").  No-ops in text
 * mode.  Return: none.
 */
void pw__new_json_obj(struct pw__out *o);
void pw__delete_json_obj(struct pw__out *o);

/*
 * The print calls.  In text mode (type has PW_PRINT_FP) each formats its
 * value with fmt as printf would (fmt NULL: nothing); in JSON mode (type
 * has PW_PRINT_JSON) each writes "key":value, or a bare value inside an
 * array when key is NULL.  Context: any.  Return: none.
 */
void pw__print_string(struct pw__out *o, int type, const char *key,
		      const char *fmt, const char *value);
void pw__print_uint(struct pw__out *o, int type, const char *key,
		    const char *fmt, unsigned int value);
void pw__print_u64(struct pw__out *o, int type, const char *key,
		   const char *fmt, uint64_t value);
void pw__print_int(struct pw__out *o, int type, const char *key,
		   const char *fmt, int value);
void pw__print_s64(struct pw__out *o, int type, const char *key,
		   const char *fmt, int64_t value);
void pw__print_hu(struct pw__out *o, int type, const char *key,
		  const char *fmt, unsigned short value);
/* JSON: the double with "%g"; text: fmt. */
void pw__print_float(struct pw__out *o, int type, const char *key,
		     const char *fmt, double value);
/* JSON: true/false; text: fmt given the string "true" or "false". */
void pw__print_bool(struct pw__out *o, int type, const char *key,
		    const char *fmt, bool value);
/* JSON: null; text: fmt given value. */
void pw__print_null(struct pw__out *o, int type, const char *key,
		    const char *fmt, const char *value);
/* JSON: the string "%x" of hex; text: fmt given hex. */
void pw__print_hex(struct pw__out *o, int type, const char *key,
		   const char *fmt, unsigned int hex);
/* JSON: the string "%#x" of hex (htb's "default":"0x10"); text: fmt. */
void pw__print_0xhex(struct pw__out *o, int type, const char *key,
		     const char *fmt, unsigned int hex);
/* Text mode: o->sl ("\n"); JSON mode: nothing.  Return: none. */
void pw__print_nl(struct pw__out *o);
/* Text mode only: printf-like (iproute2's print_fp / fprintf(fp, ...)). */
void pw__print_fp(struct pw__out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* JSON mode: ["key":]{ / }.  Nothing in text mode.  Return: none. */
void pw__open_json_object(struct pw__out *o, const char *key);
void pw__close_json_object(struct pw__out *o);
/*
 * JSON mode (type has JSON): ["key":][ / ].  Text mode (type has FP):
 * prints key / the closing string as text (iproute2's open_json_array
 * doubles the key as the text delimiter), NULL prints nothing.
 */
void pw__open_json_array(struct pw__out *o, int type, const char *key);
void pw__close_json_array(struct pw__out *o, int type, const char *str);

/* ----------------------------------------------------------- printers */

/*
 * tc's rate text of rate bytes/s: bits/s scaled by 1000 (iec: 1024) while
 * exact or >= 1000 kilo, at most to T: "8bit", "12344bit", "1Kbit",
 * "1500Kbit", "1234Mbit", "4Tbit"; iec: "1Kibit" (no "i" without a
 * prefix: "1000000bit").  Context: any.
 * Return: buf.
 */
char *pw__sprint_rate(uint64_t rate, bool iec, char *buf, size_t len);
/*
 * tc_print_rate(): JSON the rate in bytes/s (u64), text fmt given the
 * pw__sprint_rate() string (o->iec).  Return: none.
 */
void pw__print_rate(struct pw__out *o, int type, const char *key,
		    const char *fmt, uint64_t rate);
/*
 * tc's size text: "NMb" within 1KiB of a MiB multiple (>= 1MiB), else
 * "NKb" within 16 bytes of a KiB multiple (>= 1KiB), else "Nb"; N printed
 * with %g ("4.1943e+06Kb" happens).  Return: buf.
 */
char *pw__sprint_size(uint32_t size, char *buf, size_t len);
/* JSON: size as a number; text: fmt given pw__sprint_size().  Return: none. */
void pw__print_size(struct pw__out *o, int type, const char *key,
		    const char *fmt, uint32_t size);
/*
 * tc's time text of usec microseconds: "%.3gs" from 1s, "%.3gms" from 1ms,
 * else "%uus": "50ms", "1.5s", "49.9ms", "1.58e+03s", "999us".  Return: buf.
 */
char *pw__sprint_time(uint32_t usec, char *buf, size_t len);
/*
 * JSON: usec as a u64; text: fmt given pw__sprint_time() of usec truncated
 * to 32 bits, which is what tbf's "lat" does.  Return: none.
 */
void pw__print_time(struct pw__out *o, int type, const char *key,
		    const char *fmt, uint64_t usec);
/*
 * sprint_time64(): ns nanoseconds as "%.3gs" / "%.3gms" / "%.3gus" /
 * "%lldns" (negative values print as ns).  Return: buf.
 */
char *pw__sprint_time64(int64_t ns, char *buf, size_t len);
/*
 * netem's time print: text fmt given pw__sprint_time64(ns), JSON the
 * seconds as a double (ns / 1e9).  Return: none.
 */
void pw__print_time64(struct pw__out *o, int type, const char *key,
		      const char *fmt, int64_t ns);
/*
 * netem's probability text: "%g%%" of 100 * per / UINT32_MAX ("1%",
 * "0.01%", "100%").  Return: buf.
 */
char *pw__sprint_percent(uint32_t per, char *buf, size_t len);
/*
 * netem's __print_percent(): text fmt given the double 100*per/UINT32_MAX
 * (so fmt has "%g%%"), JSON the fraction per/UINT32_MAX.  Return: none.
 */
void pw__print_percent(struct pw__out *o, int type, const char *key,
		       const char *fmt, uint32_t per);
/*
 * sprint_tc_classid(): "root" (ffff:ffff), "none" (0), ":%x" (major 0),
 * "%x:" (minor 0), "%x:%x".  Return: buf.
 */
char *pw__sprint_tc_classid(uint32_t h, char *buf, size_t len);
/* A qdisc handle: the major only, always "%x:" ("0:", "8001:").  Return: buf. */
char *pw__sprint_qdisc_handle(uint32_t h, char *buf, size_t len);

/* "unspec", "ethernet", "atm", "unknown".  Return: buf. */
char *pw__sprint_linklayer(unsigned int linklayer, char *buf, size_t len);

/* sprint_ticks(): pw__sprint_time() of the ticks in usec.  Return: buf. */
char *pw__sprint_ticks(const struct pw__tc_core *core, uint32_t ticks,
		       char *buf, size_t len);

#endif /* PW_NET_TC_PRINT_H */
