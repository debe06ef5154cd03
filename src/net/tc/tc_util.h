/* SPDX-License-Identifier: MIT */
/*
 * tc_util: the units of pinwheel's tc (tc_util.c).
 *
 * This file owns what iproute2 keeps in lib/utils.c, tc/tc_util.c and
 * tc/tc_core.c, rewritten so that pinwheel's `tc` reads its words as
 * iproute2 6.1 (Debian 12's /usr/sbin/tc) does: the psched tick
 * arithmetic, rate tables, and the parsers of rates, sizes, times,
 * integers, percents, handles, link layers and batch lines.  The output
 * builder and the printers are tc_print.h's.
 *
 * Context: called by the tc parser and printers on the thread running a tc
 * command.  Nothing here is shared between threads: a struct pw__tc_core
 * belongs to its caller; there are no globals.  No
 * function takes a lock.
 *
 * Return conventions (as iproute2's): parsers return 0 on success and -1 on
 * bad input, leaving the output untouched on error unless said otherwise;
 * pw__makeargs() returns a negative errno.  Where iproute2 relies on a C
 * conversion that is undefined (double to unsigned out of range), this file
 * does what x86-64 gcc does for tc (see pw__tc_d2u32()), so results match the
 * real binary there too.
 */
#ifndef PW_NET_TC_UTIL_H
#define PW_NET_TC_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../pkt_sched.h"

/* ------------------------------------------------------------ units */

#define PW__SPRINT_BSIZE 64 /* iproute2's SPRINT_BSIZE: enough for every sprint */

/* "ethernet" / "atm" / "adsl" (ATM), abbreviations allowed.  Return: 0, -1. */
int pw__get_linklayer(unsigned int *val, const char *arg);

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

/*
 * The reader of tc -batch, over a text: one command at a time, a line's
 * text up to its first '#' (a comment) without a CR before its LF; a line
 * that ends in '\' (outside a comment) joins the next, with @join between
 * (' ', or 0 for nothing).  Start with every field zero but @p (the text)
 * and @join; pw__tc_lines_free() when done.
 * pw__tc_lines_next(): Return: 1 and the command in @cmd (NUL-terminated,
 * the reader's until the next call), the line it began on in @first and
 * @open true if the text ended inside a continuation (tc runs what it has
 * then; a stricter reader may refuse it); 0 at the end of the text;
 * -ENOMEM.  Blank commands are returned too (the caller skips them).
 * Context: one thread at a time per reader; no lock.
 */
struct pw__tc_lines {
	const char *p;
	char join;
	unsigned lineno, first;
	bool open;
	char *cmd;
	size_t len;
};
int pw__tc_lines_next(struct pw__tc_lines *it);
void pw__tc_lines_free(struct pw__tc_lines *it);

/* ------------------------------------------------------------ files */

/*
 * A file named by a tc word (netem's `distribution PATH`, trace's `file
 * PATH`), opened once for reading: a regular file only (a FIFO, a device
 * such as /dev/zero or a directory is refused without blocking: the open
 * itself is O_NONBLOCK), at most @max bytes (its size when opened).  On
 * failure errno is set (EINVAL: not a regular file; EFBIG: too large; the
 * open's own) and @why (when @whylen) says so in words.
 * Context: the tc command's thread.  Return: the stream; NULL.
 */
FILE *pw__open_regular(const char *path, uint64_t max, char *why, size_t whylen);

#endif
