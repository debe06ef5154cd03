/* SPDX-License-Identifier: MIT */
/*
 * tc_util: the unit parsing and printing helpers of pinwheel's tc.
 *
 * This file owns what iproute2 spreads over lib/utils.c, lib/json_print.c,
 * lib/json_writer.c, tc/tc_util.c and tc/tc_core.c, rewritten so that
 * pinwheel's `tc` output is byte-for-byte that of iproute2 6.1 (Debian 12's
 * /usr/sbin/tc): the output builder (text or JSON through one call, as
 * iproute2's print_*() API), the printers of rates, sizes, times, percents
 * and handles, the psched tick arithmetic, and the parsers of rates, sizes,
 * times, integers, percents, handles and batch lines.
 *
 * Context: called by the tc parser and printers on the thread running a tc
 * command.  Nothing here is shared between threads: an output builder and
 * a struct pw__tc_core belong to their caller; there are no globals.  No
 * function takes a lock.
 *
 * Return conventions (as iproute2's): parsers return 0 on success and -1 on
 * bad input, leaving the output untouched on error unless said otherwise;
 * pw__makeargs() returns a negative errno.  The sprint functions return
 * their buffer.  Where iproute2 relies on a C conversion that is undefined
 * (double to unsigned out of range), this file does what x86-64 gcc does for
 * tc (see pw__tc_d2u32()), so results match the real binary there too.
 */
#ifndef PW_NET_TC_UTIL_H
#define PW_NET_TC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#define PW__SPRINT_BSIZE 64 /* iproute2's SPRINT_BSIZE: enough for every sprint */

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

/* ------------------------------------------------------ handles, units */

#define PW_TC_H_MAJ_MASK 0xFFFF0000U
#define PW_TC_H_MIN_MASK 0x0000FFFFU
#define PW_TC_H_MAJ(h) ((uint32_t)(h) & PW_TC_H_MAJ_MASK)
#define PW_TC_H_MIN(h) ((uint32_t)(h) & PW_TC_H_MIN_MASK)
#define PW_TC_H_MAKE(maj, min) (((uint32_t)(maj) & PW_TC_H_MAJ_MASK) | ((uint32_t)(min) & PW_TC_H_MIN_MASK))
#define PW_TC_H_UNSPEC 0U
#define PW_TC_H_ROOT 0xFFFFFFFFU
#define PW_TC_H_INGRESS 0xFFFFFFF1U
#define PW_TC_H_CLSACT PW_TC_H_INGRESS

#define PW_TIME_UNITS_PER_SEC 1000000 /* tc's time unit: the microsecond */

enum pw__linklayer {
	PW_LINKLAYER_UNSPEC = 0,
	PW_LINKLAYER_ETHERNET = 1,
	PW_LINKLAYER_ATM = 2,
};
#define PW_TC_LINKLAYER_MASK 0x0F

/* "ethernet" / "atm" / "adsl" (ATM), abbreviations allowed.  Return: 0, -1. */
int pw__get_linklayer(unsigned int *val, const char *arg);
/* "unspec", "ethernet", "atm", "unknown".  Return: buf. */
char *pw__sprint_linklayer(unsigned int linklayer, char *buf, size_t len);

/* ------------------------------------------------------ psched ticks */

/*
 * tc_core's clock: ticks per microsecond and the kernel clock factor, as
 * tc_core_init() derives them from /proc/net/psched.  A struct instead of
 * tc's statics so tests choose the values.  {1, 1} is what tc keeps when
 * the file cannot be read; a 2009+ kernel (psched "000003e8 00000040
 * 000f4240 3b9aca00": t2us 1000, us2t 64, clock_res 1000000; the fourth
 * word is not read) gives {15.625, 1}: a tick is 64ns.
 */
struct pw__tc_core {
	double tick_in_usec;
	double clock_factor;
};

/*
 * Sets core from the three psched words (t2us, us2t, clock_res) as
 * tc_core_init() does (clock_res 1e9: t2us taken as us2t).  us2t 0 gives
 * tc's defaults {1, 1}.  Return: none.
 */
void pw__tc_core_set(struct pw__tc_core *core, uint32_t t2us, uint32_t us2t,
		     uint32_t clock_res);
/*
 * Reads path (NULL: /proc/net/psched) into core.  If unreadable or
 * malformed, core gets tc's defaults {1, 1}.  Context: may block on the
 * file read.  Return: 0, or -1 when the defaults were used.
 */
