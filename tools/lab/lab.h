/* SPDX-License-Identifier: MIT */
/*
 * pinwheel-lab: what the experiments share (tools/pinwheel-lab.c drives
 * them).  Each experiment (seed000.c, seed001.c, seed003.c) runs its
 * configurations one after another in this process and fills one
 * struct lab_result: a table (one row per configuration, the seed's figure
 * beside ours), the summary ratios, the honest notes, per-interval series
 * for the charts, and the invariants it checked.  common.c holds the
 * table/JSON printers, progress lines and the OS-side sampler; profile.c
 * the in-process sampling profiler; report.c the Markdown/HTML report.
 *
 * Threads: the experiments run on the main thread and start their own
 * runtimes' workers; every helper here is for the main thread unless it
 * says otherwise.
 */
#ifndef PW_LAB_H
#define PW_LAB_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct pw_runtime;

struct lab_opts {
	double seconds;        /* measured time per configuration */
	unsigned interval_ms;  /* sample interval (vmstat's delay) */
	unsigned cpus;         /* runtime CPUs; 0 = the machine's online CPUs */
	int smoke;             /* the tests' short run: tiny sizes, invariants only */
	int json;              /* --json: numbers on stdout as JSON */
	const char *out;       /* --out DIR: charts, samples, report */
	uint64_t seed;         /* random seed */
	int trend;             /* also the rows that show a trend with more CPUs
				* (oversubscribed runtimes, 1 vs n threads):
				* `report` and --trend */
	/* seed000 */
	unsigned flows;        /* paced sockets */
	uint64_t rate;         /* each one's pacing rate, bytes/s */
	unsigned rtt_ms;       /* the ACK path's netem delay */
	/* seed001 */
	unsigned threads;      /* receiving threads ("NICs"), 0 = one per CPU */
	unsigned sockets;      /* sockets per thread */
	/* seed003 */
	unsigned pps;          /* offered packets/s per CPU */
};

#define LAB_MAX_COLS 12
#define LAB_MAX_ROWS 8
#define LAB_CELL 40
#define LAB_MAX_SAMPLES 512
#define LAB_PROFILE_LEN 4096

/* One per-interval series (a chart line): value @v[i] at @t[i] seconds. */
struct lab_series {
	unsigned n;
	double t[LAB_MAX_SAMPLES], v[LAB_MAX_SAMPLES];
};

struct lab_result {
	const char *id;                  /* "seed000" */
	char title[160];                 /* one line: what the experiment is */
	char scale[400];                 /* the sizes used, beside the seed's */
	unsigned ncols;                  /* col 0 is the configuration's name */
	char col[LAB_MAX_COLS][LAB_CELL];
	char col_key[LAB_MAX_COLS][LAB_CELL]; /* JSON key of each column */
	unsigned nrows;
	char cell[LAB_MAX_ROWS][LAB_MAX_COLS][LAB_CELL];
	double val[LAB_MAX_ROWS][LAB_MAX_COLS]; /* the number behind a cell (NAN: none) */
	char row_key[LAB_MAX_ROWS][LAB_CELL];   /* JSON key of each configuration */
	unsigned nsummary;
	char summary[8][240];            /* "in(on)/in(fix): 1.31x (seed) vs ..." */
	unsigned nnotes;
	char notes[8][600];              /* the reading: what 2 cores can and cannot show */
	char profile[LAB_MAX_ROWS][LAB_PROFILE_LEN]; /* readprofile-style lines, per row */
	char series_label[64];           /* what the series measure, e.g. "in/s" */
	struct lab_series series[LAB_MAX_ROWS];
	unsigned nchecks;                /* invariants checked */
	int failed;                      /* an invariant broke: exit status 1 */
	char failure[400];
};

typedef int (*lab_experiment_fn)(const struct lab_opts *o, struct lab_result *r);
int lab_seed000(const struct lab_opts *o, struct lab_result *r);
int lab_seed001(const struct lab_opts *o, struct lab_result *r);
int lab_seed003(const struct lab_opts *o, struct lab_result *r);

/* ------------------------------------------------------------ common.c */

