/* SPDX-License-Identifier: MIT */
/*
 * netem delay distribution tables (dist.c), tc's side of them: loading
 * iproute2's `.dist` files and the built-in normal / pareto /
 * paretonormal tables generated the way iproute2's netem/ programs
 * generate them.  The kernel's sampling arithmetic (sch_netem.c
 * tabledist()) is the kernel side's: pw__netem_tabledist(), sched/netem.h.
 *
 * A table is an array of int16_t, NETEM_DIST_SCALE (8192) = one standard
 * deviation, at most PW_NETEM_DIST_MAX values: a scaled inverse CDF that
 * netem indexes with a uniform random number.
 *
 * Threads: load/builtin/get are called by the tc parser's thread (they
 * allocate and read files; any thread may call them, they share no state).
 * Locks: none.
 */
#ifndef PW_NET_DIST_H
#define PW_NET_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "../pkt_sched.h" /* PW_NETEM_DIST_SCALE */

/* One standard deviation in table units (linux/pkt_sched.h). */
/* Most values a table may hold (iproute2's MAX_DIST, the kernel's
 * NETEM_DIST_MAX). */
#define PW_NETEM_DIST_MAX 16384
/* The largest `.dist` file read: the kernel's table limit at 64 bytes a
 * value, comments and blanks included (iproute2's tables are under 60 KiB). */
#define PW_DIST_FILE_MAX ((uint64_t)PW_NETEM_DIST_MAX * 64)

/* Load a distribution table.  @name is a path when it contains '/' (used
 * as given, no ".dist" appended), else a table name looked up as
 * NAME.dist in $TC_LIB_DIR when that is set (only there, as iproute2),
 * otherwise in the first of /usr/lib/<multiarch>/tc, /usr/lib/tc,
 * /usr/lib64/tc, /lib/tc, /usr/share/tc that has it.
 * Format: lines starting with '#' are comments ('#' later in a line starts
 * a comment too), values are whitespace-separated integers (strtol base 0:
 * decimal, 0x hex, 0 octal), each in [-32768, 32767], 1..16384 of them.
 * Departure from iproute2 (which silently ignores the rest of a line after
 * a non-number and truncates values to s16): garbage and out-of-range
 * values are errors here.
 * On success *@table is malloc()ed (caller free()s) with *@n values and
 * @err (if @errlen) is "".  On failure *@table = NULL, *@n = 0 and @err
 * holds a message in iproute2's style.
 * Context: any thread (the tc parser's); reads the environment and a file.
 * Return: 0; -ENOENT (or fopen's -errno) "No distribution data for NAME
 * (PATH: strerror)"; -E2BIG "PATH: too much data"; -ERANGE value out of
 * s16 range; -EINVAL garbage token or a bad argument; -ENODATA no values;
 * -ENAMETOOLONG path too long; -ENOMEM; -EIO read error; -EINVAL (with
 * "Not a regular file"... in strerror's words: "Invalid argument") a FIFO,
 * device or directory, never read; -EFBIG above PW_DIST_FILE_MAX.  The file
 * is opened once (pw__open_regular()). */
int pw__dist_load(const char *name, int16_t **table, unsigned *n, char *err, size_t errlen);

/* Generate a built-in table: "normal", "pareto" or "paretonormal", with
 * the method (and floating-point steps) of iproute2's netem/normal.c,
 * pareto.c and paretonormal.c; 4096 values each.  Needs no file.
 * *@table is malloc()ed; the caller free()s it.
 * Context: any thread; pure computation (a few ms for normal).
 * Return: 0; -ENOENT unknown name (e.g. "experimental", which is measured
 * data); -EINVAL NULL argument; -ENOMEM. */
int pw__dist_builtin(const char *name, int16_t **table, unsigned *n);

/* What netem's `distribution NAME` uses: pw__dist_load(); if that fails
 * with -ENOENT and @name is one of the three built-in names (no '/'), the
 * built-in table instead (and @err is cleared).  Departure from iproute2,
 * which fails when the file is missing: pinwheel must not depend on
 * iproute2 being installed.  A file that exists but is bad is still an
 * error.
 * Context: any thread (the tc parser's).
 * Return: as pw__dist_load(). */
int pw__dist_get(const char *name, int16_t **table, unsigned *n, char *err, size_t errlen);

#endif /* PW_NET_DIST_H */