int pw__tc_core_init(struct pw__tc_core *core, const char *path);

/* tc_core_time2big(): whether usec in ticks overflows 32 bits.  Return: 0/1. */
int pw__tc_core_time2big(const struct pw__tc_core *core, uint32_t usec);
/* tc_core_time2tick(): usec * tick_in_usec, truncated.  Return: ticks. */
uint32_t pw__tc_core_time2tick(const struct pw__tc_core *core, uint32_t usec);
/* tc_core_tick2time(): ticks / tick_in_usec, truncated.  Return: usec. */
uint32_t pw__tc_core_tick2time(const struct pw__tc_core *core, uint32_t ticks);
/* tc_core_time2ktime(): usec * clock_factor.  Return: kernel time units. */
uint32_t pw__tc_core_time2ktime(const struct pw__tc_core *core, uint32_t usec);
/* tc_core_ktime2time(): ktime / clock_factor.  Return: usec. */
uint32_t pw__tc_core_ktime2time(const struct pw__tc_core *core, uint32_t ktime);
/*
 * tc_calc_xmittime(): ticks to send size bytes at rate bytes/s (the usec
 * value truncated before the tick conversion, as tc).  Return: ticks.
 */
uint32_t pw__tc_calc_xmittime(const struct pw__tc_core *core, uint64_t rate,
			      uint32_t size);
/*
 * tc_calc_xmitsize(): bytes sent in ticks at rate bytes/s, truncated.  How
 * tbf/htb print burst from the buffer they sent the kernel.  Return: bytes.
 */
uint32_t pw__tc_calc_xmitsize(const struct pw__tc_core *core, uint64_t rate,
			      uint32_t ticks);
/* sprint_ticks(): pw__sprint_time() of the ticks in usec.  Return: buf. */
char *pw__sprint_ticks(const struct pw__tc_core *core, uint32_t ticks,
		       char *buf, size_t len);

/* linux's struct tc_ratespec, as tc fills it. */
struct pw__tc_ratespec {
	unsigned char cell_log;
	uint8_t linklayer;
	unsigned short overhead;
	short cell_align;
	unsigned short mpu;
	uint32_t rate; /* bytes/s, ~0U when the rate needs 64 bits */
};

/*
 * tc_calc_rtable_64(): fills rtab[256] with the ticks to send
 * ((i + 1) << cell_log) bytes (at least r->mpu, ATM cells: 48 payload
 * bytes per 53) at rate bytes/s; cell_log < 0 picks the smallest with
 * mtu >> cell_log <= 255 (mtu 0: 2047).  Sets r->cell_align = -1,
 * r->cell_log, r->linklayer.  Return: the cell_log used.
 */
int pw__tc_calc_rtable(const struct pw__tc_core *core,
		       struct pw__tc_ratespec *r, uint32_t rtab[256],
		       int cell_log, unsigned int mtu,
		       enum pw__linklayer linklayer, uint64_t rate);

/*
 * double to uint32_t as x86-64 gcc converts it in tc (truncate toward zero
 * to 64 bits, keep the low 32; NaN and |d| >= 2^63 give 0): what tc's
 * undefined out-of-range conversions do on Debian's binary.  Return: value.
 */
uint32_t pw__tc_d2u32(double d);
/* The same for uint64_t (values >= 2^63 converted exactly).  Return: value. */
uint64_t pw__tc_d2u64(double d);

/* -------------------------------------------------------------- parsers */

/*
 * get_rate64(): a rate in bits/s to bytes/s.  A number (strtod: decimal,
 * fraction, exponent, hex) with an optional suffix, case-insensitive:
 * bit; kbit mbit gbit tbit (x1000^n); kibit mibit gibit tibit (x1024^n);
 * bps kbps mbps gbps tbps (bytes, x8000^n...); kibps mibps gibps tibps.
 * A bare number is bits/s.  Rates in percent of a device's speed
 * ("10%") are not handled here (they need the device).  Return: 0, -1
 * (no number, unknown suffix).
 */
int pw__get_rate64(uint64_t *rate, const char *str);
/* get_rate(): as pw__get_rate64() into 32 bits; -1 also on overflow. */
int pw__get_rate(uint32_t *rate, const char *str);
/*
 * get_size(): bytes.  Suffixes, case-insensitive: b; k kb (x1024); m mb;
 * g gb; kbit (x128) mbit gbit (1024^n / 8).  The value truncates ("1.7"
 * is 1).  Return: 0, -1 (no number, unknown suffix, negative, >= 2^32,
 * NaN).
 */