/* A progress line on stderr: "lab seed000: ...". */
void lab_progress(const struct lab_result *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Set the columns: name and JSON key, alternating, @n pairs. */
void lab_columns(struct lab_result *r, unsigned n, const char *const *names_keys);
/* Start row @row for configuration @name (JSON key @key); returns @row. */
unsigned lab_row(struct lab_result *r, const char *name, const char *key);
/* Fill a cell with a number printed by @fmt (the number kept for JSON). */
void lab_cellf(struct lab_result *r, unsigned row, unsigned col, double v, const char *fmt);
/* Fill a cell with text only. */
void lab_cells(struct lab_result *r, unsigned row, unsigned col, const char *text);
void lab_summary(struct lab_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void lab_note(struct lab_result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An invariant: counted; when @ok is 0 the result fails with the message. */
int lab_check(struct lab_result *r, int ok, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lab_series_add(struct lab_series *s, double t, double v);

void lab_print_table(FILE *f, const struct lab_result *r);
/* The results as one JSON object {"machine":..., "commit":..., "seed000":{...}, ...}. */
void lab_print_json(FILE *f, const struct lab_result *const *rs, unsigned n,
		    const struct lab_opts *o);

/* The machine ("AMD EPYC 7B13, 2 CPUs") and the commit the tool was built from. */
const char *lab_machine(void);
const char *lab_commit(void);
/* CPUs online in the OS. */
unsigned lab_online_cpus(void);

/* What vmstat would show, from the OS and from the runtime's counters. */
struct lab_sample {
	double t;                    /* seconds, CLOCK_MONOTONIC */
	double user_s, sys_s;        /* this process's CPU time (getrusage) */
	uint64_t ctxsw;              /* voluntary + involuntary, every thread */
	uint64_t wakeups, kicks;     /* sums over the runtime's CPUs (pw_stats_read) */
	uint64_t timers, pushed, pulled, remote_arms, armed;
	uint64_t lock_waits, lock_wait_ns, busy_ns, idle_ns;
};
/* Take a sample; @rt may be NULL (OS figures only). */
void lab_sample(struct pw_runtime *rt, struct lab_sample *s);
struct lab_rates {
	double in_s;                 /* (wake-ups + kicks) / s: vmstat's "in" */
	double cs_s;                 /* context switches / s */
	double us, sy, id;           /* % of the machine's CPUs (online CPUs) */
	double timers_s, pushed_s, pulled_s, remote_s, armed_s;
	double lock_wait_share;      /* base-lock wait time / elapsed CPU time */
};
void lab_rates(const struct lab_sample *a, const struct lab_sample *b, struct lab_rates *out);

/* Sleep @ms milliseconds (main thread). */
void lab_sleep_ms(unsigned ms);

/* ------------------------------------------------------------ profile.c */

/*
 * The in-process sampling profiler (profile.c's head says how).  Two
 * samplers: perf, a perf_event_open() software cpu-clock event per thread
 * (hrtimer-driven, so not aliased with work on millisecond boundaries; a
 * period near 1/@hz s of each thread's CPU time, off the millisecond grid),
 * and ITIMER_PROF, SIGPROF every 1/@hz s of the process's CPU time, taken
 * on the kernel's tick (aliased).  Either way the sampled PC is resolved to
 * a function through the executable's own symbol table (static functions
 * included) or, outside it, dladdr().  lab_prof_start() clears the counts.
 * Context: main thread; one profile at a time.  Return: 0 or -errno.
 */
enum lab_prof_sampler {
	LAB_PROF_AUTO,   /* perf where allowed, else ITIMER_PROF and one warning
			  * line on stderr; PW_LAB_PROFILER=perf|itimer in the
			  * environment picks one */
	LAB_PROF_PERF,   /* perf only: -errno where perf_event_open() fails */
	LAB_PROF_ITIMER, /* ITIMER_PROF only */
};
/* lab_prof_start_with(@hz, LAB_PROF_AUTO). */
int lab_prof_start(unsigned hz);
int lab_prof_start_with(unsigned hz, enum lab_prof_sampler how);
void lab_prof_stop(void);
/* The running or last profile's sampler and figures. */
struct lab_prof_info {
	enum lab_prof_sampler sampler; /* LAB_PROF_PERF or LAB_PROF_ITIMER (0: none yet) */
	unsigned long period_ns;       /* of each thread's CPU time (perf), of the
					* process's (ITIMER_PROF) */
	unsigned threads;              /* perf: threads sampled, in all */
	unsigned unprofiled;           /* perf: threads whose event failed to open */
	unsigned long lost;            /* samples lost (perf's ring full, the PC
					* buffer full), counted in the total; after stop */
	unsigned long samples;         /* so far (running), in all (stopped) */
	unsigned long kernel;          /* perf: samples taken in the kernel (a system
					* call, a fault), charged to the user PC the
					* thread returns to, as ITIMER_PROF does */
	int user_only;                 /* perf: user-mode samples only (not allowed
					* in the kernel: perf_event_paranoid 2) */
	char fallback[160];            /* why perf was not used ("" when it was, or
					* when ITIMER_PROF was asked for) */
};
void lab_prof_info(struct lab_prof_info *out);
/* Ticks counted since lab_prof_start(). */
unsigned long lab_prof_total(void);
/* The top @top functions, as readprofile prints them ("ticks function
 * share%"), into @buf, after a line "    # sampler: ..." naming the sampler
 * and its period (no count first: the readers of the lines skip it).
 * Return: total ticks. */
unsigned long lab_prof_format(char *buf, size_t len, unsigned top);
/* Share (0..1) of the ticks in functions whose name contains one of the
 * NULL-terminated @substrs. */
double lab_prof_share(const char *const *substrs);

/* ------------------------------------------------------------ report.c */

/* Charts (gnuplot SVG, when gnuplot is there), raw samples (CSV) and the
 * report (report.md, report.html) under @dir.  Return: 0 or -errno. */
int lab_write_outputs(const char *dir, const struct lab_result *const *rs, unsigned n,
		      const struct lab_opts *o);

#endif /* PW_LAB_H */