int pw__get_size(uint32_t *size, const char *str);
/*
 * get_size_and_cell(): "SIZE[/CELL]", CELL a power of two (its log in
 * *cell_log; untouched without "/").  Return: 0, -1.
 */
int pw__get_size_and_cell(uint32_t *size, int *cell_log, const char *str);
/*
 * get_time(): microseconds.  Suffixes, case-insensitive: s sec secs;
 * ms msec msecs; us usec usecs.  A bare number is microseconds; "ns" is
 * not accepted.  Out-of-range values wrap as tc's (pw__tc_d2u32()).
 * Return: 0, -1.
 */
int pw__get_time(uint32_t *usec, const char *str);
/* get_time64(): nanoseconds; the suffixes of pw__get_time() plus ns nsec
 * nsecs; a bare number is nanoseconds.  Return: 0, -1. */
int pw__get_time64(int64_t *ns, const char *str);
/*
 * get_u64/u32/u16/u8(): strtoul in base (0: C prefixes; 16 accepts
 * "0x"); the whole string must be the number (leading blanks and a sign
 * are allowed by strtoul: "-1" overflows and fails).  Return: 0, -1.
 */
int pw__get_u64(uint64_t *val, const char *arg, int base);
int pw__get_u32(uint32_t *val, const char *arg, int base);
int pw__get_u16(uint16_t *val, const char *arg, int base);
int pw__get_u8(uint8_t *val, const char *arg, int base);
/* get_s32() / get_integer() (int range): strtol in base.  Return: 0, -1. */
int pw__get_s32(int32_t *val, const char *arg, int base);
int pw__get_integer(int *val, const char *arg, int base);
/* get_unsigned(): unsigned int range.  Return: 0, -1. */
int pw__get_unsigned(unsigned int *val, const char *arg, int base);
/*
 * parse_percent(): "N%" or "N" as N/100 into *val.  As iproute2, a string
 * with no number reads as 0 ("" and "%" are 0%).  NaN is refused (tc's
 * result there is undefined).  Return: 0, -1 (trailing junk or NaN), 1
 * (outside [0, 100]%).
 */
int pw__parse_percent(double *val, const char *str);
/*
 * netem's get_percent(): pw__parse_percent() scaled to a u32 probability,
 * rint(p * UINT32_MAX): "1%" and "1" give 42949673.  Return: 0, -1 (also
 * when out of range).
 */
int pw__get_percent(uint32_t *per, const char *str);
/* netem's set_percent(): rint(p * UINT32_MAX).  Return: the probability. */
uint32_t pw__percent_to_u32(double p);
/*
 * get_tc_classid(): "root", "none", "MAJ:MIN", "MAJ:", ":MIN" or a bare
 * hex "N" (the 32-bit value itself), hex parts below 0x10000.  Return: 0,
 * -1.
 */
int pw__get_tc_classid(uint32_t *h, const char *str);
/*
 * get_qdisc_handle(): "none" (0) or hex "MAJ" optionally followed by ':'
 * and anything (tc ignores what follows the colon): MAJ << 16.  Return:
 * 0, -1.
 */
int pw__get_qdisc_handle(uint32_t *h, const char *str);
/*
 * matches(): iproute2's abbreviation rule: cmd is a prefix of pattern
 * ("qd" matches "qdisc"; note "" matches everything).  Return: 0 when it
 * matches, nonzero otherwise.
 */
int pw__matches(const char *cmd, const char *pattern);

/*
 * The tokenizer of tc -batch: cuts line at its first '#' (getcmdline(),
 * even inside quotes), then splits it in place on blanks (space, tab, CR,
 * LF) as makeargs(): a word that starts with ' or " runs to the next same
 * quote (blanks kept, quote removed, what follows the closing quote starts
 * a new word).  argv[argc] is set to NULL.  Continuation lines ("\\\n")
 * are the reader's business.  Return: argc (0 for a blank line),
 * -E2BIG when more than maxargs - 1 words, -EINVAL for an unterminated
 * quote (tc exits in both cases).
 */
int pw__makeargs(char *line, char *argv[], int maxargs);

#endif
